"""The inputs a comparison with eager PyTorch is given, checked against the exported
program's before anything runs.

Eager PyTorch runs an exported program on tensors of any dtype and fails, if it does,
deep inside the op that cannot take one (float token ids reach `aten.embedding`): a
multi-line traceback after the program was read and compiled. A tensor of another kind
(floating point, integer, bool) than the export's is the user's mistake, said here in
one line naming the input.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any


def check_input_kinds(ep: Any, args: Sequence[Any], kwargs: dict[str, Any] | None = None) -> None:
    """Raises a ValueError naming the first user input whose tensor is of another kind
    than the one `ep` was exported with (a float32 array for int64 token ids). Inputs
    of another structure or shape pass: running the program says what is wrong there."""
    import torch

    try:
        flat = ep._graph_module_flat_inputs(tuple(args), dict(kwargs or {}))
    except Exception:  # torch raises assertion, runtime and value errors alike
        return
    user_inputs = set(ep.graph_signature.user_inputs)
    placeholders = [n for n in ep.graph.nodes if n.op == "placeholder"]
    for node, value in zip(placeholders, flat):
        expected = node.meta.get("val")
        if node.name not in user_inputs or not isinstance(value, torch.Tensor):
            continue
        if not isinstance(expected, torch.Tensor) or _kind(value.dtype) == _kind(expected.dtype):
            continue
        raise ValueError(
            f"input '{node.name}' is {_name(value.dtype)}, where the program was exported "
            f"with {_name(expected.dtype)} ({_kind(expected.dtype)} values)"
        )


def _kind(dtype: Any) -> str:
    import torch

    if dtype == torch.bool:
        return "bool"
    return "floating-point" if dtype.is_floating_point or dtype.is_complex else "integer"


def _name(dtype: Any) -> str:
    return str(dtype).removeprefix("torch.")
