"""Decode ms/token of two pipelines' programs, compiled from one export and run in
turns in one process: an A/B of the optimizer without process-to-process noise.

    .venv/bin/python benchmarks/decode_ab.py [--model tiny] [--vocab 32000] [--rounds 10]
        [--steps 20] [--pipelines baseline,default] [--caches growing,fixed]
        [--quantize 4] [--mlx-lm]

The model is `benchmarks/llm.py`'s (`tiny`: the small Llama, hidden 256, 4 layers;
`llama`: the 56M one; `qwen3`: Qwen3-0.6B's shape, `--qwen3-hidden` as in `llm.py`),
random weights, float32, with `--vocab` overriding its
vocabulary (the LM head's product dominates a small model's step at vocab 32000). One
`mlxir.tools.llm.export_llm(model, attention_mask=False, logits="last")` export is
lowered by each pipeline of `llm.py`'s table and serialized. With `--caches`, one
export per cache kind instead (`export_llm(model, logits="last", cache=kind)`, with the
attention mask), each lowered by each pipeline: `growing` programs run interpreted
(their shapes change every step), `fixed` ones compiled (`compile="auto"`; the untimed
warm-up round builds the traces, and on a machine's first run MLX's CPU kernels, with
them). Each round runs every
program (in an order that alternates between rounds) on the same 128-token prompt for
`--steps` greedy decode steps and keeps the median step; the figure is the median of
the rounds' medians. `--quantize BITS` adds each program with its weights quantized
(`mlxir.Quantize(BITS, group_size=64, embeddings=True)`, as `llm.py --quantize`);
`--mlx-lm` adds mlx-lm on the same weights (`save_pretrained` to a temporary folder,
`mlx_lm.utils.load_model`; with `--quantize`, also `mlx.nn.quantize`d, group 64),
timed the same way in the same rounds: machines whose memory bandwidth drifts from
minute to minute (shared hosts) then still give a fair ratio. One BLAS thread
(`--blas-threads N` for more; mlxir's decode products spread over the CPU streams, as
`llm.py` says; set `MLXIR_CPU_STREAMS=1` to compare one stream with one); the system
OpenBLAS is preloaded as `llm.py` does (the process re-executes itself to set
`LD_PRELOAD` and the thread count). A benchmark, not a test.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import llm as bench  # noqa: E402  (benchmarks/llm.py)


def compiled_programs(args: argparse.Namespace) -> dict[str, Any]:
    import torch
    import transformers

    import mlxir
    from mlxir import lower  # the pipeline of this device when none is named
    from mlxir.codegen import serialize
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.tools import llm

    torch.set_num_threads(1)
    torch.manual_seed(0)
    config = bench.model_config(args.model, args.qwen3_hidden)
    config.vocab_size = args.vocab
    model = transformers.AutoModelForCausalLM.from_config(config).eval()
    exports = (
        {kind: llm.export_llm(model, logits="last", cache=kind) for kind in args.caches.split(",")}
        if args.caches
        else {"": llm.export_llm(model, attention_mask=False, logits="last")}
    )
    programs = {}
    for kind, exported in exports.items():
        for name in args.pipelines.split(","):
            module = import_program(exported.ep)
            start = time.perf_counter()
            lower(module, bench.pipeline_spec(name))
            label = f"{name}/{kind}" if kind else name
            print(f"{label}: lowered in {time.perf_counter() - start:.2f} s", flush=True)
            program = mlxir.Program(serialize(module))
            programs[label] = llm.CompiledLLM.from_program(program)
            if args.quantize:
                from mlxir.transforms.quantize import quantize_weights

                quantize_weights(module, mlxir.Quantize(bits=args.quantize, group_size=64, embeddings=True))
                quantized = mlxir.Program(serialize(module))
                programs[f"{label}/q{args.quantize}"] = llm.CompiledLLM.from_program(quantized)
    if args.mlx_lm:
        programs.update(mlx_lm_models(model, args))
    return programs


class MlxLm:
    """An mlx-lm model, decoded by `mlx_lm.generate.generate_step`."""

    def __init__(self, model: Any):
        self.model = model


def mlx_lm_models(model: Any, args: argparse.Namespace) -> dict[str, Any]:
    import tempfile

    import mlx.core as mx
    import mlx.nn as nn

    # mlx-lm is a comparison installed beside mlxir, not a dependency.
    from mlx_lm.utils import load_model  # pyright: ignore[reportMissingImports]

    models: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="mlxir-ab-") as folder:
        model.save_pretrained(folder)
        models["mlx-lm"] = MlxLm(load_model(Path(folder))[0])
        if args.quantize:
            quantized, _ = load_model(Path(folder))
            nn.quantize(quantized, group_size=64, bits=args.quantize)
            mx.eval(quantized.parameters())
            models[f"mlx-lm/q{args.quantize}"] = MlxLm(quantized)
    return models


def decode_median(compiled: Any, steps: int, vocab: int) -> float:
    import mlx.core as mx

    from mlxir.tools import llm

    # Ids inside the vocabulary: MLX's gather does not check its indices, so mlx-lm's
    # embedding would read past its table (a segfault at --vocab 512).
    prompt = [(7 * i) % (min(1000, vocab) - 1) + 1 for i in range(128)]
    if isinstance(compiled, MlxLm):
        from mlx_lm.generate import generate_step  # pyright: ignore[reportMissingImports]

        tokens: Any = (t for t, _ in generate_step(mx.array(prompt), compiled.model, max_tokens=steps + 1))
    else:
        ids = mx.array([prompt], dtype=mx.int64)
        tokens = (t for t, _ in llm.stream_tokens(compiled, ids, max_new_tokens=steps + 1))
    times: list[float] = []
    last = time.perf_counter()
    for token in tokens:
        if isinstance(token, mx.array):  # mlx-lm yields ints, already evaluated
            mx.eval(token)
        now = time.perf_counter()
        times.append(now - last)
        last = now
    return statistics.median(times[1:]) * 1e3  # times[0] is the prefill


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--model", default="tiny", choices=["tiny", "llama", "qwen3"])
    parser.add_argument("--qwen3-hidden", type=int, default=1024)
    parser.add_argument("--vocab", type=int, default=32000)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--pipelines", default="baseline,default")
    parser.add_argument("--caches", default="", help="e.g. growing,fixed (see above)")
    parser.add_argument("--quantize", type=int, default=0, help="bits: also the quantized programs")
    parser.add_argument("--mlx-lm", action="store_true", help="also mlx-lm on the same weights")
    parser.add_argument("--blas-threads", type=int, default=1, help="BLAS threads (default 1)")
    args = parser.parse_args()
    env, blas = bench.blas_env(args.blas_threads)
    if any(os.environ.get(k) != env.get(k) for k in ("LD_PRELOAD", "OPENBLAS_NUM_THREADS")):
        os.execve(sys.executable, [sys.executable, *sys.argv], env)
    programs = compiled_programs(args)
    names = list(programs)
    for name in names:  # untimed warm-up: traces (and MLX's CPU kernels) are built here
        decode_median(programs[name], args.steps, args.vocab)
    rounds: dict[str, list[float]] = {name: [] for name in names}
    for index in range(args.rounds):
        for name in names if index % 2 == 0 else reversed(names):
            rounds[name].append(decode_median(programs[name], args.steps, args.vocab))
    print(f"\n{args.model}, vocab {args.vocab}; {blas}; {args.rounds} rounds x {args.steps} steps")
    first = statistics.median(rounds[names[0]])
    for name in names:
        median = statistics.median(rounds[name])
        per_round = ", ".join(f"{t:.2f}" for t in rounds[name])
        print(f"{name:16s} {median:7.2f} ms/token ({median / first:.2f}x {names[0]})  rounds: {per_round}")


if __name__ == "__main__":
    main()
