"""Loading a program against MLX's own loader, in fresh processes, alternating.

    .venv/bin/python benchmarks/load.py [--model llama] [--processes 7]

The model is `benchmarks/llm.py`'s (random weights, fixed seed, float32), written once
with `save_pretrained` to a temporary folder and compiled once (`llm.py`'s step
program). Then, `--processes` times, in turns, one fresh process runs each of:

- `mlxir`: `import mlxir` (and `mlx.core`, `numpy`), then `import mlxir.runtime.program`
  ("runtime import"), then `mlxir.load(path)` ("load");
- `mx.load`: `import mlx.core`, then `mx.load` of the folder's `.safetensors` and
  `mx.eval` of every array ("load").

Each process reports its times and its peak RSS (`VmHWM`). The table gives medians
(and ranges) and the ratios. The program is verified by the compile (its verdict is
recorded, `codegen/verification.py`), as it is for a user who compiled it; pass
`--verify-each` to load with `MLXIR_CACHE_DIR=none` (every load verifies). The files
are read from the page cache (each was just written). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import llm as bench  # noqa: E402  (benchmarks/llm.py)

MLXIR_CHILD = """
import json, sys, time
start = time.perf_counter()
import mlxir
import mlx.core as mx
import numpy
imported = time.perf_counter()
import mlxir.runtime.program
runtime = time.perf_counter()
program = mlxir.load(sys.argv[1])
loaded = time.perf_counter()
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]
print(json.dumps({"runtime_import_s": runtime - imported, "load_s": loaded - runtime, "rss_mb": int(hwm) / 1024}))
"""

MX_CHILD = """
import json, sys, time
import mlx.core as mx
start = time.perf_counter()
arrays = mx.load(sys.argv[1])
mx.eval(list(arrays.values()))
loaded = time.perf_counter()
hwm = next(l for l in open("/proc/self/status") if l.startswith("VmHWM")).split()[1]
print(json.dumps({"load_s": loaded - start, "rss_mb": int(hwm) / 1024}))
"""


def child(script: str, path: Path, env: dict[str, str]) -> dict[str, float]:
    run = subprocess.run([sys.executable, "-c", script, str(path)], env=env, capture_output=True, text=True)
    if run.returncode != 0:
        raise SystemExit(run.stderr)
    return json.loads(run.stdout.strip().splitlines()[-1])


def summary(values: list[float], digits: int = 3) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="llama", choices=sorted(bench.LAYERS))
    parser.add_argument("--processes", type=int, default=7)
    parser.add_argument("--verify-each", action="store_true")
    args = parser.parse_args()
    env, blas = bench.blas_env()
    bench.write_bytecode()
    with tempfile.TemporaryDirectory(prefix="mlxir-load-") as tmp:
        folder = Path(tmp)
        print(f"{args.model}: writing random weights to {folder}", file=sys.stderr)
        bench.save_weights(args.model, 1024, folder)
        compile_args = argparse.Namespace(
            model=args.model, pipeline="default", bits=0, qwen3_hidden=1024, cache="fixed"
        )
        compiled = bench.worker_mlxir_compile(folder, compile_args)
        program = folder / "step-default.mlxfb"
        weights = next(folder.glob("*.safetensors"))
        child_env = dict(env, MLXIR_CACHE_DIR="none") if args.verify_each else dict(env)
        runs: dict[str, list[dict[str, float]]] = {"mlxir": [], "mx.load": []}
        for index in range(args.processes):
            order = [("mlxir", MLXIR_CHILD, program), ("mx.load", MX_CHILD, weights)]
            for name, script, path in order if index % 2 == 0 else reversed(order):
                runs[name].append(child(script, path, child_env))
    mlxir_runs, mx_runs = runs["mlxir"], runs["mx.load"]
    load = [r["load_s"] for r in mlxir_runs]
    with_import = [r["load_s"] + r["runtime_import_s"] for r in mlxir_runs]
    floor = [r["load_s"] for r in mx_runs]
    rss, floor_rss = [r["rss_mb"] for r in mlxir_runs], [r["rss_mb"] for r in mx_runs]
    median = statistics.median
    print(
        f"\n{bench.describe(args.model, 1024)}: program {compiled['bytes']:,} bytes; {blas}; "
        f"{args.processes} processes each, alternating; "
        f"{'every load verifies' if args.verify_each else 'verdict recorded by the compile'}"
    )
    print(f"{'':28} {'median s (range)':>24} {'peak RSS MB':>24}")
    print(f"{'mlxir.load':28} {summary(load):>24} {summary(rss, 0):>24}")
    print(f"{'  with the runtime import':28} {summary(with_import):>24}")
    print(f"{'mx.load of .safetensors':28} {summary(floor):>24} {summary(floor_rss, 0):>24}")
    print(
        f"mlxir / mx.load: load {median(load) / median(floor):.2f}x, with the runtime import "
        f"{median(with_import) / median(floor):.2f}x, peak RSS {median(rss) / median(floor_rss):.2f}x"
    )
    if os.environ.get("MLXIR_CACHE_DIR", "").lower() == "none" and not args.verify_each:
        print("note: MLXIR_CACHE_DIR=none here, so every load verified", file=sys.stderr)


if __name__ == "__main__":
    main()
