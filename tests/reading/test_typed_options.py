"""``read_lake``'s options given as typed Python values (issue 38, point 6): an ``int`` or a ``bool`` means
its text, as Spark's ``DataFrameReader.option`` takes them (it was an ``AttributeError``); any other type is a
``ReadOptionError`` naming the option."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from kafka_segments.reading import ReadOptionError, arrow_schema, read_lake
from kafka_segments.reading.options import parse_options
from kafka_segments.storage import LocalStore
from kit import FakeClock
from lake.read_helpers import rich_lake

pytestmark = pytest.mark.unit

SUBSCRIBE = {"subscribe": "orders"}


@pytest.mark.parametrize(
    ("typed", "text"),
    [
        ({"versionAsOf": 1}, {"versionAsOf": "1"}),
        ({"maxBytesPerPartition": 1048576}, {"maxBytesPerPartition": "1048576"}),
        ({"includeHeaders": True}, {"includeHeaders": "true"}),
        ({"failOnDataLoss": False}, {"failOnDataLoss": "false"}),
        ({"startingTimestamp": 1_700_000_000_000}, {"startingTimestamp": "1700000000000"}),
        ({"INCLUDEHEADERS": False}, {"includeHeaders": "false"}),
    ],
)
def test_an_int_or_a_bool_means_its_text(typed: dict[str, object], text: dict[str, object]) -> None:
    assert parse_options({**SUBSCRIBE, **typed}) == parse_options({**SUBSCRIBE, **text})


@pytest.mark.parametrize(
    ("typed", "option", "problem"),
    [
        ({"versionAsOf": True}, "versionAsOf", "'true' is not a manifest version"),
        ({"includeHeaders": 1}, "includeHeaders", "'1' is neither true nor false"),
        ({"maxBytesPerPartition": 0}, "maxBytesPerPartition", "'0' is not a positive number of bytes"),
        ({"maxBytesPerPartition": -5}, "maxBytesPerPartition", "'-5' is not a positive number of bytes"),
        ({"maxBytesPerPartition": 1.5}, "maxBytesPerPartition", "1.5 is a float: give a string"),
        ({"versionAsOf": None}, "versionAsOf", "None is a NoneType: give a string"),
        ({"assign": {"orders": [0]}}, "assign", "{'orders': [0]} is a dict: give a string"),
        ({"subscribe": ["orders"]}, "subscribe", "['orders'] is a list: give a string"),
        ({1: "x"}, "1", "an option's name must be a string, not int"),
    ],
)
def test_other_values_are_refused_naming_the_option(
    typed: dict[object, object], option: str, problem: str
) -> None:
    with pytest.raises(ReadOptionError) as refused:
        parse_options({**SUBSCRIBE, **typed})  # type: ignore[dict-item]

    assert refused.value.option == option
    assert problem in refused.value.problem


def test_read_lake_takes_typed_options(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    rich_lake(store, FakeClock())
    typed = {"versionAsOf": 1, "maxBytesPerPartition": 1048576, "includeHeaders": True}
    text = {"versionAsOf": "1", "maxBytesPerPartition": "1048576", "includeHeaders": "true"}
    schema = arrow_schema(include_headers=True)

    rows = pa.Table.from_batches(list(read_lake(store, {**SUBSCRIBE, **typed})), schema=schema)

    assert rows.num_rows > 0
    assert rows.equals(pa.Table.from_batches(list(read_lake(store, {**SUBSCRIBE, **text})), schema=schema))
