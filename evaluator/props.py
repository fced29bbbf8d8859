"""An op's properties as plain Python values, the form every kernel factory reads.

    IntegerAttr               -> int (an `i1` attribute -> bool, which is an int)
    FloatAttr                 -> float
    DenseArrayBase            -> tuple of ints (or floats)
    StringAttr                -> str
    UnitAttr                  -> True (an absent optional property has no key)
    SymbolRefAttr             -> str, the symbol name ("a::b" when nested)
    DenseIntOrFPElementsAttr  -> numpy array of the element type's dtype and shape
                                 (bfloat16 as float32, which holds it exactly)
    operandSegmentSizes       -> tuple of ints (a DenseArrayBase like the others)
    BoolAttr-like IntAttr     -> int
    anything else             -> the attribute itself (types, enums a kernel may read)
"""

from __future__ import annotations

from math import prod
from typing import TYPE_CHECKING, Any, cast

from xdsl.dialects.builtin import (
    BFloat16Type,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntAttr,
    IntegerAttr,
    IntegerType,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Attribute, Operation

from mlxir.evaluator.arrays import element_type_name
from mlxir.support import dtypes

if TYPE_CHECKING:
    import numpy as np


def python_props(op: Operation) -> dict[str, object]:
    """`op.properties` converted with `python_value`, keyed by property name."""
    return {name: python_value(attr) for name, attr in op.properties.items()}


def python_value(attr: Attribute) -> object:
    match attr:
        case IntegerAttr():
            value = attr.value.data
            if isinstance(attr.type, IntegerType) and attr.type.width.data == 1:
                return value != 0
            return int(value)
        case FloatAttr():
            return float(attr.value.data)
        case DenseArrayBase():
            return tuple(cast(Any, attr).get_values())
        case StringAttr():
            return attr.data
        case UnitAttr():
            return True
        case SymbolRefAttr():
            return "::".join([attr.root_reference.data, *(r.data for r in attr.nested_references)])
        case DenseIntOrFPElementsAttr():
            return dense_to_numpy(attr)
        case IntAttr():
            return attr.data
        case _:
            return str(attr)  # as a program gives it (`codegen/attributes.py`, TextValue)


def dense_to_numpy(attr: DenseIntOrFPElementsAttr[Any]) -> np.ndarray:
    """The elements of a `dense<...>` literal, read from its raw little-endian bytes."""
    import numpy as np

    element_type = attr.get_element_type()
    shape = attr.get_shape()
    raw = attr.data.data
    if isinstance(element_type, BFloat16Type):
        bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
        flat = bits.view(np.float32)
    else:
        name = element_type_name(element_type)
        if name == "bool":  # xDSL stores i1 as one byte, true as 0xff
            flat = np.frombuffer(raw, dtype=np.uint8) != 0
        else:
            layout = dtypes.BY_NAME[name].numpy
            flat = np.frombuffer(raw, dtype=layout).astype(layout.newbyteorder("="))
    count = prod(shape)
    if flat.size == 1 and count != 1:  # a splat
        return np.full(shape, flat[0], dtype=flat.dtype)
    return flat.reshape(shape).copy()
