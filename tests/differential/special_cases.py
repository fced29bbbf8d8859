"""Differential cases of torch's special functions that mlxir decomposes itself
(`conversions/torch_to_aten/special_functions.py`, `bessel_functions.py` and
`chebyshev_polynomials.py`): each on ordinary, small and large arguments, negative
ones where defined, and 0, -0, +-inf and NaN."""

from __future__ import annotations

import math
import zlib
from collections.abc import Callable
from typing import Any

import torch

from differential.harness import F32, FLOATS, Case

S = torch.special


def _gen(n: int, salt: str) -> torch.Generator:
    return torch.Generator().manual_seed(zlib.crc32(f"{n}:{salt}".encode()))


def _randn(*shape: int, dtype: torch.dtype, salt: str) -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(sum(shape), salt)).to(dtype)


def _spread(*shape: int, dtype: torch.dtype, salt: str, decades: tuple[float, float] = (-3.0, 3.0)) -> torch.Tensor:
    """Magnitudes spread log-uniformly over `decades` of ten, with random signs."""
    generator = _gen(sum(shape), salt)
    low, high = decades
    magnitude = 10.0 ** (torch.rand(*shape, generator=generator) * (high - low) + low)
    sign = torch.where(torch.rand(*shape, generator=generator) < 0.5, -1.0, 1.0)
    return (magnitude * sign).to(dtype)


SPECIALS = (0.0, -0.0, math.inf, -math.inf, math.nan, 1e-30, -1e-30, 1e-6, 2.0, 5.0, 8.0, -8.0, 1e6)


def _specials(x: torch.Tensor, extra: tuple[float, ...] = ()) -> torch.Tensor:
    return torch.tensor((*SPECIALS, *extra), dtype=x.dtype)


def _special(name: str, fn: Callable[[torch.Tensor, torch.Tensor], Any], dtypes=F32, decades=(-3.0, 3.0)) -> Case:
    """`fn(x, s)` on x: randn of shape (3, n, 4), s: magnitudes over `decades`, signed."""
    return Case(
        name,
        lambda m, x, s: fn(x, s),
        lambda n, dt: (_randn(3, n, 4, dtype=dt, salt=name), _spread(n, 6, dtype=dt, salt=name + "s", decades=decades)),
        dynamic={0: (1,), 1: (0,)},
        dtypes=dtypes,
    )


def _no_nan(x: torch.Tensor) -> torch.Tensor:
    """NaN replaced: torch's Chebyshev kernels (but T's) return an uninitialized value
    for x = NaN at degrees 2 up to the threshold."""
    return torch.nan_to_num(x, nan=0.25, posinf=math.inf, neginf=-math.inf)


def _tiny(x: torch.Tensor) -> float:
    """x's type's smallest subnormal."""
    return torch.finfo(x.dtype).smallest_normal * torch.finfo(x.dtype).eps


def _largest(x: torch.Tensor) -> float:
    return torch.finfo(x.dtype).max


_CHEBYSHEV = (
    S.chebyshev_polynomial_t, S.chebyshev_polynomial_u, S.chebyshev_polynomial_v, S.chebyshev_polynomial_w,
    S.shifted_chebyshev_polynomial_t, S.shifted_chebyshev_polynomial_u, S.shifted_chebyshev_polynomial_v,
    S.shifted_chebyshev_polynomial_w,
)

SPECIAL_CASES: list[Case] = [
    # Bessel J: the rational form up to 5, the Hankel form beyond (odd J1 keeps -0)
    _special("special_bessel_j", lambda x, s: tuple(f(v) for f in (S.bessel_j0, S.bessel_j1) for v in (x * 4, s, _specials(x)))),
    # Bessel Y: NaN below 0, -inf at 0
    _special("special_bessel_y", lambda x, s: tuple(f(v) for f in (S.bessel_y0, S.bessel_y1) for v in (x.abs() * 4, s, _specials(x)))),
    # I0, I1 and their exp-scaled forms (float16/bfloat16 computed in float32): both
    # Chebyshev series, and exp's overflow (from 88.72 in float32) as torch's
    _special("special_i0_i1", lambda x, s: tuple(f(v) for f in (torch.i0, S.i0e, S.i1, S.i1e) for v in (x * 10, s / 10, _specials(x, (88.5, -88.7, 89.0)))), FLOATS),
    _special("special_i0_i1_wide", lambda x, s: tuple(f(v) for f in (S.modified_bessel_i0, S.modified_bessel_i1) for v in (x * 10, s, _specials(x, (88.5, -88.7))))),
    # K0, K1 and exp-scaled: the logarithmic series to 2, NaN below 0, inf at 0
    _special("special_bessel_k", lambda x, s: tuple(f(v) for f in (S.modified_bessel_k0, S.modified_bessel_k1, S.scaled_modified_bessel_k0, S.scaled_modified_bessel_k1) for v in (x.abs() * 3, s, _specials(x)))),
    _special("special_spherical_bessel_j0", lambda x, s: tuple(S.spherical_bessel_j0(v) for v in (x * 0.4, x * 6, s, _specials(x)))),
    # ndtri: the central rational form, both tails (the far one below exp(-32)), and
    # -inf, inf, NaN at 0, 1 and outside [0, 1]
    _special("special_ndtri", lambda x, s: tuple(S.ndtri(v) for v in (torch.sigmoid(x * 2), torch.exp(-s.abs() / 10), -torch.expm1(-s.abs() / 100), _specials(x, (1.0, 0.5, 1.5, -0.5))))),
    # Airy Ai: oscillating below -2.09, the Maclaurin series between, decaying from
    # 2.09, 0 beyond 103.892 and NaN at +-inf (float32 agrees with torch's to |x| ~ 75:
    # beyond, both round the phase differently)
    # polygamma of order 1 (trigamma): the reflection below 1/2 (poles at 0, -1, ...)
    _special("special_trigamma", lambda x, s: tuple(torch.polygamma(1, v) for v in (x * 4, s, _specials(x, (-1.0, -2.5)))), dtypes=(torch.float32, torch.bfloat16), decades=(-3.0, 1.5)),
    # Hurwitz zeta: torch's 9 direct terms and Euler-Maclaurin tail for q > 0; q < 0
    # (x an integer, else NaN) through zeta at f, r + 1 and 1 - f; inf at x = 1 and at
    # q a non-positive integer, NaN below x = 1; both scalar overloads
    _special("special_zeta", lambda x, s: (
        S.zeta(s.abs() * 0.1 + 1, s.abs()), S.zeta(x * 3 + 1, x.abs() * 5), S.zeta(torch.floor(x.abs() * 3) + 2, x * 4),
        S.zeta(x.abs() + 1.5, 2.5), S.zeta(3.0, s), S.zeta(_specials(x, (1.0, 40.0)).reshape(-1, 1), _specials(x, (-0.5, -2.0, 1.0)))),
        decades=(-3.0, 2.0)),
    # polygamma of orders 2 to 5: -(-1)^n n! zeta(n + 1, x), below 0 by the reflection
    # formula (torch's poles at 0, -1, ... are +-inf); `special.polygamma` as well
    _special("special_polygamma", lambda x, s: (*(torch.polygamma(n, v) for n in (2, 3, 4, 5) for v in (x * 4, s, _specials(x, (-1.0, -2.5, -9.5)))), S.polygamma(3, x), S.polygamma(0, x)), dtypes=(torch.float32, torch.bfloat16), decades=(-3.0, 1.5)),
    # Chebyshev polynomials, plain and shifted: the degree a float tensor (truncated; <
    # 0, NaN and +-inf give 0), torch's recurrence up to its threshold degree, the
    # trigonometric form inside (-1, 1) beyond it, the hyperbolic one outside (NaN
    # once the recurrence overflows), torch's values at +-1 (and at 0 shifted)
    _special("special_chebyshev", lambda x, s: tuple(
        f(v, d) for f in _CHEBYSHEV
        for v, d in ((x * 1.5, (x * 7).abs()), (x * 0.6, x.abs() * 40), (s / 100, 9), (0.5, x.abs() * 12),
                     (_no_nan(_specials(x, (1.0, -1.0, 0.5, 1.5, 0.99999994, -0.99999994))).reshape(-1, 1), torch.tensor((0.0, 1.0, 2.0, 3.0, 5.0, 7.5, 9.0, 12.0, 30.0, -2.0, math.nan, math.inf), dtype=x.dtype)))),
        decades=(-3.0, 2.0)),
    # erfcx: Cody's rational functions for x >= 0 (to 0.46875, to 4, beyond), torch's
    # 2 exp(x^2) - erfcx(-x) below 0 (inf from -9.38 in float32); log_ndtr through it
    _special("special_erfcx", lambda x, s: tuple(
        f(v) for f in (S.erfcx, S.log_ndtr) for v in (x * 3, s, _specials(x, (0.46875, 4.0, -6.1, -9.3, -26.7, 5e7, 50.0, -1.0))))),
    # frexp and nextafter, exact: the exponent by scalings by powers of two; subnormals,
    # the largest float, +-0, +-inf and NaN (nextafter toward each other and themselves)
    _special("frexp_nextafter", lambda x, s: (
        *torch.frexp(x * 100), *torch.frexp(s), *torch.frexp(_specials(x, (_tiny(x), -_tiny(x) * 3, _largest(x), 0.75, 1.0))),
        torch.nextafter(x, x.flip(0)), torch.nextafter(s, torch.zeros_like(s)),
        torch.nextafter(_specials(x, (_tiny(x), -_tiny(x), _largest(x), 1.0)).reshape(-1, 1), _specials(x, (_tiny(x), -_tiny(x), _largest(x), 1.0)))),
        FLOATS, decades=(-30.0, 30.0)),
    _special("special_airy_ai", lambda x, s: tuple(S.airy_ai(v) for v in (x * 2, x * 20, s, _specials(x, (2.09, -2.09, 103.9)))), decades=(-3.0, 1.8)),
]
