"""Op properties as typed, named attributes: the one table that encodes every mlx op.

Each IRDL op declares its properties, so an instruction stores them generically:
one `NamedAttr` per property, its value one member of the schema's `AttrValue`
union. `CODECS` says, per member, which attributes it holds, how it is written,
what plain Python value the runtime sees and how the attribute is rebuilt:

| member        | attribute                             | runtime value                  |
|---------------|---------------------------------------|--------------------------------|
| `IntValue`    | `IntegerAttr` (iN, uiN, index)        | `int` (`bool` for an `i1`)     |
| `FloatValue`  | `FloatAttr`                           | `float`                        |
| `StringValue` | `StringAttr`                          | `str`                          |
| `UnitValue`   | `UnitAttr`                            | `True`                         |
| `IntArray`    | `DenseArrayBase` of integers          | `tuple[int, ...]`              |
| `FloatArray`  | `DenseArrayBase` of floats            | `tuple[float, ...]`            |
| `SymbolValue` | `SymbolRefAttr`                       | `str`, the name ("a::b" nested)|
| `DenseValue`  | `DenseIntOrFPElementsAttr` on tensors | read-only NumPy array (1)      |
| `TextValue`   | anything else, in MLIR syntax         | its text (2)                   |

(1) A view into the program's buffer, of the element type's NumPy dtype and the
attribute's shape; bfloat16 (which NumPy lacks) is widened to float32, exactly. The
record holds the checked `Payload` and `codegen/reader.py` makes the array on first
read, so decoding imports no NumPy; the runtime's kernels get the same values as an
`mx.array`, read without NumPy (`Payload.mx`, `Instruction.kernel_props`).

(2) The attribute as MLIR prints it (`#arith.overflow<none>`): parsing it back takes
xDSL, which only rebuilding the IR (verification, `deserialize`) does, so loading and
running a program never import xDSL.

Decoding imports neither NumPy nor the FlatBuffers library (whose builder imports
NumPy): the encoders import the generated bindings when they write.

These are the values `mlxir.evaluator.props.python_props` gives for the same op, so
kernels read an op the same way from IR and from a program.

A new op needs no entry; a new kind of attribute falls back to `TextValue` until it
earns a member of its own.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache, lru_cache
from math import prod
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeAlias, cast

from mlxir.codegen.errors import ProgramError
from mlxir.codegen.fb.layout import UNIONS
from mlxir.codegen.flatbuffer import Table
from mlxir.support import dtypes

# xDSL, NumPy and FlatBuffers' builder are imported where an attribute is written or
# rebuilt, never on the runtime's path (decoding), so loading a program imports none.
if TYPE_CHECKING:
    import mlx.core as mx
    import numpy as np
    from xdsl.context import Context
    from xdsl.ir import Attribute

PropValue: TypeAlias = "int | float | str | bool | tuple[int, ...] | tuple[float, ...] | np.ndarray | Attribute"
"""What an instruction's property looks like to the runtime."""

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
PAYLOAD_ALIGNMENT = 64


@dataclass(frozen=True, slots=True)
class AttrRecord:
    """One decoded attribute: its `AttrValue` member, plain value and element type."""

    kind: str
    """The `AttrValue` member: "IntValue", "FloatValue", ..., "TextValue"."""
    value: Any
    """The value as stored: an int, float, str, tuple, the symbol's references root
    first, a dense value's `Payload` (its `numpy()`: bfloat16 as `uint16` bits), an
    attribute's text."""
    python: Any
    """The runtime value (see the module's table); for a dense value its `Payload`,
    which `codegen/reader.py` reads as NumPy (`Payload.python`) on first use."""
    dtype: str | None = None
    """The element type of an int, float, array or dense value ("int64", "float32"...)."""


class FlatBuilder(Protocol):
    """The methods of `flatbuffers.builder.Builder` that encoding calls, typed (the
    FlatBuffers library has no annotations)."""

    def CreateSharedString(self, s: str, /) -> int: ...
    def CreateNumpyVector(self, x: np.ndarray, /) -> int: ...
    def StartVector(self, elemSize: int, numElems: int, alignment: int, /) -> int: ...
    def PrependUOffsetTRelative(self, off: int, /) -> None: ...
    def EndVector(self) -> int: ...
    def FinishSizePrefixed(self, rootTable: int, file_identifier: bytes, /) -> int: ...
    def Output(self) -> bytearray: ...


class TableBuilder(Protocol):
    """A module flatc generated for a table (`codegen/fb/<Table>.py`), typed (its
    functions have no annotations): `Start`, one `Add<Field>(builder, value)` per
    field, the value an offset or a scalar, and `End`, which gives the table's offset.
    A module is cast to it (`cast(TableBuilder, module)`)."""

    def Start(self, builder: FlatBuilder, /) -> None: ...
    def End(self, builder: FlatBuilder, /) -> int: ...
    def __getattr__(self, name: str) -> Callable[[FlatBuilder, float], None]: ...


class Writer:
    """What encoding needs besides the builder: shared strings and the payload segment."""

    def __init__(self, builder: FlatBuilder):
        self.builder = builder
        self.segment: list[bytes | memoryview] = []
        """The payload segment, in chunks (`codegen/parts.py`)."""
        self.segment_size = 0
        self.global_chunks: set[int] = set()
        """The chunks that are globals' payloads."""

    def string(self, text: str) -> int:
        return self.builder.CreateSharedString(text)

    def payload(self, data: bytes | memoryview, of_global: bool = False) -> int:
        """Appends `data` (`of_global`: a global's payload) to the segment at the next
        aligned offset; returns the offset."""
        if of_global:
            self.global_chunks.add(len(self.segment))
        offset = self.segment_size
        padding = -len(data) % PAYLOAD_ALIGNMENT
        self.segment += (data, bytes(padding)) if padding else (data,)
        self.segment_size += len(data) + padding
        return offset

    def longs(self, values: list[int] | tuple[int, ...]) -> int:
        return self._vector(values, "<i8")

    def uints(self, values: list[int] | tuple[int, ...]) -> int:
        return self._vector(values, "<u4")

    def doubles(self, values: list[float] | tuple[float, ...]) -> int:
        return self._vector(values, "<f8")

    def _vector(self, values: list[int] | list[float] | tuple[int | float, ...], layout: str) -> int:
        import numpy as np

        return self.builder.CreateNumpyVector(np.asarray(values, dtype=layout).reshape(-1))

    def offsets(self, offsets: list[int]) -> int:
        self.builder.StartVector(4, len(offsets), 4)
        for offset in reversed(offsets):
            self.builder.PrependUOffsetTRelative(offset)
        return self.builder.EndVector()

    def strings(self, values: list[str] | tuple[str, ...]) -> int:
        return self.offsets([self.string(v) for v in values])


# ---------------------------------------------------------------------------
# Payload bytes
# ---------------------------------------------------------------------------


_UNSIGNED_FORMATS: dict[int, Literal["B", "H", "I", "Q"]] = {1: "B", 2: "H", 4: "I", 8: "Q"}
"""`memoryview` formats of the unsigned integers by size: a payload is read as these
and viewed as its own dtype in MLX, so no element is converted on the way."""


@dataclass(frozen=True, slots=True)
class Payload:
    """A checked payload (`check_payload`): `length` bytes at `offset` of the payload
    segment holding `shape` elements of `dtype`, little-endian (bfloat16 as its raw
    bits, bool one byte of 0 or 1). Reading it imports nothing; `numpy`, `python` and
    `mx` make arrays of it."""

    segment: memoryview
    offset: int
    length: int
    dtype: dtypes.DType
    shape: tuple[int, ...]

    def numpy(self) -> np.ndarray:
        """A read-only NumPy view into the segment, of `dtype.numpy` (bfloat16 as
        `uint16` bits) and `shape`; imports NumPy."""
        import numpy as np

        count = self.length // self.dtype.itemsize
        array = np.frombuffer(self.segment, dtype=self.dtype.numpy, count=count, offset=self.offset)
        array = array.reshape(self.shape)
        array.flags.writeable = False
        return array

    def python(self) -> np.ndarray:
        """The runtime's NumPy value of a dense property: `numpy()`, with bfloat16
        (which NumPy lacks) widened to float32, exactly; read-only."""
        import numpy as np

        array = self.numpy()
        if self.dtype.name != "bfloat16":
            return array
        # np.asarray: on a 0-d array the shift gives a NumPy scalar, which has no flags.
        widened = np.asarray(array.astype(np.uint32) << 16).view(np.float32)
        widened.flags.writeable = False
        return widened

    def mx(self) -> mx.array:
        """A copy of the elements as an `mx.array` of `dtype` (`index` as int64), read
        through a `memoryview` as unsigned integers of the same size and viewed as
        `dtype` in MLX: bit for bit, without NumPy (on a big-endian host, through
        NumPy, which swaps the bytes)."""
        import mlx.core as mx

        target = mx.int64 if self.dtype.name == "index" else self.dtype.mlx
        size = self.dtype.itemsize
        data = self.segment[self.offset : self.offset + self.length]
        if sys.byteorder == "little":
            bits = mx.array(data.cast(_UNSIGNED_FORMATS[size]))  # pyright: ignore[reportArgumentType] (any buffer)
        else:  # pragma: no cover - MLX runs on little-endian hosts
            import numpy as np

            native = np.frombuffer(data, dtype=f"<u{size}").astype(f"=u{size}")
            bits = mx.array(native, dtype=getattr(mx, f"uint{8 * size}"))
        return bits.view(target).reshape(self.shape)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)


_BOOL_CHECK_CHUNK = 1 << 20

MAX_ARRAY_DIMS = 64
MAX_ARRAY_BYTES = 2**63 - 1
"""NumPy's limits on an array, which every payload's view (`Payload.numpy`) meets: at
most 64 dims, and the dims (an empty dim counted as 1) times the element size within
a signed 64-bit count of bytes. (Only an empty payload can break the second.)"""


def check_payload(
    segment: memoryview,
    offset: int,
    length: int,
    dtype: dtypes.DType,
    shape: tuple[int, ...],
    what: str,
) -> Payload:
    """A payload checked against the segment and its type (without reading it as an
    array: a bool payload's bytes are checked to be 0 or 1)."""
    if offset % PAYLOAD_ALIGNMENT:
        raise ProgramError(
            f"{what}: payload offset {offset} is not a multiple of {PAYLOAD_ALIGNMENT}"
        )
    if offset + length > len(segment):
        raise ProgramError(
            f"{what}: payload [{offset}, {offset + length}) lies outside the segment of "
            f"{len(segment)} bytes"
        )
    if any(d < 0 for d in shape):
        raise ProgramError(f"{what}: payload shape {list(shape)} has a negative dim")
    if len(shape) > MAX_ARRAY_DIMS or prod(max(d, 1) for d in shape) * dtype.itemsize > MAX_ARRAY_BYTES:
        raise ProgramError(f"{what}: payload shape {list(shape)} is too big for an array")
    count = prod(shape)
    if count * dtype.itemsize != length:
        raise ProgramError(
            f"{what}: payload of {length} bytes does not hold {count} {dtype.name} "
            f"elements of shape {list(shape)}"
        )
    if dtype.name == "bool":
        for start in range(offset, offset + length, _BOOL_CHECK_CHUNK):
            chunk = segment[start : min(start + _BOOL_CHECK_CHUNK, offset + length)]
            if chunk.tobytes().translate(None, b"\x00\x01"):
                raise ProgramError(f"{what}: bool payload holds a byte other than 0 or 1")
    return Payload(segment, offset, length, dtype, shape)


# ---------------------------------------------------------------------------
# The codecs
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Codec:
    kind: str
    """The `AttrValue` member."""
    encode: Callable[[Writer, Attribute], int | None]
    """Writes the member's table for `attr`; None when the member cannot hold it."""
    decode: Callable[[Table, memoryview], AttrRecord]
    """Reads and checks the member's table (`segment`: the payload segment)."""
    rebuild: Callable[[AttrRecord, Context], Attribute]
    """The attribute a record stands for."""


def _dtype_field(
    table: Table, allowed: Callable[[dtypes.DType], bool], field: str = "type"
) -> dtypes.DType:
    code = table.int(field)
    dtype = dtypes.BY_CODE.get(code)
    if dtype is None or not allowed(dtype):
        raise ProgramError(f"{table.what}.{field}: element type {code} is not valid here")
    return dtype


def _is_integer_type(d: dtypes.DType) -> bool:
    """An `IntegerType` (bool is `i1`), not `index`."""
    return d.name == "bool" or d.name.startswith(("int", "uint"))


def _is_int(d: dtypes.DType) -> bool:
    return _is_integer_type(d) or d.name == "index"


def _is_float(d: dtypes.DType) -> bool:
    return not _is_int(d)


# IntValue ------------------------------------------------------------------


def _encode_int(w: Writer, attr: Attribute) -> int | None:
    from xdsl.dialects.builtin import IntegerAttr

    from mlxir.codegen.fb import IntValue

    IntValue = cast(TableBuilder, IntValue)
    if not isinstance(attr, IntegerAttr):
        return None
    attr = cast(IntegerAttr, attr)  # isinstance leaves its type parameter unknown
    dtype = dtypes.of_ir(attr.type)
    value = attr.value.data
    if dtype is None or not INT64_MIN <= value <= INT64_MAX:
        return None
    b = w.builder
    IntValue.Start(b)
    IntValue.AddValue(b, value)
    IntValue.AddType(b, dtype.code)
    return IntValue.End(b)


def _decode_int(t: Table, segment: memoryview) -> AttrRecord:
    dtype = _dtype_field(t, _is_int)
    value = t.int("value")
    return AttrRecord("IntValue", value, value != 0 if dtype.name == "bool" else value, dtype.name)


# FloatValue ----------------------------------------------------------------


def _encode_float(w: Writer, attr: Attribute) -> int | None:
    from xdsl.dialects.builtin import FloatAttr

    from mlxir.codegen.fb import FloatValue

    FloatValue = cast(TableBuilder, FloatValue)
    if not isinstance(attr, FloatAttr):
        return None
    attr = cast(FloatAttr, attr)  # isinstance leaves its type parameter unknown
    dtype = dtypes.of_ir(attr.type)
    if dtype is None:
        return None
    b = w.builder
    FloatValue.Start(b)
    FloatValue.AddValue(b, attr.value.data)
    FloatValue.AddType(b, dtype.code)
    return FloatValue.End(b)


def _decode_float(t: Table, segment: memoryview) -> AttrRecord:
    dtype = _dtype_field(t, _is_float)
    value = float(t.scalar("value"))
    return AttrRecord("FloatValue", value, value, dtype.name)


# StringValue / UnitValue / TextValue -------------------------------------------


def _encode_string(w: Writer, attr: Attribute) -> int | None:
    from xdsl.dialects.builtin import StringAttr

    from mlxir.codegen.fb import StringValue

    StringValue = cast(TableBuilder, StringValue)
    if not isinstance(attr, StringAttr):
        return None
    text = w.string(attr.data)
    StringValue.Start(w.builder)
    StringValue.AddValue(w.builder, text)
    return StringValue.End(w.builder)


def _decode_string(t: Table, segment: memoryview) -> AttrRecord:
    value = t.string("value")
    return AttrRecord("StringValue", value, value)


def _encode_unit(w: Writer, attr: Attribute) -> int | None:
    from xdsl.dialects.builtin import UnitAttr

    from mlxir.codegen.fb import UnitValue

    UnitValue = cast(TableBuilder, UnitValue)
    if not isinstance(attr, UnitAttr):
        return None
    UnitValue.Start(w.builder)
    return UnitValue.End(w.builder)


def _decode_unit(t: Table, segment: memoryview) -> AttrRecord:
    return AttrRecord("UnitValue", True, True)


def _rebuild_string(record: AttrRecord, ctx: Context) -> Attribute:
    from xdsl.dialects.builtin import StringAttr

    return StringAttr(record.value)


def _rebuild_unit(record: AttrRecord, ctx: Context) -> Attribute:
    from xdsl.dialects.builtin import UnitAttr

    return UnitAttr()


def _encode_text(w: Writer, attr: Attribute) -> int | None:
    from mlxir.codegen.fb import TextValue

    TextValue = cast(TableBuilder, TextValue)
    text = w.string(str(attr))
    TextValue.Start(w.builder)
    TextValue.AddText(w.builder, text)
    return TextValue.End(w.builder)


def _decode_text(t: Table, segment: memoryview) -> AttrRecord:
    # Kept as text: parsing it takes xDSL, which loading a program must not import (a
    # cached `mlxir generate`); no kernel reads these properties, and the IR rebuilt
    # for verification or printing parses them (`_rebuild_text`).
    text = t.string("text") or ""
    return AttrRecord("TextValue", text, text)


def _rebuild_text(record: AttrRecord, ctx: Context) -> Attribute:
    return parse_attribute(record.value)


@cache
def text_context() -> Context:
    from xdsl.context import Context

    from mlxir.dialects.context import register_dialects
    from mlxir.support import xdsl_fixes

    xdsl_fixes.apply()  # an unterminated string must not take hours to reject
    ctx = Context()
    register_dialects(ctx)
    return ctx


@lru_cache(maxsize=4096)
def parse_attribute(text: str) -> Attribute:
    """The attribute written as `text` (MLIR syntax); raises `ProgramError`."""
    from xdsl.parser import Parser

    try:
        parser = Parser(text_context(), text, "<attribute>")
        attr = parser.parse_attribute()
        if parser.pos != len(text):
            raise ProgramError(f"attribute '{text[:80]}' has trailing characters")
    except ProgramError:
        raise
    except Exception as error:  # xDSL's parser raises ParseError, VerifyException, ...
        last = (str(error).strip().splitlines() or [type(error).__name__])[-1].strip()
        raise ProgramError(f"attribute '{text[:80]}' does not parse: {last}") from None
    return attr


# IntArray / FloatArray -------------------------------------------------------


def _encode_int_array(w: Writer, attr: Attribute) -> int | None:
    from xdsl.dialects.builtin import DenseArrayBase, IntegerType

    from mlxir.codegen.fb import IntArray

    IntArray = cast(TableBuilder, IntArray)
    if not isinstance(attr, DenseArrayBase):
        return None
    attr = cast(DenseArrayBase, attr)  # isinstance leaves its type parameter unknown
    if not isinstance(attr.elt_type, IntegerType):
        return None
    dtype = dtypes.of_ir(attr.elt_type)
    values = [int(v) for v in cast(DenseArrayBase[IntegerType], attr).get_values()]
    if dtype is None or any(not INT64_MIN <= v <= INT64_MAX for v in values):
        return None
    vector = w.longs(values)
    IntArray.Start(w.builder)
    IntArray.AddValues(w.builder, vector)
    IntArray.AddType(w.builder, dtype.code)
    return IntArray.End(w.builder)


def _decode_int_array(t: Table, segment: memoryview) -> AttrRecord:
    dtype = _dtype_field(t, _is_integer_type)
    values = t.ints("values")
    return AttrRecord("IntArray", values, values, dtype.name)


def _encode_float_array(w: Writer, attr: Attribute) -> int | None:
    from xdsl.dialects.builtin import AnyFloat, DenseArrayBase, IntegerType

    from mlxir.codegen.fb import FloatArray

    FloatArray = cast(TableBuilder, FloatArray)
    if not isinstance(attr, DenseArrayBase):
        return None
    attr = cast(DenseArrayBase, attr)  # isinstance leaves its type parameter unknown
    if isinstance(attr.elt_type, IntegerType):
        return None
    dtype = dtypes.of_ir(attr.elt_type)
    if dtype is None:
        return None
    vector = w.doubles([float(v) for v in cast(DenseArrayBase[AnyFloat], attr).get_values()])
    FloatArray.Start(w.builder)
    FloatArray.AddValues(w.builder, vector)
    FloatArray.AddType(w.builder, dtype.code)
    return FloatArray.End(w.builder)


def _decode_float_array(t: Table, segment: memoryview) -> AttrRecord:
    dtype = _dtype_field(t, _is_float)
    values = tuple(float(v) for v in t.scalars("values"))
    return AttrRecord("FloatArray", values, values, dtype.name)


def _rebuild_array(record: AttrRecord, ctx: Context) -> Attribute:
    from xdsl.dialects.builtin import DenseArrayBase

    element: Any = dtypes.BY_NAME[record.dtype or ""].ir
    return DenseArrayBase.from_list(element, record.value)


# SymbolValue -------------------------------------------------------------------


def _encode_symbol(w: Writer, attr: Attribute) -> int | None:
    from xdsl.dialects.builtin import SymbolRefAttr

    from mlxir.codegen.fb import SymbolValue

    SymbolValue = cast(TableBuilder, SymbolValue)
    if not isinstance(attr, SymbolRefAttr):
        return None
    root = w.string(attr.root_reference.data)
    nested = w.strings([n.data for n in attr.nested_references]) if attr.nested_references else None
    SymbolValue.Start(w.builder)
    SymbolValue.AddRoot(w.builder, root)
    if nested is not None:
        SymbolValue.AddNested(w.builder, nested)
    return SymbolValue.End(w.builder)


def _decode_symbol(t: Table, segment: memoryview) -> AttrRecord:
    root = t.string("root") or ""
    nested = t.strings("nested")
    return AttrRecord("SymbolValue", (root, *nested), "::".join((root, *nested)))


def _rebuild_symbol(record: AttrRecord, ctx: Context) -> Attribute:
    from xdsl.dialects.builtin import SymbolRefAttr

    return SymbolRefAttr(record.value[0], list(record.value[1:]))


# DenseValue --------------------------------------------------------------------


def _encode_dense(w: Writer, attr: Attribute) -> int | None:
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, TensorType

    from mlxir.codegen.fb import DenseValue
    from mlxir.dialects.weights import dense_data

    DenseValue = cast(TableBuilder, DenseValue)
    if not isinstance(attr, DenseIntOrFPElementsAttr):
        return None
    attr = cast(DenseIntOrFPElementsAttr, attr)  # isinstance leaves its type parameter unknown
    if not isinstance(attr.type, TensorType):
        return None
    dtype = dtypes.of_ir(attr.get_element_type())
    shape = attr.get_shape()
    count = prod(shape)
    if dtype is None or len(attr.data.data) != count * dtype.itemsize:
        return None
    data = dense_data(attr, dtype)
    offset = w.payload(data)
    shape_vector = w.longs(list(shape))
    b = w.builder
    DenseValue.Start(b)
    DenseValue.AddDtype(b, dtype.code)
    DenseValue.AddShape(b, shape_vector)
    DenseValue.AddOffset(b, offset)
    DenseValue.AddLength(b, len(data))
    return DenseValue.End(b)


def _decode_dense(t: Table, segment: memoryview) -> AttrRecord:
    dtype = _dtype_field(t, lambda d: True, "dtype")
    shape = t.ints("shape")
    payload = check_payload(segment, t.int("offset"), t.int("length"), dtype, shape, t.what)
    return AttrRecord("DenseValue", payload, payload, dtype.name)


def _rebuild_dense(record: AttrRecord, ctx: Context) -> Attribute:
    from mlxir.dialects.weights import dense_attr

    dtype = dtypes.BY_NAME[record.dtype or ""]
    array = record.value.numpy()
    return dense_attr(array, dtype, tuple(array.shape))


def _rebuild_scalar(record: AttrRecord, ctx: Context) -> Attribute:
    from xdsl.dialects.builtin import AnyFloat, FloatAttr, IndexType, IntegerAttr, IntegerType

    ir = dtypes.BY_NAME[record.dtype or ""].ir
    # The dtype table's IR types are typed `Attribute`; a scalar record's are integer or
    # float types (the writer checked), which xDSL's constructors want.
    if record.kind == "IntValue":
        return IntegerAttr(record.value, cast(IntegerType | IndexType, ir))
    return FloatAttr(record.value, cast(AnyFloat, ir))


CODECS: tuple[Codec, ...] = (
    Codec("IntValue", _encode_int, _decode_int, _rebuild_scalar),
    Codec("FloatValue", _encode_float, _decode_float, _rebuild_scalar),
    Codec("StringValue", _encode_string, _decode_string, _rebuild_string),
    Codec("UnitValue", _encode_unit, _decode_unit, _rebuild_unit),
    Codec("IntArray", _encode_int_array, _decode_int_array, _rebuild_array),
    Codec("FloatArray", _encode_float_array, _decode_float_array, _rebuild_array),
    Codec("SymbolValue", _encode_symbol, _decode_symbol, _rebuild_symbol),
    Codec("DenseValue", _encode_dense, _decode_dense, _rebuild_dense),
    Codec("TextValue", _encode_text, _decode_text, _rebuild_text),  # last: takes anything
)
"""Tried in order; the first that holds an attribute writes it."""

_BY_KIND: dict[str, Codec] = {c.kind: c for c in CODECS}
assert set(_BY_KIND) == set(UNIONS["AttrValue"]) - {"NONE"}


def encode_named(w: Writer, name: str, attr: Attribute) -> int:
    """Writes one `NamedAttr`."""
    from mlxir.codegen.fb import NamedAttr
    from mlxir.codegen.fb.AttrValue import AttrValue

    NamedAttr = cast(TableBuilder, NamedAttr)
    for codec in CODECS:
        value = codec.encode(w, attr)
        if value is not None:
            break
    else:  # pragma: no cover - TextValue takes anything
        raise AssertionError(attr)
    name_offset = w.string(name)
    b = w.builder
    NamedAttr.Start(b)
    NamedAttr.AddName(b, name_offset)
    NamedAttr.AddValueType(b, getattr(AttrValue, codec.kind))
    NamedAttr.AddValue(b, value)
    return NamedAttr.End(b)


def encode_dict(w: Writer, attrs: Mapping[str, Attribute]) -> int:
    """Writes a vector of `NamedAttr`, sorted by name."""
    return w.offsets([encode_named(w, name, attrs[name]) for name in sorted(attrs)])


def decode_named(table: Table, segment: memoryview) -> tuple[str, AttrRecord]:
    name = table.string("name") or ""
    found = table.union("value")
    assert found is not None  # a required union
    kind, member = found
    return name, _BY_KIND[kind].decode(member, segment)


def decode_dict(tables: list[Table], segment: memoryview, what: str) -> dict[str, AttrRecord]:
    records: dict[str, AttrRecord] = {}
    previous = None
    for table in tables:
        name, record = decode_named(table, segment)
        if previous is not None and name <= previous:
            raise ProgramError(f"{what}: '{name}' is out of order or repeated")
        records[name] = record
        previous = name
    return records


def rebuild(record: AttrRecord, ctx: Context) -> Attribute:
    """The attribute `record` stands for."""
    return _BY_KIND[record.kind].rebuild(record, ctx)
