"""Instructions per decoder layer of `compile_llm`'s default program, per family.

    .venv/bin/python benchmarks/instructions.py [--families llama,qwen2] [--pipelines baseline,default]

Each family is built from a config with random weights (hidden 64, 4 query / 2 KV
heads, FFN 128, vocab 128) at L = 4 and L = 2 layers, exported with
`mlxir.tools.llm.export_llm(model)` (attention mask and position offsets, all
logits: the program `compile_llm` builds by default), lowered with each pipeline and
serialized; a layer costs `(count(4) - count(2)) / 2` instructions, counted as
`mlxir inspect` counts them. `baseline` is the previous release's pass list (with this
release's serializer, which reads weights without instructions); `default` is
this device's `lower-to-mlx` (`{target=cpu}` on MLX's CPU: rope as 6 ops of rotated
pairs); `generic` is `lower-to-mlx` without a target's passes. Counts only: nothing
is timed.
"""

from __future__ import annotations

import argparse
from typing import Any

BASELINE = (
    "convert-aten-to-mlx,canonicalize,fuse-rms-norm,fuse-layer-norm,fold-norm-affine,"
    "unrepeat-kv,fold-weight-transposes,cse,dce"
)
PIPELINES: dict[str, str | None] = {"baseline": BASELINE, "default": None, "generic": "lower-to-mlx"}
"""`default`: this device's `lower-to-mlx` (`{target=cpu}` on MLX's CPU); `generic`: without a
device's target passes."""


def config(family: str, layers: int) -> Any:
    import transformers as t

    common: dict[str, Any] = dict(
        vocab_size=128,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=layers,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,  # within the vocabulary (Phi-3's default is 32000)
    )
    phi: dict[str, Any] = {"partial_rotary_factor": 0.5}
    neox: dict[str, Any] = {"rotary_pct": 0.25}
    configs: dict[str, Any] = {
        "llama": lambda: t.LlamaConfig(**common),
        "qwen2": lambda: t.Qwen2Config(**common),
        "qwen3": lambda: t.Qwen3Config(head_dim=16, **common),
        "mistral": lambda: t.MistralConfig(**common),
        "phi3": lambda: t.Phi3Config(**common),
        # partial rotary (keywords transformers' stubs do not list)
        "phi": lambda: t.PhiConfig(**common, **phi),
        "gpt_neox": lambda: t.GPTNeoXConfig(**common, **neox),
        "gemma3": lambda: t.Gemma3TextConfig(head_dim=16, sliding_window=8, **common),
        "cohere": lambda: t.CohereConfig(**common),  # interleaved rotary
    }
    if family not in configs:
        raise SystemExit(f"unknown family '{family}' ({', '.join(configs)})")
    built = configs[family]()
    built._attn_implementation = "sdpa"
    return built


def count(family: str, layers: int, pipelines: list[str]) -> dict[str, int]:
    import torch
    import transformers

    from mlxir import lower  # the pipeline of this device when none is named
    from mlxir.codegen import serialize
    from mlxir.codegen.reader import read_program
    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.tools import llm

    torch.manual_seed(0)
    model = transformers.AutoModelForCausalLM.from_config(config(family, layers)).eval()
    exported = llm.export_llm(model)
    counts = {}
    for name in pipelines:
        module = import_program(exported.ep)
        lower(module, PIPELINES[name])
        counts[name] = len(read_program(serialize(module)).instructions)
    return counts


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--families", default="llama,qwen2,qwen3,mistral,phi3,phi,gpt_neox,gemma3,cohere")
    parser.add_argument("--pipelines", default="baseline,default")
    args = parser.parse_args()
    pipelines = args.pipelines.split(",")
    if unknown := set(pipelines) - set(PIPELINES):
        raise SystemExit(f"unknown pipelines {sorted(unknown)} ({', '.join(PIPELINES)})")
    print(f"{'family':10s}" + "".join(f"{p:>22s}" for p in pipelines))
    for family in args.families.split(","):
        full, half = count(family, 4, pipelines), count(family, 2, pipelines)
        cells = "".join(
            f"{(full[p] - half[p]) / 2:>10.1f}/layer ({full[p]:>3d})" for p in pipelines
        )
        print(f"{family:10s}{cells}", flush=True)
    print("per layer = (count(L=4) - count(L=2)) / 2; in brackets the whole program at L = 4")


if __name__ == "__main__":
    main()
