"""The one nesting limit of every JSON and YAML loader (``kafka_segments.nesting``): deep documents are
refused with a named error before anything recurses, never with a ``RecursionError``."""

from __future__ import annotations

import json

import pytest
from kafka_segments.config.effective import check_config
from kafka_segments.config.problems import FILE_KEY
from kafka_segments.nesting import (
    MAX_NESTING_DEPTH,
    NestingTooDeepError,
    check_json_text,
    check_json_value,
    check_nesting,
)
from kafka_segments.retention.delete_records import (
    DeleteRecordsFileError,
    parse_delete_records,
    parse_delete_records_value,
)


def nested_list(depth: int) -> list[object]:
    """A list nested ``depth`` levels deep, built without recursion."""
    outer: list[object] = []
    inner = outer
    for _ in range(depth - 1):
        child: list[object] = []
        inner.append(child)
        inner = child
    return outer


def test_the_limit_is_inclusive() -> None:
    check_nesting(MAX_NESTING_DEPTH)
    limit = f"nested deeper than {MAX_NESTING_DEPTH} levels"
    with pytest.raises(NestingTooDeepError, match=limit) as refused:
        check_nesting(MAX_NESTING_DEPTH + 1, line=7)
    assert refused.value.line == 7
    assert "(at line 7)" in str(refused.value)


def test_json_text_at_the_limit_passes_and_one_more_level_is_refused() -> None:
    check_json_text("[" * MAX_NESTING_DEPTH + "]" * MAX_NESTING_DEPTH)
    check_json_text('{"a": [1, {"b": "x"}]}')
    with pytest.raises(NestingTooDeepError):
        check_json_text("[" * (MAX_NESTING_DEPTH + 1))
    with pytest.raises(NestingTooDeepError):
        check_json_text("[" * 100_000)


def test_brackets_inside_json_strings_do_not_count() -> None:
    check_json_text(json.dumps({"topic": "[" * 500, "escaped": '\\"{' * 500}))


def test_json_values_are_checked_without_recursion_even_when_they_contain_themselves() -> None:
    check_json_value({"partitions": [{"topic": "t", "partition": 0, "offset": 1}]})
    check_json_value(nested_list(MAX_NESTING_DEPTH))
    with pytest.raises(NestingTooDeepError):
        check_json_value(nested_list(100_000))
    itself: list[object] = []
    itself.append(itself)
    with pytest.raises(NestingTooDeepError):
        check_json_value(itself)


def test_a_deep_delete_records_file_is_a_named_file_error() -> None:
    with pytest.raises(DeleteRecordsFileError, match=r"f\.json: the input is nested deeper than 100 levels"):
        parse_delete_records(b"[" * 100_000, location="f.json")


def test_a_delete_records_file_in_utf16_is_still_read() -> None:
    text = json.dumps({"partitions": [{"topic": "t", "partition": 0, "offset": 3}]})
    (request,) = parse_delete_records(text.encode("utf-16"), location="f.json")
    assert request.offset == 3


def test_a_deep_delete_records_param_is_refused_before_it_is_encoded() -> None:
    param = {"version": 1, "partitions": nested_list(100_000)}
    with pytest.raises(DeleteRecordsFileError, match="Param 'request': the input is nested deeper than 100"):
        parse_delete_records_value(param, location="the run's Param 'request'")


def test_a_shallow_delete_records_param_is_parsed() -> None:
    param = {"partitions": [{"topic": "t", "partition": 2, "offset": -1}]}
    (request,) = parse_delete_records_value(param, location="Param")
    assert (str(request.topic_partition), request.offset) == ("t-2", -1)


@pytest.mark.parametrize(
    "text",
    [
        "broker:\n  x: " + "[" * 2000 + "]" * 2000 + "\n",
        "".join("  " * i + f"k{i}:\n" for i in range(1300)) + "  " * 1300 + "v\n",
        "topics:\n  t:\n    x: " + "{a: " * 1300 + "1" + "}" * 1300 + "\n",
    ],
    ids=["flow-lists", "block-mappings", "flow-mappings"],
)
def test_a_deep_yaml_config_is_one_file_problem_with_its_line(text: str) -> None:
    check = check_config(text, source="deep.yaml")
    (problem,) = check.problems
    assert check.config is None
    assert problem.key == FILE_KEY
    assert problem.line is not None
    assert problem.rule == "nested deeper than 100 levels of lists and objects"


def test_yaml_at_the_limit_is_composed() -> None:
    # the top-level mapping and broker's mapping are 2 levels; 98 lists make 100; scalars do not count
    depth = MAX_NESTING_DEPTH - 2
    check = check_config("broker:\n  x: " + "[" * depth + "1" + "]" * depth + "\n", source="ok.yaml")
    assert check.config is not None
    assert "nested" not in " ".join(problem.rule for problem in check.problems)
