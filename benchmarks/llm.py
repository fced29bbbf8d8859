"""LLM generation on MLX: mlxir against eager torch (CPU) and mlx-lm, same weights.

    .venv/bin/python benchmarks/llm.py [--models llama,qwen3] [--runs 3] [--steps 32]

Models (random weights, fixed seed, float32, `attn_implementation="sdpa"`):

- `llama`: hidden 512, 8 layers, 8 heads / 4 KV heads, FFN 1408, vocab 32000 (56M);
- `qwen3`: Qwen3-0.6B's shape, 28 layers, hidden 1024, 16 / 8 heads of 128, FFN 3072,
  vocab 151936, tied embeddings (`--qwen3-hidden` reduces the hidden size if memory
  requires; the table says which was used).

The weights are written once with `save_pretrained` to a temporary folder; every system
loads that folder: transformers (`from_pretrained`), mlxir (export from the same model)
and mlx-lm (`mlx_lm.utils.load_model`). Each system runs in its own process, one after
the other, with one thread (`torch.set_num_threads(1)`, `OPENBLAS_NUM_THREADS=1`,
`OMP_NUM_THREADS=1`, `MKL_NUM_THREADS=1`). Both MLX processes (mlxir and mlx-lm) get
the same BLAS: the system OpenBLAS preloaded (`LD_PRELOAD`) when
`libopenblas0-pthread` is installed, else the wheel's bundled BLAS; the table says
which.

Figures: export s (torch.export of the step program); import+lower+serialize s;
instructions (and the aten-level op count they came from); program bytes; load s
(`mlxir.load` of the `.mlxfb`); prefill ms for a 128-token prompt (time to the first
token: forward over the prompt, last-position logits, argmax; median of `--runs`);
decode ms/token (greedy, median over `--steps` >= 32 steps of each of `--runs` runs;
the median of the runs' medians); peak RSS of each process (the mlxir compile process
holds the torch model too; the mlxir run process only loads the program).

The mlxir program is `mlxir.tools.llm.export_llm(model, attention_mask=False,
logits="last")`: one program for prefill and decode with the KV cache as explicit
inputs and outputs; generation keeps the cache as `mx.array`s. mlx-lm runs its own loop
(`mlx_lm.generate.generate_step`, greedy). Torch runs the HF model with a DynamicCache
and `logits_to_keep=1`. A benchmark, not a test: nothing asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

OPENBLAS = "/usr/lib/x86_64-linux-gnu/openblas-pthread/libopenblas.so.0"
PROMPT = 128
MAX_SEQ = 512


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


def model_config(name: str, qwen3_hidden: int) -> Any:
    import transformers

    if name == "llama":
        config = transformers.LlamaConfig(
            vocab_size=32000,
            hidden_size=512,
            intermediate_size=1408,
            num_hidden_layers=8,
            num_attention_heads=8,
            num_key_value_heads=4,
            max_position_embeddings=2048,
            tie_word_embeddings=False,
        )
    elif name == "qwen3":
        config = transformers.Qwen3Config(
            vocab_size=151936,
            hidden_size=qwen3_hidden,
            intermediate_size=3 * qwen3_hidden,
            num_hidden_layers=28,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            max_position_embeddings=40960,
            tie_word_embeddings=True,
        )
    else:
        raise SystemExit(f"unknown model '{name}' (llama, qwen3)")
    config._attn_implementation = "sdpa"
    return config


def describe(name: str, qwen3_hidden: int) -> str:
    if name == "llama":
        return "Llama: hidden 512, 8 layers, 8/4 heads, FFN 1408, vocab 32000"
    reduced = "" if qwen3_hidden == 1024 else " (reduced from 1024)"
    return (
        f"Qwen3-0.6B-shaped: hidden {qwen3_hidden}{reduced}, 28 layers, 16/8 heads x 128, "
        f"FFN {3 * qwen3_hidden}, vocab 151936, tied embeddings"
    )


def save_weights(name: str, qwen3_hidden: int, folder: Path) -> int:
    import torch
    import transformers

    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(model_config(name, qwen3_hidden)).eval()
    model.save_pretrained(folder)
    return sum(p.numel() for p in model.parameters())


def load_torch_model(folder: Path) -> Any:
    import transformers

    model = transformers.AutoModelForCausalLM.from_pretrained(
        folder, attn_implementation="sdpa", dtype="float32"
    ).eval()
    return model


def prompt_ids() -> list[int]:
    import random

    rng = random.Random(0)
    return [rng.randrange(3, 30000) for _ in range(PROMPT)]


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def timed_stream(stream: Iterator[Any], steps: int) -> tuple[float, list[float], list[int]]:
    """Prefill ms (to the first token) and the ms of each following token."""
    start = time.perf_counter()
    times, tokens = [], []
    for token in stream:
        times.append(time.perf_counter())
        tokens.append(int(token))
        if len(times) == steps + 1:
            break
    prefill = 1e3 * (times[0] - start)
    decode = [1e3 * (b - a) for a, b in zip(times, times[1:])]
    return prefill, decode, tokens


def repeat(run: Callable[[], tuple[float, list[float], list[int]]], runs: int) -> dict[str, Any]:
    prefills, medians, tokens = [], [], []
    run()  # warm-up
    for _ in range(runs):
        prefill, decode, tokens = run()
        prefills.append(prefill)
        medians.append(statistics.median(decode))
    return {
        "prefill_ms": statistics.median(prefills),
        "decode_ms": statistics.median(medians),
        "decode_runs": medians,
        "tokens": tokens,
    }


# ---------------------------------------------------------------------------
# Workers (one process each)
# ---------------------------------------------------------------------------


def worker_torch(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    import torch
    from transformers import DynamicCache

    torch.set_num_threads(1)
    model = load_torch_model(folder)
    ids = torch.tensor([prompt_ids()])

    def stream() -> Iterator[int]:
        with torch.inference_mode():
            cache = DynamicCache()
            logits = model(input_ids=ids, cache=cache, use_cache=True, logits_to_keep=1).logits
            while True:
                token = int(logits[0, -1].argmax())
                yield token
                logits = model(
                    input_ids=torch.tensor([[token]]), cache=cache, use_cache=True, logits_to_keep=1
                ).logits

    result = repeat(lambda: timed_stream(stream(), args.steps), args.runs)
    result["rss_mb"] = peak_rss_mb()
    return result


def worker_mlxir_compile(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from mlxir.codegen import serialize
    from mlxir.conversions.aten_to_mlx import lower
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.tools import llm

    torch.set_num_threads(1)
    model = load_torch_model(folder)
    exported = llm.export_llm(
        model, attention_mask=False, logits="last", max_batch=8, max_seq=MAX_SEQ, max_past=MAX_SEQ
    )
    aten_nodes = sum(1 for n in exported.ep.graph.nodes if n.op == "call_function")
    start = time.perf_counter()
    module = import_program(exported.ep)
    imported = time.perf_counter()
    aten_ops = sum(1 for _ in module.walk()) - 1
    lower(module)
    lowered = time.perf_counter()
    data = serialize(module)
    serialized = time.perf_counter()
    del module
    (folder / "step.mlxfb").write_bytes(data)
    return {
        "export_s": exported.export_s,
        "import_s": imported - start,
        "lower_s": lowered - imported,
        "serialize_s": serialized - lowered,
        "compile_s": serialized - start,
        "export_nodes": aten_nodes,
        "aten_ops": aten_ops,
        "bytes": len(data),
        "rss_mb": peak_rss_mb(),
    }


def worker_mlxir_run(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    import mlx.core as mx

    import mlxir
    from mlxir.tools import llm

    start = time.perf_counter()
    program = mlxir.load(folder / "step.mlxfb")
    load_s = time.perf_counter() - start
    assert isinstance(program, mlxir.Program)  # an .mlxfb, not a .pte
    compiled = llm.CompiledLLM.from_program(program)
    ids = mx.array([prompt_ids()], dtype=mx.int64)

    def stream() -> Iterator[mx.array]:
        for token, _ in llm.stream_tokens(compiled, ids, max_new_tokens=args.steps + 1):
            yield token[0]

    result = repeat(lambda: timed_stream(stream(), args.steps), args.runs)
    result.update(load_s=load_s, instructions=len(program.info.instructions), rss_mb=peak_rss_mb())
    return result


def worker_mlxlm(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    import mlx.core as mx

    # mlx-lm is the benchmark's comparison, installed beside mlxir, not a dependency.
    from mlx_lm.generate import generate_step  # pyright: ignore[reportMissingImports]
    from mlx_lm.utils import load_model  # pyright: ignore[reportMissingImports]

    start = time.perf_counter()
    model, _ = load_model(folder)
    load_s = time.perf_counter() - start
    ids = mx.array(prompt_ids())

    def stream() -> Iterator[mx.array]:
        for token, _ in generate_step(ids, model, max_tokens=args.steps + 1):
            yield token

    result = repeat(lambda: timed_stream(stream(), args.steps), args.runs)
    result.update(load_s=load_s, rss_mb=peak_rss_mb())
    return result


WORKERS = {
    "torch": worker_torch,
    "mlxir-compile": worker_mlxir_compile,
    "mlxir-run": worker_mlxir_run,
    "mlx-lm": worker_mlxlm,
}


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def blas_env() -> tuple[dict[str, str], str]:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = "1"
    if Path(OPENBLAS).exists():
        return {**env, "LD_PRELOAD": OPENBLAS}, f"system OpenBLAS ({OPENBLAS}, preloaded, 1 thread)"
    return env, "the MLX wheel's bundled BLAS (libopenblas0-pthread is not installed)"


def run_worker(kind: str, folder: Path, args: argparse.Namespace, env: dict[str, str]) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", kind, "--folder", str(folder),
               "--runs", str(args.runs), "--steps", str(args.steps)]
    print(f"  {kind} ...", end="", flush=True, file=sys.stderr)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(" failed", file=sys.stderr)
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"worker {kind} failed")
    print(f" {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def ratio(a: Any, b: Any) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "-"


def table(name: str, params: int, results: dict[str, Any], hidden: int) -> str:
    t, c, r = (results[k] for k in ("torch", "mlxir-compile", "mlxir-run"))
    m = results["mlx-lm"] or {
        "load_s": None, "prefill_ms": None, "decode_ms": None, "rss_mb": None,
        "decode_runs": [], "tokens": None,
    }
    layers = 8 if name == "llama" else 28
    lines = [f"{describe(name, hidden)}; {params / 1e6:.0f}M parameters, float32"]
    head = f"{'':34} {'torch':>10} {'mlx-lm':>10} {'mlxir':>10} {'mlxir/mlx-lm':>13} {'mlxir/torch':>12}"
    lines.append(head)
    lines.append("-" * len(head))

    def row(label: str, tv: Any, mv: Any, xv: Any, digits: int = 2, ratios: bool = True) -> None:
        lines.append(
            f"{label:34} {fmt(tv, digits):>10} {fmt(mv, digits):>10} {fmt(xv, digits):>10} "
            f"{ratio(xv, mv) if ratios else '':>13} {ratio(xv, tv) if ratios else '':>12}"
        )

    row("export s", None, None, c["export_s"])
    row("import+lower+serialize s", None, None, c["compile_s"])
    lines.append(
        f"{'  (import / lower / serialize s)':34} {'':>10} {'':>10} "
        f"{c['import_s']:.2f} / {c['lower_s']:.2f} / {c['serialize_s']:.2f}"
    )
    row("aten ops (imported IR)", None, None, c["aten_ops"], ratios=False)
    row("instructions", None, None, r["instructions"], ratios=False)
    row("  per layer (whole program / L)", None, None, r["instructions"] / layers, 1, ratios=False)
    row("program bytes", None, None, c["bytes"], ratios=False)
    row("load s", None, m["load_s"], r["load_s"])
    row(f"prefill ms ({PROMPT} tokens)", t["prefill_ms"], m["prefill_ms"], r["prefill_ms"], 1)
    row("decode ms/token", t["decode_ms"], m["decode_ms"], r["decode_ms"])
    row("peak RSS MB (run)", t["rss_mb"], m["rss_mb"], r["rss_mb"], 0)
    row("peak RSS MB (mlxir compile)", None, None, c["rss_mb"], 0, ratios=False)
    runs = lambda x: ", ".join(f"{v:.2f}" for v in x["decode_runs"])  # noqa: E731
    lines.append(f"decode ms/token per run: torch [{runs(t)}], mlx-lm [{runs(m)}], mlxir [{runs(r)}]")
    compared = [x["tokens"] for x in (t, m, r) if x["tokens"] is not None]
    same = "identical" if all(x == compared[0] for x in compared) else "DIFFERENT"
    agree = sum(a == b for a, b in zip(t["tokens"], r["tokens"]))
    lines.append(f"greedy tokens: {same} across the systems ({agree}/{len(t['tokens'])} mlxir = torch)")
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", default="llama,qwen3")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--qwen3-hidden", type=int, default=1024)
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        result = WORKERS[args.worker](Path(args.folder), args)
        print(json.dumps(result))
        return

    if args.steps < 32:
        raise SystemExit("--steps must be at least 32")
    env, blas = blas_env()
    import importlib.util

    has_mlxlm = importlib.util.find_spec("mlx_lm") is not None
    if not has_mlxlm:
        print("mlx-lm is not installed (pip install mlx-lm): its column stays empty", file=sys.stderr)
    reports = []
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory(prefix=f"mlxir-bench-{name}-") as tmp:
            folder = Path(tmp)
            print(f"{name}: writing random weights to {folder}", file=sys.stderr)
            params = save_weights(name, args.qwen3_hidden, folder)
            results = {
                kind: run_worker(kind, folder, args, env) if kind != "mlx-lm" or has_mlxlm else None
                for kind in WORKERS
            }
        reports.append(table(name, params, results, args.qwen3_hidden))
    import torch

    print(
        f"\nmlxir LLM benchmark: torch {torch.__version__} (eager, CPU, 1 thread), "
        f"MLX {_version('mlx')} CPU (1 thread), mlx-lm {_version('mlx-lm')}; MLX BLAS: {blas}; "
        f"one process per system; prompt {PROMPT} tokens, greedy, {args.steps} decode steps x "
        f"{args.runs} runs (+1 warm-up)\n"
    )
    print("\n\n".join(reports))


def _version(package: str) -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return "not installed"


if __name__ == "__main__":
    main()
