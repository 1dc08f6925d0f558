"""``QualityFrames`` columns → pandas DataFrames with nullable dtypes (imports pandas: call from functions).

Integers become ``Int64`` (64-bit, nullable: offsets and timestamps keep full precision, ``None`` becomes
``<NA>``), strings ``string`` and booleans ``boolean``. Every pair expectation ignores rows where either
value is missing, and ``NotNull`` expectations say where a value must be present."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from segment_quality.staged.columns import ColumnKind

if TYPE_CHECKING:
    import pandas as pd

DTYPES: Mapping[ColumnKind, str] = {
    ColumnKind.INT: "Int64",
    ColumnKind.STR: "string",
    ColumnKind.BOOL: "boolean",
}


def to_dataframe(columns: Mapping[str, Sequence[object]], kinds: Mapping[str, ColumnKind]) -> pd.DataFrame:
    """One DataFrame with the columns of ``kinds``, in that order (a missing column is an error).

    Raises:
        KeyError: ``columns`` lacks a column of ``kinds``.
    """
    import pandas as pd

    data = {name: pd.array(list(columns[name]), dtype=DTYPES[kind]) for name, kind in kinds.items()}
    return pd.DataFrame(data)
