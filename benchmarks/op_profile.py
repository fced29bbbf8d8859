"""Where a program's time goes, op by op: each mlx op's share of an LLM's prefill and
decode step, with the native CPU kernels and without them (`MLXIR_NATIVE_KERNELS=0`),
at 1 and 2 threads: the profile that orders the native kernels' work
(docs/native-kernels.md) and measures each kernel's share before and after.

    .venv/bin/python benchmarks/op_profile.py [--bits 0,4] [--threads 1,2] [--steps 8]

The model is `benchmarks/llm.py`'s 56M Llama (random weights, seed 0, float32; `--bits
4`: its linear weights quantized to 4 bits, groups of 64). Each configuration is a
fresh process (`MLXIR_CPU_STREAMS=T`, the BLAS at T threads) that compiles the step
program, runs it interpreted with every step evaluated on its own and timed
(`mx.eval` per op: the sum exceeds a compiled step's time by about 2-14 us an op, the
same for both sides, so shares and per-op times compare, not totals), prefills the
128-token prompt and decodes `--steps` tokens (after one warm-up generation). Prints,
per op name, its milliseconds per prefill and per decode step, and its share.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import os
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import llm  # noqa: E402  (model_config, prompt_ids, blas_env)


def worker(bits: int, steps: int) -> dict[str, Any]:
    import mlx.core as mx
    import torch
    import transformers

    import mlxir
    from mlxir.tools import llm as mlxir_llm

    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(llm.model_config("llama", 1024)).eval()
    quantize = mlxir.Quantize(bits=bits, group_size=llm.QUANT_GROUP) if bits else None
    compiled = mlxir_llm.compile_llm(model, quantize=quantize)
    program = compiled.program
    program.compile = False
    loaded = program._executor.loaded  # pyright: ignore[reportPrivateUsage] (a benchmark's look inside)
    phase = ["prefill"]
    spent: dict[str, dict[str, float]] = {"prefill": defaultdict(float), "decode": defaultdict(float)}

    def timed(step: Any) -> Any:
        run = step.run

        def measured(operands: Any) -> Any:
            mx.eval([o for o in operands if isinstance(o, mx.array)])
            start = time.perf_counter()
            results = run(operands)
            mx.eval([r for r in results if isinstance(r, mx.array)])
            spent[phase[0]][step.op] += time.perf_counter() - start
            return results

        return dataclasses.replace(step, run=measured)

    loaded.steps = [timed(step) for step in loaded.steps]
    ids = mx.array([llm.prompt_ids()], dtype=mx.int64)

    def generate() -> None:
        phase[0] = "prefill"
        for index, _ in enumerate(mlxir_llm.stream_tokens(compiled, ids, max_new_tokens=steps + 1)):
            phase[0] = "decode"
            if index == steps:
                break

    generate()  # warm-up
    for table in spent.values():
        table.clear()
    generate()
    return {
        "prefill": {op: 1e3 * s for op, s in spent["prefill"].items()},
        "decode": {op: 1e3 * s / steps for op, s in spent["decode"].items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--bits", default="0,4", help="0 (float32) and/or 4")
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--worker-bits", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker_bits, args.steps)))
        return 0
    print(f"load average {os.getloadavg()[0]:.2f}; {llm.describe('llama', 1024)}; prompt {llm.PROMPT} tokens, {args.steps} decode steps")
    for bits in (int(b) for b in args.bits.split(",")):
        for threads in (int(t) for t in args.threads.split(",")):
            results: dict[str, dict[str, dict[str, float]]] = {}
            for label, switch in (("native", "1"), ("MLX's", "0")):
                env, _ = llm.blas_env(threads)
                env.update(MLXIR_CPU_STREAMS=str(threads), MLXIR_NATIVE_KERNELS=switch)
                command = [sys.executable, __file__, "--worker", "--worker-bits", str(bits), "--steps", str(args.steps)]
                done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
                if done.returncode != 0:
                    print(done.stderr[-3000:])
                    return 1
                results[label] = json.loads(done.stdout.strip().splitlines()[-1])
            title = "float32" if not bits else f"{bits}-bit weights"
            print(f"\n{title}, {threads} thread(s): ms per prefill / per decode step, (share)")
            print(f"{'op':34} {'prefill MLX':>18} {'prefill native':>18} {'decode MLX':>18} {'decode native':>18}")
            ops = sorted(
                set(results["MLX's"]["prefill"]) | set(results["native"]["prefill"]),
                key=lambda op: -results["MLX's"]["prefill"].get(op, 0.0) - 100 * results["MLX's"]["decode"].get(op, 0.0),
            )
            totals = {(label, phase): sum(results[label][phase].values()) for label in results for phase in ("prefill", "decode")}
            for op in ops:
                cells = []
                for phase in ("prefill", "decode"):
                    for label in ("MLX's", "native"):
                        value = results[label][phase].get(op, 0.0)
                        share = value / totals[(label, phase)] if totals[(label, phase)] else 0.0
                        cells.append(f"{value:8.2f} ({share:4.0%})")
                print(f"{op:34} " + " ".join(f"{c:>18}" for c in cells))
            print(
                f"{'total':34} {totals[('MLX' + chr(39) + 's', 'prefill')]:>18.2f} {totals[('native', 'prefill')]:>18.2f} "
                f"{totals[('MLX' + chr(39) + 's', 'decode')]:>18.2f} {totals[('native', 'decode')]:>18.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
