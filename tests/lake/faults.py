"""``FaultyStore``: an ``ObjectStore`` that delegates to another one and fails on command.

A test wraps a real store, adds rules, and hands the wrapper to the code under test::

    faulty = FaultyStore(store)
    faulty.fail("put", key=manifest_key(2), when=AFTER)          # the PUT happens, its response is lost
    faulty.fail("get", key=lambda key: key.endswith(".log"), nth=None, error=StoreAccessError(...))
    ...
    assert not faulty.calls_to("get", lambda key: key.endswith(".log"))   # no segment body was read

A rule matches calls by operation (``get``, ``get_range``, ``head``, ``list``, ``put``, ``delete``,
``delete_many``) and key (``None``: any key; a string: that exact key; a predicate). ``list`` is matched on
its prefix, ``delete_many`` on each of its keys (the call matches when one of them does).

* ``when=BEFORE`` (default): the operation does not happen, the call raises.
* ``when=AFTER``: the operation happens, then the call raises (a lost response).
* ``nth=1`` (default): only the n-th matching call fails (1-based, counted per rule); ``nth=None``: every
  matching call fails.
* ``error``: the exception to raise (default: ``TransientStoreError`` naming the key), or a callable taking
  the ``Call`` that returns the exception to raise, or ``None`` to let the call go on undisturbed (a hook:
  kill the process, wait at a barrier, count …).

Every call is recorded in ``calls`` as ``Call(operation, key)`` (``delete_many``: one entry per key, ``list``:
the prefix). Rules and records are guarded by a lock, so threads may share one wrapper. The wrapper pickles
when its inner store and its rules do (lambdas do not).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, TypeVar

from kafka_segments.errors import TransientStoreError
from kafka_segments.storage import ObjectMeta, ObjectStore, Overwrite, PutMode, PutResult

Operation = Literal["get", "get_range", "head", "list", "put", "delete", "delete_many"]
OPERATIONS: frozenset[str] = frozenset({"get", "get_range", "head", "list", "put", "delete", "delete_many"})
When = Literal["before", "after"]
BEFORE: When = "before"
AFTER: When = "after"

T = TypeVar("T")


class Call(NamedTuple):
    """One store call as the wrapper saw it."""

    operation: str
    key: str


KeyMatcher = str | Callable[[str], bool] | None
ErrorSpec = BaseException | Callable[[Call], BaseException | None] | None


@dataclass
class Rule:
    """One injected fault (see the module docstring); ``matched`` counts the calls it matched so far."""

    operation: str
    key: KeyMatcher = None
    when: When = BEFORE
    error: ErrorSpec = None
    nth: int | None = 1
    matched: int = field(default=0)
    fired: int = field(default=0)

    def matches(self, operation: str, keys: Iterable[str]) -> bool:
        if operation != self.operation:
            return False
        if self.key is None:
            return True
        if isinstance(self.key, str):
            return any(key == self.key for key in keys)
        return any(self.key(key) for key in keys)


Firings = list[tuple[Rule, Call]]


class FaultyStore:
    """An ``ObjectStore`` that forwards to ``inner``, applying the rules added with ``fail``."""

    def __init__(self, inner: ObjectStore) -> None:
        self.inner = inner
        self.rules: list[Rule] = []
        self.calls: list[Call] = []
        self._lock = threading.Lock()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        del state["_lock"]
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"FaultyStore({self.inner!r}, rules={len(self.rules)})"

    # -- configuring ---------------------------------------------------------------------------------------

    def fail(
        self,
        operation: Operation,
        *,
        key: KeyMatcher = None,
        when: When = BEFORE,
        error: ErrorSpec = None,
        nth: int | None = 1,
    ) -> Rule:
        """Add a rule (see the module docstring) and return it (``rule.fired`` tells whether it fired)."""
        if operation not in OPERATIONS:
            raise ValueError(f"unknown store operation {operation!r}; one of {sorted(OPERATIONS)}")
        if when not in (BEFORE, AFTER):
            raise ValueError(f"when must be {BEFORE!r} or {AFTER!r}, not {when!r}")
        if nth is not None and nth < 1:
            raise ValueError(f"nth counts matching calls from 1, got {nth}")
        rule = Rule(operation, key=key, when=when, error=error, nth=nth)
        with self._lock:
            self.rules.append(rule)
        return rule

    def clear(self) -> None:
        """Remove every rule (recorded calls stay)."""
        with self._lock:
            self.rules.clear()

    def calls_to(self, operation: Operation, key: KeyMatcher = None) -> list[Call]:
        """The recorded calls of ``operation`` whose key matches ``key`` (as a rule matches it)."""
        probe = Rule(operation, key=key)
        with self._lock:
            return [call for call in self.calls if probe.matches(call.operation, (call.key,))]

    # -- the ObjectStore protocol --------------------------------------------------------------------------

    def describe(self) -> str:
        return self.inner.describe()

    def location(self, key: str) -> str:
        return self.inner.location(key)

    def get(self, key: str) -> bytes:
        return self._run("get", [key], lambda: self.inner.get(key))

    def get_range(self, key: str, *, start: int, end: int, if_match: str | None = None) -> bytes:
        return self._run(
            "get_range", [key], lambda: self.inner.get_range(key, start=start, end=end, if_match=if_match)
        )

    def head(self, key: str) -> ObjectMeta:
        return self._run("head", [key], lambda: self.inner.head(key))

    def list(self, prefix: str = "", *, start_after: str | None = None) -> Iterator[ObjectMeta]:
        # Listed eagerly, so that a fault fires at the call and not at the first next().
        return iter(self._run("list", [prefix], lambda: [*self.inner.list(prefix, start_after=start_after)]))

    def list_folders(self, prefix: str = "") -> Iterator[str]:
        return iter(self._run("list_folders", [prefix], lambda: [*self.inner.list_folders(prefix)]))

    def put(self, key: str, data: bytes, *, mode: PutMode = Overwrite()) -> PutResult:  # noqa: B008
        return self._run("put", [key], lambda: self.inner.put(key, data, mode=mode))

    def delete(self, key: str) -> None:
        self._run("delete", [key], lambda: self.inner.delete(key))

    def delete_many(self, keys: Iterable[str]) -> None:
        keys = list(keys)
        self._run("delete_many", keys, lambda: self.inner.delete_many(keys))

    # -- the machinery -------------------------------------------------------------------------------------

    def _run(self, operation: str, keys: Sequence[str], action: Callable[[], T]) -> T:
        before, after = self._due(operation, keys)
        for rule, call in before:
            self._raise(rule, call)
        result = action()
        for rule, call in after:
            self._raise(rule, call)
        return result

    def _due(self, operation: str, keys: Sequence[str]) -> tuple[Firings, Firings]:
        """Record the call and pick the rules that fire on it (before, after)."""
        due: dict[When, Firings] = {BEFORE: [], AFTER: []}
        with self._lock:
            self.calls.extend(Call(operation, key) for key in keys)
            for rule in self.rules:
                if not rule.matches(operation, keys):
                    continue
                rule.matched += 1
                if rule.nth is None or rule.matched == rule.nth:
                    rule.fired += 1
                    matched_key = next(
                        (k for k in keys if rule.matches(operation, (k,))), keys[0] if keys else ""
                    )
                    due[rule.when].append((rule, Call(operation, matched_key)))
        return due[BEFORE], due[AFTER]

    def _raise(self, rule: Rule, call: Call) -> None:
        if rule.error is None:
            raise TransientStoreError(
                f"injected fault: {call.operation} failed {rule.when} the operation",
                location=self.inner.location(call.key),
            )
        if isinstance(rule.error, BaseException):
            raise rule.error
        error = rule.error(call)
        if error is not None:
            raise error


__all__ = ["AFTER", "BEFORE", "OPERATIONS", "Call", "FaultyStore", "Rule"]
