"""Properties: any valid settings map round-trips through the effective configuration; the broker's time
synonyms always resolve most-specific-first."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.config import check_config

pytestmark = pytest.mark.unit

LONG_MAX, INT_MAX = 2**63 - 1, 2**31 - 1
GROUP = st.text(alphabet="abcdefghijklmnopqrstuvwxyz0123456789._-", min_size=1, max_size=12)


def _integer(low: int, high: int) -> st.SearchStrategy[tuple[object, object]]:
    """(what the file says, what Kafka parses): a YAML int or a (padded) string of digits."""
    return st.integers(low, high).flatmap(lambda n: st.sampled_from([(n, n), (str(n), n), (f"  {n} ", n)]))


def _boolean() -> st.SearchStrategy[tuple[object, object]]:
    return st.booleans().flatmap(
        lambda b: st.sampled_from([(b, b), (str(b).upper(), b), (str(b).lower(), b)])
    )


def _listed(items: st.SearchStrategy[list[str]]) -> st.SearchStrategy[tuple[object, object]]:
    return items.flatmap(lambda xs: st.sampled_from([(xs, tuple(xs)), (" , ".join(xs), tuple(xs))]))


TOPIC_VALUES: dict[str, st.SearchStrategy[tuple[object, object]]] = {
    "cleanup.policy": _listed(st.lists(st.sampled_from(["compact", "delete"]), unique=True)),
    "retention.ms": _integer(-1, LONG_MAX),
    "retention.bytes": _integer(-(2**63), LONG_MAX),
    "segment.bytes": _integer(1_048_576, INT_MAX),
    "internal.segment.bytes": _integer(-(2**31), INT_MAX),
    "segment.ms": _integer(1, LONG_MAX),
    "segment.index.bytes": _integer(4, INT_MAX),
    "index.interval.bytes": _integer(0, INT_MAX),
    "file.delete.delay.ms": _integer(0, LONG_MAX),
    "delete.retention.ms": _integer(0, LONG_MAX),
    "min.compaction.lag.ms": _integer(0, LONG_MAX),
    "max.compaction.lag.ms": _integer(1, LONG_MAX),
    "min.cleanable.dirty.ratio": st.floats(0, 1).map(lambda f: (f, f)),
    "message.timestamp.type": st.sampled_from(["CreateTime", "LogAppendTime"]).map(lambda s: (s, s)),
    "max.message.bytes": _integer(0, INT_MAX),
    "retention.commitoffset.enable": _boolean(),
    "retention.commitoffset.ms": _integer(0, LONG_MAX),
    "kafka_segments.consumed.required.groups": _listed(st.lists(GROUP, min_size=1, max_size=4, unique=True)),
}
DEFAULTS: dict[str, Any] = {
    "retention.ms": 604_800_000,
    "min.compaction.lag.ms": 0,
    "max.compaction.lag.ms": LONG_MAX,
    "retention.commitoffset.enable": False,
    "retention.commitoffset.ms": 604_800_000,
}


def _settings_maps() -> st.SearchStrategy[dict[str, tuple[object, object]]]:
    return st.fixed_dictionaries({}, optional=TOPIC_VALUES)


def expected_cross_rule_keys(parsed: dict[str, Any]) -> list[str]:
    """An independent statement of the two cross-setting rules for one topic (broker section empty)."""
    value = {name: parsed.get(name, default) for name, default in DEFAULTS.items()}
    keys = []
    lags = [name for name in ("min.compaction.lag.ms", "max.compaction.lag.ms") if name in parsed]
    if lags and value["min.compaction.lag.ms"] > value["max.compaction.lag.ms"]:
        keys.append(f"topics.t.{lags[0]}")
    own = [
        n
        for n in ("retention.commitoffset.ms", "retention.commitoffset.enable", "retention.ms")
        if n in parsed
    ]
    in_play = value["retention.commitoffset.enable"] or "retention.commitoffset.ms" in parsed
    if in_play and own and 0 <= value["retention.ms"] < value["retention.commitoffset.ms"]:
        keys.append(f"topics.t.{own[0]}")
    return keys


@given(_settings_maps())
def test_any_valid_settings_map_round_trips_through_the_effective_config(
    settings: dict[str, tuple[object, object]],
) -> None:
    written = {name: pair[0] for name, pair in settings.items()}
    parsed = {name: pair[1] for name, pair in settings.items()}
    text = yaml.safe_dump({"topics": {"t": written}}, sort_keys=False)

    result = check_config(text, source="generated.yaml")

    assert [p.key for p in result.problems] == expected_cross_rule_keys(parsed), text
    assert result.config is not None
    effective = {s.name: s for s in result.config.settings("t")}
    for name, value in parsed.items():
        assert effective[name].value == value, name
        assert effective[name].source == "topic", name
    for name in effective.keys() - parsed.keys():
        assert effective[name].source == "default", name


TIME_SYNONYMS = (("ms", 1), ("minutes", 60_000), ("hours", 3_600_000))


@given(
    st.sampled_from(["log.retention", "log.retention.commitoffset"]),
    st.fixed_dictionaries({}, optional={unit: st.integers(1, INT_MAX) for unit, _ in TIME_SYNONYMS}),
)
def test_broker_time_synonyms_resolve_most_specific_first(prefix: str, units: dict[str, int]) -> None:
    text = yaml.safe_dump({"broker": {f"{prefix}.{unit}": n for unit, n in units.items()}})
    topic_name = "retention.ms" if prefix == "log.retention" else "retention.commitoffset.ms"

    result = check_config(text, source="generated.yaml")

    # a consumed time longer than the default retention (one week) is the KIP-68 conflict, not a parse error
    assert all("KIP-68" in p.rule for p in result.problems)
    assert result.config is not None
    effective = {s.name: s for s in result.config.settings(None)}[topic_name]
    chosen = next(((unit, factor) for unit, factor in TIME_SYNONYMS if unit in units), None)
    if chosen is None:
        assert (effective.value, effective.source) == (604_800_000, "default")
    else:
        unit, factor = chosen
        assert effective.value == units[unit] * factor
        assert effective.source == f"broker: {prefix}.{unit}"
