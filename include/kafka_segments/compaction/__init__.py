"""Kafka's log cleaner (log compaction) as pure library functions.

The modules follow the cleaner's own steps, each naming the Kafka source it reimplements:

* ``range``: the cleanable range of a partition (``LogCleanerManager.cleanableOffsets``, ``LogToClean``).
* ``eligibility``: whether a partition gets a round, and the order of a per-run budget
  (``LogCleanerManager.grabFilthiestCompactedLog``, ``maxCompactionDelay``; KIP-354).
* ``offset_map``: key -> latest offset over the dirty range (``Cleaner.buildOffsetMap``, ``SkimpyOffsetMap``),
  unbounded unless ``log.cleaner.dedupe.buffer.size`` is set; ``map_fill``: where a bounded map fills.
* ``producers``: which producers are still active, for empty-batch retention (``ProducerStateManager``).
* ``txn_state``: transaction markers and aborted data during a round (``CleanedTransactionMetadata``).
* ``decisions``: per-batch and per-record retention (``Cleaner.cleanInto``, ``Cleaner.shouldRetainRecord``).
* ``fates``: the per-record rule over whole record columns (the round's hot loop).
* ``grouping``: which segments are cleaned into one new segment (``Cleaner.groupSegmentsBySize``).
* ``filtering``: one group of segments into one cleaned segment (``Cleaner.cleanInto``,
  ``MemoryRecords.filterTo``).
* ``rewrite``: one round over a partition's segments, bytes in, cleaned segments out (``Cleaner.doClean``);
  its values are in ``results``.
* ``output``: a cleaned segment as Kafka segment files, with its rebuilt transaction index.
* ``source`` (the round's input segments and aborted transactions) and ``errors``.

The hot paths (same decisions, same bytes; ``tests/unit/test_fast_rebuild.py`` compares a round with and
without them):

* ``decoded``: each segment decoded once (record columns, key MD5s) for both passes when memory allows;
* ``records.fast`` (``KeyIdentities``, ``DigestTable``): the keys' MD5s in one numba call per segment,
  last-offset dedupe, and the round's lookup table;
* ``batch_kinds`` / ``batch_decisions``: plain batches (v2 data, neither transactional nor control) decided
  over header columns;
* ``records.fast.rebuild_batches``: all of a segment's rebuilt batches written by one numba call;
* ``gc_pause``: the cyclic garbage collector paused while a round allocates its per-batch objects.
"""
