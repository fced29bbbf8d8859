"""Which ops a program holds, and the structural rule each instruction must obey.

The rule of an op comes from its IRDL definition alone (operand and result
definitions, properties, segment sizes), so every present and future `mlx` op is
covered with no per-op code. The only op-specific knowledge is how the three
global access ops bind to the program's globals (`GLOBAL_ACCESS_OPS`).

The runtime reads the rules from `codegen/op_rules.py`, a table derived from the
definitions and checked in, so that loading a program does not import xDSL and its
dialects (half a second). `python -m mlxir.codegen.ops` rewrites it after an op
changes; `tests/test_codegen.py::test_the_op_rules_table_is_current` fails until then.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlxir.codegen.errors import ProgramError
from mlxir.codegen.fb.layout import FILE_IDENTIFIER

__all__ = ["FILE_IDENTIFIER"]

SCHEMA_VERSION = 1
"""The version this mlxir writes and reads; bump it on any incompatible schema change."""

SYMBOL_RANGES_ATTR = "mlxir.symbol_ranges"
INPUT_DIMS_ATTR = "mlxir.input_dims"

GLOBAL_KINDS = ("parameter", "buffer", "constant", "state")

WEIGHT_OP = "mlx.weight"
LOAD_STATE_OP = "mlx.load_state"
STORE_STATE_OP = "mlx.store_state"

GLOBAL_ACCESS_OPS: dict[str, bool] = {
    WEIGHT_OP: False,
    LOAD_STATE_OP: True,
    STORE_STATE_OP: True,
}
"""Ops whose `global_name` property names a global: op -> whether it must be state.
`mlx.weight`'s result is its global's Constant slot (the runtime binds it at load, so
the instruction is a no-op); `mlx.load_state` copies the State slot's current value
into a temporary; `mlx.store_state` sets the State slot."""

PROGRAM_ARITH_OPS = (
    "arith.constant",
    "arith.addi",
    "arith.subi",
    "arith.muli",
    "arith.floordivsi",
    "arith.remsi",
    "arith.minsi",
    "arith.maxsi",
    "arith.cmpi",
    "arith.select",
    "arith.andi",
    "arith.ori",
    "arith.xori",
)
"""The `arith` ops a program may hold, on `index`, `i64` and `i1` scalars."""

NOT_INSTRUCTIONS = frozenset({"mlx.global"})

if TYPE_CHECKING:
    from xdsl.irdl import IRDLOperation


@cache
def program_op_classes() -> dict[str, type[IRDLOperation]]:
    """Every op an instruction may name, by name."""
    from xdsl.dialects.arith import Arith
    from xdsl.irdl import IRDLOperation

    from mlxir.dialects.mlx import MLX

    ops: dict[str, type[IRDLOperation]] = {}
    for op in MLX.operations:
        if op.name not in NOT_INSTRUCTIONS and issubclass(op, IRDLOperation):
            ops[op.name] = op
    for op in Arith.operations:
        if op.name in PROGRAM_ARITH_OPS and issubclass(op, IRDLOperation):
            ops[op.name] = op
    return ops


def is_program_op(name: str) -> bool:
    return name in _op_rules()


@dataclass(frozen=True)
class OpRule:
    """What an instruction of one op must look like, from the op's IRDL definition."""

    name: str
    operands: tuple[str, ...]
    """Per operand definition: "single", "optional" or "variadic"."""
    results: tuple[str, ...]
    operand_segments: str | None
    """"property" or "attribute" when the op sizes its operand groups with
    `operandSegmentSizes`, else None."""
    result_segments: str | None
    required: frozenset[str]
    """Properties every instance has (no default value)."""
    allowed: frozenset[str]
    """Every property the op declares."""


def _arity(definition: Any) -> str:
    from xdsl.irdl.operations import OptionalDef, VariadicDef

    if isinstance(definition, OptionalDef):
        return "optional"
    if isinstance(definition, VariadicDef):
        return "variadic"
    return "single"


@cache
def _op_rules() -> dict[str, OpRule]:
    from mlxir.codegen.op_rules import OP_RULES

    return {
        name: OpRule(name, operands, results, operand_segments, result_segments, frozenset(required), frozenset(allowed))
        for name, (operands, results, operand_segments, result_segments, required, allowed) in OP_RULES.items()
    }


def program_op_rule(name: str) -> OpRule:
    rule = _op_rules().get(name)
    if rule is None:
        raise ProgramError(f"unknown op '{name}': no mlx op or supported arith op has this name")
    return rule


def derive_op_rule(op: type[IRDLOperation]) -> OpRule:
    """An op's rule, from its IRDL definition."""
    from xdsl.irdl.operations import AttrSizedOperandSegments, AttrSizedResultSegments, OptionalDef

    op_def = op.get_irdl_definition()
    operand_segments = result_segments = None
    for option in op_def.options:
        where = "property" if getattr(option, "as_property", False) else "attribute"
        if isinstance(option, AttrSizedOperandSegments):
            operand_segments = where
        elif isinstance(option, AttrSizedResultSegments):
            result_segments = where
    required = frozenset(
        prop
        for prop, prop_def in op_def.properties.items()
        if not isinstance(prop_def, OptionalDef) and prop_def.default_value is None
    )
    return OpRule(
        op.name,
        tuple(_arity(d) for _, d in op_def.operands),
        tuple(_arity(d) for _, d in op_def.results),
        operand_segments,
        result_segments,
        required,
        frozenset(op_def.properties),
    )


def check_instruction(
    rule: OpRule,
    num_operands: int,
    num_results: int,
    properties: Mapping[str, Any],
    attributes: Mapping[str, Any],
    what: str,
) -> None:
    """Checks operand and result counts and property names against `rule`.

    `properties`/`attributes` map names to records with `.kind` and `.value`."""
    missing = sorted(rule.required - set(properties))
    if missing:
        raise ProgramError(f"{what}: '{rule.name}' needs the properties {missing}")
    unknown = sorted(set(properties) - rule.allowed)
    if unknown:
        raise ProgramError(f"{what}: '{rule.name}' has no properties {unknown}")
    for count, arities, segments, attr_name, noun in (
        (num_operands, rule.operands, rule.operand_segments, "operandSegmentSizes", "operands"),
        (num_results, rule.results, rule.result_segments, "resultSegmentSizes", "results"),
    ):
        if segments is not None:
            table = properties if segments == "property" else attributes
            record = table.get(attr_name)
            sizes = record.value if record is not None and record.kind == "IntArray" else None
            if sizes is None or len(sizes) != len(arities):
                raise ProgramError(
                    f"{what}: '{rule.name}' needs {attr_name} with {len(arities)} entries"
                )
            for size, arity in zip(sizes, arities, strict=True):
                if (
                    size < 0
                    or (arity == "single" and size != 1)
                    or (arity == "optional" and size > 1)
                ):
                    raise ProgramError(f"{what}: invalid {attr_name} {list(sizes)}")
            if sum(sizes) != count:
                raise ProgramError(
                    f"{what}: {attr_name} {list(sizes)} does not add up to {count} {noun}"
                )
            continue
        fixed = arities.count("single")
        optional = arities.count("optional")
        variadic = arities.count("variadic")
        if variadic + optional > 1:
            raise ProgramError(f"{what}: '{rule.name}' has ambiguous {noun}")
        if count < fixed or (not variadic and count > fixed + optional):
            expected = (
                f"at least {fixed}"
                if variadic
                else (f"{fixed} or {fixed + 1}" if optional else str(fixed))
            )
            raise ProgramError(f"{what}: '{rule.name}' takes {expected} {noun}, got {count}")


OP_RULES_FILE = Path(__file__).with_name("op_rules.py")


def render_op_rules() -> str:
    """The text of `codegen/op_rules.py`, from the dialects' definitions."""
    lines = [
        "# ruff: noqa",
        "# Generated by `python -m mlxir.codegen.ops` from the IRDL definitions; do not edit.",
        '"""Every op an instruction may name: (operand arities, result arities, operand',
        "segments, result segments, required properties, allowed properties); see",
        '`codegen/ops.py` `OpRule`."""',
        "",
        "OP_RULES: dict[str, tuple[tuple[str, ...], tuple[str, ...], str | None, str | None, tuple[str, ...], tuple[str, ...]]] = {",
    ]
    for name in sorted(program_op_classes()):
        rule = derive_op_rule(program_op_classes()[name])
        row = (
            rule.operands,
            rule.results,
            rule.operand_segments,
            rule.result_segments,
            tuple(sorted(rule.required)),
            tuple(sorted(rule.allowed)),
        )
        lines.append(f"    {name!r}: {row!r},")
    lines.append("}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    OP_RULES_FILE.write_text(render_op_rules())
    print(f"wrote {OP_RULES_FILE}", file=sys.stderr)
