"""The decomposition table `import_program` runs first: it keeps the ops mlxir runs
natively (`NATIVE_OPS`) and decomposes the rest to core ATen, and further some core ops
(`EXTRA_DECOMPOSED_OPS`)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import torch
from torch._ops import OpOverload

_A = torch.ops.aten

NATIVE_OPS: tuple[OpOverload, ...] = (
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
    # constant mode imports as `constant_pad_nd` (torch's kernel of `pad`, traced,
    # fixes symbolic sizes); its other modes decompose by mlxir's table
    _A.pad.default,
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
    # Not core ATen, so not in torch.export's table; their decompositions are in
    # torch's own, into core ops.
    "addmv.default",
    "dist.default",
    "ldexp.Tensor",
    "narrow_copy.default",
)
"""ATen ops that torch keeps whole but mlxir runs as their PyTorch decompositions
(into ops it lowers natively): activations, padding modes, upsampling."""


def kept_torchao_ops() -> tuple[OpOverload, ...]:
    """torchao's ops mlxir imports whole, once torchao has registered them (a program
    can hold them only then): `dequantize_affine`, which mlxir turns into MLX's
    quantized kernels instead of dequantizing each weight at every call."""
    try:
        return (torch.ops.torchao.dequantize_affine.default,)
    except (AttributeError, RuntimeError):
        return ()


def decomposition_table() -> dict[Any, Callable[..., Any]]:
    from torch._decomp import get_decompositions  # pyright: ignore[reportUnknownVariableType] (torch types the table's values as a bare Callable)

    table: dict[Any, Callable[..., Any]] = dict(torch.export.default_decompositions())
    for op in (*NATIVE_OPS, *kept_torchao_ops()):
        table.pop(op, None)
    extra = [
        getattr(getattr(torch.ops.aten, name.split(".")[0]), name.split(".")[1])
        for name in EXTRA_DECOMPOSED_OPS
    ]
    table.update(get_decompositions(extra))  # pyright: ignore[reportUnknownArgumentType] (torch types the table's values as a bare Callable)
    return table
