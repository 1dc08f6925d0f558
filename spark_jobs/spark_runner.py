"""``SparkRunner``: the library's ``TaskRunner`` on a SparkContext (``pipeline.engines``).

A run hands its runner two fan-outs: adoption's reads (``engines.read_task``: one object per item; each
executor opens the lake's store itself and returns a small ``ReadResult``) and the per-topic planning
(``engines.plan_topic``). Spark moves the items and results; segment bytes go straight from the store to the
task that reads them.

Items and results go through Spark's data serializer (the standard pickler): every value the runners pass
pickles as it is (``ReadJob``, ``TopicPlanTask`` with its ``TopicConfig`` and ``OffsetSnapshot``,
``ReadResult`` with its ``HeaderTable`` of numpy columns, ``PartitionPlan``).

The mapped functions are module-level functions of ``kafka_segments`` (pickled by reference): executors
import them from the ``--py-files`` archive, and nothing of this module needs to reach them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from pyspark import SparkContext

T = TypeVar("T")
R = TypeVar("R")


class SparkRunner:
    """Maps a function over items on Spark's executors; results in the items' order.

    Args:
        sc: the SparkContext.
        slices_per_core: how many slices (tasks) per default-parallelism slot at most: several per core
            even out uneven items (a large segment next to small ones). Never more slices than items.
        environ: settings every task sets in its worker's environment first (the job's ``AWS_*``
            settings: ``engines.worker_environ``), instead of ``spark.executorEnv.*`` on the command line.
    """

    name = "spark"

    def __init__(
        self, sc: SparkContext, *, slices_per_core: int = 4, environ: Mapping[str, str] | None = None
    ) -> None:
        if slices_per_core < 1:
            raise ValueError(f"slices_per_core must be at least 1, got {slices_per_core}")
        self._sc = sc
        self._slices_per_core = slices_per_core
        self._environ = dict(environ or {})

    def slices(self, count: int) -> int:
        """How many slices ``count`` items are cut into."""
        return max(1, min(count, max(1, self._sc.defaultParallelism) * self._slices_per_core))

    def map(self, fn: Callable[[T], R], items: Sequence[T]) -> list[R]:
        """``fn`` over ``items`` on the executors (no Spark job at all for no items)."""
        work = list(items)
        if not work:
            return []
        from kafka_segments.pipeline.engines.worker_environ import in_worker_environ

        name = getattr(fn, "__qualname__", type(fn).__name__)
        self._sc.setJobDescription(f"kafka-segments {name} over {len(work)} item(s)")
        try:
            rdd = self._sc.parallelize(work, numSlices=self.slices(len(work)))
            return rdd.map(in_worker_environ(fn, self._environ)).collect()
        finally:
            self._sc.setJobDescription(None)  # type: ignore[arg-type]
