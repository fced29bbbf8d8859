"""`mlxir demo`: export, compile and run the built-in model, on one screen."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time
from pathlib import Path
from typing import Any, cast

from mlxir.tools.cli.common import format_counts, op_counts
from mlxir.tools.cli.errors import UsageError


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("demo", help="export, compile and run the built-in model")
    parser.add_argument("--seed", type=int, default=0, help="the seed of the built-in Llama's random weights (default 0)")
    parser.add_argument("--print-ir", action="store_true", help="print the mlx-level IR")
    parser.add_argument("--ops", action="store_true", help="print the op counts of each level")
    parser.add_argument("-o", "--output", help="also write the program here")
    parser.add_argument("--new-tokens", type=int, default=16, help="tokens the demo generates (default 16)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """One screen: build, export, import, lower (op counts per pass), serialize, load,
    generate against transformers; `--ops` adds the op tables, `--print-ir` the IR."""
    if args.new_tokens < 1:
        raise UsageError(f"--new-tokens must be at least 1, not {args.new_tokens}")
    import mlx.core as mx
    import torch

    import mlxir
    from mlxir.codegen import serialize
    from mlxir.conversions.pipelines import pipeline_passes
    from mlxir.conversions.registry import PASSES
    from mlxir.dialects.context import make_context
    from mlxir.runtime.backend import host_target
    from mlxir.tools import demo_model, llm

    config = demo_model.LLAMA_CONFIG
    model = demo_model.build_llama(args.seed)
    print(
        f"==> a random Llama (transformers, seed {args.seed}): "
        f"{config['num_hidden_layers']} layers, hidden {config['hidden_size']}, "
        f"{config['num_attention_heads']}/{config['num_key_value_heads']} heads, vocab "
        f"{config['vocab_size']}, {sum(p.numel() for p in model.parameters()):,} params"
    )

    start = time.perf_counter()
    exported = llm.export_llm(model)
    nodes = sum(1 for n in exported.ep.graph.nodes if n.op == "call_function")
    print(
        f"==> torch.export: {nodes} ATen nodes in {time.perf_counter() - start:.2f} s (one program "
        "for prefill and decode;\n    dynamic batch, prompt and past lengths; the KV cache as "
        "inputs and outputs)"
    )

    start = time.perf_counter()
    module = mlxir.import_program(exported.ep)
    counts = op_counts(module)
    print(f"==> import: {sum(counts.values())} aten-level ops in {time.perf_counter() - start:.2f} s")
    if args.ops:
        print(format_counts(counts, width=2))

    ctx = make_context()
    stages: list[str] = []
    for name in pipeline_passes(host_target()):
        start = time.perf_counter()
        PASSES[name].factory()().apply(ctx, module)
        module.verify()
        counts = op_counts(module)
        stages.append(f"{name} {sum(counts.values())} ({time.perf_counter() - start:.2f} s)")
    # Each stage whole on its line: "(0.01 s)" must not be cut from its pass.
    joined = ", ".join(stage.replace(" ", "\xa0") for stage in stages)
    wrapped = textwrap.fill(
        "==> lower, ops after each pass: " + joined,
        width=96, subsequent_indent="    ", break_on_hyphens=False,
    )
    print(wrapped.replace("\xa0", " "))
    top = sorted(
        ((n, c) for n, c in counts.items() if n.startswith("mlx.") and n != "mlx.global"),
        key=lambda kv: (-kv[1], kv[0]),
    )
    print("    most used: " + ", ".join(f"{n.removeprefix('mlx.')} {c}" for n, c in top[:6]))
    if args.ops:
        print(format_counts(counts, width=2))
    if args.print_ir:
        print(module)

    start = time.perf_counter()
    data = serialize(module)
    program = mlxir.Program(data)
    compiled = llm.CompiledLLM.from_program(program)
    print(
        f"==> serialize and load: {len(data):,} bytes, {len(program.info.instructions)} "
        f"instructions, {len(program.info.slots)} slots, in {time.perf_counter() - start:.2f} s"
    )

    print(
        f"==> {args.new_tokens} greedy tokens for 2 left-padded prompts (lengths 5 and 9) on MLX, "
        "and with transformers"
    )
    prompts = torch.randint(3, config["vocab_size"], (2, 9), generator=torch.Generator().manual_seed(1))
    mask = torch.ones(2, 9, dtype=torch.int64)
    mask[0, :4] = 0
    prompts[0, :4] = 0
    with torch.no_grad():
        start = time.perf_counter()
        expected = cast(
            torch.Tensor,
            model.generate(  # pyright: ignore[reportCallIssue] (transformers' stub)
                prompts, attention_mask=mask, max_new_tokens=args.new_tokens, do_sample=False
            ),
        )
        torch_s = time.perf_counter() - start
    # The first run traces the repeating decode step for mx.compile (tens of ms) and has
    # MLX build the CPU kernels it has not cached yet (in $TMPDIR/mlx): on a machine's
    # first demo that is seconds, the bulk of the run; the second run is what later calls cost.
    start = time.perf_counter()
    first = llm.generate(compiled, prompts, mask, max_new_tokens=args.new_tokens)
    mx.eval()  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
    first_s = time.perf_counter() - start
    start = time.perf_counter()
    got = llm.generate(compiled, prompts, mask, max_new_tokens=args.new_tokens)
    mx.eval()  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
    mlx_s = time.perf_counter() - start
    for row in range(2):
        print(f"    prompt {row}: mlxir {got[row, 9:].tolist()}")
        print(f"    {'':9} torch {expected[row, 9:].tolist()}")  # pyright: ignore[reportUnknownMemberType] (torch types tolist's result as a bare list)
    same = bool(torch.equal(torch.as_tensor(got), expected)) and bool(torch.equal(torch.as_tensor(first), expected))
    print(f"==> identical tokens: {'yes' if same else 'NO'}")
    print(
        f"==> time for the whole generation: mlxir {mlx_s * 1e3:.0f} ms, transformers "
        f"{torch_s * 1e3:.0f} ms (one run each)"
    )
    print(
        f"    mlxir's first run: {first_s * 1e3:.0f} ms: it traces the decode step (mx.compile, each\n"
        "    process) and has MLX build the kernels it has not cached yet (once per machine)"
    )
    if args.output:
        Path(args.output).write_bytes(data)
        print(f"==> wrote {args.output}")
    if not same:
        print("mlxir: error: the generated tokens differ from transformers'", file=sys.stderr)
        return 1
    return 0

