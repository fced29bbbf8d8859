"""The `mlxir` command.

    mlxir demo                                   export, compile and run the built-in model
    mlxir compile model.pt2 -o model.mlxfb       compile a saved ExportedProgram
    mlxir compile model.pt2 --emit aten|mlx      print the IR at a level instead
    mlxir run model.mlxfb --input x.npy ...      run a program on .npy inputs
    mlxir debug model.pt2 --input x.npy [--all]  the first node whose value leaves eager
                                                 PyTorch's while its inputs agree
    mlxir debug model.pt2 --input x.npy --module edited.mlir
                                                 the same for an mlx-level module (compile --emit mlx)
    mlxir debug --bisect model.pt2 --input x.npy the first pass that takes the outputs away
                                                 from eager PyTorch's, and its IR diff
    mlxir inspect model.mlxfb                    instructions, slots, constants, signature
    mlxir inspect model.pte                      an ExecuTorch program's delegates, each
                                                 mlxir payload described as above
    mlxir generate --model DIR --prompt "text"   generate text, mlx-lm style, from a
                                                 save_pretrained folder (compiled once, cached)
    mlxir generate --model llm.mlxfb --tokenizer DIR --prompt "text"
    mlxir generate llm.mlxfb --ids 1,15,27       token ids in and out
    mlxir info                                   versions, MLX's device, the BLAS behind its
                                                 CPU matmuls and why, thread settings
    mlxir export-mlxfn model.mlxfb -o model.mlxfn --shape 1x16 --shape 4x16
                                                 MLX's own function file, loaded without mlxir
                                                 (mx.import_function, C++, Swift)

Errors in the user's input are one line on stderr and exit status 1, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import textwrap
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

from xdsl.dialects.builtin import ModuleOp

from mlxir.interop.model_explorer import METRICS as OVERLAY_METRICS


class CliError(Exception):
    """A problem with the user's input, reported as one line (exit status 1)."""


class UsageError(CliError):
    """A flag given a value it does not take (exit status 2, as argparse's own)."""


def op_counts(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk() if op is not module)


def format_counts(counts: Counter[str], width: int = 3) -> str:
    items = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    cells = [f"{name} {count}" for name, count in items]
    rows = [cells[i : i + width] for i in range(0, len(cells), width)]
    return "\n".join("    " + "  ".join(f"{c:<38}" for c in row).rstrip() for row in rows)


def _load_exported(path: Path) -> Any:
    from mlxir.conversions.torch_to_aten.archive import ArchiveError, load_archive

    try:
        return load_archive(path)
    except ArchiveError as error:
        raise CliError(str(error)) from error


# ---------------------------------------------------------------------------
# demo
# ---------------------------------------------------------------------------


def demo(args: argparse.Namespace) -> int:
    """One screen: build, export, import, lower (op counts per pass), serialize, load,
    generate against transformers; `--ops` adds the op tables, `--print-ir` the IR."""
    import mlx.core as mx
    import torch

    import mlxir
    from mlxir.codegen import serialize
    from mlxir.conversions.aten_to_mlx import host_target, pipeline_passes
    from mlxir.conversions.registry import PASSES
    from mlxir.dialects.context import make_context
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
    # The first run traces the repeating decode step for mx.compile (and, on a machine's
    # first run, MLX builds its CPU kernels); the second is what later calls cost.
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
    print(f"    mlxir's first run: {first_s * 1e3:.0f} ms (it traced the decode step for mx.compile)")
    if args.output:
        Path(args.output).write_bytes(data)
        print(f"==> wrote {args.output}")
    if not same:
        print("mlxir: error: the generated tokens differ from transformers'", file=sys.stderr)
        return 1
    return 0


# ---------------------------------------------------------------------------
# compile / run / inspect
# ---------------------------------------------------------------------------


class StageTimer:
    """Wall seconds per compile stage, printed as a table by `--time` (as
    `mlx-opt --time-passes` prints them per pass)."""

    def __init__(self) -> None:
        self.stages: list[tuple[str, float]] = []
        self._last = time.perf_counter()

    def done(self, stage: str) -> None:
        now = time.perf_counter()
        self.stages.append((stage, now - self._last))
        self._last = now

    def report(self) -> str:
        total = sum(seconds for _, seconds in self.stages)
        width = max(len(name) for name, _ in [*self.stages, ("total", 0.0)])
        lines = [f"{name:<{width}}  {seconds:8.3f} s  {seconds / total if total else 0:6.1%}" for name, seconds in self.stages]
        return "\n".join(["compile stages:", *lines, f"{'total':<{width}}  {total:8.3f} s"])


def compile_(args: argparse.Namespace) -> int:
    from mlxir.support.progress import progress_shown

    timer = StageTimer()
    try:
        with progress_shown():
            return _compile_stages(args, timer)
    finally:
        if args.time and timer.stages:
            print(timer.report(), file=sys.stderr)


def _compile_stages(args: argparse.Namespace, timer: StageTimer) -> int:
    from xdsl.dialects.builtin import StringAttr

    import mlxir
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR

    ep = _load_exported(Path(args.input))
    timer.done("read .pt2")
    module = mlxir.import_program(ep, decompose=args.decompose)
    because = module.attributes.get(DECOMPOSED_BY_TORCH_ATTR)
    if isinstance(because, StringAttr):  # seconds more than node by node: say why
        print(f"note: torch re-traced the whole program to decompose it: {because.data}", file=sys.stderr)
    timer.done("import (aten)" if because is None else "import (aten, torch's re-trace)")
    if args.emit == "aten":
        return _write_text(_ir_text(module, args.elide_weights), args.output)
    mlxir.lower(module, args.pipeline, verify=args.emit == "mlx")  # else serialize verifies
    timer.done(f"lower ({args.pipeline or 'lower-to-mlx'})")
    quantize = _quantize_option(args)
    if quantize is not None:
        from mlxir.transforms.quantize import quantize_weights

        try:
            print(quantize_weights(module, quantize), file=sys.stderr)
        except ValueError as error:
            raise CliError(str(error)) from None
        timer.done("quantize")
    if args.tensor_parallel < 1:
        raise UsageError(f"--tensor-parallel must be at least 1, not {args.tensor_parallel}")
    if args.tensor_parallel > 1:
        from mlxir.transforms.shard_tensor_parallel import shard_tensor_parallel

        pairs = shard_tensor_parallel(module, args.tensor_parallel)
        print(f"split {pairs} pairs over {args.tensor_parallel} ranks (shard-tensor-parallel)", file=sys.stderr)
        timer.done("shard-tensor-parallel")
    if args.emit == "mlx":
        return _write_text(_ir_text(module, args.elide_weights), args.output)
    if not args.output:
        raise CliError("compile needs -o FILE.mlxfb (or --emit aten|mlx to print IR)")
    parts = mlxir.serialize_parts(module)
    timer.done("serialize (verify)")
    with Path(args.output).open("wb") as file:
        parts.write(file)
    timer.done("write file")
    print(f"wrote {args.output} ({len(parts):,} bytes)")
    return 0


def _quantize_option(args: argparse.Namespace) -> Any:
    """`--quantize BITS [--group-size N] [--quantize-mode M] [--quantize-embeddings]` as
    an `mlxir.Quantize`."""
    if args.quantize is None:
        if args.quantize_embeddings:
            raise CliError("--quantize-embeddings needs --quantize BITS")
        return None
    import mlxir

    quantize = mlxir.Quantize(
        bits=args.quantize, group_size=args.group_size, mode=args.quantize_mode, embeddings=args.quantize_embeddings
    )
    try:
        quantize.check()
    except ValueError as error:
        raise CliError(str(error)) from None
    return quantize


def add_quantize_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--quantize", type=int, metavar="BITS",
                        help="quantize the matmul weights to BITS (2, 3, 4, 5, 6 or 8) as mx.quantize does")
    parser.add_argument("--group-size", type=int, default=64, help="with --quantize: 32, 64 or 128 (default 64)")
    parser.add_argument("--quantize-mode", default="affine", choices=["affine", "mxfp4", "mxfp8"],
                        help="with --quantize (default affine)")
    parser.add_argument("--quantize-embeddings", action="store_true",
                        help="with --quantize: the embedding tables too (a tied LM head shares them)")


def _ir_text(module: Any, elide_weights: bool) -> str:
    """The module as text with each op's location, `loc("node"("file.py":line:col))`:
    the provenance `mlxir debug --module` maps an edited module back to nodes by.
    `elide_weights`: each mlx.global without its value (debug binds it from the .pt2)."""
    from io import StringIO

    from xdsl.printer import Printer

    from mlxir.dialects import mlx

    if elide_weights:
        for op in module.ops:
            if isinstance(op, mlx.GlobalOp):
                op.properties.pop("value", None)
    text = StringIO()
    Printer(stream=text, print_debuginfo=True).print_op(module)
    return text.getvalue()


def _write_text(text: str, output: str | None) -> int:
    if output:
        Path(output).write_text(text + "\n")
    else:
        sys.stdout.write(text + "\n")
    return 0


def debug(args: argparse.Namespace) -> int:
    """`mlxir debug`: the first graph node whose compiled value leaves eager PyTorch's
    while its inputs agree (`--all`: every node's errors); `--bisect`: the first pass
    of the pipeline that takes the outputs beyond tolerance, with the IR it changed.
    Exit status 1 when something diverges, 0 when nothing does."""
    import numpy as np
    import torch

    from mlxir.debug.divergence import bisect_passes, compare, diff_excerpt, write_repro

    if args.bisect and args.overlay:
        raise CliError("--overlay needs per-node errors, which --bisect does not compute")
    if args.bisect and args.module:
        raise CliError("--bisect runs the pipeline's passes, so it takes no --module")
    ep = _load_exported(Path(args.input_program))
    inputs = [torch.from_numpy(a) if isinstance(a, np.ndarray) else a for a in _read_inputs(args.input)]  # pyright: ignore[reportUnknownMemberType] (torch leaves from_numpy's parameter unannotated)
    try:
        if not args.bisect:
            report = compare(
                ep, *inputs, module=args.module, pipeline=args.pipeline, atol=args.atol, rtol=args.rtol
            )
            print(report.table(every_node=args.all))
            if args.overlay:
                from mlxir.interop.model_explorer import write_overlay

                write_overlay(report, args.overlay, args.overlay_metric)
                print(
                    f"overlay: {args.overlay} (python -m mlxir.interop.model_explorer "
                    f"{args.input_program} --node-data {args.overlay})"
                )
            if report.first_divergence is None:
                return 0
            if args.repro:
                *files, command = write_repro(report, args.repro, args.pipeline)
                print(f"reproducer: {', '.join(files)}\nrun it: {command}")
            return 1
        bisected = bisect_passes(ep, *inputs, pipeline=args.pipeline, atol=args.atol, rtol=args.rtol)
    except ValueError as error:
        raise CliError(str(error)) from None
    print(bisected.table())
    found = bisected.first_divergent
    if found is None:
        return 0
    print(f"\nthe IR {found.name} changed:\n{diff_excerpt(found.diff)}")
    return 1


def _read_inputs(items: Sequence[str]) -> list[Any]:
    """`--input` values: .npy files as arrays, anything else as an integer."""
    import numpy as np

    inputs: list[Any] = []
    for item in items:
        if item.endswith(".npy"):
            try:
                inputs.append(np.load(item, allow_pickle=False))
            except (OSError, ValueError) as error:
                raise CliError(f"cannot read input '{item}': {error}") from error
        else:
            try:
                inputs.append(int(item))
            except ValueError:
                raise CliError(f"input '{item}' is neither a .npy file nor an integer") from None
    return inputs


def _load_program(path: str) -> Any:
    import mlxir

    return mlxir.load(path)


def run(args: argparse.Namespace) -> int:
    import numpy as np

    from mlxir.runtime.program import Program
    from mlxir.tools.launch import in_a_rank

    _check_rank_arguments(args)
    ranks = _program_ranks(args.program)
    if args.tensor_parallel not in (1, ranks):
        raise UsageError(f"'{args.program}' is split over {ranks} ranks: --tensor-parallel {args.tensor_parallel} does not match")
    if ranks > 1 and not in_a_rank():
        return _start_ranks(args, ranks)
    program = _load_program(args.program)
    inputs = _read_inputs(args.input)
    if isinstance(program, Program):
        outputs = program.call_flat(*inputs)
        names = program.output_names
    else:  # an ExecuTorch method: flat already
        outputs = program(*inputs)
        outputs = cast(tuple[Any, ...], outputs) if isinstance(outputs, tuple) else (outputs,)
        names = [f"output {i}" for i in range(len(outputs))]
    if ranks > 1:
        from mlxir.evaluator.distributed import world_group

        if world_group().rank() != 0:
            return 0  # every rank computed the outputs; rank 0 reports them
    for i, (name, value) in enumerate(zip(names, outputs)):
        array = np.asarray(value)
        if args.output_dir:
            path = Path(args.output_dir) / f"output_{i}.npy"
            path.parent.mkdir(parents=True, exist_ok=True)
            np.save(path, array)
            print(f"{name}: {array.dtype}{list(array.shape)} -> {path}")
        else:
            print(f"{name}: {array.dtype}{list(array.shape)}")
            print(np.array2string(array, threshold=64, precision=5))
    return 0


def _program_ranks(path: str) -> int:
    """How many ranks an `.mlxfb` is split over (1 for anything else: `_load_program`
    reports what is wrong with it)."""
    from mlxir.codegen.errors import ProgramError
    from mlxir.codegen.reader import read_program
    from mlxir.runtime.loading import is_pte

    try:
        data = Path(path).read_bytes()
        return 1 if is_pte(data) else read_program(data).ranks
    except (OSError, ProgramError):
        return 1


def inspect(args: argparse.Namespace) -> int:
    from mlxir.runtime.loading import is_pte

    try:
        data = Path(args.program).read_bytes()
    except OSError as error:
        raise CliError(f"cannot read '{args.program}': {error.strerror}") from error
    if is_pte(data):
        _inspect_pte(args.program, data)
    else:
        _describe_program(f"program {args.program}", _load_program(args.program), "")
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


# ---------------------------------------------------------------------------
# export-mlxfn
# ---------------------------------------------------------------------------

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


def export_mlxfn(args: argparse.Namespace) -> int:
    from mlxir.runtime.loading import is_pte
    from mlxir.runtime.mlxfn import ExportError, SignatureItem, export_mlxfn, parse_signature
    from mlxir.runtime.program import Program

    if not args.output:
        raise CliError("export-mlxfn needs -o FILE.mlxfn")
    try:
        data = Path(args.program).read_bytes()
    except OSError as error:
        raise CliError(f"cannot read '{args.program}': {error.strerror}") from error
    if is_pte(data):
        raise CliError(f"'{args.program}' is an ExecuTorch .pte: export-mlxfn takes a compiled .mlxfb")
    program = _load_program(args.program)
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


# ---------------------------------------------------------------------------
# info
# ---------------------------------------------------------------------------


def info(args: argparse.Namespace) -> int:
    """One fact per line: versions, MLX's default device, the library MLX's cblas_sgemm
    is bound to and how mlxir chose it, the BLAS thread settings."""
    import platform
    from importlib import metadata, util

    from mlxir.runtime.cpu.facts import cpu_facts

    def version(name: str) -> str:
        try:
            return metadata.version(name)
        except metadata.PackageNotFoundError:
            return "unknown"

    print(f"mlxir: {version('mlxir')}")
    print(f"Python: {platform.python_version()} ({sys.executable})")
    print(f"platform: {platform.platform()}")
    try:
        import mlx.core as mx
    except ImportError as error:
        raise CliError(f"mlx is not importable: {error}") from None
    print(f"MLX: {version('mlx')}")
    print(f"MLX default device: {mx.default_device()}")
    from mlxir.runtime.backend import backend_for

    print(f"mlxir backend: {backend_for(mx.default_device()).name}")
    for name, value in cpu_facts():
        print(f"{name}: {value}")
    # The installed version, read without importing torch (seconds, and not needed here).
    torch = version("torch") if util.find_spec("torch") is not None else "not installed"
    print(f"torch: {torch}")
    return 0


# ---------------------------------------------------------------------------
# The command line
# ---------------------------------------------------------------------------


def _version_line() -> str:
    """`mlxir --version`: mlxir's version and MLX's and xDSL's it runs on, read from the
    installed packages (nothing imported)."""
    from importlib.metadata import PackageNotFoundError, version

    def of(name: str) -> str:
        try:
            return version(name)
        except PackageNotFoundError:
            return "not installed"

    return f"mlxir {of('mlxir')} (MLX {of('mlx')}, xDSL {of('xdsl')})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="mlxir", description="PyTorch → MLX compiler")
    parser.add_argument("--version", action="version", version=_version_line())
    sub = parser.add_subparsers(dest="command", required=True)

    demo_parser = sub.add_parser("demo", help="export, compile and run the built-in model")
    demo_parser.add_argument("--seed", type=int, default=0, help="the seed of the built-in Llama's random weights (default 0)")
    demo_parser.add_argument("--print-ir", action="store_true", help="print the mlx-level IR")
    demo_parser.add_argument("--ops", action="store_true", help="print the op counts of each level")
    demo_parser.add_argument("-o", "--output", help="also write the program here")
    demo_parser.add_argument("--new-tokens", type=int, default=16, help="tokens the demo generates (default 16)")
    demo_parser.set_defaults(run=demo)

    compile_parser = sub.add_parser("compile", help="compile a saved ExportedProgram (.pt2)")
    compile_parser.add_argument("input", help="a saved ExportedProgram (torch.export.save), .pt2")
    compile_parser.add_argument("-o", "--output", help="the file to write (the program, or IR with --emit; default: stdout for IR)")
    compile_parser.add_argument("--emit", choices=["aten", "mlx", "program"], default="program",
                                help="aten|mlx: print the IR at that level, each op with its loc(\"node\"(file:line))")
    compile_parser.add_argument("--elide-weights", action="store_true",
                                help="with --emit: print each mlx.global without its value "
                                "(mlxir debug --module binds it from the .pt2)")
    compile_parser.add_argument("-p", "--pipeline", help="mlx-opt pass pipeline (default lower-to-mlx)")
    add_quantize_arguments(compile_parser)
    compile_parser.add_argument("--tensor-parallel", type=int, default=1, metavar="N",
                                help="split the program over N ranks, after lowering and quantizing "
                                "(shard-tensor-parallel; run it with `mlxir run` or mlx.launch)")
    compile_parser.add_argument("--time", action="store_true", help="print the seconds each stage took")
    compile_parser.add_argument(
        "--decompose", choices=["nodes", "program"], default="nodes",
        help="what mlxir has no importer for: decompose those nodes alone (default), or have "
        "torch re-trace and decompose the whole program (seconds; docs/compile-time.md)",
    )
    compile_parser.set_defaults(run=compile_)

    debug_parser = sub.add_parser(
        "debug", help="find where a compiled program stops matching PyTorch: the first node (--bisect: pass)"
    )
    debug_parser.add_argument("input_program", metavar="model.pt2", help="a saved ExportedProgram to compare node by node")
    debug_parser.add_argument("--input", action="append", default=[], help="a .npy file or an integer")
    debug_parser.add_argument("--bisect", action="store_true",
                              help="run the pipeline pass by pass; name the first that changes the outputs")
    debug_parser.add_argument("--all", action="store_true", help="print every compared node's errors")
    debug_parser.add_argument("--repro", metavar="DIR",
                              help="write the diverging node alone as a program, its inputs and the expected value")
    debug_parser.add_argument("-p", "--pipeline", help="mlx-opt pass pipeline (default lower-to-mlx)")
    debug_parser.add_argument("--module", metavar="M.mlir",
                              help="compare this mlx-level module (as `compile --emit mlx` prints it, edited or "
                              "made by your passes) instead of compiling; globals without a value are bound "
                              "from the .pt2 compiled with --pipeline")
    debug_parser.add_argument("--atol", type=float,
                              help="absolute tolerance for every float dtype (default: by dtype, docs in debug/divergence.py)")
    debug_parser.add_argument("--rtol", type=float, help="relative tolerance for every float dtype")
    debug_parser.add_argument("--overlay", metavar="FILE",
                              help="write each node's error as Model Explorer node data (JSON)")
    debug_parser.add_argument("--overlay-metric", default="max_abs_error",
                              choices=OVERLAY_METRICS, help="the error the --overlay colours nodes by")
    debug_parser.set_defaults(run=debug)

    run_parser = sub.add_parser("run", help="run a program on .npy inputs (ints for SymInts)")
    run_parser.add_argument("program", help="a compiled program (.mlxfb or .pte)")
    run_parser.add_argument("--input", action="append", default=[], help="a .npy file or an integer")
    run_parser.add_argument("--output-dir", help="write output_<i>.npy files here")
    add_rank_arguments(run_parser)
    run_parser.set_defaults(run=run)

    inspect_parser = sub.add_parser("inspect", help="describe a program")
    inspect_parser.add_argument("program", help="a compiled program (.mlxfb or .pte)")
    inspect_parser.set_defaults(run=inspect)

    info_parser = sub.add_parser("info", help="versions, device, the BLAS MLX uses, thread settings")
    info_parser.set_defaults(run=info)

    export_parser = sub.add_parser(
        "export-mlxfn",
        help="write a program as MLX's own function file (.mlxfn), loaded without mlxir",
        description=EXPORT_MLXFN_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export_parser.add_argument("program", help="a compiled program (.mlxfb)")
    export_parser.add_argument("-o", "--output", help="the .mlxfn file to write")
    export_parser.add_argument(
        "--shape", action="append", default=[], metavar="SHAPES",
        help="one input signature, e.g. 1x16 or 1x7,1 (repeat for more signatures in the file)",
    )
    export_parser.add_argument(
        "--state", metavar="FILE.safetensors", help="also write the program's initial state values here"
    )
    export_parser.set_defaults(run=export_mlxfn)
    add_generate_parser(sub)
    return parser


def _check_output_folder(output: str | None) -> None:
    """A file to write into a folder that does not exist is the user's to fix, said
    before any work (not after a whole compile)."""
    if output and output != "-" and not Path(output).parent.is_dir():
        raise CliError(f"cannot write '{output}': the folder '{Path(output).parent}' does not exist")


def main_with(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from mlxir.codegen.errors import ProgramError
    from mlxir.runtime.program import InputError

    try:
        _check_output_folder(getattr(args, "output", None))
        return args.run(args)
    except BrokenPipeError:
        # The reader went away (`mlxir inspect m.mlxfb | head`): not an error of ours.
        # Point stdout at /dev/null so Python's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, as a shell tool killed by the signal reports
    except UsageError as error:
        _fail(str(error))
        return 2
    except (CliError, ProgramError, InputError) as error:
        return _fail(str(error))
    except Exception as error:
        from xdsl.utils.exceptions import DiagnosticException

        if isinstance(error, DiagnosticException) or _is_import_error(error):
            return _fail(str(error))
        if os.environ.get("MLXIR_TRACEBACK"):
            raise
        return _fail(
            f"internal error: {type(error).__name__}: {error} "
            "(set MLXIR_TRACEBACK=1 for the traceback and please report it)"
        )


def _is_import_error(error: Exception) -> bool:
    """An importer error, told without importing the importer (it imports torch, which
    `mlxir generate` from a cached program never needs)."""
    importer = sys.modules.get("mlxir.conversions.torch_to_aten")
    return importer is not None and isinstance(error, importer.ImportError_)


def _fail(message: str) -> int:
    print(f"mlxir: error: {message}", file=sys.stderr)
    return 1


def main() -> None:
    sys.exit(main_with())


# ---------------------------------------------------------------------------
# generate (mlxir.tools.llm)
# ---------------------------------------------------------------------------


DEFAULT_PROMPT = "hello"
"""mlx_lm.generate's prompt when none is given."""


def _check_generate_arguments(args: argparse.Namespace) -> None:
    """Every value `generate` takes, checked before anything is loaded or compiled
    (a `UsageError` names the flag and what it accepts)."""
    checks = [
        (args.max_tokens >= -1, f"--max-tokens must be -1 (until an end-of-sequence token) or at least 0, not {args.max_tokens}"),
        (args.temp >= 0, f"--temp must be 0 (greedy) or positive, not {args.temp}"),
        (0 < args.top_p <= 1, f"--top-p must be in (0, 1], not {args.top_p}"),
        (0 <= args.min_p <= 1, f"--min-p must be in [0, 1], not {args.min_p}"),
        (args.top_k >= 0, f"--top-k must be 0 (all tokens) or positive, not {args.top_k}"),
    ]
    for holds, message in checks:
        if not holds:
            raise UsageError(message)
    if args.prompt is not None and args.ids is not None:
        raise UsageError("give a prompt (--prompt/-p) or token ids (--ids), not both")
    if args.extra_eos_token and args.ids is not None:
        raise UsageError("--extra-eos-token takes token text: with --ids, give --eos ID")
    if args.num_draft_tokens < 1:
        raise UsageError(f"--num-draft-tokens must be at least 1, not {args.num_draft_tokens}")
    if args.draft_model is not None:
        if args.temp > 0 or args.top_k or args.top_p < 1 or args.min_p > 0:
            raise UsageError("--draft-model decodes greedily here: drop --temp/--top-k/--top-p/--min-p")
        if args.ids is not None:
            raise UsageError("--draft-model takes a text prompt (--prompt), not --ids")
    if args.max_kv_size is not None:
        from mlxir.tools.llm.generation import ROTATING_KEEP

        if args.max_kv_size <= ROTATING_KEEP:
            raise UsageError(f"--max-kv-size must be more than the {ROTATING_KEEP} first tokens it keeps, not {args.max_kv_size}")
        if args.draft_model is not None or args.prompt_cache_file is not None or args.ids is not None:
            raise UsageError("--max-kv-size goes with a text prompt, without --draft-model, --prompt-cache-file or --ids")
    if args.kv_bits is not None:
        from mlxir.tools.llm.kv_quantization import KV_BITS, KV_GROUP_SIZES

        if args.kv_bits not in KV_BITS or args.kv_group_size not in KV_GROUP_SIZES:
            raise UsageError(
                f"--kv-bits takes {', '.join(map(str, KV_BITS))} and --kv-group-size "
                f"{', '.join(map(str, KV_GROUP_SIZES))}, not {args.kv_bits} and {args.kv_group_size}"
            )
        if args.max_kv_size is not None or args.draft_model is not None or args.prompt_cache_file is not None:
            raise UsageError("--kv-bits goes without --max-kv-size, --draft-model and --prompt-cache-file")
    if args.prompt_cache_file is not None:
        if not Path(args.prompt_cache_file).is_file():
            raise CliError(f"'{args.prompt_cache_file}': no such prompt cache file")
        if args.draft_model is not None or args.ids is not None:
            raise UsageError("--prompt-cache-file goes with a text prompt, without --draft-model or --ids")
    model = args.model or args.program or _prompt_cache_model(args)
    if not model:
        raise UsageError("generate needs --model (a save_pretrained folder or a compiled .mlxfb)")
    for given in (model, args.draft_model):
        if given is not None and not Path(given).exists():
            raise CliError(f"'{given}': no such folder or program")


def _prompt_cache_model(args: argparse.Namespace) -> str | None:
    """The model a `--prompt-cache-file` was made with (mlx_lm's default for --model)."""
    if getattr(args, "prompt_cache_file", None) is None:
        return None
    from mlxir.tools.llm.prompt_cache import PromptCache, PromptCacheError

    try:
        return PromptCache.load(args.prompt_cache_file).model or None
    except PromptCacheError as error:
        raise CliError(str(error)) from None


def generate(args: argparse.Namespace) -> int:
    """Generates with an LLM, mlx-lm style: a prompt in, text streamed to stdout, the
    speeds and peak memory on stderr (unless `--verbose False`); or token ids in and
    out with `--ids`."""
    _check_generate_arguments(args)
    _check_rank_arguments(args)
    from mlxir.tools import llm
    from mlxir.tools.launch import in_a_rank

    model = args.model or args.program or _prompt_cache_model(args)
    assert model is not None  # checked above
    if args.tensor_parallel > 1:
        if any(given is not None for given in (args.draft_model, args.prompt_cache_file, args.max_kv_size)):
            raise UsageError("--tensor-parallel goes without --draft-model, --prompt-cache-file and --max-kv-size")
        if not Path(model).is_dir():
            raise UsageError("--tensor-parallel takes a save_pretrained folder (--model FOLDER)")
        if args.no_cache:
            raise UsageError("--tensor-parallel reads the split program from the cache: drop --no-cache")
        if not in_a_rank():
            try:  # compiled once, here; every rank reads it from the cache
                llm.compile_split(model, args.tensor_parallel, quantize=_quantize_option(args))
            except (FileNotFoundError, ValueError) as error:
                raise CliError(str(error)) from None
            return _start_ranks(args, args.tensor_parallel)
    if args.ids is not None:
        return _generate_ids(args, model)
    prompt = DEFAULT_PROMPT if args.prompt is None else sys.stdin.read() if args.prompt == "-" else args.prompt
    path = Path(model)
    if path.is_file() and args.tokenizer is None:
        raise CliError(f"'{model}' is a compiled program: give its tokenizer's folder with --tokenizer")
    speculative = args.draft_model is not None
    try:
        compiled, tokenizer = llm.load(
            model,
            tokenizer=args.tokenizer,
            use_cache=not args.no_cache,
            quantize=_quantize_option(args),
            logits="all" if speculative else "last",
            positions=args.max_kv_size is not None,
            tensor_parallel=args.tensor_parallel,
        )
        draft = (
            llm.load(args.draft_model, tokenizer=args.tokenizer or model, use_cache=not args.no_cache)[0]
            if speculative
            else None
        )
    except (FileNotFoundError, ValueError) as error:
        raise CliError(str(error)) from None
    from mlxir.tools.llm.prompt_cache import PromptCache, PromptCacheError
    from mlxir.tools.llm.speculative import SpeculativeStats

    prompt_cache = None
    if args.prompt_cache_file is not None:
        try:
            prompt_cache = PromptCache.load(args.prompt_cache_file)
            prompt_cache.check(compiled)
        except PromptCacheError as error:
            raise CliError(str(error)) from None
    draft_stats = SpeculativeStats()
    extra_eos: list[int] = []
    for text in args.extra_eos_token:
        ids = tokenizer.encode(text, add_special_tokens=False)
        if len(ids) != 1:
            raise CliError(f"--extra-eos-token {text!r} is {len(ids)} tokens for this tokenizer, not one")
        extra_eos.append(ids[0])
    stats = llm.GenerationStats()
    try:
        pieces = llm.stream_generate(
            compiled,
            tokenizer,
            prompt,
            max_tokens=args.max_tokens,
            temp=args.temp,
            top_k=args.top_k,
            top_p=args.top_p,
            min_p=args.min_p,
            seed=args.seed,
            ignore_eos=args.ignore_eos,
            extra_eos_tokens=extra_eos,
            system_prompt=args.system_prompt,
            chat_template=not args.ignore_chat_template,
            stats=stats,
            draft=draft,
            num_draft_tokens=args.num_draft_tokens,
            draft_stats=draft_stats,
            prompt_cache=prompt_cache,
            max_kv_size=args.max_kv_size,
            kv_bits=args.kv_bits,
            kv_group_size=args.kv_group_size,
        )
        if args.verbose:
            print("==========", file=sys.stderr)
        for piece in pieces:
            sys.stdout.write(piece)
            sys.stdout.flush()
    except ValueError as error:  # the prompt (empty, or longer than the context)
        raise CliError(str(error)) from None
    sys.stdout.write("\n")
    context = compiled.context_limit
    if stats.finish_reason == "context" and context is not None:
        print(f"mlxir: note: stopped at the end of the model's context ({context} tokens)", file=sys.stderr)
    if args.verbose:
        print("==========", file=sys.stderr)
        print(f"Prompt: {stats.prompt_tokens} tokens, {stats.prompt_tps:.3f} tokens-per-sec", file=sys.stderr)
        print(
            f"Generation: {stats.generation_tokens} tokens, {stats.generation_tps:.3f} tokens-per-sec",
            file=sys.stderr,
        )
        if speculative:
            print(
                f"Draft: {draft_stats.drafted} tokens proposed, {draft_stats.accepted} accepted "
                f"({100 * draft_stats.acceptance:.1f} %), {draft_stats.main_calls} calls of the main model",
                file=sys.stderr,
            )
        print(f"Peak memory: {stats.peak_memory / 1e9:.3f} GB", file=sys.stderr)
    return 0


def cache_prompt(args: argparse.Namespace) -> int:
    """Reads a prompt once and saves the model's cache after it (mlx_lm.cache_prompt):
    `generate --prompt-cache-file` then reads only what follows. The prompt is encoded
    as text (the tokenizer's special tokens, no chat template)."""
    model = args.model or args.program
    if not model:
        raise UsageError("cache-prompt needs --model (a save_pretrained folder or a compiled .mlxfb)")
    if not Path(model).exists():
        raise CliError(f"'{model}': no such folder or program")
    target = Path(args.prompt_cache_file)
    if not target.parent.is_dir():
        raise CliError(f"cannot write '{target}': the folder '{target.parent}' does not exist")
    text = sys.stdin.read() if args.prompt == "-" else args.prompt
    from mlxir.tools import llm
    from mlxir.tools.llm.prompt_cache import PromptCacheError, make_prompt_cache

    try:
        compiled, tokenizer = llm.load(model, tokenizer=args.tokenizer, use_cache=not args.no_cache)
        cache = make_prompt_cache(compiled, tokenizer.encode(text), model=str(Path(model).resolve()))
    except (FileNotFoundError, ValueError, PromptCacheError) as error:
        raise CliError(str(error)) from None
    cache.save(target)
    print(f"cached {len(cache.tokens)} prompt tokens in {target}", file=sys.stderr)
    return 0


def _flag(text: str) -> bool:
    """mlx_lm.generate's `--verbose` values: anything but false/f (any case) is true."""
    return text.lower() not in ("false", "f")


def _generate_ids(args: argparse.Namespace, model: str) -> int:
    """Token ids in, token ids out, from a compiled step program."""
    import numpy as np

    from mlxir.tools import llm

    try:
        ids = np.array([[int(t) for t in args.ids.replace(",", " ").split()]], dtype=np.int64)
    except ValueError:
        raise CliError(f"--ids must be integers separated by commas or spaces, got '{args.ids}'") from None
    if ids.size == 0:
        raise CliError("--ids needs at least one token id")
    if not Path(model).is_file():
        raise CliError(f"--ids runs a compiled .mlxfb; '{model}' is not a file")
    if args.quantize is not None:
        raise CliError(f"'{model}' is already compiled: --quantize applies when compiling a folder")
    program = _load_program(model)
    try:
        compiled = llm.CompiledLLM.from_program(program)
    except ValueError as error:
        raise CliError(f"{model}: {error}") from None
    times: list[float] = []
    start = time.perf_counter()
    out = llm.generate(
        compiled,
        ids,
        max_new_tokens=args.max_tokens,
        do_sample=args.temp > 0,
        temperature=args.temp if args.temp > 0 else 1.0,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        eos_token_id=None if args.ignore_eos else args.eos,
        on_token=lambda _: times.append(time.perf_counter()),
    )
    print(" ".join(str(int(t)) for t in out[0, ids.shape[1] :]))
    if times:
        decode = np.diff([start, *times])
        rest = f", decode {1e3 * float(np.median(decode[1:])):.2f} ms/token" if len(times) > 1 else ""
        print(f"{len(times)} tokens: prefill {1e3 * float(decode[0]):.1f} ms{rest}", file=sys.stderr)
    return 0


def add_rank_arguments(parser: argparse.ArgumentParser) -> None:
    ranks = parser.add_argument_group("one program over several ranks (docs/distributed.md)")
    ranks.add_argument("--tensor-parallel", type=int, default=1, metavar="N",
                       help="split the model over N ranks (shard-tensor-parallel) and start them here, on "
                       "127.0.0.1 (default 1: one process)")
    ranks.add_argument("--backend", choices=["ring", "mpi"], default="ring",
                       help="mx.distributed's backend for the ranks (default ring; mpi needs Open MPI's mpirun)")
    ranks.add_argument("--hostfile", metavar="FILE",
                       help="start the ranks on the hosts of this MLX hostfile with mlx.launch instead "
                       "(one rank per host; the program must be at the same path on each)")
    ranks.add_argument("--rank-timeout", type=float, default=3600.0, metavar="S",
                       help="end every rank after S seconds (default 3600)")


def _start_ranks(args: argparse.Namespace, ranks: int) -> int:
    """Runs this same command as `ranks` ranks, rank 0 printing; returns the launch's
    status (non-zero, with the failing rank named, if any rank fails)."""
    from mlxir.tools.launch import hostfile_command, launch

    command = [sys.executable, "-c", "from mlxir.tools.mlxir_cli import main; main()", *sys.argv[1:]]
    where = f"the hosts of {args.hostfile}" if args.hostfile else f"127.0.0.1 ({args.backend})"
    print(f"mlxir: running on {ranks} ranks, {where}", file=sys.stderr, flush=True)
    if args.hostfile:
        return subprocess.run(hostfile_command(args.hostfile, command, args.backend), stdin=subprocess.DEVNULL).returncode
    return launch(command, ranks, timeout=args.rank_timeout, backend=args.backend)


def _check_rank_arguments(args: argparse.Namespace) -> None:
    if args.tensor_parallel < 1:
        raise UsageError(f"--tensor-parallel must be at least 1, not {args.tensor_parallel}")
    if args.rank_timeout <= 0:
        raise UsageError(f"--rank-timeout must be positive, not {args.rank_timeout}")
    if args.hostfile is not None and not Path(args.hostfile).is_file():
        raise CliError(f"'{args.hostfile}': no such hostfile")


def add_generate_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "generate",
        help="generate text with an LLM (a save_pretrained folder, compiled and cached on first use)",
        description="mlx_lm.generate's flags, same names and meanings, on mlxir's compiled programs",
    )
    parser.add_argument("program", nargs="?", help="same as --model")
    parser.add_argument("--model", help="a save_pretrained folder, or a compiled .mlxfb (with --tokenizer)")
    parser.add_argument("--tokenizer", help="the folder of the tokenizer (default: the model's folder)")
    parser.add_argument("--prompt", "-p", help=f"the prompt text; '-' reads it from stdin (default {DEFAULT_PROMPT!r})")
    parser.add_argument("--ids", help="prompt token ids instead of text, e.g. 1,15,27 (prints ids)")
    parser.add_argument("--max-tokens", "-m", "--max-new-tokens", type=int, default=100, dest="max_tokens",
                        help="the most tokens to generate; -1: until an end-of-sequence token (default 100)")
    parser.add_argument("--temp", "--temperature", type=float, default=0.0, dest="temp",
                        help="sampling temperature; 0 is greedy (default)")
    parser.add_argument("--top-k", type=int, default=0, help="sample from the k most likely tokens (0: all)")
    parser.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass, in (0, 1] (default 1)")
    parser.add_argument("--min-p", type=float, default=0.0,
                        help="drop tokens less likely than min-p times the most likely one, in [0, 1] (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="the sampling seed (default 0)")
    parser.add_argument("--ignore-eos", action="store_true", help="do not stop at end-of-sequence tokens")
    parser.add_argument("--extra-eos-token", nargs="+", default=[], metavar="TOKEN",
                        help="more tokens (as text) that end the generation")
    parser.add_argument("--eos", type=int, help="with --ids: stop at this token id")
    parser.add_argument("--system-prompt", help="a system message for the chat template")
    parser.add_argument("--ignore-chat-template", action="store_true",
                        help="feed the prompt as plain text even when the tokenizer has a chat template")
    parser.add_argument("--verbose", type=_flag, default=True, metavar="BOOL",
                        help="print the speeds and peak memory (default True; False prints the text only)")
    parser.add_argument("--draft-model", metavar="FOLDER",
                        help="a smaller model of the same vocabulary for speculative decoding (greedy; "
                        "the same tokens as without it)")
    parser.add_argument("--num-draft-tokens", type=int, default=3,
                        help="tokens the draft model proposes at a time (default 3)")
    parser.add_argument("--max-kv-size", type=int, metavar="N",
                        help="a rotating cache of N tokens (the first 4 kept, as mlx-lm's): generation goes on "
                        "past the model's context")
    parser.add_argument("--kv-bits", type=int, metavar="BITS",
                        help="hold the KV cache quantized to BITS bits between steps (default: not quantized)")
    parser.add_argument("--kv-group-size", type=int, default=64, help="with --kv-bits: 32, 64 or 128 (default 64)")
    parser.add_argument("--prompt-cache-file", metavar="FILE",
                        help="continue from a prompt cached by `mlxir cache-prompt` (the prompt's text follows it; "
                        "--model defaults to the cache's)")
    parser.add_argument("--no-cache", action="store_true", help="compile without reading or writing the cache")
    add_quantize_arguments(parser)
    add_rank_arguments(parser)
    parser.set_defaults(run=generate)

    cache_parser = sub.add_parser(
        "cache-prompt",
        help="compute a prompt's cache once and save it, for generate --prompt-cache-file (mlx_lm.cache_prompt)",
    )
    cache_parser.add_argument("program", nargs="?", help="same as --model")
    cache_parser.add_argument("--model", help="a save_pretrained folder, or a compiled .mlxfb (with --tokenizer)")
    cache_parser.add_argument("--tokenizer", help="the folder of the tokenizer (default: the model's folder)")
    cache_parser.add_argument("--prompt", "-p", default="-", help="the prompt text; '-' reads it from stdin (default)")
    cache_parser.add_argument("--prompt-cache-file", required=True, metavar="FILE", help="the file to write")
    cache_parser.add_argument("--no-cache", action="store_true", help="compile without reading or writing the cache")
    cache_parser.set_defaults(run=cache_prompt)
