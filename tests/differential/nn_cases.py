"""Differential cases of the nn ops mlxir decomposes itself
(`conversions/torch_to_aten/nn_decompositions.py`)."""

from __future__ import annotations

import zlib
from typing import Any

import torch
import torch.nn.functional as F
import torch.nn.modules.linear_cross_entropy  # noqa: F401  (registers torch.ops.torch_nn)

from differential.harness import F32, Case

A = torch.ops.aten


def _gen(n: int, salt: str) -> torch.Generator:
    return torch.Generator().manual_seed(zlib.crc32(f"{n}:{salt}".encode()))


def _randn(*shape: int, dtype: torch.dtype = torch.float32, salt: str = "") -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(sum(shape), salt)).to(dtype)


def _randint(low: int, high: int, *shape: int, salt: str = "") -> torch.Tensor:
    return torch.randint(low, high, shape, generator=_gen(sum(shape), salt))


def _distinct(*shape: int, dtype: torch.dtype = torch.float32, salt: str = "") -> torch.Tensor:
    """A permutation of the integers around 0 (exact in every float type here): no
    ties, so every maximum's index is unique."""
    count = 1
    for d in shape:
        count *= d
    return (torch.randperm(count, generator=_gen(sum(shape), salt)) - count // 2).reshape(shape).to(dtype)


def _bag_offsets(n: int) -> torch.Tensor:
    """Offsets of bags over 2n indices: one empty bag, the rest of varied sizes."""
    return torch.tensor([0, 0, 1, n, n + 2])


def _norm_params(dt: torch.dtype) -> dict[str, torch.Tensor]:
    """Per-channel (3) weight, bias and running statistics."""
    return {
        "w": _randn(3, dtype=dt, salt="nw"),
        "b": _randn(3, dtype=dt, salt="nb"),
        "rm": _randn(3, dtype=dt, salt="nrm"),
        "rv": torch.rand(3, generator=_gen(3, "nrv")).add(0.5).to(dt),
    }


def _train_batch_norm(m: Any, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    # The running statistics are buffers the call updates: read back after it.
    out = F.batch_norm(x, m.rm, m.rv, m.w, m.b, training=True, momentum=0.3, eps=1e-3)
    return out, m.rm + 0, m.rv + 0


def _native_batch_norm(m: Any, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
    out, mean, invstd = A.native_batch_norm(x, m.w, m.b, m.rm, m.rv, True, 0.1, 1e-5)
    return out, mean, invstd, m.rm + 0, m.rv + 0


NN_CASES: list[Case] = [
    # Batch norm in training mode: the output, the saved statistics and the running
    # statistics updated (the variance's unbiased), over batch and spatial dims.
    Case(
        "batch_norm_training",
        _train_batch_norm,
        lambda n, dt: (_randn(n, 3, 4, dtype=dt, salt="bnt"),),
        {0: (0,)},
        params=_norm_params,
    ),
    Case(
        "native_batch_norm_training",
        _native_batch_norm,
        lambda n, dt: (_randn(2, 3, n, 2, dtype=dt, salt="nbn"),),
        {0: (2,)},
        params=_norm_params,
    ),
    Case(
        "batch_norm_no_training_results",
        lambda m, x: A._native_batch_norm_legit_no_training(x, m.w, m.b, m.rm, m.rv, 0.1, 1e-5),
        lambda n, dt: (_randn(n, 3, 4, dtype=dt, salt="bnn"),),
        {0: (0,)},
        params=_norm_params,
    ),
    Case(
        "native_group_norm_statistics",
        lambda m, x: A.native_group_norm(x, None, None, x.shape[0], 6, 5, 3, 1e-5),
        lambda n, dt: (_randn(n, 6, 5, dtype=dt, salt="ngn"),),
        {0: (0,)},
    ),
    # Adaptive pooling: windows of unequal sizes (7 into 3, 5 into 4) and more outputs
    # than inputs (3 into 5); the indices are flat positions in each input plane.
    Case(
        "adaptive_max_pool2d",
        lambda m, x: F.adaptive_max_pool2d(x, (3, 4), return_indices=True),
        lambda n, dt: (_distinct(n, 2, 7, 5, dtype=dt, salt="amp2"),),
        {0: (0,)},
    ),
    Case(
        "adaptive_max_pool1d_upsampling",
        lambda m, x: F.adaptive_max_pool1d(x, 5, return_indices=True),
        lambda n, dt: (_distinct(n, 3, dtype=dt, salt="amp1"),),
        {0: (0,)},
    ),
    Case(
        "adaptive_max_pool3d",
        lambda m, x: F.adaptive_max_pool3d(x, (2, 3, 4), return_indices=True),
        lambda n, dt: (_distinct(2, n, 5, 4, 7, dtype=dt, salt="amp3"),),
        {0: (1,)},
    ),
    # Max pooling's indices (result #1 of max_poolNd_with_indices): flat positions in
    # each input plane, with padding, dilation, ceil_mode and an unbatched input
    Case(
        "max_pool_indices",
        lambda m, x, v: (
            F.max_pool1d(x[:, :, 0], 3, stride=2, padding=1, return_indices=True),
            F.max_pool2d(x, (2, 3), stride=(2, 1), dilation=(1, 2), ceil_mode=True, return_indices=True),
            F.max_pool2d(x[0], 2, padding=1, return_indices=True),
            F.max_pool3d(v, 2, stride=(1, 2, 2), return_indices=True),
        ),
        lambda n, dt: (_distinct(n, 3, 7, 6, dtype=dt, salt="mpi2"), _distinct(n, 2, 4, 5, 6, dtype=dt, salt="mpi3")),
        {0: (0,), 1: (0,)},
    ),
    # The backward scatters each output's gradient to its index; the indices come from
    # adaptive pooling equal to a 2x2, stride 2 max pool (6 into 3).
    Case(
        "max_pool2d_with_indices_backward",
        lambda m, x, g: A.max_pool2d_with_indices_backward(
            g, x, [2, 2], [2, 2], [0, 0], [1, 1], False, F.adaptive_max_pool2d(x, 3, return_indices=True)[1]
        ),
        lambda n, dt: (_distinct(n, 2, 6, 6, dtype=dt, salt="mpb"), _randn(n, 2, 3, 3, dtype=dt, salt="mpbg")),
        {0: (0,), 1: (0,)},
    ),
    Case(
        "adaptive_avg_pool3d",
        lambda m, x: F.adaptive_avg_pool3d(x, (2, 3, 5)),
        lambda n, dt: (_randn(n, 3, 5, 4, 7, dtype=dt, salt="aap3"),),
        {0: (0,)},
    ),
    # Distances: every p torch treats apart (0, 1, 2, inf) and a general one, with
    # broadcast batch dims.
    Case(
        "cdist",
        lambda m, a, b: tuple(torch.cdist(a, b, p) for p in (0.0, 1.0, 2.0, 3.0, float("inf"))),
        lambda n, dt: (_randn(2, n, 3, dtype=dt, salt="cd1"), _randn(1, 4, 3, dtype=dt, salt="cd2")),
        {0: (1,)},
        dtypes=F32,
        static_only=True,  # torch's composite picks its p == 2 method by size: a guard on it
    ),
    Case(
        "pdist",
        lambda m, x: (F.pdist(x), F.pdist(x, 1.0), F.pdist(x, 0.5), F.pdist(x, float("inf"))),
        lambda n, dt: (_randn(n, 4, dtype=dt, salt="pd"),),
        {0: (0,)},
        dtypes=F32,
        static_only=True,  # a dynamic n: torch's symbolic shapes fail on the pair count n(n-1)/2
    ),
    Case(
        "diagonal_scatter",
        lambda m, x, s, t: (torch.diagonal_scatter(x, s, 1, 1, 2), torch.diagonal_scatter(x, t, -2, 2, 1)),
        lambda n, dt: (
            _randn(n, 6, 5, dtype=dt, salt="ds"),
            _randn(n, 4, dtype=dt, salt="ds1"),
            _randn(n, 3, dtype=dt, salt="ds2"),
        ),
        {0: (0,), 1: (0,), 2: (0,)},
    ),
    # searchsorted: boundaries with repeats (left and right differ there), 1-D and
    # batched, a sorter, int32 results; isin through its own decomposition.
    Case(
        "searchsorted",
        lambda m, seq, rows, v: (
            torch.searchsorted(seq, v),
            torch.searchsorted(seq, v, right=True, out_int32=True),
            torch.searchsorted(rows.sort().values, v[:2], side="right"),
            torch.searchsorted(rows, v[:2], sorter=rows.argsort(stable=True)),
        ),
        lambda n, dt: (
            _randint(-4, 5, 9, salt="ss").sort().values.to(dt),
            _randint(-4, 5, 2, 6, salt="ssr").to(dt),
            _randint(-5, 6, n, salt="ssv").to(dt).reshape(n).expand(2, n).clone(),
        ),
        {2: (1,)},
    ),
    Case(
        "isin_tensor_elements",
        lambda m, x, t: (torch.isin(x, t), torch.isin(x, t, invert=True)),
        lambda n, dt: (_randint(0, 9, 3, n, salt="isx").to(dt), _randint(0, 9, 12, salt="ist").to(dt)),
        {0: (1,)},
    ),
    Case(
        "histc",
        lambda m, x: (torch.histc(x, 7, -1.0, 1.5), torch.histc(x, 5), torch.histc(x, 1, 0.0, 10.0)),
        lambda n, dt: (_randn(n, 6, dtype=dt, salt="hc"),),
        {0: (0,)},
    ),
    Case(
        "histogram",
        lambda m, x, w: (
            torch.histogram(x, 6),
            torch.histogram(x, 4, range=(-1.0, 1.0), weight=w, density=True),
            torch.histogram(x, torch.linspace(-2, 2, 5)),
        ),
        lambda n, dt: (_randn(n, 3, salt="hg"), torch.rand(n, 3, generator=_gen(n, "hgw"))),
        {0: (0,), 1: (0,)},
        dtypes=F32,  # torch's histogram runs in float32 and float64 only
        static_only=True,  # histogram has no meta kernel: torch.export needs real sizes
    ),
    Case(
        "histogramdd",
        lambda m, x, w: (
            torch.histogramdd(x, [2, 3]),
            torch.histogramdd(x, [3, 2], range=[-1.0, 1.0, 0.0, 2.0], weight=w, density=True),
            torch.histogramdd(x, [torch.linspace(-2, 2, 4), torch.linspace(-1, 1, 3)]),
        ),
        lambda n, dt: (_randn(n, 2, salt="hdd"), torch.rand(n, generator=_gen(n, "hddw"))),
        {0: (0,), 1: (0,)},
        dtypes=F32,
        static_only=True,  # as histogram: no meta kernel
    ),
    Case(
        "bucketize_on_boundaries",
        lambda m, x: (torch.bucketize(x, torch.linspace(-1, 1, 5)), torch.bucketize(x, torch.linspace(-1, 1, 5), right=True)),
        lambda n, dt: (_randint(-3, 4, 2, n, salt="bk").to(dt) / 2,),
        {0: (1,)},
    ),
    # Segments along dim 0 and, with per-row lengths, dim 1; empty segments take
    # `initial` or the reduction's identity (a mean's NaN).
    Case(
        "segment_reduce",
        lambda m, x, lengths, rows: (
            *(torch.segment_reduce(x, r, lengths=lengths) for r in ("sum", "mean", "max", "min", "prod")),
            torch.segment_reduce(x, "max", lengths=lengths, initial=0.5),
            torch.segment_reduce(x, "mean", lengths=lengths, initial=1.0),
            torch.segment_reduce(x.T, "sum", lengths=rows, axis=1),
        ),
        lambda n, dt: (
            _randn(6, n, dtype=dt, salt="sr"),
            torch.tensor([2, 0, 3, 1]),
            torch.tensor([[1, 5]]).expand(n, 2).clone(),
        ),
        {0: (1,), 2: (0,)},
    ),
    # mode: many ties; the smallest most frequent value and its last index.
    Case(
        "mode",
        lambda m, x: (torch.mode(x), torch.mode(x, 0, keepdim=True)),
        lambda n, dt: (_randint(-2, 3, n, 9, salt="mo").to(dt),),
        {0: (0,)},
    ),
    Case(
        "embedding_bag",
        lambda m, w, i, o, s: (
            F.embedding_bag(i, w, o, mode="sum", per_sample_weights=s),
            F.embedding_bag(i, w, o, mode="mean", padding_idx=3),
            F.embedding_bag(i, w, o, mode="max"),
        ),
        lambda n, dt: (
            _randn(10, 4, dtype=dt, salt="ebw"),
            _randint(0, 10, 2 * n, salt="ebi"),
            _bag_offsets(n),
            _randn(2 * n, dtype=dt, salt="ebs"),
        ),
        {1: (0,), 3: (0,)},
    ),
    # Antialiased bilinear resizing: down (wider filters) and up, both alignments.
    Case(
        "interpolate_bilinear_antialias",
        lambda m, x: (
            F.interpolate(x, size=(3, 7), mode="bilinear", antialias=True),
            F.interpolate(x, size=(13, 5), mode="bilinear", antialias=True, align_corners=True),
            F.interpolate(x, scale_factor=(0.5, 1.5), mode="bilinear", antialias=True),
        ),
        lambda n, dt: (_randn(n, 2, 8, 11, dtype=dt, salt="aa"),),
        {0: (0,)},
        dtypes=F32,  # torch's CPU kernel has no half-precision form
    ),
    # 3-D grid sampling: every padding mode, both alignments, grids reaching outside.
    Case(
        "grid_sample_3d",
        lambda m, x, g: tuple(
            F.grid_sample(x, g, mode=mode, padding_mode=padding, align_corners=aligned)
            for mode, padding, aligned in (
                ("bilinear", "zeros", False),
                ("bilinear", "border", True),
                ("bilinear", "reflection", False),
            )
        ),
        lambda n, dt: (
            _randn(n, 2, 3, 4, 5, dtype=dt, salt="gs"),
            (torch.rand(n, 2, 3, 2, 3, generator=_gen(n, "gsg")) * 2.6 - 1.3).to(dt),
        ),
        {0: (0,), 1: (0,)},
    ),
    Case(
        "grid_sample_3d_nearest",
        lambda m, x, g: (
            F.grid_sample(x, g, mode="nearest", padding_mode="reflection", align_corners=True),
            F.grid_sample(x, g, mode="nearest", padding_mode="zeros"),
        ),
        lambda n, dt: (
            _randn(n, 2, 3, 4, 5, dtype=dt, salt="gsn"),
            (torch.rand(n, 2, 3, 2, 3, generator=_gen(n, "gsng")) * 2.6 - 1.3).to(dt),
        ),
        {0: (0,), 1: (0,)},
        # In half precision torch rounds positions in the dtype, mlxir in float32: a
        # position near a half picks the other neighbour.
        dtypes=F32,
    ),
    # torch's chunked linear + cross-entropy ops (`F.linear_cross_entropy` with chunking
    # options), as one linear and one cross entropy: class weights, ignored targets,
    # every reduction.
    Case(
        "linear_cross_entropy_chunked",
        lambda m, x, t: (
            torch.ops.torch_nn._linear_cross_entropy_batch_chunked(
                x, m.w, t, m.b, None, "mean", 1, 0.0, 2, "compact", torch.float32, True, False, False, False
            )[0],
            torch.ops.torch_nn._linear_cross_entropy_batch_chunked(
                x, m.w, t, None, m.cw, "sum", -100, 0.0, 2, "compact", torch.float32, True, False, False, False
            )[0],
            torch.ops.torch_nn._linear_cross_entropy_batch_chunked_no_reduction(
                x, m.w, t, m.b, m.cw, 2, 3, "compact", torch.float32
            ),
        ),
        lambda n, dt: (_randn(n, 6, dtype=dt, salt="lce"), _randint(0, 5, n, salt="lcet")),
        {0: (0,), 1: (0,)},
        params=lambda dt: {
            "w": _randn(5, 6, dtype=dt, salt="lcew"),
            "b": _randn(5, dtype=dt, salt="lceb"),
            "cw": torch.rand(5, generator=_gen(5, "lcecw")).add(0.5).to(dt),
        },
    ),
    Case(
        "bilinear",
        lambda m, a, b: F.bilinear(a, b, m.w, m.b),
        lambda n, dt: (_randn(n, 2, 3, dtype=dt, salt="bl1"), _randn(n, 2, 5, dtype=dt, salt="bl2")),
        {0: (0,), 1: (0,)},
        params=lambda dt: {"w": _randn(4, 3, 5, dtype=dt, salt="blw"), "b": _randn(4, dtype=dt, salt="blb")},
    ),
]
