"""The pattern catalog (`transforms/catalog.py`) is the one registration of every
rewrite pattern on mlx IR: each pattern class is in it once, each row names a real
class of its module (`pattern_module`) and real mlx ops, and the ops' canonicalization
traits, the passes and `mlx-opt --help` all come from it."""

from __future__ import annotations

import importlib
import inspect

import pytest
from xdsl.pattern_rewriter import RewritePattern

from mlxir.conversions.registry import PASSES
from mlxir.dialects import mlx
from mlxir.transforms.catalog import CANONICALIZE, OPTIMIZE, PATTERNS, pattern_module
from mlxir.transforms.pattern_passes import patterns_by_op


def _pattern_classes(module_name: str) -> set[str]:
    module = importlib.import_module(module_name)
    return {
        name
        for name, value in vars(module).items()
        if inspect.isclass(value)
        and issubclass(value, RewritePattern)
        and value.__module__ == module.__name__
    }


def test_every_pattern_class_is_registered_once() -> None:
    registered: dict[str, list[str]] = {}
    for pass_name, entry in PATTERNS.items():
        registered.setdefault(pattern_module(pass_name), []).append(entry.pattern)
    for module_name, patterns in registered.items():
        assert len(patterns) == len(set(patterns)), patterns
        assert set(patterns) == _pattern_classes(module_name), module_name
    assert not _pattern_classes("mlxir.transforms.matching")  # helpers, no pattern


def test_rows_name_real_ops_and_every_row_is_a_pass() -> None:
    op_names = {op.name for op in mlx.MLX_OPS}
    for pass_name, entry in PATTERNS.items():
        assert set(entry.ops) <= op_names, (pass_name, set(entry.ops) - op_names)
        assert pass_name in PASSES
    assert "optimize-mlx" in PASSES and "canonicalize" in PASSES


def test_canonicalization_traits_come_from_the_rows() -> None:
    """Each op's `MlxCanonicalization` trait attaches exactly the canonicalize rows
    naming that op, and no optimization (once `transforms/canonicalize.py`, the
    `canonicalize` pass's module, has registered them)."""
    importlib.import_module("mlxir.transforms.canonicalize")
    expected: dict[str, set[str]] = {}
    for entry in PATTERNS.values():
        if entry.stage == CANONICALIZE:
            for op in entry.ops:
                expected.setdefault(op, set()).add(entry.pattern)
    for op_cls in mlx.MLX_OPS:
        trait = op_cls.get_trait(mlx.MlxCanonicalization)
        attached = {type(p).__name__ for p in trait.get_patterns(op_cls)} if trait else set()
        assert attached == expected.get(op_cls.name, set()), op_cls.name
    optimizations = {entry.pattern for entry in PATTERNS.values() if entry.stage == OPTIMIZE}
    assert not optimizations & {type(p).__name__ for ps in patterns_by_op(CANONICALIZE).values() for p in ps}


def test_unregistered_canonicalization_patterns_and_unknown_stages_raise() -> None:
    """Before `transforms/canonicalize.py` registers the patterns, asking an op for them
    raises instead of finding none (a fresh process: this one has registered them);
    an unknown stage of patterns raises too."""
    import subprocess
    import sys

    script = (
        "from mlxir.dialects import mlx\n"
        "trait = mlx.AstypeOp.get_trait(mlx.MlxCanonicalization)\n"
        "try:\n"
        "    trait.get_patterns(mlx.AstypeOp)\n"
        "except RuntimeError as error:\n"
        "    print('raised:', error)\n"
        "import mlxir.transforms.canonicalize\n"
        "print(sorted(type(p).__name__ for p in trait.get_patterns(mlx.AstypeOp)))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    raised, attached = run.stdout.strip().splitlines()
    assert raised.startswith("raised: the mlx ops' canonicalization patterns are not registered")
    assert attached == str(sorted(e.pattern for e in PATTERNS.values() if "mlx.astype" in e.ops and e.stage == CANONICALIZE))
    with pytest.raises(KeyError, match="no stage of patterns named 'canonicalise'"):
        patterns_by_op("canonicalise")  # pyright: ignore[reportArgumentType] (the misspelling is the test)
