"""`mlxir export-mlxfn`: a compiled program as MLX's own function file (.mlxfn), loaded
without mlxir, torch or Python (docs/mlxfn.md)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from mlxir.tools.cli.common import check_writable_file, load_program, read_program_file
from mlxir.tools.cli.errors import CliError, UsageError

EXPORT_MLXFN_HELP = """\
Writes a compiled program as MLX's own function file, which MLX loads without mlxir,
torch or Python: mx.import_function in Python, mlx::core::import_function in C++,
importFunction(from:) in Swift (docs/mlxfn.md).

The exported function is called as

    fn(*tensor_inputs, *state_values) -> (*outputs, *new_state_values)

tensor_inputs: the program's tensor inputs in its input order (integer inputs left
out); state_values: every state value (a KV cache kept as a buffer...) in the
program's order, their initial values written by --state; the results: the outputs,
then every state value after the call, to feed to the next call.

Each --shape is one input signature (one trace in the file): one item per program
input, separated by commas: a shape AxBxC ('scalar' for a 0-d tensor) for a tensor
input, the value for an integer input, which is held constant in that trace (MLX
traces arrays only; the program computes its reshapes' sizes from it while tracing).
A program whose inputs are all static may omit --shape. Dtypes are the program's.
The file's metadata (JSON) names the inputs, state, outputs and signatures.
"""


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "export-mlxfn",
        help="write a program as MLX's own function file (.mlxfn), loaded without mlxir",
        description=EXPORT_MLXFN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("program", help="a compiled program (.mlxfb)")
    parser.add_argument("-o", "--output", help="the .mlxfn file to write")
    parser.add_argument(
        "--shape", action="append", default=[], metavar="SHAPES",
        help="one input signature, e.g. 1x16 or 1x7,1 (repeat for more signatures in the file)",
    )
    parser.add_argument(
        "--state", metavar="FILE.safetensors", help="also write the program's initial state values here"
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from mlxir.runtime.loading import is_pte
    from mlxir.runtime.mlxfn import ExportError, SignatureItem, export_mlxfn, parse_signature
    from mlxir.runtime.program import Program

    if not args.output:
        raise UsageError("export-mlxfn needs -o FILE.mlxfn")
    check_writable_file(args.state, "--state")
    data = read_program_file(args.program, "a compiled program (.mlxfb)")
    if is_pte(data):
        raise CliError(f"'{args.program}' is an ExecuTorch .pte: export-mlxfn takes a compiled .mlxfb")
    program = load_program(args.program)
    assert isinstance(program, Program)  # not a .pte: checked above
    signatures: list[list[SignatureItem]] = []
    for text in args.shape:
        try:
            signatures.append(parse_signature(text, program))
        except ValueError as error:
            raise CliError(f"--shape {text}: {error}") from None
    try:
        metadata = export_mlxfn(program, args.output, signatures or None, state_path=args.state)
    except ExportError as error:
        raise CliError(str(error)) from None
    size = Path(args.output).stat().st_size
    shapes = "; ".join(_describe_signature(s) for s in metadata["signatures"])
    print(f"wrote {args.output} ({size:,} bytes): {len(metadata['signatures'])} signature(s): {shapes}")
    arguments = [i["name"] for i in metadata["inputs"]] + [s["name"] for s in metadata["state"]]
    results = [o["name"] for o in metadata["outputs"]] + [s["name"] for s in metadata["state"]]
    print(f"calling convention: fn({', '.join(arguments)}) -> ({', '.join(results)})")
    if args.state:
        print(f"wrote {args.state} (the initial state: {', '.join(s['name'] for s in metadata['state']) or 'none'})")
    return 0


def _describe_signature(signature: dict[str, Any]) -> str:
    shapes = ",".join("x".join(str(d) for d in shape) or "scalar" for shape in signature["shapes"])
    held = ", ".join(f"{name}={value}" for name, value in signature["integers"].items())
    return f"{shapes} ({held} held constant)" if held else shapes

