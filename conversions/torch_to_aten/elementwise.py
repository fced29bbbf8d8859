"""Elementwise ops: unary and binary math, comparisons, `where`, clamps, `tril`/`triu`,
casts and copies."""

from __future__ import annotations

from torch.fx import Node
from xdsl.dialects.builtin import DYNAMIC_INDEX, StringAttr, TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportState,
    arguments_of,
    element_type,
    f64_attr,
    i64_attr,
    props,
    refuse,
    static_dim,
    type_of_node,
)
from mlxir.dialects import aten
from mlxir.dialects.common import index_operands, int_array

LAYOUT_ARGUMENTS = frozenset({"memory_format", "dim_order", "non_blocking"})
"""Arguments that choose a memory layout or a copy's timing, never a value."""


def _unary(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        unmodelled = args.unmodelled("self", *LAYOUT_ARGUMENTS)
        if unmodelled:  # a parameter this table does not model: never drop it
            raise refuse(node, f"with arguments {unmodelled} is not supported")
        return op_cls.build(operands=[state.value(args["self"])], result_types=[type_of_node(node)])

    return handle


def _round(state: ImportState, node: Node) -> Operation:
    """`round(x, decimals=d)` as torch computes it: `round(x * 10^d) / 10^d`, or
    `round(x / 10^-d) * 10^-d` for negative `d` (round half to even throughout)."""
    args = arguments_of(node)
    round_cls = aten.UNARY_OP_CLASSES["round"]
    decimals = int(args.get("decimals", 0))  # `round.default` rounds to an integer
    source, result_type = state.value(args["self"]), type_of_node(node)
    if decimals == 0:
        return round_cls.build(operands=[source], result_types=[result_type])
    mul, div = aten.BINARY_OP_CLASSES["mul"], aten.BINARY_OP_CLASSES["div"]
    scale_in, scale_out = (mul, div) if decimals > 0 else (div, mul)
    factor = float(10 ** abs(decimals))
    scaled = state.insert(scale_in.build(operands=[source, state.value(factor)], result_types=[result_type]))
    rounded = state.insert(round_cls.build(operands=[scaled.results[0]], result_types=[result_type]))
    return scale_out.build(operands=[rounded.results[0], state.value(factor)], result_types=[result_type])


def _binary(op_cls: type[IRDLOperation], other: str = "other") -> Handler:
    """`op(self, other)`; `other` names the second operand (`pow` calls it `exponent`).
    `add`/`sub` scale it by `alpha`, `div` may round with `rounding_mode`."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        alpha, rounding_mode = args.get("alpha", 1), args.get("rounding_mode")
        return op_cls.build(
            operands=[state.value(args["self"]), state.value(args[other])],
            result_types=[type_of_node(node)],
            properties=props(
                alpha=f64_attr(alpha) if alpha != 1 else None,
                rounding_mode=StringAttr(rounding_mode) if rounding_mode is not None else None,
            ),
        )

    return handle


def _gelu(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    approximate = args["approximate"]
    return aten.GeluOp.build(
        operands=[state.value(args["self"])],
        result_types=[type_of_node(node)],
        properties=props(approximate=StringAttr(approximate) if approximate != "none" else None),
    )


def _where(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.WhereOp.build(
        operands=[state.value(args[name]) for name in ("condition", "self", "other")],
        result_types=[type_of_node(node)],
    )


def _masked_fill(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.MaskedFillOp.build(
        operands=[state.value(args[name]) for name in ("self", "mask", "value")],
        result_types=[type_of_node(node)],
    )


def _clamp(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.ClampOp.build(
        operands=[
            state.value(args["self"]),
            state.optional_value(args["min"]),
            state.optional_value(args["max"]),
        ],
        result_types=[type_of_node(node)],
    )


def _hardtanh(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.ClampOp.build(
        operands=[
            state.value(args["self"]),
            [state.value(args["min_val"])],
            [state.value(args["max_val"])],
        ],
        result_types=[type_of_node(node)],
    )


def _to_copy(state: ImportState, node: Node) -> Operation:
    return aten.ToCopyOp(state.value(arguments_of(node)["self"]), type_of_node(node))


def _cast(state: ImportState, node: Node) -> Operation | SSAValue:
    """`to` (any overload) and `type_as`, as the export gives them: `_to_copy` to the
    result's dtype, or the input itself when the dtype stays (torch returns it then)."""
    source = arguments_of(node)["self"]
    assert isinstance(source, Node)
    if source.meta["val"].dtype == node.meta["val"].dtype:
        return state.value(source)
    return _to_copy(state, node)


def _copy(state: ImportState, node: Node) -> Operation | SSAValue:
    """`aten.copy(self, src)`, the functional form of `self.copy_(src)`: `src` cast to
    `self`'s dtype and broadcast to `self`'s shape (a static cache's `copy_`)."""
    args = arguments_of(node)
    self_node, src_node = args["self"], args["src"]
    assert isinstance(self_node, Node) and isinstance(src_node, Node)
    target, source = self_node.meta["val"], src_node.meta["val"]
    value = state.value(src_node)
    if source.dtype != target.dtype:
        cast_type = TensorType(element_type(target.dtype), [static_dim(d) for d in source.shape])
        value = state.insert(aten.ToCopyOp(value, cast_type)).results[0]
    if list(source.shape) == list(target.shape):
        return value
    sizes: list[SSAValue | int] = []
    for axis, dim in enumerate(target.shape):
        size = static_dim(dim)
        if size == DYNAMIC_INDEX:
            sizes.append(state.insert(aten.SymSizeOp(state.value(self_node), axis)).results[0])
        else:
            sizes.append(size)
    static, dynamic = index_operands(sizes)
    return aten.ExpandOp.build(
        operands=[value, dynamic],
        result_types=[type_of_node(node)],
        properties={"static_sizes": int_array(static)},
    )


def _triangle(op_cls: type[IRDLOperation]) -> Handler:
    """`tril`/`triu(self, diagonal=0)`: the elements on one side of a diagonal, others 0."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        diagonal = args["diagonal"]
        return op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties=props(diagonal=i64_attr(diagonal) if diagonal else None),
        )

    return handle


ELEMENTWISE_IMPORTERS: dict[str, Handler] = {
    **{
        f"aten.{name}": _unary(cls)
        for name, cls in aten.UNARY_OP_CLASSES.items()
        if name != "round"
    },
    **{
        f"aten.{name}": _binary(cls, other="exponent" if name == "pow" else "other")
        for name, cls in aten.BINARY_OP_CLASSES.items()
    },
    "aten.__and__": _binary(aten.BINARY_OP_CLASSES["bitwise_and"]),
    "aten.__or__": _binary(aten.BINARY_OP_CLASSES["bitwise_or"]),
    "aten.__xor__": _binary(aten.BINARY_OP_CLASSES["bitwise_xor"]),
    "aten.__lshift__": _binary(aten.BINARY_OP_CLASSES["bitwise_left_shift"]),
    "aten.__rshift__": _binary(aten.BINARY_OP_CLASSES["bitwise_right_shift"]),
    # torch's lazy conjugate (`_conj`, a view with a conjugate bit) has the values of
    # the materialized one; `resolve_conj` materializes what is already materialized.
    **{
        f"aten.{name}": _unary(aten.UNARY_OP_CLASSES["conj_physical"])
        for name in ("conj", "_conj", "_conj_physical")
    },
    "aten.resolve_conj": _unary(aten.UNARY_OP_CLASSES["clone"]),
    "aten.round": _round,
    "aten.gelu": _gelu,
    "aten.where": _where,
    "aten.masked_fill": _masked_fill,
    "aten.clamp": _clamp,
    "aten.hardtanh": _hardtanh,
    "aten._to_copy": _to_copy,
    "aten.to": _cast,
    "aten.type_as": _cast,
    # ExecuTorch's dim-order forms: a dim order is a memory layout, the values are those
    # of `_to_copy` and `clone`.
    "dim_order_ops._to_dim_order_copy": _to_copy,
    "dim_order_ops._clone_dim_order": _unary(aten.UNARY_OP_CLASSES["clone"]),
    "aten.copy": _copy,
    "aten.tril": _triangle(aten.TrilOp),
    "aten.triu": _triangle(aten.TriuOp),
}
