"""`fold-known-dims`: symbolic shape reasoning over each function, in op order.

Every axis of every tensor value gets a *dim key*, a name for its runtime size:

- an `int` for a static dim;
- `Symbol("s33")` for an input axis that `mlxir.input_dims` names (equal names are
  equal sizes: the runtime binds a symbol once and checks every other input axis
  that names it); an expression such as `"s1 + 1"` is a key of its own when the
  runtime can evaluate it (every name in it is some input axis' symbol), so that it
  checks it;
- `ArgAxis(i, k)` for another dynamic axis of argument `i`;
- what an op's semantics give its result (a transpose permutes its input's keys, a
  reshape's dims are its sizes, a broadcast keeps a key both sides agree on, ...);
- otherwise `TensorAxis(value, k)`: that axis of that value, equal to nothing else.

An `index` value's key is its dim's key for `mlx.dim`, its value for a constant, the
op and its operands' keys for `arith` integer arithmetic, and itself otherwise. The
first `index` value seen with a key is that key's canonical value. Then:

1. an `mlx.dim` whose key already has a canonical value is that value;
2. an `mlx.reshape` / `mlx.broadcast_to` whose sizes' keys are its input's keys, axis
   by axis, is its input.

Both rewrites only ever reuse a value that is equal at runtime, for every input the
program accepts; where a size is not provably one of these keys it gets a fresh
`TensorAxis`, equal to nothing but itself.
"""

from __future__ import annotations

import ast
from collections.abc import Generator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import cast

from xdsl.context import Context
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    ArrayAttr,
    IndexType,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    TensorType,
)
from xdsl.dialects.func import FuncOp
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter

from mlxir.dialects import mlx
from mlxir.dialects.common import DYNAMIC, ints, mixed_values

INPUT_DIMS = "mlxir.input_dims"


@dataclass(frozen=True)
class Symbol:
    """An input axis' size as `mlxir.input_dims` names it (a symbol or an expression)."""

    name: str


@dataclass(frozen=True)
class ArgAxis:
    """Axis `axis` of function argument `arg`, named by nothing else."""

    arg: int
    axis: int


@dataclass(frozen=True, eq=False)
class TensorAxis:
    """Axis `axis` of `value`: a size known only as itself."""

    value: SSAValue
    axis: int

    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, TensorAxis) and other.value is self.value and other.axis == self.axis
        )

    def __hash__(self) -> int:
        return hash((id(self.value), self.axis))


@dataclass(frozen=True, eq=False)
class ValueKey:
    """An `index` value known only as itself (a function argument, an unknown op)."""

    value: SSAValue

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ValueKey) and other.value is self.value

    def __hash__(self) -> int:
        return hash(id(self.value))


@dataclass(frozen=True)
class Expr:
    """`op(operands...)` on integers: equal operands give equal results."""

    op: str
    operands: tuple[Key, ...]


Key = int | Symbol | ArgAxis | TensorAxis | ValueKey | Expr
"""A name for a runtime size or integer: equal keys are equal values at runtime."""

Dims = tuple[Key, ...]


_INTEGER_ARITHMETIC = frozenset(
    {
        "arith.addi",
        "arith.subi",
        "arith.muli",
        "arith.floordivsi",
        "arith.ceildivsi",
        "arith.divsi",
        "arith.remsi",
        "arith.minsi",
        "arith.maxsi",
    }
)
"""Index arithmetic whose result is a function of its operands' values alone."""

_NONNEGATIVE_OF_NONNEGATIVE = _INTEGER_ARITHMETIC - {"arith.subi"}
"""Ops whose result is non-negative when every operand is (sizes do not overflow)."""


def _is_size(key: Key) -> bool:
    """Whether `key` is provably non-negative: a size, so a valid reshape/broadcast size
    that means itself (a reshape reads a runtime -1 as "infer")."""
    if isinstance(key, int):
        return key >= 0
    if isinstance(key, Symbol | ArgAxis | TensorAxis):
        return True
    if isinstance(key, Expr):
        return key.op in _NONNEGATIVE_OF_NONNEGATIVE and all(_is_size(k) for k in key.operands)
    return False


def _arith_key(name: str, lhs: Key, rhs: Key) -> Key:
    """The key of `name(lhs, rhs)`, folded where the result is plainly one of them."""
    if isinstance(lhs, int) and isinstance(rhs, int):
        if name == "arith.addi":
            return lhs + rhs
        if name == "arith.subi":
            return lhs - rhs
        if name == "arith.muli":
            return lhs * rhs
    if name in ("arith.addi", "arith.subi") and rhs == 0:
        return lhs
    if name == "arith.addi" and lhs == 0:
        return rhs
    if name == "arith.muli" and rhs == 1:
        return lhs
    if name == "arith.muli" and lhs == 1:
        return rhs
    return Expr(name, (lhs, rhs))


def _names(expr: str) -> set[str] | None:
    """The symbols of a dim expression, or None if it is not one the runtime reads."""
    try:
        tree = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    called = {
        id(node.func) for node in ast.walk(tree) if isinstance(node, ast.Call)
    }
    return {
        node.id
        for node in ast.walk(tree)
        if isinstance(node, ast.Name) and id(node) not in called
    }


def _input_dims(func: FuncOp) -> list[list[str] | None] | None:
    """`mlxir.input_dims` as one list of strings per argument (None where malformed)."""
    attr = func.attributes.get(INPUT_DIMS)
    if not isinstance(attr, ArrayAttr):
        return None
    entries: list[list[str] | None] = []
    for entry in cast(ArrayAttr[Attribute], attr).data:  # isinstance leaves its type parameter unknown
        strings = cast(ArrayAttr[Attribute], entry).data if isinstance(entry, ArrayAttr) else None
        if strings is not None and all(isinstance(s, StringAttr) for s in strings):
            entries.append([s.data for s in strings if isinstance(s, StringAttr)])
        else:
            entries.append(None)
    return entries


def _shape(value: SSAValue) -> tuple[int, ...] | None:
    t = value.type
    return tuple(t.get_shape()) if isinstance(t, TensorType) else None


def _normalize(axis: int, rank: int) -> int | None:
    return axis % rank if rank and -rank <= axis < rank else None


def _broadcast(shapes: Sequence[Dims]) -> list[Key | None]:
    """NumPy broadcasting on keys: a static 1 gives way to the other side, a static
    N != 1 is N, equal keys stay; two different symbolic sizes are unknown (either
    may be 1 at runtime)."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[Key | None] = []
    for i in range(rank):
        axis = [s[len(s) - rank + i] for s in shapes if len(s) - rank + i >= 0]
        static = {k for k in axis if isinstance(k, int) and k != 1}
        if static:
            result.append(static.pop() if len(static) == 1 else None)
            continue
        symbolic = {k for k in axis if not isinstance(k, int)}
        if not symbolic:
            result.append(1)
        elif len(symbolic) == 1:
            result.append(symbolic.pop())
        else:
            result.append(None)
    return result


class _KnownDims:
    """The dim keys of one function's values, computed and used in op order."""

    def __init__(self, func: FuncOp, block: Block, rewrite: bool = True):
        self.rewrite = rewrite
        """Whether `visit` applies the rewrites (else it only records keys)."""
        self.dims: dict[SSAValue, Dims] = {}
        self.index_keys: dict[SSAValue, Key] = {}
        self.canonical: dict[Key, SSAValue] = {}
        self._arguments(func, block)

    # --- keys ---------------------------------------------------------------------

    def _arguments(self, func: FuncOp, block: Block) -> None:
        input_dims = _input_dims(func)
        if input_dims is not None and len(input_dims) != len(block.args):
            input_dims = None
        symbols: set[str] = set()
        if input_dims is not None:
            for arg, names in zip(block.args, input_dims):
                shape = _shape(arg)
                if shape is not None and names is not None and len(names) == len(shape):
                    symbols |= {
                        n for n, d in zip(names, shape) if d == DYNAMIC and n.isidentifier()
                    }
        for position, arg in enumerate(block.args):
            if isinstance(arg.type, IndexType):
                # The runtime does not check an `index` input against its symbol.
                self._define_index(arg, ValueKey(arg))
                continue
            shape = _shape(arg)
            if shape is None:
                continue
            names = input_dims[position] if input_dims is not None else None
            if names is not None and len(names) != len(shape):
                names = None
            keys: list[Key] = []
            for axis, d in enumerate(shape):
                name = names[axis] if names is not None else ""
                if d != DYNAMIC:
                    keys.append(d)
                elif name.isidentifier():
                    keys.append(Symbol(name))
                elif name and (found := _names(name)) is not None and found <= symbols:
                    # An expression the runtime evaluates, hence checks.
                    keys.append(Symbol(name))
                else:
                    keys.append(ArgAxis(position, axis))
            self.dims[arg] = tuple(keys)

    def of(self, value: SSAValue) -> Dims:
        """The keys of a tensor value's axes (its own `TensorAxis` where unknown)."""
        found = self.dims.get(value)
        if found is not None:
            return found
        shape = _shape(value) or ()
        keys = tuple(d if d != DYNAMIC else TensorAxis(value, i) for i, d in enumerate(shape))
        self.dims[value] = keys
        return keys

    def index_key(self, value: SSAValue) -> Key:
        found = self.index_keys.get(value)
        return found if found is not None else ValueKey(value)

    def size_key(self, size: SSAValue | int) -> Key | None:
        """The key of a size operand, when it is the size it gives (non-negative)."""
        if isinstance(size, int):
            return size if size >= 0 else None
        key = self.index_key(size)
        return key if _is_size(key) else None

    def _define_index(self, value: SSAValue, key: Key) -> None:
        self.index_keys[value] = key
        self.canonical.setdefault(key, value)

    def _set(self, value: SSAValue, inferred: Sequence[Key | None] | None) -> None:
        """Records a result's keys: its type's static dims, else what was inferred,
        else its own `TensorAxis`."""
        shape = _shape(value)
        if shape is None:
            return
        if inferred is not None and len(inferred) != len(shape):
            inferred = None
        keys: list[Key] = []
        for i, d in enumerate(shape):
            if d != DYNAMIC:
                keys.append(d)
            elif inferred is not None and (k := inferred[i]) is not None:
                keys.append(k)
            else:
                keys.append(TensorAxis(value, i))
        self.dims[value] = tuple(keys)

    # --- one op ---------------------------------------------------------------------

    def visit(self, op: Operation) -> None:
        """Rewrites `op` if a rule applies, else records its results' keys."""
        if isinstance(op, mlx.DimOp):
            dims = self.of(op.input)
            axis = _normalize(op.axis.value.data, len(dims))
            key = dims[axis] if axis is not None else ValueKey(op.result)
            canonical = self.canonical.get(key)
            if canonical is not None and self.rewrite:
                Rewriter.replace_op(op, [], [canonical])
            elif canonical is not None:
                self.index_keys[op.result] = key
            else:
                self._define_index(op.result, key)
            return
        if isinstance(op, mlx.ReshapeOp | mlx.BroadcastToOp):
            sizes = mixed_values(ints(op.static_shape), op.shape)
            targets = [s if isinstance(s, int) else self.index_key(s) for s in sizes]
            if op.input.type == op.result.type and tuple(targets) == self.of(op.input):
                if self.rewrite:
                    Rewriter.replace_op(op, [], [op.input])
                else:
                    self.dims[op.result] = self.of(op.input)
                return
            self._set(op.result, [self.size_key(s) for s in sizes])
            return
        if isinstance(op, arith.ConstantOp):
            value = op.value
            if isinstance(value, IntegerAttr) and isinstance(value.type, IndexType):
                self._define_index(op.result, value.value.data)
            return
        if op.name in _INTEGER_ARITHMETIC and len(op.operands) == 2 and len(op.results) == 1:
            result = op.results[0]
            if isinstance(result.type, IndexType) and not op.properties.keys() - {
                "overflowFlags"
            }:
                lhs, rhs = (self.index_key(v) for v in op.operands)
                self._define_index(result, _arith_key(op.name, lhs, rhs))
                return
        inferred = self._infer(op)
        for i, result in enumerate(op.results):
            if isinstance(result.type, IndexType):
                self._define_index(result, ValueKey(result))
            else:
                self._set(result, inferred[i] if inferred is not None else None)

    def _infer(self, op: Operation) -> list[list[Key | None]] | None:
        """The keys of `op`'s results as its semantics give them (None: unknown)."""
        if isinstance(op, mlx.SplitOp):
            dims = self.of(op.input)
            axis = _normalize(op.axis.value.data, len(dims))
            return [
                [None if i == axis else k for i, k in enumerate(dims)] for _ in op.outputs
            ]
        one = self._infer_one(op)
        return [one] if one is not None else None

    def _infer_one(self, op: Operation) -> list[Key | None] | None:
        if isinstance(
            op,
            mlx.UnaryOp
            | mlx.AstypeOp
            | mlx.SoftmaxOp
            | mlx.RmsNormOp
            | mlx.LayerNormOp
            | mlx.RopeOp
            | mlx.ScanOp
            | mlx.SortAlongAxisOp
            | mlx.TriangleOp
            | mlx.ScatterOp
            | mlx.SliceUpdateOp,
        ):
            return list(self.of(op.input))
        if isinstance(op, mlx.BinaryOp):
            return _broadcast([self.of(op.lhs), self.of(op.rhs)])
        if isinstance(op, mlx.WhereOp):
            return _broadcast([self.of(op.condition), self.of(op.x), self.of(op.y)])
        if isinstance(op, mlx.CreationOp):
            return [self.size_key(s) for s in mixed_values(ints(op.static_shape), op.shape)]
        if isinstance(op, mlx.TransposeOp):
            dims = self.of(op.input)
            perm = ints(op.axes)
            if sorted(perm) != list(range(len(dims))):
                return None
            return [dims[p] for p in perm]
        if isinstance(op, mlx.ExpandDimsOp):
            dims = self.of(op.input)
            rank = len(dims) + len(ints(op.axes))
            axes = {_normalize(a, rank) for a in ints(op.axes)}
            rest = iter(dims)
            return [1 if i in axes else next(rest, None) for i in range(rank)]
        if isinstance(op, mlx.SqueezeOp):
            dims = self.of(op.input)
            axes = {_normalize(a, len(dims)) for a in ints(op.axes)}
            return [k for i, k in enumerate(dims) if i not in axes]
        if isinstance(op, mlx.ConcatenateOp):
            return self._concatenate(op)
        if isinstance(op, mlx.SliceOp):
            return self._slice(op)
        if isinstance(op, mlx.PadOp):
            dims = self.of(op.input)
            return [
                k if lo == hi == 0 else None
                for k, lo, hi in zip(dims, ints(op.low), ints(op.high))
            ]
        if isinstance(op, mlx.TileOp):
            dims, reps = self.of(op.input), ints(op.reps)
            rank = max(len(dims), len(reps))
            padded: list[Key] = [1] * (rank - len(dims)) + list(dims)
            counts = [1] * (rank - len(reps)) + list(reps)
            return [k if r == 1 else None for k, r in zip(padded, counts)]
        if isinstance(op, mlx.MatmulOp):
            return self._matmul(op.lhs, op.rhs)
        if isinstance(op, mlx.AddmmOp):
            return self._matmul(op.a, op.b)
        if isinstance(op, mlx.ScaledDotProductAttentionOp):
            q, v = self.of(op.query), self.of(op.value)
            return [*q[:-1], v[-1]] if len(q) == len(v) == 4 else None
        if isinstance(op, mlx.ReductionOp):
            return self._reduce(op.input, op.reduced_axes(), op.keepdims is not None)
        if isinstance(op, mlx.ArgReductionOp):
            dims = self.of(op.input)
            axis = None if op.axis is None else _normalize(op.axis.value.data, len(dims))
            if op.axis is not None and axis is None:
                return None
            axes = list(range(len(dims))) if axis is None else [axis]
            return self._reduce(op.input, axes, op.keepdims is not None)
        if isinstance(op, mlx.TakeOp):
            dims, indices = self.of(op.input), self.of(op.indices)
            if op.axis is None:
                return list(indices)
            axis = _normalize(op.axis.value.data, len(dims))
            if axis is None:
                return None
            return [*dims[:axis], *indices, *dims[axis + 1:]]
        if isinstance(op, mlx.TakeAlongAxisOp):
            dims, indices = self.of(op.input), self.of(op.indices)
            axis = _normalize(op.axis.value.data, len(dims))
            if axis is None or len(indices) != len(dims):
                return None
            result = _broadcast([tuple(1 if i == axis else k for i, k in enumerate(dims)), indices])
            result[axis] = indices[axis]
            return result
        if isinstance(op, mlx.GatherOp):
            batch = _broadcast([self.of(v) for v in op.indices])
            sizes = mixed_values(ints(op.static_slice_sizes), op.slice_sizes)
            return [*batch, *(self.size_key(s) for s in sizes)]
        if isinstance(op, mlx.ArangeOp):
            start, stop, step = mixed_values(ints(op.static_bounds), op.bounds)
            if start == 0 and step == 1:
                return [self.size_key(stop)]
            return None
        if isinstance(op, mlx.ConvGeneralOp):
            x, w = self.of(op.input), self.of(op.weight)
            return [x[0], *([None] * (len(x) - 2)), w[0]]
        return None

    def _concatenate(self, op: mlx.ConcatenateOp) -> list[Key | None] | None:
        """Off the concat axis every input has the result's size (MLX checks it): take
        the first key that names more than one tensor's axis, else the first."""
        shapes = [self.of(v) for v in op.inputs]
        rank = len(shapes[0])
        if rank == 0 or any(len(s) != rank for s in shapes):
            return None
        axis = _normalize(op.axis.value.data, rank)
        result: list[Key | None] = []
        for i in range(rank):
            if i == axis:
                result.append(None)
                continue
            keys = [s[i] for s in shapes]
            named = [k for k in keys if not isinstance(k, TensorAxis)]
            result.append(named[0] if named else keys[0])
        return result

    def _slice(self, op: mlx.SliceOp) -> list[Key | None]:
        """An axis sliced from 0 to its own size with step 1 keeps its key."""
        dims = self.of(op.input)
        starts = mixed_values(ints(op.static_start), op.start)
        stops = mixed_values(ints(op.static_stop), op.stop)
        result: list[Key | None] = []
        for dim, start, stop, stride in zip(dims, starts, stops, ints(op.strides)):
            stop_key = stop if isinstance(stop, int) else self.index_key(stop)
            whole = start == 0 and stride == 1 and stop_key == dim
            result.append(dim if whole else None)
        return result

    def _matmul(self, lhs: SSAValue, rhs: SSAValue) -> list[Key | None] | None:
        x, y = self.of(lhs), self.of(rhs)
        if len(x) < 2 or len(y) < 2:
            return None
        return [*_broadcast([x[:-2], y[:-2]]), x[-2], y[-1]]

    def _reduce(self, value: SSAValue, axes: Sequence[int], keepdims: bool) -> list[Key | None]:
        dims = self.of(value)
        if keepdims:
            return [1 if i in axes else k for i, k in enumerate(dims)]
        return [k for i, k in enumerate(dims) if i not in axes]


class KnownDims:
    """Read-only symbolic dims of a function of one block (for patterns that need to
    know two sizes are equal): `same_size(a, axis, b)` with `b` an axis of a value, a
    size operand or a literal."""

    def __init__(self, func: FuncOp):
        block = func.body.blocks[0] if len(func.body.blocks) == 1 else Block()
        self._known = _KnownDims(func, block, rewrite=False)
        for op in block.ops:
            self._known.visit(op)

    def _ensure(self, value: SSAValue, depth: int = 0) -> None:
        """Computes the keys of a value created since (and of what it is built from)."""
        known = self._known
        if value in known.dims or value in known.index_keys:
            return
        owner = value.owner
        if isinstance(owner, Operation) and depth < 64:
            for operand in owner.operands:
                self._ensure(operand, depth + 1)
            known.visit(owner)

    def axis_key(self, value: SSAValue, axis: int) -> Key | None:
        self._ensure(value)
        dims = self._known.of(value)
        normalized = _normalize(axis, len(dims))
        return dims[normalized] if normalized is not None else None

    def size_key(self, size: SSAValue | int) -> Key | None:
        if isinstance(size, SSAValue):
            self._ensure(size)
        return self._known.size_key(size)

    def same_size(self, value: SSAValue, axis: int, size: SSAValue | int) -> bool:
        key = self.axis_key(value, axis)
        return key is not None and key == self.size_key(size)

    def same_axes(self, a: SSAValue, a_axis: int, b: SSAValue, b_axis: int) -> bool:
        key = self.axis_key(a, a_axis)
        return key is not None and key == self.axis_key(b, b_axis)


_shared: dict[FuncOp, KnownDims] | None = None


@contextmanager
def shared_known_dims() -> Generator[None, None, None]:
    """Within it, `known_dims` computes a function's dims once and reuses them (a
    pattern walk asks for them at every match). Sound while the rewrites keep values'
    meaning: what is known of a value stays true, and a value created since gets its
    keys from its operands' when first asked."""
    global _shared
    previous, _shared = _shared, {}
    try:
        yield
    finally:
        _shared = previous


def known_dims(op: Operation) -> KnownDims | None:
    """The dims of the function around `op` (None outside a function of one block)."""
    func = op.parent_op()
    while func is not None and not isinstance(func, FuncOp):
        func = func.parent_op()
    if func is None or len(func.body.blocks) != 1:
        return None
    if _shared is None:
        return KnownDims(func)
    found = _shared.get(func)
    if found is None:
        found = _shared[func] = KnownDims(func)
    return found


def fold_known_dims(func: FuncOp) -> None:
    """Applies both rewrites to `func` (a function of one block; others are left)."""
    if len(func.body.blocks) != 1:
        return
    block = func.body.blocks[0]
    known = _KnownDims(func, block)
    for op in list(block.ops):
        known.visit(op)


@dataclass(frozen=True)
class FoldKnownDimsPass(ModulePass):
    """Reuses dims already known as SSA values; drops reshapes to the input's own shape.

    A reshape or broadcast to its input's own (symbolic) shape goes, found by symbolic
    shape reasoning in op order."""

    name = "fold-known-dims"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for func in [o for o in op.walk() if isinstance(o, FuncOp)]:
            fold_known_dims(func)

