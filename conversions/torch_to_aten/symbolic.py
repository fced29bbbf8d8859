"""Symbolic integers: `sym_size`, `sym_numel` and the Python/torch integer arithmetic on it become
`index` values and `arith` ops; the asserts on them are dropped (the runtime checks
input shapes against the export's recorded ranges instead, and tensor metadata is
already fixed by the types in the IR)."""

from __future__ import annotations

import operator
from collections.abc import Callable
from typing import Any, cast

import torch
from torch.fx import Node
from xdsl.dialects import arith
from xdsl.dialects.builtin import IntegerAttr, TensorType, i1
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportState,
    arguments_of,
    packet_name,
    positional_args,
    refuse,
    torch_overload,
)
from mlxir.dialects import aten


def _sym_size(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.SymSizeOp(state.value(args["self"]), args["dim"])


def _sym_numel(state: ImportState, node: Node) -> Operation | SSAValue:
    """The element count: the product of every dim's size (1 for a 0-d tensor)."""
    value = state.value(arguments_of(node)["self"])
    rank = len(cast(TensorType[Attribute], value.type).get_shape())
    if rank == 0:
        return state.index_value(1)
    count: SSAValue = state.insert(aten.SymSizeOp(value, 0)).results[0]
    for axis in range(1, rank):
        size = state.insert(aten.SymSizeOp(value, axis)).results[0]
        count = state.insert(arith.MuliOp(count, size)).results[0]
    return count


def dropped(state: ImportState, node: Node) -> list[SSAValue]:
    return []


def _feeds_only_assertions(node: Node) -> bool:
    """Whether every use of `node` is dropped by the importer (an assertion: its entry
    in `SYMBOLIC_ATEN_IMPORTERS` is `dropped`), or is integer arithmetic or a
    comparison (`SYMBOLIC_IMPORTERS`) whose own uses are."""
    for user in node.users:
        target = torch_overload(user.target)
        if target is not None and SYMBOLIC_ATEN_IMPORTERS.get(packet_name(target)) is dropped:
            continue
        if user.target in SYMBOLIC_IMPORTERS and _feeds_only_assertions(user):
            continue
        return False
    return True


def _sym_storage_offset(state: ImportState, node: Node) -> SSAValue:
    """A view's offset in its storage: torch.export asserts it is not negative after a
    slice at a data-dependent start (`tensor_split` by a tensor). mlxir's values are
    not views of a storage, and the assertion is dropped, so only that use is taken
    (as 0); any other read of it is refused."""
    if not _feeds_only_assertions(node):
        raise refuse(node, "is read beyond an assertion: mlxir's values are not views of a storage")
    return state.index_value(0)


SYMBOLIC_ATEN_IMPORTERS: dict[str, Handler] = {
    "aten.sym_size": _sym_size,
    "aten.sym_numel": _sym_numel,
    "aten.sym_storage_offset": _sym_storage_offset,
    "aten._assert_scalar": dropped,
    "aten._assert_tensor_metadata": dropped,
    "aten.sym_constrain_range_for_size": dropped,
    "aten.sym_constrain_range": dropped,
    "aten._assert_async": dropped,
}


def _index_binary(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        lhs, rhs = positional_args(node, 2)
        make: Any = op_cls  # each `arith` binary op is built from its two operands
        return make(state.index_value(lhs), state.index_value(rhs))

    return handle


def _index_compare(predicate: str) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        lhs, rhs = positional_args(node, 2)
        return arith.CmpiOp(state.index_value(lhs), state.index_value(rhs), predicate)

    return handle


def _bool_value(state: ImportState, arg: Any) -> SSAValue:
    """A SymBool operand: an `i1` value, or a literal as an `i1` constant."""
    if isinstance(arg, bool):
        return state.insert(arith.ConstantOp(IntegerAttr(int(arg), i1))).results[0]
    return state.value(arg)


def _bool_binary(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        lhs, rhs = positional_args(node, 2)
        make: Any = op_cls  # each `arith` binary op is built from its two operands
        return make(_bool_value(state, lhs), _bool_value(state, rhs))

    return handle


def _bool_not(state: ImportState, node: Node) -> Operation:
    (operand,) = positional_args(node, 1)
    return arith.XOrIOp(_bool_value(state, operand), _bool_value(state, True))


def _if_then_else(state: ImportState, node: Node) -> Operation:
    """`torch.sym_ite(condition, then, else)` on integers."""
    condition, then, otherwise = positional_args(node, 3)
    return arith.SelectOp(
        _bool_value(state, condition), state.index_value(then), state.index_value(otherwise)
    )


def _index_neg(state: ImportState, node: Node) -> Operation:
    (operand,) = positional_args(node, 1)
    return arith.SubiOp(state.index_value(0), state.index_value(operand))


SYMBOLIC_IMPORTERS: dict[Callable[..., Any], Handler] = {
    operator.add: _index_binary(arith.AddiOp),
    operator.sub: _index_binary(arith.SubiOp),
    operator.mul: _index_binary(arith.MuliOp),
    operator.floordiv: _index_binary(arith.FloorDivSIOp),  # pyright: ignore[reportUnknownMemberType] (typeshed leaves operator.floordiv unannotated)
    operator.mod: _index_binary(arith.RemSIOp),
    operator.neg: _index_neg,
    torch.sym_min: _index_binary(arith.MinSIOp),  # pyright: ignore[reportUnknownMemberType] (torch.sym_min is unannotated)
    torch.sym_max: _index_binary(arith.MaxSIOp),  # pyright: ignore[reportUnknownMemberType] (torch.sym_max is unannotated)
    operator.eq: _index_compare("eq"),
    operator.ne: _index_compare("ne"),
    operator.lt: _index_compare("slt"),
    operator.le: _index_compare("sle"),
    operator.gt: _index_compare("sgt"),
    operator.ge: _index_compare("sge"),
    # SymBools, as torch.export's deferred runtime asserts combine them.
    operator.or_: _bool_binary(arith.OrIOp),  # pyright: ignore[reportUnknownMemberType] (typeshed leaves operator.or_ unannotated)
    operator.and_: _bool_binary(arith.AndIOp),  # pyright: ignore[reportUnknownMemberType] (typeshed leaves operator.and_ unannotated)
    operator.xor: _bool_binary(arith.XOrIOp),  # pyright: ignore[reportUnknownMemberType] (typeshed leaves operator.xor unannotated)
    operator.not_: _bool_not,
    torch.sym_not: _bool_not,  # pyright: ignore[reportUnknownMemberType] (torch.sym_not is unannotated)
    torch.sym_ite: _if_then_else,  # pyright: ignore[reportUnknownMemberType] (torch.sym_ite is unannotated)
}
"""Python/torch symbolic-integer and -boolean ops (no ATen schema) → `arith` on `index`
and `i1` values."""
