"""boto3 sessions for ``S3Store`` clients that share botocore's data loader.

A new ``boto3.session.Session`` loads and parses S3's service model, the endpoint rules and the partitions
again (about 0.15 s of CPU); with one loader per process (its cache holds them parsed) a client costs about
a sixth of that. Every store builds its own clients (a CLI command two, a Spark task after unpickling its
store two more), each with its own session: credentials, settings and botocore's retry quota stay per
client; only the read-only model files are shared. ``AWS_DATA_PATH`` is read once, by the first session."""

from __future__ import annotations

import threading
from typing import Any

_lock = threading.Lock()
_loaders: list[Any] = []


def new_session() -> Any:
    """A fresh ``boto3.session.Session`` on the process's one botocore data loader."""
    import boto3
    import botocore.loaders
    import botocore.session

    core = botocore.session.Session()
    with _lock:
        if not _loaders:
            _loaders.append(botocore.loaders.create_loader())
        loader = _loaders[0]
        core.register_component("data_loader", loader)
        session = boto3.session.Session(botocore_session=core)
        # boto3 appends its own data folder to the loader's search paths, once per session: keep one
        loader.search_paths[:] = list(dict.fromkeys(loader.search_paths))
    return session


def warm_loader() -> None:
    """Loads into the process's data loader what a first S3 client loads (S3's service model, endpoint rules,
    partitions: ~0.4 s of CPU), so the process's first real client costs what later ones cost. No network
    and no credential lookup: the throwaway client has its own placeholder keys, region and endpoint."""
    new_session().client(
        "s3",
        region_name="us-east-1",
        endpoint_url="http://127.0.0.1:9",
        aws_access_key_id="warm-loader",
        aws_secret_access_key="warm-loader",
    )
