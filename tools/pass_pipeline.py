"""MLIR's textual pass pipeline (`--pass-pipeline`), read into the passes mlx-opt runs.

    builtin.module(canonicalize{max-iterations=3}, func.func(cse, dce), lower-to-mlx)

An element is a pass with its options in braces, or an op name anchoring a nested
pipeline in parentheses (`builtin.module(...)`, `func.func(...)`, `any(...)`). mlxir's
passes are module passes that visit every function, so a pipeline nested under
`func.func` runs on the whole module: the same passes in the same order, the anchors
kept only for `--mlir-timing`'s nested report. Options are passed to the pass as
written (xDSL's `{name=value ...}` grammar is MLIR's).
"""

from __future__ import annotations

from dataclasses import dataclass

ANCHORS = ("builtin.module", "func.func", "any")
"""The ops a nested pipeline may be anchored on."""


class PipelineSyntaxError(ValueError):
    """A malformed pipeline: says where (a column of the pipeline text) and what."""


@dataclass(frozen=True)
class PipelinePass:
    name: str
    options: str
    """The text between the braces, without them ("" when there were none)."""
    anchors: tuple[str, ...]
    """The anchors it is nested under, outermost first."""

    def spec(self) -> str:
        """The pass as xDSL's `-p` writes it."""
        return f"{self.name}{{{self.options}}}" if self.options else self.name


class _Reader:
    def __init__(self, text: str) -> None:
        self.text = text
        self.at = 0

    def error(self, message: str) -> PipelineSyntaxError:
        return PipelineSyntaxError(
            f"malformed --pass-pipeline at column {self.at + 1} (after '{self.text[: self.at]}'): {message}"
        )

    def skip_spaces(self) -> None:
        while self.at < len(self.text) and self.text[self.at].isspace():
            self.at += 1

    def peek(self) -> str:
        self.skip_spaces()
        return self.text[self.at] if self.at < len(self.text) else ""

    def name(self) -> str:
        self.skip_spaces()
        start = self.at
        while self.at < len(self.text) and (self.text[self.at].isalnum() or self.text[self.at] in "_-.$"):
            self.at += 1
        if start == self.at:
            raise self.error("expected a pass or an op name")
        return self.text[start : self.at]

    def braced(self) -> str:
        """The text inside `{...}` (the reader is at `{`), nested braces and quoted
        strings included."""
        start = self.at + 1
        depth = 0
        quote = False
        while self.at < len(self.text):
            char = self.text[self.at]
            if quote:
                if char == "\\":
                    self.at += 1
                elif char == '"':
                    quote = False
            elif char == '"':
                quote = True
            elif char == "{":
                depth += 1
            elif char == "}":
                depth -= 1
                if depth == 0:
                    self.at += 1
                    return self.text[start : self.at - 1].strip()
            self.at += 1
        raise self.error("'{' is never closed")

    def pipeline(self, anchors: tuple[str, ...], closing: str) -> list[PipelinePass]:
        passes: list[PipelinePass] = []
        if self.peek() == closing:
            return passes
        while True:
            start = self.at
            name = self.name()
            options = self.braced() if self.peek() == "{" else ""
            if self.peek() == "(":
                if options:
                    raise self.error(f"the anchor '{name}' takes no options")
                if name not in ANCHORS:
                    self.at = start
                    self.skip_spaces()
                    raise self.error(f"'{name}' is not an anchor mlx-opt runs pipelines on ({', '.join(ANCHORS)})")
                self.at += 1
                passes += self.pipeline((*anchors, name), ")")
                if self.peek() != ")":
                    raise self.error("expected ')'")
                self.at += 1
            else:
                passes.append(PipelinePass(name, options, anchors))
            following = self.peek()
            if following == ",":
                self.at += 1
                continue
            if following == closing:
                return passes
            raise self.error("expected ',' or " + (f"'{closing}'" if closing else "the end of the pipeline"))


def parse_pass_pipeline(text: str) -> list[PipelinePass]:
    """The passes of an MLIR textual pipeline, in the order they run."""
    reader = _Reader(text)
    passes = reader.pipeline((), "")
    if reader.peek():
        raise reader.error("unexpected text after the pipeline")
    return passes
