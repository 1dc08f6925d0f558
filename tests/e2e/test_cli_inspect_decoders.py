"""``inspect --offsets-decoder`` / ``--transaction-log-decoder``: ``__consumer_offsets`` and
``__transaction_state`` records printed as ``kafka-dump-log.sh`` prints them.

The records are written with Kafka's schemas by the test-side encoder (``unit.coordinator_records``, which
shares no code with the library's decoder). The expected lines are Kafka's: the group metadata line is one
``kafka-dump-log.sh --offsets-decoder`` printed for a console consumer's group (the same key and value sizes
prove the bytes are the broker's), the others follow ``DumpLogSegments.CoordinatorRecordMessageParser`` and
the generated JSON converters (fields in schema order, tagged fields only when not their default)."""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest
from e2e.test_cli import cli
from unit.coordinator_records import (
    GROUP_KEY,
    CoordinatorLog,
    Schema,
    _f,
    consumer_group_metadata,
    consumer_subscription,
    current_member_assignment,
    encode_key,
    encode_value,
    group_metadata_key,
    group_metadata_value,
    member,
    offset_commit_key,
    offset_commit_value,
)
from unit.coordinator_records_groups import RECORDS, SHARE_PARTITION_KEY, SHARE_STATE_RECORDS

pytestmark = pytest.mark.e2e

T = 1_785_773_250_466
MEMBER = "console-consumer-e33d37af-ded5-41c1-aeb3-05d12b5df4bf"
CONSUMER_PROTOCOL_ASSIGNMENT: Schema = {
    "validVersions": "0-3",
    "flexibleVersions": "none",
    "fields": [
        _f(
            "AssignedPartitions",
            "[]TopicPartition",
            fields=[_f("Topic", "string"), _f("Partitions", "[]int32")],
        ),
        _f("UserData", "bytes", nullableVersions="0+", default=None),
    ],
}
TRANSACTION_LOG_KEY: Schema = {"flexibleVersions": "none", "fields": [_f("TransactionalId", "string", "0")]}
PARTITIONS_SCHEMA = [_f("Topic", "string"), _f("PartitionIds", "[]int32")]
TRANSACTION_LOG_VALUE: Schema = {
    "validVersions": "0-1",
    "flexibleVersions": "1+",
    "fields": [
        _f("ProducerId", "int64"),
        _f("PreviousProducerId", "int64", "1+", taggedVersions="1+", tag=0, default=-1),
        _f("NextProducerId", "int64", "1+", taggedVersions="1+", tag=1, default=-1),
        _f("ProducerEpoch", "int16"),
        _f("TransactionTimeoutMs", "int32"),
        _f("TransactionStatus", "int8"),
        _f("TransactionPartitions", "[]PartitionsSchema", nullableVersions="0+", fields=PARTITIONS_SCHEMA),
        _f("TransactionLastUpdateTimestampMs", "int64"),
        _f("TransactionStartTimestampMs", "int64"),
        _f("ClientTransactionVersion", "int16", "1+", taggedVersions="1+", tag=2, default=0),
    ],
}
GROUP_LINE = (
    "| offset: 0 CreateTime: 1785773250466 keySize: 11 valueSize: 247 sequence: -1 headerKeys: [] "
    'key: {"type":"2","data":{"group":"group01"}} payload: {"version":"3","data":{"protocolType":"consumer",'
    f'"generation":1,"protocol":"range","leader":"{MEMBER}","currentStateTimestamp":1785773250437,'
    f'"members":[{{"memberId":"{MEMBER}","groupInstanceId":null,"clientId":"console-consumer",'
    '"clientHost":"/127.0.0.1","rebalanceTimeout":300000,"sessionTimeout":45000,"subscription":{"topics":'
    '["test"],"userData":null,"ownedPartitions":[],"generationId":-1,"rackId":null},"assignment":'
    '{"assignedPartitions":[{"topic":"test","partitions":[0,1]}],"userData":null}}]}}'
)


def _records(path: Path, *args: str) -> list[str]:
    result = cli("inspect", *args, str(path))
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if line.startswith("|")]


def _console_consumer_group() -> tuple[bytes, bytes]:
    subscription = consumer_subscription(["test"], version=3)
    assignment = encode_value(
        CONSUMER_PROTOCOL_ASSIGNMENT,
        {"AssignedPartitions": [{"Topic": "test", "Partitions": [0, 1]}]},
        version=3,
    )
    value = group_metadata_value(
        leader=MEMBER,
        current_state_timestamp=1_785_773_250_437,
        members=[
            member(
                MEMBER,
                subscription=subscription,
                assignment=assignment,
                client_id="console-consumer",
                client_host="/127.0.0.1",
            )
        ],
    )
    return group_metadata_key("group01"), value


def test_offsets_decoder_prints_group_metadata_and_commits_as_kafka_dump_log(tmp_path: Path) -> None:
    log = CoordinatorLog(timestamp=T)
    log.append(_console_consumer_group())
    log.append(
        (offset_commit_key("group01", "test", 0), offset_commit_value(5, leader_epoch=0, commit_timestamp=T)),
        (
            offset_commit_key("g", "t", 1),
            offset_commit_value(7, version=1, metadata="m", commit_timestamp=T, expire_timestamp=T + 1),
        ),
        (offset_commit_key("g", "t", 2), None),
    )
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log.data())

    lines = _records(path, "--offsets-decoder")

    assert lines[0] == GROUP_LINE
    assert lines[1].endswith(
        'key: {"type":"1","data":{"group":"group01","topic":"test","partition":0}} '
        'payload: {"version":"3","data":{"offset":5,"leaderEpoch":0,"metadata":"",'
        '"commitTimestamp":1785773250466}}'
    )
    assert lines[2].endswith(
        'key: {"type":"1","data":{"group":"g","topic":"t","partition":1}} payload: {"version":"1","data":'
        '{"offset":7,"metadata":"m","commitTimestamp":1785773250466,"expireTimestamp":1785773250467}}'
    )
    assert lines[3].endswith(
        'key: {"type":"1","data":{"group":"g","topic":"t","partition":2}} payload: <DELETE>'
    )


def test_offsets_decoder_skips_unknown_types_and_damage_like_kafka(tmp_path: Path) -> None:
    log = CoordinatorLog(timestamp=T)
    log.append(
        (struct.pack(">h", 99) + b"x", b"\x00\x00"),
        (offset_commit_key("g", "t", 0), struct.pack(">h", 9) + bytes(20)),
    )
    log.marker(7, commit=True)
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log.data())

    lines = _records(path, "--offsets-decoder")

    assert lines[0].endswith("headerKeys: [] key: Unknown record type 99 at offset 0, skipping.")
    assert "key: Error at offset 1, skipping. " in lines[1]
    assert "payload" not in lines[1]
    assert lines[2].endswith("endTxnMarker: COMMIT coordinatorEpoch: 0")


def test_offsets_decoder_keeps_subscription_bytes_that_do_not_decode(tmp_path: Path) -> None:
    log = CoordinatorLog(timestamp=T)
    value = group_metadata_value(members=[member("m", subscription=b"\x00\x07", assignment=b"")])
    log.append((group_metadata_key("g"), value))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log.data())

    (line,) = _records(path, "--offsets-decoder")

    assert '"subscription":"AAc=","assignment":""' in line


def test_offsets_decoder_prints_kip_848_consumer_group_values(tmp_path: Path) -> None:
    log = CoordinatorLog(timestamp=T)
    log.append(
        consumer_group_metadata("g", 5, metadata_hash=3), current_member_assignment("g", "m", member_epoch=5)
    )
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log.data())

    lines = _records(path, "--offsets-decoder")

    assert lines[0].endswith(
        'key: {"type":"3","data":{"groupId":"g"}} '
        'payload: {"version":"0","data":{"epoch":5,"metadataHash":3}}'
    )
    assert lines[1].endswith(
        'key: {"type":"8","data":{"groupId":"g","memberId":"m"}} payload: {"version":"0","data":'
        '{"memberEpoch":5,"previousMemberEpoch":-1,"state":0,"assignedPartitions":[{"topicId":'
        '"AAECAwQFBgcICQoLDA0ODw","partitions":[0,1]}],"partitionsPendingRevocation":[]}}'
    )


def _transaction(transactional_id: str, values: dict[str, object], version: int) -> tuple[bytes, bytes]:
    key = encode_key(0, TRANSACTION_LOG_KEY, {"TransactionalId": transactional_id})
    return key, encode_value(TRANSACTION_LOG_VALUE, values, version=version)


def test_transaction_log_decoder_prints_transaction_state_as_kafka_dump_log(tmp_path: Path) -> None:
    ongoing = {
        "ProducerId": 100,
        "ProducerEpoch": 50,
        "TransactionTimeoutMs": 500,
        "TransactionStatus": 1,
        "TransactionPartitions": [{"Topic": "orders", "PartitionIds": [0, 2]}],
        "TransactionLastUpdateTimestampMs": 1000,
        "TransactionStartTimestampMs": 750,
    }
    empty = {**ongoing, "TransactionStatus": 0, "TransactionPartitions": None}
    log = CoordinatorLog(timestamp=T)
    log.append(
        _transaction("txn-a", ongoing, 0),
        _transaction("txn-b", {**ongoing, "PreviousProducerId": 99, "ClientTransactionVersion": 2}, 1),
        _transaction("txn-c", empty, 1),
        (encode_key(0, TRANSACTION_LOG_KEY, {"TransactionalId": "txn-d"}), None),
    )
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log.data())

    lines = _records(path, "--transaction-log-decoder")

    body = (
        '"producerEpoch":50,"transactionTimeoutMs":500,"transactionStatus":1,"transactionPartitions":'
        '[{"topic":"orders","partitionIds":[0,2]}],"transactionLastUpdateTimestampMs":1000,'
        '"transactionStartTimestampMs":750'
    )
    assert lines[0].endswith(
        f'key: {{"type":"0","data":{{"transactionalId":"txn-a"}}}} '
        f'payload: {{"version":"0","data":{{"producerId":100,{body}}}}}'
    )
    assert lines[1].endswith(
        f'payload: {{"version":"1","data":{{"producerId":100,"previousProducerId":99,{body},'
        '"clientTransactionVersion":2}}'
    )
    assert lines[2].endswith(
        'payload: {"version":"1","data":{"producerId":100,"producerEpoch":50,"transactionTimeoutMs":500,'
        '"transactionStatus":0,"transactionPartitions":null,"transactionLastUpdateTimestampMs":1000,'
        '"transactionStartTimestampMs":750}}'
    )
    assert lines[3].endswith('key: {"type":"0","data":{"transactionalId":"txn-d"}} payload: <DELETE>')


def test_decoders_imply_records_and_add_the_decoded_texts_to_json(tmp_path: Path) -> None:
    log = CoordinatorLog(timestamp=T)
    log.append((offset_commit_key("g", "t", 0), offset_commit_value(5)))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log.data())

    result = cli("inspect", "--json", "--offsets-decoder", str(path))

    (record,) = json.loads(result.stdout)["files"][0]["batches"][0]["records"]
    assert record["decoded"] == {
        "key": '{"type":"1","data":{"group":"g","topic":"t","partition":0}}',
        "payload": '{"version":"3","data":{"offset":5,"leaderEpoch":-1,"metadata":"",'
        '"commitTimestamp":1763700000000}}',
    }
    assert "key_base64" in record
    assert cli("inspect", "--offsets-decoder", "--transaction-log-decoder", str(path)).returncode == 2


def _group_record(record_type: int, key: dict[str, object], value: dict[str, object]) -> tuple[bytes, bytes]:
    key_schema, value_schema = RECORDS[record_type]
    return encode_key(record_type, key_schema, key), encode_value(value_schema, value, version=0)


def test_offsets_decoder_prints_share_and_streams_group_records(tmp_path: Path) -> None:
    log = CoordinatorLog(timestamp=T)
    log.append(
        _group_record(11, {"GroupId": "sg"}, {"Epoch": 2, "MetadataHash": 9}),
        _group_record(20, {"GroupId": "app"}, {"AssignmentEpoch": 4}),
        (encode_key(9, GROUP_KEY, {"GroupId": "sg"}), b"\x00\x00\x00\x00"),
    )
    log.append((encode_key(23, GROUP_KEY, {"GroupId": "app"}), None))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log.data())

    lines = _records(path, "--offsets-decoder")

    assert lines[0].endswith(
        'key: {"type":"11","data":{"groupId":"sg"}} '
        'payload: {"version":"0","data":{"epoch":2,"metadataHash":9}}'
    )
    assert lines[1].endswith(
        'key: {"type":"20","data":{"groupId":"app"}} payload: {"version":"0","data":{"assignmentEpoch":4}}'
    )
    assert lines[2].endswith("key: Unknown record type 9 at offset 2, skipping.")
    assert lines[3].endswith('key: {"type":"23","data":{"groupId":"app"}} payload: <DELETE>')


def _state_record(record_type: int, key: dict[str, object], value: dict[str, object]) -> tuple[bytes, bytes]:
    encoded = encode_value(SHARE_STATE_RECORDS[record_type][1], value, version=0)
    return encode_key(record_type, SHARE_PARTITION_KEY, key), encoded


def test_share_group_state_decoder_prints_share_snapshots_and_updates(tmp_path: Path) -> None:
    key = {"GroupId": "sg", "TopicId": bytes(range(16)), "Partition": 0}
    batch = {"FirstOffset": 0, "LastOffset": 4, "DeliveryState": 2, "DeliveryCount": 1}
    snapshot = {
        "SnapshotEpoch": 0,
        "StateEpoch": 0,
        "LeaderEpoch": 1,
        "StartOffset": 0,
        "CreateTimestamp": T,
        "WriteTimestamp": T,
        "StateBatches": [batch],
    }
    update = {"SnapshotEpoch": 0, "LeaderEpoch": 1, "StartOffset": 5, "StateBatches": []}
    log = CoordinatorLog(timestamp=T)
    log.append(_state_record(0, key, snapshot), _state_record(1, key, update))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(log.data())

    lines = _records(path, "--share-group-state-decoder")

    key_text = '{"groupId":"sg","topicId":"AAECAwQFBgcICQoLDA0ODw","partition":0}'
    assert lines[0].endswith(
        f'key: {{"type":"0","data":{key_text}}} payload: {{"version":"0","data":{{"snapshotEpoch":0,'
        f'"stateEpoch":0,"leaderEpoch":1,"startOffset":0,"createTimestamp":{T},"writeTimestamp":{T},'
        '"stateBatches":[{"firstOffset":0,"lastOffset":4,"deliveryState":2,"deliveryCount":1}]}}'
    )
    assert lines[1].endswith(
        f'key: {{"type":"1","data":{key_text}}} payload: {{"version":"0","data":{{"snapshotEpoch":0,'
        '"leaderEpoch":1,"startOffset":5,"stateBatches":[]}}'
    )
    assert cli("inspect", "--offsets-decoder", "--share-group-state-decoder", str(path)).returncode == 2
