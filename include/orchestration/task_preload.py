"""What this project's Airflow tasks import, imported once for all of them: the module to name in Airflow's
``[scheduler] mp_forkserver_preload``.

Airflow's ``LocalExecutor`` forks every task process from one of its worker processes, and the task then
imports what it needs: the DAG file's modules, the library and, in ``validate``, Great Expectations. That is
about a second of CPU per task and some six seconds per validation, paid again by every task of every run.

With Airflow's documented settings (Airflow 3.3+)::

    AIRFLOW__SCHEDULER__MP_START_METHOD=forkserver
    AIRFLOW__SCHEDULER__MP_FORKSERVER_PRELOAD=orchestration.task_preload

the scheduler starts its workers from Python's fork server, which imports this module once; every worker,
and every task forked from a worker, starts with these modules loaded (shared copy-on-write) instead of
importing them. A module that fails to import here is skipped by the fork server and imported by the task
as before, so the settings change how fast a task starts, never what it does. After an upgrade of the
package, restart the scheduler (as for any change of installed code).

Importing this module *is* its work, unlike every other module of the project: name it only in
``mp_forkserver_preload``. ``orchestration.task_modules`` holds the list and ``preload()``, the same work as
a call.
"""

from __future__ import annotations

from orchestration.task_modules import preload

preload()
