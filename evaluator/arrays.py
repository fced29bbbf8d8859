"""Element types at run time (the table is `support/dtypes.py`) and array conversions.

Array conversions never go through float64 and never round: bfloat16 crosses the
numpy/torch boundary as its raw 16-bit pattern (numpy has no bfloat16; `to_numpy`
widens it to float32, which holds every bfloat16 value exactly). torch and NumPy are
imported lazily, by the conversions that take or give their arrays, so loading a
program and running it on `mx.array`s imports neither.
"""

from __future__ import annotations

import sys
from functools import cache
from typing import TYPE_CHECKING, Any, cast

import mlx.core as mx

from mlxir.support import dtypes

if TYPE_CHECKING:
    import numpy as np
    import torch
    from xdsl.ir import Attribute

MX_DTYPES: dict[str, mx.Dtype] = {name: dtypes.BY_NAME[name].mlx for name in sorted(dtypes.TENSOR_DTYPES)}
"""Every dtype name the runtime knows, with its MLX dtype."""

DTYPE_NAMES: tuple[str, ...] = tuple(MX_DTYPES)

_MX_NAMES: dict[mx.Dtype, str] = {dtype: name for name, dtype in MX_DTYPES.items()}


@cache
def _numpy_names() -> dict[np.dtype[Any], str]:
    """Dtype names by NumPy dtype (native byte order), from the table's layouts; NumPy
    has no bfloat16 (see `to_numpy`). Built on first use."""
    return {
        dtypes.BY_NAME[name].numpy.newbyteorder("="): name for name in DTYPE_NAMES if name != "bfloat16"
    }


def is_numpy_array(value: object) -> bool:
    """Whether `value` is a NumPy array, without importing NumPy: none exists before
    something imported it."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.ndarray)


def is_numpy_integer(value: object) -> bool:
    """Whether `value` is a NumPy integer scalar, without importing NumPy."""
    np = sys.modules.get("numpy")
    return np is not None and isinstance(value, np.integer)


def is_floating(name: str) -> bool:
    return name in dtypes.FLOAT_NAMES


def is_integer(name: str) -> bool:
    """Integers proper (signed or unsigned), not bool."""
    return name.startswith(("int", "uint"))


# ---------------------------------------------------------------------------
# IR element types
# ---------------------------------------------------------------------------


def element_type_name(element_type: Attribute) -> str:
    """The dtype name of a builtin element type (`i1` is "bool"; signless integers are
    signed; `index` in a tensor is "int64")."""
    dtype = dtypes.of_ir(element_type)
    if dtype is not None and dtype.name == "index":
        return "int64"
    if dtype is None:
        raise ValueError(f"element type {element_type} has no MLX dtype")
    return dtype.name


def element_type_from_name(name: str) -> Attribute:
    """The builtin element type of a dtype name (integers are signless, unsigned `ui`)."""
    if name not in MX_DTYPES:
        raise ValueError(f"unknown dtype name '{name}'")
    return dtypes.BY_NAME[name].ir


def element_type_to_mx(element_type: Attribute) -> mx.Dtype:
    return MX_DTYPES[element_type_name(element_type)]


def mx_to_element_type(dtype: mx.Dtype) -> Attribute:
    return element_type_from_name(mx_dtype_name(dtype))


def mx_dtype(name: str) -> mx.Dtype:
    if name not in MX_DTYPES:
        raise ValueError(f"unknown dtype name '{name}'")
    return MX_DTYPES[name]


def mx_dtype_name(dtype: mx.Dtype) -> str:
    return _MX_NAMES[dtype]


def numpy_dtype_name(dtype: np.dtype[Any]) -> str:
    import numpy as np

    dtype = np.dtype(dtype)
    names = _numpy_names()
    if dtype not in names:
        raise ValueError(f"numpy dtype {dtype} has no MLX dtype")
    return names[dtype]


def torch_dtype(name: str) -> torch.dtype:
    return dtypes.BY_NAME[name].torch


def torch_dtype_name(dtype: torch.dtype) -> str:
    name = str(dtype).removeprefix("torch.")
    if name not in MX_DTYPES:
        raise ValueError(f"torch dtype {dtype} has no MLX dtype")
    return name


# ---------------------------------------------------------------------------
# Arrays
# ---------------------------------------------------------------------------


def _is_torch_tensor(value: object) -> bool:
    return type(value).__module__.startswith("torch") and hasattr(value, "detach")


def to_mx(value: object, dtype: mx.Dtype | None = None) -> mx.array:
    """An `mx.array` from a numpy array, a torch tensor, an `mx.array` or a Python scalar.

    The source dtype is kept exactly (numpy float64 stays float64, which plain
    `mx.array` would narrow to float32); `dtype`, when given, is then applied with
    `astype` (a bfloat16 target from float32 data rounds once, exactly for data that
    came from bfloat16; from float64 data MLX rounds through float32, so a tie can
    round twice: hand bfloat16 over as a torch tensor or float32 for bit-exactness)."""
    if isinstance(value, mx.array):
        array = value
    elif _is_torch_tensor(value):
        array = _torch_to_mx(value)
    else:
        import numpy as np

        data = np.asarray(value)
        if not data.dtype.isnative:
            data = data.astype(data.dtype.newbyteorder("="))
        array = mx.array(data, dtype=MX_DTYPES[numpy_dtype_name(data.dtype)])
    if dtype is not None and array.dtype != dtype:
        array = array.astype(dtype)
    return array


def _torch_to_mx(tensor: Any) -> mx.array:
    import torch

    # a lazily conjugated or negated view (`z.conj()`) holds its values only once resolved
    tensor = tensor.detach().cpu().resolve_conj().resolve_neg().contiguous()
    if tensor.dtype == torch.bfloat16:
        bits = tensor.view(torch.int16).numpy()
        return mx.array(bits, dtype=mx.int16).view(mx.bfloat16)
    data = tensor.numpy()
    return mx.array(data, dtype=MX_DTYPES[numpy_dtype_name(data.dtype)])


def to_numpy(array: mx.array) -> np.ndarray:
    """A numpy copy of `array` (evaluating it); bfloat16 becomes float32, exactly."""
    import numpy as np

    if array.dtype == mx.bfloat16:
        bits = np.array(array.view(mx.uint16), copy=True).astype(np.uint32) << 16
        return bits.view(np.float32)
    return cast("np.ndarray[Any, np.dtype[Any]]", np.array(array, copy=True))  # numpy cannot see an mx.array's dtype


def to_torch(array: mx.array) -> torch.Tensor:
    """A torch copy of `array` (evaluating it), bfloat16 included, bit for bit."""
    import numpy as np
    import torch

    if array.dtype == mx.bfloat16:
        bits = cast("np.ndarray[Any, np.dtype[np.int16]]", np.array(array.view(mx.int16), copy=True))
        return torch.from_numpy(bits).view(torch.bfloat16)  # pyright: ignore[reportUnknownMemberType] (torch leaves from_numpy's parameter unannotated)
    return torch.from_numpy(np.array(array, copy=True))  # pyright: ignore[reportUnknownMemberType] (torch leaves from_numpy's parameter unannotated)
