"""Binding: a call's flat inputs checked against what the program declares (count,
kind, dtype, rank, static dims, the dynamic dims' recorded ranges and the relations
between them) and read into MLX; an `InputError` names the input at fault. The dims'
expressions come from the program file and are parsed here, never handed to `eval`."""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import mlx.core as mx

from mlxir.codegen.errors import ProgramError
from mlxir.evaluator.arrays import is_numpy_array, is_numpy_integer, mx_dtype, to_mx
from mlxir.runtime.signature import InputError

INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class InputSpec:
    """What one input must be: a tensor of `dtype` and `shape` (None: dynamic, with
    `dims[i]` its symbol expression), or an integer (`dtype == "index"`)."""

    name: str
    dtype: str
    shape: tuple[int | None, ...]
    dims: tuple[str, ...]

    def describe(self, symbols: bool = True) -> str:
        """`float32[s0, 4]`, or with `symbols=False` (for messages to users, who never
        named torch.export's symbols) `float32[?, 4]`."""
        if self.dtype == "index":
            return "an integer"
        dims = ", ".join(
            str(d) if d is not None else (self.dims[i] if symbols and i < len(self.dims) and self.dims[i] else "?")
            for i, d in enumerate(self.shape)
        )
        return f"{self.dtype}[{dims}]"


def kind_of(value: Any) -> str:
    module = type(value).__module__
    if module.startswith("torch"):
        return "torch"
    if is_numpy_array(value):
        return "numpy"
    if isinstance(value, mx.array):
        return "mlx"
    return "other"


def dtype_name(value: Any) -> str:
    kind = kind_of(value)
    if kind == "torch":
        return str(value.dtype).removeprefix("torch.")
    if kind == "numpy":
        return "bool" if value.dtype.kind == "b" else str(value.dtype)
    if kind == "mlx":
        return str(value.dtype).removeprefix("mlx.core.")
    return type(value).__name__


class InputBinder:
    """The checks of a program's flat inputs, built once at load."""

    def __init__(
        self,
        specs: Sequence[InputSpec],
        size_expressions: Sequence[Mapping[int, ast.expr]],
        symbol_ranges: Mapping[str, tuple[int, int]],
    ):
        self.specs = specs
        self.size_expressions = size_expressions
        self.symbol_ranges = symbol_ranges

    def check(self, inputs: Sequence[Any]) -> list[Any]:
        if len(inputs) != len(self.specs):
            raise InputError(
                f"the program takes {len(self.specs)} inputs "
                f"({', '.join(s.name for s in self.specs)}), got {len(inputs)}"
            )
        bindings: dict[str, int] = {}
        bound_by: dict[str, str] = {}  # symbol -> the input dim that fixed it, for messages
        derived: list[tuple[InputSpec, int, int, int]] = []
        arrays: list[Any] = []
        for position, (spec, value) in enumerate(zip(self.specs, inputs)):
            if spec.dtype == "index":
                if not (isinstance(value, int) or is_numpy_integer(value)) or isinstance(value, bool):
                    raise InputError(f"input '{spec.name}': expected an integer, got {type(value).__name__}")
                if not INT64_MIN <= int(value) <= INT64_MAX:
                    raise InputError(f"input '{spec.name}': {int(value)} does not fit in int64")
                arrays.append(int(value))
                if spec.dims and spec.dims[0].isidentifier():
                    bindings.setdefault(spec.dims[0], int(value))
                    bound_by.setdefault(spec.dims[0], f"input '{spec.name}'")
                continue
            if kind_of(value) == "other":
                raise InputError(
                    f"input '{spec.name}': expected a tensor {spec.describe(symbols=False)}, got "
                    f"{type(value).__name__}"
                )
            dtype = dtype_name(value)
            if dtype != spec.dtype:
                raise InputError(
                    f"input '{spec.name}': expected dtype {spec.dtype}, got {dtype}"
                )
            shape = tuple(int(d) for d in value.shape)
            if len(shape) != len(spec.shape):
                raise InputError(
                    f"input '{spec.name}': expected rank {len(spec.shape)} ({spec.describe(symbols=False)}), "
                    f"got shape {list(shape)}"
                )
            for axis, (want, got) in enumerate(zip(spec.shape, shape)):
                if want is not None and want != got:
                    raise InputError(
                        f"input '{spec.name}': dim {axis} must be {want} ({spec.describe(symbols=False)}), "
                        f"got shape {list(shape)}"
                    )
                if want is None and axis < len(spec.dims) and spec.dims[axis]:
                    if spec.dims[axis].isidentifier():
                        self._bind(spec, axis, spec.dims[axis], got, bindings, bound_by)
                    else:
                        derived.append((spec, position, axis, got))
            try:
                arrays.append(to_mx(value, mx_dtype(spec.dtype)))
            except Exception as error:  # a meta or sparse tensor, an unreadable array...
                raise InputError(
                    f"input '{spec.name}': cannot read it as a tensor: {type(error).__name__}: {error}"
                ) from None
        for spec, position, axis, got in derived:
            expected = evaluate_size(self.size_expressions[position][axis], bindings)
            if expected is not None and expected != got:
                relation = re.sub(
                    r"[A-Za-z_]\w*", lambda m: f"[{bound_by[m[0]]}]" if m[0] in bound_by else m[0], spec.dims[axis]
                )
                raise InputError(f"input '{spec.name}': dim {axis} must be {relation} = {expected}, got {got}")
        return arrays

    def _bind(
        self, spec: InputSpec, axis: int, expr: str, size: int, bindings: dict[str, int], bound_by: dict[str, str]
    ) -> None:
        ranges = self.symbol_ranges
        if expr in ranges:
            lo, hi = ranges[expr]
            if size < lo or (hi >= 0 and size > hi):
                bound = f"[{lo}, {hi}]" if hi >= 0 else f"[{lo}, inf)"
                raise InputError(f"input '{spec.name}': dim {axis} must lie in {bound}, got {size}")
        if bindings.setdefault(expr, size) != size:
            raise InputError(
                f"input '{spec.name}': dim {axis} must equal {bound_by[expr]} ({bindings[expr]}), "
                f"got {size}"
            )
        bound_by.setdefault(expr, f"input '{spec.name}' dim {axis}")


MAX_SIZE_EXPRESSION = 256
"""Longest dim expression (`mlxir.input_dims`) the runtime evaluates."""


def _floor_div(a: int, b: int) -> int:
    return a // b


def _mod(a: int, b: int) -> int:
    return a % b


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def _abs(a: int) -> int:
    return abs(a)


_SIZE_FUNCTIONS: dict[str, Callable[..., int]] = {
    "Max": lambda *args: max(args),
    "Min": lambda *args: min(args),
    "FloorDiv": _floor_div,
    "Mod": _mod,
    "PythonMod": _mod,
    "CeilDiv": _ceil_div,
    "Abs": _abs,
}
"""The functions of torch's symbolic sizes a dim expression may call."""

_SIZE_OPERATORS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def parse_size(expr: str) -> ast.expr:
    """The syntax tree of a dim expression (`2*s0`, `s0 + 1`, `Max(1, s0)`): integers,
    symbols, `+ - * // %`, unary minus and calls of `_SIZE_FUNCTIONS`. Raises
    `ProgramError` for anything else: the expression comes from the program file and is
    never handed to `eval` or sympy."""
    if len(expr) > MAX_SIZE_EXPRESSION:
        raise ProgramError(f"dim expression of {len(expr)} characters is too long")
    try:
        tree = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ProgramError(f"dim expression {expr!r} does not parse") from None
    for node in ast.walk(tree):
        ok = (
            (isinstance(node, ast.Constant) and type(node.value) is int)
            or isinstance(node, ast.Name | ast.Load | ast.USub | ast.UAdd)
            or (isinstance(node, ast.BinOp) and type(node.op) in _SIZE_OPERATORS)
            or isinstance(node, ast.UnaryOp | ast.operator)
            or (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in _SIZE_FUNCTIONS
                and not node.keywords
            )
        )
        if not ok or (isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.USub | ast.UAdd)):
            raise ProgramError(f"dim expression {expr!r}: {type(node).__name__} is not allowed")
    return tree


_INT64_LIMIT = 2**63


def evaluate_size(expr: str | ast.expr, bindings: Mapping[str, int]) -> int | None:
    """The value of a dim expression with its symbols bound; None when a symbol is
    unbound, the expression is not a size expression, or a value leaves int64."""
    try:
        tree = parse_size(expr) if isinstance(expr, str) else expr
        return _evaluate_tree(tree, bindings)
    except (ProgramError, ZeroDivisionError, TypeError, OverflowError, RecursionError):
        return None


def _evaluate_tree(node: ast.expr, bindings: Mapping[str, int]) -> int | None:
    value: int | None
    if isinstance(node, ast.Constant):
        value = node.value if type(node.value) is int else None
    elif isinstance(node, ast.Name):
        value = bindings.get(node.id)
    elif isinstance(node, ast.UnaryOp):
        operand = _evaluate_tree(node.operand, bindings)
        value = None if operand is None else (-operand if isinstance(node.op, ast.USub) else operand)
    elif isinstance(node, ast.BinOp):
        left = _evaluate_tree(node.left, bindings)
        right = _evaluate_tree(node.right, bindings)
        value = None if left is None or right is None else _SIZE_OPERATORS[type(node.op)](left, right)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_evaluate_tree(a, bindings) for a in node.args]
        if any(a is None for a in args):
            return None
        value = _SIZE_FUNCTIONS[node.func.id](*args)
    else:
        return None
    if value is not None and not -_INT64_LIMIT <= value < _INT64_LIMIT:
        return None
    return value


