"""The collectives' kernels (`evaluator/distributed.py`): `mlx.all_sum`,
`mlx.all_gather`, `mlx.send` and `mlx.recv` in one process (a group of one, where
each is the identity) and over 2 ranks on 127.0.0.1 (mlxir's launcher, ring backend),
in f32, f16, bf16 and int32. The inputs are small integers, exact in every dtype,
so the results are compared exactly."""

from __future__ import annotations

import sys
from pathlib import Path

import mlx.core as mx
import numpy as np
import pytest

import mlxir
from mlxir.tools.launch import launch

sys.path.insert(0, str(Path(__file__).parent))
from distributed_rank import COLLECTIVE_DTYPES, collectives_program, rank_input  # noqa: E402

RANK_SCRIPT = str(Path(__file__).parent / "distributed_rank.py")
DTYPES = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16, "i32": mx.int32}


@pytest.mark.parametrize("element", COLLECTIVE_DTYPES)
def test_collectives_are_the_identity_in_a_group_of_one(element: str) -> None:
    x = rank_input(0, DTYPES[element])
    total, gathered, received = mlxir.load(collectives_program(element, peer=0, ranks=1))(x)
    expected = np.array(x.astype(mx.float32))
    for value in (total, gathered, received):
        assert value.dtype == x.dtype
        np.testing.assert_array_equal(np.array(value.astype(mx.float32)), expected)


def test_a_gather_over_two_ranks_refuses_a_group_of_one() -> None:
    with pytest.raises(mlxir.ProgramError, match="gathers over 2 ranks, and this group has 1"):
        mlxir.load(collectives_program("f32", peer=0, ranks=2))


def test_collectives_over_two_ranks(tmp_path: Path) -> None:
    out = tmp_path / "collectives.npz"
    assert launch([sys.executable, RANK_SCRIPT, "collectives", str(out)], 2, timeout=120) == 0
    got = np.load(out)
    for element in COLLECTIVE_DTYPES:
        mine, theirs = (np.array(rank_input(r, DTYPES[element]).astype(mx.float32)) for r in (0, 1))
        np.testing.assert_array_equal(got[f"{element}_sum"], mine + theirs)
        np.testing.assert_array_equal(got[f"{element}_gathered"], np.concatenate([mine, theirs], axis=1))
        np.testing.assert_array_equal(got[f"{element}_received"], theirs)
