"""The importer: the graph signature, dynamic shapes, symbolic integers, locations and
the errors for unsupported programs, checked on the IR it builds."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import torch
from torch.export import Dim, export
from xdsl.dialects import func
from xdsl.dialects.builtin import DYNAMIC_INDEX, IndexType, ModuleOp, StringAttr

from mlxir.conversions.torch_to_aten import (
    ImportError_,
    UnsupportedOpsError,
    import_program,
)
from mlxir.dialects import mlx
from mlxir.dialects.weights import weights_of
from mlxir.support.locations import node_of, source_location


def forward_of(module: ModuleOp) -> func.FuncOp:
    return next(op for op in module.walk() if isinstance(op, func.FuncOp))


def names(module: ModuleOp) -> Counter[str]:
    return Counter(op.name for op in module.walk())


class WithState(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(4, 3)
        self.register_buffer("steps", torch.zeros(1))
        self.register_buffer("inv_freq", torch.arange(3.0), persistent=False)
        self.table = torch.tensor([1.0, 2.0, 3.0])  # a lifted constant

    def forward(self, x: torch.Tensor, y: torch.Tensor):
        self.steps.add_(1.0)
        out = self.linear(x) * self.inv_freq + self.table
        return out, (y, out.sum())


def test_graph_signature_becomes_globals_arguments_and_results() -> None:
    ep = export(WithState(), (torch.randn(2, 4), torch.randn(5)))
    module = import_program(ep)
    module.verify()
    globals_ = {op.sym_name.data: op.kind.data for op in module.walk() if isinstance(op, mlx.GlobalOp)}
    assert globals_["linear.weight"] == "parameter"
    assert globals_["linear.bias"] == "parameter"
    assert globals_["steps"] == "state"
    assert globals_["inv_freq"] == "buffer"  # non-persistent: lives in ep.constants
    assert any(kind == "constant" for kind in globals_.values())  # the lifted tensor
    weights = weights_of(module)  # each global holds its tensor in the IR
    assert set(weights) == set(globals_)
    assert np.array_equal(weights["inv_freq"], np.arange(3.0, dtype=np.float32))

    forward = forward_of(module)
    assert len(forward.args) == 2
    results = forward.function_type.outputs.data
    assert len(results) == 3  # nested tuple flattened
    ret = forward.body.block.last_op
    assert isinstance(ret, func.ReturnOp)
    assert ret.operands[1] is forward.args[1]  # an input returned as an output
    counts = names(module)
    assert counts["mlx.load_state"] == 1 and counts["mlx.store_state"] == 1


def test_dynamic_dims_symbolic_integers_and_ranges() -> None:
    class Reshape(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            n = x.shape[1]
            return x.reshape(2, n // 2, 2 * x.shape[2]) + (n - 1)

    seq = Dim("seq", min=2, max=32)
    ep = export(
        Reshape(), (torch.randn(2, 8, 3),), dynamic_shapes={"x": {1: 2 * seq}}
    )
    module = import_program(ep)
    module.verify()
    forward = forward_of(module)
    (arg,) = forward.args
    assert arg.type.get_shape()[1] == DYNAMIC_INDEX
    counts = names(module)
    assert counts["aten.sym_size"] >= 1
    assert counts["aten.view"] + counts["aten.reshape"] == 1
    assert any(name.startswith("arith.") for name in counts)
    ranges = forward.attributes["mlxir.symbol_ranges"]
    plain = {k: list(v.get_values()) for k, v in ranges.data.items() if k.isidentifier()}
    assert list(plain.values()) == [[2, 32]]
    (symbol,) = plain
    dims = [d.data for d in forward.attributes["mlxir.input_dims"].data[0].data]
    assert dims == ["", f"2*{symbol}", ""]


def test_symint_user_input_is_an_index_argument() -> None:
    class Narrow(torch.nn.Module):
        def forward(self, x: torch.Tensor, n: int) -> torch.Tensor:
            return x[:, :n]

    ep = export(
        Narrow(),
        (torch.randn(3, 10), 4),
        dynamic_shapes={"x": None, "n": Dim.DYNAMIC},
    )
    module = import_program(ep)
    module.verify()
    forward = forward_of(module)
    assert isinstance(forward.args[1].type, IndexType)


def test_locations_come_from_stack_traces() -> None:
    class Tanh(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.tanh(x)

    module = import_program(export(Tanh(), (torch.randn(3),)))
    (tanh,) = [op for op in module.walk() if op.name == "aten.tanh"]
    assert node_of(tanh.location) == "tanh"
    source = source_location(tanh.location)
    assert source is not None and source.filename.data.endswith("test_import.py")


def test_native_ops_are_kept_and_the_rest_decomposed() -> None:
    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = torch.nn.LayerNorm(8)
            self.proj = torch.nn.Linear(8, 8)

        def forward(self, q: torch.Tensor) -> torch.Tensor:
            h = self.proj(self.norm(q))
            attn = torch.nn.functional.scaled_dot_product_attention(h, h, h, is_causal=True)
            # mish decomposes to exp/log1p/tanh; hardtanh is imported as clamp
            return torch.nn.functional.hardtanh(torch.nn.functional.mish(attn))

    module = import_program(export(Block(), (torch.randn(1, 2, 5, 8),)))
    module.verify()
    counts = names(module)
    assert counts["aten.scaled_dot_product_attention"] == 1
    assert counts["aten.linear"] == 1
    assert counts["aten.layer_norm"] == 1
    assert counts["aten.clamp"] == 1
    assert counts["aten.log1p"] == 1 and counts["aten.tanh"] == 1


def test_a_node_without_importer_is_decomposed_alone() -> None:
    """The graph is imported as exported: `leaky_relu` (no importer) becomes its
    decomposition, with its own source line; the casts and views torch's re-trace would
    have rewritten are imported as they are; the user's program is left untouched and
    torch did not re-trace it."""
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR

    class Act(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            y = torch.nn.functional.leaky_relu(x, 0.2)
            return y.reshape(-1).to(torch.float16)

    ep = export(Act(), (torch.randn(2, 3),))
    before = [str(n.target) for n in ep.graph.nodes]
    module = import_program(ep)
    module.verify()
    assert [str(n.target) for n in ep.graph.nodes] == before
    assert DECOMPOSED_BY_TORCH_ATTR not in module.attributes
    counts = names(module)
    assert counts["aten.where"] == 1 and counts["aten.gt"] == 1 and counts["aten.mul"] == 1
    assert counts["aten.reshape"] == 1 and counts["aten._to_copy"] == 1
    (where,) = [op for op in module.walk() if op.name == "aten.where"]
    source = source_location(where.location)
    assert source is not None and source.filename.data.endswith("test_import.py")


def test_a_loaded_program_with_derived_dims_compiles(tmp_path: Path) -> None:
    """torch's re-trace fails on a `torch.export.load`ed program with a derived dim
    (`2*Dim('h')`); decomposing nodes alone (leaky_relu, hardswish, new_ones) needs no
    re-trace, so the loaded program compiles and runs at new sizes."""
    import mlxir
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR

    class Derived(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            ones = torch.nn.functional.leaky_relu(x, 0.1).new_ones(x.shape[0], 2)
            return ones + torch.nn.functional.hardswish(x).sum(-1, keepdim=True)

    shapes = ({0: Dim("b", min=2, max=64), 1: 2 * Dim("h", min=2, max=32)},)
    path = tmp_path / "derived.pt2"
    torch.export.save(export(Derived(), (torch.randn(4, 6),), dynamic_shapes=shapes), str(path))
    loaded = torch.export.load(str(path))
    assert DECOMPOSED_BY_TORCH_ATTR not in import_program(loaded).attributes
    program = mlxir.compile(loaded)
    x = torch.randn(5, 10)
    torch.testing.assert_close(program(x), Derived()(x), rtol=1e-5, atol=1e-5)


def test_a_graph_that_writes_in_place_is_decomposed_by_torch_and_says_why() -> None:
    """stft's C++ kernel squeezes a 1-D signal's batch dim in place, on a tensor other
    ops read: only torch's whole-program re-trace functionalizes that, and the module
    records why it ran."""
    from mlxir.conversions.torch_to_aten.importer import DECOMPOSED_BY_TORCH_ATTR

    class Spectrum(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.stft(x, 8, return_complex=True).abs()

    module = import_program(export(Spectrum(), (torch.randn(24),)))
    because = module.attributes[DECOMPOSED_BY_TORCH_ATTR]
    assert isinstance(because, StringAttr) and "writes in place" in because.data, because
    assert "aten.stft" in because.data and "test_import.py" in because.data


def test_training_mode_dropout_is_refused_where_it_is() -> None:
    class Dropout(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.dropout(x, 0.5, training=True) + 1

    with pytest.raises(ImportError_, match=r"test_import\.py:\d+.*training-mode dropout.*model\.eval\(\)"):
        import_program(export(Dropout(), (torch.randn(4),)))


def test_unsupported_ops_are_listed_all_at_once() -> None:
    class Odd(torch.nn.Module):
        def forward(self, x: torch.Tensor):
            h = torch.special.hermite_polynomial_h
            return torch.exp(torch.fft.fft(x)), h(x, x), h(x * 2, x)

    ep = export(Odd(), (torch.randn(8),))
    with pytest.raises(UnsupportedOpsError) as info:
        import_program(ep)
    message = str(info.value)
    assert "hermite_polynomial_h" in message and "2 node(s)" in message
    assert "aten.exp.default (on complex64)" in message
    assert "test_import.py" in message


def test_complex_beyond_complex64_and_its_ops_is_rejected_with_an_explanation() -> None:
    class Twice(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x * 2

    with pytest.raises(UnsupportedOpsError, match=r"(?s)aten.mul.Tensor \(on complex128\).*complex64 only"):
        import_program(export(Twice(), (torch.randn(3, dtype=torch.complex128),)))

    class Exp(torch.nn.Module):
        def forward(self, z: torch.Tensor) -> torch.Tensor:
            return torch.exp(z * 2)

    with pytest.raises(UnsupportedOpsError, match=r"(?s)aten.exp.default \(on complex64\).*only by the ops that move, cast, add, multiply"):
        import_program(export(Exp(), (torch.randn(3, dtype=torch.complex64),)))


def test_lowering_keeps_source_locations() -> None:
    import mlxir

    class Net(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.proj = torch.nn.Linear(4, 4)

        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.softmax(self.proj(x) * 2, dim=-1).sum(dim=0)

    module = import_program(export(Net(), (torch.randn(3, 4),)))
    mlxir.lower(module)
    computing = [
        op
        for op in module.walk()
        if op.name.startswith("mlx.") and op.name not in ("mlx.global", "mlx.weight", "mlx.constant")
    ]
    assert computing
    nodes = {n.name for n in export(Net(), (torch.randn(3, 4),)).graph.nodes}
    for op in computing:
        source = source_location(op.location)
        assert source is not None and source.filename.data.endswith("test_import.py"), op.name
        assert node_of(op.location) in nodes, op.name  # each op knows the node it computes


def test_lowering_errors_name_the_source_line() -> None:
    """An op the lowering cannot handle in this configuration (pooling over dynamic
    spatial dims) fails with the user's file and line, then the op and the reason."""
    import inspect

    from xdsl.utils.exceptions import PassFailedException

    import mlxir

    class Pool(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return torch.nn.functional.max_pool2d(x, 2)

    line = inspect.getsourcelines(Pool.forward)[1] + 1
    ep = export(Pool(), (torch.randn(1, 2, 8, 8),), dynamic_shapes=({2: 2 * Dim("h", min=2, max=32)},))
    with pytest.raises(PassFailedException) as failed:
        mlxir.compile(ep)
    message = str(failed.value)
    assert f"test_import.py:{line}: aten.max_pool2d: pooling needs static spatial dims" in message


def test_as_strided_outside_its_inputs_elements_is_refused() -> None:
    """as_strided is a gather of its strided positions only where they lie among a
    contiguous input's own elements: over a transposed view it would read memory the
    program does not hold, and it is refused with its source line, not computed."""
    import mlxir

    class Within(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.as_strided((2, 2), (1, 3), 1)

    class Transposed(torch.nn.Module):
        def forward(self, x: torch.Tensor) -> torch.Tensor:
            return x.t().as_strided((2, 2), (1, 2))

    x = torch.randn(3, 3)
    program = mlxir.compile(export(Within(), (x,)))
    assert torch.equal(program(x), x.as_strided((2, 2), (1, 3), 1))
    with pytest.raises(UnsupportedOpsError, match="aten.as_strided.default") as error:
        mlxir.compile(export(Transposed(), (x,)))
    assert __file__ in str(error.value)


def test_an_input_named_after_a_builtin_survives_a_node_decomposition() -> None:
    """`nn.ConvTranspose1d.forward(input)`: decomposing its node copies the graph, and
    FX renames the copy's `input` placeholder; the inputs are still matched to the
    signature (by position) and keep their exported names."""
    torch.manual_seed(0)
    model = torch.nn.ConvTranspose1d(3, 2, 3, stride=2).eval()
    import mlxir

    length = Dim("length", min=2, max=64)
    program = mlxir.compile(export(model, (torch.randn(1, 3, 8),), dynamic_shapes=({2: length},)))
    assert [spec.name for spec in program.inputs] == ["input"]
    x = torch.randn(1, 3, 11)
    with torch.no_grad():
        torch.testing.assert_close(program(input=x), model(x), rtol=1e-4, atol=1e-5)
