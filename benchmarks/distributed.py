"""One program over 2 ranks (`shard-tensor-parallel`) against 1 rank, on this machine.

    .venv/bin/python benchmarks/distributed.py [--model llama] [--rounds 3] [--steps 32]

The model is `benchmarks/llm.py`'s (random weights, seed 0, float32): `llama` (56M:
hidden 512, 8 layers, 8/4 heads, FFN 1408, vocab 32000, untied) or `qwen3`
(Qwen3-0.6B-shaped, tied embeddings). Its step program (`export_llm(attention_mask=
False)`: one unpadded prompt, the program `mlxir generate` runs) is compiled three
ways: whole; split over 2 ranks as `shard-tensor-parallel{ranks=2}` splits it (the
default: the embedding and the LM head by vocabulary too); and split with the LM head
whole (`head=false`), the alternative the default was chosen against. The report:

- **weights per rank**: the bytes each rank reads from the program (its slices and
  the replicated weights), against the whole model's; and the MLX memory each rank
  holds after loading (`mx.get_active_memory()`), and its peak RSS (`VmHWM`);
- **collectives**: one `mlx.all_sum` of a decode step's [1, 1, hidden] float32 (what
  each pair adds, two per layer), and the LM head's `all_gather` of [1, 1, vocab/2];
  the median of 200 calls, each evaluated alone, between 2 ranks on 127.0.0.1;
- **decode and prefill**: a 128-token prompt's time to the first token and the median
  ms per token of `--steps` greedy steps; at equal threads: 1 rank with
  `MLXIR_CPU_STREAMS=T` and T BLAS threads (T = 1, 2), 2 ranks with 1 each (2 threads
  in all). Every run is a fresh process (2 for the ranks); the configurations
  alternate in `--rounds` rounds, the order rotated each round; medians with min and
  max over the rounds, and the load average before and after.

On this 2-core machine no speed-up is expected: the ranks share the 2 cores a single
rank would use, and add the collectives (docs/distributed.md says what N machines
would give). A benchmark, not a test: nothing asserts a time."""

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

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import llm  # noqa: E402  (benchmarks/llm.py: the model and the BLAS environment)

PROMPT = llm.PROMPT
SPLIT_PIPELINE = "{default},shard-tensor-parallel{{ranks=2 head={head}}}"
PROGRAMS = ("whole", "split, head whole", "split")


def _vmhwm_mb() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


# ---------------------------------------------------------------------------
# Workers (one process each; a rank is one process)
# ---------------------------------------------------------------------------


def worker_run(program: Path, steps: int, out: Path) -> None:
    """Loads `program` (as this rank), times a prompt and `steps` greedy steps."""
    import mlxir  # noqa: I001  (before mlx.core: it arms the BLAS choice)
    import mlx.core as mx
    import numpy as np

    from mlxir.runtime.program import Program
    from mlxir.tools import llm as mlxir_llm

    rank = mx.distributed.init().rank()
    loaded = mlxir.load(program)  # from the path: the rank reads only its own slices
    assert isinstance(loaded, Program)
    compiled = mlxir_llm.CompiledLLM.from_program(loaded)
    held = mx.get_active_memory()
    ids = np.array([llm.prompt_ids()[:PROMPT]], dtype=np.int64)
    mlxir_llm.generate(compiled, ids, max_new_tokens=4)  # warm: traces, kernels
    times: list[float] = []
    start = time.perf_counter()
    mlxir_llm.generate(compiled, ids, max_new_tokens=steps, on_token=lambda _: times.append(time.perf_counter()))
    steps_ms = [1e3 * (b - a) for a, b in zip([start, *times], times)]
    result = {
        "rank": rank,
        "prefill_ms": steps_ms[0],
        "decode_ms": statistics.median(steps_ms[1:]),
        "held_mb": held / 2**20,
        "vmhwm_mb": _vmhwm_mb(),
    }
    (out.parent / f"{out.stem}.rank{rank}.json").write_text(json.dumps(result))


def worker_collectives(hidden: int, vocab: int, out: Path) -> None:
    import mlx.core as mx  # noqa: I001

    import mlxir  # noqa: F401  (before mlx.core)

    group = mx.distributed.init()
    timings: dict[str, float] = {}
    for name, shape, gather in (("all_sum", (1, 1, hidden), False), ("all_gather", (vocab // 2,), True)):
        x = mx.ones(shape)
        mx.eval(x)
        samples: list[float] = []
        for _ in range(200):
            start = time.perf_counter()
            y = mx.distributed.all_gather(x, group=group) if gather else mx.distributed.all_sum(x, group=group)
            mx.eval(y)
            samples.append(1e6 * (time.perf_counter() - start))
        timings[name] = statistics.median(samples[20:])
    if group.rank() == 0:
        out.write_text(json.dumps(timings))


# ---------------------------------------------------------------------------
# The driver
# ---------------------------------------------------------------------------


def compile_programs(model: str, folder: Path) -> dict[str, Path]:
    import mlxir
    from mlxir.conversions.pipelines import default_pipeline
    from mlxir.runtime.backend import host_target
    from mlxir.tools import llm as mlxir_llm

    hf_model = llm.load_torch_model(folder)
    exported = mlxir_llm.export_llm(hf_model, attention_mask=False)
    default = default_pipeline(host_target())
    pipelines = {
        "whole": None,
        "split, head whole": SPLIT_PIPELINE.format(default=default, head="false"),
        "split": SPLIT_PIPELINE.format(default=default, head="true"),
    }
    paths: dict[str, Path] = {}
    for name, pipeline in pipelines.items():
        parts, _ = mlxir.compiled_parts(exported.ep, pipeline)
        paths[name] = folder / f"{model}.{name.replace(', ', '-').replace(' ', '-')}.mlxfb"
        paths[name].write_bytes(bytes(parts))
    return paths


def weight_bytes(path: Path) -> tuple[int, int]:
    """(bytes one rank reads, bytes of the whole model) of a program."""
    from mlxir.codegen.reader import read_program

    info = read_program(path.read_bytes())
    whole = sum(g.length for g in info.globals)
    mine = max(sum(g.length for g in info.for_rank(r).globals) for r in range(info.ranks))
    return mine, whole


def run_config(program: Path, ranks: int, threads: int, steps: int, scratch: Path, index: int) -> dict[str, Any]:
    from mlxir.tools.launch import launch

    env, _ = llm.blas_env(threads)
    env["MLXIR_CPU_STREAMS"] = str(threads)
    out = scratch / f"run{index}.json"
    command = [sys.executable, __file__, "--worker", "run", "--program", str(program), "--steps", str(steps), "--out", str(out)]
    if ranks == 1:
        subprocess.run(command, env=env, check=True, capture_output=True)
    elif launch(command, ranks, timeout=600, env=env) != 0:
        raise SystemExit(f"{program.name} on {ranks} ranks failed")
    results = [json.loads((scratch / f"run{index}.rank{r}.json").read_text()) for r in range(ranks)]
    rank0 = results[0]
    return {**rank0, "held_mb": [r["held_mb"] for r in results], "vmhwm_mb": [r["vmhwm_mb"] for r in results]}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--worker", choices=["run", "collectives"])
    parser.add_argument("--program", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--model", default="llama", choices=["llama", "qwen3"])
    parser.add_argument("--qwen3-hidden", type=int, default=1024)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=32)
    parser.add_argument("--hidden", type=int, default=512)
    parser.add_argument("--vocab", type=int, default=32000)
    args = parser.parse_args()
    if args.worker == "run":
        return worker_run(args.program, args.steps, args.out)
    if args.worker == "collectives":
        return worker_collectives(args.hidden, args.vocab, args.out)

    from mlxir.tools.launch import launch

    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="mlxir-distributed-") as tmp:
        scratch = Path(tmp)
        llm.save_weights(args.model, args.qwen3_hidden, scratch)
        config = llm.model_config(args.model, args.qwen3_hidden)
        print(f"compiling {args.model} whole and split ...", file=sys.stderr, flush=True)
        programs = compile_programs(args.model, scratch)
        env, blas = llm.blas_env(1)
        collectives_out = scratch / "collectives.json"
        command = [sys.executable, __file__, "--worker", "collectives", "--hidden", str(config.hidden_size),
                   "--vocab", str(config.vocab_size), "--out", str(collectives_out)]
        if launch(command, 2, timeout=600, env=env) != 0:
            raise SystemExit("the collectives worker failed")
        collectives = json.loads(collectives_out.read_text())
        configs = [("whole", 1, 1), ("whole", 1, 2), ("split, head whole", 2, 1), ("split", 2, 1)]
        rounds: dict[tuple[str, int, int], list[dict[str, Any]]] = {c: [] for c in configs}
        index = 0
        for r in range(args.rounds):
            print(f"round {r + 1} of {args.rounds}", file=sys.stderr, flush=True)
            for c in configs[r % len(configs) :] + configs[: r % len(configs)]:
                rounds[c].append(run_config(programs[c[0]], c[1], c[2], args.steps, scratch, index))
                index += 1
        sizes = {name: weight_bytes(path) for name, path in programs.items()}
    load_after = os.getloadavg()
    print(report(args, config, blas, sizes, collectives, rounds, load_before, load_after))


def _spread(values: list[float]) -> str:
    return f"{statistics.median(values):.2f} ({min(values):.2f}-{max(values):.2f})"


def report(
    args: argparse.Namespace, config: Any, blas: str, sizes: dict[str, tuple[int, int]],
    collectives: dict[str, float], rounds: dict[tuple[str, int, int], list[dict[str, Any]]],
    load_before: tuple[float, float, float], load_after: tuple[float, float, float],
) -> str:
    lines = [
        f"# {llm.describe(args.model, args.qwen3_hidden)}: 1 rank against 2 (127.0.0.1, ring)",
        "",
        f"{args.rounds} rounds, {args.steps} decode steps after a {PROMPT}-token prompt; BLAS: {blas}; "
        f"load average {load_before[0]:.2f} before, {load_after[0]:.2f} after.",
        "",
        "## Weights per rank",
        "",
        "| program | bytes a rank reads | of the whole model | MLX memory held after load, per rank (MB) | peak RSS per rank (MB) |",
        "|---|---|---|---|---|",
    ]
    held = {name: next(r for c, rs in rounds.items() if c[0] == name for r in rs) for name in PROGRAMS}
    for name in PROGRAMS:
        mine, whole = sizes[name]
        lines.append(
            f"| {name} | {mine / 2**20:.1f} MB | {mine / whole:.3f} | "
            f"{', '.join(f'{m:.1f}' for m in held[name]['held_mb'])} | {', '.join(f'{m:.0f}' for m in held[name]['vmhwm_mb'])} |"
        )
    layers = config.num_hidden_layers
    lines += [
        "",
        "## Collectives (2 ranks, 127.0.0.1, median of 180 calls)",
        "",
        f"- all_sum of [1, 1, {config.hidden_size}] float32: {collectives['all_sum']:.1f} us; "
        f"{2 * layers} per token ({layers} layers x 2 pairs): {2 * layers * collectives['all_sum'] / 1e3:.2f} ms per token",
        f"- all_gather of [{config.vocab_size // 2}] float32 (the split LM head's): {collectives['all_gather']:.1f} us per token",
        "",
        "## Decode and prefill at equal threads",
        "",
        "| program | ranks x threads | threads in all | decode ms/token | prefill ms |",
        "|---|---|---|---|---|",
    ]
    for (name, ranks, threads), results in rounds.items():
        lines.append(
            f"| {name} | {ranks} x {threads} | {ranks * threads} | "
            f"{_spread([r['decode_ms'] for r in results])} | {_spread([r['prefill_ms'] for r in results])} |"
        )
    return "\n".join(lines)


if __name__ == "__main__":
    main()
