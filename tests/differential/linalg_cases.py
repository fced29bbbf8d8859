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
    """The batch's first matrix made singular by a zero last column: every LAPACK then
    meets an exactly zero last pivot (info = n). Two equal columns are singular only in
    exact arithmetic: whether their last pivot rounds to zero or to a tiny value
    depends on the LAPACK and the CPU, and so did info."""
    a = a.clone()
    a[0, :, -1] = 0
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


def _dominant(batch: int, n: int, dtype: torch.dtype, salt: str) -> torch.Tensor:
    """Well-conditioned n x n matrices (the diagonal dominates)."""
    return (_randn(batch, n, n, dtype=torch.float64, salt=salt) + n * torch.eye(n, dtype=torch.float64)).to(dtype)


def _spd(batch: int, n: int, dtype: torch.dtype, salt: str) -> torch.Tensor:
    """Symmetric positive-definite n x n matrices."""
    noise = _randn(batch, n, n, dtype=torch.float64, salt=salt)
    return (noise @ noise.mT + n * torch.eye(n, dtype=torch.float64)).to(dtype)


def _lu_solves(lu: torch.Tensor, pivots: torch.Tensor, b: torch.Tensor, c: torch.Tensor) -> tuple[torch.Tensor, ...]:
    return (
        torch.linalg.lu_solve(lu, pivots, b),
        torch.linalg.lu_solve(lu, pivots, b, adjoint=True),
        torch.linalg.lu_solve(lu, pivots, c, left=False),
        torch.linalg.lu_solve(lu, pivots, c, left=False, adjoint=True),
        torch.lu_solve(b, lu, pivots),
    )


LINALG_CASES += [
    # P, L, U of square, wide and tall stacks; lu_unpack of factors given as inputs
    Case(
        "linalg_lu_unpack",
        lambda m, a, w, t, lu, pivots: (
            *torch.linalg.lu(a),
            *torch.linalg.lu(w),
            *torch.linalg.lu(t),
            *torch.lu_unpack(lu, pivots),
            *torch.lu_unpack(lu, pivots, unpack_pivots=False),  # P empty
            *torch.lu_unpack(lu, pivots, unpack_data=False),  # L and U empty
        ),
        lambda n, dt: (
            _randn(n, 4, 4, dtype=dt, salt="pa"),
            _randn(n, 3, 5, dtype=dt, salt="pw"),
            _randn(n, 5, 3, dtype=dt, salt="pt"),
            *torch.linalg.lu_factor(_randn(n, 4, 4, dtype=dt, salt="pf")),
        ),
        {0: (0,), 1: (0,), 2: (0,), 3: (0,), 4: (0,)},
        dtypes=F32_F64,
    ),
    # every side and adjoint, on factors computed in the program and given as inputs;
    # lu_factor's check passes on these invertible matrices
    Case(
        "linalg_lu_solve",
        lambda m, a, b, c, lu, pivots: (
            *torch.linalg.lu_factor(a),
            *_lu_solves(torch.linalg.lu_factor(a).LU, torch.linalg.lu_factor(a).pivots, b, c),
            *_lu_solves(lu, pivots, b, c),
        ),
        lambda n, dt: (
            _dominant(n, 4, dt, "sa"),
            _randn(n, 4, 2, dtype=dt, salt="sb"),
            _randn(n, 3, 4, dtype=dt, salt="sc"),
            *torch.linalg.lu_factor(_randn(n, 4, 4, dtype=dt, salt="sf") + 4 * torch.eye(4, dtype=dt)),
        ),
        {0: (0,), 1: (0,), 2: (0,), 3: (0,), 4: (0,)},
        dtypes=F32_F64,
    ),
    # triangular_solve in every form (the other triangle holds noise), cholesky_solve
    # with a lower and an upper factor, cholesky and linalg.cholesky (checked: these
    # are positive definite)
    Case(
        "triangular_cholesky_solve",
        lambda m, t, b, spd: (
            *torch.triangular_solve(b, t),
            torch.triangular_solve(b, t, upper=False)[0],
            torch.triangular_solve(b, t, transpose=True)[0],
            torch.triangular_solve(b, t, upper=False, transpose=True, unitriangular=True)[0],
            torch.cholesky_solve(b, torch.linalg.cholesky(spd)),
            torch.cholesky_solve(b, torch.linalg.cholesky(spd, upper=True), upper=True),
            torch.cholesky(spd),
            torch.cholesky(spd, upper=True),
        ),
        lambda n, dt: (_dominant(n, 4, dt, "ta"), _randn(n, 4, 3, dtype=dt, salt="tb"), _spd(n, 4, dt, "ts")),
        {0: (0,), 1: (0,), 2: (0,)},
        dtypes=F32_F64,
    ),
]


def _rotations(batch: int, n: int, dtype: torch.dtype, salt: str, scale: float) -> torch.Tensor:
    """Skew-symmetric n x n matrices of 1-norm about `scale` * n: their exponentials are
    rotations (entries at most 1), reached through several squarings."""
    noise = _randn(batch, n, n, dtype=torch.float64, salt=salt)
    return ((noise - noise.mT) * scale / n).to(dtype)


LINALG_CASES += [
    # a small norm (no squaring), a larger one (several), and exp(0) = I. Not in
    # float16 or bfloat16: torch's CPU kernel gives garbage there (torch 2.x: a
    # diagonal of -2e4 in float16 for exp of a matrix of norm 1); mlxir computes those
    # in float32, as the OpInfo sweep checks against float32 rounded
    Case(
        "matrix_exp",
        lambda m, a, r: (torch.linalg.matrix_exp(a), torch.matrix_exp(r), torch.linalg.matrix_exp(a * 0)),
        lambda n, dt: (_randn(n, 4, 4, dtype=dt, salt="ea") / 4, _rotations(n, 4, dt, "er", 6.0)),
        {0: (0,), 1: (0,)},
        dtypes=F32_F64,
    ),
]


def _reflectors(batch: int, m: int, n: int, dtype: torch.dtype, salt: str) -> tuple[torch.Tensor, torch.Tensor]:
    """geqrf's reflectors and scales of random m x n matrices (their product is Q)."""
    return torch.geqrf(_randn(batch, m, n, dtype=dtype, salt=salt))


LINALG_CASES += [
    # the Q of a QR (geqrf's reflectors, all n of them) and of random reflectors, fewer
    # than the columns
    Case(
        "householder_product",
        lambda m, a, tau, w, scales: (
            torch.linalg.householder_product(a, tau),
            torch.linalg.householder_product(w, scales),
        ),
        lambda n, dt: (
            *_reflectors(n, 5, 4, dt, "ha"),
            _randn(n, 6, 4, dtype=dt, salt="hw"),
            _randn(n, 2, dtype=dt, salt="ht") / 2,
        ),
        {0: (0,), 1: (0,), 2: (0,), 3: (0,)},
        dtypes=F32_F64,
    ),
]


LINALG_CASES += [
    # one matrix against a batch of right-hand sides: the batch dims broadcast
    Case(
        "linalg_solves_broadcast",
        lambda m, a, spd, b: (
            torch.linalg.lu_solve(*torch.linalg.lu_factor(a), b),
            torch.triangular_solve(b, a)[0],
            torch.cholesky_solve(b, torch.linalg.cholesky(spd)),
        ),
        lambda n, dt: (_dominant(1, 4, dt, "ba")[0], _spd(1, 4, dt, "bs")[0], _randn(n, 4, 3, dtype=dt, salt="bb")),
        {2: (0,)},
        dtypes=F32_F64,
    ),
]
