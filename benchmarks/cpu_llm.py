"""LLM decode and prefill on the CPU at equal threads: mlxir against llama.cpp, eager
torch and mlx-lm, on the same weights.

    .venv/bin/python benchmarks/cpu_llm.py [--models llama] [--rounds 3] [--threads 1,2]
        [--steps 32] [--llama-cpp build/llama.cpp]

The model is `benchmarks/llm.py`'s (random weights, seed 0, float32, written once with
`save_pretrained`); the systems:

- llama.cpp, built here from source (`benchmarks/llamacpp.py`), the same weights
  converted by its own `convert_hf_to_gguf.py` to f32, f16 and q8_0 and quantized by
  `llama-quantize` to q4_0; timed by `llama-bench` (its f16 KV cache): prefill of the
  128-token prompt (`pp128`), decode of `--steps` tokens after 128 tokens of context
  (`tg` at depth 128). Before any timing, its f32 greedy tokens after the prompt are
  compared with transformers' (printed: n/n equal, else the table says the conversion
  differs);
- mlxir f32, 4-bit (`mlxir.Quantize(4, group_size=64, embeddings=True)`) and 4-bit
  int8-x (the same with `activation_bits=8`: x rounded to int8 per group, the
  approximate mode llama.cpp's q4_0 x q8_0 dots compute), mlx-lm
  f32 and eager torch f32: `benchmarks/llm.py`'s workers (the step program of
  `export_llm(logits="last")` with a fixed cache; `mlx_lm.generate.generate_step`; the
  HF model with a DynamicCache). Prefill is the time to the first token of the
  128-token prompt, decode the median ms per token over `--steps` steps. The prefill
  512 column: every system again, a process of its own per round, on a 512-token
  prompt (llama.cpp `pp512`; mlxir on step programs compiled for it).

Threads, per system, at T threads: llama.cpp `-t T`; mlxir `MLXIR_CPU_STREAMS=T` (its
CPU streams count as threads) and `OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=T` with the BLAS
`import mlxir` picks (`llm.mlx_blas()`: an MKL in the environment, else the system
OpenBLAS) preloaded; mlx-lm the same BLAS and thread variables; torch
`torch.set_num_threads(T)`, `OMP_NUM_THREADS=MKL_NUM_THREADS=T`, its own MKL (no
preloaded BLAS). Every timing is a fresh process; the systems and thread counts
alternate in `--rounds` rounds (the order rotated each round); the table gives the
median over the rounds with min and max, the load average before and after.

The bound: decode reads every weight once per token (the embedding's one row aside),
so it takes at least the bytes read divided by the memory's read bandwidth, measured
here like STREAM's read kernel: a C sum over 512 MB of float32, one slice per OpenMP
thread, compiled like llama.cpp (`-O3 -march=native`), at each T, the median of 8
passes. The table prints that bound and each decode's ratio to
it. A benchmark, not a test: nothing asserts a time."""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import llamacpp  # noqa: E402  (this folder's llama.cpp helper; not the sdist's `llama_cpp` binding)
import llm  # noqa: E402  (benchmarks/llm.py: the model, the workers)

QUANT_BITS = 4
LONG_PROMPT = 512
"""The prefill column where the second core should pay: each system, in a process of
its own, prefills a prompt of this many tokens (mlxir on a step program compiled for
it, with a cache of 1024 positions)."""
LLAMA_FORMATS = llamacpp.FORMATS
CHECKED_TOKENS = 16


# STREAM's read kernel in spirit: a sum over a float32 array, one static slice per
# OpenMP thread, each pass timed; compiled like llama.cpp (-O3 -march=native, AMX off).
_READ_KERNEL = r"""
#include <stdio.h>
#include <stdlib.h>
#include <omp.h>
int main(int argc, char **argv) {
    size_t n = (size_t)atol(argv[1]);
    int passes = atoi(argv[2]);
    float *a = aligned_alloc(64, n * sizeof(float));
    #pragma omp parallel for schedule(static)
    for (size_t i = 0; i < n; i++) a[i] = 1.0f;
    for (int pass = 0; pass < passes; pass++) {
        float sum = 0.0f;
        double start = omp_get_wtime();
        #pragma omp parallel for schedule(static) reduction(+:sum)
        for (size_t i = 0; i < n; i++) sum += a[i];
        double seconds = omp_get_wtime() - start;
        printf("%.6f %g\n", n * sizeof(float) / seconds / 1e9, (double)sum);
    }
    return 0;
}
"""


def read_bandwidth(cache: Path, threads: int, megabytes: int = 512, passes: int = 9) -> float:
    """GB/s of a sum over `megabytes` of float32 at `threads` OpenMP threads (the data
    first touched by the thread that reads it): the median of the passes after the
    first."""
    binary = cache / "stream-read"
    if not binary.exists():
        source = cache / "stream-read.c"
        source.write_text(_READ_KERNEL)
        subprocess.run(
            [
                "cc",
                "-O3",
                "-march=native",
                *llamacpp.NO_AMX.split(),
                "-ffast-math",
                "-funroll-loops",
                "-fopenmp",
                str(source),
                "-o",
                str(binary),
            ],
            check=True,
        )
    done = subprocess.run(
        [str(binary), str(megabytes * 2**20 // 4), str(passes)],
        env=dict(os.environ, OMP_NUM_THREADS=str(threads)),
        capture_output=True,
        text=True,
        check=True,
    )
    return statistics.median(float(line.split()[0]) for line in done.stdout.splitlines()[1:])


def worker_llama_greedy(cache: Path, model: Path, count: int) -> None:
    print(json.dumps(llamacpp.greedy_tokens(cache, model, llm.prompt_ids(), count)))


def _llm_worker(
    kind: str,
    folder: Path,
    model: str,
    steps: int,
    env: dict[str, str],
    pipeline: str = "default",
    bits: int = 0,
) -> dict[str, Any]:
    command = [
        sys.executable,
        str(HERE / "llm.py"),
        "--worker",
        kind,
        "--folder",
        str(folder),
        "--runs",
        "1",
        "--steps",
        str(steps),
        "--model",
        model,
        "--pipeline",
        pipeline,
        "--bits",
        str(bits),
        "--cache",
        "fixed",
    ]
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise SystemExit(f"{kind} ({pipeline}) failed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _environment(system: str, threads: int, prompt: int = llm.PROMPT) -> dict[str, str]:
    """`llm.blas_env` at `threads`: the MLX BLAS preloaded for the MLX processes only
    (torch keeps its own MKL), and mlxir's CPU streams counted as its threads; the
    prompt length for the workers (`llm.PROMPT`)."""
    env, _ = llm.blas_env(threads)
    env["BENCH_THREADS"] = str(threads)
    env["BENCH_PROMPT"] = str(prompt)
    if not system.startswith(("mlxir", "mlx-lm")):
        env.pop("LD_PRELOAD", None)
    if system.startswith("mlxir"):
        env["MLXIR_CPU_STREAMS"] = str(threads)
    return env


def systems() -> dict[str, tuple[str, str, int]]:
    """Name -> (llm.py worker, mlxir program, bits), and the llama.cpp formats."""
    named: dict[str, tuple[str, str, int]] = {
        f"llama.cpp {kind}": ("llama.cpp", kind, 0) for kind in LLAMA_FORMATS
    }
    named.update(
        {
            "mlxir f32": ("mlxir-run", "default", 0),
            f"mlxir {QUANT_BITS}-bit": ("mlxir-run", f"q{QUANT_BITS}", QUANT_BITS),
            f"mlxir {QUANT_BITS}-bit int8-x": ("mlxir-run", f"q{QUANT_BITS}{llm.INT8_SUFFIX}", QUANT_BITS),
            "mlx-lm f32": ("mlx-lm", "default", 0),
            "torch f32": ("torch", "default", 0),
        }
    )
    return named


def measure(
    name: str,
    spec: tuple[str, str, int],
    threads: int,
    folder: Path,
    model: str,
    steps: int,
    binaries: Path,
    ggufs: dict[str, Path],
    prompt: int = llm.PROMPT,
) -> tuple[float, float]:
    """(prefill ms, decode ms per token) of one fresh process, after a `prompt`-token
    prompt."""
    kind, program, bits = spec
    if kind == "llama.cpp":
        timed = llamacpp.bench(binaries, ggufs[program], threads, prompt, steps, repetitions=1)
        return timed["prefill_ms"][0], timed["decode_ms"][0]
    result = _llm_worker(kind, folder, model, steps, _environment(name, threads, prompt), program, bits)
    return float(result["prefill_ms"]), float(result["decode_ms"])


def _cell(values: list[float]) -> str:
    return f"{statistics.median(values):.1f} ({min(values):.1f}-{max(values):.1f})"


def report(
    model: str,
    params: int,
    results: dict[tuple[str, int], list[tuple[float, float]]],
    threads: list[int],
    bandwidth: dict[int, float],
    read_bytes: dict[str, int],
    sizes: dict[str, int],
    rounds: int,
    long_prefill: dict[tuple[str, int], list[float]],
) -> str:
    names = list(systems())
    lines = [
        f"{llm.describe(model, 1024)}; {params / 1e6:.0f}M parameters. ms, median over {rounds} rounds "
        "(min-max), one process per system per round."
    ]
    head = ["system", "weights MB"]
    head += [f"decode {t}T" for t in threads] + [f"prefill {llm.PROMPT} {t}T" for t in threads]
    head += [f"prefill {LONG_PROMPT} {t}T" for t in threads]
    head += [f"decode {t}T / bound" for t in threads]
    lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in names:
        row = [name, f"{sizes[name] / 1e6:.0f}" if name in sizes else "-"]
        row += [_cell([d for _, d in results[(name, t)]]) for t in threads]
        row += [_cell([p for p, _ in results[(name, t)]]) for t in threads]
        row += [_cell(long_prefill[(name, t)]) for t in threads]
        for t in threads:
            bound = read_bytes.get(name)
            decode = statistics.median(d for _, d in results[(name, t)])
            row.append(f"{decode / (1e3 * bound / (bandwidth[t] * 1e9)):.2f}x" if bound else "-")
        lines.append("| " + " | ".join(row) + " |")
    lines.append("")
    lines.append(
        "Read bandwidth (GB/s): "
        + ", ".join(f"{t}T {bandwidth[t]:.1f}" for t in threads)
        + "; decode bound (ms/token) = weight bytes read per token / bandwidth: "
        + "; ".join(
            f"{name} " + ", ".join(f"{t}T {1e3 * b / (bandwidth[t] * 1e9):.2f}" for t in threads)
            for name, b in read_bytes.items()
        )
    )

    def ratio(a: str, b: str, index: int, t: int) -> str:
        x = statistics.median(v[index] for v in results[(a, t)])
        y = statistics.median(v[index] for v in results[(b, t)])
        return f"{x / y:.2f}x"

    for mine, theirs in (
        ("mlxir f32", "llama.cpp f32"),
        ("mlxir f32", "torch f32"),
        ("mlxir f32", "mlx-lm f32"),
        (f"mlxir {QUANT_BITS}-bit", "llama.cpp q4_0"),
        (f"mlxir {QUANT_BITS}-bit int8-x", "llama.cpp q4_0"),
        (f"mlxir {QUANT_BITS}-bit", "mlxir f32"),
    ):
        lines.append(
            f"{mine} / {theirs}: decode "
            + ", ".join(f"{t}T {ratio(mine, theirs, 1, t)}" for t in threads)
            + f"; prefill {llm.PROMPT} "
            + ", ".join(f"{t}T {ratio(mine, theirs, 0, t)}" for t in threads)
            + f"; prefill {LONG_PROMPT} "
            + ", ".join(
                f"{t}T {statistics.median(long_prefill[(mine, t)]) / statistics.median(long_prefill[(theirs, t)]):.2f}x"
                for t in threads
            )
        )
    return "\n".join(lines)


def torch_version() -> str:
    return llm._version("torch")  # pyright: ignore[reportPrivateUsage] (llm.py is this folder's script)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--models", default="llama", help=f"comma-separated: {', '.join(llm.LAYERS)}"
    )
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument(
        "--llama-cpp",
        type=Path,
        default=llamacpp.DEFAULT_CACHE,
        help="where llama.cpp's source and build are kept (built on first use)",
    )
    parser.add_argument("--worker", choices=["llama-greedy"], help=argparse.SUPPRESS)
    parser.add_argument("--gguf", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker_llama_greedy(args.llama_cpp, args.gguf, CHECKED_TOKENS)
        return
    threads = [int(t) for t in args.threads.split(",")]
    binaries = llamacpp.build(args.llama_cpp)
    llm.write_bytecode()
    load_before = os.getloadavg()
    bandwidth = {t: read_bandwidth(args.llama_cpp, t) for t in threads}
    reports = []
    for model in args.models.split(","):
        with tempfile.TemporaryDirectory(prefix=f"mlxir-cpu-llm-{model}-") as scratch:
            folder = Path(scratch)
            print(f"{model}: weights, mlxir programs, GGUF files", file=sys.stderr, flush=True)
            params = llm.save_weights(model, 1024, folder)
            compile_env = _environment("mlxir", 1)
            compiled = {
                "mlxir f32": _llm_worker(
                    "mlxir-compile", folder, model, args.steps, compile_env, "default"
                ),
            }
            for name, (_, pipeline, bits) in systems().items():
                if bits:
                    compiled[name] = _llm_worker(
                        "mlxir-compile", folder, model, args.steps, compile_env, pipeline, bits
                    )
            long_env = _environment("mlxir", 1, LONG_PROMPT)
            for _, pipeline, bits in (spec for name, spec in systems().items() if name.startswith("mlxir")):
                _llm_worker("mlxir-compile", folder, model, args.steps, long_env, pipeline, bits)
            ggufs = llamacpp.convert(args.llama_cpp, binaries, folder, folder / "gguf")
            greedy = subprocess.run(
                [
                    sys.executable,
                    __file__,
                    "--worker",
                    "llama-greedy",
                    "--llama-cpp",
                    str(args.llama_cpp),
                    "--gguf",
                    str(ggufs["f32"]),
                ],
                env=llamacpp.library_environment(binaries),
                capture_output=True,
                text=True,
                check=False,
            )
            if greedy.returncode != 0:
                raise SystemExit(f"llama.cpp greedy tokens failed:\n{greedy.stderr[-3000:]}")
            llama_tokens = json.loads(greedy.stdout.strip().splitlines()[-1])
            reference = _llm_worker(
                "torch", folder, model, CHECKED_TOKENS, _environment("torch", 1)
            )["tokens"]
            agree = sum(a == b for a, b in zip(llama_tokens, reference[:CHECKED_TOKENS]))
            print(
                f"{model}: llama.cpp f32 greedy tokens {agree}/{CHECKED_TOKENS} equal transformers'",
                file=sys.stderr,
                flush=True,
            )
            config = llm.model_config(model, 1024)
            embedding = config.vocab_size * config.hidden_size
            f32_read = 4 * (params - (0 if config.tie_word_embeddings else embedding))
            sizes = {f"llama.cpp {kind}": path.stat().st_size for kind, path in ggufs.items()}
            sizes.update({name: result["bytes"] for name, result in compiled.items()})
            read_fraction = f32_read / (4 * params)
            read_bytes = {
                "f32 weights": f32_read,
                "llama.cpp q4_0": int(sizes["llama.cpp q4_0"] * read_fraction),
                f"mlxir {QUANT_BITS}-bit": int(sizes[f"mlxir {QUANT_BITS}-bit"] * read_fraction),
            }
            results: dict[tuple[str, int], list[tuple[float, float]]] = {}
            long_prefill: dict[tuple[str, int], list[float]] = {}
            named = systems()
            order = list(named)
            for round_index in range(args.rounds):
                shift = round_index % len(order)
                for t in threads:
                    for name in order[shift:] + order[:shift]:
                        results.setdefault((name, t), []).append(
                            measure(
                                name, named[name], t, folder, model, args.steps, binaries, ggufs
                            )
                        )
                        long_prefill.setdefault((name, t), []).append(
                            measure(
                                name, named[name], t, folder, model, 1, binaries, ggufs, LONG_PROMPT
                            )[0]
                        )
                print(
                    f"{model}: round {round_index + 1}/{args.rounds} done",
                    file=sys.stderr,
                    flush=True,
                )
            bound_names = {
                "mlxir f32": "f32 weights",
                "llama.cpp f32": "f32 weights",
                "mlx-lm f32": "f32 weights",
                "torch f32": "f32 weights",
                "llama.cpp q4_0": "llama.cpp q4_0",
                f"mlxir {QUANT_BITS}-bit": f"mlxir {QUANT_BITS}-bit",
                f"mlxir {QUANT_BITS}-bit int8-x": f"mlxir {QUANT_BITS}-bit",
            }
            per_system = {name: read_bytes[key] for name, key in bound_names.items()}
            text = report(
                model, params, results, threads, bandwidth, per_system, sizes, args.rounds, long_prefill
            )
            text += (
                f"\nllama.cpp f32 greedy tokens after the prompt: {agree}/{CHECKED_TOKENS} equal transformers'"
                " (f32 KV cache)."
            )
            reports.append(text)
    load_after = os.getloadavg()
    print(
        "CPU LLM benchmark at equal threads. Threads: llama.cpp -t T; mlxir MLXIR_CPU_STREAMS=T, "
        "OPENBLAS_NUM_THREADS=MKL_NUM_THREADS=T; mlx-lm the same thread variables; both MLX processes on "
        + (f"{llm.mlx_blas()} (preloaded)" if llm.mlx_blas() else "the MLX wheel's bundled BLAS")
        + f"; torch {torch_version()} set_num_threads(T), OMP/MKL_NUM_THREADS=T, its own MKL. llama.cpp "
        f"from llama-cpp-python {llamacpp.LLAMA_CPP_PYTHON}'s vendored source; MLX {llm._version('mlx')}, "
        f"mlx-lm {llm._version('mlx-lm')}."
    )
    print(
        f"Load average (1/5/15 min): before {load_before[0]:.2f}/{load_before[1]:.2f}/{load_before[2]:.2f}, "
        f"after {load_after[0]:.2f}/{load_after[1]:.2f}/{load_after[2]:.2f}.\n"
    )
    print("\n\n".join(reports))


if __name__ == "__main__":
    main()
