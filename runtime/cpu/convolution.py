"""Convolutions on the CPU: the native kernels where they run (`native/kernels/`),
else the generic kernels (`evaluator/`)."""

from __future__ import annotations

from mlxir.evaluator.registry import KernelFactory

KERNELS: dict[str, KernelFactory] = {}
"""The CPU's convolution kernels, in place of the generic ones."""
