"""`mlxir generate`: text (or token ids) from an LLM, mlx_lm.generate's flags on mlxir's
compiled programs: a save_pretrained folder, compiled once and cached, or a compiled
`.mlxfb` with its tokenizer's folder."""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path
from typing import Any

from mlxir.tools.cli.common import add_quantize_arguments, load_program, quantize_option
from mlxir.tools.cli.errors import CliError, UsageError
from mlxir.tools.cli.ranks import add_rank_arguments, check_rank_arguments, start_ranks

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
                        help="a smaller model of the same vocabulary for speculative decoding (greedy; "
                        "the same tokens as without it)")
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


def _check_generate_arguments(args: argparse.Namespace) -> None:
    """Every value `generate` takes, checked before anything is loaded or compiled
    (a `UsageError` names the flag and what it accepts)."""
    checks = [
        (args.max_tokens >= -1, f"--max-tokens must be -1 (until an end-of-sequence token) or at least 0, not {args.max_tokens}"),
        (args.temp >= 0, f"--temp must be 0 (greedy) or positive, not {args.temp}"),
        (0 < args.top_p <= 1, f"--top-p must be in (0, 1], not {args.top_p}"),
        (0 <= args.min_p <= 1, f"--min-p must be in [0, 1], not {args.min_p}"),
        (args.top_k >= 0, f"--top-k must be 0 (all tokens) or positive, not {args.top_k}"),
    ]
    for holds, message in checks:
        if not holds:
            raise UsageError(message)
    if args.prompt is not None and args.ids is not None:
        raise UsageError("give a prompt (--prompt/-p) or token ids (--ids), not both")
    if args.extra_eos_token and args.ids is not None:
        raise UsageError("--extra-eos-token takes token text: with --ids, give --eos ID")
    if args.num_draft_tokens < 1:
        raise UsageError(f"--num-draft-tokens must be at least 1, not {args.num_draft_tokens}")
    if args.draft_model is not None:
        if args.temp > 0 or args.top_k or args.top_p < 1 or args.min_p > 0:
            raise UsageError("--draft-model decodes greedily here: drop --temp/--top-k/--top-p/--min-p")
        if args.ids is not None:
            raise UsageError("--draft-model takes a text prompt (--prompt), not --ids")
    if args.max_kv_size is not None:
        from mlxir.tools.llm.generation import ROTATING_KEEP

        if args.max_kv_size <= ROTATING_KEEP:
            raise UsageError(f"--max-kv-size must be more than the {ROTATING_KEEP} first tokens it keeps, not {args.max_kv_size}")
        if args.draft_model is not None or args.prompt_cache_file is not None or args.ids is not None:
            raise UsageError("--max-kv-size goes with a text prompt, without --draft-model, --prompt-cache-file or --ids")
    if args.kv_bits is not None:
        from mlxir.tools.llm.kv_quantization import KV_BITS, KV_GROUP_SIZES

        if args.kv_bits not in KV_BITS or args.kv_group_size not in KV_GROUP_SIZES:
            raise UsageError(
                f"--kv-bits takes {', '.join(map(str, KV_BITS))} and --kv-group-size "
                f"{', '.join(map(str, KV_GROUP_SIZES))}, not {args.kv_bits} and {args.kv_group_size}"
            )
        if args.max_kv_size is not None or args.draft_model is not None or args.prompt_cache_file is not None:
            raise UsageError("--kv-bits goes without --max-kv-size, --draft-model and --prompt-cache-file")
    if args.prompt_cache_file is not None:
        if not Path(args.prompt_cache_file).is_file():
            raise CliError(f"'{args.prompt_cache_file}': no such prompt cache file")
        if args.draft_model is not None or args.ids is not None:
            raise UsageError("--prompt-cache-file goes with a text prompt, without --draft-model or --ids")
    model = args.model or args.program or _prompt_cache_model(args)
    if not model:
        raise UsageError("generate needs --model (a save_pretrained folder or a compiled .mlxfb)")
    for given in (model, args.draft_model):
        if given is not None and not Path(given).exists():
            raise CliError(f"'{given}': no such folder or program")


def _prompt_cache_model(args: argparse.Namespace) -> str | None:
    """The model a `--prompt-cache-file` was made with (mlx_lm's default for --model)."""
    if getattr(args, "prompt_cache_file", None) is None:
        return None
    from mlxir.tools.llm.prompt_cache import PromptCache, PromptCacheError

    try:
        return PromptCache.load(args.prompt_cache_file).model or None
    except PromptCacheError as error:
        raise CliError(str(error)) from None


def run(args: argparse.Namespace) -> int:
    """Generates with an LLM, mlx-lm style: a prompt in, text streamed to stdout, the
    speeds and peak memory on stderr (unless `--verbose False`); or token ids in and
    out with `--ids`."""
    _check_generate_arguments(args)
    check_rank_arguments(args)
    from mlxir.tools import llm
    from mlxir.tools.launch import in_a_rank

    model = args.model or args.program or _prompt_cache_model(args)
    assert model is not None  # checked above
    if args.tensor_parallel > 1:
        if any(given is not None for given in (args.draft_model, args.prompt_cache_file, args.max_kv_size)):
            raise UsageError("--tensor-parallel goes without --draft-model, --prompt-cache-file and --max-kv-size")
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
        return _generate_ids(args, model)
    prompt = DEFAULT_PROMPT if args.prompt is None else sys.stdin.read() if args.prompt == "-" else args.prompt
    path = Path(model)
    if path.is_file() and args.tokenizer is None:
        raise CliError(f"'{model}' is a compiled program: give its tokenizer's folder with --tokenizer")
    speculative = args.draft_model is not None
    try:
        compiled, tokenizer = llm.load(
            model,
            tokenizer=args.tokenizer,
            use_cache=not args.no_cache,
            quantize=quantize_option(args),
            logits="all" if speculative else "last",
            positions=args.max_kv_size is not None,
            tensor_parallel=args.tensor_parallel,
        )
        draft = (
            llm.load(args.draft_model, tokenizer=args.tokenizer or model, use_cache=not args.no_cache)[0]
            if speculative
            else None
        )
    except (FileNotFoundError, ValueError) as error:
        raise CliError(str(error)) from None
    from mlxir.tools.llm.prompt_cache import PromptCache, PromptCacheError
    from mlxir.tools.llm.speculative import SpeculativeStats

    prompt_cache = None
    if args.prompt_cache_file is not None:
        try:
            prompt_cache = PromptCache.load(args.prompt_cache_file)
            prompt_cache.check(compiled)
        except PromptCacheError as error:
            raise CliError(str(error)) from None
    draft_stats = SpeculativeStats()
    extra_eos: list[int] = []
    for text in args.extra_eos_token:
        ids = tokenizer.encode(text, add_special_tokens=False)
        if len(ids) != 1:
            raise CliError(f"--extra-eos-token {text!r} is {len(ids)} tokens for this tokenizer, not one")
        extra_eos.append(ids[0])
    stats = llm.GenerationStats()
    try:
        pieces = llm.stream_generate(
            compiled,
            tokenizer,
            prompt,
            max_tokens=args.max_tokens,
            temp=args.temp,
            top_k=args.top_k,
            top_p=args.top_p,
            min_p=args.min_p,
            seed=args.seed,
            ignore_eos=args.ignore_eos,
            extra_eos_tokens=extra_eos,
            system_prompt=args.system_prompt,
            chat_template=not args.ignore_chat_template,
            stats=stats,
            draft=draft,
            num_draft_tokens=args.num_draft_tokens,
            draft_stats=draft_stats,
            prompt_cache=prompt_cache,
            max_kv_size=args.max_kv_size,
            kv_bits=args.kv_bits,
            kv_group_size=args.kv_group_size,
        )
        if args.verbose:
            print("==========", file=sys.stderr)
        for piece in pieces:
            sys.stdout.write(piece)
            sys.stdout.flush()
    except ValueError as error:  # the prompt (empty, or longer than the context)
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
        if speculative:
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


def _generate_ids(args: argparse.Namespace, model: str) -> int:
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
    out = llm.generate(
        compiled,
        ids,
        max_new_tokens=args.max_tokens,
        do_sample=args.temp > 0,
        temperature=args.temp if args.temp > 0 else 1.0,
        top_k=args.top_k,
        top_p=args.top_p,
        seed=args.seed,
        eos_token_id=None if args.ignore_eos else args.eos,
        on_token=lambda _: times.append(time.perf_counter()),
    )
    print(" ".join(str(int(t)) for t in out[0, ids.shape[1] :]))
    if times:
        decode = np.diff([start, *times])
        rest = f", decode {1e3 * float(np.median(decode[1:])):.2f} ms/token" if len(times) > 1 else ""
        print(f"{len(times)} tokens: prefill {1e3 * float(decode[0]):.1f} ms{rest}", file=sys.stderr)
    return 0
