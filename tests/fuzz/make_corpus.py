"""Regenerates the fuzz corpus `tests/fuzz/corpus/*.mlxfb`: small real programs.

    .venv/bin/python tests/fuzz/make_corpus.py          # rewrite the corpus
    .venv/bin/python tests/fuzz/make_corpus.py --check  # exit 1 if it would change

Every program comes from something the repo already compiles, kept tiny (a few KB):

- torch models exported and compiled end to end (`mlxir.compile`): an MLP with a
  dynamic batch, a CNN (conv, batch norm, pooling), an attention block with a bool mask
  and a dynamic sequence, a decoder with an embedding and a causal mask, and two
  modules with mutated buffers (a static KV cache written with `index_copy`, a rolling
  history): state, int64 inputs, SymInt sizes;
- the decoder layer of `tests/test_codegen.py` (arith on `index`, scalar inputs and
  outputs, bf16/f16/i1 payloads, split, slice_update into state);
- every function of the mlx round-trip FileCheck suite (`tests/filecheck/mlx`), one
  program each, with seeded random payloads: every mlx op (but those whose globals
  are model-sized, over `MAX_PROGRAM_BYTES`).

Seeds are fixed and serialization is deterministic, so running it twice writes the same
bytes (`--check` proves it).
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
CORPUS = Path(__file__).resolve().parent / "corpus"
FILECHECK_MLX = ROOT / "tests" / "filecheck" / "mlx"
MAX_PROGRAM_BYTES = 16 * 1024


# --------------------------------------------------------------------------- torch models


def _torch_programs() -> Iterator[tuple[str, bytes]]:
    import torch
    import torch.nn.functional as F

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    from stateful_models import History, StaticCache  # pyright: ignore[reportMissingImports]
    from torch import nn
    from torch.export import Dim, export

    import mlxir

    class MLP(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.net = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.Linear(8, 3))

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.log_softmax(self.net(x), dim=-1)

    class CNN(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(2, 4, 3, padding=1)
            self.bn = nn.BatchNorm2d(4)
            self.head = nn.Linear(4 * 2 * 2, 3)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            x = F.max_pool2d(F.relu(self.bn(self.conv(x))), 2)
            return self.head(F.avg_pool2d(x, 1).flatten(1))

    class Block(nn.Module):
        def __init__(self, dim: int = 8, heads: int = 2) -> None:
            super().__init__()
            self.heads = heads
            self.norm = nn.LayerNorm(dim)
            self.qkv = nn.Linear(dim, 3 * dim)
            self.proj = nn.Linear(dim, dim)

        def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
            b, s, d = x.shape
            q, k, v = self.qkv(self.norm(x)).split(d, dim=-1)
            q, k, v = (t.view(b, s, self.heads, d // self.heads).transpose(1, 2) for t in (q, k, v))
            attn = F.scaled_dot_product_attention(q, k, v, attn_mask=mask[:, None, :, :])
            return x + self.proj(attn.transpose(1, 2).reshape(b, s, d))

    class Decoder(nn.Module):
        def __init__(self, vocab: int = 16, dim: int = 8) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, dim)
            self.norm = nn.RMSNorm(dim, eps=1e-6)
            self.qkv = nn.Linear(dim, 3 * dim, bias=False)
            self.head = nn.Linear(dim, vocab, bias=False)

        def forward(self, tokens: torch.Tensor) -> torch.Tensor:
            x = self.norm(self.embed(tokens))
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            x = x + F.scaled_dot_product_attention(q[:, None], k[:, None], v[:, None], is_causal=True)[:, 0]
            return self.head(x)



    def compiled(model: nn.Module, args: tuple, dynamic: dict | None = None) -> bytes:
        with torch.no_grad():
            ep = export(model.eval(), args, dynamic_shapes=dynamic)
        return _relative_locations(mlxir.compile(ep).to_bytes())

    builds: list[tuple[str, Callable[[], bytes]]] = [
        ("mlp", lambda: compiled(MLP(), (torch.randn(2, 4),), {"x": {0: Dim("batch", max=16)}})),
        ("cnn", lambda: compiled(CNN(), (torch.randn(2, 2, 4, 4),), {"x": {0: Dim("batch", max=8)}})),
        (
            "attention",
            lambda: compiled(
                Block(),
                (torch.randn(1, 4, 8), torch.ones(1, 4, 4, dtype=torch.bool).tril()),
                {"x": {1: Dim("seq", min=2, max=16)}, "mask": {1: Dim("seq", min=2, max=16), 2: Dim("seq", min=2, max=16)}},
            ),
        ),
        (
            "decoder",
            lambda: compiled(
                Decoder(), (torch.randint(0, 16, (1, 4)),), {"tokens": {1: Dim("seq", min=2, max=16)}}
            ),
        ),
        ("static_cache", lambda: compiled(StaticCache(), (torch.randn(1, 1, 4), torch.tensor([0])))),
        ("history", lambda: compiled(History(), (torch.randn(3),))),
    ]
    for name, build in builds:
        torch.manual_seed(0)
        yield name, build()


def _relative_locations(data: bytes) -> bytes:
    """`data` with its source locations relative to the repository (the same bytes in
    any checkout)."""
    from xdsl.dialects.builtin import FileLineColLoc, StringAttr

    from mlxir.codegen import deserialize, serialize

    module = deserialize(data)
    for op in module.walk():
        loc = op.location
        if isinstance(loc, FileLineColLoc) and loc.filename.data.startswith(str(ROOT)):
            relative = loc.filename.data[len(str(ROOT)) :].lstrip("/")
            op.location = FileLineColLoc(StringAttr(relative), loc.line, loc.column)
    return serialize(module)


# --------------------------------------------------------------------------- IR programs


def _codegen_model() -> tuple[str, bytes]:
    """The decoder layer `tests/test_codegen.py` checks the format with."""
    spec = importlib.util.spec_from_file_location("_codegen_tests", ROOT / "tests" / "test_codegen.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    from mlxir.codegen import serialize

    return "codegen_model", serialize(module.parse(module.MODEL), module.model_payloads())


def _mlx_suite_programs() -> Iterator[tuple[str, bytes]]:
    """Every function of the mlx round-trip FileCheck files, one program each."""
    from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
    from xdsl.dialects.func import FuncOp
    from xdsl.parser import Parser

    from mlxir.codegen import serialize
    from mlxir.dialects.context import make_context
    from mlxir.dialects.mlx import GlobalOp
    from mlxir.support import dtypes

    for path in sorted(FILECHECK_MLX.glob("roundtrip_*.mlir")):
        module = Parser(make_context(), path.read_text(), path.name).parse_module()
        globals_ = [op for op in module.ops if isinstance(op, GlobalOp)]
        for func in [op for op in module.ops if isinstance(op, FuncOp)]:
            rng = np.random.default_rng(0)
            payloads: dict[str, object] = {}
            if sum(np.prod(g.type.get_shape()) for g in globals_) > MAX_PROGRAM_BYTES:  # type: ignore[union-attr]
                continue
            for g in (g for g in globals_ if not isinstance(g.value, DenseIntOrFPElementsAttr)):
                dtype = dtypes.of_ir(g.type.get_element_type())  # type: ignore[union-attr]
                assert dtype is not None
                shape = tuple(g.type.get_shape())  # type: ignore[union-attr]
                values = rng.standard_normal(shape) if shape else rng.standard_normal()
                if dtype.name == "bool":
                    values = np.asarray(values) > 0
                elif dtype.name == "bfloat16":
                    values = (np.asarray(values, np.float32).view(np.uint32) >> 16).astype(np.uint16)
                payloads[g.sym_name.data] = np.asarray(values).astype(dtype.numpy)
            single = ModuleOp([g.clone() for g in globals_] + [func.clone()])
            stem = path.stem.removeprefix("roundtrip_")
            data = serialize(single, payloads)
            if len(data) <= MAX_PROGRAM_BYTES:
                yield f"mlx_{stem}_{func.sym_name.data}", data


def programs() -> dict[str, bytes]:
    """Every corpus program by file stem."""
    out = dict(_torch_programs())
    out.update([_codegen_model()])
    out.update(_mlx_suite_programs())
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the corpus would change")
    args = parser.parse_args(argv)
    wanted = {f"{name}.mlxfb": data for name, data in programs().items()}
    existing = {p.name: p.read_bytes() for p in CORPUS.glob("*.mlxfb")} if CORPUS.exists() else {}
    changed = sorted(n for n in wanted.keys() | existing.keys() if wanted.get(n) != existing.get(n))
    if args.check:
        for name in changed:
            print(f"{name} would change", file=sys.stderr)
        return 1 if changed else 0
    CORPUS.mkdir(exist_ok=True)
    for name in existing.keys() - wanted.keys():
        (CORPUS / name).unlink()
    for name, data in sorted(wanted.items()):
        (CORPUS / name).write_bytes(data)
    total = sum(len(d) for d in wanted.values())
    print(f"{len(wanted)} programs, {total} bytes, {len(changed)} changed, in {CORPUS}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
