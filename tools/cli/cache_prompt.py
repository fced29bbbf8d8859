"""`mlxir cache-prompt`: a prompt's cache computed once and saved, for `mlxir generate
--prompt-cache-file` (mlx_lm.cache_prompt)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from mlxir.tools.cli.errors import CliError, UsageError


def add_parser(sub: Any) -> None:
    parser = sub.add_parser(
        "cache-prompt",
        help="compute a prompt's cache once and save it, for generate --prompt-cache-file (mlx_lm.cache_prompt)",
    )
    parser.add_argument("program", nargs="?", help="same as --model")
    parser.add_argument("--model", help="a save_pretrained folder, or a compiled .mlxfb (with --tokenizer)")
    parser.add_argument("--tokenizer", help="the folder of the tokenizer (default: the model's folder)")
    parser.add_argument("--prompt", "-p", default="-", help="the prompt text; '-' reads it from stdin (default)")
    parser.add_argument("--prompt-cache-file", required=True, metavar="FILE",
                        help="the file to write, at exactly this name (generate --prompt-cache-file FILE reads it)")
    parser.add_argument("--max-kv-size", type=int, metavar="N",
                        help="cache the prompt in a rotating cache of N tokens (generate then continues it)")
    parser.add_argument("--kv-bits", type=int, metavar="BITS", help="hold the cache quantized to BITS bits")
    parser.add_argument("--kv-group-size", type=int, default=64, help="with --kv-bits: 32, 64 or 128 (default 64)")
    parser.add_argument("--no-cache", action="store_true", help="compile without reading or writing the cache")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    """Reads a prompt once and saves the model's cache after it (mlx_lm.cache_prompt):
    `generate --prompt-cache-file` then reads only what follows. The prompt is encoded
    as text (the tokenizer's special tokens, no chat template), before any compile."""
    from mlxir.tools.cli.generate import check_model_argument, generation_config

    model = args.model or args.program
    if not model:
        raise UsageError("cache-prompt needs --model (a save_pretrained folder or a compiled .mlxfb)")
    config = generation_config(args)
    check_model_argument(model, args.tokenizer)
    target = Path(args.prompt_cache_file)
    if not target.parent.is_dir():
        raise CliError(f"cannot write '{target}': the folder '{target.parent}' does not exist")
    text = sys.stdin.read() if args.prompt == "-" else args.prompt
    from mlxir.tools import llm
    from mlxir.tools.llm.prompt_cache import make_prompt_cache
    from mlxir.tools.tokenizer import load_tokenizer

    try:
        tokens = load_tokenizer(args.tokenizer or model).encode(text)
        if not tokens:
            raise CliError("the prompt has no tokens: give some text (--prompt)")
        compiled, _ = llm.load(model, tokenizer=args.tokenizer, use_cache=not args.no_cache, **config.load_options())
        cache = make_prompt_cache(compiled, tokens, model=str(Path(model).resolve()), config=config)
    except (FileNotFoundError, ValueError) as error:
        raise CliError(str(error)) from None
    written = cache.save(target)
    print(f"cached {len(cache.tokens)} prompt tokens in {written}", file=sys.stderr)
    return 0
