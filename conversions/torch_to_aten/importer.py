"""The importer: `torch.export.ExportedProgram` → `aten`-level IR, built directly (no text).

    module = import_program(ep)

The graph is imported as torch.export gives it; a node mlxir has no importer for is
replaced by torch's decomposition of that node alone (`node_decompositions`), into ops it
has. Only a graph that needs torch's functionalization (in-place mutation, higher-order
ops) is first decomposed whole with `run_decompositions` and a table that keeps the ops
mlxir runs natively (`NATIVE_OPS`); the module then says why. Then every graph node
becomes IR:

- parameters, buffers (persistent or not) and lifted constants become `mlx.global`
  symbols read with `mlx.weight`; mutated buffers become `state` globals read with
  `mlx.load_state` and written back with `mlx.store_state`; each global holds its
  tensor as its `dense<...>` value (`dialects/weights.py`), so the weights travel in the IR;
- user inputs become function arguments (`index` for SymInt inputs), user outputs the
  returned values, in signature order;
- each `call_function` node goes through `IMPORTERS`, keyed by ATen overload packet
  and merged from the op families' tables; the node's stack trace becomes the op's
  location;
- symbolic integers (`sym_size`, `operator.add`, `torch.sym_min`, ...) become `index`
  values and `arith` ops; the export's range constraints are kept on the function
  (`mlxir.symbol_ranges`, `mlxir.input_dims`);
- `_assert_scalar`, `_assert_tensor_metadata` and `sym_constrain_range*` are dropped:
  the runtime checks input shapes against the recorded ranges instead, and tensor
  metadata is already fixed by the types in the IR.

Every unsupported node is collected; one `UnsupportedOpsError` lists each target with
its count and first source location.
"""

from __future__ import annotations

import operator
import re
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Literal, cast

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import ConstantArgument, InputKind, OutputKind
from torch.fx import Graph, Node
from xdsl.builder import Builder
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint

from mlxir.codegen.errors import ProgramError
from mlxir.codegen.signature import SIGNATURE_ATTR, Signature, Tree
from mlxir.conversions.torch_to_aten.complex_numbers import COMPLEX_IMPORTERS
from mlxir.conversions.torch_to_aten.core import (
    COMPLEX_PACKETS,
    COMPLEX_UNSUPPORTED,
    DTYPES,
    Handler,
    ImportError_,
    ImportState,
    UnsupportedOpsError,
    describe_location,
    location_of,
    packet_name,
    positional_args,
    static_dim,
    target_name,
    tensor_type_of,
    torch_overload,
    type_of_node,
)
from mlxir.conversions.torch_to_aten.creation import CREATION_IMPORTERS
from mlxir.conversions.torch_to_aten.decompositions import decomposition_table
from mlxir.conversions.torch_to_aten.elementwise import ELEMENTWISE_IMPORTERS
from mlxir.conversions.torch_to_aten.indexing import INDEXING_IMPORTERS
from mlxir.conversions.torch_to_aten.linalg import LINALG_IMPORTERS
from mlxir.conversions.torch_to_aten.nn import NN_IMPORTERS
from mlxir.conversions.torch_to_aten.node_decompositions import (
    DynamicDimFixed,
    decompose_nodes,
    exported_name,
    exported_value_of,
)
from mlxir.conversions.torch_to_aten.reduction import REDUCTION_IMPORTERS
from mlxir.conversions.torch_to_aten.shape import SHAPE_IMPORTERS, has_own_importer
from mlxir.conversions.torch_to_aten.symbolic import SYMBOLIC_ATEN_IMPORTERS, SYMBOLIC_IMPORTERS
from mlxir.dialects import mlx
from mlxir.dialects.common import int_array
from mlxir.dialects.weights import dense_of
from mlxir.support.gc_pause import without_gc
from mlxir.support.locations import node_location
from mlxir.support.progress import report


def merged(*tables: dict[str, Handler]) -> dict[str, Handler]:
    """The family tables as one; a name two families claim is a mistake, not an override."""
    merged_table: dict[str, Handler] = {}
    for table in tables:
        for name, handler in table.items():
            if name in merged_table:
                raise ValueError(f"{name} has importers in two op families")
            merged_table[name] = handler
    return merged_table


IMPORTERS: dict[str, Handler] = merged(
    ELEMENTWISE_IMPORTERS,
    REDUCTION_IMPORTERS,
    SHAPE_IMPORTERS,
    INDEXING_IMPORTERS,
    LINALG_IMPORTERS,
    NN_IMPORTERS,
    CREATION_IMPORTERS,
    COMPLEX_IMPORTERS,
    SYMBOLIC_ATEN_IMPORTERS,
)
"""ATen overload packet → handler. Overloads of one packet (`add.Tensor`, `add.Scalar`)
share a handler: operand types tell them apart in the IR."""


def handler_for(node: Node) -> Handler | None:
    target = node.target
    if target is operator.getitem:
        return _getitem
    if target in SYMBOLIC_IMPORTERS:
        return SYMBOLIC_IMPORTERS[cast(Callable[..., Any], target)]  # a function: it is a key
    overload = torch_overload(target)
    return IMPORTERS.get(packet_name(overload)) if overload is not None else None


def _getitem(state: ImportState, node: Node) -> SSAValue:
    """Result #index of a node with several results."""
    source_node, index = positional_args(node, 2)
    source = state.values[source_node]
    assert isinstance(source, list) and isinstance(index, int)
    value = source[index] if index < len(source) else None
    if value is None:
        raise ImportError_(f"{describe_location(node)}: result #{index} of {source_node} is not supported")
    return value


# ---------------------------------------------------------------------------
# The program
# ---------------------------------------------------------------------------

UNSUPPORTED_BECAUSE: dict[str, str] = {
    "aten.unique_dim": (
        "unique along a dim (torch.unique(x, dim=d)) is not supported: mlxir's unique "
        "flattens its input (docs/semantics.md §8)"
    ),
}
"""ATen packets mlxir cannot support, and why (the error says it)."""


def unsupported_because(node: Node) -> tuple[str, str] | None:
    """(what, why) for a node mlxir cannot support by design, whatever its handler."""
    target = torch_overload(node.target)
    if target is None:
        return None
    packet = packet_name(target)
    if packet in UNSUPPORTED_BECAUSE:
        return str(target), UNSUPPORTED_BECAUSE[packet]
    for value in _values_of(node):
        if isinstance(value, torch.Tensor) and value.dtype.is_complex:
            if value.dtype not in DTYPES or packet not in COMPLEX_PACKETS:
                return f"{target} (on {str(value.dtype).removeprefix('torch.')})", COMPLEX_UNSUPPORTED
    return None


def _imports_as_it_is(node: Node) -> bool:
    """Whether `node` has an importer for the values it has: an op on complex64 values
    outside `COMPLEX_PACKETS` (`abs`, `angle`) is decomposed instead where mlxir has a
    decomposition for it (`COMPLEX_DECOMPOSITIONS`), and so is an op whose `int[]`
    argument must be static but holds a symbolic size (`STATIC_INT_LISTS`), or
    that its importer does not take (`has_own_importer`)."""
    if handler_for(node) is None:
        return False
    target = torch_overload(node.target)
    if target is None:
        return True
    if not has_own_importer(packet_name(target), node):
        return False
    if packet_name(target) in COMPLEX_PACKETS:
        return True
    return not any(isinstance(v, torch.Tensor) and v.dtype.is_complex for v in _values_of(node))


def _values_of(node: Node) -> list[Any]:
    """The fake values a node reads and makes."""
    values: list[Any] = []
    for source in (*node.all_input_nodes, node):
        value = source.meta.get("val")
        values.extend(cast(Sequence[Any], value) if isinstance(value, list | tuple) else (value,))
    return values


def _check_supported(graph_nodes: Sequence[Node]) -> None:
    unsupported: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for node in graph_nodes:
        if node.op != "call_function" or _unused_result(node):
            continue
        because = unsupported_because(node)
        if because is not None:
            unsupported.setdefault(because[0], []).append(describe_location(node))
            reasons[because[0]] = because[1]
        elif handler_for(node) is None:
            unsupported.setdefault(target_name(node), []).append(describe_location(node))
    if unsupported:
        raise UnsupportedOpsError(unsupported, reasons)


def _unused_result(node: Node) -> bool:
    """A result nobody reads (torch's re-trace drops it; the graph as exported keeps
    it): not imported, so a result mlxir cannot compute (max_pool's indices, the
    statistics of native_layer_norm) does not matter unless used."""
    return node.target is operator.getitem and not node.users


def _global_name(name: str) -> str:
    return name


Decomposition = Literal["nodes", "program", "none"]
"""How `import_program` decomposes what mlxir has no importer for: `"nodes"` decomposes
those nodes alone (`node_decompositions`), falling back to `"program"` where the graph
needs it; `"program"` runs torch's `run_decompositions` on the whole program (a
re-trace: seconds); `"none"` imports the graph as it is (an ExecuTorch Edge program is
already decomposed)."""

DECOMPOSED_BY_TORCH_ATTR = "mlxir.decomposed_by_torch"
"""The module attribute that says why torch re-traced the whole program, when it did."""


@without_gc
def import_program(
    ep: ExportedProgram,
    *,
    decompose: Decomposition | bool = "nodes",
    observed: dict[str, SSAValue] | None = None,
) -> ModuleOp:
    """Imports an ExportedProgram as an `aten`-level module with `@forward`. When torch
    decomposed the whole program, the module's `mlxir.decomposed_by_torch` says why.
    `decompose=False` is `"none"`, `True` is `"nodes"`. `observed`, when given, gets
    each graph node's name → the value that holds its (single) result (`mlxir.debug.divergence`).
    Weights of 1 MiB or more are read in place from `ep`'s tensors, not copied
    (`mlxir.dialects.weights`): change those tensors after importing and the module changes."""
    ep, graph, because = graph_to_import(ep, decompose)
    nodes = list(graph.nodes)
    _check_supported(nodes)

    signature = ep.graph_signature
    # By position: a graph with nodes decomposed is a copy, where FX renames a
    # placeholder named after a Python builtin (`input` becomes `input_1`).
    placeholders = [n for n in nodes if n.op == "placeholder"]
    input_specs = {n.name: spec for n, spec in zip(placeholders, signature.input_specs, strict=True)}
    mutated = {
        spec.target: spec.arg.name
        for spec in signature.output_specs
        if spec.kind is OutputKind.BUFFER_MUTATION
    }

    module = ModuleOp([])
    globals_block = module.body.block

    user_placeholders = [
        n for n in nodes if n.op == "placeholder" and input_specs[n.name].kind is InputKind.USER_INPUT
    ]
    constants = {
        n.name: cast(ConstantArgument, input_specs[n.name].arg).value
        for n in user_placeholders
        if isinstance(input_specs[n.name].arg, ConstantArgument) and not n.users
    }
    user_inputs = [n for n in user_placeholders if n.name not in constants]
    arg_types = [type_of_node(n) for n in user_inputs]
    body = Block(arg_types=arg_types)
    state = ImportState(Builder(InsertPoint.at_end(body)))
    for node, arg in zip(user_inputs, body.args):
        arg.name_hint = node.name
        state.values[node] = arg

    aliases: dict[tuple[Any, ...], str] = {}
    for node in nodes:
        if node.op != "placeholder" or input_specs[node.name].kind is InputKind.USER_INPUT:
            continue
        spec = input_specs[node.name]
        target = spec.target
        assert target is not None
        tensor = (
            ep.state_dict[target] if target in ep.state_dict else ep.constants[target]
        )
        if not isinstance(tensor, torch.Tensor):
            raise ImportError_(f"input {node.name} ({spec.kind.name}) is not a tensor")
        tensor_type = tensor_type_of(tensor)
        if spec.kind is InputKind.BUFFER and target in mutated:
            kind = "state"
        elif spec.kind is InputKind.PARAMETER:
            kind = "parameter"
        elif spec.kind is InputKind.BUFFER:
            kind = "buffer"
        else:
            kind = "constant"
        # Tied weights (an LM head sharing the embedding) are lifted once per name but
        # share storage: one global, one payload.
        alias = _alias_key(tensor) if kind != "state" else None
        name = aliases.get(alias) if alias is not None else None
        if name is None:
            name = _global_name(target)
            global_op = mlx.GlobalOp(name, tensor_type, kind)
            global_op.properties["value"] = dense_of(tensor, tensor_type, f"{kind} {target}")
            globals_block.add_op(global_op)
            if alias is not None:
                aliases[alias] = name
        access = mlx.LoadStateOp if kind == "state" else mlx.WeightOp
        op = access.build(
            properties={"global_name": SymbolRefAttr(name)}, result_types=[tensor_type]
        )
        op.location = node_location(node.name, None)
        state.insert(op)
        op.results[0].name_hint = node.name
        state.values[node] = op.results[0]

    returned: list[SSAValue] = []
    output_leaves: list[Any] = []
    written_back: list[tuple[SSAValue, int]] = []  # a user input's new value, its position
    for done, node in enumerate(nodes):
        report("import", done, len(nodes))
        if _unused_result(node):
            continue
        if node.op == "call_function":
            handler = handler_for(node)
            assert handler is not None
            state.location = node_location(exported_name(node), location_of(node))
            result = handler(state, node)
            if isinstance(result, Operation):
                state.insert(result)
                values = list(result.results)
                if node.target is not operator.getitem and len(values) == 1:
                    values[0].name_hint = _name_hint(node.name)
                state.values[node] = values[0] if len(values) == 1 else list[SSAValue | None](values)
            else:
                state.values[node] = result if isinstance(result, SSAValue) else list[SSAValue | None](result)
            value = state.values[node]
            exported = exported_value_of(node)
            if observed is not None and isinstance(value, SSAValue) and exported is not None:
                observed[exported] = value
        elif node.op == "output":
            state.location = None
            (outputs,) = positional_args(node, 1)
            flat = list(outputs)
            for spec, out in zip(signature.output_specs, flat):
                if spec.kind is OutputKind.USER_OUTPUT and isinstance(spec.arg, ConstantArgument):
                    output_leaves.append(spec.arg.value)  # in the signature, not computed
                    continue
                value = state.value(out)
                if spec.kind is OutputKind.BUFFER_MUTATION:
                    assert spec.target is not None
                    state.insert(
                        mlx.StoreStateOp.build(
                            operands=[value],
                            properties={"global_name": _symbol_ref(spec.target)},
                        )
                    )
                elif spec.kind is OutputKind.USER_OUTPUT:
                    returned.append(value)
                    output_leaves.append(_INPUT)
                elif spec.kind is OutputKind.USER_INPUT_MUTATION:
                    written = [n.name for n in user_inputs].index(str(spec.target))
                    written_back.append((value, written))
                else:
                    raise ImportError_(f"output kind {spec.kind.name} is not supported")

    mutated = tuple((len(returned) + k, written) for k, (_, written) in enumerate(written_back))
    returned.extend(value for value, _ in written_back)
    state.insert(func.ReturnOp(*returned))
    function = func.FuncOp(
        "forward", (arg_types, [v.type for v in returned]), Region(body)
    )
    function.attributes.update(_shape_attributes(ep, user_inputs))
    signature = signature_of(ep, [constants.get(n.name, _INPUT) for n in user_placeholders], output_leaves, mutated)
    if signature is not None:
        function.attributes[SIGNATURE_ATTR] = signature.to_attr()
    elif mutated:
        raise ImportError_("the program writes its inputs, which needs the exported call signature")
    globals_block.add_op(function)
    if because is not None:
        module.attributes[DECOMPOSED_BY_TORCH_ATTR] = StringAttr(because)
    return module


def graph_to_import(
    ep: ExportedProgram, decompose: Decomposition | bool = "nodes"
) -> tuple[ExportedProgram, Graph, str | None]:
    """The graph `import_program` imports (and the program it belongs to: torch's
    re-trace makes a new one), and why torch re-traced the whole program, or None."""
    mode = ("nodes" if decompose else "none") if isinstance(decompose, bool) else decompose
    graph = ep.graph_module.graph
    because: str | None = None
    if mode == "nodes":
        try:
            graph, because = decompose_nodes(graph, _imports_as_it_is)
        except DynamicDimFixed as error:
            raise ImportError_(str(error)) from None
    elif mode == "program":
        because = "decompose='program' was asked for"
    elif mode != "none":
        raise ValueError(f"decompose={decompose!r}: expected 'nodes', 'program' or 'none'")
    if because is not None:
        report("import: torch re-traces the whole program")
        ep = _decompose_whole_program(ep)
        graph = ep.graph_module.graph
        # torch's table leaves ops mlxir decomposes itself (`adaptive_avg_pool2d` of a
        # permuted input ends in `as_strided`). Where they cannot be, the graph stays
        # as torch left it and the importer reports what it lacks.
        try:
            graph, _ = decompose_nodes(graph, _imports_as_it_is)
        except DynamicDimFixed as error:
            raise ImportError_(str(error)) from None
    return ep, graph, because


def _decompose_whole_program(ep: ExportedProgram) -> ExportedProgram:
    from mlxir.support.quiet import quiet_leafspec_deprecation

    try:
        with quiet_leafspec_deprecation():  # torch's own deepcopy of its LeafSpecs
            return ep.run_decompositions(decomposition_table())  # pyright: ignore[reportUnknownMemberType] (torch types the table's values as a bare Callable)
    except Exception as error:  # torch re-traces the program: any failure is torch's
        raise ImportError_(
            f"torch.export's run_decompositions failed on this program "
            f"({type(error).__name__}: {error}); it happens before mlxir sees the graph "
            "(e.g. a torch.export.load'ed program with derived dims such as 2*Dim('h')); "
            "compile the ExportedProgram in the process that exported it"
        ) from error


_INPUT = object()
"""A user input that is a program input (not a constant the export fixed)."""


def signature_of(
    ep: ExportedProgram,
    user_inputs: Sequence[Any],
    user_outputs: Sequence[Any],
    mutated: tuple[tuple[int, int], ...] = (),
) -> Signature | None:
    """The call signature of `ep` (its `in_spec` and `out_spec`) for a program whose
    inputs and outputs are the `_INPUT` entries of `user_inputs` and `user_outputs`
    (one per user input or output, in order; the others are constants the export
    fixed), then the inputs the module writes (`mutated`). None when the export has no
    specs or they do not describe these inputs and outputs (an ExecuTorch partition's
    program): such a program is called flat."""
    in_spec, out_spec = ep.call_spec.in_spec, ep.call_spec.out_spec
    if in_spec is None or out_spec is None:
        return None
    if in_spec.num_leaves != len(user_inputs) or out_spec.num_leaves != len(user_outputs):
        return None
    num_outputs = sum(1 for v in user_outputs if v is _INPUT)
    try:
        inputs = _tree_of(in_spec, iter(user_inputs))
        outputs = _tree_of(out_spec, iter(user_outputs))
    except ValueError as error:
        raise ImportError_(f"the exported signature cannot be recorded: {error}") from None
    call = ep.module_call_graph[0].signature if ep.module_call_graph else None
    names = list(getattr(call, "forward_arg_names", None) or ())
    # Without usable parameter names, positional arguments bind by position only.
    usable = all(n.isidentifier() for n in names) and len(set(names)) == len(names)
    signature = Signature(inputs, outputs, tuple(names) if usable else (), mutated)
    try:  # the checks the loader makes, so a program that compiles also loads
        return Signature.from_data(
            signature.to_data(), sum(1 for v in user_inputs if v is _INPUT), num_outputs + len(mutated)
        )
    except ProgramError as error:
        raise ImportError_(f"the exported signature cannot be recorded: {error}") from None


def _tree_of(spec: Any, leaves: Iterator[Any]) -> Tree:
    """torch's pytree spec as data; a leaf takes the next entry of `leaves` (a
    constant for an argument the export fixed)."""
    import collections

    if spec.is_leaf():
        value = next(leaves)
        if value is _INPUT:
            return Tree("leaf")
        if value is None:
            return Tree("none")
        if isinstance(value, bool | int | float | str):
            return Tree("constant", value=value)
        raise ValueError(f"an argument fixed to a {type(value).__name__} value")
    children = tuple(_tree_of(child, leaves) for child in spec.children())
    kind, context = spec.type, spec.context
    if kind is tuple:
        return Tree("tuple", children)
    if kind is list:
        return Tree("list", children)
    if kind is type(None):
        return Tree("none")
    if kind in (dict, collections.OrderedDict):
        name = "OrderedDict" if kind is collections.OrderedDict else ""
        return Tree("dict", children, tuple(context), name)
    if isinstance(context, type) and issubclass(context, tuple) and hasattr(cast(type[tuple[Any, ...]], context), "_fields"):
        fields: tuple[str, ...] = getattr(cast(type[tuple[Any, ...]], context), "_fields")  # noqa: B009 (a namedtuple class)
        return Tree("namedtuple", children, fields, context.__name__)
    keys = (
        tuple(cast(Sequence[str], context))
        if isinstance(context, list | tuple) and all(isinstance(k, str) for k in cast(Sequence[object], context))
        else ()
    )
    return Tree("custom", children, keys, f"{kind.__module__}.{kind.__qualname__}")


def _alias_key(tensor: torch.Tensor) -> tuple[Any, ...]:
    """Equal keys: the same memory viewed the same way, hence the same values."""
    return (
        tensor.untyped_storage().data_ptr(),
        tensor.storage_offset(),
        tuple(tensor.shape),
        tuple(tensor.stride()),
        tensor.dtype,
    )


def _symbol_ref(name: str) -> Attribute:
    return SymbolRefAttr(name)


def _name_hint(name: str) -> str | None:
    return name if re.fullmatch(r"[A-Za-z_][\w.$-]*", name) else None


def _bound(value: Any, unbounded: int) -> int:
    """A range bound as an int; torch's (and sympy's) infinities become `unbounded`."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return unbounded


def _symbol_name(dim: int | torch.SymInt) -> str:
    """The symbol of a dynamic dim, "" for a static one."""
    return "" if static_dim(dim) != DYNAMIC_INDEX else str(dim)


def _shape_attributes(ep: ExportedProgram, user_inputs: Sequence[Node]) -> dict[str, Attribute]:
    """The export's dynamic dims and their ranges, for the runtime's input checks."""
    ranges: dict[str, Attribute] = {}
    for symbol, value_range in cast(dict[Any, Any], ep.range_constraints).items():  # pyright: ignore[reportUnknownMemberType] (torch annotates it with a bare ValueRanges)
        ranges[str(symbol)] = int_array([_bound(value_range.lower, 0), _bound(value_range.upper, -1)])
    dims: list[Attribute] = []
    for node in user_inputs:
        val = node.meta["val"]
        if isinstance(val, torch.Tensor):
            dims.append(ArrayAttr([StringAttr(_symbol_name(d)) for d in val.shape]))
        else:
            dims.append(ArrayAttr([StringAttr(str(val))]))
    return {
        "mlxir.symbol_ranges": DictionaryAttr(ranges),
        "mlxir.input_dims": ArrayAttr(dims),
    }
