"""Helpers shared by the runtime kernels' tests (`test_kernels*.py`): inputs drawn in
each element type, IR text with its types substituted, run through the reference
interpreter, and the comparisons.

Tolerances are relative (with the same absolute floor for values near zero) and sized
to the element type's precision: f32 1e-5 (a few dozen ulps: room for reductions,
matmuls and MLX's vectorised transcendental approximations); f16 1e-3 and bf16 1e-2
(about one ulp, 2^-10 and 2^-7: a kernel that computes in f32 and rounds once is
within half an ulp). Low-precision inputs are drawn exactly representable and the
reference runs in float64 on those same values, so the tolerance measures only the
kernel's own rounding. Ops that round intermediates in the low-precision type by
design (attention, matmul chains, normalisation) say so where they widen it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from string import Template
from typing import Any

import mlx.core as mx
import numpy as np
import torch

from mlxir.evaluator import arrays as dtypes
from mlxir.runtime.ir_interpreter import parse_module, run_module

TOL = {"f32": 1e-5, "f16": 1e-3, "bf16": 1e-2}
MX_OF = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16}
FLOATS = list(TOL)


def rng(seed: int = 0) -> np.random.Generator:
    return np.random.default_rng(seed)


def quantize(values: np.ndarray, ty: str) -> np.ndarray:
    """`values` rounded to `ty`, returned as float64 (exactly representable in `ty`)."""
    array = dtypes.to_mx(np.asarray(values, np.float64), MX_OF[ty])
    return dtypes.to_numpy(array).astype(np.float64)


def floats(shape: Sequence[int], ty: str = "f32", low: float = -2.0, high: float = 2.0,
           seed: int = 0) -> np.ndarray:
    return quantize(rng(seed).uniform(low, high, shape), ty)


def ints(shape: Sequence[int], low: int = -5, high: int = 6, dtype: Any = np.int32,
         seed: int = 0) -> np.ndarray:
    return rng(seed).integers(low, high, shape).astype(dtype)


def ir(text: str, **types: str) -> str:
    return Template(text).substitute(types)


def run_ir(text: str, *inputs: Any, payloads: dict[str, Any] | None = None,
           state: dict[str, Any] | None = None) -> list[Any]:
    outputs = run_module(parse_module(text), payloads or {}, list(inputs), state)
    return [dtypes.to_numpy(o) if isinstance(o, mx.array) else o for o in outputs]


def check(got: Any, ref: Any, tol: float = TOL["f32"]) -> None:
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    np.testing.assert_allclose(got.astype(np.float64), ref.astype(np.float64), rtol=tol, atol=tol)


def check_exact(got: Any, ref: Any, dtype: Any = None) -> None:
    got, ref = np.asarray(got), np.asarray(ref)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    if dtype is not None:
        assert got.dtype == np.dtype(dtype), f"dtype {got.dtype} != {dtype}"
    np.testing.assert_array_equal(got, ref)


def softmax(x: np.ndarray, axis: int | tuple[int, ...] = -1) -> np.ndarray:
    e = np.exp(x - np.max(x, axis=axis, keepdims=True))
    return e / np.sum(e, axis=axis, keepdims=True)


def torch_ref(fn: Callable[..., torch.Tensor]) -> Callable[..., np.ndarray]:
    return lambda *xs: fn(*(torch.from_numpy(np.asarray(x)) for x in xs)).numpy()


def check_relative_to_max(got: Any, ref: np.ndarray, bound: float) -> None:
    got = np.asarray(got, np.float64)
    assert got.shape == ref.shape, f"shape {got.shape} != {ref.shape}"
    error = np.abs(got - ref).max() / np.abs(ref).max()
    assert error <= bound, f"max error {error:.3g} of max |reference| > {bound}"
