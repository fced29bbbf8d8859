"""Known noise from mlxir's dependencies, silenced where mlxir causes it.

Each filter drops ONE message of ONE emitter (a logger by name, or a warning by
category, message and the module it is attributed to) and says why it is noise: none
of it is about code mlxir runs or anything its user can fix. Everything else still
shows, a user's own warnings and deprecations included, and each filter is in force
only around the mlxir statement that causes the noise.
"""

from __future__ import annotations

import contextlib
import logging
import re
import warnings
from collections.abc import Callable, Generator

_TORCHAO_SO = re.compile(r"Failed to load \S*torchao[/\\]_C\S*\.so: ")


def _torchao_kernel_library(record: logging.LogRecord) -> bool:
    """torchao/__init__.py loads each prebuilt `_C*.so` kernel library and logs
    `Failed to load <torchao>/_C_mxfp8...so: Could not load this library` (logger
    `torchao`, WARNING) for each that does not fit this machine: the CUDA-only ones
    (mxfp8, cutlass sm90a) on a CPU-only torch. mlxir uses no torchao kernel."""
    return isinstance(record.msg, str) and _TORCHAO_SO.match(record.msg) is not None


def _torchao_enum_constant(record: logging.LogRecord) -> bool:
    """torch 2.13's pytree (logger `torch.utils._pytree`, WARNING) deprecates
    `register_constant()` on an Enum, which torchao 0.18 still calls at import for its
    own enums (`KernelPreference`, `ScaleCalculationMode`). A user's own enum still
    warns: only torchao's classes are dropped."""
    return (
        isinstance(record.msg, str)
        and record.msg.startswith("%s is an Enum subclass and is now natively supported")
        and isinstance(record.args, tuple)
        and len(record.args) == 1
        and getattr(record.args[0], "__module__", "").startswith("torchao.")
    )


def _torchao_no_triton(record: logging.LogRecord) -> bool:
    """torchao.kernel.intmm logs that Triton is missing (it has a NullHandler, so this
    shows only where the application configured logging, e.g. `logging.basicConfig`)."""
    return isinstance(record.msg, str) and record.msg.startswith("Warning: Detected no triton")


_TORCHAO_IMPORT_NOISE: dict[str, Callable[[logging.LogRecord], bool]] = {
    "torchao": _torchao_kernel_library,
    "torch.utils._pytree": _torchao_enum_constant,
    "torchao.kernel.intmm": _torchao_no_triton,
}


class _Drop(logging.Filter):
    def __init__(self, noise: Callable[[logging.LogRecord], bool]):
        super().__init__()
        self.noise = noise

    def filter(self, record: logging.LogRecord) -> bool:
        return not self.noise(record)


@contextlib.contextmanager
def quiet_torchao_import() -> Generator[None, None, None]:
    """Around an mlxir import that imports torchao: transformers' model classes and
    `transformers.integrations.executorch` (through transformers.quantizers), and
    `executorch.exir`. torchao logs only while it is imported, so a user who imports
    it first (and may use it) sees everything."""
    filters = [(logging.getLogger(name), _Drop(noise)) for name, noise in _TORCHAO_IMPORT_NOISE.items()]
    for logger, drop in filters:
        logger.addFilter(drop)
    try:
        yield
    finally:
        for logger, drop in filters:
            logger.removeFilter(drop)


@contextlib.contextmanager
def quiet_leafspec_deprecation() -> Generator[None, None, None]:
    """Around `ExportedProgram.run_decompositions`: torch 2.13 deprecates creating a
    `LeafSpec` (`@deprecated(..., category=FutureWarning)`) yet deep-copies the
    program's module call graph, whose tree specs hold LeafSpecs, inside
    run_decompositions; `copy` re-creates them through `copyreg.__newobj__`, so the
    FutureWarning is attributed to module `copyreg` (copyreg.py:105). A LeafSpec the
    user creates is attributed to the user's module and still warns."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=r"`isinstance\(treespec, LeafSpec\)` is deprecated",
            category=FutureWarning,
            module=r"copyreg\Z",
        )
        yield


@contextlib.contextmanager
def quiet_output_capturing_side_effect() -> Generator[None, None, None]:
    """Around a strict (dynamo) `torch.export` of a transformers model: transformers 5
    records hidden states through a module global that forward sets
    (`transformers.utils.output_capturing._active_collector`), and dynamo warns
    (UserWarning from `torch._dynamo.output_graph`) that forward has that side effect.
    Only the warning naming that global is dropped; any other side effect still warns."""
    with warnings.catch_warnings():
        warnings.filterwarnings(
            "ignore",
            message=r"While compiling, we found certain side effects happened in the "
            r"model\.forward\. .*__import_transformers_dot_utils_dot_output_capturing'\]"
            r"\._active_collector",
            category=UserWarning,
            module=r"torch\._dynamo\.output_graph\Z",
        )
        yield


@contextlib.contextmanager
def quiet_transformers_progress() -> Generator[None, None, None]:
    """Around `from_pretrained` of a local folder: transformers 5 draws a `Loading
    weights` tqdm bar on stderr for a load that takes milliseconds; `mlxir generate`
    reports the load time itself. The user's setting is restored after."""
    from transformers.utils import logging as hf_logging

    enabled = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()
    try:
        yield
    finally:
        if enabled:
            hf_logging.enable_progress_bar()


@contextlib.contextmanager
def quiet_torch_export_logs() -> Generator[None, None, None]:
    """torch.export.load logs a traceback before raising on a bad archive; mlxir's
    callers raise an error that says it in one line."""
    logger = logging.getLogger("torch.export")
    level = logger.level
    logger.setLevel(logging.CRITICAL)
    try:
        yield
    finally:
        logger.setLevel(level)
