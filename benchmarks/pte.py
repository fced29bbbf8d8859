"""ExecuTorch `.pte` files: mlxir's delegate against ExecuTorch's own CPU runtime.

    .venv/bin/python benchmarks/pte.py [--runs 50] [--models mlp,cnn,llama]

One process, one thread (`torch.set_num_threads(1)`, and benchmarks/llm.py's `blas_env`), the
same weights everywhere; MLX gets the system OpenBLAS (preloaded, as in
benchmarks/llm.py) when `libopenblas0-pthread` is installed, unless `--bundled-blas`. Per
model it writes two `.pte` files from the same `ExportedProgram`:

- `xnnpack`: `to_edge_transform_and_lower(ep, partitioner=[XnnpackPartitioner()])`,
  run by ExecuTorch's runtime (`executorch.runtime.Runtime`, the pybind build in the
  executorch wheel): the standard ExecuTorch CPU flow;
- `mlxir`: the same with `MlxirPartitioner()`, run by `mlxir.load` on MLX (CPU here).

and also times eager PyTorch on the model. Figures: lowering s (to_edge_transform_and
_lower + to_executorch, once), `.pte` bytes, load s, and per call the median over
`--runs` calls after 3 warm-up calls, in ms; the ratio column is mlxir's median over
the other's (below 1: mlxir faster). Models (random weights, float32):

- `mlp`: 3 linear layers 512-2048-2048-512, batch 32;
- `cnn`: the test CNN shape scaled up (3 conv layers of 32-64 channels, 64x64 images),
  batch 8;
- `llama`: a transformers Llama with hidden 256, 4 layers, 4 / 2 heads, vocab 4096 and
  a static KV cache of 128 (`mlxir.tools.llm.export_static_llm`), one decode token per
  call (ExecuTorch's LLM flow). XNNPACK runs the cache update outside its delegate.

A benchmark, not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch import nn
from torch.export import Dim, export

import mlxir
from mlxir.interop.executorch import MlxirPartitioner

WARMUP = 3


def _mlp() -> tuple[nn.Module, Any, Callable[[], tuple[Any, ...]]]:
    model = nn.Sequential(
        nn.Linear(512, 2048), nn.GELU(), nn.Linear(2048, 2048), nn.GELU(), nn.Linear(2048, 512)
    ).eval()
    ep = export(model, (torch.randn(4, 512),), dynamic_shapes=({0: Dim("batch", max=64)},))
    return model, ep, lambda: (torch.randn(32, 512),)


def _cnn() -> tuple[nn.Module, Any, Callable[[], tuple[Any, ...]]]:
    model = nn.Sequential(
        nn.Conv2d(3, 32, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(32, 64, 3, padding=1), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(64, 64, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(),
        nn.Linear(64, 10),
    ).eval()
    ep = export(model, (torch.randn(2, 3, 64, 64),), dynamic_shapes=({0: Dim("batch", max=32)},))
    return model, ep, lambda: (torch.randn(8, 3, 64, 64),)


def _llama() -> tuple[Any, Any, Callable[[], tuple[Any, ...]]]:
    from transformers import LlamaConfig, LlamaForCausalLM

    from mlxir.tools.llm import export_static_llm

    config = LlamaConfig(
        vocab_size=4096, hidden_size=256, intermediate_size=688, num_hidden_layers=4,
        num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=512,
    )
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    model = LlamaForCausalLM(config).eval()
    ep = export_static_llm(model, max_cache_len=128)
    eager = ep.module()
    position = iter(range(10**9))

    def inputs() -> tuple[Any, ...]:
        return (torch.tensor([[7]]), torch.tensor([next(position) % 128]))

    return (lambda ids, pos: eager(input_ids=ids, cache_position=pos)), ep, inputs


MODELS = {"mlp": _mlp, "cnn": _cnn, "llama": _llama}


def _median_ms(call: Callable[[], Any], make_inputs: Callable[[], tuple[Any, ...]], runs: int) -> float:
    times = []
    for i in range(WARMUP + runs):
        inputs = make_inputs()
        start = time.perf_counter()
        call(*inputs)  # type: ignore[call-arg]
        if i >= WARMUP:
            times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def _lower(ep: Any, partitioner: Any, path: Path) -> float:
    from executorch.exir import to_edge_transform_and_lower

    start = time.perf_counter()
    program = to_edge_transform_and_lower(ep, partitioner=[partitioner]).to_executorch()
    path.write_bytes(program.buffer)
    return time.perf_counter() - start


def _bench(name: str, runs: int, folder: Path) -> list[str]:
    from executorch.backends.xnnpack.partition.xnnpack_partitioner import XnnpackPartitioner
    from executorch.runtime import Runtime

    model, ep, make_inputs = MODELS[name]()
    _, ep_xnnpack, _ = MODELS[name]()  # lowering consumes the program: one per backend
    lines = []
    with torch.no_grad():
        eager_ms = _median_ms(model, make_inputs, runs)

    mlxir_pte, xnnpack_pte = folder / f"{name}_mlxir.pte", folder / f"{name}_xnnpack.pte"
    mlxir_lower = _lower(ep, MlxirPartitioner(), mlxir_pte)
    xnnpack_lower = _lower(ep_xnnpack, XnnpackPartitioner(), xnnpack_pte)

    start = time.perf_counter()
    program = mlxir.load(mlxir_pte)
    mlxir_load = time.perf_counter() - start
    mlxir_ms = _median_ms(program, make_inputs, runs)

    start = time.perf_counter()
    method = Runtime.get().load_program(xnnpack_pte).load_method("forward")
    assert method is not None
    xnnpack_load = time.perf_counter() - start
    xnnpack_ms = _median_ms(lambda *a: method.execute(list(a)), make_inputs, runs)

    for system, lower_s, size, load_s, ms in (
        ("eager torch", None, None, None, eager_ms),
        ("ExecuTorch + XNNPACK", xnnpack_lower, xnnpack_pte.stat().st_size, xnnpack_load, xnnpack_ms),
        ("mlxir .pte on MLX", mlxir_lower, mlxir_pte.stat().st_size, mlxir_load, mlxir_ms),
    ):
        lines.append(
            f"| {name} | {system} | {'' if lower_s is None else f'{lower_s:.2f}'} | "
            f"{'' if size is None else f'{size:,}'} | {'' if load_s is None else f'{load_s:.3f}'} | "
            f"{ms:.3f} | {mlxir_ms / ms:.2f} |"
        )
    return lines


def _with_system_blas() -> None:
    """Re-runs this script in benchmarks/llm.py's BLAS environment (the system OpenBLAS
    preloaded when installed, one BLAS thread) unless it already runs in it: the MLX
    wheel's bundled reference BLAS runs fp32 GEMM at ~5 GFLOP/s."""
    from llm import blas_env  # benchmarks/llm.py: this script's folder is on sys.path

    env, _ = blas_env()
    if env.get("LD_PRELOAD") != os.environ.get("LD_PRELOAD"):
        os.execve(sys.executable, [sys.executable, *sys.argv], env)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--bundled-blas", action="store_true", help="do not preload the system OpenBLAS")
    args = parser.parse_args()
    if not args.bundled_blas:
        _with_system_blas()
    torch.set_num_threads(1)
    from llm import OPENBLAS

    blas = "system OpenBLAS" if OPENBLAS in os.environ.get("LD_PRELOAD", "") else "the MLX wheel's bundled BLAS"
    print(f"median of {args.runs} calls after {WARMUP} warm-up calls, one thread, float32; MLX with {blas}")
    print("| model | system | lowering s | .pte bytes | load s | ms/call | mlxir / this |")
    print("|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as folder:
        for name in args.models.split(","):
            for line in _bench(name, args.runs, Path(folder)):
                print(line, flush=True)


if __name__ == "__main__":
    main()
