"""The model zoo's architectures: each built from its library's own classes with a
shrunk config and random weights, with the inputs it is exported on and the (other)
inputs it is run on, and the dims that are dynamic between them."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

import torch
from torch.export import Dim

from zoo.vision_packages import vision_packages


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


FULL_SIZES = False
"""`tests/zoo/run.py --full`: the run inputs' dynamic dims grow (batch 3 → 12, sequence
length 11 → 60, decoder targets 8 → 40); the exported program stays the same."""


def _sized(pair: tuple[int, int], variant: int, full: int) -> int:
    """`pair[variant]`, or `full` for the run input of a dim that differs between the
    two (a dynamic one) under `FULL_SIZES`."""
    return full if FULL_SIZES and variant == 1 and pair[0] != pair[1] else pair[variant]


def _without_zero_parameters(model: torch.nn.Module) -> torch.nn.Module:
    """`model` with every all-zero parameter drawn at random: libraries zero-initialize
    classifier heads (timm's and torchvision's ViTs), residual branches' last norm
    (timm's ResNets) and layer scales, which would make an output constant, or a block
    the identity, and a comparison with eager PyTorch see none of what they hide."""
    generator = torch.Generator().manual_seed(1)
    with torch.no_grad():
        for parameter in model.parameters():
            if parameter.numel() and not parameter.any():
                fan_in = parameter[0].numel() if parameter.dim() > 1 else 4
                values = torch.randn(parameter.shape, generator=generator) / fan_in**0.5
                parameter.copy_(values.to(parameter.dtype))
    return model


def _hf(model_class: str, config_class: str, **config: Any) -> Callable[[], torch.nn.Module]:
    def build() -> torch.nn.Module:
        import transformers

        torch.manual_seed(0)
        settings = getattr(transformers, config_class)(**config)
        return _without_zero_parameters(getattr(transformers, model_class)(settings)).eval()

    return build


def _torchvision(name: str, family: str, builder: str, size: int = 32, **arguments: Any) -> Architecture:
    """`torchvision.models.<builder>(**arguments)` (no weights: nothing downloads)."""

    def build() -> torch.nn.Module:
        torchvision, _ = vision_packages()
        torch.manual_seed(0)
        return _without_zero_parameters(attrgetter(builder)(torchvision.models)(**arguments)).eval()

    return Architecture(f"torchvision {name}", family, build, _images(size=size), _batch_dims)


def _timm(name: str, family: str, model_name: str, size: int = 32, **arguments: Any) -> Architecture:
    """`timm.create_model(model_name, pretrained=False, num_classes=10, **arguments)`."""

    def build() -> torch.nn.Module:
        _, timm = vision_packages()
        torch.manual_seed(0)
        model = timm.create_model(model_name, pretrained=False, num_classes=10, **arguments)
        return _without_zero_parameters(model).eval()

    return Architecture(f"timm {name}", family, build, _images(size=size), _batch_dims)


def _clips(name: str, builder: str, frames: int, size: int) -> Architecture:
    """A torchvision video model on `[batch, 3, frames, size, size]` clips."""

    def build() -> torch.nn.Module:
        torchvision, _ = vision_packages()
        torch.manual_seed(0)
        return _without_zero_parameters(attrgetter(builder)(torchvision.models.video)(num_classes=10)).eval()

    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randn(_sized((2, 3), variant, 12), 3, frames, size, size, generator=generator),)

    return Architecture(f"torchvision {name}", "video (3-D conv)", build, inputs, _batch_dims)


def _tokens(vocab: int, batch: tuple[int, int] = (2, 2), length: tuple[int, int] = (7, 11)) -> Callable[[int], tuple[Any, ...]]:
    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randint(0, vocab, (_sized(batch, variant, 12), _sized(length, variant, 60)), generator=generator),)

    return inputs


def _images(channels: int = 3, size: int = 32, batch: tuple[int, int] = (2, 3)) -> Callable[[int], tuple[Any, ...]]:
    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randn(_sized(batch, variant, 12), channels, size, size, generator=generator),)

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
        length, target = _sized((7, 11), variant, 60), _sized((5, 8), variant, 40)
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
        return (torch.randn(_sized((2, 3), variant, 12), 1600, generator=generator),)

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
            torch.randint(0, 96, (_sized((2, 3), variant, 12), _sized((7, 11), variant, 16)), generator=generator),
            torch.randn(_sized((2, 3), variant, 12), 3, 32, 32, generator=generator),
        )

    def dims() -> tuple[Any, ...]:
        return ({0: Dim("texts", min=1, max=16), 1: Dim("length", min=2, max=16)}, {0: Dim("images", min=1, max=16)})

    return Architecture(
        name, "CLIP-style dual encoder", lambda: _TextAndImage(make()).eval(), inputs, dims
    )


def _video(name: str, model_class: str, config_class: str, **config: Any) -> Architecture:
    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randn(_sized((2, 3), variant, 12), 4, 3, 32, 32, generator=generator),)

    return Architecture(name, "video (3-D conv)", _hf(model_class, config_class, **config), inputs, _batch_dims)


def _features(name: str, model_class: str, config_class: str, shape: tuple[int, ...], **config: Any) -> Architecture:
    """A speech model on precomputed features (`[batch, *shape]`), dynamic batch."""

    def inputs(variant: int) -> tuple[Any, ...]:
        generator = torch.Generator().manual_seed(variant)
        return (torch.randn(_sized((2, 3), variant, 12), *shape, generator=generator),)

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
    _decoder("qwen3-moe (MoE batched_mm experts)", "Qwen3MoeForCausalLM", "Qwen3MoeConfig", **_DECODER,
             moe_intermediate_size=16, num_experts=4, num_experts_per_tok=2, head_dim=8,
             experts_implementation="batched_mm"),
    _decoder("qwen3-moe (MoE eager experts loop)", "Qwen3MoeForCausalLM", "Qwen3MoeConfig", **_DECODER,
             moe_intermediate_size=16, num_experts=4, num_experts_per_tok=2, head_dim=8,
             experts_implementation="eager"),
    # Mamba's scan specializes the sequence length at export: its batch is what varies.
    Architecture(
        "mamba (state space)", "decoder",
        _hf("MambaForCausalLM", "MambaConfig", vocab_size=96, hidden_size=32, num_hidden_layers=2, state_size=8,
            expand=2, conv_kernel=4, use_cache=False),
        _tokens(96, batch=(2, 3), length=(7, 7)), _batch_dims,
    ),
    # hybrids of state-space and attention layers (their scans fix the length too)
    Architecture(
        "bamba (hybrid)", "decoder",
        _hf("BambaForCausalLM", "BambaConfig", **_DECODER, mamba_n_heads=4, mamba_d_head=16, mamba_d_state=8,
            mamba_n_groups=1, attn_layer_indices=[1], use_cache=False),
        _tokens(96, batch=(2, 3), length=(7, 7)), _batch_dims,
    ),
    Architecture(
        "jamba (hybrid MoE)", "decoder",
        _hf("JambaForCausalLM", "JambaConfig", **_DECODER, num_experts=4, num_experts_per_tok=2,
            expert_layer_period=2, expert_layer_offset=1, attn_layer_period=2, attn_layer_offset=1,
            mamba_d_state=8, mamba_expand=2, use_cache=False),
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
    # more vision from transformers
    _vision("efficientnet", "vision CNN", "EfficientNetModel", "EfficientNetConfig", image_size=32,
            width_coefficient=1.0, depth_coefficient=0.25, hidden_dim=1280),
    # torchvision
    _torchvision("resnet18", "vision CNN", "resnet18", num_classes=10),
    _torchvision("resnext50", "vision CNN", "resnext50_32x4d", num_classes=10),
    _torchvision("mobilenet-v3", "vision CNN", "mobilenet_v3_small", num_classes=10),
    _torchvision("efficientnet-b0", "vision CNN", "efficientnet_b0", num_classes=10),
    _torchvision("convnext", "vision CNN", "convnext_tiny", num_classes=10),
    _torchvision("regnet-y", "vision CNN", "regnet_y_400mf", num_classes=10),
    _torchvision("densenet121", "vision CNN", "densenet121", num_classes=10),
    _torchvision("squeezenet", "vision CNN", "squeezenet1_1", size=64, num_classes=10),
    _torchvision("shufflenet-v2", "vision CNN", "shufflenet_v2_x0_5", num_classes=10),
    _torchvision("mnasnet", "vision CNN", "mnasnet0_5", num_classes=10),
    _torchvision("googlenet", "vision CNN", "googlenet", size=64, num_classes=10, aux_logits=False,
                 init_weights=False),
    _torchvision("inception-v3", "vision CNN", "inception_v3", size=80, num_classes=10, aux_logits=False,
                 init_weights=False),
    _torchvision("vit", "vision transformer", "VisionTransformer", image_size=32, patch_size=8, num_layers=2,
                 num_heads=2, hidden_dim=32, mlp_dim=64, num_classes=10),
    _torchvision("swin", "hierarchical/windowed transformer", "swin_t", size=64, num_classes=10),
    _torchvision("swin-v2", "hierarchical/windowed transformer", "swin_v2_t", size=64, num_classes=10),
    _torchvision("maxvit", "hierarchical/windowed transformer", "MaxVit", input_size=(32, 32), stem_channels=16,
                 partition_size=2, block_channels=[16, 32], block_layers=[1, 1], head_dim=8,
                 stochastic_depth_prob=0.0, num_classes=10),
    _torchvision("lraspp (segmentation head)", "segmentation", "segmentation.lraspp_mobilenet_v3_large", size=64,
                 num_classes=5, weights_backbone=None),
    _torchvision("deeplabv3 (segmentation head)", "segmentation", "segmentation.deeplabv3_mobilenet_v3_large",
                 size=64, num_classes=5, weights_backbone=None),
    _torchvision("fcn (segmentation head)", "segmentation", "segmentation.fcn_resnet50", size=64, num_classes=5,
                 weights_backbone=None),
    _clips("r3d-18", "r3d_18", frames=4, size=32),
    _clips("r(2+1)d-18", "r2plus1d_18", frames=4, size=32),
    # timm
    _timm("resnet26d", "vision CNN", "resnet26d"),
    _timm("seresnext26d (squeeze-excite)", "vision CNN", "seresnext26d_32x4d"),
    _timm("efficientnet-b0", "vision CNN", "efficientnet_b0"),
    _timm("mobilenet-v3", "vision CNN", "mobilenetv3_small_050"),
    _timm("mobilenet-v4", "vision CNN", "mobilenetv4_conv_small"),
    _timm("convnext", "vision CNN", "convnext_atto"),
    _timm("nfnet (weight-standardized)", "vision CNN", "nfnet_l0"),
    _timm("repvgg", "vision CNN", "repvgg_a0"),
    _timm("cspresnet", "vision CNN", "cspresnet50"),
    _timm("dla", "vision CNN", "dla34"),
    _timm("ghostnet", "vision CNN", "ghostnet_050"),
    _timm("hrnet", "vision CNN", "hrnet_w18_small", size=64),
    _timm("rexnet", "vision CNN", "rexnet_100"),
    _timm("xception", "vision CNN", "xception41", size=64),
    _timm("res2net", "vision CNN", "res2net50_14w_8s"),
    _timm("resnest (split attention)", "vision CNN", "resnest14d"),
    _timm("dpn", "vision CNN", "dpn68"),
    _timm("hgnet-v2", "vision CNN", "hgnetv2_b0"),
    _timm("lcnet", "vision CNN", "lcnet_050"),
    _timm("tinynet", "vision CNN", "tinynet_e"),
    _timm("vovnet", "vision CNN", "vovnet39a"),
    _timm("regnetz", "vision CNN", "regnetz_005"),
    _timm("repvit", "vision CNN", "repvit_m0_9"),
    _timm("inception-next", "vision CNN", "inception_next_tiny"),
    _timm("convmixer", "vision CNN", "convmixer_768_32"),
    _timm("fastvit (reparameterized)", "vision CNN", "fastvit_t8"),
    _timm("edgenext", "vision CNN", "edgenext_xx_small"),
    _timm("poolformer-v2", "vision CNN", "poolformerv2_s12"),
    _timm("mobilevit-v2", "vision CNN", "mobilevitv2_050", size=64),
    _timm("efficientvit", "vision CNN", "efficientvit_b0", size=64),
    _timm("vit", "vision transformer", "vit_tiny_patch16_224", img_size=32, patch_size=8, depth=2),
    _timm("deit (distilled)", "vision transformer", "deit_tiny_distilled_patch16_224", img_size=32, patch_size=8,
          depth=2),
    _timm("eva02 (RoPE)", "vision transformer", "eva02_tiny_patch14_224", size=28, img_size=28, depth=2),
    _timm("beit-v2", "vision transformer", "beitv2_base_patch16_224", img_size=32, patch_size=8, depth=2,
          embed_dim=64, num_heads=2),
    _timm("cait (class attention)", "vision transformer", "cait_xxs24_224", img_size=32, patch_size=8, depth=2),
    _timm("xcit (cross-covariance)", "vision transformer", "xcit_nano_12_p16_224", img_size=32, depth=2),
    _timm("levit", "vision transformer", "levit_128s", img_size=32),
    _timm("pit (pooling)", "vision transformer", "pit_ti_224", size=64, img_size=64),
    _timm("tnt (transformer in transformer)", "vision transformer", "tnt_s_patch16_224", img_size=32),
    _timm("volo (outlook attention)", "vision transformer", "volo_d1_224", img_size=32),
    _timm("efficientformer", "vision transformer", "efficientformer_l1", size=224),
    _timm("efficientformer-v2", "vision transformer", "efficientformerv2_s0", img_size=32),
    _timm("mlp-mixer", "MLP", "mixer_s16_224", img_size=32),
    _timm("resmlp", "MLP", "resmlp_12_224", img_size=32),
    _timm("gmlp (gated)", "MLP", "gmlp_ti16_224", img_size=32),
    _timm("sequencer (LSTM)", "recurrent (LSTM)", "sequencer2d_s"),
    _timm("swin", "hierarchical/windowed transformer", "swin_tiny_patch4_window7_224", size=56, img_size=56,
          depths=(1, 1, 1, 1), window_size=7),
    _timm("twins (windows of heads)", "hierarchical/windowed transformer", "twins_svt_small", size=64),
    _timm("nest (nested blocks)", "hierarchical/windowed transformer", "nest_tiny", img_size=32),
    _timm("pvt-v2", "hierarchical/windowed transformer", "pvt_v2_b0", size=64),
    _timm("coatnet", "hierarchical/windowed transformer", "coatnet_nano_rw_224", size=64, img_size=64),
    _timm("maxvit", "hierarchical/windowed transformer", "maxvit_nano_rw_256", size=64, img_size=64),
    _timm("tiny-vit", "hierarchical/windowed transformer", "tiny_vit_5m_224", size=64),
    _timm("davit (dual attention)", "hierarchical/windowed transformer", "davit_tiny", size=64),
    _timm("focalnet (focal modulation)", "hierarchical/windowed transformer", "focalnet_tiny_srf", size=64),
    _timm("mvit-v2 (pooling attention)", "hierarchical/windowed transformer", "mvitv2_tiny", size=224),
    _timm("hiera", "hierarchical/windowed transformer", "hiera_tiny_224", size=224),
]
