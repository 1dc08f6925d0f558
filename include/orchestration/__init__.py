"""Airflow-aware helpers shared by the DAGs: Airflow context to the library's config objects, spark-submit
arguments, and the mapping of the library's errors to retried or non-retried task failures.

Two kinds of modules, so that parsing a DAG file stays cheap and does no I/O:

* imported by DAG files at parse time (airflow and the standard library only, never ``kafka_segments``):
  ``declarations`` (schedules, Params, default args, access control), ``retries`` (the retry policy),
  ``assets`` (the lake asset alias), ``spark_operator`` (the Spark step), ``recover_sensor`` (the
  ``recover`` task, which waits for the run's turn on the lake);
* imported inside tasks only: ``settings`` (Variables and Connections), ``run_parameters`` (what a run is
  asked to do), ``failures`` (library errors to task failures), ``maintenance`` and ``delete_records`` (the
  task bodies), ``lake_turns`` (one maintenance run at a time per lake), ``entitlement`` (who may commit a
  delete-records run), ``handover`` (what tasks pass each other through XCom).
"""
