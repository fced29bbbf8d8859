"""The pass registry: every pass and pipeline `mlx-opt`, `lower`, the debugger and the
ExecuTorch partitioner accept, by name (`PASSES`: name → lazy factory and a one-line
summary).

Nothing here names a pass of mlxir's. A pass registers by being a `ModulePass` class
in a module of `transforms/` or `conversions/` (`PASS_PACKAGES`): its `name` is its
name here, the first line of its docstring its summary, its dataclass fields with a
default its options. The registry reads those from the modules' source and imports a
module only when its pass is asked for: importing every pass module would import
torch (the lowering's) and all of xDSL for `mlx-opt --help` or a `-p canonicalize`.
`tests/test_pass_registry.py` imports every module and checks that each `ModulePass`
it defines is registered, as its class. The patterns of `transforms/catalog.py` are
one pass each, in the catalog's order; xDSL's `cse` and `dce` are named below.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import cast

from xdsl.passes import ModulePass

PASS_PACKAGES = ("transforms", "conversions")
"""The folders of the package (under its root) whose modules' pass classes register."""

_ROOT = Path(__file__).resolve().parent.parent


@dataclass(frozen=True)
class PassEntry:
    factory: Callable[[], type[ModulePass]]
    summary: str


def _lazy(module: str, name: str) -> Callable[[], type[ModulePass]]:
    """The pass class `name` of `module`, imported when first asked for."""

    def load() -> type[ModulePass]:
        return cast(type[ModulePass], getattr(importlib.import_module(module), name))

    return load


def _string_assignment(statement: ast.stmt, target: str) -> str | None:
    """The string `statement` assigns to `target` (`name = "cse"`), if it is one."""
    if (
        isinstance(statement, ast.Assign)
        and [t.id for t in statement.targets if isinstance(t, ast.Name)] == [target]
        and isinstance(statement.value, ast.Constant)
        and isinstance(statement.value.value, str)
    ):
        return statement.value.value
    return None


def _options(cls: ast.ClassDef, classes: dict[str, ast.ClassDef]) -> list[str]:
    """`field=default` for each field with a literal default of `cls` and of its bases
    defined in the same module (a base's first), as the pass spec spells them."""
    found: list[str] = []
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in classes:
            found += _options(classes[base.id], classes)
    for statement in cls.body:
        if (
            isinstance(statement, ast.AnnAssign)
            and isinstance(statement.target, ast.Name)
            and isinstance(statement.value, ast.Constant)
            and not statement.target.id.isupper()
        ):
            value = statement.value.value
            shown = str(value).lower() if isinstance(value, bool) else str(value)
            found.append(f"{statement.target.id.replace('_', '-')}={shown}")
    return found


def _is_pass_class(cls: ast.ClassDef) -> bool:
    """Whether `cls` names a pass: it sets `name` and derives from a class named
    `...Pass` (`ModulePass`, xDSL's `canonicalize.CanonicalizePass`). The test that
    imports every module checks that no `ModulePass` is missed this way."""
    bases = [b.id if isinstance(b, ast.Name) else b.attr if isinstance(b, ast.Attribute) else "" for b in cls.bases]
    named = any(_string_assignment(statement, "name") is not None for statement in cls.body)
    return named and any(base.endswith("Pass") for base in bases)


def _declared_passes() -> Iterator[tuple[str, PassEntry]]:
    """(name, entry) of every pass class in the modules of `PASS_PACKAGES`."""
    for package in PASS_PACKAGES:
        for path in sorted((_ROOT / package).rglob("*.py")):
            source = path.read_text()
            if "Pass" not in source:
                continue
            tree = ast.parse(source, str(path))
            classes = {node.name: node for node in tree.body if isinstance(node, ast.ClassDef)}
            module = ".".join(("mlxir", *path.relative_to(_ROOT).with_suffix("").parts))
            for cls in classes.values():
                if not _is_pass_class(cls):
                    continue
                name = next(n for s in cls.body if (n := _string_assignment(s, "name")) is not None)
                docstring = ast.get_docstring(cls)
                summary = docstring.splitlines()[0] if docstring else ""
                options = _options(cls, classes)
                if options:
                    summary += f" (options: {' '.join(options)})"
                yield name, PassEntry(_lazy(module.removesuffix(".__init__"), cls.name), summary)


_XDSL_PASSES = {
    "cse": PassEntry(
        _lazy("xdsl.transforms.common_subexpression_elimination", "CommonSubexpressionElimination"),
        "Eliminates common subexpressions (xDSL's).",
    ),
    "dce": PassEntry(
        _lazy("xdsl.transforms.dead_code_elimination", "DeadCodeElimination"),
        "Removes ops whose results are unused and that have no effects (xDSL's).",
    ),
}
"""The passes of xDSL's that mlxir's pipelines run, and their summaries (xDSL's classes
have no docstring)."""


def _pattern_passes() -> Iterator[tuple[str, PassEntry]]:
    from mlxir.transforms.catalog import PATTERNS

    def factory(name: str) -> Callable[[], type[ModulePass]]:
        def make() -> type[ModulePass]:
            from mlxir.transforms.pattern_passes import pattern_pass

            return pattern_pass(name)

        return make

    for name, entry in PATTERNS.items():
        yield name, PassEntry(factory(name), entry.summary)


def _registry() -> dict[str, PassEntry]:
    passes: dict[str, PassEntry] = {}
    for name, entry in (
        *sorted(_declared_passes(), key=lambda item: item[0]),
        *_XDSL_PASSES.items(),
        *_pattern_passes(),
    ):
        if name in passes:
            raise RuntimeError(f"pass registry: two passes are named '{name}'")
        passes[name] = entry
    return passes


PASSES: dict[str, PassEntry] = _registry()
"""Pass name → factory (imported lazily so `mlx-opt --help` stays fast) and summary: the
passes of `PASS_PACKAGES` by name, xDSL's, then the catalog's patterns in its order."""


def registered_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Every pass a pipeline may name: `PASSES`, with the installed packages' plugins
    (`conversions/plugins.py`) added the first time it is asked."""
    from mlxir.conversions.plugins import load_installed_passes

    load_installed_passes()
    return {name: entry.factory for name, entry in PASSES.items()}
