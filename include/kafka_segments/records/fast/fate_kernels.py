"""numba kernels for the cleaning pass: every record's fate in one pass over the record columns, by the rule
of ``compaction.decisions.decide_record`` (the executable specification; fate codes are passed in by the
caller). ``asked_ids`` are the key ids whose map offset the pass needs; ``fate_codes`` applies the first rule
that holds, in ``decide_record``'s order. ``tests/unit/test_compaction_fates.py`` checks both."""

from __future__ import annotations

from typing import Any

import numpy as np

from kafka_segments.records.fast.jit import njit


@njit(cache=True, nogil=True)
def asked_ids(
    offset: Any, key_id: Any, is_control: Any, batch_index: Any, discard: Any, latest: int, count: int
) -> Any:
    """Which of the ``count`` key ids some record needs looked up in the map."""
    asked = np.zeros(count, dtype=np.bool_)
    for row in range(len(offset)):
        key = key_id[row]
        if key >= 0 and not discard[batch_index[row]] and not is_control[row] and offset[row] <= latest:
            asked[key] = True
    return asked


@njit(cache=True, nogil=True)
def fate_codes(  # noqa: PLR0913 - numba kernel: nopython mode takes arrays one by one, not objects
    offset: Any,
    key_id: Any,
    value_length: Any,
    is_control: Any,
    batch_index: Any,
    discard: Any,
    deletes_retained: Any,
    mapped: Any,
    latest: int,
    codes: Any,
) -> Any:
    """The fate code of every record; ``mapped[id]``: the map's offset of key id ``id`` (-1 absent);
    ``codes``: the codes of discarded, control, beyond-map, unkeyed, superseded, latest, tombstone kept and
    tombstone expired, in that order."""
    out = np.empty(len(offset), dtype=np.int8)
    for row in range(len(offset)):
        batch = batch_index[row]
        key = key_id[row]
        if discard[batch]:
            out[row] = codes[0]
        elif is_control[row]:
            out[row] = codes[1]
        elif offset[row] > latest:
            out[row] = codes[2]
        elif key < 0:
            out[row] = codes[3]
        elif offset[row] < mapped[key]:
            out[row] = codes[4]
        elif value_length[row] >= 0:
            out[row] = codes[5]
        elif deletes_retained[batch]:
            out[row] = codes[6]
        else:
            out[row] = codes[7]
    return out
