"""Differential cases of complex64 (`conversions/torch_to_aten/complex_numbers.py`,
`conversions/aten_to_mlx/complex_numbers.py`): the `torch.fft` functions in every normalization,
real and complex, one- and n-dimensional, over static and dynamic dims, and the complex
arithmetic and views around them. Inputs are float32 or complex64 (`dtypes=F32`)."""

from __future__ import annotations

import zlib

import torch

from differential.harness import F32, Case

FFT = torch.fft


def _gen(n: int, salt: str) -> torch.Generator:
    return torch.Generator().manual_seed(zlib.crc32(f"{n}:{salt}".encode()))


def real(*shape: int, salt: str = "") -> torch.Tensor:
    return torch.randn(*shape, generator=_gen(sum(shape), salt))


def complex64(*shape: int, salt: str = "") -> torch.Tensor:
    return torch.randn(*shape, dtype=torch.complex64, generator=_gen(sum(shape), salt))


NORMS = ("backward", "ortho", "forward")

COMPLEX_CASES: list[Case] = [
    # real signals: rfft halves the last transformed dim, fft keeps both halves; the
    # signal length n is dynamic, so is the scale of "ortho" and "forward"
    Case("fft_of_real", lambda m, x: tuple(f(x, dim=1, norm=norm) for f in (FFT.rfft, FFT.fft, FFT.ihfft) for norm in NORMS), lambda n, dt: (real(2, n, 3, salt="x"),), {0: (1,)}, dtypes=F32),
    Case("fftn_of_real", lambda m, x: tuple(f(x, norm=norm) for f in (FFT.rfft2, FFT.fft2, FFT.rfftn, FFT.ihfft2) for norm in NORMS), lambda n, dt: (real(2, n, 6, salt="x"),), {0: (1,)}, dtypes=F32),
    # complex signals, both directions (torch.export guards a dynamic size of an n-d
    # transform against the other sizes: that case is static)
    Case("fft_of_complex", lambda m, z: tuple(f(z, dim=-2, norm=norm) for f in (FFT.fft, FFT.ifft) for norm in NORMS), lambda n, dt: (complex64(3, n, 2, salt="z"),), {0: (1,)}, dtypes=F32),
    Case("fftn_of_complex", lambda m, z: tuple(f(z, dim=dims, norm="ortho") for f in (FFT.fftn, FFT.ifftn) for dims in ((0, 2), (1,), (0, 1, 2))), lambda n, dt: (complex64(4, n, 3, salt="z"),), {0: (1,)}, dtypes=F32, static_only=True),
    # inverse real transforms: the result's last dim (odd and even lengths) is static
    Case("irfft", lambda m, z: tuple(f(z, n=size, dim=-1, norm=norm) for f in (FFT.irfft, FFT.hfft) for size in (8, 7, None) for norm in NORMS), lambda n, dt: (complex64(n, 5, salt="z"),), {0: (0,)}, dtypes=F32),
    Case("irfftn", lambda m, z: (FFT.irfft2(z), FFT.irfftn(z, s=(4, 9), norm="forward"), FFT.hfft2(z)), lambda n, dt: (complex64(n, 4, 5, salt="z"),), {0: (0,)}, dtypes=F32),
    Case("fft_round_trip", lambda m, x: (FFT.irfft(FFT.rfft(x), n=x.shape[-1]), FFT.ifft(FFT.fft(x)).real), lambda n, dt: (real(n, 6, salt="x"),), {0: (0,)}, dtypes=F32),
    # complex arithmetic and views, complex inputs and results
    Case("complex_arithmetic", lambda m, z, x: (z * x + z, z - 2 * z.conj(), (z * z).to(torch.float32), torch.view_as_real(z * 3), torch.view_as_complex(torch.stack([x, 2 * x], -1)), torch.conj_physical(z).sum(1)), lambda n, dt: (complex64(n, 4, salt="z"), real(n, 4, salt="x")), {0: (0,), 1: (0,)}, dtypes=F32),
    Case("complex_from_parts", lambda m, x, y: (torch.complex(x, y), torch.polar(x.abs(), y), torch.complex(x, y).real, torch.polar(x.abs(), y).imag), lambda n, dt: (real(n, 3, salt="x"), real(n, 3, salt="y")), {0: (0,), 1: (0,)}, dtypes=F32),
    # short-time transforms (framing by unfold, then rfft), their magnitude and phase
    # (static: torch.export guards the signal length against the frames)
    Case("stft", lambda m, x: tuple(f(torch.stft(x, 8, hop_length=2, window=w, center=center, normalized=normalized, return_complex=True)) for f in (lambda s: s, torch.abs, torch.angle) for w, center, normalized in ((None, False, False), (torch.hann_window(8), True, True))), lambda n, dt: (real(2, 4 * n, salt="x"),), {0: (1,)}, dtypes=F32, static_only=True),
    Case("angle_of_real", lambda m, x: (torch.angle(x), torch.angle(torch.tensor([0.0, -0.0, -1.0, float("nan"), float("-inf")]))), lambda n, dt: (real(n, 3, salt="x"),), {0: (0,)}, dtypes=F32),
    Case("complex_moves", lambda m, z: (z.permute(1, 0)[1:], torch.cat([z, z.flip(0)]), torch.nn.functional.pad(z, (1, 2)), z.reshape(-1)[::2], z.unsqueeze(0).expand(2, -1, -1)), lambda n, dt: (complex64(n, 4, salt="z"),), {0: (0,)}, dtypes=F32),
]
