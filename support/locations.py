"""Where an op comes from: the exported graph's node, and the user's source line.

The importer stamps every aten op with `loc("node"("file.py":line:0))`, an MLIR name
location holding the ATen node's name around the file location of the user's frame
that made it. The lowering and every pattern copy an op's location onto the ops that
replace it, so each mlx op still names its node after the default pipeline, and
printed with `loc(...)` (`mlxir compile --emit mlx`) a module keeps that provenance
through a user's edits: `mlxir debug --module` maps values back to nodes by it.

An op with several results whose values come from different nodes (a merged
projection's `mlx.split`) carries `loc(fused[...])`, one location per result, in order:
`result_locations` reads it and `fused` writes it. An op computing for several nodes at
once (the merged projection itself) carries them fused too (`nodes_of`).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import cast

from xdsl.dialects.builtin import (
    ArrayAttr,
    FileLineColLoc,
    FusedLoc,
    LocationAttr,
    NameLoc,
    NoneAttr,
    StringAttr,
    UnknownLoc,
)
from xdsl.ir import Attribute, Operation


def node_location(node: str, source: LocationAttr | None) -> NameLoc:
    """The location of an op made for the graph node `node`, from `source` in the
    user's code (unknown without a stack trace)."""
    return NameLoc(StringAttr(node), source if source is not None else UnknownLoc())


def source_location(loc: Attribute) -> FileLineColLoc | None:
    """The user's `file:line:col` a location holds, through any node name around it
    (of a fused location: its first part's)."""
    while isinstance(loc, NameLoc | FusedLoc):
        loc = loc.location if isinstance(loc, NameLoc) else (_parts(loc) or [UnknownLoc()])[0]
    return loc if isinstance(loc, FileLineColLoc) else None


def _parts(loc: FusedLoc) -> tuple[Attribute, ...]:
    return cast(ArrayAttr[Attribute], loc.locations).data


def fused(locations: Sequence[LocationAttr]) -> LocationAttr:
    """The location of an op made from ops at `locations`: that location where all
    are one, else them fused. An op with one result per location (a split) has result
    i's value from `locations[i]` (`result_locations`); another op computes for all of
    those nodes (a merged projection), so it is none of theirs alone."""
    if all(loc == locations[0] for loc in locations):
        return locations[0]
    return FusedLoc(ArrayAttr(locations), NoneAttr())


def result_locations(op: Operation) -> list[LocationAttr]:
    """Each result's location: the op's, or its `fused` part."""
    loc = op.location
    if isinstance(loc, FusedLoc) and len(_parts(loc)) == len(op.results):
        return [cast(LocationAttr, part) for part in _parts(loc)]
    return [loc] * len(op.results)


def nodes_of(loc: Attribute) -> list[str]:
    """Every graph node a location names, through fused locations."""
    if isinstance(loc, FusedLoc):
        return [name for part in _parts(loc) for name in nodes_of(part)]
    name = node_of(loc)
    return [name] if name is not None else []


def node_of(loc: Attribute) -> str | None:
    """The name of the graph node a location names, if it names one."""
    return loc.desc.data if isinstance(loc, NameLoc) else None


def describe(loc: Attribute) -> str:
    """`file:line` of a location, or "unknown location"."""
    source = source_location(loc)
    return f"{source.filename.data}:{source.line.data}" if source is not None else "unknown location"


def file_line_col(loc: Attribute) -> str | None:
    """`file:line:col` of a location, None where it holds no source position."""
    source = source_location(loc)
    if source is None:
        return None
    return f"{source.filename.data}:{source.line.data}:{source.column.data}"


_LOCATION_ALIAS = re.compile(r"^[ \t]*#(?P<name>[A-Za-z_$.][\w$.-]*)[ \t]*=[ \t]*loc\((?P<body>.*)\)[ \t]*$", re.MULTILINE)
_ALIAS_USE = re.compile(r"#(?P<name>[A-Za-z_$.][\w$.-]*)(?![\w$.-])")


def inline_location_aliases(text: str) -> str:
    """`text` with MLIR's location aliases written out: upstream MLIR prints
    `loc(#loc3)` and defines `#loc3 = loc("f.mlir":3:5)` after the module, where
    xDSL's parser accepts an alias only once defined. Each definition line becomes an
    empty line and each use its location, so every op keeps its line and column."""
    if "= loc(" not in text:
        return text
    bodies = {match["name"]: match["body"] for match in _LOCATION_ALIAS.finditer(text)}
    if not bodies:
        return text
    resolved: dict[str, str] = {}

    def resolve(name: str, seen: tuple[str, ...] = ()) -> str:
        if name in resolved:
            return resolved[name]
        if name in seen:
            raise ValueError(f"location alias #{name} refers to itself")

        def use(match: re.Match[str]) -> str:
            inner = match["name"]
            return resolve(inner, (*seen, name)) if inner in bodies else match[0]

        resolved[name] = _ALIAS_USE.sub(use, bodies[name])
        return resolved[name]

    text = _LOCATION_ALIAS.sub("", text)
    return _ALIAS_USE.sub(lambda m: resolve(m["name"]) if m["name"] in bodies else m[0], text)
