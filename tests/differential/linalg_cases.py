"""Differential cases of the linalg ops mlxir decomposes itself
(`conversions/torch_to_aten/linalg_decompositions.py`), and of the LU factorization
they build on."""

from __future__ import annotations

import torch

from differential.harness import Case

F32_F64 = (torch.float32, torch.float64)


def _gen(salt: str) -> torch.Generator:
    return torch.Generator().manual_seed(sum(map(ord, salt)))


def _randn(*shape: int, dtype: torch.dtype, salt: str) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(f"{salt}{shape}")).to(dtype)


def _singular_first(a: torch.Tensor) -> torch.Tensor:
    """`a` with its first matrix's last two columns equal (a zero pivot: getrf's
    `info` is nonzero) where it has two columns."""
    a = a.clone()
    if a.shape[-1] >= 2:
        a[0, :, -1] = a[0, :, -2]
    return a


LINALG_CASES: list[Case] = [
    # square (the first singular), wide and tall stacks; the packed factors, the
    # 1-based pivots and LAPACK's info
    Case(
        "linalg_lu_factor_ex",
        lambda m, a, w, t: (*torch.linalg.lu_factor_ex(a), *torch.linalg.lu_factor_ex(w), *torch.linalg.lu_factor_ex(t)),
        lambda n, dt: (
            _singular_first(_randn(n, 4, 4, dtype=dt, salt="lu")),
            _randn(n, 3, 5, dtype=dt, salt="luw"),
            _randn(n, 5, 3, dtype=dt, salt="lut"),
        ),
        {0: (0,), 1: (0,), 2: (0,)},
        dtypes=F32_F64,
    ),
]
