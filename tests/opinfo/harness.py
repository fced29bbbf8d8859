"""PyTorch's OpInfo database as a differential suite: every OpInfo, in every dtype of
`DTYPES` it supports on CPU, with its first `SAMPLES_PER_OP` sample inputs.

Each sample is wrapped in a module that calls `op.op` on it (its tensors are the
module's inputs, everything else is a constant), exported with `torch.export`, compiled
with `mlxir.compile`, run on MLX and compared with eager PyTorch on the same inputs.
The outcomes (`Outcome.kind`):

- `pass`: every output has eager's structure, shape and dtype, and its values are
  within tolerance (`tolerance`);
- `refused`: mlxir declined the program with one of its documented errors (`REFUSALS`),
  whose reason is recorded;
- `mismatch`: a result differs from eager's (structure, shape, dtype or values);
- `crash`: any other exception (an xDSL verifier error on IR mlxir built, an MLX error
  at run time, ...);
- `unexportable`: `torch.export` cannot capture the sample (nothing for mlxir to do);
  not counted in the pass rate.

Values: exact for integers and bools; floats by `torch.testing.assert_close` at the
differential suite's per-dtype tolerances (`differential.harness.TOLERANCES`), each
widened to OpInfo's own `toleranceOverride` for that op and dtype where one exists.
Random ops (`RANDOM_OPS`) are compared on shape and dtype, and, with at least
`RANDOM_STATISTICS_MIN` elements, on their mean and standard deviation; ops returning
uninitialized memory (`UNINITIALIZED_OPS`) on shape and dtype alone.

The subset is deterministic: OpInfo's sample generators draw from torch's global
generator, which is seeded per op and dtype (`samples`).
"""

from __future__ import annotations

import itertools
import re
import warnings
from collections.abc import Callable, Generator, Iterator
from dataclasses import dataclass
from functools import cache
from typing import Any

import torch
from torch.utils import _pytree as pytree

from differential.harness import TOLERANCES

DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.float64, torch.complex64)
LOW_PRECISION = (torch.float16, torch.bfloat16)
SAMPLES_PER_OP = 2

RANDOM_OPS = frozenset({
    "bernoulli", "normal", "normal.number_mean", "normal.in_place", "rand_like", "randn", "randn_like", "randint_like",
    "randint", "multinomial", "uniform", "cauchy", "exponential", "geometric", "log_normal",
    "nn.functional.dropout", "nn.functional.dropout2d", "nn.functional.dropout3d",
    "nn.functional.alpha_dropout", "nn.functional.feature_alpha_dropout.with_train",
    "nn.functional.rrelu", "torch._C._nn.rrelu",
})
"""OpInfos whose values are drawn at random: compared on statistics, not values."""
UNINITIALIZED_OPS = frozenset({
    "empty", "empty_like", "new_empty", "new_empty_strided", "empty_strided",
    "empty_permuted",
})
"""OpInfos whose values are whatever memory held: compared on shape and dtype."""
TIED_ORDER_DIM: dict[str, Callable[[tuple[Any, ...], dict[str, Any]], int | None]] = {
    "sort": lambda args, kwargs: None if kwargs.get("stable") else (args[0] if args else kwargs.get("dim", -1)),
    "argsort": lambda args, kwargs: (
        None if kwargs.get("stable") or (len(args) > 2 and args[2]) else (args[0] if args else kwargs.get("dim", -1))
    ),
    "topk": lambda args, kwargs: args[1] if len(args) > 1 else kwargs.get("dim", -1),
    "msort": lambda args, kwargs: 0,
}
"""Ops free to order equal elements as they like (an unstable sort; which of tied
elements `topk` keeps), and the dim they order along given the sample's args (None:
the sample asks for a stable sort, whose order is defined). Their indices pass when
they select the same values as eager's, each element once."""
RANDOM_STATISTICS_MIN = 100
RANDOM_STATISTICS_TOLERANCE = 0.5
"""Random outputs' mean and std must agree with eager's within this fraction of eager's
std (or absolutely, below 1): two independent draws of 100 elements differ by about
0.15 std in mean."""


@dataclass(frozen=True)
class Outcome:
    kind: str
    reason: str = ""
    """Why: the refusal's reason, or what mismatched or crashed (one line)."""

    def __str__(self) -> str:
        return f"{self.kind}: {self.reason}" if self.reason else self.kind


@cache
def op_table() -> dict[str, Any]:
    """Every OpInfo supporting one of `DTYPES` on CPU, by `key` (name[.variant])."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from torch.testing._internal.common_methods_invocations import op_db
    return {key(op): op for op in op_db if any(d in op.supported_dtypes("cpu") for d in DTYPES)}


def key(op: Any) -> str:
    return f"{op.name}.{op.variant_test_name}" if op.variant_test_name else op.name


def dtype_name(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def configurations() -> list[tuple[str, torch.dtype]]:
    """(op key, dtype) for every OpInfo and every dtype of `DTYPES` it supports on CPU."""
    return [
        (name, dtype)
        for name, op in sorted(op_table().items())
        for dtype in DTYPES
        if dtype in op.supported_dtypes("cpu")
    ]


def samples(op: Any, dtype: torch.dtype) -> list[Any]:
    torch.manual_seed(0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        # OpInfo's generator itself (`sample_inputs` wraps it in a tracking iterator
        # held in a reference cycle), closed here: left to the collector, its cleanup
        # would restore torch's grad mode in the middle of a later export's trace.
        generator = op.sample_inputs_func(op, "cpu", dtype, False)
        found = list(itertools.islice(generator, SAMPLES_PER_OP))
        if isinstance(generator, Generator):
            generator.close()
    return found


def tolerance(op: Any, dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol): the suite's for `dtype`, widened to any `toleranceOverride` the
    OpInfo declares for it (on any of PyTorch's own tests)."""
    from torch.testing._internal.common_device_type import toleranceOverride
    from torch.testing._internal.opinfo.core import DecorateInfo

    rtol, atol = TOLERANCES[dtype]
    for info in op.decorators:
        decorators = info.decorators if isinstance(info, DecorateInfo) else [info]
        for decorator in decorators:
            if isinstance(decorator, toleranceOverride) and dtype in decorator.d:
                rtol = max(rtol, decorator.d[dtype].rtol)
                atol = max(atol, decorator.d[dtype].atol)
    return rtol, atol


_INPUT = object()
"""Marks where a sample's tensor is: `None` is a constant some samples pass."""


class OpCall(torch.nn.Module):
    """`op(input, *args, **kwargs)` with the sample's tensors as the module's inputs."""

    def __init__(self, op: Any, leaves: list[Any], spec: Any):
        super().__init__()
        self.op = op
        self.constants = [_INPUT if isinstance(leaf, torch.Tensor) else leaf for leaf in leaves]
        self.spec = spec

    def forward(self, *tensors: torch.Tensor) -> Any:
        supplied = iter(tensors)
        leaves = [next(supplied) if c is _INPUT else c for c in self.constants]
        sample_input, args, kwargs = pytree.tree_unflatten(leaves, self.spec)
        return self.op(sample_input, *args, **kwargs)


def _one_line(error: BaseException) -> str:
    text = f"{type(error).__name__}: {error}".strip()
    first = text.splitlines()[0] if text else type(error).__name__
    return first[:200]


_SOURCE = re.compile(r"^\S+:\d+(?: \([^)]*\))?: ")


def refusal_reason(error: BaseException) -> str:
    """The refusal's reason without the sample-specific parts (source locations, node
    counts), so the table reads the same for every sample an op refuses alike."""
    from mlxir.codegen.errors import BackendError
    from mlxir.conversions.torch_to_aten.core import UnsupportedOpsError

    if isinstance(error, BackendError):
        return f"MLX lacks: {error.reason}"
    if isinstance(error, UnsupportedOpsError):
        targets = ", ".join(sorted(error.unsupported))
        why = "; ".join(sorted(set(error.reasons.values())))
        return f"unsupported: {targets}" + (f" ({why})" if why else "")
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    text = lines[0] if lines else type(error).__name__
    return _SOURCE.sub("", text)[:200]  # the harness's own line, the same for every op


def is_refusal(error: BaseException) -> bool:
    """Whether `error` is one of mlxir's documented errors for a program it declines:
    the importer's, the lowering's (which `convert-aten-to-mlx` reports as a failed
    pass caused by a `LoweringError`), or the loader's for what MLX's backend lacks."""
    from mlxir.codegen.errors import BackendError
    from mlxir.conversions.aten_to_mlx.core import LoweringError
    from mlxir.conversions.torch_to_aten.core import ImportError_

    return isinstance(error, ImportError_ | LoweringError | BackendError) or isinstance(error.__cause__, LoweringError)


def _compare_random(expected: torch.Tensor, got: torch.Tensor) -> str | None:
    if expected.numel() < RANDOM_STATISTICS_MIN or not expected.dtype.is_floating_point:
        return None
    e, g = expected.double(), got.double()
    scale = max(float(e.std()), 1.0)
    for name, a, b in (("mean", e.mean(), g.mean()), ("std", e.std(), g.std())):
        if abs(float(a) - float(b)) > RANDOM_STATISTICS_TOLERANCE * scale:
            return f"{name} {float(b):.4g} against eager's {float(a):.4g}"
    return None


def _as_torch(value: Any) -> Any:
    import mlx.core as mx
    import numpy as np

    if isinstance(value, mx.array):
        if value.dtype == mx.bfloat16:
            return torch.from_numpy(np.array(value.astype(mx.float32))).to(torch.bfloat16)
        return torch.from_numpy(np.array(value))
    return value


def compare(name: str, sample: Any, dtype: torch.dtype, expected: Any, got: Any) -> str | None:
    """None when `got` matches `expected`; else what differs (one line)."""
    expected_leaves, expected_spec = pytree.tree_flatten(expected)
    got_leaves, _ = pytree.tree_flatten(got)
    # A program without tensor inputs cannot know torch's array type: it returns MLX's.
    got_leaves = [_as_torch(leaf) for leaf in got_leaves]
    if len(expected_leaves) != len(got_leaves):
        return f"{len(got_leaves)} results against eager's {len(expected_leaves)}"
    rtol, atol = tolerance(op_table()[name], dtype)
    for i, (e, g) in enumerate(zip(expected_leaves, got_leaves)):
        where = f"result {i}"
        if not isinstance(e, torch.Tensor):
            if isinstance(g, torch.Tensor) and g.numel() == 1:
                g = g.item()
            if e != g:
                return f"{where}: {g!r} against eager's {e!r}"
            continue
        if not isinstance(g, torch.Tensor):
            return f"{where}: {type(g).__name__} against eager's tensor"
        if g.shape != e.shape:
            return f"{where}: shape {tuple(g.shape)} against eager's {tuple(e.shape)}"
        if g.dtype != e.dtype:
            return f"{where}: dtype {g.dtype} against eager's {e.dtype}"
        if name in UNINITIALIZED_OPS:
            continue
        if name in RANDOM_OPS:
            if (difference := _compare_random(e, g)) is not None:
                return f"{where}: {difference}"
            continue
        if e.dtype.is_floating_point or e.dtype.is_complex:
            try:
                torch.testing.assert_close(g, e, rtol=rtol, atol=atol, equal_nan=True)
            except AssertionError as error:
                lines = [line.strip() for line in str(error).splitlines() if line.strip()]
                detail = "; ".join(line for line in lines if line.startswith(("Mismatched", "Greatest")))
                return f"{where}: {detail or lines[0]}"
        elif not torch.equal(g, e) and not _same_selection(name, sample, e, g):
            return f"{where}: values differ (exact dtype {e.dtype})"
    return None


def _same_selection(name: str, sample: Any, expected: torch.Tensor, got: torch.Tensor) -> bool:
    """For `TIED_ORDER_DIM`'s ops: whether `got`'s indices select the values eager's
    select, along the op's dim, and no element twice."""
    dim_of = TIED_ORDER_DIM.get(name)
    dim = dim_of(tuple(sample.args), sample.kwargs) if dim_of is not None else None
    source = sample.input
    if dim is None or not isinstance(source, torch.Tensor) or expected.dtype != torch.int64:
        return False
    if source.dim() == 0:
        return torch.equal(got, expected)
    picked, wanted = source.gather(dim, got), source.gather(dim, expected)
    if not torch.equal(picked.isnan(), wanted.isnan()) or not torch.equal(
        picked.nan_to_num(), wanted.nan_to_num()
    ):
        return False
    ordered = got.sort(dim).values
    return bool((ordered.diff(dim=dim) != 0).all()) if ordered.size(dim) > 1 else True


def run_sample(name: str, dtype: torch.dtype, sample: Any) -> Outcome:
    import mlxir

    op = op_table()[name]
    leaves, spec = pytree.tree_flatten((sample.input, sample.args, sample.kwargs))
    tensors = tuple(leaf for leaf in leaves if isinstance(leaf, torch.Tensor))
    module = OpCall(op.op, leaves, spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            with torch.no_grad():
                expected = module(*tensors)
        except Exception as error:  # noqa: BLE001  (e.g. an op only CUDA runs)
            return Outcome("unexportable", f"eager PyTorch fails: {_one_line(error)}")
        try:
            with torch.no_grad():
                ep = torch.export.export(module, tensors, strict=False)
        except Exception as error:  # noqa: BLE001  (whatever torch.export rejects)
            return Outcome("unexportable", _one_line(error))
        try:
            program = mlxir.compile(ep)
        except Exception as error:  # noqa: BLE001  (a crash is an outcome to report)
            if is_refusal(error):
                return Outcome("refused", refusal_reason(error))
            return Outcome("crash", _one_line(error))
        try:
            got = program(*tensors)
        except Exception as error:  # noqa: BLE001
            return Outcome("crash", _one_line(error))
    difference = compare(name, sample, dtype, expected, got)
    if difference is not None and dtype in LOW_PRECISION:
        # Eager PyTorch rounds some intermediates to the dtype where mlxir keeps more
        # precision, or upcasts where MLX does not: the float32 result, rounded to the
        # dtype, is the other reference a result may match.
        if compare(name, sample, dtype, _rounded(module, tensors, expected), got) is None:
            return Outcome("pass")
    return Outcome("mismatch", difference) if difference else Outcome("pass")


def _rounded(module: torch.nn.Module, tensors: tuple[torch.Tensor, ...], expected: Any) -> Any:
    """`module` run in float32 on `tensors`, each float result rounded to the dtype of
    eager's result in its place."""
    upcast = tuple(t.float() if t.is_floating_point() else t for t in tensors)
    try:
        with torch.no_grad():
            exact = module(*upcast)
    except Exception:  # noqa: BLE001  (no float32 reference: eager's alone decides)
        return expected
    exact_leaves, spec = pytree.tree_flatten(exact)
    expected_leaves, expected_spec = pytree.tree_flatten(expected)
    if spec != expected_spec:
        return expected
    return pytree.tree_unflatten(
        [
            x.to(e.dtype) if isinstance(x, torch.Tensor) and isinstance(e, torch.Tensor) and e.is_floating_point() else e
            for x, e in zip(exact_leaves, expected_leaves)
        ],
        expected_spec,
    )


def run_configuration(name: str, dtype: torch.dtype) -> Iterator[Outcome]:
    for sample in samples(op_table()[name], dtype):
        yield run_sample(name, dtype, sample)
