"""The numba code sits behind one door: ``kafka_segments.records.fast``.

Outside that package, the library imports only what its ``__init__`` exports: never one of its modules, never
numba itself; the benchmarks likewise keep to the door (they may import numba, to report its version). Inside
it, modules import each other freely.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
LIBRARY = ROOT / "include" / "kafka_segments"
DOOR = "kafka_segments.records.fast"
INSIDE = LIBRARY / "records" / "fast"


def _module_name(path: Path) -> str:
    parts = path.relative_to(LIBRARY.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _package(path: Path) -> str:
    name = _module_name(path)
    return name if path.name == "__init__.py" else name.rpartition(".")[0]


def _imported(source: str, package: str) -> set[str]:
    """Every module ``source`` (a module of ``package``) imports; a name imported from a module is
    included as ``module.name`` (it may be a submodule)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0]
                base = f"{anchor}.{base}" if base else anchor
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def _offences(source: str, package: str, *, numba_allowed: bool = False) -> list[str]:
    """The imports that pass the door: a module inside it, or numba (llvmlite) directly."""
    return sorted(
        name
        for name in _imported(source, package)
        if (not numba_allowed and name.split(".")[0] in {"numba", "llvmlite"})
        or (name.startswith(f"{DOOR}.") and _is_module(name[len(DOOR) + 1 :].split(".")[0]))
    )


def _is_module(name: str) -> bool:
    return (INSIDE / f"{name}.py").is_file() or (INSIDE / name / "__init__.py").is_file()


def _outside_files() -> list[Path]:
    library = [p for p in LIBRARY.rglob("*.py") if INSIDE not in p.parents]
    return sorted(library + list((ROOT / "bench").rglob("*.py")))


def test_nothing_outside_the_door_imports_a_kernel_module_or_numba() -> None:
    offenders = {}
    for path in _outside_files():
        library = LIBRARY in path.parents
        found = _offences(path.read_text(), _package(path) if library else "bench", numba_allowed=not library)
        if found:
            offenders[str(path.relative_to(ROOT))] = found
    assert offenders == {}


def test_every_numba_module_is_inside_the_door() -> None:
    """numba is imported by ``jit`` (the kernels' decorator) and the ``*_kernels`` modules, and every kernel
    module compiles through ``jit.njit``."""
    imports = {
        path.relative_to(LIBRARY).as_posix(): _imported(path.read_text(), _package(path))
        for path in LIBRARY.rglob("*.py")
    }
    using = {path for path, names in imports.items() if "numba" in {name.split(".")[0] for name in names}}
    kernels = {f"records/fast/{path.name}" for path in INSIDE.glob("*_kernels.py")}
    assert using <= {*kernels, "records/fast/jit.py"}
    assert "records/fast/jit.py" in using
    assert {path for path in kernels if f"{DOOR}.jit.njit" in imports[path]} == kernels
    assert {"decode_kernels.py", "key_kernels.py", "lz4_kernels.py"} <= {p.name for p in INSIDE.iterdir()}


def test_the_rule_catches_an_offender() -> None:
    source = (
        "from kafka_segments.records.fast import key_kernels as _k\n"
        "from kafka_segments.records.fast.decode import scan_header_table\n"
        "import kafka_segments.records.fast.lz4_kernels\n"
        "from kafka_segments.records.fast import RecordColumns, decode_record_columns\n"
        "from ..records.fast import group_kernels\n"
        "from numba import njit\n"
    )
    assert _offences(source, "kafka_segments.compaction") == [
        "kafka_segments.records.fast.decode",
        "kafka_segments.records.fast.decode.scan_header_table",
        "kafka_segments.records.fast.group_kernels",
        "kafka_segments.records.fast.key_kernels",
        "kafka_segments.records.fast.lz4_kernels",
        "numba",
        "numba.njit",
    ]
