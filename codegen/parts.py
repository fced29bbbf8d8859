"""A program's bytes in the pieces the serializer laid out, not joined.

Joining a large program's pieces into one `bytes` costs a copy of every weight into
fresh memory: 4.9 of the 5.5 s that serializing the Qwen3-0.6B shape took here
(`docs/compile-time.md`). A file is written piece by piece instead, and a program
compiled in memory loads its weights from the pieces (`runtime/program.py`).

Needs no xDSL: the runtime loads these.
"""

from __future__ import annotations

import mmap
from bisect import bisect_right
from dataclasses import dataclass, field
from typing import BinaryIO


@dataclass(frozen=True)
class ProgramParts:
    """An `.mlxfb` program as `serialize_parts` laid it out: `head` (the FlatBuffer,
    padded to the payload segment), then the segment's `chunks` in order (payloads and
    their padding). `bytes(parts)` is `serialize`'s result.

    A weight among the chunks may be a view of the array it came from (an exported
    tensor, or what a pass computed): the parts read those arrays as they are when the
    program is written or loaded."""

    head: bytes
    chunks: tuple[bytes | memoryview, ...]
    global_chunks: frozenset[int] = frozenset()
    """The indices of the chunks that are globals' payloads."""
    _starts: list[int] = field(init=False, repr=False, compare=False)
    """Each chunk's offset in the segment."""

    def __post_init__(self) -> None:
        starts: list[int] = []
        position = 0
        for chunk in self.chunks:
            starts.append(position)
            position += len(chunk)
        object.__setattr__(self, "_starts", starts)

    @property
    def segment_size(self) -> int:
        return self._starts[-1] + len(self.chunks[-1]) if self.chunks else 0

    def __len__(self) -> int:
        return len(self.head) + self.segment_size

    def __bytes__(self) -> bytes:
        return b"".join([self.head, *self.chunks])

    def __getitem__(self, span: slice) -> bytes:
        """The program's bytes in `span` (a step-1 slice), as `bytes(self)[span]`."""
        start, stop, step = span.indices(len(self))
        if step != 1:
            raise ValueError("a program's parts are sliced with step 1")
        head = self.head[start:stop]
        if stop <= len(self.head):
            return head
        rest = bytearray(stop - max(start, len(self.head)))
        filled = self.read_at(memoryview(rest), max(0, start - len(self.head)))
        return head + bytes(rest[:filled])

    def write(self, file: BinaryIO) -> None:
        """Writes the program to `file`, chunk by chunk."""
        file.write(self.head)
        for chunk in self.chunks:
            file.write(chunk)

    def read_at(self, view: memoryview, offset: int) -> int:
        """Fills `view` from the segment at `offset`; returns how many bytes it filled
        (fewer at the segment's end)."""
        filled = 0
        index = max(0, bisect_right(self._starts, offset) - 1)
        while filled < len(view) and index < len(self.chunks):
            chunk, start = self.chunks[index], self._starts[index]
            within = offset + filled - start
            count = min(len(chunk) - within, len(view) - filled)
            if count > 0:
                view[filled : filled + count] = memoryview(chunk).cast("B")[within : within + count]
                filled += count
            index += 1
        return filled

    def skeleton(self) -> tuple[mmap.mmap, list[tuple[int, int]]]:
        """The program's bytes in an anonymous mapping, except the globals' payloads
        that are views (the large weights): their ranges (offset in the program,
        length) are returned and left as the mapping gives them, zero and never made
        resident. The reader validates the skeleton; the weights are read from the
        parts (`read_at`)."""
        buffer = mmap.mmap(-1, len(self))  # a program is never empty
        buffer[: len(self.head)] = self.head
        missing: list[tuple[int, int]] = []
        base = len(self.head)
        for index, (chunk, start) in enumerate(zip(self.chunks, self._starts, strict=True)):
            if isinstance(chunk, memoryview) and index in self.global_chunks:
                missing.append((base + start, len(chunk)))
            else:
                buffer[base + start : base + start + len(chunk)] = chunk
        return buffer, missing
