"""Constructs real models use that mlxir once refused, each alone, compiled and
compared with eager PyTorch on inputs whose dynamic dims differ from the export-time
ones, in float32, float16 and bfloat16 (tolerances relative to the reference's largest
magnitude: f32 1e-6, f16 1e-3, bf16 1e-2; these constructs move values, so the
differences are the dtypes' rounding of the same arithmetic)."""

from __future__ import annotations

import torch
from torch.export import Dim, export

import mlxir

DTYPES = [torch.float32, torch.float16, torch.bfloat16]
TOLERANCE = {torch.float32: 1e-6, torch.float16: 1e-3, torch.bfloat16: 1e-2}


def _assert_close(got: torch.Tensor, expected: torch.Tensor) -> None:
    assert got.dtype == expected.dtype and got.shape == expected.shape, (got.shape, expected.shape)
    scale = max(float(expected.float().abs().max()), 1.0)
    error = float((got.float() - expected.float()).abs().max())
    assert error <= TOLERANCE[expected.dtype] * scale, error


# --------------------------------------------------------------------------- repeat by a symbolic size


class _ClassToken(torch.nn.Module):
    """A ViT's class token tiled over the batch, `cls.repeat(b, 1, 1)`, and a tensor
    tiled by its own length, `x.repeat(1, n, 1)[:, :3]`."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.cls = torch.nn.Parameter(torch.randn(1, 1, 8, dtype=dtype))

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        batch, length = x.shape[0], x.shape[1]
        tokens = torch.cat([self.cls.repeat(batch, 1, 1), x], dim=1)
        tiled = x.repeat(2, length, 1)
        return tokens, tiled


def test_repeat_by_symbolic_sizes() -> None:
    """`aten.repeat` whose repeats depend on an input's shape: imported through torch's
    own decomposition of that node (expand and reshape with runtime sizes)."""
    for dtype in DTYPES:
        torch.manual_seed(0)
        model = _ClassToken(dtype)
        dims = {0: Dim("batch", min=1, max=64), 1: Dim("length", min=1, max=64)}
        ep = export(model, (torch.randn(3, 5, 8, dtype=dtype),), dynamic_shapes=(dims,))
        program = mlxir.compile(ep)
        x = torch.randn(6, 4, 8, dtype=dtype)
        for got, expected in zip(program(x), model(x), strict=True):
            _assert_close(got, expected.detach())


# --------------------------------------------------------------------------- runtime asserts and SymBools


class _Asserts(torch.nn.Module):
    """torch.export's deferred runtime asserts on a data-dependent size combine their
    conditions with every sympy/`operator` form it emits: `or_`, `and_`, `sym_not`
    (`Ne`), `mod` (`PythonMod`), `floordiv`, `sym_min`, `sym_max`; `sym_ite`, `Min`
    and `Max` of input dims size an output."""

    def forward(self, x: torch.Tensor, y: torch.Tensor, k: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        n = k.item()
        torch._check((n % 2 == 0) | (n >= 3))
        torch._check(torch.sym_not(n == 7) & (n // 2 != 100))
        torch._check(torch.sym_max(n, 1) - torch.sym_min(n, 100) >= 0)
        rows, others = x.shape[0], y.shape[0]
        size = torch.sym_ite(rows > others, rows, others) + torch.sym_max(rows, others) - torch.sym_min(rows, others)
        return x * n, torch.zeros(size, dtype=x.dtype) + y.sum()


def test_runtime_asserts_and_symbolic_booleans() -> None:
    """The asserts import (and are dropped: the runtime checks inputs against the
    export's ranges), and `sym_ite`/`sym_min`/`sym_max` compute sizes at run time."""
    for dtype in DTYPES:
        model = _Asserts()
        dims = ({0: Dim("rows", min=2, max=64)}, {0: Dim("others", min=2, max=64)}, None)
        args = (torch.randn(4, 3, dtype=dtype), torch.randn(5, 3, dtype=dtype), torch.tensor(4))
        program = mlxir.compile(export(model, args, dynamic_shapes=dims))
        for rows, others, k in ((9, 6, 6), (3, 8, 5)):
            inputs = (torch.randn(rows, 3, dtype=dtype), torch.randn(others, 3, dtype=dtype), torch.tensor(k))
            for got, expected in zip(program(*inputs), model(*inputs), strict=True):
                _assert_close(got, expected)


def test_alibi_decoder_generates_transformers_tokens() -> None:
    """BLOOM (ALiBi attention), whose export carries runtime asserts joined by `or_`,
    compiles with `compile_llm`; greedy tokens equal transformers' on a prompt longer
    than the export's."""
    import transformers

    from mlxir.tools import llm

    torch.manual_seed(0)
    config = transformers.BloomConfig(vocab_size=128, hidden_size=32, n_layer=2, n_head=4)
    model = transformers.BloomForCausalLM(config).eval()
    compiled = llm.compile_llm(model)
    ids = torch.randint(0, 128, (2, 11))
    mask = torch.ones_like(ids)
    with torch.no_grad():
        expected = model.generate(ids, attention_mask=mask, max_new_tokens=8, do_sample=False)
    assert torch.equal(llm.generate(compiled, ids, mask, max_new_tokens=8), expected)
