"""Constructs real models use that mlxir once refused, each alone, compiled and
compared with eager PyTorch on inputs whose dynamic dims differ from the export-time
ones, in float32, float16 and bfloat16 (tolerances relative to the reference's largest
magnitude: f32 1e-6, f16 1e-3, bf16 1e-2; these constructs move values, so the
differences are the dtypes' rounding of the same arithmetic)."""

from __future__ import annotations

import dataclasses
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
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


# --------------------------------------------------------------------------- a saved .pt2 with a ModelOutput


def _compile_in_a_fresh_process(archive: Path, program: Path) -> subprocess.CompletedProcess[str]:
    """`mlxir compile` in a process that has not imported transformers."""
    code = "import sys; from mlxir.tools.cli import main; sys.argv[0] = 'mlxir'; main()"
    return subprocess.run(
        [sys.executable, "-c", code, "compile", str(archive), "-o", str(program)],
        capture_output=True, text=True, timeout=600,
    )


def test_a_saved_archive_returning_a_model_output_compiles(tmp_path: Path) -> None:
    """A `.pt2` of a transformers model, whose output is a `ModelOutput` subclass,
    compiles with `mlxir compile` in a process that never imported transformers (the
    loader imports the module that registers the output type), and the program matches
    eager PyTorch at another sequence length."""
    import transformers

    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=64, hidden_size=32, num_hidden_layers=1, num_attention_heads=2, intermediate_size=64
    )
    model = transformers.BertModel(config).eval()
    ids = torch.randint(0, 64, (2, 7))
    ep = export(model, (ids,), dynamic_shapes=({1: Dim("length", min=2, max=32)},))
    archive, program_path = tmp_path / "bert.pt2", tmp_path / "bert.mlxfb"
    torch.export.save(ep, str(archive))
    result = _compile_in_a_fresh_process(archive, program_path)
    assert result.returncode == 0, result.stderr[-2000:]
    program = mlxir.load(program_path)
    longer = torch.randint(0, 64, (2, 12))
    got, expected = program(longer), model(longer)
    assert type(got).__name__ == type(expected).__name__
    _assert_close(got.last_hidden_state, expected.last_hidden_state.detach())


@dataclasses.dataclass
class _Pair:
    first: torch.Tensor
    second: torch.Tensor


torch.utils._pytree.register_dataclass(_Pair, serialized_type_name="test_constructs._Pair")


class _ReturnsPair(torch.nn.Module):
    def forward(self, x: torch.Tensor) -> _Pair:
        return _Pair(x + 1, x * 2)


def test_an_archive_with_an_unregistered_output_type_names_it(tmp_path: Path) -> None:
    """An output type whose module the loader does not import (not a known model
    library) is named in one clear error, without a traceback."""
    archive = tmp_path / "pair.pt2"
    torch.export.save(export(_ReturnsPair(), (torch.randn(2, 3),)), str(archive))
    result = _compile_in_a_fresh_process(archive, tmp_path / "pair.mlxfb")
    assert result.returncode != 0
    assert "test_constructs._Pair" in result.stderr and "register" in result.stderr, result.stderr
    assert "Traceback" not in result.stderr


# --------------------------------------------------------------------------- pooling a permuted tensor


class _ChannelsLastBlock(torch.nn.Module):
    """A ConvNeXt-style block: normalized in NHWC, permuted back to NCHW (a tensor with
    channels-last strides), then pooled to 1x1 (torch's `adaptive_avg_pool2d` gives
    the mean channels-last strides with `as_strided_`) and to 2x3."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.conv = torch.nn.Conv2d(8, 8, 3, padding=1, groups=8, dtype=dtype)
        self.norm = torch.nn.LayerNorm(8, dtype=dtype)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        y = self.norm(self.conv(x).permute(0, 2, 3, 1)).permute(0, 3, 1, 2)
        pooled = torch.nn.functional.adaptive_avg_pool2d(y, 1).flatten(1)
        return pooled, torch.nn.functional.adaptive_avg_pool2d(y, (2, 3))


def test_pooling_a_permuted_tensor() -> None:
    """The decomposition's `as_strided_` that only restrides axes of one element is the
    identity on values, under a dynamic batch too."""
    for dtype in DTYPES:
        torch.manual_seed(0)
        model = _ChannelsLastBlock(dtype)
        ep = export(model, (torch.randn(2, 8, 6, 6, dtype=dtype),), dynamic_shapes=({0: Dim("batch", min=1, max=16)},))
        program = mlxir.compile(ep)
        x = torch.randn(5, 8, 6, 6, dtype=dtype)
        with torch.no_grad():
            expected = model(x)
        for got, want in zip(program(x), expected, strict=True):
            _assert_close(got, want)


# --------------------------------------------------------------------------- histc and its relatives


class _Counting(torch.nn.Module):
    """What a mixture-of-experts router counts with (`histc` of expert ids) and its
    relatives: `bincount` (a length that depends on the data), `searchsorted` (batched,
    both sides) and `bucketize`."""

    def forward(
        self, x: torch.Tensor, ids: torch.Tensor, sequence: torch.Tensor, values: torch.Tensor
    ) -> tuple[torch.Tensor, ...]:
        return (
            torch.histc(x, bins=7, min=-1.5, max=2.0),
            torch.histc(x, bins=5),
            torch.histc(ids.to(x.dtype), bins=4, min=0, max=3),
            torch.bincount(ids, minlength=6),
            torch.bincount(ids, x.float()),
            torch.searchsorted(sequence, values),
            torch.searchsorted(sequence, values, right=True),
            torch.searchsorted(sequence[0], values[0], side="right", out_int32=True),
            torch.bucketize(values, sequence[0]),
        )


def test_histc_bincount_searchsorted() -> None:
    """Counted exactly as torch counts (a NaN value goes after every element of a
    sorted sequence), at lengths other than the export's; float sums within the
    dtype's tolerance."""
    n, m = Dim("n", min=2, max=256), Dim("m", min=1, max=64)
    for dtype in DTYPES:
        torch.manual_seed(0)
        model = _Counting()

        def inputs(count: int, width: int, dtype: torch.dtype = dtype) -> tuple[torch.Tensor, ...]:
            sequence = torch.sort(torch.randn(3, 10)).values.to(dtype)
            values = torch.randn(3, width).to(dtype)
            values[0, 0] = float("nan")
            return torch.randn(count).to(dtype), torch.randint(0, 4, (count,)), sequence, values

        ep = export(model, inputs(40, 6), dynamic_shapes=({0: n}, {0: n}, None, {1: m}))
        program = mlxir.compile(ep)
        args = inputs(77, 9)
        for got, expected in zip(program(*args), model(*args), strict=True):
            if expected.is_floating_point():
                _assert_close(got, expected)
            else:
                assert got.dtype == expected.dtype and torch.equal(got, expected), (got, expected)


# --------------------------------------------------------------------------- in-place writes and MoE


class _Router(torch.nn.Module):
    """A router's in-place writes to tensors it made itself: top-k weights normalized
    with `/=` after being read, an inverse permutation written by `index_put_` into a
    fresh `empty_like`, a fresh tensor incremented in place and read after."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.gate = torch.nn.Linear(8, 4, dtype=dtype)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        weights, experts = torch.topk(self.gate(x).softmax(-1), 2, dim=-1)
        total = weights.sum(-1, keepdim=True)
        weights /= total
        order = torch.argsort(experts.reshape(-1), stable=True)
        inverse = torch.empty_like(order)
        inverse[order] = torch.arange(order.shape[0])
        shifted = weights * 2
        before = shifted.sum()
        shifted.add_(1)
        return weights, inverse, shifted + before


def test_in_place_writes_to_fresh_tensors_need_no_retrace() -> None:
    """Writes to tensors the program made itself, unaliased, import as their functional
    forms (no whole-program re-trace), the readers after a write reading the new value."""
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR

    for dtype in DTYPES:
        torch.manual_seed(0)
        model = _Router(dtype)
        ep = export(model, (torch.randn(5, 8, dtype=dtype),), dynamic_shapes=({0: Dim("tokens", min=2, max=64)},))
        assert DECOMPOSED_BY_TORCH_ATTR not in mlxir.import_program(ep).attributes
        program = mlxir.compile(ep)
        x = torch.randn(11, 8, dtype=dtype)
        with torch.no_grad():
            expected = model(x)
        got = program(x)
        _assert_close(got[0], expected[0])
        assert torch.equal(got[1], expected[1])
        _assert_close(got[2], expected[2])


@pytest.mark.parametrize("experts", [None, "batched_mm"])
def test_mixture_of_experts_generates_transformers_tokens(experts: str | None) -> None:
    """transformers' default experts path (`grouped_mm`: `histc` of the routed experts,
    the `transformers::grouped_mm_fallback` custom op, an `index_put_` into a fresh
    tensor) compiles without a whole-program re-trace, and so does its `batched_mm`
    path (each token's experts' matrices gathered); greedy tokens equal transformers'.
    (Its `eager` path loops over the experts the data routes to: torch.export cannot
    capture it, the zoo records.)"""
    import transformers

    from mlxir.tools import llm

    torch.manual_seed(0)
    config = transformers.Qwen3MoeConfig(
        vocab_size=128, hidden_size=32, intermediate_size=64, moe_intermediate_size=16, num_hidden_layers=2,
        num_attention_heads=4, num_key_value_heads=2, num_experts=4, num_experts_per_tok=2, head_dim=8,
        **({} if experts is None else {"experts_implementation": experts}),
    )
    model = transformers.Qwen3MoeForCausalLM(config).eval()
    assert model.config._experts_implementation == (experts or "grouped_mm")
    compiled = llm.compile_llm(model)
    ids = torch.randint(0, 128, (2, 9))
    mask = torch.ones_like(ids)
    with torch.no_grad():
        expected = model.generate(ids, attention_mask=mask, max_new_tokens=8, do_sample=False)
    assert torch.equal(llm.generate(compiled, ids, mask, max_new_tokens=8), expected)


class _GroupedProducts(torch.nn.Module):
    """torch's `_grouped_mm`, which transformers' experts call where torch has a kernel
    (bf16 on the CPU): rows grouped by `offs` times one matrix per group; and the
    batched form, a group per batch entry."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.experts = torch.nn.Parameter(torch.randn(3, 16, 8, dtype=dtype))

    def forward(self, rows: torch.Tensor, offs: torch.Tensor, batched: torch.Tensor) -> tuple[torch.Tensor, ...]:
        grouped = torch._grouped_mm(rows, self.experts, offs)  # pyright: ignore[reportPrivateUsage]
        return grouped, torch._grouped_mm(batched, self.experts)  # pyright: ignore[reportPrivateUsage]


def test_grouped_matrix_products() -> None:
    dtype = torch.bfloat16  # torch's meta function (what torch.export traces) takes bf16 only
    model = _GroupedProducts(dtype).eval()
    offs = torch.tensor([2, 6, 9], dtype=torch.int32)
    rows, batch = Dim("rows", min=2, max=64), Dim("batch", min=2, max=64)
    ep = export(
        model, (torch.randn(10, 16, dtype=dtype), offs, torch.randn(3, 4, 16, dtype=dtype)),
        dynamic_shapes=({0: rows}, None, {1: batch}),
    )
    program = mlxir.compile(ep)
    x, offs, batched = torch.randn(13, 16, dtype=dtype), torch.tensor([3, 3, 11], dtype=torch.int32), torch.randn(3, 5, 16, dtype=dtype)
    with torch.no_grad():
        expected = model(x, offs, batched)
    got = program(x, offs, batched)
    # torch leaves the rows past the last group unwritten (whatever memory held); mlxir zeroes them
    _assert_close(got[0][:11], expected[0][:11])
    assert not bool(got[0][11:].any())
    _assert_close(got[1], expected[1])


# --------------------------------------------------------------------------- what the vision zoo needed


class _Paddings(torch.nn.Module):
    """`F.pad` in every mode after an op of the program's own (torch's kernel of `pad`,
    traced, read the batch as a plain int and fixed it), with cropping (negative pads)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, ...]:
        y = torch.sin(x)
        pad = torch.nn.functional.pad
        return (
            pad(y, (0, 1, 0, 1)),
            pad(y, (-1, 2, 1, -2), value=0.5),
            pad(y, (1, 2, 2, 1), mode="reflect"),
            pad(y, (1, 2, 2, 1), mode="replicate"),
            pad(y, (1, 2, 2, 1), mode="circular"),
            pad(y, (-1, 2, 0, 1), mode="circular"),
        )


def test_padding_keeps_dynamic_sizes() -> None:
    for dtype in DTYPES:
        model = _Paddings()
        dims = {0: Dim("batch", min=1, max=16), 3: Dim("width", min=4, max=32)}
        ep = export(model, (torch.randn(2, 3, 6, 7, dtype=dtype),), dynamic_shapes=(dims,))
        program = mlxir.compile(ep)
        x = torch.randn(5, 3, 6, 9, dtype=dtype)
        for got, expected in zip(program(x), model(x), strict=True):
            _assert_close(got, expected)


def test_a_decomposition_that_fixes_a_dynamic_size_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A decomposition whose trace reads a dynamic size as a plain int would make the
    program take that size only: the import says so instead."""
    from mlxir.conversions.torch_to_aten import node_decompositions

    library = torch.library.Library("mlxir_test_fixing", "FRAGMENT")
    library.define("scaled(Tensor x) -> Tensor")
    library.impl("scaled", lambda x: x * x.shape[0], "CompositeExplicitAutograd")
    torch.library.register_fake("mlxir_test_fixing::scaled", lambda x: torch.empty_like(x), lib=library)

    class Scaled(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.ops.mlxir_test_fixing.scaled(x) + 1

    def fixing(x: torch.Tensor) -> torch.Tensor:
        return x * int(x.shape[0])

    monkeypatch.setitem(node_decompositions.CUSTOM_OP_DECOMPOSITIONS, "mlxir_test_fixing::scaled", fixing)
    ep = export(Scaled(), (torch.randn(3, 4),), dynamic_shapes=({0: Dim("rows", min=2, max=16)},))
    from mlxir.conversions.torch_to_aten.core import ImportError_

    with pytest.raises(ImportError_, match=r"fixes the dynamic size\(s\) s\w+ to 3"):
        mlxir.compile(ep)


class _WindowAttention(torch.nn.Module):
    """Attention over windows of heads, `[batch, windows, heads, length, dim]` (Twins,
    Hiera, NesT): with a mask per window, a boolean mask, and causal."""

    def forward(self, q: torch.Tensor, k: torch.Tensor, v: torch.Tensor, bias: torch.Tensor) -> tuple[torch.Tensor, ...]:
        attention = torch.nn.functional.scaled_dot_product_attention
        keep = torch.ones(q.shape[-2], k.shape[-2], dtype=torch.bool).tril()
        return (
            attention(q, k, v, attn_mask=bias),
            attention(q, k, v, attn_mask=keep),
            attention(q, k, v, is_causal=True),
            attention(q.unsqueeze(0), k.unsqueeze(0), v.unsqueeze(0)).squeeze(0),
        )


def test_attention_over_windows_of_heads() -> None:
    tolerance = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}
    for dtype in DTYPES:
        torch.manual_seed(0)

        def inputs(batch: int, length: int, dtype: torch.dtype = dtype) -> tuple[torch.Tensor, ...]:
            q, k, v = (torch.randn(batch, 3, 2, length, 8, dtype=dtype) for _ in range(3))
            return q, k, v, torch.randn(3, 1, length, length, dtype=dtype)

        length = Dim("length", min=2, max=32)
        dims = ({0: Dim("batch", min=1, max=8), 3: length},) * 3 + ({2: length, 3: length},)
        ep = export(_WindowAttention(), inputs(2, 5), dynamic_shapes=dims)
        program = mlxir.compile(ep)
        x = inputs(4, 7)
        for got, expected in zip(program(*x), _WindowAttention()(*x), strict=True):
            scale = max(float(expected.float().abs().max()), 1.0)
            assert float((got.float() - expected.float()).abs().max()) <= tolerance[dtype] * scale


def test_pooling_wider_than_its_input() -> None:
    """transformers' EfficientNet pools its 1x1 map with `AvgPool2d(1280, ceil_mode=True)`:
    the windows read what the input holds (one slice each for sums and counts), not
    1280 x 1280 of them, and a
    window's divisor counts the cells inside the input and its padding."""
    models = [
        torch.nn.AvgPool2d(1280, ceil_mode=True),
        torch.nn.AvgPool2d(5, stride=2, padding=2, ceil_mode=True),
        torch.nn.AvgPool2d(4, stride=3, padding=1, ceil_mode=True, count_include_pad=False),
        torch.nn.MaxPool2d(9, ceil_mode=True),
    ]
    for model in models:
        for dtype in DTYPES:
            ep = export(model, (torch.randn(2, 3, 7, 6, dtype=dtype),), dynamic_shapes=({0: Dim("batch")},))
            program = mlxir.compile(ep)
            x = torch.randn(3, 3, 7, 6, dtype=dtype)
            _assert_close(program(x), model(x))
    lowered = mlxir.lower(mlxir.import_program(export(models[0], (torch.randn(2, 8, 1, 1),))))
    # one window for the sums, one for the cells counted (the windows run past the input)
    assert sum(1 for op in lowered.walk() if op.name == "mlx.slice") == 2


class _WriteThenPool(torch.nn.Module):
    """Swin's attention mask (a slice of a fresh tensor written in place: torch's
    whole-program re-trace) and a pool of a permuted map (its decomposition ends in
    `as_strided`, decomposed after the re-trace)."""

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        mask = x.new_zeros(x.shape[1], x.shape[2])
        mask[1:3, :] = 1.0
        y = (x + mask.unsqueeze(-1)).permute(0, 3, 1, 2)
        return torch.nn.functional.adaptive_avg_pool2d(y, 1), mask


def test_decompositions_after_the_whole_program_retrace() -> None:
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR

    for dtype in DTYPES:
        model = _WriteThenPool()
        ep = export(model, (torch.randn(2, 4, 4, 8, dtype=dtype),), dynamic_shapes=({0: Dim("batch")},))
        assert DECOMPOSED_BY_TORCH_ATTR in mlxir.import_program(ep).attributes
        program = mlxir.compile(ep)
        x = torch.randn(5, 4, 4, 8, dtype=dtype)
        for got, expected in zip(program(x), model(x), strict=True):
            _assert_close(got, expected)


class _Recurrent(torch.nn.Module):
    """LSTMs as Sequencer runs them over rows of patches: batch-first, and stacked
    bidirectional (torch's CPU `lstm` runs each layer's direction as `mkldnn_rnn_layer`)."""

    def __init__(self, dtype: torch.dtype) -> None:
        super().__init__()
        self.first = torch.nn.LSTM(8, 12, batch_first=True).to(dtype)
        self.stacked = torch.nn.LSTM(12, 6, num_layers=2, bidirectional=True).to(dtype)

    def forward(self, x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        rows, _ = self.first(x)
        out, (h, c) = self.stacked(rows.transpose(0, 1))
        return out, h, c


def test_lstm_layers_unroll_over_a_static_sequence() -> None:
    """(torch.export itself fixes an LSTM's sequence length: its dims cannot be dynamic.)"""
    tolerance = {torch.float32: 1e-5, torch.float16: 2e-3, torch.bfloat16: 2e-2}
    for dtype in DTYPES:
        torch.manual_seed(0)
        model = _Recurrent(dtype).eval()
        ep = export(model, (torch.randn(2, 5, 8, dtype=dtype),), dynamic_shapes=({0: Dim("batch", min=1, max=16)},))
        program = mlxir.compile(ep)
        x = torch.randn(4, 5, 8, dtype=dtype)
        with torch.no_grad():
            expected = model(x)
        for got, want in zip(program(x), expected, strict=True):
            scale = max(float(want.float().abs().max()), 1.0)
            assert float((got.float() - want.float()).abs().max()) <= tolerance[dtype] * scale


class _NormalizesItsInput(torch.nn.Module):
    """A router that divides its input in place (a write to a graph input: torch's
    whole-program re-trace) and counts with `histc` (which torch's table keeps and
    mlxir decomposes after the re-trace)."""

    def forward(self, weights: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        weights /= weights.sum(-1, keepdim=True)
        return weights * 2, torch.histc(weights, bins=4, min=0.0, max=1.0)


def test_writes_to_an_input_retrace_then_decompose() -> None:
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR

    for dtype in (torch.float32, torch.bfloat16):  # histc takes no float16 on torch's CPU
        model = _NormalizesItsInput()
        example = torch.rand(3, 5, dtype=dtype) + 0.1
        ep = export(model, (example.clone(),), dynamic_shapes=({0: Dim("rows", min=2, max=32)},))
        assert "mutates tensors in place" in str(mlxir.import_program(ep).attributes[DECOMPOSED_BY_TORCH_ATTR])
        program = mlxir.compile(ep)
        x = torch.rand(7, 5, dtype=dtype) + 0.1
        written, expected_written = x.clone(), x.clone()
        got = program(written)
        expected = model(expected_written)
        _assert_close(got[0], expected[0])
        assert torch.equal(got[1], expected[1])
        _assert_close(written, expected_written)  # the input is written, as the module writes it


def _state_space_decoder(family: str, dtype: torch.dtype) -> object:
    """A tiny Mamba, Bamba (Mamba-2 layers beside attention) or Jamba (Mamba layers,
    attention, mixture-of-experts MLPs), random weights, in `dtype`."""
    import transformers

    attention = dict(
        vocab_size=96, hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
        num_key_value_heads=2, pad_token_id=0,
    )
    config: transformers.PreTrainedConfig
    if family == "mamba":
        config = transformers.MambaConfig(
            vocab_size=96, hidden_size=32, num_hidden_layers=2, state_size=8, expand=2, conv_kernel=4, pad_token_id=0
        )
        model_class: type = transformers.MambaForCausalLM
    elif family == "bamba":
        config = transformers.BambaConfig(
            **attention, mamba_n_heads=4, mamba_d_head=16, mamba_d_state=8, mamba_n_groups=1, attn_layer_indices=[1]
        )
        model_class = transformers.BambaForCausalLM
    else:
        config = transformers.JambaConfig(
            **attention, num_experts=4, num_experts_per_tok=2, expert_layer_period=2, expert_layer_offset=1,
            attn_layer_period=2, attn_layer_offset=1, mamba_d_state=8, mamba_expand=2,
        )
        model_class = transformers.JambaForCausalLM
    torch.manual_seed(0)
    return model_class(config).eval().to(dtype)


STATE_SPACE_TOLERANCE = {torch.float32: 1e-4, torch.bfloat16: 5e-2}
"""Of logits, relative to their largest magnitude: a step's recurrence is rounded once
per token here, and transformers' prefill scans the prompt in one pass (f32), and in
bf16 the two round the states differently."""


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16], ids=["f32", "bf16"])
@pytest.mark.parametrize("family", ["mamba", "bamba", "jamba"])
def test_state_space_and_hybrid_decoders_generate_transformers_tokens(family: str, dtype: torch.dtype) -> None:
    """compile_llm keeps a state-space layer's convolution window and scan state as
    program inputs and outputs beside the attention layers' fixed-capacity cache, one
    token per call; `generate` over a left-padded batch gives transformers' tokens
    (f32: every token; bf16: every step's logits within tolerance, and its tokens
    wherever transformers' own margin is not a near tie)."""
    import mlx.core as mx

    from mlxir.tools import llm

    model = _state_space_decoder(family, dtype)
    compiled = llm.compile_llm(model, max_seq=32, max_past=32)
    assert compiled.cache == "recurrent" and compiled.state_shapes
    generator = torch.Generator().manual_seed(1)
    ids = torch.randint(1, 96, (3, 6), generator=generator)  # export used batch 2
    mask = torch.ones_like(ids)
    mask[1, :2] = 0  # left-padded rows
    mask[2, :4] = 0
    ids = ids * mask
    with torch.no_grad():
        expected = model.generate(  # pyright: ignore[reportAttributeAccessIssue]
            ids, attention_mask=mask, max_new_tokens=8, do_sample=False, output_logits=True,
            return_dict_in_generate=True,
        )
    logits: list[mx.array] = []
    generation = model.generation_config  # pyright: ignore[reportAttributeAccessIssue]
    got = llm.generate(
        compiled, ids, mask, max_new_tokens=8, logits=logits,
        eos_token_id=generation.eos_token_id, pad_token_id=generation.pad_token_id or 0,
    )
    assert got.shape == expected.sequences.shape
    new = ids.shape[1]
    for step, (ours, theirs) in enumerate(zip(logits, expected.logits, strict=True)):
        reference = theirs.float()
        scale = max(float(reference.abs().max()), 1.0)
        error = float((torch.from_numpy(np.array(ours.astype(mx.float32))) - reference).abs().max())
        assert error <= STATE_SPACE_TOLERANCE[dtype] * scale, f"step {step}: logits differ by {error:.3g}"
        if dtype == torch.float32:
            assert torch.equal(got[:, new + step], expected.sequences[:, new + step]), f"step {step}"
        else:
            top = reference.topk(2, dim=-1).values
            decided = (top[:, 0] - top[:, 1]) > 2 * STATE_SPACE_TOLERANCE[dtype] * scale
            if not torch.equal(got[decided, new + step], expected.sequences[decided, new + step]):
                raise AssertionError(f"step {step}: tokens differ where transformers' margin is clear")
            if not torch.equal(got[:, new + step], expected.sequences[:, new + step]):
                break  # a near tie went the other way: the sequences part here


def test_a_state_space_program_is_refused_without_the_mask() -> None:
    from mlxir.tools import llm

    with pytest.raises(ValueError, match=r"MambaForCausalLM keeps recurrent states in 2 of its 2 layers"):
        llm.export_llm(_state_space_decoder("mamba", torch.float32), attention_mask=False)
