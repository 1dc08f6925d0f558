"""Lake objects nested a hundred thousand levels deep (issue 38, point 4): every JSON the lake reads goes
through one decoder with the nesting limit (``lake.json_document``), so a head manifest of ``[`` x 100,000
is one line naming the manifest from ``describe``, ``recover``, ``run`` and ``dump`` (exit 1) and a
``ManifestFormatError`` from ``read_lake`` — never a ``RecursionError`` traceback; run records, the run
folder's documents, the run report and an older manifest of the history likewise."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from kafka_segments.errors import ManifestFormatError
from kafka_segments.lake.layout import manifest_key, run_prefix, run_record_key
from kafka_segments.lake.runs import read_run
from kafka_segments.pipeline.run_files import read_run_json
from kafka_segments.reading import read_lake
from kafka_segments.storage import LocalStore
from kafka_segments.storage.base import Overwrite
from kafka_segments.views.lake_view_history import version_summary
from kafka_segments.views.run_report import read_report
from kit import FakeClock
from lake.read_helpers import rich_lake

pytestmark = pytest.mark.e2e

CLI = Path(sys.executable).parent / "kafka-segments"
DEEP = b"[" * 100_000
NESTED = "nested deeper than 100 levels of lists and objects"


@pytest.fixture(scope="module")
def deep_head(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A lake whose head manifest is ``DEEP``."""
    root = tmp_path_factory.mktemp("deep-lake") / "lake"
    store = LocalStore(root)
    head = rich_lake(store, FakeClock())
    store.put(manifest_key(head.version), DEEP, mode=Overwrite())
    return root


@pytest.mark.parametrize(
    "command",
    [
        ["describe"],
        ["recover"],
        ["run", "--engine", "inline"],
        ["dump", "--topic", "orders", "--partition", "0"],
    ],
)
def test_a_deep_head_manifest_is_one_line_naming_it(
    deep_head: Path, tmp_path: Path, command: list[str]
) -> None:
    config = tmp_path / "config.yaml"
    config.write_text("topics: {}\n")
    extra = ["--config", str(config)] if command[0] == "run" else []
    done = subprocess.run(
        [str(CLI), command[0], "--lake", str(deep_head), *command[1:], *extra],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
    )

    assert done.returncode == 1, done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    *progress, line = done.stderr.splitlines()
    assert all(note.startswith("[") for note in progress)  # run's stage notes, e.g. "[run] recover: ..."
    assert f"{deep_head}/{manifest_key(1)}: manifest is {NESTED}" in line


def test_read_lake_refuses_a_deep_head_manifest(deep_head: Path) -> None:
    with pytest.raises(ManifestFormatError, match=NESTED):
        list(read_lake(str(deep_head), {"subscribe": "orders"}))


def test_every_other_lake_document_refuses_deep_nesting(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    rich_lake(store, FakeClock())
    run_id = "r1"
    for key in (
        run_record_key(run_id),
        run_prefix(run_id) + "staged.json",
        run_prefix(run_id) + "report.json",
    ):
        store.put(key, DEEP)
    store.put(manifest_key(1), DEEP, mode=Overwrite())

    with pytest.raises(ManifestFormatError, match=f"run record is {NESTED}"):
        read_run(store, run_id)
    with pytest.raises(ManifestFormatError, match=f"staged.json is {NESTED}"):
        read_run_json(store, run_id, "staged.json")
    with pytest.raises(ManifestFormatError, match=f"run report is {NESTED}"):
        read_report(store, run_id)
    with pytest.raises(ManifestFormatError, match=f"manifest is {NESTED}"):
        version_summary(store, 1)


def test_an_integer_of_too_many_digits_is_refused_too(tmp_path: Path) -> None:
    store = LocalStore(tmp_path / "lake")
    head = rich_lake(store, FakeClock())
    store.put(manifest_key(head.version), b'{"format_version": ' + b"9" * 5000 + b"}", mode=Overwrite())

    with pytest.raises(ManifestFormatError, match="manifest is not usable JSON"):
        list(read_lake(store, {"subscribe": "orders"}))
