"""Coordinator records as ``kafka-dump-log.sh --offsets-decoder`` / ``--transaction-log-decoder`` print
them (``DumpLogSegments.CoordinatorRecordMessageParser``): the key as
``{"type":"<record type>","data":{...}}``, the value as ``{"version":"<version>","data":{...}}``,
``<DELETE>`` for a tombstone, and in place of the key ``Unknown record type N at offset O, skipping.`` or
``Error at offset O, skipping. <why>`` (no value).

``data`` is what the generated ``*JsonConverter.write`` gives: camelCase field names in schema order, fields
outside the version left out, tagged fields only when not their default, bytes in base64, compact JSON. A
classic group of protocol type ``consumer`` shows each member's ``subscription`` and ``assignment`` decoded
(``ConsumerProtocolSubscription`` / ``ConsumerProtocolAssignment``), their bytes kept if they do not decode.

Schemas: ``group-coordinator/src/main/resources/common/message/{OffsetCommit,GroupMetadata}{Key,Value}.json``,
``transaction-coordinator/.../TransactionLog{Key,Value}.json``, ``clients/.../ConsumerProtocol*.json``; the
KIP-848 consumer-group values (types 3-8, 16) are ``coordinator.schema.CONSUMER_GROUP_VALUES`` (a uuid prints
as Kafka's ``Uuid.toString``, URL-safe base64 without padding; a null nullable field as ``null``); the
share-group (10-15) and streams-group (17, 19-23) records are ``coordinator.schema_share.SHARE_GROUP_RECORDS``
and ``coordinator.schema_streams.STREAMS_GROUP_RECORDS``, and ``__share_group_state``'s records
(``--share-group-state-decoder``) ``coordinator.schema_share.SHARE_STATE_RECORDS`` (docs/inspect.md)."""

from __future__ import annotations

import base64
import contextlib
import json
from collections.abc import Callable, Mapping
from typing import Any

from kafka_segments.coordinator.fields import CoordinatorSchemaError, FieldReader
from kafka_segments.coordinator.keys import (
    ConsumerGroupRecordKey,
    GroupMetadataKey,
    OffsetCommitKey,
    UnknownRecordKey,
    decode_key,
)
from kafka_segments.coordinator.schema import (
    CONSUMER_GROUP_VALUES,
    Field,
    RecordSchemas,
    Schema,
    coordinator_key,
    in_versions,
)
from kafka_segments.coordinator.schema_share import SHARE_GROUP_RECORDS, SHARE_STATE_RECORDS
from kafka_segments.coordinator.schema_streams import STREAMS_GROUP_RECORDS

DELETE = "<DELETE>"
_CONSUMER_PROTOCOL_TYPE = "consumer"


_TOPIC_PARTITION = (Field("topic", "string"), Field("partitions", "[]int32"))
SUBSCRIPTION = Schema(
    "ConsumerProtocolSubscription",
    "0-3",
    "none",
    (
        Field("topics", "[]string"),
        Field("userData", "bytes", nullable="0+"),
        Field("ownedPartitions", "[]TopicPartition", "1+", fields=_TOPIC_PARTITION),
        Field("generationId", "int32", "2+"),
        Field("rackId", "string", "3+", nullable="3+"),
    ),
)
ASSIGNMENT = Schema(
    "ConsumerProtocolAssignment",
    "0-3",
    "none",
    (
        Field("assignedPartitions", "[]TopicPartition", fields=_TOPIC_PARTITION),
        Field("userData", "bytes", nullable="0+"),
    ),
)
OFFSET_COMMIT_VALUE = Schema(
    "OffsetCommitValue",
    "0-4",
    "4+",
    (
        Field("offset", "int64"),
        Field("leaderEpoch", "int32", "3+"),
        Field("metadata", "string"),
        Field("commitTimestamp", "int64"),
        Field("expireTimestamp", "int64", "1"),
    ),
)
_MEMBER_METADATA = (
    Field("memberId", "string"),
    Field("groupInstanceId", "string", "3+", nullable="3+"),
    Field("clientId", "string"),
    Field("clientHost", "string"),
    Field("rebalanceTimeout", "int32", "1+"),
    Field("sessionTimeout", "int32"),
    Field("subscription", "bytes"),
    Field("assignment", "bytes"),
)
GROUP_METADATA_VALUE = Schema(
    "GroupMetadataValue",
    "0-4",
    "4+",
    (
        Field("protocolType", "string"),
        Field("generation", "int32"),
        Field("protocol", "string", nullable="0+"),
        Field("leader", "string", nullable="0+"),
        Field("currentStateTimestamp", "int64", "2+"),
        Field("members", "[]MemberMetadata", fields=_MEMBER_METADATA),
    ),
)
TRANSACTION_LOG_VALUE = Schema(
    "TransactionLogValue",
    "0-1",
    "1+",
    (
        Field("producerId", "int64"),
        Field("previousProducerId", "int64", "1+", tag=0, default=-1),
        Field("nextProducerId", "int64", "1+", tag=1, default=-1),
        Field("producerEpoch", "int16"),
        Field("transactionTimeoutMs", "int32"),
        Field("transactionStatus", "int8"),
        Field(
            "transactionPartitions",
            "[]PartitionsSchema",
            nullable="0+",
            fields=(Field("topic", "string"), Field("partitionIds", "[]int32")),
        ),
        Field("transactionLastUpdateTimestampMs", "int64"),
        Field("transactionStartTimestampMs", "int64"),
        Field("clientTransactionVersion", "int16", "1+", tag=2, default=0),
    ),
)
TRANSACTION_LOG_RECORD_TYPE = 0
TRANSACTION_LOG_RECORDS = {
    TRANSACTION_LOG_RECORD_TYPE: RecordSchemas(
        coordinator_key("TransactionLogKey", Field("transactionalId", "string", "0")), TRANSACTION_LOG_VALUE
    )
}
GROUP_RECORDS: dict[int, RecordSchemas] = {**SHARE_GROUP_RECORDS, **STREAMS_GROUP_RECORDS}
"""The ``__consumer_offsets`` record types read from their schemas alone (share and streams groups)."""


# ------------------------------------------------------------------------------------------------ reading


def read_message(data: bytes, schema: Schema) -> tuple[int, dict[str, Any]]:
    """``int16 version`` + the struct at that version, as its JSON converter's fields.

    Raises:
        CoordinatorSchemaError: a version outside ``schema.valid``, or bytes that do not follow the schema.
    """
    reader = FieldReader(bytes(data))
    version = reader.int16(f"{schema.name} version")
    if version < 0 or not in_versions(schema.valid, version):
        raise CoordinatorSchemaError(f"Can't read version {version} of {schema.name}")
    flexible = in_versions(schema.flexible, version)
    return version, read_struct(reader, schema.fields, version=version, flexible=flexible, name=schema.name)


def read_struct(
    reader: FieldReader, fields: tuple[Field, ...], *, version: int, flexible: bool, name: str
) -> dict[str, Any]:
    present = [field for field in fields if in_versions(field.versions, version)]
    values = {f.name: _read(reader, f, version, flexible) for f in present if f.tag is None}
    if flexible:
        tagged = {field.tag: field for field in present if field.tag is not None}
        values.update(_read_tags(reader, tagged, version, name))
    return {field.name: values[field.name] for field in present if field.name in values}


def _read_tags(reader: FieldReader, tagged: dict[int, Field], version: int, name: str) -> dict[str, Any]:
    values: dict[str, Any] = {}
    for _ in range(reader.uvarint(f"{name} tagged field count")):
        tag = reader.uvarint(f"{name} tag")
        size = reader.uvarint(f"{name} tag {tag} size")
        field = tagged.get(tag)
        if size < 0:
            raise CoordinatorSchemaError(f"{name} tag {tag}: negative size {size}")
        if field is None:
            reader.skip(size, f"{name} tag {tag}")
            continue
        value = _read(FieldReader(reader.take(size, field.name)), field, version, True)
        if value != field.default:
            values[field.name] = value
    return values


def _read(reader: FieldReader, field: Field, version: int, flexible: bool) -> Any:
    kind = field.type
    if kind in _FIXED:
        return _FIXED[kind](reader, field.name)
    nullable = in_versions(field.nullable, version)
    if not kind.startswith("[]") and field.fields:
        return _read_nested(reader, field, version=version, flexible=flexible, nullable=nullable)
    if kind in ("string", "bytes"):
        return _read_variable(reader, field, nullable=nullable, flexible=flexible)
    count = reader.nullable_array_length(field.name, flexible=flexible)
    if count is None:
        if not nullable:
            raise CoordinatorSchemaError(f"non-nullable field {field.name} was serialized as null")
        return None
    item = Field(field.name, kind[2:], fields=field.fields)
    if not field.fields:
        return [_read(reader, item, version, flexible) for _ in range(count)]
    return [
        read_struct(reader, field.fields, version=version, flexible=flexible, name=field.name)
        for _ in range(count)
    ]


def _read_nested(
    reader: FieldReader, field: Field, *, version: int, flexible: bool, nullable: bool
) -> dict[str, Any] | None:
    """A struct-typed field. A nullable one is preceded by its presence, as ``MessageDataGenerator`` writes
    and reads it: an int8 (-1 null, 1 present; negative reads as null), but inside a tagged field an unsigned
    varint (the writer writes 1 and leaves out a null tagged struct; zero or less reads as null)."""
    if nullable and _is_null(reader, field):
        return None
    return read_struct(reader, field.fields, version=version, flexible=flexible, name=field.name)


def _is_null(reader: FieldReader, field: Field) -> bool:
    if field.tag is not None:
        return reader.uvarint(f"{field.name} presence") <= 0
    return reader.int8(f"{field.name} presence") < 0


def _read_variable(reader: FieldReader, field: Field, *, nullable: bool, flexible: bool) -> str | None:
    if field.type == "string":
        read_string = reader.nullable_string if nullable else reader.string
        return read_string(field.name, flexible=flexible)
    read_bytes = reader.nullable_bytes if nullable else reader.bytes
    raw = read_bytes(field.name, flexible=flexible)
    return None if raw is None else base64.b64encode(raw).decode("ascii")


def _uuid(reader: FieldReader, name: str) -> str:
    """Kafka's ``Uuid.toString``: the 16 bytes in URL-safe base64 without padding."""
    return base64.urlsafe_b64encode(reader.take(16, name)).rstrip(b"=").decode("ascii")


def _uint16(reader: FieldReader, name: str) -> int:
    return int.from_bytes(reader.take(2, name), "big")


_FIXED: dict[str, Callable[[FieldReader, str], int | str]] = {
    "int8": FieldReader.int8,
    "int16": FieldReader.int16,
    "uint16": _uint16,
    "int32": FieldReader.int32,
    "int64": FieldReader.int64,
    "uuid": _uuid,
}


# ------------------------------------------------------------------------------------------------ parsers


def _compact(document: object) -> str:
    return json.dumps(document, separators=(",", ":"), ensure_ascii=False)


def _key_line(record_type: int, data: dict[str, Any]) -> str:
    return _compact({"type": str(record_type), "data": data})


def _value_line(version: int, data: dict[str, Any]) -> str:
    return _compact({"version": str(version), "data": data})


def _guarded(offset: int, parse: Callable[[], tuple[str, str | None]]) -> tuple[str, str | None]:
    try:
        return parse()
    except _UnknownRecordTypeError as unknown:
        return f"Unknown record type {unknown.record_type} at offset {offset}, skipping.", None
    except CoordinatorSchemaError as error:
        return f"Error at offset {offset}, skipping. {error}", None


class _UnknownRecordTypeError(Exception):
    def __init__(self, record_type: int) -> None:
        super().__init__(record_type)
        self.record_type = record_type


def parse_offsets_record(key: bytes | None, value: bytes | None, *, offset: int) -> tuple[str, str | None]:
    """The ``key:`` and ``payload:`` texts of one ``__consumer_offsets`` record (``OffsetsMessageParser``)."""
    return _guarded(offset, lambda: _offsets_record(key, value))


def _offsets_record(key: bytes | None, value: bytes | None) -> tuple[str, str | None]:
    decoded = decode_key(key)
    if isinstance(decoded, UnknownRecordKey):
        return _schema_record(key, value, GROUP_RECORDS)
    if isinstance(decoded, OffsetCommitKey):
        record_type, data = (
            decoded.record_type,
            {
                "group": decoded.group,
                "topic": decoded.topic,
                "partition": decoded.partition,
            },
        )
        schema = OFFSET_COMMIT_VALUE
    elif isinstance(decoded, GroupMetadataKey):
        record_type, data, schema = 2, {"group": decoded.group}, GROUP_METADATA_VALUE
    else:
        record_type, data = decoded.record_type, _consumer_group_key(decoded)
        schema = CONSUMER_GROUP_VALUES[record_type]
    key_line = _key_line(record_type, data)
    if value is None:
        return key_line, DELETE
    version, fields = read_message(value, schema)
    if schema is GROUP_METADATA_VALUE and fields["protocolType"] == _CONSUMER_PROTOCOL_TYPE:
        for member in fields["members"]:
            _replace(member, "subscription", SUBSCRIPTION)
            _replace(member, "assignment", ASSIGNMENT)
    return key_line, _value_line(version, fields)


def _consumer_group_key(key: ConsumerGroupRecordKey) -> dict[str, Any]:
    data: dict[str, Any] = {"groupId": key.group}
    if key.member_id is not None:
        data["memberId"] = key.member_id
    if key.regular_expression is not None:
        data["regularExpression"] = key.regular_expression
    return data


def _replace(member: dict[str, Any], name: str, schema: Schema) -> None:
    """``OffsetsMessageParser.replace``: the embedded protocol decoded, the bytes kept when it does not."""
    with contextlib.suppress(CoordinatorSchemaError):
        member[name] = read_message(base64.b64decode(member[name]), schema)[1]


def parse_transaction_log_record(
    key: bytes | None, value: bytes | None, *, offset: int
) -> tuple[str, str | None]:
    """The ``key:`` and ``payload:`` texts of one ``__transaction_state`` record
    (``TransactionLogMessageParser``)."""
    return _guarded(offset, lambda: _transaction_record(key, value))


def parse_share_group_state_record(
    key: bytes | None, value: bytes | None, *, offset: int
) -> tuple[str, str | None]:
    """The ``key:`` and ``payload:`` texts of one ``__share_group_state`` record
    (``ShareGroupStateMessageParser``, ``kafka-dump-log.sh --share-group-state-decoder``)."""
    return _guarded(offset, lambda: _schema_record(key, value, SHARE_STATE_RECORDS))


def _transaction_record(key: bytes | None, value: bytes | None) -> tuple[str, str | None]:
    return _schema_record(key, value, TRANSACTION_LOG_RECORDS)


def _schema_record(
    key: bytes | None, value: bytes | None, records: Mapping[int, RecordSchemas]
) -> tuple[str, str | None]:
    """A record whose type's key and value ``records`` define (``CoordinatorRecordSerde.deserialize``)."""
    if key is None:
        raise CoordinatorSchemaError("the record has no key (every coordinator record has one)")
    reader = FieldReader(bytes(key))
    record_type = reader.int16("record type")
    schemas = records.get(record_type)
    if schemas is None:
        raise _UnknownRecordTypeError(record_type)
    data = read_struct(reader, schemas.key.fields, version=0, flexible=False, name=schemas.key.name)
    key_line = _key_line(record_type, data)
    if value is None:
        return key_line, DELETE
    version, fields = read_message(value, schemas.value)
    return key_line, _value_line(version, fields)
