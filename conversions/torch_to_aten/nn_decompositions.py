"""Neural-network ATen ops that mlxir has no importer for, as mlxir's own
decompositions in torch ops (`MLXIR_DECOMPOSITIONS` in `node_decompositions.py`).

Each is traced alone with make_fx on the node's fake values: no Python control flow on
tensor values and no tensor literals (index tables are built from `arange`); sizes and
the ops' constant arguments may steer the Python code."""

from __future__ import annotations

import itertools
import math
import string
from collections.abc import Callable, Sequence
from typing import Any

import torch
import torch.nn.functional as F
from torch._ops import OpOverload

_A = torch.ops.aten


def _adaptive_windows(size: int, out: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The windows of adaptive pooling along one dim of `size` elements into `out`:
    window i is [floor(i*size/out), ceil((i+1)*size/out)). Returns the positions
    `[out, k]` (k the longest window; a shorter window repeats its last position) and
    whether each position lies in its window."""
    longest = -(-size // out) + (0 if size % out == 0 else 1)
    steps = torch.arange(out)
    starts = (steps * size) // out
    ends = ((steps + 1) * size + out - 1) // out
    positions = starts.unsqueeze(1) + torch.arange(longest).unsqueeze(0)
    inside = positions < ends.unsqueeze(1)
    return torch.minimum(positions, (ends - 1).unsqueeze(1)), inside


def _adaptive_gather(
    x: torch.Tensor, output_size: Sequence[int]
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """Every adaptive window of `x`'s last `len(output_size)` dims: the values
    `[..., o1, ..., on, K]` (K the product of the longest windows), whether each lies in
    its window, and its flat position within the input plane (both `[o1, ..., on, K]`)."""
    n = len(output_size)
    spatial = list(x.shape[x.dim() - n :])
    lead = x.dim() - n
    gathered = x
    inside: torch.Tensor | None = None
    flat: torch.Tensor | None = None
    lengths: list[int] = []
    for d, (size, out) in enumerate(zip(spatial, output_size)):
        positions, window = _adaptive_windows(size, out)
        length = positions.shape[1]
        lengths.append(length)
        axis = lead + 2 * d  # the earlier dims each became (out, length)
        shape = list(gathered.shape)
        gathered = gathered.index_select(axis, positions.reshape(-1)).reshape(
            *shape[:axis], out, length, *shape[axis + 1 :]
        )
        # The position tables grow as the values do: [o1, k1, ..., od, kd].
        stride = math.prod(spatial[d + 1 :])
        if flat is None or inside is None:
            flat, inside = positions * stride, window
        else:
            flat = flat.unsqueeze(-1).unsqueeze(-1) + (positions * stride).reshape(*[1] * (2 * d), out, length)
            inside = inside.unsqueeze(-1).unsqueeze(-1) & window.reshape(*[1] * (2 * d), out, length)
    assert flat is not None and inside is not None
    # [..., o1, k1, ..., on, kn] -> [..., o1, ..., on, k1 * ... * kn]
    outs = [lead + 2 * d for d in range(n)]
    windows = [lead + 2 * d + 1 for d in range(n)]
    order = [*range(lead), *outs, *windows]
    values = gathered.permute(order).reshape(*x.shape[:lead], *output_size, math.prod(lengths))
    table_order = [2 * d for d in range(n)] + [2 * d + 1 for d in range(n)]
    flat = flat.permute(table_order).reshape(*output_size, -1)
    inside = inside.permute(table_order).reshape(*output_size, -1)
    return values, inside, flat


def _adaptive_max_pool(x: torch.Tensor, output_size: Sequence[int]) -> tuple[torch.Tensor, torch.Tensor]:
    # The first maximum of each window in row-major order, as torch's kernel scans it
    # (a repeated last position comes after its original, so never wins a tie).
    values, _, flat = _adaptive_gather(x, output_size)
    best, which = values.max(-1, keepdim=True)
    indices = flat.expand(values.shape).gather(-1, which)
    return best.squeeze(-1), indices.squeeze(-1)


def _adaptive_avg_pool(x: torch.Tensor, output_size: Sequence[int]) -> torch.Tensor:
    # Each window's sum over its own positions, divided by its size; half-precision
    # inputs are summed in float32, as torch's kernel accumulates.
    wide = torch.float32 if x.dtype in (torch.float16, torch.bfloat16) else x.dtype
    values, inside, _ = _adaptive_gather(x.to(wide), output_size)
    total = torch.where(inside, values, 0).sum(-1)
    return (total / inside.sum(-1).to(wide)).to(x.dtype)


def _distances(differences: torch.Tensor, p: float) -> torch.Tensor:
    """The p-norm distances of `differences` along the last dim, as cdist/pdist define
    them for every p (0: the count of differing coordinates)."""
    if p == 0:
        return (differences != 0).sum(-1).to(differences.dtype)
    magnitude = differences.abs()
    if p == math.inf:
        if differences.shape[-1] == 0:
            return magnitude.sum(-1)
        return magnitude.amax(-1)
    if p == 1:
        return magnitude.sum(-1)
    if p == 2:
        return magnitude.square().sum(-1).sqrt()
    return magnitude.pow(p).sum(-1).pow(1 / p)


def _antialias_weights(
    size: int, out: int, align_corners: bool, scale: float | None, dtype: torch.dtype
) -> torch.Tensor:
    """The `[out, size]` weights of torch's antialiased bilinear resampling along one
    dim: output i's triangle filter, centred at scale * (i + 0.5) and widened by the
    scale when downsampling, over the input positions in its support (truncated as
    torch's kernel truncates), normalized to sum 1."""
    if align_corners:
        ratio = (size - 1) / (out - 1) if out > 1 else 0.0
    else:
        ratio = 1.0 / scale if scale is not None and scale > 0 else size / out
    support = ratio if ratio >= 1.0 else 1.0
    invscale = 1.0 / ratio if ratio >= 1.0 else 1.0
    center = (torch.arange(out, dtype=dtype) + 0.5) * ratio
    first = (center - support + 0.5).to(torch.int64).clamp(min=0).unsqueeze(1)
    last = (center + support + 0.5).to(torch.int64).clamp(max=size).unsqueeze(1)
    positions = torch.arange(size).unsqueeze(0)
    distance = ((positions.to(dtype) - center.unsqueeze(1) + 0.5) * invscale).abs()
    inside = (positions >= first) & (positions < last)
    weights = torch.where(inside, (1 - distance).clamp(min=0), 0)
    total = weights.sum(1, keepdim=True)
    return torch.where(total != 0, weights / torch.where(total != 0, total, 1), 0)


def _upsample_bilinear2d_aa(
    self: torch.Tensor,
    output_size: Sequence[int],
    align_corners: bool,
    scales_h: float | None = None,
    scales_w: float | None = None,
) -> torch.Tensor:
    # Separable: the rows' weights, then the columns', as two matrix products (in
    # float32 for half-precision inputs).
    wide = torch.float32 if self.dtype in (torch.float16, torch.bfloat16) else self.dtype
    rows = _antialias_weights(self.shape[-2], output_size[0], align_corners, scales_h, wide)
    cols = _antialias_weights(self.shape[-1], output_size[1], align_corners, scales_w, wide)
    return (rows @ self.to(wide) @ cols.T).to(self.dtype)


def _upsample_bilinear2d_aa_vec(
    self: torch.Tensor, output_size: Sequence[int] | None, align_corners: bool, scale_factors: Sequence[float] | None
) -> torch.Tensor:
    if output_size is None:
        assert scale_factors is not None
        output_size = [int(size * factor) for size, factor in zip(self.shape[-2:], scale_factors)]
        return _upsample_bilinear2d_aa(self, output_size, align_corners, *scale_factors)
    return _upsample_bilinear2d_aa(self, output_size, align_corners)


def _grid_coordinate(coord: torch.Tensor, size: int, padding_mode: int, align_corners: bool) -> torch.Tensor:
    """A grid coordinate in [-1, 1] as an input position along a dim of `size`, with
    torch's border (1) clipping or reflection (2) applied."""
    if align_corners:
        position = (coord + 1) / 2 * (size - 1)
    else:
        position = ((coord + 1) * size - 1) / 2
    if padding_mode == 2:  # reflected about the edges (pixel centres when aligned)
        low, high = (0.0, float(size - 1)) if align_corners else (-0.5, size - 0.5)
        span = high - low
        if span <= 0:
            position = torch.zeros_like(position)
        else:
            distance = (position - low).abs()
            extra = torch.fmod(distance, span)
            flips = torch.floor(distance / span)
            position = torch.where(flips % 2 == 0, extra + low, span - extra + low)
    if padding_mode in (1, 2):
        position = position.clamp(0, size - 1)
    return position


def _grid_sampler_3d(
    input: torch.Tensor, grid: torch.Tensor, interpolation_mode: int, padding_mode: int, align_corners: bool
) -> torch.Tensor:
    # Each sample's input position per dim (grid x, y, z index W, H, D); nearest rounds
    # half to even, trilinear weighs the 8 corners; a corner outside the input reads 0
    # (after border or reflection padding none is). Half precision computes in float32.
    if interpolation_mode not in (0, 1):
        raise ValueError(f"grid_sampler_3d: interpolation mode {interpolation_mode} is bilinear or nearest only")
    wide = torch.float32 if input.dtype in (torch.float16, torch.bfloat16) else input.dtype
    x, g = input.to(wide), grid.to(wide)
    n, c, depth, height, width = x.shape
    sizes = (width, height, depth)
    position = [_grid_coordinate(g[..., i], sizes[i], padding_mode, align_corners) for i in range(3)]
    flat = x.reshape(n, c, -1)
    samples = position[0].shape[1:]

    def read(corner: Sequence[torch.Tensor]) -> torch.Tensor:
        inside = torch.ones_like(corner[0], dtype=torch.bool)
        for i in range(3):
            inside = inside & (corner[i] >= 0) & (corner[i] <= sizes[i] - 1)
        clamped = [corner[i].clamp(0, sizes[i] - 1).to(torch.int64) for i in range(3)]
        index = (clamped[2] * height + clamped[1]) * width + clamped[0]
        picked = flat.gather(2, index.reshape(n, 1, -1).expand(n, c, -1)).reshape(n, c, *samples)
        return torch.where(inside.unsqueeze(1), picked, 0)

    if interpolation_mode == 1:
        out = read([torch.round(p) for p in position])
    else:
        low = [torch.floor(p) for p in position]
        fraction = [p - f for p, f in zip(position, low)]
        out = torch.zeros(n, c, *samples, dtype=wide)
        for corner in itertools.product((0, 1), repeat=3):
            weight = torch.ones_like(fraction[0])
            for i, step in enumerate(corner):
                weight = weight * (fraction[i] if step else 1 - fraction[i])
            out = out + read([low[i] + corner[i] for i in range(3)]) * weight.unsqueeze(1)
    return out.to(input.dtype)


def _cdist(x1: torch.Tensor, x2: torch.Tensor, p: float = 2.0, compute_mode: int | None = None) -> torch.Tensor:
    # Every pair's differences, directly: torch's matrix-product form for p == 2 is an
    # optimization (and less accurate), not a different result.
    return _distances(x1.unsqueeze(-2) - x2.unsqueeze(-3), p)


def _pdist(x: torch.Tensor, p: float = 2.0) -> torch.Tensor:
    # The pairs i < j of rows, in row-major order: each such position of the n x n
    # table is scattered to its running count (the others to a dropped last slot).
    n = x.shape[0]
    count = n * (n - 1) // 2
    rows = torch.arange(n).unsqueeze(1)
    cols = torch.arange(n).unsqueeze(0)
    upper = (rows < cols).reshape(-1)
    slot = torch.where(upper, torch.cumsum(upper.to(torch.int64), 0) - 1, count)
    positions = torch.zeros(count + 1, dtype=torch.int64).scatter(0, slot, torch.arange(n * n))[:count]
    first, second = x.index_select(0, positions // n), x.index_select(0, positions % n)
    return _distances(first - second, p)


def _diagonal_scatter(
    self: torch.Tensor, src: torch.Tensor, offset: int = 0, dim1: int = 0, dim2: int = 1
) -> torch.Tensor:
    # The diagonal's planes moved last: position (r, c) of a plane lies on it when
    # c - r == offset, and takes src's element r - max(-offset, 0) (the diagonal's
    # own position) there.
    rank = self.dim()
    moved = self.movedim((dim1 % rank, dim2 % rank), (-2, -1))
    length = src.shape[-1]
    if length == 0:
        return self.clone()
    rows = torch.arange(moved.shape[-2]).unsqueeze(1)
    cols = torch.arange(moved.shape[-1]).unsqueeze(0)
    on_diagonal = (cols - rows) == offset
    along = (rows - max(-offset, 0)).clamp(0, length - 1).expand(on_diagonal.shape)
    placed = src[..., along]
    return torch.where(on_diagonal, placed, moved).movedim((-2, -1), (dim1 % rank, dim2 % rank))


def _searchsorted(
    sorted_sequence: torch.Tensor,
    self: torch.Tensor | float,
    *,
    out_int32: bool = False,
    right: bool = False,
    side: str | None = None,
    sorter: torch.Tensor | None = None,
) -> torch.Tensor:
    # torch's binary search moves right past a boundary b while !(b >= v) (left) or
    # !(b > v) (right): on a sorted sequence the result is the count of those
    # boundaries, NaN comparisons included.
    if sorter is not None:
        sorted_sequence = sorted_sequence.gather(-1, sorter)
    right = right or side == "right"
    if isinstance(self, torch.Tensor):
        values = self.unsqueeze(-1)
        boundaries = sorted_sequence if sorted_sequence.dim() == 1 else sorted_sequence.unsqueeze(-2)
    else:
        values, boundaries = self, sorted_sequence
    passed = ~(boundaries > values) if right else ~(boundaries >= values)
    return passed.sum(-1).to(torch.int32 if out_int32 else torch.int64)


def _histc(self: torch.Tensor, bins: int = 100, min: float = 0, max: float = 0) -> torch.Tensor:
    # torch's kernel: with min == max the data's own range (widened by 1 each way when
    # it is one value); an element's bin is (x - min) * bins / (max - min), truncated,
    # in the input's dtype; max itself falls in the last bin, anything outside (and
    # NaN) in none. Counts are summed in the input's dtype, as torch's are.
    low: torch.Tensor | float = min
    high: torch.Tensor | float = max
    if min == max:
        low, high = self.amin(), self.amax()
        same = low == high
        low, high = torch.where(same, low - 1, low), torch.where(same, high + 1, high)
    flat = self.reshape(-1)
    kept = (flat >= low) & (flat <= high)
    position = ((flat - low) * bins / (high - low)).to(torch.int64)
    position = position.clamp(0, bins - 1)
    return torch.zeros(bins, dtype=self.dtype).scatter_add(0, position, kept.to(self.dtype))


def _bucketize(
    self: torch.Tensor | float, boundaries: torch.Tensor, *, out_int32: bool = False, right: bool = False
) -> torch.Tensor:
    return _searchsorted(boundaries, self, out_int32=out_int32, right=right)


def _linspace(start: torch.Tensor | float, end: torch.Tensor | float, steps: int, dtype: torch.dtype) -> torch.Tensor:
    """torch's CPU `linspace` with bounds that may be tensors: the first half counted
    up from `start`, the second down from `end`."""
    step = (end - start) / max(steps - 1, 1)
    i = torch.arange(steps, dtype=dtype)
    return torch.where(i < steps // 2, start + i * step, end - (steps - 1 - i) * step).to(dtype)


def _histogram_counts(
    flat: torch.Tensor, edges: torch.Tensor, weight: torch.Tensor | None, density: bool
) -> torch.Tensor:
    # An element's bin is the count of edges at or below it, less one (torch's search
    # on the edges); the last bin holds its right edge; outside the edges, none.
    bins = edges.shape[0] - 1
    kept = (flat >= edges[0]) & (flat <= edges[-1])
    position = ((edges <= flat.unsqueeze(-1)).sum(-1) - 1).clamp(0, bins - 1)
    counted = kept.to(flat.dtype) if weight is None else torch.where(kept, weight.reshape(-1), 0)
    hist = torch.zeros(bins, dtype=flat.dtype).scatter_add(0, position, counted)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return hist


def _histogram(
    self: torch.Tensor,
    bins: int = 100,
    *,
    range: Sequence[float] | None = None,
    weight: torch.Tensor | None = None,
    density: bool = False,
) -> tuple[torch.Tensor, torch.Tensor]:
    # `bins` equal bins over `range`, or the data's own; a range of one value widened
    # by a half each way.
    low: torch.Tensor | float
    high: torch.Tensor | float
    if range is not None:
        low, high = range[0], range[1]
        if low == high:
            low, high = low - 0.5, high + 0.5
    else:
        low, high = self.amin(), self.amax()
        same = low == high
        low, high = torch.where(same, low - 0.5, low), torch.where(same, high + 0.5, high)
    edges = _linspace(low, high, bins + 1, self.dtype)
    return _histogram_counts(self.reshape(-1), edges, weight, density), edges


def _histogram_edges(
    self: torch.Tensor, bins: torch.Tensor, *, weight: torch.Tensor | None = None, density: bool = False
) -> tuple[torch.Tensor, torch.Tensor]:
    return _histogram_counts(self.reshape(-1), bins, weight, density), bins.clone()


def _histogramdd_edges(
    self: torch.Tensor,
    bins: Sequence[int],
    *,
    range: Sequence[float] | None = None,
    weight: torch.Tensor | None = None,
    density: bool = False,
) -> list[torch.Tensor]:
    # Per dim of the last axis, as `histogram`'s: over `range`'s pair for it, or the
    # data's own range; one value widened by a half each way.
    points = self.reshape(-1, self.shape[-1])
    edges: list[torch.Tensor] = []
    for d, count in enumerate(bins):
        low: torch.Tensor | float
        high: torch.Tensor | float
        if range is not None:
            low, high = range[2 * d], range[2 * d + 1]
            if low == high:
                low, high = low - 0.5, high + 0.5
        else:
            low, high = points[:, d].amin(), points[:, d].amax()
            same = low == high
            low, high = torch.where(same, low - 0.5, low), torch.where(same, high + 0.5, high)
        edges.append(_linspace(low, high, count + 1, self.dtype))
    return edges


def _histogramdd_from_edges(
    self: torch.Tensor, bins: Sequence[torch.Tensor], *, weight: torch.Tensor | None = None, density: bool = False
) -> torch.Tensor:
    # Each point's bin in every dim as `histogram`'s, one flat bin index over all
    # dims; a point outside any dim's edges counts nowhere.
    points = self.reshape(-1, self.shape[-1])
    counts = [e.shape[0] - 1 for e in bins]
    kept = torch.ones(points.shape[0], dtype=torch.bool)
    flat = torch.zeros(points.shape[0], dtype=torch.int64)
    for d, edges in enumerate(bins):
        column = points[:, d]
        kept = kept & (column >= edges[0]) & (column <= edges[-1])
        position = ((edges <= column.unsqueeze(-1)).sum(-1) - 1).clamp(0, counts[d] - 1)
        flat = flat * counts[d] + position
    counted = kept.to(self.dtype) if weight is None else torch.where(kept, weight.reshape(-1), 0)
    hist = torch.zeros(math.prod(counts), dtype=self.dtype).scatter_add(0, flat, counted).reshape(counts)
    if density:
        volume = hist.sum()
        for d, edges in enumerate(bins):
            shape = [1] * len(bins)
            shape[d] = counts[d]
            volume = volume * (edges[1:] - edges[:-1]).reshape(shape)
        hist = hist / volume
    return hist


def _histogramdd_from_counts(
    self: torch.Tensor,
    bins: Sequence[int],
    *,
    range: Sequence[float] | None = None,
    weight: torch.Tensor | None = None,
    density: bool = False,
) -> torch.Tensor:
    edges = _histogramdd_edges(self, bins, range=range, weight=weight, density=density)
    return _histogramdd_from_edges(self, edges, weight=weight, density=density)


def _histogramdd(
    self: torch.Tensor,
    bins: Sequence[int] | int | Sequence[torch.Tensor],
    range: Sequence[float] | None = None,
    weight: torch.Tensor | None = None,
    density: bool = False,
) -> tuple[torch.Tensor, list[torch.Tensor]]:
    """`histogramdd` with bin counts (one for all dims, or one each) or edge tensors."""
    if isinstance(bins, int):
        bins = [bins] * self.shape[-1]
    if all(isinstance(b, torch.Tensor) for b in bins):
        edges = [b for b in bins if isinstance(b, torch.Tensor)]
        return _histogramdd_from_edges(self, edges, weight=weight, density=density), [e.clone() for e in edges]
    counts = [b for b in bins if isinstance(b, int)]
    edges = _histogramdd_edges(self, counts, range=range)
    return _histogramdd_from_edges(self, edges, weight=weight, density=density), edges


def _segment_reduce(
    data: torch.Tensor,
    reduce: str,
    *,
    lengths: torch.Tensor | None = None,
    indices: torch.Tensor | None = None,
    offsets: torch.Tensor | None = None,
    axis: int = 0,
    unsafe: bool = False,
    initial: float | None = None,
) -> torch.Tensor:
    # Segment s holds the positions [start_s, end_s) along `axis` (ends the running sum
    # of the lengths, or the offsets): a [..., S, L] membership reduces the data moved
    # to [..., 1, L, ...]. `initial` joins every segment's reduction (a mean's sum, not
    # its count) and is an empty segment's value; without it an empty segment is the
    # reduction's identity (a mean's NaN).
    axis = axis % data.dim()
    if lengths is None:
        assert offsets is not None
        lengths = offsets[..., 1:] - offsets[..., :-1]
    ends = torch.cumsum(lengths, -1)
    starts = ends - lengths
    positions = torch.arange(data.shape[axis])
    member = (starts.unsqueeze(-1) <= positions) & (positions < ends.unsqueeze(-1))
    member = member.reshape(*member.shape, *[1] * (data.dim() - axis - 1))
    values = data.unsqueeze(axis)
    along = axis + 1
    if reduce in ("sum", "mean"):
        total = torch.where(member, values, 0).sum(along)
        if initial is not None:
            total = total + initial
        if reduce == "sum":
            return total
        count = member.sum(along)
        empty = math.nan if initial is None else initial
        return torch.where(count > 0, total / count, empty).to(data.dtype)
    if reduce == "prod":
        product = torch.where(member, values, 1).prod(along)
        return product if initial is None else product * initial
    if reduce in ("max", "min"):
        identity = -math.inf if reduce == "max" else math.inf
        picked = torch.where(member, values, identity)
        extreme = picked.amax(along) if reduce == "max" else picked.amin(along)
        if initial is None:
            return extreme
        bound = torch.full_like(extreme, initial)
        return torch.maximum(extreme, bound) if reduce == "max" else torch.minimum(extreme, bound)
    raise ValueError(f"segment_reduce: unknown reduction {reduce!r}")


def _mode(self: torch.Tensor, dim: int = -1, keepdim: bool = False) -> tuple[torch.Tensor, torch.Tensor]:
    # torch's kernel sorts (value, index) pairs and keeps the first run of the largest
    # count: among the most frequent values the smallest, and its last index.
    if self.dim() == 0:
        return self.clone(), torch.zeros((), dtype=torch.int64)
    x = self.movedim(dim, -1)
    counts = (x.unsqueeze(-1) == x.unsqueeze(-2)).sum(-1)
    most = counts == counts.amax(-1, keepdim=True)
    value = torch.where(most, x, x.amax(-1, keepdim=True)).amin(-1, keepdim=True)
    positions = torch.arange(x.shape[-1]).expand(x.shape)
    index = torch.where(x == value, positions, -1).amax(-1, keepdim=True)
    if keepdim:
        return value.movedim(-1, dim), index.movedim(-1, dim)
    return value.squeeze(-1), index.squeeze(-1)


def _embedding_bag(
    weight: torch.Tensor,
    indices: torch.Tensor,
    offsets: torch.Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: torch.Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int = -1,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    # Bag b holds the indices from offsets[b] to the next offset: an index's bag is the
    # count of offsets at or before it, less one; entries equal to padding_idx belong
    # to none. A [bags, n] membership table sums (mode 0), averages (1) or takes the
    # maximum (2) of the looked-up rows; an empty bag is zeros. The other results are
    # those of torch's forward-only kernel: offset2bag empty for its fast path (sums
    # without padding_idx), bag_size and max_indices zeros (one per offset) for sums.
    flat = indices.reshape(-1)
    count = flat.shape[0]
    bags = offsets.shape[0] - (1 if include_last_offset else 0)
    bag_of = (offsets.unsqueeze(0) <= torch.arange(count).unsqueeze(1)).sum(1) - 1
    member = bag_of.unsqueeze(0) == torch.arange(bags).unsqueeze(1)
    if padding_idx >= 0:
        member = member & (flat != padding_idx).unsqueeze(0)
    rows = weight.index_select(0, flat)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights.reshape(-1, 1)
    sizes = member.sum(1)
    if mode == 2:
        candidates = torch.where(member.unsqueeze(-1), rows.unsqueeze(0), -math.inf)
        best, which = candidates.max(1)
        output = torch.where(sizes.unsqueeze(1) > 0, best, 0).to(weight.dtype)
        max_indices = torch.where(sizes.unsqueeze(1) > 0, flat[which], 0)
    else:
        output = member.to(rows.dtype) @ rows
        if mode == 1:
            output = output / sizes.clamp(min=1).unsqueeze(1).to(rows.dtype)
        max_indices = sizes if mode == 1 else torch.zeros(offsets.shape[0], dtype=torch.int64)
    fast = mode == 0 and padding_idx < 0
    offset2bag = torch.zeros(0, dtype=torch.int64) if fast else bag_of.clamp(0, bags - 1)
    bag_size = torch.zeros(offsets.shape[0], dtype=torch.int64) if mode == 0 else sizes
    return output, offset2bag, bag_size, max_indices


def _trilinear(
    i1: torch.Tensor,
    i2: torch.Tensor,
    i3: torch.Tensor,
    expand1: Sequence[int],
    expand2: Sequence[int],
    expand3: Sequence[int],
    sumdim: Sequence[int],
    unroll_dim: int = 1,
) -> torch.Tensor:
    # Each input is the full product's dims less its `expand` ones (size 1 there): one
    # einsum over the dims, summing `sumdim`; a dim no input has stays, of size 1.
    total = i1.dim() + len(expand1)
    letters = string.ascii_letters[:total]
    subscripts = [
        "".join(letters[d] for d in range(total) if d not in expand) for expand in (expand1, expand2, expand3)
    ]
    nowhere = [d for d in range(total) if all(d in expand for expand in (expand1, expand2, expand3))]
    kept = [d for d in range(total) if d not in sumdim and d not in nowhere]
    product = torch.einsum(f"{','.join(subscripts)}->{''.join(letters[d] for d in kept)}", i1, i2, i3)
    for position, d in enumerate(d for d in range(total) if d not in sumdim):
        if d in nowhere:
            product = product.unsqueeze(position)
    return product


def _bilinear(
    input1: torch.Tensor, input2: torch.Tensor, weight: torch.Tensor, bias: torch.Tensor | None = None
) -> torch.Tensor:
    # y[..., o] = sum_ij x1[..., i] W[o, i, j] x2[..., j] (+ b[o]): `_trilinear` on the
    # inputs flattened to rows, as torch's composite calls it.
    rows1 = input1.reshape(-1, input1.shape[-1])
    rows2 = input2.reshape(-1, input2.shape[-1])
    out = _trilinear(rows1, weight, rows2, [1, 3], [0], [1, 2], [2, 3])
    if bias is not None:
        out = out + bias
    return out.reshape(*input1.shape[:-1], weight.shape[0])


def _embedding_bag_padded(
    weight: torch.Tensor,
    indices: torch.Tensor,
    offsets: torch.Tensor,
    scale_grad_by_freq: bool = False,
    mode: int = 0,
    sparse: bool = False,
    per_sample_weights: torch.Tensor | None = None,
    include_last_offset: bool = False,
    padding_idx: int | None = None,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    # The composite `embedding_bag`: no padding index is -1 to the kernel.
    return _embedding_bag(
        weight, indices, offsets, scale_grad_by_freq, mode, sparse, per_sample_weights, include_last_offset,
        -1 if padding_idx is None else padding_idx,
    )


def _isin(
    elements: torch.Tensor | float,
    test_elements: torch.Tensor | float,
    *,
    assume_unique: bool = False,
    invert: bool = False,
) -> torch.Tensor:
    # Whether each element equals any test element, by comparing every pair (torch's
    # own decomposition sorts and searches for many test elements: the same answer).
    if isinstance(test_elements, torch.Tensor):
        tests = test_elements.reshape(-1)
        if isinstance(elements, torch.Tensor):
            found = (elements.unsqueeze(-1) == tests).any(-1)
        else:
            found = (tests == elements).any()
    else:
        assert isinstance(elements, torch.Tensor)
        found = elements == test_elements
    return ~found if invert else found


def _max_pool_backward(n: int) -> Callable[..., torch.Tensor]:
    """`max_poolNd_with_indices_backward`: each output's gradient goes to the input
    position its index names (flat within its plane), summed where windows share a
    maximum."""

    def backward(
        grad_output: torch.Tensor,
        self: torch.Tensor,
        kernel_size: Sequence[int],
        stride: Sequence[int],
        padding: Sequence[int],
        dilation: Sequence[int],
        ceil_mode: bool,
        indices: torch.Tensor,
    ) -> torch.Tensor:
        lead = list(self.shape[: self.dim() - n])
        plane = math.prod(self.shape[self.dim() - n :])
        flat = torch.zeros(*lead, plane, dtype=self.dtype).scatter_add(
            -1, indices.reshape(*lead, -1), grad_output.reshape(*lead, -1)
        )
        return flat.reshape(self.shape)

    return backward


def _linear_cross_entropy_loss(
    input: torch.Tensor,
    linear_weight: torch.Tensor,
    target: torch.Tensor,
    linear_bias: torch.Tensor | None,
    weight: torch.Tensor | None,
    reduction: str,
    ignore_index: int,
    label_smoothing: float,
    acc_dtype: torch.dtype,
) -> torch.Tensor:
    """`cross_entropy(linear(input), target)` in `acc_dtype`, unchunked: chunking the
    batch is torch's memory optimization, not a different loss. torch's op refuses
    label smoothing."""
    if label_smoothing != 0:
        raise ValueError("torch's chunked linear_cross_entropy has no label smoothing")
    logits = F.linear(
        input.to(acc_dtype), linear_weight.to(acc_dtype), None if linear_bias is None else linear_bias.to(acc_dtype)
    )
    classes = None if weight is None else weight.to(acc_dtype)
    loss = F.cross_entropy(logits, target, classes, ignore_index=ignore_index, reduction=reduction)
    return loss.to(input.dtype)


def _linear_cross_entropy_chunked(
    input: torch.Tensor,
    linear_weight: torch.Tensor,
    target: torch.Tensor,
    linear_bias: torch.Tensor | None,
    weight: torch.Tensor | None,
    reduction: str,
    ignore_index: int,
    label_smoothing: float,
    batch_chunk_size: int,
    acc_policy: str,
    acc_dtype: torch.dtype,
    allow_retain_graph: bool,
    compute_input_grad: bool,
    compute_linear_weight_grad: bool,
    compute_linear_bias_grad: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    # The loss, and the gradients torch precomputes for its backward: an inference
    # program asks for none, and they are empty then.
    if compute_input_grad or compute_linear_weight_grad or compute_linear_bias_grad:
        raise ValueError("linear_cross_entropy's precomputed gradients (a training program) are not supported")
    loss = _linear_cross_entropy_loss(
        input, linear_weight, target, linear_bias, weight, reduction, ignore_index, label_smoothing, acc_dtype
    )
    empty = torch.zeros(0, 0, dtype=input.dtype)
    return loss, empty, empty.clone(), torch.zeros(0, dtype=input.dtype)


def _linear_cross_entropy_chunked_no_reduction(
    input: torch.Tensor,
    linear_weight: torch.Tensor,
    target: torch.Tensor,
    linear_bias: torch.Tensor | None,
    weight: torch.Tensor | None,
    ignore_index: int,
    batch_chunk_size: int,
    acc_policy: str,
    acc_dtype: torch.dtype,
) -> torch.Tensor:
    return _linear_cross_entropy_loss(
        input, linear_weight, target, linear_bias, weight, "none", ignore_index, 0.0, acc_dtype
    )


def _linear_cross_entropy_ops() -> dict[OpOverload, Callable[..., Any]]:
    """torch's chunked linear-cross-entropy custom ops (registered by importing their
    module, which a program holding them has done)."""
    import torch.nn.modules.linear_cross_entropy  # noqa: F401  # pyright: ignore[reportUnusedImport] (imported to register torch.ops.torch_nn)

    ops = torch.ops.torch_nn
    return {
        ops._linear_cross_entropy_batch_chunked.default: _linear_cross_entropy_chunked,
        ops._linear_cross_entropy_batch_chunked_no_reduction.default: _linear_cross_entropy_chunked_no_reduction,
    }


_PADDING_OPS: dict[str, tuple[OpOverload, ...]] = {
    "reflect": (_A.reflection_pad1d.default, _A.reflection_pad2d.default, _A.reflection_pad3d.default),
    "replicate": (_A.replication_pad1d.default, _A.replication_pad2d.default, _A.replication_pad3d.default),
}


def _pad(self: torch.Tensor, pad: list[int], mode: str = "constant", value: float | None = None) -> torch.Tensor:
    """`F.pad`'s op by its mode's own. torch's C++ kernel reads the input's sizes as
    plain ints (`aten.size`), which, traced on symbolic sizes, fixes a dynamic batch to
    the export's value."""
    if mode == "constant":
        return _A.constant_pad_nd.default(self, pad, 0.0 if value is None else value)
    if mode == "circular":
        return _circular_pad(self, pad)
    return _PADDING_OPS[mode][len(pad) // 2 - 1](self, pad)


def _circular_pad(self: torch.Tensor, pad: list[int]) -> torch.Tensor:
    """Each padded dim, last first, cropped by its negative pads, then wrapped around:
    its last `low` elements before it and its first `high` after (torch's kernel copies into slices of a fresh tensor,
    which only its whole-program re-trace makes functional)."""
    out = self
    for pair in range(len(pad) // 2):
        dim, low, high = self.dim() - 1 - pair, pad[2 * pair], pad[2 * pair + 1]
        crop_low, crop_high = max(0, -low), max(0, -high)
        kept = out.narrow(dim, crop_low, out.shape[dim] - crop_low - crop_high)  # negative pads crop first
        size = kept.shape[dim]
        torch._check(low <= size and high <= size, lambda: "circular padding wider than its dim")  # pyright: ignore[reportPrivateUsage, reportUnknownMemberType] (torch's documented check of a symbolic condition)
        pieces = [kept.narrow(dim, size - low, low)] if low > 0 else []
        pieces.append(kept)
        if high > 0:
            pieces.append(kept.narrow(dim, 0, high))
        out = torch.cat(pieces, dim) if len(pieces) > 1 else kept
    return out


_ONEDNN_LSTM = 2
"""oneDNN's `rnn_kind` of an LSTM, the only kind torch runs through `mkldnn_rnn_layer`."""


def _mkldnn_lstm_layer(
    input: torch.Tensor,
    weight_ih: torch.Tensor,
    weight_hh: torch.Tensor,
    bias_ih: torch.Tensor,
    bias_hh: torch.Tensor,
    hx: torch.Tensor,
    cx: torch.Tensor,
    reverse: bool,
    batch_sizes: list[int],
    mode: int,
    hidden_size: int,
    num_layers: int,
    has_biases: bool,
    bidirectional: bool,
    batch_first: bool,
    train: bool,
) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """One direction of one LSTM layer, the op torch's CPU `lstm` runs per layer (its
    decomposition calls it with `[1, batch, hidden]` states), unrolled over the
    sequence: gates `x W_ih^T + b_ih + h W_hh^T + b_hh` split into input, forget, cell
    and output. The sequence length must be static: a dynamic one is a loop MLX cannot
    express (its trace fixes the length, which the importer refuses by name)."""
    if mode != _ONEDNN_LSTM or batch_sizes:
        raise NotImplementedError("mkldnn_rnn_layer: only unpacked LSTM layers")
    steps = input.transpose(0, 1) if batch_first else input
    projected = torch.nn.functional.linear(steps, weight_ih, bias_ih if has_biases else None)
    h, c = hx[0], cx[0]
    outputs: list[torch.Tensor] = []
    order = range(steps.shape[0] - 1, -1, -1) if reverse else range(steps.shape[0])
    for t in order:
        gates = projected[t] + torch.nn.functional.linear(h, weight_hh, bias_hh if has_biases else None)
        i, f, g, o = gates.chunk(4, dim=-1)
        c = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
        h = torch.sigmoid(o) * torch.tanh(c)
        outputs.append(h)
    if reverse:
        outputs.reverse()
    output = torch.stack(outputs)
    workspace = torch.empty(0, dtype=torch.uint8)
    return output.transpose(0, 1) if batch_first else output, h.unsqueeze(0), c.unsqueeze(0), workspace


NN_DECOMPOSITIONS: dict[OpOverload, Callable[..., Any]] = {
    _A.mkldnn_rnn_layer.default: _mkldnn_lstm_layer,
    _A.pad.default: _pad,
    _A.adaptive_max_pool2d.default: _adaptive_max_pool,
    _A.adaptive_max_pool3d.default: _adaptive_max_pool,
    _A._adaptive_avg_pool3d.default: _adaptive_avg_pool,
    _A._cdist_forward.default: _cdist,
    _A._pdist_forward.default: _pdist,
    # The composite ops whose own decompositions call the ops above: make_fx traces
    # with torch's table alone, so each is decomposed here whole.
    _A.adaptive_max_pool1d.default: _adaptive_max_pool,
    _A.adaptive_avg_pool3d.default: _adaptive_avg_pool,
    _A.cdist.default: _cdist,
    _A.pdist.default: _pdist,
    _A.bilinear.default: _bilinear,
    _A.embedding_bag.default: _embedding_bag_padded,
    _A.embedding_bag.padding_idx: _embedding_bag_padded,
    _A.isin.Tensor_Tensor: _isin,
    _A.isin.Tensor_Scalar: _isin,
    _A.isin.Scalar_Tensor: _isin,
    _A.diagonal_scatter.default: _diagonal_scatter,
    _A.searchsorted.Tensor: _searchsorted,
    _A.searchsorted.Scalar: _searchsorted,
    _A.histc.default: _histc,
    _A.histogram.bin_ct: _histogram,
    _A.histogram.bins_tensor: _histogram_edges,
    _A.histogramdd.default: _histogramdd,
    _A.histogramdd.int_bins: _histogramdd,
    _A.histogramdd.TensorList_bins: _histogramdd,
    _A._histogramdd_bin_edges.default: _histogramdd_edges,
    _A._histogramdd_from_bin_cts.default: _histogramdd_from_counts,
    _A._histogramdd_from_bin_tensors.default: _histogramdd_from_edges,
    _A.bucketize.Tensor: _bucketize,
    _A.bucketize.Scalar: _bucketize,
    _A.segment_reduce.default: _segment_reduce,
    _A.mode.default: _mode,
    _A._embedding_bag_forward_only.default: _embedding_bag,
    _A._trilinear.default: _trilinear,
    _A.grid_sampler_3d.default: _grid_sampler_3d,
    **_linear_cross_entropy_ops(),
    _A._upsample_bilinear2d_aa.default: _upsample_bilinear2d_aa,
    _A._upsample_bilinear2d_aa.vec: _upsample_bilinear2d_aa_vec,
    _A.max_pool2d_with_indices_backward.default: _max_pool_backward(2),
    _A.max_pool3d_with_indices_backward.default: _max_pool_backward(3),
}
"""mlxir's decompositions of neural-network ops, by the op torch.export records."""
