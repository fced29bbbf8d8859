"""Makes `tests/` importable so suites share helpers (`differential.harness`), and sets
up each test process before any test module imports MLX:

- torch and mlxir before any test module imports MLX: mlxir so that MLX binds the
  system BLAS where there is one (`mlxir.runtime.cpu.blas`), as it does for users who import mlxir
  before `mlx.core`, and torch so that that BLAS, loaded at MLX's import, does not
  replace torch's own (torch's complex dot, the reference, would be wrong:
  docs/blas.md);
- one BLAS thread per process: `pytest -n 2` already runs a process per core;
- a private temporary folder per xdist worker for the C++ kernels MLX's CPU backend
  builds for `mx.compile`: two processes building the same kernel at once in one
  folder can read each other's half-written library (MLX writes it in place);
- a fresh verification cache per test process (`codegen/verification.py`), so no
  verdict from an earlier run or from the user's own cache decides a test.

- MLX's kernel builds through a precompiled header: each kernel MLX's CPU backend
  compiles (`g++ -std=c++17 -O3 ... kernel.cpp`, about 0.5 s, almost all of it parsing
  `mlx/backend/cpu/compiled_preamble.h`) is one of hundreds a run builds, each parsing
  the same header again. The run's first process precompiles that header once with
  MLX's own flags, in a folder put first on the include path of a `g++` that every
  process of the run finds first on its PATH (`_precompiled_mlx_preamble`): the same
  machine code (GCC uses a precompiled header only where it is valid, and reads the
  header itself otherwise), in about 0.14 s a kernel.

Both folders are removed when the process ends, the precompiled header when the run
does: a run leaves nothing in the system's temporary folder.
"""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
_worker = os.environ.get("PYTEST_XDIST_WORKER")
if _worker:
    _private = Path(tempfile.gettempdir()) / f"mlxir-tests-{_worker}"
    _private.mkdir(exist_ok=True)
    atexit.register(shutil.rmtree, _private, ignore_errors=True)
    os.environ["TMPDIR"] = str(_private)
    tempfile.tempdir = None  # read TMPDIR again


def _precompiled_mlx_preamble() -> None:
    """See above. Done by the run's first process (xdist's controller, before it starts
    the workers, which inherit PATH); nothing changes where g++, MLX's headers or the
    precompilation are missing."""
    import importlib.util
    import subprocess

    compiler = shutil.which("g++")
    spec = importlib.util.find_spec("mlx")
    if compiler is None or spec is None or not spec.submodule_search_locations:
        return
    include = Path(next(iter(spec.submodule_search_locations))) / "include"
    header = Path("mlx/backend/cpu/compiled_preamble.h")
    if not (include / header).exists():
        return
    folder = Path(tempfile.mkdtemp(prefix="mlxir-tests-pch-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    (folder / header).parent.mkdir(parents=True)
    shutil.copy(include / header, folder / header)
    built = subprocess.run(
        [compiler, "-std=c++17", "-O3", "-Wall", "-fPIC", "-x", "c++-header", "-I", str(include),
         str(include / header), "-o", f"{folder / header}.gch"],
        capture_output=True,
    )
    if built.returncode != 0:
        return
    wrapper = folder / "bin" / "g++"
    wrapper.parent.mkdir()
    wrapper.write_text(f'#!/bin/sh\nexec "{compiler}" -I "{folder}" "$@"\n')
    wrapper.chmod(0o755)
    os.environ["PATH"] = os.pathsep.join([str(wrapper.parent), os.environ.get("PATH", "")])
    os.environ["MLXIR_TESTS_PRECOMPILED"] = str(folder)


if "MLXIR_TESTS_PRECOMPILED" not in os.environ:
    _precompiled_mlx_preamble()

os.environ["MLXIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlxir-cache-")
atexit.register(shutil.rmtree, os.environ["MLXIR_CACHE_DIR"], ignore_errors=True)

sys.path.insert(0, str(Path(__file__).parent))

import torch  # noqa: E402,F401  (before mlx.core: see above)

import mlxir  # noqa: E402,F401  (before mlx.core: see above)
