"""Shape and view ops: view/reshape/expand, permutes, squeezes, slices, joins and
splits, padding, and the `_copy` forms of views."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch.fx import Node
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportState,
    arguments_of,
    element_type_of,
    f64_attr,
    i64_attr,
    props,
    refuse,
    result_types,
    static_dim,
    type_of_node,
)
from mlxir.dialects import aten
from mlxir.dialects.common import index_operands, int_array, rank_of


def identity(state: ImportState, node: Node) -> SSAValue:
    return state.value(arguments_of(node)["self"])


def _dropout(state: ImportState, node: Node) -> SSAValue:
    """Inference dropout is the identity; training dropout draws random numbers."""
    args = arguments_of(node)
    if args["train"] and args["p"]:
        raise refuse(node, "is training-mode dropout (random): call model.eval() before exporting")
    return state.value(args["input"])


def _sized(op_cls: type[IRDLOperation], sizes: str = "size") -> Handler:
    """`op(self, sizes)` with `SymInt[]` sizes, named `sizes` in the op's schema."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        static, dynamic = index_operands(state.sizes(args[sizes]))
        return op_cls.build(
            operands=[state.value(args["self"]), dynamic],
            result_types=[type_of_node(node)],
            properties={"static_sizes": int_array(static)},
        )

    return handle


def _permute(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.PermuteOp.build(
        operands=[state.value(args["self"])],
        result_types=[type_of_node(node)],
        properties={"dims": int_array(args["dims"])},
    )


def _transpose(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    source = state.value(args["self"])
    # `t(self)` swaps dims 0 and 1, and returns a tensor of rank below 2 as it is.
    dim0, dim1 = args.get("dim0", 0), args.get("dim1", 1 if rank_of(source) >= 2 else 0)
    return aten.TransposeOp.build(
        operands=[source],
        result_types=[type_of_node(node)],
        properties={"dim0": i64_attr(dim0), "dim1": i64_attr(dim1)},
    )


def _unsqueeze(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.UnsqueezeOp.build(
        operands=[state.value(args["self"])],
        result_types=[type_of_node(node)],
        properties={"dim": i64_attr(args["dim"])},
    )


def _squeeze(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    dims = args.get("dim")  # `squeeze.default` squeezes every size-1 dim
    if isinstance(dims, int):
        dims = [dims]
    return aten.SqueezeOp.build(
        operands=[state.value(args["self"])],
        result_types=[type_of_node(node)],
        properties=props(dims=int_array(dims) if dims is not None else None),
    )


_INT64_MAX = 2**63 - 1


def range_operands(state: ImportState, start: Any, end: Any, step: Any) -> tuple[list[int], list[SSAValue]]:
    """`start`, `end`, `step` of a slice (None: from the first, to the last element)."""
    bounds = state.sizes(
        [0 if start is None else start, _INT64_MAX if end is None else end, step or 1]
    )
    return index_operands(bounds)


def _slice(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    static, dynamic = range_operands(state, args["start"], args["end"], args["step"])
    return aten.SliceOp.build(
        operands=[state.value(args["self"]), dynamic],
        result_types=[type_of_node(node)],
        properties={"dim": i64_attr(args["dim"]), "static_bounds": int_array(static)},
    )


def _select(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    static, dynamic = index_operands(state.sizes([args["index"]]))
    return aten.SelectOp.build(
        operands=[state.value(args["self"]), dynamic],
        result_types=[type_of_node(node)],
        properties={"dim": i64_attr(args["dim"]), "static_index": int_array(static)},
    )


def _narrow(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    static, dynamic = index_operands(state.sizes([args["start"], args["length"]]))
    return aten.NarrowOp.build(
        operands=[state.value(args["self"]), dynamic],
        result_types=[type_of_node(node)],
        properties={"dim": i64_attr(args["dim"]), "static_bounds": int_array(static)},
    )


def _diagonal(state: ImportState, node: Node) -> Operation:
    """`diagonal(self, offset=0, dim1=0, dim2=1)` (and `diagonal_copy`)."""
    args = arguments_of(node)
    return aten.DiagonalOp.build(
        operands=[state.value(args["self"])],
        result_types=[type_of_node(node)],
        properties=props(
            offset=i64_attr(args["offset"]),
            dim1=i64_attr(args["dim1"]),
            dim2=i64_attr(args["dim2"]),
        ),
    )


def _join(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        return op_cls.build(
            operands=[[state.value(t) for t in args["tensors"]]],
            result_types=[type_of_node(node)],
            properties={"dim": i64_attr(args["dim"])},
        )

    return handle


def _split(state: ImportState, node: Node) -> list[SSAValue]:
    args = arguments_of(node)
    return state.inserted_results(
        aten.SplitOp.build(
            operands=[state.value(args["self"])],
            result_types=[result_types(node)],
            properties={"split_size": i64_attr(args["split_size"]), "dim": i64_attr(args["dim"])},
        )
    )


def _split_with_sizes(state: ImportState, node: Node) -> list[SSAValue]:
    args = arguments_of(node)
    return state.inserted_results(
        aten.SplitWithSizesOp.build(
            operands=[state.value(args["self"])],
            result_types=[result_types(node)],
            properties={
                "split_sizes": int_array(args["split_sizes"]),
                "dim": i64_attr(args["dim"]),
            },
        )
    )


def _unbind(state: ImportState, node: Node) -> list[SSAValue]:
    """`unbind(self, dim)`: the size-1 pieces of a split along `dim`, squeezed."""
    args = arguments_of(node)
    dim, source = args["dim"], args["self"]
    assert isinstance(source, Node)
    pieces = result_types(node)
    shape = [static_dim(d) for d in source.meta["val"].shape]
    axis = dim + len(shape) if dim < 0 else dim
    shape[axis] = 1
    split = aten.SplitWithSizesOp.build(
        operands=[state.value(source)],
        result_types=[[TensorType(element_type_of(piece), shape) for piece in pieces]],
        properties={"split_sizes": int_array([1] * len(pieces)), "dim": i64_attr(dim)},
    )
    state.insert(split)
    return [
        state.insert(
            aten.SqueezeOp.build(
                operands=[part], result_types=[piece], properties={"dims": int_array([dim])}
            )
        ).results[0]
        for part, piece in zip(split.results, pieces)
    ]


STATIC_INT_LISTS: dict[str, str] = {"aten.flip": "dims", "aten.repeat": "repeats"}
"""Packets whose importer takes an `int[]` argument (named here) only when it is static;
the importer decomposes a node whose list holds a symbolic size (`repeat(b, 1, 1)` with
`b` a dynamic batch) instead (`has_static_int_lists`)."""


def has_static_int_lists(packet: str, node: Node) -> bool:
    """Whether `node`'s `STATIC_INT_LISTS` argument, if it has one, is all ints."""
    name = STATIC_INT_LISTS.get(packet)
    return name is None or all(isinstance(v, int) for v in arguments_of(node)[name])


_IMPORTS_ONLY_WHEN: dict[str, Callable[[Node], bool]] = {
    # its other modes decompose (`nn_decompositions._pad`); constant padding imports
    # whole, for torch's kernel of it fixes symbolic sizes when traced
    "aten.pad": lambda node: arguments_of(node)["mode"] == "constant",
}


def has_own_importer(packet: str, node: Node) -> bool:
    """Whether `node`, of a packet with an importer, imports as it is: not when its
    `STATIC_INT_LISTS` argument holds symbolic sizes, nor when it is outside what
    `_IMPORTS_ONLY_WHEN` says the importer takes."""
    condition = _IMPORTS_ONLY_WHEN.get(packet)
    return has_static_int_lists(packet, node) and (condition is None or condition(node))


def _static_int_list(op_cls: type[IRDLOperation], name: str) -> Handler:
    """`op(self, name)` with a static `int[]` argument, the op's property of that name."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        values = args[name]
        if not all(isinstance(v, int) for v in values):
            raise refuse(
                node,
                f"with {name} that depend on an input's shape "
                f"({', '.join(str(v) for v in values)}) is not supported",
            )
        return op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties={name: int_array(values)},
        )

    return handle


def _constant_pad(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    if args.get("mode", "constant") != "constant":  # `_IMPORTS_ONLY_WHEN` decomposes them first
        raise refuse(node, f"in {args['mode']} mode is not supported")
    value = args["value"]
    return aten.ConstantPadNdOp.build(
        operands=[state.value(args["self"])],
        result_types=[type_of_node(node)],
        properties=props(pad=int_array(args["pad"]), value=f64_attr(value) if value else None),
    )


_VIEW_IMPORTERS: dict[str, Handler] = {
    "aten.alias": identity,
    "aten.view": _sized(aten.ViewOp),
    "aten.expand": _sized(aten.ExpandOp),
    "aten.permute": _permute,
    "aten.transpose": _transpose,
    "aten.t": _transpose,
    "aten.unsqueeze": _unsqueeze,
    "aten.squeeze": _squeeze,
    "aten.slice": _slice,
    "aten.select": _select,
    "aten.split": _split,
    "aten.split_with_sizes": _split_with_sizes,
    "aten.unbind": _unbind,
    "aten.diagonal": _diagonal,
}

COPY_FORMS: dict[str, str] = {f"{view}_copy": view for view in _VIEW_IMPORTERS}
"""The `_copy` form of a view (ExecuTorch Edge programs are made of them) → the view:
values are values, so both import as the same op."""

SHAPE_IMPORTERS: dict[str, Handler] = {
    **_VIEW_IMPORTERS,
    **{copy: _VIEW_IMPORTERS[view] for copy, view in COPY_FORMS.items()},
    "aten.detach": identity,
    "aten.detach_": identity,  # of a fresh constant (`lift_fresh_copy`): values stay
    "aten.dropout": _dropout,
    "aten.lift_fresh_copy": identity,
    "aten.contiguous": identity,
    "aten._unsafe_view": _sized(aten.ViewOp),
    "aten.reshape": _sized(aten.ReshapeOp, sizes="shape"),
    "aten.narrow": _narrow,
    "aten.cat": _join(aten.CatOp),
    "aten.stack": _join(aten.StackOp),
    **{
        packet: _static_int_list(op_cls, STATIC_INT_LISTS[packet])
        for packet, op_cls in (("aten.flip", aten.FlipOp), ("aten.repeat", aten.RepeatOp))
    },
    "aten.constant_pad_nd": _constant_pad,
    "aten.pad": _constant_pad,
}
