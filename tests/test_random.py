"""Random ops, end to end: torch's samplers compiled and drawn from MLX's generator.

The values cannot match torch's generator's, so each sampler is compared with eager
PyTorch as a distribution: a two-sample Kolmogorov-Smirnov test between 16,000 values
drawn by the compiled program (at a batch size other than the export's) and 16,000 by
eager, rejected at significance 1e-6 (D > 2.63 sqrt(2/16000) = 0.029; two independent
draws of one distribution exceed it once in a million runs). Discrete distributions
(randint, bernoulli, geometric) take the same test: their CDFs are compared at every
value either sample holds.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import mlx.core as mx
import numpy as np
import pytest
import torch
from torch.export import Dim, export

import mlxir

ROWS, COLS = 4000, 4
KS_SIGNIFICANCE = 1e-6
KS_CRITICAL = math.sqrt(-math.log(KS_SIGNIFICANCE / 2) / 2) * math.sqrt(2 / (ROWS * COLS))

aten = torch.ops.aten
SAMPLERS: dict[str, Callable[[torch.Tensor], torch.Tensor]] = {
    "rand": lambda x: torch.rand(x.shape[0], COLS, dtype=x.dtype),
    "randn": lambda x: torch.randn(x.shape[0], COLS, dtype=x.dtype),
    "rand_like": torch.rand_like,
    "randn_like": torch.randn_like,
    "randint": lambda x: torch.randint(3, 9, (x.shape[0], COLS)),
    "randint_like": lambda x: torch.randint_like(x, -2, 5),
    "normal": lambda x: torch.normal(2.0, 3.0, (x.shape[0], COLS), dtype=x.dtype),
    "normal_tensors": lambda x: torch.normal(x + 2, x + 0.5),
    "normal_tensor_mean": lambda x: torch.normal(x - 1, 2.0),
    "normal_functional": lambda x: aten.normal_functional(x, -1.0, 0.5),
    "uniform": lambda x: aten.uniform(x, -2.0, 5.0),
    "exponential": lambda x: aten.exponential(x, 2.0),
    "cauchy": lambda x: aten.cauchy(x, 1.0, 0.5),
    "geometric": lambda x: aten.geometric(x, 0.3),
    "log_normal": lambda x: aten.log_normal(x, 0.0, 0.5),
    "bernoulli": lambda x: torch.bernoulli(x, 0.3),
}


class Sampler(torch.nn.Module):
    def __init__(self, sample: Callable[[torch.Tensor], torch.Tensor]) -> None:
        super().__init__()
        self.sample = sample

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.sample(x)


def compiled(sample: Callable[..., Any], dtype: torch.dtype, **options: Any) -> tuple[Any, Any]:
    ep = export(Sampler(sample), (torch.zeros(8, COLS, dtype=dtype),), dynamic_shapes=({0: Dim("rows", min=2)},))
    return ep, mlxir.compile(ep, **options)


def ks_statistic(a: np.ndarray, b: np.ndarray) -> float:
    """The largest gap between the two samples' empirical CDFs."""
    a, b = np.sort(a.ravel()), np.sort(b.ravel())
    points = np.concatenate([a, b])
    gap = np.searchsorted(a, points, side="right") / a.size - np.searchsorted(b, points, side="right") / b.size
    return float(np.abs(gap).max())


def as_numpy(value: Any) -> np.ndarray:
    if isinstance(value, torch.Tensor):
        return value.double().numpy()
    return np.array(mx.array(value).astype(mx.float32)).astype(np.float64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
@pytest.mark.parametrize("name", sorted(SAMPLERS))
def test_each_sampler_draws_eagers_distribution(name: str, dtype: torch.dtype) -> None:
    sample = SAMPLERS[name]
    ep, program = compiled(sample, dtype)
    x = torch.zeros(ROWS, COLS, dtype=dtype)
    got = program(x)
    expected = sample(x)
    assert tuple(got.shape) == tuple(expected.shape) and got.dtype == expected.dtype
    statistic = ks_statistic(as_numpy(got), as_numpy(expected))
    assert statistic < KS_CRITICAL, f"KS D = {statistic:.4f} >= {KS_CRITICAL:.4f}"


def test_draws_are_fresh_each_call_and_repeat_under_a_seed() -> None:
    """Two draws in one program differ (no pass merges them); every call draws anew,
    also once the signature repeats (the program never runs as a trace, which would
    fix the values), and `mx.random.seed` repeats a run."""
    _, program = compiled(lambda x: (torch.rand_like(x), torch.rand_like(x)), torch.float32)
    x = torch.zeros(6, COLS)
    first = [program(x) for _ in range(4)]
    assert not torch.equal(first[0][0], first[0][1])
    assert all(not torch.equal(first[0][0], later[0]) for later in first[1:])
    assert program.native_unavailable is not None and "random" in program.native_unavailable
    assert program.traces == 0
    mx.random.seed(11)
    a = program(x)
    mx.random.seed(11)
    b = program(x)
    assert torch.equal(a[0], b[0]) and torch.equal(a[1], b[1])


def test_a_drawing_program_refuses_compile_true() -> None:
    ep = export(Sampler(torch.rand_like), (torch.zeros(3),))
    with pytest.raises(ValueError, match="cannot run compiled: it draws random numbers"):
        mlxir.compile(ep, compile=True)


def test_per_element_bernoulli_draws_each_elements_probability() -> None:
    """`bernoulli(p)` with a tensor of probabilities is decomposed by torch's own rule
    (`rand_like(p) < p`), so each element keeps its own probability. Binomial counts of
    8,000 draws: 5 standard deviations are 0.017 at p = 0.1 and 0.022 at p = 0.8."""
    ep = export(Sampler(torch.bernoulli), (torch.rand(3, 4),), dynamic_shapes=({0: Dim("rows", min=2)},))
    program = mlxir.compile(ep)
    p = torch.cat([torch.full((2000, 4), 0.1), torch.full((2000, 4), 0.8)])
    got = as_numpy(program(p))
    assert set(np.unique(got)) <= {0.0, 1.0}
    assert abs(got[:2000].mean() - 0.1) < 0.017 and abs(got[2000:].mean() - 0.8) < 0.022
