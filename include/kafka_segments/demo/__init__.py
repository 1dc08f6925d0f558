"""Demo and test support, not part of the product: the embedded S3 server (``embedded_s3``), the sample topic
of ``kafka-segments demo`` (``sample``) and the demo lake of ``./scripts/demo`` (``lake``, ``log``,
``offsets``). Nothing under ``kafka_segments`` outside ``cli/demo_cmd.py`` imports this package."""

from kafka_segments.demo.embedded_s3 import (
    DEFAULT_REGION,
    EMBEDDED_CREDENTIALS,
    EmbeddedS3,
    embedded_s3_server,
)
from kafka_segments.demo.lake import (
    CLICKSTREAM_SEGMENT_AGES_H,
    DEMO_BUCKET,
    DEMO_PREFIX,
    DemoLake,
    build_demo_lake,
    demo_objects,
    pin_demo_history,
    pin_demo_offsets,
)
from kafka_segments.demo.log import DAY_MS, HOUR_MS, MINUTE_MS
from kafka_segments.demo.offsets import AUDIT_EMPTY_FOR_MS, consumer_offsets_snapshot
from kafka_segments.demo.sample import (
    SAMPLE_INDEX_INTERVAL_BYTES,
    SAMPLE_START_MS,
    SAMPLE_TOPIC,
    SampleSegment,
    sample_topic,
)

__all__ = [
    "AUDIT_EMPTY_FOR_MS",
    "CLICKSTREAM_SEGMENT_AGES_H",
    "DAY_MS",
    "DEFAULT_REGION",
    "DEMO_BUCKET",
    "DEMO_PREFIX",
    "EMBEDDED_CREDENTIALS",
    "HOUR_MS",
    "MINUTE_MS",
    "SAMPLE_INDEX_INTERVAL_BYTES",
    "SAMPLE_START_MS",
    "SAMPLE_TOPIC",
    "DemoLake",
    "EmbeddedS3",
    "SampleSegment",
    "build_demo_lake",
    "consumer_offsets_snapshot",
    "demo_objects",
    "embedded_s3_server",
    "pin_demo_history",
    "pin_demo_offsets",
    "sample_topic",
]
