"""Speculative decoding against plain greedy decoding, at equal threads.

    .venv/bin/python benchmarks/speculative.py --rounds 3

The main model is `benchmarks/llm.py`'s 56M Llama (random weights, f32). Drafts:
- `layers-2`: the main model's own first two layers with its embeddings, final norm
  and head (a layer-skipping draft: no second set of weights to train);
- `itself`: the main model as its own draft (every proposal is kept: what the
  scheme costs when the draft is always right and as slow as the main model).
A random-weight draft of its own would agree with the main model by chance only, and
with random weights so does `layers-2`: these figures measure the scheme's costs, not
the speed-up a trained draft brings.

Each configuration generates `--tokens` greedy tokens after the 128-token prompt of
`benchmarks/llm.py`, end-of-sequence ignored; the tokens of every speculative run are
checked against plain decoding's. Reported: decode tokens/s (the prefill excluded),
the share of proposals kept, and the main model's calls. One process per thread
count (mlxir `MLXIR_CPU_STREAMS=T`, MKL/OpenBLAS `T` threads); inside it the
configurations alternate, round after round; medians with min-max.
"""

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

sys.path.insert(0, str(Path(__file__).resolve().parent))
import llm  # noqa: E402  (this folder's LLM benchmark helpers)

CONFIGURATIONS = [("plain", None, 0), ("layers-2", "layers-2", 2), ("layers-2", "layers-2", 4), ("itself", "itself", 3)]
"""(label, draft, drafted tokens per step)."""


def _save_models(folder: Path) -> None:
    import torch
    import transformers

    torch.manual_seed(0)
    main = transformers.AutoModelForCausalLM.from_config(llm.model_config("llama", 1024)).eval()
    main.save_pretrained(folder / "main")
    config = llm.model_config("llama", 1024, layers=2)
    draft = transformers.AutoModelForCausalLM.from_config(config).eval()
    state = {k: v for k, v in main.state_dict().items() if not k.startswith("model.layers.") or int(k.split(".")[2]) < 2}
    draft.load_state_dict(state)
    draft.save_pretrained(folder / "layers-2")


def _compile(folder: Path, logits: str) -> Any:
    from mlxir.tools import llm as mlxir_llm

    model = llm.load_torch_model(folder)
    return mlxir_llm.compile_llm(model, attention_mask=False, logits=logits)


def worker(folder: Path, rounds: int, tokens: int) -> dict[str, Any]:
    import mlx.core as mx

    from mlxir.tools import llm as mlxir_llm
    from mlxir.tools.llm.speculative import SpeculativeStats, stream_speculative

    main_all = _compile(folder / "main", "all")
    main_last = _compile(folder / "main", "last")
    drafts = {"layers-2": _compile(folder / "layers-2", "last"), "itself": main_last}
    prompt = llm.prompt_ids()

    def plain() -> tuple[list[int], float, SpeculativeStats]:
        ids = mx.array([prompt], dtype=mx.int64)
        out: list[int] = []
        start = first = time.perf_counter()
        for token, _ in mlxir_llm.stream_tokens(main_last, ids, max_new_tokens=tokens):
            out.append(int(token[0].item()))  # pyright: ignore[reportArgumentType]
            if len(out) == 1:
                first = time.perf_counter()
        del start
        return out, time.perf_counter() - first, SpeculativeStats(main_calls=len(out))

    def speculative(draft: str, k: int) -> tuple[list[int], float, SpeculativeStats]:
        stats = SpeculativeStats()
        out: list[int] = []
        first = time.perf_counter()
        for value in stream_speculative(main_all, drafts[draft], prompt, max_new_tokens=tokens, num_draft_tokens=k, stats=stats):
            out.append(value)
            if len(out) == 1:
                first = time.perf_counter()
        return out, time.perf_counter() - first, stats

    results: dict[str, dict[str, list[float]]] = {}
    reference, _, _ = plain()  # warm-up, and the tokens every run must give
    for _, draft, k in CONFIGURATIONS[1:]:
        speculative(draft or "", k)  # warm-up
    for _ in range(rounds):
        for label, draft, k in CONFIGURATIONS:
            out, seconds, stats = plain() if draft is None else speculative(draft, k)
            if out != reference:
                raise SystemExit(f"{label} k={k}: tokens differ from plain greedy decoding")
            entry = results.setdefault(f"{label} k={k}" if k else label, {"tps": [], "acceptance": [], "calls": []})
            entry["tps"].append((len(out) - 1) / seconds)
            entry["acceptance"].append(stats.acceptance)
            entry["calls"].append(stats.main_calls)
    return results


def _summary(values: list[float], digits: int = 1) -> str:
    return f"{statistics.median(values):.{digits}f} ({min(values):.{digits}f}-{max(values):.{digits}f})"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--tokens", type=int, default=64)
    parser.add_argument("--threads", default="1,2")
    parser.add_argument("--worker", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(args.worker, args.rounds, args.tokens)))
        return
    threads = [int(t) for t in args.threads.split(",")]
    load_before = os.getloadavg()
    with tempfile.TemporaryDirectory(prefix="mlxir-speculative-") as scratch:
        folder = Path(scratch)
        _save_models(folder)
        by_threads: dict[int, dict[str, Any]] = {}
        for count in threads:
            env, _ = llm.blas_env(count)
            env["MLXIR_CPU_STREAMS"] = str(count)
            command = [sys.executable, __file__, "--worker", str(folder), "--rounds", str(args.rounds), "--tokens", str(args.tokens)]
            done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
            if done.returncode:
                sys.stderr.write(done.stderr)
                raise SystemExit(f"the {count}-thread worker failed")
            by_threads[count] = json.loads(done.stdout.strip().splitlines()[-1])
    load_after = os.getloadavg()
    print(
        f"Speculative decoding, {llm.describe('llama', 1024)}, f32; {args.tokens} greedy tokens after a "
        f"{llm.PROMPT}-token prompt, tokens checked equal to plain decoding's. Threads: MLXIR_CPU_STREAMS=T and "
        f"the BLAS's T threads. Median over {args.rounds} rounds (min-max), configurations alternating."
    )
    print(f"Load average (1/5/15 min): before {'/'.join(f'{x:.2f}' for x in load_before)}, after {'/'.join(f'{x:.2f}' for x in load_after)}.")
    print()
    header = "| configuration | " + " | ".join(f"decode tokens/s {t}T | vs plain {t}T" for t in threads) + " | proposals kept | main-model calls |"
    print(header)
    print("|" + "---|" * (header.count("|") - 1))
    names = list(next(iter(by_threads.values())))
    for name in names:
        cells = []
        for count in threads:
            entry = by_threads[count][name]
            base = statistics.median(by_threads[count]["plain"]["tps"])
            cells += [_summary(entry["tps"]), f"{statistics.median(entry['tps']) / base:.2f}x"]
        entry = by_threads[threads[0]][name]
        kept = "-" if name == "plain" else f"{100 * statistics.median(entry['acceptance']):.0f} %"
        print(f"| {name} | " + " | ".join(cells) + f" | {kept} | {int(statistics.median(entry['calls']))} |")


if __name__ == "__main__":
    main()
