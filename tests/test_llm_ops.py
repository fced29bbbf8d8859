"""Regression tests for importer/lowering fixes that Hugging Face LLM exports needed."""

from __future__ import annotations

import torch

import mlxir


class FunctionalCopy(torch.nn.Module):
    """`aten.copy(self, src)`, the functional `copy_` that transformers' static cache
    leaves in the graph (`cumulative_length.copy_(cache_position[0])`): `src` cast to
    `self`'s dtype and broadcast to its shape."""

    def __init__(self) -> None:
        super().__init__()
        self.register_buffer("length", torch.zeros((), dtype=torch.long), persistent=False)
        self.register_buffer("scale", torch.zeros(2, 3))

    def forward(self, position: torch.Tensor, row: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        length = torch.ops.aten.copy.default(self.length, position[0])  # same shape and dtype
        scale = torch.ops.aten.copy.default(self.scale, row)  # int64[3] -> float32[2, 3]
        return length + 1, scale * 2


def test_aten_copy_broadcasts_and_casts() -> None:
    """aten.copy was unsupported by the importer (static-cache exports failed)."""
    model = FunctionalCopy()
    args = (torch.tensor([3]), torch.tensor([1, 2, 3]))
    ep = torch.export.export(model, args)
    assert sum("aten.copy" in str(n.target) for n in ep.graph.nodes) == 2
    program = mlxir.compile(ep)
    args = (torch.tensor([7]), torch.tensor([4, 5, 6]))
    for got, expected in zip(program(*args), model(*args)):
        assert got.dtype == expected.dtype and torch.equal(got, expected)


class TiedHead(torch.nn.Module):
    """An LM head tied to the embedding: torch.export lifts it twice, one storage."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = torch.nn.Embedding(50, 8)
        self.head = torch.nn.Linear(8, 50, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        return self.head(torch.relu(self.embed(ids)))


def test_tied_weights_are_stored_once() -> None:
    """Tied parameters became two globals with two copies of the payload."""
    model = TiedHead().eval()
    ep = torch.export.export(model, (torch.tensor([[1, 2, 3]]),))
    assert len([s for s in ep.graph_signature.input_specs if s.kind.name == "PARAMETER"]) == 2
    module = mlxir.import_program(ep)
    assert len(mlxir.weights_of(module)) == 1
    program = mlxir.compile(ep)
    assert sum(int(a.nbytes) for a in program.info.constants.values()) == 50 * 8 * 4
    ids = torch.tensor([[4, 0, 49]])
    with torch.no_grad():
        assert torch.allclose(program(ids), model(ids), atol=1e-6)
