"""How fast xDSL handles mlxir IR at model scale: build, verify, print, parse,
canonicalize and CSE a module of about 20,000 `aten` ops.

    .venv/bin/python benchmarks/ir_scale.py [--ops 20000] [--runs 3]

The module repeats a decoder-layer-shaped block (norm, projections, attention, MLP)
with dynamic sequence length, so it exercises the mixed static/dynamic size lists
and the verifiers of the ops real models use. Prints the median of `--runs` runs per
stage and the ops per second. `mlx-opt` parses with the garbage collector paused
(`support/gc_pause.py`); the parse is timed both ways. A benchmark, not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from io import StringIO

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    Float64Type,
    FloatAttr,
    IntegerAttr,
    ModuleOp,
    TensorType,
    f32,
)
from xdsl.ir import Attribute, Block, Region, SSAValue
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.rewriter import InsertPoint
from xdsl.transforms.common_subexpression_elimination import CommonSubexpressionElimination

from mlxir.dialects import aten
from mlxir.dialects.common import int_array
from mlxir.dialects.context import make_context
from mlxir.support.gc_pause import gc_paused
from mlxir.transforms.canonicalize import CanonicalizePass

HIDDEN = 64
HEADS = 4
HEAD_DIM = HIDDEN // HEADS
FFN = 128


def _t(*shape: int) -> TensorType[Attribute]:
    return TensorType(f32, [DYNAMIC_INDEX if s < 0 else s for s in shape])


def _layer(b: Builder, x: SSAValue, seq: SSAValue, weights: list[SSAValue]) -> SSAValue:
    """One decoder layer on `x: [1, ?, HIDDEN]`; about 40 ops."""
    S = -1
    wq, wk, wv, wo, w1, w2, w3, norm = weights
    h = b.insert(
        aten.RmsNormOp.create(
            operands=[x, norm],
            properties={
                "normalized_shape": int_array([HIDDEN]),
                "eps": FloatAttr(1e-6, Float64Type()),
            },
            result_types=[x.type],
        )
    ).results[0]

    def linear(v: SSAValue, w: SSAValue, out: int) -> SSAValue:
        return b.insert(
            aten.LinearOp.create(operands=[v, w], result_types=[_t(1, S, out)])
        ).results[0]

    def heads(v: SSAValue) -> SSAValue:
        viewed = b.insert(aten.ViewOp(v, [1, seq, HEADS, HEAD_DIM], _t(1, S, HEADS, HEAD_DIM)))
        return b.insert(
            aten.TransposeOp.create(
                operands=[viewed.results[0]],
                properties={"dim0": IntegerAttr(1, 64), "dim1": IntegerAttr(2, 64)},
                result_types=[_t(1, HEADS, S, HEAD_DIM)],
            )
        ).results[0]

    q, k, v = heads(linear(h, wq, HIDDEN)), heads(linear(h, wk, HIDDEN)), heads(
        linear(h, wv, HIDDEN)
    )
    attn = b.insert(
        aten.ScaledDotProductAttentionOp.create(
            operands=[q, k, v], result_types=[_t(1, HEADS, S, HEAD_DIM)]
        )
    ).results[0]
    back = b.insert(
        aten.TransposeOp.create(
            operands=[attn],
            properties={"dim0": IntegerAttr(1, 64), "dim1": IntegerAttr(2, 64)},
            result_types=[_t(1, S, HEADS, HEAD_DIM)],
        )
    ).results[0]
    merged = b.insert(aten.ViewOp(back, [1, seq, HIDDEN], _t(1, S, HIDDEN))).results[0]
    x = b.insert(
        aten.AddOp(x, linear(merged, wo, HIDDEN), _t(1, S, HIDDEN))
    ).results[0]
    h = b.insert(
        aten.RmsNormOp.create(
            operands=[x, norm],
            properties={
                "normalized_shape": int_array([HIDDEN]),
                "eps": FloatAttr(1e-6, Float64Type()),
            },
            result_types=[x.type],
        )
    ).results[0]
    gate = b.insert(
        aten.UNARY_OP_CLASSES["silu"].create(
            operands=[linear(h, w1, FFN)], result_types=[_t(1, S, FFN)]
        )
    ).results[0]
    up = linear(h, w3, FFN)
    prod = b.insert(
        aten.BINARY_OP_CLASSES["mul"].create(operands=[gate, up], result_types=[_t(1, S, FFN)])
    ).results[0]
    down = linear(prod, w2, HIDDEN)
    return b.insert(aten.AddOp(x, down, _t(1, S, HIDDEN))).results[0]


def build_module(target_ops: int) -> ModuleOp:
    weight_types = [
        _t(HIDDEN, HIDDEN),
        _t(HIDDEN, HIDDEN),
        _t(HIDDEN, HIDDEN),
        _t(HIDDEN, HIDDEN),
        _t(FFN, HIDDEN),
        _t(HIDDEN, FFN),
        _t(FFN, HIDDEN),
        _t(HIDDEN),
    ]
    block = Block(arg_types=[_t(1, -1, HIDDEN), *weight_types])
    b = Builder(InsertPoint.at_end(block))
    x = block.args[0]
    weights: list[SSAValue] = list(block.args[1:])
    seq = b.insert(aten.SymSizeOp(x, 1)).results[0]
    while len(block.ops) < target_ops:
        x = _layer(b, x, seq, weights)
    b.insert(func.ReturnOp(x))
    function = func.FuncOp(
        "forward", ([a.type for a in block.args], [x.type]), Region(block)
    )
    return ModuleOp([function])


def _median_time(fn: Callable[[], object], runs: int) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--ops", type=int, default=20_000)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    ctx: Context = make_context()
    module = build_module(args.ops)
    n_ops = sum(1 for _ in module.walk())
    text = StringIO()
    Printer(stream=text).print_op(module)
    source = text.getvalue()

    def print_module() -> None:
        Printer(stream=StringIO()).print_op(module)

    def parse_module() -> None:
        Parser(ctx, source).parse_module()

    def parse_without_gc() -> None:
        with gc_paused():
            parse_module()

    def canonicalize() -> None:
        CanonicalizePass().apply(ctx, module.clone())

    def cse() -> None:
        CommonSubexpressionElimination().apply(ctx, module.clone())

    stages: list[tuple[str, Callable[[], object]]] = [
        ("build", lambda: build_module(args.ops)),
        ("verify", module.verify),
        ("print", print_module),
        ("parse", parse_module),
        ("parse, GC paused (mlx-opt)", parse_without_gc),
        ("canonicalize (incl. clone)", canonicalize),
        ("cse (incl. clone)", cse),
    ]
    print(f"module: {n_ops} ops, {len(source) / 1e6:.1f} MB of text; median of {args.runs} runs")
    print(f"{'stage':<28} {'seconds':>9} {'ops/s':>10}")
    for name, fn in stages:
        seconds = _median_time(fn, args.runs)
        print(f"{name:<28} {seconds:>9.3f} {n_ops / seconds:>10,.0f}")


if __name__ == "__main__":
    main()
