"""The dialect registry: which dialects mlxir's IR may hold, and the xDSL context that
parses and builds it.

`make_context()` gives an xDSL context with every dialect registered (loaded lazily)
and the fixes to the pinned xDSL applied; `parse_mlir_file` reads a module from a text
file with one-line errors. Every part above the dialects (transforms, codegen,
conversions, runtime, tools) takes its context from here; the passes are registered
one layer up, in `conversions/registry.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Dialect


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


def make_context() -> Context:
    """A context with every dialect mlxir knows, for the tools, library users and tests."""
    from mlxir.support import xdsl_fixes

    xdsl_fixes.apply()
    ctx = Context()
    register_dialects(ctx)
    return ctx


def parse_mlir_file(path: Path, *extra: Dialect) -> ModuleOp:
    """The module in the text file `path`, read with mlxir's dialects and the `extra`
    ones (`pdl`, `transform`); a ValueError of one line naming `file:line:col` and
    the problem where it does not parse."""
    from xdsl.parser import Parser
    from xdsl.utils.exceptions import ParseError

    ctx = make_context()
    for dialect in extra:
        ctx.load_dialect(dialect)
    try:
        return Parser(ctx, path.read_text(), str(path)).parse_module()
    except OSError as error:
        raise ValueError(f"cannot read {path}: {error.strerror}") from error
    except ParseError as error:
        lines = str(error).strip().splitlines()
        # xDSL's message: the location, the source line, a caret, then the problem.
        raise ValueError(f"{lines[0]} {lines[-1]}" if len(lines) > 1 else lines[0]) from error
    except Exception as error:  # a verifier or type constraint raised while parsing
        first = str(error).strip().splitlines()
        raise ValueError(f"{path}: cannot parse: {first[0] if first else type(error).__name__}") from error
