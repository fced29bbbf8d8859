"""The built-in models: `build_llama` (the `mlxir demo` model, a transformers Llama with
random weights) and `TinyDecoder`, a tiny decoder (embedding, RMSNorm, rotary-free
causal self-attention with grouped KV heads, SwiGLU MLP, LM head), random weights
from a fixed seed, exported with a dynamic sequence length."""

from __future__ import annotations

from typing import Any

import torch
from torch import nn
from torch.export import Dim, ExportedProgram, export

VOCAB = 128
HIDDEN = 32
HEADS = 4
KV_HEADS = 2
HEAD_DIM = HIDDEN // HEADS
FFN = 64
LAYERS = 2
MAX_SEQ = 64


class RMSNorm(nn.Module):
    def __init__(self, dim: int, eps: float = 1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(dim))
        self.eps = eps

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        variance = x.pow(2).mean(-1, keepdim=True)
        return x * torch.rsqrt(variance + self.eps) * self.weight


class Attention(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.q = nn.Linear(HIDDEN, HEADS * HEAD_DIM, bias=False)
        self.k = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.v = nn.Linear(HIDDEN, KV_HEADS * HEAD_DIM, bias=False)
        self.o = nn.Linear(HEADS * HEAD_DIM, HIDDEN, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        batch, seq, _ = x.shape
        q = self.q(x).view(batch, seq, HEADS, HEAD_DIM).transpose(1, 2)
        k = self.k(x).view(batch, seq, KV_HEADS, HEAD_DIM).transpose(1, 2)
        v = self.v(x).view(batch, seq, KV_HEADS, HEAD_DIM).transpose(1, 2)
        k = k.repeat_interleave(HEADS // KV_HEADS, dim=1)
        v = v.repeat_interleave(HEADS // KV_HEADS, dim=1)
        out = nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=mask)
        return self.o(out.transpose(1, 2).reshape(batch, seq, HIDDEN))


class Layer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.attn_norm = RMSNorm(HIDDEN)
        self.attn = Attention()
        self.mlp_norm = RMSNorm(HIDDEN)
        self.gate = nn.Linear(HIDDEN, FFN, bias=False)
        self.up = nn.Linear(HIDDEN, FFN, bias=False)
        self.down = nn.Linear(FFN, HIDDEN, bias=False)

    def forward(self, x: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.attn_norm(x), mask)
        h = self.mlp_norm(x)
        return x + self.down(nn.functional.silu(self.gate(h)) * self.up(h))


class TinyDecoder(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(VOCAB, HIDDEN)
        self.layers = nn.ModuleList(Layer() for _ in range(LAYERS))
        self.norm = RMSNorm(HIDDEN)
        self.head = nn.Linear(HIDDEN, VOCAB, bias=False)

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        seq = tokens.shape[1]
        positions = torch.arange(seq, device=tokens.device)
        mask = positions[None, :] <= positions[:, None]
        x = self.embed(tokens)
        for layer in self.layers:
            x = layer(x, mask)
        return self.head(self.norm(x))


def build_model(seed: int = 0) -> TinyDecoder:
    torch.manual_seed(seed)  # pyright: ignore[reportUnknownMemberType] (torch leaves manual_seed's parameter unannotated)
    return TinyDecoder().eval()


def export_model(model: TinyDecoder, seq: int = 8) -> ExportedProgram:
    tokens = torch.randint(0, VOCAB, (1, seq))
    with torch.no_grad():
        return export(
            model, (tokens,), dynamic_shapes={"tokens": {1: Dim("seq", min=2, max=MAX_SEQ)}}
        )


LLAMA_CONFIG: dict[str, int] = {
    "vocab_size": 512,
    "hidden_size": 64,
    "intermediate_size": 172,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "max_position_embeddings": 512,
}


def build_llama(seed: int = 0) -> nn.Module:
    """A small transformers Llama (random weights from `seed`, SDPA attention)."""
    from mlxir.support.quiet import quiet_torchao_import

    with quiet_torchao_import():  # transformers' model classes import torchao
        from transformers import LlamaConfig, LlamaForCausalLM

    options: dict[str, Any] = dict(LLAMA_CONFIG)
    config = LlamaConfig(**options, pad_token_id=0)
    config._attn_implementation = "sdpa"  # pyright: ignore[reportPrivateUsage] (transformers' own switch; set after construction, as before)
    torch.manual_seed(seed)  # pyright: ignore[reportUnknownMemberType] (torch leaves manual_seed's parameter unannotated)
    model = LlamaForCausalLM(config).eval()
    model.generation_config.eos_token_id = None  # random weights: never stop early
    model.generation_config.pad_token_id = 0
    return model
