"""The one decoder of the JSON the lake holds: manifests, run records, run reports and the other documents of
a run's folder (offsets snapshots and pins have their own, ``offsets.snapshot_fields.decode_document``, with
the same checks).

A lake object is input like any other: it may have been written by hand or tampered with. It must be UTF-8
JSON nested at most ``MAX_NESTING_DEPTH`` levels (checked before decoding, so ``[[[[...`` a hundred thousand
deep is refused instead of ending in a ``RecursionError`` traceback), with no integer beyond Python's digit
limit; anything else is one ``ManifestFormatError`` naming the object."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from enum import Enum
from typing import Any, TypeVar

from kafka_segments.errors import InvalidTopicError, ManifestFormatError, UnsupportedFormatVersionError
from kafka_segments.nesting import NestingTooDeepError, check_json_text
from kafka_segments.topic_partition import TopicPartition

T = TypeVar("T")
E = TypeVar("E", bound=Enum)


def decode_json(data: bytes, *, location: str, kind: str) -> Any:
    """``data`` decoded, after the checks of this module.

    Raises:
        ManifestFormatError: not UTF-8, not JSON, nested deeper than ``MAX_NESTING_DEPTH``, or an integer
            with too many digits (``kind`` and ``location`` name the object).
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ManifestFormatError(f"{kind} is not UTF-8 (byte {exc.start})", location=location) from None
    try:
        check_json_text(text)
        return json.loads(text)
    except NestingTooDeepError as exc:
        raise ManifestFormatError(f"{kind} is {exc.reason}", location=location) from None
    except json.JSONDecodeError as exc:
        raise ManifestFormatError(
            f"{kind} is not valid JSON (line {exc.lineno} column {exc.colno}: {exc.msg})", location=location
        ) from None
    except ValueError as exc:  # an integer with more digits than int() converts
        raise ManifestFormatError(f"{kind} is not usable JSON: {exc}", location=location) from None


def dump_json(document: Mapping[str, Any]) -> bytes:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False).encode("utf-8")


class Reader:
    """Typed field access on one decoded JSON object; every error names the object and the field path."""

    def __init__(self, data: object, *, location: str, path: str = "") -> None:
        if not isinstance(data, dict):
            raise ManifestFormatError(f"{path or 'document'}: expected a JSON object", location=location)
        self._data: dict[str, Any] = data
        self.location = location
        self.path = path

    def _where(self, name: str) -> str:
        return f"{self.path}.{name}" if self.path else name

    def fail(self, name: str, problem: str) -> ManifestFormatError:
        return ManifestFormatError(f"field {self._where(name)!r}: {problem}", location=self.location)

    def _get(self, name: str) -> Any:
        if name not in self._data:
            raise self.fail(name, "missing")
        return self._data[name]

    def integer(self, name: str, *, minimum: int | None = None) -> int:
        value = self._get(name)
        if not isinstance(value, int) or isinstance(value, bool):
            raise self.fail(name, f"expected an integer, found {value!r}")
        if minimum is not None and value < minimum:
            raise self.fail(name, f"must be >= {minimum}, found {value}")
        return value

    def optional_integer(self, name: str, *, minimum: int | None = None) -> int | None:
        if self._get(name) is None:
            return None
        return self.integer(name, minimum=minimum)

    def later_integer(self, name: str, *, minimum: int | None = None) -> int | None:
        """An integer or null that documents written before the field lack (``None`` then)."""
        return self.optional_integer(name, minimum=minimum) if name in self._data else None

    def optional_boolean(self, name: str, *, default: bool) -> bool:
        """A JSON boolean that older documents may lack (``default`` then)."""
        value = self._get(name) if name in self._data else default
        if not isinstance(value, bool):
            raise self.fail(name, f"must be true or false, got {value!r}")
        return value

    def later_string(self, name: str) -> str | None:
        """A non-empty string that documents written before the field lack (``None`` then)."""
        return self.string(name) if name in self._data else None

    def string(self, name: str, *, allow_empty: bool = False) -> str:
        value = self._get(name)
        if not isinstance(value, str) or (not value and not allow_empty):
            raise self.fail(name, f"expected a {'' if allow_empty else 'non-empty '}string, found {value!r}")
        return value

    def choice(self, name: str, enum: type[E]) -> E:
        """A string field holding one of ``enum``'s values."""
        value = self.string(name)
        try:
            return enum(value)
        except ValueError:
            raise self.fail(name, f"unknown {name} {value!r}") from None

    def objects(self, name: str, parse: Callable[[Reader], T]) -> tuple[T, ...]:
        value = self._get(name)
        if not isinstance(value, list):
            raise self.fail(name, f"expected a list, found {type(value).__name__}")
        return tuple(
            parse(Reader(item, location=self.location, path=f"{self._where(name)}[{index}]"))
            for index, item in enumerate(value)
        )

    def raw(self) -> Mapping[str, Any]:
        """The object as decoded (for a writer that carries it forward unchanged)."""
        return self._data

    def has(self, name: str) -> bool:
        return name in self._data

    def later_strings(self, name: str) -> tuple[str, ...] | None:
        """A list of non-empty strings, or null, that older documents lack (``None`` then)."""
        value = self._data.get(name)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(item, str) and item for item in value):
            raise self.fail(name, f"expected a list of non-empty strings, found {value!r}")
        return tuple(value)

    def later_objects(self, name: str, parse: Callable[[Reader], T]) -> tuple[T, ...] | None:
        """``objects`` of a list, or null, that older documents lack (``None`` then)."""
        return None if self._data.get(name) is None else self.objects(name, parse)

    def later_object(self, name: str) -> Reader | None:
        """A nested JSON object, or null, that older documents lack (``None`` then)."""
        value = self._data.get(name)
        return None if value is None else Reader(value, location=self.location, path=self._where(name))

    def later_labels(self, name: str) -> dict[str, str]:
        """A JSON object of strings that older documents lack (empty then)."""
        value = self._data.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict) or not all(isinstance(item, str) for item in value.values()):
            raise self.fail(name, f"expected an object of strings, found {value!r}")
        return {str(key): item for key, item in value.items()}

    def optional_string(self, name: str) -> str | None:
        """A non-empty string or null (absent counts as null)."""
        return None if self._data.get(name) is None else self.string(name)

    def topic_partition(self) -> TopicPartition:
        topic = self.string("topic")
        partition = self.integer("partition", minimum=0)
        try:
            return TopicPartition(topic, partition)
        except InvalidTopicError as exc:
            raise self.fail("topic", str(exc)) from exc


def load_document(data: bytes, *, location: str, supported: int | frozenset[int], kind: str) -> Reader:
    """Decode a persisted JSON file (``json_document.decode_json``) and check its ``format_version`` (one of
    ``supported``)."""
    reader = Reader(decode_json(data, location=location, kind=kind), location=location)
    version = reader.integer("format_version")
    versions = frozenset({supported}) if isinstance(supported, int) else supported
    if version not in versions:
        readable = " or ".join(str(v) for v in sorted(versions))
        raise UnsupportedFormatVersionError(
            f"{kind} has format_version {version}; this build reads format_version {readable} "
            "(written by another release of kafka-segments?)",
            location=location,
        )
    return reader
