"""Compaction in a run: which partitions get a cleaning round (``stage``), the round itself on one partition
(``round``: read, clean, write; ``sources``: how its segments are read and checked), the task an engine runs
(``task``) and the results and report lines (``results``, ``report``). The rules themselves are
``kafka_segments.compaction``'s."""
