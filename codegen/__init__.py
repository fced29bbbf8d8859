"""The `.mlxfb` program format: FlatBuffer schema (`schema.fbs`), its generated
bindings (`fb/`), the serializer (mlx IR → bytes), the validating reader the runtime
loads with (`read_program`) and the deserializer (bytes → mlx IR)."""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mlxir.codegen.deserializer import deserialize
    from mlxir.codegen.errors import ProgramError
    from mlxir.codegen.ops import SCHEMA_VERSION
    from mlxir.codegen.parts import ProgramParts
    from mlxir.codegen.reader import (
        GlobalInfo,
        Instruction,
        ProgramInfo,
        SlotInfo,
        read_program,
    )
    from mlxir.codegen.serializer import serialize, serialize_parts

# Imported on first use: the runtime reads programs (`read_program`) without the
# serializer's and deserializer's xDSL.
_HOMES = {
    "deserialize": "deserializer",
    "ProgramError": "errors",
    "SCHEMA_VERSION": "ops",
    "GlobalInfo": "reader",
    "Instruction": "reader",
    "ProgramInfo": "reader",
    "SlotInfo": "reader",
    "read_program": "reader",
    "serialize": "serializer",
    "serialize_parts": "serializer",
    "ProgramParts": "parts",
}


def __getattr__(name: str) -> Any:
    if name not in _HOMES:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"{__name__}.{_HOMES[name]}"), name)


__all__ = [
    "SCHEMA_VERSION",
    "GlobalInfo",
    "Instruction",
    "ProgramError",
    "ProgramInfo",
    "ProgramParts",
    "SlotInfo",
    "deserialize",
    "read_program",
    "serialize",
    "serialize_parts",
]
