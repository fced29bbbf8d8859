"""Passes from outside the package, registered beside mlxir's own in `PASSES`
(`conversions/registry.py`), so `-p` takes them wherever it is read: `mlx-opt`,
`mlxir compile -p`, `mlxir debug --bisect`, `mlxir.compile(ep, pipeline=...)` and
`mlxir.lower`, inside pipelines that also name `lower-to-mlx`.

- A Python file: `mlx-opt --load-pass-plugin=FILE.py`, `mlxir compile
  --load-pass-plugin FILE.py`, or `mlxir.load_pass_plugin("FILE.py")`. Every
  `ModulePass` subclass the file itself defines with a `name` is registered under it.
- A Python file of dialects: `mlx-opt --load-dialect-plugin=FILE.py` or
  `mlxir.conversions.plugins.load_dialect_plugin`. Every xDSL `Dialect` it defines at
  its top level joins every context mlxir makes, so its ops parse and print beside
  `mlx.*` and a pass plugin can lower them.
- An installed package: each entry point of the group `mlxir.passes`
  (`[project.entry-points."mlxir.passes"] my-pass = "my_package.passes:MyPass"`) names
  one `ModulePass` class, registered under the entry point's name when a pipeline is
  first read.

A plugin that does not import, defines no pass, or names a pass mlxir already has
raises `PluginError`: one line that names the file or the entry point. Loading the
same file again replaces its own passes (a notebook that edits and reloads it).
docs/writing-a-pass.md walks through one.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import importlib.util
import sys
from pathlib import Path
from types import ModuleType

from xdsl.passes import ModulePass

from mlxir.conversions.registry import PASSES, PassEntry

ENTRY_POINT_GROUP = "mlxir.passes"

_ORIGINS: dict[str, str] = {}
"""Pass name -> the plugin (a file's resolved path, or `entry point NAME = VALUE`)
that registered it; mlxir's own passes have none."""

_installed_loaded = False


class PluginError(ValueError):
    """A pass plugin that cannot be used: one line naming the file or entry point."""


def load_pass_plugin(path: str | Path) -> list[str]:
    """Registers the passes the Python file at `path` defines; returns their names."""
    module, origin = _import_file(path, "pass")
    classes = _pass_classes(module)
    if not classes:
        raise PluginError(f"{path}: defines no ModulePass subclass with a `name`")
    return [_register(cls, origin, str(path)) for cls in classes]


def load_dialect_plugin(path: str | Path) -> list[str]:
    """Registers the xDSL `Dialect`s the Python file at `path` defines at its top level
    (IRDL ops of a researcher's own, beside `mlx.*`) into every context mlxir makes
    (`dialects/context.py`); returns their names. Its passes, if any, are registered
    too."""
    from xdsl.ir import Dialect

    from mlxir.dialects.context import DIALECTS

    module, origin = _import_file(path, "dialect")
    dialects = [value for value in vars(module).values() if isinstance(value, Dialect)]
    if not dialects:
        raise PluginError(f"{path}: defines no xDSL Dialect at its top level")
    for dialect in dialects:
        if dialect.name in DIALECTS and _DIALECT_ORIGINS.get(dialect.name) != origin:
            owner = _DIALECT_ORIGINS.get(dialect.name, "mlxir")
            raise PluginError(f"{path}: dialect '{dialect.name}' is already registered (by {owner})")
    for dialect in dialects:
        DIALECTS[dialect.name] = lambda dialect=dialect: dialect
        _DIALECT_ORIGINS[dialect.name] = origin
    for cls in _pass_classes(module):
        _register(cls, origin, str(path))
    return [dialect.name for dialect in dialects]


_DIALECT_ORIGINS: dict[str, str] = {}


def load_installed_passes() -> list[str]:
    """Registers the passes of the `mlxir.passes` entry points (once a process)."""
    global _installed_loaded
    if _installed_loaded:
        return []
    _installed_loaded = True
    names: list[str] = []
    for entry in importlib.metadata.entry_points(group=ENTRY_POINT_GROUP):
        described = f"entry point {entry.name} = {entry.value} ({ENTRY_POINT_GROUP})"
        try:
            loaded = entry.load()
        except Exception as error:
            raise PluginError(f"{described}: failed to import: {_one_line(error)}") from None
        if not (isinstance(loaded, type) and issubclass(loaded, ModulePass)):
            raise PluginError(f"{described}: not a ModulePass subclass")
        if getattr(loaded, "name", None) != entry.name:
            raise PluginError(f"{described}: the class's `name` is {getattr(loaded, 'name', None)!r}, not '{entry.name}'")
        names.append(_register(loaded, described, described))
    return names


def _import_file(path: str | Path, kind: str) -> tuple[ModuleType, str]:
    """The module the Python file at `path` is, imported under a name of its own, and
    its resolved path."""
    file = Path(path)
    if not file.is_file():
        raise PluginError(f"{path}: no such {kind} plugin file")
    origin = str(file.resolve())
    module_name = "mlxir_pass_plugin_" + hashlib.sha1(origin.encode()).hexdigest()[:12]
    spec = importlib.util.spec_from_file_location(module_name, file)
    if spec is None or spec.loader is None:
        raise PluginError(f"{path}: not a Python file that can be imported")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module  # dataclasses and pickling look their module up
    try:
        spec.loader.exec_module(module)
    except Exception as error:
        del sys.modules[module_name]
        raise PluginError(f"{path}: the {kind} plugin failed to import: {_one_line(error)}") from None
    return module, origin


def _pass_classes(module: ModuleType) -> list[type[ModulePass]]:
    """The `ModulePass` subclasses with a `name` that `module` itself defines."""
    return [
        value
        for value in vars(module).values()
        if isinstance(value, type)
        and issubclass(value, ModulePass)
        and value.__module__ == module.__name__
        and isinstance(getattr(value, "name", None), str)
    ]


def _register(cls: type[ModulePass], origin: str, shown: str) -> str:
    name = cls.name
    if name in PASSES and _ORIGINS.get(name) != origin:
        owner = _ORIGINS.get(name, "mlxir")
        raise PluginError(f"{shown}: pass '{name}' is already registered (by {owner})")
    docstring = (cls.__doc__ or "").strip()
    summary = docstring.splitlines()[0] if docstring else f"(from {shown})"
    PASSES[name] = PassEntry(lambda: cls, summary)
    _ORIGINS[name] = origin
    return name


def _one_line(error: BaseException) -> str:
    if isinstance(error, SyntaxError):
        return f"SyntaxError: {error.msg} (line {error.lineno})"
    text = str(error).strip()
    return f"{type(error).__name__}: {text.splitlines()[0]}" if text else type(error).__name__
