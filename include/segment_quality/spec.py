"""How a suite is declared: invariants as data (no GX import here; ``gx_runtime`` builds the GX objects).

An ``Invariant`` is one GX expectation class with its arguments and, optionally, a row condition (``When``,
or a tuple of them that must all hold). The helpers below build the few expectation shapes the suites use."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

EITHER_MISSING = "either_value_is_missing"


@dataclass(frozen=True, slots=True)
class When:
    """A row condition: ``column == value``, ``column != value`` or ``column is null`` (``op="null"``)."""

    column: str
    op: str
    value: str | int | bool | None = None


Condition = When | tuple[When, ...]
"""One condition, or several that must all hold (GX's ``AndCondition``)."""


def conditions_of(when: Condition | None) -> tuple[When, ...]:
    if when is None:
        return ()
    return when if isinstance(when, tuple) else (when,)


@dataclass(frozen=True, slots=True)
class Invariant:
    """One expectation: a GX expectation class (``great_expectations.expectations``) with its arguments."""

    name: str
    rule: str
    """What Kafka does and where (shown in Data Docs and in failure messages)."""
    expectation: str
    kwargs: Mapping[str, object]
    when: Condition | None = None

    def columns(self) -> tuple[str, ...]:
        """Every column the expectation reads."""
        names = [str(v) for k, v in self.kwargs.items() if k in {"column", "column_A", "column_B"}]
        listed = self.kwargs.get("column_list")
        if isinstance(listed, list | tuple):
            names.extend(str(name) for name in listed)
        names.extend(condition.column for condition in conditions_of(self.when))
        return tuple(names)


@dataclass(frozen=True, slots=True)
class SuiteSpec:
    """A suite over one table of ``QualityFrames`` (``staged.columns.TABLE_COLUMNS``)."""

    name: str
    frame: str
    invariants: tuple[Invariant, ...]
    index_columns: tuple[str, ...] = field(default=("topic", "partition"))
    """Columns that name a failing row in the results."""


def pair(
    name: str, rule: str, a: str, b: str, *, strict: bool = False, when: Condition | None = None
) -> Invariant:
    """``a > b`` (``strict``) or ``a >= b`` on every row where both are known."""
    kwargs = {"column_A": a, "column_B": b, "or_equal": not strict, "ignore_row_if": EITHER_MISSING}
    return Invariant(name, rule, "ExpectColumnPairValuesAToBeGreaterThanB", kwargs, when)


def equal(name: str, rule: str, a: str, b: str, *, when: Condition | None = None) -> Invariant:
    """``a == b`` on every row where both are known."""
    kwargs = {"column_A": a, "column_B": b, "ignore_row_if": EITHER_MISSING}
    return Invariant(name, rule, "ExpectColumnPairValuesToBeEqual", kwargs, when)


def known(name: str, rule: str, column: str, *, when: Condition | None = None) -> Invariant:
    """``column`` has a value on every row."""
    return Invariant(name, rule, "ExpectColumnValuesToNotBeNull", {"column": column}, when)


def zero(name: str, rule: str, column: str, *, when: Condition | None = None) -> Invariant:
    """``column`` is 0 on every row (where it is known)."""
    kwargs = {"column": column, "min_value": 0, "max_value": 0}
    return Invariant(name, rule, "ExpectColumnValuesToBeBetween", kwargs, when)


def one_of(
    name: str, rule: str, column: str, values: tuple[str | int | bool, ...], *, when: Condition | None = None
) -> Invariant:
    """``column`` is one of ``values`` on every row (where it is known)."""
    kwargs = {"column": column, "value_set": list(values)}
    return Invariant(name, rule, "ExpectColumnValuesToBeInSet", kwargs, when)
