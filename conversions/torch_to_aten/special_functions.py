"""PyTorch's special functions that mlxir has no importer for, as mlxir's own
decompositions in torch ops (`MLXIR_DECOMPOSITIONS` in `node_decompositions.py`): the
Bessel functions, `i0`/`i0e`/`i1`/`i1e`, `ndtri`, `airy_ai`, `spherical_bessel_j0`,
polygamma of order 1 and up, the Hurwitz `zeta`, `erfcx` and `log_ndtr`, the Chebyshev
polynomials T, U, V, W (plain and shifted), `frexp` and `nextafter`.

Each follows the approximation of PyTorch's CPU kernel (`aten/src/ATen/native/Math.h`,
derived from the Cephes Math Library): the same ranges, chosen per element with
`torch.where`, and the same polynomials, rational functions (Horner's rule) and
Chebyshev series (Clenshaw's recurrence, Cephes' `chbevl`) over the same coefficients,
so values match torch's to about float32's rounding. The coefficients are Python
numbers, each step an elementwise op with a scalar (a traced decomposition must make
no tensor constants). Integer and bool inputs give float32, as torch's do; float16 and
bfloat16 are computed in float32 and rounded once, as torch's kernels upcast them.
Special values (0, ±inf, NaN, arguments outside the domain) follow torch's kernels.

Where torch's kernel loops a number of times that depends on the values, the
decomposition computes the same value another way, with a fixed number of steps:

- `zeta(x, q)`: torch's 9 direct terms and 12-term Euler-Maclaurin tail for q > 0, its
  early exits kept as masks (it computes float32 in double and stops at 1.1e-16 of the
  sum). q < 0 (x an integer) sums up to q + j > 9 in torch: here the sum's negative
  terms are zeta at f = frac(-q) and at 1 - q, the rest zeta at 1 - f; polygamma (x =
  n + 1 known) takes the reflection formula, P_n(cot(pi f)) with P_n's coefficients
  computed at trace time, so no large terms cancel. Measured (compiled) against torch:
  float32 within 1e-6 relative for polygamma of orders 2 to 5 on [-10, 10] and +-1e-5 ...
  1e5, float64 1e-13. At negative half-integers polygamma(8) differs from torch's by
  3e-5 relative, where torch's double sum loses digits (mlxir's is the true value). The
  `zeta` op itself with q < 0 and x odd cancels: absolute error float32's epsilon times
  f^-x.
- Chebyshev polynomials: the degree is a float tensor, truncated (< 0, NaN, +-inf and
  from 2^63: 0, as torch's int64 cast). Up to torch's threshold degree (6; 8 for U, V,
  W; 4 for shifted W) torch's recurrence, unrolled, selected by the degree; beyond it
  torch's own trigonometric form inside (-1, 1) and, where torch recurs, the closed
  form outside: exp(k acosh|y|) times each kind's cosh/sinh ratio, NaN where torch's
  recurrence overflows into inf - inf (P_(k-2) past the largest float). Measured
  (compiled, degrees to 64, x in [-3, 3] and +-1 +- ulp): float32 within 2.5e-5 of
  torch (the trigonometric form inside (-1, 1), where n acos(x) rounds as torch's),
  float64 1e-11 evaluated by torch; MLX evaluates float64 sin, cos and exp in float32,
  so compiled float64 uses pow and algebraic half angles where it can and is within
  5e-6 absolute inside (-1, 1). Past degree ~1000 outside [-1, 1] torch's float32
  recurrence itself drifts (2e-3 at 1000), the closed form does not. Torch returns an
  uninitialized value for U, V, W at x = NaN below the threshold; mlxir NaN.
- `erfcx`: torch's kernel (the Faddeeva package's) is a table of 100 polynomials; here
  W. J. Cody's rational Chebyshev approximations (calerf: below 0.46875, to 4, beyond
  in 1/x^2) for x >= 0 and torch's 2 exp(x^2) - erfcx(-x) below 0. Measured (compiled)
  on [-30, 60] and 1e-10 ... 1e30: float32 within 4.8e-7 relative of torch, 3.7e-6
  where exp(x^2) nears overflow (x < -9; the rounding of x^2 dominates), float64
  3.8e-14. `log_ndtr` as torch's kernel over it: float32 6.3e-6, float64 9e-15.
- `frexp` and `nextafter`: exact (bit-identical, measured in all four float types):
  the exponent by a fixed search of scalings by powers of two, no bit casts.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import torch

Value = Any  # a tensor, or a Python float before the first step touches one


def _horner(x: torch.Tensor, coefficients: Sequence[float]) -> torch.Tensor:
    """The polynomial with `coefficients` (highest degree first) at `x`."""
    result: Value = coefficients[0]
    for c in coefficients[1:]:
        result = result * x + c
    return result


def _chbevl(x: torch.Tensor, coefficients: Sequence[float]) -> torch.Tensor:
    """Cephes' `chbevl`: the Chebyshev series with `coefficients` (highest order first,
    the constant term doubled) at `x`, by Clenshaw's recurrence."""
    b0: Value = coefficients[0]
    b1: Value = 0.0
    b2: Value = 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def _computed_in_float(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
    """`fn` on float32 (float64 stays), its result in torch's result dtype: the inputs'
    promoted floating dtype, float32 for integers and bools. A Python number argument
    (the `Scalar` of a binary op's overload) becomes a 0-d tensor of that type."""

    def decomposition(*args: torch.Tensor | float) -> torch.Tensor:
        first, *rest = args
        if isinstance(first, torch.Tensor):
            promoted = torch.result_type(first, rest[0]) if rest else first.dtype
        else:  # `self_scalar`: a number with a tensor
            assert isinstance(rest[0], torch.Tensor)
            promoted = torch.result_type(rest[0], first)
        result_dtype = promoted if promoted.is_floating_point else torch.get_default_dtype()
        wide = torch.float64 if result_dtype == torch.float64 else torch.float32
        wide_args = [
            a.to(wide) if isinstance(a, torch.Tensor) else torch.full((), float(a), dtype=wide) for a in args
        ]
        result = fn(*wide_args)
        return result if result.dtype == result_dtype else result.to(result_dtype)

    decomposition.__name__ = fn.__name__
    return decomposition


# --- modified Bessel functions of the first kind: Chebyshev series on [0, 8] and in
# 32/x - 2 beyond, of exp(-x) I(x) (times sqrt(x) beyond) -----------------------------


def _i0e_series(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """exp(-a) I0(a) for a <= 8, and exp(-a) sqrt(a) I0(a) beyond."""
    return _chbevl(a / 2.0 - 2.0, _I0E), _chbevl(32.0 / a - 2.0, _I0E_B)


def _i1e_series(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """exp(-a) I1(a) / a for a <= 8, and exp(-a) sqrt(a) I1(a) beyond."""
    return _chbevl(a / 2.0 - 2.0, _I1E), _chbevl(32.0 / a - 2.0, _I1E_B)


_EXP_FINITE_UP_TO = {torch.float32: 88.72283172607422, torch.float64: 709.782712893384}
"""The largest argument whose exp torch rounds to a finite number, per dtype."""


def _exp_times(a: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """exp(a) * factor for a > 8 where factor < 1, as torch's kernel gives it: inf
    (NaN at a = inf) once exp(a) overflows in a's dtype, and finite before. MLX's exp
    of float32 overflows from about 88.2, short of the dtype's limit, so exp(a/2) twice."""
    half = torch.exp(a * 0.5)
    value = half * factor * half
    overflows = (a > _EXP_FINITE_UP_TO[a.dtype]) & (a < math.inf)
    return torch.where(overflows, math.inf, value)


def _i0(x: torch.Tensor) -> torch.Tensor:
    a = x.abs()
    near, far = _i0e_series(a)
    return torch.where(a <= 8.0, torch.exp(a) * near, _exp_times(a, far / torch.sqrt(a)))


def _i0e(x: torch.Tensor) -> torch.Tensor:
    a = x.abs()
    near, far = _i0e_series(a)
    return torch.where(a <= 8.0, near, far / torch.sqrt(a))


def _odd(x: torch.Tensor, magnitude: torch.Tensor) -> torch.Tensor:
    return torch.where(x < 0.0, -magnitude, magnitude)


def _i1(x: torch.Tensor) -> torch.Tensor:
    a = x.abs()
    near, far = _i1e_series(a)
    return _odd(x, torch.where(a <= 8.0, torch.exp(a) * a * near, _exp_times(a, far / torch.sqrt(a))))


def _i1e(x: torch.Tensor) -> torch.Tensor:
    a = x.abs()
    near, far = _i1e_series(a)
    return _odd(x, torch.where(a <= 8.0, near * a, far / torch.sqrt(a)))


# --- modified Bessel functions of the second kind: a Chebyshev series in x^2 - 2 with
# the logarithmic term on (0, 2], one of exp(x) sqrt(x) K(x) in 8/x - 2 beyond ---------


def _k_of(x: torch.Tensor, order: int, scaled: bool) -> torch.Tensor:
    if order == 0:
        near = _chbevl(x * x - 2.0, _K0_A) - torch.log(0.5 * x) * _i0(x)
        far = _chbevl(8.0 / x - 2.0, _K0_B)
    else:
        near = torch.log(0.5 * x) * _i1(x) + _chbevl(x * x - 2.0, _K1_A) / x
        far = _chbevl(8.0 / x - 2.0, _K1_B)
    if scaled:
        near, far = near * torch.exp(x), far / torch.sqrt(x)
    else:
        far = torch.exp(-x) * far / torch.sqrt(x)
    value = torch.where(x <= 2.0, near, far)
    return torch.where(x == 0.0, math.inf, torch.where(x < 0.0, math.nan, value))


def _k0(x: torch.Tensor) -> torch.Tensor:
    return _k_of(x, 0, scaled=False)


def _k1(x: torch.Tensor) -> torch.Tensor:
    return _k_of(x, 1, scaled=False)


def _k0e(x: torch.Tensor) -> torch.Tensor:
    return _k_of(x, 0, scaled=True)


def _k1e(x: torch.Tensor) -> torch.Tensor:
    return _k_of(x, 1, scaled=True)


# --- Bessel functions of the first and second kind: rational functions of x^2 up to 5,
# the Hankel asymptotic form (rational in 25/x^2) beyond -----------------------------

_TWO_OVER_PI = 0.636619772367581343075535053490057448
_SQRT_TWO_OVER_PI = 0.797884560802865355879892119868763737
_QUARTER_PI = 0.785398163397448309615660845819875721
_THREE_QUARTERS_PI = 2.356194490192344928846982537459627163


def _hankel(a: torch.Tensor, order: int, second_kind: bool) -> torch.Tensor:
    """J (or Y) of `order` at a > 5: sqrt(2/(pi a)) (P cos(t) - 5/a Q sin(t)), t = a -
    pi/4 (3 pi/4 for order 1); sin for cos and + for - for Y."""
    w = 25.0 / (a * a) if order == 0 else (5.0 / a) * (5.0 / a)
    p = _horner(w, _J0_PP if order == 0 else _J1_PP) / _horner(w, _J0_PQ if order == 0 else _J1_PQ)
    q = _horner(w, _J0_QP if order == 0 else _J1_QP) / _horner(w, _J0_QQ if order == 0 else _J1_QQ)
    t = a - (_QUARTER_PI if order == 0 else _THREE_QUARTERS_PI)
    if second_kind:
        value = p * torch.sin(t) + 5.0 / a * q * torch.cos(t)
    else:
        value = p * torch.cos(t) - 5.0 / a * q * torch.sin(t)
    return value * _SQRT_TWO_OVER_PI / torch.sqrt(a)


def _j0(x: torch.Tensor) -> torch.Tensor:
    a = x.abs()
    z = a * a
    rational = (z - 5.78318596294678452118) * (z - 30.4712623436620863991) * _horner(z, _J0_RP) / _horner(z, _J0_RQ)
    near = torch.where(a < 1e-5, 1.0 - z / 4.0, rational)
    return torch.where(a <= 5.0, near, _hankel(a, 0, second_kind=False))


def _j1(x: torch.Tensor) -> torch.Tensor:
    # odd: the rational form is odd in x itself (so -0 stays -0), the far form mirrored
    z = x * x
    near = _horner(z, _J1_RP) / _horner(z, _J1_RQ) * x * (z - 14.6819706421238932572) * (z - 49.2184563216946036703)
    a = x.abs()
    return torch.where(a <= 5.0, near, _odd(x, _hankel(a, 1, second_kind=False)))


def _y0(x: torch.Tensor) -> torch.Tensor:
    z = x * x
    near = _horner(z, _Y0_YP) / _horner(z, _Y0_YQ) + _TWO_OVER_PI * torch.log(x) * _j0(x)
    near = torch.where(x == 0.0, -math.inf, torch.where(x < 0.0, math.nan, near))
    return torch.where(x <= 5.0, near, _hankel(x, 0, second_kind=True))


def _y1(x: torch.Tensor) -> torch.Tensor:
    z = x * x
    near = x * (_horner(z, _Y1_YP) / _horner(z, _Y1_YQ)) + _TWO_OVER_PI * (_j1(x) * torch.log(x) - 1.0 / x)
    near = torch.where(x == 0.0, -math.inf, torch.where(x < 0.0, math.nan, near))
    return torch.where(x <= 5.0, near, _hankel(x, 1, second_kind=True))


def _spherical_j0(x: torch.Tensor) -> torch.Tensor:
    # sin(x)/x, its Taylor series below |x| = 1/2; 0 at +-inf
    series = _horner(x * x, _SPHERICAL_J0_SERIES)
    value = torch.where(x.abs() < 0.5, series, torch.sin(x) / x)
    return torch.where(torch.isinf(x), 0.0, value)


_SPHERICAL_J0_SERIES = tuple(
    (-1.0) ** k / math.factorial(2 * k + 1) for k in reversed(range(7))
)


# --- the inverse of the normal distribution's CDF -------------------------------------

_EXP_MINUS_2 = 0.13533528323661269189
_SQRT_2PI = 2.50662827463100050242


def _ndtri(y0: torch.Tensor) -> torch.Tensor:
    upper = y0 > 1.0 - _EXP_MINUS_2
    y = torch.where(upper, 1.0 - y0, y0)
    # |y - 1/2| <= 3/8: a rational function of (y - 1/2)^2
    c = y - 0.5
    c2 = c * c
    central = (c + c * (c2 * _horner(c2, _NDTRI_P0) / _horner(c2, _NDTRI_Q0))) * _SQRT_2PI
    # the tails: in z = 1/x, x = sqrt(-2 log y), one rational function for x < 8, one beyond
    x = torch.sqrt(-2.0 * torch.log(y))
    x0 = x - torch.log(x) / x
    z = 1.0 / x
    near = z * _horner(z, _NDTRI_P1) / _horner(z, _NDTRI_Q1)
    far = z * _horner(z, _NDTRI_P2) / _horner(z, _NDTRI_Q2)
    tail = x0 - torch.where(x < 8.0, near, far)
    value = torch.where(y > _EXP_MINUS_2, central, torch.where(upper, tail, -tail))
    value = torch.where((y0 < 0.0) | (y0 > 1.0), math.nan, value)
    return torch.where(y0 == 0.0, -math.inf, torch.where(y0 == 1.0, math.inf, value))


# --- Airy's Ai: asymptotic forms below -2.09 and from 2.09, the Maclaurin series
# between ----------------------------------------------------------------------------

_AIRY_SERIES_TERMS = 14
"""Terms of the Maclaurin series, fixed where torch's kernel stops at float32's epsilon:
on |x| < 2.09 (|x^3| < 9.2) the 14th is below float64's."""


def _airy_ai(x: torch.Tensor) -> torch.Tensor:
    # x < -2.09: oscillating, in z = 1 / zeta, zeta = 2/3 (-x)^(3/2)
    root = torch.sqrt(-x)
    zeta = -2.0 * x * root / 3.0
    z = 1.0 / zeta
    zz = z * z
    f = 1.0 + zz * _horner(zz, _AIRY_AFN) / _horner(zz, _AIRY_AFD)
    g = z * _horner(zz, _AIRY_AGN) / _horner(zz, _AIRY_AGD)
    t = zeta + 0.25 * math.pi
    negative = 5.64189583547756286948e-01 / torch.sqrt(root) * (torch.sin(t) * f - torch.cos(t) * g)
    # x >= 2.09: decaying, rational in 1 / zeta, zeta = 2/3 x^(3/2)
    zeta = 2.0 * x * torch.sqrt(x) / 3.0
    w = 1.0 / zeta
    decaying = 5.64189583547756286948e-01 * (_horner(w, _AIRY_AN) / _horner(w, _AIRY_AD))
    decaying = decaying / (2.0 * torch.sqrt(torch.sqrt(x)) * torch.exp(zeta))
    # between: Ai = c1 f(x) - c2 g(x), f and g the Maclaurin series in x^3
    cube = x * x * x
    m: Value = 1.0
    n: Value = x
    f_series: Value = 1.0
    g_series: Value = x
    k = 1.0
    for _ in range(_AIRY_SERIES_TERMS):
        m = m * cube / ((k + 1.0) * (k + 2.0))
        n = n * cube / ((k + 2.0) * (k + 3.0))
        f_series = f_series + m
        g_series = g_series + n
        k += 3.0
    between = 0.355028053887817239260 * f_series - 0.258819403792806798405 * g_series
    value = torch.where(x < -2.09, negative, torch.where(x >= 2.09, decaying, between))
    value = torch.where(x > 103.892, 0.0, value)
    return torch.where(torch.isinf(x), math.nan, value)


# --- trigamma, polygamma of order 1: the reflection below 1/2, six steps of the
# recurrence, then the asymptotic series ----------------------------------------------


def _trigamma(x: torch.Tensor) -> torch.Tensor:
    reflected = x < 0.5
    sin_pi_x = torch.sin(math.pi * x)
    result: Value = torch.where(reflected, -(math.pi * math.pi) / (sin_pi_x * sin_pi_x), 0.0)
    x = torch.where(reflected, 1.0 - x, x)
    for _ in range(6):
        result = result + 1.0 / (x * x)
        x = x + 1.0
    ixx = 1.0 / (x * x)
    result = result + (1.0 + 1.0 / (2.0 * x) + ixx * (1.0 / 6 - ixx * (1.0 / 30 - ixx * (1.0 / 42)))) / x
    return torch.where(reflected, -result, result)


# --- the Hurwitz zeta function, and polygamma of order 2 and up through it ------------

_ZETA_MACHEP = 1.11022302462515654042e-16
"""torch's kernel computes in double (float32's accumulate type) and stops a series at
this fraction of the sum; it is kept in float32 too, where it only marks where the
double computation stopped (a later term could be NaN: inf times an underflown 0)."""

_ZETA_DIRECT_TERMS = 9
"""Terms of the sum torch's kernel adds before its Euler-Maclaurin tail: for q > 0
its loop runs while i < 9 or q + i <= 9, so exactly 9 times."""

_ZETA_A = (
    12.0, -720.0, 30240.0, -1209600.0, 47900160.0, -1.8924375803183791606e9, 7.47242496e10,
    -2.950130727918164224e12, 1.1646782814350067249e14, -4.5979787224074726105e15,
    1.8152105401943546773e17, -7.1661652561756670113e18,
)
"""Cephes' Euler-Maclaurin denominators, (2k)! / B_2k."""


def _zeta_positive(x: torch.Tensor, q: torch.Tensor) -> torch.Tensor:
    """Hurwitz zeta(x, q) for q > 0 (or NaN), torch's loops with their early exits kept
    as a mask: once a term is below MACHEP of the sum, the sum stops changing."""
    s = torch.pow(q, -x)
    a = q
    b = torch.zeros_like(s)
    done = torch.zeros_like(s, dtype=torch.bool)
    for _ in range(_ZETA_DIRECT_TERMS):
        a = a + 1.0
        b = torch.pow(a, -x)
        s = torch.where(done, s, s + b)
        done = done | ((-_ZETA_MACHEP * s < b) & (b < _ZETA_MACHEP * s))
    w = a
    s = torch.where(done, s, s + b * w / (x - 1.0) - 0.5 * b)
    # torch's a * b, a = x (x+1) ... (x+2i), b = b / w^(2i+1), as one running product
    # whose factors are near 1: a and w^(2i+1) overflow float32 where double holds them
    k = 0.0
    p = b
    for denominator in _ZETA_A:
        p = p * ((x + k) / w)
        t = p / denominator
        s = torch.where(done, s, s + t)
        done = done | (torch.abs(t / s) < _ZETA_MACHEP)
        p = p * ((x + (k + 1.0)) / w)
        k += 2.0
    return s


_ZETA_NAN_FROM = 2.5355e13
"""From here torch's double product x (x+1) ... (x+22) overflows (to inf): where the
sum has underflowed to 0 too, its Euler-Maclaurin term is inf * 0, NaN."""


def _cot_derivative(n: int) -> list[float]:
    """The coefficients (constant first) of P_n, d^n/dy^n cot(y) = P_n(cot y): P_0(c) =
    c, P_(n+1) = -(1 + c^2) P_n'. Each P_n has one sign and one parity, so evaluating it
    cancels nothing."""
    p = [0.0, 1.0]
    for _ in range(n):
        derivative = [k * p[k] for k in range(1, len(p))] + [0.0, 0.0]
        p = [-(derivative[k] + (derivative[k - 2] if k >= 2 else 0.0)) for k in range(len(derivative))]
    return p


def _zeta(x: torch.Tensor, q: torch.Tensor, order: int | None = None) -> torch.Tensor:
    """Hurwitz zeta(x, q) as torch's kernel gives it; `order`: x is that integer (a
    polygamma's n + 1), which lets q < 0 use the reflection formula."""
    x, q = torch.broadcast_tensors(x, q)
    # q < 0 (x an integer, else NaN): torch sums (q + j)^-x up to q + j > 9, a number
    # of terms that depends on q. With r = -q, f = r - floor(r), that sum's negative
    # terms are (-1)^x (zeta(x, f) - zeta(x, r + 1)) and the rest zeta(x, 1 - f).
    negative = q < 0.0
    r = -q
    f = r - torch.floor(r)
    sign = torch.where(torch.remainder(x, 2.0) == 0.0, 1.0, -1.0)
    if order is None:
        # three evaluations at positive arguments, stacked into one; for odd x the
        # first and last nearly cancel where f is near 1/2 (absolute error: float32's
        # epsilon times f^-x)
        stacked = _zeta_positive(torch.stack((x, x, x)), torch.stack((torch.where(negative, f, q), r + 1.0, 1.0 - f)))
        at_q, at_r1, at_1f = stacked.unbind(0)
        reflected = sign * (at_q - at_r1) + at_1f
    else:
        # zeta(n, 1 - f) + (-1)^n zeta(n, f) = -pi^n / (n-1)! P_(n-1)(cot(pi f)) (the
        # reflection formula of polygamma), without the cancellation; cot(pi f) from g,
        # the nearer of f and 1 - f (exact), as 1 / tan(pi g) or tan(pi (1/2 - g)):
        # each relatively accurate, and 0 at g = 1/2 (a zero of the odd orders)
        stacked = _zeta_positive(torch.stack((x, x)), torch.stack((q, r + 1.0)))
        at_q, at_r1 = stacked.unbind(0)
        g = torch.minimum(f, 1.0 - f)
        cot = torch.where(g < 0.25, 1.0 / torch.tan(math.pi * g), torch.tan(math.pi * (0.5 - g)))
        cot = torch.where(f > 0.5, -cot, cot)
        p = _cot_derivative(order - 1)
        derivative = _horner(cot, p[::-1])
        reflected = -(math.pi**order / math.factorial(order - 1)) * derivative - sign * at_r1
    # x = inf: some |q + j| < 1, whose (q + j)^-inf is inf
    value = torch.where(negative, torch.where(x == math.inf, math.inf, reflected), at_q)
    # where the sum underflows in double, torch's tail is NaN once its product overflows
    value = torch.where((x > _ZETA_NAN_FROM) & (x * torch.log(q) > 744.44), math.nan, value)
    # torch's special cases, in its order (the first that applies wins)
    non_positive = q <= 0.0
    value = torch.where(non_positive & (x != torch.floor(x)), math.nan, value)
    value = torch.where(non_positive & (q == torch.floor(q)), math.inf, value)
    value = torch.where(x < 1.0, math.nan, value)
    return torch.where(x == 1.0, math.inf, value)


def polygamma(n: int, x: torch.Tensor) -> torch.Tensor | None:
    """polygamma(n, x) for the orders mlxir decomposes (1 and up), else None. From
    order 2, torch's (-1)^(n+1) n! zeta(n + 1, x)."""
    if n == 1:
        return _computed_in_float(_trigamma)(x)
    if n >= 2:
        factor = (-1.0) ** (n + 1) * math.factorial(n)
        return _computed_in_float(lambda v: factor * _zeta(torch.full_like(v, n + 1.0), v, order=n + 1))(x)
    return None


# --- erfcx, exp(x^2) erfc(x): W. J. Cody's rational Chebyshev approximations for x >= 0
# (torch's kernel, the Faddeeva package's, is a table of 100 polynomials), torch's own
# reflection for x < 0 ------------------------------------------------------------------

_ONE_OVER_SQRT_PI = 0.56418958354775628694807945156


def _exp_exact(v: torch.Tensor) -> torch.Tensor:
    """exp(v) at v's precision: MLX evaluates float64 exp in float32 (overflowing from
    88.7), its float64 pow exactly."""
    if v.dtype == torch.float64:
        return torch.pow(torch.full_like(v, math.e), v)
    return torch.exp(v)


def _erfcx_positive(a: torch.Tensor) -> torch.Tensor:
    """erfcx(a) for a >= 0 (NaN stays): Cody's three ranges, each a rational function."""
    z = a * a
    # below 0.46875: exp(a^2) (1 - erf(a)), erf rational in a^2
    small = _exp_exact(z) * (1.0 - a * _horner(z, _ERF_A) / _horner(z, _ERF_B))
    # to 4: erfcx itself, rational in a
    middle = _horner(a, _ERFC_C) / _horner(a, _ERFC_D)
    # beyond: (1/sqrt(pi) - w R(w)) / a, w = 1/a^2 (0 once a^2 overflows: 1/(sqrt(pi) a))
    w = 1.0 / z
    large = (_ONE_OVER_SQRT_PI - w * _horner(w, _ERFC_P) / _horner(w, _ERFC_Q)) / a
    return torch.where(a < 0.46875, small, torch.where(a <= 4.0, middle, large))


def _erfcx(x: torch.Tensor) -> torch.Tensor:
    # x < 0: torch's 2 exp(x^2) - erfcx(-x), the second term dropped below -6.1, inf
    # below -26.7 (2 exp(x^2) overflows float32 from -9.38 anyway)
    positive = _erfcx_positive(x.abs())
    if x.dtype == torch.float64:
        twice_exp = 2.0 * _exp_exact(x * x)
    else:  # exp(x^2 / 2) twice: MLX's float32 exp overflows from about 88, not 88.72
        half = torch.exp(0.5 * (x * x))
        twice_exp = (2.0 * half) * half
    negative = torch.where(x < -6.1, twice_exp, twice_exp - positive)
    negative = torch.where(x < -26.7, math.inf, negative)
    return torch.where(x < 0.0, negative, positive)


def _log_ndtr(x: torch.Tensor) -> torch.Tensor:
    # torch's kernel: below -1, log(erfcx(-t) / 2) - t^2, t = x / sqrt(2), which keeps
    # the far left tail finite; log1p(-erfc(t) / 2) above (torch's decomposition of
    # log_ndtr makes an erfcx that is not decomposed again); erfc(|t|) as exp(-t^2)
    # erfcx(|t|), which MLX's erfc loses from t ~ 3 on (and evaluates in float32 for
    # float64), erfc(t) = 2 - erfc(|t|) for t < 0
    t = x * 0.70710678118654752440
    left = torch.log(_erfcx(-t) / 2.0) - t * t
    tail = _exp_exact(-(t * t)) * _erfcx_positive(t.abs())
    erfc = torch.where(t < 0.0, 2.0 - tail, tail)
    return torch.where(x < -1.0, left, torch.log1p(-erfc / 2.0))


# --- frexp and nextafter: a float's exponent by exact scalings by powers of two (mlxir
# imports no bit casts of floats) --------------------------------------------------------

_SCALING_STEPS = {torch.float32: (64, 64, 32, 16, 8, 4, 2, 1), torch.float64: (512, 512, 256, 128, 64, 32, 16, 8, 4, 2, 1)}
"""Powers of two (each exact in the type) whose sums reach every exponent of the type,
its subnormals' included: 191 >= 149 for float32, 1535 >= 1074 for float64."""


def _mantissa_exponent(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(m, e), a = m 2^e with m in [1/2, 1), for a > 0 finite, exactly: a greedy binary
    search over the exponent, each step a comparison and a scaling by a power of two."""
    m = a
    e = torch.zeros_like(a)
    steps = _SCALING_STEPS[a.dtype]
    for k in steps:
        bigger = m >= 2.0**k
        m = torch.where(bigger, m * 2.0**-k, m)
        e = torch.where(bigger, e + float(k), e)
    for k in steps:
        smaller = m < 2.0**-k
        m = torch.where(smaller, m * 2.0**k, m)
        e = torch.where(smaller, e - float(k), e)
    # now m is in [1/2, 2)
    over = m >= 1.0
    return torch.where(over, m * 0.5, m), torch.where(over, e + 1.0, e)


def _frexp(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    wide = torch.float64 if x.dtype == torch.float64 else torch.float32
    v = x.to(wide)
    regular = torch.isfinite(v) & (v != 0.0)
    m, e = _mantissa_exponent(torch.where(regular, v.abs(), 1.0))
    # 0, +-inf and NaN: the value itself and exponent 0, as torch's (std::frexp's)
    mantissa = torch.where(regular, torch.where(v < 0.0, -m, m), v)
    exponent = torch.where(regular, e, 0.0)
    return mantissa.to(x.dtype), exponent.to(torch.int32)


_PRECISION = {torch.float32: 24, torch.float64: 53, torch.float16: 11, torch.bfloat16: 8}
"""Significand bits, the implicit one included."""
_SMALLEST_SUBNORMAL = {torch.float32: 2.0**-149, torch.float64: 2.0**-1074, torch.float16: 2.0**-24, torch.bfloat16: 2.0**-133}


def _nextafter(x: torch.Tensor, other: torch.Tensor) -> torch.Tensor:
    """The float after x toward other in x's type. float16 and bfloat16 step in float32
    by their own spacing, which float32 holds exactly."""
    dtype = x.dtype
    wide = torch.float64 if dtype == torch.float64 else torch.float32
    v, w = torch.broadcast_tensors(x.to(wide), other.to(wide))
    p = _PRECISION[dtype]
    tiny = _SMALLEST_SUBNORMAL[dtype]
    a = v.abs()
    regular = torch.isfinite(v) & (v != 0.0)
    m, _ = _mantissa_exponent(torch.where(regular, a, 1.0))
    # 2^(e-1) exactly, a's binade [2^(e-1), 2^e) (2^e itself overflows at the largest)
    low = torch.where(regular, a, 1.0) / (m + m)
    away = torch.clamp(low * 2.0 ** (1 - p), min=tiny)
    # toward zero from a power of two the spacing halves
    toward = torch.clamp(torch.where(m == 0.5, low * 2.0**-p, low * 2.0 ** (1 - p)), min=tiny)
    up = torch.where(v > 0.0, v + away, v + toward)
    down = torch.where(v > 0.0, v - toward, v - away)
    value = torch.where(w > v, up, down)
    value = torch.where(value == 0.0, v * 0.0, value)  # from +-tiny to a zero of x's sign
    value = torch.where(v == 0.0, torch.where(w > v, torch.full_like(v, tiny), torch.full_like(v, -tiny)), value)
    largest = torch.finfo(dtype).max
    value = torch.where(
        torch.isinf(v), torch.where(v > 0.0, torch.full_like(v, largest), torch.full_like(v, -largest)), value
    )
    # equal: other itself (so -0 toward 0 is 0); NaN in either: NaN
    value = torch.where(v == w, w, value)
    value = torch.where(torch.isnan(v) | torch.isnan(w), torch.full_like(v, math.nan), value)
    return value.to(dtype)


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
    overflowed = before * t + torch.log(factor(before)) > _EXP_FINITE_UP_TO[y.dtype]
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
        x, n = torch.broadcast_tensors(x, n)
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


def _special_polygamma(n: int, x: torch.Tensor) -> torch.Tensor:
    # `special.polygamma`, which torch's own decomposition makes a `polygamma` that is
    # not decomposed again: the orders above, ψ itself for 0, and a refused
    # `polygamma` for an order mlxir does not decompose
    if n == 0:
        return _A.digamma.default(x)
    decomposed = polygamma(n, x)
    return _A.polygamma.default(n, x) if decomposed is None else decomposed


SPECIAL_FUNCTIONS: dict[torch._ops.OpOverload, Callable[..., Any]] = {
    _A.i0.default: _computed_in_float(_i0),
    _A.special_i0e.default: _computed_in_float(_i0e),
    _A.special_i1.default: _computed_in_float(_i1),
    _A.special_i1e.default: _computed_in_float(_i1e),
    _A.special_modified_bessel_i0.default: _computed_in_float(_i0),
    _A.special_modified_bessel_i1.default: _computed_in_float(_i1),
    _A.special_modified_bessel_k0.default: _computed_in_float(_k0),
    _A.special_modified_bessel_k1.default: _computed_in_float(_k1),
    _A.special_scaled_modified_bessel_k0.default: _computed_in_float(_k0e),
    _A.special_scaled_modified_bessel_k1.default: _computed_in_float(_k1e),
    _A.special_bessel_j0.default: _computed_in_float(_j0),
    _A.special_bessel_j1.default: _computed_in_float(_j1),
    _A.special_bessel_y0.default: _computed_in_float(_y0),
    _A.special_bessel_y1.default: _computed_in_float(_y1),
    _A.special_spherical_bessel_j0.default: _computed_in_float(_spherical_j0),
    _A.special_ndtri.default: _computed_in_float(_ndtri),
    _A.special_airy_ai.default: _computed_in_float(_airy_ai),
    _A.special_zeta.default: _computed_in_float(_zeta),
    _A.special_zeta.other_scalar: _computed_in_float(_zeta),
    _A.special_zeta.self_scalar: _computed_in_float(_zeta),
    _A.special_polygamma.default: _special_polygamma,
    _A.special_erfcx.default: _computed_in_float(_erfcx),
    _A.special_log_ndtr.default: _computed_in_float(_log_ndtr),
    _A.frexp.Tensor: _frexp,
    _A.nextafter.default: _nextafter,
    _A.special_chebyshev_polynomial_t.default: _computed_in_float(_chebyshev("t", False)),
    _A.special_chebyshev_polynomial_t.x_scalar: _computed_in_float(_chebyshev("t", False)),
    _A.special_chebyshev_polynomial_t.n_scalar: _computed_in_float(_chebyshev("t", False)),
    _A.special_chebyshev_polynomial_u.default: _computed_in_float(_chebyshev("u", False)),
    _A.special_chebyshev_polynomial_u.x_scalar: _computed_in_float(_chebyshev("u", False)),
    _A.special_chebyshev_polynomial_u.n_scalar: _computed_in_float(_chebyshev("u", False)),
    _A.special_chebyshev_polynomial_v.default: _computed_in_float(_chebyshev("v", False)),
    _A.special_chebyshev_polynomial_v.x_scalar: _computed_in_float(_chebyshev("v", False)),
    _A.special_chebyshev_polynomial_v.n_scalar: _computed_in_float(_chebyshev("v", False)),
    _A.special_chebyshev_polynomial_w.default: _computed_in_float(_chebyshev("w", False)),
    _A.special_chebyshev_polynomial_w.x_scalar: _computed_in_float(_chebyshev("w", False)),
    _A.special_chebyshev_polynomial_w.n_scalar: _computed_in_float(_chebyshev("w", False)),
    _A.special_shifted_chebyshev_polynomial_t.default: _computed_in_float(_chebyshev("t", True)),
    _A.special_shifted_chebyshev_polynomial_t.x_scalar: _computed_in_float(_chebyshev("t", True)),
    _A.special_shifted_chebyshev_polynomial_t.n_scalar: _computed_in_float(_chebyshev("t", True)),
    _A.special_shifted_chebyshev_polynomial_u.default: _computed_in_float(_chebyshev("u", True)),
    _A.special_shifted_chebyshev_polynomial_u.x_scalar: _computed_in_float(_chebyshev("u", True)),
    _A.special_shifted_chebyshev_polynomial_u.n_scalar: _computed_in_float(_chebyshev("u", True)),
    _A.special_shifted_chebyshev_polynomial_v.default: _computed_in_float(_chebyshev("v", True)),
    _A.special_shifted_chebyshev_polynomial_v.x_scalar: _computed_in_float(_chebyshev("v", True)),
    _A.special_shifted_chebyshev_polynomial_v.n_scalar: _computed_in_float(_chebyshev("v", True)),
    _A.special_shifted_chebyshev_polynomial_w.default: _computed_in_float(_chebyshev("w", True)),
    _A.special_shifted_chebyshev_polynomial_w.x_scalar: _computed_in_float(_chebyshev("w", True)),
    _A.special_shifted_chebyshev_polynomial_w.n_scalar: _computed_in_float(_chebyshev("w", True)),
}
"""mlxir's decompositions of torch's special functions, by the op torch.export records."""


# --- coefficients: PyTorch's kernels' (Cephes'), highest degree or order first ---------

_I0E = (
    -4.41534164647933937950E-18, 3.33079451882223809783E-17,
    -2.43127984654795469359E-16, 1.71539128555513303061E-15,
    -1.16853328779934516808E-14, 7.67618549860493561688E-14,
    -4.85644678311192946090E-13, 2.95505266312963983461E-12,
    -1.72682629144155570723E-11, 9.67580903537323691224E-11,
    -5.18979560163526290666E-10, 2.65982372468238665035E-9, -1.30002500998624804212E-8,
    6.04699502254191894932E-8, -2.67079385394061173391E-7, 1.11738753912010371815E-6,
    -4.41673835845875056359E-6, 1.64484480707288970893E-5, -5.75419501008210370398E-5,
    1.88502885095841655729E-4, -5.76375574538582365885E-4, 1.63947561694133579842E-3,
    -4.32430999505057594430E-3, 1.05464603945949983183E-2, -2.37374148058994688156E-2,
    4.93052842396707084878E-2, -9.49010970480476444210E-2, 1.71620901522208775349E-1,
    -3.04682672343198398683E-1, 6.76795274409476084995E-1,
)
_I0E_B = (
    -7.23318048787475395456E-18, -4.83050448594418207126E-18,
    4.46562142029675999901E-17, 3.46122286769746109310E-17, -2.82762398051658348494E-16,
    -3.42548561967721913462E-16, 1.77256013305652638360E-15, 3.81168066935262242075E-15,
    -9.55484669882830764870E-15, -4.15056934728722208663E-14,
    1.54008621752140982691E-14, 3.85277838274214270114E-13, 7.18012445138366623367E-13,
    -1.79417853150680611778E-12, -1.32158118404477131188E-11,
    -3.14991652796324136454E-11, 1.18891471078464383424E-11, 4.94060238822496958910E-10,
    3.39623202570838634515E-9, 2.26666899049817806459E-8, 2.04891858946906374183E-7,
    2.89137052083475648297E-6, 6.88975834691682398426E-5, 3.36911647825569408990E-3,
    8.04490411014108831608E-1,
)
_I1E = (
    2.77791411276104639959E-18, -2.11142121435816608115E-17, 1.55363195773620046921E-16,
    -1.10559694773538630805E-15, 7.60068429473540693410E-15,
    -5.04218550472791168711E-14, 3.22379336594557470981E-13,
    -1.98397439776494371520E-12, 1.17361862988909016308E-11,
    -6.66348972350202774223E-11, 3.62559028155211703701E-10, -1.88724975172282928790E-9,
    9.38153738649577178388E-9, -4.44505912879632808065E-8, 2.00329475355213526229E-7,
    -8.56872026469545474066E-7, 3.47025130813767847674E-6, -1.32731636560394358279E-5,
    4.78156510755005422638E-5, -1.61760815825896745588E-4, 5.12285956168575772895E-4,
    -1.51357245063125314899E-3, 4.15642294431288815669E-3, -1.05640848946261981558E-2,
    2.47264490306265168283E-2, -5.29459812080949914269E-2, 1.02643658689847095384E-1,
    -1.76416518357834055153E-1, 2.52587186443633654823E-1,
)
_I1E_B = (
    7.51729631084210481353E-18, 4.41434832307170791151E-18, -4.65030536848935832153E-17,
    -3.20952592199342395980E-17, 2.96262899764595013876E-16, 3.30820231092092828324E-16,
    -1.88035477551078244854E-15, -3.81440307243700780478E-15,
    1.04202769841288027642E-14, 4.27244001671195135429E-14, -2.10154184277266431302E-14,
    -4.08355111109219731823E-13, -7.19855177624590851209E-13,
    2.03562854414708950722E-12, 1.41258074366137813316E-11, 3.25260358301548823856E-11,
    -1.89749581235054123450E-11, -5.58974346219658380687E-10,
    -3.83538038596423702205E-9, -2.63146884688951950684E-8, -2.51223623787020892529E-7,
    -3.88256480887769039346E-6, -1.10588938762623716291E-4, -9.76109749136146840777E-3,
    7.78576235018280120474E-1,
)
_K0_A = (
    1.37446543561352307156e-16, 4.25981614279661018399e-14, 1.03496952576338420167e-11,
    1.90451637722020886025e-09, 2.53479107902614945675e-07, 2.28621210311945178607e-05,
    1.26461541144692592338e-03, 3.59799365153615016266e-02, 3.44289899924628486886e-01,
    -5.35327393233902768720e-01,
)
_K0_B = (
    5.30043377268626276149e-18, -1.64758043015242134646e-17, 5.21039150503902756861e-17,
    -1.67823109680541210385e-16, 5.51205597852431940784e-16,
    -1.84859337734377901440e-15, 6.34007647740507060557e-15,
    -2.22751332699166985548e-14, 8.03289077536357521100e-14,
    -2.98009692317273043925e-13, 1.14034058820847496303e-12,
    -4.51459788337394416547e-12, 1.85594911495471785253e-11,
    -7.95748924447710747776e-11, 3.57739728140030116597e-10,
    -1.69753450938905987466e-09, 8.57403401741422608519e-09,
    -4.66048989768794782956e-08, 2.76681363944501510342e-07,
    -1.83175552271911948767e-06, 1.39498137188764993662e-05,
    -1.28495495816278026384e-04, 1.56988388573005337491e-03,
    -3.14481013119645005427e-02, 2.44030308206595545468e+00,
)
_K1_A = (
    -7.02386347938628759343e-18, -2.42744985051936593393e-15,
    -6.66690169419932900609e-13, -1.41148839263352776110e-10,
    -2.21338763073472585583e-08, -2.43340614156596823496e-06,
    -1.73028895751305206302e-04, -6.97572385963986435018e-03,
    -1.22611180822657148235e-01, -3.53155960776544875667e-01, 1.52530022733894777053e+00,
)
_K1_B = (
    -5.75674448366501715755e-18, 1.79405087314755922667e-17,
    -5.68946255844285935196e-17, 1.83809354436663880070e-16,
    -6.05704724837331885336e-16, 2.03870316562433424052e-15,
    -7.01983709041831346144e-15, 2.47715442448130437068e-14,
    -8.97670518232499435011e-14, 3.34841966607842919884e-13,
    -1.28917396095102890680e-12, 5.13963967348173025100e-12,
    -2.12996783842756842877e-11, 9.21831518760500529508e-11,
    -4.19035475934189648750e-10, 2.01504975519703286596e-09,
    -1.03457624656780970260e-08, 5.74108412545004946722e-08,
    -3.50196060308781257119e-07, 2.40648494783721712015e-06,
    -1.93619797416608296024e-05, 1.95215518471351631108e-04,
    -2.85781685962277938680e-03, 1.03923736576817238437e-01, 2.72062619048444266945e+00,
)
_J0_PP = (
    7.96936729297347051624e-04, 8.28352392107440799803e-02, 1.23953371646414299388e+00,
    5.44725003058768775090e+00, 8.74716500199817011941e+00, 5.30324038235394892183e+00,
    9.99999999999999997821e-01,
)
_J0_PQ = (
    9.24408810558863637013e-04, 8.56288474354474431428e-02, 1.25352743901058953537e+00,
    5.47097740330417105182e+00, 8.76190883237069594232e+00, 5.30605288235394617618e+00,
    1.00000000000000000218e+00,
)
_J0_QP = (
    -1.13663838898469149931e-02, -1.28252718670509318512e+00,
    -1.95539544257735972385e+01, -9.32060152123768231369e+01,
    -1.77681167980488050595e+02, -1.47077505154951170175e+02,
    -5.14105326766599330220e+01, -6.05014350600728481186e+00,
)
_J0_QQ = (
    6.43178256118178023184e+01, 8.56430025976980587198e+02, 3.88240183605401609683e+03,
    7.24046774195652478189e+03, 5.93072701187316984827e+03, 2.06209331660327847417e+03,
    2.42005740240291393179e+02,
)
_J0_RP = (
    -4.79443220978201773821e+09, 1.95617491946556577543e+12,
    -2.49248344360967716204e+14, 9.70862251047306323952e+15,
)
_J0_RQ = (
    4.99563147152651017219e+02, 1.73785401676374683123e+05, 4.84409658339962045305e+07,
    1.11855537045356834862e+10, 2.11277520115489217587e+12, 3.10518229857422583814e+14,
    3.18121955943204943306e+16, 1.71086294081043136091e+18,
)
_J1_PP = (
    7.62125616208173112003e-04, 7.31397056940917570436e-02, 1.12719608129684925192e+00,
    5.11207951146807644818e+00, 8.42404590141772420927e+00, 5.21451598682361504063e+00,
    1.00000000000000000254e+00,
)
_J1_PQ = (
    5.71323128072548699714e-04, 6.88455908754495404082e-02, 1.10514232634061696926e+00,
    5.07386386128601488557e+00, 8.39985554327604159757e+00, 5.20982848682361821619e+00,
    9.99999999999999997461e-01,
)
_J1_QP = (
    5.10862594750176621635e-02, 4.98213872951233449420e+00, 7.58238284132545283818e+01,
    3.66779609360150777800e+02, 7.10856304998926107277e+02, 5.97489612400613639965e+02,
    2.11688757100572135698e+02, 2.52070205858023719784e+01,
)
_J1_QQ = (
    7.42373277035675149943e+01, 1.05644886038262816351e+03, 4.98641058337653607651e+03,
    9.56231892404756170795e+03, 7.99704160447350683650e+03, 2.82619278517639096600e+03,
    3.36093607810698293419e+02,
)
_J1_RP = (
    -8.99971225705559398224e+08, 4.52228297998194034323e+11,
    -7.27494245221818276015e+13, 3.68295732863852883286e+15,
)
_J1_RQ = (
    6.20836478118054335476e+02, 2.56987256757748830383e+05, 8.35146791431949253037e+07,
    2.21511595479792499675e+10, 4.74914122079991414898e+12, 7.84369607876235854894e+14,
    8.95222336184627338078e+16, 5.32278620332680085395e+18,
)
_Y0_YP = (
    1.55924367855235737965e+04, -1.46639295903971606143e+07, 5.43526477051876500413e+09,
    -9.82136065717911466409e+11, 8.75906394395366999549e+13,
    -3.46628303384729719441e+15, 4.42733268572569800351e+16, -1.84950800436986690637e+16,
)
_Y0_YQ = (
    1.04128353664259848412e+03, 6.26107330137134956842e+05, 2.68919633393814121987e+08,
    8.64002487103935000337e+10, 2.02979612750105546709e+13, 3.17157752842975028269e+15,
    2.50596256172653059228e+17,
)
_Y1_YP = (
    1.26320474790178026440e+09, -6.47355876379160291031e+11, 1.14509511541823727583e+14,
    -8.12770255501325109621e+15, 2.02439475713594898196e+17, -7.78877196265950026825e+17,
)
_Y1_YQ = (
    5.94301592346128195359e+02, 2.35564092943068577943e+05, 7.34811944459721705660e+07,
    1.87601316108706159478e+10, 3.88231277496238566008e+12, 6.20557727146953693363e+14,
    6.87141087355300489866e+16, 3.97270608116560655612e+18,
)
_NDTRI_P0 = (
    -5.99633501014107895267E1, 9.80010754185999661536E1, -5.66762857469070293439E1,
    1.39312609387279679503E1, -1.23916583867381258016E0,
)
_NDTRI_Q0 = (
    1.00000000000000000000E0, 1.95448858338141759834E0, 4.67627912898881538453E0,
    8.63602421390890590575E1, -2.25462687854119370527E2, 2.00260212380060660359E2,
    -8.20372256168333339912E1, 1.59056225126211695515E1, -1.18331621121330003142E0,
)
_NDTRI_P1 = (
    4.05544892305962419923E0, 3.15251094599893866154E1, 5.71628192246421288162E1,
    4.40805073893200834700E1, 1.46849561928858024014E1, 2.18663306850790267539E0,
    -1.40256079171354495875E-1, -3.50424626827848203418E-2, -8.57456785154685413611E-4,
)
_NDTRI_Q1 = (
    1.00000000000000000000E0, 1.57799883256466749731E1, 4.53907635128879210584E1,
    4.13172038254672030440E1, 1.50425385692907503408E1, 2.50464946208309415979E0,
    -1.42182922854787788574E-1, -3.80806407691578277194E-2, -9.33259480895457427372E-4,
)
_NDTRI_P2 = (
    3.23774891776946035970E0, 6.91522889068984211695E0, 3.93881025292474443415E0,
    1.33303460815807542389E0, 2.01485389549179081538E-1, 1.23716634817820021358E-2,
    3.01581553508235416007E-4, 2.65806974686737550832E-6, 6.23974539184983293730E-9,
)
_NDTRI_Q2 = (
    1.00000000000000000000E0, 6.02427039364742014255E0, 3.67983563856160859403E0,
    1.37702099489081330271E0, 2.16236993594496635890E-1, 1.34204006088543189037E-2,
    3.28014464682127739104E-4, 2.89247864745380683936E-6, 6.79019408009981274425E-9,
)
_AIRY_AN = (
    3.46538101525629032477e-01, 1.20075952739645805542e+01, 7.62796053615234516538e+01,
    1.68089224934630576269e+02, 1.59756391350164413639e+02, 7.05360906840444183113e+01,
    1.40264691163389668864e+01, 9.99999999999999995305e-01,
)
_AIRY_AD = (
    5.67594532638770212846e-01, 1.47562562584847203173e+01, 8.45138970141474626562e+01,
    1.77318088145400459522e+02, 1.64234692871529701831e+02, 7.14778400825575695274e+01,
    1.40959135607834029598e+01, 1.00000000000000000470e+00,
)
_AIRY_AFN = (
    -1.31696323418331795333e-01, -6.26456544431912369773e-01,
    -6.93158036036933542233e-01, -2.79779981545119124951e-01,
    -4.91900132609500318020e-02, -4.06265923594885404393e-03,
    -1.59276496239262096340e-04, -2.77649108155232920844e-06,
    -1.67787698489114633780e-08,
)
_AIRY_AFD = (
    1.33560420706553243746e+01, 3.26825032795224613948e+01, 2.67367040941499554804e+01,
    9.18707402907259625840e+00, 1.47529146771666414581e+00, 1.15687173795188044134e-01,
    4.40291641615211203805e-03, 7.54720348287414296618e-05, 4.51850092970580378464e-07,
)
_AIRY_AGN = (
    1.97339932091685679179e-02, 3.91103029615688277255e-01, 1.06579897599595591108e+00,
    9.39169229816650230044e-01, 3.51465656105547619242e-01, 6.33888919628925490927e-02,
    5.85804113048388458567e-03, 2.82851600836737019778e-04, 6.98793669997260967291e-06,
    8.11789239554389293311e-08, 3.41551784765923618484e-10,
)
_AIRY_AGD = (
    9.30892908077441974853e+00, 1.98352928718312140417e+01, 1.55646628932864612953e+01,
    5.47686069422975497931e+00, 9.54293611618961883998e-01, 8.64580826352392193095e-02,
    4.12656523824222607191e-03, 1.01259085116509135510e-04, 1.17166733214413521882e-06,
    4.91834570062930015649e-09,
)
_ERF_A = (
    1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
    3.77485237685302021e02, 3.20937758913846947e03,
)
_ERF_B = (
    1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
    2.84423683343917062e03,
)
_ERFC_C = (
    2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
    6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
    1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03,
)
_ERFC_D = (
    1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
    1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
    3.43936767414372164e03, 1.23033935480374942e03,
)
_ERFC_P = (
    1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
    1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4,
)
_ERFC_Q = (
    1.0, 2.56852019228982242e00, 1.87295284992346047e00, 5.27905102951428412e-1,
    6.05183413124413191e-2, 2.33520497626869185e-3,
)
