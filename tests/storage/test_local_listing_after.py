"""``LocalStore.list(prefix, start_after=)`` compares a folder's names with the rest of ``start_after``
instead of building and comparing every key (``local_files.names_after``): the same keys as the definition,
``key.startswith(prefix) and key > start_after``, for any folder, names and start."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kafka_segments.storage.local_files import names_after

pytestmark = pytest.mark.unit

TEXT = st.text(alphabet="0a./-_~\u00e9", max_size=6)


@given(head=st.sampled_from(["", "t-0/", "t-0/sub/", "a/"]), after=TEXT, names=st.lists(TEXT.filter(bool)))
def test_the_names_after_are_the_keys_after(head: str, after: str, names: list[str]) -> None:
    for start in (after, head + after, head[:-1] + after, head[:2]):
        found = [head + name for name in names_after(names, head, start)]
        assert found == [head + name for name in names if head + name > start], start
