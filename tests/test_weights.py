"""Weights in the IR: tensors and arrays become a global's dense value and come back
unchanged, and a module prints with its weights and parses back the same.

The reference for the printed form is xDSL's own printer: mlxir's faster printing of
large dense values (`support/xdsl_fixes.py`) must print exactly what xDSL prints.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.parser import Parser
from xdsl.printer import Printer

from mlxir.dialects.context import make_context
from mlxir.dialects.mlx import GlobalOp
from mlxir.dialects.weights import WeightError, array_of, dense_of, weights_of
from mlxir.support import dtypes, xdsl_fixes

TORCH_DTYPES = [torch.float32, torch.float16, torch.bfloat16, torch.int64, torch.int8, torch.uint8, torch.bool]


def _tensor(dtype: torch.dtype, shape: tuple[int, ...], seed: int) -> torch.Tensor:
    generator = torch.Generator().manual_seed(seed)
    if dtype == torch.bool:
        return torch.rand(shape, generator=generator) > 0.5
    if dtype.is_floating_point:
        return (torch.randn(shape, generator=generator) * 100).to(dtype)
    info = torch.iinfo(dtype)
    return torch.randint(max(info.min, -1000), min(info.max, 1000), shape, generator=generator, dtype=dtype)


def _type_of(tensor: torch.Tensor) -> TensorType:
    name = str(tensor.dtype).removeprefix("torch.")
    return TensorType(dtypes.BY_NAME[name].ir, tensor.shape)


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
def test_tensor_round_trips_through_a_dense_value(dtype: torch.dtype) -> None:
    tensor = _tensor(dtype, (3, 5), 0)
    attr = dense_of(tensor, _type_of(tensor), "w")
    back = array_of(attr)
    if dtype == torch.bfloat16:
        assert back.dtype == np.uint16
        assert np.array_equal(back, tensor.view(torch.int16).numpy().view(np.uint16))
    else:
        assert np.array_equal(back, tensor.numpy())


def test_a_value_of_another_type_or_shape_is_refused() -> None:
    tensor = torch.zeros(2, 3)
    with pytest.raises(WeightError, match="element type float16 does not match the global's float32"):
        dense_of(tensor.half(), _type_of(tensor), "w")
    with pytest.raises(WeightError, match=r"shape \[3, 2\] does not match the global's \[2, 3\]"):
        dense_of(tensor.T.contiguous(), _type_of(tensor), "w")


def _printed(attr: DenseIntOrFPElementsAttr) -> str:
    from io import StringIO

    stream = StringIO()
    Printer(stream=stream).print_attribute(attr)
    return stream.getvalue()


@pytest.mark.parametrize("dtype", TORCH_DTYPES, ids=str)
@pytest.mark.parametrize("shape", [(7,), (101,), (4, 40), (0, 3)], ids=str)
def test_fast_printing_prints_what_xdsl_prints(dtype: torch.dtype, shape: tuple[int, ...]) -> None:
    xdsl_fixes.apply()
    tensor = _tensor(dtype, shape, 1)
    for value in (tensor, torch.zeros_like(tensor)):  # random and splat
        attr = dense_of(value, _type_of(value), "w")
        ours = _printed(attr)
        original = xdsl_fixes._ORIGINAL_PRINT[0]
        try:
            DenseIntOrFPElementsAttr.print_without_type = original  # type: ignore[method-assign]
            theirs = _printed(attr)
        finally:
            DenseIntOrFPElementsAttr.print_without_type = xdsl_fixes._print_dense_without_type  # type: ignore[method-assign]
        assert ours == theirs


def test_a_module_prints_with_its_weights_and_parses_back() -> None:
    globals_ = []
    for i, dtype in enumerate(TORCH_DTYPES):
        tensor = _tensor(dtype, (3, 50), i)
        op = GlobalOp(f"w{i}", _type_of(tensor), "parameter")
        op.properties["value"] = dense_of(tensor, _type_of(tensor), f"w{i}")
        globals_.append(op)
    module = ModuleOp(globals_)
    parsed = Parser(make_context(), str(module)).parse_module()
    assert parsed.is_structurally_equivalent(module)
    for name, array in weights_of(module).items():
        assert np.array_equal(weights_of(parsed)[name], array)


def test_a_large_weight_is_held_by_reference_and_reads_as_a_copy_would() -> None:
    """A value of `SHARED_FROM` bytes or more shares the tensor's memory (no copy at
    import), is read back read-only, and prints, compares and serializes as the
    `bytes`-held value of the same contents."""
    from mlxir.dialects import weights

    tensor = _tensor(torch.float32, (512, 1024), 7)
    assert tensor.numel() * 4 >= weights.SHARED_FROM
    shared = dense_of(tensor, _type_of(tensor), "w")
    buffer = np.frombuffer(shared.data.data, dtype=np.uint8)
    assert buffer.ctypes.data == tensor.data_ptr()
    array = array_of(shared)
    with pytest.raises(ValueError, match="read-only"):
        array[0, 0] = 1.0
    copied = weights.dense_attr(tensor.numpy(), dtypes.BY_NAME["float32"], (512, 1024))
    assert isinstance(weights.dense_attr(tensor.numpy()[:2], dtypes.BY_NAME["float32"], (2, 1024)).data.data, bytes)
    held = DenseIntOrFPElementsAttr(shared.type, type(shared.data)(tensor.numpy().tobytes()))
    assert shared == held and shared == copied and hash(shared) == hash(copied)
    assert str(shared) == str(held)
    assert bytes(weights.dense_data(shared, dtypes.BY_NAME["float32"])) == tensor.numpy().tobytes()
    transposed = weights.dense_attr(tensor.numpy().T, dtypes.BY_NAME["float32"], (1024, 512))
    assert np.array_equal(array_of(transposed), tensor.numpy().T)
    changed = tensor.clone()
    changed[3, 5] += 1
    assert shared != dense_of(changed, _type_of(changed), "w")


def test_shared_weights_compile_to_the_same_program_as_copied_ones(monkeypatch: pytest.MonkeyPatch) -> None:
    """Projections large enough to be shared go through `fold-weight-transposes` and
    `merge-projections` (transposed, then concatenated by `concatenated_columns`) into
    the same program, byte for byte, as with every weight copied, and that program
    matches eager PyTorch at a batch other than the exported one (f32: atol 1e-4)."""
    import mlxir
    from mlxir.dialects import weights

    class Projections(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.q = torch.nn.Linear(512, 1024, bias=False)
            self.k = torch.nn.Linear(512, 512, bias=False)
            self.v = torch.nn.Linear(512, 512, bias=False)
            self.o = torch.nn.Linear(2048, 512, bias=False)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return self.o(torch.cat([self.q(x), torch.relu(self.k(x)), self.v(x)], dim=-1))

    torch.manual_seed(0)
    model = Projections().eval()
    batch = torch.export.Dim("batch", min=1, max=64)
    ep = torch.export.export(model, (torch.randn(4, 512),), dynamic_shapes=({0: batch},))
    assert model.q.weight.numel() * 4 >= weights.SHARED_FROM
    shared, _ = mlxir.compiled_bytes(ep)
    monkeypatch.setattr(weights, "SHARED_FROM", 1 << 62)
    copied, _ = mlxir.compiled_bytes(ep)
    assert shared == copied
    x = torch.randn(9, 512)
    result = mlxir.load(shared)(x)  # called as the module is: a torch tensor back
    torch.testing.assert_close(result, model(x), atol=1e-4, rtol=1e-4)
