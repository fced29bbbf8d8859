"""What `mlx-opt` needs to read and write `.mlxfb` programs.

    mlx-opt model.mlir -t mlx-fb -o model.mlxfb   # serialize (binary, so -o or a pipe)
    mlx-opt model.mlxfb                           # print a program as mlx IR

A program's weights travel in its IR, each global's as its `dense<...>` value
(`dialects/weights.py`): reading a `.mlxfb` puts them there, the `mlx-fb` target writes
them, and the printed IR holds them.
"""

from __future__ import annotations

import sys
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp

from mlxir.codegen.deserializer import deserialize
from mlxir.codegen.errors import ProgramError
from mlxir.codegen.serializer import serialize

FRONTEND = "mlxfb"
"""The file extension (and `-f` frontend name) of programs."""
TARGET = "mlx-fb"
"""The `-t` target that writes a program."""


class MlxfbSession:
    """Reads and writes programs for `mlx-opt`; the weights travel in the IR."""

    def parse(self, ctx: Context, stream: IO[bytes], input_name: str) -> ModuleOp:
        try:
            return deserialize(stream.read(), ctx)
        except ProgramError as error:
            raise ProgramError(f"{input_name}: {error}") from None

    def emit(self, module: ModuleOp) -> bytes:
        return serialize(module)


class BinaryOutput:
    """A binary sink for `-o FILE` (created at the first write, so a failed run leaves
    no empty file) or standard output (never a terminal)."""

    def __init__(self, path: str | None):
        self.path = path
        self._file: IO[bytes] | None = None
        if path is None and sys.stdout.isatty():
            raise ProgramError(
                f"-t {TARGET} writes a binary program: give -o FILE or redirect the output"
            )

    def write(self, data: bytes | str) -> int:
        if isinstance(data, str):
            raise ProgramError(
                f"-t {TARGET} writes one program: --split-input-file is not supported"
            )
        file = self._file
        if file is None:
            file = open(self.path, "wb") if self.path is not None else sys.stdout.buffer
            self._file = file
        return file.write(data)

    def flush(self) -> None:
        if self._file is not None:
            self._file.flush()

    def close(self) -> None:
        if self._file is not None and self._file is not sys.stdout.buffer:
            self._file.close()
