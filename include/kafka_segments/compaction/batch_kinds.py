"""Kinds of batches over header columns (``records.fast.HeaderTable``), for the round's fast paths.

A *plain* batch is a v2 data batch that is neither transactional nor control. Kafka's cleaner needs nothing
from the transaction state for it (``CleanedTransactionMetadata.onBatchRead`` returns false for
non-transactional data, and only starts the aborted transactions up to it, which the next transactional or
control batch does anyway), so both passes of a round handle plain batches over columns.
"""

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
