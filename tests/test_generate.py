"""Text generation, mlx-lm style: `mlxir generate --model <folder> --prompt ...` and
`mlxir.tools.llm.load` / `stream_generate`, against transformers' `generate` decoded by
the same tokenizer.

The folder is what `save_pretrained` writes for a random-weight Llama and a BPE
tokenizer trained here with the `tokenizers` package (with a chat template): nothing
is downloaded. Greedy tokens are compared exactly (f32)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import torch

from mlxir.tools import llm
from mlxir.tools.cli import main_with
from mlxir.tools.tokenizer import FastTokenizer, TransformersTokenizer

# Its tests share compiled programs (module fixtures, caches): one worker compiles them once.
pytestmark = pytest.mark.xdist_group("test_generate")

CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}<|{{ m['role'] }}|>\n{{ m['content'] }}{{ eos_token }}\n"
    "{% endfor %}{% if add_generation_prompt %}<|assistant|>\n{% endif %}"
)
TEXT = [
    "The quick brown fox jumps over the lazy dog.",
    "MLX is an array framework for machine learning on Apple silicon.",
    "Compilers translate programs from one language into another, déjà vu, naïve café.",
    "<|user|> <|assistant|> <|system|> hello world",
]


def _tokenizer(folder: Path) -> Any:
    from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors, trainers
    from transformers import PreTrainedTokenizerFast

    backend = Tokenizer(models.BPE())
    backend.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
    backend.decoder = decoders.ByteLevel()
    trainer = trainers.BpeTrainer(
        vocab_size=400,
        special_tokens=["<s>", "</s>", "<pad>"],
        initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
    )
    backend.train_from_iterator(TEXT * 20, trainer)
    backend.post_processor = processors.TemplateProcessing(single="<s> $A", special_tokens=[("<s>", 0)])
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=backend, bos_token="<s>", eos_token="</s>", pad_token="<pad>"
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    tokenizer.save_pretrained(folder)
    return tokenizer


def save_tiny_llama(folder: Path) -> Any:
    """A 2-layer Llama with the tiny chat tokenizer, saved as `save_pretrained` does."""
    from transformers import LlamaConfig, LlamaForCausalLM

    tokenizer = _tokenizer(folder)
    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=64,
        intermediate_size=128,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=256,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        attn_implementation="sdpa",
    )
    model = LlamaForCausalLM(config).eval()
    model.save_pretrained(folder)
    return model


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    folder = tmp_path_factory.mktemp("tiny-llama")
    return folder, save_tiny_llama(folder)


def _expected(folder: Path, model: Any, prompt: str, max_tokens: int, *, chat: bool = True) -> tuple[list[int], str]:
    """The prompt ids transformers' tokenizer makes, and the text of its greedy generate."""
    from transformers import AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(folder)
    if chat:
        text = tokenizer.apply_chat_template(
            [{"role": "user", "content": prompt}], add_generation_prompt=True, tokenize=False
        )
        ids = tokenizer(text, add_special_tokens=False).input_ids
    else:
        ids = tokenizer(prompt).input_ids
    with torch.no_grad():
        out = model.generate(  # pyright: ignore[reportCallIssue]
            torch.tensor([ids]), max_new_tokens=max_tokens, do_sample=False,
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
        )
    return ids, tokenizer.decode(out[0, len(ids) :], skip_special_tokens=True)


@pytest.mark.parametrize("chat", [True, False], ids=["chat-template", "plain"])
def test_stream_generate_matches_transformers(hf_folder: tuple[Path, Any], tmp_path: Path, chat: bool) -> None:
    folder, model = hf_folder
    compiled, tokenizer = llm.load(folder, cache_dir=tmp_path, progress=None)
    assert isinstance(tokenizer, FastTokenizer)
    prompt = "the lazy dog and the café"
    expected_ids, expected_text = _expected(folder, model, prompt, 16, chat=chat)
    assert tokenizer.encode_prompt(prompt, chat_template=chat) == expected_ids
    stats = llm.GenerationStats()
    pieces = list(llm.stream_generate(compiled, tokenizer, prompt, max_tokens=16, chat_template=chat, stats=stats))
    assert "".join(pieces) == expected_text
    assert len(pieces) > 1  # streamed, not one piece at the end
    assert stats.prompt_tokens == len(expected_ids) and 1 <= stats.generation_tokens <= 16
    assert stats.peak_memory > 0


def test_a_state_space_folder_loads_and_generates_as_transformers(tmp_path: Path) -> None:
    """A Mamba folder compiles to the recurrent step program (`llm.load` picks it from
    the model's cache) and streams transformers' greedy text."""
    from transformers import MambaConfig, MambaForCausalLM

    folder = tmp_path / "tiny-mamba"
    tokenizer = _tokenizer(folder)
    torch.manual_seed(0)
    config = MambaConfig(
        vocab_size=len(tokenizer), hidden_size=32, state_size=8, num_hidden_layers=2,
        expand=2, conv_kernel=4, bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id, pad_token_id=tokenizer.pad_token_id,
    )
    model = MambaForCausalLM(config).eval()
    model.save_pretrained(folder)
    compiled, text_tokenizer = llm.load(folder, cache_dir=tmp_path / "cache", progress=None)
    assert compiled.cache == "recurrent"
    prompt = "the quick brown fox"
    expected_ids, expected_text = _expected(folder, model, prompt, 12, chat=False)
    assert text_tokenizer.encode_prompt(prompt, chat_template=False) == expected_ids
    pieces = list(llm.stream_generate(compiled, text_tokenizer, prompt, max_tokens=12, chat_template=False))
    assert "".join(pieces) == expected_text

    # Its recurrent cache saved after a prefix (the states and the step count) and read
    # back continues as the whole prompt; it cannot be trimmed (a scan state is not
    # taken back), so a draft model is refused in one line.
    from mlxir.tools.llm.prompt_cache import PromptCache, make_prompt_cache
    from mlxir.tools.llm.speculative import stream_speculative

    make_prompt_cache(compiled, expected_ids[:3]).save(tmp_path / "states")
    cache = PromptCache.load(tmp_path / "states")
    assert cache.kind == "RecurrentCache"
    pieces = list(llm.stream_generate(compiled, text_tokenizer, expected_ids[3:], max_tokens=12, prompt_cache=cache))
    assert "".join(pieces) == expected_text
    with pytest.raises(ValueError, match="cannot take back rejected proposals"):
        next(stream_speculative(compiled, compiled, expected_ids))


def test_the_fast_tokenizer_agrees_with_transformers(hf_folder: tuple[Path, Any]) -> None:
    folder, _ = hf_folder
    fast, slow = FastTokenizer(folder), TransformersTokenizer(folder)
    for prompt in ["hello world", "naïve déjà vu — ünïcödé 😀", ""]:
        for chat in (True, False):
            for system in (None, "Be brief."):
                assert fast.encode_prompt(prompt, system_prompt=system, chat_template=chat) == slow.encode_prompt(
                    prompt, system_prompt=system, chat_template=chat
                )
    ids = fast.encode_prompt("naïve déjà vu 😀", chat_template=True)
    assert fast.decode(ids) == slow.decode(ids)
    assert fast.eos_token_ids == slow.eos_token_ids == {1}


def test_cli_generate_streams_text_and_caches_the_program(
    hf_folder: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    folder, model = hf_folder
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    prompt = "quick brown fox"
    _, expected = _expected(folder, model, prompt, 12)
    argv = ["generate", "--model", str(folder), "--prompt", prompt, "--max-tokens", "12"]
    capfd.readouterr()
    assert main_with(argv) == 0
    first = capfd.readouterr()
    assert first.out == expected + "\n"
    assert "compiling" in first.err and "cached as" in first.err
    for line in ("Prompt: ", "Generation: ", "Peak memory: "):
        assert line in first.err
    cached = list((tmp_path / "cache" / "llm").glob("*.mlxfb"))
    assert len(cached) == 1

    assert main_with(argv) == 0  # from the cache
    second = capfd.readouterr()
    assert second.out == expected + "\n" and "compiling" not in second.err

    # A compiled program with its tokenizer's folder.
    assert main_with(["generate", "--model", str(cached[0]), "--tokenizer", str(folder), "--prompt", prompt, "--max-tokens", "12"]) == 0
    assert capfd.readouterr().out == expected + "\n"

    # --no-cache compiles and writes nothing.
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "other"))
    assert main_with([*argv, "--no-cache"]) == 0
    assert capfd.readouterr().out == expected + "\n"
    assert not (tmp_path / "other" / "llm").exists()


def test_cli_generate_quantized(
    hf_folder: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """`--quantize 4`: the text transformers generates with every linear weight replaced
    by `mx.dequantize(mx.quantize(w, 64, 4))`; a program cached apart from the float one."""
    import copy

    import mlx.core as mx
    import numpy as np

    folder, model = hf_folder
    reference = copy.deepcopy(model)
    with torch.no_grad():
        for module in reference.modules():
            if isinstance(module, torch.nn.Linear):
                parts = mx.quantize(mx.array(module.weight.numpy()), 64, 4)
                module.weight.copy_(torch.from_numpy(np.array(mx.dequantize(*parts, group_size=64, bits=4))))
    prompt = "quick brown fox"
    _, expected = _expected(folder, reference, prompt, 12)
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    argv = ["generate", "--model", str(folder), "--prompt", prompt, "--max-tokens", "12", "--quantize", "4"]
    capfd.readouterr()
    assert main_with(argv) == 0
    assert capfd.readouterr().out == expected + "\n"
    assert main_with(argv[:-2]) == 0  # the float program: another cache entry
    assert len(list((tmp_path / "cache" / "llm").glob("*.mlxfb"))) == 2
    capfd.readouterr()
    assert main_with([*argv[:-2], "--quantize", "7"]) == 2  # a usage error
    assert "bits in [2, 3, 4, 5, 6, 8], not 7" in capfd.readouterr().err


def test_cache_key_follows_weights_and_config(hf_folder: tuple[Path, Any], tmp_path: Path) -> None:
    import shutil

    folder, _ = hf_folder
    copy = tmp_path / "copy"
    shutil.copytree(folder, copy)
    assert llm.cache_key(copy) == llm.cache_key(folder)
    weights = next(copy.glob("*.safetensors"))
    data = bytearray(weights.read_bytes())
    data[-1] ^= 1
    weights.write_bytes(bytes(data))
    assert llm.cache_key(copy) != llm.cache_key(folder)
    assert llm.cache_key(folder, logits="all") != llm.cache_key(folder)


@pytest.mark.parametrize(
    ("argv", "status", "message"),
    [
        (["generate", "--model", "no-such-folder", "--prompt", "x"], 1, "no-such-folder"),
        (["generate", "--prompt", "x"], 2, "needs --model"),
        (["generate", "--model", "x", "--prompt", "a", "--ids", "1"], 2, "not both"),
    ],
)
def test_cli_generate_errors(argv: list[str], status: int, message: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main_with(argv) == status
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_what_is_not_a_model_is_said_so(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A text file is not called a compiled program, nor an empty folder a folder
    without a tokenizer: each is one line saying what it is not."""
    notes = tmp_path / "notes.txt"
    notes.write_text("some notes")
    assert main_with(["generate", "--model", str(notes), "--prompt", "x"]) == 1
    err = capsys.readouterr().err
    assert "is neither a model folder saved by save_pretrained nor a compiled program" in err
    assert "is a compiled program" not in err and len(err.strip().splitlines()) == 1
    (tmp_path / "empty").mkdir()
    assert main_with(["generate", "--model", str(tmp_path / "empty"), "--prompt", "x"]) == 1
    err = capsys.readouterr().err
    assert "is not a model folder saved by save_pretrained: it has no config.json" in err
    from mlxir.tools.tokenizer import load_tokenizer

    with pytest.raises(FileNotFoundError, match="is not a folder saved by save_pretrained: it has no tokenizer.json"):
        load_tokenizer(tmp_path / "empty")


def test_a_program_without_its_tokenizer_is_a_clear_error(
    hf_folder: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    program = tmp_path / "p.mlxfb"
    program.write_bytes(b"")
    assert main_with(["generate", "--model", str(program), "--prompt", "x"]) == 1
    assert "--tokenizer" in capsys.readouterr().err


def _greedy_ids(folder: Path, model: Any, prompt: str, max_tokens: int) -> list[int]:
    """transformers' greedy new tokens after the chat-templated prompt."""
    ids, _ = _expected(folder, model, prompt, 1)
    with torch.no_grad():
        out = model.generate(  # pyright: ignore[reportCallIssue]
            torch.tensor([ids]), max_new_tokens=max_tokens, do_sample=False,
            attention_mask=torch.ones(1, len(ids), dtype=torch.long),
        )
    return [int(t) for t in out[0, len(ids) :]]


def test_an_mlx_lm_command_line_runs_unchanged(
    hf_folder: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """mlx_lm.generate's short flags (`-p`, `-m`), `-p -` for a prompt on stdin,
    `--verbose False` (the text only), `--extra-eos-token` (stops before that token),
    `--min-p 1` (only the most likely token: greedy), and a real peak memory."""
    import io
    import re

    folder, model = hf_folder
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    prompt = "quick brown fox"
    _, expected = _expected(folder, model, prompt, 12)
    capfd.readouterr()
    assert main_with(["generate", "--model", str(folder), "-p", prompt, "-m", "12"]) == 0
    first = capfd.readouterr()
    assert first.out == expected + "\n"
    peak = re.search(r"Peak memory: ([0-9.]+) GB", first.err)
    assert peak is not None and float(peak.group(1)) > 0
    monkeypatch.setattr("sys.stdin", io.StringIO(prompt))
    assert main_with(["generate", "--model", str(folder), "-p", "-", "-m", "12", "--verbose", "False"]) == 0
    quiet = capfd.readouterr()
    assert quiet.out == expected + "\n" and "Prompt:" not in quiet.err and "Peak memory" not in quiet.err
    sampled = ["generate", "--model", str(folder), "-p", prompt, "-m", "12", "--temp", "0.8", "--min-p", "1", "--seed", "3"]
    assert main_with(sampled) == 0
    assert capfd.readouterr().out == expected + "\n"

    tokenizer = FastTokenizer(folder)
    prompt = "hello world"  # a prompt whose greedy generation runs 12 tokens without EOS
    generated = _greedy_ids(folder, model, prompt, 12)
    assert len(generated) == 12
    stop = next(
        k for k, t in enumerate(generated)
        if k > 0 and t not in generated[:k] and tokenizer.encode(tokenizer.decode([t]), add_special_tokens=False) == [t]
    )
    stop_text = tokenizer.decode([generated[stop]])
    assert main_with(["generate", "--model", str(folder), "-p", prompt, "-m", "12", "--extra-eos-token", stop_text]) == 0
    assert capfd.readouterr().out == tokenizer.decode(generated[:stop]) + "\n"


def test_generation_stops_at_the_end_of_the_context(
    hf_folder: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """`-m -1 --ignore-eos` generates until the program's context is full (the tiny
    model's 256 positions: its growing cache takes 256 past tokens), then stops with a
    note, exit status 0; a prompt longer than the context is a one-line error."""
    folder, _ = hf_folder
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    capfd.readouterr()
    assert main_with(["generate", "--model", str(folder), "-p", "fox", "-m", "-1", "--ignore-eos"]) == 0
    err = capfd.readouterr().err
    assert "stopped at the end of the model's context (257 tokens)" in err
    prompt_tokens = int(err.split("Prompt: ", 1)[1].split()[0])
    generated = int(err.split("Generation: ", 1)[1].split()[0])
    assert prompt_tokens + generated == 258  # the last token is generated, never fed back
    assert main_with(["generate", "--model", str(folder), "-p", "fox " * 300, "--ignore-chat-template"]) == 1
    err = capfd.readouterr().err
    assert "this program's context holds 257" in err and "Traceback" not in err
    assert "==========" not in err  # the error alone, not after the text's opening line


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--max-tokens", "-2"], "--max-tokens must be -1"),
        (["--temp", "-1"], "--temp must be 0 (greedy) or positive"),
        (["--top-p", "1.5"], "--top-p must be in (0, 1]"),
        (["--top-p", "0"], "--top-p must be in (0, 1]"),
        (["--min-p", "2"], "--min-p must be in [0, 1]"),
        (["--top-k", "-3"], "--top-k must be 0"),
        (["--ids", "1,2"], "not both"),
        (["--seed", "-1"], "--seed must be an integer in [0, 2**64 - 1], not -1"),
        (["--seed", str(2**64)], "--seed must be an integer in [0, 2**64 - 1]"),
        (["--kv-bits", "4", "--max-kv-size", "64"], "--kv-bits and --max-kv-size do not combine"),
    ],
)
def test_generate_checks_every_value_before_loading(
    hf_folder: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str], flags: list[str], message: str,
) -> None:
    """A value a flag does not take is a usage error (exit 2, one line) found before
    the model is compiled: nothing is written to the cache."""
    folder, _ = hf_folder
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    capfd.readouterr()
    assert main_with(["generate", "--model", str(folder), "-p", "x", *flags]) == 2
    err = capfd.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1 and "compiling" not in err
    assert not (tmp_path / "cache" / "llm").exists()


def test_samplers_and_logits_processors_shaped_like_mlx_lm() -> None:
    """`make_sampler` greedy at temp 0, and with min-p 1 only the most likely token
    survives; min-p drops exactly the tokens under min_p times the top probability;
    the repetition penalty divides positive and multiplies negative logits of the
    recent tokens, as mlx-lm's does."""
    import math

    import mlx.core as mx

    logits = mx.array([[2.0, 1.0, 0.5, -1.0, 3.0]])
    assert llm.make_sampler()(logits).tolist() == [4]
    sampler = llm.make_sampler(temp=1.0, min_p=1.0, seed=0)
    assert all(sampler(logits).tolist() == [4] for _ in range(20))
    # probabilities relative to the top: e^(l - 3); min-p 0.3 keeps l >= 3 + ln 0.3 = 1.80
    kept = set()
    for seed in range(200):
        kept.add(int(llm.sample_next(logits, do_sample=True, min_p=0.3, key=mx.random.key(seed)).item()))
    assert kept == {0, 4}
    assert 3 + math.log(0.3) < 2.0
    (penalty,) = llm.make_logits_processors(repetition_penalty=2.0, repetition_context_size=2)
    history = mx.array([[0, 3, 1]])  # the last two: 3 and 1
    assert penalty(history, logits).tolist() == [[2.0, 0.5, 0.5, -2.0, 3.0]]
    assert llm.make_logits_processors() == [] and llm.make_logits_processors(repetition_penalty=1.0) == []
    with pytest.raises(ValueError, match="repetition_penalty must be positive"):
        llm.make_logits_processors(repetition_penalty=0.0)


def test_stream_tokens_takes_a_sampler_and_processors(hf_folder: tuple[Path, Any], tmp_path: Path) -> None:
    """An mlx-lm-shaped sampler replaces the built-in one, and the processors see the
    tokens so far: a penalty of 1e9 on every recent token makes each greedy token new."""
    import mlx.core as mx

    folder, _ = hf_folder
    compiled, _ = llm.load(folder, cache_dir=tmp_path)
    ids = mx.array([[5, 6, 7, 8]], dtype=mx.int64)
    plain = [int(t.item()) for t, _ in llm.stream_tokens(compiled, ids, max_new_tokens=8)]
    argmax = [int(t.item()) for t, _ in llm.stream_tokens(compiled, ids, max_new_tokens=8, sampler=lambda x: mx.argmax(x, axis=-1))]
    assert argmax == plain
    penalty = llm.make_logits_processors(repetition_penalty=1e9, repetition_context_size=100)
    fresh = [int(t.item()) for t, _ in llm.stream_tokens(compiled, ids, max_new_tokens=8, logits_processors=penalty)]
    assert len(set(fresh)) == len(fresh) and not set(fresh) & {5, 6, 7, 8}


def test_version_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from mlxir.tools.mlx_opt import run as mlx_opt

    with pytest.raises(SystemExit) as exit_:
        main_with(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.startswith("mlxir ")
    assert mlx_opt(["--version"]) == 0
    assert "mlx-opt" in capsys.readouterr().out


@pytest.fixture(scope="module")
def draft_folder(hf_folder: tuple[Path, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A one-layer Llama of the same vocabulary and tokenizer, other random weights."""
    import shutil

    from transformers import LlamaForCausalLM

    folder, model = hf_folder
    draft = tmp_path_factory.mktemp("tiny-draft")
    config = model.config.__class__.from_dict(model.config.to_dict())
    config.num_hidden_layers = 1
    torch.manual_seed(1)
    LlamaForCausalLM(config).eval().save_pretrained(draft)
    for name in ("tokenizer.json", "tokenizer_config.json", "special_tokens_map.json"):
        if (folder / name).exists():
            shutil.copy(folder / name, draft / name)
    return draft


@pytest.mark.parametrize("num_draft", [1, 3, 6])
def test_speculative_decoding_gives_the_main_models_greedy_tokens(
    hf_folder: tuple[Path, Any], draft_folder: Path, tmp_path: Path, num_draft: int
) -> None:
    """With another model as the draft, the tokens are the main model's greedy ones
    (its own program, one token per call); with the main model as its own draft every
    proposal is kept and the main model is called once per `num_draft + 1` tokens."""
    import mlx.core as mx

    from mlxir.tools.llm.speculative import SpeculativeStats, stream_speculative

    folder, _ = hf_folder
    main, _ = llm.load(folder, cache_dir=tmp_path, logits="all")
    plain, _ = llm.load(folder, cache_dir=tmp_path)
    draft, _ = llm.load(draft_folder, cache_dir=tmp_path)
    prompt = [5, 6, 7, 8, 9]
    expected = [int(t.item()) for t, _ in llm.stream_tokens(plain, mx.array([prompt], dtype=mx.int64), max_new_tokens=24)]
    stats = SpeculativeStats()
    got = list(stream_speculative(main, draft, prompt, max_new_tokens=24, num_draft_tokens=num_draft, stats=stats))
    assert got == expected
    assert 0 <= stats.accepted <= stats.drafted and stats.main_calls >= 2
    itself = SpeculativeStats()
    assert list(stream_speculative(main, main, prompt, max_new_tokens=24, num_draft_tokens=num_draft, stats=itself)) == expected
    assert itself.accepted == itself.drafted > 0
    assert itself.main_calls == 1 + -(-23 // (num_draft + 1))
    with pytest.raises(ValueError, match="logits='all'"):
        next(stream_speculative(plain, draft, prompt))


def test_cli_speculative_decoding(
    hf_folder: tuple[Path, Any], draft_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    folder, model = hf_folder
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    _, expected = _expected(folder, model, "hello world", 12)
    capfd.readouterr()
    argv = ["generate", "--model", str(folder), "-p", "hello world", "-m", "12", "--draft-model", str(draft_folder)]
    assert main_with([*argv, "--num-draft-tokens", "4"]) == 0
    out = capfd.readouterr()
    assert out.out == expected + "\n" and "Draft: " in out.err and "accepted" in out.err
    # Sampling keeps the main model's distribution: with min-p 1 only its most likely
    # token is left, so the text is the greedy one.
    assert main_with([*argv, "--temp", "0.7", "--min-p", "1", "--seed", "5"]) == 0
    assert capfd.readouterr().out == expected + "\n"
    assert main_with([*argv, "--max-kv-size", "64"]) == 2
    err = capfd.readouterr().err
    assert "--draft-model takes back the proposals it rejects by trimming the cache" in err and len(err.strip().splitlines()) == 1


def test_cli_prompt_cache_with_a_draft_model(
    hf_folder: tuple[Path, Any], draft_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
    capfd: pytest.CaptureFixture[str],
) -> None:
    """`--prompt-cache-file` with `--draft-model` prints what the prompt cache alone
    prints (greedy: the main model's tokens)."""
    folder, _ = hf_folder
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    cache_file = tmp_path / "ctx"
    assert main_with(["cache-prompt", "--model", str(folder), "-p", "the quick brown", "--prompt-cache-file", str(cache_file)]) == 0
    argv = ["generate", "--prompt-cache-file", str(cache_file), "-p", " fox jumps", "-m", "12", "--ignore-eos"]
    capfd.readouterr()
    assert main_with(argv) == 0
    alone = capfd.readouterr().out
    assert main_with([*argv, "--draft-model", str(draft_folder)]) == 0
    out = capfd.readouterr()
    assert out.out == alone and "Draft: " in out.err


def test_a_prompt_cache_continues_as_the_whole_prompt(hf_folder: tuple[Path, Any], tmp_path: Path) -> None:
    """The cache after a prefix, saved and read back, plus the rest of the prompt gives
    the tokens (and logits) of the whole prompt read at once; a cache of another model
    or a file that is not one is a `PromptCacheError`."""
    import mlx.core as mx
    import numpy as np

    from mlxir.tools.llm.prompt_cache import PromptCache, PromptCacheError, make_prompt_cache

    folder, _ = hf_folder
    compiled, _ = llm.load(folder, cache_dir=tmp_path)
    whole = [5, 6, 7, 8, 9, 10, 11, 12, 13]
    expected = [(int(t.item()), np.array(lg)) for t, lg in llm.stream_tokens(compiled, mx.array([whole]), max_new_tokens=10)]
    make_prompt_cache(compiled, whole[:6], model=str(folder)).save(tmp_path / "p.safetensors")
    cache = PromptCache.load(tmp_path / "p.safetensors")
    assert cache.tokens == whole[:6] and cache.model == str(folder)
    got = [
        (int(t.item()), np.array(lg))
        for t, lg in llm.stream_tokens(compiled, mx.array([whole[6:]]), max_new_tokens=10, prompt_cache=cache)
    ]
    assert [t for t, _ in got] == [t for t, _ in expected]
    assert max(float(np.abs(a - b).max()) for (_, a), (_, b) in zip(got, expected)) <= 1e-5
    (tmp_path / "bogus.safetensors").write_bytes(b"not a cache")
    with pytest.raises(PromptCacheError, match="not a prompt cache"):
        PromptCache.load(tmp_path / "bogus.safetensors")
    other = PromptCache(cache.tokens, [t[:, :1] for t in cache.state])
    with pytest.raises(PromptCacheError, match="made with another model"):
        other.check(compiled)


def test_cli_cache_prompt_then_generate(
    hf_folder: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """`mlxir cache-prompt` then `generate --prompt-cache-file` (the model taken from
    the cache) prints what generating from the whole text prints; the file is at exactly
    the name given (no `.safetensors` added). A rotating cache (`--max-kv-size`) is
    cached and continued the same way. An empty prompt after the cache is refused
    before anything is compiled."""
    import mlx.core as mx

    folder, _ = hf_folder
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    cache_file = tmp_path / "ctx"
    capfd.readouterr()
    assert main_with(["cache-prompt", "--model", str(folder), "-p", "the quick brown", "--prompt-cache-file", str(cache_file)]) == 0
    assert "cached" in capfd.readouterr().err
    assert sorted(p.name for p in tmp_path.iterdir() if p.is_file()) == ["ctx"]
    tokenizer = FastTokenizer(folder)
    whole = tokenizer.encode("the quick brown") + tokenizer.encode(" fox jumps", add_special_tokens=False)
    expected_ids = llm.generate(llm.load(folder, cache_dir=tmp_path / "cache")[0], [whole], max_new_tokens=10)
    expected = tokenizer.decode([int(t) for t in expected_ids[0, len(whole):]])
    assert main_with(["generate", "--prompt-cache-file", str(cache_file), "-p", " fox jumps", "-m", "10", "--ignore-eos"]) == 0
    assert capfd.readouterr().out == expected + "\n"
    assert main_with(["cache-prompt", "--model", str(folder), "-p", "x", "--prompt-cache-file", str(tmp_path / "no" / "p")]) == 1
    assert "does not exist" in capfd.readouterr().err

    rotating = tmp_path / "rotating"
    argv = ["cache-prompt", "--model", str(folder), "-p", "the quick brown", "--prompt-cache-file", str(rotating)]
    assert main_with([*argv, "--max-kv-size", "16"]) == 0
    positioned = llm.load(folder, cache_dir=tmp_path / "cache", positions=True)[0]
    rest = tokenizer.encode(" fox jumps over the lazy dog", add_special_tokens=False)
    from mlxir.tools.llm.prompt_cache import make_prompt_cache

    # What the library gives (test_generate_combinations: the same as the whole prompt).
    made = make_prompt_cache(positioned, tokenizer.encode("the quick brown"), config=llm.GenerationConfig(max_kv_size=16))
    ids = [int(t.item()) for t, _ in llm.stream_tokens(positioned, mx.array([rest]), max_new_tokens=10, prompt_cache=made)]
    capfd.readouterr()
    assert main_with(["generate", "--prompt-cache-file", str(rotating), "-p", " fox jumps over the lazy dog", "-m", "10", "--ignore-eos"]) == 0
    assert capfd.readouterr().out == tokenizer.decode(ids) + "\n"
    assert main_with(["generate", "--prompt-cache-file", str(rotating), "-p", "x", "--max-kv-size", "32"]) == 2
    assert "holds a RotatingCache of 16 tokens" in capfd.readouterr().err

    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "empty"))
    assert main_with(["generate", "--prompt-cache-file", str(cache_file), "-p", ""]) == 1
    err = capfd.readouterr().err
    assert "the prompt has no tokens" in err and "compiling" not in err
    assert not (tmp_path / "empty").exists()


def _rotating_reference(model: Any, prompt: list[int], steps: int, max_kv_size: int, keep: int) -> list[int]:
    """Greedy tokens with a rotating cache, in transformers: a DynamicCache cut back to
    its first `keep` and last `max_kv_size - keep` entries after every step, each new
    token at its true position (mlx-lm's RotatingKVCache, written independently)."""
    from transformers import DynamicCache

    cache = DynamicCache()
    with torch.no_grad():
        out = model(input_ids=torch.tensor([prompt]), past_key_values=cache, use_cache=True)
        tokens = [int(out.logits[0, -1].argmax())]
        for position in range(len(prompt), len(prompt) + steps - 1):
            held = cache.get_seq_length()
            out = model(
                input_ids=torch.tensor([[tokens[-1]]]),
                past_key_values=cache,
                position_ids=torch.tensor([[position]]),
                cache_position=torch.tensor([held]),
                attention_mask=torch.ones(1, held + 1, dtype=torch.long),
                use_cache=True,
            )
            for layer in cache.layers:
                if layer.keys.shape[2] > max_kv_size:
                    layer.keys = torch.cat([layer.keys[:, :, :keep], layer.keys[:, :, -(max_kv_size - keep) :]], dim=2)
                    layer.values = torch.cat([layer.values[:, :, :keep], layer.values[:, :, -(max_kv_size - keep) :]], dim=2)
            tokens.append(int(out.logits[0, -1].argmax()))
    return tokens


def test_a_rotating_cache_generates_past_the_context_as_mlx_lm_keeps_it(
    hf_folder: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """`max_kv_size` rotates the cache (the first 4 tokens kept, positions counting on):
    the greedy tokens equal transformers' with the same rotation, well past the
    rotation's start; with a window wider than the generation they are plain decoding's;
    `mlxir generate --max-kv-size` goes past the program's context. (A prompt longer
    than the window: `test_generate_combinations.py`.)"""
    import mlx.core as mx

    folder, model = hf_folder
    positioned, _ = llm.load(folder, cache_dir=tmp_path, positions=True)
    plain, _ = llm.load(folder, cache_dir=tmp_path)
    prompt = [5, 6, 7, 8, 9, 10, 11, 12]
    ids = mx.array([prompt], dtype=mx.int64)
    wide = [int(t.item()) for t, _ in llm.stream_tokens(positioned, ids, max_new_tokens=20, max_kv_size=64)]
    assert wide == [int(t.item()) for t, _ in llm.stream_tokens(plain, ids, max_new_tokens=20)]
    got = [int(t.item()) for t, _ in llm.stream_tokens(positioned, ids, max_new_tokens=40, max_kv_size=16)]
    assert got == _rotating_reference(model, prompt, 40, 16, llm.generation.ROTATING_KEEP)
    with pytest.raises(ValueError, match="load\\(..., positions=True\\)"):
        next(llm.stream_tokens(plain, ids, max_kv_size=16))

    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    capfd.readouterr()
    argv = ["generate", "--model", str(folder), "-p", "fox", "-m", "300", "--ignore-eos", "--max-kv-size", "64"]
    assert main_with(argv) == 0
    err = capfd.readouterr().err
    assert "Generation: 300 tokens" in err and "context" not in err
    assert main_with([*argv[:-1], "3"]) == 2
    assert "--max-kv-size must be more than the 4" in capfd.readouterr().err


@pytest.mark.parametrize("bits", [8, 4])
def test_a_quantized_kv_cache_is_the_float_one_rounded_each_step(bits: int, tmp_path: Path) -> None:
    """`kv_bits`: the logits equal transformers' when each step's new keys and values
    are replaced by their MLX quantize/dequantize round trip (an independent loop over a
    DynamicCache), within 2e-4 of the largest logit (float32 sums in another order);
    against the float cache, while the greedy tokens agree, they move by at most 1 %
    (8 bits; measured 0.4 %) or 10 % (4 bits; measured 6.3 %) of the largest logit:
    the stated cost of the rounding."""
    import mlx.core as mx
    import numpy as np
    from transformers import DynamicCache, LlamaConfig, LlamaForCausalLM

    torch.manual_seed(0)
    config = LlamaConfig(
        vocab_size=300, hidden_size=128, intermediate_size=256, num_hidden_layers=2,
        num_attention_heads=2, num_key_value_heads=1, max_position_embeddings=128, attn_implementation="sdpa",
    )
    model = LlamaForCausalLM(config).eval()
    compiled = llm.compile_llm(model, attention_mask=False, logits="last")
    prompt = [5, 17, 42, 7, 99, 3]
    steps = 12

    def rounded(t: torch.Tensor) -> torch.Tensor:
        q = mx.quantize(mx.array(t.numpy()), group_size=64, bits=bits)
        return torch.from_numpy(np.array(mx.dequantize(*q, group_size=64, bits=bits)))

    cache = DynamicCache()
    reference: list[np.ndarray[Any, Any]] = []
    tokens = list(prompt)
    with torch.no_grad():
        for step in range(steps):
            held = cache.get_seq_length()
            new = tokens if step == 0 else tokens[-1:]
            out = model(input_ids=torch.tensor([new]), past_key_values=cache, use_cache=True)
            for layer in cache.layers:
                layer.keys = torch.cat([layer.keys[:, :, :held], rounded(layer.keys[:, :, held:])], dim=2)
                layer.values = torch.cat([layer.values[:, :, :held], rounded(layer.values[:, :, held:])], dim=2)
            reference.append(out.logits[0, -1].numpy())
            tokens.append(int(out.logits[0, -1].argmax()))
    ids = mx.array([prompt], dtype=mx.int64)
    got = [np.array(lg[0]) for _, lg in llm.stream_tokens(compiled, ids, max_new_tokens=steps, kv_bits=bits)]
    plain = [np.array(lg[0]) for _, lg in llm.stream_tokens(compiled, ids, max_new_tokens=steps)]
    scale = max(float(np.abs(r).max()) for r in reference)
    assert max(float(np.abs(g - r).max()) for g, r in zip(got, reference)) <= 2e-4 * scale
    agreeing = next((i for i, (g, p) in enumerate(zip(got, plain)) if g.argmax() != p.argmax()), steps)
    drift = max(float(np.abs(g - p).max()) for g, p in zip(got[:agreeing], plain[:agreeing]))
    assert 0 < drift <= (0.01 if bits == 8 else 0.1) * scale
    with pytest.raises(ValueError, match="head dimensions divisible"):
        next(llm.stream_tokens(compiled, ids, kv_bits=4, kv_group_size=128))

    # A prompt cache held quantized, saved and read back, continues as the whole prompt
    # read into a quantized cache in the same two calls.
    from mlxir.tools.llm.prompt_cache import PromptCache, make_prompt_cache

    config = llm.GenerationConfig(kv_bits=bits, max_new_tokens=steps)
    whole = [np.array(lg[0]) for _, lg in llm.stream_tokens(compiled, ids, config=config, prefill_chunk=3)]
    make_prompt_cache(compiled, prompt[:3], config=config).save(tmp_path / "q")
    cache = PromptCache.load(tmp_path / "q")
    assert cache.kind == "QuantizedCache"
    rest = mx.array([prompt[3:]], dtype=mx.int64)
    continued = [np.array(lg[0]) for _, lg in llm.stream_tokens(compiled, rest, config=config, prompt_cache=cache)]
    assert max(float(np.abs(a - b).max()) for a, b in zip(continued, whole)) <= 1e-5 * scale

    # With a draft model (here the model itself): both caches held quantized, rejected
    # proposals trimmed from them; the greedy tokens are those of the quantized cache
    # alone (a verifying call reads its few new keys unrounded: equal here, not always).
    from mlxir.tools.llm.speculative import SpeculativeStats, stream_speculative

    if bits == 8:
        every = llm.compile_llm(model, attention_mask=False, logits="all")
        alone = [int(t.item()) for t, _ in llm.stream_tokens(compiled, ids, config=config)]
        stats = SpeculativeStats()
        assert list(stream_speculative(every, compiled, prompt, config, stats=stats)) == alone
        assert stats.accepted > 0


def test_cli_kv_bits_checks(
    hf_folder: tuple[Path, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capfd: pytest.CaptureFixture[str]
) -> None:
    """`--kv-bits` takes MLX's bit widths (a usage error otherwise, before loading); a
    model whose head dimension the groups do not divide is a one-line error."""
    folder, _ = hf_folder
    monkeypatch.setenv("MLXIR_CACHE_DIR", str(tmp_path / "cache"))
    capfd.readouterr()
    assert main_with(["generate", "--model", str(folder), "-p", "x", "--kv-bits", "7"]) == 2
    assert "--kv-bits takes 2, 3, 4, 5, 6, 8" in capfd.readouterr().err
    assert main_with(["generate", "--model", str(folder), "-p", "x", "--kv-bits", "8", "--kv-group-size", "32"]) == 1
    err = capfd.readouterr().err
    assert "head dimensions divisible by it; this model's are 16" in err and "Traceback" not in err


def test_generate_called_as_mlx_lm_returns_the_text(hf_folder: tuple[Path, Any], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    folder, model = hf_folder
    _, expected = _expected(folder, model, "quick brown fox", 12)
    compiled, tokenizer = llm.load(folder, cache_dir=tmp_path)
    assert llm.generate(compiled, tokenizer, "quick brown fox", max_tokens=12) == expected
    assert llm.generate(compiled, tokenizer, prompt="quick brown fox", max_tokens=12, verbose=True) == expected
    out = capsys.readouterr().out
    assert out.startswith(expected) and "Generation: " in out
    with pytest.raises(TypeError, match="give the prompt"):
        llm.generate(compiled, tokenizer)
