"""The lazily exported packages: ``exports_by_module`` groups, and every listed name resolves."""

from __future__ import annotations

import importlib

import pytest
from kafka_segments import exports_by_module


def test_exports_by_module_maps_every_name_to_its_module() -> None:
    exports = exports_by_module({"base": "Engine TaskRunner", "kafka_segments.state": "Manifest"})
    assert exports == {"Engine": "base", "TaskRunner": "base", "Manifest": "kafka_segments.state"}


@pytest.mark.parametrize(
    "package", ["kafka_segments.lake", "kafka_segments.offsets", "kafka_segments.pipeline.engines"]
)
def test_every_lazy_export_resolves(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__ == sorted(module._EXPORTS)
    for name in module.__all__:
        getattr(module, name)  # imports the module _EXPORTS names for it; AttributeError if it lacks it
