"""The object-store layer: one interface over S3 and a local directory (the lake's backends)."""

from kafka_segments.storage.base import (
    Create,
    ObjectMeta,
    ObjectStore,
    Overwrite,
    PutMode,
    PutResult,
    UpdateIfMatch,
    validate_key,
)
from kafka_segments.storage.local import LocalStore
from kafka_segments.storage.s3 import S3Store, translate_s3_error
from kafka_segments.storage.uri import open_store

__all__ = [
    "Create",
    "LocalStore",
    "ObjectMeta",
    "ObjectStore",
    "Overwrite",
    "PutMode",
    "PutResult",
    "S3Store",
    "UpdateIfMatch",
    "open_store",
    "translate_s3_error",
    "validate_key",
]
