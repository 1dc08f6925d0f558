"""A table's ``value_json`` column (``kafka_segments.table.value.format=json``; docs/tables.md, "JSON
values"): the value's top-level JSON fields with Iceberg types (long, double, boolean, string; a nested
object or array is its compact JSON text). A value that is not a JSON object, and a tombstone, give a null
struct. The fields are the ones ``value.schema`` gives, or else inferred from the rows in offset order and
added to the table's schema as they appear (never dropped or retyped); a value whose type conflicts with its
field's is null in that row and counted."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

JSON_COLUMN = "value_json"
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True, slots=True)
class JsonValues:
    """A topic's JSON setting: ``fields`` given (name -> type), or inferred when empty."""

    fields: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class DecodedValues:
    """One batch's ``value`` column decoded: by pyarrow's JSON reader (``parsed``, a row per non-null value)
    when every value is a one-line JSON object of known or plain types, else one by one (``objects``:
    ``None`` for no JSON object); ``seen``: each field's type in its first values."""

    column: Any
    parsed: Any | None
    objects: Sequence[dict[str, Any] | None]
    seen: Mapping[str, str]


def decode(column: Any, known: Mapping[str, str]) -> DecodedValues:
    """Decode ``column`` (binary), the fields of ``known`` with their types."""
    parsed = _read_json(column, known)
    if parsed is None:
        return _decode_each(column)
    seen = {field.name: _ARROW_KINDS[str(field.type)] for field in parsed.schema if str(field.type) != "null"}
    return DecodedValues(column, parsed, (), seen)


_ARROW_KINDS = {"int64": "long", "double": "double", "bool": "boolean", "string": "string", "null": ""}


def _read_json(column: Any, known: Mapping[str, str]) -> Any | None:
    """The values as a table by pyarrow's JSON reader, or ``None`` when the batch needs the values one by
    one: a value that is not UTF-8, not a one-line ``{…}``, or breaks a known field's type, or a field of
    nested type."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.json as pj

    present = column.drop_null()
    try:
        text = present.cast(pa.string())
    except pa.ArrowInvalid:
        return None
    if not len(text) or not pc.all(pc.starts_with(text, "{")).as_py():
        return None
    if pc.any(pc.match_substring(text, "\n")).as_py():
        return None
    joined = pc.binary_join_element_wise(text, "", "\n")
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32)
    body = joined.buffers()[2][offsets[0] : offsets[len(joined)]]
    schema = pa.schema([pa.field(name, _arrow_types()[kind]) for name, kind in known.items()])
    options = pj.ParseOptions(explicit_schema=schema, unexpected_field_behavior="infer")
    read = pj.ReadOptions(use_threads=False, block_size=max(len(body) + 1, 1 << 20))
    try:
        parsed = pj.read_json(pa.BufferReader(body), read_options=read, parse_options=options)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    plain = all(str(field.type) in _ARROW_KINDS for field in parsed.schema)
    return parsed if plain and parsed.num_rows == len(text) else None


def _arrow_types() -> dict[str, Any]:
    import pyarrow as pa

    return {"long": pa.int64(), "double": pa.float64(), "boolean": pa.bool_(), "string": pa.string()}


def _decode_each(column: Any) -> DecodedValues:
    objects = [_parse(value) for value in column.to_pylist()]
    seen: dict[str, str] = {}
    for parsed in objects:
        for name, item in (parsed or {}).items():
            if name not in seen and (kind := _kind(item)) is not None:
                seen[name] = kind
    return DecodedValues(column, None, objects, seen)


def _parse(value: bytes | None) -> dict[str, Any] | None:
    if value is None:
        return None
    try:
        parsed = json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _kind(item: object) -> str | None:
    if item is None:
        return None
    if isinstance(item, bool):
        return "boolean"
    if isinstance(item, int):
        return "long"
    return "double" if isinstance(item, float) else "string"


def table_fields(table: Any) -> dict[str, str]:
    """The fields of ``table``'s ``value_json`` column, name -> type ({} when it has none)."""
    from pyiceberg.types import StructType

    struct = {field.name: field for field in table.schema().fields}.get(JSON_COLUMN)
    if struct is None or not isinstance(struct.field_type, StructType):
        return {}
    return {field.name: str(field.field_type) for field in struct.field_type.fields}


def evolve(table: Any, wanted: Mapping[str, str]) -> None:
    """Add to ``table``'s ``value_json`` the fields of ``wanted`` it lacks (one schema commit; none when it
    has them all): additive only."""
    from pyiceberg.types import BooleanType, DoubleType, LongType, NestedField, StringType, StructType

    types = {"long": LongType(), "double": DoubleType(), "boolean": BooleanType(), "string": StringType()}
    have = table_fields(table)
    missing = [(name, kind) for name, kind in wanted.items() if name not in have]
    if not missing:
        return
    struct = StructType(
        *(NestedField(-1 - i, name, types[kind], required=False) for i, (name, kind) in enumerate(missing))
    )
    with table.update_schema() as update:
        update.union_by_name(_schema_with(struct))


def _schema_with(struct: Any) -> Any:
    from pyiceberg.schema import Schema
    from pyiceberg.types import NestedField

    return Schema(NestedField(1, JSON_COLUMN, struct, required=False))


def struct_column(decoded: DecodedValues, fields: Mapping[str, str]) -> tuple[Any, int]:
    """The ``value_json`` Arrow column of ``decoded`` for ``fields`` and the number of values left null for
    a type conflict."""
    if decoded.parsed is not None:
        column = _struct_of_parsed(decoded, fields)
        if column is not None:
            return column, 0
        decoded = _decode_each(decoded.column)
    return _struct_of_objects(decoded, fields)


def _struct_of_parsed(decoded: DecodedValues, fields: Mapping[str, str]) -> Any | None:
    """From the JSON reader's table: each field taken to its row (a null value: a null struct); ``None``
    when a field's type there is not the table's (a value of another type: the values one by one)."""
    import numpy as np
    import pyarrow as pa

    types, parsed = _arrow_types(), decoded.parsed
    if parsed is None:
        return None
    valid = decoded.column.is_valid().to_numpy(zero_copy_only=False)
    rows = pa.array(np.cumsum(valid) - 1, mask=~valid)
    arrays = []
    for name, kind in fields.items():
        if name not in parsed.column_names:
            arrays.append(pa.nulls(len(valid), type=types[kind]))
            continue
        column = parsed.column(name).combine_chunks()
        widened = kind == "double" and pa.types.is_int64(column.type)
        if column.type != types[kind] and not pa.types.is_null(column.type) and not widened:
            return None
        arrays.append(column.cast(types[kind]).take(rows))
    names = [pa.field(name, types[kind]) for name, kind in fields.items()]
    return pa.StructArray.from_arrays(arrays, fields=names, mask=pa.array(~valid))


def _struct_of_objects(decoded: DecodedValues, fields: Mapping[str, str]) -> tuple[Any, int]:
    import pyarrow as pa

    arrow = _arrow_types()
    conflicts = 0
    arrays = []
    for name, kind in fields.items():
        column = []
        for parsed in decoded.objects:
            item = None if parsed is None else parsed.get(name)
            typed = None if item is None else _typed(item, kind)
            conflicts += item is not None and typed is None
            column.append(typed)
        arrays.append(pa.array(column, type=arrow[kind]))
    mask = pa.array([parsed is None for parsed in decoded.objects], type=pa.bool_())
    names = [pa.field(name, arrow[kind]) for name, kind in fields.items()]
    return pa.StructArray.from_arrays(arrays, fields=names, mask=mask), conflicts


def _typed(item: object, kind: str) -> object:
    """``item`` as a value of ``kind``, or ``None`` when it is not one (a conflict)."""
    seen = _kind(item)
    if kind == "long":
        return item if seen == "long" and _LONG_MIN <= item <= _LONG_MAX else None  # type: ignore[operator]
    if kind == "double":
        return float(item) if seen in ("long", "double") else None  # type: ignore[arg-type]
    if kind == "boolean":
        return item if seen == "boolean" else None
    if isinstance(item, str):
        return item
    return json.dumps(item, separators=(",", ":")) if isinstance(item, dict | list) else None
