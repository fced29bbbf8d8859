"""A program's weights into MLX through MLX's own loader (`mx.load`).

The payload segment of an `.mlxfb` (`codegen/schema.fbs`) holds every global's bytes,
raw and little-endian, at 64-byte aligned offsets: the same bytes a `.safetensors`
file holds after its header. So the loader presents the program to `mx.load` as a
safetensors file that exists only as a stream (`SafetensorsView`): a header built in
memory from the validated globals (`read_program` checked each payload's bounds,
dtype and shape), followed by the segment, read in place. MLX then reads each weight
straight into its own buffer, one copy, as it does for a real `.safetensors` file;
from a file the bytes come with `pread` and never enter this process any other way
(no NumPy views touched, no page of a mapping made resident).

This keeps the program one file and its format unchanged: the segment already is
the data section MLX reads, only the header is virtual. (A sidecar `.safetensors`
would make a program two files that must travel together.)

Element types MLX's safetensors reader lacks (float64), and the payloads of small
programs (`THROUGH_MLX_FROM`), are copied from a `memoryview` of the buffer instead
(`Payload.mx`). Neither path imports NumPy.
"""

from __future__ import annotations

import atexit
import io
import json
import os
import struct
import threading
import time
import weakref
from _queue import SimpleQueue
from collections.abc import Callable
from dataclasses import replace
from functools import cache

import mlx.core as mx

from mlxir.codegen.errors import ProgramError
from mlxir.codegen.reader import ProgramInfo
from mlxir.support import dtypes

ReadAt = Callable[[memoryview, int], int]
"""Fills the view from the segment at an offset; returns how many bytes it filled."""


class SafetensorsView(io.RawIOBase):
    """A read-only safetensors stream: `header`, then the segment through `read_at`."""

    def __init__(self, header: bytes, segment_size: int, read_at: ReadAt):
        super().__init__()
        self._header = header
        self._size = len(header) + segment_size
        self._read_at = read_at
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: bytearray | memoryview) -> int:  # pyright: ignore[reportIncompatibleMethodOverride] (typeshed names RawIOBase.readinto's buffer a WriteableBuffer; this reader takes the two kinds MLX passes)
        view = memoryview(buffer).cast("B")
        filled = 0
        header_size = len(self._header)
        if self._position < header_size:
            filled = min(len(view), header_size - self._position)
            view[:filled] = self._header[self._position : self._position + filled]
        while filled < len(view) and self._position + filled < self._size:
            count = self._read_at(view[filled:], self._position + filled - header_size)
            if count <= 0:
                break
            filled += count
        self._position += filled
        return filled


def safetensors_header(info: ProgramInfo, slots: list[int]) -> bytes:
    """The header of a safetensors file whose data section is the payload segment,
    naming each of `slots` (constant and state slots) by its number."""
    offsets = {g.slot: (g.offset, g.length) for g in info.globals}
    entries = {
        str(slot): {
            "dtype": dtypes.BY_NAME[info.slots[slot].dtype].safetensors,
            "shape": [int(d or 0) for d in info.slots[slot].shape],
            "data_offsets": [offsets[slot][0], offsets[slot][0] + offsets[slot][1]],
        }
        for slot in slots
    }
    text = json.dumps(entries, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)  # the data section starts 8-aligned, as safetensors writes it
    return struct.pack("<Q", len(text)) + text


READ_CHUNK = 1 << 20
"""Reads of a weight this big or bigger are split over threads (`pread` releases the
GIL), as MLX's own file reader splits its reads: one thread alone is slow to fault in
MLX's fresh pages. Measured here on a 225 MB program (5 processes each): 0.11-0.13 s
for the payloads with 8 MB pieces, 0.09-0.10 s with 1 MB, against 0.08-0.10 s for
`mx.load` of the same weights as a `.safetensors` file."""


Read = tuple[int, memoryview, int]
"""One `pread`: the file, the view to fill, the file offset."""


class _Readers:
    """Threads that run `pread`s for the loads of the process, started once (daemons,
    idle in a queue between loads). Not `concurrent.futures`: its import (with
    `logging`) was 6 ms of the runtime's 34 ms import here."""

    def __init__(self, threads: int):
        self.threads = threads
        self._jobs: SimpleQueue[tuple[Read, SimpleQueue[tuple[int, int | OSError]]]] = SimpleQueue()
        for number in range(threads):
            threading.Thread(target=self._serve, name=f"mlxir-load-{number}", daemon=True).start()

    def _serve(self) -> None:
        while True:
            (fd, view, offset), done = self._jobs.get()
            try:
                done.put((offset, os.preadv(fd, [view], offset)))
            except OSError as error:
                done.put((offset, error))

    def read(self, reads: list[Read]) -> list[int]:
        """Runs `reads` at once (the first in the calling thread); the byte count of
        each, in order. An `OSError` of any of them is raised once all have ended."""
        done: SimpleQueue[tuple[int, int | OSError]] = SimpleQueue()
        for job in reads[1:]:
            self._jobs.put((job, done))
        fd, view, offset = reads[0]
        counts: dict[int, int | OSError] = {}
        try:
            counts[offset] = os.preadv(fd, [view], offset)
        except OSError as error:
            counts[offset] = error
        while len(counts) < len(reads):
            at, count = done.get()
            counts[at] = count
        results = [counts[offset] for _, _, offset in reads]
        for result in results:
            if isinstance(result, OSError):
                raise result
        return [result for result in results if isinstance(result, int)]


@cache
def _readers() -> _Readers | None:
    """The readers' threads, shared by every load of the process (None: one core)."""
    workers = min(4, os.cpu_count() or 1)
    return _Readers(workers - 1) if workers > 1 else None


def _parallel_pread(fd: int, start: int, segment_size: int) -> ReadAt:
    def read_at(view: memoryview, offset: int) -> int:
        view = view[: max(0, segment_size - offset)]
        readers = _readers() if len(view) >= READ_CHUNK else None
        if readers is None:
            return os.preadv(fd, [view], start + offset)
        step = -(-len(view) // (readers.threads + 1))
        reads = [(fd, view[i : i + step], start + offset + i) for i in range(0, len(view), step)]
        done = 0
        for count, (_, part, _) in zip(readers.read(reads), reads, strict=True):
            done += count
            if count < len(part):  # a short read: the caller asks again from there
                break
        return done

    return read_at


THROUGH_MLX_FROM = 1 << 20
"""Programs with fewer payload bytes than this copy their payloads from views of the
buffer (`Payload.mx`): `mx.load` costs about 0.5 ms more per load, which only pays
off for weights worth reading in place."""


def _copy_from(buffer: memoryview, start: int, segment_size: int) -> ReadAt:
    def read_at(view: memoryview, offset: int) -> int:
        count = max(0, min(len(view), segment_size - offset))
        view[:count] = buffer[start + offset : start + offset + count]
        return count

    return read_at


_STREAMS_IN_MLX: weakref.WeakSet[SafetensorsView] = weakref.WeakSet()
"""Streams handed to `mx.load`, alive while MLX's loader still holds them."""

EXIT_WAIT_S = 2.0


@cache
def _release_streams_at_exit() -> None:
    atexit.register(_wait_for_mlx_to_release_streams)


def _wait_for_mlx_to_release_streams() -> None:
    """MLX's reader threads drop their references to a stream after reading, each
    taking the GIL to do it, a moment after `mx.eval` returned. A thread that takes the
    GIL once the interpreter is finalizing is ended by Python with `pthread_exit`,
    which C++ turns into `std::terminate` (an abort, exit code 134), so a process that
    exits right after a load waits here (at most `EXIT_WAIT_S`, before finalizing) for
    those references to go."""
    deadline = time.monotonic() + EXIT_WAIT_S
    while len(_STREAMS_IN_MLX) and time.monotonic() < deadline:
        time.sleep(0.001)  # releases the GIL to MLX's threads


def bind_payloads(
    info: ProgramInfo, buffer: memoryview, fd: int | None = None, read_segment: ReadAt | None = None
) -> dict[int, mx.array]:
    """Every global's payload as an `mx.array`, by slot. `buffer` holds the program's
    bytes; with `fd` (the program's open file), the payloads are read from the file
    instead, and the buffer's payload pages are never touched; with `read_segment`
    (a program's parts, `codegen/parts.py`), they are read through it, and the
    buffer may lack them."""
    start = info.segment_start
    segment_size = len(buffer) - start
    total = sum(g.length for g in info.globals)
    through_mlx = (
        [s for s in sorted(info.payloads) if dtypes.BY_NAME[info.slots[s].dtype].safetensors]
        if total >= THROUGH_MLX_FROM
        else []
    )
    arrays: dict[int, mx.array] = {}
    if through_mlx:
        read_at = (
            read_segment
            if read_segment is not None
            else _parallel_pread(fd, start, segment_size)
            if fd is not None and hasattr(os, "preadv")  # not on every platform
            else _copy_from(buffer, start, segment_size)
        )
        stream = SafetensorsView(safetensors_header(info, through_mlx), segment_size, read_at)
        _release_streams_at_exit()
        _STREAMS_IN_MLX.add(stream)
        try:
            loaded = mx.load(stream, format="safetensors")  # pyright: ignore[reportArgumentType] (mlx.core's stub wants a path or a binary file; it reads any object with read and seek)
        except (RuntimeError, ValueError, OSError) as error:  # e.g. the file shrank under us
            raise ProgramError(f"cannot read the weights: {error}") from None
        assert isinstance(loaded, dict)
        arrays = {int(name): array for name, array in loaded.items()}
    for slot in sorted(set(info.payloads) - set(through_mlx)):
        payload = info.payloads[slot]
        if read_segment is not None:
            data = bytearray(payload.length)
            read_segment(memoryview(data), payload.offset)
            payload = replace(payload, segment=memoryview(data), offset=0)
        arrays[slot] = payload.mx()
    mx.eval(list(arrays.values()))  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
    return arrays
