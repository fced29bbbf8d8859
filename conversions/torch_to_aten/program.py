"""The importer: `torch.export.ExportedProgram` → `aten`-level IR, built directly (no text).

    module = import_program(ep)

The program is first decomposed with `run_decompositions` and a table that keeps the
ops mlxir runs natively (`NATIVE_OPS`) and decomposes the rest to core ATen. Then every
graph node becomes IR:

- parameters, buffers (persistent or not) and lifted constants become `mlx.global`
  symbols read with `mlx.weight`; mutated buffers become `state` globals read with
  `mlx.load_state` and written back with `mlx.store_state`; their payloads are kept
  beside the module (`payloads_of(module)`), not printed;
- user inputs become function arguments (`index` for SymInt inputs), user outputs the
  returned values, in signature order;
- each `call_function` node goes through `IMPORTERS`, a table keyed by ATen overload
  packet; the node's stack trace becomes the op's location;
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
import weakref
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch
from torch.export import ExportedProgram
from torch.export.graph_signature import ConstantArgument, InputKind, OutputKind
from torch.fx import Node
from xdsl.builder import Builder
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    BFloat16Type,
    DictionaryAttr,
    FileLineColLoc,
    Float16Type,
    Float32Type,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    IntegerType,
    LocationAttr,
    ModuleOp,
    Signedness,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.irdl import IRDLOperation
from xdsl.rewriter import InsertPoint

from mlxir.codegen.errors import ProgramError
from mlxir.codegen.signature import SIGNATURE_ATTR, Signature, Tree
from mlxir.dialects import aten, mlx
from mlxir.dialects.common import index_operands, int_array

# ---------------------------------------------------------------------------
# Errors
# ---------------------------------------------------------------------------


class ImportError_(Exception):
    """Base of the importer's errors (named to avoid shadowing the builtin)."""


class UnsupportedOpsError(ImportError_):
    """Raised once per program, listing every unsupported target."""

    def __init__(self, unsupported: dict[str, list[str]], reasons: dict[str, str] | None = None):
        self.unsupported = unsupported
        self.reasons = reasons or {}
        """Why a target cannot be supported (data-dependent shapes, complex numbers)."""
        lines = [
            f"  {target}: {len(locations)} node(s), first at {locations[0]}"
            + (f"\n    {self.reasons[target]}" if target in self.reasons else "")
            for target, locations in sorted(unsupported.items())
        ]
        super().__init__(
            f"{len(unsupported)} unsupported op(s) in the exported program:\n"
            + "\n".join(lines)
        )


class UnsupportedDtypeError(ImportError_):
    pass


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------

DTYPES: dict[torch.dtype, Attribute] = {
    torch.float32: Float32Type(),
    torch.float16: Float16Type(),
    torch.bfloat16: BFloat16Type(),
    torch.bool: i1,
    torch.int8: IntegerType(8),
    torch.int16: IntegerType(16),
    torch.int32: IntegerType(32),
    torch.int64: i64,
    torch.uint8: IntegerType(8, Signedness.UNSIGNED),
}
"""torch dtype → element type. float64 and complex are rejected: MLX's GPU backend has
no float64, and the program must run the same everywhere."""


def element_type(dtype: torch.dtype) -> Attribute:
    if dtype.is_complex:
        raise UnsupportedDtypeError(f"dtype {dtype}: {_COMPLEX}")
    if dtype not in DTYPES:
        raise UnsupportedDtypeError(
            f"dtype {dtype} is not supported by mlxir (supported: "
            + ", ".join(str(d).removeprefix("torch.") for d in DTYPES)
            + "); cast the model or its inputs, e.g. model.float()"
        )
    return DTYPES[dtype]


def _static_dim(dim: int | torch.SymInt) -> int:
    if isinstance(dim, int):
        return dim
    as_int = dim.node.maybe_as_int()
    return as_int if as_int is not None else DYNAMIC_INDEX


def tensor_type_of(value: torch.Tensor) -> TensorType[Attribute]:
    return TensorType(element_type(value.dtype), [_static_dim(d) for d in value.shape])


def _symbol_name(dim: int | torch.SymInt) -> str:
    return "" if _static_dim(dim) != DYNAMIC_INDEX else str(dim)


# ---------------------------------------------------------------------------
# Decompositions
# ---------------------------------------------------------------------------

_A = torch.ops.aten

NATIVE_OPS: tuple[torch._ops.OpOverload, ...] = (
    _A.scaled_dot_product_attention.default,
    _A.linear.default,
    _A.layer_norm.default,
    _A.rms_norm.default,
    _A.embedding.default,
    _A.index.Tensor,
    _A.gelu.default,
    _A.silu.default,
    _A.matmul.default,
    _A.group_norm.default,
    _A.instance_norm.default,
    _A.index_copy.default,
    _A.logsumexp.default,
    _A.var.correction,
    _A.std.correction,
    _A.max_pool2d.default,
    _A.max_pool3d.default,
    _A.softmax.int,
    _A.log_softmax.int,
    _A.stack.default,
    _A.narrow.default,
    _A.repeat.default,
    _A.square.default,
    _A.floor_divide.default,
    # The `_copy` forms of views (ExecuTorch Edge programs are made of them) import as
    # their views; torch would decompose these to the view plus a clone.
    _A.alias_copy.default,
    _A.expand_copy.default,
    _A.squeeze_copy.default,
    _A.squeeze_copy.dim,
    _A.squeeze_copy.dims,
    _A.t_copy.default,
    _A.transpose_copy.int,
    _A.unsqueeze_copy.default,
    _A.split_with_sizes_copy.default,
)
"""Ops kept as themselves: mlxir lowers each to an MLX primitive or fast kernel."""


EXTRA_DECOMPOSED_OPS: tuple[str, ...] = (
    "bucketize.Tensor",
    "logaddexp.default",
    "trace.default",
    "isin.Tensor_Tensor",
    "upsample_bicubic2d.default",
    "upsample_bicubic2d.vec",
    "upsample_nearest1d.default",
    "upsample_nearest1d.vec",
    "upsample_linear1d.default",
    "upsample_linear1d.vec",
    "upsample_nearest3d.default",
    "upsample_nearest3d.vec",
    "upsample_trilinear3d.default",
    "upsample_trilinear3d.vec",
    "reflection_pad3d.default",
    "replication_pad3d.default",
    "take.default",
    "index_fill.int_Scalar",
    "index_fill.int_Tensor",
    "diag_embed.default",
    "_adaptive_avg_pool2d.default",
    "grid_sampler_2d.default",
    "leaky_relu.default",
    "elu.default",
    "celu.default",
    "selu.default",
    "hardsigmoid.default",
    "hardswish.default",
    "hardshrink.default",
    "softshrink.default",
    "threshold.default",
    "softplus.default",
    "mish.default",
    "glu.default",
    "logit.default",
    "frac.default",
    "nan_to_num.default",
    "heaviside.default",
    "xlogy.Tensor",
    "lerp.Scalar",
    "lerp.Tensor",
    "addcmul.default",
    "addcdiv.default",
    "baddbmm.default",
    "clamp_min.default",
    "clamp_max.default",
    "roll.default",
    "eye.default",
    "linalg_vector_norm.default",
    "pixel_shuffle.default",
    "upsample_nearest2d.default",
    "upsample_nearest2d.vec",
    "upsample_bilinear2d.default",
    "upsample_bilinear2d.vec",
    "reflection_pad1d.default",
    "reflection_pad2d.default",
    "replication_pad1d.default",
    "replication_pad2d.default",
)
"""Core ATen ops that torch keeps whole but mlxir runs as their PyTorch decompositions
(into ops it lowers natively): activations, padding modes, upsampling."""


def decomposition_table() -> dict[Any, Callable[..., Any]]:
    from torch._decomp import get_decompositions

    table = dict(torch.export.default_decompositions())
    for op in NATIVE_OPS:
        table.pop(op, None)
    extra = [
        getattr(getattr(torch.ops.aten, name.split(".")[0]), name.split(".")[1])
        for name in EXTRA_DECOMPOSED_OPS
    ]
    table.update(get_decompositions(extra))
    return table


# ---------------------------------------------------------------------------
# Import state
# ---------------------------------------------------------------------------

_PAYLOADS: weakref.WeakKeyDictionary[ModuleOp, dict[str, torch.Tensor]] = (
    weakref.WeakKeyDictionary()
)


def payloads_of(module: ModuleOp) -> dict[str, torch.Tensor]:
    """The weight, buffer and constant tensors of an imported module, by global name."""
    return _PAYLOADS.setdefault(module, {})


def location_of(node: Node) -> LocationAttr | None:
    """The innermost user frame of the node's stack trace, as `file:line:col`."""
    trace = node.meta.get("stack_trace")
    if not trace:
        return None
    frames = re.findall(r'File "([^"]+)", line (\d+)', trace)
    user_frames = [f for f in frames if "/torch/" not in f[0] and "/transformers/" not in f[0]]
    filename, line = (user_frames or frames)[-1] if (user_frames or frames) else ("", "0")
    if not filename:
        return None
    return FileLineColLoc(StringAttr(filename), IntAttr(int(line)), IntAttr(0))


def describe_location(node: Node) -> str:
    loc = location_of(node)
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data} ({node.name})"
    return f"node {node.name} (no stack trace)"


@dataclass
class ImportState:
    builder: Builder
    values: dict[Node, SSAValue | list[SSAValue]] = field(default_factory=dict)
    location: LocationAttr | None = None

    def insert(self, op: Operation) -> Operation:
        if self.location is not None:
            op.location = self.location
        self.builder.insert(op)
        return op

    # --- operands -------------------------------------------------------------

    def value(self, arg: Any) -> SSAValue:
        """A node's value, or a Python scalar as an `arith.constant` Scalar."""
        if isinstance(arg, Node):
            value = self.values[arg]
            assert isinstance(value, SSAValue), f"{arg.name} has several results"
            return value
        if isinstance(arg, bool):
            return self.insert(arith.ConstantOp(IntegerAttr(int(arg), i1))).results[0]
        if isinstance(arg, int):
            return self.insert(arith.ConstantOp(IntegerAttr(arg, i64))).results[0]
        if isinstance(arg, float):
            return self.insert(arith.ConstantOp(FloatAttr(arg, Float64Type()))).results[0]
        raise ImportError_(f"cannot use {arg!r} ({type(arg).__name__}) as an operand")

    def index_value(self, arg: Any) -> SSAValue:
        if isinstance(arg, int):
            return self.insert(arith.ConstantOp(IntegerAttr(arg, IndexType()))).results[0]
        return self.value(arg)

    def sizes(self, sizes: Sequence[Any]) -> list[SSAValue | int]:
        """An `int[]`/`SymInt[]` argument as a mixed static/dynamic list."""
        return [s if isinstance(s, int) else self.value(s) for s in sizes]


def _type_of_node(node: Node) -> Attribute:
    val = node.meta["val"]
    if isinstance(val, torch.Tensor):
        return tensor_type_of(val)
    if isinstance(val, torch.SymInt | int):
        return IndexType()
    raise ImportError_(f"node {node.name} has an unsupported value {type(val).__name__}")


Handler = Callable[[ImportState, Node], Operation | SSAValue | list[SSAValue]]

# ---------------------------------------------------------------------------
# Handlers
# ---------------------------------------------------------------------------


def _args(node: Node) -> tuple[Any, ...]:
    """A node's positional arguments, untyped: fx types them as a union the handlers
    narrow by the op's schema, which is what they read them against."""
    return tuple(node.args)


def _kwargs(node: Node) -> dict[str, Any]:
    return dict(node.kwargs)


def _arg(node: Node, index: int, name: str, default: Any = None) -> Any:
    if len(_args(node)) > index:
        return _args(node)[index]
    return _kwargs(node).get(name, default)


def _props(**values: Attribute | None) -> dict[str, Attribute]:
    return {k: v for k, v in values.items() if v is not None}


def _i64(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def _f64(value: float) -> FloatAttr:
    return FloatAttr(float(value), Float64Type())


def _unit(flag: Any) -> UnitAttr | None:
    return UnitAttr() if flag else None


def _unary(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        if len(_args(node)) > 1:  # a parameter this table does not model: never drop it
            raise ImportError_(
                f"{describe_location(node)}: {_target_name(node)} with arguments "
                f"{list(_args(node)[1:])} is not supported"
            )
        return op_cls.build(operands=[state.value(_args(node)[0])], result_types=[_type_of_node(node)])

    return handle


def _round(state: ImportState, node: Node) -> Operation:
    """`round(x, decimals=d)` as torch computes it: `round(x * 10^d) / 10^d`, or
    `round(x / 10^-d) * 10^-d` for negative `d` (round half to even throughout)."""
    round_cls = aten.UNARY_OP_CLASSES["round"]
    decimals = int(_kwargs(node).get("decimals", 0))
    source, result_type = state.value(_args(node)[0]), _type_of_node(node)
    if decimals == 0:
        return round_cls.build(operands=[source], result_types=[result_type])
    mul, div = aten.BINARY_OP_CLASSES["mul"], aten.BINARY_OP_CLASSES["div"]
    scale_in, scale_out = (mul, div) if decimals > 0 else (div, mul)
    factor = float(10 ** abs(decimals))
    scaled = state.insert(scale_in.build(operands=[source, state.value(factor)], result_types=[result_type]))
    rounded = state.insert(round_cls.build(operands=[scaled.results[0]], result_types=[result_type]))
    return scale_out.build(operands=[rounded.results[0], state.value(factor)], result_types=[result_type])


def _binary(op_cls: type[IRDLOperation], *, has_alpha: bool = False) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        alpha = _kwargs(node).get("alpha")
        props = _props(alpha=_f64(alpha) if has_alpha and alpha not in (None, 1) else None)
        if op_cls is aten.DivOp and _kwargs(node).get("rounding_mode") is not None:
            props["rounding_mode"] = StringAttr(_kwargs(node)["rounding_mode"])
        return op_cls.build(
            operands=[state.value(_args(node)[0]), state.value(_args(node)[1])],
            result_types=[_type_of_node(node)],
            properties=props,
        )

    return handle


def _gelu(state: ImportState, node: Node) -> Operation:
    approximate = _kwargs(node).get("approximate", "none")
    return aten.GeluOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_type_of_node(node)],
        properties=_props(approximate=StringAttr(approximate) if approximate != "none" else None),
    )


def _where(state: ImportState, node: Node) -> Operation:
    return aten.WhereOp.build(
        operands=[state.value(a) for a in _args(node)[:3]], result_types=[_type_of_node(node)]
    )


def _clamp(state: ImportState, node: Node) -> Operation:
    low, high = _arg(node, 1, "min"), _arg(node, 2, "max")
    return aten.ClampOp.build(
        operands=[state.value(_args(node)[0]), _optional(state, low), _optional(state, high)],
        result_types=[_type_of_node(node)],
    )


def _hardtanh(state: ImportState, node: Node) -> Operation:
    low, high = _arg(node, 1, "min_val", -1.0), _arg(node, 2, "max_val", 1.0)
    return aten.ClampOp.build(
        operands=[state.value(_args(node)[0]), [state.value(low)], [state.value(high)]],
        result_types=[_type_of_node(node)],
    )


def _to_copy(state: ImportState, node: Node) -> Operation:
    return aten.ToCopyOp(state.value(_args(node)[0]), _type_of_node(node))


def _identity(state: ImportState, node: Node) -> SSAValue:
    return state.value(_args(node)[0])


def _reduction(name: str) -> Handler:
    op_cls = aten.REDUCTION_OP_CLASSES[name]

    def handle(state: ImportState, node: Node) -> Operation:
        dims = _arg(node, 1, "dim")
        if isinstance(dims, torch.dtype):  # sum.default(self, dtype)
            dims = None
        if isinstance(dims, int):
            dims = [dims]
        keepdim = bool(_arg(node, 2, "keepdim", False))
        return op_cls.build(
            operands=[state.value(_args(node)[0])],
            result_types=[_type_of_node(node)],
            properties=_props(
                dims=int_array(dims) if dims else None, keepdim=_unit(keepdim)
            ),
        )

    return handle


def _variance_properties(node: Node) -> dict[str, Attribute]:
    """`dims`, `correction` and `keepdim` of a `var`/`std` (or `var_mean`/`std_mean`)
    call: `correction=` or the older positional `unbiased`."""
    dims = _arg(node, 1, "dim")
    if isinstance(dims, int):
        dims = [dims]
    correction = _kwargs(node).get("correction", 1 if len(_args(node)) < 3 else _args(node)[2])
    return _props(
        dims=int_array(dims) if dims else None,
        correction=_f64(correction) if correction is not None else None,
        keepdim=_unit(bool(_kwargs(node).get("keepdim", False))),
    )


def _variance(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return op_cls.build(
            operands=[state.value(_args(node)[0])],
            result_types=[_type_of_node(node)],
            properties=_variance_properties(node),
        )

    return handle


def _spread_and_mean(op_cls: type[IRDLOperation]) -> Handler:
    """`var_mean`/`std_mean`: the spread and the mean over the same dims."""

    def handle(state: ImportState, node: Node) -> list[SSAValue]:
        source = state.value(_args(node)[0])
        properties = _variance_properties(node)
        spread_type, mean_type = _multi_result_types(node)
        spread = state.insert(op_cls.build(operands=[source], result_types=[spread_type], properties=properties))
        mean_properties = {k: v for k, v in properties.items() if k != "correction"}
        mean = state.insert(
            aten.REDUCTION_OP_CLASSES["mean"].build(
                operands=[source], result_types=[mean_type], properties=mean_properties
            )
        )
        return [spread.results[0], mean.results[0]]

    return handle


def _arg_reduction(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        dim = _arg(node, 1, "dim")
        return op_cls.build(
            operands=[state.value(_args(node)[0])],
            result_types=[_type_of_node(node)],
            properties=_props(
                dim=_i64(dim) if dim is not None else None,
                keepdim=_unit(_arg(node, 2, "keepdim", False)),
            ),
        )

    return handle


def _extremum(name: str) -> Handler:
    """`max`/`min`: `.default` reduces everything (`amax`), `.other` is the elementwise
    `maximum`, `.dim` gives (values, indices) as `amax` and `argmax` along `dim` (both
    take the first extremum, and NaN wins, as torch does)."""
    reduce_cls = aten.REDUCTION_OP_CLASSES[f"a{name}"]
    arg_cls = aten.ArgmaxOp if name == "max" else aten.ArgminOp
    binary_cls = aten.BINARY_OP_CLASSES[f"{name}imum"]

    def handle(state: ImportState, node: Node) -> Operation | list[SSAValue]:
        source = state.value(_args(node)[0])
        other = _arg(node, 1, "other" if len(_args(node)) > 1 and isinstance(_args(node)[1], Node) else "dim")
        if isinstance(other, Node):
            return binary_cls.build(operands=[source, state.value(other)], result_types=[_type_of_node(node)])
        if other is None:
            return reduce_cls.build(operands=[source], result_types=[_type_of_node(node)])
        keepdim = _unit(_arg(node, 2, "keepdim", False))
        values_type, indices_type = _multi_result_types(node)
        values = state.insert(
            reduce_cls.build(
                operands=[source],
                result_types=[values_type],
                properties=_props(dims=int_array([other]), keepdim=keepdim),
            )
        )
        indices = state.insert(
            arg_cls.build(
                operands=[source],
                result_types=[indices_type],
                properties=_props(dim=_i64(other), keepdim=keepdim),
            )
        )
        return [values.results[0], indices.results[0]]

    return handle


def _along_dim(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return op_cls.build(
            operands=[state.value(_args(node)[0])],
            result_types=[_type_of_node(node)],
            properties={"dim": _i64(_arg(node, 1, "dim"))},
        )

    return handle


def _sized(op_cls: type[IRDLOperation], size_arg: int = 1) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        static, dynamic = index_operands(state.sizes(_args(node)[size_arg]))
        return op_cls.build(
            operands=[state.value(_args(node)[0]), dynamic],
            result_types=[_type_of_node(node)],
            properties={"static_sizes": int_array(static)},
        )

    return handle


def _permute(state: ImportState, node: Node) -> Operation:
    return aten.PermuteOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_type_of_node(node)],
        properties={"dims": int_array(_args(node)[1])},
    )


def _transpose(state: ImportState, node: Node) -> Operation:
    dim0, dim1 = (_args(node)[1], _args(node)[2]) if len(_args(node)) > 2 else (0, 1)
    return aten.TransposeOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_type_of_node(node)],
        properties={"dim0": _i64(dim0), "dim1": _i64(dim1)},
    )


def _unsqueeze(state: ImportState, node: Node) -> Operation:
    return aten.UnsqueezeOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_type_of_node(node)],
        properties={"dim": _i64(_args(node)[1])},
    )


def _squeeze(state: ImportState, node: Node) -> Operation:
    dims = _arg(node, 1, "dim")
    if isinstance(dims, int):
        dims = [dims]
    return aten.SqueezeOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_type_of_node(node)],
        properties=_props(dims=int_array(dims) if dims is not None else None),
    )


_INT64_MAX = 2**63 - 1


def _range_operands(state: ImportState, start: Any, end: Any, step: Any) -> tuple[list[int], list[SSAValue]]:
    bounds = state.sizes(
        [0 if start is None else start, _INT64_MAX if end is None else end, step or 1]
    )
    return index_operands(bounds)


def _slice(state: ImportState, node: Node) -> Operation:
    static, dynamic = _range_operands(
        state, _arg(node, 2, "start"), _arg(node, 3, "end"), _arg(node, 4, "step", 1)
    )
    return aten.SliceOp.build(
        operands=[state.value(_args(node)[0]), dynamic],
        result_types=[_type_of_node(node)],
        properties={"dim": _i64(_arg(node, 1, "dim", 0)), "static_bounds": int_array(static)},
    )


def _slice_scatter(state: ImportState, node: Node) -> Operation:
    static, dynamic = _range_operands(
        state, _arg(node, 3, "start"), _arg(node, 4, "end"), _arg(node, 5, "step", 1)
    )
    return aten.SliceScatterOp.build(
        operands=[state.value(_args(node)[0]), state.value(_args(node)[1]), dynamic],
        result_types=[_type_of_node(node)],
        properties={"dim": _i64(_arg(node, 2, "dim", 0)), "static_bounds": int_array(static)},
    )


def _select(state: ImportState, node: Node) -> Operation:
    static, dynamic = index_operands(state.sizes([_args(node)[2]]))
    return aten.SelectOp.build(
        operands=[state.value(_args(node)[0]), dynamic],
        result_types=[_type_of_node(node)],
        properties={"dim": _i64(_args(node)[1]), "static_index": int_array(static)},
    )


def _narrow(state: ImportState, node: Node) -> Operation:
    static, dynamic = index_operands(state.sizes([_args(node)[2], _args(node)[3]]))
    return aten.NarrowOp.build(
        operands=[state.value(_args(node)[0]), dynamic],
        result_types=[_type_of_node(node)],
        properties={"dim": _i64(_args(node)[1]), "static_bounds": int_array(static)},
    )


def _join(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return op_cls.build(
            operands=[[state.value(t) for t in _args(node)[0]]],
            result_types=[_type_of_node(node)],
            properties={"dim": _i64(_arg(node, 1, "dim", 0))},
        )

    return handle


def _multi_result_types(node: Node) -> list[Attribute]:
    return [tensor_type_of(v) for v in node.meta["val"]]


def _split(state: ImportState, node: Node) -> list[SSAValue]:
    op = aten.SplitOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_multi_result_types(node)],
        properties={"split_size": _i64(_args(node)[1]), "dim": _i64(_arg(node, 2, "dim", 0))},
    )
    state.insert(op)
    return list(op.results)


def _split_with_sizes(state: ImportState, node: Node) -> list[SSAValue]:
    op = aten.SplitWithSizesOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_multi_result_types(node)],
        properties={
            "split_sizes": int_array(_args(node)[1]),
            "dim": _i64(_arg(node, 2, "dim", 0)),
        },
    )
    state.insert(op)
    return list(op.results)


def _inserted_results(state: ImportState, op: Operation) -> list[SSAValue]:
    """A multi-result op's values, for `getitem` to pick."""
    state.insert(op)
    return list(op.results)


def _sort(state: ImportState, node: Node) -> list[SSAValue]:
    if getattr(node.target, "_overloadname", "default") == "stable":  # (self, *, stable, dim, descending)
        dim, descending = _kwargs(node).get("dim", -1), _kwargs(node).get("descending", False)
    else:  # (self, dim=-1, descending=False)
        dim, descending = _arg(node, 1, "dim", -1), _arg(node, 2, "descending", False)
    return _inserted_results(
        state,
        aten.SortOp.build(
            operands=[state.value(_args(node)[0])],
            result_types=_multi_result_types(node),
            properties=_props(dim=_i64(dim), descending=_unit(descending)),
        ),
    )


def _static_int(node: Node, value: Any, what: str) -> int:
    if not isinstance(value, int):
        raise ImportError_(f"{describe_location(node)}: {_target_name(node)} needs a static {what}")
    return value


def _topk(state: ImportState, node: Node) -> list[SSAValue]:
    k = _static_int(node, _args(node)[1], "k")
    return _inserted_results(
        state,
        aten.TopkOp.build(
            operands=[state.value(_args(node)[0])],
            result_types=_multi_result_types(node),
            properties=_props(
                k=_i64(k),
                dim=_i64(_arg(node, 2, "dim", -1)),
                smallest=_unit(not _arg(node, 3, "largest", True)),
            ),
        ),
    )


def _median(state: ImportState, node: Node) -> Operation | list[SSAValue]:
    dim = _arg(node, 1, "dim")
    op = aten.MedianOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_multi_result_types(node) if dim is not None else [_type_of_node(node)]],
        properties=_props(
            dim=_i64(dim) if dim is not None else None,
            keepdim=_unit(_arg(node, 2, "keepdim", False)),
        ),
    )
    return _inserted_results(state, op) if dim is not None else op


def _kthvalue(state: ImportState, node: Node) -> list[SSAValue]:
    k = _static_int(node, _args(node)[1], "k")
    return _inserted_results(
        state,
        aten.KthvalueOp.build(
            operands=[state.value(_args(node)[0])],
            result_types=_multi_result_types(node),
            properties=_props(
                k=_i64(k),
                dim=_i64(_arg(node, 2, "dim", -1)),
                keepdim=_unit(_arg(node, 3, "keepdim", False)),
            ),
        ),
    )


def _unbind(state: ImportState, node: Node) -> list[SSAValue]:
    """`unbind(self, dim)`: the size-1 pieces of a split along `dim`, squeezed."""
    dim = _arg(node, 1, "dim", 0)
    pieces = _multi_result_types(node)
    source = _args(node)[0]
    assert isinstance(source, Node)
    shape = [_static_dim(d) for d in source.meta["val"].shape]
    axis = dim + len(shape) if dim < 0 else dim
    shape[axis] = 1
    split = aten.SplitWithSizesOp.build(
        operands=[state.value(source)],
        result_types=[[TensorType(_element_type_of(piece), shape) for piece in pieces]],
        properties={"split_sizes": int_array([1] * len(pieces)), "dim": _i64(dim)},
    )
    state.insert(split)
    return [
        state.insert(
            aten.SqueezeOp.build(
                operands=[part], result_types=[piece], properties={"dims": int_array([dim])}
            )
        ).results[0]
        for part, piece in zip(split.results, pieces)
    ]


def _element_type_of(tensor_type: Attribute) -> Attribute:
    assert isinstance(tensor_type, TensorType)
    return tensor_type.get_element_type()


def _int_list_op(op_cls: type[IRDLOperation], prop: str) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        values = _args(node)[1]
        if not all(isinstance(v, int) for v in values):
            raise ImportError_(
                f"{describe_location(node)}: {_target_name(node)} with {prop} that depend on an "
                f"input's shape ({', '.join(str(v) for v in values)}) is not supported"
            )
        return op_cls.build(
            operands=[state.value(_args(node)[0])],
            result_types=[_type_of_node(node)],
            properties={prop: int_array(_args(node)[1])},
        )

    return handle


def _constant_pad(state: ImportState, node: Node) -> Operation:
    value = _arg(node, 2, "value", 0)
    return aten.ConstantPadNdOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_type_of_node(node)],
        properties=_props(pad=int_array(_args(node)[1]), value=_f64(value) if value else None),
    )


def _index(state: ImportState, node: Node) -> Operation:
    indices = _args(node)[1]
    positions = [i for i, idx in enumerate(indices) if idx is not None]
    return aten.IndexOp.build(
        operands=[state.value(_args(node)[0]), [state.value(indices[i]) for i in positions]],
        result_types=[_type_of_node(node)],
        properties={"indexed_dims": int_array(positions)},
    )


def _index_put(state: ImportState, node: Node) -> Operation:
    indices = _args(node)[1]
    positions = [i for i, idx in enumerate(indices) if idx is not None]
    accumulate = _arg(node, 3, "accumulate", False)
    return aten.IndexPutOp.build(
        operands=[
            state.value(_args(node)[0]),
            [state.value(indices[i]) for i in positions],
            state.value(_args(node)[2]),
        ],
        result_types=[_type_of_node(node)],
        properties=_props(indexed_dims=int_array(positions), accumulate=_unit(accumulate)),
    )


def _dim_op(op_cls: type[IRDLOperation], order: Sequence[int], dim_index: int) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return op_cls.build(
            operands=[state.value(_args(node)[i]) for i in order],
            result_types=[_type_of_node(node)],
            properties={"dim": _i64(_args(node)[dim_index])},
        )

    return handle


def _scatter(state: ImportState, node: Node) -> Operation:
    """`scatter.src/value` (self, dim, index, src|value) and their `reduce=` forms."""
    reduce = _kwargs(node).get("reduce")
    if reduce is not None and reduce not in aten.SCATTER_MODES:
        raise ImportError_(f"{describe_location(node)}: scatter reduce '{reduce}' is not supported")
    return aten.ScatterOp.build(
        operands=[state.value(_args(node)[0]), state.value(_args(node)[2]), state.value(_args(node)[3])],
        result_types=[_type_of_node(node)],
        properties=_props(dim=_i64(_args(node)[1]), reduce=StringAttr(reduce) if reduce else None),
    )


def _scatter_reduce(state: ImportState, node: Node) -> Operation:
    """`scatter_reduce.two` (self, dim, index, src, reduce, *, include_self=True), and
    `scatter_add` (self, dim, index, src), its `sum` with the input included."""
    is_add = getattr(node.target, "__name__", "").startswith("scatter_add")
    reduce = "sum" if is_add else _arg(node, 4, "reduce")
    include_self = True if is_add else _kwargs(node).get("include_self", True)
    return aten.ScatterReduceOp.build(
        operands=[state.value(_args(node)[0]), state.value(_args(node)[2]), state.value(_args(node)[3])],
        result_types=[_type_of_node(node)],
        properties=_props(
            dim=_i64(_args(node)[1]), reduce=StringAttr(reduce), include_self=_unit(include_self)
        ),
    )


def _embedding(state: ImportState, node: Node) -> Operation:
    return aten.EmbeddingOp.build(
        operands=[state.value(_args(node)[0]), state.value(_args(node)[1])],
        result_types=[_type_of_node(node)],
    )


def _masked_fill(state: ImportState, node: Node) -> Operation:
    return aten.MaskedFillOp.build(
        operands=[state.value(a) for a in _args(node)[:3]], result_types=[_type_of_node(node)]
    )


def _plain(op_cls: type[IRDLOperation], count: int) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return op_cls.build(
            operands=[state.value(a) for a in _args(node)[:count]],
            result_types=[_type_of_node(node)],
        )

    return handle


def _addmm(state: ImportState, node: Node) -> Operation:
    beta, alpha = _kwargs(node).get("beta", 1), _kwargs(node).get("alpha", 1)
    return aten.AddmmOp.build(
        operands=[state.value(a) for a in _args(node)[:3]],
        result_types=[_type_of_node(node)],
        properties=_props(
            beta=_f64(beta) if beta != 1 else None, alpha=_f64(alpha) if alpha != 1 else None
        ),
    )


def _linear(state: ImportState, node: Node) -> Operation:
    bias = _arg(node, 2, "bias")
    operands: list[SSAValue | list[SSAValue]] = [
        state.value(_args(node)[0]),
        state.value(_args(node)[1]),
        [state.value(bias)] if bias is not None else [],
    ]
    return aten.LinearOp.build(operands=operands, result_types=[_type_of_node(node)])


def _convolution(state: ImportState, node: Node) -> Operation:
    x, w, bias, stride, padding, dilation, transposed, output_padding, groups = _args(node)[:9]
    return aten.ConvolutionOp.build(
        operands=[
            state.value(x),
            state.value(w),
            [state.value(bias)] if bias is not None else [],
        ],
        result_types=[_type_of_node(node)],
        properties=_props(
            stride=int_array(stride),
            padding=int_array(padding),
            dilation=int_array(dilation),
            output_padding=int_array(output_padding) if any(output_padding) else None,
            transposed=_unit(transposed),
            groups=_i64(groups),
        ),
    )


def _window(values: Any, default: Sequence[int], n: int) -> list[int]:
    """A pooling list argument: an int stands for `n` equal entries; empty or absent
    is `default`."""
    if values is None or (isinstance(values, list | tuple) and not values):
        return list(default)
    if isinstance(values, int):
        return [values] * n
    return list(values)


def _max_pool(op_cls: type[IRDLOperation], n: int) -> Handler:
    """`max_poolNd(self, kernel, stride=[], padding=0, dilation=1, ceil_mode=False)` and
    its `_with_indices` form (whose indices are not supported)."""

    def handle(state: ImportState, node: Node) -> Operation | list[SSAValue]:
        kernel = _window(_args(node)[1], [], n)
        op = op_cls.build(
            operands=[state.value(_args(node)[0])],
            result_types=[tensor_type_of(_first_val(node))],
            properties=_props(
                kernel_size=int_array(kernel),
                stride=int_array(_window(_arg(node, 2, "stride"), kernel, n)),
                padding=int_array(_window(_arg(node, 3, "padding", 0), [0] * n, n)),
                dilation=int_array(_window(_arg(node, 4, "dilation", 1), [1] * n, n)),
                ceil_mode=_unit(_arg(node, 5, "ceil_mode", False)),
            ),
        )
        if isinstance(node.meta["val"], tuple | list):  # max_poolNd_with_indices
            state.insert(op)
            return [op.results[0]]
        return op

    return handle


def _avg_pool(op_cls: type[IRDLOperation], n: int) -> Handler:
    """`avg_poolNd(self, kernel, stride=[], padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=None)`."""

    def handle(state: ImportState, node: Node) -> Operation:
        kernel = _window(_args(node)[1], [], n)
        divisor = _arg(node, 6, "divisor_override")
        return op_cls.build(
            operands=[state.value(_args(node)[0])],
            result_types=[_type_of_node(node)],
            properties=_props(
                kernel_size=int_array(kernel),
                stride=int_array(_window(_arg(node, 2, "stride"), kernel, n)),
                padding=int_array(_window(_arg(node, 3, "padding", 0), [0] * n, n)),
                ceil_mode=_unit(_arg(node, 4, "ceil_mode", False)),
                count_include_pad=_unit(_arg(node, 5, "count_include_pad", True)),
                divisor_override=_i64(divisor) if divisor is not None else None,
            ),
        )

    return handle


def _first_val(node: Node) -> torch.Tensor:
    val = node.meta["val"]
    return val[0] if isinstance(val, tuple | list) else val


def _optional(state: ImportState, value: Any) -> list[SSAValue]:
    return [state.value(value)] if value is not None else []


def _layer_norm(state: ImportState, node: Node) -> Operation | list[SSAValue]:
    x, shape = _args(node)[0], _args(node)[1]
    weight, bias = _optional(state, _arg(node, 2, "weight")), _optional(state, _arg(node, 3, "bias"))
    eps = _arg(node, 4, "eps", 1e-5)
    op = aten.LayerNormOp.build(
        operands=[state.value(x), weight, bias],
        result_types=[tensor_type_of(_first_val(node))],
        properties={
            "normalized_shape": int_array(shape),
            "eps": _f64(eps),
        },
    )
    if isinstance(node.meta["val"], tuple | list):  # native_layer_norm
        state.insert(op)
        return [op.results[0]]
    return op


def _rms_norm(state: ImportState, node: Node) -> Operation:
    eps = _arg(node, 3, "eps")
    return aten.RmsNormOp.build(
        operands=[state.value(_args(node)[0]), _optional(state, _arg(node, 2, "weight"))],
        result_types=[_type_of_node(node)],
        properties=_props(
            normalized_shape=int_array(_args(node)[1]), eps=_f64(eps) if eps is not None else None
        ),
    )


def _batch_norm_op(
    state: ImportState, x: SSAValue, weight: Any, bias: Any, mean: SSAValue, var: SSAValue, eps: float,
    result_type: Attribute,
) -> Operation:
    """`aten.batch_norm` of `x` with per-channel statistics `mean` and `var`; `weight` and
    `bias` are graph arguments (None when absent)."""
    return aten.BatchNormOp.build(
        operands=[x, _optional(state, weight), _optional(state, bias), mean, var],
        result_types=[result_type],
        properties={"eps": _f64(eps)},
    )


def _batch_norm(state: ImportState, node: Node) -> list[SSAValue]:
    x, weight, bias, mean, var, _momentum, eps = _args(node)[:7]
    op = _batch_norm_op(
        state, state.value(x), weight, bias, state.value(mean), state.value(var), eps,
        tensor_type_of(_first_val(node)),
    )
    return [state.insert(op).results[0]]


def _batch_norm_batch_stats(state: ImportState, node: Node) -> list[SSAValue]:
    """`_native_batch_norm_legit.no_stats` (instance norm, and batch norm without running
    stats): normalized with the input's own per-channel mean and biased variance, as
    `batch_norm` with those as its statistics. Results: output, mean, 1/sqrt(var+eps)."""
    x, weight, bias, _training, _momentum, eps = _args(node)[:6]
    out_type, mean_type, invstd_type = _multi_result_types(node)
    source = state.value(x)
    dims = int_array([0, *range(2, _first_val(node).dim())])
    mean = state.insert(
        aten.REDUCTION_OP_CLASSES["mean"].build(
            operands=[source], result_types=[mean_type], properties={"dims": dims}
        )
    ).results[0]
    var = state.insert(
        aten.VarOp.build(
            operands=[source], result_types=[mean_type], properties={"dims": dims, "correction": _f64(0)}
        )
    ).results[0]
    out = state.insert(_batch_norm_op(state, source, weight, bias, mean, var, eps, out_type)).results[0]
    shifted = state.insert(
        aten.BINARY_OP_CLASSES["add"].build(operands=[var, state.value(float(eps))], result_types=[mean_type])
    ).results[0]
    invstd = state.insert(
        aten.UNARY_OP_CLASSES["rsqrt"].build(operands=[shifted], result_types=[invstd_type])
    ).results[0]
    return [out, mean, invstd]


def _group_norm(state: ImportState, node: Node) -> Operation | list[SSAValue]:
    if node.target is _A.native_group_norm.default:
        x, weight, bias, _n, _c, _hw, groups, eps = _args(node)[:8]
    else:
        x, groups = _args(node)[0], _args(node)[1]
        weight, bias, eps = _arg(node, 2, "weight"), _arg(node, 3, "bias"), _arg(node, 4, "eps", 1e-5)
    weight_v, bias_v = _optional(state, weight), _optional(state, bias)
    op = aten.GroupNormOp.build(
        operands=[state.value(x), weight_v, bias_v],
        result_types=[tensor_type_of(_first_val(node))],
        properties={
            "num_groups": _i64(groups),
            "eps": _f64(eps),
        },
    )
    if isinstance(node.meta["val"], tuple | list):
        state.insert(op)
        return [op.results[0]]
    return op


def _instance_norm(state: ImportState, node: Node) -> Operation:
    """`instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
    momentum, eps, cudnn_enabled)`: with the input's statistics it is group norm with one
    group per channel; with running statistics it is batch norm."""
    x, weight, bias, running_mean, running_var, use_input_stats, _momentum, eps = _args(node)[:8]
    if not use_input_stats:
        return _batch_norm_op(
            state, state.value(x), weight, bias, state.value(running_mean), state.value(running_var), eps,
            _type_of_node(node),
        )
    channels = x.meta["val"].shape[1]
    if not isinstance(channels, int):
        raise ImportError_(f"{describe_location(node)}: instance_norm needs a static channel count")
    return aten.GroupNormOp.build(
        operands=[state.value(x), _optional(state, weight), _optional(state, bias)],
        result_types=[_type_of_node(node)],
        properties={"num_groups": _i64(channels), "eps": _f64(eps)},
    )


def _sdpa(state: ImportState, node: Node) -> Operation:
    mask = _arg(node, 3, "attn_mask")
    dropout = _arg(node, 4, "dropout_p", 0.0)
    scale = _arg(node, 6, "scale")
    return aten.ScaledDotProductAttentionOp.build(
        operands=[*(state.value(a) for a in _args(node)[:3]), _optional(state, mask)],
        result_types=[_type_of_node(node)],
        properties=_props(
            dropout_p=_f64(dropout) if dropout else None,
            is_causal=_unit(_arg(node, 5, "is_causal", False)),
            scale=_f64(scale) if scale is not None else None,
            enable_gqa=_unit(_arg(node, 7, "enable_gqa", False)),
        ),
    )


def _creation(op_cls: type[IRDLOperation], fill: bool) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        static, dynamic = index_operands(state.sizes(_args(node)[0]))
        operands: list[SSAValue | list[SSAValue]] = [dynamic]
        if fill:
            operands.insert(0, state.value(_args(node)[1]))
        return op_cls.build(
            operands=operands,
            result_types=[_type_of_node(node)],
            properties={"static_sizes": int_array(static)},
        )

    return handle


def _full_like(state: ImportState, node: Node) -> Operation:
    return aten.FullLikeOp.build(
        operands=[state.value(_args(node)[1]), state.value(_args(node)[0])],
        result_types=[_type_of_node(node)],
    )


def _scalar_tensor(state: ImportState, node: Node) -> Operation:
    return aten.ScalarTensorOp.build(
        operands=[state.value(_args(node)[0])], result_types=[_type_of_node(node)]
    )


def _arange(state: ImportState, node: Node) -> Operation:
    overload = getattr(node.target, "_overloadname", "default")
    if overload == "default":
        bounds = [0, _arg(node, 0, "end"), 1]
    else:
        bounds = [_arg(node, 0, "start"), _arg(node, 1, "end"), _arg(node, 2, "step", 1)]
    return aten.ArangeOp.build(
        operands=[state.value(b) for b in bounds], result_types=[_type_of_node(node)]
    )


def _triangle(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        diagonal = _arg(node, 1, "diagonal", 0)
        return op_cls.build(
            operands=[state.value(_args(node)[0])],
            result_types=[_type_of_node(node)],
            properties=_props(diagonal=_i64(diagonal) if diagonal else None),
        )

    return handle


def _diagonal(state: ImportState, node: Node) -> Operation:
    """`diagonal(self, offset=0, dim1=0, dim2=1)` (and `diagonal_copy`)."""
    return aten.DiagonalOp.build(
        operands=[state.value(_args(node)[0])],
        result_types=[_type_of_node(node)],
        properties=_props(
            offset=_i64(_arg(node, 1, "offset", 0)),
            dim1=_i64(_arg(node, 2, "dim1", 0)),
            dim2=_i64(_arg(node, 3, "dim2", 1)),
        ),
    )


def _sym_size(state: ImportState, node: Node) -> Operation:
    return aten.SymSizeOp(state.value(_args(node)[0]), _args(node)[1])


def _copy(state: ImportState, node: Node) -> Operation | SSAValue:
    """`aten.copy(self, src)`, the functional form of `self.copy_(src)`: `src` cast to
    `self`'s dtype and broadcast to `self`'s shape (a static cache's `copy_`)."""
    self_node, src_node = _args(node)[0], _args(node)[1]
    assert isinstance(self_node, Node) and isinstance(src_node, Node)
    target, source = self_node.meta["val"], src_node.meta["val"]
    value = state.value(src_node)
    if source.dtype != target.dtype:
        cast_type = TensorType(element_type(target.dtype), [_static_dim(d) for d in source.shape])
        value = state.insert(aten.ToCopyOp(value, cast_type)).results[0]
    if list(source.shape) == list(target.shape):
        return value
    sizes: list[SSAValue | int] = []
    for axis, dim in enumerate(target.shape):
        size = _static_dim(dim)
        if size == DYNAMIC_INDEX:
            sizes.append(state.insert(aten.SymSizeOp(state.value(self_node), axis)).results[0])
        else:
            sizes.append(size)
    static, dynamic = index_operands(sizes)
    return aten.ExpandOp.build(
        operands=[value, dynamic],
        result_types=[_type_of_node(node)],
        properties={"static_sizes": int_array(static)},
    )


def _dropped(state: ImportState, node: Node) -> list[SSAValue]:
    return []


IMPORTERS: dict[str, Handler] = {
    **{f"aten.{name}": _unary(cls) for name, cls in aten.UNARY_OP_CLASSES.items()},
    **{
        f"aten.{name}": _binary(cls, has_alpha=name in ("add", "sub"))
        for name, cls in aten.BINARY_OP_CLASSES.items()
    },
    **{f"aten.{name}": _reduction(name) for name in aten.REDUCTION_OPS},
    "aten.__and__": _binary(aten.BINARY_OP_CLASSES["bitwise_and"]),
    "aten.__or__": _binary(aten.BINARY_OP_CLASSES["bitwise_or"]),
    "aten.__xor__": _binary(aten.BINARY_OP_CLASSES["bitwise_xor"]),
    "aten.__lshift__": _binary(aten.BINARY_OP_CLASSES["bitwise_left_shift"]),
    "aten.__rshift__": _binary(aten.BINARY_OP_CLASSES["bitwise_right_shift"]),
    "aten.round": _round,
    "aten.gelu": _gelu,
    "aten.where": _where,
    "aten.clamp": _clamp,
    "aten.hardtanh": _hardtanh,
    "aten._to_copy": _to_copy,
    # ExecuTorch's dim-order forms: a dim order is a memory layout, the values are those
    # of `_to_copy` and `clone`.
    "dim_order_ops._to_dim_order_copy": _to_copy,
    "dim_order_ops._clone_dim_order": _unary(aten.UNARY_OP_CLASSES["clone"]),
    "aten.copy": _copy,
    "aten.alias": _identity,
    "aten.detach": _identity,
    "aten.lift_fresh_copy": _identity,
    "aten.contiguous": _identity,
    "aten.var": _variance(aten.VarOp),
    "aten.std": _variance(aten.StdOp),
    "aten.var_mean": _spread_and_mean(aten.VarOp),
    "aten.std_mean": _spread_and_mean(aten.StdOp),
    "aten.max": _extremum("max"),
    "aten.min": _extremum("min"),
    "aten.argmax": _arg_reduction(aten.ArgmaxOp),
    "aten.argmin": _arg_reduction(aten.ArgminOp),
    "aten.sort": _sort,
    "aten.topk": _topk,
    "aten.median": _median,
    "aten.kthvalue": _kthvalue,
    "aten.cumsum": _along_dim(aten.CumsumOp),
    "aten.cumprod": _along_dim(aten.CumprodOp),
    "aten.logcumsumexp": _along_dim(aten.LogcumsumexpOp),
    "aten._softmax": _along_dim(aten.SoftmaxOp),
    "aten.softmax": _along_dim(aten.SoftmaxOp),
    "aten._log_softmax": _along_dim(aten.LogSoftmaxOp),
    "aten.log_softmax": _along_dim(aten.LogSoftmaxOp),
    "aten.view": _sized(aten.ViewOp),
    "aten._unsafe_view": _sized(aten.ViewOp),
    "aten.reshape": _sized(aten.ReshapeOp),
    "aten.expand": _sized(aten.ExpandOp),
    "aten.permute": _permute,
    "aten.transpose": _transpose,
    "aten.t": _transpose,
    "aten.unsqueeze": _unsqueeze,
    "aten.squeeze": _squeeze,
    "aten.slice": _slice,
    "aten.slice_scatter": _slice_scatter,
    "aten.select": _select,
    "aten.narrow": _narrow,
    "aten.cat": _join(aten.CatOp),
    "aten.stack": _join(aten.StackOp),
    "aten.split": _split,
    "aten.split_with_sizes": _split_with_sizes,
    "aten.unbind": _unbind,
    "aten.flip": _int_list_op(aten.FlipOp, "dims"),
    "aten.repeat": _int_list_op(aten.RepeatOp, "repeats"),
    "aten.constant_pad_nd": _constant_pad,
    "aten.index": _index,
    "aten.index_put": _index_put,
    "aten.index_select": _dim_op(aten.IndexSelectOp, [0, 2], 1),
    "aten.index_copy": _dim_op(aten.IndexCopyOp, [0, 2, 3], 1),
    "aten.gather": _dim_op(aten.GatherOp, [0, 2], 1),
    "aten.scatter": _scatter,
    "aten.scatter_add": _scatter_reduce,
    "aten.scatter_reduce": _scatter_reduce,
    "aten.embedding": _embedding,
    "aten.masked_fill": _masked_fill,
    "aten.matmul": _plain(aten.MatmulOp, 2),
    "aten.mm": _plain(aten.MmOp, 2),
    "aten.bmm": _plain(aten.BmmOp, 2),
    "aten.addmm": _addmm,
    "aten.linear": _linear,
    "aten.convolution": _convolution,
    "aten.max_pool2d": _max_pool(aten.MaxPool2dOp, 2),
    "aten.max_pool2d_with_indices": _max_pool(aten.MaxPool2dOp, 2),
    "aten.max_pool3d": _max_pool(aten.MaxPool3dOp, 3),
    "aten.max_pool3d_with_indices": _max_pool(aten.MaxPool3dOp, 3),
    "aten.avg_pool2d": _avg_pool(aten.AvgPool2dOp, 2),
    "aten.avg_pool3d": _avg_pool(aten.AvgPool3dOp, 3),
    "aten.layer_norm": _layer_norm,
    "aten.native_layer_norm": _layer_norm,
    "aten.rms_norm": _rms_norm,
    "aten._native_batch_norm_legit_no_training": _batch_norm,
    "aten._native_batch_norm_legit": _batch_norm_batch_stats,
    "aten.instance_norm": _instance_norm,
    "aten.group_norm": _group_norm,
    "aten.native_group_norm": _group_norm,
    "aten.scaled_dot_product_attention": _sdpa,
    "aten.full": _creation(aten.FullOp, fill=True),
    "aten.zeros": _creation(aten.ZerosOp, fill=False),
    # `empty`'s values are unspecified (whatever the memory held); zeros are such values,
    # and the graphs that use it (circular padding) overwrite every element.
    "aten.empty": _creation(aten.ZerosOp, fill=False),
    "aten.ones": _creation(aten.OnesOp, fill=False),
    "aten.zeros_like": _plain(aten.ZerosLikeOp, 1),
    "aten.ones_like": _plain(aten.OnesLikeOp, 1),
    "aten.full_like": _full_like,
    "aten.scalar_tensor": _scalar_tensor,
    "aten.arange": _arange,
    "aten.diagonal": _diagonal,
    "aten.tril": _triangle(aten.TrilOp),
    "aten.triu": _triangle(aten.TriuOp),
    "aten.sym_size": _sym_size,
    "aten._assert_scalar": _dropped,
    "aten._assert_tensor_metadata": _dropped,
    "aten.sym_constrain_range_for_size": _dropped,
    "aten.sym_constrain_range": _dropped,
    "aten._assert_async": _dropped,
}
"""ATen overload packet → handler. Overloads of one packet (`add.Tensor`, `add.Scalar`)
share a handler: operand types tell them apart in the IR."""

COPY_FORMS: dict[str, str] = {
    f"aten.{view}_copy": f"aten.{view}"
    for view in (
        "alias", "view", "expand", "permute", "transpose", "t", "unsqueeze", "squeeze",
        "slice", "select", "split", "split_with_sizes", "unbind", "diagonal",
    )
}
"""The `_copy` form of a view (ExecuTorch Edge programs are made of them) → the view:
values are values, so both import as the same op."""
IMPORTERS.update({copy: IMPORTERS[view] for copy, view in COPY_FORMS.items()})


def _index_binary(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        make: Any = op_cls
        return make(state.index_value(_args(node)[0]), state.index_value(_args(node)[1]))

    return handle


def _index_compare(predicate: str) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return arith.CmpiOp(
            state.index_value(_args(node)[0]), state.index_value(_args(node)[1]), predicate
        )

    return handle


def _index_neg(state: ImportState, node: Node) -> Operation:
    zero = state.index_value(0)
    return arith.SubiOp(zero, state.index_value(_args(node)[0]))


SYMBOLIC_IMPORTERS: dict[Callable[..., Any], Handler] = {
    operator.add: _index_binary(arith.AddiOp),
    operator.sub: _index_binary(arith.SubiOp),
    operator.mul: _index_binary(arith.MuliOp),
    operator.floordiv: _index_binary(arith.FloorDivSIOp),
    operator.mod: _index_binary(arith.RemSIOp),
    operator.neg: _index_neg,
    torch.sym_min: _index_binary(arith.MinSIOp),
    torch.sym_max: _index_binary(arith.MaxSIOp),
    operator.eq: _index_compare("eq"),
    operator.ne: _index_compare("ne"),
    operator.lt: _index_compare("slt"),
    operator.le: _index_compare("sle"),
    operator.gt: _index_compare("sgt"),
    operator.ge: _index_compare("sge"),
}
"""Python/torch symbolic-integer ops → `arith` on `index` values."""


def torch_overload(target: Any) -> torch._ops.OpOverload | None:
    """The torch operator overload a graph node calls: the target itself, or the one an
    ExecuTorch Edge op (`EdgeOpOverload`, which wraps it as `_op`) stands for."""
    if isinstance(target, torch._ops.OpOverload):
        return target
    wrapped = getattr(target, "_op", None)
    return wrapped if isinstance(wrapped, torch._ops.OpOverload) else None


def packet_name(overload: torch._ops.OpOverload) -> str:
    """`aten.add` for `aten::add.Tensor`: the key of `IMPORTERS`."""
    return overload.overloadpacket._qualified_op_name.replace("::", ".")


def _handler_for(node: Node) -> Handler | None:
    target = node.target
    if target is operator.getitem:
        return _getitem
    if target in SYMBOLIC_IMPORTERS:
        return SYMBOLIC_IMPORTERS[target]  # type: ignore[index]
    overload = torch_overload(target)
    return IMPORTERS.get(packet_name(overload)) if overload is not None else None


def _getitem(state: ImportState, node: Node) -> SSAValue:
    source = state.values[_args(node)[0]]  # type: ignore[index]
    assert isinstance(source, list)
    index = _args(node)[1]
    assert isinstance(index, int)
    if index >= len(source):
        raise ImportError_(
            f"{describe_location(node)}: result #{index} of {_args(node)[0]} is not supported"
        )
    return source[index]


def _target_name(node: Node) -> str:
    target = node.target
    overload = torch_overload(target)
    if overload is not None:
        return str(overload)
    return getattr(target, "__name__", str(target))


# ---------------------------------------------------------------------------
# The program
# ---------------------------------------------------------------------------


_DATA_DEPENDENT = (
    "its output's shape depends on the values of its input, not only on its shape; an mlxir "
    "program computes every shape from its inputs' shapes (MLX has no data-dependent shapes)"
)
_COMPLEX = (
    "complex numbers are not supported by mlxir (no complex element type); write the "
    "computation on real tensors (e.g. rotary embeddings with cos/sin)"
)
UNSUPPORTED_BECAUSE: dict[str, str] = {
    "aten.nonzero": f"{_DATA_DEPENDENT}; torch.where(mask, x, y) keeps the shape",
    "aten.argwhere": _DATA_DEPENDENT,
    "aten.masked_select": f"{_DATA_DEPENDENT}; torch.where(mask, x, 0) keeps the shape",
    "aten._unique2": _DATA_DEPENDENT,
    "aten.unique_dim": _DATA_DEPENDENT,
    "aten.unique_consecutive": _DATA_DEPENDENT,
    "aten._local_scalar_dense": (
        "`.item()` (or int(t), float(t), bool(t)) reads a tensor's value while exporting: the "
        "result depends on the data, which a compiled program cannot (keep it a tensor)"
    ),
    "aten.view_as_complex": _COMPLEX,
    "aten.view_as_real": _COMPLEX,
    "aten.complex": _COMPLEX,
    "aten.polar": _COMPLEX,
}
"""ATen packets mlxir cannot support, and why (the error says it)."""

BOOL_MASK_INDEX = "aten.index.Tensor (a bool mask index, x[mask])"


def _unsupported_because(node: Node) -> tuple[str, str] | None:
    """(what, why) for a node mlxir cannot support by design, whatever its handler."""
    target = torch_overload(node.target)
    if target is None:
        return None
    packet = packet_name(target)
    if packet in UNSUPPORTED_BECAUSE:
        return str(target), UNSUPPORTED_BECAUSE[packet]
    if packet == "aten.index":
        indices = _args(node)[1] if len(_args(node)) > 1 else ()
        for index in indices if isinstance(indices, list | tuple) else ():
            value = index.meta.get("val") if isinstance(index, Node) else None
            if isinstance(value, torch.Tensor) and value.dtype == torch.bool:
                return BOOL_MASK_INDEX, (
                    f"{_DATA_DEPENDENT}: a bool mask selects as many elements as it has true "
                    "values; torch.where(mask, x, 0) keeps the shape"
                )
    values = node.meta.get("val")
    for value in values if isinstance(values, list | tuple) else (values,):
        if isinstance(value, torch.Tensor) and value.dtype.is_complex:
            return f"{target} (on complex numbers)", _COMPLEX
    return None


def _check_supported(graph_nodes: Sequence[Node]) -> None:
    unsupported: dict[str, list[str]] = {}
    reasons: dict[str, str] = {}
    for node in graph_nodes:
        if node.op != "call_function":
            continue
        because = _unsupported_because(node)
        if because is not None:
            unsupported.setdefault(because[0], []).append(describe_location(node))
            reasons[because[0]] = because[1]
        elif _handler_for(node) is None:
            unsupported.setdefault(_target_name(node), []).append(describe_location(node))
    if unsupported:
        raise UnsupportedOpsError(unsupported, reasons)


def _global_name(name: str) -> str:
    return name


def import_program(ep: ExportedProgram, *, decompose: bool = True) -> ModuleOp:
    """Imports an ExportedProgram as an `aten`-level module with `@forward`."""
    if decompose:
        from mlxir.quiet import quiet_leafspec_deprecation

        try:
            with quiet_leafspec_deprecation():  # torch's own deepcopy of its LeafSpecs
                ep = ep.run_decompositions(decomposition_table())
        except Exception as error:  # torch re-traces the program: any failure is torch's
            raise ImportError_(
                f"torch.export's run_decompositions failed on this program "
                f"({type(error).__name__}: {error}); it happens before mlxir sees the graph "
                "(e.g. a torch.export.load'ed program with derived dims such as 2*Dim('h')); "
                "compile the ExportedProgram in the process that exported it"
            ) from error
    graph = ep.graph_module.graph
    nodes = list(graph.nodes)
    _check_supported(nodes)

    signature = ep.graph_signature
    input_specs = {spec.arg.name: spec for spec in signature.input_specs}  # type: ignore[union-attr]
    mutated = {
        spec.target: spec.arg.name
        for spec in signature.output_specs
        if spec.kind is OutputKind.BUFFER_MUTATION
    }

    module = ModuleOp([])
    payloads = payloads_of(module)
    globals_block = module.body.block

    user_placeholders = [
        n for n in nodes if n.op == "placeholder" and input_specs[n.name].kind is InputKind.USER_INPUT
    ]
    constants = {
        n.name: input_specs[n.name].arg.value  # type: ignore[union-attr]
        for n in user_placeholders
        if isinstance(input_specs[n.name].arg, ConstantArgument) and not n.users
    }
    user_inputs = [n for n in user_placeholders if n.name not in constants]
    arg_types = [_type_of_node(n) for n in user_inputs]
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
            globals_block.add_op(mlx.GlobalOp(name, tensor_type, kind))
            payloads[name] = tensor.detach()
            if alias is not None:
                aliases[alias] = name
        from xdsl.dialects.builtin import SymbolRefAttr

        access = mlx.LoadStateOp if kind == "state" else mlx.WeightOp
        op = access.build(
            properties={"global_name": SymbolRefAttr(name)}, result_types=[tensor_type]
        )
        state.insert(op)
        op.results[0].name_hint = node.name
        state.values[node] = op.results[0]

    returned: list[SSAValue] = []
    output_leaves: list[Any] = []
    for node in nodes:
        if node.op == "call_function":
            handler = _handler_for(node)
            assert handler is not None
            state.location = location_of(node)
            result = handler(state, node)
            if isinstance(result, Operation):
                state.insert(result)
                values = list(result.results)
                if node.target is not operator.getitem and len(values) == 1:
                    values[0].name_hint = _name_hint(node.name)
                state.values[node] = values[0] if len(values) == 1 else list[SSAValue](values)
            else:
                state.values[node] = result
        elif node.op == "output":
            state.location = None
            flat = list(_args(node)[0])  # type: ignore[arg-type]
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
                else:
                    raise ImportError_(f"output kind {spec.kind.name} is not supported")

    state.insert(func.ReturnOp(*returned))
    function = func.FuncOp(
        "forward", (arg_types, [v.type for v in returned]), Region(body)
    )
    function.attributes.update(_shape_attributes(ep, user_inputs))
    signature = signature_of(ep, [constants.get(n.name, _INPUT) for n in user_placeholders], output_leaves)
    if signature is not None:
        function.attributes[SIGNATURE_ATTR] = signature.to_attr()
    globals_block.add_op(function)
    return module


_INPUT = object()
"""A user input that is a program input (not a constant the export fixed)."""


def signature_of(
    ep: ExportedProgram, user_inputs: Sequence[Any], user_outputs: Sequence[Any]
) -> Signature | None:
    """The call signature of `ep` (its `in_spec` and `out_spec`) for a program whose
    inputs and outputs are the `_INPUT` entries of `user_inputs` and `user_outputs`
    (one per user input or output, in order; the others are constants the export
    fixed). None when the export has no specs or they do not describe these inputs
    and outputs (an ExecuTorch partition's program): such a program is called flat."""
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
    signature = Signature(inputs, outputs, tuple(names) if usable else ())
    try:  # the checks the loader makes, so a program that compiles also loads
        return Signature.from_data(
            signature.to_data(), sum(1 for v in user_inputs if v is _INPUT), num_outputs
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
    if isinstance(context, type) and issubclass(context, tuple) and hasattr(context, "_fields"):
        fields: tuple[str, ...] = getattr(context, "_fields")  # noqa: B009 (a namedtuple class)
        return Tree("namedtuple", children, fields, context.__name__)
    keys = (
        tuple(context)
        if isinstance(context, list | tuple) and all(isinstance(k, str) for k in context)
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
    from xdsl.dialects.builtin import SymbolRefAttr

    return SymbolRefAttr(name)


def _name_hint(name: str) -> str | None:
    return name if re.fullmatch(r"[A-Za-z_][\w.$-]*", name) else None


def _bound(value: Any, unbounded: int) -> int:
    """A range bound as an int; torch's (and sympy's) infinities become `unbounded`."""
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError, AttributeError):
        return unbounded


def _shape_attributes(ep: ExportedProgram, user_inputs: Sequence[Node]) -> dict[str, Attribute]:
    """The export's dynamic dims and their ranges, for the runtime's input checks."""
    ranges: dict[str, Attribute] = {}
    for symbol, value_range in ep.range_constraints.items():
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
