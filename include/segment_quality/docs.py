"""The Data Docs site in the lake: built in a local folder, uploaded to the run's folder.

Keys: ``_kafka_segments/runs/<run id>/data-docs/<path in the site>`` (``index.html``, ``validations/…``,
``expectations/…``, ``static/…``). A second validation of the same run replaces the first one's site."""

from __future__ import annotations

from pathlib import Path

from kafka_segments.lake.run_folder import run_file_key, write_run_bytes
from kafka_segments.storage.base import ObjectStore

DATA_DOCS = "data-docs/"
INDEX = "index.html"


def data_docs_prefix(run_id: str) -> str:
    return run_file_key(run_id, DATA_DOCS)


def upload_site(store: ObjectStore, run_id: str, site: Path) -> str:
    """Upload every file of the local site folder ``site``; return the key of its ``index.html``.

    Raises:
        FileNotFoundError: the site has no ``index.html``.
        ObjectStoreError: an upload failed (the run then has no validation result and cannot commit).
    """
    if not (site / INDEX).is_file():
        raise FileNotFoundError(f"the Data Docs site in {site} has no {INDEX}")
    prefix = data_docs_prefix(run_id)
    stale = [meta.key for meta in store.list(prefix)]
    if stale:
        store.delete_many(stale)
    files = sorted((p for p in site.rglob("*") if p.is_file()), key=lambda p: (p == site / INDEX, p))
    for path in files:  # the index last: once it is there, every page it links to is too
        write_run_bytes(store, run_id, DATA_DOCS + path.relative_to(site).as_posix(), path.read_bytes())
    return prefix + INDEX
