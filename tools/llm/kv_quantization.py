"""Quantized keys and values (mlx_lm's `--kv-bits`, `--kv-group-size`), what
`cache.QuantizedCache` holds: between steps the keys and values are MLX
affine-quantized arrays (`mx.quantize` along the head dimension), each step's new
slots quantized once and appended. The step program reads
float keys and values, so each step dequantizes the cache for its call: the cache
held between steps is `bits / 16` of a float16 one (plus a scale and a bias per group),
and the values are the quantized ones (`tests/test_generate.py` states the tolerance).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import mlx.core as mx

KV_BITS = (2, 3, 4, 5, 6, 8)
KV_GROUP_SIZES = (32, 64, 128)


@dataclass
class QuantizedKV:
    bits: int
    group_size: int
    parts: list[tuple[mx.array, mx.array, mx.array]] = field(default_factory=lambda: [])
    """Per cache tensor: the quantized slots, their scales and biases."""
    dtypes: list[mx.Dtype] = field(default_factory=lambda: [])
    slots: int = 0

    def __post_init__(self) -> None:
        if self.bits not in KV_BITS:
            raise ValueError(f"kv_bits must be one of {KV_BITS}, got {self.bits}")
        if self.group_size not in KV_GROUP_SIZES:
            raise ValueError(f"kv_group_size must be one of {KV_GROUP_SIZES}, got {self.group_size}")

    def check(self, head_dims: Sequence[int]) -> None:
        for dims in head_dims:
            if dims % self.group_size:
                raise ValueError(
                    f"a KV cache quantized in groups of {self.group_size} needs head dimensions divisible by it; "
                    f"this model's are {dims}"
                )

    def dequantized(self, empty: Sequence[mx.array]) -> list[mx.array]:
        """The cache as the program reads it (`empty`, the program's empty cache,
        before the first step)."""
        import mlx.core as mx

        if not self.parts:
            return list(empty)
        return [
            mx.dequantize(q, scales, biases, group_size=self.group_size, bits=self.bits, dtype=dtype)
            for (q, scales, biases), dtype in zip(self.parts, self.dtypes)
        ]

    def append(self, kv: Sequence[mx.array]) -> None:
        """Quantizes the slots of `kv` (a step's whole cache) past the ones held."""
        import mlx.core as mx

        new = [mx.quantize(t[:, :, self.slots :], group_size=self.group_size, bits=self.bits) for t in kv]
        if not self.parts:
            self.dtypes = [t.dtype for t in kv]
            self.parts = [(q, s, b) for q, s, b in new]
        else:
            self.parts = [
                (mx.concatenate([q0, q1], axis=2), mx.concatenate([s0, s1], axis=2), mx.concatenate([b0, b1], axis=2))
                for (q0, s0, b0), (q1, s1, b1) in zip(self.parts, new)
            ]
        self.slots = int(kv[0].shape[2])

    def arrays(self) -> list[mx.array]:
        return [a for part in self.parts for a in part]

    def cut(self, slots: int) -> None:
        """Keeps the first `slots` slots (a quantization group runs along the head
        dimension, so slots cut apart)."""
        self.parts = [(q[:, :, :slots], s[:, :, :slots], b[:, :, :slots]) for q, s, b in self.parts]
        self.slots = min(self.slots, slots)
