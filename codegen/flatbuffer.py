"""A bounds-checked FlatBuffers reader, driven by the generated layout table.

The FlatBuffers Python runtime has no verifier: its accessors follow offsets as they
find them, so a corrupted file makes them raise anything (or read the wrong bytes:
`struct.unpack_from` takes a negative offset from the end of the buffer). This
reader checks every offset, length, vtable entry, enum value and UTF-8 string
against the buffer before using it and raises `ProgramError` otherwise. A work
budget proportional to the buffer size bounds the total number of elements read,
so overlapping (aliased) vectors or tables cannot make loading quadratic.

Field names, vtable slots and types come from `codegen/fb/layout.py`, generated
from schema.fbs with the flatc bindings, so the two readers cannot disagree.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import cast

from mlxir.codegen.errors import ProgramError
from mlxir.codegen.fb.layout import ENUMS, SCALAR_SIZES, TABLES, UNIONS

_SCALAR_FORMATS: dict[str, str] = {
    "bool": "?",
    "byte": "b",
    "ubyte": "B",
    "short": "h",
    "ushort": "H",
    "int": "i",
    "uint": "I",
    "float": "f",
    "long": "q",
    "ulong": "Q",
    "double": "d",
}
_U16 = struct.Struct("<H")
_U32 = struct.Struct("<I")
_I32 = struct.Struct("<i")
_VTABLE_HEADER = struct.Struct("<HH")

_ENUM_VALUES = {name: frozenset(values.values()) for name, (_, values) in ENUMS.items()}

MAX_VTABLE_SIZE = 2 * 256 + 4
"""No table of the schema has more than a few fields; a bigger vtable is corrupt."""


def _scalar_type(ftype: str) -> str | None:
    """The scalar a field of type `ftype` is stored as (enums by their underlying type)."""
    if ftype in SCALAR_SIZES:
        return ftype
    if ftype in ENUMS:
        return ENUMS[ftype][0]
    return None


What = str | tuple["What", str | int]
"""Where a read happens, for error messages: a path, or (parent, field name or vector
index), formatted only when an error is raised."""


def _describe(what: What) -> str:
    if isinstance(what, str):
        return what
    parent, key = what
    return f"{_describe(parent)}[{key}]" if isinstance(key, int) else f"{_describe(parent)}.{key}"


class Buffer:
    """The bytes of one FlatBuffer, with the reading budget and a string cache."""

    __slots__ = ("data", "size", "budget", "_strings")

    def __init__(self, data: memoryview, budget: int | None = None):
        self.data = data
        self.size = len(data)
        self.budget = self.size + 1024 if budget is None else budget
        self._strings: dict[int, str] = {}

    def spend(self, units: int, what: What) -> None:
        self.budget -= units
        if self.budget < 0:
            raise ProgramError(
                f"{_describe(what)}: the file's tables and vectors overlap or reference more data "
                "than the file holds"
            )

    def check_range(self, pos: int, length: int, what: What) -> None:
        if pos < 0 or length < 0 or pos + length > self.size:
            raise ProgramError(
                f"{_describe(what)}: bytes [{pos}, {pos + length}) lie outside the buffer of "
                f"{self.size} bytes"
            )

    def u16(self, pos: int, what: What) -> int:
        if pos < 0 or pos + 2 > self.size:
            self.check_range(pos, 2, what)
        return _U16.unpack_from(self.data, pos)[0]

    def u32(self, pos: int, what: What) -> int:
        if pos < 0 or pos + 4 > self.size:
            self.check_range(pos, 4, what)
        return _U32.unpack_from(self.data, pos)[0]

    def i32(self, pos: int, what: What) -> int:
        if pos < 0 or pos + 4 > self.size:
            self.check_range(pos, 4, what)
        return _I32.unpack_from(self.data, pos)[0]

    def deref(self, pos: int, what: What) -> int:
        """The position a uoffset stored at `pos` points to."""
        target = pos + self.u32(pos, what)
        if target >= self.size:
            raise ProgramError(f"{_describe(what)}: offset points past the end of the buffer")
        return target

    def string(self, pos: int, what: What) -> str:
        cached = self._strings.get(pos)
        self.spend(1, what)
        if cached is not None:
            return cached
        length = self.u32(pos, what)
        self.check_range(pos + 4, length + 1, what)
        raw = bytes(self.data[pos + 4 : pos + 4 + length])
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as error:
            raise ProgramError(
                f"{_describe(what)}: string is not valid UTF-8 ({error.reason})"
            ) from None
        self._strings[pos] = text
        return text

    def table(self, pos: int, type_name: str, what: What) -> Table:
        return Table(self, pos, type_name, what)


class Table:
    """One table of type `type_name` at `pos`, its vtable checked on construction."""

    __slots__ = ("buf", "pos", "type_name", "_what", "_vtable", "_vsize", "_osize", "_fields")

    def __init__(self, buf: Buffer, pos: int, type_name: str, what: What):
        buf.spend(1, what)
        self.buf, self.pos, self.type_name, self._what = buf, pos, type_name, what
        self._fields = TABLES[type_name]
        size = buf.size
        vtable = pos - buf.i32(pos, what)
        if vtable < 0 or vtable + 4 > size:
            raise ProgramError(f"{_describe(what)}: its vtable lies outside the buffer")
        vsize, osize = _VTABLE_HEADER.unpack_from(buf.data, vtable)
        if vsize < 4 or vsize % 2 or vsize > MAX_VTABLE_SIZE or vtable + vsize > size:
            raise ProgramError(f"{_describe(what)}: invalid vtable size {vsize}")
        if osize < 4 or pos + osize > size:
            raise ProgramError(f"{_describe(what)}: invalid table size {osize}")
        self._vtable, self._vsize, self._osize = vtable, vsize, osize

    def _field_pos(self, slot: int, size: int, name: str) -> int | None:
        """The absolute position of field `slot`'s inline data; None when absent."""
        entry = 4 + 2 * slot
        if entry + 2 > self._vsize:
            return None
        offset = self.buf.u16(self._vtable + entry, self._what)
        if offset == 0:
            return None
        if offset < 4 or offset + size > self._osize:
            raise ProgramError(f"{self.what}: field '{name}' lies outside its table")
        return self.pos + offset

    @property
    def what(self) -> str:
        """Where this table is, e.g. "program.instructions[3].properties[0]"."""
        return _describe(self._what)

    def _where(self, name: str) -> What:
        return (self._what, name)

    def has(self, name: str) -> bool:
        slot, ftype, _, _ = self._fields[name]
        size = SCALAR_SIZES.get(_scalar_type(ftype) or "uint", 4)
        return self._field_pos(slot, size, name) is not None

    def scalar(self, name: str) -> int | float | bool:
        """A scalar or enum field (its default when absent); enums are range-checked."""
        slot, ftype, default, _ = self._fields[name]
        stype = _scalar_type(ftype)
        assert stype is not None, f"{self.type_name}.{name} is not a scalar"
        pos = self._field_pos(slot, SCALAR_SIZES[stype], name)
        if pos is None:
            value = default
        else:
            value = struct.unpack_from("<" + _SCALAR_FORMATS[stype], self.buf.data, pos)[0]
        if ftype in ENUMS and value not in _ENUM_VALUES[ftype]:
            raise ProgramError(f"{self.what}.{name}: {value} is not a valid {ftype}")
        assert isinstance(value, int | float | bool)
        return value

    def int(self, name: str) -> int:
        value = self.scalar(name)
        assert isinstance(value, int)
        return int(value)

    def _offset_field(self, name: str) -> int | None:
        slot, _, _, required = self._fields[name]
        pos = self._field_pos(slot, 4, name)
        if pos is None:
            if required:
                raise ProgramError(f"{self.what}.{name}: required field is missing")
            return None
        return self.buf.deref(pos, self._where(name))

    def string(self, name: str) -> str | None:
        target = self._offset_field(name)
        return None if target is None else self.buf.string(target, self._where(name))

    def table(self, name: str) -> Table | None:
        _, ftype, _, _ = self._fields[name]
        target = self._offset_field(name)
        return None if target is None else self.buf.table(target, ftype, self._where(name))

    def _vector(self, name: str, elem_size: int) -> tuple[int, int] | None:
        """(position of the first element, length) of a vector field."""
        target = self._offset_field(name)
        if target is None:
            return None
        where = self._where(name)
        length = self.buf.u32(target, where)
        self.buf.check_range(target + 4, length * elem_size, where)
        self.buf.spend(length, where)
        return target + 4, length

    def scalars(self, name: str) -> tuple[int, ...] | tuple[float, ...]:
        """A vector of scalars (empty when absent)."""
        _, ftype, _, _ = self._fields[name]
        stype = _scalar_type(ftype[1:-1])
        assert stype is not None, f"{self.type_name}.{name} is not a vector of scalars"
        found = self._vector(name, SCALAR_SIZES[stype])
        if found is None:
            return ()
        start, length = found
        return struct.unpack_from(f"<{length}{_SCALAR_FORMATS[stype]}", self.buf.data, start)

    def ints(self, name: str) -> tuple[int, ...]:
        values = self.scalars(name)
        assert all(isinstance(v, int) for v in values[:1])
        return cast(tuple[int, ...], values)  # an integer field's format unpacks ints

    def tables(self, name: str) -> list[Table]:
        """A vector of tables (empty when absent)."""
        _, ftype, _, _ = self._fields[name]
        found = self._vector(name, 4)
        if found is None:
            return []
        start, length = found
        where = self._where(name)
        element = ftype[1:-1]
        return [
            self.buf.table(self.buf.deref(start + 4 * i, (where, i)), element, (where, i))
            for i in range(length)
        ]

    def strings(self, name: str) -> tuple[str, ...]:
        """A vector of strings (empty when absent)."""
        found = self._vector(name, 4)
        if found is None:
            return ()
        start, length = found
        where = self._where(name)
        return tuple(
            self.buf.string(self.buf.deref(start + 4 * i, (where, i)), (where, i))
            for i in range(length)
        )

    def union(self, name: str) -> tuple[str, Table] | None:
        """A union field: (member type name, its table), or None when absent."""
        slot, ftype, _, required = self._fields[name]
        members = UNIONS[ftype]
        type_pos = self._field_pos(slot - 1, 1, f"{name}_type")
        tag = 0 if type_pos is None else self.buf.data[type_pos]
        where = self._where(name)
        if tag >= len(members):
            raise ProgramError(f"{_describe(where)}: {tag} is not a valid {ftype} type")
        target = self._offset_field(name)
        if tag == 0 or target is None:
            if required or tag != 0 or target is not None:
                raise ProgramError(f"{_describe(where)}: union value is missing")
            return None
        member = members[tag]
        return member, self.buf.table(target, member, where)


def root(data: memoryview, type_name: str, start: int, what: str) -> tuple[Buffer, Table]:
    """The root table of the FlatBuffer that starts at `start` in `data`."""
    buf = Buffer(data)
    return buf, buf.table(buf.deref(start, what), type_name, what)


def index_list(values: Sequence[int], bound: int, what: str) -> tuple[int, ...]:
    """Checks that every value indexes a list of `bound` entries."""
    for i, v in enumerate(values):
        if not 0 <= v < bound:
            raise ProgramError(f"{what}[{i}]: {v} is out of range (there are {bound})")
    return tuple(values)
