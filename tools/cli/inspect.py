"""`mlxir inspect`: a program's instructions, slots, constants and signature; an
ExecuTorch `.pte`'s delegates, each mlxir payload described the same way."""

from __future__ import annotations

import argparse
from collections import Counter
from typing import Any

from mlxir.tools.cli.common import format_counts, load_program, read_program_file


def add_parser(sub: Any) -> None:
    parser = sub.add_parser("inspect", help="describe a program")
    parser.add_argument("program", help="a compiled program (.mlxfb or .pte)")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from mlxir.runtime.loading import is_pte

    data = read_program_file(args.program, "a compiled program (.mlxfb or .pte)")
    if is_pte(data):
        _inspect_pte(args.program, data)
    else:
        _describe_program(f"program {args.program}", load_program(args.program), "")
    return 0


def _inspect_pte(path: str, data: bytes) -> None:
    """Each method's delegates; each mlxir payload described like an `.mlxfb`."""
    import mlxir
    from mlxir.codegen import ProgramError

    try:
        from mlxir.interop.executorch import BACKEND_ID, read_delegates
    except ImportError as error:
        raise ProgramError(f"{path}: an ExecuTorch .pte file: {error}") from None
    try:
        methods = read_delegates(data)
    except ProgramError as error:
        raise ProgramError(f"{path}: {error}") from None
    print(f"ExecuTorch program {path}: {len(methods)} method(s)")
    for method, delegates in methods.items():
        print(f"method '{method}': {len(delegates)} delegate(s)")
        for delegate in delegates:
            title = f"  delegate {delegate.index}: {delegate.backend}, {len(delegate.payload):,} bytes"
            if delegate.backend != BACKEND_ID:
                print(f"{title} (not an mlxir payload)")
                continue
            try:
                program = mlxir.Program(delegate.payload)
            except ProgramError as error:
                raise ProgramError(f"{path}: delegate {delegate.index}: {error}") from None
            _describe_program(title, program, "    ")


QUANTIZED_OPERANDS = {"mlx.quantized_matmul": (1, "matmul weights"), "mlx.quantized_take": (0, "embedding tables")}
"""Quantized op → the position of its packed weight (its scales and biases follow) and
what its weights are."""


def _describe_quantized(info: Any) -> list[str]:
    """One line per quantization scheme and use: its weights and the bytes they take,
    against the same weights in the float type the op computes in; and the integer
    weights the program dequantizes at every call (torchao schemes MLX lacks)."""
    schemes: dict[tuple[int, int, str, str], dict[int, tuple[int, int]]] = {}
    for ins in info.instructions:
        if ins.op not in QUANTIZED_OPERANDS:
            continue
        position, what = QUANTIZED_OPERANDS[ins.op]
        bits, group, mode = int(ins.props["bits"]), int(ins.props["group_size"]), str(ins.props["mode"])
        parts = [slot for slot in ins.operands[position : position + 3] if slot in info.constants]
        if ins.operands[position] not in info.constants:
            continue
        stored = sum(int(info.constants[slot].nbytes) for slot in parts)
        packed = info.constants[ins.operands[position]]
        elements = packed.shape[0] * packed.shape[1] * 32 // bits
        itemsize = 4 if info.slots[ins.results[0]].dtype == "float32" else 2  # f16, bf16
        # a weight read by several ops (a tied embedding and LM head) counts once per use
        schemes.setdefault((bits, group, mode, what), {})[ins.operands[position]] = (stored, elements * itemsize)
    lines: list[str] = []
    for (bits, group, mode, what), weights in schemes.items():
        stored = sum(s for s, _ in weights.values())
        float_bytes = sum(f for _, f in weights.values())
        lines.append(
            f"quantized: {len(weights)} {what}, {bits} bits, groups of {group}, {mode}: "
            f"{stored:,} bytes ({float_bytes:,} unquantized, {float_bytes - stored:,} saved)"
        )
    at_run_time = [
        slot
        for ins in info.instructions
        if ins.op == "mlx.astype" and ins.operands[0] in info.constants
        for slot in ins.operands[:1]
        if info.slots[slot].dtype.startswith(("int", "uint"))
        and info.slots[ins.results[0]].dtype in ("float32", "float16", "bfloat16")
        and len(info.constants[slot].shape) >= 2
    ]
    if at_run_time:
        stored = sum(int(info.constants[slot].nbytes) for slot in set(at_run_time))
        lines.append(
            f"dequantized at every call: {len(set(at_run_time))} integer weights ({stored:,} bytes), "
            "a scheme MLX's quantized kernels lack"
        )
    return lines


def _describe_program(title: str, program: Any, indent: str) -> None:
    info = program.info
    counts = Counter(i.op for i in info.instructions)
    kinds = Counter(s.kind for s in info.slots)
    constant_bytes = sum(int(a.nbytes) for a in info.constants.values())
    lines = [f"{len(info.instructions)} instructions:"]
    lines += [line.removeprefix("  ") for line in format_counts(counts).splitlines()]
    lines.append(
        "slots: "
        + ", ".join(f"{kinds[k]} {k}" for k in ("input", "constant", "state", "temporary"))
        + f" ({len(info.slots)} in all)"
    )
    lines.append(f"constants: {len(info.globals)} globals, {constant_bytes:,} bytes")
    lines += _describe_quantized(info)
    lines += [f"input  {spec.name}: {spec.describe()}" for spec in program.inputs]
    if program.signature is not None:
        lines += [
            f"input  {path} = {value!r} (fixed by the export: a call must pass it)"
            for path, value in program.signature.constant_inputs()
        ]
    for name, slot in zip(program.output_names, info.outputs):
        s = info.slots[slot]
        shape = ", ".join("?" if d is None else str(d) for d in s.shape)
        lines.append(f"{name}: {'integer' if s.scalar else f'{s.dtype}[{shape}]'}")
    for name in info.state:
        s = info.slots[info.state[name]]
        lines.append(f"state  {name}: {s.dtype}{list(s.shape)}")
    if info.symbol_ranges:
        ranges = ", ".join(
            f"{sym} in [{lo}, {hi if hi >= 0 else 'inf'}]" for sym, (lo, hi) in info.symbol_ranges.items()
        )
        lines.append(f"dynamic dims: {ranges}")
    from mlxir.evaluator import SYNC_OPS

    for instruction in (i for i in info.instructions if i.op in SYNC_OPS):
        where = f" ({instruction.location})" if instruction.location else ""
        lines.append(
            f"sync point: instruction #{instruction.index} {instruction.op}{where}: its "
            f"{SYNC_OPS[instruction.op]} depends on values, so the run evaluates what comes before it"
        )
    if program.native_unavailable is not None:
        lines.append(f"runs interpreted: {program.native_unavailable}")
    print(f"{title}: schema version {info.version}, function @{info.name}")
    for line in lines:
        print(f"{indent}  {line}")

