"""Compile time per stage of an LLM step program: torch.export, import, lower (the
default pipeline), serialize, and load; and the import as torch's whole-program
`run_decompositions` re-trace does it, for comparison.

    .venv/bin/python benchmarks/compile_stages.py [--model llama|qwen3|tiny]
        [--qwen3-hidden 1024] [--layers N] [--runs 3] [--no-torch-decompose]

The models are `benchmarks/llm.py`'s (random weights, float32): `llama` is the 56M Llama
(hidden 512, 8 layers, vocab 32000), `qwen3` Qwen3-0.6B's shape (28 layers, hidden
1024, vocab 151936; `--qwen3-hidden` reduces the hidden size, the graph stays the same).
The program is `compile_llm`'s default: `mlxir.tools.llm.export_llm(model)`, one program
for prefill and decode with a fixed-capacity KV cache. Each stage runs `--runs` times on
a fresh input (import on the same ExportedProgram, lower on a fresh import, ...) and
the median is printed with ops per second of its input. `compile` is import + lower +
serialize, the time `mlxir.compile` spends before loading; torch.export is timed once.
A benchmark, not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from llm import LAYERS, describe, model_config  # noqa: E402 (the sibling benchmark's models)


def timed(fn: Callable[[], Any], runs: int) -> tuple[float, Any]:
    """The median seconds of `runs` calls, each after a full collection (untimed): the
    previous run's IR, full of reference cycles, is freed first, as in a fresh compile."""
    times, result = [], None
    for _ in range(runs):
        result = None
        gc.collect()
        start = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="llama", choices=sorted(LAYERS))
    parser.add_argument("--qwen3-hidden", type=int, default=1024)
    parser.add_argument("--layers", type=int, default=None, help="default: the model's own")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--no-torch-decompose", action="store_true",
                        help="skip timing torch's whole-program decomposition (seconds per run)")
    args = parser.parse_args()

    import torch
    import transformers

    import mlxir
    from mlxir.codegen import serialize_parts
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR
    from mlxir.tools.llm import export_llm

    torch.set_num_threads(1)
    torch.manual_seed(0)
    config = model_config(args.model, args.qwen3_hidden, args.layers)
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    params = sum(p.numel() for p in model.parameters())
    export_s, exported = timed(lambda: export_llm(model), 1)
    ep = exported.ep
    nodes = sum(1 for n in ep.graph.nodes if n.op == "call_function")

    import_s, module = timed(lambda: mlxir.import_program(ep), args.runs)
    because = module.attributes.get(DECOMPOSED_BY_TORCH_ATTR)
    aten_ops = sum(1 for _ in module.walk())

    lower_times, lowered = [], None
    for _ in range(args.runs):
        lowered = None
        gc.collect()
        fresh = mlxir.import_program(ep)
        start = time.perf_counter()
        mlxir.lower(fresh, verify=False)  # as a compile does: serialize verifies
        lower_times.append(time.perf_counter() - start)
        lowered = fresh
    lower_s = statistics.median(lower_times)
    assert lowered is not None
    mlx_ops = sum(1 for _ in lowered.walk())
    serialize_s, data = timed(lambda: serialize_parts(lowered), args.runs)
    load_s, program = timed(lambda: mlxir.Program(data, verify=False), args.runs)

    rows = [
        ("torch.export (1 run)", export_s, nodes),
        ("import", import_s, nodes),
        ("lower (lower-to-mlx)", lower_s, aten_ops),
        ("serialize (verify, payloads)", serialize_s, mlx_ops),
        ("compile = import+lower+serialize", import_s + lower_s + serialize_s, nodes),
        ("load (mlxir.Program of the parts)", load_s, len(program.info.instructions)),
    ]
    if not args.no_torch_decompose:
        torch_s, _ = timed(lambda: mlxir.import_program(ep, decompose="program"), args.runs)
        rows.append(("import with torch's re-trace", torch_s, nodes))

    print(
        f"{describe(args.model, args.qwen3_hidden)}; {config.num_hidden_layers} layers, "
        f"{params / 1e6:.0f}M params, float32, random weights; compile_llm's program; "
        f"median of {args.runs} runs"
    )
    print(f"{'stage':<34} {'seconds':>9} {'ops in':>8} {'ops/s':>10}")
    for name, seconds, ops in rows:
        print(f"{name:<34} {seconds:>9.3f} {ops:>8} {ops / seconds:>10,.0f}")
    print(
        f"program: {len(data):,} bytes, {len(program.info.instructions)} instructions; import: "
        + (f"torch decomposed the whole program ({because})" if because else "node by node")
    )


if __name__ == "__main__":
    main()
