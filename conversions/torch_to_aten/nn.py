"""Neural-network ops: softmax, layer/RMS/batch/group/instance norms, attention."""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Sequence
from typing import Any, cast

from torch.fx import Node
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Attribute, Operation, SSAValue

from mlxir.conversions.torch_to_aten.core import (
    DYNAMIC_INDEX,
    Handler,
    ImportError_,
    ImportState,
    arguments_of,
    describe_location,
    element_type_of,
    f64_attr,
    first_value,
    has_several_results,
    i64_attr,
    props,
    refuse,
    result_types,
    static_dim,
    tensor_type_of,
    type_of_node,
    unit_attr,
)
from mlxir.conversions.torch_to_aten.reduction import along_dim
from mlxir.dialects import aten
from mlxir.dialects.common import int_array


def _layer_norm(state: ImportState, node: Node) -> Operation | list[SSAValue]:
    args = arguments_of(node)
    op = aten.LayerNormOp.build(
        operands=[
            state.value(args["input"]),
            state.optional_value(args["weight"]),
            state.optional_value(args["bias"]),
        ],
        result_types=[tensor_type_of(first_value(node))],
        properties={
            "normalized_shape": int_array(args["normalized_shape"]),
            "eps": f64_attr(args["eps"]),
        },
    )
    if has_several_results(node):  # native_layer_norm: the output, mean and 1/std
        _, mean_type, rstd_type = result_types(node)
        rank = first_value(node).dim()
        dims = list(range(rank - len(args["normalized_shape"]), rank))
        source = state.value(args["input"])
        mean, _, rstd = _statistics(state, source, dims, True, mean_type, rstd_type, args["eps"])
        return [state.insert(op).results[0], mean, rstd]
    return op


def _statistics(
    state: ImportState, source: SSAValue, dims: list[int], keepdim: bool, mean_type: Attribute,
    rstd_type: Attribute, eps: float,
) -> tuple[SSAValue, SSAValue, SSAValue]:
    """The mean of `source` over `dims`, its biased variance and `1 / sqrt(var + eps)`:
    a normalization's statistics, as ATen returns them."""
    properties = props(dims=int_array(dims), keepdim=unit_attr(keepdim))
    mean = state.insert(
        aten.REDUCTION_OP_CLASSES["mean"].build(operands=[source], result_types=[mean_type], properties=properties)
    ).results[0]
    var = state.insert(
        aten.VarOp.build(
            operands=[source], result_types=[mean_type], properties={**properties, "correction": f64_attr(0)}
        )
    ).results[0]
    shifted = state.insert(
        aten.BINARY_OP_CLASSES["add"].build(operands=[var, state.value(float(eps))], result_types=[mean_type])
    ).results[0]
    rstd = state.insert(aten.UNARY_OP_CLASSES["rsqrt"].build(operands=[shifted], result_types=[rstd_type])).results[0]
    return mean, var, rstd


def _rms_norm(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    eps = args["eps"]
    return aten.RmsNormOp.build(
        operands=[state.value(args["input"]), state.optional_value(args["weight"])],
        result_types=[type_of_node(node)],
        properties=props(
            normalized_shape=int_array(args["normalized_shape"]),
            eps=f64_attr(eps) if eps is not None else None,
        ),
    )


def _batch_norm_op(
    state: ImportState, x: SSAValue, weight: Any, bias: Any, mean: SSAValue, var: SSAValue, eps: float,
    result_type: Attribute,
) -> Operation:
    """`aten.batch_norm` of `x` with per-channel statistics `mean` and `var`; `weight` and
    `bias` are graph arguments (None when absent)."""
    return aten.BatchNormOp.build(
        operands=[x, state.optional_value(weight), state.optional_value(bias), mean, var],
        result_types=[result_type],
        properties={"eps": f64_attr(eps)},
    )


def _batch_norm(state: ImportState, node: Node) -> list[SSAValue]:
    """`_native_batch_norm_legit_no_training`: normalized with the running statistics;
    the saved mean and 1/std are empty, as ATen's are without training."""
    args = arguments_of(node)
    op = _batch_norm_op(
        state,
        state.value(args["input"]),
        args["weight"],
        args["bias"],
        state.value(args["running_mean"]),
        state.value(args["running_var"]),
        args["eps"],
        tensor_type_of(first_value(node)),
    )
    _, mean_type, invstd_type = result_types(node)
    return [state.insert(op).results[0], _empty(state, mean_type), _empty(state, invstd_type)]


def _empty(state: ImportState, result_type: Attribute) -> SSAValue:
    """A tensor of no elements (its type says `[0]`): a result ATen leaves empty."""
    assert isinstance(result_type, TensorType)
    return state.insert(
        aten.ZerosOp.build(operands=[[]], result_types=[cast(TensorType[Attribute], result_type)], properties={"static_sizes": int_array(result_type.get_shape())})
    ).results[0]


def _binary(state: ImportState, name: str, lhs: SSAValue, rhs: SSAValue, result_type: Attribute) -> SSAValue:
    return state.insert(aten.BINARY_OP_CLASSES[name].build(operands=[lhs, rhs], result_types=[result_type])).results[0]


def _as_type(state: ImportState, value: SSAValue, result_type: Attribute) -> SSAValue:
    """`value` cast to `result_type`'s dtype, where it differs."""
    if value.type == result_type:
        return value
    return state.insert(aten.ToCopyOp(value, result_type)).results[0]


def _training_batch_norm(
    state: ImportState, node: Node, training: bool
) -> tuple[SSAValue, SSAValue, SSAValue, SSAValue, SSAValue]:
    """Batch norm as torch's functionalized training ops compute it: the output, the
    saved mean and 1/sqrt(var + eps) (empty without `training`) and the running mean
    and variance updated by `momentum`, the variance unbiased (n / (n - 1) of the
    batch's); without `training` the running statistics normalize and stay."""
    args = arguments_of(node)
    eps, momentum = args["eps"], args["momentum"]
    types = result_types(node)
    out_type, mean_type, invstd_type = types[:3]
    running_mean_type, running_var_type = types[-2:]
    source = state.value(args["input"])
    running_mean, running_var = state.value(args["running_mean"]), state.value(args["running_var"])
    if not training:
        out = state.insert(
            _batch_norm_op(state, source, args["weight"], args["bias"], running_mean, running_var, eps, out_type)
        ).results[0]
        return out, _empty(state, mean_type), _empty(state, invstd_type), running_mean, running_var
    dims = [0, *range(2, first_value(node).dim())]
    mean, var, invstd = _statistics(state, source, dims, False, mean_type, invstd_type, eps)
    out = state.insert(
        _batch_norm_op(state, source, args["weight"], args["bias"], mean, var, eps, out_type)
    ).results[0]
    unbiased = state.insert(
        aten.VarOp.build(
            operands=[source],
            result_types=[mean_type],
            properties=props(dims=int_array(dims), keepdim=unit_attr(False), correction=f64_attr(1)),
        )
    ).results[0]
    updated: list[SSAValue] = []
    for running, batch, running_type in (
        (running_mean, mean, running_mean_type),
        (running_var, unbiased, running_var_type),
    ):
        kept = _binary(state, "mul", running, state.value(1.0 - momentum), running_type)
        moved = _binary(state, "mul", _as_type(state, batch, running_type), state.value(float(momentum)), running_type)
        updated.append(_binary(state, "add", kept, moved, running_type))
    return out, mean, invstd, updated[0], updated[1]


def _batch_norm_functional(state: ImportState, node: Node) -> list[SSAValue]:
    """`_native_batch_norm_legit_functional(..., training, momentum, eps)`: batch norm
    with running statistics, as torch's re-trace functionalizes it (the updated running
    statistics are results #3 and #4, which the program writes back)."""
    return list(_training_batch_norm(state, node, arguments_of(node)["training"]))


def _batch_norm_with_update(state: ImportState, node: Node) -> list[SSAValue]:
    """`_batch_norm_with_update_functional(..., momentum, eps)`: training batch norm;
    result #3 is the reserve space (empty on CPU)."""
    out, mean, invstd, running_mean, running_var = _training_batch_norm(state, node, True)
    return [out, mean, invstd, _empty(state, result_types(node)[3]), running_mean, running_var]


def _batch_norm_batch_stats(state: ImportState, node: Node) -> list[SSAValue]:
    """`_native_batch_norm_legit.no_stats` (instance norm, and batch norm without running
    stats): normalized with the input's own per-channel mean and biased variance, as
    `batch_norm` with those as its statistics. Results: output, mean, 1/sqrt(var+eps)."""
    args = arguments_of(node)
    eps = args["eps"]
    out_type, mean_type, invstd_type = result_types(node)
    source = state.value(args["input"])
    dims = [0, *range(2, first_value(node).dim())]
    mean, var, invstd = _statistics(state, source, dims, False, mean_type, invstd_type, eps)
    out = state.insert(
        _batch_norm_op(state, source, args["weight"], args["bias"], mean, var, eps, out_type)
    ).results[0]
    return [out, mean, invstd]


def _pool_window(values: int | Sequence[int] | None, default: list[int], n: int) -> list[int]:
    """A pooling list argument: an int is `n` equal entries, empty is `default`."""
    if values is None or (isinstance(values, list | tuple) and not values):
        return default
    return [values] * n if isinstance(values, int) else list(values)


def max_pool_indices(state: ImportState, node: Node, n: int) -> SSAValue:
    """Result #1 of `max_poolNd_with_indices`: each output's maximum as its flat
    position within its input plane (`h * W + w`), the first maximum of its window
    in row-major order, as torch's kernel scans. Each kernel offset's strided slice of
    the input, padded with -inf, is stacked last and the argmax picks the offset; the
    offset and the window's corner give the position. Spatial sizes must be static."""
    args = arguments_of(node)
    kernel = _pool_window(args["kernel_size"], [], n)
    stride = _pool_window(args["stride"], kernel, n)
    padding = _pool_window(args["padding"], [0] * n, n)
    dilation = _pool_window(args["dilation"], [1] * n, n)
    x = args["self"].meta["val"]
    indices_type = result_types(node)[1]
    assert isinstance(indices_type, TensorType)
    indices_type = cast(TensorType[Attribute], indices_type)
    sizes = [static_dim(d) for d in x.shape[x.dim() - n :]]
    outs = list(indices_type.get_shape()[-n:])
    if any(d == DYNAMIC_INDEX for d in [*sizes, *outs]):
        raise refuse(node, "needs static spatial sizes for its indices")
    lead = [static_dim(d) for d in x.shape[: x.dim() - n]]
    element = element_type_of(tensor_type_of(x))
    source = state.value(args["self"])
    # Past the padding, ceil_mode's last window may reach beyond the input: -inf there too.
    reach = [(o - 1) * s + (k - 1) * d + 1 for o, s, k, d in zip(outs, stride, kernel, dilation)]
    extra = [max(0, r - (size + 2 * p)) for r, size, p in zip(reach, sizes, padding)]
    padded_sizes = [size + 2 * p + e for size, p, e in zip(sizes, padding, extra)]
    if any(padding) or any(extra):
        pad = [v for i in reversed(range(n)) for v in (padding[i], padding[i] + extra[i])]
        source = state.insert(
            aten.ConstantPadNdOp.build(
                operands=[source],
                result_types=[TensorType(element, [*lead, *padded_sizes])],
                properties={"pad": int_array(pad), "value": f64_attr(-math.inf)},
            )
        ).results[0]
    windows: list[SSAValue] = []
    for offsets in itertools.product(*(range(k) for k in kernel)):
        window, shape = source, [*lead, *padded_sizes]
        for i, offset in enumerate(offsets):
            start = offset * dilation[i]
            shape[len(lead) + i] = outs[i]
            window = state.insert(
                aten.SliceOp.build(
                    operands=[window, []],
                    result_types=[TensorType(element, list(shape))],
                    properties={
                        "static_bounds": int_array([start, start + (outs[i] - 1) * stride[i] + 1, stride[i]]),
                        "dim": i64_attr(len(lead) + i),
                    },
                )
            ).results[0]
        windows.append(window)
    rank = len(lead) + n
    stacked = state.insert(
        aten.StackOp.build(
            operands=[windows],
            result_types=[TensorType(element, [*lead, *outs, len(windows)])],
            properties={"dim": i64_attr(rank)},
        )
    ).results[0]
    which = state.insert(
        aten.ArgmaxOp.build(operands=[stacked], result_types=[indices_type], properties={"dim": i64_attr(rank)})
    ).results[0]
    # position = sum_i (o_i * stride_i - padding_i + k_i * dilation_i) * plane_stride_i,
    # k_i the offset's i-th digit in the kernel's mixed radix.
    index_element = indices_type.get_element_type()
    position: SSAValue | None = None
    for i in range(n):
        plane_stride = math.prod(sizes[i + 1 :])
        digit = state.insert(
            aten.BINARY_OP_CLASSES["floor_divide"].build(
                operands=[which, state.value(math.prod(kernel[i + 1 :]))], result_types=[indices_type]
            )
        ).results[0]
        digit = _binary(state, "remainder", digit, state.value(kernel[i]), indices_type)
        term = _binary(state, "mul", digit, state.value(dilation[i] * plane_stride), indices_type)
        corner_start = -padding[i] * plane_stride
        corners = state.insert(
            aten.ArangeOp.build(
                operands=[
                    state.value(corner_start),
                    state.value(corner_start + outs[i] * stride[i] * plane_stride),
                    state.value(stride[i] * plane_stride),
                ],
                result_types=[TensorType(index_element, [outs[i]])],
            )
        ).results[0]
        corners = state.insert(
            aten.ReshapeOp(corners, [outs[i], *[1] * (n - i - 1)], TensorType(index_element, [outs[i], *[1] * (n - i - 1)]))
        ).results[0]
        term = _binary(state, "add", term, corners, indices_type)
        position = term if position is None else _binary(state, "add", position, term, indices_type)
    assert position is not None
    return position


def _group_norm(state: ImportState, node: Node) -> Operation | list[SSAValue]:
    """`group_norm(input, num_groups, ...)` or `native_group_norm(input, ..., group, eps)`."""
    args = arguments_of(node)
    groups = args["group"] if "group" in args else args["num_groups"]
    op = aten.GroupNormOp.build(
        operands=[
            state.value(args["input"]),
            state.optional_value(args["weight"]),
            state.optional_value(args["bias"]),
        ],
        result_types=[tensor_type_of(first_value(node))],
        properties={"num_groups": i64_attr(groups), "eps": f64_attr(args["eps"])},
    )
    if has_several_results(node):  # native_group_norm: the output, each group's mean and 1/std
        _, mean_type, rstd_type = result_types(node)
        source = state.value(args["input"])
        shape = mean_type.get_shape() if isinstance(mean_type, TensorType) else ()
        x = args["input"].meta["val"]
        per_group = static_dim(math.prod(x.shape[1:]) // groups)
        grouped_type = TensorType(element_type_of(source.type), [*shape, per_group])
        grouped = state.insert(aten.ReshapeOp(source, [*state.sizes([args["N"]]), groups, -1], grouped_type))
        mean, _, rstd = _statistics(state, grouped.results[0], [2], False, cast(Attribute, mean_type), rstd_type, args["eps"])
        return [state.insert(op).results[0], mean, rstd]
    return op


def _instance_norm(state: ImportState, node: Node) -> Operation:
    """`instance_norm(input, weight, bias, running_mean, running_var, use_input_stats,
    momentum, eps, cudnn_enabled)`: with the input's statistics it is group norm with one
    group per channel; with running statistics it is batch norm."""
    args = arguments_of(node)
    x, weight, bias, eps = args["input"], args["weight"], args["bias"], args["eps"]
    if not args["use_input_stats"]:
        return _batch_norm_op(
            state,
            state.value(x),
            weight,
            bias,
            state.value(args["running_mean"]),
            state.value(args["running_var"]),
            eps,
            type_of_node(node),
        )
    channels = x.meta["val"].shape[1]
    if not isinstance(channels, int):
        raise ImportError_(f"{describe_location(node)}: instance_norm needs a static channel count")
    return aten.GroupNormOp.build(
        operands=[state.value(x), state.optional_value(weight), state.optional_value(bias)],
        result_types=[type_of_node(node)],
        properties={"num_groups": i64_attr(channels), "eps": f64_attr(eps)},
    )


def _sdpa(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    dropout, scale = args["dropout_p"], args["scale"]
    return aten.ScaledDotProductAttentionOp.build(
        operands=[
            *(state.value(args[name]) for name in ("query", "key", "value")),
            state.optional_value(args["attn_mask"]),
        ],
        result_types=[type_of_node(node)],
        properties=props(
            dropout_p=f64_attr(dropout) if dropout else None,
            is_causal=unit_attr(args["is_causal"]),
            scale=f64_attr(scale) if scale is not None else None,
            enable_gqa=unit_attr(args["enable_gqa"]),
        ),
    )


def _integer_range(dtype: Any) -> tuple[int, int] | None:
    """The range of torch's (or torchao's) integer dtype `intN` / `uintN`."""
    found = re.fullmatch(r"(u?)int(\d+)", str(dtype).rsplit(".", 1)[-1].lower())
    if found is None:
        return None
    bits = int(found.group(2))
    return (0, 2**bits - 1) if found.group(1) else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)


def _dequantize_affine(state: ImportState, node: Node) -> Operation:
    """torchao's `dequantize_affine`, the weight of a torchao-quantized module
    (`IntxWeightOnlyConfig`); the range defaults to `input_dtype`'s, as in torchao."""
    args = arguments_of(node)
    block_size = args["block_size"]
    if not all(isinstance(b, int) for b in block_size):
        raise refuse(node, f"needs a static block_size, got {block_size}")
    default_range = _integer_range(args["input_dtype"])
    bounds: list[int] = []
    for name, default in zip(("quant_min", "quant_max"), default_range or (None, None), strict=True):
        value = args[name] if args[name] is not None else default
        if not isinstance(value, int):
            raise refuse(node, f"needs an integer {name}, got {value!r}")
        bounds.append(value)
    return aten.DequantizeAffineOp.build(
        operands=[state.value(args["input"]), state.value(args["scale"]), state.optional_value(args["zero_point"])],
        result_types=[type_of_node(node)],
        properties=props(
            block_size=int_array(block_size),
            quant_min=i64_attr(bounds[0]),
            quant_max=i64_attr(bounds[1]),
        ),
    )


NN_IMPORTERS: dict[str, Handler] = {
    "torchao.dequantize_affine": _dequantize_affine,
    "aten._softmax": along_dim(aten.SoftmaxOp),
    "aten.softmax": along_dim(aten.SoftmaxOp),
    "aten._log_softmax": along_dim(aten.LogSoftmaxOp),
    "aten.log_softmax": along_dim(aten.LogSoftmaxOp),
    "aten.layer_norm": _layer_norm,
    "aten.native_layer_norm": _layer_norm,
    "aten.rms_norm": _rms_norm,
    "aten._native_batch_norm_legit_no_training": _batch_norm,
    "aten._native_batch_norm_legit": _batch_norm_batch_stats,
    "aten._native_batch_norm_legit_functional": _batch_norm_functional,
    "aten._batch_norm_with_update_functional": _batch_norm_with_update,
    "aten.instance_norm": _instance_norm,
    "aten.group_norm": _group_norm,
    "aten.native_group_norm": _group_norm,
    "aten.scaled_dot_product_attention": _sdpa,
}
