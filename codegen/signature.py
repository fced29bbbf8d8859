"""A program's call signature: how the arguments and results of the exported module
nest around the program's flat inputs and outputs (torch.export's `in_spec` and
`out_spec`, as data).

    signature = Signature.from_json(text, num_inputs=5, num_outputs=3)
    signature.input_paths()    # ["input_ids", "past_kv[0]", ..., "extras['u']"]

A tree is one of:

- `leaf`: one flat value (a program input, or output), in flattening order;
- `constant`: an argument the export fixed (a float, int, bool or string): no
  program input, and a call must pass the same value;
- `none`: `None`;
- `tuple`, `list`: children by position;
- `dict`: children by `keys` (strings or integers); `type_name` "OrderedDict" for
  an ordered one;
- `namedtuple`: children by field (`keys`), rebuilt as a namedtuple `type_name`;
- `custom`: a type registered with torch's pytree (`type_name` is its
  `module.qualname`), with `keys` when its context is a list of field names.

The inputs tree is always `tuple(args tuple, kwargs dict)`; `arg_names` are the
forward's parameter names, so positional arguments may also be passed by name.

On disk and in the IR a signature is JSON-shaped data: a leaf is `"*"`, any other
node `{"kind": ..., "children": [...], "keys": [...], "type": ..., "value": ...}`
(fields only where they apply). Reading it never evaluates anything: text that is not
a well-formed signature is a `ProgramError`.
"""

from __future__ import annotations

import json
import keyword
import math
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, TypeGuard, cast

from mlxir.codegen.errors import ProgramError

if TYPE_CHECKING:  # the runtime reads the JSON form; only the compiler builds attributes
    from xdsl.ir import Attribute

SIGNATURE_ATTR = "mlxir.signature"
"""The function attribute that holds the signature in the IR."""

TreeKind = Literal["leaf", "constant", "none", "tuple", "list", "dict", "namedtuple", "custom"]
Constant = bool | int | float | str
Key = str | int

LEAF = "*"
MAX_DEPTH = 64
"""Deepest nesting a signature may have (the loader recurses over it)."""
MAX_NAME = 256
"""Longest key, type name or string constant a signature may hold."""

_FIELDS: dict[str, frozenset[str]] = {
    "constant": frozenset({"value"}),
    "none": frozenset(),
    "tuple": frozenset({"children"}),
    "list": frozenset({"children"}),
    "dict": frozenset({"children", "keys", "type"}),
    "namedtuple": frozenset({"children", "keys", "type"}),
    "custom": frozenset({"children", "keys", "type"}),
}
"""The fields each kind of node may have, besides `kind` (a leaf is `"*"`)."""


@dataclass(frozen=True)
class Tree:
    kind: TreeKind
    children: tuple[Tree, ...] = ()
    keys: tuple[Key, ...] = ()
    type_name: str = ""
    value: Constant | None = None

    @property
    def num_leaves(self) -> int:
        if self.kind == "leaf":
            return 1
        return sum(child.num_leaves for child in self.children)

    def child_path(self, path: str, index: int) -> str:
        """The path of child `index` below `path`: `p[0]`, `p['key']` or `p.field`."""
        if self.kind in ("tuple", "list") or not self.keys:
            return f"{path}[{index}]"
        key = self.keys[index]
        if self.kind in ("namedtuple", "custom") and isinstance(key, str) and key.isidentifier():
            return f"{path}.{key}"
        return f"{path}[{key!r}]"

    def leaf_paths(self, path: str) -> Iterator[str]:
        if self.kind == "leaf":
            yield path
        for i, child in enumerate(self.children):
            yield from child.leaf_paths(self.child_path(path, i))

    def constant_paths(self, path: str) -> Iterator[tuple[str, Constant]]:
        if self.kind == "constant" and self.value is not None:
            yield path, self.value
        for i, child in enumerate(self.children):
            yield from child.constant_paths(self.child_path(path, i))

    # -- JSON-shaped data ------------------------------------------------------

    def to_data(self) -> Any:
        if self.kind == "leaf":
            return LEAF
        data: dict[str, Any] = {"kind": self.kind}
        if self.kind == "constant":
            data["value"] = self.value
        if self.kind in ("tuple", "list", "dict", "namedtuple", "custom"):
            data["children"] = [child.to_data() for child in self.children]
        if self.keys:
            data["keys"] = list(self.keys)
        if self.type_name:
            data["type"] = self.type_name
        return data

    @staticmethod
    def from_data(data: Any, where: str, depth: int = 0) -> Tree:
        if depth > MAX_DEPTH:
            raise ProgramError(f"{where}: nested deeper than {MAX_DEPTH}")
        if data == LEAF:
            return Tree("leaf")
        if not _is_object(data) or data.get("kind") not in _FIELDS:
            raise ProgramError(f"{where}: expected \"*\" or a node with a known kind, got {_short(data)}")
        kind: TreeKind = data["kind"]
        unknown = sorted(set(data) - _FIELDS[kind] - {"kind"})
        if unknown:
            raise ProgramError(f"{where}: a {kind} node has no field {unknown[0]!r}")
        if kind == "constant":
            return Tree(kind, value=_constant(data.get("value"), where))
        raw_children = data.get("children", [])
        if not _is_array(raw_children):
            raise ProgramError(f"{where}: children must be a list")
        children = tuple(
            Tree.from_data(child, f"{where}.children[{i}]", depth + 1)
            for i, child in enumerate(raw_children)
        )
        keys = _keys(data.get("keys", []), where)
        type_name = data.get("type", "")
        if not isinstance(type_name, str) or len(type_name) > MAX_NAME:
            raise ProgramError(f"{where}: type must be a string of at most {MAX_NAME} characters")
        if kind == "dict" and type_name not in ("", "OrderedDict"):
            raise ProgramError(f"{where}: a dict node's type is \"OrderedDict\" or absent")
        if kind in ("dict", "namedtuple") and len(keys) != len(children):
            raise ProgramError(f"{where}: {len(keys)} keys for {len(children)} children")
        if kind == "custom" and keys and len(keys) != len(children):
            raise ProgramError(f"{where}: {len(keys)} keys for {len(children)} children")
        if kind == "namedtuple":
            _check_namedtuple(type_name, keys, where)
        if kind == "custom" and not type_name:
            raise ProgramError(f"{where}: a custom node needs its type")
        return Tree(kind, children, keys, type_name)


@dataclass(frozen=True)
class Signature:
    inputs: Tree
    """`tuple(args tuple, kwargs dict)`; its leaves are the program's inputs."""
    outputs: Tree
    """Its leaves are the program's outputs."""
    arg_names: tuple[str, ...] = ()
    """The forward's parameter names, in order (may be empty)."""
    mutated: tuple[tuple[int, int], ...] = ()
    """(output, input) pairs: the module wrote the program's output `output` into its
    input `input` (torch.export's USER_INPUT_MUTATION), so a call writes it back into
    the caller's tensor. These outputs follow the leaves of `outputs`."""

    @property
    def args(self) -> Tree:
        return self.inputs.children[0]

    @property
    def kwargs(self) -> Tree:
        return self.inputs.children[1]

    def parameters(self) -> list[str]:
        """The names a call binds: the positional arguments (by their parameter
        names, or `args[i]` when unknown), then the keyword arguments."""
        count = len(self.args.children)
        names = list(self.arg_names[:count]) if len(self.arg_names) >= count else [
            f"args[{i}]" for i in range(count)
        ]
        return names + [str(k) for k in self.kwargs.keys if k not in names]

    def input_paths(self) -> list[str]:
        """One path per program input (`past_kv[0]`, `extras['u']`)."""
        params = self.parameters()
        paths: list[str] = []
        for name, child in zip(params, self.args.children):
            paths.extend(child.leaf_paths(name))
        for key, child in zip(self.kwargs.keys, self.kwargs.children):
            paths.extend(child.leaf_paths(str(key)))
        return paths

    def constant_inputs(self) -> list[tuple[str, Constant]]:
        """The arguments the export fixed, by path, with their values."""
        params = self.parameters()
        trees = list(self.args.children) + list(self.kwargs.children)
        return [item for name, tree in zip(params, trees) for item in tree.constant_paths(name)]

    def output_paths(self) -> list[str]:
        """One path per program output (`output`, `output[0]`, `output['logits']`), and
        `x (written back)` for each input the module writes."""
        inputs = self.input_paths()
        return [*self.outputs.leaf_paths("output"), *(f"{inputs[i]} (written back)" for _, i in self.mutated)]

    # -- data, JSON and IR -------------------------------------------------------

    def to_data(self) -> dict[str, Any]:
        data: dict[str, Any] = {"inputs": self.inputs.to_data(), "outputs": self.outputs.to_data()}
        if self.arg_names:
            data["arg_names"] = list(self.arg_names)
        if self.mutated:
            data["mutated"] = [list(pair) for pair in self.mutated]
        return data

    def to_json(self) -> str:
        return json.dumps(self.to_data(), separators=(",", ":"), allow_nan=True)

    def to_attr(self) -> Attribute:
        return _attr_of(self.to_data())

    @staticmethod
    def from_data(data: Any, num_inputs: int, num_outputs: int) -> Signature:
        """Validates `data` against a program with these input and output counts."""
        where = "signature"
        if not _is_object(data) or not {"inputs", "outputs"} <= set(data):
            raise ProgramError(f"{where}: expected inputs and outputs")
        unknown = sorted(set(data) - {"inputs", "outputs", "arg_names", "mutated"})
        if unknown:
            raise ProgramError(f"{where}: unknown field {unknown[0]!r}")
        inputs = Tree.from_data(data["inputs"], f"{where}.inputs")
        outputs = Tree.from_data(data["outputs"], f"{where}.outputs")
        if (
            inputs.kind != "tuple"
            or len(inputs.children) != 2
            or inputs.children[0].kind != "tuple"
            or inputs.children[1].kind != "dict"
            or not all(isinstance(k, str) for k in inputs.children[1].keys)
        ):
            raise ProgramError(f"{where}.inputs must be a tuple of the args tuple and the kwargs dict")
        arg_names = data.get("arg_names", [])
        if not _is_array(arg_names) or not all(
            isinstance(n, str) and n.isidentifier() and len(n) <= MAX_NAME for n in arg_names
        ) or len(set(arg_names)) != len(arg_names):
            raise ProgramError(f"{where}.arg_names must be distinct identifiers")
        mutated = _mutated(data.get("mutated", []), outputs.num_leaves, num_outputs, num_inputs)
        signature = Signature(inputs, outputs, tuple(arg_names), mutated)
        if inputs.num_leaves != num_inputs:
            raise ProgramError(
                f"{where}: the inputs have {inputs.num_leaves} leaves, the program {num_inputs} inputs"
            )
        if outputs.num_leaves + len(mutated) != num_outputs:
            raise ProgramError(
                f"{where}: the outputs have {outputs.num_leaves} leaves and {len(mutated)} written-back "
                f"inputs, the program {num_outputs} outputs"
            )
        params = signature.parameters()
        if len(set(params)) != len(params):
            raise ProgramError(f"{where}: parameter names repeat: {params}")
        return signature

    @staticmethod
    def from_json(text: str, num_inputs: int, num_outputs: int) -> Signature:
        try:
            data = json.loads(text)
        except (ValueError, RecursionError) as error:
            raise ProgramError(f"signature: not valid JSON: {error}") from None
        return Signature.from_data(data, num_inputs, num_outputs)

    @staticmethod
    def from_attr(attr: Attribute, num_inputs: int, num_outputs: int) -> Signature:
        return Signature.from_data(_data_of(attr, SIGNATURE_ATTR, 0), num_inputs, num_outputs)


def flat_signature(num_inputs: int, num_outputs: int) -> Signature:
    """The signature of a program called with its inputs in order, returning a tuple."""
    leaves = tuple(Tree("leaf") for _ in range(num_inputs))
    outputs = (
        Tree("leaf")
        if num_outputs == 1
        else Tree("tuple", tuple(Tree("leaf") for _ in range(num_outputs)))
    )
    return Signature(Tree("tuple", (Tree("tuple", leaves), Tree("dict"))), outputs)


# -- validation helpers ----------------------------------------------------------


def _mutated(data: Any, first: int, num_outputs: int, num_inputs: int) -> tuple[tuple[int, int], ...]:
    """`signature.mutated`: [output, input] pairs, the outputs in order after the
    output tree's `first` leaves, each input written once."""
    where = "signature.mutated"
    if not _is_array(data):
        raise ProgramError(f"{where} must be a list of [output, input] pairs")
    pairs: list[tuple[int, int]] = []
    for k, pair in enumerate(data):
        if (
            not _is_array(pair)
            or len(pair) != 2
            or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair)
        ):
            raise ProgramError(f"{where}[{k}] must be [output, input], got {_short(pair)}")
        output, input_ = pair
        if output != first + k or output >= num_outputs:
            raise ProgramError(f"{where}[{k}]: output {output} must be {first + k}, the next after the output tree's")
        if not 0 <= input_ < num_inputs or input_ in [i for _, i in pairs]:
            raise ProgramError(f"{where}[{k}]: input {input_} is not a distinct input of {num_inputs}")
        pairs.append((output, input_))
    return tuple(pairs)


def _is_object(data: Any) -> TypeGuard[dict[str, Any]]:
    """`isinstance(data, dict)`, typed: a JSON object, whose keys are strings."""
    return isinstance(data, dict)


def _is_array(data: Any) -> TypeGuard[list[Any]]:
    """`isinstance(data, list)`, typed: a JSON array."""
    return isinstance(data, list)


def _short(data: Any) -> str:
    text = repr(data)
    return text if len(text) <= 60 else text[:57] + "..."


def _constant(value: Any, where: str) -> Constant:
    if isinstance(value, bool | float):
        return value
    if isinstance(value, int):
        if not -(2**63) <= value < 2**63:
            raise ProgramError(f"{where}: integer constant out of int64")
        return value
    if isinstance(value, str) and len(value) <= MAX_NAME:
        return value
    raise ProgramError(f"{where}: a constant is a bool, an int, a float or a short string")


def _keys(keys: Any, where: str) -> tuple[Key, ...]:
    if not _is_array(keys):
        raise ProgramError(f"{where}: keys must be a list")
    for key in keys:
        if isinstance(key, bool) or not isinstance(key, str | int):
            raise ProgramError(f"{where}: a key is a string or an integer, got {_short(key)}")
        if isinstance(key, str) and len(key) > MAX_NAME:
            raise ProgramError(f"{where}: a key is at most {MAX_NAME} characters")
    if len(set(keys)) != len(keys):
        raise ProgramError(f"{where}: keys repeat")
    return tuple(keys)


def _check_namedtuple(type_name: str, keys: tuple[Key, ...], where: str) -> None:
    names = [type_name, *keys]
    if not all(
        isinstance(n, str) and n.isidentifier() and not keyword.iskeyword(n) for n in names
    ) or any(isinstance(k, str) and k.startswith("_") for k in keys):
        raise ProgramError(f"{where}: a namedtuple's type and fields must be valid field names")


# -- JSON-shaped data <-> builtin attributes ---------------------------------------

def _attr_of(data: Any) -> Attribute:
    from xdsl.dialects.builtin import (
        ArrayAttr,
        DictionaryAttr,
        Float64Type,
        FloatAttr,
        IntegerAttr,
        IntegerType,
        StringAttr,
    )

    if _is_object(data):
        return DictionaryAttr({k: _attr_of(v) for k, v in data.items()})
    if _is_array(data):
        return ArrayAttr([_attr_of(v) for v in data])
    if isinstance(data, str):
        return StringAttr(data)
    if isinstance(data, bool):
        return IntegerAttr(int(data), IntegerType(1))
    if isinstance(data, int):
        return IntegerAttr(data, IntegerType(64))
    if isinstance(data, float):
        return FloatAttr(data, Float64Type())
    raise TypeError(f"no attribute for {type(data).__name__}")


def _data_of(attr: Attribute, where: str, depth: int) -> Any:
    from xdsl.dialects.builtin import (
        ArrayAttr,
        DictionaryAttr,
        FloatAttr,
        IntegerAttr,
        IntegerType,
        StringAttr,
    )

    if depth > 2 * MAX_DEPTH + 4:
        raise ProgramError(f"{where}: nested too deeply")
    if isinstance(attr, DictionaryAttr):
        return {k: _data_of(v, f"{where}.{k}", depth + 1) for k, v in attr.data.items()}
    if isinstance(attr, ArrayAttr):
        entries = cast("ArrayAttr[Attribute]", attr).data  # isinstance leaves the entry type unknown
        return [_data_of(v, f"{where}[{i}]", depth + 1) for i, v in enumerate(entries)]
    if isinstance(attr, StringAttr):
        return attr.data
    if isinstance(attr, IntegerAttr):
        attr = cast(IntegerAttr, attr)  # isinstance leaves its type parameter unknown
        value = attr.value.data
        return bool(value) if attr.type == IntegerType(1) else value
    if isinstance(attr, FloatAttr):
        value = attr.value.data
        return float(value) if math.isfinite(value) else value
    raise ProgramError(f"{where}: {attr} is no part of a signature")
