"""mlxir as an ExecuTorch backend: a partitioner, a `BackendDetails`, and a `.pte` runner.

    from executorch.exir import to_edge_transform_and_lower
    from mlxir.interop.executorch import MlxirPartitioner

    program = to_edge_transform_and_lower(ep, partitioner=[MlxirPartitioner()]).to_executorch()
    Path("model.pte").write_bytes(program.buffer)
    outputs = mlxir.load("model.pte")(*inputs)

- `MlxirPartitioner` tags the Edge nodes mlxir compiles. The verdict per node comes from
  `mlxir.conversions.node_support.why_unsupported`, which imports and lowers the node
  with the compiler's own code, so there is no second op list to drift. Parameters,
  buffers and constants used only inside a partition move into it (ExecuTorch's
  `tag_constant_data`), and so do mutated buffers (`tag_mutated_buffer`): their values
  become the mlxir program's state.
- ExecuTorch's `to_edge` rebuilds the Edge program's range constraints from its shape
  environment, where every dynamic size is at least 2 (torch's 0/1 specialization): a
  batch, length or cache exported with `min=0` or `min=1` would be refused below 2 by
  the delegate. `ops_to_not_decompose` (called by `to_edge_transform_and_lower` on the
  program before `to_edge`) notes the exported ranges of the user inputs' dims, and
  `partition` gives them back to the Edge program, whose ranges the delegates inherit.
- `MlxirBackend.preprocess` compiles a partition with `import_program` and the lowering
  pipeline (`lower-to-mlx` for the lowering machine's device, as `mlxir.lower` picks
  it, or the `pipeline` compile spec) and returns the `.mlxfb`
  bytes as the delegate payload. Weights travel inside the payload: a `.pte` from this
  backend is self-contained.
- `PteProgram` (what `mlxir.load("model.pte")` returns) runs a method whose
  instructions are mlxir delegate calls (one or several, chained through the method's
  values) and moves. A method that calls ATen kernels outside a delegate, another
  backend's delegate, or control flow is refused with a `ProgramError` that names what
  it found: mlxir runs only what it compiled, and ExecuTorch's runtime cannot run an
  mlxir payload (the backend has no C++ runtime).

`executorch` is an optional dependency (`pip install 'mlxir[executorch]'`).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast, final

import torch
from torch._ops import OpOverload
from torch.export import ExportedProgram
from torch.fx import Node

from mlxir.codegen.errors import ProgramError
from mlxir.runtime.loading import is_pte
from mlxir.support.quiet import quiet_torchao_import

try:
    with quiet_torchao_import():  # executorch.exir imports torchao
        import executorch.exir  # pyright: ignore[reportMissingTypeStubs, reportUnusedImport] (executorch ships no type stubs; imported for the torchao filter)  # noqa: F401
    from executorch.exir.backend.backend_details import BackendDetails, PreprocessResult  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)
    from executorch.exir.backend.compile_spec_schema import CompileSpec  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)
    from executorch.exir.backend.partitioner import (  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)
        DelegationSpec,
        Partitioner,
        PartitionResult,
    )
    from executorch.exir.backend.utils import tag_constant_data, tag_mutated_buffer  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)
except ModuleNotFoundError as error:  # only without the extra
    if error.name != "executorch":
        raise
    raise ImportError(
        "mlxir's ExecuTorch interop needs the executorch package: "
        "pip install 'mlxir[executorch]'"
    ) from error

BACKEND_ID = "MlxirBackend"
"""The delegate id written in `.pte` files: the `BackendDetails` subclass's name."""

PIPELINE_SPEC = "pipeline"
"""Compile spec key: an `mlx-opt` pass pipeline to lower with instead of the default
(`lower-to-mlx{target=generic}` makes a payload without the CPU target's rewrites)."""


# ---------------------------------------------------------------------------
# Ahead of time: backend and partitioner
# ---------------------------------------------------------------------------


@final
class MlxirBackend(BackendDetails):
    """Compiles an Edge partition to an mlxir `.mlxfb` program (the delegate payload)."""

    @staticmethod
    def preprocess(edge_program: ExportedProgram, compile_specs: list[CompileSpec]) -> PreprocessResult:
        from mlxir.codegen import serialize
        from mlxir.conversions.aten_to_mlx import lower
        from mlxir.conversions.torch_to_aten import import_program

        specs = {spec.key: spec.value for spec in compile_specs}
        unknown = sorted(set(specs) - {PIPELINE_SPEC})
        if unknown:
            raise ValueError(f"{BACKEND_ID}: unknown compile spec(s) {unknown}; known: {PIPELINE_SPEC}")
        pipeline = specs[PIPELINE_SPEC].decode() if PIPELINE_SPEC in specs else None
        module = import_program(edge_program)
        lower(module, pipeline)
        return PreprocessResult(processed_bytes=serialize(module))


class MlxirPartitioner(Partitioner):
    """Tags the nodes of an Edge program that mlxir compiles, in maximal partitions.

    After `partition`, `unsupported` maps each node left to ExecuTorch to the reason."""

    def __init__(self, pipeline: str | None = None) -> None:
        specs = [CompileSpec(PIPELINE_SPEC, pipeline.encode())] if pipeline else []
        super().__init__()
        self.delegation_spec = DelegationSpec(BACKEND_ID, specs)
        self.unsupported: dict[Node, str] = {}
        self._input_ranges: dict[tuple[str, int], Any] = {}

    def ops_to_not_decompose(
        self, ep: ExportedProgram
    ) -> tuple[list[OpOverload], None]:
        """The ops mlxir runs whole (`NATIVE_OPS`: attention, norms, linear, ...), when
        every call of the op in `ep` compiles; one that does not gives the op back to
        ExecuTorch's decomposition, since a kept op outside a delegate has no kernel."""
        from mlxir.conversions.node_support import why_unsupported
        from mlxir.conversions.torch_to_aten import NATIVE_OPS

        self._input_ranges = _input_dim_ranges(ep)
        native = set(NATIVE_OPS)
        kept: dict[OpOverload, bool] = {}
        for node in ep.graph.nodes:
            if node.op == "call_function" and node.target in native:
                kept[node.target] = kept.get(node.target, True) and why_unsupported(node) is None
        return [op for op, ok in kept.items() if ok], None

    def partition(self, exported_program: ExportedProgram) -> PartitionResult:
        from torch.fx.passes.infra.partitioner import CapabilityBasedPartitioner
        from torch.fx.passes.operator_support import OperatorSupportBase

        from mlxir.conversions.node_support import node_verdicts

        _widen_input_ranges(exported_program, self._input_ranges)
        verdicts = node_verdicts(exported_program.graph.nodes)
        self.unsupported = {node: why for node, why in verdicts.items() if why is not None}

        class Support(OperatorSupportBase):
            def is_node_supported(self, submodules: Any, node: Node) -> bool:
                return node.op == "call_function" and verdicts.get(node, "") is None

        partitions = CapabilityBasedPartitioner(
            exported_program.graph_module,
            Support(),
            allows_single_node_partition=True,
        ).propose_partitions()
        tags: dict[str, DelegationSpec] = {}
        for number, partition in enumerate(partitions):
            tag = f"mlxir_{number}"
            tags[tag] = self.delegation_spec
            for node in partition.nodes:
                node.meta["delegation_tag"] = tag
        if partitions:
            tag_constant_data(exported_program)
            tag_mutated_buffer(exported_program)
            _keep_split_mutations_outside(exported_program)
        return PartitionResult(tagged_exported_program=exported_program, partition_tags=tags)

    def describe_unsupported(self) -> str:
        """One line per op left outside the delegates: count and reason."""
        from mlxir.conversions.torch_to_aten import target_name

        counts = Counter(target_name(node) for node in self.unsupported)
        reasons = {target_name(node): why for node, why in self.unsupported.items()}
        return "\n".join(f"{target} ({n}x): {reasons[target]}" for target, n in counts.items())


def _range_constraints(ep: ExportedProgram) -> dict[Any, Any]:
    """`ep.range_constraints` (symbol → `ValueRanges`), typed."""
    return cast(dict[Any, Any], ep.range_constraints)  # pyright: ignore[reportUnknownMemberType] (torch annotates it with a bare generic ValueRanges)


def _symbol(size: torch.SymInt) -> Any:
    """The sympy expression of a symbolic size."""
    return cast(Any, size.node.expr)  # pyright: ignore[reportUnknownMemberType] (torch leaves SymInt.node unannotated)


def _input_dim_ranges(ep: ExportedProgram) -> dict[tuple[str, int], Any]:
    """The range of each dynamic dim of each user input, by (input name, axis)."""
    from torch.export.graph_signature import InputKind

    users = {spec.arg.name for spec in ep.graph_signature.input_specs if spec.kind is InputKind.USER_INPUT}
    ranges: dict[tuple[str, int], Any] = {}
    for node in ep.graph.nodes:
        if node.op != "placeholder" or node.name not in users:
            continue
        value = node.meta.get("val")
        shape: Sequence[int | torch.SymInt] = getattr(value, "shape", ())
        for axis, size in enumerate(shape):
            if isinstance(size, torch.SymInt) and _symbol(size) in _range_constraints(ep):
                ranges[(node.name, axis)] = _range_constraints(ep)[_symbol(size)]
    return ranges


def _widen_input_ranges(ep: ExportedProgram, exported: dict[tuple[str, int], Any]) -> None:
    """Lowers the bound of each user-input dim of `ep` to the one it was exported with
    (`exported`, from `_input_dim_ranges`) where that is lower and the upper bounds agree."""
    from torch.utils._sympy.value_ranges import ValueRanges

    placeholders = {node.name: node for node in ep.graph.nodes if node.op == "placeholder"}
    for (name, axis), current in _input_dim_ranges(ep).items():
        wanted = exported.get((name, axis))
        if wanted is None or wanted.upper != current.upper or wanted.lower >= current.lower:
            continue
        symbol = placeholders[name].meta["val"].shape[axis].node.expr
        _range_constraints(ep)[symbol] = ValueRanges(wanted.lower, current.upper)


def _keep_split_mutations_outside(ep: ExportedProgram) -> None:
    """A delegate owns a mutated buffer only if it also computes the buffer's new value;
    otherwise (the read and the write in different partitions, or the write outside
    any) the buffer stays in the method and is passed in, which ExecuTorch requires."""
    from torch.export.graph_signature import OutputKind

    signature = ep.graph_signature
    written_by = {
        spec.target: spec.arg.name
        for spec in signature.output_specs
        if spec.kind is OutputKind.BUFFER_MUTATION
    }
    nodes = {node.name: node for node in ep.graph.nodes}
    for placeholder, buffer in signature.inputs_to_buffers.items():
        if buffer not in written_by or placeholder not in nodes:
            continue
        node = nodes[placeholder]
        writer = nodes.get(written_by[buffer])
        writer_tag = writer.meta.get("delegation_tag") if writer is not None else None
        if node.meta.get("delegation_tag") != writer_tag:
            node.meta.pop("delegation_tag", None)


# ---------------------------------------------------------------------------
# Running a .pte
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Delegate:
    """One delegate of a `.pte` method."""

    index: int
    backend: str
    payload: bytes


@dataclass(frozen=True)
class _Call:
    """A delegate call: the method value indices it reads and writes."""

    delegate: int
    inputs: tuple[int, ...]
    outputs: tuple[int, ...]


@dataclass(frozen=True)
class _Move:
    source: int
    target: int


class PteProgram:
    """A `.pte` method whose work is done by mlxir delegates, ready to call.

    Call it like a `Program`: positional inputs (torch, NumPy or MLX arrays; ints for
    SymInt inputs); it returns one output, or a tuple, of the inputs' kind."""

    def __init__(self, data: bytes | bytearray | memoryview, *, method: str = "forward", verify: bool = True):
        from mlxir.runtime.program import Program

        self.delegates, plan = _read_plan(bytes(memoryview(data)), method)
        self.method = method
        refusals = _refusals(plan, self.delegates)
        if refusals:
            raise ProgramError(
                f"mlxir cannot run method '{method}' of this .pte: it runs only methods whose "
                "instructions are mlxir delegate calls (export with MlxirPartitioner and make "
                "every op supported, or run the file with ExecuTorch's runtime). Found:\n"
                + "\n".join(f"  {line}" for line in refusals)
            )
        self.programs: dict[int, Program] = {}
        for delegate in self.delegates:
            try:
                self.programs[delegate.index] = Program(delegate.payload, verify=verify)
            except ProgramError as error:
                raise ProgramError(f"delegate {delegate.index}: {error}") from None
        self._steps = self._schedule(plan)
        self._inputs: tuple[int, ...] = tuple(plan.inputs)
        self._outputs: tuple[int, ...] = tuple(plan.outputs)
        self._values: dict[int, Any] = _constant_values(plan)
        self._check_dataflow()

    def _check_dataflow(self) -> None:
        """Every value a step reads is a method input, a known constant or an earlier
        step's result (a weight kept outside the delegates is not)."""
        defined = set(self._inputs) | set(self._values)
        for step in self._steps:
            reads = (step.source,) if isinstance(step, _Move) else step.inputs
            missing = [v for v in reads if v not in defined]
            if missing:
                where = "a move" if isinstance(step, _Move) else f"delegate {step.delegate}"
                raise ProgramError(
                    f"{where} reads method value(s) {missing}, which are neither inputs nor "
                    "computed by a delegate (a tensor stored outside the delegates: export "
                    "with MlxirPartitioner, which keeps weights inside the payload)"
                )
            defined |= {step.target} if isinstance(step, _Move) else set(step.outputs)
        missing = [v for v in self._outputs if v not in defined]
        if missing:
            raise ProgramError(f"the method returns value(s) {missing} that nothing computes")

    def _schedule(self, plan: Any) -> list[_Call | _Move]:
        from executorch.exir.schema import DelegateCall, MoveCall  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)

        steps: list[_Call | _Move] = []
        for instruction in plan.chains[0].instructions:
            args = instruction.instr_args
            if isinstance(args, DelegateCall):
                program = self.programs[args.delegate_index]
                count = len(program.inputs)
                steps.append(_Call(args.delegate_index, tuple(args.args[:count]), tuple(args.args[count:])))
            elif isinstance(args, MoveCall):
                steps.append(_Move(args.move_from, args.move_to))
        return steps

    @property
    def inputs(self) -> list[Any]:
        """The input specs of the first delegate that reads each method input."""
        specs: dict[int, Any] = {}
        for step in self._steps:
            if isinstance(step, _Call):
                for position, value in enumerate(step.inputs):
                    specs.setdefault(value, self.programs[step.delegate].inputs[position])
        return [specs.get(value) for value in self._inputs]

    def __call__(self, *inputs: Any) -> Any:
        """Runs the method on its flat inputs (a `.pte` method keeps no call
        signature mlxir reads): one value, or a tuple of several."""
        outputs = self.call_flat(*inputs)
        return outputs[0] if len(outputs) == 1 else outputs

    def call_flat(self, *inputs: Any) -> tuple[Any, ...]:
        """Runs the method on its flat inputs, in order; its outputs as a tuple."""
        from mlxir.runtime.program import InputError

        if len(inputs) != len(self._inputs):
            raise InputError(f"method '{self.method}' takes {len(self._inputs)} inputs, got {len(inputs)}")
        values = dict(self._values)
        values.update(zip(self._inputs, inputs))
        for step in self._steps:
            if isinstance(step, _Move):
                values[step.target] = values[step.source]
                continue
            results = self.programs[step.delegate].call_flat(*(values[v] for v in step.inputs))
            if len(results) != len(step.outputs):
                raise ProgramError(
                    f"delegate {step.delegate} returned {len(results)} values, the method "
                    f"expects {len(step.outputs)}"
                )
            values.update(zip(step.outputs, results))
        return tuple(values[v] for v in self._outputs)

    def reset_state(self) -> None:
        for program in self.programs.values():
            program.reset_state()


def read_delegates(data: bytes) -> dict[str, list[Delegate]]:
    """Every method's delegates (for `mlxir inspect`)."""
    program = _deserialize(data)
    return {plan.name: _delegates_of(program, plan) for plan in program.execution_plan}


def _deserialize(data: bytes) -> Any:
    from executorch.exir._serialize._program import deserialize_pte_binary  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)

    if not is_pte(data):
        raise ProgramError("not an ExecuTorch .pte file (no ET file identifier)")
    try:
        return deserialize_pte_binary(data).program
    except Exception as error:  # the deserializer raises whatever its parser meets
        raise ProgramError(f"malformed .pte: {type(error).__name__}: {error}") from None


def _delegates_of(program: Any, plan: Any) -> list[Delegate]:
    from executorch.exir.schema import DataLocation  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)

    delegates: list[Delegate] = []
    for index, delegate in enumerate(plan.delegates):
        if delegate.processed.location != DataLocation.INLINE:
            raise ProgramError(f"delegate {index} of '{plan.name}': its data segment is missing")
        blobs = program.backend_delegate_data
        if not 0 <= delegate.processed.index < len(blobs):
            raise ProgramError(f"delegate {index} of '{plan.name}': data index out of range")
        delegates.append(Delegate(index, delegate.id, bytes(blobs[delegate.processed.index].data)))
    return delegates


def _read_plan(data: bytes, method: str) -> tuple[list[Delegate], Any]:
    program = _deserialize(data)
    plans = {plan.name: plan for plan in program.execution_plan}
    if method not in plans:
        raise ProgramError(f"the .pte has no method '{method}' (it has: {', '.join(plans) or 'none'})")
    plan = plans[method]
    if len(plan.chains) != 1:
        raise ProgramError(f"method '{method}' has {len(plan.chains)} chains; mlxir runs one")
    return _delegates_of(program, plan), plan


def _refusals(plan: Any, delegates: Sequence[Delegate]) -> list[str]:
    from executorch.exir.schema import DelegateCall, FreeCall, KernelCall, MoveCall  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)

    kernels: Counter[str] = Counter()
    other: list[str] = []
    for instruction in plan.chains[0].instructions:
        args = instruction.instr_args
        if isinstance(args, KernelCall):
            operator = plan.operators[args.op_index]
            kernels[f"{operator.name}.{operator.overload}" if operator.overload else operator.name] += 1
        elif isinstance(args, DelegateCall):
            backend = delegates[args.delegate_index].backend
            if backend != BACKEND_ID:
                other.append(f"a call to a {backend} delegate (mlxir runs only {BACKEND_ID})")
        elif not isinstance(args, MoveCall | FreeCall):
            other.append(f"a {type(args).__name__} instruction (control flow)")
    lines = [f"{name}: {n} call(s) outside any delegate" for name, n in sorted(kernels.items())]
    return lines + other


def _constant_values(plan: Any) -> dict[int, Any]:
    """Method values that are known before the call: ints, floats, bools, None."""
    from executorch.exir.schema import Bool, Double, Int, Null  # pyright: ignore[reportMissingTypeStubs] (executorch ships no type stubs)

    known: dict[int, Any] = {}
    for index, value in enumerate(plan.values):
        payload = value.val
        if isinstance(payload, Int):
            known[index] = payload.int_val
        elif isinstance(payload, Double):
            known[index] = float(payload.double_val)
        elif isinstance(payload, Bool):
            known[index] = payload.bool_val
        elif isinstance(payload, Null):
            known[index] = None
    return known
