"""Two independent S3 servers on 127.0.0.1 for the sync tests: moto's server (in memory; honours
If-Match and If-None-Match, checks no signature) and rclone's `serve s3` (files in a folder; checks
every SigV4 signature, no conditional writes). Each test takes a bucket of its own."""

from __future__ import annotations

import itertools
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from pathlib import Path

import boto3
import pytest

from .dav_servers import free_port

ACCESS_KEY = "cloudnotes-test-key"
SECRET_KEY = "cloudnotes-test-secret"
_buckets = itertools.count(1)


class S3Server:
    """An S3 server started for the session: `env` points `cloudnotes` at it, `client` is botocore's."""

    kind = ""

    def __init__(self, folder: Path):
        self.folder = folder
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.log = open(folder / "server.log", "wb")
        self.process = subprocess.Popen(self.command(), stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_until_up()
        self.client = boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=ACCESS_KEY,
                                   aws_secret_access_key=SECRET_KEY, region_name="us-east-1")

    def command(self) -> list[str]:
        raise NotImplementedError

    def _wait_until_up(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the {self.kind} S3 server stopped: {(self.folder / 'server.log').read_text()[-2000:]}")
            try:
                urllib.request.urlopen(self.endpoint + "/", timeout=1)
                return
            except urllib.error.HTTPError:
                return  # it answers (403 without a signature)
            except OSError:
                time.sleep(0.1)
        raise RuntimeError(f"the {self.kind} S3 server did not start")

    @property
    def env(self) -> dict[str, str]:
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": SECRET_KEY, "AWS_REGION": "us-east-1"}

    def new_bucket(self) -> str:
        name = f"cloudnotes-{next(_buckets)}"
        self.client.create_bucket(Bucket=name)
        return name

    def objects(self, bucket: str, prefix: str = "") -> dict[str, bytes]:
        """Every object under `prefix`, by key, with its bytes."""
        found = {}
        for page in self.client.get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix):
            for entry in page.get("Contents", []):
                found[entry["Key"]] = self.client.get_object(Bucket=bucket, Key=entry["Key"])["Body"].read()
        return found

    def replace_objects(self, bucket: str, objects: dict[str, bytes]) -> None:
        """Makes the bucket hold exactly `objects` (key -> bytes)."""
        for key in self.objects(bucket):
            self.client.delete_object(Bucket=bucket, Key=key)
        for key, data in objects.items():
            self.client.put_object(Bucket=bucket, Key=key, Body=data)

    def source(self, bucket: str, prefix: str) -> "S3Source":
        return S3Source(self, bucket, prefix)

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


class MotoS3(S3Server):
    kind = "moto"

    def command(self) -> list[str]:
        return [shutil.which("moto_server") or "moto_server", "-H", "127.0.0.1", "-p", str(self.port)]


class RcloneS3(S3Server):
    kind = "rclone"

    def command(self) -> list[str]:
        (self.folder / "data").mkdir()
        return [shutil.which("rclone") or "rclone", "serve", "s3", "--addr", f"127.0.0.1:{self.port}",
                "--auth-key", f"{ACCESS_KEY},{SECRET_KEY}", "--config", "/dev/null", str(self.folder / "data")]


def s3_server_fixture(name: str, kind: type[S3Server]):
    """A pytest fixture `name`: an S3 server of `kind` for the session."""
    @pytest.fixture(scope="session", name=name)
    def running(tmp_path_factory):
        server = kind(tmp_path_factory.mktemp(name))
        yield server
        server.stop()
    running.__doc__ = f"The {kind.kind} S3 server of the session."
    return running


class S3Source:
    """A remote under `prefix/` of a bucket, read as `cnsupport.remote.read_remote` reads a folder: the
    names in a "folder" (a key prefix) and the bytes of a file."""

    def __init__(self, server: S3Server, bucket: str, prefix: str):
        self.server, self.bucket, self.prefix = server, bucket, prefix.strip("/") + "/"

    def names(self, relative: str) -> list[tuple[str, bool]]:
        listing = self.server.client.list_objects_v2(Bucket=self.bucket, Prefix=self.prefix + relative, Delimiter="/")
        files = [(entry["Key"].rsplit("/", 1)[-1], False) for entry in listing.get("Contents", [])]
        folders = [(entry["Prefix"].rstrip("/").rsplit("/", 1)[-1], True) for entry in listing.get("CommonPrefixes", [])]
        return files + folders

    def get(self, relative: str) -> bytes | None:
        try:
            return self.server.client.get_object(Bucket=self.bucket, Key=self.prefix + relative)["Body"].read()
        except self.server.client.exceptions.NoSuchKey:
            return None
