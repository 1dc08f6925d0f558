"""``kafka_segments.table.value.schema``: the fields of a table's ``value_json`` column, a JSON object of
field name -> type (docs/tables.md, "JSON values")."""

from __future__ import annotations

import json

from kafka_segments.config.values import SettingValueError

JSON_FIELD_TYPES = ("long", "double", "boolean", "string")


def parse_value_schema(text: str) -> dict[str, str]:
    """The fields ``text`` names, in its order (``{}`` for an empty text: inferred).

    Raises:
        SettingValueError: not a JSON object of non-empty names to one of ``JSON_FIELD_TYPES``.
    """
    if not text.strip():
        return {}
    try:
        fields = json.loads(text)
    except ValueError as exc:
        raise SettingValueError(f"Value must be a JSON object (field name -> type): {exc}") from None
    if not isinstance(fields, dict):
        raise SettingValueError("Value must be a JSON object (field name -> type)")
    for name, kind in fields.items():
        if not name or kind not in JSON_FIELD_TYPES:
            raise SettingValueError(
                f"field {name!r}: the type must be one of {', '.join(JSON_FIELD_TYPES)}, not {kind!r}"
            )
    return dict(fields)
