"""Slot allocation: every SSA value of the function gets a slot (register).

- Each `mlx.global` has one slot (Constant or State), in module order, then each
  function argument an Input slot, in signature order.
- `mlx.weight` results live in their global's Constant slot (all reads of one weight
  share it) and are no instructions: an instruction reads the constant slot directly
  (the deserializer materializes one `mlx.weight` per global it reads). Every other
  result gets a Temporary slot.
- A temporary is freed after the last instruction that uses its value (right after
  its definition when nothing uses it) and listed in that instruction's `free`, so a
  runtime can drop the value at once. A freed slot is reused by the next value of
  exactly its type (element type, shape, scalar or tensor), lowest index first.
- Input, Constant and State slots are never freed or reused; values returned by the
  function are live to the end, so they are never clobbered; a result never shares
  a slot with an operand of its own instruction.

The outcome depends only on the order of ops and values, never on ids or hashing.
"""

from __future__ import annotations

import heapq
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import cast

from xdsl.dialects.builtin import IndexType, IntegerType, TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from mlxir.codegen.errors import ProgramError
from mlxir.dialects.common import DYNAMIC
from mlxir.support import dtypes

TEMPORARY, INPUT, CONSTANT, STATE = "temporary", "input", "constant", "state"


@dataclass(frozen=True)
class SlotType:
    """What a slot holds: a tensor of `dtype` and `shape` (-1 dynamic) or a scalar."""

    dtype: dtypes.DType
    shape: tuple[int, ...]
    scalar: bool


@dataclass(frozen=True)
class SlotSpec:
    kind: str
    type: SlotType
    name: str | None = None


@dataclass
class Allocation:
    slots: list[SlotSpec] = field(default_factory=list[SlotSpec])
    slot_of: dict[SSAValue, int] = field(default_factory=dict[SSAValue, int])
    free: list[list[int]] = field(default_factory=list[list[int]])
    """Per instruction, the temporaries dead after it (ascending)."""

    def new(self, spec: SlotSpec) -> int:
        self.slots.append(spec)
        return len(self.slots) - 1


def slot_type(type_: Attribute, what: str) -> SlotType:
    """The slot type of an IR type; raises for types a program cannot hold."""
    if isinstance(type_, TensorType):
        type_ = cast(TensorType[Attribute], type_)  # isinstance leaves its type parameter unknown
        dtype = dtypes.of_ir(type_.get_element_type())
        if dtype is None or dtype.name not in dtypes.TENSOR_DTYPES:
            raise ProgramError(
                f"{what}: tensor element type {type_.get_element_type()} is not supported "
                f"(supported: {', '.join(sorted(dtypes.TENSOR_DTYPES))})"
            )
        shape = tuple(-1 if d == DYNAMIC else d for d in type_.get_shape())
        return SlotType(dtype, shape, False)
    if isinstance(type_, IndexType | IntegerType):
        type_ = cast(IndexType | IntegerType, type_)  # isinstance leaves IntegerType's unknown
        dtype = dtypes.of_ir(type_)
        if dtype is not None and dtype.name in dtypes.SCALAR_DTYPES:
            return SlotType(dtype, (), True)
    raise ProgramError(
        f"{what}: values of type {type_} are not supported (a program holds tensors and "
        "index, i64 or i1 scalars)"
    )


def allocate(
    global_slots: Sequence[SlotSpec],
    arguments: Sequence[tuple[SSAValue, str | None]],
    ops: Sequence[Operation],
    outputs: Sequence[SSAValue],
    global_reads: Mapping[SSAValue, int],
) -> Allocation:
    """Assigns slots to the values of `ops` (the instructions, in order). `global_slots`
    come first (one per global); `global_reads` maps each value that reads a global
    without an instruction (an `mlx.weight` result) to its global's slot index."""
    alloc = Allocation(slots=list(global_slots))
    alloc.slot_of.update(global_reads)
    for value, name in arguments:
        alloc.slot_of[value] = alloc.new(SlotSpec(INPUT, slot_type(value.type, "input"), name))

    end = len(ops)
    last_use: dict[SSAValue, int] = {}
    for i, op in enumerate(ops):
        for operand in op.operands:
            last_use[operand] = i
    for value in outputs:
        last_use[value] = end

    free_slots: dict[SlotType, list[int]] = {}
    for i, op in enumerate(ops):
        for j, result in enumerate(op.results):
            type_ = slot_type(result.type, f"result #{j} of '{op.name}'")
            pool = free_slots.get(type_)
            if pool:
                alloc.slot_of[result] = heapq.heappop(pool)
            else:
                alloc.slot_of[result] = alloc.new(SlotSpec(TEMPORARY, type_))
        dead: list[int] = []
        for value in (*op.operands, *op.results):
            slot = alloc.slot_of[value]
            if (
                alloc.slots[slot].kind == TEMPORARY
                and last_use.get(value, i) == i
                and slot not in dead
            ):
                dead.append(slot)
        dead.sort()
        for slot in dead:
            heapq.heappush(free_slots.setdefault(alloc.slots[slot].type, []), slot)
        alloc.free.append(dead)
    return alloc
