"""Creation: full, zeros, ones, random draws, arange, diagonal, tril/triu, constants."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

from mlxir.evaluator.arrays import (
    to_mx,
)
from mlxir.evaluator.registry import (
    KERNELS,
    Kernel,
    KernelFactory,
    Props,
    ResultDtypes,
    int_of,
    ints_of,
    kernel,
    mixed_list,
    result_dtype,
)


@kernel("mlx.full")
def _full(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    # Operand order (IRDL): the 0-d value first, then the shape's index operands.
    shape_of = mixed_list(ints_of(props, "static_shape"))
    return lambda operands: (mx.full(shape_of(operands[1:]), operands[0]),)


def _filled(fn: Callable[..., mx.array]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        shape_of = mixed_list(ints_of(props, "static_shape"))
        dtype = result_dtype(result_dtypes)
        return lambda operands: (fn(shape_of(operands), dtype=dtype),)

    return factory


KERNELS.update({"mlx.zeros": _filled(mx.zeros), "mlx.ones": _filled(mx.ones)})


def _drawn(fn: Callable[..., mx.array]) -> KernelFactory:
    """A draw from MLX's global generator: `mx.random.seed` makes a run repeatable."""

    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        shape_of = mixed_list(ints_of(props, "static_shape"))
        dtype = result_dtype(result_dtypes)
        return lambda operands: (fn(shape=shape_of(operands), dtype=dtype),)

    return factory


DRAWS: dict[str, Callable[..., mx.array]] = {
    "mlx.random_uniform": mx.random.uniform,
    "mlx.random_normal": mx.random.normal,
}
"""The ops that draw from MLX's generator: a program holding one runs interpreted, as
`mx.compile` would freeze the values drawn while tracing."""
KERNELS.update({name: _drawn(draw) for name, draw in DRAWS.items()})
RANDOM_OPS = frozenset(DRAWS)


@kernel("mlx.arange")
def _arange(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    bounds_of = mixed_list(ints_of(props, "static_bounds"))
    dtype = result_dtype(result_dtypes)

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        start, stop, step = bounds_of(operands)
        return (mx.arange(start, stop, step, dtype=dtype),)

    return run


@kernel("mlx.diagonal")
def _diagonal(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    offset, axis1, axis2 = int_of(props, "offset"), int_of(props, "axis1"), int_of(props, "axis2")
    return lambda operands: (mx.diagonal(operands[0], offset, axis1, axis2),)


@kernel("mlx.tril")
def _tril(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    k = int_of(props, "k")
    return lambda operands: (mx.tril(operands[0], k),)


@kernel("mlx.triu")
def _triu(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    k = int_of(props, "k")
    return lambda operands: (mx.triu(operands[0], k),)


@kernel("mlx.constant")
def _constant(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    value = to_mx(props["value"], result_dtype(result_dtypes))  # from a NumPy array, or an mx.array from a program
    # Computed now, in the loading thread: MLX cannot evaluate a graph built on
    # another thread's stream ("There is no Stream(cpu, 0) in current thread").
    mx.eval(value)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
    result = (value,)
    return lambda operands: result


