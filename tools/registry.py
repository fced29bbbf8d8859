"""The one place that says which dialects and passes mlxir's tools know."""

from __future__ import annotations

from collections.abc import Callable

from xdsl.context import Context
from xdsl.ir import Dialect
from xdsl.passes import ModulePass


def _aten() -> Dialect:
    from mlxir.dialects.aten import Aten

    return Aten


def _mlx() -> Dialect:
    from mlxir.dialects.mlx import MLX

    return MLX


def _builtin() -> Dialect:
    from xdsl.dialects.builtin import Builtin

    return Builtin


def _func() -> Dialect:
    from xdsl.dialects.func import Func

    return Func


def _arith() -> Dialect:
    from xdsl.dialects.arith import Arith

    return Arith


DIALECTS: dict[str, Callable[[], Dialect]] = {
    "builtin": _builtin,
    "func": _func,
    "arith": _arith,
    "aten": _aten,
    "mlx": _mlx,
}


def register_dialects(ctx: Context) -> None:
    for name, factory in DIALECTS.items():
        if name == "builtin":
            ctx.load_dialect(factory())
        else:
            ctx.register_dialect(name, factory)


def _canonicalize() -> type[ModulePass]:
    from xdsl.transforms.canonicalize import CanonicalizePass

    return CanonicalizePass


def _cse() -> type[ModulePass]:
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    return CommonSubexpressionElimination


def _dce() -> type[ModulePass]:
    from xdsl.transforms.dead_code_elimination import DeadCodeElimination

    return DeadCodeElimination


PASSES: dict[str, Callable[[], type[ModulePass]]] = {
    "canonicalize": _canonicalize,
    "cse": _cse,
    "dce": _dce,
}
"""Pass name → factory; factories import lazily so `mlx-opt --help` stays fast."""


def registered_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    return dict(PASSES)
