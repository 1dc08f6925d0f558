"""Task progress of ``airflow dags test`` read from its output, for the demo: one line as each task starts and
ends, from the ``[DAG TEST]`` lines ``dag.test()`` logs (Airflow 3.3) and the Execution API's state updates.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_START = re.compile(r"\[DAG TEST\] starting task_id=(?P<task>\S+) map_index=(?P<index>-?\d+)")
_END = re.compile(r"\[DAG TEST\] end task task_id=(?P<task>\S+) map_index=(?P<index>-?\d+)")
_STATE = re.compile(r"Task instance state updated .*\bnew_state=(?P<state>\w+)")


@dataclass(slots=True)
class TaskProgress:
    """Turns output lines into progress messages (``line`` returns one, or ``None``)."""

    clock: Callable[[], float] = time.monotonic
    _started: dict[str, float] = field(default_factory=dict)
    _state: str | None = None

    def line(self, text: str) -> str | None:
        plain = _ANSI.sub("", text)
        if found := _START.search(plain):
            name = _task_name(found.group("task"), found.group("index"))
            self._started[name] = self.clock()
            self._state = None
            return f"  task {name}: started"
        if found := _STATE.search(plain):
            self._state = found.group("state")
            return None
        if found := _END.search(plain):
            name = _task_name(found.group("task"), found.group("index"))
            seconds = self.clock() - self._started.pop(name, self.clock())
            state, self._state = self._state or "ended", None
            return f"  task {name}: {state.upper() if state == 'failed' else state} ({seconds:.1f} s)"
        return None


def _task_name(task_id: str, map_index: str) -> str:
    return task_id if map_index == "-1" else f"{task_id}[{map_index}]"
