"""Where does a compiled program stop matching PyTorch? Two answers, against eager
PyTorch on the same inputs.

    mlxir.debug.compare(ep, x).first_divergence    # mlxir debug model.pt2 --input x.npy
    mlxir.debug.compare(ep, x, module=m)           # ... --module m.mlir (an mlx module)
    mlxir.debug.bisect_passes(ep, x).first_divergent  # mlxir debug --bisect ...

`compare` (the second half of this file) takes every graph node's value: of the
program it compiles, or of a given mlx-level module, found there by the location each
op carries (`support/locations.py`). `bisect_passes` takes the outputs after each pass:

The program is imported, then the pipeline runs one pass at a time. After each pass
whose result is mlx-level, the module is serialized, loaded and run on the inputs,
and its outputs are compared with eager PyTorch's (`ep.module()` on the same inputs).
The first pass whose outputs leave the tolerance while the previous pass's were
within it is the one reported, with the diff of the IR it made. `optimize-mlx` is run
as its patterns, one pass each (`fold-known-dims`, each pattern the stage runs in the
catalog's order, `fold-known-dims`: `conversions/pipelines.py`'s
`optimize_mlx_passes`), so that a miscompile in one pattern is named. Each of those
patterns keeps the meaning of its input on its own, so a divergence names a pattern.

Tolerances (`TOLERANCES`): max |got - expected| <= atol + rtol * |expected|, by dtype:
float32 1e-4 and 1e-4, float16 1e-2 and 1e-2, bfloat16 3e-2 and 3e-2; `atol=`/`rtol=`
(`--atol`/`--rtol`) set them for every float dtype. Integer and bool outputs must be
equal.
"""

from __future__ import annotations

import contextlib
import difflib
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from io import StringIO
from typing import TYPE_CHECKING, Any, cast

import numpy as np

if TYPE_CHECKING:
    from xdsl.dialects.builtin import TensorType
    from xdsl.ir import Attribute

TOLERANCES: dict[str, tuple[float, float]] = {
    "float32": (1e-4, 1e-4),
    "float16": (1e-2, 1e-2),
    "bfloat16": (3e-2, 3e-2),
}
"""Output dtype → (rtol, atol) for comparisons with eager PyTorch."""

DIFF_LINES = 80
"""The most lines of IR diff a report prints."""


@dataclass
class PassOutcome:
    """The outputs after one pass, measured against eager PyTorch."""

    name: str
    max_abs_error: float | None
    """None: the module is not mlx-level yet, so it is not run."""
    within_tolerance: bool | None
    diff: str = ""
    """The IR the pass changed (unified diff; weights' values left out)."""

    def row(self, width: int) -> str:
        """The pass's line of `BisectReport.table`, its name in `width` columns."""
        if self.max_abs_error is None:
            return f"{self.name:<{width}}  {'-':>12}  (aten level: not run)"
        verdict = "ok" if self.within_tolerance else "BEYOND TOLERANCE"
        return f"{self.name:<{width}}  {self.max_abs_error:>12.3g}  {verdict}"


@dataclass
class BisectReport:
    passes: list[PassOutcome] = field(default_factory=list[PassOutcome])

    @property
    def first_divergent(self) -> PassOutcome | None:
        """The first pass that takes the outputs beyond tolerance."""
        ok = True
        for outcome in self.passes:
            if outcome.within_tolerance is None:
                continue
            if ok and not outcome.within_tolerance:
                return outcome
            ok = outcome.within_tolerance
        return None

    def table(self) -> str:
        width = self.width([p.name for p in self.passes])
        return "\n".join([self.header(width), *(p.row(width) for p in self.passes), self.summary()])

    @staticmethod
    def width(names: Sequence[str]) -> int:
        """The width of the table's pass column, for passes of these names."""
        return max([len(name) for name in names] + [4])

    @staticmethod
    def header(width: int) -> str:
        return f"{'pass':<{width}}  {'max |error|':>12}  vs eager PyTorch"

    def summary(self) -> str:
        found = self.first_divergent
        return "no pass takes the outputs beyond tolerance" if found is None else f"first divergent pass: {found.name}"


def _spec(pipeline: str | None) -> str:
    """`pipeline`, by default lower-to-mlx for the device this process computes on (the
    program is compared as it runs here)."""
    from mlxir.conversions.pipelines import default_pipeline
    from mlxir.runtime.backend import host_target

    return pipeline or default_pipeline(host_target())


def pipeline_passes(pipeline: str | None) -> list[str]:
    """The passes bisection runs one by one: `pipeline` (default lower-to-mlx for this
    device, `host_target()`) with lower-to-mlx and optimize-mlx written out as their
    passes and patterns."""
    import re

    from mlxir.conversions.pipelines import optimize_mlx_passes
    from mlxir.conversions.pipelines import pipeline_passes as lowering_passes
    from mlxir.transforms.catalog import OPTIMIZE

    optimize = optimize_mlx_passes()
    names: list[str] = []
    for name in _spec(pipeline).split(","):
        name = name.strip()
        lowering = re.fullmatch(r"lower-to-mlx(?:\{\s*target\s*=\s*(\w+)\s*\})?", name)
        if lowering is not None:
            for inner in lowering_passes(lowering.group(1) or "generic"):
                names.extend(optimize if inner == OPTIMIZE else [inner])
        elif name == OPTIMIZE:
            names.extend(optimize)
        elif name:
            names.append(name)
    return names


@dataclass(frozen=True)
class Tolerance:
    """The float tolerances a comparison uses: each None is the dtype's own."""

    atol: float | None = None
    rtol: float | None = None

    def of(self, dtype: str) -> tuple[float, float]:
        """(rtol, atol) for a float of `dtype`."""
        rtol, atol = TOLERANCES.get(dtype, TOLERANCES["float32"])
        return (rtol if self.rtol is None else self.rtol), (atol if self.atol is None else self.atol)


def bisect_passes(
    ep: Any,
    *args: Any,
    pipeline: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    on_pass: Callable[[PassOutcome], None] | None = None,
    **kwargs: Any,
) -> BisectReport:
    """Runs `pipeline` on `ep`'s import one pass at a time and compares the program's
    outputs after each pass with eager PyTorch's on `args`/`kwargs`; `on_pass` is
    given each pass's outcome as soon as it is measured (a long bisection shows its
    progress: `mlxir debug --bisect` prints the table row by row)."""
    import torch
    from xdsl.passes import PassPipeline

    from mlxir.codegen import serialize
    from mlxir.conversions.registry import registered_passes
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.dialects.context import make_context
    from mlxir.runtime.program import Program

    with _inputs_checked():
        with torch.no_grad():
            expected = _flat(ep.module()(*_copied(args), **_copied(kwargs)))
    module = import_program(ep)
    ctx = make_context()
    available = registered_passes()
    report = BisectReport()
    before = _ir_text(module)
    for name in pipeline_passes(pipeline):
        if name not in available:
            raise ValueError(f"unknown pass '{name}'")
        PassPipeline.parse_spec(available, name).apply(ctx, module)
        module.verify()
        after = _ir_text(module)
        diff = "".join(difflib.unified_diff(before.splitlines(True), after.splitlines(True), "before", name, n=1))
        before = after
        if _is_mlx_level(module):
            got = Program(serialize(module, verify=False), verify=False, compile=False)(*_copied(args), **_copied(kwargs))
            error, within = _compare(expected, _flat(got), Tolerance(atol, rtol))
            outcome = PassOutcome(name, error, within, diff)
        else:
            outcome = PassOutcome(name, None, None, diff)
        report.passes.append(outcome)
        if on_pass is not None:
            on_pass(outcome)
    return report


@dataclass(frozen=True)
class _Leaf:
    """An output or node value as NumPy (floats as float32: NumPy has no bfloat16) and
    the dtype it had, which picks its tolerance."""

    array: np.ndarray
    dtype: str


def _flat(value: Any) -> list[_Leaf]:
    import torch
    from torch.utils._pytree import tree_leaves

    leaves: list[_Leaf] = []
    for leaf in tree_leaves(value):
        if isinstance(leaf, torch.Tensor):
            array = leaf.detach().float().numpy() if leaf.is_floating_point() else leaf.numpy()
            leaves.append(_Leaf(array, str(leaf.dtype).removeprefix("torch.")))
        else:
            array = np.asarray(leaf)
            leaves.append(_Leaf(array, str(array.dtype)))
    return leaves


def _compare(expected: Sequence[_Leaf], got: Sequence[_Leaf], tolerance: Tolerance) -> tuple[float, bool]:
    """The largest absolute error over the outputs, and whether each is within its
    dtype's tolerance (floats) or equal (the rest)."""
    if len(expected) != len(got):
        return float("inf"), False
    each = [_metrics(e, g, tolerance) for e, g in zip(expected, got)]
    return max((m.max_abs for m in each), default=0.0), all(m.within for m in each)


@dataclass(frozen=True)
class _Metrics:
    max_abs: float
    max_rel: float
    cosine: float
    out_of_tolerance: float
    within: bool


def _metrics(expected_leaf: _Leaf, got_leaf: _Leaf, tolerance: Tolerance) -> _Metrics:
    """How far `got` is from `expected`: floats within the tolerance of `expected`'s
    dtype, other values equal; NaN where both have NaN counts as equal."""
    expected, got = expected_leaf.array, got_leaf.array
    if expected.shape != got.shape:
        return _Metrics(float("inf"), float("inf"), 0.0, 1.0, False)
    e, g = expected.astype(np.float64), got.astype(np.float64)
    if expected.dtype.kind == "f":
        rtol, atol = tolerance.of(expected_leaf.dtype)
    else:
        rtol, atol = 0.0, 0.0
    close = np.isclose(g, e, rtol=rtol, atol=atol, equal_nan=True)
    diff = np.nan_to_num(np.where(np.isnan(e) & np.isnan(g), 0.0, np.abs(g - e)), nan=np.inf)
    max_abs = float(diff.max()) if diff.size else 0.0
    scale = np.abs(e)
    max_rel = float((diff / np.where(scale > 0, scale, 1.0)).max()) if diff.size else 0.0
    fe, fg = np.nan_to_num(e.ravel()), np.nan_to_num(g.ravel())
    norms = float(np.linalg.norm(fe) * np.linalg.norm(fg))
    cosine = float(fe @ fg / norms) if norms > 0 else (1.0 if np.array_equal(fe, fg) else 0.0)
    out = float(1.0 - close.mean()) if close.size else 0.0
    return _Metrics(max_abs, max_rel, cosine, out, bool(close.all()))


def _is_mlx_level(module: Any) -> bool:
    return not any(op.name.startswith("aten.") for op in module.walk())


def _ir_text(module: Any) -> str:
    """The module as text with each global's value left out (a weight prints as
    megabytes of hex): a pass that rewrites weights shows as their types changing."""
    from xdsl.printer import Printer

    from mlxir.dialects import mlx

    lines: list[str] = []
    for op in module.ops:
        if isinstance(op, mlx.GlobalOp):
            lines.append(f"mlx.global @{op.sym_name.data} ({op.kind.data}) : {op.type}\n")
        else:
            text = StringIO()
            Printer(stream=text).print_op(op)
            lines.append(text.getvalue() + "\n")
    return "".join(lines)


def diff_excerpt(diff: str) -> str:
    """At most `DIFF_LINES` lines of a diff, saying how many were left out."""
    lines = diff.splitlines()
    if len(lines) <= DIFF_LINES:
        return diff
    return "\n".join([*lines[:DIFF_LINES], f"... ({len(lines) - DIFF_LINES} more lines)"])


# ---------------------------------------------------------------------------
# First divergence: every node's value, compiled and eager
# ---------------------------------------------------------------------------


@dataclass
class NodeComparison:
    """One graph node's value in the compiled program against eager PyTorch's."""

    node: str
    target: str
    location: str
    max_abs_error: float
    max_rel_error: float
    cosine: float
    out_of_tolerance: float
    """The fraction of elements beyond the tolerance."""
    within_tolerance: bool
    inputs: tuple[str, ...]
    """The compared nodes this node reads."""
    mlx_op: str = ""
    """The mlx op that computes the node's value (`mlx.addmm`), "" where none does
    (the value is an input)."""

    def row(self) -> str:
        verdict = "ok" if self.within_tolerance else "DIVERGES"
        return (
            f"{self.node:<28} {self.target:<34} {self.mlx_op:<20} {self.max_abs_error:>10.3g} "
            f"{self.max_rel_error:>10.3g} {self.cosine:>9.6f} {self.out_of_tolerance:>7.2%}  {verdict}  "
            f"{self.location}"
        )


@dataclass
class DivergenceReport:
    nodes: list[NodeComparison] = field(default_factory=list[NodeComparison])
    eager: dict[str, Any] = field(default_factory=dict[str, Any], repr=False)
    """Every node's eager value by name (the inputs of a reproducer)."""
    graph: Any = field(default=None, repr=False)
    """The exported graph the node names refer to."""
    module: Any = field(default=None, repr=False)
    """With `compare(module=...)`: the module run, returning each compared node's value
    after its outputs, in the order of `nodes`."""
    inputs: list[Any] = field(default_factory=list[Any], repr=False)
    """The program's flat inputs (tensors and ints), for a reproducer."""

    @property
    def first_divergence(self) -> NodeComparison | None:
        """The first node, in program order, beyond tolerance while every compared
        node it reads is within it: where the program stops matching PyTorch."""
        verdicts = {c.node: c.within_tolerance for c in self.nodes}
        for comparison in self.nodes:
            if not comparison.within_tolerance and all(verdicts.get(i, True) for i in comparison.inputs):
                return comparison
        return None

    def table(self, every_node: bool = False) -> str:
        header = (
            f"{'node':<28} {'ATen op':<34} {'mlx op':<20} {'max abs':>10} {'max rel':>10} {'cosine':>9} "
            f"{'out tol':>7}  verdict  source"
        )
        found = self.first_divergence
        rows = [c.row() for c in self.nodes] if every_node else ([found.row()] if found else [])
        summary = (
            f"first divergence: {found.node} ({found.target}, computed by {found.mlx_op or 'no op'}) "
            f"at {found.location}"
            if found
            else f"no divergence: {len(self.nodes)} node values within tolerance of eager PyTorch"
        )
        return "\n".join([header, *rows, summary] if rows else [summary])


def compare(
    ep: Any,
    *args: Any,
    module: Any = None,
    pipeline: str | None = None,
    atol: float | None = None,
    rtol: float | None = None,
    **kwargs: Any,
) -> DivergenceReport:
    """Every node's value in the compiled program against eager PyTorch's on
    `args`/`kwargs`, in program order.

    The program is `ep` compiled with `pipeline` (default lower-to-mlx), or `module`:
    an mlx-level module (a `ModuleOp`, or the path of its text as `mlxir compile
    --emit mlx` prints it) that a user edited or made with their own passes.

    Compiling, each node's aten result is made an output of the program before the
    lowering, so it is computed and kept: a value observed this way cannot be fused
    away, and the fusions around it do not happen (`bisect_passes` finds a pass that
    changes the outputs). Nodes torch's decompositions replaced are compared at the
    nodes they became only where those exist in the exported graph.

    With `module`, nothing is added before the fusions: a node's value is found by the
    location every op carries, `loc("node"(...))`, as the result of the node's last op
    (in the module's order) with the node's dtype and rank, and static dims equal to
    eager's; nodes without one are not compared. A global the text names without a
    value is bound to the global of the same name and type in `ep` compiled with
    `pipeline`."""
    import torch

    from mlxir.codegen import serialize
    from mlxir.conversions.torch_to_aten import describe_location
    from mlxir.runtime.program import Program
    from mlxir.runtime.signature import bind_inputs

    eager = _eager_values(ep, _copied(args), _copied(kwargs))
    if module is None:
        lowered, names, computed_by = _observed_by_value(ep, eager, pipeline)
    else:
        lowered, names, computed_by = _observed_by_location(_mlx_module(module), ep, eager, pipeline)
    program = Program(serialize(lowered), verify=False, compile=False)
    with torch.no_grad():
        _, values = program(*_copied(args), **_copied(kwargs))
    nodes = {n.name: n for n in ep.graph.nodes}
    compared = set(names)
    report = DivergenceReport(eager=eager, graph=ep.graph)
    if module is not None:
        report.module = lowered
        assert program.signature is not None  # compiled from an ExportedProgram
        report.inputs = [value for _, value in bind_inputs(program.signature, args, kwargs)]
    for name, got, mlx_op in zip(names, values, computed_by):
        node = nodes[name]
        expected = _flat(eager[name])[0]
        report.nodes.append(
            _node_comparison(
                node.name,
                str(node.target),
                describe_location(node),
                expected,
                _flat(got)[0],
                tuple(i.name for i in node.all_input_nodes if i.name in compared),
                mlx_op,
                Tolerance(atol, rtol),
            )
        )
    return report


def _observed_by_value(ep: Any, eager: dict[str, Any], pipeline: str | None) -> tuple[Any, list[str], list[str]]:
    """`ep` compiled with every compared node's aten result returned too: the module,
    the nodes' names and the mlx op computing each."""
    import torch
    from xdsl.dialects.builtin import TensorType

    from mlxir.conversions.pipelines import lower
    from mlxir.conversions.torch_to_aten import import_program

    observed: dict[str, Any] = {}
    module = import_program(ep, observed=observed)
    names = [
        n for n, v in observed.items()
        if isinstance(eager.get(n), torch.Tensor) and isinstance(v.type, TensorType)
    ]
    _return_also(module, [observed[n] for n in names])
    lower(module, _spec(pipeline), verify=False)
    return module, names, [_computed_by(value) for value in _observations(module)]


def _observed_by_location(
    module: Any, ep: Any, eager: dict[str, Any], pipeline: str | None
) -> tuple[Any, list[str], list[str]]:
    """`module` with each node's value, found by its ops' locations, returned too."""
    import torch
    from xdsl.dialects.builtin import TensorType

    from mlxir.support.locations import node_of, result_locations

    _bind_weights(module, ep, pipeline)
    compared = {
        n.name: eager[n.name]
        for n in ep.graph.nodes
        if n.op == "call_function" and isinstance(eager.get(n.name), torch.Tensor)
    }
    found: dict[str, Any] = {}
    for op in _forward(module).body.block.ops:
        for result, loc in zip(op.results, result_locations(op)):
            name = node_of(loc)
            result_type = result.type
            if name is None or name not in compared or not isinstance(result_type, TensorType):
                continue
            if _may_hold(cast("TensorType[Attribute]", result_type), compared[name]):
                found[name] = result
    if not found:
        raise ValueError(
            "no op of the module names a node of the exported program: give the text "
            "`mlxir compile --emit mlx` prints, which keeps each op's loc(\"node\"(...))"
        )
    names = [n for n in compared if n in found]  # the exported graph's order
    _return_also(module, [found[n] for n in names])
    return module, names, [_computed_by(found[n]) for n in names]


def _may_hold(tensor_type: TensorType[Attribute], value: Any) -> bool:
    """Whether a value of `tensor_type` may be eager's `value`: the same dtype and
    rank, and static dims equal to its dims."""
    from mlxir.support import dtypes

    shape = tensor_type.get_shape()
    dtype = dtypes.of_ir(tensor_type.get_element_type())
    if dtype is None or dtype.name != str(value.dtype).removeprefix("torch.") or len(shape) != value.dim():
        return False
    return all(d < 0 or d == size for d, size in zip(shape, value.shape))


def _mlx_module(module: Any) -> Any:
    """`module` (a ModuleOp, copied, or the path of its text), verified and mlx-level."""
    from pathlib import Path

    from xdsl.dialects.builtin import ModuleOp
    from xdsl.utils.exceptions import VerifyException

    from mlxir.dialects.context import parse_mlir_file

    module = module.clone() if isinstance(module, ModuleOp) else parse_mlir_file(Path(module))
    try:
        module.verify()
    except VerifyException as error:
        raise ValueError(f"the module does not verify: {error}") from error
    if not _is_mlx_level(module):
        raise ValueError("the module holds aten ops: give an mlx-level module (mlxir compile --emit mlx)")
    return module


def _bind_weights(module: Any, ep: Any, pipeline: str | None) -> None:
    """Gives each `mlx.global` without a value the value of the same global in `ep`
    compiled with `pipeline`; refuses, naming them all, the globals it has no value of
    the same type for."""
    from mlxir.conversions.pipelines import lower
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.dialects import mlx

    unbound = [g for g in module.ops if isinstance(g, mlx.GlobalOp) and g.value is None]
    if not unbound:
        return
    reference = import_program(ep)
    lower(reference, _spec(pipeline), verify=False)
    compiled = {g.sym_name.data: g for g in reference.ops if isinstance(g, mlx.GlobalOp)}
    refused: list[str] = []
    for g in unbound:
        source = compiled.get(g.sym_name.data)
        if source is None or source.type != g.type or source.value is None:
            what = "no such global" if source is None else f"a global of type {source.type}"
            refused.append(f"@{g.sym_name.data} : {g.type} (the .pt2 compiles to {what})")
            continue
        g.properties["value"] = source.value
    if refused:
        raise ValueError(
            "globals without a value that the .pt2 cannot give: " + "; ".join(refused)
        )


def _forward(module: Any) -> Any:
    from xdsl.dialects import func

    return next(op for op in module.ops if isinstance(op, func.FuncOp))


def _return_also(module: Any, values: Sequence[Any]) -> None:
    """Makes the forward function return `values` after its outputs (before the inputs
    it writes back): the program then returns `(outputs, tuple of values)`."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType

    from mlxir.codegen.signature import SIGNATURE_ATTR, Signature, Tree

    forward = _forward(module)
    ret = forward.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    num_inputs = len(forward.body.block.args)
    signature = Signature.from_attr(forward.attributes[SIGNATURE_ATTR], num_inputs, len(ret.operands))
    leaves = signature.outputs.num_leaves
    outputs = [*ret.operands[:leaves], *values, *ret.operands[leaves:]]
    new_ret = func.ReturnOp(*outputs)
    new_ret.location = ret.location
    forward.body.block.insert_op_before(new_ret, ret)
    forward.body.block.erase_op(ret)
    forward.function_type = FunctionType.from_lists(
        list(forward.function_type.inputs.data), [v.type for v in outputs]
    )
    observations = Tree("tuple", tuple(Tree("leaf") for _ in values))
    written_back = tuple((output + len(values), position) for output, position in signature.mutated)
    forward.attributes[SIGNATURE_ATTR] = Signature(
        signature.inputs, Tree("tuple", (signature.outputs, observations)), signature.arg_names, written_back
    ).to_attr()


def _observations(module: Any) -> list[Any]:
    """The values `_return_also` made outputs, in order: after the outputs' leaves,
    before the inputs written back."""
    from mlxir.codegen.signature import SIGNATURE_ATTR, Signature

    forward = _forward(module)
    returned = list(forward.body.block.last_op.operands)
    signature = Signature.from_attr(forward.attributes[SIGNATURE_ATTR], len(forward.body.block.args), len(returned))
    outputs, observed = signature.outputs.children
    return returned[outputs.num_leaves : outputs.num_leaves + observed.num_leaves]


def _computed_by(value: Any) -> str:
    from xdsl.ir import OpResult

    return value.op.name if isinstance(value, OpResult) else ""


def _copied(value: Any) -> Any:
    """`value` with each tensor copied: a module that writes its input (`x.mul_(2)`)
    must not change the user's tensors, nor the input of the next run."""
    import torch
    from torch.utils._pytree import tree_map

    def copied(leaf: Any) -> Any:
        return leaf.clone() if isinstance(leaf, torch.Tensor) else leaf

    return tree_map(copied, value)


def _eager_values(ep: Any, args: Sequence[Any], kwargs: dict[str, Any]) -> dict[str, Any]:
    """Each placeholder's and call_function node's value when eager PyTorch runs the
    exported graph."""
    import torch

    values: dict[str, Any] = {}

    class Recorder(torch.fx.Interpreter):
        def run_node(self, n: torch.fx.Node) -> Any:
            result = super().run_node(n)
            if n.op in ("placeholder", "call_function"):
                values[n.name] = result
            return result

    with _inputs_checked():
        flat = ep._graph_module_flat_inputs(tuple(args), dict(kwargs))
        with torch.no_grad():
            Recorder(ep.graph_module).run(*flat)
    return values


@contextlib.contextmanager
def _inputs_checked() -> Generator[None, None, None]:
    """Inputs the exported program refuses (a shape its guards reject, a wrong
    structure) are the user's error: a ValueError that says so, not torch's traceback."""
    try:
        yield
    except Exception as error:  # torch raises assertion, runtime and value errors alike
        # torch's first line says what is wrong; the rest is its graph and traceback
        reason = (str(error).strip() or type(error).__name__).splitlines()[0]
        raise ValueError(f"eager PyTorch cannot run the exported program on these inputs: {reason}") from error


def _node_comparison(
    name: str,
    target: str,
    location: str,
    expected: _Leaf,
    got: _Leaf,
    inputs: tuple[str, ...],
    mlx_op: str,
    tolerance: Tolerance,
) -> NodeComparison:
    m = _metrics(expected, got, tolerance)
    return NodeComparison(
        name, target, location, m.max_abs, m.max_rel, m.cosine, m.out_of_tolerance, m.within, inputs, mlx_op
    )


def write_repro(report: DivergenceReport, directory: str, pipeline: str | None = None) -> list[str]:
    """A standalone reproducer of the first divergence in `directory`: the node alone
    exported at its observed input shapes (non-tensor arguments fixed) and compiled,
    as `node.mlir` (its mlx IR) and `node.mlxfb`; its tensor inputs `input_<i>.npy`
    and eager PyTorch's value `expected.npy`. bfloat16 tensors are stored as float32
    (exact) and cast back first thing in the program, as NumPy has no bfloat16. The
    files written, and last the command that runs it.

    For a report on a given module (`compare(module=...)`) compiling the node again
    would not reproduce the module's own ops: the reproducer is that module cut at the
    node, returning the node's value and keeping only the ops it needs, on the
    program's inputs."""
    if report.module is not None:
        return _write_module_repro(report, directory)
    from pathlib import Path

    import torch

    from mlxir.codegen import serialize
    from mlxir.conversions.pipelines import lower
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.conversions.torch_to_aten.node_decompositions import node_arguments

    found = report.first_divergence
    if found is None:
        raise ValueError("no divergence to reproduce")
    node = next(n for n in report.graph.nodes if n.name == found.node)
    operands, arguments = node_arguments(node)
    observed = [report.eager[operand.name] for operand in operands]
    tensor_positions = [i for i, value in enumerate(observed) if isinstance(value, torch.Tensor)]
    dtypes = [observed[i].dtype for i in tensor_positions]
    target = node.target

    class Node(torch.nn.Module):
        def forward(self, *inputs: torch.Tensor) -> Any:
            values = list(observed)  # non-tensor values (sizes) stay fixed
            for position, dtype, value in zip(tensor_positions, dtypes, inputs):
                values[position] = value.to(dtype)
            args, kwargs = arguments(values)
            return target(*args, **kwargs)

    stored = [
        observed[i].detach().float() if observed[i].dtype == torch.bfloat16 else observed[i].detach()
        for i in tensor_positions
    ]
    with torch.no_grad():
        module = import_program(torch.export.export(Node(), tuple(stored)))
    lower(module, _spec(pipeline))
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    written = [str(out / "node.mlir"), str(out / "node.mlxfb")]
    (out / "node.mlir").write_text(f"// {found.target} at {found.location}\n{module}\n")
    (out / "node.mlxfb").write_bytes(serialize(module))
    for i, value in enumerate(stored):
        np.save(out / f"input_{i}.npy", value.numpy())
        written.append(str(out / f"input_{i}.npy"))
    np.save(out / "expected.npy", _flat(report.eager[found.node])[0].array)
    written.append(str(out / "expected.npy"))
    inputs = " ".join(f"--input {out / f'input_{i}.npy'}" for i in range(len(stored)))
    written.append(f"mlxir run {out / 'node.mlxfb'} {inputs} --output-dir {out / 'got'}")
    return written


def _write_module_repro(report: DivergenceReport, directory: str) -> list[str]:
    """The diverging node's ops taken out of the module as a function of their
    operands from elsewhere (`input_<i>.npy` with the values they had in the run,
    ints for `index` inputs); `index` values are computed inside from their sources."""
    from pathlib import Path

    import torch
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType, ModuleOp, TensorType
    from xdsl.ir import Block, Region
    from xdsl.printer import Printer

    from mlxir.codegen import serialize
    from mlxir.dialects import mlx
    from mlxir.runtime.program import Program
    from mlxir.support.locations import nodes_of, result_locations

    found = report.first_divergence
    if found is None:
        raise ValueError("no divergence to reproduce")
    forward = _forward(report.module)
    value = _observations(report.module)[report.nodes.index(found)]
    node_ops = {
        op for op in forward.body.block.ops
        if any(found.node in nodes_of(loc) for loc in result_locations(op))
    }
    taken: set[Any] = set()
    externals: list[Any] = []

    def take(v: Any) -> None:
        owner = v.owner
        inside = isinstance(owner, mlx.WeightOp) or (
            not isinstance(v.type, TensorType) and not isinstance(owner, Block)
        )
        if isinstance(owner, Block) or not (owner in node_ops or inside):
            if v not in externals:
                externals.append(v)
            return
        if owner not in taken:
            taken.add(owner)
            for operand in owner.operands:
                take(operand)

    take(value)
    with torch.no_grad():
        observed = _run_returning(report, [v for v in externals if isinstance(v.type, TensorType)])
    values = iter(observed)
    arguments: list[Any] = []
    arg_types: list[Any] = []
    for v in externals:
        v_type = v.type
        if isinstance(v_type, TensorType):
            got = next(values)
            arguments.append(got)
            arg_types.append(TensorType(cast("TensorType[Attribute]", v_type).get_element_type(), list(got.shape)))
        else:  # an index input of the program
            arguments.append(report.inputs[v.index])
            arg_types.append(v_type)
    block = Block(arg_types=arg_types)
    mapping: dict[Any, Any] = dict(zip(externals, block.args))
    for arg, v in zip(block.args, externals):
        arg.name_hint = v.name_hint
    for op in forward.body.block.ops:
        if op in taken:
            block.add_op(op.clone(value_mapper=mapping))
    block.add_op(func.ReturnOp(mapping[value]))
    function = func.FuncOp("forward", FunctionType.from_lists(arg_types, [value.type]), Region(block))
    _bfloat16_inputs_as_float32(function)
    names = {op.global_name.root_reference.data for op in taken if isinstance(op, mlx.WeightOp)}
    globals_ = [g.clone() for g in report.module.ops if isinstance(g, mlx.GlobalOp) and g.sym_name.data in names]
    module = ModuleOp([*globals_, function])
    out = Path(directory)
    out.mkdir(parents=True, exist_ok=True)
    data = serialize(module)
    text = StringIO()
    Printer(stream=text, print_debuginfo=True).print_op(module)
    (out / "node.mlir").write_text(f"// {found.target} at {found.location}: its ops in the module\n{text.getvalue()}\n")
    (out / "node.mlxfb").write_bytes(data)
    written = [str(out / "node.mlir"), str(out / "node.mlxfb")]
    flags: list[str] = []
    for i, argument in enumerate(arguments):
        if isinstance(argument, int):
            flags.append(f"--input {argument}")
            continue
        path = out / f"input_{i}.npy"
        np.save(path, _numpy_of(argument))
        written.append(str(path))
        flags.append(f"--input {path}")
    Program(data, verify=False, compile=False)  # it loads
    np.save(out / "expected.npy", _flat(report.eager[found.node])[0].array)
    written.append(str(out / "expected.npy"))
    written.append(f"mlxir run {out / 'node.mlxfb'} {' '.join(flags)} --output-dir {out / 'got'}")
    return written


def _run_returning(report: DivergenceReport, values: Sequence[Any]) -> list[Any]:
    """The values of `values` (of `report.module`'s forward function) in the run on
    `report.inputs`."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import FunctionType

    from mlxir.codegen import serialize
    from mlxir.codegen.signature import SIGNATURE_ATTR
    from mlxir.runtime.program import Program

    forward = _forward(report.module)
    ret = forward.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    saved_return, saved_type, saved_signature = ret, forward.function_type, forward.attributes.pop(SIGNATURE_ATTR)
    probe = func.ReturnOp(*values)
    forward.body.block.insert_op_before(probe, ret)
    forward.body.block.detach_op(ret)
    forward.function_type = FunctionType.from_lists(list(saved_type.inputs.data), [v.type for v in values])
    try:
        program = Program(serialize(report.module, verify=False), verify=False, compile=False)
        return list(program.call_flat(*report.inputs)) if values else []
    finally:
        forward.body.block.insert_op_before(saved_return, probe)
        forward.body.block.erase_op(probe)
        forward.function_type = saved_type
        forward.attributes[SIGNATURE_ATTR] = saved_signature


def _numpy_of(value: Any) -> np.ndarray:
    """An MLX or torch tensor as NumPy; bfloat16 as float32 (exact)."""
    import mlx.core as mx
    import torch

    if isinstance(value, torch.Tensor):
        return _flat(value)[0].array
    if isinstance(value, mx.array) and value.dtype == mx.bfloat16:
        value = value.astype(mx.float32)
    return cast(np.ndarray, np.asarray(value))  # asarray of an untyped value (mlx, torch) leaves the dtype unknown


def _bfloat16_inputs_as_float32(forward: Any) -> None:
    """Makes each bfloat16 input a float32 one cast back first thing (exact): NumPy,
    and so a reproducer's `.npy` inputs, has no bfloat16."""
    from xdsl.dialects.builtin import BFloat16Type, Float32Type, FunctionType, TensorType

    from mlxir.dialects import mlx

    block = forward.body.block
    types = list(forward.function_type.inputs.data)
    for i, arg in enumerate(list(block.args)):
        arg_type = arg.type
        if not isinstance(arg_type, TensorType):
            continue
        arg_type = cast("TensorType[Attribute]", arg_type)  # isinstance leaves its type parameter unknown
        if not isinstance(arg_type.element_type, BFloat16Type):
            continue
        types[i] = TensorType(Float32Type(), arg_type.get_shape())
        stored = block.insert_arg(types[i], i)
        stored.name_hint = arg.name_hint
        cast_back = mlx.AstypeOp(stored, arg_type)
        block.insert_op_before(cast_back, block.first_op)
        arg.replace_all_uses_with(cast_back.result)
        block.erase_arg(arg)
    forward.function_type = FunctionType.from_lists(types, list(forward.function_type.outputs.data))
