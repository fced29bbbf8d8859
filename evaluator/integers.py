"""Runtime integers: `index` values (dims, `arith` ops) computed on the host."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any

import mlx.core as mx

from mlxir.evaluator.registry import (
    KERNELS,
    NOT_KERNELS,
    Kernel,
    KernelFactory,
    Props,
    ResultDtypes,
    Value,
    int_of,
    kernel,
    result_dtype,
)


@kernel("mlx.dim")
def _dim(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    axis = int_of(props, "axis")
    return lambda operands: (operands[0].shape[axis],)


@kernel("mlx.from_index")
def _from_index(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    dtype = result_dtype(result_dtypes)
    return lambda operands: (mx.array(operands[0], dtype=dtype),)


# ---------------------------------------------------------------------------
# arith on integers and `index` (Python ints; no fixed-width wrap-around)
# ---------------------------------------------------------------------------

_UNSIGNED = (1 << 64) - 1


def _remsi(a: int, b: int) -> int:
    """C's `%`: truncated division, the remainder takes the dividend's sign."""
    r = abs(a) % abs(b)
    return -r if a < 0 else r


def _unsigned(compare: Callable[[int, int], bool]) -> Callable[[int, int], bool]:
    # Two's complement as 64 bits: orders narrower integers the same way.
    return lambda a, b: compare(a & _UNSIGNED, b & _UNSIGNED)


CMPI_PREDICATES: tuple[Callable[[int, int], bool], ...] = (
    operator.eq,  # eq
    operator.ne,  # ne
    operator.lt,  # slt
    operator.le,  # sle
    operator.gt,  # sgt
    operator.ge,  # sge
    _unsigned(operator.lt),  # ult
    _unsigned(operator.le),  # ule
    _unsigned(operator.gt),  # ugt
    _unsigned(operator.ge),  # uge
)
"""`arith.cmpi` predicates by their enum value (eq = 0 ... uge = 9)."""


def _binary_int(fn: Callable[[int, int], Any]) -> KernelFactory:
    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        return lambda operands: (fn(operands[0], operands[1]),)

    return factory


KERNELS.update(
    {
        "arith.addi": _binary_int(operator.add),
        "arith.subi": _binary_int(operator.sub),
        "arith.muli": _binary_int(operator.mul),
        "arith.floordivsi": _binary_int(operator.floordiv),  # floor, as Python's //  # pyright: ignore[reportUnknownMemberType, reportUnknownArgumentType] (typeshed leaves operator.floordiv unannotated)
        "arith.remsi": _binary_int(_remsi),
        "arith.minsi": _binary_int(min),
        "arith.maxsi": _binary_int(max),
        # bitwise, as on `i1` (a SymBool is a Python bool; `True ^ True` is False)
        "arith.andi": _binary_int(lambda a, b: a & b),
        "arith.ori": _binary_int(lambda a, b: a | b),
        "arith.xori": _binary_int(lambda a, b: a ^ b),
    }
)


@kernel("arith.constant")
def _arith_constant(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    result = (props["value"],)
    return lambda operands: result


@kernel("arith.cmpi")
def _cmpi(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return _binary_int(CMPI_PREDICATES[int_of(props, "predicate")])(props, result_dtypes)


@kernel("arith.select")
def _select(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (operands[1] if operands[0] else operands[2],)


@kernel("arith.index_cast")
def _index_cast(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (int(operands[0]),)


__all__ = [
    "CMPI_PREDICATES",
    "KERNELS",
    "NOT_KERNELS",
    "Kernel",
    "KernelFactory",
    "Value",
]

