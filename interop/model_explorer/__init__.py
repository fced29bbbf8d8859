"""mlxir programs in Google's Model Explorer: an adapter for `.pt2`, `.mlir` and
`.mlxfb` files, and `mlxir debug`'s errors as a per-node overlay.

    python -m mlxir.interop.model_explorer model.pt2 [--node-data overlay.json]
    model-explorer model.mlxfb --extensions=mlxir.interop.model_explorer

    graphs = mlxir.interop.model_explorer.convert("model.pt2")
    mlxir.interop.model_explorer.write_overlay(mlxir.debug.divergence.compare(ep, x), "overlay.json")

What each file shows:

- `.pt2`: the aten-level program (`torch.export.load`, then `import_program`). Each
  op sits in the namespace of the module that ran it, from the graph node's
  `nn_module_stack`: `model/layers.0/self_attn/q_proj`, so that a layer collapses to
  one box. The importer records which graph node each op computes (`observed`); the
  ops it makes for one node (a decomposition's several ops) share that node's
  namespace. `import_with_scopes` gives that module, each op annotated with
  `mlxir.scope` (its namespace) and `mlxir.node` (its graph node): printed to `.mlir`,
  it keeps both.
- `.mlir` (aten or mlx level, parsed with mlxir's context): an op's namespace is its
  `mlxir.scope` attribute; without one, a weight read (`mlx.weight`) is placed by
  its global's name (`layers.0.self_attn.q_proj.weight`: the module
  `model/layers.0/self_attn/q_proj`), and an op reading weights of one module only
  (the matmul of a projection) joins them; any other op sits at the top.
- `.mlxfb`: the instruction list, each instruction a node and each slot read an edge
  from the instruction that last wrote it, namespaced as `.mlir` is (discardable
  attributes travel in the program).

Every node carries its op's properties and attributes (a dense literal shortened to
its type), its source location, and per result `tensor_shape` (`float32[2, ?]`) and
`tensor_name` (the SSA name, which the importer takes from the graph node's). A `.pt2`
op's node id is its graph node's name, the key `mlxir.debug.divergence.compare` reports under:
`write_overlay` writes those reports as Model Explorer node data (the error as the
value, each node coloured by its verdict), shown on the graph next to the model.

The `model-explorer` extra installs Model Explorer (`pip install
'mlxir[model-explorer]'`); only the adapter and `visualize` need it, not
`write_overlay`. Model Explorer loads a custom adapter from the module
`<extension>.main` (here `mlxir.interop.model_explorer.main`); `.pt2` and `.mlir`
files are also claimed by its built-in adapters, so `visualize` names this adapter
for the model.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

if TYPE_CHECKING:
    from xdsl.dialects.builtin import ModuleOp
    from xdsl.ir import Attribute, Operation

    from mlxir.codegen.reader import ProgramInfo
    from mlxir.debug.divergence import DivergenceReport

ADAPTER_ID = "mlxir"
"""The adapter's id in Model Explorer (`AdapterMetadata.id`)."""
EXTENSION = "mlxir.interop.model_explorer"
"""What `--extensions` names (Model Explorer imports `<extension>.main`)."""
FILE_EXTENSIONS = ("pt2", "mlir", "mlxfb")

ROOT = "model"
"""The namespace of the exported module itself; its submodules nest under it."""
HIDDEN = frozenset({"operandSegmentSizes", "resultSegmentSizes"})
"""Properties that only say how operands group, which the edges show."""
SCOPE_ATTR = "mlxir.scope"
"""An op's namespace (`model/layers.0/self_attn`), where it was recorded."""
NODE_ATTR = "mlxir.node"
"""The exported graph node an op computes, where it was recorded."""
RESULT_NODES_ATTR = "mlxir.result_nodes"
"""The graph node of each result, where they are not all the op's node (a split's
getitems; "" for a result no node names)."""

ATTR_TEXT_LIMIT = 200
"""The longest attribute value a node shows (a longer one is cut with `...`)."""

_QUANTIZED_SUFFIX = re.compile(r"\.q\d+g\d+$")


class ModelExplorerUnavailable(ImportError):
    pass


def _graph_builder() -> Any:
    try:
        from model_explorer import graph_builder  # pyright: ignore[reportMissingTypeStubs] (model_explorer ships no type stubs)
    except ImportError as error:
        raise ModelExplorerUnavailable(
            f"Model Explorer is not installed ({error}): pip install 'mlxir[model-explorer]'"
        ) from error
    return graph_builder


# ---------------------------------------------------------------------------
# Namespaces
# ---------------------------------------------------------------------------


def namespace_of(module_path: str) -> str:
    """`layers.0.self_attn` → `model/layers.0/self_attn`: a list entry's index stays
    with its list, so that a layer is one group."""
    parts: list[str] = []
    for part in module_path.split(".") if module_path else []:
        if part.isdigit() and parts:
            parts[-1] = f"{parts[-1]}.{part}"
        else:
            parts.append(part)
    return "/".join([ROOT, *parts])


def weight_namespace(global_name: str) -> str:
    """The namespace of the module that owns a global (`layers.0.norm.weight`), its
    quantized forms (`proj.q4g32.scales`) included."""
    owner = global_name.rpartition(".")[0] if "." in global_name else ""
    return namespace_of(_QUANTIZED_SUFFIX.sub("", owner))


def _stack_namespace(stack: Mapping[str, Any] | None) -> tuple[str, dict[str, str]]:
    """The namespace of an `nn_module_stack` (its innermost module) and each of its
    modules' namespaces → the module's class."""
    if not stack:
        return ROOT, {}
    classes: dict[str, str] = {}
    innermost = ""
    for entry in stack.values():
        path, kind = entry[0], entry[1]
        innermost = str(path)
        classes[namespace_of(innermost)] = kind if isinstance(kind, str) else kind.__qualname__
    return namespace_of(innermost), classes


# ---------------------------------------------------------------------------
# .pt2: import with the module hierarchy
# ---------------------------------------------------------------------------


def load_exported(path: str | Path) -> Any:
    from mlxir.conversions.torch_to_aten.archive import load_archive

    return load_archive(path)  # an ArchiveError is a ValueError


def import_with_scopes(ep: Any) -> tuple[ModuleOp, dict[str, str]]:
    """`ep` imported at the aten level, each op annotated with `mlxir.scope` and
    `mlxir.node` from the graph node it computes; and each module's namespace → its
    class. The ops made for one node come right before the op that holds its value
    (the importer inserts them in order), so each op takes the node of the next op
    that holds a node's value."""
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ArrayAttr, StringAttr
    from xdsl.ir import Operation, OpResult, SSAValue

    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.conversions.torch_to_aten.importer import graph_to_import

    observed: dict[str, SSAValue] = {}
    module = import_program(ep, observed=observed)
    nodes = {n.name: n for n in ep.graph.nodes}
    if any(name not in nodes for name in observed):
        # The importer decomposed some nodes: the names are its graph's.
        nodes = {n.name: n for n in graph_to_import(ep)[1].nodes}
    node_of: dict[Operation, str] = {}
    for name, value in observed.items():
        if isinstance(value.owner, Operation):
            node_of.setdefault(value.owner, name)
    result_nodes: dict[Operation, list[str]] = {}
    for name, value in observed.items():
        # xDSL drops a name hint's `_<n>` suffix (`linear_1` prints as `%linear_1` only
        # while unambiguous), so each result's node is recorded in full: the key
        # mlxir.debug.divergence reports under, matched by Model Explorer's `tensor_name`.
        if isinstance(value, OpResult):
            names = result_nodes.setdefault(value.op, [""] * len(value.op.results))
            names[value.index] = names[value.index] or name
    classes: dict[str, str] = {}
    for function in module.ops:
        if not isinstance(function, func.FuncOp):
            continue
        pending: list[Operation] = []
        for op in function.body.walk():
            if op.name in ("mlx.weight", "mlx.load_state"):
                op.attributes[SCOPE_ATTR] = StringAttr(weight_namespace(_global_name(op)))
                continue
            if op not in node_of:
                pending.append(op)
                continue
            node = nodes.get(node_of[op])
            scope, owners = _stack_namespace(node.meta.get("nn_module_stack") if node else None)
            classes.update(owners)
            for member in [*pending, op]:
                member.attributes[SCOPE_ATTR] = StringAttr(scope)
                member.attributes[NODE_ATTR] = StringAttr(node_of[op])
            if result_nodes.get(op, [node_of[op]]) != [node_of[op]]:
                op.attributes[RESULT_NODES_ATTR] = ArrayAttr([StringAttr(n) for n in result_nodes[op]])
            pending = []
    return module, classes


# ---------------------------------------------------------------------------
# A graph, whatever the input
# ---------------------------------------------------------------------------


@dataclass
class _Node:
    id: str
    label: str
    namespace: str | None
    """None: not recorded; inferred from the weights it reads (or the top)."""
    attrs: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    inputs: list[tuple[str, str]] = field(default_factory=list[tuple[str, str]])
    """(source node id, source output id) per operand."""
    outputs: list[list[tuple[str, str]]] = field(default_factory=list[list[tuple[str, str]]])
    """Per result, its metadata."""
    weight: bool = False


class _Ids:
    """Node ids: the wanted name where it is free, else the name with a number."""

    def __init__(self) -> None:
        self.used: set[str] = set()

    def take(self, wanted: str) -> str:
        wanted = wanted or "op"
        candidate, n = wanted, 0
        while candidate in self.used:
            n += 1
            candidate = f"{wanted}#{n}"
        self.used.add(candidate)
        return candidate


def _infer_namespaces(nodes: Sequence[_Node]) -> None:
    """An op without a recorded namespace that reads the weights of one module joins
    it; any other sits at the top."""
    by_id = {n.id: n for n in nodes}
    for node in nodes:
        if node.namespace is not None:
            continue
        owners = {
            by_id[source].namespace or ""
            for source, _ in node.inputs
            if source in by_id and by_id[source].weight
        }
        node.namespace = owners.pop() if len(owners) == 1 else ""


def _graph(graph_id: str, nodes: Sequence[_Node], classes: Mapping[str, str]) -> Any:
    gb = _graph_builder()
    _infer_namespaces(nodes)
    graph = gb.Graph(id=graph_id, nodes=[])
    for node in nodes:
        graph_node = gb.GraphNode(id=node.id, label=node.label, namespace=node.namespace or "")
        graph_node.attrs = [gb.KeyValue(key=k, value=v) for k, v in node.attrs]
        graph_node.incomingEdges = [
            gb.IncomingEdge(sourceNodeId=source, sourceNodeOutputId=output, targetNodeInputId=str(i))
            for i, (source, output) in enumerate(node.inputs)
        ]
        graph_node.outputsMetadata = [
            gb.MetadataItem(id=str(i), attrs=[gb.KeyValue(key=k, value=v) for k, v in items])
            for i, items in enumerate(node.outputs)
        ]
        graph.nodes.append(graph_node)
    if classes:
        graph.groupNodeAttributes = {ns: {"module": kind} for ns, kind in sorted(classes.items())}
    return graph


def _one_line(error: BaseException) -> str:
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__


def _cut(text: str) -> str:
    return text if len(text) <= ATTR_TEXT_LIMIT else text[:ATTR_TEXT_LIMIT] + "..."


# -- IR (.pt2 after import, .mlir) ------------------------------------------------


def _type_text(type_: Attribute) -> str:
    from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, TensorType

    from mlxir.support import dtypes
    from mlxir.transforms.view_op_graph import attribute_text

    if isinstance(type_, IndexType):
        return "index"
    if isinstance(type_, TensorType):
        type_ = cast("TensorType[Attribute]", type_)  # isinstance leaves its type parameter unknown
        dtype = dtypes.of_ir(type_.element_type)
        element = dtype.name if dtype is not None else attribute_text(type_.element_type)
        dims = ["?" if d == DYNAMIC_INDEX else str(d) for d in type_.get_shape()]
        return f"{element}[{', '.join(dims)}]"
    dtype = dtypes.of_ir(type_)
    return dtype.name if dtype is not None else attribute_text(type_)


def _string(attribute: Attribute | None) -> str | None:
    from xdsl.dialects.builtin import StringAttr

    return attribute.data if isinstance(attribute, StringAttr) else None


def _global_name(op: Operation) -> str:
    from xdsl.dialects.builtin import SymbolRefAttr

    ref = op.properties.get("global_name")
    return ref.root_reference.data if isinstance(ref, SymbolRefAttr) else ""


def _location_text(op: Operation) -> str | None:
    from mlxir.support.locations import file_line_col, node_of

    where, node = file_line_col(op.location), node_of(op.location)
    if node is None:
        return where
    return f"{where} (node {node})" if where else f"node {node}"


def graphs_of_module(module: ModuleOp, classes: Mapping[str, str] | None = None) -> list[Any]:
    """One Model Explorer graph per function of `module` (id: the function's name)."""
    from xdsl.dialects import func

    return [
        _graph(function.sym_name.data, _function_nodes(function), classes or {})
        for function in module.ops
        if isinstance(function, func.FuncOp)
    ]


def _function_nodes(function: Any) -> list[_Node]:
    from xdsl.dialects import func
    from xdsl.dialects.builtin import ArrayAttr
    from xdsl.ir import SSAValue

    from mlxir.transforms.view_op_graph import attribute_text

    ids = _Ids()
    source_of: dict[SSAValue, tuple[str, str]] = {}
    nodes: list[_Node] = []
    for i, arg in enumerate(function.body.block.args):
        name = arg.name_hint or f"arg{i}"
        node = _Node(ids.take(name), "input", "", [("index", str(i))])
        node.outputs.append([("tensor_shape", _type_text(arg.type)), ("tensor_name", name)])
        source_of[arg] = (node.id, "0")
        nodes.append(node)
    for op in function.body.walk():
        inputs = [source_of[v] for v in op.operands if v in source_of]
        if isinstance(op, func.ReturnOp):
            nodes.append(_Node(ids.take("output"), "output", "", inputs=inputs))
            continue
        recorded = _string(op.attributes.get(NODE_ATTR))
        first = op.results[0].name_hint if op.results else None
        node = _Node(
            ids.take(recorded or first or op.name.rpartition(".")[2]),
            op.name,
            _string(op.attributes.get(SCOPE_ATTR)),
            inputs=inputs,
        )
        node.weight = op.name in ("mlx.weight", "mlx.load_state")
        if node.weight and node.namespace is None:
            node.namespace = weight_namespace(_global_name(op))
        attributes = {**op.properties, **op.attributes}
        for key in sorted(attributes):
            if key not in (SCOPE_ATTR, NODE_ATTR, RESULT_NODES_ATTR) and key not in HIDDEN:
                node.attrs.append((key, _cut(attribute_text(attributes[key]))))
        if recorded:
            node.attrs.append(("torch node", recorded))
        where = _location_text(op)
        if where:
            node.attrs.append(("location", where))
        result_nodes = op.attributes.get(RESULT_NODES_ATTR)
        node_names: tuple[Attribute, ...] = (
            cast("ArrayAttr[Attribute]", result_nodes).data if isinstance(result_nodes, ArrayAttr) else ()
        )
        for index, result in enumerate(op.results):
            metadata = [("tensor_shape", _type_text(result.type))]
            name = result.name_hint
            if index < len(node_names):
                name = _string(node_names[index]) or name
            elif recorded and index == 0:
                name = recorded
            if name:
                metadata.append(("tensor_name", name))
            node.outputs.append(metadata)
            source_of[result] = (node.id, str(index))
        # A nested region's ops are nodes of their own; its block arguments come
        # from the op that holds the region.
        for region in op.regions:
            for block in region.blocks:
                for arg in block.args:
                    source_of[arg] = (node.id, "0")
        nodes.append(node)
    return nodes


# -- .mlxfb ----------------------------------------------------------------------


def _slot_text(slot: Any) -> str:
    if slot.scalar or slot.dtype == "index":
        return slot.dtype
    dims = ["?" if d is None else str(d) for d in slot.shape]
    return f"{slot.dtype}[{', '.join(dims)}]"


def _value_text(value: Any) -> str:
    import numpy as np

    if isinstance(value, np.ndarray):
        value = cast("np.ndarray[Any, Any]", value)  # isinstance leaves its parameters unknown
        return f"array<{value.dtype}, shape {list(value.shape)}>"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, tuple):
        return "[" + ", ".join(_value_text(v) for v in cast(tuple[Any, ...], value)) + "]"
    if isinstance(value, int | float | bool):
        return str(value)
    from mlxir.transforms.view_op_graph import attribute_text

    return attribute_text(value)


def graph_of_program(info: ProgramInfo) -> Any:
    """A `.mlxfb` program's instructions as a Model Explorer graph (id: its name)."""
    ids = _Ids()
    nodes: list[_Node] = []
    writer: dict[int, tuple[str, str]] = {}
    for i, slot_index in enumerate(info.inputs):
        slot = info.slots[slot_index]
        name = slot.name or f"input{i}"
        node = _Node(ids.take(name), "input", "", [("index", str(i)), ("slot", str(slot_index))])
        node.outputs.append([("tensor_shape", _slot_text(slot)), ("tensor_name", name)])
        writer[slot_index] = (node.id, "0")
        nodes.append(node)
    global_of = {g.slot: g for g in info.globals}

    def read(slot_index: int) -> tuple[str, str] | None:
        """The node and output that hold a slot; a global's first read makes its node
        (a program reads weights from their slots, with no instruction)."""
        if slot_index not in writer and slot_index in global_of:
            held = global_of[slot_index]
            node = _Node(ids.take(held.name), held.kind, weight_namespace(held.name),
                         [("global", held.name), ("slot", str(slot_index))], weight=True)
            node.outputs.append([("tensor_shape", _slot_text(info.slots[slot_index])),
                                 ("tensor_name", held.name)])
            writer[slot_index] = (node.id, "0")
            nodes.append(node)
        return writer.get(slot_index)

    for instruction in info.instructions:
        scope = instruction.attributes.get(SCOPE_ATTR)
        recorded = instruction.attributes.get(NODE_ATTR)
        names = instruction.result_names or ("",) * len(instruction.results)
        wanted = recorded if isinstance(recorded, str) else (names[0] if names else "")
        node = _Node(
            ids.take(wanted or instruction.op.rpartition(".")[2]),
            instruction.op,
            scope if isinstance(scope, str) else None,
        )
        node.weight = instruction.op in ("mlx.weight", "mlx.load_state")
        global_name = instruction.props.get("global_name")
        if node.weight and node.namespace is None and isinstance(global_name, str):
            node.namespace = weight_namespace(global_name)
        values = {**instruction.props, **instruction.attributes}
        for key in sorted(values):
            if key not in (SCOPE_ATTR, NODE_ATTR, RESULT_NODES_ATTR) and key not in HIDDEN:
                node.attrs.append((key, _cut(_value_text(values[key]))))
        node.attrs.append(("instruction", str(instruction.index)))
        if instruction.location:
            node.attrs.append(("location", instruction.location))
        sources = [read(s) for s in instruction.operands]
        node.inputs = [source for source in sources if source is not None]
        for index, (slot_index, name) in enumerate(zip(instruction.results, names)):
            metadata = [("tensor_shape", _slot_text(info.slots[slot_index])), ("slot", str(slot_index))]
            if name:
                metadata.append(("tensor_name", name))
            node.outputs.append(metadata)
            writer[slot_index] = (node.id, str(index))
        nodes.append(node)
    outputs = _Node(ids.take("output"), "output", "")
    sources = [read(s) for s in info.outputs]
    outputs.inputs = [source for source in sources if source is not None]
    nodes.append(outputs)
    return _graph(info.name or "forward", nodes, {})


# -- files -----------------------------------------------------------------------


def convert(path: str | Path, settings: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """The Model Explorer graphs of a `.pt2`, `.mlir` or `.mlxfb` file, as an
    adapter's `convert` returns them (`{"graphs": [...]}`). Raises ValueError, with
    one line, for a file that is missing, of another kind, or malformed."""
    del settings  # nothing in the frontend's settings changes these graphs
    path = Path(path)
    kind = path.suffix.lstrip(".")
    if kind not in FILE_EXTENSIONS:
        raise ValueError(f"{path}: expected a .pt2, .mlir or .mlxfb file")
    if not path.is_file():
        raise ValueError(f"{path}: no such file")
    _graph_builder()  # fail first, in one line, where Model Explorer is missing
    if kind == "pt2":
        module, classes = import_with_scopes(load_exported(path))
        return {"graphs": graphs_of_module(module, classes)}
    if kind == "mlir":
        return {"graphs": graphs_of_module(parse_mlir(path))}
    from mlxir.codegen.errors import ProgramError
    from mlxir.codegen.reader import read_program

    try:
        info = read_program(path.read_bytes())
    except ProgramError as error:
        raise ValueError(f"{path}: {_one_line(error)}") from error
    return {"graphs": [graph_of_program(info)]}


def parse_mlir(path: Path) -> ModuleOp:
    from mlxir.dialects.context import parse_mlir_file

    return parse_mlir_file(path)


# ---------------------------------------------------------------------------
# mlxir debug's errors as node data
# ---------------------------------------------------------------------------

WITHIN_COLOR = "#c8e6c9"
BEYOND_COLOR = "#ffcdd2"
FIRST_DIVERGENCE_COLOR = "#e53935"
METRICS = ("max_abs_error", "max_rel_error", "cosine", "out_of_tolerance")


def _finite(value: float) -> float:
    # JSON has no infinity or NaN (a shape mismatch reports inf): the largest float.
    if math.isnan(value) or math.isinf(value):
        return 1.7976931348623157e308
    return value


def overlay_of(
    report: DivergenceReport, metric: str = "max_abs_error", graph_id: str = "forward"
) -> dict[str, Any]:
    """Model Explorer node data (a model's, by graph id) for `report`: per graph node
    the metric, on a background that says whether it is within tolerance; the first
    divergence in a stronger red."""
    if metric not in METRICS:
        raise ValueError(f"unknown metric '{metric}': expected one of {', '.join(METRICS)}")
    first = report.first_divergence
    results: dict[str, dict[str, Any]] = {}
    for comparison in report.nodes:
        color = WITHIN_COLOR if comparison.within_tolerance else BEYOND_COLOR
        result: dict[str, Any] = {"value": _finite(float(getattr(comparison, metric))), "bgColor": color}
        if first is not None and comparison.node == first.node:
            result.update(bgColor=FIRST_DIVERGENCE_COLOR, textColor="white")
        results[comparison.node] = result
    return {graph_id: {"name": f"mlxir debug: {metric}", "results": results}}


def write_overlay(
    report: DivergenceReport,
    path: str | Path,
    metric: str = "max_abs_error",
    graph_id: str = "forward",
) -> Path:
    """Writes `overlay_of(report)` as a node data JSON file for Model Explorer
    (`--node_data_paths`, or `visualize(..., node_data=path)`); returns its path."""
    path = Path(path)
    path.write_text(json.dumps(overlay_of(report, metric, graph_id), indent=1) + "\n")
    return path


# ---------------------------------------------------------------------------
# The server
# ---------------------------------------------------------------------------


def visualize(
    model: str | Path,
    node_data: str | Path | None = None,
    host: str = "localhost",
    port: int = 8080,
    open_browser: bool = True,
) -> None:
    """Starts Model Explorer on `model` with this adapter (and `node_data`, an
    overlay file) until interrupted."""
    try:
        import model_explorer  # pyright: ignore[reportMissingTypeStubs] (model_explorer ships no type stubs)
    except ImportError as error:
        raise ModelExplorerUnavailable(
            f"Model Explorer is not installed ({error}): pip install 'mlxir[model-explorer]'"
        ) from error
    config = model_explorer.config()
    config.add_model_from_path(str(model), adapterId=ADAPTER_ID)
    if node_data is not None:
        config.add_node_data_from_path(str(node_data))
    model_explorer.visualize_from_config(
        config, host=host, port=port, extensions=[EXTENSION], no_open_in_browser=not open_browser
    )
