"""A run on the lake as one object, from registration to its outcome (pyiceberg's ``Transaction`` is the
model): the only code that strings ``begin_run`` → stage → ``commit_run`` together (docs/lake.md, "One run,
one transaction", with the ``RunOutcome`` table).

::

    txn = LakeTransaction.begin(store, now_ms=now, operation="run", dry_run=False)
    with txn:                                   # an exception before the commit aborts the run
        adoption = txn.adopt()                  # the base plus the segments uploaded since
        txn.stage(partitions, retired=retired)  # the proposed manifest, in the run's folder
        outcome = txn.commit()                  # one conditional PUT → RunOutcome

Another process picks a run up with ``LakeTransaction.resume(store, run_id)``: all it needs is in the lake.
Nothing written before the commit is visible to readers; a dry run ends as ``RunOutcome.DRY_RUN``."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterable, Sequence
from types import TracebackType
from typing import Self

from kafka_segments.clock import Clock, wall_clock_ms
from kafka_segments.errors import CommitConflictError, KafkaSegmentsError, RunStateError
from kafka_segments.lake.adoption import DEFAULT_MAX_WORKERS, SegmentReader, adopt_objects
from kafka_segments.lake.adoption_report import AdoptionResult
from kafka_segments.lake.commit import RootBuilder, abort_run, commit_run_root, commit_run_version
from kafka_segments.lake.roots import VersionRoot, read_root
from kafka_segments.lake.run_folder import (
    has_staged_manifest,
    read_outcome,
    read_run,
    write_run_bytes,
    write_run_json,
)
from kafka_segments.lake.runs import (
    DRY_RUN_REASON,
    NOTHING_TO_CHANGE_REASON,
    RunOutcome,
    RunRecord,
    RunRequest,
)
from kafka_segments.lake.staging import begin_run, build_manifest, stage_manifest
from kafka_segments.state import MANIFEST_FORMAT_2, Manifest, PartitionState, RetiredObject
from kafka_segments.storage.base import ObjectMeta, ObjectStore
from kafka_segments.topic_partition import TopicPartition


class _Unread:
    """The base manifest of a resumed transaction, not read yet."""


UNREAD = _Unread()


Validation = Callable[["LakeTransaction"], str | None]
"""A validation hook: ``None`` when the staged output may be committed, else the reason it may not."""


class LakeTransaction:
    """One run on the lake: its base, adoption, staged state and outcome (see the module docstring)."""

    def __init__(
        self, store: ObjectStore, run: RunRecord, base: Manifest | _Unread | None, *, clock: Clock
    ) -> None:
        self._store = store
        self._run = run
        self._base = base
        self._clock = clock
        self._adoption: AdoptionResult | None = None
        self._changed: bool | None = None
        self._outcome: RunOutcome | None = None
        self._committed_version: int | None = None
        self._root: VersionRoot | None = None
        self._left: frozenset[TopicPartition] | None = None
        """After ``narrow``: the base's partitions the run leaves unread (carried into its commit)."""
        self._commit_attempted = False
        self.lost_to: CommitConflictError | None = None
        """After ``RunOutcome.LOST``: the conflict, naming the run that took the version."""

    @classmethod
    def begin(
        cls,
        store: ObjectStore,
        *,
        now_ms: int,
        operation: str,
        dry_run: bool = False,
        run_id: str | None = None,
        request: RunRequest | None = None,
        clock: Clock = wall_clock_ms,
    ) -> Self:
        """Register a run on the current head, with what it is asked to do (``request``, kept in its
        ``run.json``). Registering a ``run_id`` again (a retried task) returns the transaction it started,
        on the base it started from."""
        run, _ = begin_run(
            store,
            now_ms=now_ms,
            operation=operation,
            dry_run=dry_run,
            run_id=run_id,
            request=request,
            clock=clock,
            read_base=False,
        )
        return cls(store, run, UNREAD, clock=clock)

    @classmethod
    def resume(cls, store: ObjectStore, run_id: str, *, clock: Clock = wall_clock_ms) -> Self:
        """The registered run ``run_id`` (a later stage, possibly in another process).

        Raises:
            RunStateError: no such run.
        """
        return cls(store, read_run(store, run_id), UNREAD, clock=clock)

    # --- what the run is -------------------------------------------------------------------------------
    @property
    def store(self) -> ObjectStore:
        return self._store

    @property
    def run(self) -> RunRecord:
        return self._run

    @property
    def run_id(self) -> str:
        return self._run.run_id

    @property
    def base(self) -> Manifest | None:
        """The committed manifest the run builds on (``None``: the lake had none), read on first use only (a
        stage that only registers, commits or aborts never needs it); after ``narrow``, only the partitions
        in its scope."""
        if isinstance(self._base, _Unread):
            root = self.base_root
            self._base = None if root is None else root.manifest()
        return self._base

    @property
    def now_ms(self) -> int:
        return self._run.now_ms

    @property
    def dry_run(self) -> bool:
        return self._run.dry_run

    @property
    def adoption(self) -> AdoptionResult:
        """The adoption of this run (``adopt`` first)."""
        if self._adoption is None:
            raise RunStateError(f"run {self.run_id!r} has not adopted yet", location=self._store.describe())
        return self._adoption

    @property
    def committed_version(self) -> int | None:
        return self._committed_version

    @property
    def base_root(self) -> VersionRoot | None:
        """The root of the run's base version (``None``: the lake had none), read once."""
        if self._root is None and self._run.base_version is not None:
            self._root = read_root(self._store, self._run.base_version)
        return self._root

    def narrow(self, scope: frozenset[TopicPartition]) -> None:
        """Read, adopt and stage only the base's partitions in ``scope`` (plus partitions the base does not
        have yet); the commit carries every other partition of the base as it is (format 2 only: its
        commit writes the root from the base's lines). Before ``adopt``.

        Raises:
            RunStateError: the base is not in format 2, or the run adopted already.
        """
        root = self.base_root
        if root is None or root.format_version != MANIFEST_FORMAT_2 or self._adoption is not None:
            raise RunStateError(
                f"run {self.run_id!r} can only narrow a format 2 base before it adopts",
                location=self._store.describe(),
            )
        self._left = root.topic_partitions() - scope
        self._base = root.manifest(scope.__contains__)

    # --- work ------------------------------------------------------------------------------------------
    def adopt(
        self,
        *,
        reader: SegmentReader | None = None,
        listing: Sequence[ObjectMeta] | None = None,
        max_workers: int = DEFAULT_MAX_WORKERS,
    ) -> AdoptionResult:
        """The base plus the segments uploaded since (``lake.adoption``); ``reader`` runs the reads
        elsewhere (the Spark engine's executors), else ``max_workers`` threads read here."""
        self._adoption = adopt_objects(
            self._store,
            base=self.base,
            run=self._run,
            reader=reader,
            listing=listing,
            max_workers=max_workers,
            leave=self._left or frozenset(),
        )
        return self._adoption

    def partitions_after(self, adoption: AdoptionResult) -> frozenset[TopicPartition]:
        """Every partition the lake has once ``adoption`` is committed: the adopted ones and, after
        ``narrow``, the base's partitions the run left unread."""
        adopted = frozenset(state.topic_partition for state in adoption.partitions)
        return adopted | (self._left or frozenset())

    def write_file(self, name: str, document: object) -> str:
        """Write ``document`` as JSON into the run's folder (invisible to readers); return the key."""
        return write_run_json(self._store, self.run_id, name, document)

    def write_bytes(self, name: str, data: bytes) -> str:
        return write_run_bytes(self._store, self.run_id, name, data)

    def proposed(
        self,
        partitions: Iterable[PartitionState],
        *,
        retired: Iterable[RetiredObject] = (),
        format_version: int | None = None,
    ) -> Manifest:
        """The manifest the run would commit with these ``partitions`` (every partition of the new state)
        and newly ``retired`` objects; retired objects of the base already gone from the listing drop out.
        ``format_version``: the manifest format to commit (default: ``staging.COMMIT_FORMAT``)."""
        present = None if self._adoption is None else self._adoption.present_keys
        return build_manifest(
            self._run,
            base=self.base,
            partitions=partitions,
            newly_retired=retired,
            present_keys=present,
            format_version=format_version,
            carries_parent=self._left is not None,
        )

    def stage(
        self,
        partitions: Iterable[PartitionState],
        *,
        retired: Iterable[RetiredObject] = (),
        always: bool = False,
        format_version: int | None = None,
    ) -> bool:
        """Stage the proposed state in the run's folder when it differs from what was adopted; return
        whether it does (something to commit). ``always`` stages it regardless, without an adoption
        (recovery's fence commits its version as a no-change manifest).

        Raises:
            ManifestFormatError: the proposed manifest breaks an invariant of the format.
        """
        partitions = tuple(partitions)
        retired = tuple(retired)
        self._changed = always or self._differs(partitions, retired)
        if self._changed:
            proposed = self.proposed(partitions, retired=retired, format_version=format_version)
            stage_manifest(self._store, self._run, proposed)
        return self._changed

    def _differs(self, partitions: tuple[PartitionState, ...], retired: tuple[RetiredObject, ...]) -> bool:
        adoption = self.adoption
        read = tuple(state.as_read() for state in partitions)
        return (
            adoption.changed
            or bool(retired)
            or read != tuple(state.as_read() for state in adoption.partitions)
        )

    @property
    def changed(self) -> bool:
        """Whether a new manifest is staged (read back from the run's folder in a resumed transaction)."""
        if self._changed is None:
            self._changed = has_staged_manifest(self._store, self.run_id)
        return self._changed

    # --- the end ---------------------------------------------------------------------------------------
    def commit(
        self, *, validation: Validation | None = None, unchanged_reason: str = NOTHING_TO_CHANGE_REASON
    ) -> RunOutcome:
        """End the run: commit the staged manifest with one conditional PUT, or record why not
        (``unchanged_reason``: what the record says when nothing changed).

        Idempotent: a run that already ended returns how it ended.

        Raises:
            CommitStateUnknownError: the PUT's outcome could not be read back (commit again, or ``recover``).
            RunStateError: the run was aborted for another reason, or its staged objects are missing.
        """
        ended = self.ended()
        if ended is not None:
            return ended
        if validation is not None:
            reason = validation(self)
            if reason is not None:
                return self._end(self.abort(reason, outcome=RunOutcome.REJECTED))
        if self.dry_run:
            return self._end(self.abort(DRY_RUN_REASON, outcome=RunOutcome.DRY_RUN))
        if not self.changed:
            return self._end(self.abort(unchanged_reason, outcome=RunOutcome.NOTHING_TO_CHANGE))
        return self._attempt(lambda: commit_run_version(self._store, self.run_id, clock=self._clock))

    def commit_root(self, root: RootBuilder) -> RunOutcome:
        """End the run by committing ``root``, a format 2 root whose pieces the run wrote itself (the
        streamed bootstrap: nothing is staged); as ``commit``, idempotent, with the same outcomes.

        Raises:
            CommitStateUnknownError, RunStateError: as ``commit``.
        """
        ended = self.ended()
        if ended is not None:
            return ended
        self._changed = True
        return self._attempt(lambda: commit_run_root(self._store, self.run_id, root, clock=self._clock))

    def _attempt(self, commit: Callable[[], int]) -> RunOutcome:
        self._commit_attempted = True
        try:
            self._committed_version = commit()
        except CommitConflictError as conflict:
            self.lost_to = conflict
            return self._end(RunOutcome.LOST)
        return self._end(RunOutcome.COMMITTED)

    def ended(self) -> RunOutcome | None:
        """How the run ended, from its recorded outcome (``None`` while it has not).

        Raises:
            RunStateError: it ended uncleanly (rejected, lost, aborted): there is nothing more to do in it.
        """
        if self._outcome is not None:
            return self._outcome
        recorded = read_outcome(self._store, self.run_id)
        if recorded is None:
            return None
        if not recorded.run_outcome.is_clean:
            raise RunStateError(
                f"run {self.run_id!r} was aborted: {recorded.reason}", location=self._store.describe()
            )
        if recorded.run_outcome is RunOutcome.COMMITTED and recorded.version:
            self._committed_version = recorded.version
        return self._end(recorded.run_outcome)

    def abort(self, reason: str, *, outcome: RunOutcome = RunOutcome.ABORTED) -> RunOutcome:
        """Record that the run gives up, as ``outcome`` (nothing is committed; its objects are swept
        later); returns ``outcome``.

        Raises:
            RunStateError: the run already committed.
        """
        abort_run(self._store, self.run_id, reason=reason, outcome=outcome, clock=self._clock)
        return outcome

    def _end(self, outcome: RunOutcome) -> RunOutcome:
        self._outcome = outcome
        return outcome

    # --- an exception aborts ---------------------------------------------------------------------------
    def __enter__(self) -> Self:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """An exception before the commit aborts the run (best effort) and propagates. Once the commit was
        attempted a failure is left to ``recover``: aborting could contradict a commit whose outcome is
        unknown."""
        if exc is None or self._outcome is not None or self._commit_attempted:
            return
        with contextlib.suppress(KafkaSegmentsError):
            self.abort(f"{self._run.operation} failed before its commit: {exc}")
