"""`--verify-diagnostics` with MLIR's semantics: every diagnostic mlx-opt emits for a
file (or a `--split-input-file` chunk) must be expected by a comment, and every
expectation met.

    // expected-error @+1 {{'mlx.add' op operand types must match}}
    %0 = mlx.add %a, %b : ...

`expected-error`, `expected-warning`, `expected-remark` and `expected-note` name the
line of the comment itself, or `@+N` / `@-N` lines below / above it, or `@above` /
`@below` (the line just above / below). The text in `{{...}}` must occur in the
diagnostic's message.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from xdsl.utils.exceptions import ParseError

SEVERITIES = ("error", "warning", "remark", "note")

_EXPECTATION = re.compile(
    r"//\s*expected-(?P<severity>error|warning|remark|note)\s*"
    r"(?:@(?P<where>[+-]\d+|above|below))?\s*\{\{(?P<text>.*?)\}\}"
)
_LOCATION = re.compile(r"^(?P<file>.*):(?P<line>\d+):(?P<col>\d+)$")


@dataclass(frozen=True)
class Diagnostic:
    """One diagnostic mlx-opt emitted: at `location` (`file:line:col`, or the file's
    name where no line is known)."""

    severity: str
    location: str
    message: str

    @property
    def line(self) -> int | None:
        found = _LOCATION.match(self.location)
        return int(found["line"]) if found else None

    def __str__(self) -> str:
        return f"{self.location}: {self.severity}: {self.message}"


@dataclass
class Expectation:
    severity: str
    line: int
    """The line the diagnostic is expected on (1-based, in the whole file)."""
    text: str
    written_at: str
    """`file:line:col` of the comment."""
    met: bool = False


def expectations(text: str, file: str, first_line: int = 1) -> list[Expectation]:
    """The `expected-*` comments of `text` (a file, or a chunk of one starting on line
    `first_line`)."""
    found: list[Expectation] = []
    for index, line in enumerate(text.splitlines()):
        for match in _EXPECTATION.finditer(line):
            number = first_line + index
            where = match["where"]
            target = {None: number, "above": number - 1, "below": number + 1}.get(where)
            if target is None:
                target = number + int(where)
            found.append(
                Expectation(match["severity"], target, match["text"], f"{file}:{number}:{match.start() + 1}")
            )
    return found


def check(expected: list[Expectation], emitted: list[Diagnostic]) -> list[str]:
    """What does not agree, one line each, as mlir-opt says it (empty: all agree)."""
    problems: list[str] = []
    for diagnostic in emitted:
        match = next(
            (
                e
                for e in expected
                if not e.met
                and e.severity == diagnostic.severity
                and e.line == diagnostic.line
                and e.text in diagnostic.message
            ),
            None,
        )
        if match is None:
            problems.append(f"{diagnostic.location}: error: unexpected {diagnostic.severity}: {diagnostic.message}")
        else:
            match.met = True
    problems += [
        f'{e.written_at}: error: expected {e.severity} "{e.text}" was not produced' for e in expected if not e.met
    ]
    return problems


# --------------------------------------------------------------------------- xDSL's wording

_NAME_AFTER = {
    "%": "a value name such as %0 or %arg0",
    "#": "an attribute name such as #map or #loc1",
    "!": "a type name such as !t",
    "^": "a block label such as ^bb0",
}
"""What each sigil of MLIR's syntax must be followed by."""


def readable(error: ParseError) -> ParseError:
    """`error` with its message filled in where xDSL's lexer leaves it unformatted
    ("Expected suffix identifier after {first_char}": an f-string missing its `f`)."""
    if "{first_char}" in error.msg:
        sigil = error.span.text[:1]
        error.msg = f"'{sigil}' must be followed by {_NAME_AFTER.get(sigil, 'a name')}"
    return error
