"""The ``kafka-segments`` Spark data source: the only package of the reading side that imports pyspark
(docs/reading.md). ``register(spark)`` makes ``spark.read.format("kafka-segments")`` available."""

from spark_source.data_source import KafkaSegmentsDataSource, LakeReader, register

__all__ = ["KafkaSegmentsDataSource", "LakeReader", "register"]
