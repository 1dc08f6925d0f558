"""Record fates: the per-record rule of ``decisions.decide_record`` as codes over whole columns of records.

Same rule, same precedence; ``filtering`` computes every fate code in one numba pass
(``records.fast.fate_codes``), the map asked once per distinct key (``records.fast.DigestTable``).
``tests/unit/test_compaction_fates.py`` checks the kernel against ``decide_record``, the executable
specification."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kafka_segments.compaction.decisions import RecordDecision

FATES = tuple(RecordDecision)
"""Fate code -> decision (codes are positions in this tuple)."""
RETAINED_CODES = np.array([decision.retained for decision in FATES], dtype=np.bool_)
"""Fate code -> whether the record is kept."""
FATE_ORDER = np.array(
    [
        FATES.index(decision)
        for decision in (
            RecordDecision.DROP_BATCH_DISCARDED,
            RecordDecision.KEEP_CONTROL,
            RecordDecision.KEEP_BEYOND_MAP,
            RecordDecision.DROP_UNKEYED,
            RecordDecision.DROP_SUPERSEDED,
            RecordDecision.KEEP_LATEST,
            RecordDecision.KEEP_TOMBSTONE,
            RecordDecision.DROP_EXPIRED_TOMBSTONE,
        )
    ],
    dtype=np.int8,
)
"""The ``codes`` argument of ``records.fast.fate_codes``: the fate codes in the order its rules apply."""

Bools = npt.NDArray[np.bool_]
I64 = npt.NDArray[np.int64]
Codes = npt.NDArray[np.int8]
