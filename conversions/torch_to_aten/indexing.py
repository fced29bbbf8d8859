"""Indexing: `x[idx]` and its writes (index, index_put), gathers and scatters along a
dim, slice writes, and embedding lookups."""

from __future__ import annotations

from torch.fx import Node
from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Operation
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportError_,
    ImportState,
    _type_of_node,
    arguments_of,
    describe_location,
    i64_attr,
    props,
    unit_attr,
)
from mlxir.conversions.torch_to_aten.shape import range_operands
from mlxir.dialects import aten
from mlxir.dialects.common import int_array


def _index(state: ImportState, node: Node) -> Operation:
    """`self[indices]`, a None index leaving its dim whole."""
    args = arguments_of(node)
    indices = args["indices"]
    positions = [i for i, index in enumerate(indices) if index is not None]
    return aten.IndexOp.build(
        operands=[state.value(args["self"]), [state.value(indices[i]) for i in positions]],
        result_types=[_type_of_node(node)],
        properties={"indexed_dims": int_array(positions)},
    )


def _index_put(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    indices = args["indices"]
    positions = [i for i, index in enumerate(indices) if index is not None]
    return aten.IndexPutOp.build(
        operands=[
            state.value(args["self"]),
            [state.value(indices[i]) for i in positions],
            state.value(args["values"]),
        ],
        result_types=[_type_of_node(node)],
        properties=props(indexed_dims=int_array(positions), accumulate=unit_attr(args["accumulate"])),
    )


def _along_dim_with(op_cls: type[IRDLOperation], *operands: str) -> Handler:
    """`op(self, dim, index, ...)`: the named `operands` and a `dim` property."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        return op_cls.build(
            operands=[state.value(args[name]) for name in operands],
            result_types=[_type_of_node(node)],
            properties={"dim": i64_attr(args["dim"])},
        )

    return handle


def _scatter(state: ImportState, node: Node) -> Operation:
    """`scatter.src/value` (self, dim, index, src|value) and their `reduce=` forms."""
    args = arguments_of(node)
    reduce = args.get("reduce")
    if reduce is not None and reduce not in aten.SCATTER_MODES:
        raise ImportError_(f"{describe_location(node)}: scatter reduce '{reduce}' is not supported")
    source = args["src"] if "src" in args else args["value"]
    return aten.ScatterOp.build(
        operands=[state.value(args["self"]), state.value(args["index"]), state.value(source)],
        result_types=[_type_of_node(node)],
        properties=props(dim=i64_attr(args["dim"]), reduce=StringAttr(reduce) if reduce else None),
    )


def _scatter_reduce(state: ImportState, node: Node) -> Operation:
    """`scatter_reduce.two` (self, dim, index, src, reduce, *, include_self=True), and
    `scatter_add` (self, dim, index, src): its `sum` with `self` included."""
    args = arguments_of(node)
    reduce, include_self = args.get("reduce", "sum"), args.get("include_self", True)
    return aten.ScatterReduceOp.build(
        operands=[state.value(args[name]) for name in ("self", "index", "src")],
        result_types=[_type_of_node(node)],
        properties=props(
            dim=i64_attr(args["dim"]), reduce=StringAttr(reduce), include_self=unit_attr(include_self)
        ),
    )


def _slice_scatter(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    static, dynamic = range_operands(state, args["start"], args["end"], args["step"])
    return aten.SliceScatterOp.build(
        operands=[state.value(args["self"]), state.value(args["src"]), dynamic],
        result_types=[_type_of_node(node)],
        properties={"dim": i64_attr(args["dim"]), "static_bounds": int_array(static)},
    )


def _embedding(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.EmbeddingOp.build(
        operands=[state.value(args["weight"]), state.value(args["indices"])],
        result_types=[_type_of_node(node)],
    )


INDEXING_IMPORTERS: dict[str, Handler] = {
    "aten.index": _index,
    "aten.index_put": _index_put,
    "aten.index_select": _along_dim_with(aten.IndexSelectOp, "self", "index"),
    "aten.index_copy": _along_dim_with(aten.IndexCopyOp, "self", "index", "source"),
    "aten.gather": _along_dim_with(aten.GatherOp, "self", "index"),
    "aten.scatter": _scatter,
    "aten.scatter_add": _scatter_reduce,
    "aten.scatter_reduce": _scatter_reduce,
    "aten.slice_scatter": _slice_scatter,
    "aten.embedding": _embedding,
}
