"""Airflow-aware helpers shared by the DAGs (docs/airflow.md).

Modules imported by DAG files at parse time use airflow and the standard library only, never
``kafka_segments`` (``declarations``, ``retries``, ``assets``, ``spark_operator``, ``recover_sensor``), so
parsing a DAG stays cheap and does no I/O; the others are imported inside tasks only."""
