"""Key identities of a segment's records: equal key bytes share an id, different bytes never do.

``group_kernels.distinct_spans`` groups keys by their bytes (a hash finds candidates, the bytes decide; the
first 16 bytes are compared in the table's slot, the rest in a store of each distinct key), so each distinct
key is MD5'd once; ``last_of_ids`` then finds each key's last occurrence, the offset map's "later offsets
overwrite". The round's ``DigestTable`` answers every digest as the map it was built from.
"""

from __future__ import annotations

import hashlib
import time

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kafka_segments.compaction.rewrite import clean_round
from kafka_segments.records import build_batch
from kafka_segments.records.fast import (
    DigestTable,
    digest_bytes,
    digest_columns,
    key_identities,
    last_of_each_id,
)
from kafka_segments.records.record import Record
from unit.compaction_helpers import NOW, LogBuilder, offsets_of
from unit.test_compaction_properties import CONFIG

pytestmark = pytest.mark.unit

# short alphabets and shared prefixes around the 16 inline bytes, so equal hashes and prefixes are common
_KEYS = st.lists(
    st.one_of(
        st.binary(max_size=40),
        st.builds(lambda n, tail: b"k" * n + tail, st.integers(0, 20), st.sampled_from([b"", b"a", b"b"])),
    ),
    min_size=1,
    max_size=12,
)


def _columns(keys: list[bytes]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    buffer = np.frombuffer(b"".join(keys) + b"\0", dtype=np.uint8)
    lengths = np.array([len(k) for k in keys], dtype=np.int32)
    starts = np.concatenate([[0], np.cumsum(lengths)[:-1]]).astype(np.int64)
    return buffer, starts, lengths


@settings(max_examples=300, deadline=None)
@given(pool=_KEYS, picks=st.lists(st.integers(0, 11), min_size=1, max_size=60))
def test_keys_share_an_id_exactly_when_their_bytes_are_equal(pool: list[bytes], picks: list[int]) -> None:
    keys = [pool[i % len(pool)] for i in picks]
    ids, hi, lo = key_identities(*_columns(keys))
    first_id: dict[bytes, int] = {}
    for key, key_id in zip(keys, ids.tolist(), strict=True):
        assert first_id.setdefault(key, key_id) == key_id
    assert len(set(first_id.values())) == len(first_id)  # different bytes, different ids
    assert sorted(first_id.values()) == list(range(len(first_id)))  # numbered by first appearance
    assert digest_bytes(hi[ids], lo[ids]) == [hashlib.md5(k).digest() for k in keys]


def test_keys_equal_in_their_first_16_bytes_differ_by_the_rest() -> None:
    keys = [b"p" * 16 + b"a", b"p" * 16 + b"b", b"p" * 16, b"p" * 16 + b"a", b"p" * 15]
    ids, _, _ = key_identities(*_columns(keys))
    assert ids.tolist() == [0, 1, 2, 0, 3]


def test_many_distinct_keys_grow_the_table_and_keep_their_ids() -> None:
    keys = [f"key-{i % 5000:020d}".encode() for i in range(20_000)]  # 24-byte keys, table grown many times
    ids, _, _ = key_identities(*_columns(keys))
    assert ids.tolist() == [i % 5000 for i in range(20_000)]


@given(ids=st.lists(st.integers(0, 9), max_size=50))
def test_the_last_occurrence_of_each_id_in_ascending_order(ids: list[int]) -> None:
    last = {key_id: row for row, key_id in enumerate(ids)}
    found = last_of_each_id(np.array(ids, dtype=np.int64), 10)
    assert found.tolist() == sorted(last.values())


def test_the_last_occurrences_of_keys_written_round_robin_take_linear_time() -> None:
    """1M rows over 200k ids in ``oracle genlog``'s key order (``i * 7919 % keys``): numba's sort of the
    last rows went quadratic on it (31 s); collected in row order it is a few milliseconds."""
    keys = 200_000
    ids = np.arange(1_000_000, dtype=np.int64) * 7919 % keys
    last_of_each_id(ids[:10], keys)  # the kernel loaded (or compiled) outside the timing
    start = time.perf_counter()
    found = last_of_each_id(ids, keys)
    elapsed = time.perf_counter() - start
    assert found.tolist() == sorted(range(1_000_000 - keys, 1_000_000))
    assert elapsed < 5.0


# Two different 128-byte messages with the same MD5 (Wang and Yu's published collision, as reproduced in
# Stevens' examples): Kafka's SkimpyOffsetMap cannot tell them apart, so neither may the round.
_COLLIDING = (
    bytes.fromhex(
        "d131dd02c5e6eec4693d9a0698aff95c2fcab58712467eab4004583eb8fb7f8955ad340609f4b30283e488832571415a"
        "085125e8f7cdc99fd91dbdf280373c5bd8823e3156348f5bae6dacd436c919c6dd53e2b487da03fd02396306d248cda0"
        "e99f33420f577ee8ce54b67080a80d1ec69821bcb6a8839396f9652b6ff72a70"
    ),
    bytes.fromhex(
        "d131dd02c5e6eec4693d9a0698aff95c2fcab50712467eab4004583eb8fb7f8955ad340609f4b30283e4888325f1415a"
        "085125e8f7cdc99fd91dbd7280373c5bd8823e3156348f5bae6dacd436c919c6dd53e23487da03fd02396306d248cda0"
        "e99f33420f577ee8ce54b67080280d1ec69821bcb6a8839396f965ab6ff72a70"
    ),
)


def test_two_keys_with_one_md5_are_one_key_of_the_map_as_in_kafka() -> None:
    a, b = _COLLIDING
    assert a != b
    assert hashlib.md5(a).digest() == hashlib.md5(b).digest()
    log = LogBuilder()
    for offset, key in enumerate([a, b, a, b, a]):  # the first key seen holds the latest offset
        log.append(build_batch([Record(offset, NOW, key, b"v%d" % offset)]))
    log.roll()
    segments = log.segments()
    result = clean_round(segments, first_dirty=0, end_offset=5, config=CONFIG, now_ms=NOW)
    survivors = offsets_of(result.segments[0].batches)
    assert survivors == [4]  # only the digest's latest offset survives, whichever key held it
    ids, _, _ = key_identities(*_columns([a, b, a]))
    assert ids.tolist() == [0, 1, 0]  # grouped by bytes: two ids, merged by their equal MD5 in the map


@settings(max_examples=60, deadline=None)
@given(
    mapped=st.dictionaries(st.binary(min_size=16, max_size=16), st.integers(-1, 2**63 - 1), max_size=60),
    absent=st.lists(st.binary(min_size=16, max_size=16), max_size=20),
    same_top=st.booleans(),
)
def test_the_digest_table_answers_as_the_map_it_was_built_from(
    mapped: dict[bytes, int], absent: list[bytes], same_top: bool
) -> None:
    if same_top:  # digests sharing their first 8 bytes: the table's slots collide, the low half decides
        mapped = {b"\x07" * 8 + digest[8:]: offset for digest, offset in mapped.items()}
        absent = [b"\x07" * 8 + digest[8:] for digest in absent]
    table = DigestTable.of(mapped)
    asked = list(mapped) + absent
    hi, lo = digest_columns(asked)
    assert table.lookup(hi, lo).tolist() == [mapped.get(digest, -1) for digest in asked]
