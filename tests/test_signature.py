"""A compiled program is called exactly like the module it came from: nested tuples,
lists and dicts, keyword arguments, outputs in the exported structure, before and
after save/load; a call of the wrong structure is an `InputError` naming the path.

The reference is eager PyTorch on the same inputs, at sizes the export never saw,
with the differential suite's per-dtype tolerances (`tests/differential/harness.py`:
f32 1e-4/1e-5, f16 1e-2/1e-2, bf16 6e-2/6e-2, rtol/atol)."""

from __future__ import annotations

import collections
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.export import Dim, export
from torch.utils import _pytree as pytree

import mlxir
from differential.harness import TOLERANCES
from mlxir.codegen import ProgramError, deserialize, read_program, serialize
from mlxir.codegen.signature import SIGNATURE_ATTR
from mlxir.tools.cli import main_with


class Decoder(nn.Module):
    """A two-layer decoder whose KV cache is one tuple argument, as users write it:
    `forward(input_ids, past_kv) -> (logits, new_past_kv)`."""

    def __init__(self, vocab: int = 50, dim: int = 32, heads: int = 2, layers: int = 2) -> None:
        super().__init__()
        self.heads, self.head_dim = heads, dim // heads
        self.embed = nn.Embedding(vocab, dim)
        self.qkv = nn.ModuleList(nn.Linear(dim, 3 * dim) for _ in range(layers))
        self.out = nn.ModuleList(nn.Linear(dim, dim) for _ in range(layers))
        self.head = nn.Linear(dim, vocab)

    def forward(
        self, input_ids: torch.Tensor, past_kv: tuple[torch.Tensor, ...]
    ) -> tuple[torch.Tensor, tuple[torch.Tensor, ...]]:
        x = self.embed(input_ids)
        batch, seq, _ = x.shape
        new_kv = []
        for i, (qkv, out) in enumerate(zip(self.qkv, self.out)):
            q, k, v = qkv(x).view(batch, seq, 3, self.heads, self.head_dim).unbind(2)
            k = torch.cat([past_kv[2 * i], k.transpose(1, 2)], dim=2)
            v = torch.cat([past_kv[2 * i + 1], v.transpose(1, 2)], dim=2)
            new_kv += [k, v]
            attn = F.scaled_dot_product_attention(q.transpose(1, 2), k, v)
            x = x + out(attn.transpose(1, 2).reshape(batch, seq, -1))
        return self.head(x), tuple(new_kv)


def _cache(batch: int, past: int, dtype: torch.dtype, seed: int) -> tuple[torch.Tensor, ...]:
    g = torch.Generator().manual_seed(seed)
    return tuple(torch.randn(batch, 2, past, 16, generator=g).to(dtype) for _ in range(4))


@pytest.fixture(scope="module")
def decoder_programs(tmp_path_factory: pytest.TempPathFactory) -> dict[torch.dtype, tuple[Decoder, Any]]:
    programs = {}
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        torch.manual_seed(0)
        model = Decoder().to(dtype).eval()
        ids = torch.randint(0, 50, (1, 3))
        seq, past = Dim("seq", min=1, max=64), Dim("past", min=1, max=64)
        shapes = {"input_ids": {1: seq}, "past_kv": tuple({2: past} for _ in range(4))}
        ep = export(model, (ids, _cache(1, 5, dtype, 0)), dynamic_shapes=shapes)
        path = tmp_path_factory.mktemp("decoder") / f"{dtype}.mlxfb"
        mlxir.compile(ep).save(path)
        programs[dtype] = (model, path)
    return programs


def _plain(tree: Any) -> Any:
    """`tree` with namedtuples as plain tuples: a program rebuilds a namedtuple of the
    same name and fields from data, not the module's own class (checked apart)."""
    if isinstance(tree, tuple):
        return tuple(_plain(t) for t in tree)
    if isinstance(tree, list):
        return [_plain(t) for t in tree]
    if isinstance(tree, dict):
        return {k: _plain(v) for k, v in tree.items()}
    return tree


def _assert_close(got: Any, expected: Any) -> None:
    got_leaves, got_spec = pytree.tree_flatten(_plain(got))
    expected_leaves, expected_spec = pytree.tree_flatten(_plain(expected))
    assert got_spec == expected_spec, f"structure {got_spec} != {expected_spec}"
    for g, e in zip(got_leaves, expected_leaves, strict=True):
        if e is None:
            assert g is None
            continue
        rtol, atol = TOLERANCES[e.dtype]
        torch.testing.assert_close(g.float(), e.float(), rtol=rtol, atol=atol)
        assert g.dtype == e.dtype


@pytest.mark.parametrize("dtype", [torch.float32, torch.float16, torch.bfloat16], ids=str)
def test_decoder_takes_its_cache_as_one_tuple_across_save_and_load(
    decoder_programs: dict[torch.dtype, tuple[Decoder, Path]], dtype: torch.dtype
) -> None:
    model, path = decoder_programs[dtype]
    program = mlxir.load(path)
    assert [s.name for s in program.inputs] == ["input_ids", *(f"past_kv[{i}]" for i in range(4))]
    ids = torch.randint(0, 50, (1, 7))  # the export saw 3 tokens and 5 past positions
    past = _cache(1, 11, dtype, 1)
    with torch.no_grad():
        expected = model(ids, past)
    got = program(ids, past)
    assert isinstance(got, tuple) and isinstance(got[1], tuple)
    _assert_close(got, expected)
    # The cache it returned feeds the next step, by position or by name.
    token = torch.randint(0, 50, (1, 1))
    with torch.no_grad():
        expected = model(token, expected[1])
    _assert_close(program(token, past_kv=got[1]), expected)


def test_decoder_structure_errors_name_the_path(
    decoder_programs: dict[torch.dtype, tuple[Decoder, Path]],
) -> None:
    program = mlxir.load(decoder_programs[torch.float32][1])
    ids = torch.randint(0, 50, (1, 4))
    past = _cache(1, 6, torch.float32, 2)
    with pytest.raises(mlxir.InputError, match=r"input 'past_kv\[3\]': expected rank 4 \(float32\[1, 2, \?, 16\]\), got shape \[1, 2, 6\]"):
        program(ids, (*past[:3], past[3][..., 0]))
    with pytest.raises(mlxir.InputError, match=r"past_kv: expected 4 items, got a tuple of 3"):
        program(ids, past[:3])
    with pytest.raises(mlxir.InputError, match=r"missing argument 'past_kv'"):
        program(ids)
    with pytest.raises(mlxir.InputError, match=r"past_kv: expected a tuple of 4, got a tensor"):
        program(ids, past[0])
    with pytest.raises(mlxir.InputError, match=r"unexpected argument 'cache'"):
        program(ids, past, cache=None)
    with pytest.raises(mlxir.InputError, match=r"argument 'input_ids' given twice"):
        program(ids, past, input_ids=ids)
    # The flat convention stays, under its own name.
    logits, *kv = program.call_flat(ids, *past)
    torch.testing.assert_close(logits, program(ids, past)[0])


class Structured(nn.Module):
    """Nested dicts, lists, namedtuples, keyword arguments, None and a constant."""

    Pair = collections.namedtuple("Pair", ["low", "high"])

    def forward(
        self,
        x: torch.Tensor,
        pair: list[torch.Tensor],
        mask: torch.Tensor | None = None,
        *,
        extras: dict[str, Any],
        scale: float = 1.0,
    ) -> dict[str, Any]:
        y = x * scale + extras["u"]
        low, high = pair
        return {
            "sum": y.sum(-1),
            "parts": [low + 1, (high * 2, extras["w"]["v"] - x)],
            "pair": Structured.Pair(y.amin(-1), y.amax(-1)),
            "none": None,
        }


def test_nested_arguments_keywords_and_output_structure(tmp_path: Path) -> None:
    model = Structured()
    x = torch.randn(3, 4)
    pair = [torch.randn(2), torch.randn(5)]
    extras = {"u": torch.randn(4), "w": {"v": torch.randn(3, 4)}}
    rows = Dim("rows", min=1, max=32)
    ep = export(
        model,
        (x, pair, None),
        {"extras": extras, "scale": 0.5},
        dynamic_shapes={
            "x": {0: rows},
            "pair": [None, {0: Dim("n", min=1, max=32)}],
            "mask": None,
            "extras": {"u": None, "w": {"v": {0: rows}}},
            "scale": None,
        },
    )
    program = mlxir.compile(ep)
    program.save(tmp_path / "structured.mlxfb")
    loaded = mlxir.load(tmp_path / "structured.mlxfb")
    assert [s.name for s in loaded.inputs] == ["x", "pair[0]", "pair[1]", "extras['u']", "extras['w']['v']"]

    x = torch.randn(6, 4)
    pair = [torch.randn(2), torch.randn(9)]
    extras = {"u": torch.randn(4), "w": {"v": torch.randn(6, 4)}}
    expected = model(x, pair, None, extras=extras, scale=0.5)
    for p in (program, loaded):
        for got in (
            p(x, pair, None, extras=extras, scale=0.5),
            p(x, pair, extras=extras, scale=0.5),  # None left out
            p(x=x, pair=tuple(pair), mask=None, extras=extras, scale=0.5),
        ):
            _assert_close(got, expected)
            assert list(got) == ["sum", "parts", "pair", "none"]
            assert type(got["pair"]).__name__ == "Pair" and got["pair"]._fields == ("low", "high")
            assert isinstance(got["parts"], list) and isinstance(got["parts"][1], tuple)
    with pytest.raises(mlxir.InputError, match=r"scale: the program was exported with 0.5"):
        loaded(x, pair, extras=extras, scale=2.0)
    with pytest.raises(mlxir.InputError, match=r"missing argument 'scale'"):
        loaded(x, pair, extras=extras)
    with pytest.raises(mlxir.InputError, match=r"missing extras\['w'\]\['v'\]"):
        loaded(x, pair, extras={"u": extras["u"], "w": {}}, scale=0.5)
    with pytest.raises(mlxir.InputError, match=r"extras: unexpected key 'z'"):
        loaded(x, pair, extras={**extras, "z": x}, scale=0.5)
    with pytest.raises(mlxir.InputError, match=r"mask: expected None, got a tensor"):
        loaded(x, pair, x, extras=extras, scale=0.5)
    assert loaded.signature is not None and loaded.signature.constant_inputs() == [("scale", 0.5)]
    assert loaded.output_names == [
        "output['sum']",
        "output['parts'][0]",
        "output['parts'][1][0]",
        "output['parts'][1][1]",
        "output['pair'].low",
        "output['pair'].high",
    ]


def test_signature_round_trips_through_ir_text(tmp_path: Path) -> None:
    model = Structured()
    ep = export(
        model,
        (torch.randn(3, 4), [torch.randn(2), torch.randn(5)]),
        {"extras": {"u": torch.randn(4), "w": {"v": torch.randn(3, 4)}}, "scale": 0.5},
    )
    data = mlxir.compile(ep).to_bytes()
    module = deserialize(data)
    assert SIGNATURE_ATTR in str(module)
    assert serialize(module) == data
    from xdsl.parser import Parser

    from mlxir.dialects.context import make_context

    # Printed IR carries no locations, so compare what the text keeps: the signature.
    reparsed = Parser(make_context(), str(module)).parse_module()
    assert read_program(serialize(reparsed)).signature == read_program(data).signature


def test_inspect_and_run_use_the_paths(
    decoder_programs: dict[torch.dtype, tuple[Decoder, Path]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    import numpy as np

    path = decoder_programs[torch.float32][1]
    assert main_with(["inspect", str(path)]) == 0
    text = capsys.readouterr().out
    assert re.search(r"input  past_kv\[3\]: float32\[1, 2, s\d+, 16\]", text), text
    assert "output[1][3]: float32[1, 2, ?, 16]" in text
    # mlxir run takes the flat inputs in order.
    inputs = [np.zeros((1, 2), dtype=np.int64), *(np.zeros((1, 2, 3, 16), np.float32) for _ in range(4))]
    argv = ["run", str(path)]
    for i, array in enumerate(inputs):
        np.save(tmp_path / f"{i}.npy", array)
        argv += ["--input", str(tmp_path / f"{i}.npy")]
    assert main_with(argv) == 0
    out = capsys.readouterr().out
    assert "output[0]: float32[1, 2, 50]" in out and "output[1][3]: float32[1, 2, 5, 16]" in out


def _with_signature(monkeypatch: pytest.MonkeyPatch, text: str) -> bytes:
    """A valid program whose file holds `text` as its signature: the serializer only
    writes signatures it validated, so its validation is patched out here."""
    from mlxir.codegen import serializer

    class Unchecked:
        @staticmethod
        def from_attr(attr: Any, num_inputs: int, num_outputs: int) -> Any:
            return type("Raw", (), {"to_json": lambda self: text})()

    ep = export(nn.Linear(4, 3), (torch.randn(2, 4),))
    module = mlxir.import_program(ep)
    mlxir.lower(module)
    with monkeypatch.context() as patch:
        patch.setattr(serializer, "Signature", Unchecked)
        return serialize(module)


HOSTILE_SIGNATURES = {
    "not json": "{inputs",
    "deep nesting": json.dumps({"inputs": "[" * 5000}),
    "nested too deep": json.dumps(
        {
            "inputs": {"kind": "tuple", "children": [{"kind": "tuple", "children": [
                json.loads('{"kind":"tuple","children":[' * 70 + '"*"' + "]}" * 70)
            ]}, {"kind": "dict"}]},
            "outputs": "*",
        }
    ),
    "unknown kind": json.dumps({"inputs": {"kind": "lambda"}, "outputs": "*"}),
    "code as a type": json.dumps(
        {
            "inputs": {"kind": "tuple", "children": [{"kind": "tuple", "children": ["*"]}, {"kind": "dict"}]},
            "outputs": {"kind": "namedtuple", "type": "os.system('x')", "keys": ["a"], "children": ["*"]},
        }
    ),
    "leaf count": json.dumps(
        {"inputs": {"kind": "tuple", "children": [{"kind": "tuple", "children": []}, {"kind": "dict"}]}, "outputs": "*"}
    ),
    "not args and kwargs": json.dumps({"inputs": "*", "outputs": "*"}),
    "bad keys": json.dumps(
        {
            "inputs": {"kind": "tuple", "children": [{"kind": "tuple", "children": []}, {"kind": "dict", "keys": ["a", "a"], "children": ["*", "*"]}]},
            "outputs": "*",
        }
    ),
    "huge int": '{"inputs": ' + "9" * 10000 + "}",
    "written-back output inside the tree": json.dumps(
        {
            "inputs": {"kind": "tuple", "children": [{"kind": "tuple", "children": ["*"]}, {"kind": "dict"}]},
            "outputs": "*",
            "mutated": [[0, 0]],
        }
    ),
    "written-back output past the program's": json.dumps(
        {
            "inputs": {"kind": "tuple", "children": [{"kind": "tuple", "children": ["*"]}, {"kind": "dict"}]},
            "outputs": "*",
            "mutated": [[1, 0]],
        }
    ),
    "written-back pairs not a list": json.dumps(
        {
            "inputs": {"kind": "tuple", "children": [{"kind": "tuple", "children": ["*"]}, {"kind": "dict"}]},
            "outputs": "*",
            "mutated": {"0": 0},
        }
    ),
}


@pytest.mark.parametrize("text", HOSTILE_SIGNATURES.values(), ids=HOSTILE_SIGNATURES.keys())
def test_hostile_signature_is_a_program_error(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    data = _with_signature(monkeypatch, text)
    with pytest.raises(ProgramError, match="signature"):
        mlxir.load(data)
    with pytest.raises(ProgramError, match="signature"):
        deserialize(data)


def test_a_valid_signature_written_the_same_way_loads(monkeypatch: pytest.MonkeyPatch) -> None:
    """The hostile cases fail for their content, not for how they were written."""
    text = json.dumps(
        {
            "inputs": {"kind": "tuple", "children": [{"kind": "tuple", "children": ["*"]}, {"kind": "dict"}]},
            "outputs": {"kind": "namedtuple", "type": "Out", "keys": ["y"], "children": ["*"]},
            "arg_names": ["x"],
        }
    )
    program = mlxir.load(_with_signature(monkeypatch, text))
    out = program(x=torch.randn(2, 4))
    assert type(out).__name__ == "Out" and out.y.shape == (2, 3)


class WritesItsInput(torch.nn.Module):
    def forward(self, x: torch.Tensor, y: torch.Tensor) -> torch.Tensor:
        x.mul_(3).add_(y)
        return x * 2


@pytest.mark.parametrize("kind", ["torch", "numpy", "mlx"])
def test_an_input_the_module_writes_is_written_back(kind: str, tmp_path: Path) -> None:
    """torch.export's USER_INPUT_MUTATION: the program returns the input's new value
    after its outputs (`signature.mutated`), and a call writes it into the caller's
    tensor, as eager PyTorch leaves it; across save and load, for each tensor kind."""
    import mlx.core as mx

    ep = torch.export.export(WritesItsInput(), (torch.randn(2, 4), torch.randn(2, 4)))
    path = tmp_path / "writes.mlxfb"
    path.write_bytes(mlxir.serialize(mlxir.lower(mlxir.import_program(ep))))
    program = mlxir.load(str(path))
    assert program.output_names == ["output", "x (written back)"]
    x, y = torch.randn(2, 4), torch.randn(2, 4)
    eager_x = x.clone()
    expected = WritesItsInput()(eager_x, y)
    given = {"torch": x.clone(), "numpy": x.numpy().copy(), "mlx": mx.array(x.numpy())}[kind]
    other = {"torch": y, "numpy": y.numpy(), "mlx": mx.array(y.numpy())}[kind]
    out = program(given, other)
    np.testing.assert_allclose(np.asarray(out), expected.numpy(), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(given), eager_x.numpy(), rtol=1e-6)  # the caller's own tensor
    flat = program.call_flat(x.numpy(), y.numpy())  # flat: the new value after the outputs
    assert len(flat) == 2 and np.allclose(np.asarray(flat[1]), eager_x.numpy(), rtol=1e-6)
