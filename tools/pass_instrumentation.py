"""What mlx-opt reports about the passes it runs, with mlir-opt's flags and formats:
the IR between passes (`--mlir-print-ir-*`, to stderr; large constants elided with
`--mlir-elide-elementsattrs-if-larger`) and the time of each step (`--mlir-timing`,
nested as the pipeline is)."""

from __future__ import annotations

import argparse
import contextlib
import time
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass, field
from io import StringIO
from typing import IO, TYPE_CHECKING, Any, cast

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.ir import Attribute
from xdsl.passes import ModulePass
from xdsl.printer import Printer

if TYPE_CHECKING:
    from mlxir.tools.pass_pipeline import PipelinePass


# --------------------------------------------------------------------------- IR dumps

ELIDED = "dense_resource<__elided__>"
"""What MLIR prints for an elided dense value."""


class ElidingPrinter(Printer):
    """A printer that writes each dense value of more than `elide_larger_than`
    elements as `mlir-opt --mlir-elide-elementsattrs-if-larger` does,
    `dense_resource<__elided__> : tensor<...>`: a program's structure without the
    weights that make most of its text. A splat stays: it prints as one element."""

    def __init__(
        self,
        stream: IO[str] | None = None,
        *,
        elide_larger_than: int,
        print_generic_format: bool = False,
        print_properties_as_attributes: bool = False,
        print_debuginfo: bool = False,
    ) -> None:
        super().__init__(
            stream=stream,
            print_generic_format=print_generic_format,
            print_properties_as_attributes=print_properties_as_attributes,
            print_debuginfo=print_debuginfo,
        )
        self.elide_larger_than = elide_larger_than

    def print_attribute(self, attribute: Attribute) -> None:
        elided = self._elided_type(attribute)
        if elided is None:
            super().print_attribute(attribute)
        else:
            self.print_string(f"{ELIDED} : ")
            super().print_attribute(elided)

    def _elided_type(self, attribute: Attribute) -> Attribute | None:
        """The type of `attribute` where it is a dense value to elide."""
        if not isinstance(attribute, DenseIntOrFPElementsAttr):
            return None
        dense = cast(DenseIntOrFPElementsAttr[Any], attribute)
        raw = bytes(dense.data.data)  # the same object, or a copy of a weight held by reference (`mlxir.weights`)
        size = dense.get_element_type().compile_time_size
        if not size or len(raw) // size <= self.elide_larger_than:
            return None
        # Non-overlapping copies of the first element that add up to the whole value
        # tile it: a splat, which stays (without copying a value of gigabytes).
        if raw.count(raw[:size]) * size == len(raw):
            return None
        return dense.get_type()


def ir_printer(
    stream: IO[str], *, generic: bool = False, debuginfo: bool = False, elide_larger_than: int | None = None
) -> Printer:
    """A printer with mlx-opt's printing options."""
    if elide_larger_than is None:
        return Printer(stream=stream, print_generic_format=generic, print_debuginfo=debuginfo)
    return ElidingPrinter(
        stream, elide_larger_than=elide_larger_than, print_generic_format=generic, print_debuginfo=debuginfo
    )


@dataclass
class IRPrinting:
    """`--mlir-print-ir-before-all`, `-after-all`, `-before=`, `-after=`,
    `-after-change` and `-after-failure`: each dump is headed as mlir-opt heads it
    (`// -----// IR Dump After CanonicalizePass (canonicalize) //----- //`)."""

    before_all: bool = False
    after_all: bool = False
    before_names: frozenset[str] = frozenset()
    after_names: frozenset[str] = frozenset()
    after_change: bool = False
    generic: bool = False
    debuginfo: bool = False
    elide_larger_than: int | None = None
    stream: Callable[[], IO[str]] | None = None
    _before_text: str | None = field(default=None, init=False)

    @classmethod
    def from_args(cls, args: argparse.Namespace, passes: Sequence[str]) -> IRPrinting:
        def names(option: str, text: str) -> frozenset[str]:
            chosen = frozenset(name.strip() for name in text.split(",") if name.strip())
            unknown = sorted(chosen - set(passes))
            if unknown:
                raise ValueError(f"{option}: no pass named {', '.join(map(repr, unknown))}")
            return chosen

        return cls(
            before_all=args.mlir_print_ir_before_all,
            after_all=args.mlir_print_ir_after_all or args.print_between_passes,
            before_names=names("--mlir-print-ir-before", args.mlir_print_ir_before),
            after_names=names("--mlir-print-ir-after", args.mlir_print_ir_after),
            after_change=args.mlir_print_ir_after_change,
            generic=args.print_op_generic,
            debuginfo=args.print_debuginfo,
            elide_larger_than=args.mlir_elide_elementsattrs_if_larger,
        )

    def _text(self, module: ModuleOp) -> str:
        out = StringIO()
        printer = ir_printer(out, generic=self.generic, debuginfo=self.debuginfo, elide_larger_than=self.elide_larger_than)
        printer.print_op(module)
        return out.getvalue()

    def _dump(self, when: str, applied: ModulePass, text: str) -> None:
        import sys

        stream = self.stream() if self.stream is not None else sys.stderr
        stream.write(f"// -----// IR Dump {when} {type(applied).__name__} ({applied.name}) //----- //\n{text}\n\n")
        stream.flush()

    def before(self, following: ModulePass, module: ModuleOp) -> None:
        if self.after_change:
            self._before_text = self._text(module)
        if self.before_all or following.name in self.before_names:
            self._dump("Before", following, self._text(module))

    def after(self, previous: ModulePass, module: ModuleOp) -> None:
        chosen = self.after_all or previous.name in self.after_names
        if not chosen and not self.after_change:
            return
        text = self._text(module)
        if chosen or text != self._before_text:
            self._dump("After", previous, text)

    def failed(self, failing: ModulePass, module: ModuleOp) -> None:
        self._dump("After Failed", failing, self._text(module))


# --------------------------------------------------------------------------- timing


def _row_keys(passes: Sequence[PipelinePass]) -> list[tuple[str, ...]]:
    """Each pass's row in the report: under one "'func.func' Pipeline" row per run of
    consecutive passes nested under the same anchors (below the module), numbered so a
    pass or an anchor that comes back gets a row of its own, as in mlir-opt's report."""
    keys: list[tuple[str, ...]] = []
    group = 0  # the index of the group's first pass: rows sort by pass order
    previous: tuple[str, ...] | None = None
    for index, item in enumerate(passes):
        nested = item.anchors[1:] if item.anchors[:1] == ("builtin.module",) else item.anchors
        if nested != previous:
            group = index
            previous = nested
        labels = tuple(f"{group}\0'{anchor}' Pipeline" for anchor in nested)
        keys.append((*labels, f"{index}\0{item.name}"))
    return keys


@dataclass
class PassTiming:
    """Wall time per step, summed over the input's chunks, reported like
    `mlir-opt --mlir-timing` (seconds and share of the total, nested)."""

    rows: dict[tuple[str, ...], float] = field(default_factory=dict[tuple[str, ...], float])
    keys: list[tuple[str, ...]] = field(default_factory=list[tuple[str, ...]])
    started: float = field(default_factory=time.perf_counter)
    _pass_start: float = 0.0

    def set_passes(self, passes: Sequence[PipelinePass]) -> None:
        self.keys = _row_keys(passes)
        for key in self.keys:  # in pipeline order, whichever runs first
            for depth in range(1, len(key) + 1):
                self.rows.setdefault(key[:depth], 0.0)

    def add(self, key: tuple[str, ...], seconds: float) -> None:
        for depth in range(1, len(key) + 1):
            self.rows[key[:depth]] = self.rows.get(key[:depth], 0.0) + seconds

    @contextlib.contextmanager
    def measure(self, key: tuple[str, ...]) -> Generator[None]:
        start = time.perf_counter()
        try:
            yield
        finally:
            self.add(key, time.perf_counter() - start)

    def start(self) -> None:
        self._pass_start = time.perf_counter()

    def stop(self, index: int) -> None:
        self.add(self.keys[index], time.perf_counter() - self._pass_start)

    def report(self, stream: IO[str]) -> None:
        total = time.perf_counter() - self.started
        rule = "===" + "-" * 73 + "==="
        lines = [rule, "... Execution time report ...".center(len(rule)).rstrip(), rule]
        lines += [f"  Total Execution Time: {total:.4f} seconds", "", "  ----Wall Time----  ----Name----"]
        order = sorted(self.rows, key=self._order)
        for key in order:
            name = key[-1].split("\0", 1)[-1]
            seconds = self.rows[key]
            lines.append(f"  {seconds:8.4f} ({100 * seconds / total if total else 0:5.1f}%)  {'  ' * (len(key) - 1)}{name}")
        lines.append(f"  {total:8.4f} (100.0%)  Total")
        stream.write("\n".join(lines) + "\n")
        stream.flush()

    def _order(self, key: tuple[str, ...]) -> tuple[int, ...]:
        """Parser first, then the passes in pipeline order, the verifier and output last."""
        fixed = {"Parser": (0,), "Verifier": (3,), "Output": (4,)}
        if key[0] in fixed:
            return fixed[key[0]]
        return (1, *(int(part.split("\0", 1)[0]) for part in key))
