"""PyTorch's special functions that mlxir has no importer for, as mlxir's own
decompositions in torch ops (`MLXIR_DECOMPOSITIONS` in `node_decompositions.py`): here
`ndtri`, polygamma of order 1 and up, the Hurwitz `zeta`, `erfcx` and `log_ndtr`,
`frexp` and `nextafter`, and the steps all of them share; the Bessel functions,
`i0`/`i0e`/`i1`/`i1e`, `spherical_bessel_j0` and `airy_ai` in `bessel_functions.py`,
the Chebyshev polynomials T, U, V, W (plain and shifted) in `chebyshev_polynomials.py`.

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
decomposition computes the same value another way, with a fixed number of steps (the
Chebyshev polynomials' degree: `chebyshev_polynomials.py`):

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
from typing import Any, cast

import torch
from torch._ops import OpOverload

Value = Any  # a tensor, or a Python float before the first step touches one


def horner(x: torch.Tensor, coefficients: Sequence[float]) -> torch.Tensor:
    """The polynomial with `coefficients` (highest degree first) at `x`."""
    result: Value = coefficients[0]
    for c in coefficients[1:]:
        result = result * x + c
    return result


def chbevl(x: torch.Tensor, coefficients: Sequence[float]) -> torch.Tensor:
    """Cephes' `chbevl`: the Chebyshev series with `coefficients` (highest order first,
    the constant term doubled) at `x`, by Clenshaw's recurrence."""
    b0: Value = coefficients[0]
    b1: Value = 0.0
    b2: Value = 0.0
    for c in coefficients[1:]:
        b2, b1 = b1, b0
        b0 = x * b1 - b2 + c
    return 0.5 * (b0 - b2)


def computed_in_float(fn: Callable[..., torch.Tensor]) -> Callable[..., torch.Tensor]:
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


EXP_FINITE_UP_TO = {torch.float32: 88.72283172607422, torch.float64: 709.782712893384}
"""The largest argument whose exp torch rounds to a finite number, per dtype."""


# --- the inverse of the normal distribution's CDF -------------------------------------

_EXP_MINUS_2 = 0.13533528323661269189
_SQRT_2PI = 2.50662827463100050242


def _ndtri(y0: torch.Tensor) -> torch.Tensor:
    upper = y0 > 1.0 - _EXP_MINUS_2
    y = torch.where(upper, 1.0 - y0, y0)
    # |y - 1/2| <= 3/8: a rational function of (y - 1/2)^2
    c = y - 0.5
    c2 = c * c
    central = (c + c * (c2 * horner(c2, _NDTRI_P0) / horner(c2, _NDTRI_Q0))) * _SQRT_2PI
    # the tails: in z = 1/x, x = sqrt(-2 log y), one rational function for x < 8, one beyond
    x = torch.sqrt(-2.0 * torch.log(y))
    x0 = x - torch.log(x) / x
    z = 1.0 / x
    near = z * horner(z, _NDTRI_P1) / horner(z, _NDTRI_Q1)
    far = z * horner(z, _NDTRI_P2) / horner(z, _NDTRI_Q2)
    tail = x0 - torch.where(x < 8.0, near, far)
    value = torch.where(y > _EXP_MINUS_2, central, torch.where(upper, tail, -tail))
    value = torch.where((y0 < 0.0) | (y0 > 1.0), math.nan, value)
    return torch.where(y0 == 0.0, -math.inf, torch.where(y0 == 1.0, math.inf, value))


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
    x, q = cast(tuple[torch.Tensor, torch.Tensor], torch.broadcast_tensors(x, q))  # pyright: ignore[reportUnknownMemberType] (torch.functional's broadcast_tensors is unannotated)
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
        derivative = horner(cot, p[::-1])
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
        return computed_in_float(_trigamma)(x)
    if n >= 2:
        factor = (-1.0) ** (n + 1) * math.factorial(n)

        def scaled_zeta(v: torch.Tensor) -> torch.Tensor:
            return factor * _zeta(torch.full_like(v, n + 1.0), v, order=n + 1)

        return computed_in_float(scaled_zeta)(x)
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
    small = _exp_exact(z) * (1.0 - a * horner(z, _ERF_A) / horner(z, _ERF_B))
    # to 4: erfcx itself, rational in a
    middle = horner(a, _ERFC_C) / horner(a, _ERFC_D)
    # beyond: (1/sqrt(pi) - w R(w)) / a, w = 1/a^2 (0 once a^2 overflows: 1/(sqrt(pi) a))
    w = 1.0 / z
    large = (_ONE_OVER_SQRT_PI - w * horner(w, _ERFC_P) / horner(w, _ERFC_Q)) / a
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
    v, w = cast(tuple[torch.Tensor, torch.Tensor], torch.broadcast_tensors(x.to(wide), other.to(wide)))  # pyright: ignore[reportUnknownMemberType] (torch.functional's broadcast_tensors is unannotated)
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


_A = torch.ops.aten


def _special_polygamma(n: int, x: torch.Tensor) -> torch.Tensor:
    # `special.polygamma`, which torch's own decomposition makes a `polygamma` that is
    # not decomposed again: the orders above, ψ itself for 0, and a refused
    # `polygamma` for an order mlxir does not decompose
    if n == 0:
        return _A.digamma.default(x)
    decomposed = polygamma(n, x)
    return _A.polygamma.default(n, x) if decomposed is None else decomposed


SPECIAL_FUNCTIONS: dict[OpOverload, Callable[..., Any]] = {
    _A.special_ndtri.default: computed_in_float(_ndtri),
    _A.special_zeta.default: computed_in_float(_zeta),
    _A.special_zeta.other_scalar: computed_in_float(_zeta),
    _A.special_zeta.self_scalar: computed_in_float(_zeta),
    _A.special_polygamma.default: _special_polygamma,
    _A.special_erfcx.default: computed_in_float(_erfcx),
    _A.special_log_ndtr.default: computed_in_float(_log_ndtr),
    _A.frexp.Tensor: _frexp,
    _A.nextafter.default: _nextafter,
}
"""mlxir's decompositions of torch's special functions, by the op torch.export records
(the Bessel functions' and Chebyshev polynomials': `BESSEL_FUNCTIONS`,
`CHEBYSHEV_POLYNOMIALS`)."""


# --- coefficients: PyTorch's kernels' (Cephes'), highest degree or order first ---------

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
