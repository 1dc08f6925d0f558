"""Kafka's coordinator records, decoded and encoded: the ``__consumer_offsets``, ``__transaction_state`` and
``__share_group_state`` records as Kafka's coordinators write and load them. ``keys``, ``values`` and
``fields`` decode a record; ``groups`` and ``replay`` load a partition as the group coordinator does and
``snapshot`` makes the partitions' groups one ``OffsetSnapshot`` (``offsets.lake_source`` uses it);
``dump_log`` prints records as ``kafka-dump-log.sh`` does (``inspect``), over the schema tables ``schema``,
``schema_share`` and ``schema_streams``; ``writer`` encodes records (the demo lake)."""
