"""Execution: a loaded program's steps run over a register file of slots, interpreted
(each result checked against what the program declares for its slot, so a program that
lies about its types fails with the op named instead of feeding MLX arrays it never
agreed to) or natively, as one `mx.compile`d function traced once per input signature
and kept in a bounded LRU (`Trace`). Every result's type follows from the input
signature alone, so once a signature's call passed the checks, later calls with it
skip them."""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping, Sequence
from typing import Any, Literal, TypeAlias

import mlx.core as mx

from mlxir.evaluator import RANDOM_OPS, SYNC_OPS
from mlxir.runtime.loading import LoadedProgram, mismatch

CompileMode: TypeAlias = Literal["auto"] | bool
"""When a program runs natively as an `mx.compile`d function (`runtime/program.py`)."""


class Executor:
    """Runs a loaded program's steps, and keeps its state and its traces."""

    def __init__(
        self,
        loaded: LoadedProgram,
        input_count: int,
        output_names: Sequence[str],
        max_traces: int,
        auto_compile_after: int,
    ):
        self.loaded = loaded
        self.input_count = input_count
        self.output_names = output_names
        self.max_traces = max_traces
        self.auto_compile_after = auto_compile_after
        self.state: dict[str, Any] = dict(loaded.initial_state)
        self.traces: OrderedDict[tuple[Any, ...], Trace] = OrderedDict()
        self.checked: set[tuple[Any, ...]] = set()
        """Signatures whose interpreted call passed every result check."""
        self.last_signature: tuple[Any, ...] | None = None
        self.calls_in_a_row = 0
        self.compile: CompileMode = "auto"
        self.native_unavailable = self.why_not_native()
        """Why the program cannot run as an `mx.compile`d function (None: it can)."""

    def interpret(
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
        frame = self.loaded.frame
        registers: list[Any] = [None] * self.loaded.registers
        for slot, value in self.loaded.constants.items():
            registers[slot] = value
        for slot, value in zip(self.loaded.info.inputs, arrays):
            registers[slot] = value
        for step in self.loaded.view_steps if views else ():
            for slot, value in zip(step.results, step.run([registers[s] for s in step.operands])):
                registers[slot] = value
        frame.call_state = state
        frame.pending = {}
        limit = self.loaded.limit
        try:
            for step in self.loaded.whole_steps if views else self.loaded.steps:
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
                            raise RuntimeError(mismatch(step, index, value, limit))
                for slot, value in zip(step.results, results):
                    registers[slot] = value
                for slot in step.free:
                    registers[slot] = None
            return [registers[s] for s in self.loaded.outputs], frame.pending
        finally:
            frame.pending = {}
            frame.call_state = {}

    def run_traceable(
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
        inputs = [integers[i] if i in integers else next(tensors) for i in range(self.input_count)]
        state = dict(zip(self.state, tensors))
        outputs, pending = self.interpret(inputs, state, views=views)
        return outputs, state, pending

    def why_not_native(self) -> str | None:
        slots = self.loaded.info.slots
        scalars = [self.output_names[i] for i, s in enumerate(self.loaded.info.outputs) if slots[s].scalar]
        if scalars:
            return f"output {scalars[0]!r} is an integer (mx.compile returns arrays only)"
        drawn = next((i.op for i in self.loaded.info.instructions if i.op in RANDOM_OPS), None)
        if drawn is not None:
            return f"it draws random numbers ({drawn}), which a trace would fix"
        sync = next((i for i in self.loaded.info.instructions if i.op in SYNC_OPS), None)
        if sync is not None:
            return (
                f"instruction #{sync.index} ({sync.op}) gives a {SYNC_OPS[sync.op]} that "
                "depends on values, which a trace cannot hold"
            )
        return None

    def trace_for(self, arrays: Sequence[Any]) -> tuple[tuple[Any, ...], Trace | None]:
        """These inputs' signature and its compiled trace (a new one when `compile`
        says so), or None to interpret."""
        key = tuple((v.shape, v.dtype) if isinstance(v, mx.array) else v for v in arrays)
        if self.loaded.spreads:  # a trace holds the calling thread's CPU streams
            key = (*key, self.loaded.backend.thread_token())
        if self.compile is False or self.native_unavailable is not None:
            return key, None
        trace = self.traces.get(key)
        if trace is not None:
            self.traces.move_to_end(key)
            # A traced call is a call too: a signature called between them (an LLM's
            # prefill, between the decode steps of each generation) is not in a row.
            self.last_signature, self.calls_in_a_row = key, 0
            return key, trace
        if self.compile == "auto":
            if key == self.last_signature:
                self.calls_in_a_row += 1
            else:
                self.last_signature, self.calls_in_a_row = key, 1
            if self.calls_in_a_row <= self.auto_compile_after:
                return key, None
        return key, Trace(self, arrays)


class Trace:
    """One input signature's `mx.compile`d run of a program's steps: the tensor
    inputs and the state values in, the outputs and the stored state values out.
    Integer inputs are part of the signature, so the trace holds them as constants."""

    def __init__(self, program: Executor, arrays: Sequence[Any]):
        self.tensors = [i for i, v in enumerate(arrays) if isinstance(v, mx.array)]
        integers = {i: v for i, v in enumerate(arrays) if not isinstance(v, mx.array)}
        self.state_names = tuple(program.state)
        self.stored: tuple[str, ...] = ()
        self.outputs = len(program.loaded.info.outputs)

        def run(*flat: mx.array) -> tuple[mx.array, ...]:
            outputs, _, pending = program.run_traceable(flat, integers)
            self.stored = tuple(pending)
            return (*outputs, *pending.values())

        self.compiled = mx.compile(run)

    def run(self, arrays: Sequence[Any], state: Mapping[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        flat = [arrays[i] for i in self.tensors] + [state[name] for name in self.state_names]
        results = self.compiled(*flat)
        return list(results[: self.outputs]), dict(zip(self.stored, results[self.outputs :]))


