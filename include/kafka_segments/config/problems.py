"""What can be wrong with a configuration file: one ``ConfigProblem`` per broken rule, all of them in one
``ConfigError`` (problems about the file itself use the key ``(file)``)."""

from __future__ import annotations

import json
from dataclasses import dataclass

from kafka_segments.errors import LocatedError

FILE_KEY = "(file)"


@dataclass(frozen=True, slots=True)
class ConfigProblem:
    """One broken rule.

    Attributes:
        key: where: ``broker.<name>``, ``topics.<topic>.<name>``, ``topics.<topic>``, a top-level key, or
            ``(file)``.
        value: the value as written (YAML rendering; ``null`` for a missing value).
        rule: the rule it breaks, in Kafka's words where Kafka has the rule.
        line: the line of the file (1-based) when known.
    """

    key: str
    value: str
    rule: str
    line: int | None = None

    @property
    def message(self) -> str:
        """``<key> = <value>: <rule>`` (with the line when known): one self-contained sentence. A problem
        with the file itself is its rule alone (the rule names the line)."""
        if self.key == FILE_KEY:
            return self.rule
        where = f" (line {self.line})" if self.line is not None else ""
        return f"{self.key} = {self.value}{where}: {self.rule}"

    def as_line(self) -> str:
        """The ``problem: <key>: <value>: <rule>`` line that ``config check`` prints."""
        return f"problem: {self.key}: {self.value}: {self.rule}"

    def to_dict(self) -> dict[str, object]:
        return {
            "key": self.key,
            "value": self.value,
            "rule": self.rule,
            "line": self.line,
            "message": self.message,
        }


class ConfigError(LocatedError):
    """The configuration file cannot be used: every problem found, not just the first.

    Attributes:
        location: the file (or the ``source`` given to ``parse_config``).
        problems: every problem, in file order, cross-setting rules last.
    """

    def __init__(self, reason: str, *, location: str, problems: tuple[ConfigProblem, ...] = ()) -> None:
        self.problems = tuple(problems)
        super().__init__(reason, location=location)

    @classmethod
    def from_problems(cls, problems: tuple[ConfigProblem, ...], *, location: str) -> ConfigError:
        first = problems[0].message
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        return cls(f"invalid configuration: {first}{more}", location=location, problems=problems)


def render_value(value: object) -> str:
    """A value as YAML would show it: ``null``, ``true``, ``1000``, ``[compact, delete]``, ``""``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value if value.strip() == value and value else json.dumps(value, ensure_ascii=False)
    if isinstance(value, list | tuple):
        return "[" + ", ".join(render_value(item) for item in value) + "]"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{render_value(k)}: {render_value(v)}" for k, v in value.items()) + "}"
    return str(value)
