"""llama.cpp as a benchmark system: built from source, fed the benchmark's own weights.

    .venv/bin/python benchmarks/llamacpp.py build [--cache build/llama.cpp]

builds llama.cpp's `llama-bench`, `llama-quantize` and `libllama` from the source that
the `llama-cpp-python` sdist bundles (`vendor/llama.cpp`; the GitHub repository is too
large to bring in here), pinned to `LLAMA_CPP_PYTHON`: cmake Release, CPU only, tuned
for this CPU (`GGML_NATIVE`) with AMX off (`-march=native` enables AMX, whose code
crashes these VMs). `benchmarks/cpu_llm.py` calls the same functions.

A save_pretrained folder becomes GGUF files with llama.cpp's own
`convert_hf_to_gguf.py` (f32, f16, q8_0) and `llama-quantize` (q4_0 from f32). The
benchmark's random-weight models have no tokenizer files: the conversion takes
llama.cpp's bundled Llama SentencePiece vocabulary (`models/ggml-vocab-llama-spm.gguf`,
32000 tokens), padded with unused control tokens to the model's vocabulary size. The
benchmark feeds token ids, never text, so the vocabulary only has to be well formed.

`greedy_tokens` runs a GGUF through `libllama` (the sdist's own ctypes binding,
`llama_cpp`, on the library built here) from token ids with an f32 KV cache: the check
that the conversion is faithful (the tokens of llama.cpp f32 equal transformers')."""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tarfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
LLAMA_CPP_PYTHON = "0.3.36"
DEFAULT_CACHE = ROOT / "build" / "llama.cpp"
TARGETS = ("llama-bench", "llama-quantize", "llama")
NO_AMX = "-mno-amx-tile -mno-amx-int8 -mno-amx-bf16"
FORMATS = ("f32", "f16", "q8_0", "q4_0")
"""GGUF weight formats the benchmark compares; q4_0 is quantized from f32 by
`llama-quantize`, the others written by the converter."""


def source_tree(cache: Path) -> Path:
    """The sdist's root (holding `llama_cpp/` and `vendor/llama.cpp`), downloaded once."""
    root = cache / f"llama_cpp_python-{LLAMA_CPP_PYTHON}"
    if (root / "vendor" / "llama.cpp" / "CMakeLists.txt").exists():
        return root
    cache.mkdir(parents=True, exist_ok=True)
    archive = cache / f"llama_cpp_python-{LLAMA_CPP_PYTHON}.tar.gz"
    if not archive.exists():
        print(
            f"downloading the llama-cpp-python {LLAMA_CPP_PYTHON} sdist",
            file=sys.stderr,
            flush=True,
        )
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--no-binary",
                ":all:",
                "-d",
                str(cache),
                f"llama-cpp-python=={LLAMA_CPP_PYTHON}",
            ],
            check=True,
        )
    with tarfile.open(archive) as tar:
        tar.extractall(cache, filter="data")
    return root


def build(cache: Path = DEFAULT_CACHE, jobs: int | None = None) -> Path:
    """The folder of the built binaries and `libllama.so` (built once per cache)."""
    tree = source_tree(cache) / "vendor" / "llama.cpp"
    out = cache / "build"
    binaries = out / "bin"
    if all((binaries / name).exists() for name in ("llama-bench", "llama-quantize", "libllama.so")):
        return binaries
    configure = [
        "cmake",
        "-S",
        str(tree),
        "-B",
        str(out),
        "-DCMAKE_BUILD_TYPE=Release",
        "-DGGML_NATIVE=ON",
        "-DGGML_AMX_INT8=OFF",
        "-DGGML_AMX_TILE=OFF",
        "-DGGML_AMX_BF16=OFF",
        f"-DCMAKE_C_FLAGS={NO_AMX}",
        f"-DCMAKE_CXX_FLAGS={NO_AMX}",
        "-DBUILD_SHARED_LIBS=ON",
        "-DLLAMA_BUILD_TESTS=OFF",
        "-DLLAMA_BUILD_EXAMPLES=OFF",
        "-DLLAMA_BUILD_SERVER=OFF",
        "-DLLAMA_BUILD_APP=OFF",
        "-DLLAMA_OPENSSL=OFF",
    ]
    print("building llama.cpp (cmake, Release, CPU, AMX off; minutes)", file=sys.stderr, flush=True)
    subprocess.run(configure, check=True, stdout=subprocess.DEVNULL)
    subprocess.run(
        [
            "cmake",
            "--build",
            str(out),
            "-j",
            str(jobs or os.cpu_count() or 1),
            "--target",
            *TARGETS,
        ],
        check=True,
    )
    return binaries


# Runs llama.cpp's converter with the bundled Llama vocabulary padded to the model's size;
# argv: llama.cpp's tree, the folder, the output type, the output file.
_CONVERT = r"""
import sys
from pathlib import Path

tree, folder, outtype, outfile = sys.argv[1:5]
sys.path[0:0] = [tree, str(Path(tree) / "gguf-py")]
import gguf
from conversion import base

def bundled_vocabulary(self):
    reader = gguf.GGUFReader(Path(tree) / "models" / "ggml-vocab-llama-spm.gguf", "r")
    def field(key):
        found = reader.get_field(key)
        return [found.parts[i] for i in found.data]
    tokens = [bytes(part) for part in field(gguf.Keys.Tokenizer.LIST)]
    scores = [float(part[0]) for part in field(gguf.Keys.Tokenizer.SCORES)]
    types = [int(part[0]) for part in field(gguf.Keys.Tokenizer.TOKEN_TYPE)]
    size = self.hparams["vocab_size"]
    padding = range(len(tokens), size)
    tokens = (tokens + [f"[PAD{i}]".encode() for i in padding])[:size]
    scores = (scores + [-1e4] * len(padding))[:size]
    types = (types + [int(gguf.TokenType.UNUSED)] * len(padding))[:size]
    self.gguf_writer.add_tokenizer_model("llama")
    self.gguf_writer.add_tokenizer_pre("default")
    self.gguf_writer.add_token_list(tokens)
    self.gguf_writer.add_token_scores(scores)
    self.gguf_writer.add_token_types(types)
    self.gguf_writer.add_bos_token_id(1)
    self.gguf_writer.add_eos_token_id(2)
    self.gguf_writer.add_unk_token_id(0)

base.TextModel._set_vocab_sentencepiece = bundled_vocabulary
base.TextModel._set_vocab_gpt2 = bundled_vocabulary
base.TextModel._set_vocab_qwen = bundled_vocabulary
sys.argv = ["convert_hf_to_gguf.py", folder, "--outtype", outtype, "--outfile", outfile]
sys.path.insert(0, tree)
import runpy
runpy.run_path(str(Path(tree) / "convert_hf_to_gguf.py"), run_name="__main__")
"""


def convert(
    cache: Path, binaries: Path, folder: Path, out: Path, formats: tuple[str, ...] = FORMATS
) -> dict[str, Path]:
    """GGUF files of the save_pretrained `folder`, one per format, under `out`."""
    tree = source_tree(cache) / "vendor" / "llama.cpp"
    out.mkdir(parents=True, exist_ok=True)
    files: dict[str, Path] = {}
    for kind in formats:
        target = out / f"model-{kind}.gguf"
        if kind == "q4_0":
            source = files.get("f32") or convert(cache, binaries, folder, out, ("f32",))["f32"]
            command = [str(binaries / "llama-quantize"), str(source), str(target), "q4_0"]
        else:
            command = [sys.executable, "-c", _CONVERT, str(tree), str(folder), kind, str(target)]
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0 or not target.exists():
            raise SystemExit(f"llama.cpp conversion to {kind} failed:\n{done.stderr[-3000:]}")
        files[kind] = target
    return files


def library_environment(binaries: Path) -> dict[str, str]:
    """The environment that makes the sdist's `llama_cpp` binding load the library built here."""
    return dict(os.environ, LLAMA_CPP_LIB_PATH=str(binaries))


def greedy_tokens(cache: Path, model: Path, prompt: list[int], count: int) -> list[int]:
    """`count` greedy tokens after `prompt` (ids), f32 KV cache, one thread (in this process:
    `library_environment` must be this process's environment)."""
    import numpy as np

    sys.path.insert(0, str(source_tree(cache)))
    from llama_cpp import Llama  # pyright: ignore[reportMissingImports]  (the sdist's binding, not installed)

    f32 = 0  # GGML_TYPE_F32
    llm: Any = Llama(
        model_path=str(model),
        n_ctx=len(prompt) + count + 8,
        n_batch=len(prompt),
        n_threads=1,
        type_k=f32,
        type_v=f32,
        logits_all=True,
        verbose=False,
    )
    llm.eval(prompt)
    tokens: list[int] = []
    for _ in range(count):
        tokens.append(int(np.argmax(llm.scores[llm.n_tokens - 1])))
        llm.eval([tokens[-1]])
    return tokens


def bench(
    binaries: Path, model: Path, threads: int, prompt: int, steps: int, repetitions: int
) -> dict[str, list[float]]:
    """`llama-bench` at `threads` (its default f16 KV cache: it takes no f32 one; at
    160 positions the cache is about 2 % of the bytes a decode step reads), `repetitions` processes of one timed
    repetition each (after its own warm-up): per process, the prefill of `prompt` tokens
    (ms) and the decode of `steps` tokens after a context of `prompt` tokens (ms per
    token). One repetition per process, because `llama-bench` reports a mean."""
    command = [
        str(binaries / "llama-bench"),
        "-m",
        str(model),
        "-t",
        str(threads),
        "-p",
        str(prompt),
        "-n",
        str(steps),
        "-d",
        f"0,{prompt}",
        "-r",
        "1",
        "-o",
        "json",
    ]
    prefill: list[float] = []
    decode: list[float] = []
    for _ in range(repetitions):
        done = subprocess.run(command, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"llama-bench failed:\n{done.stderr[-3000:]}")
        for test in json.loads(done.stdout):
            if test["n_prompt"] == prompt and test["n_gen"] == 0 and test["n_depth"] == 0:
                prefill.append(1e3 * prompt / test["avg_ts"])
            elif test["n_gen"] == steps and test["n_prompt"] == 0 and test["n_depth"] == prompt:
                decode.append(1e3 / test["avg_ts"])
    return {"prefill_ms": prefill, "decode_ms": decode}


def main() -> None:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("command", choices=["build"])
    parser.add_argument("--cache", type=Path, default=DEFAULT_CACHE)
    args = parser.parse_args()
    print(build(args.cache))


if __name__ == "__main__":
    main()
