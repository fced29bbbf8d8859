"""Loading: a `.mlxfb` program's bytes validated (`read_program`: structure, bounds,
slots), its IR verified (every op's verifier, unless `verify=False`; once per machine: a
program whose key this machine recorded as verified is not rebuilt,
`codegen/verification.py`), its weights read into MLX through `mx.load`
(`runtime/payloads.py`), and its instruction list resolved once: every instruction
becomes a prepared kernel closure with its operand and result slots (`Step`), so a call
does no per-op lookup. The kernels come from the backend of the device MLX runs on at
load (`runtime/backend.py`). An instruction that only makes a view of constants (a
`linear` weight's `w.T`, `CONSTANT_VIEW_OPS`) runs then, once, and its result is kept as
a constant."""

from __future__ import annotations

import math
import mmap
import os
from collections.abc import Callable, Generator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, BinaryIO

import mlx.core as mx

from mlxir.codegen.errors import ProgramError
from mlxir.codegen.parts import ProgramParts
from mlxir.codegen.reader import Instruction, ProgramInfo, read_program
from mlxir.codegen.verification import is_verified, key_of, record_verified
from mlxir.evaluator import Kernel
from mlxir.evaluator.arrays import mx_dtype
from mlxir.runtime.backend import WEIGHT_PRODUCT_OPERAND, Backend
from mlxir.runtime.inputs import INT64_MAX, INT64_MIN
from mlxir.runtime.payloads import bind_payloads

MAX_DIM = 2**31 - 1
"""MLX's dims are 32-bit: a program whose slot declares a bigger dim cannot run."""



@dataclass(frozen=True)
class Expected:
    """What a step's result must be: an integer (`dtype is None`), or a tensor of
    `dtype` with `shape` (None for a dynamic dim)."""

    dtype: mx.Dtype | None
    shape: tuple[int | None, ...]
    description: str

    @property
    def static(self) -> tuple[int, ...] | None:
        """The shape when every dim is static."""
        return None if None in self.shape else tuple(d for d in self.shape if d is not None)

    @property
    def static_dims(self) -> tuple[tuple[int, int], ...]:
        """(axis, dim) of each static dim."""
        return tuple((axis, d) for axis, d in enumerate(self.shape) if d is not None)


CONSTANT_VIEW_OPS = frozenset({"mlx.transpose"})
"""Ops MLX computes as a view of their input: on constants, run once at load."""


@dataclass(frozen=True)
class Step:
    run: Kernel
    operands: tuple[int, ...]
    results: tuple[int, ...]
    free: tuple[int, ...]
    op: str
    location: str | None
    expected: tuple[Expected, ...] = ()
    """One per result, checked after the step runs (with `checks`)."""
    checks: tuple[Callable[[Any], bool], ...] = ()

    def where(self) -> str:
        return f"{self.op} ({self.location})" if self.location else self.op


class StateFrame:
    """The state a call reads (`call_state`) and the values it stores (`pending`): the
    kernels of `mlx.load_state` and `mlx.store_state` read and write them, and the
    executor sets them around each run."""

    def __init__(self) -> None:
        self.call_state: Mapping[str, Any] = {}
        self.pending: dict[str, Any] = {}

    def load_state(self, name: str) -> Kernel:
        def load(operands: Sequence[Any]) -> Sequence[Any]:
            return (self.pending.get(name, self.call_state[name]),)

        return load

    def store_state(self, name: str) -> Kernel:
        def store(operands: Sequence[Any]) -> Sequence[Any]:
            self.pending[name] = operands[0]
            return ()

        return store


def _rank_in(ranks: int) -> int:
    """This process's rank in the world group of `mx.distributed`, which must have
    `ranks` ranks: a program split over ranks runs only where its slices all run."""
    from mlxir.evaluator.distributed import world_group

    group = world_group()
    if group.size() != ranks:
        raise ProgramError(
            f"this program is split over {ranks} ranks (shard-tensor-parallel) but runs in "
            f"a group of {group.size()}: start it on {ranks} ranks (`mlxir run` or `mlxir "
            f"generate` with --tensor-parallel {ranks}, or `mlx.launch -n {ranks}`)"
        )
    return group.rank()


class LoadedProgram:
    """A program's validated bytes, its weights in MLX and its prepared steps."""

    def __init__(
        self,
        data: bytes | bytearray | memoryview | mmap.mmap | ProgramParts,
        *,
        verify: bool,
        backend: Backend,
        limit: int,
        file: BinaryIO | None = None,
    ):
        self.backend = backend
        self.limit = limit
        """No step may produce a tensor bigger than this many bytes."""
        self.in_mlx: list[tuple[int, int, int]] = []
        """(offset, length, slot) of the payloads `data` lacks, which MLX holds."""
        read_segment = None
        if isinstance(data, ProgramParts):
            skeleton, missing = data.skeleton()
            self.data: bytes | memoryview | mmap.mmap = skeleton
            read_segment = data.read_at
        else:
            try:
                view = memoryview(data)
            except TypeError:
                raise ProgramError(f"expected the program's bytes, got {type(data).__name__}") from None
            # Immutable bytes and read-only maps are used in place; a buffer the caller
            # may still write to is copied once, so the program cannot change under its views.
            self.data = data if isinstance(data, bytes) else view if view.readonly else bytes(view)
            missing = []
        self.info: ProgramInfo = read_program(self.data)
        info = self.info
        buffer = bytes_view(self.data)
        if verify:
            key = key_of(info, buffer)
            if not is_verified(key):
                from mlxir.codegen.deserializer import module_of

                module_of(info)
                record_verified(key)
        for slot in info.slots:
            if any(d is not None and d > MAX_DIM for d in slot.shape):
                raise ProgramError(
                    f"slot {slot.index}: shape {list(slot.shape)} has a dim over MLX's "
                    f"limit of {MAX_DIM}"
                )
        backend.loading()
        lacking = backend.what_it_lacks(info)
        if lacking is not None:
            raise lacking
        if info.ranks > 1:
            info = info.for_rank(_rank_in(info.ranks))
        payloads = bind_payloads(info, buffer, file.fileno() if file is not None else None, read_segment)
        slots = {self.info.segment_start + g.offset: g.slot for g in self.info.globals}
        self.in_mlx = [(offset, length, slots[offset]) for offset, length in missing]
        self.constants: dict[int, mx.array] = {
            slot: array for slot, array in payloads.items() if info.slots[slot].kind == "constant"
        }
        self.initial_state = {name: payloads[slot] for name, slot in info.state.items()}
        self.state_slots = dict(info.state)
        self.frame = StateFrame()
        self.steps: list[Step] = [self.prepare(instruction) for instruction in info.instructions]
        self.registers = len(info.slots)
        self.view_constants()
        self.whole_steps = self.steps
        """The steps before the backend cut any product by a weight (every product
        whole): for MLX's exporter (`runtime/mlxfn.py`), whose file must not carry
        this machine's BLAS block sizes. Their kernels are still the backend's (on
        the CPU, rope and attention composed in fewer nodes): the same values, which
        run on any device."""
        self.steps = [self._by_backend(step) for step in self.steps]
        self.spreads = any(backend.spreads(i.op) for i in info.instructions) or any(
            a is not b for a, b in zip(self.steps, self.whole_steps)
        )
        """Whether a step may run on the calling thread's own streams."""

    def prepare(self, instruction: Instruction) -> Step:
        op = instruction.op
        slots = self.info.slots
        what = f"instruction #{instruction.index} ({op})"
        run: Kernel
        if op == "mlx.weight":
            # The result slot is the global's constant slot, bound at load.
            run = no_op
        elif op in ("mlx.load_state", "mlx.store_state"):
            name = str(instruction.props["global_name"])
            state = slots[self.info.state[name]]
            value = slots[(instruction.results if op == "mlx.load_state" else instruction.operands)[0]]
            if (value.dtype, value.shape, value.scalar) != (state.dtype, state.shape, False):
                raise ProgramError(
                    f"{what}: @{name} is {describe_slot(state)}, the value is {describe_slot(value)}"
                )
            run = self.frame.load_state(name) if op == "mlx.load_state" else self.frame.store_state(name)
        else:
            factory = self.backend.kernel_factory(op)
            if factory is None:
                raise ProgramError(f"{what}: no kernel for '{op}'")
            result_dtypes = [
                None if slots[r].scalar else mx_dtype(slots[r].dtype) for r in instruction.results
            ]
            try:
                run = factory(instruction.kernel_props(), result_dtypes)
            except Exception as error:  # properties the kernel cannot take
                raise ProgramError(
                    f"{what}: invalid properties: {type(error).__name__}: {error}"
                ) from None
        expected = tuple(
            Expected(
                None if slots[r].scalar else mx_dtype(slots[r].dtype),
                slots[r].shape,
                describe_slot(slots[r]),
            )
            for r in instruction.results
        )
        if op == "mlx.weight":
            expected = ()
        return Step(
            run,
            instruction.operands,
            instruction.results,
            instruction.free,
            op,
            instruction.location,
            expected,
            tuple(checker(e, self.limit) for e in expected),
        )

    def view_constants(self) -> None:
        """Runs once, at load, every step in `CONSTANT_VIEW_OPS` of constants only (a
        `linear` weight's `w.T`), and keeps its result as a constant of a fresh slot:
        MLX makes it a view of the weight, so it costs no memory, and no call pays for
        it again. (Its slot gets a new number because the allocator may give the old
        one to other values before and after the step.)"""
        renamed: dict[int, int] = {}
        kept: list[Step] = []
        self.view_steps: list[Step] = []
        """The steps run at load, on the fresh slots of their results."""
        self.weight_views: set[int] = set()
        """The fresh slots that hold `w.T` of a matrix `w` the program loaded (so
        row-contiguous in MLX): what `weight_blocked_product` may cut into views."""
        loaded = set(self.constants)
        for step, instruction in zip(self.steps, self.info.instructions, strict=True):
            operands = tuple(renamed.get(s, s) for s in step.operands)
            if step.op in CONSTANT_VIEW_OPS and operands and all(s in self.constants for s in operands):
                swaps_a_loaded_matrix = (
                    operands[0] in loaded
                    and self.constants[operands[0]].ndim == 2
                    and instruction.props.get("axes") in ([1, 0], (1, 0))
                )
                try:
                    results = step.run([self.constants[s] for s in operands])
                except Exception as error:
                    raise ProgramError(f"{step.where()} failed at load: {error}") from None
                for index, (slot, value, valid) in enumerate(zip(step.results, results, step.checks, strict=True)):
                    if not valid(value):
                        raise ProgramError(mismatch(step, index, value, self.limit))
                    self.constants[self.registers] = value
                    renamed[slot] = self.registers
                    if swaps_a_loaded_matrix:
                        self.weight_views.add(self.registers)
                    self.registers += 1
                results = tuple(renamed[slot] for slot in step.results)
                self.view_steps.append(replace(step, operands=operands, results=results, free=()))
                continue
            free = tuple(s for s in step.free if s not in renamed)
            for slot in (*step.free, *step.results):  # the old slot now holds other values
                renamed.pop(slot, None)
            kept.append(replace(step, operands=operands, free=free))
        mx.eval(list(self.constants.values()))  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
        self.steps = kept
        self.outputs = [renamed.get(s, s) for s in self.info.outputs]

    def _by_backend(self, step: Step) -> Step:
        """`step` as the backend runs it when it is a product by a loaded matrix's
        transpose (a `linear` weight's `w.T`: `Backend.product_by_weight`)."""
        at = WEIGHT_PRODUCT_OPERAND.get(step.op)
        if at is None or len(step.operands) <= at or step.operands[at] not in self.weight_views:
            return step
        run = self.backend.product_by_weight(step.op, step.run, self.constants[step.operands[at]])
        return step if run is step.run else replace(step, run=run)

    def pieces(self) -> list[Any]:
        """The program's bytes in order: `data`, with the payloads it lacks taken from
        the arrays MLX holds (a program loaded from `ProgramParts`)."""
        data = memoryview(self.data)
        arrays = {**self.constants, **{self.state_slots[n]: a for n, a in self.initial_state.items()}}
        pieces: list[Any] = []
        position = 0
        for offset, length, slot in self.in_mlx:
            pieces += [data[position:offset], memoryview(arrays[slot]).cast("B")]  # pyright: ignore[reportArgumentType] (mx.array has the buffer protocol)
            position = offset + length
        return [*pieces, data[position:]]


def no_op(operands: Sequence[Any]) -> Sequence[Any]:
    return ()


def describe_slot(slot: Any) -> str:
    if slot.scalar:
        return f"an integer ({slot.dtype})"
    dims = ", ".join("?" if d is None else str(d) for d in slot.shape)
    return f"{slot.dtype}[{dims}]"


def checker(expected: Expected, limit: int) -> Callable[[Any], bool]:
    """A fast test that a step's result is what `expected` says (and not over `limit`
    bytes)."""
    dtype = expected.dtype
    if dtype is None:
        return lambda v: type(v) is not mx.array and isinstance(v, int) and INT64_MIN <= v <= INT64_MAX
    static = expected.static
    if static is not None:
        if math.prod(static) * dtype.size > limit:
            return lambda v: False
        return lambda v: type(v) is mx.array and v.dtype == dtype and v.shape == static
    rank, dims = len(expected.shape), expected.static_dims

    def check(v: Any) -> bool:
        if type(v) is not mx.array or v.dtype != dtype:
            return False
        shape = v.shape
        if len(shape) != rank or v.nbytes > limit:
            return False
        for axis, dim in dims:
            if shape[axis] != dim:
                return False
        return True

    return check


def mismatch(step: Step, index: int, value: Any, limit: int) -> str:
    """Why result `index` of `step` failed its check."""
    expected = step.expected[index]
    if type(value) is mx.array:
        got = f"{str(value.dtype).removeprefix('mlx.core.')}{list(value.shape)}"
        if value.nbytes > limit and expected.dtype == value.dtype:
            return (
                f"{step.where()} failed: its result {got} needs {value.nbytes} bytes, over the "
                f"limit of {limit} (Program.max_array_bytes)"
            )
    elif isinstance(value, int):
        got = f"the integer {value}" if -(10**30) < value < 10**30 else "an integer beyond int64"
    else:
        got = type(value).__name__
    return f"{step.where()} failed: gave {got}, the program declares {expected.description}"


@contextmanager
def opened(source: str | Path) -> Generator[tuple[bytes | mmap.mmap, BinaryIO], None, None]:
    """The file at `source`, mapped (`map_file`), and the open file the weights are
    read from; every failure to read it is a `ProgramError` naming it, as is any
    `ProgramError` raised inside the block."""
    try:
        file = Path(source).open("rb")
    except OSError as error:
        raise ProgramError(f"cannot read '{source}': {error.strerror}") from error
    # The weights are read from the file while the program loads; the mapping
    # (the FlatBuffer's views) outlives the file.
    with file:
        try:
            yield map_file(file), file
        except OSError as error:
            raise ProgramError(f"cannot read '{source}': {error.strerror}") from error
        except ProgramError as error:
            raise ProgramError(f"{source}: {error}") from None


def map_file(file: BinaryIO) -> bytes | mmap.mmap:
    """The file's bytes, mapped read-only (not read into memory: the FlatBuffer's pages
    are read where the reader looks, and the weights are read from the file into MLX,
    `runtime/payloads.py`). The file must not be truncated while the program lives,
    as for any mapped file."""
    if os.fstat(file.fileno()).st_size == 0:
        return b""  # an empty file cannot be mapped (and is no program)
    return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def bytes_view(data: bytes | memoryview | mmap.mmap) -> memoryview:
    view = memoryview(data)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def is_pte(data: Any) -> bool:
    """ExecuTorch's FlatBuffer identifier (`ET` and a two-digit schema version)."""
    try:
        head = bytes(memoryview(data)[4:8])
    except TypeError:
        return False
    return len(head) == 4 and head[:2] == b"ET" and head[2:].isdigit()
