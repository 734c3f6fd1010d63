"""Sync through S3 (`s3://bucket/prefix`), on two independent servers started on 127.0.0.1: moto's and
rclone's `serve s3`, which checks every request's SigV4 signature. Devices converge, plain and
encrypted; credentials come from the environment or an AWS profile; a refused key and a missing bucket
say what to do."""

from __future__ import annotations

import re

import pytest

from cnsupport.s3_servers import ACCESS_KEY, SECRET_KEY
from cnsupport.sealed import WITH_PASSPHRASE, leaks, memo_secrets
from cnsupport.syncing import edit_apart, make_store

SHARED = "Packing list\ntent\nstove\nmap\nboots\n"
LAYOUT = re.compile(r"^(cloudnotes-sync\.json|devices/[0-9a-f]{32}/(head\.json|segments/\d{12}\.jsonl|"
                    r"snapshots/\d{12}/\d{12}\.jsonl))$")


def devices(tmp_root, server, *names: str):
    """Stores that reach `server` through the AWS environment variables."""
    stores = [make_store(tmp_root, name) for name in names]
    for store in stores:
        store.env.update(server.env)
    return stores


def test_devices_converge_through_a_bucket_prefix(tmp_root, s3_bucket):
    server, bucket = s3_bucket
    url = f"s3://{bucket}/shared/notes"
    a, b = devices(tmp_root, server, "a", "b")
    first = a.new(SHARED)
    other = a.new("Call the plumber\n")
    assert a.sync(url)["published"] == 2
    assert b.sync(url)["changedMemos"] == 2 and b.texts() == a.texts()

    edit_apart(a, b, first, SHARED.replace("stove", "stove and gas"), SHARED.replace("boots", "walking boots"))
    b.rm(other)
    made_on_b = b.new("From B\n")
    a.sync(), b.sync(), a.sync()
    assert a.texts() == b.texts()
    assert a.text(first) == SHARED.replace("stove", "stove and gas").replace("boots", "walking boots")
    assert set(a.ids()) == {first, made_on_b}
    assert a.status()["conflicts"] == [] and a.status()["remote"] == url

    keys = server.objects(bucket)
    assert keys and all(key.startswith("shared/notes/") for key in keys), sorted(keys)
    assert all(LAYOUT.match(key.removeprefix("shared/notes/")) for key in keys), sorted(keys)


def test_an_encrypted_bucket_holds_nothing_readable(tmp_root, s3_bucket):
    server, bucket = s3_bucket
    url = f"s3://{bucket}"
    a, b = devices(tmp_root, server, "a", "b")
    a.new("Médecin\nrésultats d'analyse: normaux\n")
    a.new("Bank\nPIN in the blue notebook\n")
    a.sync(url, "--encrypt", env=WITH_PASSPHRASE)
    assert b.sync(url, env=WITH_PASSPHRASE)["changedMemos"] == 2
    b.new("Written on B\nsealed too\n")
    b.sync()
    assert a.sync()["changedMemos"] == 1 and a.texts() == b.texts()
    objects = server.objects(bucket)
    assert b"CNS1" == objects[next(key for key in objects if key.endswith("head.json"))][:4]
    assert leaks(objects, memo_secrets(a)) == []


def test_credentials_from_an_aws_profile_and_refusals_that_say_what_to_do(tmp_root, rclone_s3):
    """rclone checks every signature: a profile's key works, a wrong secret is refused by name."""
    bucket = rclone_s3.new_bucket()
    a = make_store(tmp_root, "a")
    aws = tmp_root / "a" / ".aws"
    aws.mkdir()
    (aws / "credentials").write_text(f"[default]\naws_access_key_id = nobody\naws_secret_access_key = nothing\n\n"
                                     f"[work]\naws_access_key_id = {ACCESS_KEY}\naws_secret_access_key = {SECRET_KEY}\n")
    (aws / "config").write_text("[profile work]\nregion = us-east-1\n")
    endpoint = {"AWS_ENDPOINT_URL": rclone_s3.endpoint}
    a.new("through a profile\n")
    assert a.sync(f"s3://{bucket}/p", env={**endpoint, "AWS_PROFILE": "work"})["published"] == 1

    refused = a.fails("sync", env=endpoint)  # the default profile's key
    assert "AWS_ACCESS_KEY_ID" in refused.err and "403" in refused.err, refused.err
    refused = a.fails("sync", env={**rclone_s3.env, "AWS_SECRET_ACCESS_KEY": "wrong"})
    assert "SignatureDoesNotMatch" in refused.err and "wrong" not in refused.err, refused.err
    missing = a.fails("sync", "--remote", "s3://no-such-bucket/p", env={**endpoint, "AWS_PROFILE": "work"})
    assert "does not exist: create it" in missing.err, missing.err


@pytest.mark.parametrize("bad", ["s3://ab/x", "s3://Upper/x", "s3://bucket/x?versionId=1", "s3:///x"])
def test_a_malformed_s3_url_is_refused(shell, bad):
    assert "s3://bucket/prefix" in shell.fails("sync", "--remote", bad).err


def test_a_forgotten_device_s_objects_are_removed(tmp_root, s3_bucket):
    server, bucket = s3_bucket
    url = f"s3://{bucket}/n"
    a, b = devices(tmp_root, server, "a", "b")
    a.new("from A\n")
    a.sync(url)
    b.new("from B\n")
    b.sync(url)
    retired = b.status()["device"]
    assert any(retired in key for key in server.objects(bucket))
    a.ok("sync", "--forget-device", retired[:8])
    assert not any(retired in key for key in server.objects(bucket))
    c = devices(tmp_root, server, "c")[0]
    assert c.sync(url)["changedMemos"] == 2
