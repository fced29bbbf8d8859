"""The `mlxir` command.

    mlxir demo                               export the built-in model, show each IR level
    mlxir compile model.pt2 --emit aten      import a saved ExportedProgram, print its IR

Errors in the user's input are one line on stderr and exit status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from xdsl.dialects.builtin import ModuleOp


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op is not module)


def format_counts(counts: Counter[str], width: int = 4) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    cells = [f"{name} {count}" for name, count in items]
    rows = [cells[i : i + width] for i in range(0, len(cells), width)]
    return "\n".join("    " + "   ".join(f"{c:<34}" for c in row).rstrip() for row in rows)


def _step(message: str) -> float:
    print(f"==> {message}", flush=True)
    return time.perf_counter()


def demo(args: argparse.Namespace) -> int:
    import torch

    from mlxir.conversions.torch_to_aten import import_program
    from mlxir.tools import demo_model

    start = _step(
        f"building the built-in TinyDecoder ({demo_model.LAYERS} layers, hidden "
        f"{demo_model.HIDDEN}, {demo_model.HEADS}/{demo_model.KV_HEADS} heads, vocab "
        f"{demo_model.VOCAB}), random weights, seed {args.seed}"
    )
    model = demo_model.build_model(args.seed)
    params = sum(p.numel() for p in model.parameters())
    print(f"    {params:,} parameters")

    start = _step("torch.export with a dynamic sequence length (2..64)")
    ep = demo_model.export_model(model)
    exported_ops = Counter(
        str(n.target) for n in ep.graph.nodes if n.op == "call_function"
    )
    print(f"    {sum(exported_ops.values())} ATen nodes in {time.perf_counter() - start:.2f} s")

    start = _step("importing into the aten dialect (decomposing to core ATen except native ops)")
    module = import_program(ep)
    module.verify()
    counts = op_counts(module)
    print(
        f"    {sum(counts.values())} ops in {time.perf_counter() - start:.2f} s; by op:\n"
        + format_counts(counts)
    )
    if args.print_ir:
        print(module)
    else:
        text = str(module).splitlines()
        print("    first lines of the IR (use --print-ir for all of it):")
        for line in text[:24]:
            print("    " + line)

    with torch.no_grad():
        tokens = torch.randint(0, demo_model.VOCAB, (1, 11))
        reference = model(tokens)
        replay = ep.module()(tokens)
    print(
        f"==> eager torch vs. the exported program at seq 11 (export used 8): "
        f"max |diff| {float((reference - replay).abs().max()):.2e}"
    )
    print(
        "==> next levels: lowering to the mlx dialect, the FlatBuffer program and the MLX "
        "runtime are not built yet (issue 3); this demo grows with them."
    )
    return 0


def compile_(args: argparse.Namespace) -> int:
    import torch

    from mlxir.conversions.torch_to_aten import import_program

    path = Path(args.input)
    if not path.exists():
        return _fail(f"cannot open '{path}': no such file")
    try:
        ep = torch.export.load(str(path))
    except Exception as error:  # torch raises many types for a bad archive
        return _fail(f"'{path}' is not a torch.export archive (.pt2): {error}")
    module = import_program(ep)
    module.verify()
    if args.emit != "aten":
        return _fail(f"--emit {args.emit}: only 'aten' exists so far (lowering is issue 3)")
    text = str(module) + "\n"
    if args.output:
        Path(args.output).write_text(text)
    else:
        sys.stdout.write(text)
    return 0


def _fail(message: str) -> int:
    print(f"mlxir: error: {message}", file=sys.stderr)
    return 1


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mlxir", description="PyTorch → MLX compiler")
    sub = parser.add_subparsers(dest="command", required=True)
    demo_parser = sub.add_parser("demo", help="export the built-in model and show each IR level")
    demo_parser.add_argument("--seed", type=int, default=0)
    demo_parser.add_argument("--print-ir", action="store_true", help="print the whole IR")
    demo_parser.set_defaults(run=demo)
    compile_parser = sub.add_parser("compile", help="compile a saved ExportedProgram (.pt2)")
    compile_parser.add_argument("input")
    compile_parser.add_argument("-o", "--output")
    compile_parser.add_argument("--emit", choices=["aten", "mlx"], default="aten")
    compile_parser.set_defaults(run=compile_)
    return parser


def run(argv: Sequence[str] | None = None) -> int:
    from mlxir.conversions.torch_to_aten import ImportError_

    args = build_parser().parse_args(argv)
    try:
        return args.run(args)
    except ImportError_ as error:
        return _fail(str(error))
    except Exception as error:
        if os.environ.get("MLXIR_TRACEBACK"):
            raise
        return _fail(
            f"internal error: {type(error).__name__}: {error} "
            "(set MLXIR_TRACEBACK=1 for the traceback and please report it)"
        )


def main() -> None:
    sys.exit(run())
