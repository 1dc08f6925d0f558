"""Reading the fields of Kafka's generated message schemas (as their ``read`` methods, ``MessageUtil`` /
``ByteBufferAccessor``): the primitives of the ``__consumer_offsets`` key and value decoders.

Flexible versions use compact forms and a tagged-field section, whose fields are all skipped by size. A null
non-nullable field or a length past the end is an error; bytes after a struct are ignored, as by Kafka;
invalid UTF-8 decodes with U+FFFD, as Java's ``new String(bytes, UTF_8)``."""

from __future__ import annotations

import struct

_INT8, _INT16, _INT32, _INT64 = (struct.Struct(f">{c}") for c in "bhiq")
_MAX_STRING_LENGTH = 0x7FFF


class CoordinatorSchemaError(ValueError):
    """Bytes that do not follow the schema (the message says which field); callers add the location."""


class FieldReader:
    """Kafka's ``Readable`` over one key or value: primitive reads that name the field when they fail."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    def _take(self, size: int, field: str) -> bytes:
        if size > self.remaining:
            raise CoordinatorSchemaError(
                f"{field}: needs {size} bytes at byte {self._pos} but only {self.remaining} remain"
            )
        chunk = self._data[self._pos : self._pos + size]
        self._pos += size
        return chunk

    def skip(self, size: int, field: str) -> None:
        self._take(size, field)

    def take(self, size: int, field: str) -> bytes:
        """The next ``size`` bytes (a tagged field's payload)."""
        return self._take(size, field)

    def _fixed(self, codec: struct.Struct, field: str) -> int:
        value: int = codec.unpack(self._take(codec.size, field))[0]
        return value

    def int8(self, field: str) -> int:
        return self._fixed(_INT8, field)

    def int16(self, field: str) -> int:
        return self._fixed(_INT16, field)

    def int32(self, field: str) -> int:
        return self._fixed(_INT32, field)

    def int64(self, field: str) -> int:
        return self._fixed(_INT64, field)

    def uvarint(self, field: str) -> int:
        """``ByteUtils.readUnsignedVarint``: at most 5 bytes, read as a signed Java int."""
        value = 0
        for shift in range(0, 35, 7):
            byte = self._take(1, field)[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                value &= 0xFFFFFFFF
                return value - (1 << 32) if value >= 1 << 31 else value
        raise CoordinatorSchemaError(
            f"{field}: unsigned varint at byte {self._pos - 5} is longer than 5 bytes"
        )

    def _length(self, field: str, *, flexible: bool, wide: bool) -> int:
        if flexible:
            return self.uvarint(field) - 1
        return self.int32(field) if wide else self.int16(field)

    def nullable_string(self, field: str, *, flexible: bool) -> str | None:
        length = self._length(field, flexible=flexible, wide=False)
        if length < 0:
            return None
        if length > _MAX_STRING_LENGTH:
            raise CoordinatorSchemaError(f"{field}: string length {length} exceeds {_MAX_STRING_LENGTH}")
        return self._take(length, field).decode("utf-8", errors="replace")

    def string(self, field: str, *, flexible: bool) -> str:
        value = self.nullable_string(field, flexible=flexible)
        if value is None:
            raise CoordinatorSchemaError(f"non-nullable field {field} was serialized as null")
        return value

    def nullable_bytes(self, field: str, *, flexible: bool) -> bytes | None:
        length = self._length(field, flexible=flexible, wide=True)
        return None if length < 0 else self._take(length, field)

    def bytes(self, field: str, *, flexible: bool) -> bytes:
        value = self.nullable_bytes(field, flexible=flexible)
        if value is None:
            raise CoordinatorSchemaError(f"non-nullable field {field} was serialized as null")
        return value

    def array_length(self, field: str, *, flexible: bool) -> int:
        count = self.nullable_array_length(field, flexible=flexible)
        if count is None:
            raise CoordinatorSchemaError(f"non-nullable field {field} was serialized as null")
        return count

    def nullable_array_length(self, field: str, *, flexible: bool) -> int | None:
        """An array's length, ``None`` for a null array."""
        count = self._length(field, flexible=flexible, wide=True)
        if count < 0:
            return None
        if count > self.remaining:
            raise CoordinatorSchemaError(
                f"{field}: tried to allocate a collection of size {count}, "
                f"but there are only {self.remaining} bytes remaining"
            )
        return count

    def strings(self, field: str, *, flexible: bool) -> tuple[str, ...]:
        count = self.array_length(field, flexible=flexible)
        return tuple(self.string(field, flexible=flexible) for _ in range(count))

    def skip_tagged_fields(self, struct_name: str) -> None:
        """Skip a flexible struct's tagged-field section (every tag, known or not, by its size)."""
        count = self.uvarint(f"{struct_name} tagged field count")
        for _ in range(count):
            tag = self.uvarint(f"{struct_name} tag")
            size = self.uvarint(f"{struct_name} tag {tag} size")
            if size < 0:
                raise CoordinatorSchemaError(f"{struct_name} tag {tag}: negative size {size}")
            self.skip(size, f"{struct_name} tag {tag}")
