"""The native float matvec (`native/kernels/matvec.cpp`): `x @ w.T` for up to 16 rows
of x, against float64 and MLX's own product, over ragged shapes, strided and
transposed operands, every dtype, every instruction-set path this CPU runs, and 1
and 2 threads (the same bits whatever the thread count)."""

from __future__ import annotations

import mlx.core as mx
import numpy as np
import pytest
from native_support import bits_equal, float64, host_isas, isa, kernels, relative_error, threads

DTYPES = [mx.float32, mx.float16, mx.bfloat16]
SHAPES = [(1, 1, 1), (1, 7, 15), (1, 9, 16), (2, 8, 17), (3, 65, 1000), (1, 777, 4099), (16, 33, 64), (5, 300, 257)]


@pytest.mark.parametrize("path", host_isas())
@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize(("rows", "outputs", "depth"), SHAPES)
def test_matvec_matches_float64_and_mlx(path: str, dtype: mx.Dtype, rows: int, outputs: int, depth: int) -> None:
    module = kernels()
    key = mx.random.key(rows * 1000 + outputs + depth)
    kx, kw = mx.random.split(key)
    x = mx.random.normal((rows, depth), key=kx).astype(dtype)
    w = mx.random.normal((outputs, depth), key=kw).astype(dtype)
    reference = float64(x) @ float64(w).T
    with isa(path):
        one = module.matvec(x, w)
        mx.eval(one)
        with threads(2):
            two = module.matvec(x, w)
            mx.eval(two)
    assert bits_equal(one, two), "the result depends on the thread count"
    mlx_error = relative_error(x @ w.T, reference)
    error = relative_error(one, reference)
    limit = 1e-5 if dtype == mx.float32 else 1.25 * mlx_error + 1e-6
    assert error <= limit, f"{error:.3g} against float64 (MLX's own: {mlx_error:.3g})"


@pytest.mark.parametrize("path", host_isas())
def test_matvec_reads_strided_and_transposed_operands(path: str) -> None:
    module = kernels()
    x_wide = mx.random.normal((4, 130), key=mx.random.key(1))
    w_t = mx.random.normal((129, 70), key=mx.random.key(2))
    x = x_wide[::2, 1:130]  # every other row, shifted: neither contiguous nor aligned
    w = w_t.T  # [70, 129], a transposed view
    with isa(path):
        result = module.matvec(x, w)
    np.testing.assert_allclose(float64(result), float64(x) @ float64(w).T, rtol=1e-5, atol=1e-5)
    broadcast_x = mx.broadcast_to(mx.arange(129, dtype=mx.float32)[None], (3, 129))
    with isa(path):
        result = module.matvec(broadcast_x, w)
    np.testing.assert_allclose(float64(result), float64(broadcast_x) @ float64(w).T, rtol=1e-5, atol=1e-4)


def test_matvec_keeps_leading_dimensions_and_traces_in_compile() -> None:
    module = kernels()
    x = mx.random.normal((2, 3, 48), key=mx.random.key(3))
    w = mx.random.normal((10, 48), key=mx.random.key(4))
    compiled = mx.compile(lambda a: module.matvec(a, w) * 2)
    result = compiled(x)
    assert result.shape == (2, 3, 10)
    np.testing.assert_allclose(float64(result), 2 * (float64(x) @ float64(w).T), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize(
    ("x_shape", "w_shape", "dtypes", "message"),
    [
        ((1, 8), (4, 9), (mx.float32, mx.float32), "w must be"),
        ((1, 8), (4, 8), (mx.float32, mx.float16), "share one dtype"),
        ((17, 8), (4, 8), (mx.float32, mx.float32), "between 1 and 16 rows"),
        ((1, 8), (4, 8), (mx.int32, mx.int32), "share one dtype"),
    ],
)
def test_matvec_refuses_what_it_cannot_compute(
    x_shape: tuple[int, ...], w_shape: tuple[int, ...], dtypes: tuple[mx.Dtype, mx.Dtype], message: str
) -> None:
    module = kernels()
    with pytest.raises(ValueError, match=message):
        module.matvec(mx.zeros(x_shape, dtype=dtypes[0]), mx.zeros(w_shape, dtype=dtypes[1]))
