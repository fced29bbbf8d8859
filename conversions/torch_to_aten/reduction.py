"""Reductions (sum, mean, var/std, max/min, argmax), scans along a dim (cumsum) and
sorting (sort, topk, median, kthvalue)."""

from __future__ import annotations

from torch.fx import Node
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Arguments,
    Handler,
    ImportState,
    arguments_of,
    f64_attr,
    i64_attr,
    props,
    result_types,
    static_int,
    type_of_node,
    unit_attr,
)
from mlxir.dialects import aten
from mlxir.dialects.common import int_array


def _dims(dim: int | list[int] | None) -> list[int] | None:
    """A `dim` argument (`int`, `int[1]?`) as a list; None or empty reduces all dims."""
    if isinstance(dim, int):
        return [dim]
    return list(dim) if dim else None


def _reduction(name: str) -> Handler:
    op_cls = aten.REDUCTION_OP_CLASSES[name]

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        dims = _dims(args.get("dim"))  # `sum.default` has no `dim`: it reduces everything
        return op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties=props(
                dims=int_array(dims) if dims else None,
                keepdim=unit_attr(args.get("keepdim", False)),
            ),
        )

    return handle


def _variance_properties(args: Arguments) -> dict[str, Attribute]:
    """`dims`, `correction` and `keepdim` of a `var`/`std` (or `var_mean`/`std_mean`)
    call: `correction=` (None is torch's default, 1), or the older `unbiased`."""
    dims = _dims(args.get("dim"))
    if "unbiased" in args:
        correction = 1 if args["unbiased"] else 0
    else:
        correction = 1 if args["correction"] is None else args["correction"]
    return props(
        dims=int_array(dims) if dims else None,
        correction=f64_attr(correction),
        keepdim=unit_attr(args.get("keepdim", False)),
    )


def _variance(op_cls: type[IRDLOperation]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        return op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties=_variance_properties(args),
        )

    return handle


def _spread_and_mean(op_cls: type[IRDLOperation]) -> Handler:
    """`var_mean`/`std_mean`: the spread and the mean over the same dims."""

    def handle(state: ImportState, node: Node) -> list[SSAValue]:
        args = arguments_of(node)
        source = state.value(args["self"])
        properties = _variance_properties(args)
        spread_type, mean_type = result_types(node)
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
        args = arguments_of(node)
        dim = args["dim"]
        return op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties=props(
                dim=i64_attr(dim) if dim is not None else None,
                keepdim=unit_attr(args["keepdim"]),
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
        args = arguments_of(node)
        source = state.value(args["self"])
        if "other" in args:
            return binary_cls.build(
                operands=[source, state.value(args["other"])], result_types=[type_of_node(node)]
            )
        if "dim" not in args:
            return reduce_cls.build(operands=[source], result_types=[type_of_node(node)])
        dim, keepdim = args["dim"], unit_attr(args["keepdim"])
        values_type, indices_type = result_types(node)
        values = state.insert(
            reduce_cls.build(
                operands=[source],
                result_types=[values_type],
                properties=props(dims=int_array([dim]), keepdim=keepdim),
            )
        )
        indices = state.insert(
            arg_cls.build(
                operands=[source],
                result_types=[indices_type],
                properties=props(dim=i64_attr(dim), keepdim=keepdim),
            )
        )
        return [values.results[0], indices.results[0]]

    return handle


def along_dim(op_cls: type[IRDLOperation]) -> Handler:
    """`op(self, dim, ...)`: a scan or a normalization along one dim."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        return op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties={"dim": i64_attr(args["dim"])},
        )

    return handle


def _sort(state: ImportState, node: Node) -> list[SSAValue]:
    args = arguments_of(node)
    return state.inserted_results(
        aten.SortOp.build(
            operands=[state.value(args["self"])],
            result_types=result_types(node),
            properties=props(dim=i64_attr(args["dim"]), descending=unit_attr(args["descending"])),
        )
    )


def _cumulative_extremum(op_cls: type[aten.CumulativeExtremumOp]) -> Handler:
    def handler(state: ImportState, node: Node) -> list[SSAValue]:
        args = arguments_of(node)
        return state.inserted_results(
            op_cls.build(
                operands=[state.value(args["self"])],
                result_types=result_types(node),
                properties=props(dim=i64_attr(args["dim"])),
            )
        )

    return handler


def _topk(state: ImportState, node: Node) -> list[SSAValue]:
    args = arguments_of(node)
    return state.inserted_results(
        aten.TopkOp.build(
            operands=[state.value(args["self"])],
            result_types=result_types(node),
            properties=props(
                k=i64_attr(static_int(node, args["k"], "k")),
                dim=i64_attr(args["dim"]),
                smallest=unit_attr(not args["largest"]),
            ),
        )
    )


def _median(op_cls: type[aten.MedianLikeOp]) -> Handler:
    def handler(state: ImportState, node: Node) -> Operation | list[SSAValue]:
        """`median.default` (of everything, one result) or `median.dim` (values,
        indices); `nanmedian` alike."""
        args = arguments_of(node)
        if "dim" not in args:
            return op_cls.build(operands=[state.value(args["self"])], result_types=[[type_of_node(node)]])
        return state.inserted_results(
            op_cls.build(
                operands=[state.value(args["self"])],
                result_types=[result_types(node)],
                properties=props(dim=i64_attr(args["dim"]), keepdim=unit_attr(args["keepdim"])),
            )
        )

    return handler


def _kthvalue(state: ImportState, node: Node) -> list[SSAValue]:
    args = arguments_of(node)
    return state.inserted_results(
        aten.KthvalueOp.build(
            operands=[state.value(args["self"])],
            result_types=result_types(node),
            properties=props(
                k=i64_attr(static_int(node, args["k"], "k")),
                dim=i64_attr(args["dim"]),
                keepdim=unit_attr(args["keepdim"]),
            ),
        )
    )


REDUCTION_IMPORTERS: dict[str, Handler] = {
    **{f"aten.{name}": _reduction(name) for name in aten.REDUCTION_OPS},
    "aten.var": _variance(aten.VarOp),
    "aten.std": _variance(aten.StdOp),
    "aten.var_mean": _spread_and_mean(aten.VarOp),
    "aten.std_mean": _spread_and_mean(aten.StdOp),
    "aten.max": _extremum("max"),
    "aten.min": _extremum("min"),
    "aten.argmax": _arg_reduction(aten.ArgmaxOp),
    "aten.argmin": _arg_reduction(aten.ArgminOp),
    "aten.cumsum": along_dim(aten.CumsumOp),
    "aten.cumprod": along_dim(aten.CumprodOp),
    "aten.logcumsumexp": along_dim(aten.LogcumsumexpOp),
    "aten.sort": _sort,
    "aten.topk": _topk,
    "aten.median": _median(aten.MedianOp),
    "aten.nanmedian": _median(aten.NanmedianOp),
    "aten.cummax": _cumulative_extremum(aten.CummaxOp),
    "aten.cummin": _cumulative_extremum(aten.CumminOp),
    "aten.kthvalue": _kthvalue,
}
