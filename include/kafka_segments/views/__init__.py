"""Read-only views of a lake, above the rules and the lake: ``describe`` (per partition: offsets, segments,
bytes, checkpoints; with a configuration, what compaction and consumed retention would do next). Views read
manifests and snapshots; they never write (docs/architecture.md)."""
