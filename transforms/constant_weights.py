"""Weights in the IR: constant tensors an `mlx.global` holds and `mlx.weight` reads.
The optimizations and the quantizer read, add and drop them through these helpers,
and compute with them by the runtime's own kernels."""

from __future__ import annotations

from collections.abc import Generator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, cast

import numpy as np
from xdsl.dialects.builtin import BFloat16Type, DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, ints, rank_of
from mlxir.dialects.weights import array_of, dense_attr
from mlxir.support import dtypes

if TYPE_CHECKING:
    import mlx.core as mx


def weight_global(value: SSAValue) -> mlx.GlobalOp | None:
    """The global `value` reads, when it is an `mlx.weight` of a global whose value is
    in the IR."""
    read = value.owner
    if not isinstance(read, mlx.WeightOp):
        return None
    target = _global_of(read)
    if isinstance(target, mlx.GlobalOp) and isinstance(target.value, DenseIntOrFPElementsAttr):
        return target
    return None


_shared_reads: dict[ModuleOp, dict[str, list[mlx.WeightOp]]] | None = None


@contextmanager
def shared_weight_reads() -> Generator[None, None, None]:
    """Within it, `reads_of` finds a module's reads in one walk and reuses the index (a
    pattern walk asks at every transposed weight: a walk per weight grows with weights
    x ops), and `weight_global` each global by name. Sound because a read made meanwhile is made by `add_global` or `new_read`,
    which add it to the index, and an erased read is dropped when next asked for."""
    global _shared_reads, _shared_globals
    previous = _shared_reads, _shared_globals
    _shared_reads, _shared_globals = {}, {}
    try:
        yield
    finally:
        _shared_reads, _shared_globals = previous


_shared_globals: dict[str, mlx.GlobalOp] | None = None


def _global_of(read: mlx.WeightOp) -> Operation | None:
    """The symbol `read` reads. Within `shared_weight_reads`, found once per name (a
    symbol lookup walks the module's ops): a global replaced since (a folded
    transpose) is detached and looked up again."""
    if _shared_globals is None:
        return SymbolTable.lookup_symbol(read, read.global_name)
    func = read.parent_op()
    symbols = func.parent if func is not None else None  # the module's block
    name = read.global_name.root_reference.data
    found = _shared_globals.get(name)
    if found is None or symbols is None or found.parent is not symbols or found.sym_name.data != name:
        target = SymbolTable.lookup_symbol(read, read.global_name)
        if not isinstance(target, mlx.GlobalOp):
            return target
        found = _shared_globals[name] = target
    return found


def _index_reads(module: ModuleOp) -> dict[str, list[mlx.WeightOp]]:
    index: dict[str, list[mlx.WeightOp]] = {}
    for op in module.walk():
        if isinstance(op, mlx.WeightOp):
            index.setdefault(op.global_name.root_reference.data, []).append(op)
    return index


def reads_of(target: mlx.GlobalOp) -> list[mlx.WeightOp]:
    """Every `mlx.weight` of `target` in its module."""
    module = target.parent_op()
    if not isinstance(module, ModuleOp):
        return []
    name = target.sym_name.data
    if _shared_reads is None:
        return _index_reads(module).get(name, [])
    index = _shared_reads.get(module)
    if index is None:
        index = _shared_reads[module] = _index_reads(module)
    reads = index[name] = [read for read in index.get(name, []) if read.parent is not None]
    return list(reads)


def new_read(name: str, tensor_type: Attribute, module: ModuleOp) -> mlx.WeightOp:
    """A read of the global `name` (to insert in `module`), known to `reads_of`."""
    read = mlx.WeightOp(name, tensor_type)
    if _shared_reads is not None and module in _shared_reads:
        _shared_reads[module].setdefault(name, []).append(read)
    return read


def add_global(
    anchor: Operation, name: str, array: np.ndarray, tensor_type: TensorType[Attribute], kind: str
) -> mlx.WeightOp:
    """A read, inserted before `anchor`, of a global holding `array`: the global `name`
    if it already holds exactly that, else a new one (its name made unique)."""
    func = anchor.parent_op()
    module = func.parent_op() if func is not None else None
    assert isinstance(func, Operation) and isinstance(module, ModuleOp)
    dtype = dtypes.of_ir(tensor_type.get_element_type())
    assert dtype is not None
    value = dense_attr(array, dtype, tuple(tensor_type.get_shape()))
    taken = {op.sym_name.data: op for op in module.ops if isinstance(op, mlx.GlobalOp)}
    unique, n = name, 1
    while unique in taken and not (
        taken[unique].type == tensor_type and taken[unique].value == value
    ):
        unique, n = f"{name}.{n}", n + 1
    if unique not in taken:
        created = mlx.GlobalOp(unique, tensor_type, kind)
        created.properties["value"] = value
        Rewriter.insert_op(created, InsertPoint.before(func))
    read = new_read(unique, tensor_type, module)
    read.location = anchor.location
    Rewriter.insert_op(read, InsertPoint.before(anchor))
    return read


@dataclass(frozen=True)
class Matrix:
    """A 2-D constant: a global's value, or its transpose (a `linear` weight before
    `fold-weight-transposes`)."""

    source: mlx.GlobalOp
    read: mlx.WeightOp
    """The `mlx.weight` of `source` (under the transpose, when `transposed`)."""
    transposed: bool

    def array(self) -> np.ndarray:
        array = array_of(cast(DenseIntOrFPElementsAttr, self.source.value))
        return array.T if self.transposed else array


def untransposed(value: SSAValue) -> tuple[SSAValue, bool]:
    """The matrix `value` is the `[1, 0]` transpose of, and True; else `value`, False
    (a `linear` weight reaches its matmul through such a transpose)."""
    owner = value.owner
    if isinstance(owner, mlx.TransposeOp) and list(ints(owner.axes)) == [1, 0]:
        return owner.input, True
    return value, False


def weight_matrix(value: SSAValue) -> Matrix | None:
    """`value` as a 2-D constant: a weight read, or the transpose of one."""
    if rank_of(value) != 2:
        return None
    read, transposed = untransposed(value)
    found = weight_global(read)
    if found is None:
        return None
    return Matrix(found, cast(mlx.WeightOp, read.owner), transposed)


def drop_unread(read: SSAValue, rewriter: PatternRewriter) -> None:
    """Erases a weight read (or its transpose) nothing uses, and its global once
    nothing reads it."""
    op = read.owner
    if isinstance(op, mlx.TransposeOp) and not read.uses:
        source = op.input
        rewriter.erase(op)
        drop_unread(source, rewriter)
        return
    if not isinstance(op, mlx.WeightOp) or read.uses:
        return
    target = SymbolTable.lookup_symbol(op, op.global_name)
    rewriter.erase(op)
    if not isinstance(target, mlx.GlobalOp):
        return
    if not reads_of(target):
        rewriter.erase(target)


def evaluate(op: Operation, operands: list[mx.array]) -> list[mx.array]:
    """`op` run by the runtime's own kernel, so compile time computes what run time
    would."""
    import mlx.core as mx

    from mlxir.evaluator import KERNELS
    from mlxir.evaluator.arrays import element_type_to_mx
    from mlxir.evaluator.props import python_props

    result_dtypes = [element_type_to_mx(dtype_of(r)) for r in op.results]
    run = KERNELS[op.name](python_props(op), result_dtypes)
    results = list(run(operands))
    mx.eval(*results)  # pyright: ignore[reportUnknownMemberType] (mlx.core's stub leaves eval's *args unannotated)
    return results


def global_array(value: mx.array) -> np.ndarray:
    """An MLX array as the NumPy array a global holds: bfloat16, which NumPy lacks, as
    its bits (`dense_attr` reads them back as bfloat16)."""
    import mlx.core as mx

    raw = value.view(mx.uint16) if value.dtype == mx.bfloat16 else value
    return cast(np.ndarray, np.array(raw, copy=True))  # mlx's array.__array__ returns an NDArray without its dtype


def array_of_constant(op: Operation) -> mx.array:
    import mlx.core as mx

    if isinstance(op, mlx.WeightOp):
        target = cast(mlx.GlobalOp, weight_global(op.result))
        array = array_of(cast(DenseIntOrFPElementsAttr, target.value))
        if dtype_of(op.result) == BFloat16Type():
            return mx.array(np.ascontiguousarray(array)).view(mx.bfloat16)
        return mx.array(np.ascontiguousarray(array))
    return evaluate(op, [])[0]
