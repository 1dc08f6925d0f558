"""pyiceberg's own FileIO with a fault armed on one of its writes: the ``n``-th file of a ``kind`` that a
sync creates (a table's metadata JSON, a manifest list, a manifest, a data file) fails, either as it is
created (``when="create"``: no byte written) or once it is written and closed (``"closed"``: the object is
there, on S3 uploaded, and the writer is told it failed, as when a reply is lost). A catalog uses it
through the property ``py-io-impl`` (``FAULTY_IO``); pyiceberg loads it for every table of that catalog,
so every write of the sync goes through it, the Parquet files included, on a local lake and on S3."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pyiceberg.io import OutputFile, OutputStream
from pyiceberg.io.pyarrow import PyArrowFileIO

FAULTY_IO = "tables.faulty_io.FaultyFileIO"
KINDS = ("metadata", "manifest list", "manifest", "data")


def kind_of(location: str) -> str:
    """What pyiceberg writes at ``location``, by its name."""
    name = location.rsplit("/", 1)[-1]
    if name.endswith(".metadata.json"):
        return "metadata"
    if name.endswith(".avro"):
        return "manifest list" if name.startswith("snap-") else "manifest"
    return "data"


@dataclass
class Fault:
    """Fail the ``nth`` file of ``kind`` created from now on (``kind`` None: nothing fails)."""

    kind: str | None = None
    nth: int = 1
    when: str = "create"
    seen: int = 0
    failed: str | None = None

    def arm(self, kind: str, nth: int, *, when: str = "create") -> None:
        self.kind, self.nth, self.when, self.seen, self.failed = kind, nth, when, 0, None

    def disarm(self) -> None:
        self.kind = None

    def check(self, location: str) -> bool:
        """Whether the write of ``location`` is the one to fail (raised here when it fails as created)."""
        if self.kind is None or kind_of(location) != self.kind:
            return False
        self.seen += 1
        if self.seen != self.nth:
            return False
        self.failed = location
        if self.when == "create":
            raise OSError(f"injected: the {self.kind} write {location} failed")
        return True


FAULT = Fault()


class _FaultyOutput(OutputFile):
    def __init__(self, inner: OutputFile) -> None:
        super().__init__(inner.location)
        self._inner = inner

    def __len__(self) -> int:
        return len(self._inner)

    def exists(self) -> bool:
        return self._inner.exists()

    def to_input_file(self) -> Any:
        return self._inner.to_input_file()

    def create(self, overwrite: bool = False) -> OutputStream:
        fails = FAULT.check(self.location)
        stream = self._inner.create(overwrite=overwrite)
        return _LostReply(stream, self.location) if fails else stream


class _LostReply:
    """An output stream whose close writes the file, then raises as a lost reply would."""

    def __init__(self, inner: OutputStream, location: str) -> None:
        self._inner = inner
        self._location = location

    def write(self, data: bytes) -> int:
        return self._inner.write(data)

    def close(self) -> None:
        self._inner.close()
        raise OSError(f"injected: the write {self._location} was done, its reply lost")

    def __enter__(self) -> _LostReply:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


class FaultyFileIO(PyArrowFileIO):
    """``PyArrowFileIO`` whose created files pass ``FAULT`` first."""

    def new_output(self, location: str) -> OutputFile:
        return _FaultyOutput(super().new_output(location))
