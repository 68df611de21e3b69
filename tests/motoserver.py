"""moto's S3 server for the tests: on a free port of 127.0.0.1, with test credentials only
(never real AWS), started and stopped by the fixtures that use it."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

import boto3
import pytest
from moto.server import ThreadedMotoServer


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


@contextmanager
def moto_s3(aws: Path, buckets: Mapping[str, str | None], *, session_token: bool = False) -> Iterator[str]:
    """The endpoint (``http://127.0.0.1:PORT``) of a moto S3 server holding ``buckets`` (name:
    canned ACL or None), in an environment whose credentials, region and AWS files are the
    tests' own: written into ``aws``, with a profile ``lab``."""
    (aws / "credentials").write_text("[lab]\naws_access_key_id = lab\naws_secret_access_key = lab\n")
    (aws / "config").write_text("[profile lab]\nregion = us-east-1\n")
    logging.getLogger("werkzeug").setLevel(logging.ERROR)
    with pytest.MonkeyPatch.context() as env:
        for name, value in {
            "AWS_ACCESS_KEY_ID": "testing",
            "AWS_SECRET_ACCESS_KEY": "testing",
            "AWS_DEFAULT_REGION": "us-east-1",
            "AWS_SHARED_CREDENTIALS_FILE": str(aws / "credentials"),
            "AWS_CONFIG_FILE": str(aws / "config"),
        }.items():
            env.setenv(name, value)
        if session_token:
            env.setenv("AWS_SESSION_TOKEN", "testing")
        for name in ("AWS_PROFILE", "AWS_REGION", "AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3"):
            env.delenv(name, raising=False)
        if not session_token:
            env.delenv("AWS_SESSION_TOKEN", raising=False)
        port = _free_port()
        server = ThreadedMotoServer(ip_address="127.0.0.1", port=port, verbose=False)
        server.start()
        try:
            endpoint = f"http://127.0.0.1:{port}"
            client = boto3.client("s3", endpoint_url=endpoint)
            for bucket, acl in buckets.items():
                client.create_bucket(Bucket=bucket, **({"ACL": acl} if acl else {}))
            yield endpoint
        finally:
            server.stop()
