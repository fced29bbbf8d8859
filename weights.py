"""Weights live in the IR: a global's payload is its `dense<...>` value.

The importer puts every parameter, buffer and lifted constant there; a pass that
rewrites a weight does it through the IR and the rewriter (`fold-weight-transposes`);
the serializer writes the values and the deserializer puts them back; `mlx-opt`
prints them (as hex beyond 100 elements) and parses them back.

xDSL keeps a dense value as bytes in its own layout: little-endian C order, `true` as
0xFF, bfloat16 as its raw 16-bit pattern. numpy has no bfloat16, so an array of a
bfloat16 weight holds those bits as `uint16`.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp, TensorType

from mlxir import dtypes


class WeightError(ValueError):
    """A value that cannot be a global's payload: wrong type, element type or shape."""


def as_numpy(value: Any, what: str) -> np.ndarray:
    """A numpy array of a torch tensor (bfloat16 as `uint16` bits), a numpy array or
    scalar, without copying where the layout allows."""
    if isinstance(value, np.ndarray):
        return value
    if type(value).__module__.split(".")[0] == "torch":
        import torch

        if isinstance(value, torch.Tensor):
            tensor = value.detach().to("cpu").contiguous()
            if tensor.dtype == torch.bfloat16:
                return tensor.view(torch.int16).numpy().view(np.uint16)
            return tensor.numpy()
    if isinstance(value, np.generic):
        return np.asarray(value)
    raise WeightError(f"{what}: expected a torch.Tensor or numpy.ndarray, got {type(value).__name__}")


def element_bytes(array: np.ndarray, dtype: dtypes.DType) -> bytes:
    """The payload bytes of `array` for `dtype`: little-endian, C order, bools as 0/1."""
    if dtype.name == "bool":
        array = array != 0
    # tobytes lays out C order itself: a transposed weight is copied once, not twice
    return array.astype(dtype.numpy, copy=False).tobytes()


def checked_array(value: Any, dtype: dtypes.DType, shape: tuple[int, ...], what: str) -> np.ndarray:
    """`value` as an array of `dtype`'s layout, refused when its element type or shape
    differs from the global's: nothing is converted behind the user's back."""
    array = as_numpy(value, what)
    got = array.dtype.name
    if dtype.name == "bfloat16" and got in ("uint16", "bfloat16"):
        array = array.view(np.uint16) if got == "bfloat16" else array
    elif got != dtype.name:
        raise WeightError(f"{what}: element type {got} does not match the global's {dtype.name}")
    if tuple(array.shape) != shape:
        raise WeightError(f"{what}: shape {list(array.shape)} does not match the global's {list(shape)}")
    return array


def dense_attr(array: np.ndarray, dtype: dtypes.DType, shape: tuple[int, ...]) -> DenseIntOrFPElementsAttr:
    """The `dense<...>` value holding `array` (the inverse of `dense_data`)."""
    raw = element_bytes(array, dtype)
    if dtype.name == "bool":
        raw = (np.frombuffer(raw, dtype=np.uint8) * 0xFF).astype(np.uint8).tobytes()
    type_: Any = TensorType(dtype.ir, shape)
    return DenseIntOrFPElementsAttr(type_, BytesAttr(raw))


def dense_data(attr: DenseIntOrFPElementsAttr, dtype: dtypes.DType) -> bytes:
    """The payload bytes of a `dense<...>` value (xDSL stores `true` as 0xFF)."""
    raw = attr.data.data
    if dtype.name == "bool":
        return (np.frombuffer(raw, dtype=np.uint8) != 0).astype(np.uint8).tobytes()
    return raw


def dense_of(value: Any, tensor_type: TensorType[Any], what: str) -> DenseIntOrFPElementsAttr:
    """The value of a global of `tensor_type` holding `value` (a torch tensor or numpy
    array of exactly that element type and shape)."""
    dtype = dtypes.of_ir(tensor_type.get_element_type())
    if dtype is None:
        raise WeightError(f"{what}: element type {tensor_type.get_element_type()} cannot be stored")
    shape = tuple(tensor_type.get_shape())
    return dense_attr(checked_array(value, dtype, shape, what), dtype, shape)


def array_of(attr: DenseIntOrFPElementsAttr) -> np.ndarray:
    """A read-only array view of a `dense<...>` value (bfloat16 as `uint16` bits)."""
    dtype = dtypes.of_ir(attr.get_element_type())
    if dtype is None:
        raise WeightError(f"element type {attr.get_element_type()} has no array form")
    shape = attr.get_shape()
    if dtype.name == "bool":
        return (np.frombuffer(attr.data.data, dtype=np.uint8) != 0).reshape(shape)
    return np.frombuffer(attr.data.data, dtype=dtype.numpy).reshape(shape)


def weights_of(module: ModuleOp) -> dict[str, np.ndarray]:
    """Each global's name → its value, for the globals that hold one."""
    from mlxir.dialects.mlx import GlobalOp

    return {
        op.sym_name.data: array_of(op.value)
        for op in module.ops
        if isinstance(op, GlobalOp) and isinstance(op.value, DenseIntOrFPElementsAttr)
    }


def release_weights(module: ModuleOp) -> None:
    """Drops the globals' values from a module nothing will use again. An IR module is
    full of reference cycles, so only the cyclic collector frees it, later; its
    weights, which no cycle holds, are freed at once (a compile serializes the module,
    then drops it: otherwise each compile in a process would keep its payload alive
    until the next full collection)."""
    from mlxir.dialects.mlx import GlobalOp

    for op in module.ops:
        if isinstance(op, GlobalOp):
            op.properties.pop("value", None)
