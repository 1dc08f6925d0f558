"""The reading layer's errors: a bad option, a requested offset the lake no longer holds, a version whose
objects are gone. Each names what and where in one line."""

from __future__ import annotations

from kafka_segments.errors import KafkaSegmentsError, LakeError


class ReadOptionError(KafkaSegmentsError, ValueError):
    """An option of a lake read is missing, malformed or contradicts another (``option 'x': ...``)."""

    def __init__(self, option: str, problem: str) -> None:
        self.option = option
        self.problem = problem
        super().__init__(f"option {option!r}: {problem}")


class DataLossError(LakeError):
    """``failOnDataLoss``: a requested offset is no longer in the lake (below the log start offset, or past
    the log end offset), as Spark's Kafka source reports lost data."""


class VersionGoneError(LakeError):
    """A time-travel read names a version whose segment objects are gone (garbage collected)."""
