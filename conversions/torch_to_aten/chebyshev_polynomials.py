"""PyTorch's Chebyshev polynomials T, U, V, W, plain and shifted, which mlxir has no
importer for, as mlxir's own decompositions in torch ops (`MLXIR_DECOMPOSITIONS` in
`node_decompositions.py`; `special_functions.py` says how they follow torch's kernels).

Torch's kernel loops a number of times that depends on the degree; the decomposition
computes the same value with a fixed number of steps. The degree is a float tensor,
truncated (< 0, NaN, +-inf and from 2^63: 0, as torch's int64 cast). Up to torch's
threshold degree (6; 8 for U, V, W; 4 for shifted W) torch's recurrence, unrolled,
selected by the degree; beyond it torch's own trigonometric form inside (-1, 1) and,
where torch recurs, the closed form outside: exp(k acosh|y|) times each kind's
cosh/sinh ratio, NaN where torch's recurrence overflows into inf - inf (P_(k-2) past
the largest float). Measured (compiled, degrees to 64, x in [-3, 3] and +-1 +- ulp):
float32 within 2.5e-5 of torch (the trigonometric form inside (-1, 1), where n acos(x)
rounds as torch's), float64 1e-11 evaluated by torch; MLX evaluates float64 sin, cos
and exp in float32, so compiled float64 uses pow and algebraic half angles where it
can and is within 5e-6 absolute inside (-1, 1). Past degree ~1000 outside [-1, 1]
torch's float32 recurrence itself drifts (2e-3 at 1000), the closed form does not.
Torch returns an uninitialized value for U, V, W at x = NaN below the threshold; mlxir
NaN.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any, cast

import torch
from torch._ops import OpOverload

from mlxir.conversions.torch_to_aten.special_functions import (
    EXP_FINITE_UP_TO,
    Value,
    computed_in_float,
)

# --- Chebyshev polynomials of the four kinds, plain and shifted: torch's recurrence up to
# its threshold degree, the trigonometric form beyond it inside (-1, 1), and the
# hyperbolic closed form beyond it outside ----------------------------------------------

_INT64_OVERFLOW = 9.223372036854775807e18
"""2^63: torch casts the degree to int64, which gives INT64_MIN (a negative degree, so
0) from here, at +-inf and at NaN."""


def _hyperbolic_factor(kind: str, m: torch.Tensor, decay: Callable[[torch.Tensor], torch.Tensor]) -> torch.Tensor:
    """P_m(cosh t) / exp(m t) for the kind's polynomial P at t > 0, given decay(c) =
    exp(-c t): each kind's cosh/sinh ratio with exp(m t) taken out, so nothing
    overflows before the value does."""
    if kind == "t":  # cosh(m t)
        return 0.5 * (1.0 + decay(2.0 * m))
    if kind == "u":  # sinh((m + 1) t) / sinh(t)
        return (1.0 - decay(2.0 * (m + 1.0))) / (1.0 - decay(torch.full_like(m, 2.0)))
    if kind == "v":  # cosh((m + 1/2) t) / cosh(t / 2)
        return (1.0 + decay(2.0 * m + 1.0)) / (1.0 + decay(torch.ones_like(m)))
    # w: sinh((m + 1/2) t) / sinh(t / 2)
    return (1.0 - decay(2.0 * m + 1.0)) / (1.0 - decay(torch.ones_like(m)))


def _hyperbolic(kind: str, y: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """The kind's P_k(y) for |y| > 1 (and NaN), where torch runs its recurrence: the
    closed form, NaN where the recurrence meets inf - inf (P_(k-2) overflowed)."""
    z = y.abs()
    root = torch.sqrt((z - 1.0) * (z + 1.0))
    t = torch.log1p((z - 1.0) + root)  # acosh(z), exact near 1
    if y.dtype == torch.float64:
        # MLX evaluates float64 exp in float32 (overflowing from 88.7): powers of
        # e^t = z + sqrt(z^2 - 1) instead, which its float64 pow computes exactly
        base = z + root

        def grow(c: torch.Tensor) -> torch.Tensor:
            return torch.pow(base, c)

        def decay(c: torch.Tensor) -> torch.Tensor:
            return torch.pow(base, -c)
    else:
        # exp(c t / 2) twice: MLX's float32 exp overflows from about 88.2, not 88.72
        def grow(c: torch.Tensor) -> torch.Tensor:
            half = torch.exp(0.5 * c * t)
            return half * half

        def decay(c: torch.Tensor) -> torch.Tensor:
            return torch.exp(-c * t)

    # P(-z) = (-1)^k P(z) for T and U; V and W trade places
    mirrored = {"v": "w", "w": "v"}.get(kind, kind)

    def factor(m: torch.Tensor) -> torch.Tensor:
        return torch.where(y < 0.0, _hyperbolic_factor(mirrored, m, decay), _hyperbolic_factor(kind, m, decay))

    if y.dtype == torch.float64:
        value = grow(k) * factor(k)
    else:
        half = torch.exp(0.5 * k * t)
        value = half * factor(k) * half
    value = torch.where((y < 0.0) & (torch.remainder(k, 2.0) == 1.0), -value, value)
    before = k - 2.0
    overflowed = before * t + torch.log(factor(before)) > EXP_FINITE_UP_TO[y.dtype]
    return torch.where(overflowed & (before >= 0.0), math.nan, value)


def _trigonometric(kind: str, shifted: bool, x: torch.Tensor, y: torch.Tensor, k: torch.Tensor) -> torch.Tensor:
    """The kind's P_k(y) for |y| < 1 past torch's threshold: its trigonometric form,
    with its fallbacks where a denominator rounds to 0 (or the half angle's cosine or
    sine to 1). float32 takes torch's own steps, acos(y) and sin(acos(y)), so that they
    round as torch's. MLX evaluates float64 sin and cos in float32, so float64 takes
    the algebraic sqrt(1 - y^2), sqrt((1 +- y) / 2), and y < 0 by the symmetry P(-y) =
    +-P(y) (V and W trading places): angles near pi lose more to float32 than near 0."""
    parity = torch.where(torch.remainder(k, 2.0) == 0.0, 1.0, -1.0)
    if y.dtype != torch.float64:
        return _trigonometric_form(kind, shifted, x, y, k, parity, exact=False)
    a = y.abs()
    mirrored = {"v": "w", "w": "v"}.get(kind, kind)
    at_a = _trigonometric_form(kind, shifted, x, a, k, parity, exact=True)
    at_a_mirrored = _trigonometric_form(mirrored, shifted, x, a, k, parity, exact=True)
    return torch.where(y < 0.0, parity * at_a_mirrored, at_a)


def _trigonometric_form(
    kind: str, shifted: bool, x: torch.Tensor, y: torch.Tensor, k: torch.Tensor, parity: torch.Tensor, exact: bool
) -> torch.Tensor:
    theta = torch.acos(y)
    if kind == "t":
        return torch.cos(k * theta)
    if kind == "u":
        sine = torch.sqrt((1.0 - y) * (1.0 + y)) if exact else torch.sin(theta)
        return torch.where(
            sine != 0.0, torch.sin((k + 1.0) * theta) / sine, (k + 1.0) * torch.cos((k + 1.0) * theta) / y
        )
    half_cos = torch.sqrt((1.0 + y) * 0.5) if exact else torch.cos(theta / 2.0)
    half_sin = torch.sqrt((1.0 - y) * 0.5) if exact else torch.sin(theta / 2.0)
    if kind == "v":
        return torch.where(half_sin != 1.0, torch.cos((k + 0.5) * theta) / half_cos, parity * (k + k + 1.0))
    # w: the unshifted kernel's fallback is 2k + 1 for x > 0, the shifted one's is not
    fallback = parity if shifted else torch.where(x > 0.0, k + k + 1.0, parity)
    return torch.where(half_cos != 1.0, torch.sin((k + 0.5) * theta) / half_sin, fallback)


_CHEBYSHEV_THRESHOLD = {
    ("t", False): 6, ("u", False): 8, ("v", False): 8, ("w", False): 8,
    ("t", True): 6, ("u", True): 6, ("v", True): 6, ("w", True): 4,
}
"""The degree past which torch's kernel takes the trigonometric form inside (-1, 1)."""


def _chebyshev(kind: str, shifted: bool) -> Callable[[torch.Tensor, torch.Tensor], torch.Tensor]:
    threshold = _CHEBYSHEV_THRESHOLD[kind, shifted]

    def polynomial(x: torch.Tensor, n: torch.Tensor) -> torch.Tensor:
        x, n = cast(tuple[torch.Tensor, torch.Tensor], torch.broadcast_tensors(x, n))  # pyright: ignore[reportUnknownMemberType] (torch.functional's broadcast_tensors is unannotated)
        k = torch.trunc(n)
        # shifted: the polynomial at 2x - 1, rounded as torch's x + x - 1
        y = x + x - 1.0 if shifted else x
        two_y = y + y
        first = {"t": y, "u": two_y, "v": two_y - 1.0, "w": two_y + 1.0}[kind]
        # torch's recurrence, to the threshold degree (beyond it, the closed forms)
        previous: Value = 1.0
        current: Value = first
        value = torch.where(k == 0.0, 1.0, first)
        for degree in range(2, threshold + 1):
            previous, current = current, two_y * current - previous
            value = torch.where(k == float(degree), current, value)
        big = torch.where(y.abs() < 1.0, _trigonometric(kind, shifted, x, y, k), _hyperbolic(kind, y, k))
        value = torch.where(k > float(threshold), big, value)
        # torch's values at y = 1 and y = -1: its special cases at x = +-1 (x = 1 and
        # x = 0 shifted), and its recurrence's exact values where a tiny x rounds y to -1
        parity = torch.where(torch.remainder(k, 2.0) == 0.0, 1.0, -1.0)
        at_one = {"t": 1.0, "u": k + 1.0, "v": 1.0, "w": k + k + 1.0}[kind]
        at_minus_one = parity * {"t": 1.0, "u": k + 1.0, "v": k + k + 1.0, "w": 1.0}[kind]
        value = torch.where(y == -1.0, at_minus_one, value)
        value = torch.where(y == 1.0, at_one, value)
        return torch.where((k >= 0.0) & (n < _INT64_OVERFLOW), value, 0.0)

    polynomial.__name__ = f"_{'shifted_' if shifted else ''}chebyshev_polynomial_{kind}"
    return polynomial


_A = torch.ops.aten


CHEBYSHEV_POLYNOMIALS: dict[OpOverload, Callable[..., Any]] = {
    _A.special_chebyshev_polynomial_t.default: computed_in_float(_chebyshev("t", False)),
    _A.special_chebyshev_polynomial_t.x_scalar: computed_in_float(_chebyshev("t", False)),
    _A.special_chebyshev_polynomial_t.n_scalar: computed_in_float(_chebyshev("t", False)),
    _A.special_chebyshev_polynomial_u.default: computed_in_float(_chebyshev("u", False)),
    _A.special_chebyshev_polynomial_u.x_scalar: computed_in_float(_chebyshev("u", False)),
    _A.special_chebyshev_polynomial_u.n_scalar: computed_in_float(_chebyshev("u", False)),
    _A.special_chebyshev_polynomial_v.default: computed_in_float(_chebyshev("v", False)),
    _A.special_chebyshev_polynomial_v.x_scalar: computed_in_float(_chebyshev("v", False)),
    _A.special_chebyshev_polynomial_v.n_scalar: computed_in_float(_chebyshev("v", False)),
    _A.special_chebyshev_polynomial_w.default: computed_in_float(_chebyshev("w", False)),
    _A.special_chebyshev_polynomial_w.x_scalar: computed_in_float(_chebyshev("w", False)),
    _A.special_chebyshev_polynomial_w.n_scalar: computed_in_float(_chebyshev("w", False)),
    _A.special_shifted_chebyshev_polynomial_t.default: computed_in_float(_chebyshev("t", True)),
    _A.special_shifted_chebyshev_polynomial_t.x_scalar: computed_in_float(_chebyshev("t", True)),
    _A.special_shifted_chebyshev_polynomial_t.n_scalar: computed_in_float(_chebyshev("t", True)),
    _A.special_shifted_chebyshev_polynomial_u.default: computed_in_float(_chebyshev("u", True)),
    _A.special_shifted_chebyshev_polynomial_u.x_scalar: computed_in_float(_chebyshev("u", True)),
    _A.special_shifted_chebyshev_polynomial_u.n_scalar: computed_in_float(_chebyshev("u", True)),
    _A.special_shifted_chebyshev_polynomial_v.default: computed_in_float(_chebyshev("v", True)),
    _A.special_shifted_chebyshev_polynomial_v.x_scalar: computed_in_float(_chebyshev("v", True)),
    _A.special_shifted_chebyshev_polynomial_v.n_scalar: computed_in_float(_chebyshev("v", True)),
    _A.special_shifted_chebyshev_polynomial_w.default: computed_in_float(_chebyshev("w", True)),
    _A.special_shifted_chebyshev_polynomial_w.x_scalar: computed_in_float(_chebyshev("w", True)),
    _A.special_shifted_chebyshev_polynomial_w.n_scalar: computed_in_float(_chebyshev("w", True)),
}
"""mlxir's decompositions of torch's Chebyshev polynomials, by the op torch.export records."""
