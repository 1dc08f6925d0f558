"""What ships to users cites only what users have: the docs in ``docs/``, the README, ``bench/RESULTS.md``
or Kafka's own source. No code, help text, docstring or doc may point at design notes that are not part of
the repository."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ("include", "dags", "spark_jobs", "plugins", "scripts", "docs", "bench", "README.md")
SHARED_NOTES = ".." + "/" + "shared"
"""The folder of design notes beside the repository (spelled in pieces, so this file does not cite it)."""
FORBIDDEN = ("DESIGN §", "KAFKA-SEMANTICS", SHARED_NOTES)


def _tracked_files() -> list[Path]:
    """The tracked files under ``SHIPPED`` (every file there when this is not a git checkout)."""
    try:
        listed = subprocess.run(
            ["git", "ls-files", "-z", "--", *SHIPPED], cwd=ROOT, capture_output=True, check=True
        ).stdout
    except (OSError, subprocess.CalledProcessError):
        return [
            path
            for name in SHIPPED
            for path in ([ROOT / name] if (ROOT / name).is_file() else sorted((ROOT / name).rglob("*")))
            if path.is_file()
        ]
    return [ROOT / name for name in listed.decode().split("\0") if name]


def _citations(path: Path, markers: tuple[str, ...] = FORBIDDEN) -> list[str]:
    """``line: text`` for every line of ``path`` that names one of ``markers`` (binary files have none)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError, IsADirectoryError):
        return []
    return [
        f"{number}: {line.strip()}"
        for number, line in enumerate(text.splitlines(), start=1)
        if any(marker in line for marker in markers)
    ]


def test_shipped_files_cite_no_document_users_do_not_have() -> None:
    files = _tracked_files()
    assert any(path.name == "README.md" for path in files)
    offenders = {str(path.relative_to(ROOT)): found for path in files if (found := _citations(path))}
    assert offenders == {}, "cite docs/*.md, README.md, bench/RESULTS.md or Kafka's source instead"


ORACLE_BESIDE = (SHARED_NOTES, "/work" + "/shared")
"""How a file would name the kafka-oracle launcher beside the repository."""
NAMES_THE_ORACLE = frozenset({".ci/run", "tests/unit/test_repo_hygiene.py"})
"""CI exports ``KAFKA_ORACLE`` from it (the rest reads that variable); this file spells it in pieces."""


def test_only_ci_names_what_lies_beside_the_repository() -> None:
    try:
        listed = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout")
    files = [name for name in listed.decode().split("\0") if name and name not in NAMES_THE_ORACLE]
    offenders = {name: found for name in files if (found := _citations(ROOT / name, ORACLE_BESIDE))}
    assert offenders == {}, "read the oracle's path from KAFKA_ORACLE (.ci/run sets it)"


def test_the_rule_catches_every_kind_of_citation(tmp_path: Path) -> None:
    module = tmp_path / "cited.py"
    module.write_text(
        '"""The lake (DESIGN' + ' §3)."""\n'
        "# the rule of KAFKA" + "-SEMANTICS Part L\n"
        f'HELP = "see {SHARED_NOTES}/notes.md"\n'
        'CLEAN = "docs/lake.md"\n',
        encoding="utf-8",
    )
    assert [line.split(":")[0] for line in _citations(module)] == ["1", "2", "3"]


COMPLEXITY_NOQA = re.compile(r"#\s*noqa:\s*(?P<codes>PLR09\d\d(?:\s*,\s*PLR09\d\d)*)(?P<rest>.*)$")


def _unexplained_complexity_exceptions(path: Path) -> list[str]:
    """``line: text`` for every complexity check silenced without a reason after it (``# noqa: PLR0911 -
    why``)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (UnicodeDecodeError, FileNotFoundError):
        return []
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = COMPLEXITY_NOQA.search(line)
        if match is not None and len(match["rest"].strip(" -—:#")) < 10:
            found.append(f"{number}: {line.strip()}")
    return found


def test_every_silenced_complexity_check_says_why() -> None:
    python = [path for path in _tracked_files() if path.suffix == ".py"]
    offenders = {
        str(path.relative_to(ROOT)): found
        for path in python
        if (found := _unexplained_complexity_exceptions(path))
    }
    assert offenders == {}, "write the reason next to the noqa: '# noqa: PLR0913 - <why>'"


def test_the_complexity_rule_wants_a_reason(tmp_path: Path) -> None:
    module = tmp_path / "m.py"
    module.write_text(
        "def f(a, b, c, d, e, f, g, h, i):  # noqa: PLR0913\n"
        "def g(a, b, c, d, e, f, g, h, i):  # noqa: PLR0913 - one argument per header field\n"
    )
    assert _unexplained_complexity_exceptions(module) == [
        "1: def f(a, b, c, d, e, f, g, h, i):  # noqa: PLR0913"
    ]
