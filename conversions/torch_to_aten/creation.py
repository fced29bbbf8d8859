"""Creation ops: full/zeros/ones/empty, their `_like` forms, scalar_tensor and arange."""

from __future__ import annotations

from torch.fx import Node
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportState,
    _type_of_node,
    arguments_of,
)
from mlxir.dialects import aten
from mlxir.dialects.common import index_operands, int_array


def _filled(op_cls: type[IRDLOperation], *, with_fill_value: bool) -> Handler:
    """`op(size, ...)`, filled with the `fill_value` argument or with the op's constant."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        static, dynamic = index_operands(state.sizes(args["size"]))
        fill: list[SSAValue] = [state.value(args["fill_value"])] if with_fill_value else []
        return op_cls.build(
            operands=[*fill, dynamic],
            result_types=[_type_of_node(node)],
            properties={"static_sizes": int_array(static)},
        )

    return handle


def _filled_like(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return op_cls.build(
            operands=[state.value(arguments_of(node)["self"])], result_types=[_type_of_node(node)]
        )

    return handle


def _full_like(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.FullLikeOp.build(
        operands=[state.value(args["fill_value"]), state.value(args["self"])],
        result_types=[_type_of_node(node)],
    )


def _scalar_tensor(state: ImportState, node: Node) -> Operation:
    return aten.ScalarTensorOp.build(
        operands=[state.value(arguments_of(node)["s"])], result_types=[_type_of_node(node)]
    )


def _arange(state: ImportState, node: Node) -> Operation:
    """`arange(end)`, `arange.start(start, end)`, `arange.start_step(start, end, step=1)`."""
    args = arguments_of(node)
    bounds = [args.get("start", 0), args["end"], args.get("step", 1)]
    return aten.ArangeOp.build(
        operands=[state.value(b) for b in bounds], result_types=[_type_of_node(node)]
    )


CREATION_IMPORTERS: dict[str, Handler] = {
    "aten.full": _filled(aten.FullOp, with_fill_value=True),
    "aten.zeros": _filled(aten.ZerosOp, with_fill_value=False),
    # `empty`'s values are unspecified (whatever the memory held); zeros are such values,
    # and the graphs that use it (circular padding) overwrite every element.
    "aten.empty": _filled(aten.ZerosOp, with_fill_value=False),
    # The same for the forms that also say how the memory is laid out: a layout is not a
    # value, and mlxir's tensors have none of their own.
    "aten.empty_permuted": _filled(aten.ZerosOp, with_fill_value=False),
    "aten.empty_strided": _filled(aten.ZerosOp, with_fill_value=False),
    "aten.new_empty_strided": _filled(aten.ZerosOp, with_fill_value=False),
    "aten.ones": _filled(aten.OnesOp, with_fill_value=False),
    "aten.zeros_like": _filled_like(aten.ZerosLikeOp),
    "aten.ones_like": _filled_like(aten.OnesLikeOp),
    "aten.full_like": _full_like,
    "aten.scalar_tensor": _scalar_tensor,
    "aten.arange": _arange,
}
