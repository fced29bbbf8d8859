"""LLM generation on MLX: mlxir against eager torch (CPU) and mlx-lm, same weights.

    .venv/bin/python benchmarks/llm.py [--models llama,qwen3] [--runs 3] [--steps 32]
        [--pipelines baseline,default] [--quantize 4,8]

Models (random weights, fixed seed, float32, `attn_implementation="sdpa"`):

- `tiny`: the small Llama, hidden 256, 4 layers, 8 heads / 4 KV heads, FFN 704, vocab
  32000 (a quick run; not in the default `--models`);
- `llama`: hidden 512, 8 layers, 8 heads / 4 KV heads, FFN 1408, vocab 32000 (56M);
- `qwen3`: Qwen3-0.6B's shape, 28 layers, hidden 1024, 16 / 8 heads of 128, FFN 3072,
  vocab 151936, tied embeddings (`--qwen3-hidden` reduces the hidden size if memory
  requires; the table says which was used).

The weights are written once with `save_pretrained` to a temporary folder; every system
loads that folder: transformers (`from_pretrained`), mlxir (export from the same model)
and mlx-lm (`mlx_lm.utils.load_model`). Each system runs in its own process, one after
the other, with one thread (`torch.set_num_threads(BENCH_THREADS or 1)`, `OPENBLAS_NUM_THREADS=1`,
`OMP_NUM_THREADS=1`, `MKL_NUM_THREADS=1`). MLX's own CPU kernels run on one thread per
stream; mlxir spreads its decode products by the weights over several CPU streams
(`MLXIR_CPU_STREAMS`, by default one per usable CPU, `runtime/cpu/streams.py`): the
quantized ones, where mlx-lm calls the same one-thread kernel on one stream, and the
float32 ones, which it cuts into blocks that OpenBLAS multiplies without packing the
weight (docs/blas.md; mlx-lm's are one `sgemm` each, which with more BLAS threads
would use the other cores too: `decode_ab.py --blas-threads 2` measures that). The
header says how many streams; set `MLXIR_CPU_STREAMS=1` for a one-stream run. Both MLX processes (mlxir and mlx-lm) get
the same BLAS: the one `import mlxir` picks (an MKL in the environment, else the
system OpenBLAS; `runtime/cpu/blas.py`) preloaded (`LD_PRELOAD`), else the wheel's
bundled BLAS; the table says which. Torch runs its own MKL (never the preloaded
BLAS, which made it 1.8x slower). `benchmarks/cpu_llm.py` runs these workers at 1 and
2 threads beside llama.cpp.

Before and after in the same run: mlxir is compiled and run once per pipeline of
`--pipelines` (each in its own compile process and run process):

- `default`: mlxir's default pipeline (`lower(module)`, `pipeline=None`: lower-to-mlx
  for this device, `lower-to-mlx{target=cpu}` on MLX's CPU);
- `generic`: `lower-to-mlx` without a device's target passes (on the CPU: `mx.fast.rope`,
  half-precision attention in the operands' dtype);
- `baseline`: the previous release's pass list, `convert-aten-to-mlx, canonicalize,
  fuse-rms-norm, fuse-layer-norm, fold-norm-affine, unrepeat-kv,
  fold-weight-transposes, cse, dce`. It still benefits from this release's serializer
  change that removed the `mlx.weight` instructions (a weight read is its global's
  constant slot), so its instruction counts are lower than the old release's were.

The table has a column per pipeline and, with two or more, the ratio of the last to the
first (default/baseline: < 1 means the default is faster or smaller).

Figures: export s (torch.export of the step program); import+lower+serialize s;
instructions (and the aten-level op count they came from); instructions per decoder
layer (below); program bytes; load s (`mlxir.load` of the `.mlxfb`, timed after `import mlxir`,
`mlxir.tools.llm` and `mlxir.runtime.program`, whose import is timed apart and added
in a second ratio; against `mx.load` of the folder's `.safetensors` in a process of
its own in every round, after `import mlx.core`, with its peak RSS; medians of the
rounds); prefill ms for a
128-token prompt (time to the first token: forward over the prompt, last-position
logits, argmax; median of `--runs`); decode ms/token (greedy, median over `--steps` >=
32 steps of each of `--runs` runs; the median of the runs' medians); peak RSS
(`VmHWM`) of each process (the mlxir compile process holds the torch
model too; the mlxir run process only loads the program; the median over the rounds).

The systems run in turns: `--runs` rounds, in each a fresh process per system (torch,
mlxir per pipeline, mlx-lm, and the quantized ones) with one untimed warm-up run and
one timed run, in an order that rotates from round to round. On a host whose memory
bandwidth drifts from minute to minute, running each system's runs back to back made
its decode row differ by up to 1.3x from an interleaved A/B of the same programs.

Instructions per decoder layer: the same config is built with L and L/2 layers (random
weights; nothing is run), each compiled with `mlxir.tools.llm.compile_llm` per pipeline,
for two programs: the default one (`compile_llm(model)`: `attention_mask=True`, logits
of all positions) and the benchmark's own (`logits="last"`; both with the fixed cache).
The figure is `(count(L) - count(L/2)) / (L/2)` with `count` the program's
`len(program.info.instructions)`: what one more layer costs, without the embedding,
final norm and LM head. One process does all of these compiles.

`--quantize 4[,8]` adds a table: mlxir's default program with its weights quantized
(`mlxir.Quantize(bits, group_size=64, embeddings=True)`: every matmul weight, the LM
head and the embedding) and mlx-lm with its own quantization of the same weights
(`mlx.nn.quantize`, group 64: every Linear and the embedding), each against its float32
run: decode, prefill, program bytes, peak RSS, and quality against float32: greedy
agreement over 64 tokens with its own float32 tokens, and the largest error of the
prompt's last logits against mlxir's float32 logits.

The mlxir program is `mlxir.tools.llm.export_llm(model, logits="last",
cache=--cache)`: one program for prefill and decode with the KV cache as explicit
inputs and outputs; generation keeps the cache as `mx.array`s. With `--cache fixed`
(the default) the cache has a fixed capacity (grown 32 slots at a time) and the decode steps
repeat one input signature, so the program runs them as one `mx.compile`d trace
(built during the untimed warm-up run; on a machine that has never built MLX's CPU
kernels, that warm-up also compiles them, seconds, cached under `/tmp/mlx`). `--cache
growing` is the previous program, whose cache grows by a concatenation every step
(new shapes every step: interpreted). mlx-lm runs its own loop
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
PROMPT = int(os.environ.get("BENCH_PROMPT", "128"))
"""The prompt's tokens: 128, or what `BENCH_PROMPT` says (cpu_llm.py's prefill-512
column runs its workers with 512, each on a program of its own)."""
MAX_SEQ = 512 if PROMPT <= 256 else 1024
QUANT_GROUP = 64
LAYERS = {"tiny": 4, "llama": 8, "qwen3": 28}
PIPELINES: dict[str, str | None] = {
    # The previous release's pass list (before optimize-mlx and its rope/known-dims work).
    "baseline": (
        "convert-aten-to-mlx,canonicalize,fuse-rms-norm,fuse-layer-norm,fold-norm-affine,"
        "unrepeat-kv,fold-weight-transposes,cse,dce"
    ),
    "default": None,  # mlxir's default pipeline (lower-to-mlx for this device)
    "generic": "lower-to-mlx",  # without a device's target passes
    # The default with linear weights stored transposed, [K, N], as before this release.
    "folded": "{default},fold-weight-transposes",
}
INT8_SUFFIX = "-int8"
"""A quantized program named `q<bits>-int8` rounds x to int8 in its products
(`mlxir.Quantize(activation_bits=8)`: approximate, on request)."""


def pipeline_spec(name: str) -> str | None:
    """`PIPELINES[name]`, `{default}` replaced by this device's `lower-to-mlx`."""
    from mlxir.conversions.pipelines import default_pipeline
    from mlxir.runtime.backend import host_target

    spec = PIPELINES[name]
    return spec.format(default=default_pipeline(host_target())) if spec is not None else None


# The step programs whose instructions per layer are counted: compile_llm's default and
# the one this benchmark runs.
PROGRAM_KINDS: dict[str, dict[str, Any]] = {
    "default": {},
    "bench": {"logits": "last", "max_batch": 8, "max_seq": MAX_SEQ, "max_past": MAX_SEQ},
}


# ---------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------


def model_config(name: str, qwen3_hidden: int, layers: int | None = None) -> Any:
    import transformers

    layers = layers or LAYERS[name]
    if name in ("tiny", "llama"):
        hidden, ffn = (256, 704) if name == "tiny" else (512, 1408)
        config = transformers.LlamaConfig(
            vocab_size=32000,
            hidden_size=hidden,
            intermediate_size=ffn,
            num_hidden_layers=layers,
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
            num_hidden_layers=layers,
            num_attention_heads=16,
            num_key_value_heads=8,
            head_dim=128,
            max_position_embeddings=40960,
            tie_word_embeddings=True,
        )
    else:
        raise SystemExit(f"unknown model '{name}' ({', '.join(LAYERS)})")
    config._attn_implementation = "sdpa"
    return config


def describe(name: str, qwen3_hidden: int) -> str:
    if name == "tiny":
        return "Small Llama: hidden 256, 4 layers, 8/4 heads, FFN 704, vocab 32000"
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
    """This process's peak resident set (`VmHWM` of /proc/self/status), in MB."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # no /proc (macOS): bytes there


QUALITY_TOKENS = 64
"""Greedy tokens compared with float32's."""


def save_logits(folder: Path, name: str, logits: Any) -> None:
    """The prompt's last logits (an `mx.array`), kept beside the weights for the driver."""
    import mlx.core as mx
    import numpy as np

    np.save(folder / f"logits-{name}.npy", np.array(logits.astype(mx.float32)))


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

    torch.set_num_threads(int(os.environ.get("BENCH_THREADS", "1")))
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


def program_file(folder: Path, pipeline: str) -> Path:
    """The step program of `pipeline` for this process's prompt length (its cache size
    follows `MAX_SEQ`)."""
    suffix = "" if PROMPT == 128 else f"-p{PROMPT}"
    return folder / f"step-{pipeline}{suffix}.mlxfb"


def worker_mlxir_compile(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    import torch

    from mlxir import lower  # the pipeline of this device when none is named
    from mlxir.codegen import serialize
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.tools import llm

    torch.set_num_threads(1)
    model = load_torch_model(folder)
    exported = llm.export_llm(model, **PROGRAM_KINDS["bench"], cache=args.cache)
    aten_nodes = sum(1 for n in exported.ep.graph.nodes if n.op == "call_function")
    start = time.perf_counter()
    module = import_program(exported.ep)
    imported = time.perf_counter()
    aten_ops = sum(1 for _ in module.walk()) - 1
    lower(module, pipeline_spec(args.pipeline if not args.bits else "default"))
    if args.bits:
        import mlxir
        from mlxir.transforms.quantize import quantize_weights

        quantize = mlxir.Quantize(
            bits=args.bits,
            group_size=QUANT_GROUP,
            embeddings=True,
            activation_bits=8 if args.pipeline.endswith(INT8_SUFFIX) else None,
        )
        quantize_weights(module, quantize)
    lowered = time.perf_counter()
    data = serialize(module)
    serialized = time.perf_counter()
    del module
    program_file(folder, args.pipeline).write_bytes(data)
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

    imported = time.perf_counter()
    import mlxir.runtime.program  # noqa: F401  (timed apart from the load, as load.py does)

    start = time.perf_counter()
    runtime_import_s = start - imported
    program = mlxir.load(program_file(folder, args.pipeline))
    load_s = time.perf_counter() - start
    assert isinstance(program, mlxir.Program)  # an .mlxfb, not a .pte
    compiled = llm.CompiledLLM.from_program(program)
    ids = mx.array([prompt_ids()], dtype=mx.int64)

    def stream() -> Iterator[mx.array]:
        for token, _ in llm.stream_tokens(compiled, ids, max_new_tokens=args.steps + 1):
            yield token[0]

    result = repeat(lambda: timed_stream(stream(), args.steps), args.runs)
    result.update(
        load_s=load_s,
        runtime_import_s=runtime_import_s,
        instructions=len(program.info.instructions),
        rss_mb=peak_rss_mb(),
    )
    quality, logits = [], None
    for token, step_logits in llm.stream_tokens(compiled, ids, max_new_tokens=QUALITY_TOKENS):
        quality.append(int(token[0]))
        logits = step_logits if logits is None else logits
    assert logits is not None
    save_logits(folder, f"mlxir-{args.pipeline}", logits[0])
    result["quality_tokens"] = quality
    return result


def worker_mlxir_layers(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """Instruction counts of the model's config with L and L/2 layers (random weights,
    nothing run): per pipeline of `--pipelines` and program kind, `[count(L),
    count(L/2)]`. Each program is exported once and compiled with every pipeline."""
    import torch
    import transformers

    from mlxir.tools import llm

    torch.set_num_threads(1)
    full = LAYERS[args.model]
    half = full // 2
    pipelines = args.pipelines.split(",")
    counts: dict[str, dict[str, list[int]]] = {p: {k: [] for k in PROGRAM_KINDS} for p in pipelines}
    for layers in (full, half):
        torch.manual_seed(0)
        config = model_config(args.model, args.qwen3_hidden, layers)
        model = transformers.AutoModelForCausalLM.from_config(config).eval()
        for kind, options in PROGRAM_KINDS.items():
            exported = llm.export_llm(model, **options)
            for pipeline in pipelines:
                compiled = llm.compile_llm(exported, pipeline=pipeline_spec(pipeline))
                counts[pipeline][kind].append(len(compiled.program.info.instructions))
                del compiled
            del exported
        del model
    return {"layers": [full, half], "counts": counts, "rss_mb": peak_rss_mb()}


def worker_mlxlm(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    import mlx.core as mx

    # mlx-lm is the benchmark's comparison, installed beside mlxir, not a dependency.
    from mlx_lm.generate import generate_step  # pyright: ignore[reportMissingImports]
    from mlx_lm.utils import load_model  # pyright: ignore[reportMissingImports]

    start = time.perf_counter()
    model, _ = load_model(folder)
    if args.bits:  # mlx-lm's own quantization (`mlx_lm.convert -q`): every Linear and Embedding
        import mlx.nn as nn

        nn.quantize(model, group_size=QUANT_GROUP, bits=args.bits)
        mx.eval(model.parameters())
    load_s = time.perf_counter() - start
    ids = mx.array(prompt_ids())

    def stream() -> Iterator[mx.array]:
        for token, _ in generate_step(ids, model, max_tokens=args.steps + 1):
            yield token

    result = repeat(lambda: timed_stream(stream(), args.steps), args.runs)
    result.update(load_s=load_s, rss_mb=peak_rss_mb())
    result["quality_tokens"] = [int(t) for t, _ in generate_step(ids, model, max_tokens=QUALITY_TOKENS)]
    save_logits(folder, f"mlx-lm-q{args.bits}" if args.bits else "mlx-lm", model(ids[None])[0, -1])
    return result


def worker_mx_load(folder: Path, args: argparse.Namespace) -> dict[str, Any]:
    """MLX's own loader on the same weights (the folder's `.safetensors`), evaluated:
    the floor a load of the program's weights is measured against."""
    import mlx.core as mx

    start = time.perf_counter()
    arrays: dict[str, mx.array] = {}
    for path in sorted(folder.glob("*.safetensors")):
        loaded = mx.load(str(path))
        assert isinstance(loaded, dict)  # a .safetensors file: its named arrays
        arrays.update(loaded)
    mx.eval(list(arrays.values()))
    load_s = time.perf_counter() - start
    return {"load_s": load_s, "rss_mb": peak_rss_mb(), "bytes": sum(a.nbytes for a in arrays.values())}


WORKERS = {
    "mx-load": worker_mx_load,
    "torch": worker_torch,
    "mlxir-compile": worker_mlxir_compile,
    "mlxir-run": worker_mlxir_run,
    "mlxir-layers": worker_mlxir_layers,
    "mlx-lm": worker_mlxlm,
}


# ---------------------------------------------------------------------------
# Driver
# ---------------------------------------------------------------------------


def write_bytecode() -> None:
    """Writes mlxir's bytecode before anything is timed, as `pip install` does for an
    installed package: where `PYTHONDONTWRITEBYTECODE` is set (the development machine
    sets it) an editable checkout's edited modules are otherwise compiled again in
    every process, about 40 ms of a timed `import mlxir.runtime.program`."""
    import compileall
    import re

    import mlxir

    root = Path(mlxir.__file__).resolve().parent
    compileall.compile_dir(str(root), quiet=1, rx=re.compile(r"/(\.venv|tests|benchmarks|build)/"))


def mlx_blas() -> str | None:
    """The BLAS `import mlxir` puts under MLX on this machine (`runtime/cpu/blas.py`:
    an MKL in this environment, else the system OpenBLAS), preloaded into both MLX
    processes (mlxir's and mlx-lm's) so that they multiply with the same library
    whichever imports `mlx.core` first."""
    from mlxir.runtime.cpu.blas import candidates

    found = candidates()
    return found[0] if found else None


def blas_env(threads: int = 1) -> tuple[dict[str, str], str]:
    """The environment of a benchmark process: `threads` BLAS threads (and torch's
    OpenMP), `mlx_blas()` preloaded where there is one; and its description."""
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)
    counted = f"{threads} thread{'s' if threads > 1 else ''}"
    library = mlx_blas()
    if library is not None:
        family = "MKL" if "mkl" in Path(library).name else "OpenBLAS"
        if family == "MKL":  # what `import mlxir` sets for an MKL it loads (docs/blas.md); preloaded, it is read first
            env.setdefault("KMP_BLOCKTIME", "0")
        return {**env, "LD_PRELOAD": library}, f"{family} ({library}, preloaded, {counted})"
    return env, f"the MLX wheel's bundled BLAS (no OpenBLAS or MKL found), {counted}"


def run_worker(
    kind: str, folder: Path, args: argparse.Namespace, env: dict[str, str], pipeline: str = "default",
    bits: int = 0, runs: int | None = None,
) -> dict[str, Any]:
    command = [sys.executable, __file__, "--worker", kind, "--folder", str(folder),
               "--runs", str(runs or args.runs), "--steps", str(args.steps), "--model", args.model,
               "--qwen3-hidden", str(args.qwen3_hidden), "--pipeline", pipeline,
               "--pipelines", args.pipelines, "--bits", str(bits), "--cache", args.cache]
    label = f"{kind} ({pipeline})" if kind.startswith("mlxir-") and kind != "mlxir-layers" else kind
    label += f" {bits}-bit" if bits and not kind.startswith("mlxir-") else ""
    if kind == "torch":  # torch runs its own MKL: an OpenBLAS preloaded under it made it 1.8x slower
        env = {name: value for name, value in env.items() if name != "LD_PRELOAD"}
    print(f"  {label} ...", end="", flush=True, file=sys.stderr)
    start = time.perf_counter()
    done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        print(" failed", file=sys.stderr)
        sys.stderr.write(done.stderr[-4000:])
        raise SystemExit(f"worker {label} failed")
    print(f" {time.perf_counter() - start:.0f} s", file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def in_turns(
    systems: dict[str, tuple[str, str, int]], folder: Path, args: argparse.Namespace, env: dict[str, str]
) -> dict[str, dict[str, Any]]:
    """Each system (name -> worker kind, pipeline, bits) run `args.runs` times, one
    timed run per process, the order rotated each round; per system, the rounds merged:
    every round's decode median (the figure is their median), the median prefill, load
    and peak RSS, and the first round's tokens and quality."""
    names = list(systems)
    rounds: dict[str, list[dict[str, Any]]] = {name: [] for name in names}
    for index in range(args.runs):
        print(f" round {index + 1} of {args.runs}", file=sys.stderr)
        for name in names[index % len(names) :] + names[: index % len(names)]:
            kind, pipeline, bits = systems[name]
            rounds[name].append(run_worker(kind, folder, args, env, pipeline, bits, runs=1))
    merged = {}
    for name, results in rounds.items():
        result = dict(results[0])
        for key in ("prefill_ms", "load_s", "runtime_import_s", "rss_mb"):
            if result.get(key) is not None:
                result[key] = statistics.median(r[key] for r in results)
        if "decode_runs" in result:  # not for mx.load
            result["decode_runs"] = [m for r in results for m in r["decode_runs"]]
            result["decode_ms"] = statistics.median(result["decode_runs"])
        merged[name] = result
    return merged


def fmt(value: Any, digits: int = 2) -> str:
    if value is None:
        return "-"
    if isinstance(value, int):
        return f"{value:,}"
    return f"{value:.{digits}f}"


def ratio(a: Any, b: Any) -> str:
    return f"{a / b:.2f}x" if a is not None and b else "-"


def per_layer(counts: list[int], layers: list[int]) -> float:
    """`(count(L) - count(L/2)) / (L - L/2)`: the instructions of one decoder layer."""
    (full, half), (n_full, n_half) = counts, layers
    return (full - half) / (n_full - n_half)


def table(name: str, params: int, results: dict[str, Any], pipelines: list[str], hidden: int) -> str:
    t, layers_result = results["torch"], results["mlxir-layers"]
    c = {p: results[f"mlxir-compile:{p}"] for p in pipelines}
    r = {p: results[f"mlxir-run:{p}"] for p in pipelines}
    m = results["mlx-lm"] or {
        "load_s": None, "prefill_ms": None, "decode_ms": None, "rss_mb": None,
        "decode_runs": [], "tokens": None,
    }
    first, last = pipelines[0], pipelines[-1]
    layers = LAYERS[name]
    lines = [f"{describe(name, hidden)}; {params / 1e6:.0f}M parameters, float32"]
    widths = {p: max(10, len(f"mlxir {p}")) for p in pipelines}
    versus = f"{last}/{first}" if len(pipelines) > 1 else ""
    head = (
        f"{'':38} {'torch':>10} {'mlx-lm':>10} "
        + " ".join(f"{'mlxir ' + p:>{widths[p]}}" for p in pipelines)
        + (f" {versus:>{max(10, len(versus))}}" if versus else "")
        + f" {last + '/mlx-lm':>{max(10, len(last) + 7)}} {last + '/torch':>{max(10, len(last) + 6)}}"
    )
    lines.append(head)
    lines.append("-" * len(head))

    def row(
        label: str, tv: Any, mv: Any, xs: dict[str, Any], digits: int = 2,
        ratios: bool = True, between: bool = True,
    ) -> None:
        xv = xs[last]
        lines.append(
            f"{label:38} {fmt(tv, digits):>10} {fmt(mv, digits):>10} "
            + " ".join(f"{fmt(xs[p], digits):>{widths[p]}}" for p in pipelines)
            + (f" {ratio(xv, xs[first]) if between else '':>{max(10, len(versus))}}" if versus else "")
            + f" {ratio(xv, mv) if ratios else '':>{max(10, len(last) + 7)}}"
            + f" {ratio(xv, tv) if ratios else '':>{max(10, len(last) + 6)}}"
        )

    def each(results: dict[str, dict[str, Any]], key: str) -> dict[str, Any]:
        return {p: results[p][key] for p in pipelines}

    row("export s", None, None, each(c, "export_s"), between=False)
    row("import+lower+serialize s", None, None, each(c, "compile_s"))
    steps = ", ".join(
        f"{p} {c[p]['import_s']:.2f} / {c[p]['lower_s']:.2f} / {c[p]['serialize_s']:.2f}" for p in pipelines
    )
    lines.append(f"{'  (import / lower / serialize s)':38} {steps}")
    row("aten ops (imported IR)", None, None, each(c, "aten_ops"), ratios=False, between=False)
    row("instructions", None, None, each(r, "instructions"), ratios=False)
    counts, sizes = layers_result["counts"], layers_result["layers"]
    for kind, label in (("bench", "  per layer, this program"), ("default", "  per layer, compile_llm default")):
        xs = {p: per_layer(counts[p][kind], sizes) for p in pipelines}
        row(label, None, None, xs, 1, ratios=False)
    row("  whole program / L", None, None, {p: r[p]["instructions"] / layers for p in pipelines}, 1,
        ratios=False)
    row("program bytes", None, None, each(c, "bytes"), ratios=False)
    row("load s", None, m["load_s"], each(r, "load_s"))
    floor = results["mx-load"]
    lines.append(
        f"{'  mx.load of the .safetensors':38} {floor['load_s']:.2f} s, peak RSS {floor['rss_mb']:.0f} MB "
        f"({floor['bytes'] / 1e6:.0f} MB of weights); mlxir load / mx.load: "
        + ", ".join(
            f"{p} {r[p]['load_s'] / floor['load_s']:.2f}x s "
            f"({(r[p]['load_s'] + r[p]['runtime_import_s']) / floor['load_s']:.2f}x with the "
            f"runtime import, {r[p]['runtime_import_s']:.3f} s), {r[p]['rss_mb'] / floor['rss_mb']:.2f}x RSS"
            for p in pipelines
        )
    )
    row(f"prefill ms ({PROMPT} tokens)", t["prefill_ms"], m["prefill_ms"], each(r, "prefill_ms"), 1)
    row("decode ms/token", t["decode_ms"], m["decode_ms"], each(r, "decode_ms"))
    row("peak RSS MB (run)", t["rss_mb"], m["rss_mb"], each(r, "rss_mb"), 0)
    row("peak RSS MB (mlxir compile)", None, None, each(c, "rss_mb"), 0, ratios=False)
    runs = lambda x: ", ".join(f"{v:.2f}" for v in x["decode_runs"])  # noqa: E731
    lines.append(
        f"decode ms/token per run: torch [{runs(t)}], mlx-lm [{runs(m)}], "
        + ", ".join(f"mlxir {p} [{runs(r[p])}]" for p in pipelines)
    )
    compared = [x["tokens"] for x in (t, m, *r.values()) if x["tokens"] is not None]
    same = "identical" if all(x == compared[0] for x in compared) else "DIFFERENT"
    agree = ", ".join(
        f"{sum(a == b for a, b in zip(t['tokens'], r[p]['tokens']))}/{len(t['tokens'])} mlxir {p} = torch"
        for p in pipelines
    )
    lines.append(f"greedy tokens: {same} across the systems ({agree})")
    full, half = sizes
    lines.append(
        f"per layer = (count(L) - count(L/2)) / (L/2), the config with L = {full} and {half} layers "
        f"(random weights); this program: logits last; compile_llm default: "
        f"attention_mask=True, all logits. Counts (L / L/2):"
    )
    for kind, label in (("bench", "this program"), ("default", "compile_llm default")):
        lines.append(
            f"  {label}: "
            + ", ".join(f"{p} {counts[p][kind][0]:,} / {counts[p][kind][1]:,}" for p in pipelines)
        )
    if "baseline" in pipelines:
        lines.append(
            "baseline = the previous release's pass list; it still benefits from this release's "
            "serializer change that removed the mlx.weight instructions, so its counts are lower "
            "than the old release's."
        )
    return "\n".join(lines)


def quantized_table(results: dict[str, Any], bits_list: list[int], folder: Path) -> str:
    """mlxir's and mlx-lm's own quantization of the same weights against their float32
    programs: speed, size, memory, greedy agreement with their own float32 tokens and
    the prompt's logits against mlxir's float32 ones."""
    import numpy as np

    def logits(name: str) -> Any:
        path = folder / f"logits-{name}.npy"
        return np.load(path) if path.exists() else None

    reference_logits = logits("mlxir-default")
    logit_scale = float(np.abs(reference_logits).max()) if reference_logits is not None else None
    logit_errors: dict[str, float] = {}
    for bits in bits_list:
        for system, name in (("mlxir", f"mlxir-q{bits}"), ("mlx-lm", f"mlx-lm-q{bits}")):
            found = logits(name)
            if found is not None and reference_logits is not None:
                logit_errors[f"{system} {bits}-bit"] = float(np.abs(found - reference_logits).max())
    empty = {"prefill_ms": None, "decode_ms": None, "rss_mb": None, "tokens": None, "decode_runs": []}
    columns: dict[str, tuple[dict[str, Any], dict[str, Any] | None]] = {
        "mlxir f32": (results["mlxir-run:default"], results["mlxir-compile:default"]),
        "mlx-lm f32": (results["mlx-lm"] or empty, None),
    }
    for bits in bits_list:
        columns[f"mlxir {bits}-bit"] = (results[f"mlxir-run:q{bits}"], results[f"mlxir-compile:q{bits}"])
        columns[f"mlx-lm {bits}-bit"] = (results[f"mlx-lm:q{bits}"] or empty, None)
    names = list(columns)
    lines = [
        f"Quantized (group {QUANT_GROUP}, affine; mlxir: Quantize(embeddings=True), every matmul "
        "weight, the LM head and the embedding; mlx-lm: nn.quantize, every Linear and the embedding)",
        f"{'':30}" + "".join(f"{n:>15}" for n in names),
    ]
    lines.append("-" * len(lines[-1]))

    def row(label: str, values: list[Any], digits: int = 2) -> None:
        lines.append(f"{label:30}" + "".join(f"{fmt(v, digits):>15}" for v in values))

    row("decode ms/token", [run["decode_ms"] for run, _ in columns.values()])
    row(f"prefill ms ({PROMPT} tokens)", [run["prefill_ms"] for run, _ in columns.values()], 1)
    row("program bytes", [compiled["bytes"] if compiled else None for _, compiled in columns.values()], 0)
    row("peak RSS MB (run)", [run["rss_mb"] for run, _ in columns.values()], 0)
    for bits in bits_list:
        for system, float_name in (("mlxir", "mlxir f32"), ("mlx-lm", "mlx-lm f32")):
            quantized, reference = columns[f"{system} {bits}-bit"][0], columns[float_name][0]
            if not quantized.get("quality_tokens") or not reference.get("quality_tokens"):
                continue
            same = sum(a == b for a, b in zip(quantized["quality_tokens"], reference["quality_tokens"]))
            error = logit_errors.get(f"{system} {bits}-bit")
            lines.append(
                f"quality, {system} {bits}-bit against {system} f32: greedy tokens "
                f"{same}/{len(reference['quality_tokens'])} equal; prompt logits max error "
                f"{fmt(error, 4)} (against mlxir f32; largest |logit| {fmt(logit_scale, 2)})"
            )
        mlxir_q, mlxlm_q = columns[f"mlxir {bits}-bit"][0], columns[f"mlx-lm {bits}-bit"][0]
        f32 = columns["mlxir f32"]
        lines.append(
            f"{bits}-bit: mlxir/mlx-lm decode {ratio(mlxir_q['decode_ms'], mlxlm_q['decode_ms'])}, "
            f"mlxir program bytes {ratio(columns[f'mlxir {bits}-bit'][1]['bytes'], f32[1]['bytes'])} "  # type: ignore[index]
            f"of f32, peak RSS {ratio(mlxir_q['rss_mb'], f32[0]['rss_mb'])} of f32"
        )
    return "\n".join(lines)


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--models", default="llama,qwen3", help=f"comma-separated: {', '.join(LAYERS)}")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--qwen3-hidden", type=int, default=1024)
    parser.add_argument(
        "--pipelines", default="baseline,default",
        help=f"comma-separated, before to after: {', '.join(PIPELINES)}",
    )
    parser.add_argument(
        "--quantize", default="",
        help="comma-separated bits (e.g. 4,8): also run mlxir's and mlx-lm's own quantization "
        f"(group {QUANT_GROUP}) of the same weights",
    )
    parser.add_argument(
        "--cache", choices=["fixed", "growing"], default="fixed",
        help="the mlxir program's KV cache (default fixed: decode runs compiled)",
    )
    parser.add_argument("--bits", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--worker", choices=sorted(WORKERS), help=argparse.SUPPRESS)
    parser.add_argument("--folder", help=argparse.SUPPRESS)
    parser.add_argument("--model", default="llama", help=argparse.SUPPRESS)
    parser.add_argument("--pipeline", default="default", help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.worker:
        result = WORKERS[args.worker](Path(args.folder), args)
        print(json.dumps(result))
        return

    if args.steps < 32:
        raise SystemExit("--steps must be at least 32")
    models = args.models.split(",")
    pipelines = args.pipelines.split(",")
    for name in models:
        if name not in LAYERS:
            raise SystemExit(f"unknown model '{name}' ({', '.join(LAYERS)})")
    for pipeline in pipelines:
        if pipeline not in PIPELINES:
            raise SystemExit(f"unknown pipeline '{pipeline}' ({', '.join(PIPELINES)})")
    if len(set(pipelines)) != len(pipelines):
        raise SystemExit("--pipelines names a pipeline twice")
    quantized_bits = [int(b) for b in args.quantize.split(",") if b]
    if "default" not in pipelines and quantized_bits:
        raise SystemExit("--quantize compares with the default pipeline: keep it in --pipelines")
    env, blas = blas_env()
    write_bytecode()
    import importlib.util

    has_mlxlm = importlib.util.find_spec("mlx_lm") is not None
    if not has_mlxlm:
        print("mlx-lm is not installed (pip install mlx-lm): its column stays empty", file=sys.stderr)
    reports = []
    for name in models:
        args.model = name
        with tempfile.TemporaryDirectory(prefix=f"mlxir-bench-{name}-") as tmp:
            folder = Path(tmp)
            print(f"{name}: writing random weights to {folder}", file=sys.stderr)
            params = save_weights(name, args.qwen3_hidden, folder)
            results: dict[str, Any] = {}
            systems: dict[str, tuple[str, str, int]] = {
                "torch": ("torch", "default", 0),
                "mx-load": ("mx-load", "default", 0),
            }
            for pipeline in pipelines:
                results[f"mlxir-compile:{pipeline}"] = run_worker("mlxir-compile", folder, args, env, pipeline)
                systems[f"mlxir-run:{pipeline}"] = ("mlxir-run", pipeline, 0)
            results["mlxir-layers"] = run_worker("mlxir-layers", folder, args, env)
            results["mlx-lm"] = None
            if has_mlxlm:
                systems["mlx-lm"] = ("mlx-lm", "default", 0)
            for bits in quantized_bits:
                results[f"mlxir-compile:q{bits}"] = run_worker("mlxir-compile", folder, args, env, f"q{bits}", bits)
                systems[f"mlxir-run:q{bits}"] = ("mlxir-run", f"q{bits}", bits)
                results[f"mlx-lm:q{bits}"] = None
                if has_mlxlm:
                    systems[f"mlx-lm:q{bits}"] = ("mlx-lm", "default", bits)
            results.update(in_turns(systems, folder, args, env))
            report = table(name, params, results, pipelines, args.qwen3_hidden)
            if quantized_bits:
                report += "\n\n" + quantized_table(results, quantized_bits, folder)
        reports.append(report)
    import torch

    from mlxir.runtime.cpu.streams import configured_count

    print(
        f"\nmlxir LLM benchmark: torch {torch.__version__} (eager, CPU, 1 thread), "
        f"MLX {_version('mlx')} CPU (1 BLAS thread; mlxir's decode products by the weights on "
        f"{configured_count()} CPU streams), mlx-lm {_version('mlx-lm')}; MLX BLAS: {blas}; "
        f"one process per system (mlxir: a compile and a run process per pipeline: "
        f"{', '.join(f'{p} = ' + (pipeline_spec(p) or 'the default') for p in pipelines)}); "
        f"prompt {PROMPT} tokens, greedy, {args.steps} decode steps; {args.runs} rounds, "
        f"the systems in turns, one process each per round (+1 warm-up run each)\n"
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
