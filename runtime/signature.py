"""Calling a program like the module it was exported from: `bind_inputs` flattens a
call's `*args, **kwargs` along the program's signature (`codegen/signature.py`) into
its flat inputs, each with its path; `build_outputs` nests the flat outputs back into
the exported output structure.

Binding accepts what `ExportedProgram.module()` accepts, and a little more: a
positional argument may also be passed by its name, a tuple where a list was exported
(and the reverse), and an argument exported as `None` may be left out. A call of the
wrong structure raises `InputError` naming the path (`past_kv[3]: expected a tensor,
got str`, `missing argument 'scale'`).

Custom pytree types (registered with torch's pytree, like transformers' `ModelOutput`)
are flattened with the flatten function registered in the calling process, and come
back as that type when it is registered there (with field names as its context), else
as a dict of their fields (or a tuple without field names).
"""

from __future__ import annotations

import collections
import sys
from collections.abc import Callable, Iterator, Mapping, Sequence
from functools import cache
from typing import Any, cast

import mlx.core as mx

from mlxir.codegen.signature import Signature, Tree
from mlxir.evaluator.arrays import to_numpy, to_torch


class InputError(ValueError):
    """A call's inputs do not match the program's signature."""


def bind_inputs(
    signature: Signature, args: Sequence[Any], kwargs: Mapping[str, Any]
) -> list[tuple[str, Any]]:
    """The program's flat inputs of the call `(*args, **kwargs)`, each with its path."""
    params = signature.parameters()
    if len(args) > len(params):
        raise InputError(
            f"the program takes {len(params)} argument{'s' if len(params) != 1 else ''} "
            f"({', '.join(params)}), got {len(args)} positional"
        )
    bound = dict(zip(params, args))
    for name, value in kwargs.items():
        if name not in params:
            raise InputError(
                f"unexpected argument '{name}': the program takes {', '.join(params) or 'none'}"
            )
        if name in bound:
            raise InputError(f"argument '{name}' given twice (by position and by name)")
        bound[name] = value
    trees = list(signature.args.children) + list(signature.kwargs.children)
    for name, tree in zip(params, trees):
        if name not in bound:
            if tree.kind != "none":
                raise InputError(f"missing argument '{name}'")
            bound[name] = None
    leaves: list[tuple[str, Any]] = []
    for name, tree in zip(params, trees):
        _flatten(tree, bound[name], name, leaves)
    return leaves


def _flatten(tree: Tree, value: Any, path: str, leaves: list[tuple[str, Any]]) -> None:
    kind = tree.kind
    if kind == "leaf":
        leaves.append((path, value))
        return
    if kind == "constant":
        if type(value) is not type(tree.value) and not (
            isinstance(tree.value, float) and type(value) is int
        ) or value != tree.value:
            raise InputError(
                f"{path}: the program was exported with {tree.value!r} here (a constant), "
                f"got {_describe(value)}"
            )
        return
    if kind == "none":
        if value is not None:
            raise InputError(f"{path}: expected None, got {_describe(value)}")
        return
    children: list[Any]
    if kind in ("tuple", "list", "namedtuple"):
        if not isinstance(value, tuple | list):
            raise InputError(
                f"{path}: expected a {kind} of {len(tree.children)}, got {_describe(value)}"
            )
        children = list(cast(Sequence[Any], value))
    elif kind == "dict":
        if not isinstance(value, Mapping):
            raise InputError(f"{path}: expected a dict with keys {list(tree.keys)}, got {_describe(value)}")
        mapping = cast(Mapping[Any, Any], value)
        missing = [k for k in tree.keys if k not in mapping]
        if missing:
            raise InputError(f"missing {path}[{missing[0]!r}]")
        extra = [k for k in mapping if k not in tree.keys]
        if extra:
            raise InputError(f"{path}: unexpected key {extra[0]!r} (expected {list(tree.keys)})")
        children = [mapping[k] for k in tree.keys]
    else:
        children = _custom_children(tree, value, path)
    if len(children) != len(tree.children):
        raise InputError(
            f"{path}: expected {len(tree.children)} items, got {_describe(value)}"
        )
    for i, (child, item) in enumerate(zip(tree.children, children)):
        _flatten(child, item, tree.child_path(path, i), leaves)


def _custom_children(tree: Tree, value: object, path: str) -> list[Any]:
    node = _registered(type(value))
    if node is None or _type_name(type(value)) != tree.type_name:
        raise InputError(f"{path}: expected a {tree.type_name}, got {_describe(value)}")
    children, _ = node.flatten_fn(value)
    return list(children)


def _registered(cls: type) -> Any:
    """torch's pytree registration of `cls` in this process (None without torch)."""
    pytree = sys.modules.get("torch.utils._pytree")
    return None if pytree is None else pytree.SUPPORTED_NODES.get(cls)


def _type_name(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def _describe(value: Any) -> str:
    shape = getattr(value, "shape", None)
    if shape is not None and hasattr(value, "dtype"):
        dtype = str(value.dtype).removeprefix("torch.").removeprefix("mlx.core.")
        return f"a tensor {dtype}{list(shape)}"
    if isinstance(value, tuple | list):
        items = cast(Sequence[Any], value)
        return f"a {type(items).__name__} of {len(items)}"
    if isinstance(value, Mapping):
        mapping = cast(Mapping[Any, Any], value)
        return f"a {type(mapping).__name__} with keys {list(mapping)}"
    if isinstance(value, bool | int | float) or value is None:
        return repr(value)
    return type(value).__name__


def nest_inputs(signature: Signature, inputs: Sequence[Any]) -> tuple[tuple[Any, ...], dict[str, Any]]:
    """The `(args, kwargs)` of a call whose flat inputs are `inputs` (the reverse of
    `bind_inputs`; a custom pytree node comes out as a dict of its fields)."""
    values = iter(inputs)
    args = tuple(_build(child, values) for child in signature.args.children)
    kwargs = {str(k): _build(child, values) for k, child in zip(signature.kwargs.keys, signature.kwargs.children)}
    return args, kwargs


def build_outputs(tree: Tree, values: Sequence[Any]) -> Any:
    """`values` (the program's flat outputs) nested as `tree` says."""
    return _build(tree, iter(values))


def _build(tree: Tree, values: Iterator[Any]) -> Any:
    kind = tree.kind
    if kind == "leaf":
        return next(values)
    if kind == "constant":
        return tree.value
    if kind == "none":
        return None
    children = [_build(child, values) for child in tree.children]
    if kind == "tuple":
        return tuple(children)
    if kind == "list":
        return children
    if kind == "dict":
        items = zip(tree.keys, children)
        return collections.OrderedDict(items) if tree.type_name else dict(items)
    if kind == "namedtuple":
        return _namedtuple(tree.type_name, tuple(str(k) for k in tree.keys))(*children)
    return _custom(tree, children)


@cache
def _namedtuple(name: str, fields: tuple[str, ...]) -> type:
    return collections.namedtuple(name, fields)  # pyright: ignore[reportUntypedNamedTuple] (its fields are known at run time only)


def _custom(tree: Tree, children: list[Any]) -> Any:
    if not tree.keys:
        return tuple(children)
    pytree = sys.modules.get("torch.utils._pytree")
    if pytree is not None:
        for cls, node in list(pytree.SUPPORTED_NODES.items()):
            if _type_name(cls) == tree.type_name:
                try:
                    return node.unflatten_fn(children, list(tree.keys))
                except Exception:  # registered differently here than where it was exported
                    break
    return dict(zip(tree.keys, children))


_CONVERTERS: dict[str, Callable[[Any], Any]] = {
    "torch": to_torch,
    "numpy": to_numpy,
    "mlx": lambda array: array,
}


def convert(value: Any, kind: str) -> Any:
    if isinstance(value, mx.array):
        return _CONVERTERS.get(kind, _CONVERTERS["mlx"])(value)
    return value


def write_back(target: Any, value: Any, path: str) -> None:
    """The module wrote its input `path` (`x.uniform_()`, `x.add_(1)`): the caller's
    tensor takes the program's new value, as eager PyTorch would have left it."""
    kind = type(target).__module__.split(".")[0]
    if isinstance(target, mx.array):
        target[...] = value if isinstance(value, mx.array) else mx.array(value)
    elif kind == "torch":
        target.copy_(value if type(value).__module__.startswith("torch") else to_torch(mx.array(value)))
    elif kind == "numpy":
        import numpy as np

        np.copyto(target, cast(Any, value) if isinstance(value, np.ndarray) else to_numpy(mx.array(value)))
    else:
        raise InputError(
            f"input {path!r}: the module writes it, so it must be a torch, NumPy or MLX tensor, "
            f"not {type(target).__name__}"
        )
