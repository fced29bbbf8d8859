"""Compile and cache: `compile_llm` (export, import, lower, serialize, load) and
`CompiledLLM`, the step program with what the generate loop needs to drive it; and
`load`, which compiles a `save_pretrained` folder once into the on-disk program cache
(`default_cache_dir`, keyed by `cache_key`) and reads the cached program, or a compiled
`.mlxfb`, back."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, cast

from mlxir.support.cache import cache_root
from mlxir.tools.llm.export import (
    STEP_SIGNATURE,
    CacheKind,
    ExportedLLM,
    cache_layout,
    export_llm,
    load_hf_model,
)

if TYPE_CHECKING:
    import mlx.core as mx

    from mlxir.runtime.program import CompileMode, Program
    from mlxir.tools.tokenizer import TextTokenizer
    from mlxir.transforms.quantize import Quantize


@dataclass
class CompiledLLM:
    """A compiled step program and what `generate` needs to drive it. `from_program`
    rebuilds it from a loaded `.mlxfb` (everything is in the program's signature)."""

    program: Program
    with_mask: bool
    kv_shapes: tuple[tuple[int, int], ...]  # (heads, head_dim) per cache tensor
    kv_dtype: str
    timings: dict[str, float] = field(default_factory=dict[str, float])
    quantized: str | None = None
    """What `compile_llm(..., quantize=...)` quantized, in one line."""
    cache: CacheKind = "growing"
    state_shapes: tuple[tuple[tuple[int, ...], str], ...] = ()
    """Per recurrent state (`cache="recurrent"`): its shape per batch row and dtype."""

    @classmethod
    def from_program(cls, program: Program) -> CompiledLLM:
        names = [spec.name for spec in program.inputs]
        if not names or names[0] != "input_ids":
            raise ValueError(f"not an mlxir LLM step program: inputs are {names}")
        with_mask = len(names) > 1 and names[1] == "attention_mask"
        if with_mask and names[2:3] != ["position_offset"]:
            raise ValueError(
                f"this LLM step program takes {names[2:3]} where mlxir now passes "
                "position_offset: it was compiled by an older mlxir; compile it again"
            )
        fixed = with_mask and names[3:4] == ["past_length"]
        cached = program.inputs[(4 if fixed else 3) if with_mask else 1 :]
        kv = [spec for spec in cached if spec.name.startswith("kv")]
        states = [spec for spec in cached if spec.name.startswith("states")]
        if len(kv) + len(states) != len(cached) or (not kv and not states) or len(kv) % 2 or len(states) % 2:
            raise ValueError(f"not an mlxir LLM step program: inputs are {names}")
        shapes: list[tuple[int, int]] = []
        for spec in kv:
            heads, head_dim = (spec.shape[1], spec.shape[3]) if len(spec.shape) == 4 else (None, None)
            if heads is None or head_dim is None:
                raise ValueError(f"cache input '{spec.name}' is not [batch, heads, past, head_dim]")
            shapes.append((heads, head_dim))
        state_shapes: list[tuple[tuple[int, ...], str]] = []
        for spec in states:
            rest = spec.shape[1:]
            if not all(isinstance(n, int) for n in rest):
                raise ValueError(f"state input '{spec.name}' is not [batch, ...] with static sizes after the batch")
            state_shapes.append((cast(tuple[int, ...], tuple(rest)), spec.dtype))
        kind: CacheKind = "recurrent" if states else "fixed" if fixed else "growing"
        dtype = kv[0].dtype if kv else states[0].dtype
        return cls(program, with_mask, tuple(shapes), dtype, cache=kind, state_shapes=tuple(state_shapes))

    @property
    def kv_count(self) -> int:
        """How many of the cache tensors (`empty_cache`) are attention keys and values:
        the recurrent states come after them."""
        return len(self.kv_shapes)

    @property
    def max_capacity(self) -> int | None:
        """The most slots the program's fixed cache may have (None: no bound)."""
        spec = self.program.inputs[1]
        symbol = spec.dims[1] if len(spec.dims) > 1 else ""
        _, upper = self.program.info.symbol_ranges.get(symbol, (0, -1))
        return upper if upper >= 0 else None

    @property
    def context_limit(self) -> int | None:
        """How many tokens, prompt and generated, the program can hold (None: no
        bound): its fixed cache's most slots, or the most past tokens a growing cache
        takes plus the one a step adds."""
        if self.cache != "growing":
            return self.max_capacity
        spec = next(s for s in self.program.inputs if s.name.startswith("kv"))
        symbol = spec.dims[2] if len(spec.dims) > 2 else ""
        _, upper = self.program.info.symbol_ranges.get(symbol, (0, -1))
        return upper + 1 if upper >= 0 else None

    def empty_cache(self, batch: int, capacity: int = 0) -> list[mx.array]:
        """The cache before the first token: no slots (growing), or `capacity` zeroed
        slots (fixed, recurrent), then the zeroed recurrent states."""
        import mlx.core as mx

        from mlxir.evaluator.arrays import mx_dtype

        dtype = mx_dtype(self.kv_dtype)
        kv = [mx.zeros((batch, h, capacity, d), dtype=dtype) for h, d in self.kv_shapes]
        return kv + [mx.zeros((batch, *shape), dtype=mx_dtype(kind)) for shape, kind in self.state_shapes]

    def step(
        self,
        input_ids: mx.array,
        kv: Sequence[mx.array],
        attention_mask: mx.array | None = None,
        position_offset: mx.array | None = None,
        past_length: mx.array | None = None,
        *,
        evaluate: bool = True,
    ) -> tuple[mx.array, list[mx.array]]:
        """One call: logits and the grown (or written) cache, all `mx.array`s.
        `position_offset[b]` is the position of row b's first new token (see the package
        docstring); a fixed cache also takes `past_length`, the slots already written
        (0-d int64), and its `attention_mask` covers every slot. What the program takes
        is read off its signature; `cache.py` builds these inputs for each kind of
        cache. `evaluate=False` returns them lazy (`Program.call_flat`)."""
        given = {"attention_mask": attention_mask, "position_offset": position_offset, "past_length": past_length}
        names = [spec.name for spec in self.program.inputs[1:] if spec.name in given]
        if any(given[name] is None for name in names):
            raise ValueError(f"this program takes {', '.join(names)}")
        outputs = self.program.call_flat(input_ids, *[given[name] for name in names], *kv, evaluate=evaluate)
        return outputs[0], list(outputs[1:])


def compile_llm(
    model_or_exported: Any,
    *,
    pipeline: str | None = None,
    quantize: Quantize | None = None,
    compile: CompileMode = "auto",
    tensor_parallel: int = 1,
    **export_options: Any,
) -> CompiledLLM:
    """Exports (unless given an `ExportedLLM`), imports, lowers, quantizes the matmul
    weights if asked (`quantize=mlxir.Quantize(bits=4, group_size=64)`), serializes and
    loads; `timings` holds the seconds of each stage. `tensor_parallel=N` splits the
    program over N ranks: call it in each of N ranks `mx.distributed` started (or
    compile once with `compile_split` and load the program in each rank)."""
    from mlxir import compiled_parts
    from mlxir.runtime.program import Program
    from mlxir.support.progress import progress_shown, report

    seconds: dict[str, float] = {}
    with progress_shown():  # one line from the export to the last weight written
        if isinstance(model_or_exported, ExportedLLM):
            exported = model_or_exported
        else:
            report("torch.export")
            exported = export_llm(model_or_exported, **export_options)
        parts, quantized = compiled_parts(
            exported.ep, pipeline, quantize=quantize, seconds=seconds, tensor_parallel=tensor_parallel
        )
    start = time.perf_counter()
    program = Program(parts, verify=False, compile=compile)  # serialize verified it
    loaded = time.perf_counter() - start
    compiled = CompiledLLM.from_program(program)
    compiled.quantized = quantized
    compiled.timings = {"export": exported.export_s, **seconds, "load": loaded}
    return compiled


WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth")
"""Files of a `save_pretrained` folder whose bytes are weights (they key the cache)."""


def default_cache_dir() -> Path | None:
    """mlxir's cache folder (`support/cache.py`: `$MLXIR_CACHE_DIR`, ...; None when
    it is turned off)."""
    return cache_root()


def cache_key(folder: str | Path, **options: Any) -> str:
    """A hash of the folder's config and weights (their bytes), of mlxir's version and
    of the compile `options`: a program compiled with the same key is the same."""
    import hashlib  # here, not at the top: it maps OpenSSL (4 MB resident), which a run never needs
    from importlib.metadata import PackageNotFoundError, version

    from mlxir.codegen import SCHEMA_VERSION

    folder = Path(folder)
    try:
        mlxir_version = version("mlxir")
    except PackageNotFoundError:
        mlxir_version = "unknown"
    digest = hashlib.sha256()
    digest.update(
        f"mlxir {mlxir_version} schema {SCHEMA_VERSION} step {STEP_SIGNATURE} "
        f"{sorted(options.items())}".encode()
    )
    files = sorted(
        p for p in folder.iterdir()
        if p.is_file() and (p.name == "config.json" or p.suffix in WEIGHT_SUFFIXES or p.name.endswith(".index.json"))
    )
    if not any(p.name == "config.json" for p in files):
        raise FileNotFoundError(f"'{folder}' has no config.json: not a save_pretrained folder")
    for path in files:
        digest.update(path.name.encode() + b"\0")
        digest.update(_file_digest(path))
    return digest.hexdigest()[:32]


def _file_digest(path: Path) -> bytes:
    import hashlib

    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").digest()


def _notify(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def load(
    model: str | Path,
    *,
    tokenizer: str | Path | None = None,
    use_cache: bool = True,
    cache_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = _notify,
    quantize: Quantize | None = None,
    logits: Literal["last", "all"] = "last",
    positions: bool = False,
    tensor_parallel: int = 1,
) -> tuple[CompiledLLM, TextTokenizer]:
    """The compiled step program and the tokenizer of `model`: a folder written by
    `save_pretrained` (config, weights and tokenizer), or a compiled `.mlxfb` with
    `tokenizer` the folder of its tokenizer.

    A folder is compiled on first use (export, import, lower, serialize: tens of
    seconds for a real model, reported through `progress`) and the program cached under
    `cache_dir` (`default_cache_dir()`), keyed by `cache_key`, so the next load only
    reads the program; `use_cache=False` compiles every time and writes nothing. The
    program takes no attention mask (one unpadded prompt; a state-space or hybrid
    model's recurrent program takes one, which `stream_generate` fills with ones) and
    keeps the last position's logits (`logits="all"`: every position's, which
    speculative decoding reads; cached apart). `positions=True` compiles the growing
    program that takes the attention mask and each row's position (a rotating cache,
    `stream_tokens(max_kv_size=...)`, needs it; cached apart). `quantize` quantizes its matmul weights (a folder only; part of
    the cache key). `tensor_parallel=N` loads the program split over N ranks
    (docs/distributed.md): in one of N ranks `mx.distributed` started, from the cache,
    where `compile_split` put it (compiling it here if it is not there yet)."""
    from mlxir.runtime.program import Program
    from mlxir.runtime.program import load as load_program
    from mlxir.tools.tokenizer import load_tokenizer

    path = Path(model)
    check_model(path, tokenizer)
    if path.is_file():
        if quantize is not None:
            raise ValueError(f"'{path}' is already compiled: quantization applies when compiling a folder")
        program = load_program(path)  # a .pte raises ProgramError
        assert tokenizer is not None  # check_model asked for it
        return CompiledLLM.from_program(program), load_tokenizer(tokenizer)
    text_tokenizer = load_tokenizer(tokenizer or path)
    if tensor_parallel > 1:
        split = compile_split(
            path, tensor_parallel, cache_dir=cache_dir, progress=progress, quantize=quantize, logits=logits
        )
        program = load_program(split)
        assert isinstance(program, Program)
        return CompiledLLM.from_program(program), text_tokenizer
    options: dict[str, Any] = _step_options(logits, positions)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    use_cache = use_cache and root is not None
    cached = _cached_program(path, root or Path(), options, quantize)
    if quantize is not None and quantize.skip is not None and use_cache:
        raise ValueError("a quantization with a skip predicate cannot be cached: pass use_cache=False")
    if use_cache and cached.exists():
        program = load_program(cached)
        assert isinstance(program, Program)
        return CompiledLLM.from_program(program), text_tokenizer

    say: Callable[[str], None] = progress or (lambda _: None)
    say(f"compiling {path} (the first run; the program is cached for the next ones)")
    start = time.perf_counter()
    hf_model = load_hf_model(path)
    say(f"  loaded the model with transformers in {time.perf_counter() - start:.1f} s")
    if cache_layout(hf_model).recurrent_layers:
        # A state-space model's program is the recurrent one, which takes the mask
        # (`stream_tokens` passes all ones for the one unpadded prompt).
        options = {**{k: v for k, v in options.items() if k != "cache"}, "attention_mask": True}
    exported = export_llm(hf_model, **options)
    say(f"  torch.export: {exported.export_s:.1f} s")
    compiled = compile_llm(exported, quantize=quantize)
    timings = compiled.timings
    say(
        "  import {import:.1f} s, lower {lower:.1f} s, serialize {serialize:.1f} s, "
        "load {load:.2f} s".format(**timings)
    )
    if compiled.quantized:
        say(f"  {compiled.quantized}")
    if use_cache:
        _store(cached, compiled.program.save, say)
    return compiled, text_tokenizer


def is_compiled_program(path: Path) -> bool:
    """Whether the file `path` is named or begins as a compiled program (`.mlxfb`, or
    an ExecuTorch `.pte`): its first bytes only."""
    from mlxir.codegen.fb.layout import FILE_IDENTIFIER

    with path.open("rb") as file:
        head = file.read(12)
    return path.suffix in (".mlxfb", ".pte") or head[8:12] == FILE_IDENTIFIER.encode() or head[4:6] == b"ET"


def check_model(path: Path, tokenizer: str | Path | None = None) -> None:
    """Raises `FileNotFoundError` or `ValueError`, in one line, unless `path` is what
    `load` takes: a `save_pretrained` folder, or a compiled program with `tokenizer`
    its tokenizer's folder. Reads no more than a file's first bytes."""
    if path.is_file():
        if not is_compiled_program(path):
            raise ValueError(
                f"'{path}' is neither a model folder saved by save_pretrained nor a compiled program (.mlxfb)"
            )
        if tokenizer is None:
            raise ValueError(f"'{path}' is a compiled program: give the folder of its tokenizer")
    elif not path.is_dir():
        raise FileNotFoundError(f"'{path}': no such folder or program")
    elif not (path / "config.json").is_file():
        raise FileNotFoundError(
            f"'{path}' is not a model folder saved by save_pretrained: it has no config.json"
        )


def _store(cached: Path, write: Callable[[Path], object], say: Callable[[str], None]) -> None:
    """Writes a program into the cache: `write` fills a partial file, renamed at once
    (a concurrent run or another rank never reads half a program)."""
    cached.parent.mkdir(parents=True, exist_ok=True)
    partial = cached.with_suffix(f".{os.getpid()}.partial")
    write(partial)
    partial.replace(cached)
    say(f"  cached as {cached}")


def _step_options(logits: Literal["last", "all"], positions: bool) -> dict[str, Any]:
    if positions:
        return {"attention_mask": True, "logits": logits, "cache": "growing"}
    return {"attention_mask": False, "logits": logits}


def _cached_program(path: Path, root: Path, options: dict[str, Any], quantize: Quantize | None, ranks: int = 1) -> Path:
    # The runtime's, not the compiler's: a cached generate imports neither torch nor xDSL.
    from mlxir.runtime.backend import host_target

    scheme = {"quantize": quantize.key()} if quantize is not None else {}
    split = {"tensor_parallel": ranks} if ranks > 1 else {}
    return root / "llm" / f"{cache_key(path, **options, **scheme, **split, target=host_target())}.mlxfb"


def compile_split(
    model: str | Path,
    ranks: int,
    *,
    cache_dir: str | Path | None = None,
    progress: Callable[[str], None] | None = _notify,
    quantize: Quantize | None = None,
    logits: Literal["last", "all"] = "last",
) -> Path:
    """The cached program of a `save_pretrained` folder split over `ranks` ranks
    (`shard-tensor-parallel`), compiled once, here, if the cache lacks it: a launcher
    calls it before it starts the ranks, which then only read it (`load(...,
    tensor_parallel=ranks)`)."""
    from mlxir import compiled_parts
    from mlxir.support.remarks import collecting

    path = Path(model)
    root = Path(cache_dir) if cache_dir is not None else default_cache_dir()
    if root is None:
        raise ValueError("a program split over ranks is read by every rank from the program cache: turn the cache on (MLXIR_CACHE_DIR)")
    if quantize is not None and quantize.skip is not None:
        raise ValueError("a quantization with a skip predicate cannot be cached")
    options = _step_options(logits, positions=False)
    cached = _cached_program(path, root, options, quantize, ranks)
    if cached.exists():
        return cached
    say: Callable[[str], None] = progress or (lambda _: None)
    say(f"compiling {path} split over {ranks} ranks (the first run; the program is cached for the next ones)")
    hf_model = load_hf_model(path)
    if cache_layout(hf_model).recurrent_layers:
        raise ValueError(f"'{path}' is a state-space model: its recurrent program is not split over ranks")
    exported = export_llm(hf_model, **options)
    seconds: dict[str, float] = {}
    with collecting() as remarks:
        parts, quantized = compiled_parts(exported.ep, quantize=quantize, seconds=seconds, tensor_parallel=ranks)
    say("  export {:.1f} s, import {import:.1f} s, lower and split {lower:.1f} s, serialize {serialize:.1f} s".format(exported.export_s, **seconds))
    if remarks:
        say(f"  {_whole_on_every_rank([r.message for r in remarks], ranks)}")
    if quantized:
        say(f"  {quantized}")
    _store(cached, lambda partial: partial.write_bytes(bytes(parts)), say)
    return cached


def _whole_on_every_rank(remarks: Sequence[str], ranks: int) -> str:
    """The split pass's remarks in one line: how many ops every rank holds whole, and
    the first one's reason."""
    reasons = [message.removeprefix("shard-tensor-parallel: ") for message in remarks]
    return (
        f"split over {ranks} ranks, {len(reasons)} op(s) stay whole on every rank (each rank computes them "
        f"all), e.g. {reasons[0]}"
    )

