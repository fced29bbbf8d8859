"""Linear-algebra ATen ops that mlxir has no importer for, as mlxir's own
decompositions in torch ops (`MLXIR_DECOMPOSITIONS` in `node_decompositions.py`).

They build on the factorizations mlxir imports (`linalg_lu_factor_ex`,
`linalg_cholesky_ex`) and on `linalg_solve_triangular`. Loops run over a matrix's
static size (the rows an LU's pivots swap, the reflectors of a Householder product,
the squarings of a matrix exponential), never over values: each step is computed for
every matrix and kept by `where` where it applies. An op whose size is symbolic, or
with an option these do not model, decomposes to itself, which mlxir then refuses."""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable
from typing import Any, cast

import torch
from torch._dispatch.python import enable_python_dispatcher
from torch._ops import OpOverload

_A = torch.ops.aten


_ACTIVE = threading.local()
"""The ops whose decomposition this thread is tracing now (`_traceable`)."""


def _traceable(op: OpOverload, decomposition: Callable[..., Any]) -> Callable[..., Any]:
    """`decomposition` of `op`, traced under torch's Python dispatcher, as torch.export
    traces: without it the meta kernels of the linalg ops expand symbolic batch dims
    through C++ kernels that take concrete sizes only, and a dynamic batch fails to
    trace. Where a decomposition falls back to `op` itself while torch traces with
    mlxir's table for nested calls, the nested call answers NotImplemented, which
    records `op` as it is (rather than decomposing it again, without end)."""

    @functools.wraps(decomposition)
    def traced(*args: Any, **kwargs: Any) -> Any:
        active: set[OpOverload] = getattr(_ACTIVE, "ops", set())
        if op in active:
            return NotImplemented
        _ACTIVE.ops = active | {op}
        try:
            with enable_python_dispatcher():
                return decomposition(*args, **kwargs)
        finally:
            _ACTIVE.ops = active

    return traced


def _static(*sizes: Any) -> bool:
    """Whether every size is a plain int (a loop over it is then fixed)."""
    return all(isinstance(size, int) for size in sizes)


def _fail_where_nonzero(info: torch.Tensor, *results: torch.Tensor) -> list[torch.Tensor]:
    """`results`, unchanged, and a run that fails wherever `info` (LAPACK's, one per
    matrix) is nonzero, as torch's `_linalg_check_errors` raises there. MLX has no
    assertion, but its inverse fails the run on a singular matrix (the check mlxir
    keeps for `linalg.inv`): the inverse of the 1x1 matrix `[info == 0]` is 1 where
    the factorization succeeded and fails the run elsewhere. Each result is multiplied
    by that 1 (exact, for every value), so that the check lives as long as any result
    is read."""
    ok = cast(torch.Tensor, torch.linalg.inv((info == 0).to(results[0].dtype)[..., None, None]))  # pyright: ignore[reportUnknownMemberType] (torch.linalg's functions are untyped: _add_docstr)
    return [r * ok.reshape(*info.shape, *[1] * (r.dim() - info.dim())).to(r.dtype) for r in results]


# LU ---------------------------------------------------------------------------


def _permutation(pivots: torch.Tensor, m: int) -> torch.Tensor:
    """The row order `perm` [..., m] (int64) of LAPACK's pivots [..., k] (1-based, row
    i swapped with row `pivots[i]`, for i = 0 .. k-1 in turn): row r of `L U` is row
    `perm[r]` of A. One swap per pivot, a fixed number."""
    rows = torch.arange(m, device=pivots.device)
    perm = rows.expand(*pivots.shape[:-1], m)
    swapped_with = pivots.long() - 1
    for i in range(pivots.shape[-1]):
        j = swapped_with[..., i : i + 1]
        at_i, at_j = perm[..., i : i + 1], perm.gather(-1, j)
        perm = torch.where(rows == i, at_j, torch.where(rows == j, at_i, perm))
    return perm


def _inverse(perm: torch.Tensor) -> torch.Tensor:
    """The permutation that undoes `perm` (`inverse[perm[r]] = r`)."""
    rows = torch.arange(perm.shape[-1], device=perm.device).expand(perm.shape)
    return torch.zeros_like(perm).scatter(-1, perm, rows)


def _rows(x: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """`x[..., order[r], :]` for each row r."""
    return x.gather(-2, order[..., None].expand(*order.shape, x.shape[-1]))


def _columns(x: torch.Tensor, order: torch.Tensor) -> torch.Tensor:
    """`x[..., :, order[c]]` for each column c."""
    return x.gather(-1, order[..., None, :].expand(*x.shape[:-1], order.shape[-1]))


def _lu_unpack(
    lu: torch.Tensor, pivots: torch.Tensor, unpack_data: bool = True, unpack_pivots: bool = True
) -> Any:
    """(P, L, U) with `A = P L U`: L the unit lower triangle of the packed factors'
    first k columns, U the upper triangle of their first k rows, P the permutation
    matrix of the pivots (column r has its one in row `perm[r]`). What is not unpacked
    is empty, as torch gives it."""
    *_, m, n = lu.shape
    if not _static(m, n, pivots.shape[-1]):
        return _A.lu_unpack.default(lu, pivots, unpack_data, unpack_pivots)
    k = min(m, n)
    if unpack_data:
        lower = torch.tril(lu[..., :, :k], -1) + torch.eye(m, k, dtype=lu.dtype, device=lu.device)
        upper = torch.triu(lu[..., :k, :])
    else:
        lower = upper = lu.new_empty(0)
    if unpack_pivots:
        perm = _permutation(pivots, m)
        permutation = (perm[..., None, :] == torch.arange(m, device=lu.device)[:, None]).to(lu.dtype)
    else:
        permutation = lu.new_empty(0)
    return permutation, lower, upper


def _linalg_lu(a: torch.Tensor, pivot: bool = True) -> Any:
    """`linalg.lu` (P, L, U): the LU factorization, unpacked."""
    if not pivot:  # torch's CPU kernel has no LU without pivoting either
        return _A.linalg_lu.default(a, pivot)
    lu, pivots, _ = _A.linalg_lu_factor_ex.default(a)
    return _lu_unpack(lu, pivots)


def _linalg_lu_factor(a: torch.Tensor, pivot: bool = True) -> Any:
    """`linalg.lu_factor` (LU, pivots): raises where U is singular (`info` > 0)."""
    if not pivot:
        return _A.linalg_lu_factor.default(a, pivot)
    lu, pivots, info = _A.linalg_lu_factor_ex.default(a)
    return tuple(_fail_where_nonzero(info, lu, pivots))


def _broadcast_batch(a: torch.Tensor, b: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """The matrices `a` and `b` with their batch dims broadcast together (mlxir's
    solves take equal batch dims only)."""
    batch = cast(torch.Size, torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]))  # pyright: ignore[reportUnknownMemberType] (torch.functional's broadcast_shapes is unannotated)
    return a.expand(*batch, *a.shape[-2:]), b.expand(*batch, *b.shape[-2:])


def _linalg_lu_solve(
    lu: torch.Tensor, pivots: torch.Tensor, b: torch.Tensor, left: bool = True, adjoint: bool = False
) -> torch.Tensor:
    """X with `A X = B` (`X A = B` without `left`; A^H for A with `adjoint`), A = P L U
    given as LU's packed factors: two triangular solves, the rows (columns) of B or X
    put in the pivots' order."""
    n = lu.shape[-1]
    if not _static(n, pivots.shape[-1]) or lu.is_complex():  # adjoint of a complex LU: not modelled
        return _A.linalg_lu_solve.default(lu, pivots, b, left=left, adjoint=adjoint)
    lu, b = _broadcast_batch(lu, b)
    pivots = pivots.expand(*lu.shape[:-2], pivots.shape[-1])
    perm = _permutation(pivots, n)
    solve = cast(Callable[..., torch.Tensor], torch.linalg.solve_triangular)  # pyright: ignore[reportUnknownMemberType] (torch.linalg's functions are untyped: _add_docstr)
    if left and not adjoint:  # X = U^-1 L^-1 P^T B
        y = solve(lu, _rows(b, perm), upper=False, unitriangular=True)
        return solve(lu, y, upper=True)
    if left:  # A^T X = U^T L^T P^T X = B: X = P L^-T U^-T B
        y = solve(lu.mT, b, upper=False)
        return _rows(solve(lu.mT, y, upper=True, unitriangular=True), _inverse(perm))
    if not adjoint:  # X P L U = B: X = B U^-1 L^-1 P^T
        y = solve(lu, b, upper=True, left=False)
        return _columns(solve(lu, y, upper=False, left=False, unitriangular=True), _inverse(perm))
    # X U^T L^T P^T = B: X = B P L^-T U^-T
    y = solve(lu.mT, _columns(b, perm), upper=True, left=False, unitriangular=True)
    return solve(lu.mT, y, upper=False, left=False)


def _lu_solve(b: torch.Tensor, lu: torch.Tensor, pivots: torch.Tensor) -> torch.Tensor:
    """`torch.lu_solve(B, LU, pivots)`: `linalg.lu_solve` with its arguments reordered."""
    return _linalg_lu_solve(lu, pivots, b)


# Triangular and Cholesky solves ------------------------------------------------


def _triangular_solve(
    b: torch.Tensor, a: torch.Tensor, upper: bool = True, transpose: bool = False, unitriangular: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    """`torch.triangular_solve(B, A)` (solution, A's copy): X with `op(A) X = B`, op(A)
    = A^T with `transpose` (whose triangle is then the other one)."""
    a, b = _broadcast_batch(a, b)
    x = cast(
        torch.Tensor,
        torch.linalg.solve_triangular(a.mT if transpose else a, b, upper=upper != transpose, unitriangular=unitriangular),  # pyright: ignore[reportUnknownMemberType] (torch.linalg's functions are untyped: _add_docstr)
    )
    return x, a.clone()


def _cholesky_solve(b: torch.Tensor, factor: torch.Tensor, upper: bool = False) -> torch.Tensor:
    """`torch.cholesky_solve(B, L)`: X with `L L^T X = B` (`U^T U X = B` with `upper`)."""
    factor, b = _broadcast_batch(factor, b)
    solve = cast(Callable[..., torch.Tensor], torch.linalg.solve_triangular)  # pyright: ignore[reportUnknownMemberType] (torch.linalg's functions are untyped: _add_docstr)
    if upper:
        return solve(factor, solve(factor.mT, b, upper=False), upper=True)
    return solve(factor.mT, solve(factor, b, upper=False), upper=True)


def _linalg_cholesky(a: torch.Tensor, upper: bool = False) -> torch.Tensor:
    """`linalg.cholesky` and `cholesky`: the factor, the run failing where A is not
    positive definite (`info` > 0), as torch raises there."""
    factor, info = _A.linalg_cholesky_ex.default(a, upper=upper)
    return _fail_where_nonzero(info, factor)[0]


# Matrix exponential ------------------------------------------------------------

TAYLOR_DEGREE = 18
"""The Taylor polynomial of exp that approximates it on a scaled matrix."""
TAYLOR_THETA = {torch.float64: 1.090863719290036, torch.float32: 3.010066362817634}
"""The largest 1-norm where the degree-18 Taylor polynomial's truncation error is
below the type's unit roundoff (torch's own bounds for its degree-18 approximant);
float16 and bfloat16 are computed in float32."""
MAX_SQUARINGS = 64
"""The most squarings: a matrix is scaled by 2^-s, s = ceil(log2(norm / theta)), at
most 64, so every 1-norm up to theta * 2^64 (5.5e19 in float32, 2e19 in float64) is
brought within theta. Larger norms are scaled by 2^-64 only, and the approximant is
then less accurate (the exponential of a matrix that large overflows, except in
special cases: a nilpotent or a negative definite one)."""


def _halved(value: torch.Tensor, times: torch.Tensor) -> torch.Tensor:
    """`value` * 2^-times, exactly (halving is exact down to the smallest normal
    number), for integer `times` in [0, MAX_SQUARINGS]: one conditional halving per
    possible step, each the same kernel (see `_linalg_matrix_exp`)."""
    for _ in range(MAX_SQUARINGS):
        value = torch.where(times > 0, value * 0.5, value)
        times = times - 1
    return value


def _linalg_matrix_exp(a: torch.Tensor) -> torch.Tensor:
    """exp(A) by scaling and squaring: the degree-18 Taylor polynomial of A 2^-s
    (Horner's rule), squared s times. The number of squarings depends on A's 1-norm,
    so all `MAX_SQUARINGS` are computed and each kept by `where` where it applies."""
    n = a.shape[-1]
    if not _static(n) or a.is_complex():
        return _A.linalg_matrix_exp.default(a)  # (`matrix_exp` is the same op)
    if n == 0:
        return a.clone()
    work = a.to(torch.float64 if a.dtype == torch.float64 else torch.float32)
    theta = TAYLOR_THETA[work.dtype]
    norm = work.abs().sum(-2).amax(-1)  # the 1-norm: the largest column sum
    squarings = torch.ceil(torch.log2(norm / theta)).clamp(0, MAX_SQUARINGS)
    squarings = torch.where(torch.isnan(squarings), 0, squarings).to(torch.int32)[..., None, None]
    scaled = work * _halved(torch.ones_like(norm)[..., None, None], squarings)
    # Horner's rule, I + A/k (I + A/(k+1) (...)), its k a countdown (see below)
    identity = torch.eye(n, dtype=work.dtype, device=a.device)
    k = torch.full_like(norm, TAYLOR_DEGREE)[..., None, None]
    result = identity + scaled / k
    for _ in range(TAYLOR_DEGREE - 1):
        k = k - 1
        result = identity + (scaled @ result) / k
    # the same steps each time (a countdown, not the step's index): MLX's compiled
    # trace builds each fused kernel once, where distinct constants made one per step
    # (64 kernels, 100 s of the system C++ compiler on its CPU backend, measured)
    remaining = squarings
    for _ in range(MAX_SQUARINGS):
        result = torch.where(remaining > 0, result @ result, result)
        remaining = remaining - 1
    return result.to(a.dtype)


# Householder product ------------------------------------------------------------


def _linalg_householder_product(a: torch.Tensor, tau: torch.Tensor) -> torch.Tensor:
    """`linalg.householder_product(A, tau)`: the first n columns of H_0 H_1 ... H_{k-1},
    H_i = I - tau_i v_i v_i^T, v_i the i-th column of A below the diagonal with a 1 on
    it (geqrf's reflectors). Applied to the identity's first n columns from the last
    reflector to the first, each as `X - tau_i v_i (v_i^T X)`: one step per reflector,
    a fixed number."""
    *_, m, n = a.shape
    k = tau.shape[-1]
    if not _static(m, n, k) or a.is_complex():  # the conjugate reflectors: not modelled
        return _A.linalg_householder_product.default(a, tau)
    identity = torch.eye(m, n, dtype=a.dtype, device=a.device)
    reflectors = torch.tril(a[..., :, :k], -1) + identity[:, :k]
    result = identity.expand(a.shape)
    for i in range(k - 1, -1, -1):
        v = reflectors[..., :, i : i + 1]
        result = result - tau[..., i : i + 1, None] * (v @ (v.mT @ result))
    return result


LINALG_DECOMPOSITIONS: dict[OpOverload, Callable[..., Any]] = {
    op: _traceable(op, decomposition)
    for op, decomposition in (
        (_A.lu_unpack.default, _lu_unpack),
        (_A.linalg_lu.default, _linalg_lu),
        (_A.linalg_lu_factor.default, _linalg_lu_factor),
        (_A.linalg_lu_solve.default, _linalg_lu_solve),
        (_A.lu_solve.default, _lu_solve),
        (_A.triangular_solve.default, _triangular_solve),
        (_A.cholesky_solve.default, _cholesky_solve),
        (_A.linalg_cholesky.default, _linalg_cholesky),
        (_A.cholesky.default, _linalg_cholesky),
        (_A.linalg_matrix_exp.default, _linalg_matrix_exp),
        (_A.matrix_exp.default, _linalg_matrix_exp),
        (_A.linalg_householder_product.default, _linalg_householder_product),
    )
}
"""mlxir's decompositions of linear-algebra ops, by the op torch.export records."""
