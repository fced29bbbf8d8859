"""Runtime kernels of indexing (take, gather, scatter, slice updates), shapes (reshape,
transpose, concatenate, slice, pad, tile) and creation (full, random draws, arange,
triangles, diagonals, constants), run from IR text through the reference interpreter
against numpy or eager torch (`test_kernels.py` says how)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
import torch
from kernel_helpers import check, check_exact, floats, ints, ir, rng, run_ir

import mlxir
from mlxir.codegen import serialize
from mlxir.evaluator import arrays as dtypes
from mlxir.runtime.ir_interpreter import Program, parse_module

# --------------------------------------------------------------------------- indexing


def test_take() -> None:
    x = floats((5, 16))
    idx = np.array([[0, 4, 1], [3, 3, 2]], np.int32)
    flat = np.array([0, 79, 17, 3, 40], np.int64)
    text = """func.func @forward(%x: tensor<?x16xf32>, %idx: tensor<2x3xi32>, %flat: tensor<5xi64>) -> (tensor<2x3x16xf32>, tensor<?x2x3xf32>, tensor<5xf32>) {
      %rows = mlx.take %x, %idx axis 0 : tensor<?x16xf32>, tensor<2x3xi32> -> tensor<2x3x16xf32>
      %cols = mlx.take %x, %idx axis -1 : tensor<?x16xf32>, tensor<2x3xi32> -> tensor<?x2x3xf32>
      %elems = mlx.take %x, %flat : tensor<?x16xf32>, tensor<5xi64> -> tensor<5xf32>
      func.return %rows, %cols, %elems : tensor<2x3x16xf32>, tensor<?x2x3xf32>, tensor<5xf32>
    }"""
    rows, cols, elems = run_ir(text, x, idx, flat)
    check_exact(rows, x[idx].astype(np.float32))
    check_exact(cols, x[:, idx].astype(np.float32))
    check_exact(elems, x.reshape(-1)[flat].astype(np.float32))  # flattened input


def test_take_along_axis() -> None:
    x = floats((3, 4))
    picked = np.array([[0], [3], [2]], np.uint32)
    rows = np.array([[2, 0, 1, 1], [0, 0, 2, 1]], np.int64)
    col = np.array([[1], [0]], np.int32)  # broadcasts against x's other dim
    text = """func.func @forward(%x: tensor<?x4xf32>, %p: tensor<?x1xui32>, %r: tensor<2x4xi64>, %c: tensor<2x1xi32>) -> (tensor<?x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>) {
      %a = mlx.take_along_axis %x, %p axis 1 : tensor<?x4xf32>, tensor<?x1xui32> -> tensor<?x1xf32>
      %b = mlx.take_along_axis %x, %r axis 0 : tensor<?x4xf32>, tensor<2x4xi64> -> tensor<2x4xf32>
      %c2 = mlx.take_along_axis %x, %c axis 0 : tensor<?x4xf32>, tensor<2x1xi32> -> tensor<2x4xf32>
      func.return %a, %b, %c2 : tensor<?x1xf32>, tensor<2x4xf32>, tensor<2x4xf32>
    }"""
    a, b, c = run_ir(text, x, picked, rows, col)
    tx = torch.from_numpy(x)
    check_exact(a, torch.gather(tx, 1, torch.from_numpy(picked.astype(np.int64))).float().numpy())
    check_exact(b, np.take_along_axis(x, rows, 0).astype(np.float32))
    check_exact(c, np.take_along_axis(x, np.broadcast_to(col, (2, 4)), 0).astype(np.float32))


def gather_reference(x: np.ndarray, indices: Sequence[np.ndarray], axes: Sequence[int],
                     sizes: Sequence[int]) -> np.ndarray:
    """The definition, elementwise: `out[b, s] = x[idx_k[b] + s_a (indexed), s_d (else)]`."""
    axes = [a % x.ndim for a in axes]
    batch = np.broadcast_shapes(*(i.shape for i in indices)) if indices else ()
    idx = [np.broadcast_to(i, batch) for i in indices]
    out = np.empty((*batch, *sizes), x.dtype)
    for b in np.ndindex(*batch):
        for s in np.ndindex(*sizes):
            where = [int(idx[axes.index(d)][b]) + s[d] if d in axes else s[d]
                     for d in range(x.ndim)]
            out[(*b, *s)] = x[tuple(where)]
    return out


def test_gather() -> None:
    x = floats((6, 8, 16))
    i = np.array([0, 5, 2, 1, 3], np.int32)
    j = np.array([[0], [2], [4]], np.int64)
    text = """func.func @forward(%x: tensor<?x8x16xf32>, %i: tensor<5xi32>, %j: tensor<3x1xi64>) -> (tensor<5x1x8x16xf32>, tensor<3x5x1x1x16xf32>, tensor<5x?x8x1xf32>, tensor<3x1x1x8x4xf32>) {
      %n = mlx.dim %x axis 0 : tensor<?x8x16xf32>
      %rows = mlx.gather %x[%i] axes [0] slice_sizes [1, 8, 16] : tensor<?x8x16xf32>, (tensor<5xi32>) -> tensor<5x1x8x16xf32>
      %pairs = mlx.gather %x[%j, %i] axes [0, 1] slice_sizes [1, 1, 16] : tensor<?x8x16xf32>, (tensor<3x1xi64>, tensor<5xi32>) -> tensor<3x5x1x1x16xf32>
      %cols = mlx.gather %x[%i] axes [-1] slice_sizes [%n, 8, 1] : tensor<?x8x16xf32>, (tensor<5xi32>) -> tensor<5x?x8x1xf32>
      %part = mlx.gather %x[%j] axes [0] slice_sizes [1, 8, 4] : tensor<?x8x16xf32>, (tensor<3x1xi64>) -> tensor<3x1x1x8x4xf32>
      func.return %rows, %pairs, %cols, %part : tensor<5x1x8x16xf32>, tensor<3x5x1x1x16xf32>, tensor<5x?x8x1xf32>, tensor<3x1x1x8x4xf32>
    }"""
    rows, pairs, cols, part = run_ir(text, x, i, j)
    check_exact(rows, gather_reference(x, [i], [0], [1, 8, 16]))
    check_exact(pairs, gather_reference(x, [j, i], [0, 1], [1, 1, 16]))
    check_exact(cols, gather_reference(x, [i], [2], [6, 8, 1]))
    check_exact(part, gather_reference(x, [j], [0], [1, 8, 4]))
    # x[:, i, j] (docs/semantics.md §2, step 5: gather, then transpose) starts here
    a = np.arange(24, dtype=np.float64).reshape(2, 3, 4)
    text = """func.func @forward(%x: tensor<2x3x4xf32>, %i: tensor<2xi64>, %j: tensor<2xi64>) -> tensor<2x2x1x1xf32> {
      %g = mlx.gather %x[%i, %j] axes [1, 2] slice_sizes [2, 1, 1] : tensor<2x3x4xf32>, (tensor<2xi64>, tensor<2xi64>) -> tensor<2x2x1x1xf32>
      func.return %g : tensor<2x2x1x1xf32>
    }"""
    (g,) = run_ir(text, a, np.array([0, 2]), np.array([1, 3]))
    check_exact(g[:, :, 0, 0].T, [[1, 11], [13, 23]])


def test_gather_wide_slices_on_indexed_axes() -> None:
    """The general form: a slice of several elements starting at each index."""
    x = floats((6, 7, 5))
    i = np.array([[0, 3], [4, 1]], np.int32)
    j = np.array([2, 0], np.int32)
    text = """func.func @forward(%x: tensor<6x7x?xf32>, %i: tensor<2x2xi32>, %j: tensor<2xi32>, %w: index) -> (tensor<2x2x2x3x?xf32>, tensor<2x3x7x2xf32>) {
      %a = mlx.gather %x[%i, %j] axes [0, 1] slice_sizes [2, 3, %w] : tensor<6x7x?xf32>, (tensor<2x2xi32>, tensor<2xi32>) -> tensor<2x2x2x3x?xf32>
      %b = mlx.gather %x[%j] axes [2] slice_sizes [3, 7, 2] : tensor<6x7x?xf32>, (tensor<2xi32>) -> tensor<2x3x7x2xf32>
      func.return %a, %b : tensor<2x2x2x3x?xf32>, tensor<2x3x7x2xf32>
    }"""
    a, b = run_ir(text, x, i, j, 4)
    check_exact(a, gather_reference(x, [i, j], [0, 1], [2, 3, 4]))
    check_exact(b, gather_reference(x, [j], [2], [3, 7, 2]))


def test_gather_unsorted_axes() -> None:
    """Index tensors listed against axes out of order (`[2, 0]`), both forms."""
    x = floats((4, 5, 6))
    i, j = np.array([[1, 3]], np.int32), np.array([0, 2], np.int32)
    text = """func.func @forward(%x: tensor<4x5x6xf32>, %i: tensor<1x2xi32>, %j: tensor<2xi32>) -> (tensor<1x2x1x5x1xf32>, tensor<1x2x2x5x1xf32>) {
      %a = mlx.gather %x[%i, %j] axes [2, 0] slice_sizes [1, 5, 1] : tensor<4x5x6xf32>, (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2x1x5x1xf32>
      %b = mlx.gather %x[%i, %j] axes [2, 0] slice_sizes [2, 5, 1] : tensor<4x5x6xf32>, (tensor<1x2xi32>, tensor<2xi32>) -> tensor<1x2x2x5x1xf32>
      func.return %a, %b : tensor<1x2x1x5x1xf32>, tensor<1x2x2x5x1xf32>
    }"""
    a, b = run_ir(text, x, i, j)
    check_exact(a, gather_reference(x, [i, j], [2, 0], [1, 5, 1]))
    check_exact(b, gather_reference(x, [i, j], [2, 0], [2, 5, 1]))


def scatter_reference(x: np.ndarray, indices: Sequence[np.ndarray], axes: Sequence[int],
                      updates: np.ndarray, reduce: str) -> np.ndarray:
    axes = [a % x.ndim for a in axes]
    out = x.copy()
    batch_rank = updates.ndim - x.ndim
    batch = updates.shape[:batch_rank]
    idx = [np.broadcast_to(i, batch) for i in indices]
    combine = {"none": lambda old, new: new, "add": np.add, "prod": np.multiply,
               "max": np.maximum, "min": np.minimum}[reduce]
    for b in np.ndindex(*batch):
        for s in np.ndindex(*updates.shape[batch_rank:]):
            where = tuple(int(idx[axes.index(d)][b]) + s[d] if d in axes else s[d]
                          for d in range(x.ndim))
            out[where] = combine(out[where], updates[(*b, *s)])
    return out


@pytest.mark.parametrize("reduce", ["none", "add", "prod", "max", "min"])
def test_scatter(reduce: str) -> None:
    x = floats((6, 8), seed=1)
    unique = reduce == "none"  # a plain write with duplicate indices is unordered
    i = np.array([4, 0, 2, 5, 1] if unique else [4, 0, 4, 5, 0], np.int64)
    j = np.array([7, 1, 3, 0, 6] if unique else [7, 1, 7, 0, 6], np.int64)
    rows = floats((5, 1, 8), seed=2)
    elems = floats((5, 1, 1), seed=3)
    attr = "" if reduce == "none" else f' reduce "{reduce}"'
    text = ir("""func.func @forward(%x: tensor<?x8xf32>, %i: tensor<5xi64>, %j: tensor<5xi64>, %rows: tensor<5x1x8xf32>, %elems: tensor<5x1x1xf32>) -> (tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>) {
      %a = mlx.scatter %x[%i] axes [0], %rows$R : tensor<?x8xf32>, (tensor<5xi64>), tensor<5x1x8xf32> -> tensor<?x8xf32>
      %b = mlx.scatter %x[%i, %j] axes [0, -1], %elems$R : tensor<?x8xf32>, (tensor<5xi64>, tensor<5xi64>), tensor<5x1x1xf32> -> tensor<?x8xf32>
      %c = mlx.scatter %x[%j] axes [1], %elems$R : tensor<?x8xf32>, (tensor<5xi64>), tensor<5x1x1xf32> -> tensor<?x8xf32>
      func.return %a, %b, %c, %x : tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>, tensor<?x8xf32>
    }""", R=attr)
    a, b, c, same = run_ir(text, x, i, j, rows, elems)
    check(a, scatter_reference(x, [i], [0], rows, reduce))
    check(b, scatter_reference(x, [i, j], [0, 1], elems, reduce))
    check(c, scatter_reference(x, [j], [1], elems, reduce))
    check_exact(same, x.astype(np.float32))  # the operand itself is untouched


@pytest.mark.parametrize("reduce", ["none", "add"])
def test_scatter_wide_slices(reduce: str) -> None:
    """Slices wider than one element on an indexed axis, partial other axes, and an
    indexed last axis (moved to the front and back)."""
    x = floats((6, 7, 5), seed=1)
    i = np.array([0, 3], np.int32)
    j = np.array([[4], [1]], np.int32)
    upd = floats((2, 2, 2, 3, 4), seed=2)
    slab = floats((2, 1, 6, 2), seed=3)
    unit = floats((2, 6, 7, 1), seed=4)
    attr = "" if reduce == "none" else f' reduce "{reduce}"'
    text = ir("""func.func @forward(%x: tensor<6x7x5xf32>, %i: tensor<2xi32>, %j: tensor<2x1xi32>, %u: tensor<2x2x2x3x4xf32>, %s: tensor<2x1x6x2xf32>, %unit: tensor<2x6x7x1xf32>) -> (tensor<6x7x5xf32>, tensor<6x7x5xf32>, tensor<6x7x5xf32>) {
      %a = mlx.scatter %x[%j, %i] axes [0, 1], %u$R : tensor<6x7x5xf32>, (tensor<2x1xi32>, tensor<2xi32>), tensor<2x2x2x3x4xf32> -> tensor<6x7x5xf32>
      %b = mlx.scatter %x[%i] axes [2], %s$R : tensor<6x7x5xf32>, (tensor<2xi32>), tensor<2x1x6x2xf32> -> tensor<6x7x5xf32>
      %c = mlx.scatter %x[%i] axes [2], %unit$R : tensor<6x7x5xf32>, (tensor<2xi32>), tensor<2x6x7x1xf32> -> tensor<6x7x5xf32>
      func.return %a, %b, %c : tensor<6x7x5xf32>, tensor<6x7x5xf32>, tensor<6x7x5xf32>
    }""", R=attr)
    a, b, c = run_ir(text, x, i, j, upd, slab, unit)
    check(a, scatter_reference(x, [j, i], [0, 1], upd, reduce))
    check(b, scatter_reference(x, [i], [2], slab, reduce))
    check(c, scatter_reference(x, [i], [2], unit, reduce))  # unit slices, a 3-cycle perm


def test_slice_update() -> None:
    cache = floats((1, 2, 6, 4), seed=1)
    new = floats((1, 2, 2, 4), seed=2)
    text = """func.func @forward(%cache: tensor<1x2x?x4xf32>, %new: tensor<1x2x2x4xf32>, %pos: index) -> (tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>) {
      %a = mlx.slice_update %cache, %new start [1] axes [2] : tensor<1x2x?x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x?x4xf32>
      %b = mlx.slice_update %cache, %new start [%pos, 0] axes [-2, 0] : tensor<1x2x?x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x?x4xf32>
      %c = mlx.slice_update %cache, %new start [-2] axes [2] : tensor<1x2x?x4xf32>, tensor<1x2x2x4xf32> -> tensor<1x2x?x4xf32>
      func.return %a, %b, %c : tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>, tensor<1x2x?x4xf32>
    }"""
    program = Program(parse_module(text), {})

    def written(start: int) -> np.ndarray:
        out = cache.copy()
        out[:, :, start:start + 2] = new
        return out

    for pos, clamped in [(3, 3), (4, 4), (0, 0), (5, 4), (100, 4), (-1, 4), (-6, 0), (-50, 0)]:
        a, b, c = (dtypes.to_numpy(v) for v in program([cache, new, pos]))
        check_exact(a, written(1).astype(np.float32))
        check_exact(b, written(clamped).astype(np.float32))  # clamped inside, like XLA
        check_exact(c, written(4).astype(np.float32))


@pytest.mark.parametrize("compiled", [False, True], ids=["interpreted", "compiled"])
def test_dynamic_slice_update_clamps_a_start_the_trace_does_not_fix(compiled: bool) -> None:
    """The start is a tensor: one compiled trace serves every start (the decode step's
    cache write), and an out-of-range start is clamped as `mlx.slice_update` clamps
    it, never written past the cache (MLX's own DynamicSliceUpdate does)."""
    cache, new, square, patch = (
        floats(shape, seed=seed).astype(np.float32)
        for seed, shape in enumerate([(1, 2, 6, 4), (1, 2, 2, 4), (3, 5), (2, 2)])
    )
    text = """func.func @forward(%cache: tensor<1x2x?x4xf32>, %new: tensor<1x2x2x4xf32>, %pos: tensor<i64>, %m: tensor<3x5xf32>, %p: tensor<2x2xf32>, %at: tensor<2xi32>) -> (tensor<1x2x?x4xf32>, tensor<3x5xf32>) {
      %a = mlx.dynamic_slice_update %cache, %new start %pos axes [2] : tensor<1x2x?x4xf32>, tensor<1x2x2x4xf32>, tensor<i64> -> tensor<1x2x?x4xf32>
      %b = mlx.dynamic_slice_update %m, %p start %at axes [1, 0] : tensor<3x5xf32>, tensor<2x2xf32>, tensor<2xi32> -> tensor<3x5xf32>
      func.return %a, %b : tensor<1x2x?x4xf32>, tensor<3x5xf32>
    }"""
    program = mlxir.Program(serialize(parse_module(text)), compile=compiled)

    def written(start: int) -> np.ndarray:
        out = cache.copy()
        out[:, :, start:start + 2] = new
        return out

    def patched(column: int, row: int) -> np.ndarray:
        out = square.copy()
        out[row:row + 2, column:column + 2] = patch
        return out

    cases = [(3, 3, (1, 1), (1, 1)), (4, 4, (3, 0), (3, 0)), (0, 0, (0, 1), (0, 1)),
             (5, 4, (9, 9), (3, 1)), (100, 4, (-1, 0), (3, 0)), (-1, 4, (-9, -9), (0, 0)),
             (-6, 0, (2, -1), (2, 1)), (-50, 0, (0, 0), (0, 0))]
    for pos, clamped, at, at_clamped in cases:
        a, b = program(cache, new, np.array(pos), square, patch, np.array(at, dtype=np.int32))
        check_exact(dtypes.to_numpy(a), written(clamped))
        check_exact(dtypes.to_numpy(b), patched(*at_clamped))
    assert program.traces == (1 if compiled else 0)
    with pytest.raises(RuntimeError, match="does not fit input"):
        program(cache[:, :, :1], new, np.array(0), square, patch, np.array((0, 0), dtype=np.int32))


# --------------------------------------------------------------------------- shapes


def test_reshape_broadcast_to() -> None:
    x = floats((3, 4, 8))
    col = floats((3, 1))
    text = """func.func @forward(%x: tensor<?x4x8xf32>, %col: tensor<?x1xf32>) -> (tensor<?x32xf32>, tensor<?x8xf32>, tensor<1x?x1xf32>, tensor<2x?x8xf32>) {
      %n = mlx.dim %x axis 0 : tensor<?x4x8xf32>
      %flat = mlx.reshape %x [%n, 32] : tensor<?x4x8xf32> -> tensor<?x32xf32>
      %c4 = arith.constant 4 : index
      %n4 = arith.muli %n, %c4 : index
      %rows = mlx.reshape %x [%n4, 8] : tensor<?x4x8xf32> -> tensor<?x8xf32>
      %m = mlx.dim %col axis 0 : tensor<?x1xf32>
      %r3 = mlx.reshape %col [1, %m, 1] : tensor<?x1xf32> -> tensor<1x?x1xf32>
      %wide = mlx.broadcast_to %col [2, %m, 8] : tensor<?x1xf32> -> tensor<2x?x8xf32>
      func.return %flat, %rows, %r3, %wide : tensor<?x32xf32>, tensor<?x8xf32>, tensor<1x?x1xf32>, tensor<2x?x8xf32>
    }"""
    flat, rows, r3, wide = run_ir(text, x, col)
    check_exact(flat, x.reshape(3, 32).astype(np.float32))
    check_exact(rows, x.reshape(12, 8).astype(np.float32))
    check_exact(r3, col.reshape(1, 3, 1).astype(np.float32))
    check_exact(wide, np.broadcast_to(col, (2, 3, 8)).astype(np.float32))


def test_transpose_expand_squeeze() -> None:
    x = floats((2, 3, 8))
    text = """func.func @forward(%x: tensor<2x?x8xf32>) -> (tensor<8x2x?xf32>, tensor<1x2x?x8x1xf32>, tensor<2x?x8xf32>, tensor<2x8xf32>) {
      %t = mlx.transpose %x [2, 0, 1] : tensor<2x?x8xf32> -> tensor<8x2x?xf32>
      %e = mlx.expand_dims %x [0, -1] : tensor<2x?x8xf32> -> tensor<1x2x?x8x1xf32>
      %s = mlx.squeeze %e [0, 4] : tensor<1x2x?x8x1xf32> -> tensor<2x?x8xf32>
      %s1 = mlx.squeeze %x [-2] : tensor<2x?x8xf32> -> tensor<2x8xf32>
      func.return %t, %e, %s, %s1 : tensor<8x2x?xf32>, tensor<1x2x?x8x1xf32>, tensor<2x?x8xf32>, tensor<2x8xf32>
    }"""
    with pytest.raises(ValueError):  # squeezing a dynamic dim that is not 1
        run_ir(text, x)
    x1 = floats((2, 1, 8))
    t, e, s, s1 = run_ir(text, x1)
    check_exact(t, x1.transpose(2, 0, 1).astype(np.float32))
    check_exact(e, x1[None, ..., None].astype(np.float32))
    check_exact(s, x1.astype(np.float32))
    check_exact(s1, x1[:, 0].astype(np.float32))


def test_concatenate_split() -> None:
    a, b, c = floats((2, 5), seed=1), floats((3, 5), seed=2), floats((2, 4), seed=3)
    text = """func.func @forward(%a: tensor<2x?xf32>, %b: tensor<3x?xf32>, %c: tensor<?x4xf32>) -> (tensor<5x?xf32>, tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x6xf32>, tensor<1x4xf32>, tensor<?x4xf32>, tensor<2x?xf32>, tensor<?x0xf32>) {
      %ab = mlx.concatenate %a, %b axis 0 : tensor<2x?xf32>, tensor<3x?xf32> -> tensor<5x?xf32>
      %wide = mlx.concatenate %c, %c, %c axis -1 : tensor<?x4xf32>, tensor<?x4xf32>, tensor<?x4xf32> -> tensor<?x12xf32>
      %p:4 = mlx.split %wide at [4, 6, 20] axis 1 : tensor<?x12xf32> -> tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x6xf32>, tensor<?x0xf32>
      %q:2 = mlx.split %c at [1] axis 0 : tensor<?x4xf32> -> tensor<1x4xf32>, tensor<?x4xf32>
      %whole = mlx.split %a at [] axis 1 : tensor<2x?xf32> -> tensor<2x?xf32>
      func.return %ab, %p#0, %p#1, %p#2, %q#0, %q#1, %whole, %p#3 : tensor<5x?xf32>, tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x6xf32>, tensor<1x4xf32>, tensor<?x4xf32>, tensor<2x?xf32>, tensor<?x0xf32>
    }"""
    ab, p0, p1, p2, q0, q1, whole, empty = run_ir(text, a, b, c)
    wide = np.concatenate([c, c, c], axis=1).astype(np.float32)
    check_exact(ab, np.concatenate([a, b]).astype(np.float32))
    for got, ref in zip((p0, p1, p2, empty), np.split(wide, [4, 6, 20], axis=1), strict=True):
        check_exact(got, ref)  # a split point past the end clamps, as in numpy
    check_exact(q0, c[:1].astype(np.float32))
    check_exact(q1, c[1:].astype(np.float32))
    check_exact(whole, a.astype(np.float32))


def test_slice() -> None:
    x = floats((8, 6, 16))
    text = """func.func @forward(%x: tensor<8x?x16xf32>, %lo: index) -> (tensor<4x5x8xf32>, tensor<4x?x8xf32>, tensor<8x4x4xf32>, tensor<0x?x8xf32>, tensor<8x?x16xf32>, tensor<3x?x2xf32>) {
      %n = mlx.dim %x axis 1 : tensor<8x?x16xf32>
      %c1 = arith.constant 1 : index
      %hi = arith.subi %n, %c1 : index
      %a = mlx.slice %x [0, 0, 0] to [8, 5, 16] step [2, 1, 2] : tensor<8x?x16xf32> -> tensor<4x5x8xf32>
      %b = mlx.slice %x [0, %lo, 0] to [8, %hi, 16] step [2, 1, 2] : tensor<8x?x16xf32> -> tensor<4x?x8xf32>
      %c = mlx.slice %x [-1, 0, 15] to [-9, 4, 0] step [-1, 1, -4] : tensor<8x?x16xf32> -> tensor<8x4x4xf32>
      %d = mlx.slice %x [2, 1, 0] to [2, 9223372036854775807, -8] step [1, 1, 1] : tensor<8x?x16xf32> -> tensor<0x?x8xf32>
      %e = mlx.slice %x [-9223372036854775807, 0, 0] to [9223372036854775807, %n, 16] step [1, 1, 1] : tensor<8x?x16xf32> -> tensor<8x?x16xf32>
      %f = mlx.slice %x [6, %hi, 9] to [0, -100, 3] step [-2, -2, -3] : tensor<8x?x16xf32> -> tensor<3x?x2xf32>
      func.return %a, %b, %c, %d, %e, %f : tensor<4x5x8xf32>, tensor<4x?x8xf32>, tensor<8x4x4xf32>, tensor<0x?x8xf32>, tensor<8x?x16xf32>, tensor<3x?x2xf32>
    }"""
    a, b, c, d, e, f = run_ir(text, x, 2)
    x32 = x.astype(np.float32)
    check_exact(a, x32[0:8:2, 0:5, 0:16:2])
    check_exact(b, x32[0:8:2, 2:5, 0:16:2])
    check_exact(c, x32[-1:-9:-1, 0:4, 15:0:-4])
    check_exact(d, x32[2:2, 1:, 0:-8])
    check_exact(e, x32)
    check_exact(f, x32[6:0:-2, 5:-100:-2, 9:3:-3])


@pytest.mark.parametrize("ty", ["f32", "i32", "i1"])
def test_pad_tile(ty: str) -> None:
    x = {"f32": floats((2, 3)), "i32": ints((2, 3)), "i1": rng().random((2, 3)) > 0.5}[ty]
    text = ir("""func.func @forward(%x: tensor<2x?x$T>) -> (tensor<4x?x$T>, tensor<2x?x$T>, tensor<6x?x$T>, tensor<2x2x?x$T>) {
      %p = mlx.pad %x low [1, 0] high [1, 3] value -1.500000e+00 : tensor<2x?x$T> -> tensor<4x?x$T>
      %z = mlx.pad %x low [0, 0] high [0, 0] value 0.000000e+00 : tensor<2x?x$T> -> tensor<2x?x$T>
      %t = mlx.tile %x [3, 2] : tensor<2x?x$T> -> tensor<6x?x$T>
      %u = mlx.tile %x [2, 1, 2] : tensor<2x?x$T> -> tensor<2x2x?x$T>
      func.return %p, %z, %t, %u : tensor<4x?x$T>, tensor<2x?x$T>, tensor<6x?x$T>, tensor<2x2x?x$T>
    }""", T=ty)
    p, z, t, u = run_ir(text, x)
    np_type = {"f32": np.float32, "i32": np.int32, "i1": np.bool_}[ty]
    value = torch.tensor(-1.5).to({"f32": torch.float32, "i32": torch.int32, "i1": torch.bool}[ty])
    ref = torch.nn.functional.pad(torch.from_numpy(x.astype(np_type)), (0, 3, 1, 1),
                                  value=float(value))
    check_exact(p, ref.numpy().astype(np_type), np_type)  # -1.5 as i32 is -1 (toward zero)
    check_exact(z, x.astype(np_type))
    check_exact(t, np.tile(x, (3, 2)).astype(np_type))
    check_exact(u, np.tile(x, (2, 1, 2)).astype(np_type))


# --------------------------------------------------------------------------- creation


def test_full_zeros_ones() -> None:
    x = floats((3, 16))
    text = """func.func @forward(%x: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<4x4xi1>, tensor<?x16xf32>, tensor<i64>, tensor<2x3xbf16>, tensor<?x?xi1>, tensor<?x2xf16>) {
      %n = mlx.dim %x axis 0 : tensor<?x16xf32>
      %v = mlx.constant dense<-1.000000e+09> : tensor<f32>
      %full = mlx.full [%n, 16], %v : tensor<f32> -> tensor<?x16xf32>
      %t = mlx.constant dense<true> : tensor<i1>
      %mask = mlx.full [4, 4], %t : tensor<i1> -> tensor<4x4xi1>
      %z = mlx.zeros [%n, 16] : tensor<?x16xf32>
      %z0 = mlx.zeros [] : tensor<i64>
      %o = mlx.ones [2, 3] : tensor<2x3xbf16>
      %o1 = mlx.ones [%n, %n] : tensor<?x?xi1>
      %h = mlx.constant dense<2.500000e-01> : tensor<f16>
      %fh = mlx.full [%n, 2], %h : tensor<f16> -> tensor<?x2xf16>
      func.return %full, %mask, %z, %z0, %o, %o1, %fh : tensor<?x16xf32>, tensor<4x4xi1>, tensor<?x16xf32>, tensor<i64>, tensor<2x3xbf16>, tensor<?x?xi1>, tensor<?x2xf16>
    }"""
    full, mask, z, z0, o, o1, fh = run_ir(text, x)
    check_exact(full, np.full((3, 16), -1e9, np.float32), np.float32)
    check_exact(mask, np.ones((4, 4), bool), np.bool_)
    check_exact(z, np.zeros((3, 16), np.float32), np.float32)
    check_exact(z0, np.zeros((), np.int64), np.int64)
    check_exact(o, np.ones((2, 3), np.float32))  # bf16 comes back as float32, exactly
    check_exact(o1, np.ones((3, 3), bool), np.bool_)
    check_exact(fh, np.full((3, 2), 0.25, np.float16), np.float16)


def test_random_draws_are_mlx_generators() -> None:
    """`mlx.random_uniform`/`random_normal` draw from MLX's global generator: seeded,
    they give exactly `mx.random`'s own values; each run draws afresh."""
    import mlx.core as mx

    x = floats((3, 16))
    text = """func.func @forward(%x: tensor<?x16xf32>) -> (tensor<?x16xf32>, tensor<4000xbf16>) {
      %n = mlx.dim %x axis 0 : tensor<?x16xf32>
      %u = mlx.random_uniform [%n, 16] : tensor<?x16xf32>
      %g = mlx.random_normal [4000] : tensor<4000xbf16>
      func.return %u, %g : tensor<?x16xf32>, tensor<4000xbf16>
    }"""
    mx.random.seed(7)
    u, g = run_ir(text, x)
    mx.random.seed(7)
    expected_u = mx.random.uniform(shape=(3, 16), dtype=mx.float32)
    expected_g = mx.random.normal(shape=(4000,), dtype=mx.bfloat16)
    check_exact(u, np.array(expected_u), np.float32)
    check_exact(g, np.array(expected_g.astype(mx.float32)))  # bf16 comes back as float32, exactly
    assert 0 <= np.asarray(u).min() and np.asarray(u).max() < 1
    assert abs(float(np.mean(g))) < 0.1 and abs(float(np.std(g)) - 1) < 0.1
    again, _ = run_ir(text, x)
    assert not np.array_equal(np.asarray(again), np.asarray(u))


def test_arange() -> None:
    x = floats((7, 16))
    text = """func.func @forward(%x: tensor<?x16xf32>) -> (tensor<?xi64>, tensor<4xi32>, tensor<4xi64>, tensor<?xi64>, tensor<0xf32>, tensor<?xf32>) {
      %n = mlx.dim %x axis -2 : tensor<?x16xf32>
      %c2 = arith.constant 2 : index
      %a = mlx.arange [0, %n, 1] : tensor<?xi64>
      %b = mlx.arange [0, 10, 3] : tensor<4xi32>
      %c = mlx.arange [10, 0, -3] : tensor<4xi64>
      %d = mlx.arange [%c2, %n, %c2] : tensor<?xi64>
      %e = mlx.arange [5, 5, 1] : tensor<0xf32>
      %f = mlx.arange [%n, -1, -2] : tensor<?xf32>
      func.return %a, %b, %c, %d, %e, %f : tensor<?xi64>, tensor<4xi32>, tensor<4xi64>, tensor<?xi64>, tensor<0xf32>, tensor<?xf32>
    }"""
    a, b, c, d, e, f = run_ir(text, x)
    check_exact(a, np.arange(7), np.int64)
    check_exact(b, np.arange(0, 10, 3), np.int32)
    check_exact(c, np.arange(10, 0, -3), np.int64)
    check_exact(d, np.arange(2, 7, 2), np.int64)
    check_exact(e, np.zeros(0, np.float32), np.float32)
    check_exact(f, np.arange(7, -1, -2).astype(np.float32), np.float32)


def test_tril_triu() -> None:
    x = floats((2, 4, 5))
    text = """func.func @forward(%x: tensor<2x?x5xf32>) -> (tensor<2x?x5xf32>, tensor<2x?x5xf32>, tensor<2x?x5xf32>) {
      %l = mlx.tril %x k 0 : tensor<2x?x5xf32> -> tensor<2x?x5xf32>
      %m = mlx.tril %x k -1 : tensor<2x?x5xf32> -> tensor<2x?x5xf32>
      %u = mlx.triu %x k 2 : tensor<2x?x5xf32> -> tensor<2x?x5xf32>
      func.return %l, %m, %u : tensor<2x?x5xf32>, tensor<2x?x5xf32>, tensor<2x?x5xf32>
    }"""
    lower, lower1, upper = run_ir(text, x)
    x32 = x.astype(np.float32)
    check_exact(lower, np.tril(x32, 0))
    check_exact(lower1, np.tril(x32, -1))
    check_exact(upper, np.triu(x32, 2))


def test_diagonal() -> None:
    x = floats((2, 4, 5))
    text = """func.func @forward(%x: tensor<2x?x5xf32>) -> (tensor<2x?xf32>, tensor<5x2xf32>, tensor<?x1xf32>) {
      %a = mlx.diagonal %x offset 0 axes 1, 2 : tensor<2x?x5xf32> -> tensor<2x?xf32>
      %b = mlx.diagonal %x offset -1 axes 1, 0 : tensor<2x?x5xf32> -> tensor<5x2xf32>
      %c = mlx.diagonal %x offset 4 axes 0, 2 : tensor<2x?x5xf32> -> tensor<?x1xf32>
      func.return %a, %b, %c : tensor<2x?xf32>, tensor<5x2xf32>, tensor<?x1xf32>
    }"""
    a, b, c = run_ir(text, x)
    x32 = x.astype(np.float32)
    check_exact(a, np.diagonal(x32, 0, 1, 2))
    check_exact(b, np.diagonal(x32, -1, 1, 0))
    check_exact(c, np.diagonal(x32, 4, 0, 2))


def test_constant() -> None:
    text = """func.func @forward() -> (tensor<2x3xf32>, tensor<2xbf16>, tensor<3xi1>, tensor<2x2xi8>, tensor<2xui8>, tensor<2xf16>, tensor<i64>) {
      %a = mlx.constant dense<[[1.0, -2.5, 3.0], [0.0, 1.0e+10, -0.0]]> : tensor<2x3xf32>
      %b = mlx.constant dense<[1.5, -3.140625]> : tensor<2xbf16>
      %c = mlx.constant dense<[true, false, true]> : tensor<3xi1>
      %d = mlx.constant dense<-3> : tensor<2x2xi8>
      %e = mlx.constant dense<[200, 3]> : tensor<2xui8>
      %f = mlx.constant dense<[6.550400e+04, 1.000000e-01]> : tensor<2xf16>
      %g = mlx.constant dense<-9223372036854775807> : tensor<i64>
      func.return %a, %b, %c, %d, %e, %f, %g : tensor<2x3xf32>, tensor<2xbf16>, tensor<3xi1>, tensor<2x2xi8>, tensor<2xui8>, tensor<2xf16>, tensor<i64>
    }"""
    a, b, c, d, e, f, g = run_ir(text)
    check_exact(a, np.array([[1.0, -2.5, 3.0], [0.0, 1e10, -0.0]], np.float32), np.float32)
    check_exact(b, [1.5, -3.140625])
    check_exact(c, [True, False, True], np.bool_)
    check_exact(d, np.full((2, 2), -3, np.int8), np.int8)
    check_exact(e, np.array([200, 3], np.uint8), np.uint8)
    check_exact(f, np.array([65504, 0.1], np.float16), np.float16)
    check_exact(g, np.array(-9223372036854775807, np.int64), np.int64)


def test_dim_from_index() -> None:
    x = floats((3, 4, 5))
    text = """func.func @forward(%x: tensor<?x4x?xf32>) -> (index, index, index, tensor<i64>, tensor<f32>, tensor<bf16>) {
      %a = mlx.dim %x axis 0 : tensor<?x4x?xf32>
      %b = mlx.dim %x axis 1 : tensor<?x4x?xf32>
      %c = mlx.dim %x axis -1 : tensor<?x4x?xf32>
      %ab = arith.muli %a, %b : index
      %n = arith.muli %ab, %c : index
      %i = mlx.from_index %n : tensor<i64>
      %f = mlx.from_index %n : tensor<f32>
      %h = mlx.from_index %c : tensor<bf16>
      func.return %a, %b, %c, %i, %f, %h : index, index, index, tensor<i64>, tensor<f32>, tensor<bf16>
    }"""
    a, b, c, i, f, h = run_ir(text, x)
    assert (a, b, c) == (3, 4, 5) and all(type(v) is int for v in (a, b, c))
    check_exact(i, np.array(60), np.int64)
    check_exact(f, np.array(60.0, np.float32), np.float32)
    check_exact(h, np.array(5.0, np.float32))
