"""Complex numbers proper: the discrete Fourier transforms ATen's `torch.fft` functions
decompose into (`_fft_r2c`, `_fft_c2c`, `_fft_c2r`), the views between a complex
tensor and its real pairs (`view_as_real`, `view_as_complex`), and complex numbers
built from real parts (`complex`, `polar`: decomposed into those views). The other
ops that take complex64 values are in `core.COMPLEX_PACKETS`."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import torch
from torch._ops import OpOverload
from torch.fx import Node
from xdsl.ir import Operation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportState,
    arguments_of,
    i64_attr,
    props,
    type_of_node,
    unit_attr,
)
from mlxir.dialects import aten
from mlxir.dialects.common import int_array

_A = torch.ops.aten


def _fft(op_cls: type[aten.FftOp], flag: str | None) -> Handler:
    """`_fft_*(self, dim, normalization, ...)`; `flag` names the bool argument that
    becomes a unit property (r2c's `onesided`, c2c's `forward`). c2r's `last_dim_size`
    is the result type's."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        return op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties=props(
                dims=int_array(args["dim"]),
                normalization=i64_attr(args["normalization"]),
                **({flag: unit_attr(args[flag])} if flag is not None else {}),
            ),
        )

    return handle


def _view(op_cls: type[aten.ComplexViewOp]) -> Handler:
    def handle(state: ImportState, node: Node) -> Operation:
        return op_cls(state.value(arguments_of(node)["self"]), type_of_node(node))

    return handle


COMPLEX_IMPORTERS: dict[str, Handler] = {
    "aten._fft_r2c": _fft(aten.FftR2cOp, "onesided"),
    "aten._fft_c2c": _fft(aten.FftC2cOp, "forward"),
    "aten._fft_c2r": _fft(aten.FftC2rOp, None),
    "aten.view_as_real": _view(aten.ViewAsRealOp),
    "aten.view_as_complex": _view(aten.ViewAsComplexOp),
}


def _complex(real: torch.Tensor, imag: torch.Tensor) -> torch.Tensor:
    return torch.view_as_complex(torch.stack(cast(tuple[torch.Tensor, ...], torch.broadcast_tensors(real, imag)), -1))  # pyright: ignore[reportUnknownMemberType] (torch.functional's broadcast_tensors is unannotated)


def _polar(abs: torch.Tensor, angle: torch.Tensor) -> torch.Tensor:
    return _complex(abs * torch.cos(angle), abs * torch.sin(angle))


def _abs(x: torch.Tensor) -> torch.Tensor:
    # A real input has abs's own importer: this is traced for complex ones only, and
    # calls abs itself for anything else (`_SELF_CALLING` in node_decompositions.py).
    if not x.is_complex():
        return _A.abs.default(x)
    pairs = torch.view_as_real(x)
    return torch.hypot(pairs[..., 0], pairs[..., 1])


def _angle(x: torch.Tensor) -> torch.Tensor:
    if x.is_complex():
        pairs = torch.view_as_real(x)
        return torch.atan2(pairs[..., 1], pairs[..., 0])
    # torch's real angle: pi below 0, 0 from 0 (-0 included), NaN kept; integers and
    # bools give float32
    value = x if x.is_floating_point() else x.to(torch.get_default_dtype())
    return torch.where(torch.isnan(value), value, torch.where(value < 0, math.pi, 0.0).to(value.dtype))


COMPLEX_DECOMPOSITIONS: dict[OpOverload, Callable[..., Any]] = {
    _A.complex.default: _complex,
    _A.polar.default: _polar,
    _A.abs.default: _abs,
    _A.angle.default: _angle,
}
"""mlxir's decompositions of the ops that build complex numbers from real parts, into
`view_as_complex` of (real, imaginary) pairs, and of the ones that take them apart
(`abs`, `angle` of complex values) by `view_as_real` (`MLXIR_DECOMPOSITIONS`)."""
