"""One differential case, round by round: the same input on both sides, the same ``now``, then every
comparison of ``fidelity.compare``; new dirty data is fed to both sides between rounds."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path

from fidelity.compare import (
    Difference,
    checkpoint_reset,
    compare_checkpoints,
    compare_mtimes,
    compare_report,
    compare_segments,
    compare_txn_indexes,
)
from fidelity.generator import Case
from fidelity.sides import (
    CHECKPOINT_FILES,
    PARTITION,
    config_yaml,
    export_listing,
    kafka_txn_indexes,
    oracle_clean,
    product_adopt,
    product_export,
    product_mtimes,
    product_run,
    product_txn_indexes,
    write_round,
    write_start,
)

SUITE = "tests/fidelity/test_differential.py"


@dataclass(frozen=True)
class RoundDifference:
    round: int
    now: int
    difference: Difference

    def __str__(self) -> str:
        return f"round {self.round} (now {self.now}) {self.difference}"


def reproducer(seed: int, *, scale: int = 1) -> str:
    """The one-line command that reruns ``seed`` alone."""
    scaled = f" KAFKA_SEGMENTS_FIDELITY_SCALE={scale}" if scale != 1 else ""
    return (
        f"KAFKA_ORACLE=<launcher> KAFKA_SEGMENTS_FIDELITY_SEEDS={seed}{scaled} "
        f".venv/bin/pytest -n 0 {SUITE}::test_kafka_and_kafka_segments_agree"
    )


def run_case(
    case: Case, work: Path, *, launcher: str, report_only: frozenset[str] = frozenset()
) -> list[RoundDifference]:
    """Every difference between Kafka and the product over the case's rounds (work dirs kept in ``work``).

    The case stops after the first round with a difference, unless every difference of that round is one of
    ``report_only`` (checks of the report alone: both sides' logs are still the same)."""
    kafka_dir, lake = work / "kafka", work / "lake"
    for side in (kafka_dir, lake):
        write_start(case, side)
    config = work / "config.yaml"
    config.write_text(config_yaml(case.props, dedupe_buffer_size=case.dedupe_buffer_size))
    found: list[RoundDifference] = []
    for number, round_ in enumerate(case.rounds):
        for side in (kafka_dir, lake):
            write_round(round_, side / PARTITION)
        if number == 0:
            product_adopt(lake, round_.now)
        bases = sorted(int(path.stem) for path in (kafka_dir / PARTITION).glob("*.log"))
        kafka = oracle_clean(
            launcher, kafka_dir, round_.now, props=case.props, dedupe_buffer_size=case.dedupe_buffer_size
        )
        report = product_run(lake, config, round_.now, work / f"report-{number}.json")
        export = work / f"export-{number}"
        shutil.rmtree(export, ignore_errors=True)
        product_export(lake, export)
        written = product_txn_indexes(lake, report["run_id"])
        differences = [
            *compare_segments(kafka["segments"], export_listing(launcher, export, kafka["segments"])),
            *compare_mtimes(kafka["segments"], product_mtimes(lake)),
            *compare_txn_indexes(kafka_txn_indexes(kafka_dir, written), written),
            *compare_checkpoints(kafka_dir, export, CHECKPOINT_FILES, reset_to=checkpoint_reset(kafka)),
            *compare_report(kafka, report, bases),
        ]
        found.extend(RoundDifference(number, round_.now, d) for d in differences)
        if any(d.check not in report_only for d in differences):
            break  # later rounds would start from different states
    return found
