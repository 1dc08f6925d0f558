"""What the lake view reads of a run's ``report.json`` (``pipeline.report.run_to_dict``), read as strictly as
a manifest: every field it uses is checked for its type, and a field of the wrong type is a
``ManifestFormatError`` naming the report object and the field (``compaction.partitions[0].partition``).

A field the view does not use is not read; a field it uses may be absent or null (``adopt``, ``fence`` and
older runs write less), and then counts as empty or zero."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from kafka_segments.errors import InvalidTopicError, ManifestFormatError
from kafka_segments.lake.json_document import decode_json
from kafka_segments.lake.run_folder import REPORT, read_run_bytes_or_none, run_file_key
from kafka_segments.storage.base import ObjectStore
from kafka_segments.topic_partition import TopicPartition

_SHOWN = 60
"""The most characters of a wrong value a message quotes."""


@dataclass(frozen=True, slots=True)
class PassDeleted:
    """What one retention pass (``plan.totals.by_reason``) deleted."""

    reason: str
    segments: int
    size_bytes: int


@dataclass(frozen=True, slots=True)
class CompactionRound:
    """One partition of ``compaction.partitions``."""

    topic_partition: TopicPartition
    status: str | None
    error: str | None
    segments_replaced: int
    segments_written: int


@dataclass(frozen=True, slots=True)
class Quarantined:
    """One partition adoption quarantined (``adoption.quarantined``)."""

    topic_partition: TopicPartition
    reason: str | None


@dataclass(frozen=True, slots=True)
class RunReport:
    """The parts of a run report the lake view shows."""

    outcome: str | None
    by_reason: tuple[PassDeleted, ...]
    cleaned: int
    bytes_read: int
    bytes_written: int
    rounds: tuple[CompactionRound, ...]
    quarantined: tuple[Quarantined, ...]
    log_cleaner: Mapping[str, int | float | None]
    """Kafka's cleaner gauges of the run (``metrics.log_cleaner``: docs/metrics.md)."""
    dry_run: bool = False
    base_version: int = 0
    """The version the run built on."""
    now_ms: int = 0
    """The run's logical time."""


def read_report(store: ObjectStore, run_id: str) -> RunReport | None:
    """The report of run ``run_id``, ``None`` when its folder has none.

    Raises:
        ManifestFormatError: the report is not JSON, not an object, or a field it has is of the wrong type.
        ObjectStoreError: the store could not be read.
    """
    data = read_run_bytes_or_none(store, run_id, REPORT)
    if data is None:
        return None
    location = store.location(run_file_key(run_id, REPORT))
    return report_from_document(decode_json(data, location=location, kind="run report"), location=location)


def report_from_document(document: object, *, location: str) -> RunReport:
    """``document`` (a decoded ``report.json``) checked and read.

    Raises:
        ManifestFormatError: ``document`` is not an object, or a field is of the wrong type.
    """
    top = _Fields(document, location=location, path="")
    compaction = top.object("compaction")
    totals = compaction.object("totals")
    return RunReport(
        outcome=top.string("outcome"),
        by_reason=tuple(
            PassDeleted(reason, fields.integer("segments"), fields.integer("bytes"))
            for reason, fields in top.object("plan").object("totals").object("by_reason").entries()
        ),
        cleaned=totals.integer("cleaned"),
        bytes_read=totals.integer("bytes_read"),
        bytes_written=totals.integer("bytes_written"),
        rounds=tuple(_round(fields) for fields in compaction.objects("partitions")),
        quarantined=tuple(
            Quarantined(fields.topic_partition(), fields.string("reason"))
            for fields in top.object("adoption").objects("quarantined")
        ),
        log_cleaner=top.object("metrics").object("log_cleaner").numbers(),
        dry_run=top.boolean("dry_run"),
        base_version=top.integer("base_version"),
        now_ms=top.integer("now_ms"),
    )


def _round(fields: _Fields) -> CompactionRound:
    return CompactionRound(
        topic_partition=fields.topic_partition(),
        status=fields.string("status"),
        error=fields.string("error"),
        segments_replaced=len(fields.strings("segments_replaced")),
        segments_written=len(fields.strings("segments_written")),
    )


class _Fields:
    """Typed access to one JSON object of a report; an absent or null field reads as empty or zero."""

    def __init__(self, value: object, *, location: str, path: str) -> None:
        if not isinstance(value, dict):
            raise ManifestFormatError(
                f"field {path or 'document'!r}: expected a JSON object, found {_shown(value)}",
                location=location,
            )
        self._data: dict[str, Any] = value
        self._location = location
        self._path = path

    def _where(self, name: str) -> str:
        return f"{self._path}.{name}" if self._path else name

    def _fail(self, name: str, expected: str, value: object) -> ManifestFormatError:
        problem = f"expected {expected}, found {_shown(value)}"
        return ManifestFormatError(f"field {self._where(name)!r}: {problem}", location=self._location)

    def integer(self, name: str) -> int:
        value = self._data.get(name)
        if value is None:
            return 0
        if not isinstance(value, int) or isinstance(value, bool):
            raise self._fail(name, "an integer", value)
        return value

    def boolean(self, name: str) -> bool:
        value = self._data.get(name)
        if value is None:
            return False
        if not isinstance(value, bool):
            raise self._fail(name, "true or false", value)
        return value

    def string(self, name: str) -> str | None:
        value = self._data.get(name)
        if value is not None and not isinstance(value, str):
            raise self._fail(name, "a string", value)
        return value

    def strings(self, name: str) -> tuple[str, ...]:
        value = self._data.get(name)
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(item, str) for item in value):
            raise self._fail(name, "a list of strings", value)
        return tuple(value)

    def object(self, name: str) -> _Fields:
        value = self._data.get(name)
        return _Fields({} if value is None else value, location=self._location, path=self._where(name))

    def objects(self, name: str) -> tuple[_Fields, ...]:
        value = self._data.get(name)
        if value is None:
            return ()
        if not isinstance(value, list):
            raise self._fail(name, "a list", value)
        where = self._where(name)
        return tuple(
            _Fields(item, location=self._location, path=f"{where}[{i}]") for i, item in enumerate(value)
        )

    def entries(self) -> tuple[tuple[str, _Fields], ...]:
        return tuple((key, self.object(key)) for key in self._data)

    def numbers(self) -> dict[str, int | float | None]:
        for name, value in self._data.items():
            if value is not None and (not isinstance(value, int | float) or isinstance(value, bool)):
                raise self._fail(name, "a number", value)
        return dict(self._data)

    def topic_partition(self) -> TopicPartition:
        topic = self._data.get("topic")
        if not isinstance(topic, str):
            raise self._fail("topic", "a topic name", topic)
        partition = self._data.get("partition")
        if not isinstance(partition, int) or isinstance(partition, bool) or partition < 0:
            raise self._fail("partition", "a partition number", partition)
        try:
            return TopicPartition(topic, partition)
        except InvalidTopicError as error:
            raise ManifestFormatError(f"field {self._path!r}: {error}", location=self._location) from None


def _shown(value: object) -> str:
    """``value`` as JSON-ish text for a message, at most ``_SHOWN`` characters of it."""
    text = repr(value)
    return text if len(text) <= _SHOWN else f"{text[: _SHOWN - 3]}..."
