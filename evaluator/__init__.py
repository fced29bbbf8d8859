"""The runtime's op kernels: what each op of the `mlx` dialect (and each `arith` op on
integer / `index` values) means, as one implementation over `mlx.core` that runs on any
MLX device. One module per op family; a device's own choices of how to compute an op
(the CPU's: `runtime/cpu/`) replace a kernel through its backend (`runtime/backend.py`),
never by a branch in here.

`KERNELS[op_name]` is a factory, called once when a program is loaded:

    run = KERNELS["mlx.slice"](props, result_dtypes)
    results = run(operands)

`props` are the op's properties as plain Python values (`evaluator.props.python_props`),
`result_dtypes` the MLX dtype of each result (None for an `index` or scalar result).
`run` takes the operands in the op's IR order (tensors as `mx.array`, `index` values as
Python ints) and returns the results in IR order. Everything that depends only on the
op (parsing properties, picking the MLX function, splitting mixed static/dynamic lists)
happens in the factory; a call only computes. No kernel evaluates an array: the
program evaluates its outputs once per call.

Semantics that differ from the bare `mx.*` call, on purpose (they are PyTorch's):
- `mlx.floor_divide` on floats is PyTorch's (and Python's) floor division, which
  `mx.floor_divide` (`floor(a / b)`) misses when `a / b` rounds up to an integer
  (`1.0 // 0.1` is 9.0, not 10.0). On integers MLX already floors (and
  `mx.remainder` already takes the divisor's sign), as PyTorch does.
- `mlx.matmul` / `mlx.addmm` on integers are computed exactly (MLX's BLAS path only
  takes floating point).
- `mlx.slice_update` and `mlx.dynamic_slice_update` clamp their start so the whole
  update lands inside the input (like XLA's dynamic_update_slice); a negative start
  counts from the end. MLX itself writes out of bounds (and can crash) on a negative
  or too large start.
- `mlx.rope` on a rank-2 input (the dialect allows it, `mx.fast.rope` needs rank 3).
- A result whose MLX dtype differs from the IR's (`argmax` gives uint32, `mean` of
  integers float32, `sum` of int8 int32, ...) is cast to the IR's result type.

Out-of-range indices of gather/take/scatter are clamped into bounds (`in_bounds`):
checking them would force an evaluation, and MLX reads or writes out of bounds. The
lowering wraps negative indices first.
"""


# Each family registers its kernels on import (`X as X`: a re-export, not an unused import).
from mlxir.evaluator import creation as creation
from mlxir.evaluator import distributed as distributed
from mlxir.evaluator import elementwise as elementwise
from mlxir.evaluator import fast as fast
from mlxir.evaluator import indexing as indexing
from mlxir.evaluator import integers as integers
from mlxir.evaluator import linalg as linalg
from mlxir.evaluator import ordering as ordering
from mlxir.evaluator import shape as shape
from mlxir.evaluator.creation import RANDOM_OPS
from mlxir.evaluator.ordering import SYNC_OPS
from mlxir.evaluator.registry import (
    DYNAMIC,
    KERNELS,
    NOT_KERNELS,
    Kernel,
    KernelFactory,
    Props,
    ResultDtypes,
    Value,
)

__all__ = [
    "DYNAMIC",
    "KERNELS",
    "NOT_KERNELS",
    "RANDOM_OPS",
    "SYNC_OPS",
    "Kernel",
    "KernelFactory",
    "Props",
    "ResultDtypes",
    "Value",
]
