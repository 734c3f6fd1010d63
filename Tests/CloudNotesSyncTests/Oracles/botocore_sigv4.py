"""Signs a table of S3 requests with botocore's S3SigV4Auth, for SigV4Tests: the oracle of the signer.

Reads a JSON array of {method, url, headers: [[name, value]...], body (base64), time (epoch seconds),
accessKey, secretKey, sessionToken, region} on stdin; writes the Authorization header of each, in order,
as a JSON array on stdout.
"""

import base64
import datetime
import json
import sys

import botocore.auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials


def sign(case: dict) -> str:
    moment = datetime.datetime.fromtimestamp(case["time"], datetime.timezone.utc).replace(tzinfo=None)
    botocore.auth.get_current_datetime = lambda: moment
    request = AWSRequest(method=case["method"], url=case["url"], data=base64.b64decode(case["body"]))
    for name, value in case["headers"]:
        request.headers.add_header(name, value) if name in request.headers else request.headers.__setitem__(name, value)
    credentials = Credentials(case["accessKey"], case["secretKey"], case.get("sessionToken"))
    botocore.auth.S3SigV4Auth(credentials, "s3", case["region"]).add_auth(request)
    return request.headers["Authorization"]


print(json.dumps([sign(case) for case in json.load(sys.stdin)]))
