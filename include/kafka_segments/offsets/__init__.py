"""Consumer-group offset snapshots (docs/retention.md, "Consumer-offset snapshots"): what every group had
committed, and its state, at one time. The value types live in ``kafka_segments.state``.

The names below are re-exported lazily, so reading a snapshot file loads neither a Kafka client nor the
lake's segment machinery."""

from __future__ import annotations

from kafka_segments import lazy_exports

_EXPORTS = {
    "GROUP_STATES": "kafka_segments.state",
    "SNAPSHOT_FORMAT_VERSION": "kafka_segments.state",
    "CommittedOffset": "kafka_segments.state",
    "GroupError": "kafka_segments.state",
    "GroupOffsets": "kafka_segments.state",
    "GroupType": "kafka_segments.state",
    "OffsetSnapshot": "kafka_segments.state",
    "SnapshotFormatError": "snapshot_fields",
    "UnsupportedSnapshotVersionError": "snapshot_fields",
    "canonical_snapshot": "snapshot_codec",
    "load_snapshot_file": "snapshot_codec",
    "snapshot_from_json": "snapshot_codec",
    "snapshot_to_dict": "snapshot_codec",
    "snapshot_to_json": "snapshot_codec",
    "InvalidSnapshotIdError": "snapshot_store",
    "SnapshotIntegrityError": "snapshot_store",
    "SnapshotNotFoundError": "snapshot_store",
    "SnapshotPin": "snapshot_store",
    "SnapshotStoreError": "snapshot_store",
    "StoredSnapshot": "snapshot_store",
    "list_pins": "snapshot_store",
    "list_snapshots": "snapshot_store",
    "pin_snapshot": "snapshot_store",
    "read_pin": "snapshot_store",
    "read_pinned_snapshot": "snapshot_store",
    "read_snapshot": "snapshot_store",
    "store_snapshot": "snapshot_store",
    "InvalidSnapshotSourceError": "sources",
    "filter_snapshot": "sources",
    "take_snapshot": "sources",
    "LakeSourceError": "lake_source",
    "snapshot_from_lake": "lake_source",
    "InvalidKafkaSourceError": "kafka_source",
    "open_kafka_source": "kafka_source",
    "snapshot_from_kafka": "kafka_source",
    "GroupAdmin": "kafka_admin",
    "GroupDiscoveryError": "kafka_admin",
    "KafkaAdminError": "kafka_admin",
}

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
