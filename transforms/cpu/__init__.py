"""The CPU target: program rewrites that are choices for MLX's CPU, run after the
generic pipeline by `lower-to-mlx{target=cpu}` (what `mlxir.compile` and `compile_llm`
pick when they compile on a CPU), and the polynomial formulas the CPU's passes and its
backend share (`polynomial.py`). Each pass is a pass of its own with a FileCheck file
that runs it alone, and every pass here is in the target; what the CPU decides at run
time (its BLAS, its streams, products cut by the row count of a call) is
`runtime/cpu/`'s."""

from mlxir.transforms.target import Target

CPU = Target(
    "cpu",
    (
        "cpu-channels-last",
        "fold-conv-affine",
        "cpu-fuse-conv-epilogue",
        "cpu-float32-attention",
        "cpu-rope-pairs",
    ),
)
"""`fold-conv-affine` matches the layout `cpu-channels-last` leaves, and
`cpu-fuse-conv-epilogue` the bias it leaves; `cpu-rope-pairs` comes last, as the
pipeline's `cse` then shares its angle tables. A depthwise convolution stays whole:
the backend chooses per call between the native kernel and the tap-by-tap form
(`runtime/cpu/convolution.py`), which `cpu-depthwise-conv` (`transforms/depthwise_conv.py`,
on request) writes into a program instead."""
