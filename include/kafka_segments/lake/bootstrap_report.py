"""The report of a streamed bootstrap (``lake.bootstrap``): the same ``adopt`` report as ``AdoptionReport``
(``to_dict`` / ``to_text``, byte for byte), but what it says of each partition waits in a temporary file
(``ReportSpool``) rather than in memory, and ``write_json`` / ``write_text`` stream it out: a bootstrap of a
million segments holds its counts, quarantines and ignored objects, not a million entries."""

from __future__ import annotations

import json
import tempfile
import weakref
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO, Any, TextIO

from kafka_segments.lake.adoption_report import (
    AdoptionResult,
    Ignored,
    Quarantine,
    headline,
    ignored_dict,
    ignored_lines,
    partition_dict,
    partition_lines,
    quarantine_dict,
    quarantine_lines,
    segment_dict,
)
from kafka_segments.state import PartitionState, SegmentEntry
from kafka_segments.topic_partition import TopicPartition

ResultReader = Callable[[], tuple[PartitionState, ...]]
"""The committed version's partitions (read when a caller asks for the ``AdoptionResult``)."""


class ReportSpool:
    """One JSON line per partition the report names, in the manifest's order: its text lines, adopted
    segments and partition fields (``None`` for a quarantined one). Written once, read as often as needed."""

    def __init__(self) -> None:
        self._file: IO[bytes] = tempfile.TemporaryFile(prefix="kafka-segments-adopt-")  # noqa: SIM115 - open for the report's life
        weakref.finalize(self, self._file.close)  # closed (and gone) with the report

    def adopted(self, state: PartitionState, adopted: Sequence[SegmentEntry]) -> None:
        text = partition_lines(state, list(adopted), [])
        self._write(text, [segment_dict(entry) for entry in adopted], partition_dict(state))

    def quarantined(self, topic_partition: TopicPartition, problems: Sequence[Quarantine]) -> None:
        self._write(quarantine_lines(topic_partition, list(problems), None), [], None)

    def _write(
        self, text: list[str], adopted: list[dict[str, Any]], partition: dict[str, Any] | None
    ) -> None:
        line = {"text": text, "adopted": adopted, "partition": partition}
        self._file.write(json.dumps(line, ensure_ascii=False).encode() + b"\n")

    def lines(self) -> Iterator[dict[str, Any]]:
        self._file.flush()
        self._file.seek(0)
        for raw in self._file:
            line: dict[str, Any] = json.loads(raw)
            yield line


@dataclass(frozen=True, slots=True, eq=False)
class BootstrapReport:
    """What a streamed bootstrap did, reported as ``AdoptionReport`` reports an adoption."""

    run_id: str
    committed_version: int | None
    adopted_segments: int
    quarantined: tuple[Quarantine, ...]
    ignored: tuple[Ignored, ...]
    bytes_read: int
    spool: ReportSpool = field(repr=False)
    read_partitions: ResultReader = field(repr=False)

    @property
    def base_version(self) -> None:
        return None

    @property
    def result(self) -> AdoptionResult:
        """The adoption as ``adopt_objects`` gives it, the partitions read back from the committed version
        (every segment of a bootstrap is adopted). ``present_keys`` is not kept (a bootstrap has no retired
        objects to drop)."""
        partitions = self.read_partitions()
        return AdoptionResult(
            partitions=partitions,
            adopted=tuple(entry for state in partitions for entry in state.segments),
            regrown=(),
            quarantined=self.quarantined,
            ignored=self.ignored,
            present_keys=frozenset(),
            bytes_read=self.bytes_read,
        )

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-able data (``AdoptionReport.to_dict``'s)."""
        return {
            **self._fields(),
            "adopted": list(self._adopted()),
            "regrown": [],
            "quarantined": [quarantine_dict(item) for item in self.quarantined],
            "ignored": [ignored_dict(item) for item in self.ignored],
            "partitions": list(self._partitions()),
        }

    def to_text(self) -> str:
        """A person-readable report (``AdoptionReport.to_text``'s)."""
        return "".join(self._text())

    def write_json(self, out: TextIO, *, extra: Mapping[str, object]) -> None:
        """``to_dict`` with ``extra``'s fields after its own, streamed to ``out`` as ``json.dump(...,
        indent=2, ensure_ascii=False)`` writes it."""
        fields: list[tuple[str, object]] = [
            *self._fields().items(),
            ("adopted", self._adopted()),
            ("regrown", iter(())),
            ("quarantined", (quarantine_dict(item) for item in self.quarantined)),
            ("ignored", (ignored_dict(item) for item in self.ignored)),
            ("partitions", self._partitions()),
            *extra.items(),
        ]
        out.write("{")
        for index, (name, value) in enumerate(fields):
            out.write(("," if index else "") + "\n  " + json.dumps(name, ensure_ascii=False) + ": ")
            if isinstance(value, Iterator):
                _write_list(out, value)
            else:
                out.write(_indented(value, 2))
        out.write("\n}")

    def write_text(self, out: TextIO) -> None:
        for piece in self._text():
            out.write(piece)

    def _fields(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "operation": "adopt",
            "base_version": None,
            "committed_version": self.committed_version,
            "changed": self.adopted_segments > 0,
            "bytes_read": self.bytes_read,
        }

    def _adopted(self) -> Iterator[dict[str, Any]]:
        for line in self.spool.lines():
            yield from line["adopted"]

    def _partitions(self) -> Iterator[dict[str, Any]]:
        for line in self.spool.lines():
            if line["partition"] is not None:
                yield line["partition"]

    def _text(self) -> Iterator[str]:
        yield (
            headline(
                self.run_id,
                None,
                self.committed_version,
                adopted=self.adopted_segments,
                regrown=0,
                quarantined=len(self.quarantined),
                ignored=len(self.ignored),
                bytes_read=self.bytes_read,
            )
            + "\n"
        )
        for line in self.spool.lines():
            yield "".join(text + "\n" for text in line["text"])
        yield "".join(text + "\n" for text in ignored_lines(self.ignored))


def _indented(value: object, by: int) -> str:
    return json.dumps(value, indent=2, ensure_ascii=False).replace("\n", "\n" + " " * by)


def _write_list(out: TextIO, items: Iterator[object]) -> None:
    empty = True
    for item in items:
        out.write(("[" if empty else ",") + "\n    " + _indented(item, 4))
        empty = False
    out.write("[]" if empty else "\n  ]")
