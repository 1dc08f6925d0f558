from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

__version__ = "0.1.0"


def lazy_exports(package: str, exports: Mapping[str, str]) -> Callable[[str], Any]:
    """A package's ``__getattr__``: imports ``exports[name]`` (a submodule or a full module name) on use."""

    def __getattr__(name: str) -> Any:  # noqa: N807 (a module __getattr__)
        module = exports.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        where = module if module.startswith("kafka_segments.") else f"{package}.{module}"
        return getattr(importlib.import_module(where), name)

    return __getattr__
