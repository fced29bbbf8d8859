"""What mlx-lm lets a generation combine, on mlxir's cache classes (`tools/llm/cache.py`):
a prompt longer than a rotating cache, a prompt cache made with a rotating cache, a
prompt cache with a draft model, a draft model with sampling; each against transformers
or against the same run without the option. And what stays impossible: one
`GenerationConfig.check`, one line each.

One tiny Llama folder and its programs are compiled once for the module."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import torch

from mlxir.tools import llm
from mlxir.tools.llm.config import GenerationConfig, GenerationConfigError
from mlxir.tools.llm.prompt_cache import PromptCache, PromptCacheError, make_prompt_cache
from mlxir.tools.llm.speculative import SpeculativeStats, stream_speculative, verify

# Its tests share compiled programs (module fixtures, caches): one worker compiles them once.
pytestmark = pytest.mark.xdist_group("test_generate_combinations")


class Programs:
    """The folder, its transformers model and its programs: `plain` (growing, last
    logits), `positioned` (growing with positions, for a rotating cache), `every`
    (growing, every position's logits: speculative decoding's main program) and
    `draft` (a one-layer Llama of the same vocabulary)."""

    def __init__(self, root: Path) -> None:
        from test_generate import save_tiny_llama
        from transformers import LlamaForCausalLM

        self.folder = root / "tiny-llama"
        self.model = save_tiny_llama(self.folder)
        self.cache_dir = root / "cache"
        load: Any = lambda folder, **options: llm.load(folder, cache_dir=self.cache_dir, progress=None, **options)[0]  # noqa: E731
        self.plain = load(self.folder)
        self.positioned = load(self.folder, positions=True)
        self.every = load(self.folder, logits="all")
        config = self.model.config.__class__.from_dict(self.model.config.to_dict())
        config.num_hidden_layers = 1
        torch.manual_seed(1)
        draft_folder = root / "tiny-draft"
        LlamaForCausalLM(config).eval().save_pretrained(draft_folder)
        self.draft = load(draft_folder, tokenizer=self.folder)


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Programs:
    root = tmp_path_factory.mktemp("combinations")
    # The compile records its verification verdict where a later run reads it, as a
    # first `mlxir generate` does for the next (`codegen/verification.py`).
    with pytest.MonkeyPatch.context() as env:
        env.setenv("MLXIR_CACHE_DIR", str(root / "cache"))
        return Programs(root)


PROMPT = [5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28]


def _tokens(stream: Any) -> list[int]:
    return [int(token.item()) for token, _ in stream]


def _rotating_reference(model: Any, prompt: list[int], steps: int, max_kv_size: int, keep: int, chunk: int) -> list[int]:
    """Greedy tokens with a rotating cache, in transformers: the prompt read in calls of
    `chunk` tokens, then one token per call, a DynamicCache cut back to its first
    `keep` and last `max_kv_size - keep` entries after every call, each token at its
    true position (mlx-lm's RotatingKVCache, written independently)."""
    from transformers import DynamicCache

    cache = DynamicCache()

    def read(tokens: list[int], position: int) -> int:
        held = cache.get_seq_length()
        with torch.no_grad():
            out = model(
                input_ids=torch.tensor([tokens]),
                past_key_values=cache,
                position_ids=torch.arange(position, position + len(tokens))[None],
                cache_position=torch.arange(held, held + len(tokens)),
                attention_mask=torch.ones(1, held + len(tokens), dtype=torch.long),
                use_cache=True,
            )
        for layer in cache.layers:
            if layer.keys.shape[2] > max_kv_size:
                layer.keys = torch.cat([layer.keys[:, :, :keep], layer.keys[:, :, -(max_kv_size - keep) :]], dim=2)
                layer.values = torch.cat([layer.values[:, :, :keep], layer.values[:, :, -(max_kv_size - keep) :]], dim=2)
        return int(out.logits[0, -1].argmax())

    for start in range(0, len(prompt), chunk):
        token = read(prompt[start : start + chunk], start)
    tokens = [token]  # pyright: ignore[reportPossiblyUnboundVariable] (the prompt has tokens)
    for position in range(len(prompt), len(prompt) + steps - 1):
        tokens.append(read(tokens[-1:], position))
    return tokens


@pytest.mark.parametrize("prefill_chunk", [None, 5])
def test_a_prompt_longer_than_the_rotating_cache(programs: Programs, prefill_chunk: int | None) -> None:
    """A 24-token prompt into a rotating cache of 16: read in calls of at most 16 tokens
    (or `prefill_chunk`), each cut back to the first 4 and the most recent tokens, as
    transformers gives with the same cuts."""
    import mlx.core as mx

    ids = mx.array([PROMPT], dtype=mx.int64)
    got = _tokens(llm.stream_tokens(programs.positioned, ids, max_new_tokens=20, max_kv_size=16, prefill_chunk=prefill_chunk))
    chunk = min(prefill_chunk or 16, 16)
    assert got == _rotating_reference(programs.model, PROMPT, 20, 16, llm.generation.ROTATING_KEEP, chunk)


def test_a_rotating_prompt_cache_continues_as_the_whole_prompt(programs: Programs, tmp_path: Path) -> None:
    """A prompt cache made with a rotating cache, saved under a name without
    `.safetensors` and read back under that name, plus the rest of the prompt gives the
    tokens and logits of the whole prompt read into the same rotating cache; asked for
    another rotating size, it says what it holds."""
    import mlx.core as mx

    prefix, rest = PROMPT[:16], PROMPT[16:]
    config = GenerationConfig(max_kv_size=16, max_new_tokens=12)
    whole = [
        (int(t.item()), np.array(lg))
        for t, lg in llm.stream_tokens(programs.positioned, mx.array([PROMPT]), config=config, prefill_chunk=16)
    ]
    written = make_prompt_cache(programs.positioned, prefix, model="m", config=config).save(tmp_path / "ctx")
    assert written == tmp_path / "ctx" and sorted(p.name for p in tmp_path.iterdir()) == ["ctx"]
    cache = PromptCache.load(tmp_path / "ctx")
    assert cache.kind == "RotatingCache" and cache.tokens == prefix
    got = [
        (int(t.item()), np.array(lg))
        for t, lg in llm.stream_tokens(programs.positioned, mx.array([rest]), config=config, prompt_cache=cache)
    ]
    assert [t for t, _ in got] == [t for t, _ in whole]
    assert max(float(np.abs(a - b).max()) for (_, a), (_, b) in zip(got, whole)) <= 1e-5
    # Without max_kv_size the saved cache's own is taken.
    assert _tokens(llm.stream_tokens(programs.positioned, mx.array([rest]), max_new_tokens=12, prompt_cache=cache)) == [t for t, _ in whole]
    with pytest.raises(PromptCacheError, match="holds a RotatingCache of 16 tokens"):
        next(llm.stream_tokens(programs.positioned, mx.array([rest]), max_kv_size=32, prompt_cache=cache))


def test_a_prompt_cache_file_written_by_an_older_mlxir_is_found(programs: Programs, tmp_path: Path) -> None:
    """MLX added `.safetensors` to the name `cache-prompt` was given: `ctx` is read
    from `ctx.safetensors` where that is all there is."""
    make_prompt_cache(programs.plain, PROMPT[:5]).save(tmp_path / "ctx.safetensors")
    assert PromptCache.locate(tmp_path / "ctx") == tmp_path / "ctx.safetensors"
    assert PromptCache.load(tmp_path / "ctx").tokens == PROMPT[:5]
    with pytest.raises(PromptCacheError, match="no such prompt cache file"):
        PromptCache.load(tmp_path / "other")


def test_a_prompt_cache_with_a_draft_model(programs: Programs) -> None:
    """Speculative decoding from a prompt cache (made with the main model; the draft
    reads the cached tokens itself) gives the main model's greedy tokens of the whole
    prompt, rejected proposals trimmed from both caches."""
    import mlx.core as mx

    expected = _tokens(llm.stream_tokens(programs.plain, mx.array([PROMPT]), max_new_tokens=16))
    cache = make_prompt_cache(programs.plain, PROMPT[:10])
    stats = SpeculativeStats()
    got = list(stream_speculative(programs.every, programs.draft, PROMPT[10:], prompt_cache=cache, max_new_tokens=16, stats=stats))
    assert got == expected
    assert stats.drafted > stats.accepted  # some proposals were rejected, so the caches were trimmed


def test_speculative_sampling_keeps_the_main_distribution() -> None:
    """`verify` on a proposal drawn from the draft's distribution q yields tokens
    distributed as the main model's p (here 4000 draws over 6 tokens, p and q far apart:
    total variation 0.5), not as q."""
    import mlx.core as mx

    p = np.array([0.05, 0.4, 0.05, 0.3, 0.1, 0.1], dtype=np.float32)
    q = np.array([0.4, 0.05, 0.3, 0.05, 0.1, 0.1], dtype=np.float32)
    assert 0.5 * np.abs(p - q).sum() >= 0.5
    rng = np.random.default_rng(0)
    main = mx.array(np.stack([p, p]))  # at the proposal, and after it
    counts = np.zeros(6)
    for draw in range(4000):
        proposal = int(rng.choice(6, p=q))
        kept, following = verify(mx.array([proposal]), mx.array(q[None]), main, mx.random.key(draw))
        counts[proposal if kept else int(following.item())] += 1
    assert 0.5 * np.abs(counts / counts.sum() - p).sum() < 0.03


def test_a_draft_model_with_sampling(programs: Programs) -> None:
    """With sampling, a draft that is the main model itself has every proposal kept;
    with `min_p=1` only the most likely token survives in both distributions, so the
    tokens are the main model's greedy ones; the same seed gives the same tokens."""
    import mlx.core as mx

    expected = _tokens(llm.stream_tokens(programs.plain, mx.array([PROMPT]), max_new_tokens=16))
    itself = SpeculativeStats()
    sampled = GenerationConfig(do_sample=True, temperature=0.8, top_p=0.9, max_new_tokens=16, seed=3)
    first = list(stream_speculative(programs.every, programs.every, PROMPT, sampled, stats=itself))
    assert itself.accepted == itself.drafted > 0
    assert list(stream_speculative(programs.every, programs.draft, PROMPT, sampled)) == list(
        stream_speculative(programs.every, programs.draft, PROMPT, sampled)
    )
    assert len(first) == 16
    stats = SpeculativeStats()
    greedy_by_min_p = GenerationConfig(do_sample=True, temperature=1.5, min_p=1.0, max_new_tokens=16)
    assert list(stream_speculative(programs.every, programs.draft, PROMPT, greedy_by_min_p, stats=stats)) == expected
    assert stats.drafted > stats.accepted


@pytest.mark.parametrize(
    ("options", "flags", "message"),
    [
        ({"max_kv_size": 16, "kv_bits": 4}, True, "--kv-bits and --max-kv-size do not combine: a rotating cache is not held quantized"),
        ({"speculative": True, "max_kv_size": 16}, True, "--draft-model takes back the proposals it rejects by trimming"),
        ({"speculative": True, "sampler": lambda logits: logits}, False, "speculative samples by comparing"),
        ({"seed": -1}, True, "--seed must be an integer in [0, 2**64 - 1], not -1"),
        ({"seed": 2**64}, False, "seed must be an integer in [0, 2**64 - 1]"),
        ({"max_kv_size": 4}, True, "--max-kv-size must be more than the 4 first tokens it keeps, not 4"),
        ({"kv_bits": 7}, True, "--kv-bits takes 2, 3, 4, 5, 6, 8"),
        ({"temperature": -1.0, "do_sample": True}, True, "--temp must be 0 (greedy) or positive"),
    ],
)
def test_one_check_refuses_what_does_not_combine(options: dict[str, Any], flags: bool, message: str) -> None:
    with pytest.raises(GenerationConfigError) as error:
        GenerationConfig(**options).check(flags=flags)
    assert str(error.value).startswith(message) and "\n" not in str(error.value)


def test_an_empty_prompt_is_refused_in_one_line(programs: Programs) -> None:
    for options in ({}, {"prefill_chunk": 2}):
        with pytest.raises(ValueError, match="the prompt is empty"):
            next(llm.stream_tokens(programs.plain, [[]], **options))
    with pytest.raises(TypeError, match="unexpected generation option"):
        next(llm.stream_tokens(programs.plain, [[1]], temprature=0.5))


CHECK_IMPORTS = """
import sys
{call}
loaded = sorted({{name.split(".")[0] for name in sys.modules}} & {{"torch", "xdsl", "transformers"}})
print("LOADED", loaded)
"""


def _imports_of(call: str, cache_dir: Path) -> tuple[list[str], str]:
    import os

    env = {**os.environ, "MLXIR_CACHE_DIR": str(cache_dir)}
    run = subprocess.run(
        [sys.executable, "-c", CHECK_IMPORTS.format(call=call)], capture_output=True, text=True, env=env, timeout=300
    )
    assert run.returncode == 0, run.stderr
    line = next(line for line in run.stdout.splitlines() if line.startswith("LOADED"))
    return eval(line.removeprefix("LOADED ")), run.stdout + run.stderr


@pytest.fixture(scope="module")
def cached_imports(programs: Programs) -> dict[str, tuple[list[str], str]]:
    """What a generation from the cached program imports of torch, transformers and
    xDSL, in a fresh process: through the library (`llm.load` + `stream_generate`) and
    through the `mlxir generate` command (its console script)."""
    library = (
        "from mlxir.tools import llm\n"
        f"compiled, tokenizer = llm.load({str(programs.folder)!r}, progress=None)\n"
        "print(''.join(llm.stream_generate(compiled, tokenizer, 'hello', max_tokens=4)))"
    )
    command = (
        "from importlib.metadata import entry_points\n"
        "(script,) = entry_points(group='console_scripts', name='mlxir')\n"
        f"sys.argv = ['mlxir', 'generate', '--model', {str(programs.folder)!r}, '-p', 'hello', '-m', '4']\n"
        "try:\n    script.load()()\nexcept SystemExit as end:\n    assert not end.code, end.code"
    )
    return {"library": _imports_of(library, programs.cache_dir), "command": _imports_of(command, programs.cache_dir)}


@pytest.mark.parametrize("path", ["library", "command"])
def test_a_cached_generate_imports_neither_torch_nor_xdsl(cached_imports: dict[str, tuple[list[str], str]], path: str) -> None:
    loaded, output = cached_imports[path]
    assert "compiling" not in output  # the program came from the cache
    assert loaded == [], output


def test_a_split_that_leaves_ops_whole_says_so_in_one_line(
    programs: Programs, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """4 query and 2 key/value heads, 128 MLP features over 3 ranks: the split pass
    leaves products whole, and the compile says so in one line (not one per op)."""
    lines: list[str] = []
    capfd.readouterr()
    llm.compile_split(programs.folder, 3, cache_dir=tmp_path, progress=lines.append)
    whole = [line for line in lines if "stay whole" in line]
    assert len(whole) == 1 and whole[0].strip().startswith("split over 3 ranks"), lines
    assert "do not divide over 3 ranks" in whole[0]  # the reason, e.g. the 400-row vocabulary
    assert "remark" not in capfd.readouterr().err


def test_speculative_sampling_end_to_end_draws_from_the_main_model(programs: Programs) -> None:
    """The token a draft proposes and the main model verifies is distributed as the
    main model's (temperature 1, top-k 4) given the token before it, not as the
    draft's: 400 seeds, grouped by the first token (drawn from the main model's
    prefill), the second token's frequencies against the main model's probabilities."""
    import mlx.core as mx

    from mlxir.tools.llm.sampling import probabilities

    prompt = PROMPT[:6]
    sampling = {"do_sample": True, "temperature": 1.0, "top_k": 4}
    pairs = [
        tuple(stream_speculative(programs.every, programs.draft, prompt, max_new_tokens=2, num_draft_tokens=1, seed=seed, **sampling))
        for seed in range(400)
    ]
    first = max(set(t for t, _ in pairs), key=[t for t, _ in pairs].count)
    seconds = [second for t, second in pairs if t == first]
    assert len(seconds) >= 100

    def distribution(compiled: llm.CompiledLLM) -> np.ndarray[Any, Any]:
        last = list(llm.stream_tokens(compiled, mx.array([[*prompt, first]]), max_new_tokens=1))[0][1]
        return np.array(probabilities(last, **sampling)[0])

    p = distribution(programs.plain)
    q = distribution(programs.draft)
    assert 0.5 * np.abs(p - q).sum() > 0.3  # the draft alone would be told apart
    counts = np.bincount(seconds, minlength=p.shape[0]) / len(seconds)
    assert 0.5 * np.abs(counts - p).sum() < 0.12
