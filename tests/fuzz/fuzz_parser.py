"""Fuzzes `mlx-opt`'s parser and verifiers with token-level mutations of the real
`.mlir` files under `tests/filecheck`.

    .venv/bin/python tests/fuzz/fuzz_parser.py --minutes 10      # the long run
    .venv/bin/python tests/fuzz/fuzz_parser.py --cases 5000      # a fixed number
    .venv/bin/python tests/fuzz/fuzz_parser.py --replay FILE     # one saved input

Each case takes one chunk of a FileCheck file (split at `// -----`) and applies one to
three token mutations: delete, duplicate or swap tokens, replace a token with another
of the corpus, change a number (to 0, -1, a huge value, a float...), an element type
or the dims of a shaped type, truncate the text. The result runs through
`mlxir.tools.mlx_opt.run([file])` in this process (sometimes with a pass pipeline),
under a time bound, with its output captured. It must:

- succeed (exit 0), or
- fail with exit 1 and a diagnostic that names `file:line:col`, with no Python
  traceback and no "internal error".

Anything else is a finding, saved under `tests/fuzz/findings/`.
`pytest tests/test_fuzz.py` runs a derandomized smoke run through hypothesis.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import random
import re
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
if str(ROOT / "tests") not in sys.path:  # run as a script: `fuzz` is a folder of tests/
    sys.path.insert(0, str(ROOT / "tests"))

from fuzz.fuzz_program import CaseTimeout, time_bound  # noqa: E402

FILECHECK = ROOT / "tests" / "filecheck"
FINDINGS = HERE / "findings"
CASE_SECONDS = 10.0

TOKEN = re.compile(
    r'"(?:[^"\\\n]|\\.)*"'  # string literal
    r"|//[^\n]*"  # comment
    r"|[%@^#!]?[\w.$-]+"  # ids, keywords, numbers, types like 2x?x3xf32
    r"|->|::|\S"  # punctuation
)
NUMBER = re.compile(r"-?\d+(\.\d*)?(e[+-]?\d+)?")
SHAPED = re.compile(r"^((?:\d+|\?)x)+(\w+)$")
ELEMENT_TYPES = ("f32", "f16", "bf16", "f64", "i1", "i8", "i32", "i64", "ui8", "index", "complex<f32>", "none")
NUMBERS = ("0", "1", "-1", "2", "-2", "3", "7", "64", "-9223372036854775808", "9223372036854775807",
           "9223372036854775808", "2147483648", "99999999999999999999999", "1.5", "-0.0", "1e309", "0x10")
PIPELINES = ("", "", "", "canonicalize,cse", "lower-to-mlx", "dce")

Mutation = tuple[int, int, int]


@cache
def chunks() -> tuple[tuple[str, str], ...]:
    """(name, text) of every `// -----` chunk of every FileCheck file, comments kept."""
    out = []
    for path in sorted(FILECHECK.rglob("*.mlir")):
        if "Output" in path.parts:
            continue
        for i, chunk in enumerate(path.read_text().split("// -----")):
            if chunk.strip():
                out.append((f"{path.relative_to(FILECHECK)}#{i}", chunk))
    return tuple(out)


@cache
def token_pool() -> tuple[str, ...]:
    """Every distinct non-comment token of the corpus."""
    return tuple(sorted({t for _, text in chunks() for t in TOKEN.findall(text) if not t.startswith("//")}))


def _tokens(text: str) -> list[tuple[int, int]]:
    """(start, end) of each non-comment token."""
    return [(m.start(), m.end()) for m in TOKEN.finditer(text) if not m.group().startswith("//")]


def _new_shape(token: str, rng: random.Random) -> str:
    match = SHAPED.match(token)
    if match is None:
        return token
    dims = token.split("x")[:-1]
    element = match.group(2)
    choice = rng.randrange(5)
    if choice == 0 and dims:
        dims[rng.randrange(len(dims))] = rng.choice(("0", "1", "3", "?", "-1", "2147483648", "99999999999"))
    elif choice == 1:
        dims.insert(rng.randrange(len(dims) + 1), rng.choice(("1", "2", "?")))
    elif choice == 2 and dims:
        dims.pop(rng.randrange(len(dims)))
    else:
        element = rng.choice(ELEMENT_TYPES)
    return "x".join([*dims, element]) if dims else element


def mutate(text: str, mutations: Sequence[Mutation]) -> str:
    """`text` with each token mutation applied in order."""
    for kind, a, b in mutations:
        tokens = _tokens(text)
        if not tokens:
            return text
        rng = random.Random(b)
        start, end = tokens[a % len(tokens)]
        token = text[start:end]
        kind %= 9
        if kind == 0:  # delete
            replacement = ""
        elif kind == 1:  # duplicate
            replacement = token + " " + token
        elif kind == 2:  # swap with another token
            s2, e2 = tokens[b % len(tokens)]
            if s2 < start:
                start, end, s2, e2 = s2, e2, start, end
            if s2 >= end:
                text = text[:start] + text[s2:e2] + text[end:s2] + text[start:end] + text[e2:]
            continue
        elif kind == 3:  # another token of the corpus
            replacement = rng.choice(token_pool())
        elif kind == 4:  # a number: the nearest one at or after the token
            numbers = [(s, e) for s, e in tokens[a % len(tokens) :] if NUMBER.fullmatch(text[s:e])]
            if not numbers:
                continue
            start, end = numbers[0]
            replacement = rng.choice(NUMBERS)
        elif kind == 5:  # a shaped type's dims or element type
            shaped = [(s, e) for s, e in tokens[a % len(tokens) :] if SHAPED.match(text[s:e])]
            if not shaped:
                continue
            start, end = shaped[0]
            replacement = _new_shape(text[start:end], rng)
        elif kind == 6:  # an element type
            types = [(s, e) for s, e in tokens if text[s:e] in ELEMENT_TYPES]
            if not types:
                continue
            start, end = types[a % len(types)]
            replacement = rng.choice(ELEMENT_TYPES)
        elif kind == 7:  # truncated
            text = text[:start]
            continue
        else:  # stray punctuation
            replacement = rng.choice("<>()[]{},:=%@^#\"") + token
        text = text[:start] + replacement + text[end:]
    return text


@dataclass(frozen=True)
class Case:
    chunk: int
    mutations: tuple[Mutation, ...]
    pipeline: int = 0

    def text(self) -> str:
        return mutate(chunks()[self.chunk % len(chunks())][1], self.mutations)

    def args(self) -> list[str]:
        pipeline = PIPELINES[self.pipeline % len(PIPELINES)]
        return ["-p", pipeline] if pipeline else []

    def describe(self) -> str:
        return f"{chunks()[self.chunk % len(chunks())][0]} {list(self.mutations)} {self.args()}"


def random_case(rng: random.Random) -> Case:
    # Numbers, dims and element types three times as often: they keep the text
    # parseable, so the verifiers and passes see it.
    kinds = (0, 1, 2, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 8)
    mutations = tuple(
        (rng.choice(kinds), rng.randrange(2**32), rng.randrange(2**32))
        for _ in range(rng.choice((1, 1, 2, 3)))
    )
    return Case(rng.randrange(len(chunks())), mutations, rng.randrange(len(PIPELINES)))


class Finding(AssertionError):
    """A case broke the contract."""


@contextlib.contextmanager
def _scratch() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="mlxir-fuzz-") as tmp:
        yield Path(tmp) / "fuzz.mlir"


def run_case(text: str, args: Sequence[str] = (), seconds: float = CASE_SECONDS, path: Path | None = None) -> str:
    """Runs `mlx-opt FILE *args` on `text`; returns "ok", "parse-error" or "diagnostic"
    (a verifier or pass error) or raises `Finding`."""
    from mlxir.tools.mlx_opt import run

    with contextlib.ExitStack() as stack:
        if path is None:
            path = stack.enter_context(_scratch())
        path.write_text(text)
        out, err = io.StringIO(), io.StringIO()
        try:
            with time_bound(seconds), contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                code = run([str(path), *args])
        except CaseTimeout as timeout:
            raise Finding(f"timeout: {timeout}") from None
        except BaseException as error:  # SystemExit included: run() returns its status
            raise Finding(f"mlx-opt raised {type(error).__name__}: {error}") from error
    message = err.getvalue()
    if code == 0:
        return "ok"
    if code != 1:
        raise Finding(f"exit status {code}: {message[-500:]}")
    if "Traceback" in message or "internal error" in message:
        raise Finding(f"not a diagnostic: {message[-1500:]}")
    if not re.search(rf"{re.escape(path.name)}:\d+:\d+", message):
        raise Finding(f"a diagnostic without file:line:col: {message[:1500]}")
    return "diagnostic" if re.search(r":\d+:\d+: error: ", message) else "parse-error"


# --------------------------------------------------------------------------- runs


@dataclass
class Report:
    cases: int = 0
    outcomes: Counter[str] = field(default_factory=Counter)
    findings: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def line(self) -> str:
        outcomes = ", ".join(f"{k} {v}" for k, v in sorted(self.outcomes.items()))
        return f"{self.cases} cases in {self.seconds:.0f} s ({outcomes}); {len(self.findings)} findings"


def fuzz(seconds: float | None, cases: int | None, seed: int = 0, quiet: bool = False) -> Report:
    import warnings

    warnings.simplefilter("ignore")
    report = Report()
    start = last = time.time()
    seen: set[str] = set()
    with _scratch() as path:
        i = 0
        while (cases is None or i < cases) and (seconds is None or time.time() - start < seconds):
            case = random_case(random.Random(f"{seed}:{i}"))
            text = case.text()
            try:
                report.outcomes[run_case(text, case.args(), path=path)] += 1
            except Finding as finding:
                report.outcomes["finding"] += 1
                key = re.sub(r"\d+", "N", str(finding).splitlines()[0])[:200]
                if key not in seen:  # one saved input per kind of finding
                    seen.add(key)
                    FINDINGS.mkdir(exist_ok=True)
                    saved = FINDINGS / f"parser-{seed}-{i}.mlir"
                    saved.write_text(text)
                    (FINDINGS / f"parser-{seed}-{i}.txt").write_text(f"{case.describe()}\n{finding}\n")
                    report.findings.append(f"case {i}: {str(finding)[:300]} ({case.describe()}) -> {saved}")
            report.cases += 1
            i += 1
            report.seconds = time.time() - start
            if not quiet and time.time() - last > 30:
                last = time.time()
                print(report.line(), file=sys.stderr)
    return report


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Fuzz mlx-opt's parser and verifiers.")
    parser.add_argument("--minutes", type=float)
    parser.add_argument("--cases", type=int)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--replay", type=Path, help="run one saved input")
    parser.add_argument("-p", dest="pipeline", default="", help="with --replay: a pass pipeline")
    args = parser.parse_args(argv)
    if args.replay is not None:
        try:
            print(run_case(args.replay.read_text(), ["-p", args.pipeline] if args.pipeline else []))
        except Finding as finding:
            import traceback

            if finding.__cause__ is not None:
                traceback.print_exception(finding.__cause__)
            print(f"FINDING: {finding}")
            return 1
        return 0
    if args.minutes is None and args.cases is None:
        args.minutes = 1.0
    report = fuzz(args.minutes * 60 if args.minutes is not None else None, args.cases, args.seed)
    print(report.line())
    for finding in report.findings:
        print(f"  {finding}")
    return 1 if report.findings else 0


if __name__ == "__main__":
    sys.exit(main())
