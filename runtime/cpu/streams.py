"""Extra CPU streams, so that a kernel MLX runs on one thread can use every core.

MLX's CPU backend runs each stream's ops on that stream's own thread, one op at a
time, and most of its CPU kernels use that one thread. Its float matmuls call the BLAS,
which has threads of its own, but its quantized matmul does not: on a 2-core machine a
4-bit `mx.quantized_matmul` of one row by a 32000 x 512 weight took 15.8 ms, and the
same product as two halves of the weight's rows, one on a second CPU stream, 8.1 ms,
with bit-identical outputs (each output is the same dot product, computed by the same
loop, whichever block of rows it falls in).

`cpu_streams()` are the streams a kernel may spread such work over: the calling
thread's default CPU stream and `count - 1` more, created on its first use in that
thread (MLX 0.32's streams belong to the thread that made them: another thread's are
refused with "There is no Stream(cpu, 1) in current thread"), so each thread that runs
such a kernel keeps `count - 1` streams of its own for its lifetime. A compiled trace
that holds them runs only in its thread: `thread_token()` names the calling thread's
set, for the program's trace cache. `count` is `MLXIR_CPU_STREAMS` when
set (`1` turns the spreading off), else the CPUs this process may run on, at most
`MAX_CPU_STREAMS`; `fewer_cpu_streams(n)` lowers it for a block of code in the current
thread (a test's comparison, or an `.mlxfn` export, whose file should not depend on
the exporting machine's cores). A compiled trace keeps the split it was traced with.
"""

from __future__ import annotations

import contextlib
import contextvars
import itertools
import os
import threading
from collections.abc import Generator

import mlx.core as mx

MAX_CPU_STREAMS = 8

_limit: contextvars.ContextVar[int | None] = contextvars.ContextVar("mlxir_cpu_streams", default=None)
_thread = threading.local()
"""`created`: the calling thread's extra streams; `token`: a number no other thread's
set has had (a thread's ident may be reused after it ends, its streams are not)."""
_tokens = itertools.count(1)


def configured_count() -> int:
    """`MLXIR_CPU_STREAMS` when set to a positive integer, else the usable CPUs (at most
    `MAX_CPU_STREAMS`). A malformed value reads as 1, the safe choice."""
    text = os.environ.get("MLXIR_CPU_STREAMS")
    if text is not None:
        return int(text) if text.strip().isdigit() and int(text) > 0 else 1
    usable = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(MAX_CPU_STREAMS, usable or 1))


def cpu_streams() -> tuple[mx.Stream, ...]:
    """The CPU streams to spread one op over, the default CPU stream first; none
    (nothing to spread) when there would be one."""
    count = configured_count()
    limit = _limit.get()
    if limit is not None:
        count = min(count, limit)
    if count <= 1:
        return ()
    created: list[mx.Stream] | None = getattr(_thread, "created", None)
    if created is None:
        created = _thread.created = []
        _thread.token = next(_tokens)
    while len(created) < count - 1:
        created.append(mx.new_stream(mx.cpu))
    return (mx.default_stream(mx.cpu), *created[: count - 1])


def thread_token() -> int:
    """0 when nothing is spread (`cpu_streams()` is empty), else a number naming the
    calling thread's streams: a trace built with them must not run in another thread."""
    return _thread.token if cpu_streams() else 0


@contextlib.contextmanager
def fewer_cpu_streams(count: int) -> Generator[None, None, None]:
    """At most `count` CPU streams for ops built inside the block (this thread only)."""
    token = _limit.set(count)
    try:
        yield
    finally:
        _limit.reset(token)
