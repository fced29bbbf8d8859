"""Element types: the one table of mlxir.

A row per element type, with its columns: the IR type, the name (the common currency:
"float32", "bfloat16", "bool", "int64", ...), the program format's code, the layout
of a payload's elements, the name MLX's `.safetensors` reader takes, and, resolved
lazily so that none is imported where it is not needed, the NumPy, torch and MLX
dtypes. The importer, the lowering, the canonicalization patterns, the program format
and the runtime all read it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mlx.core as mx
    import numpy as np
    import torch
    from xdsl.ir import Attribute


@dataclass(frozen=True)
class DType:
    """One element type."""

    code: int
    """The program format's `DType` enum value (`codegen/schema.fbs`; a test checks
    each against the generated bindings, which this core module does not import)."""
    name: str
    """The name the runtime sees: "float32", "bfloat16", "bool", "int64", "index", ..."""
    layout: str
    """How a payload's elements lie, as a NumPy type string without the byte order
    (little-endian): `bfloat16` as its raw `u2` bits, `bool` as one byte (`b1`),
    `index` as `i8`. The size is its last digits; `numpy` makes the NumPy dtype."""
    ir_spelling: str
    """The builtin type in MLIR syntax (`ir` builds it)."""
    safetensors: str | None
    """Its name in a `.safetensors` header as MLX's reader takes it (None: MLX's reader
    has none; `runtime/payloads.py` reads such payloads through NumPy)."""

    @property
    def ir(self) -> Attribute:
        """The builtin type (built on first use, so the runtime, which reads names,
        never imports xDSL)."""
        return _ir_types()[self.name]

    @property
    def numpy(self) -> np.dtype:
        """How a payload's elements read in NumPy (`layout`, little-endian); NumPy is
        imported on first use, so a runtime that only reads names never imports it."""
        return _numpy_dtype(self.layout)

    @property
    def itemsize(self) -> int:
        return int(self.layout[1:])

    @property
    def torch(self) -> torch.dtype:
        import torch

        if self.name == "index":
            raise ValueError("index has no torch dtype")
        return getattr(torch, self.name)

    @property
    def mlx(self) -> mx.Dtype:
        import mlx.core as mx

        if self.name == "index":
            raise ValueError("index has no MLX dtype")
        return getattr(mx, "bool_" if self.name == "bool" else self.name)

    @property
    def is_float(self) -> bool:
        return self.name in FLOAT_NAMES

    @property
    def is_complex(self) -> bool:
        return self.name in COMPLEX_NAMES


@cache
def _numpy_dtype(layout: str) -> np.dtype:
    import numpy as np

    return np.dtype("<" + layout)


DTYPES: tuple[DType, ...] = (
    DType(1, "bool", "b1", "i1", "BOOL"),
    DType(2, "uint8", "u1", "ui8", "U8"),
    DType(3, "uint16", "u2", "ui16", "U16"),
    DType(4, "uint32", "u4", "ui32", "U32"),
    DType(5, "uint64", "u8", "ui64", "U64"),
    DType(6, "int8", "i1", "i8", "I8"),
    DType(7, "int16", "i2", "i16", "I16"),
    DType(8, "int32", "i4", "i32", "I32"),
    DType(9, "int64", "i8", "i64", "I64"),
    DType(10, "float16", "f2", "f16", "F16"),
    DType(11, "bfloat16", "u2", "bf16", "BF16"),
    DType(12, "float32", "f4", "f32", "F32"),
    DType(13, "float64", "f8", "f64", None),
    DType(14, "index", "i8", "index", None),
    DType(15, "complex64", "c8", "complex<f32>", "C64"),
)

FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
"""The float types, narrowest first: a cast up this list is exact."""

COMPLEX_NAMES = ("complex64",)
"""The complex types (MLX has complex64 only: a float32 real and imaginary part)."""

BY_CODE: dict[int, DType] = {d.code: d for d in DTYPES}
BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES}

SCALAR_DTYPES = frozenset({"index", "int64", "bool"})
"""Element types of a scalar (integer value) slot: `index`, `i64` and `i1` values."""

TENSOR_DTYPES = frozenset(d.name for d in DTYPES if d.name != "index")
"""Element types of a tensor slot or payload."""


@cache
def _ir_types() -> dict[str, Attribute]:
    from xdsl.dialects.builtin import (
        BFloat16Type,
        ComplexType,
        Float16Type,
        Float32Type,
        Float64Type,
        IndexType,
        IntegerType,
        Signedness,
    )

    def integer(spelling: str) -> Attribute:
        unsigned = spelling.startswith("u")
        width = int(spelling.removeprefix("ui" if unsigned else "i"))
        return IntegerType(width, Signedness.UNSIGNED) if unsigned else IntegerType(width)

    special: dict[str, Attribute] = {
        "f16": Float16Type(),
        "bf16": BFloat16Type(),
        "f32": Float32Type(),
        "f64": Float64Type(),
        "index": IndexType(),
        "complex<f32>": ComplexType(Float32Type()),
    }
    return {d.name: special.get(d.ir_spelling) or integer(d.ir_spelling) for d in DTYPES}


@cache
def _by_ir() -> dict[Attribute, DType]:
    return {d.ir: d for d in DTYPES}


def of_ir(type_: Attribute) -> DType | None:
    return _by_ir().get(type_)


def of_torch(dtype: torch.dtype) -> DType | None:
    return BY_NAME.get(str(dtype).removeprefix("torch."))
