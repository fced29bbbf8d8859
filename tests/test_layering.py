"""The layering of docs/architecture.md: each top-level part imports only the parts
below it in the order that page draws (imports inside functions count), the generic
kernels know no device, and loading a program imports neither xDSL nor NumPy."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SKIPPED = {".venv", ".git", ".typecheck", "tests", "benchmarks", "build"}


def _layers() -> list[str]:
    """The parts, top first, as the fenced block under `## Layers` in
    docs/architecture.md lists them (one per line, a comment after `#`)."""
    text = (ROOT / "docs" / "architecture.md").read_text()
    section = text.split("\n## Layers\n", 1)[1]
    block = re.search(r"```\n(.*?)```", section, re.S)
    assert block is not None, "docs/architecture.md: no fenced block under ## Layers"
    return [line.split("#")[0].strip() for line in block.group(1).splitlines() if line.split("#")[0].strip()]


def _imported(path: Path) -> list[tuple[int, str]]:
    """Every `mlxir.…` module that `path` imports, anywhere in it, with its line."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "mlxir":
                found += [(node.lineno, f"mlxir.{alias.name}") for alias in node.names]
            else:
                found += [(node.lineno, node.module)]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return [(line, name) for line, name in found if name.startswith("mlxir.")]


def _sources() -> list[Path]:
    return [
        path
        for path in sorted(ROOT.rglob("*.py"))
        if not SKIPPED.intersection(path.relative_to(ROOT).parts) and path.parent != ROOT
    ]


def test_the_layers_name_every_part() -> None:
    parts = {path.relative_to(ROOT).parts[0] for path in _sources()}
    assert sorted(parts) == sorted(_layers())


def test_the_root_holds_only_the_public_api() -> None:
    # setup.py builds the native kernels; the wheel leaves it out of the package.
    assert sorted(p.name for p in ROOT.glob("*.py")) == ["__init__.py", "setup.py"]


def test_each_part_imports_only_the_parts_below_it() -> None:
    layers = _layers()
    rank = {part: len(layers) - position for position, part in enumerate(layers)}
    offending = []
    for path in _sources():
        part = path.relative_to(ROOT).parts[0]
        for line, name in _imported(path):
            other = name.split(".")[1]
            if other in rank and rank[other] > rank[part]:
                offending.append(f"{path.relative_to(ROOT)}:{line}: {part} imports {name} ({other} is above it)")
    assert not offending, "\n".join(offending)


def test_no_part_but_the_runtime_reaches_the_cpu_backend() -> None:
    """The device seam: the generic kernels, the compiler and the program loader name no
    CPU choice; the backend is picked in `runtime/backend.py`. `mlxir info` reports the
    CPU's facts, and `import mlxir` arms its BLAS before MLX loads."""
    allowed = {"runtime/backend.py", "tools/cli/info.py", "__init__.py", "benchmarks"}
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in [*_sources(), ROOT / "__init__.py"]
        if not str(path.relative_to(ROOT)).startswith("runtime/cpu/")
        and str(path.relative_to(ROOT)) not in allowed
        for line, name in _imported(path)
        if name.startswith("mlxir.runtime.cpu")
    ]
    assert not offending, "\n".join(offending)


def test_the_runtime_reads_of_the_transforms_only_the_cpu_formulas() -> None:
    """The runtime needs no compiler: of the transforms it imports only the polynomial
    formulas the CPU backend shares with the CPU target's passes
    (`transforms/cpu/polynomial.py`, CPU-only, free of xDSL like its package's
    `__init__`). They live there, not in `support/`, because only CPU code reads them,
    and not under `runtime/cpu/`, because a transform may not import the runtime."""
    shared = {"mlxir.transforms.cpu.polynomial"}
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for path in sorted((ROOT / "runtime").rglob("*.py"))
        if path.name != "ir_interpreter.py"  # the test interpreter parses IR
        for line, name in _imported(path)
        if name.startswith(("mlxir.transforms", "mlxir.conversions")) and name not in shared
    ]
    assert not offending, "\n".join(offending)
    package = (ROOT / "transforms" / "cpu" / "__init__.py").read_text()
    formulas = (ROOT / "transforms" / "cpu" / "polynomial.py").read_text()
    assert "xdsl" not in package and "xdsl" not in formulas


def test_the_generic_kernels_never_ask_for_the_device() -> None:
    """What an op means does not depend on the device: no kernel asks MLX which device is
    the default (a backend is chosen once, at load)."""
    offending = [
        f"{path.relative_to(ROOT)}:{number}"
        for path in sorted((ROOT / "evaluator").rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "default_device" in line
    ]
    assert not offending, offending


def test_the_compiler_never_asks_for_the_device() -> None:
    """The compiler takes its target from its caller (`mlxir.lower` passes
    `runtime/backend.py`'s `host_target()`): no pass and no conversion asks MLX which
    device is the default."""
    offending = [
        f"{path.relative_to(ROOT)}:{number}"
        for part in ("conversions", "transforms")
        for path in sorted((ROOT / part).rglob("*.py"))
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if "default_device" in line
    ]
    assert not offending, offending


def test_the_runtime_imports_no_xdsl() -> None:
    """Loading and running a program needs neither xDSL nor the dialects (half a second
    of imports): `codegen/ops.py` reads its generated rule table, and a program this
    machine verified before is not rebuilt (`codegen/verification.py`)."""
    import subprocess
    import sys

    script = (
        "import sys, mlxir.runtime.program, mlxir.evaluator, mlxir.runtime.payloads\n"
        "print(sorted(m for m in sys.modules if m == 'xdsl' or m.startswith(('xdsl.', 'mlxir.dialects.mlx'))))"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]", run.stdout


def test_loading_and_generating_imports_no_numpy(tmp_path: Path) -> None:
    """A process that loads a program with weights read by MLX's own loader (over
    `THROUGH_MLX_FROM` bytes) and runs it on `mx.array`s, here an LLM generating, never
    imports NumPy (on the 56M Llama: 11.5 MB of peak resident memory and about 0.1 s of
    the runtime's imports): payloads and dense properties are read through
    `memoryview`s, and NumPy is imported only by the paths that take or give NumPy or
    torch arrays. Nor hashlib, whose OpenSSL is 3.7 MB resident: the verification key
    uses CPython's own SHA-256."""
    import json
    import subprocess
    import sys

    import mlx.core as mx
    from llm_models import build_model

    from mlxir.runtime.payloads import THROUGH_MLX_FROM
    from mlxir.tools import llm

    model = build_model("llama", vocab_size=2048)  # its weights pass THROUGH_MLX_FROM
    compiled = llm.compile_llm(model, max_seq=16, max_past=32, max_batch=1)
    info = compiled.program.info
    assert sum(g.length for g in info.globals) > THROUGH_MLX_FROM
    path = tmp_path / "llama.mlxfb"
    compiled.program.save(path)
    prompt = [5, 17, 300, 2000, 42]
    expected = llm.generate(compiled, mx.array([prompt]), max_new_tokens=6)[0].tolist()

    script = f"""
import json, sys
import mlxir
import mlx.core as mx
from mlxir.tools import llm
program = mlxir.load({str(path)!r})  # verified when it was written: no xDSL
compiled = llm.CompiledLLM.from_program(program)
ids = mx.array([{prompt!r}])
streamed = [int(token[0]) for token, _ in llm.stream_tokens(compiled, ids, max_new_tokens=3)]
generated = llm.generate(compiled, ids, max_new_tokens=6)[0].tolist()
print(json.dumps({{"streamed": streamed, "generated": generated,
                  "loaded": sorted(m for m in ("numpy", "xdsl", "_hashlib") if m in sys.modules)}}))
"""
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    result = json.loads(run.stdout.strip().splitlines()[-1])
    assert result["generated"] == expected
    assert result["streamed"] == expected[len(prompt) : len(prompt) + 3]
    assert result["loaded"] == [], result["loaded"]
