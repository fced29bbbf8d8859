"""Weights live in the IR: a global's payload is its `dense<...>` value.

The importer puts every parameter, buffer and lifted constant there; a pass that
rewrites a weight does it through the IR and the rewriter (`fold-weight-transposes`);
the serializer writes the values and the deserializer puts them back; `mlx-opt`
prints them (as hex beyond 100 elements) and parses them back.

xDSL keeps a dense value as bytes in its own layout: little-endian C order, `true` as
0xFF, bfloat16 as its raw 16-bit pattern. numpy has no bfloat16, so an array of a
bfloat16 weight holds those bits as `uint16`.

A value of `SHARED_FROM` bytes or more is not copied into a `bytes`: its `BytesAttr`
holds a read-only buffer over the array it came from (a torch parameter's storage, or
the array a pass computed), which the serializer copies once, into the program. Copies
into fresh memory are slow on this host (pages are faulted in one by one): the import's
copy of the Qwen3-0.6B shape's 2.4 GB took 6 of its compile's 21.5 s
(`docs/compile-time.md`). A shared value compares by content, as `bytes` do, and
hashes its length and ends only. Importing reads the exported program's tensors in
place: the module sees a change made to them before it is serialized.
"""

from __future__ import annotations

import ctypes
from functools import cache
from typing import Any, cast

import numpy as np
from xdsl.dialects.builtin import BytesAttr, DenseIntOrFPElementsAttr, ModuleOp, TensorType

from mlxir.support import dtypes


class WeightError(ValueError):
    """A value that cannot be a global's payload: wrong type, element type or shape."""


def as_numpy(value: Any, what: str) -> np.ndarray:
    """A numpy array of a torch tensor (bfloat16 as `uint16` bits), a numpy array or
    scalar, without copying where the layout allows."""
    if isinstance(value, np.ndarray):
        return cast(np.ndarray, value)  # isinstance leaves its type parameters unknown
    if type(value).__module__.split(".")[0] == "torch":
        import torch

        if isinstance(value, torch.Tensor):
            tensor = value.detach().to("cpu").contiguous()
            if tensor.dtype == torch.bfloat16:
                return tensor.view(torch.int16).numpy().view(np.uint16)
            return tensor.numpy()
    if isinstance(value, np.generic):
        return np.asarray(cast(np.generic, value))  # isinstance leaves its type parameter unknown
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


SHARED_FROM = 1 << 20
"""Values this large (in bytes) are held by reference, not copied (see above)."""


def _shared_hash(self: ctypes.Array[ctypes.c_char]) -> int:
    """Length and ends only: hashing every byte of a weight would cost a read of it,
    and equal shared values still hash alike (a shared value and `bytes` with the same
    content compare equal but hash apart: at worst a dictionary misses a duplicate)."""
    return hash((len(self), self[:32], self[-32:]))


def _shared_equal(self: ctypes.Array[ctypes.c_char], other: Any) -> bool:
    if self is other:
        return True
    try:
        theirs = np.frombuffer(other, dtype=np.uint8)
    except TypeError:
        return NotImplemented
    mine = cast(np.ndarray, np.frombuffer(self, dtype=np.uint8))  # pyright: ignore[reportCallIssue, reportArgumentType] (ctypes arrays export the buffer protocol; typeshed does not say so)
    return bool(np.array_equal(mine, theirs))


@cache
def _shared_bytes_type(length: int) -> type[ctypes.Array[ctypes.c_char]]:
    """A `length`-byte ctypes array type (it exports the buffer protocol over memory it
    does not own) that compares by content, like `bytes`, and is hashable, as xDSL
    attributes must be."""

    def hex_digits(self: ctypes.Array[ctypes.c_char]) -> str:
        return bytes(self).hex()

    return type(
        "SharedBytes",
        (ctypes.c_char * length,),
        {"__hash__": _shared_hash, "__eq__": _shared_equal, "hex": hex_digits},
    )


TRANSPOSE_BLOCK = 16
"""Rows of the source a transposing copy moves at a time: numpy's own strided copy
(`ascontiguousarray(w.T)`) runs at about half this speed here (21 against 9 ms for a
3072x1024 float32 matrix)."""


def concatenated_columns(parts: list[np.ndarray]) -> np.ndarray:
    """`np.concatenate(parts, axis=1)` of 2-D arrays, in C order, a transposed part
    (F order: a `linear` weight's `w.T`) copied in blocks of its source's rows."""
    rows = parts[0].shape[0]
    out = np.empty((rows, sum(p.shape[1] for p in parts)), dtype=np.result_type(*parts))
    column = 0
    for part in parts:
        target = out[:, column : column + part.shape[1]]
        if part.flags.f_contiguous and not part.flags.c_contiguous:
            source = part.T  # C order: the rows of the transpose
            for start in range(0, source.shape[0], TRANSPOSE_BLOCK):
                target[:, start : start + TRANSPOSE_BLOCK] = source[start : start + TRANSPOSE_BLOCK].T
        else:
            target[...] = part
        column += part.shape[1]
    return out


def c_order(array: np.ndarray) -> np.ndarray:
    """`array` in C order, without a copy where it is already."""
    if array.flags.c_contiguous:
        return array
    if array.ndim == 2:
        return concatenated_columns([array])
    return np.ascontiguousarray(array)


def _shared(array: np.ndarray) -> ctypes.Array[ctypes.c_char] | None:
    """A shared buffer over `array`'s memory (C order), or None where it cannot be:
    ctypes maps writable memory only (a read-only array is the IR's own, not the
    user's, and is copied)."""
    contiguous = c_order(array)
    if not contiguous.flags.writeable or contiguous.nbytes == 0:
        return None
    # from_buffer keeps `contiguous` (and so the tensor it views) alive
    return _shared_bytes_type(contiguous.nbytes).from_buffer(contiguous)  # pyright: ignore[reportArgumentType] (typeshed: ctypes from_buffer takes any writable buffer, a numpy array included)


def dense_attr(array: np.ndarray, dtype: dtypes.DType, shape: tuple[int, ...]) -> DenseIntOrFPElementsAttr:
    """The `dense<...>` value holding `array` (the inverse of `dense_data`): by
    reference from `SHARED_FROM` bytes on, else copied."""
    type_: Any = TensorType(dtype.ir, shape)
    if dtype.name != "bool" and array.nbytes >= SHARED_FROM:
        shared = _shared(array.astype(dtype.numpy, copy=False))
        if shared is not None:
            return DenseIntOrFPElementsAttr(type_, BytesAttr(shared))  # pyright: ignore[reportArgumentType] (xDSL types BytesAttr.data as bytes; a shared ctypes buffer is read the same way)
    raw = element_bytes(array, dtype)
    if dtype.name == "bool":
        raw = (np.frombuffer(raw, dtype=np.uint8) * 0xFF).astype(np.uint8).tobytes()
    return DenseIntOrFPElementsAttr(type_, BytesAttr(raw))


def dense_data(attr: DenseIntOrFPElementsAttr, dtype: dtypes.DType) -> bytes | memoryview:
    """The payload bytes of a `dense<...>` value (xDSL stores `true` as 0xFF): the
    value's own bytes, or a byte view of a shared value's buffer."""
    raw = attr.data.data
    if dtype.name == "bool":
        return (np.frombuffer(raw, dtype=np.uint8) != 0).astype(np.uint8).tobytes()
    return raw if isinstance(raw, bytes) else memoryview(raw).cast("B")  # pyright: ignore[reportUnnecessaryIsInstance] (xDSL types BytesAttr.data bytes; a shared value holds a ctypes buffer)


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
    array = np.frombuffer(attr.data.data, dtype=dtype.numpy).reshape(shape)
    array.flags.writeable = False  # a shared value's memory is the user's tensor
    return array


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
