"""What every importer module shares: the errors, element and tensor types, source
locations, the import state, and a node's arguments read by the name its ATen schema
gives them (`arguments_of`)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any, cast

import torch
from torch._ops import OpOverload
from torch.fx import Node
from xdsl.builder import Builder
from xdsl.dialects import arith
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    FileLineColLoc,
    Float64Type,
    FloatAttr,
    IndexType,
    IntAttr,
    IntegerAttr,
    LocationAttr,
    StringAttr,
    TensorType,
    UnitAttr,
    i1,
    i64,
)
from xdsl.ir import Attribute, Operation, SSAValue

from mlxir.support import dtypes

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


COMPLEX_UNSUPPORTED = (
    "complex numbers are supported as complex64 only, MLX's one complex type (float32 "
    "real and imaginary parts), and only by the ops that move, cast, add, multiply, "
    "conjugate and Fourier-transform them, and their abs and angle"
)

COMPLEX_PACKETS: frozenset[str] = frozenset(
    f"aten.{name}"
    for name in (
        # casts, copies and views
        "_to_copy", "to", "type_as", "clone", "copy", "alias", "contiguous", "lift_fresh_copy",
        "detach", "view", "_unsafe_view", "reshape", "permute", "transpose", "t", "squeeze",
        "unsqueeze", "expand", "slice", "select", "narrow", "cat", "stack", "split",
        "split_with_sizes", "unbind", "flip", "constant_pad_nd", "index_select", "movedim",
        "flatten", "unfold", "where",
        # arithmetic MLX computes on complex64 as on reals
        "add", "sub", "mul", "neg", "sum",
        # complex numbers proper
        "_conj", "conj", "_conj_physical", "conj_physical", "resolve_conj", "view_as_real",
        "view_as_complex", "complex", "polar", "_fft_r2c", "_fft_c2c", "_fft_c2r",
        # reading only shapes and dtypes
        "_assert_tensor_metadata", "sym_size", "sym_numel", "sym_stride", "sym_storage_offset",
    )
)
"""ATen packets imported with complex64 operands or results; any other op on complex
values is refused by name, before an op of the wrong type is built."""

# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------

PROGRAM_DTYPES = (
    "float32", "float16", "bfloat16", "float64", "bool", "int8", "int16", "int32", "int64", "uint8",
    "complex64",
)
"""The element types a program's tensors may have (rows of `mlxir/dtypes.py`). float64
runs on MLX's CPU backend only: a program holding it is refused at load on a GPU
(`runtime/program.py`). Of the complex types only complex64 exists in MLX."""

DTYPES: dict[torch.dtype, Attribute] = {
    dtypes.BY_NAME[name].torch: dtypes.BY_NAME[name].ir for name in PROGRAM_DTYPES
}
"""torch dtype → element type, for the program's dtypes."""


def element_type(dtype: torch.dtype) -> Attribute:
    if dtype.is_complex and dtype not in DTYPES:
        raise UnsupportedDtypeError(f"dtype {dtype}: {COMPLEX_UNSUPPORTED}")
    if dtype not in DTYPES:
        raise UnsupportedDtypeError(
            f"dtype {dtype} is not supported by mlxir (supported: "
            + ", ".join(str(d).removeprefix("torch.") for d in DTYPES)
            + "); cast the model or its inputs, e.g. model.float()"
        )
    return DTYPES[dtype]


def static_dim(dim: int | torch.SymInt) -> int:
    if isinstance(dim, int):
        return dim
    as_int = cast(int | None, dim.node.maybe_as_int())  # pyright: ignore[reportUnknownMemberType] (torch's SymNode is untyped)
    return as_int if as_int is not None else DYNAMIC_INDEX


def tensor_type_of(value: torch.Tensor) -> TensorType[Attribute]:
    return TensorType(element_type(value.dtype), [static_dim(d) for d in value.shape])


def element_type_of(tensor_type: Attribute) -> Attribute:
    assert isinstance(tensor_type, TensorType)
    return cast(TensorType[Attribute], tensor_type).get_element_type()


def type_of_node(node: Node) -> Attribute:
    val = node.meta["val"]
    if isinstance(val, torch.Tensor):
        return tensor_type_of(val)
    if isinstance(val, torch.SymInt | int):
        return IndexType()
    raise ImportError_(f"node {node.name} has an unsupported value {type(val).__name__}")


def result_types(node: Node) -> list[Attribute]:
    """The types of a node with several tensor results."""
    return [tensor_type_of(v) for v in node.meta["val"]]


def first_value(node: Node) -> torch.Tensor:
    """The node's tensor, or its first one for a node with several results."""
    val = node.meta["val"]
    return cast(torch.Tensor, val[0]) if isinstance(val, tuple | list) else val


def has_several_results(node: Node) -> bool:
    return isinstance(node.meta["val"], tuple | list)


# ---------------------------------------------------------------------------
# Targets and locations
# ---------------------------------------------------------------------------


def torch_overload(target: Any) -> OpOverload | None:
    """The torch operator overload a graph node calls: the target itself, or the one an
    ExecuTorch Edge op (`EdgeOpOverload`, which wraps it as `_op`) stands for."""
    if isinstance(target, OpOverload):
        return cast(OpOverload, target)
    wrapped = getattr(target, "_op", None)
    return cast(OpOverload, wrapped) if isinstance(wrapped, OpOverload) else None


def packet_name(overload: OpOverload) -> str:
    """`aten.add` for `aten::add.Tensor`: the key of `IMPORTERS`."""
    return overload.overloadpacket._qualified_op_name.replace("::", ".")  # pyright: ignore[reportPrivateUsage] (torch's private API: the packet's `ns::name`)


def schema_of(overload: OpOverload) -> torch.FunctionSchema:
    """The overload's schema: its arguments, their defaults, its results' aliasing."""
    return overload._schema  # pyright: ignore[reportPrivateUsage] (torch's private API: an overload's schema has no public accessor)


def target_name(node: Node) -> str:
    target = node.target
    overload = torch_overload(target)
    if overload is not None:
        return str(overload)
    return getattr(target, "__name__", str(target))


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


def refuse(node: Node, what: str) -> ImportError_:
    """The error for a node this importer cannot express: where, which op, and why."""
    return ImportError_(f"{describe_location(node)}: {target_name(node)} {what}")


# ---------------------------------------------------------------------------
# Arguments
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Arguments:
    """An ATen call's arguments by the names its schema gives them, each one passed
    positionally, by keyword, or left to its default: `args["dim"]` is the same
    whichever form the exporter chose, so an argument passed equal to its default and
    one omitted import alike."""

    node: Node
    values: dict[str, Any]
    defaults: dict[str, Any]
    """The schema's default of each argument that has one."""

    def __getitem__(self, name: str) -> Any:
        if name not in self.values:
            raise refuse(self.node, f"has no argument '{name}'")
        return self.values[name]

    def get(self, name: str, absent: Any = None) -> Any:
        """The argument, or `absent` for an overload whose schema lacks it."""
        return self.values.get(name, absent)

    def __contains__(self, name: str) -> bool:
        return name in self.values

    def __iter__(self) -> Iterator[str]:
        return iter(self.values)

    def unmodelled(self, *modelled: str) -> dict[str, Any]:
        """The arguments other than `modelled` whose values are not their defaults: what
        a handler that reads only `modelled` would silently drop."""
        return {
            name: value
            for name, value in self.values.items()
            if name not in modelled and (name not in self.defaults or value != self.defaults[name])
        }


def arguments_of(node: Node) -> Arguments:
    """Binds a torch operator call's `args` and `kwargs` to its schema, as a Python call
    binds to a signature: positional arguments in order, then keywords, then defaults."""
    overload = torch_overload(node.target)
    assert overload is not None, f"{node.name} does not call a torch operator"
    schema = schema_of(overload)
    positional, keywords = tuple(node.args), dict(node.kwargs)
    values: dict[str, Any] = {}
    defaults: dict[str, Any] = {}
    for index, argument in enumerate(schema.arguments):
        if argument.has_default_value():
            defaults[argument.name] = argument.default_value
        if index < len(positional) and not argument.kwarg_only:
            values[argument.name] = positional[index]
        elif argument.name in keywords:
            values[argument.name] = keywords.pop(argument.name)
        elif argument.has_default_value():
            values[argument.name] = argument.default_value
        else:
            raise refuse(node, f"is missing its argument '{argument.name}'")
    accepted_positionally = sum(1 for argument in schema.arguments if not argument.kwarg_only)
    if len(positional) > accepted_positionally or keywords:
        raise refuse(
            node,
            f"has arguments its schema ({schema}) does not: {list(positional[accepted_positionally:])}"
            + (f", {keywords}" if keywords else ""),
        )
    return Arguments(node, values, defaults)


def positional_args(node: Node, count: int) -> tuple[Any, ...]:
    """The arguments of a call without an ATen schema (`operator.getitem`, the symbolic
    `operator.add`, `torch.sym_min`), which Python passes by position."""
    if len(node.args) != count or node.kwargs:
        raise refuse(node, f"takes {count} positional argument(s), not {node.args}, {node.kwargs}")
    return tuple(node.args)


# ---------------------------------------------------------------------------
# Import state
# ---------------------------------------------------------------------------


@dataclass
class ImportState:
    builder: Builder
    values: dict[Node, SSAValue | list[SSAValue | None]] = field(
        default_factory=dict[Node, SSAValue | list[SSAValue | None]]
    )
    """Each imported node's value; a node with several results has a list, None where
    a result mlxir does not compute (an error when something reads it)."""
    location: LocationAttr | None = None

    def insert(self, op: Operation) -> Operation:
        if self.location is not None:
            op.location = self.location
        self.builder.insert(op)
        return op

    def inserted_results(self, op: Operation) -> list[SSAValue]:
        """A multi-result op's values, for `getitem` to pick."""
        self.insert(op)
        return list(op.results)

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
        if isinstance(arg, complex):
            raise ImportError_(f"{COMPLEX_SCALAR} (got {arg})")
        raise ImportError_(f"cannot use {arg!r} ({type(arg).__name__}) as an operand")

    def optional_value(self, arg: Any) -> list[SSAValue]:
        """An optional operand: empty for None."""
        return [self.value(arg)] if arg is not None else []

    def index_value(self, arg: Any) -> SSAValue:
        if isinstance(arg, int):
            return self.insert(arith.ConstantOp(IntegerAttr(arg, IndexType()))).results[0]
        return self.value(arg)

    def sizes(self, sizes: Sequence[Any]) -> list[SSAValue | int]:
        """An `int[]`/`SymInt[]` argument as a mixed static/dynamic list."""
        return [s if isinstance(s, int) else self.value(s) for s in sizes]


Handler = Callable[[ImportState, Node], Operation | SSAValue | list[SSAValue] | list[SSAValue | None]]
"""Imports one node: an op to insert, or the value(s) the node stands for."""

# ---------------------------------------------------------------------------
# Properties
# ---------------------------------------------------------------------------


def props(**values: Attribute | None) -> dict[str, Attribute]:
    """The properties that are set (an absent optional property is None)."""
    return {k: v for k, v in values.items() if v is not None}


def i64_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, i64)


def f64_attr(value: float) -> FloatAttr:
    if isinstance(value, complex):
        raise ImportError_(f"{COMPLEX_SCALAR} (got {value})")
    return FloatAttr(float(value), Float64Type())


COMPLEX_SCALAR = (
    "a complex Python number cannot be a scalar argument: mlxir's scalars are real "
    "(write it as a complex64 tensor)"
)


def unit_attr(flag: Any) -> UnitAttr | None:
    return UnitAttr() if flag else None


def static_int(node: Node, value: Any, what: str) -> int:
    if not isinstance(value, int):
        raise refuse(node, f"needs a static {what}")
    return value
