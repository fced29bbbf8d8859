"""torchvision and timm for the zoo, from their own folder (`make zoo-packages`:
`pip install --no-deps --target build/zoo-packages`), never the main venv's.

PyPI's torchvision wheel is built against CUDA torch: beside the CPU `torch==2.13.0`
its C++ extension cannot load (it links `libtorch_cuda.so`), and `import torchvision`
then fails on registering fake kernels for `torchvision::nms` and `torchvision::qnms`,
operators only that extension defines; a failed import of torchvision in turn breaks
`import transformers` wherever it can see it. Its models are plain Python and need
none of its C++ ops, so the zoo defines those two operators' schemas (no kernels)
before the import: every model imports, and a model that calls a detection op (`nms`,
`roi_align`) fails in eager PyTorch with torch's own "no kernel" error."""

from __future__ import annotations

import sys
from functools import cache
from pathlib import Path
from types import ModuleType

PACKAGES = Path(__file__).resolve().parents[2] / "build" / "zoo-packages"

_OPERATORS_ONLY_THE_EXTENSION_DEFINES = (
    "nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
    "qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor",
)


@cache
def vision_packages() -> tuple[ModuleType, ModuleType]:
    """`(torchvision, timm)`, imported from `build/zoo-packages`."""
    import torch

    if not (PACKAGES / "torchvision").is_dir() or not (PACKAGES / "timm").is_dir():
        raise RuntimeError(f"torchvision and timm are not in {PACKAGES}: run `make zoo-packages`")
    if str(PACKAGES) not in sys.path:
        sys.path.append(str(PACKAGES))  # after the venv's own packages: it shadows none of them
    library = torch.library.Library("torchvision", "FRAGMENT")
    for schema in _OPERATORS_ONLY_THE_EXTENSION_DEFINES:
        name = schema.split("(")[0]
        if not hasattr(torch.ops.torchvision, name):
            library.define(schema)
    _keep_alive.append(library)
    import timm
    import torchvision

    return torchvision, timm


_keep_alive: list[object] = []
"""The library that defines the operators: torch drops its definitions when it is freed."""
