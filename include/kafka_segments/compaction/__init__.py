"""Kafka's log cleaner (log compaction) as pure library functions, one module per step of the cleaner, each
naming the Kafka source it reimplements (``range``, ``eligibility``, ``offset_map``/``map_fill``,
``producers``, ``txn_state``, ``decisions``/``fates``, ``grouping``, ``filtering``, ``rewrite``/``results``,
``output``, ``source``); docs/compaction.md describes a run.

The hot paths (``decoded``, ``records.fast``, ``batch_kinds``/``batch_decisions``, ``gc_pause``) take the same
decisions and write the same bytes; ``tests/unit/test_fast_rebuild.py`` compares a round with and without
them."""

COMPACTION_REASON = "compaction"
"""The reason a segment replaced by a cleaning round's output is retired with (``RetiredObject.reason``),
beside retention's ``DeletionReason`` values."""
