"""How deeply nested an input document may be: one limit and one check for every loader of JSON and YAML.

The decoders recurse once per level, so ``[[[[...`` a thousand deep ends in a ``RecursionError`` traceback;
anything deeper than ``MAX_NESTING_DEPTH`` is refused first with ``NestingTooDeepError``, which each loader
turns into its own named input error."""

from __future__ import annotations

import re
from itertools import accumulate

from kafka_segments.errors import KafkaSegmentsError

MAX_NESTING_DEPTH = 100
"""The most levels of lists and objects (mappings) an input document may nest; the outermost counts as 1."""

_JSON_STRING = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"', re.DOTALL)
_NOT_A_BRACKET = re.compile(r"[^\[\]{}]+")


class NestingTooDeepError(KafkaSegmentsError, ValueError):
    """A document nests lists and objects deeper than the limit.

    Attributes:
        limit: the limit that was exceeded.
        line: the 1-based line where the limit was exceeded, when known.
        reason: the message without the line.
    """

    def __init__(self, *, limit: int, line: int | None = None) -> None:
        self.limit = limit
        self.line = line
        self.reason = f"nested deeper than {limit} levels of lists and objects"
        super().__init__(self.reason if line is None else f"{self.reason} (at line {line})")


def check_nesting(depth: int, *, line: int | None = None, limit: int = MAX_NESTING_DEPTH) -> None:
    """The guard every loader calls with the depth it reached (the outermost list or object is depth 1).

    Raises:
        NestingTooDeepError: ``depth`` is above ``limit``.
    """
    if depth > limit:
        raise NestingTooDeepError(limit=limit, line=line)


def check_json_text(text: str, *, limit: int = MAX_NESTING_DEPTH) -> None:
    """Check a JSON text's nesting before it is decoded, in time linear in its length (brackets inside
    strings do not count).

    Raises:
        NestingTooDeepError: ``text`` nests deeper than ``limit``.
    """
    brackets = _NOT_A_BRACKET.sub("", _JSON_STRING.sub("", text))
    steps = (1 if bracket in "[{" else -1 for bracket in brackets)
    check_nesting(max(accumulate(steps), default=0), limit=limit)


def check_json_value(value: object, *, limit: int = MAX_NESTING_DEPTH) -> None:
    """Check a decoded value's nesting (lists, tuples and dicts) before it is encoded, without recursion;
    stops at the first level beyond ``limit``, so a value that contains itself is refused too.

    Raises:
        NestingTooDeepError: ``value`` nests deeper than ``limit``.
    """
    pending: list[tuple[object, int]] = [(value, 1)]
    while pending:
        item, depth = pending.pop()
        if isinstance(item, dict):
            children: list[object] = list(item.values())
        elif isinstance(item, list | tuple):
            children = list(item)
        else:
            continue
        check_nesting(depth, limit=limit)
        pending.extend((child, depth + 1) for child in children)
