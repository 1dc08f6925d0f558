"""Consumer-group offset snapshots (docs/retention.md, "Consumer-offset snapshots"): what every group had
committed, and its state, at one time. The value types live in ``kafka_segments.state``.

The names below are re-exported lazily, so reading a snapshot file loads neither a Kafka client nor the
lake's segment machinery."""

from __future__ import annotations

from kafka_segments import exports_by_module, lazy_exports

_EXPORTS = exports_by_module(
    {
        "kafka_segments.state": (
            "GROUP_STATES SNAPSHOT_FORMAT_VERSION CommittedOffset GroupError GroupOffsets GroupType "
            "OffsetSnapshot"
        ),
        "snapshot_fields": "SnapshotFormatError UnsupportedSnapshotVersionError",
        "snapshot_codec": (
            "canonical_snapshot load_snapshot_file snapshot_from_json snapshot_to_dict snapshot_to_json"
        ),
        "snapshot_store": (
            "InvalidSnapshotIdError SnapshotIntegrityError SnapshotNotFoundError SnapshotPin "
            "SnapshotStoreError StoredSnapshot list_pins list_snapshots pin_snapshot read_pin "
            "read_pinned_snapshot read_snapshot store_snapshot"
        ),
        "resolved": "NO_OFFSETS ResolvedOffsets age_text offsets_line",
        "sources": "InvalidSnapshotSourceError filter_snapshot take_snapshot",
        "lake_source": "LakeSourceError snapshot_from_lake",
        "kafka_source": "InvalidKafkaSourceError open_kafka_source snapshot_from_kafka",
        "kafka_admin": "GroupAdmin GroupDiscoveryError KafkaAdminError",
    }
)

__all__ = sorted(_EXPORTS)  # noqa: PLE0605 - the lazy exports, listed once in _EXPORTS

__getattr__ = lazy_exports(__name__, _EXPORTS)
