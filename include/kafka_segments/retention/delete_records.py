"""deleteRecords (KIP-107) on the lake: move log start offsets, as ``Partition.deleteRecordsOnLeader`` does
(docs/retention.md, "deleteRecords (KIP-107)"), from ``kafka-delete-records.sh``'s request file.

A bad file is rejected whole, as the tool does; each partition then gets its own result (Kafka's error
names; a quarantined partition is ``KAFKA_STORAGE_ERROR``). The log start offset never moves back; whole
segments below it leave the live list in the same commit."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum

from kafka_segments.config.model import TopicConfig
from kafka_segments.errors import InvalidTopicError, LocatedError
from kafka_segments.nesting import NestingTooDeepError, check_json_text, check_json_value
from kafka_segments.retention.consumed import ConsumedBound, ConsumedIndex, ConsumedStatus
from kafka_segments.retention.plan import PartitionPlan, partition_plan
from kafka_segments.retention.rules import DeletionReason, LogView, PassInputs, apply_retention
from kafka_segments.state import PartitionState
from kafka_segments.topic_partition import TopicPartition

HIGH_WATERMARK = -1
"""``DeleteRecordsRequest.HIGH_WATERMARK``: delete everything below the high watermark."""


class DeleteRecordsFileError(LocatedError):
    """The request file is not a valid ``kafka-delete-records.sh`` offset JSON file."""


class DeleteRecordsErrorCode(Enum):
    """Kafka's per-partition error codes for DeleteRecords, with the Admin client's messages."""

    OFFSET_OUT_OF_RANGE = "The requested offset is not within the range of offsets maintained by the server."
    POLICY_VIOLATION = "Records of the partition can not be deleted due to the configured policy"
    UNKNOWN_TOPIC_OR_PARTITION = "This server does not host this topic-partition."
    KAFKA_STORAGE_ERROR = "The partition is quarantined in this run (see the adoption report)."


@dataclass(frozen=True, slots=True)
class DeleteRecordsRequest:
    topic_partition: TopicPartition
    offset: int


@dataclass(frozen=True, slots=True)
class DeleteRecordsResult:
    """One partition's outcome: the new low watermark, or an error."""

    topic_partition: TopicPartition
    requested_offset: int
    low_watermark: int | None = None
    error: DeleteRecordsErrorCode | None = None
    detail: str = ""

    @property
    def ok(self) -> bool:
        return self.error is None

    def line(self) -> str:
        """``kafka-delete-records.sh``'s output line."""
        if self.error is None:
            return f"partition: {self.topic_partition}\tlow_watermark: {self.low_watermark}"
        return (
            f"partition: {self.topic_partition}\terror: {self.error.name}: {self.detail or self.error.value}"
        )


def parse_delete_records(data: bytes | str, *, location: str) -> tuple[DeleteRecordsRequest, ...]:
    """The requests of an offset JSON file, in file order.

    Raises:
        DeleteRecordsFileError: not JSON, nested deeper than ``MAX_NESTING_DEPTH``, unsupported version,
            missing or malformed fields, or a partition listed twice (the whole file is refused; nothing is
            deleted).
    """
    try:
        text = data.decode(json.detect_encoding(data), "surrogatepass") if isinstance(data, bytes) else data
        with _refusing_deep_nesting(location):
            check_json_text(text)
        document = json.loads(text)
    except (ValueError, UnicodeDecodeError) as exc:
        raise DeleteRecordsFileError(f"the input is not valid JSON: {exc}", location=location) from None
    if not isinstance(document, dict):
        raise DeleteRecordsFileError("the input must be a JSON object", location=location)
    version = document.get("version", 1)
    if version != 1 or isinstance(version, bool):
        raise DeleteRecordsFileError(f"Not supported version field value {version!r}", location=location)
    partitions = document.get("partitions")
    if partitions is None:
        raise DeleteRecordsFileError("Missing partitions field", location=location)
    if not isinstance(partitions, list):
        raise DeleteRecordsFileError("partitions: must be a JSON array", location=location)
    requests = [_request(item, index, location) for index, item in enumerate(partitions)]
    counts = Counter(request.topic_partition for request in requests)
    duplicates = sorted(str(tp) for tp, count in counts.items() if count > 1)
    if duplicates:
        raise DeleteRecordsFileError(
            f"Offset json file contains duplicate topic partitions: {','.join(duplicates)}", location=location
        )
    return tuple(requests)


def parse_delete_records_value(value: object, *, location: str) -> tuple[DeleteRecordsRequest, ...]:
    """``parse_delete_records`` of an already decoded request (the Airflow DAG's ``request`` Param).

    Raises:
        DeleteRecordsFileError: as ``parse_delete_records``; a value nested deeper than
            ``MAX_NESTING_DEPTH`` is refused before it is encoded.
    """
    with _refusing_deep_nesting(location):
        check_json_value(value)
    return parse_delete_records(json.dumps(value), location=location)


@contextmanager
def _refusing_deep_nesting(location: str) -> Iterator[None]:
    try:
        yield
    except NestingTooDeepError as exc:
        raise DeleteRecordsFileError(f"the input is {exc}", location=location) from None


def _request(item: object, index: int, location: str) -> DeleteRecordsRequest:
    where = f"partitions[{index}]"
    if not isinstance(item, dict):
        raise DeleteRecordsFileError(f"{where}: must be a JSON object", location=location)
    fields = {}
    for name in ("topic", "partition", "offset"):
        if name not in item:
            raise DeleteRecordsFileError(f"{where}: missing field {name!r}", location=location)
        fields[name] = item[name]
    topic, partition, offset = fields["topic"], fields["partition"], fields["offset"]
    if not isinstance(topic, str):
        raise DeleteRecordsFileError(f"{where}.topic: {topic!r} is not a string", location=location)
    for name, value in (("partition", partition), ("offset", offset)):
        if isinstance(value, bool) or not isinstance(value, int):
            raise DeleteRecordsFileError(f"{where}.{name}: {value!r} is not an integer", location=location)
    if not -(2**63) <= offset < 2**63:
        raise DeleteRecordsFileError(f"{where}.offset: {offset} is not a 64-bit integer", location=location)
    try:
        topic_partition = TopicPartition(topic, partition)
    except InvalidTopicError as exc:
        raise DeleteRecordsFileError(f"{where}: {exc}", location=location) from None
    return DeleteRecordsRequest(topic_partition, offset)


def delete_records_plan(
    state: PartitionState,
    config: TopicConfig,
    request: DeleteRecordsRequest,
    *,
    now_ms: int,
    index: ConsumedIndex | None = None,
) -> tuple[DeleteRecordsResult, PartitionPlan | None]:
    """One partition's result and, when it succeeds, the plan that commits it."""
    tp = request.topic_partition
    if not config.delete:
        detail = f"Records of partition {tp} can not be deleted due to the configured policy"
        return DeleteRecordsResult(
            tp, request.offset, error=DeleteRecordsErrorCode.POLICY_VIOLATION, detail=detail
        ), None
    offset = state.high_watermark if request.offset == HIGH_WATERMARK else request.offset
    if offset < 0 or offset > state.high_watermark:
        detail = (
            f"offset {request.offset} is outside [log start offset {state.log_start_offset}, "
            f"high watermark {state.high_watermark}] (or -1 for the high watermark)"
        )
        return DeleteRecordsResult(
            tp, request.offset, error=DeleteRecordsErrorCode.OFFSET_OUT_OF_RANGE, detail=detail
        ), None
    log_start = max(state.log_start_offset, offset)
    log = LogView(state.segments, log_start, state.log_end_offset)
    outcome = apply_retention(
        log, PassInputs(config, now_ms, None), passes=(DeletionReason.LOG_START_OFFSET,)
    )
    plan = partition_plan(state, outcome, consumed=ConsumedBound(ConsumedStatus.DISABLED), index=index)
    return DeleteRecordsResult(tp, request.offset, low_watermark=outcome.log_start_offset), plan


def unknown_partition(request: DeleteRecordsRequest) -> DeleteRecordsResult:
    return DeleteRecordsResult(
        request.topic_partition, request.offset, error=DeleteRecordsErrorCode.UNKNOWN_TOPIC_OR_PARTITION
    )


def quarantined_partition(request: DeleteRecordsRequest, reason: str) -> DeleteRecordsResult:
    return DeleteRecordsResult(
        request.topic_partition,
        request.offset,
        error=DeleteRecordsErrorCode.KAFKA_STORAGE_ERROR,
        detail=reason,
    )
