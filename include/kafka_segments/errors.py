"""The project's errors.

Every error names what went wrong and where (segment, byte position, offset, key, file), and carries a
``retriable`` class attribute so callers decide whether to retry without parsing messages. A URI's password
is never part of an error's text or location (``redaction.redact_uri``)."""

from __future__ import annotations

from typing import ClassVar

from kafka_segments.redaction import redact_uri


class KafkaSegmentsError(Exception):
    """Base class of every error this project raises on purpose. Its text never shows the password of a
    ``scheme://user:password@`` URI it quotes (``redaction.redact_uri``)."""

    retriable: ClassVar[bool] = False

    def __str__(self) -> str:
        return redact_uri(super().__str__())


class CorruptRecordError(KafkaSegmentsError):
    """A segment (or an in-memory batch) is not valid Kafka log data.

    Attributes:
        segment: the segment's name or key (``"<memory>"`` for a plain buffer).
        position: byte position of the damaged entry in the segment.
        offset: the entry's (base) offset when it could be read, else ``None``.
        reason: what is wrong, without the location.
    """

    def __init__(self, reason: str, *, segment: str, position: int, offset: int | None = None) -> None:
        self.reason = reason
        self.segment = segment
        self.position = position
        self.offset = offset
        where = f"{segment} at byte {position}"
        if offset is not None:
            where += f" (offset {offset})"
        super().__init__(f"{where}: {reason}")


class TruncatedSegmentError(CorruptRecordError):
    """The segment ends in the middle of an entry (a partial write or a cut-off upload)."""


class InvalidCrcError(CorruptRecordError):
    """A batch's stored checksum does not match its bytes."""


class DecompressionLimitError(CorruptRecordError):
    """A compressed batch inflates past the decompression budget (a decompression bomb, or a batch far
    larger than any producer sends): its partition is not cleaned in this run. ``limit`` is the budget in
    bytes."""

    def __init__(self, reason: str, *, segment: str, position: int, offset: int | None, limit: int) -> None:
        super().__init__(reason, segment=segment, position=position, offset=offset)
        self.limit = limit


class UnsupportedCodecError(KafkaSegmentsError):
    """A batch uses a compression codec this build cannot handle (or that its format version forbids)."""


class CheckpointFileError(KafkaSegmentsError):
    """A Kafka text checkpoint file is malformed (Kafka raises IOException / NumberFormatException)."""

    def __init__(self, reason: str, *, path: str, line: int | None = None) -> None:
        self.reason = reason
        self.path = path
        self.line = line
        where = path if line is None else f"{path} line {line}"
        super().__init__(f"{where}: {reason}")


class CorruptIndexError(KafkaSegmentsError):
    """An index file (.index, .timeindex, .txnindex) is malformed."""

    def __init__(self, reason: str, *, path: str, position: int | None = None) -> None:
        self.reason = reason
        self.path = path
        self.position = position
        where = path if position is None else f"{path} at byte {position}"
        super().__init__(f"{where}: {reason}")


class SegmentWriteError(KafkaSegmentsError):
    """A segment cannot be written as asked (offsets out of order, offset span overflow, ...)."""


class InvalidTopicError(KafkaSegmentsError, ValueError):
    """A topic name or partition number Kafka would reject (``Topic.validate``: empty, ``.``/``..``, longer
    than 249 characters, or a character outside ``[a-zA-Z0-9._-]``; partitions are non-negative int32)."""


class InvalidFileNameError(KafkaSegmentsError, ValueError):
    """A file or directory name is not a Kafka log-directory name (``<20-digit offset>.<kind>``,
    ``<topic>-<partition>``)."""


class SegmentFullError(SegmentWriteError):
    """The segment cannot take this batch: Kafka would roll a new segment first (an index is full,
    segment.bytes is reached, or the batch's offsets do not fit the 32-bit relative offsets). The writer is
    left unchanged, so the caller can close it and start a new segment at the batch's base offset."""


def _restore_error(
    cls: type[BaseException], args: tuple[object, ...], state: dict[str, object]
) -> BaseException:
    """Unpickle an error whose ``__init__`` takes keyword-only arguments (errors cross process boundaries)."""
    error = cls.__new__(cls)
    error.args = args
    error.__dict__.update(state)
    return error


class LocatedError(KafkaSegmentsError):
    """An error about one place: an object, a prefix or a lake.

    Attributes:
        reason: what went wrong, without the location.
        location: the object or prefix concerned (``s3://bucket/key`` or a local path), or the lake.
    """

    def __init__(self, reason: str, *, location: str) -> None:
        self.reason = redact_uri(reason)
        self.location = redact_uri(location)
        super().__init__(f"{self.location}: {self.reason}")

    def __reduce__(self) -> tuple[object, ...]:
        return (_restore_error, (type(self), self.args, dict(self.__dict__)))


class ObjectStoreError(LocatedError):
    """An object store (S3 or a local directory) operation failed."""


class ObjectNotFoundError(ObjectStoreError):
    """The object does not exist."""


class ObjectAlreadyExistsError(ObjectStoreError):
    """A create-only write found the object already there; the existing object is unchanged."""


class PreconditionFailedError(ObjectStoreError):
    """A write or read conditional on the object's etag found another etag (a write: or no object at all)."""


class ConditionalWriteConflictError(PreconditionFailedError):
    """S3 refused a conditional write because a concurrent conditional write to the same key was in
    flight (``409 ConditionalRequestConflict``). Nothing was written; re-reading and retrying may succeed."""

    retriable: ClassVar[bool] = True


class ConditionalWritesUnsupportedError(ObjectStoreError):
    """The S3 endpoint does not honour conditional writes (``If-None-Match: *``, ``If-Match``), on which every
    commit relies: refused before the lake's first write (``storage.s3_probe``). ``missing`` names the
    guarantees the probe found missing; ``endpoint`` is the endpoint's URL (without credentials)."""

    def __init__(self, reason: str, *, location: str, endpoint: str, missing: tuple[str, ...]) -> None:
        self.endpoint = redact_uri(endpoint)
        self.missing = tuple(missing)
        super().__init__(reason, location=location)


class InvalidObjectKeyError(ObjectStoreError, ValueError):
    """A key is empty, absolute, contains a backslash or an empty/``.``/``..`` segment, or uses a reserved
    name, so it could escape (or alias) the store's root."""


class ForeignObjectError(ObjectStoreError):
    """A local lake refuses to read through a symbolic link (a linked file, or a key under a linked folder):
    it would read bytes from outside its root. The listing still shows the link, so it can be reported."""


class TransientStoreError(ObjectStoreError):
    """The store was unreachable, throttled or failing (5xx) even after the client's retries."""

    retriable: ClassVar[bool] = True


class StoreAccessError(ObjectStoreError):
    """Access was denied (403) or no credentials were found."""


class DeleteObjectsError(ObjectStoreError):
    """Some keys of a batched delete could not be deleted.

    Attributes:
        failed: key -> the store's error code for that key, for every key that was not deleted.
    """

    def __init__(self, reason: str, *, location: str, failed: dict[str, str]) -> None:
        self.failed = dict(failed)
        super().__init__(reason, location=location)


class InvalidLakeUriError(KafkaSegmentsError, ValueError):
    """A lake URI is neither ``s3://bucket[/prefix]`` nor a local path / ``file://`` URI."""


class LakeError(LocatedError):
    """The lake's committed state or one of its persisted files is not what it must be."""


class ManifestFormatError(LakeError):
    """A persisted lake file (manifest, run record) is not valid JSON of its format: the message names the
    object and the field."""


class UnsupportedFormatVersionError(ManifestFormatError):
    """A persisted lake file has a ``format_version`` this build does not know (written by a newer release,
    or not ours). Refused rather than guessed at."""


class InvalidRunIdError(LakeError, ValueError):
    """A run id is not 1-100 characters of ``[A-Za-z0-9_-]`` starting with a letter or digit."""


class CommitConflictError(LakeError):
    """Another commit took the manifest version this run was going to create (or the lake's head moved past
    the run's base version). Nothing of this run became visible; re-plan from the new head and run again."""


class CommitStateUnknownError(LakeError):
    """The commit's outcome could not be established (the response was lost and reading the manifest back
    failed). Do not retry blindly: ``kafka-segments recover`` (or ``resolve_commit``) finds out whether the
    run committed."""

    retriable: ClassVar[bool] = True


class RunStateError(LakeError):
    """A run cannot do what was asked in its current state (unknown run id, already finished, a run id
    reused for another base version, a staged manifest that does not build on the run's base)."""


class SegmentObjectMismatchError(LakeError):
    """A segment object a manifest lists is missing, shorter than recorded, or its bytes no longer match the
    recorded checksum (changed outside the lake's control)."""


class NoCommittedStateError(LakeError):
    """The lake has no committed manifest (nothing was adopted or committed yet)."""


class ManifestVersionNotFoundError(LakeError):
    """The manifest version asked for does not exist: never committed, or removed by gc."""


class PartitionNotFoundError(LakeError):
    """A topic or partition asked for is not in the manifest."""


class TableError(LocatedError):
    """A topic's Iceberg table (docs/tables.md) cannot be opened, created or brought to a lake version: its
    catalog is missing or refuses, or the table is not one this project keeps. ``location`` names the
    catalog or the table."""


INPUT_ERRORS: tuple[type[KafkaSegmentsError], ...] = (
    InvalidLakeUriError,
    InvalidTopicError,
    InvalidRunIdError,
    PartitionNotFoundError,  # --topic / --partition the lake does not have
    ManifestVersionNotFoundError,  # --version N the lake does not have (never committed, or gc'd)
)
"""The library's errors that are the user's input, not a problem found: the CLI and the Spark job exit 2."""
