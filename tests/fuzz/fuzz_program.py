"""Fuzzes the program loader and the runtime with mutated real programs.

    .venv/bin/python tests/fuzz/fuzz_program.py --minutes 10       # the long run
    .venv/bin/python tests/fuzz/fuzz_program.py --cases 2000       # a fixed number
    .venv/bin/python tests/fuzz/fuzz_program.py --replay FILE      # one saved input

Each case takes a program of the corpus (`tests/fuzz/corpus`, see `make_corpus.py`)
and applies one to four mutations, either to the bytes (bit flips, bytes, 32/64-bit
words set to extremes, copied, inserted or deleted spans, truncation) or to the
program's IR (`deserialize`, change an integer or float property, rewire an operand,
change a result type or a constant's values, `serialize(verify=False)`): the second
kind gives well-formed programs that lie about their types, which is what a runtime
must survive. Then, in this process and under a time bound:

- `mlxir.load` either returns a program or raises `ProgramError`, nothing else;
- `deserialize` likewise;
- a program that loads is called with inputs that match its signature: it returns,
  or raises `InputError`, or a `RuntimeError` whose message starts with the failing
  op's name; a failed call leaves the program's state exactly as it was.

Anything else (another exception, a case over its time bound) is a finding. The long
run executes the cases in a worker process that reports each case before running it,
so a crash of the process itself (a segfault in a native library) is caught too:
the input is saved under `tests/fuzz/findings/` and the worker restarted.

`pytest tests/test_fuzz.py` runs a short, derandomized smoke run of the same checks
through hypothesis (`smoke_cases`).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import math
import os
import random
import re
import select
import signal
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
FINDINGS = HERE / "findings"
CASE_SECONDS = 10.0
"""The time bound of one case (load, deserialize, one call)."""

WORKER_MEMORY_BYTES = 8 * 2**30
"""The address-space limit of the long run's worker process."""

Mutation = tuple[int, int, int]
"""(kind, a, b): what `mutate` does with it depends on the kind (see `_MUTATORS`)."""

INT32_EXTREMES = (0, 1, 2, 3, 0xFF, 0xFFFF, 0x7FFFFFFF, 0x80000000, 0xFFFFFFFF, 0xFFFFFFFE, 64)
INT64_EXTREMES = (
    0,
    1,
    -1,
    2,
    7,
    2**31 - 1,
    2**31,
    2**32,
    2**62,
    2**63 - 1,
    -(2**63),
    -(2**31),
    10**9,
    1 << 20,
)
PROP_INTS = (0, 1, -1, 2, -2, 3, 5, 8, 64, 1 << 20, 2**31 - 1, 2**31, -(2**31), 2**62, -(2**63), 2**63 - 1)
FLOATS = (0.0, -0.0, 1.0, -1.0, 1e-30, 1e30, math.inf, -math.inf, math.nan, 3.5, 65504.0)


@cache
def corpus() -> tuple[tuple[str, bytes], ...]:
    """The corpus programs, by file name, sorted."""
    files = sorted(CORPUS.glob("*.mlxfb"))
    if not files:
        raise SystemExit(f"no corpus in {CORPUS}: run tests/fuzz/make_corpus.py")
    return tuple((p.name, p.read_bytes()) for p in files)


# --------------------------------------------------------------------------- mutations


def _bytes_mutation(data: bytearray, kind: int, a: int, b: int) -> bytearray:
    n = len(data)
    if n == 0:
        return data
    if kind == 0:  # flip a bit
        data[a % n] ^= 1 << (b % 8)
    elif kind == 1:  # set a byte
        data[a % n] = b % 256
    elif kind == 2 and n >= 4:  # a 32-bit word (offset, length, count, index) to an extreme
        i = a % (n - 3)
        value = INT32_EXTREMES[b % len(INT32_EXTREMES)] if b % 3 else b % 2**32
        data[i : i + 4] = value.to_bytes(4, "little")
    elif kind == 3 and n >= 8:  # an aligned 64-bit word (int64 values, shapes)
        i = (a % (n - 7)) & ~7
        data[i : i + 8] = INT64_EXTREMES[b % len(INT64_EXTREMES)].to_bytes(8, "little", signed=True)
    elif kind == 4:  # a 32-bit word nudged by a small amount
        i = a % max(n - 3, 1)
        word = int.from_bytes(data[i : i + 4].ljust(4, b"\0"), "little")
        word = (word + (b % 17) - 8) % 2**32
        data[i : i + 4] = word.to_bytes(4, "little")[: len(data[i : i + 4])]
    elif kind == 5:  # a span copied over another (same size)
        i, j, length = a % n, b % n, 1 + (a >> 8) % 32
        chunk = data[j : j + length]
        data[i : i + len(chunk)] = chunk
        del data[n:]
    elif kind == 6:  # truncated
        del data[a % n :]
    elif kind == 7:  # bytes inserted (everything after moves)
        data[a % n : a % n] = bytes([b % 256]) * (1 + (b >> 8) % 16)
    elif kind == 8:  # a span deleted
        del data[a % n : a % n + 1 + b % 16]
    elif kind == 9:  # a character of the signature's JSON text (the FlatBuffer stays whole)
        start = data.find(SIGNATURE_START)
        if start >= 0:
            end = data.find(b"\0", start)
            i = start + a % max(end - start, 1)
            data[i] = SIGNATURE_CHARS[b % len(SIGNATURE_CHARS)]
    return data


SIGNATURE_START = b'{"inputs":'
SIGNATURE_CHARS = b'{}[]":,*0123456789-.eE akindchrtpslvuyfwo\\'
"""What the signature mutation writes: JSON's syntax and the letters of its field names
and kinds, so that many mutants still parse and reach the signature's own checks."""

BYTE_KINDS = 10
IR_KINDS = 5


def _ir_mutation(data: bytes, kind: int, a: int, b: int) -> bytes | None:
    """A well-formed program with one lie in its IR; None when the mutation does not
    apply (or `data` is not a valid program any more)."""
    from xdsl.dialects.builtin import (
        DenseArrayBase,
        FloatAttr,
        IntegerAttr,
        IntegerType,
        TensorType,
    )
    from xdsl.dialects.func import FuncOp, ReturnOp

    from mlxir.codegen import ProgramError, deserialize, serialize
    from mlxir.dialects.mlx import GlobalOp
    from mlxir.dialects.weights import dense_of, weights_of
    from mlxir.support import dtypes

    try:
        module = deserialize(data)
    except ProgramError:
        return None
    func = next(op for op in module.ops if isinstance(op, FuncOp))
    ops = [op for op in func.body.block.ops if not isinstance(op, ReturnOp)]
    if not ops:
        return None
    op = ops[a % len(ops)]
    rng = random.Random(b)
    if kind == 0:  # an integer property (axes, shapes, starts, k, predicate, ...)
        names = [
            n
            for n, v in op.properties.items()
            if isinstance(v, IntegerAttr) or (isinstance(v, DenseArrayBase) and isinstance(v.elt_type, IntegerType))
        ]
        if not names:
            return None
        name = rng.choice(names)
        attr = op.properties[name]
        new = rng.choice(PROP_INTS)
        if isinstance(attr, IntegerAttr):
            width = getattr(attr.type, "width", None)
            bits = width.data if width is not None else 64
            if not -(2 ** (bits - 1)) <= new < 2**bits:
                new = rng.choice((0, 1, -1))
            if bits == 1:
                new = new & 1
            op.properties[name] = IntegerAttr(new, attr.type)
        else:
            values = list(attr.get_values())  # type: ignore[union-attr]
            if values and rng.random() < 0.8:
                values[rng.randrange(len(values))] = new
            elif rng.random() < 0.5:
                values.append(new)
            elif values:
                values.pop(rng.randrange(len(values)))
            bits = attr.elt_type.width.data  # type: ignore[union-attr]
            values = [v if -(2 ** (bits - 1)) <= v < 2 ** (bits - 1) else 0 for v in values]
            op.properties[name] = DenseArrayBase.from_list(attr.elt_type, values)  # type: ignore[arg-type]
    elif kind == 1:  # a float property (eps, scale, alpha, a full value)
        names = [n for n, v in op.properties.items() if isinstance(v, FloatAttr)]
        if not names:
            return None
        name = rng.choice(names)
        op.properties[name] = FloatAttr(rng.choice(FLOATS), op.properties[name].type)  # type: ignore[arg-type]
    elif kind == 2:  # an operand rewired to another value defined before the op
        if not op.operands:
            return None
        index = ops.index(op)
        candidates = list(func.body.block.args) + [r for o in ops[:index] for r in o.results]
        if not candidates:
            return None
        op.operands[rng.randrange(len(op.operands))] = rng.choice(candidates)
    elif kind == 3:  # a result type that lies (dims, rank or element type)
        if not op.results:
            return None
        result = op.results[rng.randrange(len(op.results))]
        old = result.type
        if isinstance(old, TensorType):
            shape = list(old.get_shape())
            choice = rng.randrange(4)
            if choice == 0 and shape:
                shape[rng.randrange(len(shape))] = rng.choice((0, 1, 2, 3, 7, 1 << 20, 2**31 - 1, -1))
            elif choice == 1:
                shape.append(rng.choice((1, 2, 3)))
            elif choice == 2 and shape:
                shape.pop()
            element = old.element_type
            if choice == 3:
                element = rng.choice([d.ir for d in dtypes.BY_NAME.values() if d.name != "index"])
            result._type = TensorType(element, shape)  # type: ignore[attr-defined]
        else:
            return None
    elif kind == 4:  # a constant's values set to extremes (indices out of range, NaN)
        globals_ = {
            g.sym_name.data: g
            for g in module.ops
            if isinstance(g, GlobalOp) and g.value is not None and 0 not in g.type.get_shape()
        }
        if not globals_:
            return None
        name = rng.choice(sorted(globals_))
        target = globals_[name]
        array = np.array(weights_of(module)[name])
        flat = array.reshape(-1)
        for _ in range(1 + rng.randrange(3)):
            i = rng.randrange(flat.size)
            if flat.dtype.kind in "iu":
                info = np.iinfo(flat.dtype)
                flat[i] = rng.choice([info.min, info.max, 0, 1, -1 if info.min < 0 else 0, info.max // 2])
            elif flat.dtype.kind == "b":
                flat[i] = not flat[i]
            else:
                flat[i] = rng.choice(FLOATS)
        target.properties["value"] = dense_of(array, target.type, name)
    try:
        return serialize(module, verify=False)
    except Exception:  # the serializer takes compiler output, not lies: skip this one
        return None


def mutate(data: bytes, mutations: Sequence[Mutation]) -> bytes:
    """`data` with `mutations` applied in order (IR mutations that do not apply are
    skipped)."""
    out = bytearray(data)
    for kind, a, b in mutations:
        kind %= BYTE_KINDS + IR_KINDS
        if kind < BYTE_KINDS:
            out = _bytes_mutation(out, kind, a, b)
        else:
            mutated = _ir_mutation(bytes(out), kind - BYTE_KINDS, a, b)
            if mutated is not None:
                out = bytearray(mutated)
    return bytes(out)


@dataclass(frozen=True)
class Case:
    """One fuzz input: a corpus program and the mutations to apply."""

    program: int
    """Index into `corpus()`."""
    mutations: tuple[Mutation, ...]
    input_seed: int = 0

    def data(self) -> bytes:
        return mutate(corpus()[self.program % len(corpus())][1], self.mutations)

    def describe(self) -> str:
        name = corpus()[self.program % len(corpus())][0]
        return f"{name} {list(self.mutations)} inputs={self.input_seed}"


def random_case(rng: random.Random) -> Case:
    mutations = []
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3, 4))):
        # Half the cases lie in the IR: they load, so the runtime is exercised.
        kind = rng.randrange(BYTE_KINDS) if rng.random() < 0.5 else BYTE_KINDS + rng.randrange(IR_KINDS)
        mutations.append((kind, rng.randrange(2**32), rng.randrange(2**32)))
    return Case(rng.randrange(len(corpus())), tuple(mutations), rng.randrange(2**16))


# --------------------------------------------------------------------------- one case


class CaseTimeout(BaseException):
    """The case ran past its time bound (a BaseException: no `except Exception` in the
    code under test can swallow it)."""


@contextlib.contextmanager
def time_bound(seconds: float) -> Iterator[None]:
    """Raises `CaseTimeout` in the main thread after `seconds` (Python code only: a
    native call that never returns is caught by the worker's watchdog instead)."""
    if seconds <= 0 or sys.platform == "win32":
        yield
        return

    def expire(signum: int, frame: Any) -> None:
        raise CaseTimeout(f"over {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


MAX_INPUT_ELEMENTS = 1 << 16


class Unrunnable(Exception):
    """The program loads but declares an input too big to make."""


class Finding(AssertionError):
    """A case broke the contract."""


_OP_ERROR = re.compile(r"^(mlx|arith)\.\w+( \(.*?\))? failed: ")


def make_inputs(program: Any, seed: int) -> list[Any]:
    """Inputs that match `program`'s signature: static dims as declared, dynamic dims
    small values inside their recorded ranges, derived dims evaluated."""
    import mlx.core as mx

    from mlxir.runtime.inputs import evaluate_size

    rng = np.random.default_rng(seed)
    bindings: dict[str, int] = {}
    ranges = program.info.symbol_ranges
    for spec in program.inputs:
        for expr in spec.dims:
            if expr.isidentifier() and expr not in bindings:
                lo, hi = ranges.get(expr, (1, -1))
                lo = max(lo, 1)
                hi = lo + 3 if hi < 0 else min(hi, lo + 3)
                bindings[expr] = int(rng.integers(lo, max(hi, lo) + 1))
    inputs: list[Any] = []
    for spec in program.inputs:
        if spec.dtype == "index":
            value = bindings.get(spec.dims[0]) if spec.dims and spec.dims[0] else None
            inputs.append(int(rng.integers(0, 4)) if value is None else value)
            continue
        shape = []
        for axis, dim in enumerate(spec.shape):
            if dim is None:
                expr = spec.dims[axis] if axis < len(spec.dims) else ""
                value = evaluate_size(expr, bindings) if expr else None
                dim = value if value is not None and 0 <= value <= 64 else 2
            shape.append(dim)
        if math.prod(shape) > MAX_INPUT_ELEMENTS:
            raise Unrunnable(f"input '{spec.name}' of shape {shape}")
        if spec.dtype == "bool":
            array = mx.array(rng.random(shape) < 0.5)
        elif spec.dtype in ("float32", "float16", "bfloat16"):
            array = mx.array(rng.standard_normal(shape).astype(np.float32)).astype(getattr(mx, spec.dtype))
        else:
            array = mx.array(rng.integers(0, 2, shape)).astype(getattr(mx, spec.dtype))
        inputs.append(array)
    return inputs


def run_case(data: bytes, input_seed: int = 0, seconds: float = CASE_SECONDS) -> str:
    """Checks one input; returns its outcome ("rejected", "input-error", "kernel-error",
    "ran", or "unrunnable" for a program whose inputs are too big to make) or raises
    `Finding`."""
    import mlxir
    from mlxir.codegen import deserialize
    from mlxir.runtime.signature import nest_inputs

    try:
        with time_bound(seconds):
            try:
                program = mlxir.load(data)
            except mlxir.ProgramError:
                return "rejected"
            try:
                deserialize(data)
            except mlxir.ProgramError:
                pass
            try:
                inputs = make_inputs(program, input_seed)
            except Unrunnable:
                return "unrunnable"
            before = program.state
            try:
                if program.signature is None:
                    program(*inputs)
                else:  # called as its module was, the signature nesting the inputs
                    args, kwargs = nest_inputs(program.signature, inputs)
                    program(*args, **kwargs)
            except mlxir.InputError:
                outcome = "input-error"
            except RuntimeError as error:
                if not _OP_ERROR.match(str(error)):
                    raise Finding(f"a kernel error that does not name its op: {error!r}") from error
                outcome = "kernel-error"
            else:
                return "ran"
            after = program.state
            if after.keys() != before.keys() or any(after[k] is not before[k] for k in before):
                raise Finding("a failed call changed the program's state")
            return outcome
    except Finding:
        raise
    except CaseTimeout as timeout:
        raise Finding(f"timeout: {timeout}") from None
    except Exception as error:
        raise Finding(f"{type(error).__name__}: {error}") from error


# --------------------------------------------------------------------------- runs


@dataclass
class Report:
    cases: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    findings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        return (
            f"{self.cases} cases in {self.seconds:.0f} s ({outcomes}); "
            f"{len(self.findings)} findings"
        )


def _case(seed: int, i: int) -> Case:
    return random_case(random.Random(f"{seed}:{i}"))


def _save(case: Case, kind: str, message: str) -> Path:
    FINDINGS.mkdir(exist_ok=True)
    stem = f"{kind}-{abs(hash((case.program, case.mutations))) % 10**8:08d}"
    path = FINDINGS / f"{stem}.mlxfb"
    path.write_bytes(case.data())
    (FINDINGS / f"{stem}.txt").write_text(f"{case.describe()}\n{message}\n")
    return path


def _worker(seed: int, start: int, deadline: float, limit: int | None, seconds: float) -> None:
    """Runs cases `start`, `start + 1`, ... announcing each on stdout before it runs."""
    import warnings

    warnings.simplefilter("ignore")
    if WORKER_MEMORY_BYTES and sys.platform == "linux":
        # A program may ask for any amount of memory: the worker, not the machine, fails.
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (WORKER_MEMORY_BYTES, WORKER_MEMORY_BYTES))
    out = sys.stdout
    i = start
    while time.time() < deadline and (limit is None or i < limit):
        case = _case(seed, i)
        out.write(f"CASE {i}\n")
        out.flush()
        try:
            outcome = run_case(case.data(), case.input_seed, seconds)
        except Finding as finding:
            out.write(f"FINDING {i} {json.dumps(str(finding))}\n")
        else:
            out.write(f"OUTCOME {i} {outcome}\n")
        out.flush()
        i += 1
    out.write("DONE\n")
    out.flush()


def fuzz(
    seconds: float | None = None,
    cases: int | None = None,
    seed: int = 0,
    case_seconds: float = CASE_SECONDS,
    quiet: bool = False,
) -> Report:
    """The long run: cases in a worker process, restarted after a crash or a hang."""
    report = Report()
    start = time.time()
    deadline = start + seconds if seconds is not None else math.inf
    i = 0
    finished = False
    while not finished and time.time() < deadline and (cases is None or i < cases):
        command = [
            sys.executable,
            __file__,
            "--worker",
            f"--seed={seed}",
            f"--start={i}",
            f"--deadline={deadline if math.isfinite(deadline) else 0}",
            f"--case-seconds={case_seconds}",
        ]
        if cases is not None:
            command.append(f"--cases={cases}")
        worker = subprocess.Popen(command, stdout=subprocess.PIPE, text=True, bufsize=1)
        assert worker.stdout is not None
        current: int | None = None
        while True:
            ready, _, _ = select.select([worker.stdout], [], [], case_seconds * 3 + 30)
            if not ready:  # a hang the time bound could not interrupt
                worker.kill()
                worker.wait()
                line = None
            else:
                line = worker.stdout.readline()
            if not line:
                code = worker.wait()
                if current is not None:
                    case = _case(seed, current)
                    kind = "hang" if not ready else f"crash (exit status {code})"
                    path = _save(case, "crash" if ready else "hang", kind)
                    report.findings.append(f"case {current}: {kind}: {case.describe()} -> {path}")
                    report.cases += 1
                    report.outcomes["crash" if ready else "hang"] += 1
                    i = current + 1
                report.seconds = time.time() - start
                break
            word, _, rest = line.rstrip("\n").partition(" ")
            if word == "CASE":
                current = int(rest)
            elif word == "OUTCOME":
                report.cases += 1
                report.outcomes[rest.split()[1]] += 1
                current = None
            elif word == "FINDING":
                number, _, message = rest.partition(" ")
                case = _case(seed, int(number))
                path = _save(case, "finding", json.loads(message))
                report.findings.append(f"case {number}: {json.loads(message)}: {case.describe()} -> {path}")
                report.cases += 1
                report.outcomes["finding"] += 1
                current = None
            elif word == "DONE":
                worker.wait()
                report.seconds = time.time() - start
                finished = True
                break
        if not quiet:
            print(report.line(), file=sys.stderr)
    report.seconds = time.time() - start
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fuzz the .mlxfb loader and runtime.")
    parser.add_argument("--minutes", type=float, help="run for this long")
    parser.add_argument("--cases", type=int, help="run this many cases")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--case-seconds", type=float, default=CASE_SECONDS)
    parser.add_argument("--replay", type=Path, help="check one saved input, in this process")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--start", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--deadline", type=float, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.worker:
        _worker(args.seed, args.start, args.deadline or math.inf, args.cases, args.case_seconds)
        return 0
    if args.replay is not None:
        try:
            print(run_case(args.replay.read_bytes(), seconds=args.case_seconds))
        except Finding as finding:
            import traceback

            if finding.__cause__ is not None:
                traceback.print_exception(finding.__cause__)
            print(f"FINDING: {finding}")
            return 1
        return 0
    if args.minutes is None and args.cases is None:
        args.minutes = 1.0
    seconds = args.minutes * 60 if args.minutes is not None else None
    report = fuzz(seconds, args.cases, args.seed, args.case_seconds)
    print(report.line())
    for finding in report.findings:
        print(f"  {finding}")
    return 1 if report.findings else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
