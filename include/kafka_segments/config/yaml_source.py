"""Reading the configuration file's YAML into ``broker`` and ``topics`` entries, with line numbers.

PyYAML's safe loader with two changes: scalars resolve like YAML 1.2's core schema (``yes``/``no`` stay
strings, ``010`` is ten, ``1_000`` and ``0x10`` stay strings, and are then refused as Kafka refuses them), and
mapping keys are their text as written, a key that appears twice being a problem (PyYAML keeps the last).

Structure problems are collected, never raised; only a file that is not YAML raises ``yaml.YAMLError``, and
one nesting deeper than ``MAX_NESTING_DEPTH`` raises ``NestingTooDeepError``: the depth is checked while the
document is composed, before PyYAML's composer (which recurses once per level) could run out of stack."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache

import yaml
from yaml.events import MappingStartEvent, SequenceStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode

from kafka_segments.config.problems import ConfigProblem, render_value
from kafka_segments.nesting import check_nesting

TOP_LEVEL_KEYS = ("broker", "topics")

_BOOL = "tag:yaml.org,2002:bool"
_INT = "tag:yaml.org,2002:int"
_FLOAT = "tag:yaml.org,2002:float"


_INTEGER = re.compile(r"^[-+]?[0-9]+$")
_BOOLEAN = re.compile(r"^(?:true|True|TRUE|false|False|FALSE)$")
_FLOATING = re.compile(
    r"^(?:[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$"
)


@cache
def config_loader() -> type[yaml.SafeLoader]:
    """``yaml.SafeLoader`` with YAML 1.2 core-schema booleans, integers and floats (see module doc)."""

    class ConfigYamlLoader(yaml.SafeLoader):
        def __init__(self, stream: str) -> None:
            super().__init__(stream)
            self.nesting = 0

        def compose_node(self, parent: Node | None, index: int) -> Node | None:
            """Every node of the document is composed here (PyYAML recurses through it for each level)."""
            event = self.peek_event()  # type: ignore[no-untyped-call]
            if not isinstance(event, SequenceStartEvent | MappingStartEvent):
                return super().compose_node(parent, index)
            self.nesting += 1
            try:
                mark = event.start_mark
                check_nesting(self.nesting, line=None if mark is None else int(mark.line) + 1)
                return super().compose_node(parent, index)
            finally:
                self.nesting -= 1

    ConfigYamlLoader.yaml_implicit_resolvers = {
        first: [(tag, regexp) for tag, regexp in resolvers if tag not in (_BOOL, _INT, _FLOAT)]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    ConfigYamlLoader.add_implicit_resolver(_BOOL, _BOOLEAN, list("tTfF"))
    ConfigYamlLoader.add_implicit_resolver(_INT, _INTEGER, list("-+0123456789"))
    ConfigYamlLoader.add_implicit_resolver(_FLOAT, _FLOATING, list("-+.0123456789"))
    ConfigYamlLoader.add_constructor(_INT, _construct_decimal_int)
    return ConfigYamlLoader


def _construct_decimal_int(loader: yaml.SafeLoader, node: Node) -> int:
    """Integers are decimal, leading zeros included (YAML 1.2 core schema; Java ``parseLong``)."""
    if not isinstance(node, ScalarNode):
        raise yaml.constructor.ConstructorError(None, None, "expected an integer", node.start_mark)
    return int(loader.construct_scalar(node))


@dataclass(frozen=True, slots=True)
class Entry:
    """One ``name: value`` line of a settings mapping."""

    name: str
    value: object
    line: int


@dataclass(frozen=True, slots=True)
class TopicEntries:
    """One topic of the ``topics`` mapping and its settings."""

    name: str
    line: int
    entries: tuple[Entry, ...]


@dataclass(frozen=True, slots=True)
class RawConfig:
    """The file's content before any setting is parsed, and the structure problems found."""

    broker: tuple[Entry, ...]
    topics: tuple[TopicEntries, ...]
    problems: tuple[ConfigProblem, ...]


def read_yaml(text: str) -> RawConfig:
    """Split the file into broker and topic entries.

    Raises:
        yaml.YAMLError: the text is not one well-formed YAML document (``problem_mark`` has the line).
        NestingTooDeepError: the document nests deeper than ``MAX_NESTING_DEPTH`` (``line`` has the line).
    """
    loader = config_loader()(text)
    try:
        root = loader.get_single_node()
        return _Walker(loader).top_level(root)
    finally:
        loader.dispose()


class _Walker:
    """Walks the composed node tree; keeps the problems it finds."""

    def __init__(self, loader: yaml.SafeLoader) -> None:
        self._loader = loader
        self.problems: list[ConfigProblem] = []

    def top_level(self, root: Node | None) -> RawConfig:
        broker: tuple[Entry, ...] = ()
        topics: tuple[TopicEntries, ...] = ()
        if root is not None and not _is_null(root):
            for entry in self._mapping(root, path="", what="the file"):
                if entry.name == "broker":
                    broker = self._settings(entry, path="broker")
                elif entry.name == "topics":
                    topics = self._topics(entry)
                else:
                    self._unknown_top_level(entry)
        return RawConfig(broker, topics, tuple(self.problems))

    def _topics(self, section: Entry) -> tuple[TopicEntries, ...]:
        node = section.value
        if not isinstance(node, Node) or _is_null(node):
            return ()
        topics = []
        for entry in self._mapping(node, path="topics", what="topics (topic name -> settings)"):
            settings = self._settings(entry, path=f"topics.{entry.name}")
            topics.append(TopicEntries(entry.name, entry.line, settings))
        return tuple(topics)

    def _settings(self, section: Entry, *, path: str) -> tuple[Entry, ...]:
        """A mapping of setting name -> value; each value constructed (scalars and lists)."""
        node = section.value
        if not isinstance(node, Node) or _is_null(node):
            return ()
        settings = []
        for entry in self._mapping(node, path=path, what="a mapping of setting names to values"):
            value_node = entry.value
            if not isinstance(value_node, Node):
                continue
            try:
                value = self._loader.construct_object(value_node, deep=True)
            except yaml.YAMLError as exc:
                rule = f"cannot read the value: {getattr(exc, 'problem', None) or exc}"
                key = f"{path}.{entry.name}"
                self.problems.append(ConfigProblem(key, node_text(value_node), rule, entry.line))
                continue
            settings.append(Entry(entry.name, value, entry.line))
        return tuple(settings)

    def _mapping(self, node: Node, *, path: str, what: str) -> list[Entry]:
        """The key/value node pairs of a mapping node (values left as nodes), duplicates reported."""
        key = path or "(top level)"
        if not isinstance(node, MappingNode):
            self.problems.append(ConfigProblem(key, node_text(node), f"must be {what}", _line(node)))
            return []
        seen: dict[str, int] = {}
        entries = []
        for key_node, value_node in node.value:
            if not isinstance(key_node, ScalarNode):
                self.problems.append(
                    ConfigProblem(key, node_text(key_node), "keys must be plain names", _line(key_node))
                )
                continue
            name, line = key_node.value, _line(key_node)
            if name in seen:
                where = f"{path}.{name}" if path else name
                rule = f"duplicate key (first at line {seen[name]}): YAML would silently keep only one"
                self.problems.append(ConfigProblem(where, node_text(value_node), rule, line))
                continue
            seen[name] = line
            entries.append(Entry(name, value_node, line))
        return entries

    def _unknown_top_level(self, entry: Entry) -> None:
        close = difflib.get_close_matches(entry.name, TOP_LEVEL_KEYS, n=1)
        hint = f" (did you mean {close[0]}?)" if close else ""
        rule = f"unknown top-level key{hint}: the file has only 'broker' and 'topics'"
        value = entry.value
        self.problems.append(
            ConfigProblem(entry.name, node_text(value) if isinstance(value, Node) else "", rule, entry.line)
        )


def node_text(node: Node) -> str:
    """A short rendering of a node for a problem: the scalar as written, or ``[...]`` / ``{...}``."""
    if isinstance(node, ScalarNode):
        return render_value(None) if _is_null(node) else render_value(node.value)
    return "{...}" if isinstance(node, MappingNode) else "[...]"


def _is_null(node: Node) -> bool:
    return isinstance(node, ScalarNode) and node.tag == "tag:yaml.org,2002:null"


def _line(node: Node) -> int:
    return int(node.start_mark.line) + 1
