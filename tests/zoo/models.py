"""The model zoo's architectures: each built from its library's own classes with a
shrunk config and random weights, with the inputs it is exported on and the (other)
inputs it is run on, and the dims that are dynamic between them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import torch
from torch.export import Dim


@dataclass(frozen=True)
class Architecture:
    """One zoo entry: `build()` makes the module (eval mode, random weights),
    `inputs(variant)` its positional inputs (variant 0 is exported, 1 is run), `dims`
    the dynamic shapes torch.export gets for them."""

    name: str
    family: str
    build: Callable[[], torch.nn.Module]
    inputs: Callable[[int], tuple[Any, ...]]
    dims: Callable[[], tuple[Any, ...]]


def _hf(model_class: str, config_class: str, **config: Any) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        import transformers

        torch.manual_seed(0)
        settings = getattr(transformers, config_class)(**config)
        return getattr(transformers, model_class)(settings).eval()

    return build


def _tokens(vocab: int, batch: tuple[int, int] = (2, 2), length: tuple[int, int] = (7, 11)) -> Callable[[int], tuple[Any, ...]]:
    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randint(0, vocab, (batch[variant], length[variant]), generator=generator),)

    return inputs


def _images(channels: int = 3, size: int = 32, batch: tuple[int, int] = (2, 3)) -> Callable[[int], tuple[Any, ...]]:
    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randn(batch[variant], channels, size, size, generator=generator),)

    return inputs


def _sequence_dims() -> tuple[Any, ...]:
    return ({1: Dim("length", min=2, max=64)},)


def _batch_dims() -> tuple[Any, ...]:
    return ({0: Dim("batch", min=1, max=16)},)


_TEXT = dict(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64)
_DECODER = dict(
    vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=4, num_key_value_heads=2,
    intermediate_size=64,
)


def _text_encoder(name: str, model_class: str, config_class: str, **config: Any) -> Architecture:
    return Architecture(name, "text encoder", _hf(model_class, config_class, **{**_TEXT, **config}), _tokens(96), _sequence_dims)


def _decoder(name: str, model_class: str, config_class: str, **config: Any) -> Architecture:
    return Architecture(
        name, "decoder", _hf(model_class, config_class, **config, use_cache=False), _tokens(96), _sequence_dims
    )


def _vision(name: str, family: str, model_class: str, config_class: str, size: int = 32, **config: Any) -> Architecture:
    return Architecture(name, family, _hf(model_class, config_class, **config), _images(size=size), _batch_dims)


class _SourceAndTarget(torch.nn.Module):
    """An encoder-decoder called as `model(input_ids=..., decoder_input_ids=...)`."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, source: torch.Tensor, target: torch.Tensor) -> Any:
        return self.model(input_ids=source, decoder_input_ids=target)


def _encoder_decoder(name: str, model_class: str, config_class: str, **config: Any) -> Architecture:
    make = _hf(model_class, config_class, **config, use_cache=False)

    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        length, target = (7, 11)[variant], (5, 8)[variant]
        return (
            torch.randint(0, 96, (2, length), generator=generator),
            torch.randint(0, 96, (2, target), generator=generator),
        )

    def dims() -> tuple[Any, ...]:
        return ({1: Dim("source", min=2, max=64)}, {1: Dim("target", min=2, max=64)})

    return Architecture(name, "encoder-decoder", lambda: _SourceAndTarget(make()).eval(), inputs, dims)


def _audio(name: str, model_class: str, config_class: str, **config: Any) -> Architecture:
    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randn((2, 3)[variant], 1600, generator=generator),)

    return Architecture(name, "speech/audio encoder", _hf(model_class, config_class, **config), inputs, _batch_dims)



class _TextAndImage(torch.nn.Module):
    """A dual encoder called as `model(input_ids=..., pixel_values=...)`."""

    def __init__(self, model: torch.nn.Module) -> None:
        super().__init__()
        self.model = model

    def forward(self, input_ids: torch.Tensor, pixel_values: torch.Tensor) -> Any:
        return self.model(input_ids=input_ids, pixel_values=pixel_values)


def _text_and_image(name: str, model_class: str, config_class: str, **config: Any) -> Architecture:
    make = _hf(model_class, config_class, **config)

    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (
            torch.randint(0, 96, ((2, 3)[variant], (7, 11)[variant]), generator=generator),
            torch.randn((2, 3)[variant], 3, 32, 32, generator=generator),
        )

    def dims() -> tuple[Any, ...]:
        return ({0: Dim("texts", min=1, max=16), 1: Dim("length", min=2, max=16)}, {0: Dim("images", min=1, max=16)})

    return Architecture(
        name, "CLIP-style dual encoder", lambda: _TextAndImage(make()).eval(), inputs, dims
    )


def _video(name: str, model_class: str, config_class: str, **config: Any) -> Architecture:
    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randn((2, 3)[variant], 4, 3, 32, 32, generator=generator),)

    return Architecture(name, "video (3-D conv)", _hf(model_class, config_class, **config), inputs, _batch_dims)


def _features(name: str, model_class: str, config_class: str, shape: tuple[int, ...], **config: Any) -> Architecture:
    """A speech model on precomputed features (`[batch, *shape]`), dynamic batch."""

    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randn((2, 3)[variant], *shape, generator=generator),)

    return Architecture(name, "speech/audio encoder", _hf(model_class, config_class, **config), inputs, _batch_dims)

_WAV2VEC2 = dict(
    hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64,
    conv_dim=(16, 16), conv_stride=(5, 4), conv_kernel=(10, 4), num_conv_pos_embeddings=16,
    num_conv_pos_embedding_groups=4, vocab_size=32,
)

ARCHITECTURES: list[Architecture] = [
    # text encoders
    _text_encoder("bert", "BertModel", "BertConfig"),
    _text_encoder("roberta", "RobertaModel", "RobertaConfig", pad_token_id=1),
    _text_encoder("distilbert", "DistilBertModel", "DistilBertConfig", dim=32, n_layers=2, n_heads=2, hidden_dim=64),
    _text_encoder("albert", "AlbertModel", "AlbertConfig", embedding_size=16),
    _text_encoder("electra", "ElectraModel", "ElectraConfig", embedding_size=16),
    _text_encoder("deberta-v2", "DebertaV2Model", "DebertaV2Config"),
    _text_encoder("mpnet", "MPNetModel", "MPNetConfig"),
    # decoders (their logits, one forward)
    _decoder("gpt2", "GPT2LMHeadModel", "GPT2Config", vocab_size=96, n_embd=32, n_layer=2, n_head=2),
    _decoder("llama", "LlamaForCausalLM", "LlamaConfig", **_DECODER),
    _decoder("mistral (sliding window)", "MistralForCausalLM", "MistralConfig", **_DECODER, sliding_window=4),
    _decoder("qwen2", "Qwen2ForCausalLM", "Qwen2Config", **_DECODER),
    _decoder("phi3", "Phi3ForCausalLM", "Phi3Config", **_DECODER, pad_token_id=0),
    _decoder("gemma", "GemmaForCausalLM", "GemmaConfig", **_DECODER, head_dim=8),
    _decoder("gpt-neox", "GPTNeoXForCausalLM", "GPTNeoXConfig", vocab_size=96, hidden_size=32,
             num_hidden_layers=2, num_attention_heads=4, intermediate_size=64),
    _decoder("opt", "OPTForCausalLM", "OPTConfig", vocab_size=96, hidden_size=32, num_hidden_layers=2,
             num_attention_heads=4, ffn_dim=64, word_embed_proj_dim=32),
    _decoder("bloom (ALiBi)", "BloomForCausalLM", "BloomConfig", vocab_size=96, hidden_size=32, n_layer=2, n_head=4),
    _decoder("falcon", "FalconForCausalLM", "FalconConfig", vocab_size=96, hidden_size=32, num_hidden_layers=2,
             num_attention_heads=4),
    _decoder("mixtral (MoE)", "MixtralForCausalLM", "MixtralConfig", **_DECODER, num_local_experts=4,
             num_experts_per_tok=2),
    _decoder("qwen3-moe (MoE)", "Qwen3MoeForCausalLM", "Qwen3MoeConfig", **_DECODER, moe_intermediate_size=16,
             num_experts=4, num_experts_per_tok=2, head_dim=8),
    # Mamba's scan specializes the sequence length at export: its batch is what varies.
    Architecture(
        "mamba (state space)", "decoder",
        _hf("MambaForCausalLM", "MambaConfig", vocab_size=96, hidden_size=32, num_hidden_layers=2, state_size=8,
            expand=2, conv_kernel=4, use_cache=False),
        _tokens(96, batch=(2, 3), length=(7, 7)), _batch_dims,
    ),
    # encoder-decoders
    _encoder_decoder("t5", "T5ForConditionalGeneration", "T5Config", vocab_size=96, d_model=32, d_kv=8, d_ff=64,
                     num_layers=2, num_heads=4, decoder_start_token_id=0),
    _encoder_decoder("bart", "BartForConditionalGeneration", "BartConfig", vocab_size=96, d_model=32,
                     encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                     encoder_ffn_dim=64, decoder_ffn_dim=64),
    # vision
    _vision("vit", "vision transformer", "ViTModel", "ViTConfig", hidden_size=32, num_hidden_layers=2,
            num_attention_heads=2, intermediate_size=64, image_size=32, patch_size=8),
    _vision("deit", "vision transformer", "DeiTModel", "DeiTConfig", hidden_size=32, num_hidden_layers=2,
            num_attention_heads=2, intermediate_size=64, image_size=32, patch_size=8),
    _vision("swin", "hierarchical/windowed transformer", "SwinModel", "SwinConfig", image_size=32, patch_size=4,
            embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=4),
    _vision("convnext", "vision CNN", "ConvNextModel", "ConvNextConfig", num_channels=3, hidden_sizes=[16, 32],
            depths=[1, 1], num_stages=2, image_size=32),
    _vision("resnet", "vision CNN", "ResNetModel", "ResNetConfig", embedding_size=16, hidden_sizes=[16, 32],
            depths=[1, 1], layer_type="basic"),
    _vision("mobilevit", "vision CNN", "MobileViTModel", "MobileViTConfig", image_size=32, hidden_sizes=[32, 48, 64],
            neck_hidden_sizes=[8, 16, 24, 32, 48, 64, 80]),
    _vision("segformer (segmentation head)", "segmentation", "SegformerForSemanticSegmentation", "SegformerConfig",
            hidden_sizes=[16, 32], depths=[1, 1], num_encoder_blocks=2, sr_ratios=[2, 1], num_attention_heads=[1, 2],
            decoder_hidden_size=32, num_labels=3, patch_sizes=[7, 3], strides=[4, 2], mlp_ratios=[2, 2]),
    # speech and audio
    _audio("wav2vec2", "Wav2Vec2Model", "Wav2Vec2Config", **_WAV2VEC2),
    _audio("hubert", "HubertModel", "HubertConfig", **_WAV2VEC2),
    # more decoders
    _decoder("qwen3", "Qwen3ForCausalLM", "Qwen3Config", **_DECODER, head_dim=8),
    _decoder("gemma2", "Gemma2ForCausalLM", "Gemma2Config", **_DECODER, head_dim=8, sliding_window=4),
    _decoder("gemma3 (sliding window)", "Gemma3ForCausalLM", "Gemma3TextConfig", **_DECODER, head_dim=8,
             sliding_window=4),
    _decoder("phi", "PhiForCausalLM", "PhiConfig", vocab_size=96, hidden_size=32, num_hidden_layers=2,
             num_attention_heads=4, intermediate_size=64),
    _decoder("gptj", "GPTJForCausalLM", "GPTJConfig", vocab_size=96, n_embd=32, n_layer=2, n_head=4, rotary_dim=4),
    _decoder("codegen", "CodeGenForCausalLM", "CodeGenConfig", vocab_size=96, n_embd=32, n_layer=2, n_head=4,
             rotary_dim=4),
    _decoder("stablelm", "StableLmForCausalLM", "StableLmConfig", **_DECODER),
    _decoder("olmo", "OlmoForCausalLM", "OlmoConfig", **_DECODER),
    _decoder("granite", "GraniteForCausalLM", "GraniteConfig", **_DECODER),
    _decoder("starcoder2", "Starcoder2ForCausalLM", "Starcoder2Config", **_DECODER),
    _decoder("mpt (ALiBi)", "MptForCausalLM", "MptConfig", vocab_size=96, d_model=32, n_layers=2, n_heads=4),
    _decoder("cohere", "CohereForCausalLM", "CohereConfig", **_DECODER),
    # more encoder-decoders
    _encoder_decoder("pegasus", "PegasusForConditionalGeneration", "PegasusConfig", vocab_size=96, d_model=32,
                     encoder_layers=2, decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4,
                     encoder_ffn_dim=64, decoder_ffn_dim=64),
    _encoder_decoder("marian", "MarianMTModel", "MarianConfig", vocab_size=96, d_model=32, encoder_layers=2,
                     decoder_layers=2, encoder_attention_heads=4, decoder_attention_heads=4, encoder_ffn_dim=64,
                     decoder_ffn_dim=64, decoder_start_token_id=0, pad_token_id=0),
    # more vision
    _vision("beit", "vision transformer", "BeitModel", "BeitConfig", hidden_size=32, num_hidden_layers=2,
            num_attention_heads=2, intermediate_size=64, image_size=32, patch_size=8),
    _vision("dinov2", "vision transformer", "Dinov2Model", "Dinov2Config", hidden_size=32, num_hidden_layers=2,
            num_attention_heads=2, mlp_ratio=2, image_size=32, patch_size=8),
    _vision("swinv2", "hierarchical/windowed transformer", "Swinv2Model", "Swinv2Config", image_size=32,
            patch_size=4, embed_dim=16, depths=[2, 2], num_heads=[2, 4], window_size=4),
    _vision("convnextv2", "vision CNN", "ConvNextV2Model", "ConvNextV2Config", hidden_sizes=[16, 32], depths=[1, 1],
            num_stages=2, image_size=32),
    _vision("regnet", "vision CNN", "RegNetModel", "RegNetConfig", embedding_size=16, hidden_sizes=[16, 32],
            depths=[1, 1], groups_width=8),
    _vision("mobilenet-v2", "vision CNN", "MobileNetV2Model", "MobileNetV2Config", image_size=32, depth_multiplier=0.25),
    _vision("poolformer", "vision CNN", "PoolFormerModel", "PoolFormerConfig", hidden_sizes=[16, 32], depths=[1, 1],
            num_encoder_blocks=2, patch_sizes=[7, 3], strides=[4, 2], padding=[2, 1]),
    _vision("yolos (detection head)", "detection", "YolosForObjectDetection", "YolosConfig", hidden_size=32,
            num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, image_size=[32, 32], patch_size=8,
            num_detection_tokens=5),
    _vision("dpt (depth head)", "segmentation", "DPTForDepthEstimation", "DPTConfig", hidden_size=32,
            num_hidden_layers=4, num_attention_heads=2, intermediate_size=64, image_size=32, patch_size=8,
            backbone_out_indices=[0, 1, 2, 3], neck_hidden_sizes=[8, 16, 32, 32], fusion_hidden_size=16,
            head_in_index=-1),
    # video
    _video("videomae", "VideoMAEModel", "VideoMAEConfig", image_size=32, patch_size=8, num_frames=4, tubelet_size=2,
           hidden_size=32, num_hidden_layers=2, num_attention_heads=2, intermediate_size=64),
    # CLIP-style dual encoders
    _text_and_image("clip", "CLIPModel", "CLIPConfig",
                    text_config=dict(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=16),
                    vision_config=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                       intermediate_size=64, image_size=32, patch_size=8),
                    projection_dim=16),
    _text_and_image("siglip", "SiglipModel", "SiglipConfig",
                    text_config=dict(vocab_size=96, hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                     intermediate_size=64, max_position_embeddings=16),
                    vision_config=dict(hidden_size=32, num_hidden_layers=2, num_attention_heads=2,
                                       intermediate_size=64, image_size=32, patch_size=8)),
    # more speech and audio
    _audio("wavlm", "WavLMModel", "WavLMConfig", **_WAV2VEC2),
    _audio("data2vec-audio", "Data2VecAudioModel", "Data2VecAudioConfig", **_WAV2VEC2),
    _features("whisper encoder", "WhisperForAudioClassification", "WhisperConfig", (16, 32), num_mel_bins=16,
              d_model=32, encoder_layers=2, encoder_attention_heads=4, encoder_ffn_dim=64, max_source_positions=16,
              num_labels=3),
    _features("audio spectrogram transformer", "ASTModel", "ASTConfig", (32, 16), hidden_size=32,
              num_hidden_layers=2, num_attention_heads=2, intermediate_size=64, max_length=32, num_mel_bins=16,
              patch_size=8, frequency_stride=8, time_stride=8),
]
