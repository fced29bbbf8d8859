"""The CPU target's passes: program rewrites that are choices for MLX's CPU, run after
the default pipeline by `lower-to-mlx{target=cpu}` (what `mlxir.compile` and
`compile_llm` pick when they compile on a CPU). Each is a pass of its own with a
FileCheck file that runs it alone; what the CPU decides at run time (its BLAS, its
streams, products cut by the row count of a call) is `runtime/cpu/`'s."""

CPU_TARGET_PASSES = (
    "cpu-channels-last",
    "fold-conv-affine",
    "cpu-depthwise-conv",
    "cpu-float32-attention",
    "cpu-rope-pairs",
)
"""The passes `lower-to-mlx{target=cpu}` adds, in order, after the generic pipeline."""
