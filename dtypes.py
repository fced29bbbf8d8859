"""Element types: the one table of mlxir.

A row per element type, with its columns: the IR type, the name (the common currency:
"float32", "bfloat16", "bool", "int64", ...), the program format's code, the NumPy
layout of a payload, and, resolved lazily so that neither is imported where it is not
needed, the torch and MLX dtypes. The importer, the lowering, the canonicalization
patterns, the program format and the runtime all read it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from xdsl.dialects.builtin import (
    BFloat16Type,
    Float16Type,
    Float32Type,
    Float64Type,
    IndexType,
    IntegerType,
    Signedness,
)
from xdsl.ir import Attribute

if TYPE_CHECKING:
    import mlx.core as mx
    import torch


@dataclass(frozen=True)
class DType:
    """One element type."""

    code: int
    """The program format's `DType` enum value (`codegen/schema.fbs`; a test checks
    each against the generated bindings, which this core module does not import)."""
    name: str
    """The name the runtime sees: "float32", "bfloat16", "bool", "int64", "index", ..."""
    numpy: np.dtype
    """How a payload's elements read in NumPy (little-endian): `bfloat16` reads as its
    raw `uint16` bits, `bool` as one byte per element, `index` as `int64`."""
    ir: Attribute
    """The builtin type."""

    @property
    def itemsize(self) -> int:
        return self.numpy.itemsize

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


def _dtype(code: int, name: str, numpy: str, ir: Attribute) -> DType:
    return DType(code, name, np.dtype(numpy).newbyteorder("<"), ir)


DTYPES: tuple[DType, ...] = (
    _dtype(1, "bool", "bool", IntegerType(1)),
    _dtype(2, "uint8", "u1", IntegerType(8, Signedness.UNSIGNED)),
    _dtype(3, "uint16", "u2", IntegerType(16, Signedness.UNSIGNED)),
    _dtype(4, "uint32", "u4", IntegerType(32, Signedness.UNSIGNED)),
    _dtype(5, "uint64", "u8", IntegerType(64, Signedness.UNSIGNED)),
    _dtype(6, "int8", "i1", IntegerType(8)),
    _dtype(7, "int16", "i2", IntegerType(16)),
    _dtype(8, "int32", "i4", IntegerType(32)),
    _dtype(9, "int64", "i8", IntegerType(64)),
    _dtype(10, "float16", "f2", Float16Type()),
    _dtype(11, "bfloat16", "u2", BFloat16Type()),
    _dtype(12, "float32", "f4", Float32Type()),
    _dtype(13, "float64", "f8", Float64Type()),
    _dtype(14, "index", "i8", IndexType()),
)

FLOAT_NAMES = ("float16", "bfloat16", "float32", "float64")
"""The float types, narrowest first: a cast up this list is exact."""

BY_CODE: dict[int, DType] = {d.code: d for d in DTYPES}
BY_NAME: dict[str, DType] = {d.name: d for d in DTYPES}
BY_IR: dict[Attribute, DType] = {d.ir: d for d in DTYPES}

SCALAR_DTYPES = frozenset({"index", "int64", "bool"})
"""Element types of a scalar (integer value) slot: `index`, `i64` and `i1` values."""

TENSOR_DTYPES = frozenset(d.name for d in DTYPES if d.name != "index")
"""Element types of a tensor slot or payload."""


def of_ir(type_: Attribute) -> DType | None:
    return BY_IR.get(type_)


def of_torch(dtype: torch.dtype) -> DType | None:
    return BY_NAME.get(str(dtype).removeprefix("torch."))
