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

Both folders are removed when the process ends: a run leaves nothing in the system's
temporary folder.
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

os.environ["MLXIR_CACHE_DIR"] = tempfile.mkdtemp(prefix="mlxir-cache-")
atexit.register(shutil.rmtree, os.environ["MLXIR_CACHE_DIR"], ignore_errors=True)

sys.path.insert(0, str(Path(__file__).parent))

import torch  # noqa: E402,F401  (before mlx.core: see above)

import mlxir  # noqa: E402,F401  (before mlx.core: see above)
