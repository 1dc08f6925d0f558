"""The one decoder of the JSON the lake holds: manifests, run records, run reports and the other documents of
a run's folder (offsets snapshots and pins have their own, ``offsets.snapshot_fields.decode_document``, with
the same checks).

A lake object is input like any other: it may have been written by hand or tampered with. It must be UTF-8
JSON nested at most ``MAX_NESTING_DEPTH`` levels (checked before decoding, so ``[[[[...`` a hundred thousand
deep is refused instead of ending in a ``RecursionError`` traceback), with no integer beyond Python's digit
limit; anything else is one ``ManifestFormatError`` naming the object."""

from __future__ import annotations

import json
from typing import Any

from kafka_segments.errors import ManifestFormatError
from kafka_segments.nesting import NestingTooDeepError, check_json_text


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
