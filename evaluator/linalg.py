"""Linear algebra: products (float, integer, quantized), dequantization, convolution,
MLX's LAPACK decompositions and FFTs."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import mlx.core as mx

from mlxir.evaluator.registry import (
    KERNELS,
    Kernel,
    KernelFactory,
    Props,
    ResultDtypes,
    cast_to,
    flag_of,
    float_of,
    in_bounds,
    int_of,
    ints_of,
    is_float,
    kernel,
    result_dtype,
    scalar_of,
)


def _exact_matmul(a: mx.array, b: mx.array) -> mx.array:
    """Integer (or bool) matmul, exact, wrapping like the type: MLX's matmul is
    floating-point only. Materialises `[..., M, K, N]`: integer matmuls are small."""
    return mx.sum(mx.expand_dims(a, -1) * mx.expand_dims(b, -3), axis=-2)


@kernel("mlx.matmul")
def _matmul(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    dtype = result_dtype(result_dtypes)
    if is_float(dtype):
        return lambda operands: (mx.matmul(operands[0], operands[1]),)
    cast_result = cast_to(dtype)
    return lambda operands: (cast_result(_exact_matmul(operands[0], operands[1])),)


@kernel("mlx.addmm")
def _addmm(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`beta * c + alpha * (a @ b)`; with `beta` 0, `c` is ignored (NaN in it does not
    propagate), in MLX as in PyTorch."""
    alpha, beta = float_of(props, "alpha", 1.0), float_of(props, "beta", 1.0)
    dtype = result_dtype(result_dtypes)
    if is_float(dtype):  # mx.addmm already skips c when beta is 0
        return lambda operands: (
            mx.addmm(operands[0], operands[1], operands[2], alpha=alpha, beta=beta),
        )
    cast_result = cast_to(dtype)
    alpha_s, beta_s = scalar_of(alpha, dtype), scalar_of(beta, dtype)

    def integer(operands: Sequence[Any]) -> Sequence[Any]:
        product = cast_result(_exact_matmul(operands[1], operands[2]))
        if alpha != 1.0:
            product = product * alpha_s
        if beta == 0.0:
            return (product,)
        c = operands[0] if beta == 1.0 else operands[0] * beta_s
        return (cast_result(c + product),)

    return integer



def quantized_matmul_options(props: Props) -> dict[str, Any]:
    """`mx.quantized_matmul`'s keyword arguments, read from the op's properties."""
    return {
        "transpose": flag_of(props, "transpose"),
        "group_size": int_of(props, "group_size"),
        "bits": int_of(props, "bits"),
        "mode": str(props["mode"]),
    }


def activation_bits_of(props: Props) -> int | None:
    """`mlx.quantized_matmul`'s `activation_bits` (8 or 16), None for the exact product."""
    return int_of(props, "activation_bits") if "activation_bits" in props else None


def quantized_activations(x: mx.array, group_size: int, activation_bits: int) -> mx.array:
    """`x` as `activation_bits` makes it (`mlx.quantized_matmul`): in float32, each group
    of `group_size` along the last axis quantized symmetrically to integers of that
    width, `q = clip(round(x / s), -L, L)` with `s = max|group| / L`, `L = 2^(b-1) - 1`
    (MLX's `round` is half to even, as the SIMD conversions are; `q = 0` where `s = 0`),
    then `q * s`. The native kernel (`native/kernels/quantized.cpp`) computes the same
    `q` and `s` with the same float32 operations, so both see the same `x'`."""
    limit = (1 << (activation_bits - 1)) - 1
    shape = x.shape
    groups = x.astype(mx.float32).reshape(*shape[:-1], shape[-1] // group_size, group_size)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
    scale = mx.max(mx.abs(groups), axis=-1, keepdims=True) / limit
    # x / 0 is NaN (0 / 0) or inf: such a group is all zeros, and so is its q.
    q = mx.clip(mx.round(mx.where(scale > 0, groups / scale, 0)), -limit, limit)
    return (q * scale).reshape(shape)  # pyright: ignore[reportUnknownMemberType] (as above)


@kernel("mlx.quantized_matmul")
def _quantized_matmul(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mx.quantized_matmul`: `x @ dequantize(w).T` with `transpose`, else
    `x @ dequantize(w)`; `biases` (affine mode) is present iff there are 4 operands.
    With `activation_bits`, the product of `quantized_activations(x)` (float32), in
    `x`'s dtype."""
    options = quantized_matmul_options(props)
    activation_bits = activation_bits_of(props)
    quantized_matmul = mx.quantized_matmul

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        biases = operands[3] if len(operands) > 3 else None
        return (quantized_matmul(operands[0], operands[1], operands[2], biases, **options),)

    if activation_bits is None:
        return run
    group_size = options["group_size"]

    def approximate(operands: Sequence[Any]) -> Sequence[Any]:
        x = operands[0]
        biases = operands[3] if len(operands) > 3 else None
        x_q = quantized_activations(x, group_size, activation_bits)
        product = quantized_matmul(x_q, operands[1], operands[2], biases, **options)
        return (product if product.dtype == x.dtype else product.astype(x.dtype),)

    return approximate


def dequantizer(props: Props, result_dtypes: ResultDtypes) -> Callable[..., mx.array]:
    """`mx.dequantize(w, scales, biases)` of a `[rows, packed]` matrix, with the
    properties read once. `dtype` is the IR's result type: MLX infers it from the
    scales in affine mode (the verifier makes the two agree) and defaults to bfloat16
    in the microscaling modes, whose scales are `uint8`. MLX fails on an empty matrix
    (it cannot reshape one), so zero rows give zeros of the unpacked shape."""
    bits, dtype = int_of(props, "bits"), result_dtypes[0]
    options: dict[str, Any] = {
        "group_size": int_of(props, "group_size"),
        "bits": bits,
        "mode": str(props["mode"]),
        "dtype": dtype,
    }
    dequantize = mx.dequantize

    def run(w: mx.array, scales: mx.array, biases: mx.array | None) -> mx.array:
        if w.size == 0:
            return mx.zeros((w.shape[0], w.shape[1] * 32 // bits), dtype)
        return dequantize(w, scales, biases, **options)

    return run


@kernel("mlx.dequantize")
def _dequantize(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mx.dequantize(w, scales, biases, ...)`; `biases` (affine mode) is present iff
    there are 3 operands."""
    dequantize = dequantizer(props, result_dtypes)

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        biases = operands[2] if len(operands) > 2 else None
        return (dequantize(operands[0], operands[1], biases),)

    return run


@kernel("mlx.quantized_take")
def _quantized_take(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """Rows `indices` of `w`, `scales` (and `biases`, present iff there are 4 operands),
    dequantized: mlx-lm's `QuantizedEmbedding`. The indices are flattened (MLX
    dequantizes nothing of rank < 2, so a 0-d index needs it) and clamped into bounds,
    as `mlx.take`'s are; the result is reshaped to `[*indices.shape, unpacked]`."""
    dequantize = dequantizer(props, result_dtypes)
    take = mx.take

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        w, scales, indices = operands[0], operands[1], operands[-1]
        rows = in_bounds(indices.reshape(-1), w.shape[0])
        biases = take(operands[2], rows, axis=0) if len(operands) > 3 else None
        table = dequantize(take(w, rows, axis=0), take(scales, rows, axis=0), biases)
        return (table.reshape(*indices.shape, table.shape[1]),)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)

    return run


@kernel("mlx.conv_general")
def _conv_general(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mx.conv_general`, channels last: input `[N, *spatial, C]`, weight `[O, *k, C/g]`."""
    options: dict[str, Any] = {
        "stride": list(ints_of(props, "stride")),
        "padding": (list(ints_of(props, "padding_lo")), list(ints_of(props, "padding_hi"))),
        "kernel_dilation": list(ints_of(props, "kernel_dilation")),
        "input_dilation": list(ints_of(props, "input_dilation")),
        "groups": int_of(props, "groups"),
        "flip": flag_of(props, "flip"),
    }
    return lambda operands: (mx.conv_general(operands[0], operands[1], **options),)


Activation = Callable[[mx.array], mx.array]


def activations(sigmoid: Activation = mx.sigmoid) -> dict[str, Activation]:
    """`conv_bias_activation`'s activations (`dialects/mlx.py`, `CONV_ACTIVATIONS`), as
    the ops they were fused from compute them: `relu` is `maximum(y, 0)`, `relu6`
    `minimum(maximum(y, 0), 6)`, `silu` `y * sigmoid(y)` (NaN stays NaN, as in
    PyTorch). A device passes its own `sigmoid` (the CPU's polynomial one)."""
    return {
        "none": lambda y: y,
        "relu": lambda y: mx.maximum(y, 0.0),
        "relu6": lambda y: mx.minimum(mx.maximum(y, 0.0), 6.0),
        "silu": lambda y: y * sigmoid(y),
    }


ACTIVATIONS = activations()


@kernel("mlx.conv_bias_activation")
def _conv_bias_activation(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mx.conv_general`, `+ bias` (a third operand, `[O]`) when given, then the
    activation: the ops the CPU target fused, in their order, so the same bits."""
    conv = _conv_general(props, result_dtypes)
    activate = ACTIVATIONS[str(props["activation"])]

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        y = conv(operands[:2])[0]
        if len(operands) > 2:
            y = y + operands[2]
        return (activate(y),)

    return run



# MLX implements its linear algebra on the CPU only (LAPACK): these run on the CPU
# stream whatever the default device, as `mx.linalg` requires. Its inverse and solves
# of 0x0 matrices stop the process (SIGFPE, MLX 0.32): those are empty, and need no
# kernel.


def _unless_empty(fn: Callable[..., mx.array], *flags: str) -> KernelFactory:
    """`fn(*operands, flags..., stream=cpu)`, or, for 0x0 matrices, the last operand
    (the matrices, or the right-hand sides): empty, of the result's shape."""

    def factory(props: Props, result_dtypes: ResultDtypes) -> Kernel:
        options = {flag: flag_of(props, flag) for flag in flags}

        def run(operands: Sequence[mx.array]) -> tuple[mx.array]:
            if operands[0].shape[-1] == 0:
                return (operands[-1],)
            return (fn(*operands, **options, stream=mx.cpu),)

        return run

    return factory


KERNELS.update(
    {
        "mlx.linalg_inv": _unless_empty(mx.linalg.inv),
        "mlx.linalg_solve": _unless_empty(mx.linalg.solve),
        "mlx.linalg_solve_triangular": _unless_empty(mx.linalg.solve_triangular, "upper"),
        "mlx.linalg_cholesky_inv": _unless_empty(mx.linalg.cholesky_inv, "upper"),
        "mlx.linalg_cholesky": _unless_empty(mx.linalg.cholesky, "upper"),
    }
)


@kernel("mlx.fftn")
def _fftn(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """MLX's FFT over `axes`: `inverse` and `real` pick fftn, ifftn, rfftn or irfftn;
    irfftn's last signal size is `last_size`, its others the input's."""
    axes = list(ints_of(props, "axes"))
    inverse, real = flag_of(props, "inverse"), flag_of(props, "real")
    if real and inverse:
        last_size = int_of(props, "last_size")

        def irfftn(operands: Sequence[mx.array]) -> tuple[mx.array]:
            sizes = tuple(operands[0].shape[axis] for axis in axes[:-1])
            return (mx.fft.irfftn(operands[0], s=(*sizes, last_size), axes=axes),)

        return irfftn
    transform = mx.fft.rfftn if real else mx.fft.ifftn if inverse else mx.fft.fftn
    return lambda operands: (transform(operands[0], axes=axes),)


@kernel("mlx.linalg_det")
def _linalg_det(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (mx.linalg.det(operands[0], stream=mx.cpu),)


@kernel("mlx.linalg_slogdet")
def _linalg_slogdet(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: tuple(mx.linalg.slogdet(operands[0], stream=mx.cpu))


@kernel("mlx.linalg_qr")
def _linalg_qr(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: tuple(mx.linalg.qr(operands[0], stream=mx.cpu))


@kernel("mlx.linalg_lu_factor")
def _linalg_lu_factor(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """LU with partial pivoting; pivots cast from MLX's uint32. Matrices with no
    element stop the process in MLX (SIGFPE, 0.32): their factors are the (empty)
    input itself and pivots of the right shape, zeros where a batch is not empty."""
    pivots_dtype = result_dtype(result_dtypes[1:])

    def run(operands: Sequence[mx.array]) -> tuple[mx.array, mx.array]:
        a = operands[0]
        *batch, m, n = a.shape
        if a.size == 0:
            return a, mx.zeros((*batch, min(m, n)), dtype=pivots_dtype)
        lu, pivots = mx.linalg.lu_factor(a, stream=mx.cpu)
        return lu, pivots.astype(pivots_dtype)

    return run


@kernel("mlx.linalg_svd")
def _linalg_svd(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: tuple(mx.linalg.svd(operands[0], stream=mx.cpu))


@kernel("mlx.linalg_svdvals")
def _linalg_svdvals(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    return lambda operands: (mx.linalg.svd(operands[0], compute_uv=False, stream=mx.cpu),)


@kernel("mlx.linalg_eigh")
def _linalg_eigh(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    uplo = "U" if flag_of(props, "upper") else "L"
    return lambda operands: tuple(mx.linalg.eigh(operands[0], UPLO=uplo, stream=mx.cpu))


@kernel("mlx.linalg_eigvalsh")
def _linalg_eigvalsh(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    uplo = "U" if flag_of(props, "upper") else "L"
    return lambda operands: (mx.linalg.eigvalsh(operands[0], UPLO=uplo, stream=mx.cpu),)


