"""``kafka_segments.table.value.format=json`` (docs/tables.md, "JSON values"): a topic of JSON values gets
``value_json``, its top-level fields typed; the schema is inferred from the first version and evolved
additively by a later one's new field; a conflicting type is null and counted; a value that is no JSON object
and a tombstone give a null struct; ``<topic>_latest`` has the column too. Given a schema, only its fields;
off, the table is as before; a malformed schema is one configuration error naming the key."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kafka_segments.config import ConfigError, parse_config
from kafka_segments.records.builder import build_batch
from kafka_segments.records.record import Record
from kafka_segments.segment.writer import write_segment
from kafka_segments.storage import LocalStore, ObjectStore
from kafka_segments.tables import CatalogSettings, json_values, open_catalog, sync_tables
from kafka_segments.tables.json_values import table_fields
from kafka_segments.tables.schema import iceberg_schema
from kafka_segments.topic_partition import TopicPartition
from kit import T0, FakeClock
from lake.read_helpers import PartitionSpec, Seg, commit_lake

pytestmark = pytest.mark.lake

EVENTS = TopicPartition("events", 0)
FIRST: list[bytes | None] = [
    b'{"id": 1, "price": 2.5, "ok": true, "name": "a", "tags": [1, "x"], "meta": {"deep": {"n": 1}}}',
    b'{"id": 2, "price": 3, "ok": false}',  # no name; an int in a double field
    b"not json",
    None,  # a tombstone
    b"[1, 2]",  # JSON, no object
    b'{"id": -9223372036854775808, "name": "\\u00e9\\n", "price": null}',
]
SECOND: list[bytes | None] = [
    b'{"id": 3, "name": "c", "extra": 7}',  # a new field
    b'{"id": "four", "price": 1.5, "ok": true}',  # id conflicts: null, counted
]
CONFLICTS = {(7, "id")}
FIELDS_AFTER_FIRST = {
    "id": "long",
    "price": "double",
    "ok": "boolean",
    "name": "string",
    "tags": "string",
    "meta": "string",
}


def _config(extra: str = "") -> Any:
    text = f"""
topics:
  events:
    cleanup.policy: [delete, compact]
    kafka_segments.table.enable: true
{extra}"""
    return parse_config(text, source="test")


JSON = "    kafka_segments.table.value.format: json\n"


def _segment(values: list[bytes | None], base: int) -> Seg:
    records = [Record(base + i, T0 + i, f"k{base + i}".encode(), value) for i, value in enumerate(values)]
    return Seg.of(write_segment([build_batch(records, base_offset=base)], base_offset=base))


def _commit(store: ObjectStore, segments: list[Seg], clock: FakeClock) -> None:
    commit_lake(store, {EVENTS: PartitionSpec(segments)}, clock=clock)


def _table(store: ObjectStore, name: str) -> Any:
    return open_catalog(store, CatalogSettings()).load_table(("kafka_segments", name))


def _rows(table: Any) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = table.scan().to_arrow().sort_by("offset").to_pylist()
    return rows


def _object(value: bytes | None) -> dict[str, Any] | None:
    try:
        parsed = None if value is None else json.loads(value)
    except ValueError:
        return None
    return parsed if isinstance(parsed, dict) else None


def _check_typed(rows: list[dict[str, Any]], fields: dict[str, str]) -> None:
    """``value_json`` is ``json.loads`` of the raw value, field by field (nested: its JSON text)."""
    for row in rows:
        parsed, typed = _object(row["value"]), row["value_json"]
        if parsed is None:
            assert typed is None, row
            continue
        assert set(typed) == set(fields), row
        for name, kind in fields.items():
            want, got = parsed.get(name), typed[name]
            if (row["offset"], name) in CONFLICTS:
                assert got is None, row
            elif isinstance(want, dict | list):
                assert json.loads(got) == want, row
            else:
                expected = float(want) if kind == "double" and want is not None else want
                assert got == expected, row
                assert type(got) is type(expected), row


def test_json_values_are_typed_and_the_schema_evolves(tmp_path: Path) -> None:
    store, clock = LocalStore(tmp_path / "lake"), FakeClock()
    config = _config(JSON)
    _commit(store, [_segment(FIRST, 0)], clock)
    report = sync_tables(store, config=config)
    table = _table(store, "events")
    assert table_fields(table) == FIELDS_AFTER_FIRST
    first_schema_ids = {f.name: f.field_id for f in table.schema().find_field("value_json").field_type.fields}
    _check_typed(_rows(table), FIELDS_AFTER_FIRST)
    assert not any("conflicts" in line for line in report.lines())

    _commit(store, [_segment(FIRST, 0), _segment(SECOND, len(FIRST))], clock)
    report = sync_tables(store, config=config)
    table = _table(store, "events")
    fields = {**FIELDS_AFTER_FIRST, "extra": "long"}
    assert table_fields(table) == fields  # added, none dropped or retyped, ids kept
    struct = table.schema().find_field("value_json").field_type
    assert {f.name: f.field_id for f in struct.fields if f.name != "extra"} == first_schema_ids
    rows = _rows(table)
    assert [row["value"] for row in rows] == FIRST + SECOND  # the raw column stays
    _check_typed(rows, fields)
    assert rows[0]["value_json"]["extra"] is None  # a file written before the field existed
    assert "events: 1 JSON field value(s) null: their type conflicts with the field's" in report.lines()
    [events, _] = report.to_json()["tables"]
    assert events["versions"][0]["json_conflicts"] == 1

    latest = _table(store, "events_latest")
    assert table_fields(latest) == fields
    _check_typed(_rows(latest), fields)


CLEAN: list[bytes | None] = [
    b'{"id": 1, "price": 2.5, "ok": true, "name": "a\\u00e9"}',
    None,
    b'{"id": 2, "price": null, "ok": false, "new": "n"}',
    b'{"id": -3, "name": "", "price": 1e3}',
]


def test_a_batch_of_plain_objects_is_read_by_pyarrows_json_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = LocalStore(tmp_path / "lake")
    one_by_one = 0
    decode_each = json_values._decode_each

    def counted(column: Any) -> Any:
        nonlocal one_by_one
        one_by_one += 1
        return decode_each(column)

    monkeypatch.setattr(json_values, "_decode_each", counted)
    _commit(store, [_segment(CLEAN, 0)], FakeClock())
    report = sync_tables(store, config=_config(JSON))
    fields = {"id": "long", "price": "double", "ok": "boolean", "name": "string", "new": "string"}
    table = _table(store, "events")
    assert table_fields(table) == fields
    _check_typed(_rows(table), fields)
    assert one_by_one == 0
    assert not any("conflicts" in line for line in report.lines())


def test_a_given_schema_is_the_columns(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    schema = '    kafka_segments.table.value.schema: \'{"id": "long", "name": "string"}\'\n'
    _commit(store, [_segment(FIRST + SECOND, 0)], FakeClock())
    sync_tables(store, config=_config(JSON + schema))
    table = _table(store, "events")
    assert table_fields(table) == {"id": "long", "name": "string"}
    _check_typed(_rows(table), {"id": "long", "name": "string"})


def test_off_the_table_is_unchanged(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    _commit(store, [_segment(FIRST, 0)], FakeClock())
    sync_tables(store, config=_config())
    for name in ("events", "events_latest"):
        table = _table(store, name)
        assert table.schema() == iceberg_schema()
        assert "value_json" not in table.scan().to_arrow().column_names


@pytest.mark.parametrize(
    ("value", "rule"),
    [
        ('\'{"id": "int"}\'', "field 'id': the type must be one of long, double, boolean, string"),
        ("'[1]'", "Value must be a JSON object"),
        ("'{'", "Value must be a JSON object (field name -> type): Expecting"),
    ],
)
def test_a_malformed_schema_is_a_config_error(value: str, rule: str) -> None:
    with pytest.raises(ConfigError) as raised:
        _config(JSON + f"    kafka_segments.table.value.schema: {value}\n")
    message = str(raised.value)
    assert "kafka_segments.table.value.schema" in message
    assert rule in message
