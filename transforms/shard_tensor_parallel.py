"""`shard-tensor-parallel{ranks=N}`: one program split over N ranks, Megatron-style.

The pass finds each *row-parallel* product (`x @ W.T` by a weight, whose input
features it can split) and walks back from its input to the *column-parallel*
products that compute those features, through every op in between. If every op on
the way keeps each rank's share of the split axis to itself, the pair is split:

- the column products' weights keep `1/N` of their output features per rank, the
  row product's weight `1/N` of its input features;
- every value in between holds `1/N` of the split axis (attention heads, MLP
  features): the shapes in reshapes, slices and splits are divided, and a function
  input or output in between (a layer's keys and values) is each rank's share too;
- one `mlx.all_sum` after the row product adds the ranks' partial products.

What each op passes on is its rule (`_RULES`): an elementwise op passes the split to
its operands (a broadcast operand stays whole), a transpose or reshape moves the split
axis, a split along it gives each piece its share, attention passes a split of heads
to queries, keys and values. A value may be split into *segments* (a merged q/k/v or
gate/up projection, `merge-projections`): rank `r` holds the `r`-th `1/N` of each
segment, so the merged weight's rows are regrouped per rank.

Weights are split once, at compile time: each becomes an `mlx.global ... ranks N`
whose value holds the N slices, and rank `r` reads only its own (docs/distributed.md).
Pairs that share a merged column product (a parallel attention + MLP block) are
planned together. A row product with a bias adds it once, after the `mlx.all_sum`.
Anything the walk cannot prove safe (an op without a rule, a split axis that does not
divide, a value also used outside the pair) stays replicated, and the pass says so in a
remark on the product. The LM head and the embedding tables split by vocabulary
(`head`, `embedding`: docs/distributed.md says why these are the defaults).

Run it last, after quantization: no later pass may compute with a split weight as if
it were whole."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import cast

import numpy as np
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    FunctionType,
    IntegerAttr,
    ModuleOp,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, BlockArgument, Operation, SSAValue, Use
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.traits import SymbolTable

from mlxir.dialects import mlx
from mlxir.dialects.common import DYNAMIC, int_array, ints, shape_of
from mlxir.dialects.weights import array_of, dense_attr
from mlxir.support import dtypes
from mlxir.support.remarks import remark
from mlxir.transforms.constant_weights import untransposed

Split = tuple[int, tuple[int, ...]]
"""(axis, segments): the axis split over the ranks, and the sizes of its segments in
the whole tensor (one segment: the whole axis). Rank r holds the r-th 1/N of each."""


class Unsplittable(Exception):
    """Why a pair stays replicated."""


@dataclass
class _Plan:
    ranks: int
    splits: dict[SSAValue, Split] = field(default_factory=dict[SSAValue, Split])
    whole: set[SSAValue] = field(default_factory=set[SSAValue])
    """Operands that must stay replicated (a broadcast operand, a product's input)."""
    products: list[Operation] = field(default_factory=list[Operation])
    """The row-parallel products: an `mlx.all_sum` follows each."""
    gathers: list[Operation] = field(default_factory=list[Operation])
    """Column-parallel products whose result the function returns (the LM head): an
    `mlx.all_gather` of the last axis follows each."""
    embeddings: list[mlx.TakeOp] = field(default_factory=list[mlx.TakeOp])
    """Embedding lookups split by vocabulary (`_split_embedding`)."""

    def need(self, value: SSAValue, split: Split, worklist: list[SSAValue]) -> None:
        known = self.splits.get(value)
        if known is not None:
            if known != split:
                raise Unsplittable(f"{_name(value)} would be split two ways ({known} and {split})")
            return
        shape = shape_of(value)
        axis, segments = split
        if shape[axis] == DYNAMIC:
            raise Unsplittable(f"{_name(value)} has a dynamic size on the split axis {axis}")
        if sum(segments) != shape[axis] or any(s % self.ranks for s in segments):
            raise Unsplittable(
                f"{_name(value)}: axis {axis} of size {shape[axis]} (segments {list(segments)}) "
                f"does not divide over {self.ranks} ranks"
            )
        self.splits[value] = split
        worklist.append(value)

    def merged(self, other: _Plan) -> _Plan:
        """This plan with `other`'s pair added, if the two agree."""
        for value, split in other.splits.items():
            if self.splits.get(value, split) != split:
                raise Unsplittable(f"{_name(value)} is split differently by another pair")
        splits = self.splits | other.splits
        whole = self.whole | other.whole
        conflict = next((v for v in whole if v in splits), None)
        if conflict is not None:
            raise Unsplittable(f"{_name(conflict)} must stay whole for one use and be split for another")
        products = self.products + other.products
        if any(p.results[0] in splits for p in products):
            raise Unsplittable("a row-parallel product's result would be split by another pair")
        return _Plan(
            self.ranks, splits, whole, products, self.gathers + other.gathers, self.embeddings + other.embeddings
        )


def _name(value: SSAValue) -> str:
    if value.name_hint:
        return f"%{value.name_hint}"
    owner = value.owner
    return f"a result of {owner.name}" if isinstance(owner, Operation) else "a function input"


# ---------------------------------------------------------------------------
# The rules: given how a result is split, how must the operands be split?
# A rule returns {operand: split, or None for whole} and may set the split of the
# op's other results (`_Step.results`).
# ---------------------------------------------------------------------------


@dataclass
class _Step:
    operands: dict[SSAValue, Split | None] = field(default_factory=dict[SSAValue, Split | None])
    results: dict[SSAValue, Split] = field(default_factory=dict[SSAValue, Split])


Rule = Callable[[Operation, SSAValue, Split], _Step]


def _broadcast_operand(operand: SSAValue, result: SSAValue, split: Split) -> Split | None:
    axis, segments = split
    shape = shape_of(operand)
    aligned = axis - (len(shape_of(result)) - len(shape))
    if aligned < 0 or shape[aligned] == 1:
        return None
    if shape[aligned] != shape_of(result)[axis]:
        raise Unsplittable(f"{_name(operand)} broadcasts along the split axis")
    return (aligned, segments)


def _elementwise(op: Operation, result: SSAValue, split: Split) -> _Step:
    return _Step({o: _broadcast_operand(o, result, split) for o in op.operands})


def _transpose(op: Operation, result: SSAValue, split: Split) -> _Step:
    transpose = cast(mlx.TransposeOp, op)
    return _Step({transpose.input: (ints(transpose.axes)[split[0]], split[1])})


def _reshape(op: Operation, result: SSAValue, split: Split) -> _Step:
    reshape = cast(mlx.ReshapeOp, op)
    before, after = shape_of(reshape.input), shape_of(result)
    axis, segments = split
    if list(before[:axis]) != list(after[:axis]):
        raise Unsplittable("a reshape changes the dims before the split axis")
    if ints(reshape.static_shape)[axis] == DYNAMIC:
        raise Unsplittable("a reshape gives the split axis a runtime size")
    size_before, size_after = before[axis], after[axis]
    if size_before == DYNAMIC:
        raise Unsplittable("a reshape's input has a dynamic size on the split axis")
    if size_before == size_after:
        return _Step({reshape.input: split})
    if size_before % size_after == 0:  # [.., H*D] -> [.., H, D]: the input's axis holds D each
        inner = size_before // size_after
        return _Step({reshape.input: (axis, tuple(s * inner for s in segments))})
    if size_after % size_before == 0:  # [.., H, D] -> [.., H*D]
        inner = size_after // size_before
        if any(s % inner for s in segments):
            raise Unsplittable("a reshape merges the split axis across a segment")
        return _Step({reshape.input: (axis, tuple(s // inner for s in segments))})
    raise Unsplittable(f"a reshape regroups the split axis ({size_before} -> {size_after})")


def _split(op: Operation, result: SSAValue, split: Split) -> _Step:
    """A split across the split axis: every piece and the input split alike. (Along
    the split axis, `_expand` joins the pieces' segments once all are known.)"""
    pieces = cast(mlx.SplitOp, op)
    return _Step({pieces.input: split}, {r: split for r in pieces.outputs})


def _along_split_axis(op: Operation, split: Split) -> bool:
    return isinstance(op, mlx.SplitOp) and op.axis.value.data % len(shape_of(op.input)) == split[0]


def _join_pieces(plan: _Plan, pieces: mlx.SplitOp, worklist: list[SSAValue]) -> None:
    """The input of a split along the split axis holds each piece's segments in turn;
    a piece no pair asked for is split whole (one segment), every rank its share."""
    axis = pieces.axis.value.data % len(shape_of(pieces.input))
    segments: list[int] = []
    for output in pieces.outputs:
        if output not in plan.splits:
            plan.need(output, (axis, (shape_of(output)[axis],)), worklist)
        segments += plan.splits[output][1]
    plan.need(pieces.input, (axis, tuple(segments)), worklist)


def _slice(op: Operation, result: SSAValue, split: Split) -> _Step:
    sliced = cast(mlx.SliceOp, op)
    axis = split[0]
    start, stop = ints(sliced.static_start)[axis], ints(sliced.static_stop)[axis]
    size = shape_of(sliced.input)[axis]
    if start != 0 or stop != size or ints(sliced.strides)[axis] != 1:
        raise Unsplittable("a slice cuts the split axis")
    return _Step({sliced.input: split})


def _concatenate(op: Operation, result: SSAValue, split: Split) -> _Step:
    joined = cast(mlx.ConcatenateOp, op)
    if joined.axis.value.data % len(shape_of(result)) == split[0]:
        raise Unsplittable("a concatenation along the split axis")
    return _Step({o: split for o in joined.inputs})


def _attention(op: Operation, result: SSAValue, split: Split) -> _Step:
    attention = cast(mlx.ScaledDotProductAttentionOp, op)
    axis, segments = split
    if axis != 1 or len(segments) != 1:
        raise Unsplittable("attention is split other than by heads")
    step = _Step({attention.query: split})
    for operand in (attention.key, attention.value):
        step.operands[operand] = (1, (shape_of(operand)[1],))
    if attention.mask is not None:
        step.operands[attention.mask] = _broadcast_operand(attention.mask, result, split)
    return step


def _slice_update(op: Operation, result: SSAValue, split: Split) -> _Step:
    update = cast(mlx.DynamicSliceUpdateOp, op)
    if split[0] in [a % len(shape_of(result)) for a in ints(update.axes)]:
        raise Unsplittable("a slice update writes along the split axis")
    return _Step({update.input: split, update.update: split, update.start: None})


def _normalization(op: Operation, result: SSAValue, split: Split) -> _Step:
    """RMS / layer norm over the last axis: any other axis splits freely."""
    if split[0] == len(shape_of(result)) - 1:
        raise Unsplittable(f"{op.name} normalizes over the split axis")
    return _Step({o: (split if o is op.operands[0] else None) for o in op.operands})


def _rope(op: Operation, result: SSAValue, split: Split) -> _Step:
    if split[0] >= len(shape_of(result)) - 2:
        raise Unsplittable("rope rotates along the split axis")
    return _Step({o: (split if o is op.operands[0] else None) for o in op.operands})


def _product(op: Operation, result: SSAValue, split: Split) -> _Step:
    """A column-parallel product: its output features split, its input whole."""
    axis, segments = split
    if axis != len(shape_of(result)) - 1:
        raise Unsplittable(f"{op.name} is split other than by its output features")
    if isinstance(op, mlx.QuantizedMatmulOp):
        if op.transpose is None:
            raise Unsplittable("a quantized product without transpose")
        step = _Step({op.x: None, op.w: (0, segments), op.scales: (0, segments)})
        if op.biases is not None:
            step.operands[op.biases] = (0, segments)
        return step
    if isinstance(op, mlx.AddmmOp):
        if shape_of(op.c)[-1] == 1 or len(shape_of(op.c)) == 0:
            raise Unsplittable("an addmm whose bias broadcasts")
        return _Step({op.a: None, op.b: (1, segments), op.c: _broadcast_operand(op.c, result, split)})
    product = cast(mlx.MatmulOp, op)
    if len(shape_of(product.rhs)) != 2:
        raise Unsplittable("a batched product")
    return _Step({product.lhs: None, product.rhs: (1, segments)})


_RULES: dict[type[Operation], Rule] = {
    **{cls: _elementwise for cls in (*mlx.UNARY_OP_CLASSES.values(), *mlx.BINARY_OP_CLASSES.values())},
    mlx.WhereOp: _elementwise,
    mlx.AstypeOp: _elementwise,
    mlx.TransposeOp: _transpose,
    mlx.ReshapeOp: _reshape,
    mlx.SplitOp: _split,
    mlx.SliceOp: _slice,
    mlx.ConcatenateOp: _concatenate,
    mlx.ScaledDotProductAttentionOp: _attention,
    mlx.DynamicSliceUpdateOp: _slice_update,
    mlx.RmsNormOp: _normalization,
    mlx.LayerNormOp: _normalization,
    mlx.RopeOp: _rope,
    mlx.MatmulOp: _product,
    mlx.AddmmOp: _product,
    mlx.QuantizedMatmulOp: _product,
}


# ---------------------------------------------------------------------------
# Planning one pair
# ---------------------------------------------------------------------------


def _is_weight(value: SSAValue) -> bool:
    owner = value.owner
    if isinstance(owner, mlx.TransposeOp):
        owner = owner.input.owner
    return isinstance(owner, mlx.WeightOp)


def _row_start(op: Operation) -> tuple[SSAValue, dict[SSAValue, Split]] | None:
    """A product by a weight: its input, and how its weight operands split by input
    features; None for other ops."""
    if isinstance(op, mlx.MatmulOp) and len(shape_of(op.rhs)) == 2 and _is_weight(op.rhs):
        features = shape_of(op.rhs)[0]
        return op.lhs, {op.rhs: (0, (features,))}
    if isinstance(op, mlx.AddmmOp) and len(shape_of(op.b)) == 2 and _is_weight(op.b):
        # The bias stays whole: it is added once, after the partial products' sum.
        features = shape_of(op.b)[0]
        return op.a, {op.b: (0, (features,))}
    if isinstance(op, mlx.QuantizedMatmulOp) and op.transpose is not None and _is_weight(op.w):
        group = op.group_size.value.data
        features = shape_of(op.x)[-1]
        operands = {op.w: (1, (shape_of(op.w)[1],)), op.scales: (1, (shape_of(op.scales)[1],))}
        if op.biases is not None:
            operands[op.biases] = (1, (shape_of(op.biases)[1],))
        if features != DYNAMIC and features % group == 0:
            return op.x, operands
    return None


def _plan_pairs(products: list[Operation], ranks: int) -> _Plan:
    """The pairs ending in `products`, planned together: parallel attention and MLP
    blocks (Phi, Cohere) compute both pairs' inputs in one merged product, which only
    both pairs together split whole."""
    plan = _Plan(ranks, products=list(products))
    worklist: list[SSAValue] = []
    for product in products:
        start = _row_start(product)
        assert start is not None
        features, weights = start
        if isinstance(product, mlx.AddmmOp):
            if any(f is not None and f.value.data != 1.0 for f in (product.alpha, product.beta)):
                raise Unsplittable("an addmm that scales its terms")
            if shape_of(product.a)[:-1] + shape_of(product.b)[-1:] != shape_of(product.result):
                raise Unsplittable("an addmm whose bias broadcasts the product")
        if shape_of(features)[-1] == DYNAMIC:
            raise Unsplittable("its input features are dynamic")
        if isinstance(product, mlx.QuantizedMatmulOp) and (
            shape_of(features)[-1] // ranks % product.group_size.value.data
        ):
            raise Unsplittable(
                f"{shape_of(features)[-1]} input features over {ranks} ranks do not keep whole "
                f"groups of {product.group_size.value.data}"
            )
        plan.need(features, (len(shape_of(features)) - 1, (shape_of(features)[-1],)), worklist)
        for operand, split in weights.items():
            plan.need(operand, split, worklist)
    _expand(plan, worklist)
    _check_uses(plan, set(products))
    _check_inputs(plan)
    return plan


def _plan_head(product: Operation, ranks: int, tied_split: bool) -> _Plan:
    """The LM head, column-parallel: each rank computes its share of the vocabulary,
    and an `mlx.all_gather` right after the product puts the logits together. A
    product by a weight whose result the function returns (through elementwise ops
    alone, e.g. a logit scale); a weight tied to an embedding only if that is split
    too (`tied_split`)."""
    result = product.results[0]
    if not _only_returned(result):
        raise Unsplittable("its result is not only returned")
    weight, _ = untransposed(_weight_operand(product))
    read = weight.owner
    if not isinstance(read, mlx.WeightOp):
        raise Unsplittable("its weight is not a weight read")
    module = cast(Operation, read.get_toplevel_object())
    if len(_readers(module, read.global_name.string_value())) > 1 and not tied_split:
        raise Unsplittable("its weight is read elsewhere too (tied to an embedding that stays whole)")
    plan = _Plan(ranks, gathers=[product])
    worklist: list[SSAValue] = []
    plan.need(result, (len(shape_of(result)) - 1, (shape_of(result)[-1],)), worklist)
    _expand(plan, worklist)
    _check_uses(plan, {product})
    _check_inputs(plan)
    return plan


_ELEMENTWISE = (*mlx.UNARY_OP_CLASSES.values(), *mlx.BINARY_OP_CLASSES.values(), mlx.AstypeOp)


def _only_returned(value: SSAValue) -> bool:
    """Whether `value` is returned, directly or through elementwise ops alone (a
    logit scale, a soft cap): what the LM head's logits are."""
    return bool(value.uses) and all(
        isinstance(use.operation, func.ReturnOp)
        or (isinstance(use.operation, _ELEMENTWISE) and _only_returned(use.operation.results[0]))
        for use in value.uses
    )


def _embedding_table(op: Operation, ranks: int) -> mlx.WeightOp:
    """The table of an embedding lookup that splits by vocabulary: a 2-D weight read
    whose rows divide over the ranks. Raises `Unsplittable` otherwise."""
    assert isinstance(op, mlx.TakeOp)
    read = op.input.owner
    if op.axis is None or op.axis.value.data != 0 or not isinstance(read, mlx.WeightOp):
        raise Unsplittable("not a lookup of a weight's rows")
    shape = shape_of(op.input)
    if len(shape) != 2 or shape[0] % ranks:
        raise Unsplittable(f"{shape[0]} rows do not divide over {ranks} ranks")
    if SymbolTable.lookup_symbol(read, read.global_name) is None:
        raise Unsplittable("its table has no global")
    return read


def _split_embedding(op: mlx.TakeOp, ranks: int, module: ModuleOp, split_globals: dict[tuple[str, Split], str]) -> None:
    """Each rank looks up the ids in its own rows (the others give zeros), and one
    `mlx.all_sum` puts the rows together: Megatron's vocabulary-parallel embedding.
    The rank's first row comes from a global split over ranks, so one program serves
    every rank."""
    read = cast(mlx.WeightOp, op.input.owner)
    rows = shape_of(op.input)[0] // ranks
    ids = op.indices
    id_type = cast(TensorType[Attribute], ids.type)
    id_element = id_type.get_element_type()
    id_dtype = dtypes.of_ir(id_element)
    assert id_dtype is not None
    scalar: TensorType[Attribute] = TensorType(id_element, [])
    flags: TensorType[Attribute] = TensorType(i1, id_type.get_shape())
    offsets = np.arange(ranks, dtype=id_dtype.numpy) * rows
    offset_name = _unique(module, f"{read.global_name.string_value()}.first_row")
    first_row = mlx.GlobalOp(offset_name, scalar, "constant")
    first_row.ranks = IntegerAttr(ranks, i64)
    first_row.properties["value"] = dense_attr(offsets, id_dtype, (ranks,))
    source = SymbolTable.lookup_symbol(read, read.global_name)
    assert isinstance(source, mlx.GlobalOp)
    Rewriter.insert_op(first_row, InsertPoint.after(source))
    result_type = op.result.type
    element = result_type.get_element_type()
    element_dtype = dtypes.of_ir(element)
    assert element_dtype is not None
    new_ops: list[Operation] = [
        offset := mlx.WeightOp(offset_name, scalar),
        local := mlx.BINARY_OP_CLASSES["subtract"](ids, offset.result, id_type),
        zero := mlx.ConstantOp(dense_attr(np.zeros((), id_dtype.numpy), id_dtype, ())),
        limit := mlx.ConstantOp(dense_attr(np.full((), rows, id_dtype.numpy), id_dtype, ())),
        at_least := mlx.BINARY_OP_CLASSES["greater_equal"](local.result, zero.result, flags),
        below := mlx.BINARY_OP_CLASSES["less"](local.result, limit.result, flags),
        mine := mlx.BINARY_OP_CLASSES["bitwise_and"](at_least.result, below.result, flags),
        safe := mlx.WhereOp(mine.result, local.result, zero.result, id_type),
        looked := mlx.TakeOp(op.input, safe.result, 0, result_type),
        wide := mlx.ExpandDimsOp(mine.result, [-1], TensorType(i1, [*id_type.get_shape(), 1])),
        nothing := mlx.ConstantOp(dense_attr(np.zeros((), element_dtype.numpy), element_dtype, ())),
        masked := mlx.WhereOp(wide.result, looked.result, nothing.result, result_type),
        mlx.AllSumOp(masked.result),
    ]
    for new in new_ops:
        new.location = op.location
    Rewriter.replace_op(op, new_ops)
    _split_weight(read, (0, (rows * ranks,)), ranks, module, split_globals)


def _own_read(lookup: mlx.TakeOp) -> None:
    """Gives the lookup a read of its table of its own (a tied LM head may read the
    same one), so each use can be split, or not, on its own."""
    read = lookup.input.owner
    assert isinstance(read, mlx.WeightOp)
    if read.result.has_one_use():
        return
    own = mlx.WeightOp(read.global_name, read.result.type)
    own.location = read.location
    Rewriter.insert_op(own, InsertPoint.before(lookup))
    lookup.operands[0] = own.result


def _unique(module: ModuleOp, name: str) -> str:
    taken = {op.sym_name.data for op in module.ops if isinstance(op, mlx.GlobalOp)}
    unique, n = name, 1
    while unique in taken:
        unique, n = f"{name}.{n}", n + 1
    return unique


def _readers(module: Operation, name: str) -> list[mlx.WeightOp]:
    """Every `mlx.weight` of global `name` still in the module."""
    return [
        op for op in module.walk()
        if isinstance(op, mlx.WeightOp) and op.global_name.string_value() == name and op.parent is not None
    ]


def _expand(plan: _Plan, worklist: list[SSAValue]) -> None:
    """Walks back from the values on `worklist`, splitting what each rule asks. A
    split op along the split axis waits until the walk is done: another pair's walk
    (planned together, `_plan_pairs`) may reach its other pieces with segments of
    their own."""
    pending: dict[mlx.SplitOp, None] = {}
    while True:
        while worklist:
            value = worklist.pop()
            split = plan.splits[value]
            if isinstance(value, BlockArgument):
                if not isinstance(value.owner.parent_op(), func.FuncOp):
                    raise Unsplittable("a block argument that is not a function input")
                continue
            op = value.owner
            assert isinstance(op, Operation)
            if isinstance(op, mlx.WeightOp):
                continue
            if _along_split_axis(op, split):
                pending[cast(mlx.SplitOp, op)] = None
                continue
            rule = _RULES.get(type(op))
            if rule is None:
                raise Unsplittable(f"{op.name} has no rule for a split operand")
            step = rule(op, value, split)
            for result, result_split in step.results.items():
                plan.need(result, result_split, worklist)
            for operand, operand_split in step.operands.items():
                if operand_split is None:
                    plan.whole.add(operand)
                else:
                    plan.need(operand, operand_split, worklist)
        if not pending:
            return
        # The last in program order first: a split nested in another's piece (q/k/v
        # inside a q/k/v + MLP merge) gives that piece its segments.
        pieces = max(pending, key=_position)
        del pending[pieces]
        _join_pieces(plan, pieces, worklist)


def _position(op: Operation) -> int:
    block = op.parent_block()
    assert block is not None
    return block.get_operation_index(op)


def _check_inputs(plan: _Plan) -> None:
    """A function input is split only where the function also returns a value split
    the same way and of the same type: a state the caller carries from call to call
    (a layer's keys and values), which it then holds split too. Any other input the
    caller passes whole."""
    returned = {
        (v.type, plan.splits[v])
        for v in plan.splits
        for use in v.uses
        if isinstance(use.operation, func.ReturnOp)
    }
    for value, split in plan.splits.items():
        if isinstance(value, BlockArgument) and (value.type, split) not in returned:
            raise Unsplittable(f"{_name(value)} would be split, and the caller passes it whole")


def _check_uses(plan: _Plan, products: set[Operation]) -> None:
    """Every use of a split value is by an op the pair splits, the row product, the
    function's return, or an `mlx.dim` of another axis."""
    inside = {v.owner for v in plan.splits if isinstance(v.owner, Operation)}
    gathered = {p.results[0] for p in plan.gathers}  # its uses read the gathered whole
    for value in plan.splits:
        if value in plan.whole:
            raise Unsplittable(f"{_name(value)} must stay whole for one use and be split for another")
        uses: list[Use] = [] if value in gathered else list(value.uses)
        for use in uses:
            user = use.operation
            if user in products or user in inside or isinstance(user, func.ReturnOp):
                continue
            if isinstance(user, mlx.DimOp) and user.axis.value.data % len(shape_of(value)) != plan.splits[value][0]:
                continue  # the size of another axis: the same on every rank
            raise Unsplittable(f"{_name(value)} is also used by {user.name}, which the pair does not split")


# ---------------------------------------------------------------------------
# Rewriting
# ---------------------------------------------------------------------------


def _split_type(value: SSAValue, split: Split, ranks: int) -> TensorType[Attribute]:
    tensor = cast(TensorType[Attribute], value.type)
    shape = list(tensor.get_shape())
    shape[split[0]] //= ranks
    return TensorType(tensor.get_element_type(), shape)


def _rank_slices(array: np.ndarray, split: Split, ranks: int) -> np.ndarray:
    """`[ranks, *slice]`: rank r's slice is the r-th 1/ranks of each segment."""
    axis, segments = split
    per_rank: list[np.ndarray] = []
    for rank in range(ranks):
        pieces: list[np.ndarray] = []
        start = 0
        for size in segments:
            share = size // ranks
            pieces.append(np.take(array, np.arange(start + rank * share, start + (rank + 1) * share), axis=axis))
            start += size
        per_rank.append(np.concatenate(pieces, axis=axis))
    return np.stack(per_rank)


def _split_weight(
    read: mlx.WeightOp, split: Split, ranks: int, module: ModuleOp, split_globals: dict[tuple[str, Split], str]
) -> None:
    """Points `read` at the global holding its source's slices (made once per source
    and split: a tied embedding and LM head share theirs)."""
    source = SymbolTable.lookup_symbol(read, read.global_name)
    if not isinstance(source, mlx.GlobalOp) or not isinstance(source.value, DenseIntOrFPElementsAttr):
        raise Unsplittable(f"weight @{read.global_name.string_value()} has no value in the IR")
    rank_type = _split_type(read.result, split, ranks)
    key = (source.sym_name.data, split)
    name = split_globals.get(key)
    if name is None:
        element = source.type.get_element_type()
        dtype = dtypes.of_ir(element)
        assert dtype is not None
        slices = _rank_slices(array_of(source.value), split, ranks)
        name = split_globals[key] = _unique(module, f"{source.sym_name.data}.ranks{ranks}")
        created = mlx.GlobalOp(name, rank_type, source.kind.data)
        created.ranks = IntegerAttr(ranks, i64)
        created.properties["value"] = dense_attr(slices, dtype, tuple(slices.shape))
        Rewriter.insert_op(created, InsertPoint.after(source))
    new_read = mlx.WeightOp(name, rank_type)
    new_read.location = read.location
    Rewriter.replace_op(read, new_read)
    if not _readers(module, source.sym_name.data):
        Rewriter.erase_op(source)


def _rewritten_properties(op: Operation, splits: dict[SSAValue, Split], ranks: int) -> dict[str, Attribute]:
    """`op`'s properties for its split results: the sizes it names, divided."""
    properties = dict(op.properties)
    if isinstance(op, mlx.ReshapeOp):
        axis = splits[op.result][0]
        shape = list(ints(op.static_shape))
        shape[axis] //= ranks
        properties["static_shape"] = int_array(shape)
    elif isinstance(op, mlx.SliceOp):
        axis = splits[op.result][0]
        stop = list(ints(op.static_stop))
        stop[axis] //= ranks
        properties["static_stop"] = int_array(stop)
    elif isinstance(op, mlx.SplitOp):
        axis = op.axis.value.data % len(shape_of(op.input))
        if splits[op.outputs[0]][0] == axis:
            sizes = [shape_of(r)[axis] // ranks for r in op.outputs[:-1]]
            properties["indices"] = int_array(list(np.cumsum(sizes).tolist()))
    return properties


def apply_plan(plan: _Plan, module: ModuleOp) -> None:
    ranks = plan.ranks
    split_globals: dict[tuple[str, Split], str] = {}
    for lookup in plan.embeddings:
        _split_embedding(lookup, ranks, module, split_globals)
    for value, split in list(plan.splits.items()):
        if isinstance(value.owner, mlx.WeightOp):
            _split_weight(value.owner, split, ranks, module, split_globals)
    for value, split in plan.splits.items():
        if isinstance(value, BlockArgument):
            block = value.owner
            replacement = block.insert_arg(_split_type(value, split, ranks), value.index)
            value.replace_all_uses_with(replacement)
            block.erase_arg(value)
    for product in plan.gathers:
        whole = product.results[0]
        gathered = mlx.AllGatherOp.create(
            operands=[whole],
            result_types=[whole.type],
            properties={"axis": IntegerAttr(len(shape_of(whole)) - 1, i64), "ranks": IntegerAttr(ranks, i64)},
        )
        _follow_with(product, gathered)
    owners = [op for op in module.walk() if any(r in plan.splits for r in op.results)]
    for op in owners:
        if isinstance(op, mlx.WeightOp):
            continue  # replaced above
        result_types = [
            _split_type(r, plan.splits[r], ranks) if r in plan.splits else r.type for r in op.results
        ]
        replacement = type(op).create(
            operands=list(op.operands),
            result_types=result_types,
            properties=_rewritten_properties(op, plan.splits, ranks),
            attributes=dict(op.attributes),
        )
        replacement.location = op.location
        for old, new in zip(op.results, replacement.results, strict=True):
            new.name_hint = old.name_hint
        Rewriter.replace_op(op, replacement)
    for product in plan.products:
        if isinstance(product, mlx.AddmmOp):
            _sum_then_add_bias(product)
            continue
        _follow_with(product, mlx.AllSumOp(product.results[0]))
    for function in _functions(module):
        returned = function.body.block.last_op
        assert isinstance(returned, func.ReturnOp)
        function.function_type = FunctionType.from_lists(
            [a.type for a in function.body.block.args], [v.type for v in returned.operands]
        )


def _follow_with(product: Operation, collective: Operation) -> None:
    """Puts `collective` (of `product`'s result) right after `product`; every other
    use of the result reads the collective's instead."""
    collective.location = product.location
    Rewriter.insert_op(collective, InsertPoint.after(product))
    product.results[0].replace_uses_with_if(collective.results[0], lambda use: use.operation is not collective)


def _sum_then_add_bias(product: mlx.AddmmOp) -> None:
    """A row product with a bias: each rank's partial product, their sum, then the
    bias, once (added on every rank before the sum, it would count N times)."""
    partial = mlx.MatmulOp(product.a, product.b, product.result.type)
    total = mlx.AllSumOp(partial.result)
    biased = mlx.BINARY_OP_CLASSES["add"](total.result, product.c, product.result.type)
    for op in (partial, total, biased):
        op.location = product.location
    biased.result.name_hint = product.result.name_hint
    Rewriter.replace_op(product, [partial, total, biased])


def _functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp)]


def shard_tensor_parallel(module: ModuleOp, ranks: int, *, head: bool = True, embedding: bool = True) -> int:
    """Splits every pair it can prove safe over `ranks` ranks; returns how many.
    `head`: also split the LM head by vocabulary (column-parallel, then all_gather);
    `embedding`: the embedding tables by vocabulary (docs/distributed.md: what the
    measurement chose)."""
    if ranks < 1:
        raise ValueError(f"ranks must be at least 1, got {ranks}")
    if ranks == 1:
        return 0
    accepted = _Plan(ranks)
    split_tables: set[str] = set()
    if embedding:
        for op in list(module.walk()):
            if isinstance(op, mlx.TakeOp) and isinstance(op.input.owner, mlx.WeightOp):
                _own_read(op)
                try:
                    table = _embedding_table(op, ranks)
                except Unsplittable as why:
                    remark(op, f"shard-tensor-parallel: this lookup stays replicated: {why}")
                    continue
                accepted.embeddings.append(op)
                split_tables.add(table.global_name.string_value())
    # Last products first: a pair is found from its row product, before its column
    # products are tried as row products of their own.
    candidates = [op for op in module.walk() if _row_start(op) is not None][::-1]
    refused: dict[Operation, str] = {}
    for product in candidates:
        if product.results[0] in accepted.splits:
            continue  # a column product of an accepted pair
        try:
            accepted = accepted.merged(_plan_pairs([product], ranks))
        except Unsplittable as why:
            refused[product] = str(why)

    def still_refused(product: Operation) -> bool:
        return (
            product in refused
            and product.results[0] not in accepted.splits
            and product not in accepted.products + accepted.gathers
        )

    # Pairs that share a merged column product (a parallel block: Phi, Cohere) are
    # tried together, neighbours in program order.
    alone = [p for p in candidates if p in refused]
    for later, earlier in zip(alone, alone[1:]):
        if not (still_refused(later) and still_refused(earlier)):
            continue
        try:
            accepted = accepted.merged(_plan_pairs([earlier, later], ranks))
        except Unsplittable as why:
            for product in (later, earlier):
                refused[product] += f"; with its neighbour: {why}"
    for product in candidates:
        if head and still_refused(product) and _only_returned(product.results[0]):
            weight, _ = untransposed(_weight_operand(product))
            tied = isinstance(weight.owner, mlx.WeightOp) and weight.owner.global_name.string_value() in split_tables
            try:
                accepted = accepted.merged(_plan_head(product, ranks, tied))
            except Unsplittable as head_why:
                refused[product] += f"; as the LM head: {head_why}"
    for lookup in list(accepted.embeddings):
        table = cast(mlx.WeightOp, lookup.input.owner).global_name.string_value()
        whole_reads = [
            read for read in _readers(module, table)
            if read.result is not lookup.input and read.result not in accepted.splits
        ]
        if whole_reads:  # the table stays whole for them: its slices would be more to hold
            accepted.embeddings.remove(lookup)
            remark(lookup, f"shard-tensor-parallel: this lookup stays replicated: @{table} is read whole elsewhere")
    for product, why in refused.items():
        if still_refused(product):
            remark(
                product,
                f"shard-tensor-parallel: {_describe(product)} stays replicated "
                f"(as the row product of a pair: {why})",
            )
    apply_plan(accepted, module)
    return len(accepted.products)


def _weight_operand(product: Operation) -> SSAValue:
    return product.b if isinstance(product, mlx.AddmmOp) else product.operands[1]


def _describe(product: Operation) -> str:
    owner = _weight_operand(product).owner
    if isinstance(owner, mlx.TransposeOp):
        owner = owner.input.owner
    if isinstance(owner, mlx.WeightOp):
        return f"the product by @{owner.global_name.string_value()}"
    return f"this {product.name}"


@dataclass(frozen=True)
class ShardTensorParallelPass(ModulePass):
    """Splits attention and MLP pairs over ranks, one `mlx.all_sum` per pair; run it last.

    Column- then row-parallel weights; what it cannot prove safe stays whole, with a
    remark (see the module's doc)."""

    name = "shard-tensor-parallel"

    ranks: int = 2
    head: bool = True
    """Split the LM head too (column-parallel, then all_gather)."""
    embedding: bool = True
    """Split the embedding tables too (by vocabulary, then all_sum)."""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        shard_tensor_parallel(op, self.ranks, head=self.head, embedding=self.embedding)
