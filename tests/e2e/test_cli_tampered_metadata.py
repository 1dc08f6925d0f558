"""Every metadata object of a lake, tampered with one at a time, and the commands that read it: one clear line
naming what and where, or a correct answer, never a traceback.

A small format 2 lake (two topics of two partitions, an adoption and two runs: roots, partition manifests,
chunks, run folders, checkpoints, gc's record) is copied for each case; one object is deleted, cut in half,
has a byte flipped or a JSON value swapped for one of another type, and one of ``describe``, ``run``,
``export``, ``gc``, ``recover`` or ``plan`` runs in this process (``cli_in_process``: an exception escaping
``main`` fails the test as a traceback would). A scratch run of this over every object and mutation (1,380
cases) found none; the 80 cases here are a seeded sample of them, other objects each time the lake
changes shape.
"""

from __future__ import annotations

import json
import random
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from cli_harness import cli_in_process
from kafka_segments.records import CompressionType, Record, build_batch

pytestmark = pytest.mark.e2e

T0 = 1_790_000_000_000
HOUR = 3_600_000
CASES = 80
SWAPS: tuple[Any, ...] = (None, -1, 2**70, "x", "", [], {}, 1.5, True, "../../etc")
CONFIG = """topics:
  c:
    cleanup.policy: compact
    min.cleanable.dirty.ratio: 0.0
  r:
    retention.ms: 1000
"""


def _segment(lake: Path, name: str, base: int, records: int) -> None:
    folder = lake / name
    folder.mkdir(parents=True, exist_ok=True)
    batches = (
        build_batch(
            [Record(base + i + j, T0 + base + i, b"k%d" % ((base + i + j) % 3), b"v" * 20) for j in range(2)],
            compression=CompressionType.GZIP,
        )
        for i in range(0, records, 2)
    )
    (folder / f"{base:020d}.log").write_bytes(b"".join(batches))


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tampered")
    lake = root / "lake"
    for name in ("c-0", "c-1", "r-0", "r-1"):
        for base, records in ((0, 20), (20, 20), (40, 4)):
            _segment(lake, name, base, records)
    (root / "config.yaml").write_text(CONFIG)
    steps = [
        ("adopt", "--lake", str(lake), "--now", str(T0 + HOUR), "--json"),
        (
            "run",
            "--lake",
            str(lake),
            "--config",
            str(root / "config.yaml"),
            "--now",
            str(T0 + HOUR),
            "--json",
        ),
    ]
    for args in steps:
        assert cli_in_process(*args, aws={}).returncode == 0
    for name in ("c-0", "c-1"):
        _segment(lake, name, 44, 6)
    again = ("run", "--lake", str(lake), "--config", str(root / "config.yaml"), "--now", str(T0 + 2 * HOUR))
    assert cli_in_process(*again, "--json", aws={}).returncode == 0
    return lake


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    if path:
        yield path
    items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, inner in items:
        yield from _paths(inner, (*path, key))


def _swapped(data: bytes, rng: random.Random) -> bytes | None:
    try:
        document = json.loads(data)
    except ValueError:
        return None
    paths = list(_paths(document))
    if not paths:
        return None
    path = rng.choice(paths)
    holder = document
    for key in path[:-1]:
        holder = holder[key]
    holder[path[-1]] = rng.choice([swap for swap in SWAPS if swap != holder[path[-1]]])
    return json.dumps(document).encode()


def _mutations(data: bytes, rng: random.Random) -> list[tuple[str, bytes | None]]:
    flipped = bytearray(data)
    if flipped:
        flipped[rng.randrange(len(flipped))] ^= 0x5A
    found: list[tuple[str, bytes | None]] = [
        ("deleted", None),
        ("cut in half", data[: len(data) // 2]),
        ("a byte flipped", bytes(flipped)),
    ]
    swapped = _swapped(data, rng)
    if swapped is not None:
        found.append(("a JSON value swapped", swapped))
    return found


COMMANDS = ("describe", "run", "export", "gc", "recover", "plan")


def _argv(command: str, lake: Path) -> list[str]:
    """``command`` on ``lake``, its configuration beside it, at a time after the lake's last run."""
    config = ["--config", str(lake.parent / "config.yaml")]
    later = ["--now", str(T0 + 3 * HOUR)]
    options = {
        "describe": ["--json"],
        "run": [*config, *later, "--json"],
        "export": ["--to", f"{lake}-export", "--json"],
        "gc": [*later, "--json"],
        "recover": ["--json"],
        "plan": [*config, *later],
    }
    return [command, "--lake", str(lake), *options[command]]


def _cases(lake: Path) -> list[tuple[Path, str, bytes | None, str]]:
    rng = random.Random(33)
    objects = sorted(
        path.relative_to(lake)
        for path in lake.rglob("*")
        if path.is_file() and path.suffix not in {".log", ".index", ".timeindex"}
    )
    every = [
        (relative, label, content, command)
        for relative in objects
        for label, content in _mutations((lake / relative).read_bytes(), rng)
        for command in COMMANDS
    ]
    return rng.sample(every, min(CASES, len(every)))


def test_a_tampered_metadata_object_gets_a_clear_line_never_a_traceback(lake: Path, tmp_path: Path) -> None:
    cases = _cases(lake)
    assert any(str(relative).startswith("_kafka_segments/partitions") for relative, *_ in cases)
    for number, (relative, label, content, command) in enumerate(cases):
        copy = tmp_path / f"case-{number}" / "lake"
        shutil.copytree(lake, copy)
        shutil.copy(lake.parent / "config.yaml", copy.parent / "config.yaml")
        if content is None:
            (copy / relative).unlink()
        else:
            (copy / relative).write_bytes(content)

        done = cli_in_process(*_argv(command, copy), aws={})

        where = f"{relative} {label}, {command}"
        assert "Traceback" not in done.stderr, where
        if done.returncode != 0:
            last = done.stderr.strip().splitlines()[-1]
            assert last.startswith(f"kafka-segments {command}: "), f"{where}: {done.stderr[-500:]}"
