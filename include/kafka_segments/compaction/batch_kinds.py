"""Kinds of batches over header columns (``records.fast.HeaderTable``), for the round's fast paths: a *plain*
batch (v2 data, neither transactional nor control) needs nothing from the transaction state, so both passes of
a round handle plain batches over columns (``batch_decisions`` says why)."""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from kafka_segments.records.attributes import (
    CONTROL_FLAG_MASK,
    DELETE_HORIZON_FLAG_MASK,
    TRANSACTIONAL_FLAG_MASK,
)
from kafka_segments.records.batch import MAGIC_VALUE_V2
from kafka_segments.records.fast import HeaderTable

Bools = npt.NDArray[np.bool_]


def plain_batches(table: HeaderTable) -> Bools:
    """v2 data batches that are neither transactional nor control."""
    flags = (table.attributes & (TRANSACTIONAL_FLAG_MASK | CONTROL_FLAG_MASK)) != 0
    plain: Bools = (table.magic >= MAGIC_VALUE_V2) & ~flags
    return plain


def has_delete_horizon(table: HeaderTable) -> Bools:
    """``BatchHeader.has_delete_horizon`` of every batch."""
    stamped: Bools = (table.magic >= MAGIC_VALUE_V2) & ((table.attributes & DELETE_HORIZON_FLAG_MASK) != 0)
    return stamped
