"""The program runtime: `load(path_or_bytes) -> Program`, and `Program(*inputs)`.

Loading validates the `.mlxfb` (`read_program`), binds the constants, and resolves the
instruction list once: every instruction becomes a prepared kernel closure with its
operand and result slots, so a call does no per-op lookup. A call:

1. checks the inputs (count, kind, dtype, rank, static dims, the dynamic dims'
   recorded ranges and the relations between them) and names the input at fault;
2. runs the prepared steps over a register file of slots;
3. evaluates the outputs and the new state with one `mx.eval`;
4. commits the new state only then, so a call that fails leaves the state as it was.

Inputs may be torch tensors, numpy arrays or `mx.array`s (and ints for SymInt inputs);
outputs come back as the kind of the first tensor input (`mx.array` if none).

Threading: a `Program` may be called from several threads. Calls on one program are
serialized by a lock (the register file and the state are per program); use one
`Program` per thread (`load` the same bytes again) for parallel calls.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mlx.core as mx
import numpy as np

from mlxir.codegen import ProgramError, ProgramInfo, read_program
from mlxir.runtime.dtypes import mx_dtype, to_mx, to_numpy, to_torch
from mlxir.runtime.kernels import KERNELS, Kernel


class InputError(ValueError):
    """A call's inputs do not match the program's signature."""


_NUMPY_BITS = {"bfloat16": np.uint16}


def _constant_array(payload: np.ndarray, dtype: str) -> mx.array:
    """The payload as an `mx.array` (MLX copies it: it cannot wrap foreign memory)."""
    if dtype == "bfloat16":
        return mx.array(payload.view(np.uint16)).view(mx.bfloat16)
    if dtype == "bool":
        return mx.array(payload.astype(np.bool_, copy=False))
    return mx.array(payload)


@dataclass(frozen=True)
class _Step:
    run: Kernel
    operands: tuple[int, ...]
    results: tuple[int, ...]
    free: tuple[int, ...]
    op: str
    location: str | None


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
    if isinstance(value, np.ndarray):
        return "numpy"
    if isinstance(value, mx.array):
        return "mlx"
    return "other"


def _dtype_name(value: Any) -> str:
    kind = _kind_of(value)
    if kind == "torch":
        return str(value.dtype).removeprefix("torch.")
    if kind == "numpy":
        return "bool" if value.dtype == np.bool_ else str(value.dtype)
    if kind == "mlx":
        return str(value.dtype).removeprefix("mlx.core.")
    return type(value).__name__


class Program:
    """A loaded `.mlxfb` program, ready to call."""

    def __init__(self, data: bytes | bytearray | memoryview):
        self._data = bytes(data)
        self.info: ProgramInfo = read_program(self._data)
        info = self.info
        self._constants: dict[int, mx.array] = {}
        for slot, payload in info.constants.items():
            if info.slots[slot].kind == "constant":
                self._constants[slot] = _constant_array(payload, info.slots[slot].dtype)
        self._initial_state = {
            name: _constant_array(info.constants[slot], info.slots[slot].dtype)
            for name, slot in info.state.items()
        }
        self._state = dict(self._initial_state)
        self._state_slots = dict(info.state)
        self._steps: list[_Step] = []
        self._stores: list[tuple[int, str]] = []
        for instruction in info.instructions:
            self._steps.append(self._prepare(instruction))
        self.inputs = [self._input_spec(i, slot) for i, slot in enumerate(info.inputs)]
        self._lock = threading.Lock()

    # --- loading ---------------------------------------------------------------

    def _prepare(self, instruction: Any) -> _Step:
        op = instruction.op
        slots = self.info.slots
        run: Kernel
        if op == "mlx.weight":
            # The result slot is the global's constant slot, bound at load.
            run = _no_op
        elif op == "mlx.load_state":
            name = str(instruction.props["global_name"])
            run = self._load_state(name)
        elif op == "mlx.store_state":
            name = str(instruction.props["global_name"])
            run = self._store_state(name)
        else:
            factory = KERNELS.get(op)
            if factory is None:
                raise ProgramError(f"instruction {instruction.index}: no kernel for '{op}'")
            result_dtypes = [
                None if slots[r].scalar else mx_dtype(slots[r].dtype) for r in instruction.results
            ]
            run = factory(instruction.props, result_dtypes)
        return _Step(
            run, instruction.operands, instruction.results, instruction.free, op, instruction.location
        )

    def _load_state(self, name: str) -> Kernel:
        def load(operands: Sequence[Any]) -> Sequence[Any]:
            return (self._pending.get(name, self._state[name]),)

        return load

    def _store_state(self, name: str) -> Kernel:
        def store(operands: Sequence[Any]) -> Sequence[Any]:
            self._pending[name] = operands[0]
            return ()

        return store

    def _input_spec(self, position: int, slot: int) -> InputSpec:
        info = self.info.slots[slot]
        dims = self.info.input_dims[position] if position < len(self.info.input_dims) else ()
        return InputSpec(
            info.name or f"input {position}",
            "index" if info.scalar else info.dtype,
            info.shape,
            tuple(dims),
        )

    # --- calling ---------------------------------------------------------------

    def __call__(self, *inputs: Any) -> Any:
        arrays = self._check_inputs(inputs)
        kind = next((_kind_of(v) for v in inputs if _kind_of(v) != "other"), "mlx")
        with self._lock:
            registers: list[Any] = [None] * len(self.info.slots)
            for slot, value in self._constants.items():
                registers[slot] = value
            for slot, value in zip(self.info.inputs, arrays):
                registers[slot] = value
            self._pending: dict[str, Any] = {}
            try:
                for step in self._steps:
                    try:
                        results = step.run([registers[s] for s in step.operands])
                    except Exception as error:
                        where = f" ({step.location})" if step.location else ""
                        raise RuntimeError(f"{step.op}{where} failed: {error}") from error
                    for slot, value in zip(step.results, results):
                        registers[slot] = value
                    for slot in step.free:
                        registers[slot] = None
                outputs = [registers[s] for s in self.info.outputs]
                mx.eval(*[v for v in (*outputs, *self._pending.values()) if isinstance(v, mx.array)])
                self._state.update(self._pending)
            finally:
                self._pending = {}
        converted = [_convert(v, kind) for v in outputs]
        return converted[0] if len(converted) == 1 else tuple(converted)

    def _check_inputs(self, inputs: Sequence[Any]) -> list[Any]:
        if len(inputs) != len(self.inputs):
            raise InputError(
                f"the program takes {len(self.inputs)} inputs "
                f"({', '.join(s.name for s in self.inputs)}), got {len(inputs)}"
            )
        bindings: dict[str, int] = {}
        derived: list[tuple[InputSpec, int, str, int]] = []
        arrays: list[Any] = []
        for spec, value in zip(self.inputs, inputs):
            if spec.dtype == "index":
                if not isinstance(value, int | np.integer) or isinstance(value, bool):
                    raise InputError(f"input '{spec.name}': expected an integer, got {type(value).__name__}")
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
                        derived.append((spec, axis, spec.dims[axis], got))
            arrays.append(to_mx(value, mx_dtype(spec.dtype)))
        for spec, axis, expr, got in derived:
            expected = _evaluate(expr, bindings)
            if expected is not None and expected != got:
                raise InputError(
                    f"input '{spec.name}': dim {axis} must be {expr} = {expected}, got {got}"
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
        Path(path).write_bytes(self._data)

    def to_bytes(self) -> bytes:
        return self._data


def _no_op(operands: Sequence[Any]) -> Sequence[Any]:
    return ()


def _evaluate(expr: str, bindings: dict[str, int]) -> int | None:
    import sympy

    try:
        value = sympy.sympify(expr).subs(bindings)
    except (sympy.SympifyError, TypeError):
        return None
    return int(value) if value.is_Integer else None


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "torch": to_torch,
    "numpy": to_numpy,
    "mlx": lambda array: array,
}


def _convert(value: Any, kind: str) -> Any:
    if isinstance(value, mx.array):
        return _CONVERTERS.get(kind, _CONVERTERS["mlx"])(value)
    return value


def load(source: str | Path | bytes | bytearray | memoryview) -> Program:
    """Loads a `.mlxfb` program from a path or from its bytes."""
    if isinstance(source, str | Path):
        try:
            data = Path(source).read_bytes()
        except OSError as error:
            raise ProgramError(f"cannot read '{source}': {error.strerror}") from error
        try:
            return Program(data)
        except ProgramError as error:
            raise ProgramError(f"{source}: {error}") from None
    return Program(source)
