"""The consumer-offset snapshot JSON contract: the documented example parses field by field and re-encodes
canonically, random snapshots round-trip, and every strictness rule refuses naming the field path."""

from __future__ import annotations

import copy
import json
import pickle
import string
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.errors import LocatedError
from kafka_segments.offsets.snapshot_codec import (
    canonical_snapshot,
    load_snapshot_file,
    snapshot_from_json,
    snapshot_to_json,
)
from kafka_segments.offsets.snapshot_fields import SnapshotFormatError, UnsupportedSnapshotVersionError
from kafka_segments.state import (
    GROUP_STATES,
    CommittedOffset,
    GroupError,
    GroupOffsets,
    GroupType,
    OffsetSnapshot,
)

pytestmark = pytest.mark.unit

INT32_MAX = 2**31 - 1
INT64_MAX = 2**63 - 1

# The example of the snapshot contract, verbatim.
CONTRACT_EXAMPLE = b"""{
  "format_version": 1,
  "taken_at_ms": 1763700000000,
  "source": "file",
  "groups": [
    {
      "group_id": "billing",
      "state": "Stable",
      "protocol_type": "consumer",
      "state_timestamp_ms": 1763690000000,
      "subscribed_topics": ["clickstream"],
      "offsets": [
        {"topic": "clickstream", "partition": 0, "offset": 1200,
         "commit_timestamp_ms": 1763699000000, "expire_timestamp_ms": null}
      ]
    }
  ],
  "errors": [{"group_id": "fraud", "error": "COORDINATOR_NOT_AVAILABLE"}]
}
"""

# Its canonical form: the additive group_type is always written, offsets and errors one per line.
CONTRACT_EXAMPLE_CANONICAL = (
    b"{\n"
    b'  "format_version": 1,\n'
    b'  "taken_at_ms": 1763700000000,\n'
    b'  "source": "file",\n'
    b'  "groups": [\n'
    b"    {\n"
    b'      "group_id": "billing",\n'
    b'      "state": "Stable",\n'
    b'      "protocol_type": "consumer",\n'
    b'      "state_timestamp_ms": 1763690000000,\n'
    b'      "subscribed_topics": ["clickstream"],\n'
    b'      "offsets": [\n'
    b'        {"topic": "clickstream", "partition": 0, "offset": 1200, '
    b'"commit_timestamp_ms": 1763699000000, "expire_timestamp_ms": null}\n'
    b"      ],\n"
    b'      "group_type": "classic"\n'
    b"    }\n"
    b"  ],\n"
    b'  "errors": [\n'
    b'    {"group_id": "fraud", "error": "COORDINATOR_NOT_AVAILABLE"}\n'
    b"  ]\n"
    b"}\n"
)


def test_the_contract_example_parses_field_by_field() -> None:
    snapshot = snapshot_from_json(CONTRACT_EXAMPLE, location="example.json")

    assert snapshot.format_version == 1
    assert snapshot.taken_at_ms == 1763700000000
    assert snapshot.source == "file"
    assert snapshot.errors == (GroupError(group_id="fraud", error="COORDINATOR_NOT_AVAILABLE"),)
    (group,) = snapshot.groups
    assert group.group_id == "billing"
    assert group.state == "Stable"
    assert group.protocol_type == "consumer"
    assert not group.is_standalone
    assert group.state_timestamp_ms == 1763690000000
    assert group.subscribed_topics == ("clickstream",)
    assert group.group_type is GroupType.CLASSIC  # absent: the additive field's default
    assert group.offsets == (
        CommittedOffset(
            topic="clickstream",
            partition=0,
            offset=1200,
            commit_timestamp_ms=1763699000000,
            expire_timestamp_ms=None,
            pending_transaction=False,
        ),
    )


def test_the_contract_example_re_encodes_to_its_canonical_form() -> None:
    snapshot = snapshot_from_json(CONTRACT_EXAMPLE, location="example.json")

    encoded = snapshot_to_json(snapshot)

    assert encoded == CONTRACT_EXAMPLE_CANONICAL
    assert snapshot_from_json(encoded, location="again") == snapshot


def test_a_snapshot_without_groups_keeps_the_document_layout() -> None:
    snapshot = OffsetSnapshot(taken_at_ms=0, source="lake", groups=())

    assert snapshot_to_json(snapshot) == (
        b'{\n  "format_version": 1,\n  "taken_at_ms": 0,\n  "source": "lake",\n'
        b'  "groups": [],\n  "errors": []\n}\n'
    )


def test_pending_transaction_is_written_only_when_true() -> None:
    offsets = (
        CommittedOffset("t", 1, 5, pending_transaction=True),
        CommittedOffset("t", 0, 7),
    )
    group = GroupOffsets("g", "Empty", "", None, None, offsets, group_type=GroupType.CONSUMER)
    snapshot = OffsetSnapshot(taken_at_ms=0, source="lake", groups=(group,))

    document = json.loads(snapshot_to_json(snapshot))

    written = document["groups"][0]["offsets"]
    assert [o["partition"] for o in written] == [0, 1]  # sorted by (topic, partition)
    assert "pending_transaction" not in written[0]
    assert written[1]["pending_transaction"] is True
    assert document["groups"][0]["group_type"] == "consumer"
    assert document["groups"][0]["protocol_type"] == ""


# ---------------------------------------------------------------------------------------------- properties

topic_names = st.text(alphabet=string.ascii_letters + string.digits + "._-", min_size=1, max_size=20).filter(
    lambda topic: topic not in {".", ".."}
)
timestamps = st.none() | st.integers(0, INT64_MAX)

committed_offsets = st.builds(
    CommittedOffset,
    topic=topic_names,
    partition=st.integers(0, INT32_MAX),
    offset=st.integers(0, INT64_MAX),
    commit_timestamp_ms=timestamps,
    expire_timestamp_ms=timestamps,
    pending_transaction=st.booleans(),
)

group_offsets = st.builds(
    GroupOffsets,
    group_id=st.text(max_size=12),  # any Unicode, also empty (Kafka accepts "" for offset commits)
    state=st.sampled_from(GROUP_STATES),
    protocol_type=st.none() | st.sampled_from(["", "consumer", "connect"]) | st.text(max_size=8),
    state_timestamp_ms=timestamps,
    subscribed_topics=st.none() | st.lists(topic_names, unique=True, max_size=4).map(tuple),
    offsets=st.lists(committed_offsets, unique_by=lambda o: (o.topic, o.partition), max_size=5).map(tuple),
    group_type=st.sampled_from(GroupType),
)

offset_snapshots = st.builds(
    OffsetSnapshot,
    taken_at_ms=st.integers(0, INT64_MAX),
    source=st.sampled_from(["file", "lake", "kafka://broker:9092"]) | st.text(min_size=1, max_size=12),
    groups=st.lists(group_offsets, unique_by=lambda g: g.group_id, max_size=4).map(tuple),
    errors=st.lists(
        st.builds(GroupError, group_id=st.text(max_size=8), error=st.text(min_size=1, max_size=12)),
        unique_by=lambda e: e.group_id,
        max_size=3,
    ).map(tuple),
)
"""Random valid snapshots, in any order (the codec sorts)."""


@given(offset_snapshots)
def test_snapshots_round_trip_through_the_canonical_json(snapshot: OffsetSnapshot) -> None:
    encoded = snapshot_to_json(snapshot)

    decoded = snapshot_from_json(encoded, location="round-trip")

    assert decoded == canonical_snapshot(snapshot)
    assert snapshot_to_json(decoded) == encoded
    assert encoded.endswith(b"\n")
    encoded.decode("utf-8")


@given(offset_snapshots, st.randoms())
def test_the_encoding_does_not_depend_on_the_order_of_groups_offsets_and_errors(
    snapshot: OffsetSnapshot, random: Any
) -> None:
    groups = list(snapshot.groups)
    random.shuffle(groups)
    shuffled_groups = []
    for group in groups:
        offsets = list(group.offsets)
        random.shuffle(offsets)
        topics = (
            None
            if group.subscribed_topics is None
            else tuple(random.sample(group.subscribed_topics, k=len(group.subscribed_topics)))
        )
        shuffled_groups.append(
            GroupOffsets(
                group.group_id,
                group.state,
                group.protocol_type,
                group.state_timestamp_ms,
                topics,
                tuple(offsets),
                group.group_type,
            )
        )
    errors = list(snapshot.errors)
    random.shuffle(errors)
    shuffled = OffsetSnapshot(snapshot.taken_at_ms, snapshot.source, tuple(shuffled_groups), tuple(errors))

    assert snapshot_to_json(shuffled) == snapshot_to_json(snapshot)


@given(offset_snapshots, st.data())
def test_any_change_to_a_valid_document_parses_or_is_refused_as_a_format_error(
    snapshot: OffsetSnapshot, data: st.DataObject
) -> None:
    encoded = bytearray(snapshot_to_json(snapshot))
    for _ in range(data.draw(st.integers(1, 3))):
        position = data.draw(st.integers(0, len(encoded) - 1))
        encoded[position] = data.draw(st.integers(0, 255))
    try:
        snapshot_from_json(bytes(encoded), location="mutated")
    except SnapshotFormatError as exc:
        location = exc.location
    else:
        location = "mutated"
    assert location == "mutated"


# ---------------------------------------------------------------------------------------------- refusals


def base_document() -> dict[str, Any]:
    """Two groups, so paths name the second one (``groups[1]``)."""
    document = json.loads(CONTRACT_EXAMPLE)
    document["groups"].append(
        {
            "group_id": "audit",
            "state": "Empty",
            "protocol_type": None,
            "state_timestamp_ms": None,
            "subscribed_topics": None,
            "offsets": [
                {
                    "topic": "orders",
                    "partition": 3,
                    "offset": 17,
                    "commit_timestamp_ms": None,
                    "expire_timestamp_ms": 1763800000000,
                    "pending_transaction": True,
                }
            ],
            "group_type": "consumer",
        }
    )
    return document


def at(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set (or with ``DELETE``, remove) the field at a dotted path like ``groups.1.offsets.0.offset``."""

    def change(document: dict[str, Any]) -> None:
        *parents, last = path.split(".")
        target: Any = document
        for part in parents:
            target = target[int(part)] if isinstance(target, list) else target[part]
        key: Any = int(last) if isinstance(target, list) else last
        if value is DELETE:
            del target[key]
        else:
            target[key] = value

    return change


DELETE = object()
OFFSET = "groups.1.offsets.0"
AT_OFFSET = "groups[1].offsets[0]"

REFUSALS = [
    # (rule, change, field path, message fragment)
    ("format_version is required", at("format_version", DELETE), "format_version", "missing"),
    ("format_version is an integer", at("format_version", "1"), "format_version", 'found "1"'),
    ("taken_at_ms is an integer, not a bool", at("taken_at_ms", True), "taken_at_ms", "found true"),
    ("taken_at_ms is an integer, not a float", at("taken_at_ms", 1.5), "taken_at_ms", "found 1.5"),
    ("taken_at_ms is not negative", at("taken_at_ms", -1), "taken_at_ms", "-1 is negative"),
    ("taken_at_ms fits an int64", at("taken_at_ms", 2**63), "taken_at_ms", "is above"),
    ("source is required", at("source", DELETE), "source", "missing"),
    ("source is not empty", at("source", ""), "source", "must not be empty"),
    ("groups is a list", at("groups", {}), "groups", "expected a list"),
    ("errors is required", at("errors", DELETE), "errors", "missing"),
    ("a group is an object", at("groups.1", "audit"), "groups[1]", "expected a JSON object"),
    ("group_id is required", at("groups.1.group_id", DELETE), "groups[1].group_id", "missing"),
    ("group_id is a string", at("groups.1.group_id", 7), "groups[1].group_id", "expected a string"),
    ("state is a Kafka group state", at("groups.1.state", "Rebalancing"), "groups[1].state", "not a Kafka"),
    ("state is required", at("groups.1.state", DELETE), "groups[1].state", "missing"),
    (
        "protocol_type is a string or null",
        at("groups.1.protocol_type", 0),
        "groups[1].protocol_type",
        "string",
    ),
    ("protocol_type is present", at("groups.1.protocol_type", DELETE), "groups[1].protocol_type", "missing"),
    (
        "state_timestamp_ms is present even when null",
        at("groups.1.state_timestamp_ms", DELETE),
        "groups[1].state_timestamp_ms",
        "missing",
    ),
    (
        "state_timestamp_ms is not Kafka's -1",
        at("groups.1.state_timestamp_ms", -1),
        "groups[1].state_timestamp_ms",
        "written as null",
    ),
    (
        "subscribed_topics is a list or null",
        at("groups.1.subscribed_topics", "orders"),
        "groups[1].subscribed_topics",
        "expected a list",
    ),
    (
        "subscribed topics are legal topic names",
        at("groups.1.subscribed_topics", ["orders", ".."]),
        "groups[1].subscribed_topics[1]",
        "cannot be",
    ),
    (
        "subscribed topics are not listed twice",
        at("groups.1.subscribed_topics", ["orders", "orders"]),
        "groups[1].subscribed_topics[1]",
        "already listed at groups[1].subscribed_topics[0]",
    ),
    ("offsets is required", at("groups.1.offsets", DELETE), "groups[1].offsets", "missing"),
    (
        "group_type is classic or consumer",
        at("groups.1.group_type", "share"),
        "groups[1].group_type",
        "share",
    ),
    ("group_type is a string", at("groups.1.group_type", None), "groups[1].group_type", "expected a string"),
    ("topic is a legal topic name", at(f"{OFFSET}.topic", "bad topic"), f"{AT_OFFSET}.topic", "illegal"),
    ("topic is not empty", at(f"{OFFSET}.topic", ""), f"{AT_OFFSET}.topic", "can't be empty"),
    (
        "topic is at most 249 characters",
        at(f"{OFFSET}.topic", "t" * 250),
        f"{AT_OFFSET}.topic",
        "longer than 249",
    ),
    ("partition is not negative", at(f"{OFFSET}.partition", -1), f"{AT_OFFSET}.partition", "-1 is negative"),
    (
        "partition fits an int32",
        at(f"{OFFSET}.partition", 2**31),
        f"{AT_OFFSET}.partition",
        "above 2147483647",
    ),
    ("partition is not a bool", at(f"{OFFSET}.partition", False), f"{AT_OFFSET}.partition", "found false"),
    ("offset is not negative", at(f"{OFFSET}.offset", -5), f"{AT_OFFSET}.offset", "-5 is negative"),
    ("offset fits an int64", at(f"{OFFSET}.offset", 2**63), f"{AT_OFFSET}.offset", "is above"),
    ("offset is required", at(f"{OFFSET}.offset", DELETE), f"{AT_OFFSET}.offset", "missing"),
    (
        "commit_timestamp_ms is an integer or null",
        at(f"{OFFSET}.commit_timestamp_ms", "yesterday"),
        f"{AT_OFFSET}.commit_timestamp_ms",
        "expected an integer",
    ),
    (
        "expire_timestamp_ms is present even when null",
        at(f"{OFFSET}.expire_timestamp_ms", DELETE),
        f"{AT_OFFSET}.expire_timestamp_ms",
        "missing",
    ),
    (
        "expire_timestamp_ms is not negative",
        at(f"{OFFSET}.expire_timestamp_ms", -1),
        f"{AT_OFFSET}.expire_timestamp_ms",
        "-1 is negative",
    ),
    (
        "pending_transaction is a boolean",
        at(f"{OFFSET}.pending_transaction", 1),
        f"{AT_OFFSET}.pending_transaction",
        "expected true or false",
    ),
    ("an error names its group", at("errors.0.group_id", DELETE), "errors[0].group_id", "missing"),
    ("an error says what it is", at("errors.0.error", ""), "errors[0].error", "must not be empty"),
]


@pytest.mark.parametrize(
    ("change", "field", "fragment"), [r[1:] for r in REFUSALS], ids=[r[0] for r in REFUSALS]
)
def test_a_document_breaking_a_rule_is_refused_naming_the_field(
    change: Callable[[dict[str, Any]], None], field: str, fragment: str
) -> None:
    document = base_document()
    snapshot_from_json(json.dumps(document).encode(), location="s3://lake/snap.json")  # valid before
    change(document)

    with pytest.raises(SnapshotFormatError) as refused:
        snapshot_from_json(json.dumps(document).encode(), location="s3://lake/snap.json")

    assert refused.value.field == field
    assert refused.value.location == "s3://lake/snap.json"
    assert str(refused.value).startswith(f"s3://lake/snap.json: {field}: ")
    assert fragment in str(refused.value)


def test_the_documented_message_for_a_negative_offset() -> None:
    document = base_document()
    document["groups"][1]["offsets"][0]["offset"] = -5

    with pytest.raises(
        SnapshotFormatError, match=r"^f\.json: groups\[1\]\.offsets\[0\]\.offset: -5 is negative$"
    ):
        snapshot_from_json(json.dumps(document).encode(), location="f.json")


def test_an_unknown_format_version_is_refused_as_unsupported() -> None:
    document = base_document()
    document["format_version"] = 2

    with pytest.raises(UnsupportedSnapshotVersionError, match="format_version: 2 is not supported"):
        snapshot_from_json(json.dumps(document).encode(), location="f.json")


def test_a_group_id_listed_twice_is_refused() -> None:
    document = base_document()
    document["groups"][1]["group_id"] = "billing"

    with pytest.raises(
        SnapshotFormatError, match=r"groups\[1\]\.group_id: group id \"billing\" is already listed"
    ):
        snapshot_from_json(json.dumps(document).encode(), location="f.json")


def test_an_error_for_a_group_listed_twice_is_refused() -> None:
    document = base_document()
    document["errors"].append({"group_id": "fraud", "error": "NOT_COORDINATOR"})

    with pytest.raises(SnapshotFormatError, match=r"errors\[1\]\.group_id: group id \"fraud\" is already"):
        snapshot_from_json(json.dumps(document).encode(), location="f.json")


def test_a_partition_listed_twice_in_a_group_is_refused() -> None:
    document = base_document()
    second = copy.deepcopy(document["groups"][1]["offsets"][0])
    second["offset"] = 99
    document["groups"][1]["offsets"].append(second)

    with pytest.raises(
        SnapshotFormatError, match=r"groups\[1\]\.offsets\[1\]: partition orders-3 is already"
    ):
        snapshot_from_json(json.dumps(document).encode(), location="f.json")


def test_the_same_partition_in_two_groups_is_fine() -> None:
    document = base_document()
    document["groups"][0]["offsets"].append(copy.deepcopy(document["groups"][1]["offsets"][0]))

    snapshot = snapshot_from_json(json.dumps(document).encode(), location="f.json")

    assert [len(group.offsets) for group in snapshot.groups] == [1, 2]  # audit, billing


def test_a_key_repeated_in_one_object_is_refused_with_its_path() -> None:
    text = json.dumps(base_document()).replace('"offset": 17,', '"offset": 17, "offset": 18,')

    with pytest.raises(SnapshotFormatError, match=r"groups\[1\]\.offsets\[0\]: key 'offset' appears more"):
        snapshot_from_json(text.encode(), location="f.json")


@pytest.mark.parametrize(
    ("data", "fragment"),
    [
        (b"", "not valid JSON (line 1 column 1"),
        (b"{", "not valid JSON"),
        (b"\xff\xfe{}", "not UTF-8 (byte 0)"),
        (b"[]", "expected a JSON object, found []"),
        (b'{"format_version": NaN}', "expected an integer, found NaN"),
        (b'{"format_version": ' + b"9" * 5000 + b"}", "not usable JSON"),
        (b"[" * 100_000, "not usable JSON"),
    ],
    ids=["empty", "truncated", "not-utf8", "not-an-object", "nan", "huge-integer", "deep-nesting"],
)
def test_a_document_that_is_not_json_is_refused_naming_the_location(data: bytes, fragment: str) -> None:
    with pytest.raises(SnapshotFormatError) as refused:
        snapshot_from_json(data, location="in.json")

    assert refused.value.location == "in.json"
    assert fragment in str(refused.value)


def test_unknown_fields_at_every_level_are_ignored() -> None:
    document = base_document()
    document["written_by"] = "a later release"
    document["groups"][0]["members"] = [{"member_id": "m-1"}]
    document["groups"][0]["offsets"][0]["leader_epoch"] = 4
    document["errors"][0]["retriable"] = True

    extended = snapshot_from_json(json.dumps(document).encode(), location="f.json")

    assert extended == snapshot_from_json(json.dumps(base_document()).encode(), location="f.json")


def test_reading_gives_canonical_order_whatever_the_document_order() -> None:
    document = base_document()
    document["groups"][0]["subscribed_topics"] = ["zeta", "alpha"]
    document["groups"][0]["offsets"].insert(0, {**document["groups"][0]["offsets"][0], "partition": 9})

    snapshot = snapshot_from_json(json.dumps(document).encode(), location="f.json")

    assert [group.group_id for group in snapshot.groups] == ["audit", "billing"]
    billing = snapshot.group("billing")
    assert billing is not None
    assert billing.subscribed_topics == ("alpha", "zeta")
    assert [offset.partition for offset in billing.offsets] == [0, 9]


def test_an_empty_group_id_is_a_group_like_any_other() -> None:
    """Kafka accepts offset commits for the empty group id (backwards compatibility)."""
    document = base_document()
    document["groups"][1]["group_id"] = ""

    snapshot = snapshot_from_json(json.dumps(document).encode(), location="f.json")

    assert snapshot.group("") is not None


def test_a_string_that_is_not_unicode_cannot_be_written() -> None:
    group = GroupOffsets("\ud800", "Empty", None, None, None, ())

    with pytest.raises(SnapshotFormatError, match="not valid Unicode"):
        snapshot_to_json(OffsetSnapshot(taken_at_ms=0, source="file", groups=(group,)))


def test_the_format_error_is_located_and_survives_pickling() -> None:
    error = SnapshotFormatError("-5 is negative", location="f.json", field="groups[0].offsets[0].offset")

    restored = pickle.loads(pickle.dumps(error))

    assert isinstance(restored, LocatedError)
    assert (restored.field, restored.location, str(restored)) == (error.field, error.location, str(error))


# ---------------------------------------------------------------------------------------------- files


def test_a_snapshot_file_is_read(tmp_path: Path) -> None:
    path = tmp_path / "offsets.json"
    path.write_bytes(CONTRACT_EXAMPLE)

    assert load_snapshot_file(path) == snapshot_from_json(CONTRACT_EXAMPLE, location="x")
    assert load_snapshot_file(str(path)).source == "file"


@pytest.mark.parametrize(
    ("make", "fragment"),
    [
        (lambda p: None, "cannot read the snapshot file: No such file or directory"),
        (lambda p: p.mkdir(), "cannot read the snapshot file"),
        (lambda p: p.write_text("offsets: yaml?\n"), "not valid JSON"),
        (lambda p: p.write_text('{"format_version": 1}'), "taken_at_ms: missing"),
    ],
    ids=["missing", "directory", "not-json", "incomplete"],
)
def test_a_bad_snapshot_file_is_refused_naming_its_path(
    tmp_path: Path, make: Callable[[Path], object], fragment: str
) -> None:
    path = tmp_path / "offsets.json"
    make(path)

    with pytest.raises(SnapshotFormatError) as refused:
        load_snapshot_file(path)

    assert refused.value.location == str(path)
    assert str(refused.value).startswith(str(path))
    assert fragment in str(refused.value)
