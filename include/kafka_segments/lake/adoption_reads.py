"""Adoption's reads: one job per object whose bytes adoption needs, run in parallel, never keeping the bytes.

A candidate is summarized (``summarize_segment``; the ``.timeindex`` and the ``.index`` beside it, and
beside a re-adopted one, are checked against its batches and pinned when they hold: ``time_pin``,
``index_pin``); a changed live object of the
same size is compared by sha256 (a lake copied to another backend has other etags); a grown active segment
is re-adopted when its recorded prefix still hashes to its sha256. Damage becomes a ``Quarantine`` naming
the object and byte position; a vanished candidate or a symbolic link (``ForeignObjectError``) is
``Ignored``; an object whose size changed since the listing is being written and is quarantined for this
run. Other store errors propagate. The stores are safe to share between threads (``S3Store`` builds its
client once under a lock)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, TypeVar

from kafka_segments.errors import (
    CorruptRecordError,
    ForeignObjectError,
    ObjectNotFoundError,
    SegmentObjectMismatchError,
)
from kafka_segments.lake.adoption_report import Ignored, Quarantine
from kafka_segments.lake.index_pin import stored_index_sha256
from kafka_segments.lake.layout import index_keys
from kafka_segments.lake.runs import RunRecord
from kafka_segments.lake.scan import Buffer, sha256_hex, summarize_segment
from kafka_segments.lake.time_pin import stored_time_index_sha256, time_index_key
from kafka_segments.progress import Phase, phase
from kafka_segments.state import SegmentEntry, SegmentOrigin
from kafka_segments.storage.base import MappingStore, ObjectMeta, ObjectStore
from kafka_segments.topic_partition import TopicPartition

if TYPE_CHECKING:
    from kafka_segments.records.fast import HeaderTable

G = TypeVar("G")

MISMATCH_ERROR = SegmentObjectMismatchError.__name__
"""The error name of a live object that is missing or changed (also used for an object changing mid-read)."""


@dataclass(frozen=True, slots=True)
class ReadJob:
    """One object to read: a candidate (``live is None``) or a changed live object (``live`` its entry)."""

    topic_partition: TopicPartition
    meta: ObjectMeta
    base_offset: int
    live: SegmentEntry | None = None
    listed_indexes: frozenset[str] | None = None
    """The keys of the ``.index`` and ``.timeindex`` beside it that the run's listing shows (``None``: not
    known, each is looked for): an index the listing does not show is not asked for, which on S3 is a
    request (a 404) per index and segment."""

    @property
    def key(self) -> str:
        return self.meta.key

    def listed(self, key: str) -> bool:
        """Whether ``key`` (an index beside it) may exist, by the listing."""
        return self.listed_indexes is None or key in self.listed_indexes


@dataclass(frozen=True, slots=True, eq=False)
class ReadResult:
    """What reading one object found (all ``None``: a live object that is unchanged after all)."""

    key: str
    bytes_read: int = 0
    entry: SegmentEntry | None = None
    """The new entry of an adopted or regrown segment."""
    table: HeaderTable | None = None
    """The batches the partition's open transactions must advance through (a regrown segment: its tail)."""
    problem: Quarantine | None = None
    ignored: Ignored | None = None


def read_all(
    store: ObjectStore, run: RunRecord, jobs: Sequence[ReadJob], *, max_workers: int
) -> dict[str, ReadResult]:
    """Run every job (in parallel on up to ``max_workers`` threads); results by key.

    Raises:
        ValueError: ``max_workers`` is below 1.
        ObjectStoreError: a read failed for another reason than a missing object.
    """
    if max_workers < 1:
        raise ValueError(f"max_workers must be at least 1, got {max_workers}")
    read = partial(read_one, store, run)
    total = sum(job.meta.size for job in jobs)
    with phase("adopt: reading new segments", items=len(jobs), nbytes=total, unit="segments") as progress:
        if max_workers == 1 or len(jobs) <= 1:
            return {job.key: _advanced(progress, job, read(job)) for job in jobs}
        pool = ThreadPoolExecutor(max_workers=min(max_workers, len(jobs)), thread_name_prefix="adopt")
        try:
            return {
                r.key: _advanced(progress, job, r) for job, r in zip(jobs, pool.map(read, jobs), strict=True)
            }
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


READ_AHEAD = 4
"""``read_grouped`` reads up to this many jobs per worker ahead of the group being settled."""


def read_grouped(
    store: ObjectStore,
    run: RunRecord,
    groups: Iterable[tuple[G, Sequence[ReadJob]]],
    *,
    max_workers: int,
    items: int,
    nbytes: int,
) -> Iterator[tuple[G, dict[str, ReadResult]]]:
    """Each group with its jobs' results by key, in the groups' order, once all its jobs are read (on up to
    ``max_workers`` threads, reading at most ``READ_AHEAD`` jobs a worker beyond the next group to yield):
    what is held follows that window, not the number of groups. ``items`` and ``nbytes``: the totals the
    progress phase counts down.

    Raises:
        ValueError: ``max_workers`` is below 1.
        ObjectStoreError: a read failed for another reason than a missing object.
    """
    if max_workers < 1:
        raise ValueError(f"max_workers must be at least 1, got {max_workers}")
    read = partial(read_one, store, run)
    window: deque[tuple[G, list[tuple[ReadJob, Future[ReadResult]]]]] = deque()
    pending = 0
    with phase("adopt: reading new segments", items=items, nbytes=nbytes, unit="segments") as progress:
        pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="adopt")
        try:
            for group, jobs in groups:
                window.append((group, [(job, pool.submit(read, job)) for job in jobs]))
                pending += len(jobs)
                while window and pending > READ_AHEAD * max_workers:
                    pending -= len(window[0][1])
                    yield _collected(progress, window.popleft())
            while window:
                yield _collected(progress, window.popleft())
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def _collected(
    progress: Phase, item: tuple[G, list[tuple[ReadJob, Future[ReadResult]]]]
) -> tuple[G, dict[str, ReadResult]]:
    group, futures = item
    return group, {job.key: _advanced(progress, job, future.result()) for job, future in futures}


def _advanced(progress: Phase, job: ReadJob, result: ReadResult) -> ReadResult:
    progress.advance(job.key, nbytes=job.meta.size)
    return result


def read_one(store: ObjectStore, run: RunRecord, job: ReadJob) -> ReadResult:  # noqa: PLR0911 - one early return per verdict on an object (missing, changed, foreign, corrupt, …), each with its reason
    """Read and judge one object (see the module docstring)."""
    try:
        data, sha256 = _read(store, job.key)
    except ForeignObjectError as exc:  # a symbolic link in a local lake: never read through
        if job.live is not None:
            problem = Quarantine(job.topic_partition, job.key, None, exc.reason, type(exc).__name__)
            return ReadResult(job.key, problem=problem)
        return ReadResult(job.key, ignored=Ignored(job.key, f"not adopted: {exc.reason}"))
    except ObjectNotFoundError:
        if job.live is not None:
            return ReadResult(job.key, problem=missing_live_object(job.topic_partition, job.live))
        return ReadResult(
            job.key,
            ignored=Ignored(job.key, "disappeared during the run (listed, then not found); nothing adopted"),
        )
    if len(data) != job.meta.size:
        return ReadResult(job.key, len(data), problem=_changed_while_read(job, len(data)))
    if job.live is None:
        return _candidate(store, run, job, data, sha256)
    if len(data) == job.live.size:
        return _same_size(job, job.live, data, sha256)
    return _regrown(store, run, job, job.live, data, sha256)


def _read(store: ObjectStore, key: str) -> tuple[Buffer, str | None]:
    """The object's bytes (mapped, not copied, from a store that maps its objects: ``MappingStore``), and
    their sha256 when the store knows it without hashing them again."""
    if isinstance(store, MappingStore):
        mapped = store.get_mapped(key)
        return mapped.data, mapped.sha256
    return store.get(key), None


def missing_live_object(topic_partition: TopicPartition, entry: SegmentEntry) -> Quarantine:
    return Quarantine(
        topic_partition,
        entry.key,
        None,
        f"live segment object missing: the committed log lists it (offsets {_span(entry)}, {entry.size} "
        f"bytes, sha256 {entry.sha256}); restore it from a copy to release the partition",
        MISMATCH_ERROR,
    )


def changed_live_object(topic_partition: TopicPartition, entry: SegmentEntry, meta: ObjectMeta) -> Quarantine:
    """A live object whose size changed in a way adoption cannot take (shrunk, or grew but cannot regrow)."""
    if meta.size < entry.size:
        how = f"shrank from {entry.size} to {meta.size} bytes"
    elif entry.origin is not SegmentOrigin.ADOPTED:
        how = f"grew from {entry.size} to {meta.size} bytes, but objects this project wrote never grow"
    else:
        how = f"grew from {entry.size} to {meta.size} bytes, but it is not the partition's last segment"
    return _changed(topic_partition, entry, how)


def _changed(topic_partition: TopicPartition, entry: SegmentEntry, how: str) -> Quarantine:
    return Quarantine(
        topic_partition,
        entry.key,
        None,
        f"changed after adoption: it {how}; restore the committed bytes ({entry.size} bytes, sha256 "
        f"{entry.sha256}) to release the partition",
        MISMATCH_ERROR,
    )


def _changed_while_read(job: ReadJob, read_size: int) -> Quarantine:
    return Quarantine(
        job.topic_partition,
        job.key,
        None,
        f"changed while this run read it (listed with {job.meta.size} bytes, read {read_size}); "
        "run adopt again once the upload has finished",
        MISMATCH_ERROR,
    )


def _damage(job: ReadJob, exc: CorruptRecordError) -> Quarantine:
    offset = "" if exc.offset is None else f" (offset {exc.offset})"
    if job.live is None:
        action = "replace the object with an intact copy (or remove it) and run adopt again"
    else:
        action = (
            f"its first {job.live.size} bytes are intact: restore them, or upload an intact longer copy, "
            "and run adopt again"
        )
    return Quarantine(
        job.topic_partition,
        job.key,
        exc.position,
        f"{exc.reason} at byte {exc.position}{offset}; nothing of the partition is adopted in this run: "
        + action,
        type(exc).__name__,
    )


def _candidate(
    store: ObjectStore, run: RunRecord, job: ReadJob, data: Buffer, sha256: str | None
) -> ReadResult:
    try:
        summary = summarize_segment(
            data, key=store.location(job.key), base_offset=job.base_offset, sha256=sha256
        )
    except CorruptRecordError as exc:
        return ReadResult(job.key, len(data), problem=_damage(job, exc))
    entry = summary.entry(
        key=job.key,
        base_offset=job.base_offset,
        etag=job.meta.etag,
        last_modified_ms=job.meta.last_modified_ms,
        origin=SegmentOrigin.ADOPTED,
        run_id=run.run_id,
        **_pins(store, job, summary.table, base_offset=job.base_offset),
    )
    return ReadResult(job.key, len(data), entry=entry, table=summary.table)


def _pins(store: ObjectStore, job: ReadJob, table: HeaderTable, *, base_offset: int) -> dict[str, str | None]:
    """The sha256 of the ``.timeindex`` and ``.index`` beside the segment when they hold (``time_pin``,
    ``index_pin``); an index the listing does not show is not read."""
    time_pin = None
    if job.listed(time_index_key(job.key)):
        time_pin = stored_time_index_sha256(store, job.key, table, base_offset=base_offset)
    index_pin = None
    if job.listed(index_keys(job.key)[0]):
        index_pin = stored_index_sha256(store, job.key, table, base_offset=base_offset)
    return {"time_index_sha256": time_pin, "index_sha256": index_pin}


def _same_size(job: ReadJob, live: SegmentEntry, data: Buffer, sha256: str | None) -> ReadResult:
    if (sha256 or sha256_hex(data)) == live.sha256:
        return ReadResult(job.key, len(data))  # same bytes under another etag
    return ReadResult(
        job.key, len(data), problem=_changed(job.topic_partition, live, "has other bytes of the same size")
    )


def _regrown(
    store: ObjectStore, run: RunRecord, job: ReadJob, live: SegmentEntry, data: Buffer, sha256: str | None
) -> ReadResult:
    view = memoryview(data)
    if sha256_hex(view[: live.size]) != live.sha256:
        how = f"grew from {live.size} to {len(data)} bytes, but its first {live.size} bytes changed"
        return ReadResult(job.key, len(data), problem=_changed(job.topic_partition, live, how))
    location = store.location(job.key)
    try:
        summary = summarize_segment(data, key=location, base_offset=live.base_offset, sha256=sha256)
    except CorruptRecordError as exc:
        return ReadResult(job.key, len(data), problem=_damage(job, exc))
    from kafka_segments.records.fast import scan_header_table  # numba: loaded only when segments are scanned

    tail = scan_header_table(view[live.size :], segment=location, verify_crc=False)
    entry = summary.entry(
        key=job.key,
        base_offset=live.base_offset,
        etag=job.meta.etag,
        last_modified_ms=live.last_modified_ms,
        origin=SegmentOrigin.ADOPTED,
        run_id=run.run_id,
        **_pins(store, job, summary.table, base_offset=live.base_offset),
    )
    return ReadResult(job.key, len(data), entry=entry, table=tail)


def _span(entry: SegmentEntry) -> str:
    if entry.last_offset is None:
        return f"none, empty at {entry.base_offset}"
    return f"[{entry.base_offset}, {entry.last_offset}]"
