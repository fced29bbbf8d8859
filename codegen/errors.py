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
