"""`read_program`: a validated, immutable view of a `.mlxfb` program for the runtime.

Loading untrusted bytes either returns a `ProgramInfo` whose every slot index,
op name, property set, payload view and def-use order has been checked, or raises
`ProgramError`; it never reads outside the buffer and its work is bounded by the
buffer's size. Payloads are checked, not read: `payloads` says where each lies, and
`constants` (NumPy views into the buffer, no copy) and a dense property's NumPy array
are made on first use, so reading a program imports no NumPy.

What the runtime may rely on after `read_program`:

- `slots[i].index == i`; every operand, result, free, input and output id is a slot.
- Instructions run in order; each operand slot holds a value when it is read (an
  input, a global, or a result not freed since); a result slot is a temporary that
  holds no live value (except `mlx.weight`, whose result is its global's constant
  slot); `free` lists temporaries holding a live value, to drop after the
  instruction; outputs hold values at the end.
- Each instruction names a known op, has the operand and result counts and the
  property names its IRDL definition allows, and `mlx.weight`/`mlx.load_state`/
  `mlx.store_state` name an existing global of the right kind.
- `payloads[slot]` (and `constants[slot]`) exists for every constant and state slot
  (a state's initial value), with the slot's static shape; bfloat16 payloads are
  `uint16` raw bits.

Types are not checked here (an `add` of a tensor and an index reads fine): that is
`deserialize`'s job, which rebuilds and verifies the IR.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from functools import cached_property
from types import MappingProxyType
from typing import TYPE_CHECKING, Any

from mlxir.codegen.attributes import (
    PAYLOAD_ALIGNMENT,
    AttrRecord,
    Payload,
    PropValue,
    check_payload,
    decode_dict,
)
from mlxir.codegen.errors import ProgramError
from mlxir.codegen.fb.layout import ENUMS
from mlxir.codegen.flatbuffer import Table, index_list, root
from mlxir.codegen.ops import (
    FILE_IDENTIFIER,
    GLOBAL_ACCESS_OPS,
    SCHEMA_VERSION,
    WEIGHT_OP,
    check_instruction,
    program_op_rule,
)
from mlxir.codegen.signature import Signature
from mlxir.support import dtypes

if TYPE_CHECKING:
    import numpy as np

SLOT_KINDS: dict[int, str] = {v: k.lower() for k, v in ENUMS["SlotKind"][1].items()}
"""Slot kinds by enum value: "temporary", "input", "constant", "state"."""
GLOBAL_KINDS: dict[int, str] = {v: k.lower() for k, v in ENUMS["GlobalKind"][1].items()}
"""Global kinds by enum value: "parameter", "buffer", "constant", "state"."""

HEADER_SIZE = 12
"""Size prefix (4), root offset (4) and file identifier (4)."""


@dataclass(frozen=True, slots=True)
class SlotInfo:
    """One slot (register)."""

    index: int
    kind: str
    """ "temporary", "input", "constant" or "state"."""
    dtype: str
    """ "float32", "bfloat16", "bool", "int64", "uint8", ... or "index"."""
    shape: tuple[int | None, ...]
    """None for a dynamic dim; () for a scalar."""
    name: str | None
    """A global's or an input's name."""
    scalar: bool = False
    """True for an integer value slot (an `index`, `i64` or `i1` from `mlx.dim` and
    `arith`): the runtime holds a Python int there, not an array."""


class PropValues(Mapping[str, PropValue]):
    """Decoded attributes' runtime values by name (`AttrRecord.python`): a dense
    value's read-only NumPy array (`Payload.python`) is made on first read, so a
    runtime that never reads one never imports NumPy."""

    __slots__ = ("_records", "_values")

    def __init__(self, records: Mapping[str, AttrRecord]):
        self._records = records
        self._values: dict[str, PropValue] = {}

    def __getitem__(self, name: str) -> PropValue:
        if name not in self._values:
            value = self._records[name].python
            self._values[name] = value.python() if isinstance(value, Payload) else value
        return self._values[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._records)

    def __len__(self) -> int:
        return len(self._records)

    def __repr__(self) -> str:
        return repr(dict(self))


@dataclass(frozen=True, slots=True)
class Instruction:
    """One op to run."""

    index: int
    op: str
    """The op name, e.g. "mlx.add", "arith.addi"."""
    operands: tuple[int, ...]
    results: tuple[int, ...]
    props: Mapping[str, PropValue]
    """The op's properties as plain values (see `codegen/attributes.py`)."""
    location: str | None
    """ "file:line:col" of the source, when known."""
    free: tuple[int, ...] = ()
    """Temporaries whose value is dead after this instruction."""
    result_names: tuple[str, ...] = ()
    """SSA name hints of the results ("" for none), or () when none has one."""
    attributes: Mapping[str, PropValue] = field(default_factory=lambda: MappingProxyType({}))
    """Discardable attributes, rarely of interest to a runtime."""
    typed_props: Mapping[str, AttrRecord] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )
    """The properties with their encoding and element types (for `deserialize`)."""
    typed_attributes: Mapping[str, AttrRecord] = field(
        default_factory=lambda: MappingProxyType({}), repr=False
    )
    source: tuple[str, int, int] | None = field(default=None, repr=False)
    """(file, line, column) of `location`."""

    def kernel_props(self) -> dict[str, object]:
        """`props` as the runtime's kernels take them: the same values, a dense one as
        an `mx.array` of its NumPy value's dtype (bfloat16 widened to float32, exactly),
        read from the buffer without NumPy."""
        import mlx.core as mx

        values: dict[str, object] = {}
        for name in self.props:
            record = self.typed_props.get(name)
            if record is not None and isinstance(record.python, Payload):
                array = record.python.mx()
                values[name] = array.astype(mx.float32) if record.dtype == "bfloat16" else array
            else:
                values[name] = self.props[name]
        return values


@dataclass(frozen=True, slots=True)
class GlobalInfo:
    """A module-level `mlx.global`."""

    name: str
    kind: str
    """ "parameter", "buffer", "constant" or "state"."""
    slot: int
    offset: int = 0
    """Where its payload starts, in bytes from the payload segment's start."""
    length: int = 0
    """The payload's size in bytes."""
    ranks: int = 1
    """A global split over ranks holds this many slices of its slot's shape, one after
    another; each rank reads its own (`ProgramInfo.for_rank`)."""


@dataclass(frozen=True)
class ProgramInfo:
    """A validated program. Everything is immutable; arrays are read-only views."""

    version: int
    name: str
    """The function's name (`forward`)."""
    slots: tuple[SlotInfo, ...]
    instructions: tuple[Instruction, ...]
    inputs: tuple[int, ...]
    """Input slots in signature order."""
    outputs: tuple[int, ...]
    """Output slots in signature order (a slot may repeat, or be an input or global)."""
    state: Mapping[str, int]
    """State name -> its slot."""
    payloads: Mapping[int, Payload]
    """Slot -> payload: where every constant slot's value and every state slot's
    initial value lies in the program's buffer (checked, not read)."""
    globals: tuple[GlobalInfo, ...]
    """Every global, in module order."""
    symbol_ranges: Mapping[str, tuple[int, int]]
    """Symbol -> (lo, hi) from `mlxir.symbol_ranges`; hi = -1: unbounded."""
    input_dims: tuple[tuple[str, ...], ...]
    """Per input, per dim: "" if static, else its symbol expression (`mlxir.input_dims`);
    () when the program has none."""
    op_names: tuple[str, ...]
    """The distinct ops of the program, sorted."""
    signature: Signature | None = None
    """How the exported module's arguments and results nest around `inputs` and
    `outputs`; None for a program called flat."""
    segment_start: int = 0
    """Where the payload segment starts in the program's bytes (the FlatBuffer and its
    padding come before)."""

    @property
    def ranks(self) -> int:
        """How many ranks the program is split over (`shard-tensor-parallel`): 1 when
        no global is split."""
        return max((g.ranks for g in self.globals), default=1)

    def for_rank(self, rank: int) -> ProgramInfo:
        """The program as rank `rank` of `ranks` sees it: each split global's payload
        is its own slice of the stored slices."""
        if not 0 <= rank < self.ranks:
            raise ProgramError(f"rank {rank} is not one of the program's {self.ranks} ranks")
        globals_: list[GlobalInfo] = []
        payloads = dict(self.payloads)
        for g in self.globals:
            if g.ranks > 1:
                length = g.length // g.ranks
                g = replace(g, offset=g.offset + rank * length, length=length, ranks=1)
                whole = payloads[g.slot]
                payloads[g.slot] = replace(whole, offset=g.offset, length=length, shape=whole.shape[1:])
            globals_.append(g)
        return replace(self, globals=tuple(globals_), payloads=MappingProxyType(payloads))

    @cached_property
    def constants(self) -> Mapping[int, np.ndarray]:
        """`payloads` as read-only NumPy views into the program's buffer (made, and
        NumPy imported, on first use)."""
        return MappingProxyType({slot: payload.numpy() for slot, payload in self.payloads.items()})

    def global_slot(self, name: str) -> int:
        """The slot of global `name`."""
        for g in self.globals:
            if g.name == name:
                return g.slot
        raise KeyError(name)


def read_program(data: bytes | bytearray | memoryview | Any) -> ProgramInfo:
    """Validates `data` (anything with the buffer protocol: bytes, mmap, ...) as a
    `.mlxfb` program and returns its view. Raises `ProgramError`, and nothing else,
    when it is not a valid program."""
    try:
        return _read(data)
    except ProgramError:
        raise
    except (
        IndexError,
        KeyError,
        struct.error,
        UnicodeDecodeError,
        ValueError,
        OverflowError,
    ) as error:
        raise ProgramError(f"malformed program: {type(error).__name__}: {error}") from error


def _view(data: Any) -> memoryview:
    try:
        view = memoryview(data)
    except TypeError:
        raise ProgramError(f"expected the program's bytes, got {type(data).__name__}") from None
    if not view.c_contiguous:
        raise ProgramError("the program's buffer is not contiguous")
    return view.cast("B") if view.format != "B" or view.ndim != 1 else view


def _read(data: Any) -> ProgramInfo:
    mv = _view(data)
    size = len(mv)
    if size < HEADER_SIZE:
        raise ProgramError(f"a program of {size} bytes is too short to be an .mlxfb program")
    magic = bytes(mv[8:12])
    if magic != FILE_IDENTIFIER.encode():
        raise ProgramError(
            f"not an .mlxfb program: the file identifier is {magic!r}, expected "
            f"{FILE_IDENTIFIER.encode()!r}"
        )
    fb_size = struct.unpack_from("<I", mv, 0)[0]
    fb_end = 4 + fb_size
    if fb_end > size:
        raise ProgramError(
            f"truncated program: the FlatBuffer needs {fb_end} bytes, the file has {size}"
        )
    _buf, program = root(mv[:fb_end], "Program", 4, "program")
    version = program.int("version")
    if version != SCHEMA_VERSION:
        raise ProgramError(
            f"program schema version {version} is not supported (this mlxir reads "
            f"version {SCHEMA_VERSION})"
        )
    segment_start = -fb_end % PAYLOAD_ALIGNMENT + fb_end
    segment_size = program.int("segment_size")
    if size != segment_start + segment_size:
        raise ProgramError(
            f"the program should be {segment_start + segment_size} bytes ({segment_start} "
            f"bytes of FlatBuffer and padding, {segment_size} of payload) but is {size}: "
            "truncated or with trailing bytes"
        )
    return _Reader(program, mv[segment_start:]).read(version, segment_start)


class _Reader:
    def __init__(self, program: Table, segment: memoryview):
        self.program = program
        self.segment = segment

    def read(self, version: int, segment_start: int) -> ProgramInfo:
        p = self.program
        slots = self._slots()
        nslots = len(slots)
        globals_, payloads = self._globals(slots)
        state = self._state(slots, globals_)
        bound = {s.index for s in slots if s.kind in ("constant", "state")}
        unbound = sorted(bound - set(payloads))
        if unbound:
            raise ProgramError(f"slot {unbound[0]} is a {slots[unbound[0]].kind} slot of no global")

        inputs = index_list(p.ints("inputs"), nslots, "program.inputs")
        input_slots = [s.index for s in slots if s.kind == "input"]
        if sorted(inputs) != input_slots:
            raise ProgramError(
                f"program.inputs {list(inputs)} must list each input slot {input_slots} once"
            )
        outputs = index_list(p.ints("outputs"), nslots, "program.outputs")

        op_names = p.strings("op_names")
        for i, name in enumerate(op_names):
            try:
                program_op_rule(name)
            except ProgramError as error:
                raise ProgramError(f"program.op_names[{i}]: {error}") from None

        defined = set(inputs) | bound
        by_name = {g.name: g for g in globals_}
        instructions = tuple(
            self._instruction(i, t, op_names, slots, defined, by_name)
            for i, t in enumerate(p.tables("instructions"))
        )
        for i, slot in enumerate(outputs):
            if slot not in defined:
                raise ProgramError(f"program.outputs[{i}]: slot {slot} holds no value at the end")

        return ProgramInfo(
            version=version,
            name=p.string("name") or "",
            slots=slots,
            instructions=instructions,
            inputs=inputs,
            outputs=outputs,
            state=MappingProxyType(state),
            payloads=MappingProxyType(payloads),
            globals=globals_,
            symbol_ranges=MappingProxyType(self._symbol_ranges()),
            input_dims=self._input_dims(inputs, slots),
            op_names=op_names,
            signature=self._signature(len(inputs), len(outputs)),
            segment_start=segment_start,
        )

    # -- tables ------------------------------------------------------------------

    def _slots(self) -> tuple[SlotInfo, ...]:
        slots: list[SlotInfo] = []
        for i, t in enumerate(self.program.tables("slots")):
            what = f"slot {i}"
            kind = SLOT_KINDS[t.int("kind")]
            dtype = dtypes.BY_CODE.get(t.int("dtype"))
            if dtype is None:
                raise ProgramError(f"{what}: invalid element type {t.int('dtype')}")
            scalar = bool(t.scalar("scalar"))
            shape = t.ints("shape")
            if scalar:
                if dtype.name not in dtypes.SCALAR_DTYPES or shape:
                    raise ProgramError(
                        f"{what}: a scalar slot holds index, int64 or bool and has no shape"
                    )
                if kind not in ("temporary", "input"):
                    raise ProgramError(f"{what}: a scalar slot cannot be {kind}")
            elif dtype.name not in dtypes.TENSOR_DTYPES:
                raise ProgramError(f"{what}: a tensor slot cannot hold {dtype.name}")
            if any(d < -1 for d in shape):
                raise ProgramError(f"{what}: invalid shape {list(shape)}")
            slots.append(
                SlotInfo(
                    index=i,
                    kind=kind,
                    dtype=dtype.name,
                    shape=tuple(None if d == -1 else d for d in shape),
                    name=t.string("name"),
                    scalar=scalar,
                )
            )
        return tuple(slots)

    def _globals(
        self, slots: tuple[SlotInfo, ...]
    ) -> tuple[tuple[GlobalInfo, ...], dict[int, Payload]]:
        globals_: list[GlobalInfo] = []
        payloads: dict[int, Payload] = {}
        names: set[str] = set()
        for i, t in enumerate(self.program.tables("globals")):
            name = t.string("name") or ""
            what = f"global @{name}"
            if name in names:
                raise ProgramError(f"{what} is defined twice")
            names.add(name)
            kind = GLOBAL_KINDS[t.int("kind")]
            slot = index_list([t.int("slot")], len(slots), f"program.globals[{i}].slot")[0]
            info = slots[slot]
            expected = "state" if kind == "state" else "constant"
            if info.kind != expected:
                raise ProgramError(
                    f"{what}: a {kind} global needs a {expected} slot, not a {info.kind} one"
                )
            if slot in payloads:
                raise ProgramError(f"{what}: slot {slot} already belongs to another global")
            if None in info.shape:
                raise ProgramError(f"{what}: a global's slot must have a static shape")
            shape = tuple(d for d in info.shape if d is not None)
            offset, length = t.int("offset"), t.int("length")
            ranks = max(t.int("ranks"), 1)
            if ranks > 1 and kind == "state":
                raise ProgramError(f"{what}: mutable state cannot be split over ranks")
            payloads[slot] = check_payload(
                self.segment,
                offset,
                length,
                dtypes.BY_NAME[info.dtype],
                (ranks, *shape) if ranks > 1 else shape,
                what,
            )
            globals_.append(GlobalInfo(name, kind, slot, offset, length, ranks))
        return tuple(globals_), payloads

    def _state(
        self, slots: tuple[SlotInfo, ...], globals_: tuple[GlobalInfo, ...]
    ) -> dict[str, int]:
        state: dict[str, int] = {}
        for i, t in enumerate(self.program.tables("state")):
            name = t.string("name") or ""
            state[name] = index_list([t.int("slot")], len(slots), f"program.state[{i}].slot")[0]
        expected = {g.name: g.slot for g in globals_ if g.kind == "state"}
        if state != expected:
            raise ProgramError(f"program.state {state} does not match the state globals {expected}")
        return state

    def _instruction(
        self,
        i: int,
        t: Table,
        op_names: tuple[str, ...],
        slots: tuple[SlotInfo, ...],
        defined: set[int],
        by_name: Mapping[str, GlobalInfo],
    ) -> Instruction:
        what = f"instruction #{i}"
        op_index = t.int("op")
        if op_index >= len(op_names):
            raise ProgramError(f"{what}: op index {op_index} is out of range ({len(op_names)} ops)")
        op = op_names[op_index]
        what = f"instruction #{i} ({op})"
        nslots = len(slots)
        operands = index_list(t.ints("operands"), nslots, f"{what} operands")
        results = index_list(t.ints("results"), nslots, f"{what} results")
        props = decode_dict(t.tables("properties"), self.segment, f"{what} properties")
        attrs = decode_dict(t.tables("attributes"), self.segment, f"{what} attributes")
        check_instruction(program_op_rule(op), len(operands), len(results), props, attrs, what)

        for slot in operands:
            if slot not in defined:
                raise ProgramError(f"{what} reads slot {slot}, which holds no value there")
        bound_result: int | None = None
        if op in GLOBAL_ACCESS_OPS:
            ref = props.get("global_name")
            if ref is None or ref.kind != "SymbolValue" or len(ref.value) != 1:
                raise ProgramError(f"{what}: global_name must name a global")
            name = ref.python
            target = by_name.get(name)
            if target is None:
                raise ProgramError(f"{what}: there is no global @{name}")
            if (target.kind == "state") != GLOBAL_ACCESS_OPS[op]:
                raise ProgramError(f"{what}: @{name} is a {target.kind} global")
            if op == WEIGHT_OP:
                if results != (target.slot,):
                    raise ProgramError(f"{what}: the result must be @{name}'s slot {target.slot}")
                bound_result = target.slot
        if len(set(results)) != len(results):
            raise ProgramError(f"{what}: results {list(results)} repeat a slot")
        for slot in results:
            if slot == bound_result:
                continue
            if slots[slot].kind != "temporary":
                raise ProgramError(f"{what} writes slot {slot}, a {slots[slot].kind} slot")
            if slot in defined:
                raise ProgramError(f"{what} overwrites slot {slot}, which still holds a live value")
            defined.add(slot)

        free = index_list(t.ints("free"), nslots, f"{what} free")
        for slot in free:
            if slots[slot].kind != "temporary" or slot not in defined:
                raise ProgramError(f"{what} frees slot {slot}, which holds no temporary value")
            defined.discard(slot)

        location = source = None
        loc = t.table("location")
        if loc is not None:
            source = (loc.string("file") or "", loc.int("line"), loc.int("column"))
            location = f"{source[0]}:{source[1]}:{source[2]}"
        names = t.strings("result_names")
        if names and len(names) != len(results):
            raise ProgramError(f"{what}: {len(names)} result names for {len(results)} results")
        return Instruction(
            index=i,
            op=op,
            operands=operands,
            results=results,
            props=PropValues(MappingProxyType(props)),
            location=location,
            free=free,
            result_names=names,
            attributes=PropValues(MappingProxyType(attrs)),
            typed_props=MappingProxyType(props),
            typed_attributes=MappingProxyType(attrs),
            source=source,
        )

    def _signature(self, num_inputs: int, num_outputs: int) -> Signature | None:
        text = self.program.string("signature")
        if text is None:
            return None
        return Signature.from_json(text, num_inputs, num_outputs)

    def _symbol_ranges(self) -> dict[str, tuple[int, int]]:
        ranges: dict[str, tuple[int, int]] = {}
        previous = None
        for t in self.program.tables("symbol_ranges"):
            symbol = t.string("symbol") or ""
            if previous is not None and symbol <= previous:
                raise ProgramError(f"program.symbol_ranges: '{symbol}' is out of order or repeated")
            ranges[symbol] = (t.int("lo"), t.int("hi"))
            previous = symbol
        return ranges

    def _input_dims(
        self, inputs: tuple[int, ...], slots: tuple[SlotInfo, ...]
    ) -> tuple[tuple[str, ...], ...]:
        tables = self.program.tables("input_dims")
        if not tables:
            return ()
        if len(tables) != len(inputs):
            raise ProgramError(
                f"program.input_dims has {len(tables)} entries for {len(inputs)} inputs"
            )
        dims = tuple(t.strings("dims") for t in tables)
        for i, (slot, entry) in enumerate(zip(inputs, dims, strict=True)):
            if len(entry) != len(slots[slot].shape):
                raise ProgramError(
                    f"program.input_dims[{i}] has {len(entry)} dims, the input has rank "
                    f"{len(slots[slot].shape)}"
                )
        return dims
