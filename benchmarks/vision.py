"""Vision models on the CPU: mlxir against eager PyTorch and ONNX Runtime, at equal threads.

    .venv/bin/python benchmarks/vision.py [--models resnet18,mobilenet_v2,vit_tiny,convnext_atto]
        [--rounds 5] [--iterations 10] [--threads 1,2] [--size 224]

Models (random weights, seed 0, float32, batch 1, `--size`² RGB): torchvision's
ResNet-18 and MobileNet-V2 (a depthwise-separable net), timm's ViT-Tiny/16 and
ConvNeXt-Atto (ConvNeXt's depthwise 7x7 blocks), from `build/zoo-packages` (`make
zoo-packages`; never the venv's own site-packages, see `tests/zoo/vision_packages.py`).

Each model is exported and compiled once (`mlxir.compile`, the host's default
pipeline, saved as `.mlxfb`) and exported to ONNX once (`torch.onnx.export`, opset
18); every timing runs in a fresh process of its own, which loads the program (mlxir),
opens an ONNX Runtime session on the file (all graph optimizations) or builds the same
model from the same seed (torch), runs it 3 times to warm up, then `--iterations`
times, and reports the median. ONNX Runtime needs `onnxruntime`, `onnx` and
`onnxscript` (the `bench` extra); without them its columns are left out. Systems and
thread counts alternate within each of `--rounds` rounds; the table gives the median
over the rounds with their min and max, and the load average before and after.

Threads, per system, at T threads: torch `torch.set_num_threads(T)` with
`OMP_NUM_THREADS=MKL_NUM_THREADS=T` (its own MKL/oneDNN kernels); ONNX Runtime
`intra_op_num_threads=T`, `inter_op_num_threads=1` (its own MLAS kernels); mlxir
`MLXIR_CPU_STREAMS=T` and `OPENBLAS_NUM_THREADS=T` (MLX's convolutions and products
are BLAS calls; the system OpenBLAS is what `import mlxir` loads where installed,
docs/blas.md). `mlxir-mlx` is the same mlxir program with `MLXIR_NATIVE_KERNELS=0`:
MLX's own CPU kernels where the native ones would run (docs/native-kernels.md)."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
MODELS = ("resnet18", "mobilenet_v2", "vit_tiny", "convnext_atto")
SYSTEMS = ("torch", "onnxruntime", "mlxir", "mlxir-mlx")
"""`mlxir-mlx`: the same program with the native kernels off (`MLXIR_NATIVE_KERNELS=0`),
MLX's own CPU kernels throughout: the before of docs/native-kernels.md."""
WARMUP = 3


def build(name: str, size: int) -> Any:
    """The model `name`, with seed-0 random weights, in eval mode."""
    import importlib

    import torch

    sys.path.insert(0, str(ROOT / "tests"))
    packages: Any = importlib.import_module("zoo.vision_packages")  # the tests' folder, not a package of mlxir
    torchvision, timm = packages.vision_packages()
    torch.manual_seed(0)
    if name == "resnet18":
        model = torchvision.models.resnet18()
    elif name == "mobilenet_v2":
        model = torchvision.models.mobilenet_v2()
    elif name == "vit_tiny":
        model = timm.create_model("vit_tiny_patch16_224", img_size=size)
    elif name == "convnext_atto":
        model = timm.create_model("convnext_atto")
    else:
        raise SystemExit(f"unknown model '{name}' (known: {', '.join(MODELS)})")
    return model.eval()


def _image(size: int) -> Any:
    import torch

    generator = torch.Generator().manual_seed(1)
    return torch.randn(1, 3, size, size, generator=generator)


def _timed(run: Any, iterations: int) -> float:
    for _ in range(WARMUP):
        run()
    times: list[float] = []
    for _ in range(iterations):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def worker(system: str, model_name: str, size: int, iterations: int, program: str) -> None:
    """One timing, in this process: prints `{"ms": median}`."""
    threads = int(os.environ["BENCH_THREADS"])
    if system == "torch":
        import torch

        torch.set_num_threads(threads)
        model, image = build(model_name, size), _image(size)
        with torch.no_grad():
            ms = _timed(lambda: model(image), iterations)
    elif system == "onnxruntime":
        import importlib

        onnxruntime: Any = importlib.import_module("onnxruntime")  # the bench extra: absent from a plain venv

        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads, options.inter_op_num_threads = threads, 1
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL
        session = onnxruntime.InferenceSession(str(Path(program).with_suffix(".onnx")), options)
        feed = {session.get_inputs()[0].name: _image(size).numpy()}
        ms = _timed(lambda: session.run(None, feed), iterations)
    else:
        # mlxir first: it puts the system BLAS under MLX, which binds it at import (docs/blas.md).
        import mlxir  # noqa: I001
        import mlx.core as mx

        compiled = mlxir.load(program)
        image = mx.array(_image(size).numpy())
        ms = _timed(lambda: mx.eval(compiled(image)), iterations)  # pyright: ignore[reportUnknownMemberType, reportUnknownLambdaType] (mlx's stub leaves eval's *args unannotated)
    print(json.dumps({"ms": ms}))


def _environment(system: str, threads: int) -> dict[str, str]:
    env = dict(os.environ, BENCH_THREADS=str(threads), OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads))
    if system.startswith("mlxir"):
        env.update(MLXIR_CPU_STREAMS=str(threads), OPENBLAS_NUM_THREADS=str(threads))
    if system == "mlxir-mlx":
        env["MLXIR_NATIVE_KERNELS"] = "0"
    return env


def _measure(system: str, model: str, threads: int, args: argparse.Namespace, program: Path) -> float:
    command = [sys.executable, __file__, "--worker", system, "--models", model, "--size", str(args.size),
               "--iterations", str(args.iterations), "--program", str(program)]
    done = subprocess.run(command, env=_environment(system, threads), capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{system} on {model} at {threads} thread(s) failed:\n{done.stderr[-3000:]}")
    return float(json.loads(done.stdout.strip().splitlines()[-1])["ms"])


def _compile(model_name: str, size: int, folder: Path) -> tuple[Path, float]:
    import torch

    import mlxir

    model = build(model_name, size)
    exported = torch.export.export(model, (_image(size),))
    start = time.perf_counter()
    compiled = mlxir.compile(exported)
    seconds = time.perf_counter() - start
    path = folder / f"{model_name}.mlxfb"
    compiled.save(path)
    if _has_onnxruntime():
        import contextlib
        import io

        with contextlib.redirect_stdout(io.StringIO()):  # the exporter reports each step on stdout
            torch.onnx.export(model, (_image(size),), str(path.with_suffix(".onnx")), dynamo=True, opset_version=18)
    return path, seconds


def _mlx_blas() -> str:
    """The BLAS `import mlxir` puts under MLX here (docs/blas.md)."""
    from mlxir.runtime.cpu.blas import candidates

    found = candidates()
    return found[0] if found else "the MLX wheel's bundled BLAS"


def _has_onnxruntime() -> bool:
    import importlib.util

    return all(importlib.util.find_spec(name) is not None for name in ("onnxruntime", "onnx", "onnxscript"))


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--size", type=int, default=224)
    parser.add_argument("--worker", choices=SYSTEMS, help=argparse.SUPPRESS)
    parser.add_argument("--program", default="", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.models, args.size, args.iterations, args.program)
        return
    models = args.models.split(",")
    threads = [int(t) for t in args.threads.split(",")]
    systems_run = SYSTEMS if _has_onnxruntime() else tuple(s for s in SYSTEMS if s != "onnxruntime")
    if "onnxruntime" not in systems_run:
        print("onnxruntime, onnx or onnxscript is not installed: ONNX Runtime is left out "
              "(pip install -e '.[bench]')", file=sys.stderr)
    load_before = os.getloadavg()
    results: dict[tuple[str, str, int], list[float]] = {}
    with tempfile.TemporaryDirectory() as scratch:
        programs: dict[str, Path] = {}
        for model in models:
            programs[model], seconds = _compile(model, args.size, Path(scratch))
            print(f"compiled {model} in {seconds:.1f} s", file=sys.stderr, flush=True)
        for round_index in range(args.rounds):
            # Alternate the order of the systems from round to round.
            systems = systems_run if round_index % 2 == 0 else tuple(reversed(systems_run))
            for model in models:
                for count in threads:
                    for system in systems:
                        ms = _measure(system, model, count, args, programs[model])
                        results.setdefault((model, system, count), []).append(ms)
            print(f"round {round_index + 1}/{args.rounds} done", file=sys.stderr, flush=True)
    load_after = os.getloadavg()
    print(f"Vision, batch 1, {args.size}x{args.size}, float32: ms per forward, median over {args.rounds} "
          f"rounds (min-max) of each process's median over {args.iterations} runs after {WARMUP} warm-up runs.")
    print("Threads: torch set_num_threads(T), OMP/MKL_NUM_THREADS=T; ONNX Runtime intra_op_num_threads=T, "
          "inter_op_num_threads=1; mlxir MLXIR_CPU_STREAMS=T, OPENBLAS/OMP/MKL_NUM_THREADS=T, MLX on "
          f"{_mlx_blas()}; mlxir-mlx the same with MLXIR_NATIVE_KERNELS=0.")
    print(f"Load average (1/5/15 min): before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
          f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f}.\n")
    header = ["model"]
    others = [system for system in systems_run if system != "mlxir"]
    for count in threads:
        header += [f"{system} {count}T" for system in systems_run]
        header += [f"mlxir/{system} {count}T" for system in others]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for model in models:
        row = [model]
        for count in threads:
            cells = {system: results[(model, system, count)] for system in systems_run}
            for system in systems_run:
                values = cells[system]
                row.append(f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})")
            for system in others:
                row.append(f"{statistics.median(cells['mlxir']) / statistics.median(cells[system]):.2f}x")
        print("| " + " | ".join(row) + " |")


if __name__ == "__main__":
    main()
