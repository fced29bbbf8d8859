"""The Hugging Face causal-LM families mlxir is tested on: tiny configs with random
weights (2 layers, hidden 64, 4 query / 2 KV heads, vocab 256), shared by the LLM
suites (`test_llm.py`, `test_quantize.py`)."""

from __future__ import annotations

from typing import Any

import torch

MODELS = [
    "llama",
    "qwen3",
    "mistral",
    "phi3",
    "qwen2",
    "gemma3",
    "phi",
    "gpt_neox",
    "llama3_rope",
    "cohere",
]


def build_model(name: str, dtype: torch.dtype = torch.float32, vocab_size: int = 256) -> Any:
    import transformers as t

    common: dict[str, Any] = dict(
        vocab_size=vocab_size,
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        pad_token_id=0,
    )
    configs = {
        "llama": (t.LlamaConfig, t.LlamaForCausalLM, {}),
        # Llama 3's frequency-dependent rope scaling: a scaled inv_freq constant
        "llama3_rope": (
            t.LlamaConfig,
            t.LlamaForCausalLM,
            {
                "rope_parameters": {
                    "rope_type": "llama3",
                    "rope_theta": 500000.0,
                    "factor": 8.0,
                    "low_freq_factor": 1.0,
                    "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 32,
                }
            },
        ),
        "qwen3": (t.Qwen3Config, t.Qwen3ForCausalLM, {"head_dim": 16}),
        "mistral": (t.MistralConfig, t.MistralForCausalLM, {"sliding_window": 4}),
        "phi3": (t.Phi3Config, t.Phi3ForCausalLM, {}),
        "qwen2": (t.Qwen2Config, t.Qwen2ForCausalLM, {}),
        # partial rotary (the first half / quarter of each head rotates), parallel
        # attention and MLP (phi), one fused query_key_value projection (gpt_neox)
        "phi": (t.PhiConfig, t.PhiForCausalLM, {"partial_rotary_factor": 0.5}),
        "gpt_neox": (t.GPTNeoXConfig, t.GPTNeoXForCausalLM, {"rotary_pct": 0.25}),
        # interleaved rotary (pairs of features rotate together), parallel attention
        # and MLP, LayerNorm without bias, tied embeddings, a logit scale
        "cohere": (t.CohereConfig, t.CohereForCausalLM, {}),
        "gemma3": (
            t.Gemma3TextConfig,
            t.Gemma3ForCausalLM,
            {
                "head_dim": 16,
                "sliding_window": 4,
                "layer_types": ["sliding_attention", "full_attention"],
            },
        ),
    }
    config_cls, model_cls, extra = configs[name]
    config = config_cls(**common, **extra)
    config._attn_implementation = "sdpa"
    torch.manual_seed(0)
    model = model_cls(config).eval().to(dtype)
    model.generation_config.eos_token_id = None  # random weights: never stop early
    model.generation_config.pad_token_id = 0
    return model
