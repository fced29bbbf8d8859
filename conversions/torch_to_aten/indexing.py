"""Indexing: `x[idx]` and its writes (index, index_put), gathers and scatters along a
dim, slice writes, and embedding lookups."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import torch
from torch.fx import Node
from xdsl.dialects.builtin import DYNAMIC_INDEX, StringAttr, TensorType, i64
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportError_,
    ImportState,
    arguments_of,
    describe_location,
    element_type,
    i64_attr,
    props,
    refuse,
    result_types,
    static_dim,
    type_of_node,
    unit_attr,
)
from mlxir.conversions.torch_to_aten.shape import range_operands
from mlxir.dialects import aten
from mlxir.dialects.common import index_operands, int_array, rank_of


def _is_mask(index: Any) -> bool:
    value = index.meta.get("val") if isinstance(index, Node) else None
    return isinstance(value, torch.Tensor) and value.dtype == torch.bool


def _nonzero_columns(state: ImportState, mask: SSAValue) -> list[SSAValue]:
    """The indices of `mask`'s true elements, one int64 `[count]` column per dim of the
    mask: what torch indexes with in place of a bool mask (a sync point: the count
    depends on the mask's values)."""
    rank = rank_of(mask)
    found = state.insert(
        aten.NonzeroOp.build(operands=[mask], result_types=[TensorType(i64, [DYNAMIC_INDEX, rank])])
    ).results[0]
    return [
        state.insert(
            aten.SelectOp.build(
                operands=[found, []],
                result_types=[TensorType(i64, [DYNAMIC_INDEX])],
                properties={"dim": i64_attr(1), "static_index": int_array([column])},
            )
        ).results[0]
        for column in range(rank)
    ]


def _index_tensors(state: ImportState, indices: list[Any]) -> tuple[list[int], list[SSAValue]]:
    """ATen's index list as (indexed dims, index tensors): a None index leaves its dim
    whole; a bool mask stands for the indices of its true elements, one per dim it
    covers, as torch expands it."""
    positions: list[int] = []
    values: list[SSAValue] = []
    dim = 0
    for index in indices:
        if index is None:
            dim += 1
            continue
        for value in _nonzero_columns(state, state.value(index)) if _is_mask(index) else [state.value(index)]:
            positions.append(dim)
            values.append(value)
            dim += 1
    return positions, values


def _index(state: ImportState, node: Node) -> Operation:
    """`self[indices]`."""
    args = arguments_of(node)
    positions, values = _index_tensors(state, args["indices"])
    return aten.IndexOp.build(
        operands=[state.value(args["self"]), values],
        result_types=[type_of_node(node)],
        properties={"indexed_dims": int_array(positions)},
    )


def _nonzero(state: ImportState, node: Node) -> Operation:
    return aten.NonzeroOp.build(operands=[state.value(arguments_of(node)["self"])], result_types=[type_of_node(node)])


def _masked_select(state: ImportState, node: Node) -> Operation:
    """`self[mask]` after broadcasting both (a 0-d pair as `[1]`): a 1-D result."""
    args = arguments_of(node)
    operands = (args["self"], args["mask"])
    shape = list(cast(Sequence[int | torch.SymInt], torch.broadcast_shapes(*(o.meta["val"].shape for o in operands)))) or [1]  # pyright: ignore[reportUnknownMemberType] (torch.functional's broadcast_shapes is unannotated)
    sizes: list[SSAValue | int] = []
    for axis, size in enumerate(shape):
        if isinstance(size, int):
            sizes.append(size)
            continue
        # a symbolic size is read from an operand that has it
        for operand in operands:
            own = list(operand.meta["val"].shape)
            at = axis - (len(shape) - len(own))
            if at >= 0 and str(own[at]) == str(size):
                sizes.append(state.insert(aten.SymSizeOp(state.value(operand), at)).results[0])
                break
        else:
            raise ImportError_(f"{describe_location(node)}: cannot find the broadcast size {size} in an operand")
    expanded: list[SSAValue] = []
    for operand in operands:
        value = state.value(operand)
        if list(operand.meta["val"].shape) != shape:
            static, dynamic = index_operands(sizes)
            dtype = TensorType(element_type(operand.meta["val"].dtype), [static_dim(d) for d in shape])
            value = state.insert(
                aten.ExpandOp.build(operands=[value, dynamic], result_types=[dtype], properties={"static_sizes": int_array(static)})
            ).results[0]
        expanded.append(value)
    columns = _nonzero_columns(state, expanded[1])
    return aten.IndexOp.build(
        operands=[expanded[0], columns],
        result_types=[type_of_node(node)],
        properties={"indexed_dims": int_array(list(range(len(columns))))},
    )


def _unique(state: ImportState, node: Node) -> list[SSAValue]:
    """`_unique2(self, sorted, return_inverse, return_counts)` and
    `unique_consecutive(self, return_inverse, return_counts, dim=None)`: one
    `aten.unique`. `sorted=False` leaves the order to the implementation in ATen; mlxir
    sorts (one valid order). Unique along a dim (`unique_dim`, `unique_consecutive`
    with `dim`) is refused."""
    args = arguments_of(node)
    if args.get("dim") is not None:
        raise refuse(node, "along a dim is not supported (mlxir's unique flattens its input)")
    op = aten.UniqueOp.build(
        operands=[state.value(args["self"])],
        result_types=result_types(node),
        properties=props(
            consecutive=unit_attr("sorted" not in args),
            return_inverse=unit_attr(args["return_inverse"]),
            return_counts=unit_attr(args["return_counts"]),
        ),
    )
    return state.inserted_results(op)


def _repeat_interleave(state: ImportState, node: Node) -> Operation:
    """`repeat_interleave.Tensor(repeats, *, output_size=None)`: the positions of
    `repeats`, each repeated (the length is computed from `repeats`; an `output_size`
    that disagrees fails the result's shape check at run time). The other overloads
    are decomposed into this one and an `index_select` before import."""
    args = arguments_of(node)
    if "self" in args:
        raise refuse(node, "is expected decomposed into repeat_interleave.Tensor and index_select")
    return aten.RepeatInterleaveOp.build(operands=[state.value(args["repeats"])], result_types=[type_of_node(node)])


def _local_scalar_dense(state: ImportState, node: Node) -> SSAValue:
    """`.item()` of a one-element tensor. An integer or bool one becomes an `index`
    (`aten.item`, a sync point) that symbolic sizes and scalars can use; a float one
    stays the 0-d tensor itself, as every ATen op that takes a float scalar also takes
    a 0-d tensor (no sync point: nothing needs its value on the host)."""
    source = arguments_of(node)["self"]
    value = state.value(source)
    fake = source.meta["val"]
    if fake.dtype.is_floating_point:
        if fake.dim() == 0:
            return value
        return state.insert(aten.ReshapeOp(value, [], TensorType(element_type(fake.dtype), []))).results[0]
    return state.insert(aten.ItemOp(value)).results[0]


def _index_put(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    positions, values = _index_tensors(state, args["indices"])
    return aten.IndexPutOp.build(
        operands=[state.value(args["self"]), values, state.value(args["values"])],
        result_types=[type_of_node(node)],
        properties=props(indexed_dims=int_array(positions), accumulate=unit_attr(args["accumulate"])),
    )


def _along_dim_with(op_cls: type[IRDLOperation], *operands: str) -> Handler:
    """`op(self, dim, index, ...)`: the named `operands` and a `dim` property."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        return op_cls.build(
            operands=[state.value(args[name]) for name in operands],
            result_types=[type_of_node(node)],
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
        result_types=[type_of_node(node)],
        properties=props(dim=i64_attr(args["dim"]), reduce=StringAttr(reduce) if reduce else None),
    )


def _scatter_reduce(state: ImportState, node: Node) -> Operation:
    """`scatter_reduce.two` (self, dim, index, src, reduce, *, include_self=True), and
    `scatter_add` (self, dim, index, src): its `sum` with `self` included."""
    args = arguments_of(node)
    reduce, include_self = args.get("reduce", "sum"), args.get("include_self", True)
    return aten.ScatterReduceOp.build(
        operands=[state.value(args[name]) for name in ("self", "index", "src")],
        result_types=[type_of_node(node)],
        properties=props(
            dim=i64_attr(args["dim"]), reduce=StringAttr(reduce), include_self=unit_attr(include_self)
        ),
    )


def _slice_scatter(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    static, dynamic = range_operands(state, args["start"], args["end"], args["step"])
    return aten.SliceScatterOp.build(
        operands=[state.value(args["self"]), state.value(args["src"]), dynamic],
        result_types=[type_of_node(node)],
        properties={"dim": i64_attr(args["dim"]), "static_bounds": int_array(static)},
    )


def _embedding(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.EmbeddingOp.build(
        operands=[state.value(args["weight"]), state.value(args["indices"])],
        result_types=[type_of_node(node)],
    )


INDEXING_IMPORTERS: dict[str, Handler] = {
    "aten.index": _index,
    "aten.nonzero": _nonzero,
    "aten.masked_select": _masked_select,
    "aten._unique2": _unique,
    "aten.unique_consecutive": _unique,
    "aten.repeat_interleave": _repeat_interleave,
    "aten._local_scalar_dense": _local_scalar_dense,
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
