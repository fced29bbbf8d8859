"""MLIR's textual pass pipeline (`--pass-pipeline`), read into the passes mlx-opt runs.

    builtin.module(canonicalize{max-iterations=3}, func.func(cse, dce), lower-to-mlx)

An element is a pass with its options in braces, or an op name anchoring a nested
pipeline in parentheses (`builtin.module(...)`, `func.func(...)`, `any(...)`). mlxir's
passes are module passes that visit every function, so a pipeline nested under
`func.func` runs on the whole module: the same passes in the same order, the anchors
kept only for `--mlir-timing`'s nested report. Options are passed to the pass as
written (xDSL's `{name=value ...}` grammar is MLIR's).

`build_pass_pipeline` makes the passes of a `-p` spec, each option checked against
its pass first, so that a mistake names the pass, the option and what it accepts.
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from xdsl.passes import ModulePass, PassPipeline, PassPipelineCallbackType
from xdsl.utils.arg_spec import ArgSpec, parse_pipeline
from xdsl.utils.hints import isa, type_repr

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


# --------------------------------------------------------------------------- passes


class PassOptionError(ValueError):
    """An option a pass does not have, or a value its option cannot take: names the
    pass, the option and what the pass accepts."""


def build_pass_pipeline(
    available: Mapping[str, Callable[[], type[ModulePass]]],
    spec: str,
    callback: PassPipelineCallbackType | None = None,
) -> PassPipeline:
    """The passes of an xDSL pipeline spec (`cse,quantize-weights{bits=4}`), each
    option checked first so a mistake is reported in the pass's own terms."""
    specs = list(parse_pipeline(spec))
    unknown = [s.name for s in specs if s.name not in available]
    if unknown:
        raise ValueError("; ".join(_unknown_pass(name, available) for name in unknown))
    return PassPipeline(tuple(checked_pass(available[s.name](), s) for s in specs), callback)


def _unknown_pass(name: str, available: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(available), n=3)
    return f"no pass named '{name}'" + (f" (did you mean {' or '.join(map(repr, close))}?)" if close else "")


def pass_options(pass_class: type[ModulePass]) -> dict[str, Any]:
    """A pass's options, spelled as on the command line (`group-size`), and the
    type each takes."""
    hints = get_type_hints(pass_class)
    return {
        field.name.replace("_", "-"): hints[field.name]
        for field in dataclasses.fields(pass_class)
        if field.init and field.name != "name"
    }


def checked_pass(pass_class: type[ModulePass], spec: ArgSpec) -> ModulePass:
    """The pass `spec` configures, after checking each option exists and its value
    fits (xDSL's own errors name neither the pass nor, for a type, the option)."""
    options = pass_options(pass_class)
    for given, values in spec.parameters.items():
        option = given.replace("_", "-")
        if option not in options:
            accepted = f"its options: {', '.join(options)}" if options else "it takes no options"
            raise PassOptionError(f"pass '{spec.name}' has no option '{given}' ({accepted})")
        expected = options[option]
        if not _fits(values, expected):
            written = ",".join(str(v).lower() if isinstance(v, bool) else str(v) for v in values)
            problem = f"takes {_described(expected)}, not '{written}'" if values else f"needs a value ({_described(expected)})"
            raise PassOptionError(f"pass '{spec.name}': option '{option}' {problem}")
    return pass_class.from_pass_spec(spec)


def _fits(values: tuple[Any, ...], expected: Any) -> bool:
    """Whether xDSL converts `values` to `expected` (`xdsl.utils.arg_spec`'s rule: no
    value for an optional, one value of the type, or a tuple of them)."""
    if not values and get_origin(expected) in (Union, UnionType) and NoneType in get_args(expected):
        return True
    return (len(values) == 1 and isa(values[0], expected)) or isa(values, expected)


_TYPE_NAMES: dict[Any, tuple[str, str]] = {
    int: ("an integer", "integers"),
    float: ("a number", "numbers"),
    bool: ("true or false", "booleans"),
    str: ("a string", "strings"),
}
"""What an option of each type takes, one and several."""


def describe_option(expected: Any) -> str:
    """What an option of type `expected` takes, in words (`an integer`)."""
    return _described(expected)


def _described(expected: Any) -> str:
    if expected in _TYPE_NAMES:
        return _TYPE_NAMES[expected][0]
    arguments = get_args(expected)
    if get_origin(expected) in (Union, UnionType):
        return " or ".join(_described(a) for a in arguments if a is not NoneType)
    if get_origin(expected) is tuple and arguments[1:] == (Ellipsis,) and arguments[0] in _TYPE_NAMES:
        return f"a comma-separated list of {_TYPE_NAMES[arguments[0]][1]}"
    return type_repr(expected)
