"""GX is imported without its Spark and SQL integrations (``segment_quality.gx_import``): a validation
process loads neither PySpark nor SQLAlchemy, and both stay importable afterwards."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from segment_quality.gx_import import UNUSED_ENGINES, engines_hidden

pytestmark = pytest.mark.quality

ABSENT = "kafka_segments_no_such_package"


def test_a_hidden_package_cannot_be_imported_inside_the_block_and_can_after() -> None:
    with engines_hidden(("json", ABSENT, "colorsys")) as hidden:
        assert "json" not in hidden  # already imported: left alone
        assert ABSENT in hidden
        with pytest.raises(ImportError):
            __import__(ABSENT)
        import json as still_there

        assert still_there is json
    assert ABSENT not in sys.modules
    assert "colorsys" not in sys.modules or sys.modules["colorsys"] is not None
    import colorsys

    assert colorsys.rgb_to_hsv(0.0, 0.0, 0.0) == (0.0, 0.0, 0.0)


def test_importing_gx_loads_no_spark_or_sql_engine_and_leaves_them_importable() -> None:
    code = (
        "import sys, json\n"
        "from segment_quality.gx_runtime import _gx\n"
        "_gx()\n"
        f"loaded = sorted(n for n in {UNUSED_ENGINES!r} if sys.modules.get(n) is not None)\n"
        "blocked = sorted(n for n in sys.modules if sys.modules[n] is None and '.' not in n)\n"
        "import pyspark, sqlalchemy\n"
        "gx = 'great_expectations' in sys.modules\n"
        "print(json.dumps({'loaded': loaded, 'blocked': blocked, 'gx': gx}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    out = json.loads(done.stdout)
    assert out == {"loaded": [], "blocked": [], "gx": True}


def test_gx_imports_in_a_process_that_imported_pyspark_first_and_has_no_main_file() -> None:
    """A ``python -c`` process (no ``__main__`` file, like an xdist worker) that imported PySpark before GX:
    Spark Connect's import check would ``sys.exit(0)`` there (pandas newer than PySpark supports), so GX's
    import must not load it."""
    code = (
        "import sys, json, pyspark\n"
        "from segment_quality.gx_runtime import _gx\n"
        "_gx()\n"
        "print(json.dumps({'gx': 'great_expectations' in sys.modules,"
        " 'connect': sys.modules.get('pyspark.sql.connect') is not None}))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert json.loads(done.stdout) == {"gx": True, "connect": False}
