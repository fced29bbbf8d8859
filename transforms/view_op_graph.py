"""`view-op-graph`: the IR as a Graphviz DOT graph, after MLIR's `--view-op-graph`.

    mlx-opt model.mlir -p view-op-graph -o /dev/null | dot -Tsvg > model.svg
    mlx-opt model.mlir -p 'view-op-graph{print-attrs=false max-label-len=40}'

Each op is a node labelled with its name, then (options) its attributes, one per
line, each value cut to `max-label-len` characters, its result types and its source
location. Each use of a value is a solid edge from the op (or block argument) that
defines it to the op that reads it; `print-control-flow-edges` adds dashed edges from
each op to the next one of its block. An op with regions is a cluster (its label the
op's name) holding one cluster per region; edges into or out of it end at the
cluster's border (`compound = true`, `lhead`/`ltail`), as MLIR draws them.

Where it goes, unlike MLIR: MLIR writes the graph to stderr (or a file) and the IR on
to the next pass. Here the DOT goes to standard output, before the module that
mlx-opt prints when the passes are done, which this pass leaves unchanged: `-o
/dev/null` (or `-o out.mlir`) leaves standard output to the DOT alone, ready for
`dot`, `xdot -` or a file. `op_graph_dot` gives the text to a library caller.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from dataclasses import dataclass, field
from io import StringIO
from typing import cast

from xdsl.context import Context
from xdsl.dialects.builtin import (
    DenseIntOrFPElementsAttr,
    DenseResourceAttr,
    FileLineColLoc,
    ModuleOp,
    UnknownLoc,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.printer import Printer


@dataclass(frozen=True)
class GraphOptions:
    """What a node shows and which edges are drawn (MLIR's option names, with `_`)."""

    max_label_len: int = 20
    print_attrs: bool = True
    print_control_flow_edges: bool = False
    print_data_flow_edges: bool = True
    print_result_types: bool = True
    print_debug_info: bool = False


def _quote(text: str) -> str:
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def _truncate(text: str, limit: int) -> str:
    # A limit below 1 means no limit, as a negative count would cut from the end.
    if limit <= 0 or len(text) <= limit:
        return text
    return text[:limit] + "..."


def attribute_text(attribute: Attribute) -> str:
    """The attribute as the IR prints it, but a dense literal without its elements: a
    weight's value prints as megabytes of numbers that a label would cut anyway."""
    if isinstance(attribute, DenseIntOrFPElementsAttr | DenseResourceAttr):
        dense = cast(DenseIntOrFPElementsAttr | DenseResourceAttr, attribute)  # isinstance leaves its type parameter unknown
        return f"dense<...> : {attribute_text(dense.type)}"
    text = StringIO()
    Printer(stream=text).print_attribute(attribute)
    return text.getvalue()


def _location_text(op: Operation) -> str | None:
    loc = op.location
    if isinstance(loc, FileLineColLoc):
        return f"{loc.filename.data}:{loc.line.data}:{loc.column.data}"
    if isinstance(loc, UnknownLoc):
        return None
    return attribute_text(loc)


@dataclass
class _Writer:
    options: GraphOptions
    lines: list[str] = field(default_factory=list[str])
    ids: dict[Operation | BlockArgument, str] = field(default_factory=dict[Operation | BlockArgument, str])
    """The DOT node of each op and block argument (an op with regions: its anchor)."""
    clusters: dict[Operation, str] = field(default_factory=dict[Operation, str])
    """The cluster of each op with regions."""
    counter: int = 0

    def fresh(self, prefix: str) -> str:
        self.counter += 1
        return f"{prefix}{self.counter}"

    def emit(self, depth: int, text: str) -> None:
        self.lines.append("  " * depth + text)

    def label(self, op: Operation) -> str:
        limit = self.options.max_label_len
        parts = [op.name]
        if self.options.print_attrs:
            attributes = {**op.properties, **op.attributes}
            for name in sorted(attributes):
                parts.append(f"{name}: {_truncate(attribute_text(attributes[name]), limit)}")
        if self.options.print_result_types and op.results:
            types = ", ".join(attribute_text(r.type) for r in op.results)
            parts.append(_truncate(types, limit))
        if self.options.print_debug_info:
            where = _location_text(op)
            if where is not None:
                parts.append(where)
        return "\n".join(parts)

    def block(self, block: Block, depth: int) -> None:
        if self.options.print_data_flow_edges:
            for argument in block.args:
                node = self.fresh("v")
                self.ids[argument] = node
                self.emit(depth, f"{node} [label = {_quote(f'arg{argument.index}')}, shape = plain];")
        for op in block.ops:
            self.operation(op, depth)

    def operation(self, op: Operation, depth: int) -> None:
        if not op.regions:
            node = self.fresh("v")
            self.ids[op] = node
            self.emit(depth, f"{node} [label = {_quote(self.label(op))}, shape = ellipse];")
            return
        cluster = self.fresh("cluster_")
        self.clusters[op] = cluster
        self.emit(depth, f"subgraph {cluster} {{")
        self.emit(depth + 1, f"label = {_quote(self.label(op))};")
        # Edges to a cluster must end at a node inside it; this invisible one stands in.
        anchor = self.fresh("v")
        self.ids[op] = anchor
        self.emit(depth + 1, f"{anchor} [label = \"\", shape = point, style = invis];")
        for index, region in enumerate(op.regions):
            self.region(region, index, depth + 1)
        self.emit(depth, "}")

    def region(self, region: Region, index: int, depth: int) -> None:
        self.emit(depth, f"subgraph {self.fresh('cluster_')} {{")
        self.emit(depth + 1, f"label = {_quote(f'region #{index}')};")
        for block in region.blocks:
            self.block(block, depth + 1)
        self.emit(depth, "}")

    def edge(self, source: Operation | BlockArgument, target: Operation, style: str) -> None:
        attributes = [f"style = {style}"]
        if isinstance(source, Operation) and source in self.clusters:
            attributes.append(f"ltail = {self.clusters[source]}")
        if target in self.clusters:
            attributes.append(f"lhead = {self.clusters[target]}")
        self.emit(1, f"{self.ids[source]} -> {self.ids[target]} [{', '.join(attributes)}];")

    def edges(self, root: Operation) -> None:
        for op in _walk(root):
            if self.options.print_data_flow_edges:
                for operand in op.operands:
                    source = _definition(operand)
                    if source in self.ids:
                        self.edge(source, op, "solid")
            if self.options.print_control_flow_edges:
                for region in op.regions:
                    for block in region.blocks:
                        ops = list(block.ops)
                        for before, after in zip(ops, ops[1:]):
                            self.edge(before, after, "dashed")


def _definition(value: SSAValue) -> Operation | BlockArgument:
    return value if isinstance(value, BlockArgument) else cast(Operation, value.owner)  # an OpResult's owner


def _walk(op: Operation) -> Iterator[Operation]:
    yield op
    for region in op.regions:
        for block in region.blocks:
            for child in block.ops:
                yield from _walk(child)


def op_graph_dot(root: Operation, options: GraphOptions | None = None) -> str:
    """`root` and every op nested in it as a DOT digraph."""
    writer = _Writer(options or GraphOptions())
    writer.emit(0, "digraph G {")
    writer.emit(1, "compound = true;")
    writer.operation(root, 1)
    writer.edges(root)
    writer.emit(0, "}")
    return "\n".join(writer.lines) + "\n"


@dataclass(frozen=True)
class ViewOpGraphPass(GraphOptions, ModulePass):
    """Prints the IR as a Graphviz DOT graph on standard output; the IR is unchanged.

    Its options are `GraphOptions`' fields (`view-op-graph{print-attrs=false}`)."""

    name = "view-op-graph"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        sys.stdout.write(op_graph_dot(op, self))
        sys.stdout.flush()
