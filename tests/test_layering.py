"""The layering of docs/architecture.md: the libraries never import the tools, and the
core modules import no library at module level (only lazily, inside a function)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
LIBRARIES = ("dialects", "conversions", "transforms", "codegen", "runtime", "interop")
CORE = ("context.py", "dtypes.py", "weights.py", "xdsl_fixes.py", "quiet.py")


def _imports(path: Path, top_level_only: bool) -> list[tuple[int, str]]:
    tree = ast.parse(path.read_text(), str(path))
    nodes = tree.body if top_level_only else list(ast.walk(tree))
    found = []
    for node in nodes:
        if isinstance(node, ast.ImportFrom) and node.module:
            found += [(node.lineno, f"{node.module}.{alias.name}") for alias in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, alias.name) for alias in node.names]
    return found


def test_libraries_never_import_the_tools() -> None:
    offending = [
        f"{path.relative_to(ROOT)}:{line}: {name}"
        for folder in LIBRARIES
        for path in sorted((ROOT / folder).rglob("*.py"))
        for line, name in _imports(path, top_level_only=False)
        if name.startswith("mlxir.tools")
    ]
    assert not offending, "\n".join(offending)


def test_core_modules_import_no_library_at_module_level() -> None:
    libraries = tuple(f"mlxir.{folder}" for folder in (*LIBRARIES, "tools"))
    offending = [
        f"{name}:{line}: {imported}"
        for name in CORE
        for line, imported in _imports(ROOT / name, top_level_only=True)
        if imported.startswith(libraries)
    ]
    assert not offending, "\n".join(offending)


def test_the_runtime_imports_no_xdsl() -> None:
    """Loading and running a program needs neither xDSL nor the dialects (half a second
    of imports): `codegen/ops.py` reads its generated rule table, and a program this
    machine verified before is not rebuilt (`codegen/verification.py`)."""
    import subprocess
    import sys

    script = (
        "import sys, mlxir.runtime.program, mlxir.runtime.kernels, mlxir.runtime.payloads\n"
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
