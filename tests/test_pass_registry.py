"""The pass registry (`conversions/registry.py`) is complete and each pass is tested
alone: every `ModulePass` class of the package's pass modules is registered as itself,
under its `name`, with its docstring's first line as its summary; every registered
pass has a FileCheck file whose RUN line runs it alone; every target names registered
passes, and `transforms/cpu/` holds exactly the CPU target's passes."""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import subprocess
import sys
from pathlib import Path

from xdsl.passes import ModulePass

from mlxir.conversions.pipelines import TARGETS, pipeline_passes
from mlxir.conversions.registry import PASS_PACKAGES, PASSES
from mlxir.transforms.catalog import PATTERNS
from mlxir.transforms.cpu import CPU

ROOT = Path(__file__).resolve().parent.parent
FILECHECK = ROOT / "tests" / "filecheck"


def _pass_modules() -> list[str]:
    names: list[str] = []
    for package in PASS_PACKAGES:
        module = importlib.import_module(f"mlxir.{package}")
        names += [m.name for m in pkgutil.walk_packages(module.__path__, f"mlxir.{package}.")]
    return names


def _pass_classes() -> dict[str, list[type[ModulePass]]]:
    """Module → the `ModulePass` classes it defines that have a name (a base without
    one, `PatternPass`, is not a pass)."""
    found: dict[str, list[type[ModulePass]]] = {}
    for name in _pass_modules():
        module = importlib.import_module(name)
        for value in vars(module).values():
            if (
                inspect.isclass(value)
                and issubclass(value, ModulePass)
                and value.__module__ == name
                and isinstance(getattr(value, "name", None), str)
            ):
                found.setdefault(name, []).append(value)
    return found


def _alone_in_a_run_line() -> set[str]:
    """The passes some FileCheck file's RUN line runs alone: `mlx-opt ... -p NAME` or
    `-p 'NAME{options}'`."""
    alone: set[str] = set()
    for path in FILECHECK.rglob("*.mlir"):
        for line in path.read_text().splitlines():
            if "RUN:" not in line or "mlx-opt" not in line:
                continue
            for spec in re.findall(r"-p\s+(?:'([^']*)'|\"([^\"]*)\"|(\S+))", line):
                text = "".join(spec).strip()
                if "," not in re.sub(r"\{[^}]*\}", "", text):
                    alone.add(re.sub(r"\{.*\}$", "", text))
    return alone


def test_every_pass_class_is_registered_as_itself() -> None:
    classes = _pass_classes()
    assert "mlxir.conversions.pipelines" in classes and "mlxir.transforms.cpu.channels_last" in classes
    for module, found in classes.items():
        for cls in found:
            assert cls.name in PASSES, f"{module}.{cls.__name__} ('{cls.name}') is not registered"
            assert PASSES[cls.name].factory() is cls, cls.name
    registered = {cls.name for found in classes.values() for cls in found}
    assert set(PASSES) == registered | set(PATTERNS) | {"cse", "dce"}


def test_summaries_are_the_docstrings_first_lines() -> None:
    """A summary line stands alone: the docstring's first line, then a blank line or
    nothing (PEP 257), so `mlx-opt --help` shows a whole sentence."""
    for found in _pass_classes().values():
        for cls in found:
            doc = inspect.getdoc(cls) or ""
            lines = doc.splitlines()
            assert lines and (len(lines) == 1 or not lines[1].strip()), (cls.name, doc)
            assert PASSES[cls.name].summary.split(" (options: ")[0] == lines[0]
    for name, entry in PASSES.items():
        assert entry.summary and "\n" not in entry.summary, name


def test_options_are_the_passes_fields() -> None:
    assert PASSES["quantize-weights"].summary.endswith(
        "(options: bits=4 group-size=64 mode=affine embeddings=false activation-bits=0)"
    )
    assert PASSES["lower-to-mlx"].summary.endswith("(options: target=generic)")
    assert "(options: max-label-len=20 print-attrs=true" in PASSES["view-op-graph"].summary


def test_every_pass_has_a_filecheck_file_running_it_alone() -> None:
    missing = sorted(set(PASSES) - _alone_in_a_run_line())
    assert not missing, f"no FileCheck RUN line runs these alone (-p NAME): {missing}"


def test_targets_name_registered_passes_and_cpu_holds_the_cpu_target() -> None:
    for target in TARGETS.values():
        assert all(name in PASSES for name in pipeline_passes(target.name)), target.name
    cpu_passes = {
        cls.name
        for module, found in _pass_classes().items()
        if module.startswith("mlxir.transforms.cpu.")
        for cls in found
    }
    assert cpu_passes == set(CPU.passes)
    assert PASSES["cpu-polynomial-exp"].factory().__module__ == "mlxir.transforms.polynomial_exp"
    assert PASSES["cpu-depthwise-conv"].factory().__module__ == "mlxir.transforms.depthwise_conv"


def test_the_registry_imports_no_pass_module() -> None:
    """Listing the passes (`mlx-opt --help`) reads their modules' source: it imports
    neither torch (the lowering's) nor a pass module."""
    script = (
        "import sys\n"
        "from mlxir.conversions.registry import PASSES\n"
        "assert len(PASSES) > 40\n"
        "print(sorted(m for m in sys.modules if m == 'torch' or m.startswith(('mlxir.transforms.', 'mlxir.conversions.aten'))))"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['mlxir.transforms.catalog']", run.stdout
