"""The CPU backend's polynomial `exp`/`sigmoid`/`erf` (`runtime/cpu/polynomial.py`)
on and off, in one process, alternating call by call: the 56M Llama of
`benchmarks/llm.py` (random weights, f32), its 128-token prefill and its decode steps.

    .venv/bin/python benchmarks/polynomial.py --calls 12

One process per thread count (mlxir `MLXIR_CPU_STREAMS=T`, the BLAS's `T` threads),
each compiling the benchmark's step program once and timing the prefill (and the
median decode step of 8) with the polynomial's threshold at its value and out of
reach, alternately; medians with min-max over `--calls` calls of each.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llm  # noqa: E402  (this folder's LLM benchmark helpers)


def worker(calls: int) -> dict[str, Any]:
    import mlx.core as mx
    import torch
    import transformers

    from mlxir.runtime.cpu import polynomial
    from mlxir.tools import llm as mlxir_llm

    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(llm.model_config("llama", 1024)).eval()
    compiled = mlxir_llm.compile_llm(model)
    ids = mx.array([llm.prompt_ids()], dtype=mx.int64)
    threshold = polynomial.POLYNOMIAL_MIN_ELEMENTS
    results: dict[str, dict[str, list[float]]] = {"polynomial": {"prefill": [], "decode": []}, "mlx": {"prefill": [], "decode": []}}

    def run() -> tuple[float, float]:
        times: list[float] = []
        start = time.perf_counter()
        for _ in mlxir_llm.stream_tokens(compiled, ids, max_new_tokens=9):
            times.append(time.perf_counter())
        steps = [b - a for a, b in zip(times, times[1:])]
        return (times[0] - start) * 1e3, statistics.median(steps) * 1e3

    for name in ("polynomial", "mlx"):  # warm-up: traces and the fused loop's C++
        polynomial.POLYNOMIAL_MIN_ELEMENTS = threshold if name == "polynomial" else 1 << 62
        run()
    for index in range(2 * calls):
        name = "polynomial" if index % 2 else "mlx"
        polynomial.POLYNOMIAL_MIN_ELEMENTS = threshold if name == "polynomial" else 1 << 62
        prefill, decode = run()
        results[name]["prefill"].append(prefill)
        results[name]["decode"].append(decode)
    return results


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=12)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.calls)))
        return
    load_before = os.getloadavg()
    rows: list[str] = []
    for count in (int(t) for t in args.threads.split(",")):
        env, _ = llm.blas_env(count)
        env["MLXIR_CPU_STREAMS"] = str(count)
        command = [sys.executable, __file__, "--worker", "--calls", str(args.calls)]
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
        if done.returncode:
            sys.stderr.write(done.stderr)
            raise SystemExit(f"the {count}-thread worker failed")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        for name in ("mlx", "polynomial"):
            rows.append(f"| {count} | {name} | {_cell(result[name]['prefill'])} | {_cell(result[name]['decode'])} |")
    load_after = os.getloadavg()
    print(
        f"{llm.describe('llama', 1024)}, f32, 128-token prompt. ms, median over {args.calls} calls (min-max), "
        "alternating in one process. Threads: MLXIR_CPU_STREAMS=T and the BLAS's T threads."
    )
    print(f"Load average (1/5/15 min): before {'/'.join(f'{x:.2f}' for x in load_before)}, after {'/'.join(f'{x:.2f}' for x in load_after)}.")
    print()
    print("| threads | exp/sigmoid/erf | prefill 128 | decode step |")
    print("|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
