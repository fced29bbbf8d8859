"""The one error type of the program format."""

from __future__ import annotations


class ProgramError(ValueError):
    """A program cannot be written or read: IR the format cannot hold (raised by
    `serialize`), or a `.mlxfb` file that is truncated, corrupted, from another
    schema version or otherwise invalid (raised by `read_program` and
    `deserialize`). The message says what is wrong and where.

    Loading untrusted bytes raises nothing else: every offset, length, index and
    enum is checked before use, and errors of the FlatBuffers runtime are wrapped.
    Re-exported as `mlxir.ProgramError`."""


class BackendError(ProgramError):
    """A valid program that MLX's backend on this machine cannot run, refused at load
    rather than in the middle of a call: float64 on a GPU, or an op MLX lacks for a
    dtype (a float64 transposed convolution on the CPU, MLX 0.32). `reason` says what
    is lacking; `where`, the instruction that needs it (empty for the whole program)."""

    def __init__(self, reason: str, where: str = ""):
        super().__init__(f"{where}: {reason}" if where else reason)
        self.reason = reason
        self.where = where
