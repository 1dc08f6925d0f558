"""The compacted view (``view=latest``): one row per key and partition — the latest record of the range,
keys whose latest record is a tombstone left out — which is what a compacted topic means as a table.

The log cleaner keeps exactly these (and drops aborted data, which this view never sees), so the answer is
the same before and after the partition is cleaned. Records without a key, which a compacted topic refuses,
are left out. Rows come in offset order."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

_ROW = "__row"


def latest_by_key(batches: Iterable[Any], *, schema: Any) -> Any:
    """The latest live record of each key among ``batches`` (one partition's, in offset order), as a
    ``pyarrow.Table`` with ``schema``."""
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.Table.from_batches(list(batches), schema=schema)
    table = table.filter(pc.is_valid(table["key"]))
    if table.num_rows == 0:
        return table
    numbered = table.append_column(_ROW, pa.array(range(table.num_rows), type=pa.int64()))
    last = numbered.select(["key", _ROW]).group_by("key", use_threads=False).aggregate([(_ROW, "max")])
    rows = pc.sort_indices(last[f"{_ROW}_max"])
    latest = table.take(pc.take(last[f"{_ROW}_max"], rows))
    return latest.filter(pc.is_valid(latest["value"]))
