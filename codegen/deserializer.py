"""`.mlxfb` bytes → mlx IR with its weights, so `mlx-opt model.mlxfb` prints a program."""

from __future__ import annotations

from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FileLineColLoc,
    IntAttr,
    IntegerAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    i64,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.codegen.attributes import rebuild
from mlxir.codegen.errors import ProgramError
from mlxir.codegen.ops import INPUT_DIMS_ATTR, SYMBOL_RANGES_ATTR
from mlxir.codegen.reader import GlobalInfo, ProgramInfo, SlotInfo, read_program
from mlxir.codegen.signature import SIGNATURE_ATTR
from mlxir.dialects.common import DYNAMIC, int_array
from mlxir.dialects.mlx import GlobalOp, LoadStateOp, WeightOp
from mlxir.dialects.weights import dense_attr
from mlxir.support import dtypes


def deserialize(data: bytes | bytearray | memoryview | Any, ctx: Context | None = None) -> ModuleOp:
    """The mlx IR of a program, each global holding its payload as its `dense<...>`
    value. `serialize(deserialize(data)) == data` for every program `serialize` wrote.
    Raises `ProgramError` when `data` is not a valid program or does not form valid IR."""
    info = read_program(data)
    if ctx is None:
        from mlxir.dialects.context import register_dialects

        ctx = Context()
        register_dialects(ctx)
    module = module_of(info, ctx)
    slots = {g.name: g.slot for g in info.globals}
    for op in module.ops:
        if isinstance(op, GlobalOp):
            dtype = dtypes.of_ir(op.type.get_element_type())
            assert dtype is not None  # read_program checked every global's type
            op.properties["value"] = dense_attr(
                info.constants[slots[op.sym_name.data]], dtype, tuple(op.value_type.get_shape())
            )
    return module


def module_of(info: ProgramInfo, ctx: Context | None = None) -> ModuleOp:
    """The verified mlx IR of a program `read_program` returned. Raises `ProgramError`
    when it is no valid IR: an op's verifier fails (types that lie, a property out of
    its range), which `read_program`, checking structure only, lets through."""
    if ctx is None:
        from mlxir.codegen.attributes import text_context

        ctx = text_context()  # shared and cached: dialects are registered once
    try:
        module = _build(info, ctx)
        module.verify()
    except ProgramError:
        raise
    except Exception as error:  # the file decodes but is no valid IR: say why
        message = str(error).strip() or type(error).__name__
        raise ProgramError(f"the program is not valid mlx IR: {message}") from error
    return module


def ir_type(slot: SlotInfo) -> Attribute:
    element = dtypes.BY_NAME[slot.dtype].ir
    if slot.scalar:
        return element
    return TensorType(element, [DYNAMIC if d is None else d for d in slot.shape])


def _set_name(value: SSAValue, name: str | None) -> None:
    if not name:
        return
    try:
        value.name_hint = name
    except ValueError:  # not a valid SSA name: print it unnamed
        pass


def _build(info: ProgramInfo, ctx: Context) -> ModuleOp:
    module = ModuleOp([])
    top = module.body.block
    global_by_slot: dict[int, GlobalInfo] = {}
    for g in info.globals:
        slot = info.slots[g.slot]
        type_ = ir_type(slot)
        assert isinstance(type_, TensorType)
        global_op = GlobalOp(g.name, cast(TensorType[Attribute], type_), g.kind)
        if g.ranks > 1:
            global_op.ranks = IntegerAttr(g.ranks, i64)
        top.add_op(global_op)
        global_by_slot[g.slot] = g

    block = Block(arg_types=[ir_type(info.slots[s]) for s in info.inputs])
    current: dict[int, SSAValue] = {}
    for slot, arg in zip(info.inputs, block.args, strict=True):
        _set_name(arg, info.slots[slot].name)
        current[slot] = arg

    def read(slot: int) -> SSAValue:
        value = current.get(slot)
        if value is None:  # a global read directly: materialize its access op
            g = global_by_slot[slot]
            type_ = ir_type(info.slots[slot])
            op_cls = LoadStateOp if g.kind == "state" else WeightOp
            access = op_cls.create(
                result_types=[type_], properties={"global_name": SymbolRefAttr(g.name)}
            )
            block.add_op(access)
            value = access.results[0]
            if g.kind != "state":
                current[slot] = value
        return value

    for ins in info.instructions:
        op_cls = ctx.get_optional_op(ins.op)
        if op_cls is None or not issubclass(op_cls, IRDLOperation):
            raise ProgramError(f"instruction #{ins.index}: op '{ins.op}' is not registered")
        operands = [read(s) for s in ins.operands]
        op = op_cls.create(
            operands=operands,
            result_types=[ir_type(info.slots[s]) for s in ins.results],
            properties={k: rebuild(r, ctx) for k, r in ins.typed_props.items()},
            attributes={k: rebuild(r, ctx) for k, r in ins.typed_attributes.items()},
        )
        if ins.source is not None:
            file, line, column = ins.source
            op.location = FileLineColLoc(StringAttr(file), IntAttr(line), IntAttr(column))
        block.add_op(op)
        for i, (slot, value) in enumerate(zip(ins.results, op.results, strict=True)):
            current[slot] = value
            if ins.result_names:
                _set_name(value, ins.result_names[i])
        for slot in ins.free:
            current.pop(slot, None)
    block.add_op(ReturnOp(*[read(s) for s in info.outputs]))

    func = FuncOp(
        info.name,
        (
            [ir_type(info.slots[s]) for s in info.inputs],
            [ir_type(info.slots[s]) for s in info.outputs],
        ),
        Region(block),
    )
    if info.input_dims:
        func.attributes[INPUT_DIMS_ATTR] = ArrayAttr(
            [ArrayAttr([StringAttr(d) for d in dims]) for dims in info.input_dims]
        )
    if info.symbol_ranges:
        func.attributes[SYMBOL_RANGES_ATTR] = DictionaryAttr(
            {k: int_array(v) for k, v in info.symbol_ranges.items()}
        )
    if info.signature is not None:
        func.attributes[SIGNATURE_ATTR] = info.signature.to_attr()
    top.add_op(func)
    return module
