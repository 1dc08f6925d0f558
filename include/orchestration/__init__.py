"""Airflow-aware helpers shared by the DAGs: Airflow context to the library's config objects, spark-submit
arguments, and the mapping of the library's errors to retried or non-retried task failures."""
