"""mlxir's native CPU kernels: MLX primitives of its own, in C++ (`native/kernels/`),
for the ops where MLX's CPU kernels are far from the hardware (docs/native-kernels.md).

`load()` gives the compiled module, or None with `unavailable_reason()` saying why:
it was not built (no compiler, CMake or MLX headers on the installing machine), it was
built for another MLX version (the library is tied to the exact one), or
`MLXIR_NATIVE_KERNELS=0` turned it off. The CPU backend (`runtime/cpu/native.py`)
decides where each kernel runs; everything works without them, on MLX's kernels.
"""

from __future__ import annotations

import functools
import os
from types import ModuleType

import mlx.core as mx

SWITCH = "MLXIR_NATIVE_KERNELS"
"""`0` runs every program on MLX's own kernels even where the native ones are built."""

LIBRARY = "MLXIR_NATIVE_LIBRARY"
"""A path to a `_kernels` module to load instead of the installed one (a developer's
build of some families: `cmake -DMLXIR_ONLY=...`, docs/native-kernels.md)."""


def _mlx_version() -> str:
    return str(getattr(mx, "__version__", "unknown"))


@functools.cache
def _loaded() -> tuple[ModuleType | None, str | None]:
    if turned_off():
        return None, f"turned off by {SWITCH}=0"
    try:
        _kernels = _import_kernels()
    except (ImportError, OSError) as error:
        if os.environ.get(LIBRARY):
            return None, f"could not be loaded from {LIBRARY}={os.environ[LIBRARY]} ({error})"
        if "undefined symbol" in str(error):
            return None, f"built for another MLX than {_mlx_version()}: reinstall mlxir"
        return None, "not built on this machine (see the install's output; docs/native-kernels.md)"
    if _kernels.MLX_VERSION != _mlx_version().split(".dev")[0]:
        return None, f"built for MLX {_kernels.MLX_VERSION}, running MLX {_mlx_version()}: reinstall mlxir"
    return _kernels, None


def _import_kernels() -> ModuleType:
    path = os.environ.get(LIBRARY)
    if not path:
        from mlxir.native import _kernels

        return _kernels
    import importlib.util
    import sys

    spec = importlib.util.spec_from_file_location("mlxir.native._kernels", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"{LIBRARY}={path} is not a Python extension module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def load() -> ModuleType | None:
    """The native kernel module, or None where it cannot be used."""
    return _loaded()[0]


def unavailable_reason() -> str | None:
    """Why `load()` gives None (None when it does not)."""
    return _loaded()[1]


def turned_off() -> bool:
    """Whether the user turned the native kernels off (then nothing needs saying)."""
    return os.environ.get(SWITCH, "1").strip() == "0"
