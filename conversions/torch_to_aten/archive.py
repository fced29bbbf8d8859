"""Reading a saved `torch.export` archive (`.pt2`): `load_archive`, the one loader of
`mlxir compile`, `mlx-opt` and the Model Explorer adapter.

An archive records its inputs' and outputs' pytree types by name (`in_spec`,
`out_spec`), and `torch.export.load` rebuilds them from the types registered in the
loading process. A transformers model returns a `ModelOutput` subclass, which
transformers registers when the module defining it is imported; a fresh process that
has not imported it cannot load the archive. `load_archive` imports the defining
module of such a type, for the model libraries in `AUTO_IMPORTED_PACKAGES`, and
otherwise names each type that is missing."""

from __future__ import annotations

import importlib
import io
import json
import zipfile
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any, cast

AUTO_IMPORTED_PACKAGES = ("transformers", "diffusers", "timm", "torchvision")
"""Libraries whose modules `load_archive` imports to register an archive's pytree types
(they register their output classes when imported). No other module named in an
archive is imported: it names the type instead."""


class ArchiveError(ValueError):
    """A file that is not a loadable `torch.export` archive, with the reason."""


def load_archive(source: str | Path | IO[bytes], name: str | None = None) -> Any:
    """The `ExportedProgram` saved in `source` (a path or a binary stream); `name` is
    what an error calls it (default: the path). Raises `ArchiveError`."""
    import torch

    from mlxir.support.quiet import quiet_torch_export_logs

    label = name or str(source)
    if isinstance(source, str | Path):
        path = Path(source)
        if not path.exists():
            raise ArchiveError(f"cannot open '{label}': no such file")
        data = path.read_bytes()
    else:
        data = source.read()

    def load() -> Any:
        with quiet_torch_export_logs():
            return torch.export.load(io.BytesIO(data))

    try:
        return load()
    except Exception as error:  # torch raises many types for a bad archive
        failure: Exception = error
    missing = unregistered_types(data)
    if any(_import_defining_module(type_name) for type_name in missing):
        try:
            return load()
        except Exception as error:  # as above
            failure = error
        missing = unregistered_types(data)
    if missing:
        raise ArchiveError(
            f"'{label}' saves inputs or outputs of type(s) {', '.join(missing)}, which this "
            "process has not registered as pytree nodes: import the module that defines "
            "and registers them (torch.utils._pytree.register_pytree_node) before loading"
        ) from failure
    raise ArchiveError(f"'{label}' is not a torch.export archive (.pt2): {_one_line(failure)}") from failure


def unregistered_types(data: bytes) -> list[str]:
    """The pytree type names of the archive's signatures that this process cannot
    rebuild (not registered for serialization), in order; [] if it has none or cannot
    be read."""
    from torch.utils._pytree import SERIALIZED_TYPE_TO_PYTHON_TYPE

    known = cast(dict[str, Any], SERIALIZED_TYPE_TO_PYTHON_TYPE)
    found: list[str] = []
    for type_name in _spec_types(data):
        if type_name not in known and type_name not in found:
            found.append(type_name)
    return found


def _spec_types(data: bytes) -> Iterator[str]:
    """Every pytree type named by the treespecs of the archive's program files."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        names = [n for n in archive.namelist() if "/models/" in n and n.endswith(".json")]
        documents = [json.loads(archive.read(n)) for n in names]
    except (zipfile.BadZipFile, ValueError, KeyError):
        return
    for document in documents:
        for spec in _spec_strings(document):
            try:
                yield from _types_in(json.loads(spec))
            except ValueError:
                continue


def _spec_strings(value: Any) -> Iterator[str]:
    """The string values of every `in_spec` / `out_spec` key, at any depth."""
    if isinstance(value, dict):
        for key, item in cast(dict[str, Any], value).items():
            if key in ("in_spec", "out_spec") and isinstance(item, str):
                yield item
            else:
                yield from _spec_strings(item)
    elif isinstance(value, list):
        for item in cast(list[Any], value):
            yield from _spec_strings(item)


def _types_in(spec: Any) -> Iterator[str]:
    """The `type` names of a parsed treespec (`[protocol, {"type", "children_spec"}]`)."""
    if isinstance(spec, dict):
        node = cast(dict[str, Any], spec)
        if isinstance(node.get("type"), str):
            yield node["type"]
        children = cast(list[Any], node.get("children_spec") or [])
        for child in children:
            yield from _types_in(child)
    elif isinstance(spec, list):
        for item in cast(list[Any], spec):
            yield from _types_in(item)


def _import_defining_module(type_name: str) -> bool:
    """Imports the module defining `type_name` if it is in `AUTO_IMPORTED_PACKAGES`
    and importable; whether it did."""
    module, _, _ = type_name.rpartition(".")
    if not module or module.split(".")[0] not in AUTO_IMPORTED_PACKAGES:
        return False
    try:
        importlib.import_module(module)
    except Exception:  # not installed, or broken: the type is then named as missing
        return False
    return True


def _one_line(error: BaseException) -> str:
    return " ".join(str(error).split()) or type(error).__name__
