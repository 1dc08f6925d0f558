"""Argument types shared by the commands (argparse ``type=`` callables)."""

from __future__ import annotations

import argparse
from collections.abc import Callable


def bounded_int(*, minimum: int, what: str, too_small: str) -> Callable[[str], int]:
    """An argparse type for an integer >= ``minimum``.

    ``what`` names the value in "not <what>: '<text>'"; ``too_small`` is the message for a smaller value,
    with ``{value}`` standing for it."""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not {what}: {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(too_small.format(value=value))
        return value

    return parse
