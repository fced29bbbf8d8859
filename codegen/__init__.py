"""The `.mlxfb` program format: FlatBuffer schema (`schema.fbs`), its generated
bindings (`fb/`), the serializer (mlx IR → bytes), the validating reader the runtime
loads with (`read_program`) and the deserializer (bytes → mlx IR)."""

from mlxir.codegen.deserializer import deserialize
from mlxir.codegen.errors import ProgramError
from mlxir.codegen.ops import SCHEMA_VERSION
from mlxir.codegen.program import (
    GlobalInfo,
    Instruction,
    ProgramInfo,
    SlotInfo,
    read_program,
)
from mlxir.codegen.serializer import serialize

__all__ = [
    "SCHEMA_VERSION",
    "GlobalInfo",
    "Instruction",
    "ProgramError",
    "ProgramInfo",
    "SlotInfo",
    "deserialize",
    "read_program",
    "serialize",
]
