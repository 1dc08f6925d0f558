"""The library's layers as a contract (docs/architecture.md): imports point downward only, no module imports
itself back through others, and the adapters (``orchestration``, ``segment_quality``, ``spark_source``) stay
above it.

Every import counts: at module level, inside functions, and under ``TYPE_CHECKING``.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

INCLUDE = Path(__file__).resolve().parents[2] / "include"
LIBRARY = "kafka_segments"

ARCHITECTURE = INCLUDE.parent / "docs" / "architecture.md"
_TABLE_ROW = re.compile(r"(?P<number>[ \d]\d|  )  (?P<packages>\w+(?:  \w+)*)(?: {3,}.*)?")
"""A line of the layer table: its number (blank when a layer's packages go on), packages two spaces apart,
then what they are, three or more spaces on. A line that only goes on describing is none."""


def layers_of(page: str) -> tuple[frozenset[str], ...]:
    """Bottom to top, the layers of the table that follows ``## The layers`` in ``page`` (the first fenced
    block after it): a package imports the packages of lower lines only."""
    section = page[page.index("\n## The layers\n") :]
    block = section.split("```\n", 2)[1]
    rows: dict[int, set[str]] = {}
    number = 0
    for line in block.splitlines():
        row = _TABLE_ROW.fullmatch(line)
        if row is None:
            continue
        if row["number"].strip():
            number = int(row["number"])
            rows[number] = set()
        rows[number].update(row["packages"].split())
    assert sorted(rows) == list(range(1, len(rows) + 1)), f"layer numbers of {ARCHITECTURE}: {sorted(rows)}"
    return tuple(frozenset(rows[number]) for number in range(1, len(rows) + 1))


@functools.cache
def layers() -> tuple[frozenset[str], ...]:
    """The layers of docs/architecture.md's table, the one copy."""
    return layers_of(ARCHITECTURE.read_text())


ROOT = "(root)"
"""``kafka_segments/__init__.py``: the version and the lazy-export helper, importable from every layer."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(INCLUDE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _modules(package: str) -> dict[str, Path]:
    return {_module_name(path): path for path in sorted((INCLUDE / package).rglob("*.py"))}


def _imports(path: Path, known: Mapping[str, Path]) -> Iterator[str]:
    """The known modules ``path`` imports (``from package import submodule`` names the submodule)."""
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            submodules = [f"{node.module}.{alias.name}" for alias in node.names]
            found = [name for name in submodules if name in known]
            yield from found
            if len(found) < len(submodules) and node.module in known:
                yield node.module


def _graph(packages: tuple[str, ...]) -> dict[str, set[str]]:
    known: dict[str, Path] = {}
    for package in packages:
        known.update(_modules(package))
    return {name: set(_imports(path, known)) - {name} for name, path in known.items()}


def _package(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ROOT


def _layer(package: str) -> int:
    for index, layer in enumerate(layers()):
        if package in layer:
            return index
    raise AssertionError(f"package kafka_segments.{package} is in no layer of docs/architecture.md")


def _upward(graph: Mapping[str, set[str]]) -> list[str]:
    offenders = []
    for module, targets in sorted(graph.items()):
        source = _package(module)
        for target in sorted(targets):
            aimed = _package(target)
            if aimed in (source, ROOT) or (source == ROOT and module == LIBRARY):
                continue
            if _layer(aimed) >= _layer(source):
                offenders.append(f"{module} -> {target}")
    return offenders


def _cycles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph.get(node, ())):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_every_package_has_a_layer() -> None:
    packages = {_package(module) for module in _modules(LIBRARY)} - {ROOT}
    assert sorted(package for package in packages if not any(package in layer for layer in layers())) == []


def test_every_package_of_the_table_exists() -> None:
    packages = {_package(module) for module in _modules(LIBRARY)} - {ROOT}
    assert sorted(name for layer in layers() for name in layer if name not in packages) == []


def test_the_table_is_read_line_by_line() -> None:
    page = """intro

## The layers

```
 3  cli                                    the command line
 2  lake  views                            the lake: layout, and a description
                                           that goes on
    pipeline                               one more package of layer 2
 1  errors                                 every error
```
"""
    assert layers_of(page) == (
        frozenset({"errors"}),
        frozenset({"lake", "views", "pipeline"}),
        frozenset({"cli"}),
    )
    assert layers()[0] == frozenset({"redaction"})
    assert layers()[-1] == frozenset({"__main__"})


def test_imports_point_downward_only() -> None:
    assert _upward(_graph((LIBRARY,))) == []


def test_no_import_cycles_between_modules() -> None:
    assert _cycles(_graph((LIBRARY, "orchestration", "segment_quality", "spark_source"))) == []


def test_the_library_imports_no_adapter() -> None:
    graph = _graph((LIBRARY, "orchestration", "segment_quality", "spark_source"))
    assert [
        f"{module} -> {target}"
        for module, targets in sorted(graph.items())
        if module.startswith(f"{LIBRARY}.")
        for target in sorted(targets)
        if not target.startswith(LIBRARY)
    ] == []


def test_the_rules_catch_an_upward_import_and_a_cycle() -> None:
    graph = {
        "kafka_segments.lake.commit": {"kafka_segments.pipeline.stages"},
        "kafka_segments.pipeline.stages": {"kafka_segments.lake.commit"},
        "kafka_segments.retention.plan": {"kafka_segments.state.manifest"},
    }
    assert _upward(graph) == ["kafka_segments.lake.commit -> kafka_segments.pipeline.stages"]
    assert _cycles(graph) == [["kafka_segments.lake.commit", "kafka_segments.pipeline.stages"]]


def _private_reach(graph: Mapping[str, set[str]]) -> list[str]:
    """Imports of another package's private modules (``_name``) — a package's own modules may use them."""
    offenders = []
    for module, targets in sorted(graph.items()):
        for target in sorted(targets):
            parts = target.split(".")
            private = [
                index for index, part in enumerate(parts) if part.startswith("_") and part != "__main__"
            ]
            if private and not module.startswith(".".join(parts[: private[0]]) + "."):
                offenders.append(f"{module} -> {target}")
    return offenders


def test_other_packages_import_public_names_not_private_modules() -> None:
    assert _private_reach(_graph((LIBRARY, "orchestration", "segment_quality", "spark_source"))) == []


def test_the_rule_catches_a_private_module_import() -> None:
    graph = {
        "kafka_segments.lake.scan": {"kafka_segments.segment._slots"},
        "kafka_segments.segment.writer": {"kafka_segments.segment._slots"},
    }
    assert _private_reach(graph) == ["kafka_segments.lake.scan -> kafka_segments.segment._slots"]


MODULE_LINES_LIMIT = 400
"""Split a module by concern before it grows past this."""
INCLUDE_LINES_LIMIT = 46_600
"""include/ stays below the size it had before the one-run redesign (issue 18): new code pays for itself;
a new feature raises it by what its new modules add (issues 22-24: reading, lake view, metrics, warm-up;
gc's retentions, ``lake/run_folders.py`` and ``pipeline/run_gc.py``: 150; issue 35's conditional-write
check, ``storage/s3_probe.py``: 200; issue 33's etags of a local lake kept across processes,
``storage/local_etags.py``: 300; the third wave's session, 1,600 more: issue 33's manifest format 2,
``lake/format2.py`` and ``lake/upgrade.py``; issue 36's run home, ``lake/run_folder.py`` and
``pipeline/sequence.py``, less ``pipeline/run_files.py`` and what the doors no longer spell out; issue 38's
checked readers, ``views/run_report.py``, ``views/display_text.py``, ``lake/json_document.py`` and the
reader's bounded pieces); session 20, 900 more: issue 33's version roots and summaries, the run and gc
that read only the partitions they may change (``lake/roots.py``, ``lake/listing_scope.py``,
``lake/gc_scope.py``, ``state/summary.py``, ``retention/summary_rules.py``, ``compaction/summary_rules.py``,
``pipeline/run_scope.py``);
issue 38's pinned ``.index`` for split reads, ``lake/index_pin.py``: 100; issue 35's Airflow on PostgreSQL,
``orchestration/metadata_db.py``: 200; issue 37's operator details, 400: the lake view's dry runs, scales
and Kafka's names explained, a dry run's report in the conditional, ``demo --lake``, unknown topics
refused; issue 37's one "next run" and links, 450: ``offsets/resolved.py`` (the snapshot a run uses, named
with its age by every door), the run files the lake view serves and links to (``orchestration/
lake_run_files.py``), the DAG run's extra links to them (``orchestration/lake_run_links.py``) and the lake
view's Preview now (``orchestration/lake_view_preview.py``); issue 37's dry runs in the DAG, 100: commit
and gc skipped, the metrics line that says what was sent (``orchestration/metrics.py``); issue 34's topics as
Iceberg tables, 1,200: ``tables/`` (schema, catalog, settings, files, changes, sync, report),
``cli/tables_cmd.py`` and the ``kafka_segments.table.*`` settings; issue 33's streamed
bootstrap in format 2, 500: ``lake/bootstrap.py``, its spooled report ``lake/bootstrap_report.py``, the
grouped reads and the commit of a root without a staged manifest; issue 33's lake view
from a format 2 root's summaries, 250: ``views/lake_view_reads.py`` (which partitions the page reads),
``lake/summary_scope.py`` (the run's and the page's one rule) and the compaction outlook from a summary;
issue 34's catalog kept inside the lake, 400: ``tables/lake_catalog.py`` and ``tables/lake_pointers.py``;
issue 33's run listing of each partition's tail, 400: ``lake/tail_listing.py``, the stores' ``start_after``
and ``list_folders``, ``storage/s3_reads.py`` split out of ``storage/s3.py``, the ``full_listing`` switch;
issue 34's tables stage of every run and snapshot expiry, 250: ``pipeline/tables_stage.py``,
``tables/run_stage.py``, ``tables/expiry.py`` and the DAG's ``tables`` task;
issue 33's gc without the whole listing, 250: ``lake/gc_listing.py``, ``lake/gc_record.py``, ``gc --full``
and recover's discard from the partitions a run adopted;
issue 34's JSON values into typed columns, 250: ``tables/json_values.py``, ``config/table_values.py`` and
the ``kafka_segments.table.value.*`` settings; 50: the local etag records' bound on folders kept in memory
(``storage/local_etags.py``) and GX's import hiding Spark Connect (``segment_quality/gx_import.py``);
issue 34's removal of a table's unreferenced files, 250: ``tables/orphans*.py``, ``tables sync --execute``;
issue 33's etag records looked up in their bytes rather than decoded (``storage/local_etags.py``) and a
tail listing's names compared without building keys (``storage/local_files.py``): 100; issue 33's
compaction rounds that keep no inflated records, 300: ``records/fast/steps.py`` (where a step's records are
found again), ``compaction/assembly.py`` (the output batches, rebuilt step by step) and the rebuild's
parts through one reused buffer; 100: the markers' keys kept by row, and transactional segments' headers
built once per table and their markers found from the header table (``HeaderTable.headers_at``,
``AbortedTxnTracker.observe_batch``); 150: LZ4 frames read as Kafka's reader reads them, in the kernel too
(``records/fast/xxh32.py``, ``records/fast/words.py``: headers and block checksums checked in numba; the
fields Kafka's reader skips, skipped by the frame decoder's path); 150: what Kafka's readers accept after a
stream and in a batch (``records/gzip_stream.py``, the JDK's reading of gzip members; the markers Kafka's
log loading reads, checked at adoption; the producer state Kafka's builder refuses to rebuild); 100: the
markers read over columns at adoption, the retained timestamps Kafka's builder refuses."""


def _line_counts() -> dict[str, int]:
    return {
        str(path.relative_to(INCLUDE)): len(path.read_text().splitlines()) for path in INCLUDE.rglob("*.py")
    }


def test_no_module_is_over_the_line_limit() -> None:
    assert {path: n for path, n in _line_counts().items() if n > MODULE_LINES_LIMIT} == {}


def test_include_stays_below_its_line_budget() -> None:
    assert sum(_line_counts().values()) < INCLUDE_LINES_LIMIT
