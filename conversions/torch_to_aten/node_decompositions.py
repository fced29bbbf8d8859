"""Decompose only what mlxir lacks: the exported graph as torch.export gives it, with
each node mlxir has no importer for replaced by torch's own decomposition of that node.

    graph, because = decompose_nodes(graph, has_importer)  # because: torch must re-trace

torch's `ep.run_decompositions(table)` re-traces the whole program under
functionalization and fake tensors; that re-trace, not the decompositions, is most of a
compile's time (an empty table costs the same). The graph torch.export gives differs from
the re-traced one in few ops, each imported here as it is (`RAW_EXPORT_OPS`), so only the
rare node mlxir has no importer for is decomposed: its decomposition (from
`decomposition_table()`, or the op's own CompositeImplicitAutograd kernel) is traced
alone with `make_fx`, on the node's recorded fake values and in the export's fake mode,
so symbolic sizes stay the export's symbols, and spliced into a copy of the graph.

A node is imported directly when it has an importer and torch would keep it too (a
native op, or a core op neither in the table nor composite), or when it is one of the
`RAW_EXPORT_OPS`; the other ops with a decomposition are decomposed, so each imports as
it did through `run_decompositions`.

Some graphs need torch's functionalization, which only the whole re-trace gives: a graph
that mutates tensors in place (training IR, a static cache's buffers), holds a
higher-order op, calls a Python function torch records or unwraps tensor subclasses
(torchao). Those are decomposed whole, as before, and `because` says why; so is a graph
with a node whose decomposition fails to trace alone or writes in place.
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from functools import cache
from typing import Any, cast

import torch
from torch._C import DispatchKey
from torch._ops import HigherOrderOperator, OpOverload
from torch.fx import Graph, Node
from torch.fx.node import map_arg
from torch.utils._pytree import tree_flatten, tree_unflatten

from mlxir.conversions.torch_to_aten.bessel_functions import BESSEL_FUNCTIONS
from mlxir.conversions.torch_to_aten.chebyshev_polynomials import CHEBYSHEV_POLYNOMIALS
from mlxir.conversions.torch_to_aten.complex_numbers import COMPLEX_DECOMPOSITIONS
from mlxir.conversions.torch_to_aten.core import describe_location, schema_of, torch_overload
from mlxir.conversions.torch_to_aten.decompositions import (
    NATIVE_OPS,
    decomposition_table,
    kept_torchao_ops,
)
from mlxir.conversions.torch_to_aten.linalg_decompositions import LINALG_DECOMPOSITIONS
from mlxir.conversions.torch_to_aten.nn_decompositions import NN_DECOMPOSITIONS
from mlxir.conversions.torch_to_aten.special_functions import SPECIAL_FUNCTIONS, polygamma

_A = torch.ops.aten

RAW_EXPORT_OPS: frozenset[OpOverload] = frozenset(
    {
        _A.arange.default,
        _A.arange.start,
        _A.__and__.Tensor,
        _A.__or__.Tensor,
        _A.__xor__.Tensor,
        _A.to.dtype,
        _A.to.device,
        _A.to.dtype_layout,
        _A.to.other,
        _A.type_as.default,
        _A.detach_.default,
        _A.contiguous.default,
        _A.reshape.default,
        _A.transpose.int,
        _A.dropout.default,
        _A.sym_size.int,
    }
)
"""Ops of the graph torch.export gives that torch would decompose but mlxir imports as
they are: casts (`to`, `type_as` as `_to_copy`), layout no-ops (`contiguous`,
`detach_` of a fresh constant), views, inference `dropout`, `arange` without a start,
the bool operators. Every LLM family's test compiles both ways and compares."""

_INPLACE_NO_OP: frozenset[OpOverload] = frozenset({_A.detach_.default})
"""In-place ops that change no value (`detach_` only drops autograd history)."""


def _batch_norm(
    input: torch.Tensor,
    weight: torch.Tensor | None,
    bias: torch.Tensor | None,
    running_mean: torch.Tensor | None,
    running_var: torch.Tensor | None,
    training: bool,
    momentum: float,
    eps: float,
    *rest: Any,
) -> tuple[torch.Tensor, ...]:
    """`batch_norm` and `native_batch_norm` as torch's re-trace leaves them: with the
    running statistics (inference) or with the batch's own (no running statistics)."""
    if not training and running_mean is not None and running_var is not None:
        return _A._native_batch_norm_legit_no_training.default(
            input, weight, bias, running_mean, running_var, momentum, eps
        )
    if running_mean is None and running_var is None:
        return _A._native_batch_norm_legit.no_stats(input, weight, bias, True, momentum, eps)
    raise NodeDecompositionFailed("batch norm in training mode updates its running statistics")


def _polygamma(n: int, x: torch.Tensor) -> torch.Tensor:
    # The 0th is ψ itself, the 1st trigamma (`special_functions.py`); a higher order is
    # traced back to itself, which mlxir refuses.
    if n == 0:
        return _A.digamma.default(x)
    decomposed = polygamma(n, x)
    return _A.polygamma.default(n, x) if decomposed is None else decomposed


def _index_reduce(
    self: torch.Tensor, dim: int, index: torch.Tensor, source: torch.Tensor, reduce: str, include_self: bool = True
) -> torch.Tensor:
    # `index[i]` names the slice of `self` that `source`'s slice i reduces into: the
    # scatter of an index spread along `dim` over `source`'s shape, reduce for reduce
    # (including self's own value, for `mean` in the count too, exactly when asked).
    if source.dim() == 0:  # a 0-d self and source: one slice, index [0]
        where = index.reshape(())
    else:
        spread = [1] * source.dim()
        spread[dim % source.dim()] = -1
        where = index.reshape(spread).expand(source.shape)
    return _A.scatter_reduce.two(self, dim, where, source, reduce, include_self=include_self)


def _unfold(self: torch.Tensor, dimension: int, size: int, step: int) -> torch.Tensor:
    # Window w of `dimension` is elements w*step ... w*step + size - 1: one index_select
    # of every window's positions, the windows then split off and their elements moved
    # last, as `Tensor.unfold` lays them out.
    if self.dim() == 0:
        return self.reshape(1)
    axis = dimension % self.dim()
    count = (self.shape[axis] - size) // step + 1
    positions = (torch.arange(count) * step).unsqueeze(1) + torch.arange(size).unsqueeze(0)
    picked = self.index_select(axis, positions.reshape(-1))
    windows = picked.reshape(*self.shape[:axis], count, size, *self.shape[axis + 1 :])
    return windows.movedim(axis + 1, -1)


def _put(self: torch.Tensor, index: torch.Tensor, source: torch.Tensor, accumulate: bool = False) -> torch.Tensor:
    # `put` indexes `self` as if flattened (negative indices from the end), as index_put
    # on the flat tensor does.
    flat = self.reshape(-1).index_put((index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(self.shape)


def _masked_scatter(self: torch.Tensor, mask: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    # The k-th position where `mask` holds (row-major, mask broadcast to self) takes
    # source's k-th element: a gather at the running count of the mask, so no shape
    # depends on the mask's values.
    mask = mask.expand(self.shape).reshape(-1)
    taken = (torch.cumsum(mask.to(torch.int64), 0) - 1).clamp(min=0)
    picked = source.reshape(-1)[taken]
    return torch.where(mask, picked, self.reshape(-1)).reshape(self.shape)


def _nonzero_static(self: torch.Tensor, *, size: int, fill_value: int = -1) -> torch.Tensor:
    # The first `size` nonzero indices, row-major, then rows of `fill_value`: each
    # nonzero element's flat position is scattered to its running count (the ones past
    # `size`, and the zeros, to a last slot that is dropped), so no shape depends on
    # the values, unlike nonzero.
    flat = (self != 0).reshape(-1)
    count = torch.cumsum(flat.to(torch.int64), 0)
    slot = torch.where(flat & (count <= size), count - 1, size)
    positions = torch.zeros(size + 1, dtype=torch.int64).scatter(0, slot, torch.arange(flat.numel()))[:size]
    found = torch.arange(size) < flat.sum()
    coordinates: list[torch.Tensor] = []
    stride = 1
    for extent in reversed(self.shape):
        coordinates.append(torch.where(found, (positions // stride) % extent, fill_value))
        stride *= extent
    if not coordinates:  # a 0-d input: [size, 0]
        return torch.zeros(size, 0, dtype=torch.int64)
    return torch.stack(coordinates[::-1], dim=1)


def _addbmm(
    self: torch.Tensor, batch1: torch.Tensor, batch2: torch.Tensor, *, beta: float = 1, alpha: float = 1
) -> torch.Tensor:
    # beta * self + alpha * sum_b batch1[b] @ batch2[b]; beta == 0 ignores self (its
    # NaNs too), as torch's kernel does. Half-precision products are summed in float32
    # (one rounding, where rounding each batch's sum cancels badly near zero).
    wide = torch.float32 if batch1.dtype in (torch.float16, torch.bfloat16) else batch1.dtype
    products = torch.bmm(batch1.to(wide), batch2.to(wide)).sum(0)
    scaled = (products if alpha == 1 else products * alpha).to(batch1.dtype)
    if beta == 0:
        return scaled.expand(cast(torch.Size, torch.broadcast_shapes(self.shape, scaled.shape))).clone()  # pyright: ignore[reportUnknownMemberType] (torch.functional's broadcast_shapes is unannotated)
    return (self if beta == 1 else self * beta) + scaled


def _strided_positions(
    self: torch.Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None
) -> torch.Tensor:
    """The flat positions in `self` that `as_strided(self, size, stride, storage_offset)`
    reads, where every one lies among `self`'s own elements (`self` contiguous, the
    positions within its static element count). Anything else reads storage the
    program does not hold: refused."""
    base = 0 if storage_offset is None else storage_offset - self.storage_offset()
    last = base + sum((extent - 1) * step for extent, step in zip(size, stride))
    numel = cast(int | torch.SymInt, self.numel())  # a SymInt under a fake mode with symbolic sizes
    if not self.is_contiguous() or not isinstance(numel, int) or base < 0 or (0 not in size and last >= numel):
        raise NodeDecompositionFailed(
            "as_strided reads memory outside its contiguous input's own elements, which the program does not hold"
        )
    positions: torch.Tensor = torch.zeros(list(size), dtype=torch.int64).add(base)
    for axis, (extent, step) in enumerate(zip(size, stride)):
        shape = [1] * len(size)
        shape[axis] = extent
        positions = positions + (torch.arange(extent) * step).reshape(shape)
    return positions


def _restrides_in_place(
    self: torch.Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None
) -> bool:
    """Whether `as_strided(self, size, stride, storage_offset)` reads `self`'s own
    elements in their own order: the same sizes, no offset, and on every axis of more
    than one element the contiguous stride (an axis of one element may have any
    stride). torch's `adaptive_avg_pool2d` to 1x1 of a channels-last input gives its
    `[N, C, 1, 1]` mean channels-last strides this way (`as_strided_`), a no-op on the
    values, with sizes that may be symbolic (a dynamic batch)."""
    from torch.fx.experimental.symbolic_shapes import statically_known_true

    if (storage_offset or 0) != self.storage_offset() or len(size) != self.dim() or not self.is_contiguous():
        return False
    expected: Any = 1
    for axis in reversed(range(len(size))):
        extent = size[axis]
        if not statically_known_true(extent == self.shape[axis]):
            return False
        if not statically_known_true(extent == 1) and not statically_known_true(stride[axis] == expected):
            return False
        expected = expected * extent
    return True


def _as_strided(
    self: torch.Tensor, size: Sequence[int], stride: Sequence[int], storage_offset: int | None = None
) -> torch.Tensor:
    if _restrides_in_place(self, size, stride, storage_offset):
        return self.clone()
    return self.reshape(-1)[_strided_positions(self, size, stride, storage_offset)]


def _as_strided_scatter(
    self: torch.Tensor,
    src: torch.Tensor,
    size: Sequence[int],
    stride: Sequence[int],
    storage_offset: int | None = None,
) -> torch.Tensor:
    positions = _strided_positions(self, size, stride, storage_offset)
    flat = self.reshape(-1).index_put((positions.reshape(-1),), src.reshape(-1))
    return flat.reshape(self.shape)


def _bincount(self: torch.Tensor, weights: torch.Tensor | None = None, minlength: int = 0) -> torch.Tensor:
    """torch's `bincount`: `max(self) + 1` bins (at least `minlength`; `minlength`
    for an empty input), each counting (or summing the `weights` of) the elements
    equal to its index; float32 weights sum in float32, any other in float64. Each
    bin compares every element (O(bins x elements) memory): a scatter by indices
    whose count depends on the data does not lower yet."""
    length = torch.clamp(self.max() + 1, min=minlength) if self.numel() > 0 else torch.tensor(minlength)
    size = length.item()
    hits = torch.arange(size).unsqueeze(1) == self.unsqueeze(0)  # [bins, elements]
    if weights is None:
        return hits.sum(1)
    dtype = torch.float32 if weights.dtype == torch.float32 else torch.float64
    return torch.where(hits, weights.to(dtype), 0).sum(1)


def _grouped_mm(input: torch.Tensor, weight: torch.Tensor, offs: torch.Tensor) -> torch.Tensor:  # noqa: A002 (the op's argument names)
    """transformers' `grouped_mm_fallback` (its mixture-of-experts default on the CPU):
    rows `offs[e - 1]:offs[e]` of `input` (sorted by expert) times `weight[e]`, rows
    past `offs[-1]` zero. Each row's expert is the count of group ends at or before it;
    the row is multiplied by its expert's matrix, gathered (rows x in x out elements:
    MLX's `gather_mm` would not copy them)."""
    rows = torch.arange(input.shape[0])
    expert = (offs.unsqueeze(0) <= rows.unsqueeze(1)).sum(1)
    covered = expert < weight.shape[0]
    products = torch.bmm(input.unsqueeze(1), weight[expert.clamp(max=weight.shape[0] - 1)]).squeeze(1)
    return torch.where(covered.unsqueeze(1), products, torch.zeros((), dtype=products.dtype))


def _aten_grouped_mm(
    self: torch.Tensor,
    mat2: torch.Tensor,
    offs: torch.Tensor | None = None,
    bias: torch.Tensor | None = None,
    out_dtype: torch.dtype | None = None,
) -> torch.Tensor:
    """torch's `_grouped_mm` (transformers' mixture-of-experts path where torch has a
    kernel for the dtype: bf16 on the CPU), in its two forms with a group per matrix of
    `mat2`: rows grouped by `offs` (2-D times 3-D, as `_grouped_mm` above), or one
    group per batch entry (3-D times 3-D, no `offs`: `bmm`). torch takes no bias yet."""
    if bias is not None:
        raise NotImplementedError("_grouped_mm with a bias (torch's kernels take none)")
    if self.dim() == 2 and mat2.dim() == 3 and offs is not None:
        out = _grouped_mm(self, mat2, offs)
    elif self.dim() == 3 and mat2.dim() == 3 and offs is None:
        out = torch.bmm(self, mat2)
    else:
        raise NotImplementedError(
            f"_grouped_mm of {self.dim()}-D by {mat2.dim()}-D {'with' if offs is not None else 'without'} offs"
        )
    return out if out_dtype is None else out.to(out_dtype)


CUSTOM_OP_DECOMPOSITIONS: dict[str, Callable[..., Any]] = {
    "transformers::grouped_mm_fallback": _grouped_mm,
}
"""Decompositions of other libraries' custom ops, by qualified name (the op exists only
once its library registered it), for those whose Python kernel does not trace (it
loops over data: `offs.tolist()`)."""


MLXIR_DECOMPOSITIONS: dict[OpOverload, Callable[..., Any]] = {
    _A.batch_norm.default: lambda *args: _batch_norm(*args)[0],
    _A.native_batch_norm.default: _batch_norm,
    _A.polygamma.default: _polygamma,
    _A.index_reduce.default: _index_reduce,
    _A.unfold.default: _unfold,
    _A.put.default: _put,
    _A.masked_scatter.default: _masked_scatter,
    _A.nonzero_static.default: _nonzero_static,
    _A.addbmm.default: _addbmm,
    _A.as_strided.default: _as_strided,
    _A.as_strided_copy.default: _as_strided,
    _A.as_strided_scatter.default: _as_strided_scatter,
    _A.bincount.default: _bincount,
    _A._grouped_mm.default: _aten_grouped_mm,
    **SPECIAL_FUNCTIONS,
    **BESSEL_FUNCTIONS,
    **CHEBYSHEV_POLYNOMIALS,
    **NN_DECOMPOSITIONS,
    **LINALG_DECOMPOSITIONS,
    **COMPLEX_DECOMPOSITIONS,
}
"""mlxir's own decompositions, where torch's differ from what its re-trace gives (the
`_native_batch_norm_legit*` ops mlxir imports), or torch has none (the special
functions of `special_functions.py`, `bessel_functions.py` and
`chebyshev_polynomials.py`)."""


class NodeDecompositionFailed(Exception):
    """A node's decomposition could not be traced alone: the whole program is
    decomposed instead."""


SOURCE_NODE = "mlxir_source_node"
"""Meta key of a node of the copied graph: the name of the exported graph's node whose
value it holds. The copy's names differ from the exported graph's (a decomposition's
nodes take names first), and locations and `mlxir.debug.divergence` name the exported nodes."""

PART_OF = "mlxir_part_of"
"""Meta key of a decomposition's node other than its result: the exported node it
helps compute."""


def exported_name(node: Node) -> str:
    """The exported graph's node that `node` computes, or helps compute."""
    return node.meta.get(SOURCE_NODE) or node.meta.get(PART_OF) or node.name


def exported_value_of(node: Node) -> str | None:
    """The exported graph's node whose value `node` holds; None for a decomposition's
    intermediate node."""
    return None if PART_OF in node.meta else node.meta.get(SOURCE_NODE, node.name)


def decompose_nodes(
    graph: Graph, has_importer: Callable[[Node], bool]
) -> tuple[Graph, str | None]:
    """The graph to import: `graph` itself when every node has an importer, else a copy
    with the nodes that need it decomposed. The reason is not None when the graph needs
    the whole-program re-trace instead (the graph is then returned unchanged)."""
    original = graph
    if any(_mutates(node) for node in graph.nodes):
        graph = _with_decomposed_nodes(graph, {})  # a copy: the caller's graph is not edited
        if not _functionalize_local_writes(graph):
            graph = original
    because = whole_program_because(graph)
    if because is not None:
        return original, because
    # A decomposition's trace can hold an op that needs one of its own: an in-place op
    # of the trace made functional after it (`adaptive_avg_pool2d` of a channels-last
    # input ends with `as_strided_` of its result). A few rounds reach them.
    for _ in range(_ROUNDS):
        plan = {node: _decomposition_of(node, has_importer) for node in graph.nodes if node.op == "call_function"}
        if not any(plan.values()):
            return graph, None
        try:
            graph = _with_decomposed_nodes(graph, plan)
        except NodeDecompositionFailed as error:
            return original, str(error)
    return graph, None


_ROUNDS = 3
"""Rounds of node decomposition: a node's decomposition, and ops of its trace that
need their own (what is left after them is reported as unsupported)."""


def whole_program_because(graph: Graph) -> str | None:
    """Why `graph` needs torch's whole-program re-trace (functionalization), or None."""
    from mlxir.conversions.torch_to_aten.symbolic import SYMBOLIC_IMPORTERS

    for node in graph.nodes:
        if node.op != "call_function":
            continue
        target = node.target
        if isinstance(target, HigherOrderOperator):
            return f"it holds the higher-order op {target.name()} ({describe_location(node)})"
        overload = torch_overload(target)
        if overload is None:
            if target is operator.getitem or target in SYMBOLIC_IMPORTERS:
                continue
            name = getattr(target, "__qualname__", None) or str(target)
            return f"it calls {name} ({describe_location(node)})"
        if overload.namespace == "export":  # e.g. unwrapping torchao's tensor subclasses
            return f"it calls {overload} ({describe_location(node)}), which torch's re-trace removes"
        if schema_of(overload).is_mutable and overload not in _INPLACE_NO_OP:
            return f"it mutates tensors in place ({overload} at {describe_location(node)})"
    return None


@cache
def _table() -> dict[Any, Callable[..., Any]]:
    return decomposition_table()


@cache
def _nested_table() -> dict[Any, Callable[..., Any]]:
    """What a decomposition's own calls decompose by while it is traced: torch's table
    and mlxir's own (stft's decomposition calls `unfold`, which is mlxir's), but for
    the decompositions that can call their own op (polygamma of an order mlxir lacks,
    abs of a real tensor), which would trace themselves without end."""
    return _table() | {
        op: fn for op, fn in MLXIR_DECOMPOSITIONS.items() if op not in _SELF_CALLING
    }


_SELF_CALLING: frozenset[OpOverload] = frozenset({_A.polygamma.default, _A.abs.default})


@cache
def _is_composite(overload: OpOverload) -> bool:
    return overload.has_kernel_for_dispatch_key(DispatchKey.CompositeImplicitAutograd)


def torch_keeps(overload: OpOverload) -> bool:
    """Whether `run_decompositions(decomposition_table())` keeps `overload` whole."""
    if overload in NATIVE_OPS or overload in kept_torchao_ops():
        return True
    return overload not in _table() and not _is_composite(overload)


def _decomposition_of(node: Node, has_importer: Callable[[Node], bool]) -> Callable[..., Any] | None:
    """The decomposition to trace for `node`, or None to import it as it is."""
    overload = torch_overload(node.target)
    if overload is None or overload in RAW_EXPORT_OPS:
        return None
    if has_importer(node) and torch_keeps(overload):
        return None
    decomposition = (
        MLXIR_DECOMPOSITIONS.get(overload)
        or _table().get(overload)
        or CUSTOM_OP_DECOMPOSITIONS.get(schema_of(overload).name)
    )
    if decomposition is None and overload in NATIVE_OPS:
        # Kept whole where its importer takes it, torch's own decomposition where the
        # importer cannot (`repeat` by sizes that depend on an input's shape).
        decomposition = _torch_decomposition(overload)
    if decomposition is None and _is_composite(overload):
        decomposition = overload.decompose
    return decomposition  # None: no importer and no decomposition, reported as unsupported


def _torch_decomposition(overload: OpOverload) -> Callable[..., Any] | None:
    from torch._decomp import decomposition_table  # pyright: ignore[reportUnknownVariableType] (torch types the table's values as a bare Callable)

    table = cast(dict[Any, Callable[..., Any]], decomposition_table)
    return table.get(overload)


def _with_decomposed_nodes(graph: Graph, plan: dict[Node, Callable[..., Any] | None]) -> Graph:
    from torch._guards import detect_fake_mode

    fake_mode = detect_fake_mode([n.meta.get("val") for n in graph.nodes if n.op == "placeholder"])
    copy = Graph()
    env: dict[Node, Any] = {}
    traces: dict[str, torch.fx.GraphModule] = {}  # a layer's nodes repeat the same call
    for node in graph.nodes:
        decomposition = plan.get(node)
        if decomposition is not None:
            key = _call_signature(node)
            if key not in traces:
                traces[key] = _trace(node, decomposition, fake_mode)
            env[node] = _splice(copy, node, traces[key], env)
        elif node.target is operator.getitem and isinstance(env.get(node.args[0]), list | tuple):
            source, index = node.args
            env[node] = env[source][index]
            _holds_value_of(env[node], node)
        else:
            env[node] = copy.node_copy(node, lambda n: env[n])
            env[node].meta[SOURCE_NODE] = node.name
    return copy


def _holds_value_of(value: Any, node: Node) -> None:
    """Marks a decomposition's node that gives `node`'s value as holding it."""
    if isinstance(value, Node) and PART_OF in value.meta:
        del value.meta[PART_OF]
        value.meta[SOURCE_NODE] = node.name


def node_arguments(node: Node) -> tuple[list[Node], Callable[[Sequence[Any]], tuple[Any, Any]]]:
    """The graph nodes among `node`'s arguments, in order (a node passed twice comes
    twice), and a function of values for them that gives `node`'s (args, kwargs)."""
    leaves, spec = tree_flatten((node.args, node.kwargs))
    positions = [i for i, leaf in enumerate(leaves) if isinstance(leaf, Node)]

    def arguments(values: Sequence[Any]) -> tuple[Any, Any]:
        filled = list(leaves)
        for position, value in zip(positions, values, strict=True):
            filled[position] = value
        return tree_unflatten(filled, spec)

    return [leaves[i] for i in positions], arguments


def _call_signature(node: Node) -> str:
    """Equal for two calls whose decompositions trace alike: the same op on arguments
    of the same structure, constants, dtypes and (symbolic) sizes."""

    def describe(leaf: Any) -> Any:
        if not isinstance(leaf, Node):
            return leaf
        value = leaf.meta.get("val")
        if isinstance(value, torch.Tensor):
            return ("tensor", value.dtype, tuple(str(d) for d in value.shape))
        return ("value", str(value))

    leaves, spec = tree_flatten((node.args, node.kwargs))
    return repr((node.target, spec, [describe(leaf) for leaf in leaves]))


def _trace(node: Node, decomposition: Callable[..., Any], fake_mode: Any) -> torch.fx.GraphModule:
    """`decomposition` applied to `node`'s arguments, traced on their recorded fake
    values (tensors and SymInts become the traced graph's placeholders, in order)."""
    from torch.fx.experimental.proxy_tensor import make_fx

    if fake_mode is None:
        raise NodeDecompositionFailed(f"{describe_location(node)}: the export recorded no fake values")
    inputs, arguments = node_arguments(node)

    def call(*values: Any) -> Any:
        args, kwargs = arguments(values)
        result = decomposition(*args, **kwargs)
        # a plain tuple: make_fx would record building a `torch.return_types` structseq
        return tuple(cast(tuple[Any, ...], result)) if isinstance(result, tuple) else result

    values = [i.meta["val"] for i in inputs]
    symbols = _symbolic_sizes(values)
    try:
        with fake_mode:
            traced = make_fx(call, decomposition_table=_nested_table())(*values)
    except NodeDecompositionFailed as error:
        raise NodeDecompositionFailed(f"{describe_location(node)}: {error}") from None
    except Exception as error:  # torch's decomposition met something it cannot trace alone
        raise NodeDecompositionFailed(
            f"torch's decomposition of {node.target} ({describe_location(node)}) does not trace "
            f"alone ({type(error).__name__}: {error})"
        ) from error
    fixed = {
        symbol: now
        for symbol, now in zip(symbols, _symbolic_sizes(values, symbols))
        if now != symbol and now.lstrip("-").isdigit()
    }
    if fixed:
        raise DynamicDimFixed(
            f"torch's decomposition of {node.target} ({describe_location(node)}) fixes the dynamic "
            f"size(s) {', '.join(f'{symbol} to {now}' for symbol, now in fixed.items())}: "
            "mlxir needs an importer or a decomposition of its own for this op"
        )
    traced.graph.eliminate_dead_code()  # e.g. max_pool1d's indices, computed and unused
    _functionalize_fresh_writes(traced.graph)
    # e.g. circular padding's C++ kernel copies into slices of a fresh tensor: only
    # torch's re-trace functionalizes it (torch.func.functionalize does not reach
    # into the kernel, and fails on symbolic sizes)
    mutating = next((n for n in traced.graph.nodes if _mutates(n)), None)
    if mutating is not None:
        raise NodeDecompositionFailed(
            f"torch's decomposition of {node.target} ({describe_location(node)}) writes in place "
            f"({mutating.target})"
        )
    if any(n.op == "get_attr" for n in traced.graph.nodes):
        raise NodeDecompositionFailed(
            f"torch's decomposition of {node.target} ({describe_location(node)}) makes tensor constants"
        )
    return traced


class DynamicDimFixed(Exception):
    """A decomposition's trace guarded a dynamic size to its export-time value (a C++
    kernel read it as a plain int): the program would silently take that size only."""


def _symbolic_sizes(values: Sequence[Any], among: Sequence[str] | None = None) -> list[str]:
    """The symbolic sizes of `values`' tensors as text (`s77`), in order; with `among`,
    what each of those sizes (by position) now reads as, a number once it was fixed."""
    found: list[str] = []
    for value in values:
        if isinstance(value, torch.Tensor):
            found.extend(str(d) for d in value.shape if isinstance(d, torch.SymInt))
        elif isinstance(value, torch.SymInt):
            found.append(str(value))
    return found if among is None else found[: len(among)]


def _functionalize_fresh_writes(graph: Graph) -> None:
    """In-place ops whose written tensor is a fresh value of the trace that nothing else
    reads (stft's C++ kernel ends with `transpose_` of its result) become their
    functional forms: no reader can tell the difference."""
    for node in graph.nodes:
        overload = torch_overload(node.target) if node.op == "call_function" else None
        if overload is None or not _mutates(node) or not node.args:
            continue
        written = node.args[0]
        functional = _functional_form(overload)
        if (
            functional is not None
            and isinstance(written, Node)
            and _is_fresh(written)
            and list(written.users) == [node]
        ):
            node.target = functional


def _functionalize_local_writes(graph: Graph) -> bool:
    """In-place ops on a tensor the graph made itself, and that no view aliases, become
    their functional forms, the written tensor's later readers reading the new value:
    exactly torch's functionalization where no alias can see the write (a router's
    `weights /= weights.sum(-1, keepdim=True)`, an `index_put_` into a fresh
    `empty_like`). Writes to inputs, buffers and views are left for torch's re-trace.
    Whether any op was rewritten."""
    order = {node: position for position, node in enumerate(graph.nodes)}
    rewritten = False
    for node in list(graph.nodes):
        overload = torch_overload(node.target) if node.op == "call_function" else None
        if overload is None or not _mutates(node) or not node.args:
            continue
        written = node.args[0]
        functional = _functional_form(overload)
        if functional is None or not isinstance(written, Node) or not _is_fresh(written):
            continue
        readers = [user for user in written.users if user is not node]
        if any(_is_view(reader) or _mutates(reader) for reader in readers):
            continue  # an alias or another write: what it sees is torch's re-trace's to work out
        node.target = functional
        for reader in readers:
            if order[reader] > order[node]:
                reader.replace_input_with(written, node)
        rewritten = True
    return rewritten


def _is_view(node: Node) -> bool:
    """Whether `node`'s result may alias one of its inputs (a view)."""
    overload = torch_overload(node.target) if node.op == "call_function" else None
    if overload is None:
        return node.op == "call_function" and node.target is not operator.getitem
    return any(result.alias_info is not None for result in schema_of(overload).returns)


def _is_fresh(node: Node) -> bool:
    """Whether `node` makes a tensor of its own: not an input, nor a view of another
    tensor, whose writes would show through (circular padding copies into slices). A
    result of an op with several (`topk`'s values) is fresh when the op is."""
    if node.op == "call_function" and node.target is operator.getitem and isinstance(node.args[0], Node):
        return _is_fresh(node.args[0])
    overload = torch_overload(node.target) if node.op == "call_function" else None
    return overload is not None and not any(
        result.alias_info is not None for result in schema_of(overload).returns
    )


def _functional_form(overload: OpOverload) -> OpOverload | None:
    """`transpose.int` for `transpose_.default`: the overload of the op without the
    trailing underscore that takes the same arguments."""
    name = schema_of(overload).name.split("::")[-1]
    packet = getattr(_A, name.removesuffix("_"), None) if name.endswith("_") else None
    if packet is None:
        return None
    names = [argument.name for argument in schema_of(overload).arguments]
    for overload_name in packet.overloads():
        candidate = getattr(packet, overload_name)
        if [argument.name for argument in schema_of(candidate).arguments] == names:
            return candidate
    return None


def _mutates(node: Node) -> bool:
    overload = torch_overload(node.target) if node.op == "call_function" else None
    return overload is not None and schema_of(overload).is_mutable


def _splice(copy: Graph, node: Node, traced: torch.fx.GraphModule, env: dict[Node, Any]) -> Any:
    """Copies `traced`'s nodes into `copy` in place of `node`; the value (or values)
    that stand for `node`'s result."""
    inputs = iter(node_arguments(node)[0])
    local: dict[Node, Any] = {}
    result: Any = None
    for inner in traced.graph.nodes:
        if inner.op == "placeholder":
            local[inner] = env[next(inputs)]
        elif inner.op == "output":
            result = map_arg(inner.args[0], lambda n: local[n])
        else:
            new = copy.node_copy(inner, lambda n: local[n])
            for key in ("stack_trace", "nn_module_stack", "source_fn_stack"):  # the user's source
                if key in node.meta:
                    new.meta[key] = node.meta[key]
            new.meta[PART_OF] = node.name
            local[inner] = new
    _holds_value_of(result, node)  # a multi-result node's values: its getitem nodes hold them
    return result
