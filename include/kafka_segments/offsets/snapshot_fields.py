"""Strict reading of the offsets' JSON documents (snapshots: ``snapshot_codec``; pins: ``snapshot_store``)
and their errors: every refusal names the object or file and the field path
(``groups[1].offsets[0].offset: -5 is negative``); an object with a key twice is refused."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from kafka_segments.errors import LocatedError
from kafka_segments.nesting import check_json_text

T = TypeVar("T")
INT64_MAX = 2**63 - 1


class SnapshotFormatError(LocatedError):
    """A snapshot document (a stored object or a file) is not valid snapshot JSON.

    Attributes:
        field: the path of the field at fault (``groups[1].offsets[0].offset``), ``None`` for the document.
    """

    def __init__(self, reason: str, *, location: str, field: str | None = None) -> None:
        self.field = field
        super().__init__(f"{field}: {reason}" if field else reason, location=location)


class UnsupportedSnapshotVersionError(SnapshotFormatError):
    """The document's ``format_version`` is not one this build reads (written by a newer release?)."""


class _DuplicateKeys(dict[str, Any]):
    """A decoded JSON object in which some key appeared more than once (``json`` keeps the last)."""

    def __init__(self, pairs: list[tuple[str, Any]], duplicates: list[str]) -> None:
        super().__init__(pairs)
        self.duplicates = duplicates


def _object_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: set[str] = set()
    duplicates: list[str] = []
    for name, _ in pairs:
        if name in seen:
            duplicates.append(name)
        seen.add(name)
    return _DuplicateKeys(pairs, duplicates) if duplicates else dict(pairs)


def show_value(value: Any) -> str:
    """A short JSON rendering of a found value for messages."""
    try:
        text = json.dumps(value, ensure_ascii=False)
    except ValueError:
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


class FieldReader:
    """Typed access to one decoded JSON object; every refusal names the location and the field path."""

    def __init__(self, data: object, *, location: str, path: str = "") -> None:
        self.location = location
        self.path = path
        if not isinstance(data, dict):
            raise SnapshotFormatError(
                f"expected a JSON object, found {show_value(data)}", location=location, field=path or None
            )
        if isinstance(data, _DuplicateKeys):
            raise SnapshotFormatError(
                f"key {data.duplicates[0]!r} appears more than once", location=location, field=path or None
            )
        self._data: dict[str, Any] = data

    def where(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def fail(self, name: str, problem: str) -> SnapshotFormatError:
        return SnapshotFormatError(problem, location=self.location, field=self.where(name))

    def has(self, name: str) -> bool:
        return name in self._data

    def _get(self, name: str) -> Any:
        if name not in self._data:
            raise self.fail(name, "missing")
        return self._data[name]

    def integer(self, name: str, *, minimum: int = 0, maximum: int = INT64_MAX, note: str = "") -> int:
        value = self._get(name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(name, f"expected an integer, found {show_value(value)}")
        if value < minimum:
            problem = f"{value} is negative" if minimum == 0 else f"{value} is below {minimum}"
            raise self.fail(name, problem + note)
        if value > maximum:
            raise self.fail(name, f"{value} is above {maximum}")
        return value

    def is_null(self, name: str) -> bool:
        """Whether the (required) field ``name`` is ``null``."""
        return self._get(name) is None

    def optional_integer(self, name: str, *, minimum: int = 0, note: str = "") -> int | None:
        return None if self._get(name) is None else self.integer(name, minimum=minimum, note=note)

    def string(self, name: str, *, allow_empty: bool = False) -> str:
        value = self._get(name)
        if not isinstance(value, str):
            raise self.fail(name, f"expected a string, found {show_value(value)}")
        if not value and not allow_empty:
            raise self.fail(name, "must not be empty")
        return value

    def optional_string(self, name: str) -> str | None:
        return None if self._get(name) is None else self.string(name, allow_empty=True)

    def boolean(self, name: str, *, default: bool) -> bool:
        """An optional boolean field (``default`` when absent)."""
        if name not in self._data:
            return default
        value = self._data[name]
        if not isinstance(value, bool):
            raise self.fail(name, f"expected true or false, found {show_value(value)}")
        return value

    def array(self, name: str) -> list[Any]:
        value = self._get(name)
        if not isinstance(value, list):
            raise self.fail(name, f"expected a list, found {show_value(value)}")
        return value

    def objects(self, name: str, parse: Callable[[FieldReader], T]) -> tuple[T, ...]:
        return tuple(
            parse(FieldReader(item, location=self.location, path=f"{self.where(name)}[{index}]"))
            for index, item in enumerate(self.array(name))
        )

    def check_unique(self, name: str, keys: Iterable[object], *, field: str, what: str) -> None:
        """Refuse the second element of list ``name`` whose key was already seen."""
        first: dict[object, int] = {}
        for index, key in enumerate(keys):
            if key in first:
                raise self.fail(
                    f"{name}[{index}].{field}" if field else f"{name}[{index}]",
                    f"{what} {key} is already listed at {self.where(name)}[{first[key]}]",
                )
            first[key] = index


def decode_document(data: bytes, *, location: str, kind: str) -> Any:
    """UTF-8 JSON to Python values (objects with a repeated key are refused when read with
    ``FieldReader``).

    Raises:
        SnapshotFormatError: not UTF-8, not JSON, or nested deeper than ``MAX_NESTING_DEPTH``.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SnapshotFormatError(f"{kind} is not UTF-8 (byte {exc.start})", location=location) from exc
    try:
        check_json_text(text)
        return json.loads(text, object_pairs_hook=_object_pairs)
    except json.JSONDecodeError as exc:
        raise SnapshotFormatError(
            f"{kind} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})", location=location
        ) from exc
    except ValueError as exc:  # nested deeper than MAX_NESTING_DEPTH, an integer with too many digits
        raise SnapshotFormatError(f"{kind} is not usable JSON: {exc}", location=location) from exc
