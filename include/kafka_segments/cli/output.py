"""How every command prints: one JSON document (``--json``) or the text report, on stdout."""

from __future__ import annotations

import json
import sys
from typing import Any


def print_json(document: dict[str, Any]) -> None:
    """One indented JSON document and a newline."""
    json.dump(document, sys.stdout, indent=2, ensure_ascii=False)
    sys.stdout.write("\n")


def emit(document: dict[str, Any], text: str, *, as_json: bool) -> None:
    """``document`` as JSON when ``as_json``, else ``text`` ending in exactly one newline."""
    if as_json:
        print_json(document)
    else:
        sys.stdout.write(text.rstrip("\n") + "\n")
