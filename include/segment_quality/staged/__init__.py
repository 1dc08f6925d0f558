"""A staged run's output as the tables the validation suites read (``frames.quality_frames``): plain
``column name -> values`` tables built from the run's folder (``columns``: what each column holds;
``retention`` and ``compaction``: the rows and the Kafka rules they check). No Great Expectations here."""
