"""Regenerate the segment and index golden files in ``tests/data/segments/`` deterministically.

    .venv/bin/python tests/data/segments/make_golden.py           # (re)write the files
    .venv/bin/python tests/data/segments/make_golden.py --check   # exit 1 if a file differs

The index files are hand-derived hex (the derivation is next to each constant), never produced by this
project's code. ``interval-100/*.log`` is written by kafka-python 3.0.12's ``DefaultRecordBatchBuilder``
(an independent implementation; BaseOffset patched in afterwards, as it always writes 0 and BaseOffset is
not covered by the CRC). tests/data/README.md describes each file.
"""

from __future__ import annotations

import struct
import sys
import warnings
from pathlib import Path

HERE = Path(__file__).resolve().parent
T = 1_700_000_000_000  # 0x0000018bcfe56800
BASE = "00000000000000000100"

# index-base-100: base offset 100.
# .index  entries (offset, position) (105, 4210) (131, 8463) (200, 12700)
#         -> relative 5, 31, 100 = 0x05, 0x1f, 0x64; positions 0x1072, 0x210f, 0x319c
# .timeindex entries (T+1000, 105) (T+3000, 131) (T+6000, 200)
#         -> timestamps 0x18bcfe56be8, 0x18bcfe573b8, 0x18bcfe57f70; relative 5, 31, 100
# .txnindex (version 0, pid 4000=0xfa0, first 90=0x5a, marker 110=0x6e, LSO 111=0x6f)
#           (version 0, pid 4001=0xfa1, first 105=0x69, marker 150=0x96, LSO 120=0x78)
OFFSET_INDEX = "00000005 00001072 0000001f 0000210f 00000064 0000319c"
TIME_INDEX = "0000018bcfe56be8 00000005 0000018bcfe573b8 0000001f 0000018bcfe57f70 00000064"
TXN_INDEX = (
    "0000 0000000000000fa0 000000000000005a 000000000000006e 000000000000006f "
    "0000 0000000000000fa1 0000000000000069 0000000000000096 0000000000000078"
)

# preallocated: the first two entries of the files above, then unwritten (zero) slots, as an active
# segment's preallocated index looks: 2 + 6 offset-index slots (64 bytes), 2 + 3 time-index slots (60 bytes).
PREALLOCATED_INDEX = "00000005 00001072 0000001f 0000210f" + " 0000000000000000" * 6
PREALLOCATED_TIME_INDEX = (
    "0000018bcfe56be8 00000005 0000018bcfe573b8 0000001f" + " 000000000000000000000000" * 3
)

# interval-100: six 72-byte single-record batches at offsets 100..105, written with index.interval.bytes=100.
# Record: 1 length varint + 10 bytes (attributes, ts delta 0, offset delta 0, key len, "kN", value len,
# "vN", header count) = 11; batch = 61 + 11 = 72. Positions 0, 72, 144, 216, 288, 360.
# Bytes since the last entry before each batch: 0, 72, 144 (> 100: entry, reset), 72, 144 (entry), 72.
# Batch timestamps T + 1000, 3000, 2000, 4000, 5000, 6000.
# .index: (102, 144) (104, 288) -> relative 2, 4; positions 0x90, 0x120
# .timeindex: at offset 102 the max so far is (T+3000, 101); at 104 it is (T+5000, 104); closing the
#   segment adds (T+6000, 105). T+3000 = 0x18bcfe573b8, T+5000 = 0x18bcfe57b88, T+6000 = 0x18bcfe57f70.
INTERVAL_TIMESTAMP_DELTAS = (1000, 3000, 2000, 4000, 5000, 6000)
INTERVAL_INDEX = "00000002 00000090 00000004 00000120"
INTERVAL_TIME_INDEX = "0000018bcfe573b8 00000001 0000018bcfe57b88 00000004 0000018bcfe57f70 00000005"


def _hex(text: str) -> bytes:
    return bytes.fromhex(text.replace(" ", ""))


def interval_log() -> bytes:
    """The kafka-python-built .log of ``interval-100``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # kafka/__init__ imports its admin client
        from kafka.record.default_records import DefaultRecordBatchBuilder

    log = bytearray()
    for number, delta in enumerate(INTERVAL_TIMESTAMP_DELTAS):
        builder = DefaultRecordBatchBuilder(
            magic=2,
            compression_type=0,
            is_transactional=0,
            producer_id=-1,
            producer_epoch=-1,
            base_sequence=-1,
            batch_size=1 << 20,
        )
        builder.append(0, timestamp=T + delta, key=b"k%d" % number, value=b"v%d" % number, headers=[])
        batch = builder.build()
        struct.pack_into(">q", batch, 0, 100 + number)
        log += batch
    return bytes(log)


def golden_files() -> dict[Path, bytes]:
    return {
        HERE / "index-base-100" / f"{BASE}.index": _hex(OFFSET_INDEX),
        HERE / "index-base-100" / f"{BASE}.timeindex": _hex(TIME_INDEX),
        HERE / "index-base-100" / f"{BASE}.txnindex": _hex(TXN_INDEX),
        HERE / "preallocated" / f"{BASE}.index": _hex(PREALLOCATED_INDEX),
        HERE / "preallocated" / f"{BASE}.timeindex": _hex(PREALLOCATED_TIME_INDEX),
        HERE / "interval-100" / f"{BASE}.log": interval_log(),
        HERE / "interval-100" / f"{BASE}.index": _hex(INTERVAL_INDEX),
        HERE / "interval-100" / f"{BASE}.timeindex": _hex(INTERVAL_TIME_INDEX),
    }


def main(argv: list[str]) -> int:
    check = "--check" in argv
    differing = []
    for path, data in golden_files().items():
        if check:
            if not path.exists() or path.read_bytes() != data:
                differing.append(path)
            continue
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    for path in differing:
        sys.stderr.write(f"differs: {path.relative_to(HERE)}\n")
    return 1 if differing else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
