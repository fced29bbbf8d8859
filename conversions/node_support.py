"""Can mlxir compile this graph node? Decided by running the importer and the lowering.

    reason = why_unsupported(node)    # None: mlxir compiles it

A partitioner (`mlxir.interop.executorch.MlxirPartitioner`) must not offer a backend a
node the backend then fails on, and must not keep a second list of supported ops that
drifts from the real one. So the verdict comes from the code that compiles the program:

1. the importer's own refusals (`UNSUPPORTED_BECAUSE`: data-dependent shapes, complex
   numbers, bool-mask indexing) and its `IMPORTERS` table;
2. the node alone is imported (its tensor operands become block arguments of the types
   the export recorded), verified, and lowered with `convert-aten-to-mlx`; any importer,
   verifier or lowering error is the reason.

A node whose op the importer has no handler for but which `decomposition_table()`
decomposes (the `EXTRA_DECOMPOSED_OPS`: activations, padding modes, upsampling) is
supported: `import_program` decomposes it before importing, into ops the differential
suite covers through the ATen path. So is a node the importer drops (`_assert_scalar`,
`sym_constrain_range*`, ...: the runtime checks input shapes against the recorded
ranges instead): kept out, a deferred runtime assert of a dynamic-shape program would
make its delegate return the `SymBool` it checks, which ExecuTorch cannot emit.
"""

from __future__ import annotations

import operator
from functools import cache
from typing import Any, cast

from torch._ops import OpOverload
from torch.fx import Node
from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import PassPipeline
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException, PassFailedException, VerifyException

from mlxir.conversions.torch_to_aten import (
    ImportError_,
    ImportState,
    decomposition_table,
    dropped,
    handler_for,
    target_name,
    torch_overload,
    type_of_node,
    unsupported_because,
)


@cache
def _decomposed_overloads() -> frozenset[OpOverload]:
    return frozenset(cast(OpOverload, op) for op in decomposition_table() if isinstance(op, OpOverload))


@cache
def _context() -> Context:
    from mlxir.dialects.context import make_context

    return make_context()


def why_unsupported(node: Node) -> str | None:
    """None when mlxir compiles `node`; otherwise why not, in one line."""
    if node.op != "call_function":
        return f"a {node.op} node, not an operator call"
    if node.target is operator.getitem:
        source = node.args[0]
        return why_unsupported(source) if isinstance(source, Node) else "getitem of a non-node"
    because = unsupported_because(node)
    if because is not None:
        return because[1]
    handler = handler_for(node)
    if handler is None:
        overload = torch_overload(node.target)
        if overload is not None and overload in _decomposed_overloads():
            return None
        return f"mlxir has no importer for {target_name(node)}"
    if handler is dropped:
        return None
    return _compile_alone(node)


def _compile_alone(node: Node) -> str | None:
    """Imports and lowers `node` by itself; the first error met, or None."""
    operands = list(node.all_input_nodes)
    try:
        types = [type_of_node(operand) for operand in operands]
    except (ImportError_, KeyError) as error:
        return f"an operand has no tensor or integer type recorded by the export ({error})"
    body = Block(arg_types=types)
    state = ImportState(Builder(InsertPoint.at_end(body)))
    for operand, arg in zip(operands, body.args):
        state.values[operand] = arg
    handler = handler_for(node)
    assert handler is not None
    try:
        result = handler(state, node)
    except ImportError_ as error:
        return str(error)
    except Exception as error:  # a handler's assumption about its arguments failed
        return f"the importer rejects its arguments ({type(error).__name__}: {error})"
    results: list[SSAValue]
    if isinstance(result, Operation):
        state.insert(result)
        results = list(result.results)
    elif isinstance(result, SSAValue):
        results = [result]
    else:
        results = [r for r in result if r is not None]  # results mlxir does not compute
    body.add_op(func.ReturnOp(*results))
    function = func.FuncOp(
        "node", ([a.type for a in body.args], [r.type for r in results]), Region(body)
    )
    module = ModuleOp([function])
    try:
        module.verify()
        _lowering().apply(_context(), module)
    except (VerifyException, PassFailedException, DiagnosticException) as error:
        return " ".join(str(error).split())
    except Exception as error:
        return f"the lowering fails on it ({type(error).__name__}: {error})"
    return None


@cache
def _lowering() -> PassPipeline:
    from mlxir.conversions.aten_to_mlx import ConvertAtenToMlxPass

    return PassPipeline((ConvertAtenToMlxPass(),))


def node_verdicts(nodes: Any) -> dict[Node, str | None]:
    """`why_unsupported` for every call_function node of `nodes`."""
    return {node: why_unsupported(node) for node in nodes if node.op == "call_function"}
