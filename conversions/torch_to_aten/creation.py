"""Creation ops: full/zeros/ones/empty, their `_like` forms, scalar_tensor and arange."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from torch.fx import Node
from xdsl.dialects.builtin import DenseArrayBase, Float64Type, StringAttr, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportState,
    arguments_of,
    refuse,
    type_of_node,
)
from mlxir.dialects import aten
from mlxir.dialects.common import index_operands, int_array


def _filled(op_cls: type[IRDLOperation], *, with_fill_value: bool) -> Handler:
    """`op(size, ...)`, filled with the `fill_value` argument or with the op's constant."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        static, dynamic = index_operands(state.sizes(args["size"]))
        fill: list[SSAValue] = [state.value(args["fill_value"])] if with_fill_value else []
        return op_cls.build(
            operands=[*fill, dynamic],
            result_types=[type_of_node(node)],
            properties={"static_sizes": int_array(static)},
        )

    return handle


def _filled_like(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return op_cls.build(
            operands=[state.value(arguments_of(node)["self"])], result_types=[type_of_node(node)]
        )

    return handle


def _full_like(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    return aten.FullLikeOp.build(
        operands=[state.value(args["fill_value"]), state.value(args["self"])],
        result_types=[type_of_node(node)],
    )


def _scalar_tensor(state: ImportState, node: Node) -> Operation:
    return aten.ScalarTensorOp.build(
        operands=[state.value(arguments_of(node)["s"])], result_types=[type_of_node(node)]
    )


def _arange(state: ImportState, node: Node) -> Operation:
    """`arange(end)`, `arange.start(start, end)`, `arange.start_step(start, end, step=1)`."""
    args = arguments_of(node)
    bounds = [args.get("start", 0), args["end"], args.get("step", 1)]
    return aten.ArangeOp.build(
        operands=[state.value(b) for b in bounds], result_types=[type_of_node(node)]
    )


def _refuse_generator(node: Node, args: Any) -> None:
    """mlxir draws from MLX's generator: a torch.Generator argument is refused."""
    if args.get("generator") is not None:
        raise refuse(node, "with a torch.Generator is not supported: mlxir draws from MLX's generator")


def _parameters(node: Node, args: Any, names: Sequence[str], defaults: Sequence[float]) -> DenseArrayBase:
    """A sampler's parameters, which must be numbers the export fixed."""
    _refuse_generator(node, args)
    values: list[float] = []
    for name, default in zip(names, defaults):
        value = args.get(name, default)
        if value is None:
            value = default
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise refuse(node, f"needs a constant {name}, got {type(value).__name__}")
        values.append(float(value))
    return DenseArrayBase.from_list(Float64Type(), values)


Sampler = Callable[[ImportState, Node], Operation]


def _random(distribution: str, names: Sequence[str], defaults: Sequence[float]) -> Sampler:
    """A sampler given its sizes (`rand(size)`, `randint.low(low, high, size)`, ...)."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        parameters = _parameters(node, args, names, defaults)
        static, dynamic = index_operands(state.sizes(args["size"]))
        return aten.RandomOp.build(
            operands=[dynamic],
            result_types=[type_of_node(node)],
            properties={
                "distribution": StringAttr(distribution),
                "parameters": parameters,
                "static_sizes": int_array(static),
            },
        )

    return handle


def _random_like(distribution: str, names: Sequence[str], defaults: Sequence[float]) -> Sampler:
    """A sampler shaped like its `self` (`rand_like`, and the functional forms of the
    in-place samplers: `uniform(self, from, to)`, `exponential(self, lambd)`, ...)."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        return aten.RandomLikeOp.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties={
                "distribution": StringAttr(distribution),
                "parameters": _parameters(node, args, names, defaults),
            },
        )

    return handle


def _bernoulli(state: ImportState, node: Node) -> Operation:
    """`bernoulli.p(self, p)`; `bernoulli(self)`, whose probabilities are `self`'s
    values, is not a constant `p`."""
    if "p" not in arguments_of(node):
        raise refuse(node, "with per-element probabilities is not supported (bernoulli.p is)")
    return _random_like("bernoulli", ("p",), (0.5,))(state, node)


def _same_shape(a: Attribute, b: Attribute) -> bool:
    return isinstance(a, TensorType) and isinstance(b, TensorType) and a.get_shape() == b.get_shape()


_NORMAL_OF_NUMBERS = _random("normal", ("mean", "std"), (0.0, 1.0))


def _normal(state: ImportState, node: Node) -> Operation:
    """`normal.float_float(mean, std, size)`, and the forms with a tensor mean or std:
    `mean + std * z` with `z` standard normal shaped like the tensor that has the
    result's shape (both tensors broadcasting to a third shape is refused)."""
    args = arguments_of(node)
    if "size" in args:
        return _NORMAL_OF_NUMBERS(state, node)
    _refuse_generator(node, args)
    result_type = type_of_node(node)
    mean, std = args["mean"], args["std"]
    shaped = next((t for t in (mean, std) if isinstance(t, Node) and _same_shape(type_of_node(t), result_type)), None)
    if shaped is None:
        raise refuse(node, "with mean and std broadcasting to a third shape is not supported")
    standard = state.insert(
        aten.RandomLikeOp.build(
            operands=[state.value(shaped)],
            result_types=[result_type],
            properties={
                "distribution": StringAttr("normal"),
                "parameters": DenseArrayBase.from_list(Float64Type(), [0.0, 1.0]),
            },
        )
    )
    mul, add = aten.BINARY_OP_CLASSES["mul"], aten.BINARY_OP_CLASSES["add"]
    scaled = state.insert(mul.build(operands=[standard.results[0], state.value(std)], result_types=[result_type]))
    return add.build(operands=[scaled.results[0], state.value(mean)], result_types=[result_type])


CREATION_IMPORTERS: dict[str, Handler] = {
    "aten.full": _filled(aten.FullOp, with_fill_value=True),
    "aten.zeros": _filled(aten.ZerosOp, with_fill_value=False),
    # `empty`'s values are unspecified (whatever the memory held); zeros are such values,
    # and the graphs that use it (circular padding) overwrite every element.
    "aten.empty": _filled(aten.ZerosOp, with_fill_value=False),
    # The same for the forms that also say how the memory is laid out: a layout is not a
    # value, and mlxir's tensors have none of their own.
    "aten.empty_permuted": _filled(aten.ZerosOp, with_fill_value=False),
    "aten.empty_strided": _filled(aten.ZerosOp, with_fill_value=False),
    "aten.new_empty_strided": _filled(aten.ZerosOp, with_fill_value=False),
    "aten.ones": _filled(aten.OnesOp, with_fill_value=False),
    "aten.zeros_like": _filled_like(aten.ZerosLikeOp),
    "aten.ones_like": _filled_like(aten.OnesLikeOp),
    "aten.full_like": _full_like,
    "aten.scalar_tensor": _scalar_tensor,
    "aten.arange": _arange,
    # rand/randn have no parameters: the names are never arguments, the defaults apply
    "aten.rand": _random("uniform", ("low", "high"), (0.0, 1.0)),
    "aten.randn": _random("normal", ("mean", "std"), (0.0, 1.0)),
    "aten.randint": _random("randint", ("low", "high"), (0, 0)),  # randint(high, size), .low
    "aten.rand_like": _random_like("uniform", ("low", "high"), (0.0, 1.0)),
    "aten.randn_like": _random_like("normal", ("mean", "std"), (0.0, 1.0)),
    "aten.randint_like": _random_like("randint", ("low", "high"), (0, 0)),
    "aten.uniform": _random_like("uniform", ("from", "to"), (0.0, 1.0)),
    "aten.normal_functional": _random_like("normal", ("mean", "std"), (0.0, 1.0)),
    "aten.log_normal": _random_like("log_normal", ("mean", "std"), (1.0, 2.0)),
    "aten.exponential": _random_like("exponential", ("lambd",), (1.0,)),
    "aten.cauchy": _random_like("cauchy", ("median", "sigma"), (0.0, 1.0)),
    "aten.geometric": _random_like("geometric", ("p",), (0.5,)),
    "aten.bernoulli": _bernoulli,
    "aten.normal": _normal,
}
