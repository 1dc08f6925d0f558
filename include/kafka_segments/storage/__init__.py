"""The object-store layer: one interface over S3 and a local directory (the lake's backends)."""

from kafka_segments.storage.base import (
    Create,
    ObjectMeta,
    ObjectStore,
    Overwrite,
    PutMode,
    PutResult,
    ReadIntoStore,
    UpdateIfMatch,
    WritableBuffer,
    validate_key,
)
from kafka_segments.storage.buffers import BufferTooSmallError, read_into
from kafka_segments.storage.local import LocalStore
from kafka_segments.storage.s3 import S3Store
from kafka_segments.storage.s3_errors import translate_s3_error
from kafka_segments.storage.uri import open_store

__all__ = [
    "BufferTooSmallError",
    "Create",
    "LocalStore",
    "ObjectMeta",
    "ObjectStore",
    "Overwrite",
    "PutMode",
    "PutResult",
    "ReadIntoStore",
    "S3Store",
    "UpdateIfMatch",
    "WritableBuffer",
    "open_store",
    "read_into",
    "translate_s3_error",
    "validate_key",
]
