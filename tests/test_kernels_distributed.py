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

RANK_SCRIPT = str(Path(__file__).parent / "distributed_rank.py")
DTYPES = {"f32": mx.float32, "f16": mx.float16, "bf16": mx.bfloat16, "i32": mx.int32}
COLLECTIVE_DTYPES = ("f32", "f16", "bf16", "i32")


def collectives_program(element: str, peer: int, ranks: int = 2) -> bytes:
    """all_sum, all_gather along axis 1 over `ranks` ranks, and a swap with rank `peer`
    (send the input, then receive the peer's), over a [2, 3] input."""
    from xdsl.parser import Parser

    from mlxir.dialects.context import make_context

    t = f"tensor<2x3x{element}>"
    g = f"tensor<2x{3 * ranks}x{element}>"
    text = f"""
func.func @forward(%x: {t}) -> ({t}, {g}, {t}) {{
  %sum = mlx.all_sum %x : {t} -> {t}
  %gathered = mlx.all_gather %x axis 1 ranks {ranks} : {t} -> {g}
  %passed = mlx.send %x peer {peer} : {t} -> {t}
  %received = mlx.recv %passed peer {peer} : {t} -> {t}
  func.return %sum, %gathered, %received : {t}, {g}, {t}
}}"""
    return mlxir.serialize(Parser(make_context(), text).parse_module())


def rank_input(rank: int, dtype: mx.Dtype) -> mx.array:
    return (mx.arange(6).reshape(2, 3) + 10 * (rank + 1)).astype(dtype)


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
