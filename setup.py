"""The native kernel library's build (`native/`, docs/native-kernels.md); everything
else about the package is in pyproject.toml.

The library is optional: where CMake, a C++17 compiler, nanobind or MLX's headers are
missing, or the build fails, the package installs without it and every program runs
on MLX's own kernels (`mlxir info` says which). MLXIR_NATIVE_BUILD=0 skips it.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py
from setuptools.errors import CompileError

ROOT = Path(__file__).resolve().parent


class NativeKernels(build_ext):
    """Builds each extension whose `sources` is a CMake project folder."""

    def build_extension(self, ext: Extension) -> None:
        if os.environ.get("MLXIR_NATIVE_BUILD") == "0":
            print("mlxir: MLXIR_NATIVE_BUILD=0, native kernels not built", file=sys.stderr)
            return
        project = ROOT / ext.sources[0]
        build = Path(self.build_temp).resolve() / "native"
        build.mkdir(parents=True, exist_ok=True)
        target = Path(self.get_ext_fullpath(ext.name)).resolve()
        jobs = str(os.cpu_count() or 1)
        try:
            subprocess.run(
                [
                    "cmake", "-S", str(project), "-B", str(build),
                    f"-DPython_EXECUTABLE={sys.executable}",
                    "-DCMAKE_BUILD_TYPE=Release",
                    f"-DMLXIR_SANITIZE={'ON' if os.environ.get('MLXIR_NATIVE_SANITIZE') == '1' else 'OFF'}",
                ],
                check=True,
            )
            subprocess.run(["cmake", "--build", str(build), "-j", jobs], check=True)
        except (OSError, subprocess.CalledProcessError) as error:
            raise CompileError(f"mlxir: native kernels not built ({error}): programs run on MLX's own kernels") from error
        suffix = sysconfig.get_config_var("EXT_SUFFIX") or ".so"
        built = build / f"_kernels{suffix}"
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built, target)


class PackageModules(build_py):
    """The package's modules, less this file (the repository root is the package)."""

    def find_package_modules(self, package: str, package_dir: str) -> list[tuple[str, str, str]]:
        modules = super().find_package_modules(package, package_dir)
        return [module for module in modules if not (package == "mlxir" and module[1] == "setup")]


setup(
    ext_modules=[Extension("mlxir.native._kernels", sources=["native"], optional=True)],
    cmdclass={"build_ext": NativeKernels, "build_py": PackageModules},
)
