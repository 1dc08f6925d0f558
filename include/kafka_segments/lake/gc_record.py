"""``_kafka_segments/gc.json``: what gc's last complete pass settled (docs/metadata-format-2.md, "gc").

A run is *settled* when a pass that saw every object it may have written (the whole lake, or the partitions
its ``input-manifest.json`` names listed whole) found it ended (it has an outcome and can no longer commit)
and left none of its objects. A settled run writes nothing more, so a later pass need not look for its
objects; only the runs not settled yet are looked for: those without a settled entry, and the runs whose
objects the pass left (``unsettled_runs``: their folder may be gone, as a hand-placed object's run has
none). gc writes the record after a pass that deleted
everything it planned to; without it (the first pass, or a record that cannot be read) gc lists the lake
whole."""

from __future__ import annotations

from dataclasses import dataclass

from kafka_segments.errors import ManifestFormatError, ObjectNotFoundError
from kafka_segments.lake.json_document import dump_json, load_document
from kafka_segments.lake.layout import META_PREFIX
from kafka_segments.storage.base import ObjectStore, Overwrite

GC_RECORD_KEY = META_PREFIX + "gc.json"
_FORMAT = 1


@dataclass(frozen=True, slots=True)
class GcRecord:
    """The runs whose objects gc no longer looks for, and those it must look for again."""

    settled_runs: frozenset[str]
    unsettled_runs: frozenset[str] = frozenset()


def read_gc_record(store: ObjectStore) -> GcRecord | str:
    """The record, or why there is none to trust (one line for gc's report)."""
    try:
        data = store.get(GC_RECORD_KEY)
    except ObjectNotFoundError:
        return f"no record of a complete gc pass ({GC_RECORD_KEY})"
    location = store.location(GC_RECORD_KEY)
    try:
        reader = load_document(data, location=location, supported=_FORMAT, kind="gc record")
        settled = reader.later_strings("settled_runs")
        unsettled = reader.later_strings("unsettled_runs")
        if settled is None or unsettled is None:
            raise reader.fail("settled_runs" if settled is None else "unsettled_runs", "is missing")
    except ManifestFormatError as exc:
        return f"the record of the last gc pass is unreadable: {exc}"
    return GcRecord(settled_runs=frozenset(settled), unsettled_runs=frozenset(unsettled))


def write_gc_record(store: ObjectStore, record: GcRecord) -> None:
    """Replace the record (a pass that deleted everything it planned to)."""
    document = {
        "format_version": _FORMAT,
        "settled_runs": sorted(record.settled_runs),
        "unsettled_runs": sorted(record.unsettled_runs),
    }
    store.put(GC_RECORD_KEY, dump_json(document), mode=Overwrite())


__all__ = ["GC_RECORD_KEY", "GcRecord", "read_gc_record", "write_gc_record"]
