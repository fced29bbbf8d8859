"""`mlxir generate`: text (or token ids) from an LLM, mlx_lm.generate's flags on mlxir's
compiled programs: a save_pretrained folder, compiled once and cached, or a compiled
`.mlxfb` with its tokenizer's folder."""

from __future__ import annotations

import argparse
import itertools
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mlxir.tools.cli.common import add_quantize_arguments, load_program, quantize_option
from mlxir.tools.cli.errors import CliError, UsageError
from mlxir.tools.cli.ranks import add_rank_arguments, check_rank_arguments, start_ranks

if TYPE_CHECKING:
    from mlxir.tools.llm.config import GenerationConfig
    from mlxir.tools.llm.prompt_cache import PromptCache
    from mlxir.tools.tokenizer import TextTokenizer

DEFAULT_PROMPT = "hello"
"""mlx_lm.generate's prompt when none is given."""


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "generate",
        help="generate text with an LLM (a save_pretrained folder, compiled and cached on first use)",
        description="mlx_lm.generate's flags, same names and meanings, on mlxir's compiled programs",
    )
    parser.add_argument("program", nargs="?", help="same as --model")
    parser.add_argument("--model", help="a save_pretrained folder, or a compiled .mlxfb (with --tokenizer)")
    parser.add_argument("--tokenizer", help="the folder of the tokenizer (default: the model's folder)")
    parser.add_argument("--prompt", "-p", help=f"the prompt text; '-' reads it from stdin (default {DEFAULT_PROMPT!r})")
    parser.add_argument("--ids", help="prompt token ids instead of text, e.g. 1,15,27 (prints ids)")
    parser.add_argument("--max-tokens", "-m", "--max-new-tokens", type=int, default=100, dest="max_tokens",
                        help="the most tokens to generate; -1: until an end-of-sequence token (default 100)")
    parser.add_argument("--temp", "--temperature", type=float, default=0.0, dest="temp",
                        help="sampling temperature; 0 is greedy (default)")
    parser.add_argument("--top-k", type=int, default=0, help="sample from the k most likely tokens (0: all)")
    parser.add_argument("--top-p", type=float, default=1.0, help="nucleus sampling mass, in (0, 1] (default 1)")
    parser.add_argument("--min-p", type=float, default=0.0,
                        help="drop tokens less likely than min-p times the most likely one, in [0, 1] (default 0)")
    parser.add_argument("--seed", type=int, default=0, help="the sampling seed (default 0)")
    parser.add_argument("--ignore-eos", action="store_true", help="do not stop at end-of-sequence tokens")
    parser.add_argument("--extra-eos-token", nargs="+", default=[], metavar="TOKEN",
                        help="more tokens (as text) that end the generation")
    parser.add_argument("--eos", type=int, help="with --ids: stop at this token id")
    parser.add_argument("--system-prompt", help="a system message for the chat template")
    parser.add_argument("--ignore-chat-template", action="store_true",
                        help="feed the prompt as plain text even when the tokenizer has a chat template")
    parser.add_argument("--verbose", type=_flag, default=True, metavar="BOOL",
                        help="print the speeds and peak memory (default True; False prints the text only)")
    parser.add_argument("--draft-model", metavar="FOLDER",
                        help="a smaller model of the same vocabulary for speculative decoding (the main "
                        "model's tokens: its greedy ones, or sampled from its distribution)")
    parser.add_argument("--num-draft-tokens", type=int, default=3,
                        help="tokens the draft model proposes at a time (default 3)")
    parser.add_argument("--max-kv-size", type=int, metavar="N",
                        help="a rotating cache of N tokens (the first 4 kept, as mlx-lm's): generation goes on "
                        "past the model's context")
    parser.add_argument("--kv-bits", type=int, metavar="BITS",
                        help="hold the KV cache quantized to BITS bits between steps (default: not quantized)")
    parser.add_argument("--kv-group-size", type=int, default=64, help="with --kv-bits: 32, 64 or 128 (default 64)")
    parser.add_argument("--prompt-cache-file", metavar="FILE",
                        help="continue from a prompt cached by `mlxir cache-prompt` (the prompt's text follows it; "
                        "--model defaults to the cache's)")
    parser.add_argument("--no-cache", action="store_true", help="compile without reading or writing the cache")
    add_quantize_arguments(parser)
    add_rank_arguments(parser)
    parser.set_defaults(run=run)


def generation_config(args: argparse.Namespace) -> GenerationConfig:
    """The flags as a `GenerationConfig`, checked by the library's one check (a
    `UsageError` names the flag, what it takes, or why it does not combine)."""
    from mlxir.tools.llm.config import GenerationConfig, GenerationConfigError, mlx_lm_options

    # cache-prompt has the cache's flags only: the rest keep their defaults.
    sampling = {name: getattr(args, name) for name in ("top_k", "top_p", "min_p", "seed") if hasattr(args, name)}
    config = GenerationConfig(
        **mlx_lm_options({"max_tokens": getattr(args, "max_tokens", 0), "temp": getattr(args, "temp", 0.0)}),
        **sampling,
        max_kv_size=args.max_kv_size,
        kv_bits=args.kv_bits,
        kv_group_size=args.kv_group_size,
        speculative=getattr(args, "draft_model", None) is not None,
        num_draft_tokens=getattr(args, "num_draft_tokens", 3),
    )
    try:
        return config.check(flags=True)
    except GenerationConfigError as error:
        raise UsageError(str(error)) from None


def _check_generate_arguments(args: argparse.Namespace) -> GenerationConfig:
    """Every value `generate` takes, checked before anything is loaded or compiled;
    returns the generation's config."""
    config = generation_config(args)
    if args.prompt is not None and args.ids is not None:
        raise UsageError("give a prompt (--prompt/-p) or token ids (--ids), not both")
    if args.extra_eos_token and args.ids is not None:
        raise UsageError("--extra-eos-token takes token text: with --ids, give --eos ID")
    if args.ids is not None and (args.draft_model is not None or args.prompt_cache_file is not None):
        raise UsageError("--draft-model and --prompt-cache-file take a text prompt (--prompt), not --ids")
    if args.tensor_parallel > 1 and any(
        given is not None for given in (args.draft_model, args.prompt_cache_file, args.max_kv_size)
    ):
        raise UsageError(
            "--tensor-parallel runs the one split program every rank reads: it goes without --draft-model, "
            "--prompt-cache-file and --max-kv-size (programs or caches the ranks do not share)"
        )
    prompt_cache = _prompt_cache(args)
    if prompt_cache is not None:
        from mlxir.tools.llm.prompt_cache import PromptCacheError

        try:
            prompt_cache.check_options(config)
        except PromptCacheError as error:
            raise UsageError(str(error).replace("(max_kv_size, kv_bits)", "(--max-kv-size, --kv-bits)")) from None
    model = args.model or args.program or (prompt_cache.model if prompt_cache is not None else None)
    if not model:
        raise UsageError("generate needs --model (a save_pretrained folder or a compiled .mlxfb)")
    for given in (model, args.draft_model):
        if given is not None and not Path(given).exists():
            raise CliError(f"'{given}': no such folder or program")
    return config


def _prompt_cache(args: argparse.Namespace) -> PromptCache | None:
    """The `--prompt-cache-file`, read once (its model is mlx_lm's default for --model)."""
    if getattr(args, "prompt_cache_file", None) is None:
        return None
    if getattr(args, "loaded_prompt_cache", None) is None:
        from mlxir.tools.llm.prompt_cache import PromptCache, PromptCacheError

        try:
            args.loaded_prompt_cache = PromptCache.load(args.prompt_cache_file)
        except PromptCacheError as error:
            raise CliError(str(error)) from None
    return args.loaded_prompt_cache


def check_model_argument(model: str, tokenizer: str | None, flag: str | None = None) -> None:
    """A model that is not a folder or a program, or a program without its
    tokenizer, is one line before anything is read."""
    from mlxir.tools.llm.compile import check_model, is_compiled_program

    path = Path(model)
    if path.is_file() and tokenizer is None and is_compiled_program(path):
        raise CliError(f"'{model}' is a compiled program: give its tokenizer's folder with --tokenizer")
    try:
        check_model(path, tokenizer)
    except (FileNotFoundError, ValueError) as error:
        raise CliError(f"{flag}: {error}" if flag else str(error)) from None


def _prompt_ids(args: argparse.Namespace, model: str, prompt: str, cached: bool) -> tuple[TextTokenizer, list[int]]:
    """The tokenizer and the prompt's ids, before any compile: an empty prompt is one
    line, not a compile's minutes and then an error."""
    from mlxir.tools.tokenizer import load_tokenizer

    try:
        tokenizer = load_tokenizer(args.tokenizer or model)
    except FileNotFoundError as error:
        raise CliError(str(error)) from None
    if cached:  # the text follows the cached prompt as it is
        ids = tokenizer.encode(prompt, add_special_tokens=False)
    else:
        ids = tokenizer.encode_prompt(
            prompt, system_prompt=args.system_prompt, chat_template=not args.ignore_chat_template
        )
    if not ids:
        raise CliError("the prompt has no tokens: give some text (--prompt)")
    return tokenizer, ids


def run(args: argparse.Namespace) -> int:
    """Generates with an LLM, mlx-lm style: a prompt in, text streamed to stdout, the
    speeds and peak memory on stderr (unless `--verbose False`); or token ids in and
    out with `--ids`."""
    config = _check_generate_arguments(args)
    check_rank_arguments(args)
    from mlxir.tools import llm
    from mlxir.tools.launch import in_a_rank

    prompt_cache = _prompt_cache(args)
    model = args.model or args.program or (prompt_cache.model if prompt_cache is not None else None)
    assert model is not None  # checked above
    if args.tensor_parallel > 1:
        if not Path(model).is_dir():
            raise UsageError("--tensor-parallel takes a save_pretrained folder (--model FOLDER)")
        if args.no_cache:
            raise UsageError("--tensor-parallel reads the split program from the cache: drop --no-cache")
        if not in_a_rank():
            try:  # compiled once, here; every rank reads it from the cache
                llm.compile_split(model, args.tensor_parallel, quantize=quantize_option(args))
            except (FileNotFoundError, ValueError) as error:
                raise CliError(str(error)) from None
            return start_ranks(args, args.tensor_parallel)
    if args.ids is not None:
        return _generate_ids(args, model, config)
    prompt = DEFAULT_PROMPT if args.prompt is None else sys.stdin.read() if args.prompt == "-" else args.prompt
    check_model_argument(model, args.tokenizer)
    if args.draft_model is not None:
        check_model_argument(args.draft_model, args.tokenizer or model, "--draft-model")
    tokenizer, ids = _prompt_ids(args, model, prompt, prompt_cache is not None)
    options = {**config.load_options(), **(prompt_cache.load_options if prompt_cache is not None else {})}
    try:
        compiled, _ = llm.load(
            model,
            tokenizer=args.tokenizer,
            use_cache=not args.no_cache,
            quantize=quantize_option(args),
            tensor_parallel=args.tensor_parallel,
            **options,
        )
        draft = (
            llm.load(args.draft_model, tokenizer=args.tokenizer or model, use_cache=not args.no_cache)[0]
            if args.draft_model is not None
            else None
        )
    except (FileNotFoundError, ValueError) as error:
        raise CliError(str(error)) from None
    from mlxir.tools.llm.speculative import SpeculativeStats

    draft_stats = SpeculativeStats()
    extra_eos: list[int] = []
    for text in args.extra_eos_token:
        eos_ids = tokenizer.encode(text, add_special_tokens=False)
        if len(eos_ids) != 1:
            raise CliError(f"--extra-eos-token {text!r} is {len(eos_ids)} tokens for this tokenizer, not one")
        extra_eos.append(eos_ids[0])
    stats = llm.GenerationStats()
    try:
        pieces = llm.stream_generate(
            compiled,
            tokenizer,
            ids,
            config,
            ignore_eos=args.ignore_eos,
            extra_eos_tokens=extra_eos,
            stats=stats,
            draft=draft,
            draft_stats=draft_stats,
            prompt_cache=prompt_cache,
        )
        # The prompt is checked when the stream starts: its errors come before the line.
        first = next(pieces, None)
        if args.verbose:
            print("==========", file=sys.stderr)
        for piece in itertools.chain([] if first is None else [first], pieces):
            sys.stdout.write(piece)
            sys.stdout.flush()
    except ValueError as error:  # the prompt longer than the context, a cache the program cannot take
        raise CliError(str(error)) from None
    sys.stdout.write("\n")
    context = compiled.context_limit
    if stats.finish_reason == "context" and context is not None:
        print(f"mlxir: note: stopped at the end of the model's context ({context} tokens)", file=sys.stderr)
    if args.verbose:
        print("==========", file=sys.stderr)
        print(f"Prompt: {stats.prompt_tokens} tokens, {stats.prompt_tps:.3f} tokens-per-sec", file=sys.stderr)
        print(
            f"Generation: {stats.generation_tokens} tokens, {stats.generation_tps:.3f} tokens-per-sec",
            file=sys.stderr,
        )
        if draft is not None:
            print(
                f"Draft: {draft_stats.drafted} tokens proposed, {draft_stats.accepted} accepted "
                f"({100 * draft_stats.acceptance:.1f} %), {draft_stats.main_calls} calls of the main model",
                file=sys.stderr,
            )
        print(f"Peak memory: {stats.peak_memory / 1e9:.3f} GB", file=sys.stderr)
    return 0


def _flag(text: str) -> bool:
    """mlx_lm.generate's `--verbose` values: anything but false/f (any case) is true."""
    return text.lower() not in ("false", "f")


def _generate_ids(args: argparse.Namespace, model: str, config: GenerationConfig) -> int:
    """Token ids in, token ids out, from a compiled step program."""
    import numpy as np

    from mlxir.tools import llm

    try:
        ids = np.array([[int(t) for t in args.ids.replace(",", " ").split()]], dtype=np.int64)
    except ValueError:
        raise CliError(f"--ids must be integers separated by commas or spaces, got '{args.ids}'") from None
    if ids.size == 0:
        raise CliError("--ids needs at least one token id")
    if not Path(model).is_file():
        raise CliError(f"--ids runs a compiled .mlxfb; '{model}' is not a file")
    if args.quantize is not None:
        raise CliError(f"'{model}' is already compiled: --quantize applies when compiling a folder")
    program = load_program(model)
    try:
        compiled = llm.CompiledLLM.from_program(program)
    except ValueError as error:
        raise CliError(f"{model}: {error}") from None
    times: list[float] = []
    start = time.perf_counter()
    try:
        out = llm.generate(
            compiled,
            ids,
            config=config,
            eos_token_id=None if args.ignore_eos else args.eos,
            on_token=lambda _: times.append(time.perf_counter()),
        )
    except ValueError as error:  # the prompt longer than the context, a cache the program cannot take
        raise CliError(str(error)) from None
    print(" ".join(str(int(t)) for t in out[0, ids.shape[1] :]))
    if times:
        decode = np.diff([start, *times])
        rest = f", decode {1e3 * float(np.median(decode[1:])):.2f} ms/token" if len(times) > 1 else ""
        print(f"{len(times)} tokens: prefill {1e3 * float(decode[0]):.1f} ms{rest}", file=sys.stderr)
    return 0
