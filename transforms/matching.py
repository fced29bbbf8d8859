"""What several of the `optimize-mlx` patterns match and how they rewrite: casts
seen through, squares and one-element constants recognized, a bias add found, a fused
op put in place, a dequantize dropped once unused."""

from __future__ import annotations

from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter
from xdsl.traits import Pure

from mlxir.dialects import mlx
from mlxir.dialects.common import dtype_of, shape_of
from mlxir.transforms.canonicalization.mlx import constant_array, is_lossless
from mlxir.transforms.constant_weights import weight_global


def strip_upcast(value: SSAValue) -> SSAValue:
    """`value` before a cast that is exact (HF's `x.to(float32)`): a norm computed on a
    lossy cast (f32 → f16) rounds and overflows where the fused kernel would not."""
    owner = value.owner
    if isinstance(owner, mlx.AstypeOp) and is_lossless(dtype_of(owner.input), dtype_of(owner.result)):
        return owner.input
    return value


def is_square_of(value: SSAValue, x: SSAValue) -> bool:
    """`value` is x², as `square(x)`, `x * x` or `x ** 2` (x compared up to CSE)."""
    owner = value.owner
    if (isinstance(owner, mlx.UnaryOp) and owner.name == "mlx.square"):
        return _same_value(owner.input, x)
    if (isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.multiply"):
        return _same_value(owner.lhs, x) and _same_value(owner.rhs, x)
    if (isinstance(owner, mlx.BinaryOp) and owner.name == "mlx.power"):
        exponent = constant_array(owner.rhs)
        return (
            _same_value(owner.lhs, x)
            and exponent is not None
            and exponent.size == 1
            and float(exponent.item()) == 2.0
        )
    return False


def _same_value(a: SSAValue, b: SSAValue, depth: int = 3) -> bool:
    """`a` and `b` are one value, or the same pure op of the same operands (what CSE
    would merge; canonicalization runs before CSE)."""
    if a == b:
        return True
    op_a, op_b = a.owner, b.owner
    if depth == 0 or not isinstance(op_a, Operation) or not isinstance(op_b, Operation):
        return False
    return (
        op_a.name == op_b.name
        and op_a.has_trait(Pure)
        and op_a.properties == op_b.properties
        and a.type == b.type
        and len(op_a.operands) == len(op_b.operands)
        and all(_same_value(x, y, depth - 1) for x, y in zip(op_a.operands, op_b.operands))
    )


def scalar_constant(value: SSAValue) -> float | None:
    """The value of a one-element constant, or None."""
    constant = constant_array(value)
    if constant is None or constant.size != 1:
        return None
    return float(constant.item())


def replace_keeping_location(op: Operation, new: Operation, rewriter: PatternRewriter) -> None:
    """Replaces `op` by the op fused from it, which reports at `op`'s location."""
    new.location = op.location
    rewriter.replace(op, new)


def op_named(value: SSAValue, name: str) -> Operation | None:
    """The op defining `value` when it is named `name` (`"mlx.add"`), or None."""
    owner = value.owner
    return owner if isinstance(owner, Operation) and owner.name == name else None


def bias_vector(value: SSAValue, size: int) -> mlx.GlobalOp | None:
    """The global of a constant bias `[size]` that `value` reads, or None."""
    found = weight_global(value)
    return found if found is not None and tuple(shape_of(value)) == (size,) else None


def bias_add_of(product: SSAValue) -> tuple[Operation, SSAValue] | None:
    """The `add` of a constant bias `[N]` that is `product`'s only use, and the bias."""
    if product.uses.get_length() != 1:
        return None
    add = next(iter(product.uses)).operation
    if add.name != "mlx.add" or add.results[0].type != product.type:
        return None
    bias = add.operands[1] if add.operands[0] == product else add.operands[0]
    if bias_vector(bias, shape_of(product)[-1]) is None or dtype_of(bias) != dtype_of(product):
        return None
    return add, bias


def erase_if_unused(value: SSAValue, rewriter: PatternRewriter) -> None:
    """Erases `value`'s op (a transpose or a dequantize) and, through a transpose, the
    dequantize under it, once nothing uses them."""
    op = value.owner
    if value.uses or not isinstance(op, mlx.TransposeOp | mlx.DequantizeOp):
        return
    source = op.input if isinstance(op, mlx.TransposeOp) else None
    rewriter.erase(op)
    if source is not None:
        erase_if_unused(source, rewriter)
