"""One rank of the multi-rank tests (`tests/test_distributed.py`,
`tests/test_kernels_distributed.py`), started by mlxir's launcher:

    python tests/distributed_rank.py collectives OUT.npz
    python tests/distributed_rank.py generate PROGRAM.mlxfb OUT.npz [--die-after N]
    python tests/distributed_rank.py hang

Rank 0 writes what it computed to OUT.npz; the test compares it with its reference.
`--die-after N`: rank 1 kills itself (SIGKILL) after N generated tokens, mid-run."""

from __future__ import annotations

import os
import signal
import sys
import time

import mlxir  # isort: skip  (before mlx.core: it arms the BLAS choice)
import mlx.core as mx
import numpy as np
from test_kernels_distributed import COLLECTIVE_DTYPES, collectives_program, rank_input

PROMPT = np.array([[1, 5, 9, 33, 7, 100, 42, 3]], dtype=np.int64)
NEW_TOKENS = 16
def _collectives(out: str) -> None:
    group = mx.distributed.init()
    rank = group.rank()
    results: dict[str, np.ndarray] = {}
    for element in COLLECTIVE_DTYPES:
        dtype = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16, "i32": mx.int32}[element]
        program = mlxir.load(collectives_program(element, peer=1 - rank))
        total, gathered, received = program(rank_input(rank, dtype))
        for name, value in (("sum", total), ("gathered", gathered), ("received", received)):
            results[f"{element}_{name}"] = np.array(value.astype(mx.float32))
    if rank == 0:
        np.savez(out, **results)


def _generate(path: str, out: str, die_after: int | None) -> None:
    from mlxir.tools import llm

    compiled = llm.CompiledLLM.from_program(mlxir.load(path))
    rank = mx.distributed.init().rank()
    count = 0

    def on_token(_: mx.array) -> None:
        nonlocal count
        count += 1
        if die_after is not None and rank == 1 and count == die_after:
            os.kill(os.getpid(), signal.SIGKILL)

    logits: list[mx.array] = []
    tokens = llm.generate(compiled, PROMPT, max_new_tokens=NEW_TOKENS, logits=logits, on_token=on_token)
    if rank == 0:
        np.savez(out, tokens=np.array(tokens), logits=np.stack([np.array(x.astype(mx.float32)) for x in logits]))


def main(argv: list[str]) -> None:
    mode = argv[0]
    if mode == "collectives":
        _collectives(argv[1])
    elif mode == "generate":
        die_after = int(argv[4]) if len(argv) > 4 and argv[3] == "--die-after" else None
        _generate(argv[1], argv[2], die_after)
    elif mode == "hang":
        if mx.distributed.init().rank() == 1:
            time.sleep(3600)
    else:
        raise SystemExit(f"unknown mode {mode}")


if __name__ == "__main__":
    main(sys.argv[1:])
