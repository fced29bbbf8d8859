"""Products as the CPU computes them best: the native kernels where they run
(`native/kernels/`, `runtime/cpu/native.py`), else the thresholds, measured on this kind
of machine, at which MLX's CPU kernels and the BLAS behind them are faster another way,
and the kernels that take that way. Every choice here gives the same values as the
generic kernel (`evaluator/linalg.py`) within float32 rounding, and the fallbacks the
same bits where the blocks cut the outputs only (each output is the same dot product).

- A quantized product by a transposed 2-D affine weight (2, 3, 4, 6 or 8 bits, groups
  of 32, 64 or 128) runs the native `quantized_matmul` at any number of rows
  (`NATIVE_QUANTIZED_BITS`: measured faster than every other way below). Otherwise, a
  product of many rows runs as the float product with the dequantized weight
  (`CPU_DEQUANTIZED_ROWS`); of a few rows, as blocks of the weight's rows on the CPU
  streams (MLX's quantized CPU kernel uses one thread).
- A product of a few rows by a `linear` weight's `w.T` runs the native `matvec` on
  `w` itself (`native_matvec_pays`: float16 and bfloat16, and float32 weights too
  large for OpenBLAS's small kernels); those float32 ones without it, as blocks of the
  weight's rows that fit OpenBLAS's small kernels, which do not pack the weight
  (`weight_blocked_product`, `docs/blas.md`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, cast

import mlx.core as mx

from mlxir.evaluator.linalg import (
    activation_bits_of,
    quantized_activations,
    quantized_matmul_options,
)
from mlxir.evaluator.registry import Kernel, KernelFactory, Props, ResultDtypes
from mlxir.runtime.backend import WEIGHT_PRODUCT_OPERAND
from mlxir.runtime.cpu import native
from mlxir.runtime.cpu.streams import cpu_streams

CPU_DEQUANTIZED_ROWS = 8
"""From this many rows of `x` on, MLX's CPU backend computes a quantized product faster
as the float product with the dequantized weight: its quantized kernel's time grows
with every row, a dequantization's does not (4 bits, groups of 64, one thread: at 8
rows the two tie on a 32000 x 256 LM head, 84 against 76 ms, and on a 1408 x 256
weight the dequantized product is 2.3 times faster, 3.4 against 1.5 ms; at 32 rows
7.6 times, 13.2 against 1.7 ms). A decode step (one row) keeps the quantized kernel."""


NATIVE_QUANTIZED_BITS = frozenset({2, 3, 4, 6, 8})
"""The code widths of MLX's affine format that the native `quantized_matmul` reads
(groups of `NATIVE_GROUP_SIZES`). Measured on this machine (Intel Xeon, AVX-512, 2
vCPUs shared with other work; 4 bits, groups of 64, float32, OpenBLAS; ms, medians of
21 calls, 5 for the 151936-row head, the systems alternating; `python
tests/test_native_quantized.py`): `mx.quantized_matmul`, this module's other ways
(blocks on the streams below 8 rows, the dequantized product from 8), and the native
kernel on 1 and 2 threads:

| K x N, rows of x | `mx.quantized_matmul` | other ways | native, 1 thread | 2 threads |
|---|---|---|---|---|
| 512 x 1408, 1 | 0.53 | 0.56 | 0.12 | 0.084 |
| 512 x 1408, 256 | - | 3.4 | 3.4 | 2.3 |
| 512 x 32000, 1 | 10.0 | 5.5 | 0.94 | 0.60 |
| 512 x 32000, 64 | - | 51 | 17.3 | 8.8 |
| 1024 x 3072, 1 | 2.2 | 1.34 | 0.29 | 0.15 |
| 1024 x 3072, 4 | 8.5 | 4.5 | 0.94 | 0.49 |
| 1024 x 3072, 256 | - | 17.4 | 15.5 | 8.6 |
| 1024 x 151936, 1 | 98 | 50 | 10.8 | 6.9 |

The other ways' products run on OpenBLAS's own 2 threads (and the blocks on 2
streams), so the fair column is the native one on 2 threads: it won at every shape
and row count measured (on one thread it tied only the 256-row product by 1408 x 512),
so every covered call takes it. Its error is one float32 rounding of the sum's terms
(under 7e-7 of the largest output against float64, where MLX's own reached 1.3e-6);
float16/bfloat16 are summed in float32 and rounded once (MLX's own reached 10 to 26
times that rounding on `tests/test_native_quantized.py`'s shapes)."""

NATIVE_GROUP_SIZES = frozenset({32, 64, 128})

NATIVE_INT8_ERROR = 1e-2
"""The most error of a product with `activation_bits 8` (`cpu-int8-activations`)
against float64 of the exact product, relative to its largest output, that the tests
accept. Measured: 7.2e-3 at one row by 3072 x 1024 and 6.4e-3 at 8 rows (4 bits,
groups of 64, x normal; `tests/test_native_quantized.py`), against under 1e-6 for the
exact kernel; a tiny Llama's first logits 8.9e-3 of the largest from the exact 4-bit
program's. Against float64 of the generic kernel's x' (the meaning), the native
product is within float32 rounding (5e-6 of the largest output).

Measured (one row of x, 4 bits, groups of 64, float32, ms, medians of 21, 5 for the
151936-row head, systems alternating; the machine's second vCPU busy with other work,
so 2 threads gained little; `python tests/test_native_quantized.py 21 1`), the error
against float64 of the exact product relative to the largest output:

| K x N | `mx.quantized_matmul` | native, 1 thread | 2 threads | int8 x, 1 thread | 2 threads | error native / int8 |
|---|---|---|---|---|---|---|
| 512 x 1408 | 0.47 | 0.047 | 0.045 | 0.042 | 0.039 | 5.7e-7 / 7.4e-3 |
| 512 x 32000 | 10.5 | 0.87 | 0.77 | 0.55 | 0.57 | 3.0e-7 / 5.6e-3 |
| 1024 x 3072 | 2.08 | 0.19 | 0.17 | 0.15 | 0.12 | 4.5e-7 / 5.5e-3 |
| 1024 x 151936 | 104 | 11.5 | 11.3 | 9.8 | 9.8 | 5.5e-7 / 6.2e-3 |

The integer dots save the decoding's float work, not the reading: with cold weights
(`benchmarks/native_kernels.py --only quantized`, 1 thread) int8 x reached 1.06x the time of
reading the weight at 10.7 GB/s by 32000 x 512 (1.02 against 1.47 ms exact), 1.22x by
3072 x 1024."""

_FLOATS = (mx.float32, mx.float16, mx.bfloat16)


def _native_quantized_product(
    x: mx.array,
    w: mx.array,
    scales: mx.array,
    biases: mx.array | None,
    group_size: int,
    bits: int,
    activation_bits: int | None = None,
) -> mx.array | None:
    """`x @ dequantize(w).T` by the native kernel where it covers the call (this call
    may use the native kernels, a 2-D weight, float operands, a non-empty product),
    else None; with `activation_bits`, the approximate product of x quantized first
    (`mlx.quantized_matmul`)."""
    module = native.kernels()
    if (
        module is None
        # A library built from sources older than this family (a stale in-place build).
        or not hasattr(module, "quantized_matmul")
        or (activation_bits is not None and not _has_activation_bits(module))
        or biases is None
        or w.ndim != 2
        or x.ndim < 1
        or x.size == 0
        or w.shape[0] == 0
        or x.dtype not in _FLOATS
        or scales.dtype not in _FLOATS
        or biases.dtype not in _FLOATS
    ):
        return None
    if activation_bits is None:
        return module.quantized_matmul(x, w, scales, biases, group_size=group_size, bits=bits)
    return module.quantized_matmul(
        x, w, scales, biases, group_size=group_size, bits=bits, activation_bits=activation_bits
    )


def _has_activation_bits(module: Any) -> bool:
    """Whether the native `quantized_matmul` takes `activation_bits` (a library built
    before them does not: its signature, in the docstring nanobind writes, lacks it)."""
    return "activation_bits" in (getattr(module.quantized_matmul, "__doc__", None) or "")


def _quantized_matmul(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    """`mlx.quantized_matmul` (`evaluator/linalg.py`) on the CPU: the native kernel for
    a transposed affine weight it reads (`NATIVE_QUANTIZED_BITS`, asked per call:
    `native.kernels()`). Otherwise, from `CPU_DEQUANTIZED_ROWS` rows of `x` on, the
    same product as `x @ mx.dequantize(w)` (a float GEMM: the same values, summed in
    BLAS's order). Below that, a transposed weight's rows (the outputs) are cut into
    blocks computed concurrently on the CPU streams (`runtime/cpu/streams.py`: MLX's
    quantized CPU kernel uses one thread), whose results are the same bits as one
    product's.

    With `activation_bits` (`cpu-int8-activations`), the native kernel's approximate
    product, else the generic composition: `quantized_activations(x)`, then the above
    on it, in `x`'s dtype."""
    options = quantized_matmul_options(props)
    activation_bits = activation_bits_of(props)
    transpose = options["transpose"]
    dequantized = {k: v for k, v in options.items() if k != "transpose"}
    bits, group_size = options["bits"], options["group_size"]
    lean = options["mode"] == "affine" and bits in (2, 4, 8)
    native_covers = (
        transpose and options["mode"] == "affine" and bits in NATIVE_QUANTIZED_BITS and group_size in NATIVE_GROUP_SIZES
    )
    quantized_matmul = mx.quantized_matmul

    def run(operands: Sequence[Any]) -> Sequence[Any]:
        x, w, scales = operands[0], operands[1], operands[2]
        biases = operands[3] if len(operands) > 3 else None
        if native_covers:
            product = _native_quantized_product(x, w, scales, biases, group_size, bits)
            if product is not None:
                return (product,)
        if x.size >= CPU_DEQUANTIZED_ROWS * x.shape[-1] > 0:
            if not (lean and biases is not None and w.ndim == 2):
                matrix = mx.dequantize(w, scales, biases, dtype=x.dtype, **dequantized)
                return (mx.matmul(x, matrix.T if transpose else matrix),)
            if not transpose:  # chunks of W's rows would split the sum: one piece
                return (mx.matmul(x, _affine_dequantize(w, scales, biases, bits, group_size, x.dtype)),)
            return (_dequantized_product(x, w, scales, biases, bits, group_size),)
        streams = cpu_streams() if transpose and w.ndim == 2 else ()
        blocks = _row_blocks(w.shape[0], w.shape[0] * w.shape[1] * 32 // bits, len(streams))
        if len(blocks) < 2:
            return (quantized_matmul(x, w, scales, biases, **options),)
        parts = [
            quantized_matmul(
                x, w[block], scales[block], None if biases is None else biases[block],
                stream=stream, **options,
            )
            for block, stream in zip(blocks, streams)
        ]
        return (mx.concatenate(parts, axis=-1),)

    if activation_bits is None:
        return run

    def approximate(operands: Sequence[Any]) -> Sequence[Any]:
        x, w, scales = operands[0], operands[1], operands[2]
        biases = operands[3] if len(operands) > 3 else None
        if native_covers:
            product = _native_quantized_product(x, w, scales, biases, group_size, bits, activation_bits)
            if product is not None:
                return (product,)
        x_q = quantized_activations(x, group_size, activation_bits)
        product = run([x_q, *operands[1:]])[0]
        return (product if product.dtype == x.dtype else product.astype(x.dtype),)

    return approximate


CPU_STREAM_OPS = frozenset({"mlx.quantized_matmul"})
"""The ops whose kernels may spread their work over the CPU streams (`_row_blocks`);
the float products by a weight that `weight_blocked_product` spreads are found by the
program at load."""

CPU_STREAM_MIN_ELEMENTS = 1 << 17
"""The fewest weight elements (unpacked) worth a CPU stream of their own: handing a
block to another stream and waiting for it cost about 50 us here (2 cores, 4 bits,
groups of 64, compiled, median of 300 timings: one row by 64 x 256 took 0.029 ms on
one stream, 0.078 as two halves), and MLX's one-thread quantized kernel reads about a
million elements a millisecond. In chains of 8 products, a 256 x 512 weight ran 4 %
slower split (1.22 against 1.17 ms), 512 x 512 16 % faster (1.72 against 2.04)."""


def _row_blocks(rows: int, elements: int, streams: int) -> list[slice]:
    """Rows of a weight cut into as many near-equal blocks as there are `streams`, and
    no more than give each `CPU_STREAM_MIN_ELEMENTS`; a single block means one op."""
    return _even_slices(rows, max(1, min(streams, rows, elements // CPU_STREAM_MIN_ELEMENTS)))


def _even_slices(total: int, count: int) -> list[slice]:
    """`range(total)` as `count` consecutive slices whose lengths differ by at most 1."""
    cuts = [total * k // count for k in range(count + 1)]
    return [slice(start, stop) for start, stop in zip(cuts, cuts[1:])]


CPU_SMALL_PRODUCT_OUTPUTS = 1200
"""The most outputs (rows x columns) of one block of `weight_blocked_product`.
OpenBLAS's SkylakeX/Cooperlake kernels (picked on AVX-512 machines, this one
included: 0.3.21, `openblas_get_corename()` says Cooperlake) compute a product
`x @ w.T` without packing its operands only when it has at most 1200 outputs, at
most 10^6 multiply-adds and a depth of at least 32 (`sgemm_small_kernel_permit`);
a bigger product packs the whole weight first, copying it once per call. One row by
a 32000 x 512 weight, one thread, median of 21: 12.2 ms as one product, 5.7 in
blocks of 1024 outputs; 3072 x 1024, 2.89 against 0.44 ms (`docs/blas.md`)."""

CPU_SMALL_PRODUCT_MACS = 10**6
"""The most multiply-adds (rows x columns x depth) of one block."""

CPU_SMALL_PRODUCT_MIN_DEPTH = 32
"""The shallowest product that OpenBLAS's small kernels take."""

CPU_BLOCKED_PRODUCT_ROWS = 8
"""From this many rows of `x` on, a product stays whole: the blocks shrink to 1200 /
rows outputs, so the gain shrinks with every row and then turns into a loss (by a
32000 x 512 weight, one thread, one stream, median of 11: 1 row 15.1 ms whole against
7.7 in blocks, 4 rows 14.5 against 10.0, 8 rows 15.1 against 13.4, 32 rows 24.1
against 32.8). Decode steps of up to 7 sequences are cut; prefills are not."""


CPU_SPREAD_PRODUCT_MACS = 1 << 19
"""Multiply-adds of a blocked product per CPU stream it spreads over: a smaller one runs
its blocks on one stream. Waking another stream's thread and waiting for its event
cost more than a small product saves: the small Llama's decode step (hidden 256, vocab
512), whose only blocked product is the 1408 x 256 gate/up projection, took 2.0 to 3.3
ms with its two blocks on two streams against 1.3 to 1.7 ms on one (medians of 32
steps, 3 per process, 2 processes each); its LM head at vocab 32000 (8.2 million
multiply-adds) was faster spread (3.7 to 5.6 ms against 4.8 to 6.7)."""


def _output_blocks(rows: int, columns: int, depth: int) -> list[slice]:
    """The product's output columns cut into the fewest near-equal blocks that each fit
    OpenBLAS's small kernels (`CPU_SMALL_PRODUCT_OUTPUTS`, `CPU_SMALL_PRODUCT_MACS`).
    It depends on the shape alone: the same outputs cut differently can differ in their
    last bits (BLAS's kernels accumulate in lanes), so the blocks must not follow the
    number of CPU streams."""
    per_block = max(1, min(CPU_SMALL_PRODUCT_OUTPUTS // rows, CPU_SMALL_PRODUCT_MACS // (rows * depth)))
    return _even_slices(columns, max(1, -(-columns // per_block)))


def is_cut_at_one_row(weight_t: mx.array) -> bool:
    """Whether `weight_blocked_product` cuts a product by `weight_t` (`w.T`) for one
    row of `x`, the most it ever cuts: a float32 matrix of depth at least
    `CPU_SMALL_PRODUCT_MIN_DEPTH` with more outputs than one block holds."""
    if weight_t.dtype != mx.float32 or weight_t.ndim != 2:
        return False
    depth, columns = weight_t.shape
    return depth >= CPU_SMALL_PRODUCT_MIN_DEPTH and len(_output_blocks(1, columns, depth)) > 1


_HALF_FLOATS = (mx.float16, mx.bfloat16)


def native_matvec_pays(weight_t: mx.array) -> bool:
    """Whether a product of a few rows by `weight_t` takes the native matvec, whatever
    BLAS is under MLX. A float16/bfloat16 weight: always (MLX multiplies them without
    a BLAS: one row by 3072 x 1024 in bfloat16, 0.66 against 3.28 ms at 1 thread, 0.42
    against 3.46 at 2; `benchmarks/native_kernels.py --only matvec`, medians of 11). A
    float32 one: where OpenBLAS would be cut into blocks (`is_cut_at_one_row`), not the
    smaller ones. On its own, MKL's one-row `sgemm` reads a weight 8-34 % faster than
    the native kernel (32000 x 512: 4.85 against 5.69 ms at 1 thread), but inside a
    decode step the native pool, awake between products, wins at 2 threads: the 56M
    Llama's float32 step took 8.5 ms with the native matvec against 13.4-13.8 with MKL
    under the blocks, and 9.2 with the native matvec for every weight, small ones
    included; 16.6, 16.1-16.4 and 17.2 at 1 thread (medians of 3 processes each)."""
    if weight_t.ndim != 2:
        return False
    return weight_t.dtype in _HALF_FLOATS or is_cut_at_one_row(weight_t)


def _native_matvec(x: mx.array, weight_t: mx.array) -> mx.array | None:
    """`x @ weight_t` by the native matvec on `weight_t.T` (the row-contiguous `w` the
    program transposed: no copy) where this call may use the native kernels, else None.
    Measured on this machine (float32, OpenBLAS, ms, medians of 21, alternating: one
    product, the blocks below on the streams, native on 1 thread): one row by 1408 x
    512, 0.21 / 0.18 / 0.14; by 3072 x 1024, 1.50 / 0.51 / 0.48; by 32000 x 512, 8.0 /
    2.8 / 2.7; 4 rows by 3072 x 1024, 2.1 / 0.96 / 0.87. The large weights' times are
    reading them (about 24 GB/s), so the blocks on OpenBLAS's small kernels come close;
    the native one does not need OpenBLAS (nor its Cooperlake kernels) to get there."""
    module = native.kernels()
    if module is None or not hasattr(module, "matvec") or weight_t.dtype != x.dtype:
        return None
    return module.matvec(x, weight_t.T)


def weight_blocked_product(op: str, run: Kernel) -> Kernel:
    """`run`, a product kernel of `op` whose weight operand is `w.T` for a
    row-contiguous constant `w` (the program checks this at load), computed on the
    CPU for fewer than `CPU_BLOCKED_PRODUCT_ROWS` rows of `x` (a decode step) by the
    native matvec on `w` where it runs and pays (`_native_matvec`,
    `native_matvec_pays`), else, for float32, as blocks of `w`'s rows
    (`_output_blocks`) that `is_cut_at_one_row` cuts, spread over the CPU streams and concatenated:
    MLX's CPU matmul always calls BLAS's `sgemm`, which packs a large weight before it
    multiplies (`CPU_SMALL_PRODUCT_OUTPUTS`). Each block is a view
    of `w` (a slice of `w`'s rows is still a row-contiguous matrix, so MLX passes it
    to BLAS as a transposed operand, without a copy), and each output is the same
    dot product whichever stream runs its block (each stream takes a run of
    consecutive blocks). Anything else runs `run` whole."""
    at = WEIGHT_PRODUCT_OPERAND[op]
    # Per row count, the weight it was cut from and its blocks: evaluated views of its
    # memory, so that a call (or a compiled trace) reads them as constants instead of
    # slicing the weight again (a graph node per block and call).
    cut: dict[int, tuple[mx.array, list[mx.array]]] = {}
    uncut: tuple[None, list[mx.array]] = (None, [])  # its list is never returned: a weight is not None

    def pieces(weight: mx.array, rows: int, blocks: list[slice]) -> list[mx.array]:
        cut_from, views = cut.get(rows, uncut)
        if cut_from is not weight:
            views = [weight[:, block] for block in blocks]
            mx.eval(views)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
            cut[rows] = (weight, views)
        return views

    def blocked(operands: Sequence[Any]) -> Sequence[Any]:
        x, weight = operands[at - 1], operands[at]
        depth = x.shape[-1] if x.ndim else 0
        if (
            x.dtype not in _FLOATS
            or weight.ndim != 2
            or depth < CPU_SMALL_PRODUCT_MIN_DEPTH
            or not 0 < x.size // depth < CPU_BLOCKED_PRODUCT_ROWS
        ):
            return run(operands)
        product = _native_matvec(x, weight) if native_matvec_pays(weight) else None
        if product is None and (x.dtype != mx.float32 or not is_cut_at_one_row(weight)):
            return run(operands)
        if product is not None:
            if at == 1:
                return (product,)
            # addmm's `beta * c + alpha * product` by `run` itself, whose alpha and beta
            # this function never sees: a product of depth 1 by a 1 x 1 one.
            bias = operands[0]
            one = mx.ones((1, 1), dtype=product.dtype)
            return (run([bias[..., None], product[..., None], one])[0][..., 0],)
        rows, columns = x.size // depth, weight.shape[1]
        blocks = _output_blocks(rows, columns, depth)
        if len(blocks) < 2:
            return run(operands)
        spread = max(1, rows * columns * depth // CPU_SPREAD_PRODUCT_MACS)
        streams = cpu_streams()[: min(len(blocks), spread)] or (mx.default_stream(mx.cpu),)
        bias = operands[0]  # addmm's c (unused for matmul)
        cut_bias = at == 2 and bias.ndim > 0 and bias.shape[-1] == columns > 1
        # Rows as one matrix: one reshape in and out, where MLX would flatten and
        # unflatten around each block's product (the same products).
        flat = x if x.ndim == 2 or (cut_bias and bias.ndim > 1) else x.reshape(rows, depth)
        parts: list[mx.array] = []
        for index, (block, piece) in enumerate(zip(blocks, pieces(weight, rows, blocks))):
            sliced = list(operands)
            sliced[at - 1], sliced[at] = flat, piece
            if cut_bias:
                sliced[0] = bias[..., block]  # addmm's c, unless broadcast
            with mx.stream(streams[index * len(streams) // len(blocks)]):
                parts.append(run(sliced)[0])
        product = mx.concatenate(parts, axis=-1)
        return (product if flat is x else product.reshape(*x.shape[:-1], columns),)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)

    return blocked


CPU_DEQUANTIZED_CHUNK = 1 << 19
"""Bytes of dequantized weight (about) that `_dequantized_product` holds at a time."""


def _affine_dequantize(
    w: mx.array, scales: mx.array, biases: mx.array, bits: int, group_size: int, dtype: Any
) -> mx.array:
    """`mx.dequantize(w, scales, biases, dtype=dtype)` of a `[rows, packed]` affine
    matrix with 2, 4 or 8 bits, the same values (`q * scale + bias` in the scales'
    dtype, then `dtype`) with less memory on the CPU: MLX's CPU dequantization is
    composed of 32/bits shifts of the whole packed matrix and their uint32
    concatenation (as big as the float result) before the float ops; here the codes
    are unpacked as bytes (`uint8`, a quarter of the float result)."""
    rows = w.shape[0]
    packed = w.view(mx.uint8)  # little-endian: code j of a word is in byte j * bits // 8
    if bits == 8:
        codes = packed
    else:
        mask = (1 << bits) - 1
        codes = mx.stack(
            [packed & mask if s == 0 else (packed >> s) & mask if s + bits < 8 else packed >> s
             for s in range(0, 8, bits)],
            axis=-1,
        )
    codes = codes.reshape(rows, scales.shape[-1], group_size).astype(scales.dtype)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
    matrix = (codes * scales[..., None] + biases[..., None]).reshape(rows, -1)  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves array.reshape's *shape unannotated)
    return matrix if matrix.dtype == dtype else matrix.astype(dtype)


def _dequantized_product(
    x: mx.array, w: mx.array, scales: mx.array, biases: mx.array, bits: int, group_size: int
) -> mx.array:
    """`x @ dequantize(w).T` with W dequantized a block of rows (outputs) at a time,
    `CPU_DEQUANTIZED_CHUNK` bytes, each block made to wait (`mx.depends`) for the
    previous block's product: MLX's breadth-first schedule would otherwise dequantize
    many blocks, and the weights of the layers after, before their products, and the
    whole float weight lives at once. Each output is the same dot product over the
    whole input dim as with the whole matrix (the blocks split the outputs only)."""
    rows = w.shape[0]
    width = w.shape[1] * 32 // bits
    step = max(64, CPU_DEQUANTIZED_CHUNK // max(1, width * x.dtype.size) // 64 * 64)
    if step >= rows:
        return mx.matmul(x, _affine_dequantize(w, scales, biases, bits, group_size, x.dtype).T)
    parts: list[mx.array] = []
    after = x
    for start in range(0, rows, step):
        block = slice(start, min(start + step, rows))
        (codes,) = cast(list[mx.array], mx.depends([w[block]], [after]))  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves depends' result unannotated)
        matrix = _affine_dequantize(codes, scales[block], biases[block], bits, group_size, x.dtype)
        after = mx.matmul(x, matrix.T)
        parts.append(after)
    return mx.concatenate(parts, axis=-1)


KERNELS: dict[str, KernelFactory] = {"mlx.quantized_matmul": _quantized_matmul}
"""The CPU's product kernels, in place of the generic ones."""
