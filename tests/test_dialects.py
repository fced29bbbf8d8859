"""Unit tests for the `aten` and `mlx` dialects: builders, verifiers and the coverage
of the FileCheck round-trip suite."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseIntOrFPElementsAttr,
    IndexType,
    ModuleOp,
    TensorType,
    f16,
    f32,
    i1,
    i64,
)
from xdsl.ir import Attribute, Block, Region
from xdsl.parser import Parser
from xdsl.utils.exceptions import VerifyException

from mlxir.dialects import aten, mlx
from mlxir.dialects.common import broadcast_shapes, normalize_axis
from mlxir.dialects.context import make_context

FILECHECK = Path(__file__).parent / "filecheck"


def t(*shape: int, dtype: Attribute = f32) -> TensorType[Attribute]:
    return TensorType(dtype, [DYNAMIC_INDEX if s < 0 else s for s in shape])


def in_function(*arg_types: Attribute) -> tuple[Block, ModuleOp]:
    block = Block(arg_types=arg_types)
    function = func.FuncOp("f", (arg_types, []), Region(block))
    return block, ModuleOp([function])


def verify_with(block: Block, module: ModuleOp, *ops) -> None:
    for op in ops:
        block.add_op(op)
    block.add_op(func.ReturnOp())
    module.verify()


# --------------------------------------------------------------------------- coverage


@pytest.mark.parametrize(
    ("dialect_dir", "ops"),
    [("aten", aten.ATEN_OPS), ("mlx", mlx.MLX_OPS)],
)
def test_every_op_round_trips_in_filecheck(dialect_dir: str, ops: list) -> None:
    files = sorted((FILECHECK / dialect_dir).glob("roundtrip*.mlir"))
    assert files, f"no round-trip files in tests/filecheck/{dialect_dir}"
    text = "\n".join(f.read_text() for f in files)
    used = set(re.findall(r"=\s*(\w+\.\w+)\b|^\s*(\w+\.\w+)\s", text, re.MULTILINE))
    names = {a or b for a, b in used}
    missing = sorted(op.name for op in ops if op.name not in names)
    assert not missing, f"ops with no round-trip test: {missing}"


def test_dialect_op_names_are_unique_and_prefixed() -> None:
    for dialect, ops in (("aten", aten.ATEN_OPS), ("mlx", mlx.MLX_OPS)):
        names = [op.name for op in ops]
        assert len(names) == len(set(names))
        assert all(n.startswith(dialect + ".") for n in names)


def test_elementwise_tables_define_one_op_per_entry() -> None:
    assert set(aten.UNARY_OP_CLASSES) == set(aten.UNARY_OPS)
    assert set(aten.BINARY_OP_CLASSES) == set(aten.BINARY_OPS)
    assert set(mlx.UNARY_OP_CLASSES) == set(mlx.UNARY_OPS)
    assert set(mlx.BINARY_OP_CLASSES) == set(mlx.BINARY_OPS)
    assert aten.UNARY_OP_CLASSES["exp"].name == "aten.exp"
    assert mlx.BINARY_OP_CLASSES["subtract"].name == "mlx.subtract"


# --------------------------------------------------------------------------- helpers


def test_broadcast_shapes() -> None:
    assert broadcast_shapes([[2, 1, 4], [3, 1]]) == [2, 3, 4]
    assert broadcast_shapes([[DYNAMIC_INDEX, 4], [1]]) == [DYNAMIC_INDEX, 4]
    assert broadcast_shapes([[DYNAMIC_INDEX], [5]]) == [5]
    with pytest.raises(VerifyException, match="not broadcastable"):
        broadcast_shapes([[2, 3], [4, 3]])


def test_normalize_axis() -> None:
    assert normalize_axis(-1, 3) == 2
    assert normalize_axis(0, 0) == 0
    with pytest.raises(VerifyException, match="out of range for rank 2"):
        normalize_axis(2, 2)


# --------------------------------------------------------------------------- builders


def test_unary_builder_infers_result_type() -> None:
    block, module = in_function(t(2, -1))
    op = aten.UNARY_OP_CLASSES["exp"](block.args[0])
    verify_with(block, module, op)
    assert op.result.type == t(2, -1)


def test_binary_builder_with_scalar_operand() -> None:
    from xdsl.dialects.arith import ConstantOp
    from xdsl.dialects.builtin import Float64Type, FloatAttr

    block, module = in_function(t(2, 3, dtype=f16))
    two = ConstantOp(FloatAttr(2.0, Float64Type()))
    op = aten.BINARY_OP_CLASSES["mul"](block.args[0], two.result, t(2, 3, dtype=f16))
    verify_with(block, module, two, op)
    assert op.other.type == Float64Type()


def test_reshape_builder_mixes_static_and_dynamic_sizes() -> None:
    block, module = in_function(t(2, -1, 4))
    size = aten.SymSizeOp(block.args[0], 1)
    view = aten.ViewOp(block.args[0], [2, size.result, 4], t(2, -1, 4))
    reshape = mlx.ReshapeOp(block.args[0], [size.result, 8], t(-1, 8))
    verify_with(block, module, size, view, reshape)
    assert list(view.static_sizes.get_values()) == [2, DYNAMIC_INDEX, 4]
    assert list(view.sizes) == [size.result]
    assert isinstance(size.result.type, IndexType)


def test_reduction_builder() -> None:
    block, module = in_function(t(2, 3, 4))
    op = aten.REDUCTION_OP_CLASSES["sum"](block.args[0], [1], True, t(2, 1, 4))
    verify_with(block, module, op)
    assert op.reduced_axes() == [1]


def test_mlx_builders() -> None:
    block, module = in_function(t(2, 3), t(2, 3, dtype=i1))
    x, mask = block.args
    cast = mlx.AstypeOp(x, t(2, 3, dtype=f16))
    transpose = mlx.TransposeOp(x, [1, 0], t(3, 2))
    dim = mlx.DimOp(x, -1)
    exp = mlx.UNARY_OP_CLASSES["exp"](x)
    add = mlx.BINARY_OP_CLASSES["add"](x, exp.result, t(2, 3))
    const = mlx.ConstantOp(DenseIntOrFPElementsAttr.from_list(t(2), [1.0, 2.0]))
    verify_with(block, module, cast, transpose, dim, exp, add, const)
    assert const.result.type == t(2)
    assert mask.type == t(2, 3, dtype=i1)


def test_global_builder_and_weight_lookup() -> None:
    context = make_context()
    module = Parser(
        context,
        """
        mlx.global @w "parameter" : tensor<4xf32>
        func.func @f() -> tensor<4xf32> {
          %w = mlx.weight @w : tensor<4xf32>
          func.return %w : tensor<4xf32>
        }
        """,
    ).parse_module()
    module.verify()
    built = mlx.GlobalOp("cache", t(2, 8), "state")
    assert built.sym_name.data == "cache" and built.kind.data == "state"


# --------------------------------------------------------------------------- verifiers


def test_unary_verifier_rejects_shape_change() -> None:
    block, module = in_function(t(2))
    op = aten.UNARY_OP_CLASSES["exp"](block.args[0], t(3))
    with pytest.raises(VerifyException, match="'aten.exp' op result shape \\[3\\]"):
        verify_with(block, module, op)


def test_binary_verifier_rejects_unbroadcastable_shapes() -> None:
    block, module = in_function(t(2, 3), t(4, 3))
    op = aten.BINARY_OP_CLASSES["mul"](block.args[0], block.args[1], t(2, 3))
    with pytest.raises(VerifyException, match="not broadcastable"):
        verify_with(block, module, op)


def test_mlx_binary_requires_one_dtype() -> None:
    block, module = in_function(t(2), t(2, dtype=f16))
    op = mlx.BINARY_OP_CLASSES["add"](block.args[0], block.args[1], t(2))
    with pytest.raises(VerifyException, match="must share one element type"):
        verify_with(block, module, op)


def test_transpose_verifier_rejects_non_permutation() -> None:
    block, module = in_function(t(2, 3))
    op = mlx.TransposeOp(block.args[0], [0, 0], t(2, 2))
    with pytest.raises(VerifyException, match="not a permutation"):
        verify_with(block, module, op)


def test_reshape_verifier_checks_element_count() -> None:
    block, module = in_function(t(2, 3))
    op = mlx.ReshapeOp(block.args[0], [4, 2], t(4, 2))
    with pytest.raises(VerifyException, match="element count"):
        verify_with(block, module, op)


def test_reduction_verifier_checks_keepdim_shape() -> None:
    block, module = in_function(t(2, 3))
    op = aten.REDUCTION_OP_CLASSES["sum"](block.args[0], [1], False, t(2, 1))
    with pytest.raises(VerifyException, match="does not match the expected shape"):
        verify_with(block, module, op)


def test_sym_size_verifier_checks_axis() -> None:
    block, module = in_function(t(2, 3))
    op = aten.SymSizeOp(block.args[0], 5)
    with pytest.raises(VerifyException, match="dim 5 is out of range for rank 2"):
        verify_with(block, module, op)


def test_weight_of_unknown_symbol_is_rejected() -> None:
    context = make_context()
    module = Parser(
        context,
        """
        func.func @f() -> tensor<4xf32> {
          %w = mlx.weight @missing : tensor<4xf32>
          func.return %w : tensor<4xf32>
        }
        """,
    ).parse_module()
    with pytest.raises(VerifyException, match="'missing' does not name an mlx.global"):
        module.verify()


def test_integer_index_scalar_types() -> None:
    block, module = in_function(t(4, dtype=i64))
    size = aten.SymSizeOp(block.args[0], 0)
    op = aten.BINARY_OP_CLASSES["mul"](block.args[0], size.result, t(4, dtype=i64))
    verify_with(block, module, size, op)


def test_table_generated_ops_import_by_name() -> None:
    """Each elementwise row (`dialects/elementwise.py`) gives an op class importable by
    name from its dialect, as a hand-written op is."""
    from mlxir.dialects import aten, elementwise, mlx
    from mlxir.dialects.mlx import ExpOp

    assert ExpOp is mlx.UNARY_OP_CLASSES["exp"] and ExpOp.name == "mlx.exp"
    for row in (*elementwise.UNARY, *elementwise.BINARY):
        cls = getattr(aten, "".join(p.capitalize() for p in row.aten.split("_")) + "Op")
        assert cls.name == f"aten.{row.aten}"
        if row.mlx is not None:
            cls = getattr(mlx, "".join(p.capitalize() for p in row.mlx.split("_")) + "Op")
            assert cls.name == f"mlx.{row.mlx}"
    with pytest.raises(AttributeError):
        _ = mlx.NoSuchOp
