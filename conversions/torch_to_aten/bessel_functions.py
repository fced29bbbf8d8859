"""PyTorch's Bessel functions, which mlxir has no importer for, as mlxir's own
decompositions in torch ops (`MLXIR_DECOMPOSITIONS` in `node_decompositions.py`):
`i0`/`i0e`/`i1`/`i1e`, the modified Bessel functions of the first and second kind
(`k0`, `k1` and their scaled forms), the Bessel functions of the first and second kind
of orders 0 and 1, `spherical_bessel_j0`, and Airy's `airy_ai`.

Each is PyTorch's CPU kernel's approximation (Cephes'), in the fixed ranges that
kernel chooses, per element with `torch.where`: Chebyshev series (`chbevl`), rational
functions, Hankel's asymptotic form and, for Ai, a Maclaurin series of a fixed number
of terms. `special_functions.py` says how the decompositions follow torch's kernels
(dtypes, special values) and holds the steps they share.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import torch
from torch._ops import OpOverload

from mlxir.conversions.torch_to_aten.special_functions import (
    EXP_FINITE_UP_TO,
    Value,
    chbevl,
    computed_in_float,
    horner,
)

# --- modified Bessel functions of the first kind: Chebyshev series on [0, 8] and in
# 32/x - 2 beyond, of exp(-x) I(x) (times sqrt(x) beyond) -----------------------------


def _i0e_series(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """exp(-a) I0(a) for a <= 8, and exp(-a) sqrt(a) I0(a) beyond."""
    return chbevl(a / 2.0 - 2.0, _I0E), chbevl(32.0 / a - 2.0, _I0E_B)


def _i1e_series(a: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """exp(-a) I1(a) / a for a <= 8, and exp(-a) sqrt(a) I1(a) beyond."""
    return chbevl(a / 2.0 - 2.0, _I1E), chbevl(32.0 / a - 2.0, _I1E_B)


def _exp_times(a: torch.Tensor, factor: torch.Tensor) -> torch.Tensor:
    """exp(a) * factor for a > 8 where factor < 1, as torch's kernel gives it: inf
    (NaN at a = inf) once exp(a) overflows in a's dtype, and finite before. MLX's exp
    of float32 overflows from about 88.2, short of the dtype's limit, so exp(a/2) twice."""
    half = torch.exp(a * 0.5)
    value = half * factor * half
    overflows = (a > EXP_FINITE_UP_TO[a.dtype]) & (a < math.inf)
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
        near = chbevl(x * x - 2.0, _K0_A) - torch.log(0.5 * x) * _i0(x)
        far = chbevl(8.0 / x - 2.0, _K0_B)
    else:
        near = torch.log(0.5 * x) * _i1(x) + chbevl(x * x - 2.0, _K1_A) / x
        far = chbevl(8.0 / x - 2.0, _K1_B)
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
    p = horner(w, _J0_PP if order == 0 else _J1_PP) / horner(w, _J0_PQ if order == 0 else _J1_PQ)
    q = horner(w, _J0_QP if order == 0 else _J1_QP) / horner(w, _J0_QQ if order == 0 else _J1_QQ)
    t = a - (_QUARTER_PI if order == 0 else _THREE_QUARTERS_PI)
    if second_kind:
        value = p * torch.sin(t) + 5.0 / a * q * torch.cos(t)
    else:
        value = p * torch.cos(t) - 5.0 / a * q * torch.sin(t)
    return value * _SQRT_TWO_OVER_PI / torch.sqrt(a)


def _j0(x: torch.Tensor) -> torch.Tensor:
    a = x.abs()
    z = a * a
    rational = (z - 5.78318596294678452118) * (z - 30.4712623436620863991) * horner(z, _J0_RP) / horner(z, _J0_RQ)
    near = torch.where(a < 1e-5, 1.0 - z / 4.0, rational)
    return torch.where(a <= 5.0, near, _hankel(a, 0, second_kind=False))


def _j1(x: torch.Tensor) -> torch.Tensor:
    # odd: the rational form is odd in x itself (so -0 stays -0), the far form mirrored
    z = x * x
    near = horner(z, _J1_RP) / horner(z, _J1_RQ) * x * (z - 14.6819706421238932572) * (z - 49.2184563216946036703)
    a = x.abs()
    return torch.where(a <= 5.0, near, _odd(x, _hankel(a, 1, second_kind=False)))


def _y0(x: torch.Tensor) -> torch.Tensor:
    z = x * x
    near = horner(z, _Y0_YP) / horner(z, _Y0_YQ) + _TWO_OVER_PI * torch.log(x) * _j0(x)
    near = torch.where(x == 0.0, -math.inf, torch.where(x < 0.0, math.nan, near))
    return torch.where(x <= 5.0, near, _hankel(x, 0, second_kind=True))


def _y1(x: torch.Tensor) -> torch.Tensor:
    z = x * x
    near = x * (horner(z, _Y1_YP) / horner(z, _Y1_YQ)) + _TWO_OVER_PI * (_j1(x) * torch.log(x) - 1.0 / x)
    near = torch.where(x == 0.0, -math.inf, torch.where(x < 0.0, math.nan, near))
    return torch.where(x <= 5.0, near, _hankel(x, 1, second_kind=True))


def _spherical_j0(x: torch.Tensor) -> torch.Tensor:
    # sin(x)/x, its Taylor series below |x| = 1/2; 0 at +-inf
    series = horner(x * x, _SPHERICAL_J0_SERIES)
    value = torch.where(x.abs() < 0.5, series, torch.sin(x) / x)
    return torch.where(torch.isinf(x), 0.0, value)


_SPHERICAL_J0_SERIES = tuple(
    (-1.0) ** k / math.factorial(2 * k + 1) for k in reversed(range(7))
)


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
    f = 1.0 + zz * horner(zz, _AIRY_AFN) / horner(zz, _AIRY_AFD)
    g = z * horner(zz, _AIRY_AGN) / horner(zz, _AIRY_AGD)
    t = zeta + 0.25 * math.pi
    negative = 5.64189583547756286948e-01 / torch.sqrt(root) * (torch.sin(t) * f - torch.cos(t) * g)
    # x >= 2.09: decaying, rational in 1 / zeta, zeta = 2/3 x^(3/2)
    zeta = 2.0 * x * torch.sqrt(x) / 3.0
    w = 1.0 / zeta
    decaying = 5.64189583547756286948e-01 * (horner(w, _AIRY_AN) / horner(w, _AIRY_AD))
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


_A = torch.ops.aten


BESSEL_FUNCTIONS: dict[OpOverload, Callable[..., Any]] = {
    _A.i0.default: computed_in_float(_i0),
    _A.special_i0e.default: computed_in_float(_i0e),
    _A.special_i1.default: computed_in_float(_i1),
    _A.special_i1e.default: computed_in_float(_i1e),
    _A.special_modified_bessel_i0.default: computed_in_float(_i0),
    _A.special_modified_bessel_i1.default: computed_in_float(_i1),
    _A.special_modified_bessel_k0.default: computed_in_float(_k0),
    _A.special_modified_bessel_k1.default: computed_in_float(_k1),
    _A.special_scaled_modified_bessel_k0.default: computed_in_float(_k0e),
    _A.special_scaled_modified_bessel_k1.default: computed_in_float(_k1e),
    _A.special_bessel_j0.default: computed_in_float(_j0),
    _A.special_bessel_j1.default: computed_in_float(_j1),
    _A.special_bessel_y0.default: computed_in_float(_y0),
    _A.special_bessel_y1.default: computed_in_float(_y1),
    _A.special_spherical_bessel_j0.default: computed_in_float(_spherical_j0),
    _A.special_airy_ai.default: computed_in_float(_airy_ai),
}
"""mlxir's decompositions of torch's Bessel functions and Airy's Ai, by the op torch.export
records."""


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
