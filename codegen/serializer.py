"""mlx IR → `.mlxfb` bytes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypedDict, TypeGuard, cast

from flatbuffers.builder import Builder  # pyright: ignore[reportMissingTypeStubs] (flatbuffers ships no type stubs)
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
)
from xdsl.dialects.func import FuncOp, ReturnOp
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from mlxir.codegen.allocation import CONSTANT, STATE, SlotSpec, allocate, slot_type
from mlxir.codegen.attributes import (
    PAYLOAD_ALIGNMENT,
    TableBuilder,
    Writer,
    encode_dict,
)
from mlxir.codegen.errors import ProgramError
from mlxir.codegen.fb import Global as _Global
from mlxir.codegen.fb import InputDims as _InputDims
from mlxir.codegen.fb import Instruction as _Instruction
from mlxir.codegen.fb import Location as _Location
from mlxir.codegen.fb import Program as _Program
from mlxir.codegen.fb import Slot as _Slot
from mlxir.codegen.fb import StateEntry as _StateEntry
from mlxir.codegen.fb import SymbolRange as _SymbolRange
from mlxir.codegen.fb.GlobalKind import GlobalKind
from mlxir.codegen.fb.SlotKind import SlotKind
from mlxir.codegen.ops import (
    FILE_IDENTIFIER,
    GLOBAL_KINDS,
    INPUT_DIMS_ATTR,
    PROGRAM_ARITH_OPS,
    SCHEMA_VERSION,
    SYMBOL_RANGES_ATTR,
    WEIGHT_OP,
    is_program_op,
)
from mlxir.codegen.parts import ProgramParts
from mlxir.codegen.signature import SIGNATURE_ATTR, Signature
from mlxir.codegen.verification import program_key, record_verified
from mlxir.dialects.mlx import GlobalOp
from mlxir.dialects.weights import WeightError, checked_array, dense_data, element_bytes
from mlxir.support import dtypes
from mlxir.support.gc_pause import without_gc
from mlxir.support.locations import file_line_col, source_location
from mlxir.support.progress import report

# The generated table modules have no annotations: typed through `TableBuilder`.
Global = cast(TableBuilder, _Global)
InputDims = cast(TableBuilder, _InputDims)
Instruction = cast(TableBuilder, _Instruction)
Location = cast(TableBuilder, _Location)
Program = cast(TableBuilder, _Program)
Slot = cast(TableBuilder, _Slot)
StateEntry = cast(TableBuilder, _StateEntry)
SymbolRange = cast(TableBuilder, _SymbolRange)

Payload = Any
"""A `torch.Tensor` or `numpy.ndarray` (a bfloat16 global also takes `uint16` raw bits)."""

_SLOT_KINDS = {
    "temporary": SlotKind.Temporary,
    "input": SlotKind.Input,
    "constant": SlotKind.Constant,
    "state": SlotKind.State,
}
_GLOBAL_KINDS = {
    "parameter": GlobalKind.Parameter,
    "buffer": GlobalKind.Buffer,
    "constant": GlobalKind.Constant,
    "state": GlobalKind.State,
}
assert set(_GLOBAL_KINDS) == set(GLOBAL_KINDS)


def serialize(
    module: ModuleOp, payloads: Mapping[str, Payload] | None = None, *, verify: bool = True
) -> bytes:
    """The `.mlxfb` program of `module` as one `bytes` (see `serialize_parts`)."""
    return bytes(serialize_parts(module, payloads, verify=verify))


@without_gc
def serialize_parts(
    module: ModuleOp, payloads: Mapping[str, Payload] | None = None, *, verify: bool = True
) -> ProgramParts:
    """The `.mlxfb` program of `module`: its `mlx.global`s and its one function, in the
    pieces the serializer laid out (`codegen/parts.py`), so that a large program is
    written to a file or loaded without first being joined into one `bytes`.

    A global's payload is its `dense<...>` value in the IR; `payloads` gives those of
    globals that hold none (name → torch tensor or numpy array; both at once is an
    error). The function's body may hold `mlx` ops, the `arith` ops of
    `PROGRAM_ARITH_OPS` on `index`/`i64`/`i1` values and `func.return`. The same module
    and payloads always give the same bytes. Raises `ProgramError` for IR the format
    cannot hold. With `verify`, the program's key is recorded as verified, so loading
    these bytes does not verify them again (`codegen/verification.py`)."""
    if verify:
        try:
            module.verify()
        except (VerifyException, DiagnosticException) as error:
            raise ProgramError(f"cannot serialize invalid IR: {error}") from error
    payloads = payloads or {}
    globals_: list[GlobalOp] = []
    funcs: list[FuncOp] = []
    for op in module.ops:
        if isinstance(op, GlobalOp):
            globals_.append(op)
        elif isinstance(op, FuncOp):
            funcs.append(op)
        else:
            raise ProgramError(
                f"cannot serialize '{op.name}' at module level: a program holds mlx.global "
                "ops and one func.func"
            )
    if len(funcs) != 1:
        raise ProgramError(f"a program holds exactly one func.func, the module has {len(funcs)}")
    func = funcs[0]
    if len(func.body.blocks) != 1:
        raise ProgramError(
            f"@{func.sym_name.data}: a program function has one block, not {len(func.body.blocks)}"
        )
    serializer = _Serializer(globals_, func, payloads)
    data = serializer.run()
    if verify:  # its IR verified: a later load need not rebuild it (codegen/verification.py)
        record_verified(program_key(data, serializer.segment_start, serializer.payload_ranges))
    return data


class _ProgramFields(TypedDict):
    """The offsets of a `Program`'s fields, written before the table."""

    name: int
    slots: int
    op_names: int
    instructions: int
    inputs: int
    outputs: int
    globals: int
    state: int
    symbol_ranges: int
    input_dims: int
    signature: int | None


class _Serializer:
    def __init__(self, globals_: list[GlobalOp], func: FuncOp, payloads: Mapping[str, Payload]):
        self.globals = globals_
        self.func = func
        self.payloads = payloads
        self.writer = Writer(Builder(1 << 16))
        self.b = self.writer.builder
        self.segment_start = 0
        """Where the payload segment starts in the bytes `run` returns."""
        self.payload_ranges: list[tuple[int, int]] = []
        """Each global's payload: (offset from the segment start, length)."""

    # -- IR walk ---------------------------------------------------------------

    def run(self) -> ProgramParts:
        func, w, b = self.func, self.writer, self.b
        global_slots: list[SlotSpec] = []
        global_index: dict[str, int] = {}
        for g in self.globals:
            name = g.sym_name.data
            if name in global_index:
                raise ProgramError(f"global @{name} is defined twice")
            kind = STATE if g.kind.data == "state" else CONSTANT
            type_ = slot_type(g.type, f"global @{name}")
            if type_.scalar or -1 in type_.shape:
                raise ProgramError(f"global @{name} must have a static tensor type, got {g.type}")
            global_index[name] = len(global_slots)
            global_slots.append(SlotSpec(kind, type_, name))

        block = func.body.block
        body = list(block.ops)
        terminator = body.pop() if body else None
        if not isinstance(terminator, ReturnOp):
            raise ProgramError(f"@{func.sym_name.data} must end with func.return")
        global_reads: dict[SSAValue, int] = {}
        for op in body:
            if not is_program_op(op.name):
                arith = ", ".join(n.removeprefix("arith.") for n in PROGRAM_ARITH_OPS)
                raise ProgramError(
                    f"cannot serialize '{op.name}'{_where(op)}: a program holds mlx ops, "
                    f"func.return and the arith ops {arith} on index/i64/i1 values"
                )
            if op.regions or op.successors:
                raise ProgramError(f"cannot serialize '{op.name}' with regions or successors")
            if op.name == WEIGHT_OP:
                ref = op.properties["global_name"]
                name = getattr(ref, "root_reference", StringAttr("")).data
                if name not in global_index:
                    raise ProgramError(f"'{op.name}' reads @{name}, which is no mlx.global")
                global_reads[op.results[0]] = global_index[name]
        # A weight read is its global's constant slot: no instruction runs for it.
        body = [op for op in body if op.name != WEIGHT_OP]

        arguments = [(arg, arg.name_hint) for arg in block.args]
        alloc = allocate(global_slots, arguments, body, list(terminator.operands), global_reads)

        # Payloads first: the segment is laid out in global order.
        global_records: list[tuple[str, str, int, int, int, int]] = []
        for done, g in enumerate(self.globals):
            report("serialize: weights", done, len(self.globals))
            global_records.append(self._global_payload(g, global_index[g.sym_name.data]))

        op_names = sorted({op.name for op in body})
        op_index = {name: i for i, name in enumerate(op_names)}
        instructions: list[int] = []
        for i, op in enumerate(body):
            instructions.append(
                self._instruction(
                    op_index[op.name],
                    [alloc.slot_of[v] for v in op.operands],
                    [alloc.slot_of[v] for v in op.results],
                    op,
                    alloc.free[i],
                )
            )

        slots = [self._slot(spec) for spec in alloc.slots]
        globals_vec: list[int] = []
        for name, kind, slot, offset, length, ranks in global_records:
            name_off = w.string(name)
            Global.Start(b)
            Global.AddName(b, name_off)
            Global.AddKind(b, _GLOBAL_KINDS[kind])
            Global.AddSlot(b, slot)
            Global.AddOffset(b, offset)
            Global.AddLength(b, length)
            if ranks > 1:
                Global.AddRanks(b, ranks)
            globals_vec.append(Global.End(b))
        state_vec: list[int] = []
        for name, kind, slot, _, _, _ in global_records:
            if kind != "state":
                continue
            name_off = w.string(name)
            StateEntry.Start(b)
            StateEntry.AddName(b, name_off)
            StateEntry.AddSlot(b, slot)
            state_vec.append(StateEntry.End(b))
        ranges = self._symbol_ranges()
        input_dims = self._input_dims(len(block.args))
        signature = self._signature(len(block.args), len(terminator.operands))

        fields: _ProgramFields = {
            "name": w.string(func.sym_name.data),
            "slots": w.offsets(slots),
            "op_names": w.strings(op_names),
            "instructions": w.offsets(instructions),
            "inputs": w.uints([alloc.slot_of[a] for a in block.args]),
            "outputs": w.uints([alloc.slot_of[v] for v in terminator.operands]),
            "globals": w.offsets(globals_vec),
            "state": w.offsets(state_vec),
            "symbol_ranges": w.offsets(ranges),
            "input_dims": w.offsets(input_dims),
            "signature": None if signature is None else w.string(signature),
        }
        Program.Start(b)
        Program.AddVersion(b, SCHEMA_VERSION)
        Program.AddName(b, fields["name"])
        Program.AddSlots(b, fields["slots"])
        Program.AddOpNames(b, fields["op_names"])
        Program.AddInstructions(b, fields["instructions"])
        Program.AddInputs(b, fields["inputs"])
        Program.AddOutputs(b, fields["outputs"])
        Program.AddGlobals(b, fields["globals"])
        Program.AddState(b, fields["state"])
        Program.AddSymbolRanges(b, fields["symbol_ranges"])
        Program.AddInputDims(b, fields["input_dims"])
        Program.AddSegmentSize(b, w.segment_size)
        if fields["signature"] is not None:
            Program.AddSignature(b, fields["signature"])
        program = Program.End(b)
        b.FinishSizePrefixed(program, FILE_IDENTIFIER.encode())
        flatbuffer = b.Output()
        padding = bytes(-len(flatbuffer) % PAYLOAD_ALIGNMENT)
        self.segment_start = len(flatbuffer) + len(padding)
        self.payload_ranges = [(offset, length) for _, _, _, offset, length, _ in global_records]
        return ProgramParts(bytes(flatbuffer) + padding, tuple(w.segment), frozenset(w.global_chunks))

    # -- pieces ------------------------------------------------------------------

    def _slot(self, spec: SlotSpec) -> int:
        w, b = self.writer, self.b
        shape = None if spec.type.scalar else w.longs(list(spec.type.shape))
        name = None if spec.name is None else w.string(spec.name)
        Slot.Start(b)
        Slot.AddKind(b, _SLOT_KINDS[spec.kind])
        Slot.AddDtype(b, spec.type.dtype.code)
        if spec.type.scalar:
            Slot.AddScalar(b, True)
        if shape is not None:
            Slot.AddShape(b, shape)
        if name is not None:
            Slot.AddName(b, name)
        return Slot.End(b)

    def _instruction(
        self, op_index: int, operands: list[int], results: list[int], op: Operation, free: list[int]
    ) -> int:
        w, b = self.writer, self.b
        props = encode_dict(w, op.properties)
        attrs = encode_dict(w, op.attributes) if op.attributes else None
        location = self._location(op.location)
        names = [r.name_hint or "" for r in op.results]
        result_names = w.strings(names) if any(names) else None
        operand_vec = w.uints(operands)
        result_vec = w.uints(results)
        free_vec = w.uints(free) if free else None
        Instruction.Start(b)
        Instruction.AddOp(b, op_index)
        Instruction.AddOperands(b, operand_vec)
        Instruction.AddResults(b, result_vec)
        Instruction.AddProperties(b, props)
        if attrs is not None:
            Instruction.AddAttributes(b, attrs)
        if free_vec is not None:
            Instruction.AddFree(b, free_vec)
        if location is not None:
            Instruction.AddLocation(b, location)
        if result_names is not None:
            Instruction.AddResultNames(b, result_names)
        return Instruction.End(b)

    def _location(self, loc: Attribute) -> int | None:
        source = source_location(loc)
        if source is None:
            return None
        line, column = source.line.data, source.column.data
        if not (0 <= line < 2**32 and 0 <= column < 2**32):
            return None
        file = self.writer.string(source.filename.data)
        Location.Start(self.b)
        Location.AddFile(self.b, file)
        Location.AddLine(self.b, line)
        Location.AddColumn(self.b, column)
        return Location.End(self.b)

    def _global_payload(self, g: GlobalOp, slot: int) -> tuple[str, str, int, int, int, int]:
        name = g.sym_name.data
        type_ = g.value_type
        dtype = dtypes.of_ir(type_.get_element_type())
        assert dtype is not None
        shape = tuple(type_.get_shape())
        ranks = g.ranks.value.data if g.ranks is not None else 1
        if name in self.payloads and isinstance(g.value, DenseIntOrFPElementsAttr):
            raise ProgramError(
                f"global @{name} has a value in the IR and a payload given beside it: "
                "give one"
            )
        if name in self.payloads:
            what = f"payload of @{name}"
            try:
                data = element_bytes(checked_array(self.payloads[name], dtype, shape, what), dtype)
            except WeightError as error:
                raise ProgramError(str(error)) from None
        elif isinstance(g.value, DenseIntOrFPElementsAttr):
            data = dense_data(g.value, dtype)
        else:
            raise ProgramError(
                f"global @{name} has no payload: give it a dense<...> value in the IR "
                "or pass its payload to serialize"
            )
        offset = self.writer.payload(data, of_global=True)
        return name, g.kind.data, slot, offset, len(data), ranks

    def _symbol_ranges(self) -> list[int]:
        attr = self.func.attributes.get(SYMBOL_RANGES_ATTR)
        if attr is None:
            return []
        if not isinstance(attr, DictionaryAttr):
            raise ProgramError(f"{SYMBOL_RANGES_ATTR} must be a dictionary, got {attr}")
        out: list[int] = []
        for symbol in sorted(attr.data):
            bounds = attr.data[symbol]
            values = bounds.get_values() if isinstance(bounds, DenseArrayBase) else ()
            if len(values) != 2:
                raise ProgramError(
                    f"{SYMBOL_RANGES_ATTR}: the range of '{symbol}' must be array<i64: lo, hi>"
                )
            name = self.writer.string(symbol)
            SymbolRange.Start(self.b)
            SymbolRange.AddSymbol(self.b, name)
            SymbolRange.AddLo(self.b, int(values[0]))
            SymbolRange.AddHi(self.b, int(values[1]))
            out.append(SymbolRange.End(self.b))
        return out

    def _signature(self, num_inputs: int, num_outputs: int) -> str | None:
        """The function's `mlxir.signature` as the file's JSON text (validated against
        the function's input and output counts)."""
        attr = self.func.attributes.get(SIGNATURE_ATTR)
        if attr is None:
            return None
        try:
            return Signature.from_attr(attr, num_inputs, num_outputs).to_json()
        except ProgramError as error:
            raise ProgramError(f"@{self.func.sym_name.data} {SIGNATURE_ATTR}: {error}") from None

    def _input_dims(self, num_inputs: int) -> list[int]:
        attr = self.func.attributes.get(INPUT_DIMS_ATTR)
        if attr is None:
            return []
        if not _is_array(attr) or len(attr.data) != num_inputs:
            raise ProgramError(
                f"{INPUT_DIMS_ATTR} must be an array with one entry per input ({num_inputs})"
            )
        out: list[int] = []
        for i, dims in enumerate(attr.data):
            if not _is_array(dims) or not all(isinstance(d, StringAttr) for d in dims.data):
                raise ProgramError(f"{INPUT_DIMS_ATTR}[{i}] must be an array of strings")
            vec = self.writer.strings([cast(StringAttr, d).data for d in dims.data])
            InputDims.Start(self.b)
            InputDims.AddDims(self.b, vec)
            out.append(InputDims.End(self.b))
        return out


def _is_array(attr: Attribute) -> TypeGuard[ArrayAttr[Attribute]]:
    """`isinstance(attr, ArrayAttr)`, typed (isinstance narrows to `ArrayAttr[Unknown]`)."""
    return isinstance(attr, ArrayAttr)


def _where(op: Operation) -> str:
    where = file_line_col(op.location)
    return f" (at {where})" if where else ""
