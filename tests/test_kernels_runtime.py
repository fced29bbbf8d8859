"""The runtime's pieces around the kernels: a `Program`'s weights and state (a KV-cache
write at a runtime position), ops' properties as Python values (`evaluator/props.py`)
and the dtype conversions (`evaluator/arrays.py`)."""

from __future__ import annotations

from typing import Any

import mlx.core as mx
import numpy as np
import torch
from kernel_helpers import TOL, check, check_exact
from xdsl.dialects.builtin import (
    ArrayAttr,
    DenseArrayBase,
    DenseIntOrFPElementsAttr,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    bf16,
    f32,
    f64,
    i1,
    i32,
    i64,
)

from mlxir.dialects.common import DYNAMIC
from mlxir.evaluator import arrays as dtypes
from mlxir.evaluator.props import python_props, python_value
from mlxir.runtime.ir_interpreter import Program, parse_module

# --------------------------------------------------------------------------- runtime pieces


def test_weights_and_state() -> None:
    """mlx.weight reads payloads (or inline values); state is read, written in program
    order, and handed back to the caller; a KV-cache write at a runtime position."""
    text = """mlx.global @w "parameter" : tensor<4x3xbf16>
    mlx.global @bias "buffer" : tensor<3xf32> = dense<[1.0, 2.0, 3.0]> : tensor<3xf32>
    mlx.global @cache "state" : tensor<1x6x3xf32>
    mlx.global @step "state" : tensor<i64> = dense<0> : tensor<i64>
    func.func @forward(%x: tensor<1x?x4xbf16>, %pos: index) -> (tensor<1x?x3xf32>, tensor<i64>, tensor<i64>) {
      %w = mlx.weight @w : tensor<4x3xbf16>
      %y = mlx.matmul %x, %w : tensor<1x?x4xbf16>, tensor<4x3xbf16> -> tensor<1x?x3xbf16>
      %y32 = mlx.astype %y : tensor<1x?x3xbf16> -> tensor<1x?x3xf32>
      %b = mlx.weight @bias : tensor<3xf32>
      %out = mlx.add %y32, %b : tensor<1x?x3xf32>, tensor<3xf32> -> tensor<1x?x3xf32>
      %cache = mlx.load_state @cache : tensor<1x6x3xf32>
      %new = mlx.slice_update %cache, %out start [%pos] axes [1] : tensor<1x6x3xf32>, tensor<1x?x3xf32> -> tensor<1x6x3xf32>
      mlx.store_state %new to @cache : tensor<1x6x3xf32>
      %s0 = mlx.load_state @step : tensor<i64>
      %one = mlx.constant dense<1> : tensor<i64>
      %next = mlx.add %s0, %one : tensor<i64>, tensor<i64> -> tensor<i64>
      mlx.store_state %next to @step : tensor<i64>
      %s1 = mlx.load_state @step : tensor<i64>
      func.return %out, %s0, %s1 : tensor<1x?x3xf32>, tensor<i64>, tensor<i64>
    }"""
    w = torch.randn(4, 3, generator=torch.Generator().manual_seed(0)).to(torch.bfloat16)
    program = Program(parse_module(text), {"w": w, "cache": np.zeros((1, 6, 3), np.float32)})
    state: dict[str, Any] = {}
    x = torch.randn(1, 2, 4, generator=torch.Generator().manual_seed(1)).to(torch.bfloat16)
    out, s0, s1 = program([x, 0], state)
    ref = (x.double() @ w.double()).to(torch.bfloat16).float() + torch.tensor([1.0, 2.0, 3.0])
    check(dtypes.to_numpy(out), ref.numpy(), TOL["bf16"])
    assert (s0.item(), s1.item()) == (0, 1)  # a load after a store sees the store
    out2, s0, s1 = program([x[:, :1], 2], state)
    assert (s0.item(), s1.item()) == (1, 2)
    cache = dtypes.to_numpy(state["cache"])
    check_exact(cache[:, :2], dtypes.to_numpy(out))
    check_exact(cache[:, 2:3], dtypes.to_numpy(out2))
    check_exact(cache[:, 3:], np.zeros((1, 3, 3), np.float32))


def test_python_props() -> None:
    text = """func.func @forward(%x: tensor<?x4xf32>, %n: index) -> tensor<?x4xf32> {
      %s = mlx.slice %x [0, 1] to [%n, 4] step [1, 1] : tensor<?x4xf32> -> tensor<?x3xf32>
      %p = mlx.pad %x low [0, 0] high [1, 0] value 2.500000e-01 : tensor<?x4xf32> -> tensor<?x4xf32>
      %m = mlx.max %x axes [1] keepdims : tensor<?x4xf32> -> tensor<?x1xf32>
      %c = mlx.constant dense<[[1, 2]]> : tensor<1x2xi32>
      %t = arith.constant true
      %sc = mlx.scatter %x[%c] axes [0], %x reduce "add" : tensor<?x4xf32>, (tensor<1x2xi32>), tensor<?x4xf32> -> tensor<?x4xf32>
      func.return %x : tensor<?x4xf32>
    }"""
    ops = {op.name: op for op in parse_module_unverified(text).walk()}
    sl = python_props(ops["mlx.slice"])
    assert sl["static_start"] == (0, 1) and sl["strides"] == (1, 1)
    assert sl["static_stop"] == (DYNAMIC, 4) and sl["operandSegmentSizes"] == (1, 0, 1)
    assert python_props(ops["mlx.pad"])["value"] == 0.25
    assert python_props(ops["mlx.max"]) == {"axes": (1,), "keepdims": True}
    value = python_props(ops["mlx.constant"])["value"]
    assert isinstance(value, np.ndarray) and value.dtype == np.int32 and value.shape == (1, 2)
    assert python_props(ops["arith.constant"])["value"] is True
    assert python_props(ops["mlx.scatter"])["reduce"] == "add"
    assert python_value(SymbolRefAttr("cache.k")) == "cache.k"
    assert python_value(UnitAttr()) is True
    assert python_value(IntegerAttr(-3, i64)) == -3
    assert python_value(FloatAttr(1.5, f64)) == 1.5
    assert python_value(StringAttr("x")) == "x"
    assert python_value(DenseArrayBase.from_list(i32, [4, 5])) == (4, 5)
    splat = python_value(DenseIntOrFPElementsAttr.from_list(TensorType(bf16, [2, 2]), [1.5]))
    assert isinstance(splat, np.ndarray) and splat.shape == (2, 2) and (splat == 1.5).all()
    boolean = python_value(DenseIntOrFPElementsAttr.from_list(TensorType(i1, [2]), [1, 0]))
    assert isinstance(boolean, np.ndarray) and boolean.tolist() == [True, False]
    other = ArrayAttr([StringAttr("a")])
    assert python_value(other) == '["a"]'  # other kinds as their text, as a program keeps them


def parse_module_unverified(text: str) -> Any:
    from xdsl.parser import Parser

    from mlxir.dialects.context import make_context

    return Parser(make_context(), text).parse_module()


def test_dtypes_round_trip() -> None:
    for name in dtypes.DTYPE_NAMES:
        element_type = dtypes.element_type_from_name(name)
        assert dtypes.element_type_name(element_type) == name
        assert dtypes.mx_dtype_name(dtypes.element_type_to_mx(element_type)) == name
        assert dtypes.mx_to_element_type(dtypes.mx_dtype(name)) == element_type
    assert dtypes.element_type_name(f32) == "float32"
    bits = torch.tensor([0x7F80, 0xFF80, 0x7FC1, 0x0001, 0x3F80, 0x8000], dtype=torch.int32)
    special = bits.to(torch.int16).view(torch.bfloat16)  # inf, -inf, a NaN payload, subnormal
    back = dtypes.to_torch(dtypes.to_mx(special))
    assert torch.equal(back.view(torch.int16), special.view(torch.int16))
    as_numpy = dtypes.to_numpy(dtypes.to_mx(special))
    assert as_numpy.dtype == np.float32
    assert np.array_equal(as_numpy.view(np.uint32) >> 16, bits.numpy().astype(np.uint32))
    assert dtypes.to_mx(np.array([0.1], np.float64)).dtype == mx.float64  # not narrowed
    assert dtypes.to_mx(np.float32(0.1), mx.bfloat16).dtype == mx.bfloat16
    for name in ("float16", "int8", "uint8", "int64", "bool", "float64"):
        t = torch.ones(3, dtype=dtypes.torch_dtype(name))
        assert dtypes.mx_dtype_name(dtypes.to_mx(t).dtype) == name
        assert dtypes.to_torch(dtypes.to_mx(t)).dtype == t.dtype
