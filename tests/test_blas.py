"""mlxir.runtime.cpu.blas: the BLAS behind MLX's CPU matmuls, chosen at `import mlxir`.

Each check runs in a fresh interpreter: MLX binds cblas_sgemm once per process, when
mlx.core is imported. The assertions hold on a machine with a system OpenBLAS/MKL (it is
the one MLX calls) and on one without (MLX's bundled BLAS is reported).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
import textwrap
from typing import Any

import pytest

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="mlxir.runtime.cpu.blas chooses a BLAS on Linux only"
)

# Where Debian/Ubuntu's libopenblas0-pthread installs it: if it is here, mlxir must use it.
DEBIAN_OPENBLAS = f"/usr/lib/{sysconfig.get_config_var('MULTIARCH')}/openblas-pthread/libopenblas.so.0"

REPORT = """
import json
from mlxir.runtime.cpu import blas
choice = blas.selected()
in_use = blas.blas_in_use()
print(json.dumps({
    "path": choice.path, "source": choice.source, "in_use": in_use,
    "bundled": blas.is_bundled(in_use), "candidates": blas.candidates(),
}))
"""


def python(code: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    environment = {k: v for k, v in os.environ.items() if k not in ("MLXIR_BLAS", "LD_PRELOAD")}
    environment.update(env)
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        env=environment, capture_output=True, text=True, timeout=120, check=False,
    )


def report(code: str, **env: str) -> tuple[dict[str, Any], str]:
    """The REPORT after `code`, and stderr."""
    done = python(textwrap.dedent(code) + REPORT, **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.splitlines()[-1]), done.stderr


def warning_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "BlasWarning" in line]


def same_file(a: str, b: str) -> bool:
    return os.path.samefile(a, b)


def expected_fast(result: dict[str, Any]) -> str | None:
    """The library a default `import mlxir` must have picked on this machine: an MKL in
    this environment first, then Debian's OpenBLAS, then the first candidate."""
    from mlxir.runtime.cpu.blas import MKL_NAMES

    for name in MKL_NAMES:
        if os.path.isfile(os.path.join(sys.prefix, "lib", name)):
            return os.path.join(sys.prefix, "lib", name)
    if os.path.exists(DEBIAN_OPENBLAS):
        return DEBIAN_OPENBLAS
    return result["candidates"][0] if result["candidates"] else None


def test_import_mlxir_imports_neither_mlx_nor_torch() -> None:
    done = python("import sys, mlxir; print(sorted({'mlx.core', 'torch'} & set(sys.modules)))")
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_default_pick() -> None:
    result, stderr = report("import mlxir, mlx.core")
    assert not warning_lines(stderr), stderr
    fast = expected_fast(result)
    if fast is None:
        assert (result["source"], result["path"]) == ("not-found", None)
        assert result["bundled"], result
    else:
        assert result["source"] == "auto" and same_file(result["path"], fast), result
        assert same_file(result["in_use"], fast) and not result["bundled"], result


def test_the_environments_mkl_comes_first(tmp_path: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    """An MKL installed into the Python environment (`pip install mkl`: `lib/` under
    `sys.prefix`) is the first candidate, before the system's OpenBLAS; an MKL elsewhere
    comes after it (docs/blas.md: one-row products are 3-4x faster with MKL than with
    Debian's OpenBLAS on CPUs without AVX-512)."""
    from mlxir.runtime.cpu import blas

    (tmp_path / "lib").mkdir()
    installed = tmp_path / "lib" / "libmkl_rt.so.3"
    installed.write_bytes(b"")
    monkeypatch.setattr(sys, "prefix", str(tmp_path))
    found = blas.candidates()
    assert found[0] == str(installed), found
    if os.path.isfile(DEBIAN_OPENBLAS):
        assert found.index(DEBIAN_OPENBLAS) == 1 + sum(
            os.path.isfile(os.path.join(sys.base_prefix, "lib", name)) for name in blas.MKL_NAMES
        ), found
    monkeypatch.setattr(sys, "prefix", sys.base_prefix)
    assert str(installed) not in blas.candidates()


def test_none_keeps_the_bundled_blas() -> None:
    result, stderr = report("import mlxir, mlx.core", MLXIR_BLAS="none")
    assert (result["source"], result["path"]) == ("none", None)
    assert result["bundled"], result
    assert not warning_lines(stderr), stderr


def test_explicit_path() -> None:
    """MLXIR_BLAS names the library: a fast one if the machine has one, else the bundled
    library itself (it loads like any other)."""
    bundled, _ = report("import mlxir, mlx.core", MLXIR_BLAS="none")
    target = bundled["candidates"][0] if bundled["candidates"] else bundled["in_use"]
    result, stderr = report("import mlxir, mlx.core", MLXIR_BLAS=target)
    assert (result["source"], result["path"]) == ("MLXIR_BLAS", target)
    assert same_file(result["in_use"], target), result
    assert not warning_lines(stderr), stderr


@pytest.mark.parametrize(
    ("request_", "why"),
    [("/nonexistent/libblas.so", "No such file"), ("libm.so.6", "it has no cblas_sgemm")],
)
def test_a_path_that_does_not_load_is_one_warning_line(request_: str, why: str) -> None:
    result, stderr = report("import mlxir, mlx.core", MLXIR_BLAS=request_)
    assert result["source"] == "failed" and result["bundled"], result
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1 and "BlasWarning" in lines[0], stderr
    assert f"MLXIR_BLAS={request_}" in lines[0] and why in lines[0], stderr
    assert "Traceback" not in stderr


def test_mlx_imported_first_gives_the_hint() -> None:
    result, stderr = report("import mlx.core\nimport mlxir\n")
    assert result["source"] == "too-late" and result["path"] is None
    assert result["bundled"], result  # bound when mlx.core was imported, before mlxir
    lines = warning_lines(stderr)
    if expected_fast(result) is None:
        assert not lines, stderr
    else:
        assert len(lines) == 1, stderr
        assert "<string>:2: BlasWarning" in lines[0]  # the line that imported mlxir
        assert "import mlxir before mlx.core" in lines[0] and result["candidates"][0] in lines[0]

    _, quiet = report("import mlx.core\nimport mlxir\n", MLXIR_BLAS="none")
    assert not warning_lines(quiet), quiet


def test_a_library_loaded_after_mlx_is_not_reported() -> None:
    """A global cblas_sgemm that appears after mlx.core bound its own is not the one MLX
    calls: blas_in_use reads libmlx's binding, not the loader's current answer."""
    code = """
    import ctypes, mlx.core, mlxir
    from mlxir.runtime.cpu import blas
    for path in blas.candidates()[:1]:
        ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL)
    """
    result, _ = report(code, MLXIR_BLAS="none")
    assert result["bundled"], result


def test_matmul_is_still_correct() -> None:
    code = """
    import mlxir, mlx.core as mx, numpy as np
    from mlxir.runtime.cpu import blas
    rng = np.random.default_rng(0)
    for m, k, n in [(64, 48, 32), (300, 200, 100), (1, 7, 5)]:
        a = rng.standard_normal((m, k)).astype(np.float32)
        b = rng.standard_normal((k, n)).astype(np.float32)
        expected = a.astype(np.float64) @ b.astype(np.float64)
        for got in (mx.matmul(mx.array(a), mx.array(b)),
                    mx.matmul(mx.array(np.ascontiguousarray(a.T)).T, mx.array(b)),
                    mx.matmul(mx.array(a), mx.array(np.ascontiguousarray(b.T)).T)):
            np.testing.assert_allclose(np.array(got), expected, rtol=1e-4, atol=1e-4)
    print(blas.blas_in_use())
    """
    done = python(code)
    assert done.returncode == 0, done.stderr


def test_info_names_the_blas() -> None:
    result, _ = report("import mlxir, mlx.core")
    done = python("from mlxir.tools.cli import main; main()", "info")
    assert done.returncode == 0, done.stderr
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    assert {"mlxir", "Python", "MLX", "MLX default device", "torch", "cpus"} <= lines.keys()
    assert {"OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"} <= lines.keys()
    in_use = lines["BLAS (cblas_sgemm)"]
    assert same_file(in_use.removesuffix(" (bundled with MLX)"), result["in_use"]), in_use
    assert in_use.endswith("(bundled with MLX)") == result["bundled"]
    assert lines["BLAS choice"].startswith(result["source"] + ": ")
    usable = len(os.sched_getaffinity(0))
    assert lines["CPU streams for MLX's one-thread kernels"] == str(min(8, usable))
    done = python("from mlxir.tools.cli import main; main()", "info", MLXIR_CPU_STREAMS="3")
    lines = dict(line.split(": ", 1) for line in done.stdout.splitlines())
    assert lines["MLXIR_CPU_STREAMS"] == "3" and lines["CPU streams for MLX's one-thread kernels"] == "3"


def test_torch_imported_after_mlxir_keeps_its_own_blas() -> None:
    """The BLAS is loaded at the first `import mlx.core`, not at `import mlxir`: loaded
    before torch, OpenBLAS would interpose torch's MKL functions, and complex results
    come back in another calling convention (torch.dot of complex tensors gave 0)."""
    code = """
    import mlxir, sys, torch
    assert "mlx.core" not in sys.modules
    a = torch.tensor([1 + 2j, 3 + 4j])
    b = torch.tensor([1 - 1j, 2 + 0j])
    assert torch.dot(a, b).item() == 9 + 9j and torch.vdot(a, b).item() == 5 - 11j
    import mlx.core
    assert torch.dot(a, b).item() == 9 + 9j
    """
    result, stderr = report(code)
    fast = expected_fast(result)
    if fast is not None:
        assert result["source"] == "auto" and same_file(result["in_use"], fast), result
    assert not warning_lines(stderr), stderr


def test_an_mkl_it_loads_gets_quiet_openmp_waits_unless_the_user_set_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """`KMP_BLOCKTIME=0` for an MKL, set before it loads (its OpenMP threads would spin
    200 ms after each product, on the core the native kernels' worker needs), never
    over the user's value, taken back when the MKL does not load, and nothing for
    another library."""
    from mlxir.runtime.cpu import blas

    loaded: list[tuple[str, str | None]] = []

    def load(path: str) -> str | None:
        loaded.append((path, os.environ.get("KMP_BLOCKTIME")))
        return "cannot open" if "missing" in path else None

    monkeypatch.setattr(blas, "_load_global", load)
    monkeypatch.delenv("KMP_BLOCKTIME", raising=False)
    assert blas._load_quietly("/usr/lib/libopenblas.so.0") is None  # pyright: ignore[reportPrivateUsage]
    assert loaded[-1] == ("/usr/lib/libopenblas.so.0", None) and "KMP_BLOCKTIME" not in os.environ
    assert blas._load_quietly("/missing/libmkl_rt.so.3") == "cannot open"  # pyright: ignore[reportPrivateUsage]
    assert loaded[-1] == ("/missing/libmkl_rt.so.3", "0") and "KMP_BLOCKTIME" not in os.environ
    assert blas._load_quietly("/env/lib/libmkl_rt.so.3") is None  # pyright: ignore[reportPrivateUsage]
    assert loaded[-1] == ("/env/lib/libmkl_rt.so.3", "0") and os.environ["KMP_BLOCKTIME"] == "0"
    monkeypatch.setenv("KMP_BLOCKTIME", "50")
    assert blas._load_quietly("/env/lib/libmkl_rt.so.3") is None  # pyright: ignore[reportPrivateUsage]
    assert loaded[-1] == ("/env/lib/libmkl_rt.so.3", "50")
