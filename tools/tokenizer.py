"""The tokenizer of a `save_pretrained` folder, without importing torch or transformers.

    tokenizer = load_tokenizer(folder)
    ids = tokenizer.encode_prompt("Hello", system_prompt=None, chat_template=True)
    text = tokenizer.decode(ids)

`mlxir generate` starts in about a second from a cached program; importing
transformers (which imports torch) alone takes several. A folder with a
`tokenizer.json` (every fast tokenizer `save_pretrained` writes) is read with the
`tokenizers` library, and its chat template (`chat_template.jinja`, or
`chat_template` in `tokenizer_config.json`) is rendered with jinja2 the way
transformers renders it: a sandboxed environment with `trim_blocks` and
`lstrip_blocks`, `raise_exception`, `strftime_now` and a `tojson` that does not escape
HTML, the special tokens as variables, and the result encoded without adding special
tokens. A folder without `tokenizer.json` (a slow, sentencepiece-only tokenizer) falls
back to transformers' `AutoTokenizer`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, cast

SPECIAL_TOKENS = ("bos_token", "eos_token", "unk_token", "pad_token", "sep_token", "cls_token", "mask_token")


class TextTokenizer(Protocol):
    """What generation needs of a tokenizer."""

    eos_token_ids: frozenset[int]

    def encode(self, text: str, *, add_special_tokens: bool = True) -> list[int]: ...

    def encode_prompt(
        self, prompt: str, *, system_prompt: str | None = None, chat_template: bool = True
    ) -> list[int]: ...

    def decode(self, ids: Sequence[int]) -> str: ...


class FastTokenizer:
    """A `tokenizer.json` tokenizer with its `tokenizer_config.json` and chat template."""

    def __init__(self, folder: str | Path):
        from tokenizers import Tokenizer

        folder = Path(folder)
        self.backend = Tokenizer.from_file(str(folder / "tokenizer.json"))
        config_path = folder / "tokenizer_config.json"
        self.config: dict[str, Any] = json.loads(config_path.read_text()) if config_path.exists() else {}
        self.special_tokens = {
            name: _token_text(self.config[name]) for name in SPECIAL_TOKENS if self.config.get(name)
        }
        self.chat_template = _chat_template(folder, self.config)
        self.eos_token_ids = frozenset(_eos_ids(folder, self.special_tokens, self.backend))

    def encode(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        return list(self.backend.encode(text, add_special_tokens=add_special_tokens).ids)

    def decode(self, ids: Sequence[int]) -> str:
        return self.backend.decode(list(ids), skip_special_tokens=True)

    def apply_chat_template(self, messages: list[dict[str, str]], *, add_generation_prompt: bool = True) -> str:
        if self.chat_template is None:
            raise ValueError("this tokenizer has no chat template")
        template = _environment().from_string(self.chat_template)
        return template.render(
            messages=messages, add_generation_prompt=add_generation_prompt, **self.special_tokens
        )

    def encode_prompt(
        self, prompt: str, *, system_prompt: str | None = None, chat_template: bool = True
    ) -> list[int]:
        """The prompt's token ids: through the chat template when there is one and
        `chat_template` (then with no special tokens added: the template has them), else
        the plain text with the tokenizer's special tokens."""
        if chat_template and self.chat_template is not None:
            text = self.apply_chat_template(_messages(prompt, system_prompt))
            return self.encode(text, add_special_tokens=False)
        return self.encode(_plain(prompt, system_prompt))


class TransformersTokenizer:
    """transformers' `AutoTokenizer`, for folders without `tokenizer.json`."""

    def __init__(self, folder: str | Path):
        from transformers import AutoTokenizer

        self.backend: Any = cast(Any, AutoTokenizer.from_pretrained(str(folder)))  # pyright: ignore[reportUnknownMemberType] (transformers leaves from_pretrained's parameters unannotated)
        ids = self.backend.eos_token_id
        self.eos_token_ids = frozenset(
            _eos_ids(Path(folder), {}, None) | ({int(ids)} if ids is not None else set())
        )

    def encode_prompt(
        self, prompt: str, *, system_prompt: str | None = None, chat_template: bool = True
    ) -> list[int]:
        if chat_template and getattr(self.backend, "chat_template", None):
            text = self.backend.apply_chat_template(
                _messages(prompt, system_prompt), add_generation_prompt=True, tokenize=False
            )
            return list(self.backend.encode(text, add_special_tokens=False))
        return list(self.backend.encode(_plain(prompt, system_prompt)))

    def encode(self, text: str, *, add_special_tokens: bool = True) -> list[int]:
        return list(self.backend.encode(text, add_special_tokens=add_special_tokens))

    def decode(self, ids: Sequence[int]) -> str:
        return self.backend.decode(list(ids), skip_special_tokens=True)


def load_tokenizer(folder: str | Path) -> FastTokenizer | TransformersTokenizer:
    """The tokenizer `save_pretrained` wrote into `folder`."""
    folder = Path(folder)
    if not folder.is_dir():
        raise FileNotFoundError(f"'{folder}': no such folder (a tokenizer is a folder saved by save_pretrained)")
    if (folder / "tokenizer.json").exists():
        return FastTokenizer(folder)
    if not any((folder / name).exists() for name in ("tokenizer_config.json", "tokenizer.model", "vocab.json")):
        saved = (folder / "config.json").exists()
        what = "holds no tokenizer" if saved else "is not a folder saved by save_pretrained"
        raise FileNotFoundError(f"'{folder}' {what}: it has no tokenizer.json or tokenizer_config.json")
    return TransformersTokenizer(folder)


def _messages(prompt: str, system_prompt: str | None) -> list[dict[str, str]]:
    """The chat of one user turn, after the system message when there is one."""
    system = [{"role": "system", "content": system_prompt}] if system_prompt else []
    return [*system, {"role": "user", "content": prompt}]


def _plain(prompt: str, system_prompt: str | None) -> str:
    """The prompt without a chat template: the system prompt on a line before it."""
    return f"{system_prompt}\n{prompt}" if system_prompt else prompt


def _token_text(token: Any) -> str:
    """A special token as `tokenizer_config.json` writes it: a string or an added-token dict."""
    return cast(dict[str, str], token)["content"] if isinstance(token, dict) else str(token)


def _chat_template(folder: Path, config: dict[str, Any]) -> str | None:
    path = folder / "chat_template.jinja"
    if path.exists():
        return path.read_text()
    template = config.get("chat_template")
    if isinstance(template, list):  # named templates: the default one
        entries = [cast(dict[str, Any], t) for t in cast(list[Any], template) if isinstance(t, dict)]
        named = {t.get("name"): t.get("template") for t in entries}
        template = named.get("default")
    return template if isinstance(template, str) else None


def _eos_ids(folder: Path, special: dict[str, str], backend: Any) -> set[int]:
    """The end-of-sequence ids: the tokenizer's EOS token, and those the model's
    `generation_config.json` and `config.json` name (chat models often stop at
    several)."""
    ids: set[int] = set()
    if backend is not None and "eos_token" in special:
        token = backend.token_to_id(special["eos_token"])
        if token is not None:
            ids.add(int(token))
    for name in ("generation_config.json", "config.json"):
        path = folder / name
        if not path.exists():
            continue
        value = json.loads(path.read_text()).get("eos_token_id")
        if isinstance(value, int):
            ids.add(value)
        elif isinstance(value, list):
            ids.update(int(v) for v in cast(list[Any], value) if isinstance(v, int))
        if value is not None:
            break
    return ids


def _environment() -> Any:
    import jinja2
    from jinja2.ext import loopcontrols
    from jinja2.sandbox import ImmutableSandboxedEnvironment

    def raise_exception(message: str) -> None:
        raise jinja2.exceptions.TemplateError(message)

    def tojson(value: Any, ensure_ascii: bool = False, indent: Any = None, separators: Any = None, sort_keys: bool = False) -> str:
        return json.dumps(value, ensure_ascii=ensure_ascii, indent=indent, separators=separators, sort_keys=sort_keys)

    def strftime_now(fmt: str) -> str:
        return datetime.now().strftime(fmt)

    # Untyped: jinja2 leaves `filters` and `globals` unannotated (pyright infers their
    # value types from the defaults, too narrowly or not at all); any callable may go in.
    env: Any = cast(Any, ImmutableSandboxedEnvironment(trim_blocks=True, lstrip_blocks=True, extensions=[loopcontrols]))
    env.filters["tojson"] = tojson
    env.globals["raise_exception"] = raise_exception
    env.globals["strftime_now"] = strftime_now
    return env
