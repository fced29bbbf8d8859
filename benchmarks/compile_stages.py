"""Compile-time cost per stage on a full-depth decoder graph: torch.export, import,
lower (convert-aten-to-mlx + canonicalize + cse + dce), serialize and load.

    .venv/bin/python benchmarks/compile_stages.py [--layers 28] [--hidden 256] [--runs 3]

The model is Qwen3-0.6B-shaped (28 layers, 16 query / 8 KV heads, head dim 128, vocab
151936) built from a `Qwen3Config` with random weights; the hidden and FFN sizes are
reduced by default (hidden 256, FFN 768) to keep the payload small — the graph, which
is what the compiler's cost depends on, has the same ops either way. Prints the median
of `--runs` runs per stage and ops per second (the op count of each stage's input).
A benchmark, not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from typing import Any

import torch
from torch.export import Dim, export


def build_model(layers: int, hidden: int, ffn: int) -> Any:
    from transformers import Qwen3Config, Qwen3ForCausalLM

    config = Qwen3Config(
        vocab_size=151936,
        hidden_size=hidden,
        intermediate_size=ffn,
        num_hidden_layers=layers,
        num_attention_heads=16,
        num_key_value_heads=8,
        head_dim=128,
        max_position_embeddings=4096,
        tie_word_embeddings=True,
    )
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    return Qwen3ForCausalLM(config).eval()


class Logits(torch.nn.Module):
    def __init__(self, model: Any) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor) -> torch.Tensor:
        return self.model(input_ids=input_ids, use_cache=False).logits


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--layers", type=int, default=28)
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--ffn", type=int, default=768)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()

    import mlxir
    from mlxir.codegen import serialize

    torch.set_num_threads(1)
    model = Logits(build_model(args.layers, args.hidden, args.ffn))
    ids = torch.randint(0, 1000, (1, 16))
    shapes = {"input_ids": {1: Dim("seq", min=2, max=1024)}}
    with torch.no_grad():
        export_s, ep = timed(lambda: export(model, (ids,), dynamic_shapes=shapes), 1)
    nodes = sum(1 for n in ep.graph.nodes if n.op == "call_function")

    import_s, module = timed(lambda: mlxir.import_program(ep), args.runs)
    aten_ops = sum(1 for _ in module.walk())

    def lower_fresh() -> Any:
        fresh = mlxir.import_program(ep)
        start = time.perf_counter()
        mlxir.lower(fresh)
        return time.perf_counter() - start, fresh

    lower_times, lowered = [], None
    for _ in range(args.runs):
        seconds, lowered = lower_fresh()
        lower_times.append(seconds)
    lower_s = statistics.median(lower_times)
    assert lowered is not None
    mlx_ops = sum(1 for _ in lowered.walk())
    serialize_s, data = timed(lambda: serialize(lowered), args.runs)
    load_s, program = timed(lambda: mlxir.Program(data), args.runs)

    print(
        f"Qwen3-shaped decoder: {args.layers} layers, hidden {args.hidden}, FFN {args.ffn}, "
        f"16/8 heads x 128, vocab 151936 (random weights); median of {args.runs} runs "
        "(export: 1 run)"
    )
    print(f"{'stage':<34} {'seconds':>9} {'ops in':>8} {'ops/s':>10}")
    rows = [
        ("torch.export", export_s, nodes),
        ("import (incl. run_decompositions)", import_s, nodes),
        ("lower (lower-to-mlx)", lower_s, aten_ops),
        ("serialize", serialize_s, mlx_ops),
        ("load", load_s, len(program.info.instructions)),
    ]
    for name, seconds, ops in rows:
        print(f"{name:<34} {seconds:>9.3f} {ops:>8} {ops / seconds:>10,.0f}")
    print(
        f"program: {len(data):,} bytes, {len(program.info.instructions)} instructions, "
        f"{len(program.info.slots)} slots"
    )


if __name__ == "__main__":
    main()
