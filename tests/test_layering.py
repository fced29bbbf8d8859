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
