"""The program runtime: `load(path_or_bytes) -> Program`, and `program(*args, **kwargs)`.

A program with the exported signature (`codegen/signature.py`, written by the importer)
is called like the module it came from: `runtime/signature.py` flattens the nested
arguments into the program's inputs (an `InputError` names the path of a mismatch) and
nests the outputs into the exported structure. `call_flat(*inputs)` takes the flat
inputs in order and returns a flat tuple (the LLM helper, ExecuTorch delegates and
`mlxir run` call it so); a program without a signature is called flat.

`Program` joins four parts, one per job:
- `runtime/loading.py` loads and verifies: the `.mlxfb` validated, its IR verified,
  its weights read into MLX and its instructions prepared as kernels, those of the
  backend of MLX's device at load (`runtime/backend.py`, chosen once);
- `runtime/inputs.py` binds: the flat inputs checked and read into MLX;
- `runtime/signature.py` is the calling convention: nested arguments to flat inputs,
  flat outputs to the module's output structure;
- `runtime/execution.py` executes: the steps interpreted or as a compiled trace.

A program compiled in memory
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
1 s each, measured here; cached on disk under `$TMPDIR/mlx` for the next processes).

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

Out-of-range gather/scatter indices are clamped into bounds (`evaluator/registry.py`, `in_bounds`).
"""

from __future__ import annotations

import mmap
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

import mlx.core as mx

from mlxir.codegen.errors import ProgramError
from mlxir.codegen.parts import ProgramParts
from mlxir.codegen.reader import ProgramInfo
from mlxir.runtime.backend import Backend, backend_for
from mlxir.runtime.execution import CompileMode, Executor
from mlxir.runtime.inputs import InputBinder, InputSpec, kind_of, parse_size
from mlxir.runtime.loading import LoadedProgram, is_pte, opened
from mlxir.runtime.signature import InputError, bind_inputs, build_outputs, convert, write_back

if TYPE_CHECKING:
    import ast

__all__ = ["CompileMode", "InputError", "InputSpec", "Program", "load"]


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
        if compile not in ("auto", True, False):
            raise ValueError(f"compile must be 'auto', True or False, got {compile!r}")
        self.backend: Backend = backend_for(mx.default_device())
        """The device's choices of how to run the steps, fixed at load."""
        self._loaded = loaded = LoadedProgram(
            data, verify=verify, backend=self.backend, limit=self.max_array_bytes, file=_file
        )
        self.info: ProgramInfo = loaded.info
        info = self.info
        self.signature = info.signature
        """How the exported module's arguments and results nest (None: called flat)."""
        paths = self.signature.input_paths() if self.signature is not None else None
        self.inputs = [
            self._input_spec(i, slot, paths[i] if paths else None)
            for i, slot in enumerate(info.inputs)
        ]
        size_expressions = [
            {axis: self._size_expression(i, axis, e) for axis, e in enumerate(dims) if e and not e.isidentifier()}
            for i, dims in enumerate(info.input_dims)
        ]
        self._binder = InputBinder(self.inputs, size_expressions, info.symbol_ranges)
        self.output_names = (
            self.signature.output_paths()
            if self.signature is not None
            else [f"output {i}" for i in range(len(info.outputs))]
        )
        self._executor = executor = Executor(
            loaded, len(self.inputs), self.output_names, self.max_traces, self.auto_compile_after
        )
        self._lock = threading.Lock()
        self.native_unavailable: str | None = executor.native_unavailable
        """Why this program cannot run as an `mx.compile`d function (None: it can)."""
        if compile is True and self.native_unavailable is not None:
            raise ValueError(f"this program cannot run compiled: {self.native_unavailable}")
        self.compile = compile
        if isinstance(data, mmap.mmap) and hasattr(mmap, "MADV_DONTNEED"):
            # The kernel may map whole large folios around each page the loader read, so
            # drop them: the weights live in MLX, and what is read later faults back in.
            data.madvise(mmap.MADV_DONTNEED)

    @property
    def compile(self) -> CompileMode:
        """When the program runs natively (see the module docstring)."""
        return self._executor.compile

    @compile.setter
    def compile(self, mode: CompileMode) -> None:
        self._executor.compile = mode

    def _size_expression(self, position: int, axis: int, expr: str) -> ast.expr:
        try:
            return parse_size(expr)
        except ProgramError as error:
            raise ProgramError(f"program.input_dims[{position}][{axis}]: {error}") from None

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
            write_back(target, outputs[output], path)
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
        arrays = self._binder.check(inputs)
        kind = next((kind_of(v) for v in inputs if kind_of(v) != "other"), "mlx")
        executor = self._executor
        with self._lock:
            key, trace = executor.trace_for(arrays)
            if trace is None:
                checked = key in executor.checked
                outputs, pending = executor.interpret(arrays, executor.state, check=not checked)
                if not checked:
                    if len(executor.checked) >= 4 * self.max_traces:
                        executor.checked.clear()
                    executor.checked.add(key)
            else:
                outputs, pending = trace.run(arrays, executor.state)
                if key not in executor.traces:  # kept once it traced: a failed trace is not
                    executor.traces[key] = trace
                    if len(executor.traces) > self.max_traces:
                        executor.traces.popitem(last=False)
            if evaluate or kind != "mlx":
                try:
                    mx.eval(*[v for v in (*outputs, *pending.values()) if isinstance(v, mx.array)])  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
                except Exception as error:
                    raise RuntimeError(f"mlx.eval failed: {error}") from error
            executor.state = {**executor.state, **pending}
        return tuple(convert(v, kind) for v in outputs)

    @property
    def traces(self) -> int:
        """How many input signatures have an `mx.compile`d trace now."""
        return len(self._executor.traces)

    # --- state and saving ---------------------------------------------------------

    def reset_state(self) -> None:
        """Restores every state value (e.g. a KV cache) to the program's initial value."""
        with self._lock:
            self._executor.state = dict(self._loaded.initial_state)

    @property
    def state(self) -> dict[str, mx.array]:
        return dict(self._executor.state)

    def save(self, path: str | Path) -> None:
        with Path(path).open("wb") as file:
            for piece in self._loaded.pieces():
                file.write(piece)

    def to_bytes(self) -> bytes:
        if isinstance(self._loaded.data, bytes) and not self._loaded.in_mlx:
            return self._loaded.data
        return b"".join(self._loaded.pieces())

    # --- for MLX's exporter (runtime/mlxfn.py) and tests ----------------------------

    def run_traceable(
        self, flat: Any, integers: Mapping[int, Any], *, views: bool = False
    ) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
        """`Executor.run_traceable`: the steps as a function of arrays only. Hold
        `lock` around it: a run keeps the call's state on the program."""
        return self._executor.run_traceable(flat, integers, views=views)

    def check_inputs(self, inputs: Sequence[Any]) -> list[Any]:
        """`inputs` checked against the program's inputs and read into MLX (an
        `InputError` names the input at fault)."""
        return self._binder.check(inputs)

    @property
    def lock(self) -> threading.Lock:
        """Serializes the calls of this program (one register file, one state)."""
        return self._lock


def load(
    source: str | Path | bytes | bytearray | memoryview,
    *,
    verify: bool = True,
    compile: CompileMode = "auto",
) -> Program:
    """Loads an `.mlxfb` program from a path or from its bytes (see `Program` for
    `verify` and `compile`). Every failure to load is a `ProgramError`; an ExecuTorch
    `.pte` is one too (`mlxir.load` loads those)."""
    if isinstance(source, str | Path):
        with opened(source) as (data, file):
            return _program_of(data, verify, compile, file)
    return _program_of(source, verify, compile, None)


def _program_of(
    data: bytes | bytearray | memoryview | mmap.mmap,
    verify: bool,
    compile: CompileMode,
    file: BinaryIO | None,
) -> Program:
    if is_pte(data):
        raise ProgramError("an ExecuTorch .pte file: load it with mlxir.load")
    return Program(data, verify=verify, compile=compile, _file=file)
