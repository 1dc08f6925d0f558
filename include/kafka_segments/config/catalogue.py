"""Every setting the configuration file accepts, defined once each like Kafka's ``ConfigDef.define``, with the
values of Kafka 4.x's own definitions: ``LogConfig.CONFIG`` and ``ServerTopicConfigSynonyms`` (topic level),
``LogConfig.SERVER_CONFIG_DEF``, ``CleanerConfig``, ``ServerConfigs``, ``GroupCoordinatorConfig`` and
``TransactionLogConfig`` (broker level).

A topic setting's default is what its broker synonyms give when nothing is set; broker time synonyms are
converted to milliseconds (``ConfigSynonym.HOURS_TO_MILLISECONDS``), the first one set wins. KIP-68 was never
implemented by Kafka: its settings use the KIP's names and this project's defaults. Settings of this project
itself start with ``kafka_segments.``."""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from functools import cache

from kafka_segments.config.model import DEFAULT_MAX_BATCH_DECOMPRESSED_BYTES

Value = bool | int | float | str | tuple[str, ...]
"""A parsed setting value: BOOLEAN, INT/LONG, DOUBLE, STRING or LIST (a tuple of strings)."""

EXTENSION_PREFIX = "kafka_segments."
INT_MIN, INT_MAX = -(2**31), 2**31 - 1
LONG_MIN, LONG_MAX = -(2**63), 2**63 - 1
MINUTES_TO_MS = 60_000
HOURS_TO_MS = 3_600_000
MAX_BATCH_DECOMPRESSED_BYTES = "kafka_segments.compaction.max.batch.decompressed.bytes"
DEDUPE_BUFFER_SIZE = "log.cleaner.dedupe.buffer.size"
DEDUPE_LOAD_FACTOR = "log.cleaner.io.buffer.load.factor"
CLEANER_THREADS = "log.cleaner.threads"
RETAIN_MANIFESTS = "kafka_segments.retain.manifests"
DEFAULT_RETAIN_MANIFESTS = 10
"""How many of the newest manifests gc keeps (the setting; ``gc --retain-manifests``)."""
TABLE_ENABLE = "kafka_segments.table.enable"
TABLE_CATALOG = "kafka_segments.table.catalog"
TABLE_NAMESPACE = "kafka_segments.table.namespace"
TABLE_VALUE_FORMAT = "kafka_segments.table.value.format"
TABLE_VALUE_SCHEMA = "kafka_segments.table.value.schema"
"""The topics as Iceberg tables (docs/tables.md): which topics ``tables sync --config`` publishes, the
catalog's pyiceberg properties (``NAME=VALUE``), the tables' namespace, and a topic's values decoded from JSON
into a typed column (``value.format=json``; ``value.schema``: a JSON object, field name -> type)."""
RUN_FOLDER_RETENTION_MS = "kafka_segments.run.folder.retention.ms"
MIN_RUN_FOLDER_RETENTION_MS = 3_600_000
"""The shortest run folder retention (1 hour: a run still writes its folder after it ends), for the setting
and for ``gc --run-folder-retention-ms`` (``lake.run_folders``)."""


class ValueType(Enum):
    """Kafka's ``ConfigDef.Type`` for the types this file uses."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"


class Level(Enum):
    TOPIC = "topic"
    BROKER = "broker"


@dataclass(frozen=True, slots=True)
class Range:
    """``ConfigDef.Range``: ``atLeast(minimum)`` or ``between(minimum, maximum)`` (both ends inclusive)."""

    minimum: int | float
    maximum: int | float | None = None

    def describe(self) -> str:
        if self.maximum is None:
            return f"[{self.minimum},...]"
        return f"[{self.minimum},...,{self.maximum}]"


@dataclass(frozen=True, slots=True)
class OneOf:
    """``ConfigDef.ValidString.in``: the value must be one of ``choices`` (case-sensitive)."""

    choices: tuple[str, ...]

    def describe(self) -> str:
        return "[" + ", ".join(self.choices) + "]"


@dataclass(frozen=True, slots=True)
class ListOf:
    """``ConfigDef.ValidList`` (Kafka 4.x): no duplicates, no empty items, every item in ``choices`` (any
    non-empty string when ``choices`` is empty); an empty list is allowed when ``allow_empty``."""

    choices: tuple[str, ...] = ()
    allow_empty: bool = True

    def describe(self) -> str:
        items = "[" + ", ".join(self.choices) + "]" if self.choices else "any non-empty strings"
        return f"{items}, no duplicates" + ("" if self.allow_empty else ", not empty")


Validator = Range | OneOf | ListOf


@dataclass(frozen=True, slots=True)
class Synonym:
    """A broker setting that gives a topic setting its default; ``to_ms`` converts its unit."""

    name: str
    to_ms: int = 1


@dataclass(frozen=True, slots=True)
class Setting:
    """One configuration name, as Kafka's ``ConfigDef.define(name, type, default, validator, doc)``.

    ``default`` ``None`` means "not set" (Kafka's null default, e.g. ``log.retention.ms``): only those
    settings accept a YAML ``null``. ``synonyms`` (topic settings only) lists the broker names that supply
    the default, most specific first. ``kafka`` names the Kafka definition (or ``KIP-68`` / this project).
    """

    name: str
    level: Level
    type: ValueType
    default: Value | None
    validator: Validator | None
    doc: str
    kafka: str
    synonyms: tuple[Synonym, ...] = ()


def _topic(
    name: str,
    type_: ValueType,
    default: Value | None,
    validator: Validator | None,
    synonyms: tuple[Synonym, ...],
    doc: str,
    kafka: str = "LogConfig",
) -> Setting:
    return Setting(name, Level.TOPIC, type_, default, validator, doc, kafka, synonyms)


def _broker(
    name: str, type_: ValueType, default: Value | None, validator: Validator | None, doc: str, kafka: str
) -> Setting:
    return Setting(name, Level.BROKER, type_, default, validator, doc, kafka)


_T, _B = ValueType, Level
_CLEANUP_POLICY = ListOf(("compact", "delete"))
_TIMESTAMP_TYPE = OneOf(("CreateTime", "LogAppendTime"))
_KIP68 = "KIP-68 (never implemented by Kafka; kafka-segments' own definition)"


@cache
def topic_settings() -> tuple[Setting, ...]:
    """The topic-level settings, in display order."""
    day_ms, week_ms = 86_400_000, 604_800_000
    return (
        _topic("cleanup.policy", _T.LIST, ("delete",), _CLEANUP_POLICY, (Synonym("log.cleanup.policy"),),
               "delete and/or compact; an empty list keeps everything but what log-start-offset removes"),
        _topic("retention.ms", _T.LONG, week_ms, Range(-1),
               (Synonym("log.retention.ms"), Synonym("log.retention.minutes", MINUTES_TO_MS),
                Synonym("log.retention.hours", HOURS_TO_MS)),
               "time retention: segments whose largest timestamp is older are deleted; -1 = unlimited"),
        _topic("retention.bytes", _T.LONG, -1, None, (Synonym("log.retention.bytes"),),
               "size retention: oldest segments are deleted while the log is larger; negative = unlimited"),
        _topic("segment.bytes", _T.INT, 1_073_741_824, Range(1_048_576), (Synonym("log.segment.bytes"),),
               "largest segment; compaction merges segments up to this size"),
        _topic("internal.segment.bytes", _T.INT, None, None, (),
               "testing only (Kafka defineInternal): overrides segment.bytes without its 1 MiB minimum"),
        _topic("segment.ms", _T.LONG, week_ms, Range(1),
               (Synonym("log.roll.ms"), Synonym("log.roll.hours", HOURS_TO_MS)),
               "time after which Kafka rolls a segment (shown for completeness; the lake does not roll)"),
        _topic("segment.index.bytes", _T.INT, 10_485_760, Range(4), (Synonym("log.index.size.max.bytes"),),
               "largest offset/time index; compaction's grouping respects it"),
        _topic("index.interval.bytes", _T.INT, 4096, Range(0), (Synonym("log.index.interval.bytes"),),
               "bytes between offset index entries in rebuilt indexes"),
        _topic("file.delete.delay.ms", _T.LONG, 60_000, Range(0), (Synonym("log.segment.delete.delay.ms"),),
               "delay between a segment leaving the log and its objects being deleted"),
        _topic("delete.retention.ms", _T.LONG, day_ms, Range(0),
               (Synonym("log.cleaner.delete.retention.ms"),),
               "how long compaction keeps tombstones and transaction markers after cleaning them"),
        _topic("min.compaction.lag.ms", _T.LONG, 0, Range(0), (Synonym("log.cleaner.min.compaction.lag.ms"),),
               "records younger than this are not compacted"),
        _topic("max.compaction.lag.ms", _T.LONG, LONG_MAX, Range(1),
               (Synonym("log.cleaner.max.compaction.lag.ms"),),
               "a dirty segment older than this makes the log eligible for compaction"),
        _topic("min.cleanable.dirty.ratio", _T.DOUBLE, 0.5, Range(0, 1),
               (Synonym("log.cleaner.min.cleanable.ratio"),),
               "compaction runs when dirty bytes / total bytes exceeds this (strict >)"),
        _topic("message.timestamp.type", _T.STRING, "CreateTime", _TIMESTAMP_TYPE,
               (Synonym("log.message.timestamp.type"),), "CreateTime or LogAppendTime"),
        _topic("max.message.bytes", _T.INT, 1_048_588, Range(0), (Synonym("message.max.bytes"),),
               "largest record batch Kafka accepts"),
        _topic("retention.commitoffset.enable", _T.BOOLEAN, False, None,
               (Synonym("log.retention.commitoffset.enable"),),
               "consumed retention: delete segments every counted consumer group has consumed", _KIP68),
        _topic("retention.commitoffset.ms", _T.LONG, week_ms, Range(0),
               (Synonym("log.retention.commitoffset.ms"),
                Synonym("log.retention.commitoffset.minutes", MINUTES_TO_MS),
                Synonym("log.retention.commitoffset.hours", HOURS_TO_MS)),
               "consumed retention deletes a consumed segment once its largest timestamp is this old",
               _KIP68),
        _topic("kafka_segments.consumed.required.groups", _T.LIST, (), ListOf(),
               (Synonym("kafka_segments.consumed.required.groups"),),
               "groups that must have consumed a segment before consumed retention deletes it",
               "kafka-segments extension"),
        _topic(MAX_BATCH_DECOMPRESSED_BYTES, _T.LONG, DEFAULT_MAX_BATCH_DECOMPRESSED_BYTES, Range(1),
               (Synonym(MAX_BATCH_DECOMPRESSED_BYTES),),
               "the most bytes one compressed batch may inflate to when compaction decodes it; a batch past "
               "it (a decompression bomb) leaves its partition uncleaned for the run",
               "kafka-segments extension"),
        _topic(TABLE_ENABLE, _T.BOOLEAN, False, None, (Synonym(TABLE_ENABLE),),
               "publish the topic as an Iceberg table (`tables sync --config`, docs/tables.md)",
               "kafka-segments extension"),
        _topic(TABLE_VALUE_FORMAT, _T.STRING, "raw", OneOf(("raw", "json")), (),
               "json: the table also has value_json, the value's top-level JSON fields as typed columns",
               "kafka-segments extension"),
        _topic(TABLE_VALUE_SCHEMA, _T.STRING, "", None, (),
               "with value.format json: the fields of value_json as a JSON object, name -> long, double, "
               "boolean or string (empty: inferred from the data and evolved additively)",
               "kafka-segments extension"),
    )  # fmt: skip


@cache
def broker_settings() -> tuple[Setting, ...]:
    """The broker-level settings: the synonyms of the topic settings, then the broker-only ones."""
    return (
        _broker("log.cleanup.policy", _T.LIST, ("delete",), _CLEANUP_POLICY, "cleanup.policy", "LogConfig"),
        _broker("log.retention.ms", _T.LONG, None, None, "retention.ms; wins over .minutes and .hours",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.retention.minutes", _T.INT, None, None, "retention.ms in minutes; wins over .hours",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.retention.hours", _T.INT, 168, None, "retention.ms in hours",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.retention.bytes", _T.LONG, -1, None, "retention.bytes", "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.segment.bytes", _T.INT, 1_073_741_824, Range(1_048_576), "segment.bytes",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.roll.ms", _T.LONG, None, None, "segment.ms; wins over log.roll.hours",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.roll.hours", _T.INT, 168, Range(1), "segment.ms in hours",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.index.size.max.bytes", _T.INT, 10_485_760, Range(4), "segment.index.bytes",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.index.interval.bytes", _T.INT, 4096, Range(0), "index.interval.bytes",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.segment.delete.delay.ms", _T.LONG, 60_000, Range(0), "file.delete.delay.ms",
                "LogConfig.SERVER_CONFIG_DEF"),
        _broker("log.cleaner.delete.retention.ms", _T.LONG, 86_400_000, Range(0), "delete.retention.ms",
                "CleanerConfig"),
        _broker("log.cleaner.min.compaction.lag.ms", _T.LONG, 0, Range(0), "min.compaction.lag.ms",
                "CleanerConfig"),
        _broker("log.cleaner.max.compaction.lag.ms", _T.LONG, LONG_MAX, Range(1), "max.compaction.lag.ms",
                "CleanerConfig"),
        _broker("log.cleaner.min.cleanable.ratio", _T.DOUBLE, 0.5, Range(0, 1), "min.cleanable.dirty.ratio",
                "CleanerConfig"),
        _broker("log.message.timestamp.type", _T.STRING, "CreateTime", _TIMESTAMP_TYPE,
                "message.timestamp.type", "LogConfig.SERVER_CONFIG_DEF"),
        _broker("message.max.bytes", _T.INT, 1_048_588, Range(0), "max.message.bytes", "ServerConfigs"),
        _broker("log.retention.commitoffset.enable", _T.BOOLEAN, False, None,
                "retention.commitoffset.enable", _KIP68),
        _broker("log.retention.commitoffset.ms", _T.LONG, None, Range(0),
                "retention.commitoffset.ms; wins over .minutes and .hours", _KIP68),
        _broker("log.retention.commitoffset.minutes", _T.INT, None, Range(0),
                "retention.commitoffset.ms in minutes; wins over .hours", _KIP68),
        _broker("log.retention.commitoffset.hours", _T.INT, 168, Range(0),
                "retention.commitoffset.ms in hours", _KIP68),
        _broker("kafka_segments.consumed.required.groups", _T.LIST, (), ListOf(),
                "kafka_segments.consumed.required.groups", "kafka-segments extension"),
        _broker(MAX_BATCH_DECOMPRESSED_BYTES, _T.LONG, DEFAULT_MAX_BATCH_DECOMPRESSED_BYTES, Range(1),
                MAX_BATCH_DECOMPRESSED_BYTES, "kafka-segments extension"),
        _broker("producer.id.expiration.ms", _T.INT, 86_400_000, Range(1),
                "a producer is active while its last batch is younger than this (compaction keeps the last "
                "batch of every active producer)", "TransactionLogConfig"),
        _broker("offsets.retention.minutes", _T.INT, 10_080, Range(1),
                "committed offsets expire after this (KIP-211), for consumed retention",
                "GroupCoordinatorConfig"),
        _broker("kafka_segments.compaction.max.bytes.per.run", _T.LONG, -1, Range(-1),
                "per-run compaction budget: once the rounds taken read this many bytes (clean + dirty), "
                "the remaining eligible partitions wait for the next run (-1: no limit)",
                "kafka-segments extension"),
        _broker("kafka_segments.compaction.max.partitions.per.run", _T.INT, -1, Range(-1),
                "per-run compaction budget: at most this many partitions get a cleaning round (-1: no "
                "limit); overdue partitions (max.compaction.lag.ms) first, then the dirtiest",
                "kafka-segments extension"),
        _broker(TABLE_ENABLE, _T.BOOLEAN, False, None,
                "publish every topic as an Iceberg table unless the topic says otherwise",
                "kafka-segments extension"),
        _broker(TABLE_CATALOG, _T.LIST, (), ListOf(),
                "the tables' pyiceberg catalog properties, NAME=VALUE (empty: the catalog kept inside the "
                "lake)", "kafka-segments extension"),
        _broker(TABLE_NAMESPACE, _T.STRING, "kafka_segments", None,
                "the catalog namespace of the topics' tables", "kafka-segments extension"),
        _broker(RETAIN_MANIFESTS, _T.INT, DEFAULT_RETAIN_MANIFESTS, Range(1),
                "a run's gc keeps this many of the newest manifests, and what they list: the versions that "
                "time travel can read and the lake view shows", "kafka-segments extension"),
        _broker(RUN_FOLDER_RETENTION_MS, _T.LONG, -1, Range(-1),
                "a run's gc also deletes the folder of every run that ended and has not changed for this "
                "long, unless it committed a retained manifest (-1: keep every run folder; else at least "
                "3600000)", "kafka-segments extension"),
        _broker("log.cleaner.enable", _T.BOOLEAN, True, None,
                "false: compacted topics get neither compaction nor deletion (deprecated since Kafka 4.1)",
                "CleanerConfig"),
        _broker(DEDUPE_BUFFER_SIZE, _T.LONG, None, None,
                "the offset map's memory across all cleaner threads: a round ends where the map fills, as on "
                "a broker (not set: kafka-segments' unbounded map, one round per cleanable range)",
                "CleanerConfig"),
        _broker(DEDUPE_LOAD_FACTOR, _T.DOUBLE, 0.9, None,
                "how full the offset map may get (its slots times this); only with "
                "log.cleaner.dedupe.buffer.size", "CleanerConfig"),
        _broker(CLEANER_THREADS, _T.INT, 1, Range(0),
                "the dedupe buffer is divided by this (each cleaner thread has its own map); only with "
                "log.cleaner.dedupe.buffer.size", "CleanerConfig"),
    )  # fmt: skip


@cache
def _index(level: Level) -> dict[str, Setting]:
    settings = topic_settings() if level is Level.TOPIC else broker_settings()
    return {setting.name: setting for setting in settings}


def topic_setting(name: str) -> Setting | None:
    return _index(Level.TOPIC).get(name)


def broker_setting(name: str) -> Setting | None:
    return _index(Level.BROKER).get(name)


@cache
def topic_names_by_synonym() -> dict[str, str]:
    """Broker synonym -> the topic setting it gives a default to."""
    return {synonym.name: setting.name for setting in topic_settings() for synonym in setting.synonyms}


@cache
def broker_only_settings() -> tuple[Setting, ...]:
    """The broker settings that are no topic setting's synonym (they apply to every topic alike)."""
    synonyms = topic_names_by_synonym()
    return tuple(setting for setting in broker_settings() if setting.name not in synonyms)


KAFKA_SETTINGS_NOT_USED = frozenset(
    {
        "compression.type", "compression.gzip.level", "compression.lz4.level", "compression.zstd.level",
        "flush.messages", "flush.ms", "follower.replication.throttled.replicas",
        "leader.replication.throttled.replicas", "local.retention.bytes", "local.retention.ms",
        "message.downconversion.enable", "message.format.version", "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms", "message.timestamp.difference.max.ms", "min.insync.replicas",
        "preallocate", "remote.log.copy.disable", "remote.log.delete.on.disable", "remote.storage.enable",
        "segment.jitter.ms", "unclean.leader.election.enable", "log.roll.jitter.ms", "log.roll.jitter.hours",
        "log.flush.interval.messages", "log.flush.interval.ms", "log.preallocate", "log.dirs", "log.dir",
        "log.retention.check.interval.ms", "log.cleaner.io.buffer.size", "log.cleaner.backoff.ms",
        "log.cleaner.io.max.bytes.per.second", "log.local.retention.ms", "log.local.retention.bytes",
        "offsets.retention.check.interval.ms", "producer.id.expiration.check.interval.ms",
        "num.partitions", "default.replication.factor",
    }
)  # fmt: skip
"""Kafka settings this project recognises but does not use (they do not change what retention or
compaction keep): named in the problem so a copied Kafka configuration gets a clear message."""
