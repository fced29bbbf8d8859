"""What every lowering family shares: `LoweringError`, ATen's dtype promotion, the
`Emitter` that builds one aten op's replacement ops, the `AtenLowering` pattern base,
and the helpers more than one family uses."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import torch
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntegerAttr,
    LocationAttr,
    TensorType,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern

from mlxir.dialects import aten, mlx
from mlxir.dialects.common import (
    DYNAMIC,
    broadcast_shapes,
    dtype_of,
    is_bool,
    is_complex,
    is_float,
    mixed_values,
    rank_of,
    shape_of,
)
from mlxir.support import dtypes

Size = SSAValue | int
"""A dimension size: a literal or a runtime `index` value."""


class LoweringError(Exception):
    """An aten op whose operands this lowering cannot handle (e.g. a bool-mask index)."""


TORCH_DTYPES: dict[Attribute, torch.dtype] = {
    row.ir: row.torch for row in dtypes.DTYPES if row.name in dtypes.TENSOR_DTYPES
}
"""Element type → torch dtype: type promotion is torch's own (`torch.promote_types`)."""


_ELEMENT_TYPES = {v: k for k, v in TORCH_DTYPES.items()}


def _category(dtype: Attribute) -> int:
    return 3 if is_complex(dtype) else 2 if is_float(dtype) else 0 if is_bool(dtype) else 1


def promoted_dtype(values: Sequence[SSAValue]) -> Attribute:
    """`torch.result_type` over tensors and Scalars: dimensioned tensors, then 0-d
    tensors, then Scalars, each group counting only when its category is higher."""
    groups: list[list[torch.dtype]] = [[], [], []]
    for value in values:
        value_type = value.type
        if isinstance(value_type, TensorType):
            groups[0 if value_type.get_shape() else 1].append(TORCH_DTYPES[dtype_of(value)])
        elif isinstance(value_type, Float64Type):
            groups[2].append(torch.get_default_dtype())
        elif value_type == i1:
            groups[2].append(torch.bool)
        else:
            groups[2].append(torch.int64)
    result: torch.dtype | None = None
    for group in groups:
        if not group:
            continue
        candidate = group[0]
        for dtype in group[1:]:
            candidate = torch.promote_types(candidate, dtype)
        if result is None or _category(_ELEMENT_TYPES[candidate]) > _category(
            _ELEMENT_TYPES[result]
        ):
            result = candidate
    assert result is not None
    return _ELEMENT_TYPES[result]


def with_dtype(tensor: Attribute, dtype: Attribute) -> TensorType[Attribute]:
    assert isinstance(tensor, TensorType)
    return TensorType(dtype, tensor.get_shape())


def tensor_of(dtype: Attribute, shape: Sequence[int]) -> TensorType[Attribute]:
    return TensorType(dtype, list(shape))


@dataclass
class Emitter:
    """Collects the ops that replace one aten op, stamping each with its location."""

    location: LocationAttr
    ops: list[Operation] = field(default_factory=list[Operation])

    def emit(self, op: Operation) -> SSAValue:
        op.location = self.location
        self.ops.append(op)
        return op.results[0] if op.results else SSAValue.get(op)

    def emit_all(self, op: Operation) -> list[SSAValue]:
        self.emit(op)
        return list(op.results)

    # --- constants and scalars -------------------------------------------------

    def constant(self, value: float | int | bool, dtype: Attribute) -> SSAValue:
        """A 0-d tensor constant of `dtype`."""
        if is_complex(dtype):  # a dense attribute holds no complex elements: a cast real
            return self.astype(self.constant(value, Float32Type()), dtype)
        tensor_type: Any = tensor_of(dtype, [])
        if is_float(dtype):
            attr = DenseIntOrFPElementsAttr.from_list(tensor_type, [float(value)])
        else:
            attr = DenseIntOrFPElementsAttr.from_list(tensor_type, [int(value)])
        return self.emit(mlx.ConstantOp(attr))

    def index_constant(self, value: int) -> SSAValue:
        return self.emit(arith.ConstantOp(IntegerAttr(value, IndexType())))

    def as_tensor(self, value: SSAValue, dtype: Attribute) -> SSAValue:
        """A tensor operand cast to `dtype`, or a Scalar as a 0-d tensor of `dtype`."""
        if isinstance(value.type, TensorType):
            return self.astype(value, dtype)
        literal = scalar_literal(value)
        if literal is not None:
            return self.constant(literal, dtype)
        if isinstance(value.type, IndexType):
            as_i64 = self.emit(mlx.FromIndexOp(value, tensor_of(i64, [])))
            return self.astype(as_i64, dtype)
        raise LoweringError(f"a {value.type} Scalar that is not a constant cannot be lowered")

    def astype(self, value: SSAValue, dtype: Attribute) -> SSAValue:
        if dtype_of(value) == dtype:
            return value
        return self.emit(mlx.AstypeOp(value, with_dtype(value.type, dtype)))

    # --- sizes ---------------------------------------------------------------

    def dim(self, value: SSAValue, axis: int) -> Size:
        """The size of `axis`: a literal when static, else `mlx.dim`."""
        size = shape_of(value)[axis]
        if size != DYNAMIC:
            return size
        return self.emit(mlx.DimOp(value, axis))

    def dims(self, value: SSAValue) -> list[Size]:
        return [self.dim(value, i) for i in range(rank_of(value))]

    def index(self, size: Size) -> SSAValue:
        return self.index_constant(size) if isinstance(size, int) else size

    def mul(self, a: Size, b: Size) -> Size:
        if isinstance(a, int) and isinstance(b, int):
            return a * b
        if a == 1:
            return b
        if b == 1:
            return a
        return self.emit(arith.MuliOp(self.index(a), self.index(b)))

    def add(self, a: Size, b: Size) -> Size:
        if isinstance(a, int) and isinstance(b, int):
            return a + b
        if b == 0:
            return a
        return self.emit(arith.AddiOp(self.index(a), self.index(b)))

    def floordiv(self, a: Size, b: Size) -> Size:
        if isinstance(a, int) and isinstance(b, int):
            return a // b
        return self.emit(arith.FloorDivSIOp(self.index(a), self.index(b)))

    # --- ops -----------------------------------------------------------------

    def unary(self, name: str, value: SSAValue, result_type: Attribute | None = None) -> SSAValue:
        op_cls: Any = mlx.UNARY_OP_CLASSES[name]
        return self.emit(op_cls(value, result_type or value.type))

    def binary(self, name: str, lhs: SSAValue, rhs: SSAValue, result_dtype: Attribute | None = None) -> SSAValue:
        shape = broadcast_shapes([shape_of(lhs), shape_of(rhs)])
        kind = mlx.BINARY_OPS[name]
        dtype = (
            i1
            if kind in (mlx.ElementwiseKind.COMPARE, mlx.ElementwiseKind.LOGICAL)
            else (result_dtype or dtype_of(lhs))
        )
        op_cls: Any = mlx.BINARY_OP_CLASSES[name]
        return self.emit(op_cls(lhs, rhs, tensor_of(dtype, shape)))

    def reshape(self, value: SSAValue, sizes: Sequence[Size]) -> SSAValue:
        static = [s if isinstance(s, int) else DYNAMIC for s in sizes]
        if list(static) == list(shape_of(value)) and DYNAMIC not in static:
            return value
        return self.emit(mlx.ReshapeOp(value, sizes, tensor_of(dtype_of(value), static)))

    def transpose(self, value: SSAValue, perm: Sequence[int]) -> SSAValue:
        if list(perm) == list(range(len(perm))):
            return value
        shape = shape_of(value)
        return self.emit(
            mlx.TransposeOp(value, perm, tensor_of(dtype_of(value), [shape[p] for p in perm]))
        )

    def expand_dims(self, value: SSAValue, axes: Sequence[int]) -> SSAValue:
        shape = list(shape_of(value))
        out_rank = len(shape) + len(axes)
        norm = sorted(a + out_rank if a < 0 else a for a in axes)
        for a in norm:
            shape.insert(a, 1)
        return self.emit(
            mlx.ExpandDimsOp(value, norm, tensor_of(dtype_of(value), shape))
        )

    def squeeze(self, value: SSAValue, axes: Sequence[int]) -> SSAValue:
        if not axes:
            return value
        shape = [d for i, d in enumerate(shape_of(value)) if i not in axes]
        return self.emit(
            mlx.SqueezeOp(value, sorted(axes), tensor_of(dtype_of(value), shape))
        )

    def broadcast_to(self, value: SSAValue, sizes: Sequence[Size], dtype: Attribute | None = None) -> SSAValue:
        static = [s if isinstance(s, int) else DYNAMIC for s in sizes]
        if list(static) == list(shape_of(value)) and DYNAMIC not in static:
            return value
        return self.emit(
            mlx.BroadcastToOp(value, sizes, tensor_of(dtype or dtype_of(value), static))
        )

    def slice(
        self,
        value: SSAValue,
        starts: Sequence[Size],
        stops: Sequence[Size],
        steps: Sequence[int],
        result_shape: Sequence[int],
    ) -> SSAValue:
        return self.emit(
            mlx.SliceOp(value, starts, stops, steps, tensor_of(dtype_of(value), result_shape))
        )

    def reduce(
        self, name: str, value: SSAValue, axes: Sequence[int], keepdims: bool, dtype: Attribute
    ) -> SSAValue:
        shape = [
            (1 if keepdims else None) if i in axes else d for i, d in enumerate(shape_of(value))
        ]
        return self.emit(
            mlx.REDUCTION_OP_CLASSES[name](
                value, axes, keepdims, tensor_of(dtype, [d for d in shape if d is not None])
            )
        )

    def concatenate(self, parts: Sequence[SSAValue], axis: int, result_type: Attribute) -> SSAValue:
        if len(parts) == 1:
            return parts[0]
        return self.emit(
            mlx.ConcatenateOp(parts, axis, result_type)
        )

    def where(self, condition: SSAValue, x: SSAValue, y: SSAValue) -> SSAValue:
        shape = broadcast_shapes([shape_of(condition), shape_of(x), shape_of(y)])
        return self.emit(
            mlx.WhereOp(condition, x, y, tensor_of(dtype_of(x), shape))
        )


def scalar_literal(value: SSAValue) -> float | int | None:
    owner = value.owner
    if isinstance(owner, arith.ConstantOp):
        attr = owner.value
        if isinstance(attr, IntegerAttr):
            # xDSL holds an i1 `true` as -1 (the signed reading of its one bit): the
            # Python value of a bool scalar is 1, as `torch.fill(x, True)` fills ones.
            if attr.type == i1:
                return int(attr.value.data != 0)
            return attr.value.data
        if isinstance(attr, FloatAttr):
            return attr.value.data
    return None


def mixed_sizes(static: Sequence[int], dynamic: Sequence[SSAValue]) -> list[Size]:
    return mixed_values(static, dynamic)


class AtenLowering(RewritePattern):
    """Base of the lowering patterns: each declares in `OPS` the aten op classes it
    rewrites (the pass tries it on those ops only), and `replace`s an op by the values
    its `build` emits."""

    OPS: ClassVar[tuple[type[IRDLOperation], ...]]
    """The aten op classes this pattern rewrites, the ones its `match_and_rewrite`
    annotation names; a base class stands for every aten op deriving from it
    (`aten.UnaryElementwiseOp`: each unary op of the table)."""

    @classmethod
    def op_names(cls) -> tuple[str, ...]:
        """The names of the aten ops `OPS` covers, what the pass dispatches on."""
        return tuple(op.name for op in aten.ATEN_OPS if issubclass(op, cls.OPS))

    def replace(
        self, op: Operation, rewriter: PatternRewriter, build: Callable[[Emitter], Sequence[SSAValue] | SSAValue]
    ) -> None:
        emitter = Emitter(op.location)
        results = build(emitter)
        if isinstance(results, SSAValue):
            results = [results]
        for old, new in zip(op.results, results, strict=True):
            if old.type != new.type:
                raise LoweringError(
                    f"lowering {op.name} produced {new.type}, expected {old.type}"
                )
        rewriter.replace(op, emitter.ops, list(results))


def to_bool(e: Emitter, x: SSAValue) -> SSAValue:
    if is_bool(dtype_of(x)):
        return x
    return e.binary("not_equal", x, e.constant(0, dtype_of(x)))


INT32_MAX = 2**31 - 1


def full_range_slice(
    e: Emitter,
    x: SSAValue,
    axis: int,
    start: Size,
    stop: Size,
    step: int,
    result_shape: Sequence[int],
) -> SSAValue:
    rank = rank_of(x)
    starts: list[Size] = [0] * rank
    stops: list[Size] = e.dims(x)
    steps = [1] * rank
    starts[axis], stops[axis], steps[axis] = start, stop, step
    return e.slice(x, starts, stops, steps, result_shape)


def numel(e: Emitter, sizes: Sequence[Size]) -> Size:
    total: Size = 1
    for size in sizes:
        total = e.mul(total, size)
    return total


def arange(e: Emitter, stop: Size) -> SSAValue:
    length = stop if isinstance(stop, int) else DYNAMIC
    return e.emit(mlx.ArangeOp([0, stop, 1], tensor_of(i64, [length])))
