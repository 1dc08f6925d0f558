"""Loading the kernels leaves SciPy's linear algebra alone (``records.fast.jit``): numba's array functions
are imported without it, no kernel calls a BLAS-backed function, and ``scipy.linalg`` imports as before
afterwards (GX, in the same process as the kernels during a validation, needs it)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.unit

CHILD = """
import sys
from pathlib import Path

from kafka_segments.cli import warm

warm.warm(Path(sys.argv[1]))  # a run and an export: every kernel a run uses, loaded or compiled
import numba.np.arraymath

print("scipy.linalg" in sys.modules, numba.np.arraymath._HAVE_BLAS)
import scipy.linalg
import scipy.linalg.cython_blas

print(scipy.linalg.cython_blas.__name__)
"""


def test_loading_the_kernels_imports_no_scipy_linalg_and_leaves_it_importable(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path / "work")],
        capture_output=True,
        text=True,
        check=False,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.split("\n")[-3:] == ["False False", "scipy.linalg.cython_blas", ""], done.stdout


def test_a_process_that_imported_scipy_linalg_first_keeps_numbas_blas() -> None:
    code = (
        "import scipy.linalg; from kafka_segments.records.fast import jit; import numba.np.arraymath as m;"
        "print(m._HAVE_BLAS)"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=120
    )
    assert (done.returncode, done.stdout.strip()) == (0, "True"), done.stderr[-3000:]
