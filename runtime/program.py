"""The program runtime: `load(path_or_bytes) -> Program`, and `program(*args, **kwargs)`.

A program with the exported signature (`codegen/signature.py`, written by the importer)
is called like the module it came from: `runtime/signature.py` flattens the nested
arguments into the program's inputs (an `InputError` names the path of a mismatch) and
nests the outputs into the exported structure. `call_flat(*inputs)` takes the flat
inputs in order and returns a flat tuple (the LLM helper, ExecuTorch delegates and
`mlxir run` call it so); a program without a signature is called flat.

Loading validates the `.mlxfb` (`read_program`: structure, bounds, slots), verifies its
IR (every op's verifier, unless `verify=False`; once per machine: a program whose key
this machine recorded as verified is not rebuilt, `codegen/verification.py`), reads
the weights into MLX through `mx.load` (`runtime/payloads.py`), and resolves the
instruction list once: every instruction becomes a prepared kernel closure with its
operand and result slots, so a call does no per-op lookup. An instruction that only
makes a view of constants (a `linear` weight's `w.T`, `CONSTANT_VIEW_OPS`) runs then,
once, and its result is kept as a constant. A program compiled in memory
(`mlxir.compile`) is loaded from the serializer's pieces (`codegen/parts.py`): its
weights go from the arrays they were compiled from straight into MLX, and
`to_bytes`/`save` write them back from MLX. A call:

1. checks the inputs (count, kind, dtype, rank, static dims, the dynamic dims'
   recorded ranges and the relations between them) and names the input at fault;
2. runs the prepared steps over a register file of slots, checking that each result
   is what the program declares for its slot (a tensor of the slot's dtype, rank and
   static dims, at most `max_array_bytes` big; an integer inside int64), so a program
   that lies about its types fails with the op named instead of feeding MLX arrays
   it never agreed to (or asking it for more memory than exists, which MLX answers
   with a crash). Every result's type follows from the input signature alone, so
   once a signature's call passed the checks, later calls with it skip them;
3. evaluates the outputs and the new state with one `mx.eval`;
4. commits the new state only then, so a call that fails leaves the state as it was.

Native execution (`compile=`, on `Program`, `load` and `mlxir.compile`): where input
shapes repeat, the same steps run as one `mx.compile`d function, traced once per
input signature (shapes, dtypes and integer inputs) and kept in a bounded LRU
(`max_traces`). The trace runs step 2's checks, so they are paid once per signature,
and a program that lies still fails with the op named; MLX then runs the traced graph
without Python in the loop and fuses elementwise chains. Outputs are identical either
way (tested). `compile=True` traces every signature on its first call, `False` never,
and `"auto"` (the default) once a signature has run `auto_compile_after` times in a
row, so neither a one-off call nor shapes that change at every call (a growing KV
cache) pay for a trace. A program qualifies when all its outputs are
tensors (`native_unavailable` says why one does not). On MLX's CPU backend each new
fused kernel is built by the system C++ compiler the first time it is met (about
1 s each, measured here; cached on disk under `/tmp/mlx` for the next processes).

Failures: a program that cannot be loaded raises `ProgramError`; a call with wrong
inputs raises `InputError` (naming the input); an op that fails raises `RuntimeError`
whose message starts with the op's name and source location
(`mlx.matmul (model.py:12:8) failed: ...`).

Inputs may be torch tensors, numpy arrays or `mx.array`s (and ints for SymInt inputs);
outputs come back as the kind of the first tensor input (`mx.array` if none). Input
names are the signature's paths (`past_kv[0]`, `extras['u']`).

Threading: a `Program` may be called from several threads. Calls on one program are
serialized by a lock (the register file and the state are per program), so concurrent
calls give the results of some serial order; use one `Program` per thread (`load` the
same bytes again) for calls that run in parallel.

Out-of-range gather/scatter indices are clamped into bounds (`runtime/kernels.py`).
"""

from __future__ import annotations

import ast
import math
import mmap
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO, Literal, TypeAlias

import mlx.core as mx

from mlxir.codegen.errors import BackendError, ProgramError
from mlxir.codegen.parts import ProgramParts
from mlxir.codegen.program import ProgramInfo, read_program
from mlxir.codegen.verification import is_verified, key_of, record_verified
from mlxir.runtime.dtypes import (
    is_numpy_array,
    is_numpy_integer,
    mx_dtype,
    to_mx,
    to_numpy,
    to_torch,
)
from mlxir.runtime.kernels import (
    CPU_STREAM_OPS,
    KERNELS,
    RANDOM_OPS,
    SYNC_OPS,
    WEIGHT_PRODUCT_OPERAND,
    Kernel,
    is_cut_at_one_row,
    weight_blocked_product,
)
from mlxir.runtime.payloads import bind_payloads
from mlxir.runtime.signature import InputError, bind_inputs, build_outputs
from mlxir.runtime.streams import thread_token

__all__ = ["CompileMode", "InputError", "InputSpec", "Program", "load"]

CompileMode: TypeAlias = Literal["auto"] | bool
"""When a program runs natively as an `mx.compile`d function (see the module docstring)."""

if TYPE_CHECKING:
    from mlxir.interop.executorch import PteProgram


MAX_DIM = 2**31 - 1
"""MLX's dims are 32-bit: a program whose slot declares a bigger dim cannot run."""
_INT64_MIN, _INT64_MAX = -(2**63), 2**63 - 1


@dataclass(frozen=True)
class _Expected:
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
class _Step:
    run: Kernel
    operands: tuple[int, ...]
    results: tuple[int, ...]
    free: tuple[int, ...]
    op: str
    location: str | None
    expected: tuple[_Expected, ...] = ()
    """One per result, checked after the step runs (with `checks`)."""
    checks: tuple[Callable[[Any], bool], ...] = ()

    def where(self) -> str:
        return f"{self.op} ({self.location})" if self.location else self.op


@dataclass(frozen=True)
class InputSpec:
    """What one input must be: a tensor of `dtype` and `shape` (None: dynamic, with
    `dims[i]` its symbol expression), or an integer (`dtype == "index"`)."""

    name: str
    dtype: str
    shape: tuple[int | None, ...]
    dims: tuple[str, ...]

    def describe(self) -> str:
        if self.dtype == "index":
            return "an integer"
        dims = ", ".join(
            str(d) if d is not None else (self.dims[i] if i < len(self.dims) and self.dims[i] else "?")
            for i, d in enumerate(self.shape)
        )
        return f"{self.dtype}[{dims}]"


def _kind_of(value: Any) -> str:
    module = type(value).__module__
    if module.startswith("torch"):
        return "torch"
    if is_numpy_array(value):
        return "numpy"
    if isinstance(value, mx.array):
        return "mlx"
    return "other"


def _dtype_name(value: Any) -> str:
    kind = _kind_of(value)
    if kind == "torch":
        return str(value.dtype).removeprefix("torch.")
    if kind == "numpy":
        return "bool" if value.dtype.kind == "b" else str(value.dtype)
    if kind == "mlx":
        return str(value.dtype).removeprefix("mlx.core.")
    return type(value).__name__


class Program:
    """A loaded `.mlxfb` program, ready to call."""

    max_array_bytes: int = int(mx.get_memory_limit()) if hasattr(mx, "get_memory_limit") else 2**40
    """No step may produce a tensor bigger than this (MLX's memory limit by default):
    MLX does not survive a failed allocation. Read when a program loads."""

    max_traces: int = 8
    """How many input signatures keep their `mx.compile`d trace (least recently used
    first out)."""

    auto_compile_after: int = 2
    """With `compile="auto"`, a signature is traced on the call that follows this many
    calls in a row with it: shapes that change from call to call (a cache that grows
    every step) are never traced, so traces are not built only to be evicted."""

    def __init__(
        self,
        data: bytes | bytearray | memoryview | mmap.mmap | ProgramParts,
        *,
        verify: bool = True,
        compile: CompileMode = "auto",
        _file: BinaryIO | None = None,
    ):
        """Loads `data`. With `verify` (the default) the program's IR is rebuilt and
        every op's verifier runs, so the kernels only see what the dialect allows
        (a program that lies about its types or holds a property MLX would crash on,
        such as a convolution with 0 groups, is a `ProgramError`), unless this
        machine verified the same program before (`codegen/verification.py`: the
        loader computes the key; `serialize` records the programs it writes from
        verified IR); pass `verify=False` only for bytes `serialize` just wrote
        (`mlxir.compile` does). `compile`:
        when to run natively (see the module docstring); `True` on a program that
        cannot is a `ValueError` naming the reason. (`_file`, from `load`: the open
        file `data` maps, which the weights are read from.) `data` may be
        `serialize_parts`' pieces, as `mlxir.compile` gives them: the weights are then
        read from them into MLX, and the program keeps no other copy."""
        self._in_mlx: list[tuple[int, int, int]] = []
        """(offset, length, slot) of the payloads `_data` lacks, which MLX holds."""
        read_segment = None
        if isinstance(data, ProgramParts):
            skeleton, missing = data.skeleton()
            self._data: bytes | memoryview | mmap.mmap = skeleton
            read_segment = data.read_at
        else:
            try:
                view = memoryview(data)  # pyright: ignore[reportArgumentType] (mmap has the buffer protocol)
            except TypeError:
                raise ProgramError(f"expected the program's bytes, got {type(data).__name__}") from None
            # Immutable bytes and read-only maps are used in place; a buffer the caller
            # may still write to is copied once, so the program cannot change under its views.
            self._data = data if isinstance(data, bytes) else view if view.readonly else bytes(view)
            missing = []
        self.info: ProgramInfo = read_program(self._data)
        info = self.info
        buffer = _bytes_view(self._data)
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
        self._size_exprs = [
            {axis: self._size_expression(i, axis, e) for axis, e in enumerate(dims) if e and not e.isidentifier()}
            for i, dims in enumerate(info.input_dims)
        ]
        lacking = _what_mlx_lacks(info)
        if lacking is not None:
            raise lacking
        payloads = bind_payloads(info, buffer, _file.fileno() if _file is not None else None, read_segment)
        slots = {info.segment_start + g.offset: g.slot for g in info.globals}
        self._in_mlx = [(offset, length, slots[offset]) for offset, length in missing]
        self._constants: dict[int, mx.array] = {
            slot: array for slot, array in payloads.items() if info.slots[slot].kind == "constant"
        }
        self._initial_state = {name: payloads[slot] for name, slot in info.state.items()}
        self._state = dict(self._initial_state)
        self._state_slots = dict(info.state)
        self._call_state: Mapping[str, Any] = {}
        self._pending: dict[str, Any] = {}
        self._limit = self.max_array_bytes
        self._steps: list[_Step] = []
        self._stores: list[tuple[int, str]] = []
        for instruction in info.instructions:
            self._steps.append(self._prepare(instruction))
        self._registers = len(info.slots)
        self._view_constants()
        self._whole_steps = self._steps
        """The steps with every product whole, for MLX's exporter (`runtime/mlxfn.py`)."""
        self._steps = [self._blocked(step) for step in self._steps]
        self.signature = info.signature
        """How the exported module's arguments and results nest (None: called flat)."""
        paths = self.signature.input_paths() if self.signature is not None else None
        self.inputs = [
            self._input_spec(i, slot, paths[i] if paths else None)
            for i, slot in enumerate(info.inputs)
        ]
        self.output_names = (
            self.signature.output_paths()
            if self.signature is not None
            else [f"output {i}" for i in range(len(info.outputs))]
        )
        self._lock = threading.Lock()
        self.native_unavailable: str | None = self._why_not_native()
        """Why this program cannot run as an `mx.compile`d function (None: it can)."""
        if compile not in ("auto", True, False):
            raise ValueError(f"compile must be 'auto', True or False, got {compile!r}")
        if compile is True and self.native_unavailable is not None:
            raise ValueError(f"this program cannot run compiled: {self.native_unavailable}")
        self.compile: CompileMode = compile
        self._traces: OrderedDict[tuple[Any, ...], _Trace] = OrderedDict()
        self._spreads_over_streams = any(i.op in CPU_STREAM_OPS for i in self.info.instructions) or any(
            a is not b for a, b in zip(self._steps, self._whole_steps)
        )
        self._checked: set[tuple[Any, ...]] = set()
        """Signatures whose interpreted call passed every result check."""
        self._last_signature: tuple[Any, ...] | None = None
        self._calls_in_a_row = 0
        if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            # The kernel may map whole large folios around each page the loader read, so
            # drop them: the weights live in MLX, and what is read later faults back in.
            data.madvise(mmap.MADV_DONTNEED)

    # --- loading ---------------------------------------------------------------

    def _size_expression(self, position: int, axis: int, expr: str) -> Any:
        try:
            return parse_size(expr)
        except ProgramError as error:
            raise ProgramError(f"program.input_dims[{position}][{axis}]: {error}") from None

    def _prepare(self, instruction: Any) -> _Step:
        op = instruction.op
        slots = self.info.slots
        what = f"instruction #{instruction.index} ({op})"
        run: Kernel
        if op == "mlx.weight":
            # The result slot is the global's constant slot, bound at load.
            run = _no_op
        elif op in ("mlx.load_state", "mlx.store_state"):
            name = str(instruction.props["global_name"])
            state = slots[self.info.state[name]]
            value = slots[(instruction.results if op == "mlx.load_state" else instruction.operands)[0]]
            if (value.dtype, value.shape, value.scalar) != (state.dtype, state.shape, False):
                raise ProgramError(
                    f"{what}: @{name} is {_describe_slot(state)}, the value is {_describe_slot(value)}"
                )
            run = self._load_state(name) if op == "mlx.load_state" else self._store_state(name)
        else:
            factory = KERNELS.get(op)
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
            _Expected(
                None if slots[r].scalar else mx_dtype(slots[r].dtype),
                slots[r].shape,
                _describe_slot(slots[r]),
            )
            for r in instruction.results
        )
        if op == "mlx.weight":
            expected = ()
        return _Step(
            run,
            instruction.operands,
            instruction.results,
            instruction.free,
            op,
            instruction.location,
            expected,
            tuple(_checker(e, self._limit) for e in expected),
        )

    def _view_constants(self) -> None:
        """Runs once, at load, every step in `CONSTANT_VIEW_OPS` of constants only (a
        `linear` weight's `w.T`), and keeps its result as a constant of a fresh slot:
        MLX makes it a view of the weight, so it costs no memory, and no call pays for
        it again. (Its slot gets a new number because the allocator may give the old
        one to other values before and after the step.)"""
        renamed: dict[int, int] = {}
        kept: list[_Step] = []
        self._view_steps: list[_Step] = []
        """The steps run at load, on the fresh slots of their results."""
        self._weight_views: set[int] = set()
        """The fresh slots that hold `w.T` of a matrix `w` the program loaded (so
        row-contiguous in MLX): what `weight_blocked_product` may cut into views."""
        loaded = set(self._constants)
        for step, instruction in zip(self._steps, self.info.instructions, strict=True):
            operands = tuple(renamed.get(s, s) for s in step.operands)
            if step.op in CONSTANT_VIEW_OPS and operands and all(s in self._constants for s in operands):
                swaps_a_loaded_matrix = (
                    operands[0] in loaded
                    and self._constants[operands[0]].ndim == 2
                    and instruction.props.get("axes") in ([1, 0], (1, 0))
                )
                try:
                    results = step.run([self._constants[s] for s in operands])
                except Exception as error:
                    raise ProgramError(f"{step.where()} failed at load: {error}") from None
                for index, (slot, value, valid) in enumerate(zip(step.results, results, step.checks, strict=True)):
                    if not valid(value):
                        raise ProgramError(_mismatch(step, index, value, self._limit))
                    self._constants[self._registers] = value
                    renamed[slot] = self._registers
                    if swaps_a_loaded_matrix:
                        self._weight_views.add(self._registers)
                    self._registers += 1
                results = tuple(renamed[slot] for slot in step.results)
                self._view_steps.append(replace(step, operands=operands, results=results, free=()))
                continue
            free = tuple(s for s in step.free if s not in renamed)
            for slot in (*step.free, *step.results):  # the old slot now holds other values
                renamed.pop(slot, None)
            kept.append(replace(step, operands=operands, free=free))
        mx.eval(list(self._constants.values()))
        self._steps = kept
        self._outputs = [renamed.get(s, s) for s in self.info.outputs]

    def _blocked(self, step: _Step) -> _Step:
        """`step`, computed as blocks of its weight's rows when it is a product by a
        loaded matrix's transpose (`weight_blocked_product`)."""
        at = WEIGHT_PRODUCT_OPERAND.get(step.op)
        if at is None or len(step.operands) <= at or step.operands[at] not in self._weight_views:
            return step
        if not is_cut_at_one_row(self._constants[step.operands[at]]):
            return step
        return replace(step, run=weight_blocked_product(step.op, step.run))

    def _load_state(self, name: str) -> Kernel:
        def load(operands: Sequence[Any]) -> Sequence[Any]:
            return (self._pending.get(name, self._call_state[name]),)

        return load

    def _store_state(self, name: str) -> Kernel:
        def store(operands: Sequence[Any]) -> Sequence[Any]:
            self._pending[name] = operands[0]
            return ()

        return store

    def _input_spec(self, position: int, slot: int, path: str | None) -> InputSpec:
        info = self.info.slots[slot]
        dims = self.info.input_dims[position] if position < len(self.info.input_dims) else ()
        return InputSpec(
            path or info.name or f"input {position}",
            "index" if info.scalar else info.dtype,
            info.shape,
            tuple(dims),
        )

    # --- calling ---------------------------------------------------------------

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        """Runs the program on the arguments its module took (nested tuples, lists and
        dicts, keyword arguments) and returns the results in the module's output
        structure. A program without a signature takes its flat inputs and returns one
        value or a tuple."""
        if self.signature is None:
            if kwargs:
                raise InputError(
                    "this program has no exported signature: pass its inputs in order "
                    f"({', '.join(s.name for s in self.inputs)})"
                )
            outputs = self.call_flat(*args)
            return outputs[0] if len(outputs) == 1 else outputs
        leaves = bind_inputs(self.signature, args, kwargs)
        outputs = self.call_flat(*(v for _, v in leaves))
        for output, position in self.signature.mutated:
            path, target = leaves[position]
            _write_back(target, outputs[output], path)
        return build_outputs(self.signature.outputs, outputs[: self.signature.outputs.num_leaves])

    def call_flat(self, *inputs: Any, evaluate: bool = True) -> tuple[Any, ...]:
        """Runs the program on its flat inputs, in order (`inputs`), and returns its
        flat outputs as a tuple: the convention of the LLM helper, the ExecuTorch
        delegates and `mlxir run`.

        `evaluate=False` (MLX inputs only) returns the outputs as MLX's lazy arrays,
        not yet computed, and commits the program's state the same way: a caller that
        evaluates them with `mx.async_eval` can build its next call while MLX computes
        this one (the LLM decode loop does). An error MLX raises while computing then
        surfaces where they are evaluated."""
        arrays = self._check_inputs(inputs)
        kind = next((_kind_of(v) for v in inputs if _kind_of(v) != "other"), "mlx")
        with self._lock:
            key, trace = self._trace_for(arrays)
            if trace is None:
                checked = key in self._checked
                outputs, pending = self._interpret(arrays, self._state, check=not checked)
                if not checked:
                    if len(self._checked) >= 4 * self.max_traces:
                        self._checked.clear()
                    self._checked.add(key)
            else:
                outputs, pending = trace.run(arrays, self._state)
                if key not in self._traces:  # kept once it traced: a failed trace is not
                    self._traces[key] = trace
                    if len(self._traces) > self.max_traces:
                        self._traces.popitem(last=False)
            if evaluate or kind != "mlx":
                try:
                    mx.eval(*[v for v in (*outputs, *pending.values()) if isinstance(v, mx.array)])
                except Exception as error:
                    raise RuntimeError(f"mlx.eval failed: {error}") from error
            self._state = {**self._state, **pending}
        return tuple(_convert(v, kind) for v in outputs)

    def _interpret(
        self,
        arrays: Sequence[Any],
        state: Mapping[str, Any],
        *,
        check: bool = True,
        views: bool = False,
    ) -> tuple[list[Any], dict[str, Any]]:
        """Runs the prepared steps on checked inputs and the state they read: the
        outputs (lazy) and the state values the program stores. `check=False` skips
        the results' checks, for a signature whose call already passed them: every
        result's dtype and shape follow from the input signature alone (MLX has no
        data-dependent shapes), so they would pass again. `views=True` makes the views
        of constants again, in the call (`_view_constants`)."""
        registers: list[Any] = [None] * self._registers
        for slot, value in self._constants.items():
            registers[slot] = value
        for slot, value in zip(self.info.inputs, arrays):
            registers[slot] = value
        for step in self._view_steps if views else ():
            for slot, value in zip(step.results, step.run([registers[s] for s in step.operands])):
                registers[slot] = value
        self._call_state = state
        self._pending = {}
        limit = self._limit
        try:
            for step in self._whole_steps if views else self._steps:
                try:
                    results = step.run([registers[s] for s in step.operands])
                except Exception as error:
                    raise RuntimeError(f"{step.where()} failed: {error}") from error
                if check:
                    if len(results) != len(step.checks) and step.checks:
                        raise RuntimeError(
                            f"{step.where()} failed: gave {len(results)} results, the program "
                            f"declares {len(step.expected)}"
                        )
                    for index, (value, valid) in enumerate(zip(results, step.checks)):
                        if not valid(value):
                            raise RuntimeError(_mismatch(step, index, value, limit))
                for slot, value in zip(step.results, results):
                    registers[slot] = value
                for slot in step.free:
                    registers[slot] = None
            return [registers[s] for s in self._outputs], self._pending
        finally:
            self._pending = {}
            self._call_state = {}

    # --- native execution ----------------------------------------------------------

    def _run_traceable(
        self, flat: Sequence[mx.array], integers: Mapping[int, Any], *, views: bool = False
    ) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        """The steps as a function of arrays only, for `mx.compile` and MLX's exporter:
        `flat` holds the tensor inputs in input order (the integer inputs, held in
        `integers` by position, left out), then every state value in `self.state`'s
        order. Returns the outputs, the state given, and the state values stored.
        `views=True` traces the views of constants too: MLX's exporter (0.32) writes a
        constant that is a transposed view as if it were not transposed. It also runs
        every product whole: a file should not carry this machine's BLAS's block
        sizes (`weight_blocked_product`)."""
        tensors = iter(flat)
        inputs = [integers[i] if i in integers else next(tensors) for i in range(len(self.inputs))]
        state = dict(zip(self._state, tensors))
        outputs, pending = self._interpret(inputs, state, views=views)
        return outputs, state, pending

    def _why_not_native(self) -> str | None:
        slots = self.info.slots
        scalars = [self.output_names[i] for i, s in enumerate(self.info.outputs) if slots[s].scalar]
        if scalars:
            return f"output {scalars[0]!r} is an integer (mx.compile returns arrays only)"
        drawn = next((i.op for i in self.info.instructions if i.op in RANDOM_OPS), None)
        if drawn is not None:
            return f"it draws random numbers ({drawn}), which a trace would fix"
        sync = next((i for i in self.info.instructions if i.op in SYNC_OPS), None)
        if sync is not None:
            return (
                f"instruction #{sync.index} ({sync.op}) gives a {SYNC_OPS[sync.op]} that "
                "depends on values, which a trace cannot hold"
            )
        return None

    def _trace_for(self, arrays: Sequence[Any]) -> tuple[tuple[Any, ...], _Trace | None]:
        """These inputs' signature and its compiled trace (a new one when `compile`
        says so), or None to interpret."""
        key = tuple((v.shape, v.dtype) if isinstance(v, mx.array) else v for v in arrays)
        if self._spreads_over_streams:  # a trace holds the calling thread's CPU streams
            key = (*key, thread_token())
        if self.compile is False or self.native_unavailable is not None:
            return key, None
        trace = self._traces.get(key)
        if trace is not None:
            self._traces.move_to_end(key)
            # A traced call is a call too: a signature called between them (an LLM's
            # prefill, between the decode steps of each generation) is not in a row.
            self._last_signature, self._calls_in_a_row = key, 0
            return key, trace
        if self.compile == "auto":
            if key == self._last_signature:
                self._calls_in_a_row += 1
            else:
                self._last_signature, self._calls_in_a_row = key, 1
            if self._calls_in_a_row <= self.auto_compile_after:
                return key, None
        return key, _Trace(self, arrays)

    @property
    def traces(self) -> int:
        """How many input signatures have an `mx.compile`d trace now."""
        return len(self._traces)

    def _check_inputs(self, inputs: Sequence[Any]) -> list[Any]:
        if len(inputs) != len(self.inputs):
            raise InputError(
                f"the program takes {len(self.inputs)} inputs "
                f"({', '.join(s.name for s in self.inputs)}), got {len(inputs)}"
            )
        bindings: dict[str, int] = {}
        derived: list[tuple[InputSpec, int, int, int]] = []
        arrays: list[Any] = []
        for position, (spec, value) in enumerate(zip(self.inputs, inputs)):
            if spec.dtype == "index":
                if not (isinstance(value, int) or is_numpy_integer(value)) or isinstance(value, bool):
                    raise InputError(f"input '{spec.name}': expected an integer, got {type(value).__name__}")
                if not _INT64_MIN <= int(value) <= _INT64_MAX:
                    raise InputError(f"input '{spec.name}': {int(value)} does not fit in int64")
                arrays.append(int(value))
                if spec.dims and spec.dims[0].isidentifier():
                    bindings.setdefault(spec.dims[0], int(value))
                continue
            if _kind_of(value) == "other":
                raise InputError(
                    f"input '{spec.name}': expected a tensor {spec.describe()}, got "
                    f"{type(value).__name__}"
                )
            dtype = _dtype_name(value)
            if dtype != spec.dtype:
                raise InputError(
                    f"input '{spec.name}': expected dtype {spec.dtype}, got {dtype}"
                )
            shape = tuple(int(d) for d in value.shape)
            if len(shape) != len(spec.shape):
                raise InputError(
                    f"input '{spec.name}': expected rank {len(spec.shape)} ({spec.describe()}), "
                    f"got shape {list(shape)}"
                )
            for axis, (want, got) in enumerate(zip(spec.shape, shape)):
                if want is not None and want != got:
                    raise InputError(
                        f"input '{spec.name}': dim {axis} must be {want} ({spec.describe()}), "
                        f"got shape {list(shape)}"
                    )
                if want is None and axis < len(spec.dims) and spec.dims[axis]:
                    if spec.dims[axis].isidentifier():
                        self._bind(spec, axis, spec.dims[axis], got, bindings)
                    else:
                        derived.append((spec, position, axis, got))
            try:
                arrays.append(to_mx(value, mx_dtype(spec.dtype)))
            except Exception as error:  # a meta or sparse tensor, an unreadable array...
                raise InputError(
                    f"input '{spec.name}': cannot read it as a tensor: {type(error).__name__}: {error}"
                ) from None
        for spec, position, axis, got in derived:
            expected = evaluate_size(self._size_exprs[position][axis], bindings)
            if expected is not None and expected != got:
                raise InputError(
                    f"input '{spec.name}': dim {axis} must be {spec.dims[axis]} = {expected}, "
                    f"got {got}"
                )
        return arrays

    def _bind(self, spec: InputSpec, axis: int, expr: str, size: int, bindings: dict[str, int]) -> None:
        ranges = self.info.symbol_ranges
        if expr in ranges:
            lo, hi = ranges[expr]
            if size < lo or (hi >= 0 and size > hi):
                bound = f"[{lo}, {hi}]" if hi >= 0 else f"[{lo}, inf)"
                raise InputError(
                    f"input '{spec.name}': dim {axis} ({expr}) must lie in {bound}, got {size}"
                )
        if bindings.setdefault(expr, size) != size:
            raise InputError(
                f"input '{spec.name}': dim {axis} is {expr}, which another input fixed to "
                f"{bindings[expr]}, got {size}"
            )

    # --- state and saving ---------------------------------------------------------

    def reset_state(self) -> None:
        """Restores every state value (e.g. a KV cache) to the program's initial value."""
        with self._lock:
            self._state = dict(self._initial_state)

    @property
    def state(self) -> dict[str, mx.array]:
        return dict(self._state)

    def save(self, path: str | Path) -> None:
        with Path(path).open("wb") as file:
            for piece in self._pieces():
                file.write(piece)

    def to_bytes(self) -> bytes:
        if isinstance(self._data, bytes) and not self._in_mlx:
            return self._data
        return b"".join(self._pieces())

    def _pieces(self) -> list[Any]:
        """The program's bytes in order: `_data`, with the payloads it lacks taken from
        the arrays MLX holds (a program loaded from `ProgramParts`)."""
        data = memoryview(self._data)  # pyright: ignore[reportArgumentType] (mmap has the buffer protocol)
        arrays = {**self._constants, **{self._state_slots[n]: a for n, a in self._initial_state.items()}}
        pieces: list[Any] = []
        position = 0
        for offset, length, slot in self._in_mlx:
            pieces += [data[position:offset], memoryview(arrays[slot]).cast("B")]  # pyright: ignore[reportArgumentType] (mx.array has the buffer protocol)
            position = offset + length
        return [*pieces, data[position:]]


class _Trace:
    """One input signature's `mx.compile`d run of a program's steps: the tensor
    inputs and the state values in, the outputs and the stored state values out.
    Integer inputs are part of the signature, so the trace holds them as constants."""

    def __init__(self, program: Program, arrays: Sequence[Any]):
        self.tensors = [i for i, v in enumerate(arrays) if isinstance(v, mx.array)]
        integers = {i: v for i, v in enumerate(arrays) if not isinstance(v, mx.array)}
        self.state_names = tuple(program._state)
        self.stored: tuple[str, ...] = ()
        self.outputs = len(program.info.outputs)

        def run(*flat: mx.array) -> tuple[mx.array, ...]:
            outputs, _, pending = program._run_traceable(flat, integers)
            self.stored = tuple(pending)
            return (*outputs, *pending.values())

        self.compiled = mx.compile(run)

    def run(self, arrays: Sequence[Any], state: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        flat = [arrays[i] for i in self.tensors] + [state[name] for name in self.state_names]
        results = self.compiled(*flat)
        return list(results[: self.outputs]), dict(zip(self.stored, results[self.outputs :]))


def _what_mlx_lacks(info: ProgramInfo) -> BackendError | None:
    """Why MLX's backend on this machine cannot run the program, found at load rather
    than in the middle of a call (None: it can)."""
    if not any(slot.dtype == "float64" for slot in info.slots):
        return None
    if mx.default_device() == mx.gpu:
        return BackendError(
            "the program computes in float64, which MLX runs on its CPU backend only: "
            "call mx.set_default_device(mx.cpu) before loading it"
        )
    slots = info.slots
    for instruction in info.instructions:
        if (
            instruction.op == "mlx.conv_general"
            and slots[instruction.results[0]].dtype == "float64"
            and any(d != 1 for d in instruction.kernel_props().get("input_dilation", ()))  # pyright: ignore[reportGeneralTypeIssues]
        ):
            location = f" ({instruction.location})" if instruction.location else ""
            return BackendError(
                "a transposed convolution in float64, which MLX's CPU backend lacks (0.32)",
                f"instruction #{instruction.index} (mlx.conv_general{location})",
            )
    return None


def _no_op(operands: Sequence[Any]) -> Sequence[Any]:
    return ()


def _describe_slot(slot: Any) -> str:
    if slot.scalar:
        return f"an integer ({slot.dtype})"
    dims = ", ".join("?" if d is None else str(d) for d in slot.shape)
    return f"{slot.dtype}[{dims}]"


def _checker(expected: _Expected, limit: int) -> Callable[[Any], bool]:
    """A fast test that a step's result is what `expected` says (and not over `limit`
    bytes)."""
    dtype = expected.dtype
    if dtype is None:
        return lambda v: type(v) is not mx.array and isinstance(v, int) and _INT64_MIN <= v <= _INT64_MAX
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


def _mismatch(step: _Step, index: int, value: Any, limit: int) -> str:
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


MAX_SIZE_EXPRESSION = 256
"""Longest dim expression (`mlxir.input_dims`) the runtime evaluates."""

_SIZE_FUNCTIONS: dict[str, Callable[..., int]] = {
    "Max": lambda *args: max(args),
    "Min": lambda *args: min(args),
    "FloorDiv": lambda a, b: a // b,
    "Mod": lambda a, b: a % b,
    "PythonMod": lambda a, b: a % b,
    "CeilDiv": lambda a, b: -(-a // b),
    "Abs": lambda a: abs(a),
}
"""The functions of torch's symbolic sizes a dim expression may call."""

_SIZE_OPERATORS: dict[type[ast.operator], Callable[[int, int], int]] = {
    ast.Add: lambda a, b: a + b,
    ast.Sub: lambda a, b: a - b,
    ast.Mult: lambda a, b: a * b,
    ast.FloorDiv: lambda a, b: a // b,
    ast.Mod: lambda a, b: a % b,
}


def parse_size(expr: str) -> ast.expr:
    """The syntax tree of a dim expression (`2*s0`, `s0 + 1`, `Max(1, s0)`): integers,
    symbols, `+ - * // %`, unary minus and calls of `_SIZE_FUNCTIONS`. Raises
    `ProgramError` for anything else: the expression comes from the program file and is
    never handed to `eval` or sympy."""
    if len(expr) > MAX_SIZE_EXPRESSION:
        raise ProgramError(f"dim expression of {len(expr)} characters is too long")
    try:
        tree = ast.parse(expr, mode="eval").body
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        raise ProgramError(f"dim expression {expr!r} does not parse") from None
    for node in ast.walk(tree):
        ok = (
            (isinstance(node, ast.Constant) and type(node.value) is int)
            or isinstance(node, ast.Name | ast.Load | ast.USub | ast.UAdd)
            or (isinstance(node, ast.BinOp) and type(node.op) in _SIZE_OPERATORS)
            or isinstance(node, ast.UnaryOp | ast.operator)
            or (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Name)
                and node.func.id in _SIZE_FUNCTIONS
                and not node.keywords
            )
        )
        if not ok or (isinstance(node, ast.UnaryOp) and not isinstance(node.op, ast.USub | ast.UAdd)):
            raise ProgramError(f"dim expression {expr!r}: {type(node).__name__} is not allowed")
    return tree


_INT64_LIMIT = 2**63


def evaluate_size(expr: str | ast.expr, bindings: Mapping[str, int]) -> int | None:
    """The value of a dim expression with its symbols bound; None when a symbol is
    unbound, the expression is not a size expression, or a value leaves int64."""
    try:
        tree = parse_size(expr) if isinstance(expr, str) else expr
        return _evaluate_tree(tree, bindings)
    except (ProgramError, ZeroDivisionError, TypeError, OverflowError, RecursionError):
        return None


def _evaluate_tree(node: ast.expr, bindings: Mapping[str, int]) -> int | None:
    value: int | None
    if isinstance(node, ast.Constant):
        value = node.value if type(node.value) is int else None
    elif isinstance(node, ast.Name):
        value = bindings.get(node.id)
    elif isinstance(node, ast.UnaryOp):
        operand = _evaluate_tree(node.operand, bindings)
        value = None if operand is None else (-operand if isinstance(node.op, ast.USub) else operand)
    elif isinstance(node, ast.BinOp):
        left = _evaluate_tree(node.left, bindings)
        right = _evaluate_tree(node.right, bindings)
        value = None if left is None or right is None else _SIZE_OPERATORS[type(node.op)](left, right)
    elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
        args = [_evaluate_tree(a, bindings) for a in node.args]
        if any(a is None for a in args):
            return None
        value = _SIZE_FUNCTIONS[node.func.id](*args)
    else:
        return None
    if value is not None and not -_INT64_LIMIT <= value < _INT64_LIMIT:
        return None
    return value


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "torch": to_torch,
    "numpy": to_numpy,
    "mlx": lambda array: array,
}


def _convert(value: Any, kind: str) -> Any:
    if isinstance(value, mx.array):
        return _CONVERTERS.get(kind, _CONVERTERS["mlx"])(value)
    return value


def _write_back(target: Any, value: Any, path: str) -> None:
    """The module wrote its input `path` (`x.uniform_()`, `x.add_(1)`): the caller's
    tensor takes the program's new value, as eager PyTorch would have left it."""
    kind = type(target).__module__.split(".")[0]
    if isinstance(target, mx.array):
        target[...] = value if isinstance(value, mx.array) else mx.array(value)
    elif kind == "torch":
        target.copy_(value if type(value).__module__.startswith("torch") else to_torch(mx.array(value)))
    elif kind == "numpy":
        import numpy as np

        np.copyto(target, value if isinstance(value, np.ndarray) else to_numpy(mx.array(value)))
    else:
        raise InputError(
            f"input {path!r}: the module writes it, so it must be a torch, NumPy or MLX tensor, "
            f"not {type(target).__name__}"
        )


def load(
    source: str | Path | bytes | bytearray | memoryview,
    *,
    verify: bool = True,
    method: str = "forward",
    compile: CompileMode = "auto",
) -> Program | PteProgram:
    """Loads a program from a path or from its bytes: an `.mlxfb` as a `Program` (see
    it for `verify` and `compile`), or method `method` of an ExecuTorch `.pte` that
    runs on mlxir delegates as a `PteProgram` (needs the `executorch` extra). Every
    failure to load is a `ProgramError`."""
    if isinstance(source, str | Path):
        try:
            file = Path(source).open("rb")
        except OSError as error:
            raise ProgramError(f"cannot read '{source}': {error.strerror}") from error
        # The weights are read from the file while the program loads; the mapping
        # (the FlatBuffer's views) outlives the file.
        with file:
            try:
                return _load_bytes(_map(file), verify, method, compile, file)
            except OSError as error:
                raise ProgramError(f"cannot read '{source}': {error.strerror}") from error
            except ProgramError as error:
                raise ProgramError(f"{source}: {error}") from None
    return _load_bytes(source, verify, method, compile, None)


def _map(file: BinaryIO) -> bytes | mmap.mmap:
    """The file's bytes, mapped read-only (not read into memory: the FlatBuffer's pages
    are read where the reader looks, and the weights are read from the file into MLX,
    `runtime/payloads.py`). The file must not be truncated while the program lives,
    as for any mapped file."""
    if os.fstat(file.fileno()).st_size == 0:
        return b""  # an empty file cannot be mapped (and is no program)
    return mmap.mmap(file.fileno(), 0, access=mmap.ACCESS_READ)


def _bytes_view(data: bytes | memoryview | mmap.mmap) -> memoryview:
    view = memoryview(data)  # pyright: ignore[reportArgumentType] (mmap has the buffer protocol)
    return view if view.format == "B" and view.ndim == 1 else view.cast("B")


def _load_bytes(
    data: bytes | bytearray | memoryview | mmap.mmap,
    verify: bool,
    method: str,
    compile: CompileMode,
    file: BinaryIO | None,
) -> Program | PteProgram:
    if is_pte(data):
        try:
            from mlxir.interop.executorch import PteProgram
        except ImportError as error:
            raise ProgramError(f"an ExecuTorch .pte file: {error}") from None
        return PteProgram(bytes(data) if isinstance(data, mmap.mmap) else data, method=method, verify=verify)
    return Program(data, verify=verify, compile=compile, _file=file)


def is_pte(data: Any) -> bool:
    """ExecuTorch's FlatBuffer identifier (`ET` and a two-digit schema version)."""
    try:
        head = bytes(memoryview(data)[4:8])
    except TypeError:
        return False
    return len(head) == 4 and head[:2] == b"ET" and head[2:].isdigit()
