"""The `.mlxfb` program format: serialize, read_program, deserialize, slot allocation,
and loading untrusted bytes (truncated, corrupted, bit-flipped files)."""

from __future__ import annotations

import random
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.dialects.func import FuncOp
from xdsl.ir import SSAValue
from xdsl.parser import Parser

from mlxir.codegen import (
    SCHEMA_VERSION,
    ProgramError,
    ProgramInfo,
    deserialize,
    read_program,
    serialize,
)
from mlxir.codegen import generate as fb_generate
from mlxir.codegen.ops import program_op_classes
from mlxir.dialects.context import make_context
from mlxir.dialects.mlx import GlobalOp
from mlxir.dialects.weights import dense_of, weights_of
from mlxir.tools.mlx_opt import run

ROOT = Path(__file__).resolve().parents[1]
FILECHECK_MLX = ROOT / "tests" / "filecheck" / "mlx"

# A small decoder layer: dynamic sequence length, index arithmetic, globals of every
# kind, a multi-result op, optional operands and segment sizes, inline constants,
# state read and written, source locations and the symbolic-shape attributes.
MODEL = """
mlx.global @embed.weight "parameter" : tensor<16x8xf32>
mlx.global @norm.weight "parameter" : tensor<8xbf16>
mlx.global @proj.bias "buffer" : tensor<8xf16>
mlx.global @lifted_tensor_0 "constant" : tensor<2xi64>
mlx.global @mask "constant" : tensor<4xi1>
mlx.global @cache "state" : tensor<1x32x8xbf16>
mlx.global @step "state" : tensor<i64>
func.func @forward(%ids: tensor<1x?xi64>, %pos: index) -> (tensor<1x?x8xf32>, tensor<1x?x4xf32>, index, tensor<i64>) attributes {mlxir.input_dims = [["", "s0"], []], mlxir.symbol_ranges = {s0 = array<i64: 1, 32>, s1 = array<i64: 0, -1>}} {
  %n = mlx.dim %ids axis 1 : tensor<1x?xi64>
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c4 = arith.constant 4 : index
  %n1 = arith.addi %n, %c1 : index
  %n2 = arith.subi %n1, %c1 : index
  %n3 = arith.muli %n2, %c2 : index
  %q = arith.floordivsi %n3, %c2 : index
  %r = arith.remsi %n3, %c4 : index
  %lo = arith.minsi %q, %c4 : index
  %hi = arith.maxsi %lo, %r : index
  %cmp = arith.cmpi slt, %hi, %c4 : index
  %sel = arith.select %cmp, %hi, %c4 : index
  %table = mlx.weight @embed.weight : tensor<16x8xf32> loc("model.py":12:8)
  %h = mlx.take %table, %ids axis 0 : tensor<16x8xf32>, tensor<1x?xi64> -> tensor<1x?x8xf32> loc("model.py":13:8)
  %e = mlx.exp %h : tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %s = mlx.sigmoid %e : tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %m = mlx.multiply %h, %s : tensor<1x?x8xf32>, tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %ln = mlx.layer_norm %m eps 1.000000e-05 : tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %parts:2 = mlx.split %ln at [4] axis 2 : tensor<1x?x8xf32> -> tensor<1x?x4xf32>, tensor<1x?x4xf32>
  %sum = mlx.add %parts#0, %parts#1 : tensor<1x?x4xf32>, tensor<1x?x4xf32> -> tensor<1x?x4xf32>
  %sl = mlx.slice %ln [0, 0, 0] to [1, %sel, 8] step [1, 1, 1] : tensor<1x?x8xf32> -> tensor<1x?x8xf32>
  %g = mlx.weight @norm.weight : tensor<8xbf16>
  %hb = mlx.astype %sl : tensor<1x?x8xf32> -> tensor<1x?x8xbf16>
  %y = mlx.rms_norm %hb weight %g : tensor<8xbf16> eps 1.000000e-06 : tensor<1x?x8xbf16> -> tensor<1x?x8xbf16>
  %cache = mlx.load_state @cache : tensor<1x32x8xbf16>
  %new = mlx.slice_update %cache, %y start [%pos] axes [1] : tensor<1x32x8xbf16>, tensor<1x?x8xbf16> -> tensor<1x32x8xbf16>
  mlx.store_state %new to @cache : tensor<1x32x8xbf16>
  %b = mlx.weight @proj.bias : tensor<8xf16>
  %b32 = mlx.astype %b : tensor<8xf16> -> tensor<8xf32>
  %yo = mlx.add %m, %b32 : tensor<1x?x8xf32>, tensor<8xf32> -> tensor<1x?x8xf32>
  %shape = mlx.weight @lifted_tensor_0 : tensor<2xi64>
  %mk = mlx.weight @mask : tensor<4xi1>
  %one = mlx.constant dense<1> : tensor<i64>
  %cb = mlx.constant dense<[1.5, -2.0]> : tensor<2xbf16>
  %ct = mlx.constant dense<[[true, false], [false, true]]> : tensor<2x2xi1>
  %st = mlx.load_state @step : tensor<i64>
  %next = mlx.add %st, %one : tensor<i64>, tensor<i64> -> tensor<i64>
  mlx.store_state %next to @step : tensor<i64>
  %sm = mlx.softmax %sum axes [-1] precise : tensor<1x?x4xf32> -> tensor<1x?x4xf32>
  func.return %yo, %sm, %sel, %st : tensor<1x?x8xf32>, tensor<1x?x4xf32>, index, tensor<i64>
}
"""


def model_payloads() -> dict[str, object]:
    gen = torch.Generator().manual_seed(0)
    return {
        "embed.weight": torch.randn(16, 8, generator=gen),
        "norm.weight": torch.randn(8, generator=gen).to(torch.bfloat16),
        "proj.bias": np.linspace(-1, 1, 8, dtype=np.float16),
        "lifted_tensor_0": np.array([4, -1], dtype=np.int64),
        "mask": torch.tensor([True, False, True, True]),
        "cache": torch.zeros(1, 32, 8, dtype=torch.bfloat16),
        "step": np.array(3, dtype=np.int64),
    }


def parse(text: str) -> ModuleOp:
    return Parser(make_context(), text).parse_module()


def printed(module: ModuleOp) -> str:
    return str(module)


def with_values(module: ModuleOp, payloads: dict[str, object]) -> ModuleOp:
    """`module` with each payload as its global's value in the IR, as the importer and
    the deserializer leave them."""
    for op in module.ops:
        if isinstance(op, GlobalOp) and op.sym_name.data in payloads:
            op.properties["value"] = dense_of(payloads[op.sym_name.data], op.type, op.sym_name.data)
    return module


@pytest.fixture(scope="module")
def program() -> bytes:
    return serialize(parse(MODEL), model_payloads())


@pytest.fixture(scope="module")
def info(program: bytes) -> ProgramInfo:
    return read_program(program)


def function(module: ModuleOp) -> FuncOp:
    return next(op for op in module.ops if isinstance(op, FuncOp))


# --------------------------------------------------------------------------- round trips


def weights_at_first_use(module: ModuleOp) -> ModuleOp:
    """`module` as a program keeps it: a weight read is no instruction, so the
    deserializer reads each weight once, right before its first use, and drops unused
    reads (and their names and locations)."""
    from xdsl.dialects.builtin import UnknownLoc
    from xdsl.rewriter import InsertPoint, Rewriter

    from mlxir.dialects.mlx import WeightOp

    block = function(module).body.block
    order = {op: i for i, op in enumerate(block.ops)}
    first: dict[str, WeightOp] = {}
    for op in list(block.ops):
        if not isinstance(op, WeightOp):
            continue
        if not op.result.uses:
            Rewriter.erase_op(op)
            continue
        name = op.global_name.root_reference.data
        kept = first.setdefault(name, op)
        if kept is not op:
            op.result.replace_all_uses_with(kept.result)
            Rewriter.erase_op(op)
    for op in first.values():
        user = min((u.operation for u in op.result.uses), key=lambda o: order[o])
        op.detach()
        op.location = UnknownLoc()
        op.result.name_hint = None
        Rewriter.insert_op(op, InsertPoint.before(user))
    return module


def test_round_trip_is_byte_identical(program: bytes) -> None:
    module = deserialize(program)
    assert serialize(module) == program
    assert printed(module) == printed(
        weights_at_first_use(with_values(parse(MODEL), model_payloads()))
    )


def test_weight_reads_are_no_instructions(info: ProgramInfo) -> None:
    """The model reads five weights; none is an instruction: each is its constant slot."""
    assert "mlx.weight" not in info.op_names
    constant_slots = {g.slot for g in info.globals if g.kind != "state"}
    read = {s for ins in info.instructions for s in ins.operands} | set(info.outputs)
    assert {"embed.weight", "norm.weight", "proj.bias"} <= {
        g.name for g in info.globals if g.slot in read & constant_slots
    }


def test_round_trip_keeps_payloads(program: bytes) -> None:
    payloads = weights_of(deserialize(program))
    expected = model_payloads()
    for name, value in expected.items():
        got = payloads[name]
        if isinstance(value, torch.Tensor) and value.dtype == torch.bfloat16:
            assert got.dtype == np.uint16
            np.testing.assert_array_equal(got, value.view(torch.int16).numpy().view(np.uint16))
        else:
            want = value.numpy() if isinstance(value, torch.Tensor) else value
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


def test_serialize_is_deterministic(program: bytes) -> None:
    assert serialize(parse(MODEL), model_payloads()) == program
    module = parse(MODEL)
    payloads = model_payloads()
    assert serialize(module, payloads) == serialize(module, dict(reversed(payloads.items())))


def test_torch_and_numpy_payloads_give_the_same_bytes(program: bytes) -> None:
    as_numpy = {}
    for name, value in model_payloads().items():
        if isinstance(value, torch.Tensor):
            if value.dtype == torch.bfloat16:
                value = value.view(torch.int16).numpy().view(np.uint16)  # raw bits
            else:
                value = value.numpy()
        as_numpy[name] = value
    assert serialize(parse(MODEL), as_numpy) == program


def test_inline_values_are_payloads() -> None:
    text = """
    mlx.global @a "constant" : tensor<3xi1> = dense<[true, false, true]> : tensor<3xi1>
    mlx.global @b "parameter" : tensor<2xbf16> = dense<[1.0, -2.0]> : tensor<2xbf16>
    func.func @forward() -> (tensor<3xi1>, tensor<2xbf16>) {
      %a = mlx.weight @a : tensor<3xi1>
      %b = mlx.weight @b : tensor<2xbf16>
      func.return %a, %b : tensor<3xi1>, tensor<2xbf16>
    }
    """
    data = serialize(parse(text))
    info = read_program(data)
    a, b = (info.constants[info.global_slot(n)] for n in ("a", "b"))
    assert a.dtype == np.bool_ and a.tolist() == [True, False, True]
    assert b.dtype == np.uint16 and b.tolist() == [0x3F80, 0xC000]
    explicit = {
        "a": np.array([True, False, True]),
        "b": torch.tensor([1.0, -2.0], dtype=torch.bfloat16),
    }
    without_values = text.replace(" = dense<[true, false, true]> : tensor<3xi1>", "").replace(
        " = dense<[1.0, -2.0]> : tensor<2xbf16>", ""
    )
    assert serialize(parse(without_values), explicit) == data
    with pytest.raises(ProgramError, match="has a value in the IR and a payload given beside it"):
        serialize(parse(text), explicit)


def test_zero_d_bfloat16_dense_property() -> None:
    """A 0-d bf16 `mlx.constant` (what the lowering emits for a Scalar) round-trips."""
    text = """
    func.func @forward(%x: tensor<2xbf16>) -> tensor<2xbf16> {
      %c = mlx.constant dense<2.500000e+00> : tensor<bf16>
      %y = mlx.multiply %x, %c : tensor<2xbf16>, tensor<bf16> -> tensor<2xbf16>
      func.return %y : tensor<2xbf16>
    }
    """
    data = serialize(parse(text))
    (constant,) = [i for i in read_program(data).instructions if i.op == "mlx.constant"]
    value = constant.props["value"]
    assert isinstance(value, np.ndarray) and value.shape == () and float(value) == 2.5
    assert serialize(deserialize(data)) == data


def test_empty_tensors() -> None:
    text = """
    mlx.global @e "parameter" : tensor<0x3xf32>
    func.func @forward() -> (tensor<0x3xf32>, tensor<0xi64>) {
      %w = mlx.weight @e : tensor<0x3xf32>
      %c = mlx.constant dense<> : tensor<0xi64>
      func.return %w, %c : tensor<0x3xf32>, tensor<0xi64>
    }
    """
    data = serialize(parse(text), {"e": np.zeros((0, 3), np.float32)})
    info = read_program(data)
    assert info.constants[0].shape == (0, 3)
    assert info.instructions[0].props["value"].shape == (0,)  # the weight read is no instruction
    module = deserialize(data)
    assert serialize(module) == data


def test_mlx_round_trip_suite_serializes() -> None:
    """Every function of the mlx dialect's round-trip FileCheck files (every mlx op)
    serializes and round-trips byte for byte: the generic encoding needs no per-op code."""
    seen: set[str] = set()
    files = sorted(FILECHECK_MLX.glob("roundtrip_*.mlir"))
    assert files
    for path in files:
        module = parse(path.read_text())
        globals_ = [op for op in module.ops if isinstance(op, GlobalOp)]
        for func in [op for op in module.ops if isinstance(op, FuncOp)]:
            single = ModuleOp([g.clone() for g in globals_] + [func.clone()])
            payloads = {
                g.sym_name.data: np.zeros(g.value_type.get_shape(), dtype=_np_dtype(g))  # type: ignore[union-attr]
                for g in globals_
                if not isinstance(g.value, DenseIntOrFPElementsAttr)
            }
            try:
                data = serialize(single, payloads)
                back = deserialize(data)
            except ProgramError as error:
                pytest.fail(f"{path.name} @{func.sym_name.data}: {error}")
            assert serialize(back) == data, f"{path.name} @{func.sym_name.data}"
            # Reads of one weight share its slot, so duplicate reads come back merged at
            # their uses: compare up to CSE.
            assert (
                function(cse(back))
                .clone()
                .is_structurally_equivalent(function(cse(weights_at_first_use(single))).clone())
            ), f"{path.name} @{func.sym_name.data}"
            seen |= set(read_program(data).op_names)
    mlx_ops = {n for n in program_op_classes() if n.startswith("mlx.")}
    assert len(seen & mlx_ops) > 0.8 * len(mlx_ops), sorted(mlx_ops - seen)


def cse(module: ModuleOp) -> ModuleOp:
    from xdsl.transforms.common_subexpression_elimination import (
        CommonSubexpressionElimination,
    )

    CommonSubexpressionElimination().apply(make_context(), module)
    return module


def _np_dtype(g: GlobalOp) -> np.dtype:
    from mlxir.support import dtypes

    dtype = dtypes.of_ir(g.type.get_element_type())  # type: ignore[union-attr]
    assert dtype is not None
    return dtype.numpy


# --------------------------------------------------------------------------- the view


def test_slots(info: ProgramInfo) -> None:
    assert [s.index for s in info.slots] == list(range(len(info.slots)))
    by_name = {s.name: s for s in info.slots if s.name}
    assert by_name["embed.weight"].kind == "constant"
    assert by_name["embed.weight"].dtype == "float32"
    assert by_name["norm.weight"].dtype == "bfloat16"
    assert by_name["proj.bias"].dtype == "float16"
    assert by_name["lifted_tensor_0"].dtype == "int64"
    assert by_name["mask"].dtype == "bool"
    assert by_name["cache"].kind == "state" and by_name["cache"].shape == (1, 32, 8)
    assert by_name["step"].shape == ()
    ids, pos = (info.slots[s] for s in info.inputs)
    assert (ids.kind, ids.dtype, ids.shape, ids.name, ids.scalar) == (
        "input",
        "int64",
        (1, None),
        "ids",
        False,
    )
    assert (pos.kind, pos.dtype, pos.shape, pos.scalar) == ("input", "index", (), True)
    out = [info.slots[s] for s in info.outputs]
    assert [(s.dtype, s.shape) for s in out] == [
        ("float32", (1, None, 8)),
        ("float32", (1, None, 4)),
        ("index", ()),
        ("int64", ()),
    ]


def test_constants_are_views_into_the_buffer(program: bytes, info: ProgramInfo) -> None:
    whole = np.frombuffer(program, dtype=np.uint8)
    assert set(info.constants) == {g.slot for g in info.globals}
    for g in info.globals:
        array = info.constants[g.slot]
        assert np.shares_memory(array, whole), g.name
        assert not array.flags.writeable
        assert array.shape == info.slots[g.slot].shape
        offset = array.__array_interface__["data"][0] - whole.__array_interface__["data"][0]
        assert offset % 64 == 0
    assert info.state == {"cache": info.global_slot("cache"), "step": info.global_slot("step")}
    assert [(g.name, g.kind) for g in info.globals] == [
        ("embed.weight", "parameter"),
        ("norm.weight", "parameter"),
        ("proj.bias", "buffer"),
        ("lifted_tensor_0", "constant"),
        ("mask", "constant"),
        ("cache", "state"),
        ("step", "state"),
    ]
    assert info.constants[info.global_slot("step")].tolist() == 3


def test_instructions_and_props(info: ProgramInfo) -> None:
    ops = [ins.op for ins in info.instructions]
    body = [op.name for op in function(parse(MODEL)).body.block.ops][:-1]
    assert ops == [name for name in body if name != "mlx.weight"]
    by_name = {ins.result_names[0]: ins for ins in info.instructions if ins.result_names}
    assert by_name["n"].props == {"axis": 1}
    assert by_name["c2"].props == {"value": 2}
    assert by_name["cmp"].props["predicate"] == 2
    assert by_name["h"].props == {"axis": 0}
    assert by_name["h"].location == "model.py:13:8"
    assert "table" not in by_name  # a weight read: `%h` reads the constant slot
    assert by_name["h"].operands[0] == info.global_slot("embed.weight")
    assert by_name["parts"].props == {"indices": (4,), "axis": 2}
    assert len(by_name["parts"].results) == 2
    sl = by_name["sl"].props
    assert sl["static_stop"][1] < 0 and sl["strides"] == (1, 1, 1)
    assert sl["operandSegmentSizes"] == (1, 0, 1)
    assert by_name["ln"].props["operandSegmentSizes"] == (1, 0, 0)
    assert isinstance(by_name["ln"].props["eps"], float)
    assert by_name["sm"].props["precise"] is True
    assert "keepdims" not in by_name["sm"].props
    one = by_name["one"].props["value"]
    assert isinstance(one, np.ndarray) and one.dtype == np.int64 and one.shape == ()
    assert one.tolist() == 1 and not one.flags.writeable
    cb = by_name["cb"].props["value"]
    assert cb.dtype == np.float32 and cb.tolist() == [1.5, -2.0]  # bfloat16, widened
    ct = by_name["ct"].props["value"]
    assert ct.dtype == np.bool_ and ct.tolist() == [[True, False], [False, True]]
    assert info.op_names == tuple(sorted(set(ins.op for ins in info.instructions)))
    assert info.symbol_ranges == {"s0": (1, 32), "s1": (0, -1)}
    assert info.input_dims == (("", "s0"), ())


def test_props_are_what_the_runtime_reads_from_ir() -> None:
    """Each instruction's props equal `runtime.props.python_props` of its op, so kernels
    read an op the same way from IR and from a program."""
    python_props = pytest.importorskip("mlxir.evaluator.props").python_props
    texts = [MODEL] + [p.read_text() for p in sorted(FILECHECK_MLX.glob("roundtrip_*.mlir"))]
    for text in texts:
        module = parse(text)
        globals_ = [op for op in module.ops if isinstance(op, GlobalOp)]
        for func in [op for op in module.ops if isinstance(op, FuncOp)]:
            single = ModuleOp([g.clone() for g in globals_] + [func.clone()])
            payloads = {
                g.sym_name.data: np.zeros(g.value_type.get_shape(), _np_dtype(g))  # type: ignore[union-attr]
                for g in globals_
                if not isinstance(g.value, DenseIntOrFPElementsAttr)
            }
            info = read_program(serialize(single, payloads))
            ops = [o for o in list(function(single).body.block.ops)[:-1] if o.name != "mlx.weight"]
            for op, ins in zip(ops, info.instructions, strict=True):
                expected = python_props(op)
                assert set(ins.props) == set(expected), op.name
                for name, value in expected.items():
                    got = ins.props[name]
                    if isinstance(value, np.ndarray):
                        assert isinstance(got, np.ndarray) and got.dtype == value.dtype, op.name
                        np.testing.assert_array_equal(got, value)
                    else:
                        assert got == value and type(got) is type(value), (op.name, name)


def test_info_is_immutable(info: ProgramInfo) -> None:
    with pytest.raises(AttributeError):
        info.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        info.state["x"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        info.instructions[0].props["axis"] = 2  # type: ignore[index]


def test_reads_any_buffer(program: bytes) -> None:
    for data in (bytearray(program), memoryview(program), np.frombuffer(program, np.uint8)):
        assert read_program(data).slots == read_program(program).slots


# --------------------------------------------------------------------------- slots


def check_allocation(module: ModuleOp, info: ProgramInfo) -> None:
    """Replays the program over SSA values: each operand slot holds exactly the IR's
    operand when read, and outputs hold the returned values at the end."""
    func = function(module)
    holds: dict[int, SSAValue] = {}
    for slot, arg in zip(info.inputs, func.body.block.args, strict=True):
        holds[slot] = arg
    ops = list(func.body.block.ops)
    ret = ops.pop()
    for op in [o for o in ops if o.name == "mlx.weight"]:  # no instruction: its slot
        holds[info.global_slot(op.properties["global_name"].root_reference.data)] = op.results[0]
        ops.remove(op)
    assert len(ops) == len(info.instructions)
    never_freed = {s.index for s in info.slots if s.kind != "temporary"}
    for op, ins in zip(ops, info.instructions, strict=True):
        assert ins.op == op.name
        for slot, value in zip(ins.operands, op.operands, strict=True):
            assert holds.get(slot) is value or (
                info.slots[slot].kind == "constant" and holds.get(slot) is not None
            ), f"{op.name}: slot {slot} was clobbered"
        for slot, value in zip(ins.results, op.results, strict=True):
            holds[slot] = value
        assert not set(ins.free) & never_freed
        for slot in ins.free:
            del holds[slot]
    for slot, value in zip(info.outputs, ret.operands, strict=True):
        assert holds[slot] is value


def test_allocation_never_clobbers(info: ProgramInfo) -> None:
    check_allocation(parse(MODEL), info)


def test_temporaries_are_reused() -> None:
    chain = "\n".join(
        f"  %v{i + 1} = mlx.{'exp' if i % 2 else 'tanh'} %v{i} : tensor<4x?xf32> -> tensor<4x?xf32>"
        for i in range(40)
    )
    text = f"""
    func.func @forward(%v0: tensor<4x?xf32>) -> tensor<4x?xf32> {{
    {chain}
      func.return %v40 : tensor<4x?xf32>
    }}
    """
    module = parse(text)
    info = read_program(serialize(module))
    temporaries = [s for s in info.slots if s.kind == "temporary"]
    assert len(temporaries) == 2 < len(info.instructions)
    check_allocation(module, info)
    assert info.instructions[0].free == ()  # the input is never freed
    assert all(ins.free for ins in info.instructions[1:])


def test_dead_values_are_freed_and_outputs_are_not(info: ProgramInfo) -> None:
    freed = {s for ins in info.instructions for s in ins.free}
    by_name = {ins.result_names[0]: ins for ins in info.instructions if ins.result_names}
    assert info.global_slot("lifted_tensor_0") not in freed  # a constant slot
    # %n3 dies at %r, its last use
    assert by_name["n3"].results[0] in by_name["r"].free
    # a dead result is freed right after its definition
    assert info.global_slot("mask") not in freed  # constant slot: never freed
    # outputs are never freed after they are defined
    for slot in info.outputs:
        assert not any(slot in ins.free for ins in info.instructions if slot in ins.results)


@pytest.mark.parametrize("seed", range(12))
def test_random_programs_allocate_safely(seed: int) -> None:
    """Random DAGs of elementwise ops over a few types: values used far apart, used
    twice by one op, returned, returned twice, or dead."""
    rng = random.Random(seed)
    types = ["tensor<2x?xf32>", "tensor<2x?xf32>", "tensor<3xf16>", "tensor<?xi64>"]
    args = [f"%a{i}" for i in range(len(types))]
    values: dict[str, list[str]] = {t: [] for t in set(types)}
    for name, t in zip(args, types, strict=True):
        values[t].append(name)
    lines = []
    for i in range(rng.randint(5, 60)):
        t = rng.choice(types)
        pool = values[t]
        a, b = rng.choice(pool), rng.choice(pool)
        op = rng.choice(["add", "multiply", "maximum"])
        if rng.random() < 0.3:
            lines.append(f"  %x{i} = mlx.abs {a} : {t} -> {t}")
        else:
            lines.append(f"  %x{i} = mlx.{op} {a}, {b} : {t}, {t} -> {t}")
        pool.append(f"%x{i}")
    outs = [(rng.choice(values[t]), t) for t in rng.sample(types, 3)]
    outs.append(outs[0])
    text = (
        f"func.func @forward({', '.join(f'{a}: {t}' for a, t in zip(args, types, strict=True))})"
        f" -> ({', '.join(t for _, t in outs)}) {{\n"
        + "\n".join(lines)
        + f"\n  func.return {', '.join(v for v, _ in outs)} : {', '.join(t for _, t in outs)}\n}}\n"
    )
    module = parse(text)
    data = serialize(module)
    info = read_program(data)
    check_allocation(module, info)
    back = deserialize(data)
    assert serialize(back) == data


# --------------------------------------------------------------------------- errors


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
            "  %y = aten.exp %x : tensor<2xf32> -> tensor<2xf32>\n"
            "  func.return %y : tensor<2xf32>\n}",
            "cannot serialize 'aten.exp'",
        ),
        (
            "func.func @a() {\n  func.return\n}\nfunc.func @b() {\n  func.return\n}",
            "exactly one func.func",
        ),
        (
            "func.func @forward(%x: tensor<2xcomplex<f64>>) -> tensor<2xcomplex<f64>> {\n"
            "  func.return %x : tensor<2xcomplex<f64>>\n}",
            "not supported",
        ),
        (
            "func.func @forward(%x: f64) -> f64 {\n  func.return %x : f64\n}",
            "values of type f64 are not supported",
        ),
        (
            'mlx.global @w "parameter" : tensor<2xf32>\n'
            "func.func @forward() -> tensor<2xf32> {\n"
            "  %w = mlx.weight @w : tensor<2xf32>\n  func.return %w : tensor<2xf32>\n}",
            "global @w has no payload",
        ),
    ],
)
def test_unsupported_ir(text: str, message: str) -> None:
    with pytest.raises(ProgramError, match=re.escape(message)):
        serialize(parse(text))


def test_bad_payloads() -> None:
    text = (
        'mlx.global @w "parameter" : tensor<2xbf16>\n'
        "func.func @forward() -> tensor<2xbf16> {\n"
        "  %w = mlx.weight @w : tensor<2xbf16>\n  func.return %w : tensor<2xbf16>\n}"
    )
    with pytest.raises(ProgramError, match="element type float32 does not match"):
        serialize(parse(text), {"w": np.zeros(2, np.float32)})
    with pytest.raises(ProgramError, match=r"shape \[3\] does not match"):
        serialize(parse(text), {"w": torch.zeros(3, dtype=torch.bfloat16)})
    with pytest.raises(ProgramError, match="expected a torch.Tensor or numpy.ndarray"):
        serialize(parse(text), {"w": [1.0, 2.0]})
    assert read_program(serialize(parse(text), {"w": np.zeros(2, np.uint16)}))


def corrupt(program: bytes, old: bytes, new: bytes) -> bytes:
    assert len(old) == len(new) and program.count(old) == 1
    return program.replace(old, new)


def test_unknown_op_name(program: bytes) -> None:
    bad = corrupt(program, b"mlx.softmax", b"mlx.softmix")
    with pytest.raises(ProgramError, match=r"unknown op 'mlx.softmix'"):
        read_program(bad)
    with pytest.raises(ProgramError, match=r"unknown op 'mlx.softmix'"):
        deserialize(bad)


def test_bad_magic_and_version(program: bytes, monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(ProgramError, match="not an .mlxfb program"):
        read_program(program[:8] + b"MLXX" + program[12:])
    with pytest.raises(ProgramError, match="too short"):
        read_program(b"")
    with pytest.raises(ProgramError, match="expected the program's bytes"):
        read_program(42)  # type: ignore[arg-type]
    import mlxir.codegen.serializer as serializer_module

    monkeypatch.setattr(serializer_module, "SCHEMA_VERSION", SCHEMA_VERSION + 1)
    future = serialize(parse(MODEL), model_payloads())
    with pytest.raises(ProgramError, match=f"version {SCHEMA_VERSION + 1} is not supported"):
        read_program(future)


def test_trailing_bytes(program: bytes) -> None:
    with pytest.raises(ProgramError, match="trailing bytes"):
        read_program(program + b"\0")


def test_every_truncation_is_an_error(program: bytes) -> None:
    for size in range(len(program)):
        with pytest.raises(ProgramError):
            read_program(program[:size])


def test_bad_attribute_text(program: bytes) -> None:
    """An attribute kept as MLIR text is parsed where the IR is rebuilt (deserialize,
    and so a verifying load), not when the runtime reads the program: that takes xDSL,
    which running a program never imports, and no kernel reads such a property."""
    bad = corrupt(program, b"#arith.overflow<none>", b"#arith.overflow<nonx>")
    texts = [
        record.python
        for instruction in read_program(bad).instructions
        for record in instruction.typed_props.values()
        if record.kind == "TextValue"
    ]
    assert "#arith.overflow<nonx>" in texts
    with pytest.raises(ProgramError, match=r"'#arith.overflow<nonx>' does not parse: Expected"):
        deserialize(bad)


def test_invalid_ir_is_caught_by_deserialize() -> None:
    """A well-formed program whose IR does not verify reads, but does not deserialize."""
    text = """
    func.func @forward(%x: tensor<2xf32>) -> tensor<3xf32> {
      %y = mlx.exp %x : tensor<2xf32> -> tensor<3xf32>
      func.return %y : tensor<3xf32>
    }
    """
    with pytest.raises(ProgramError, match="cannot serialize invalid IR"):
        serialize(parse(text))
    data = serialize(parse(text), verify=False)
    assert read_program(data).instructions[0].op == "mlx.exp"
    with pytest.raises(
        ProgramError, match=r"not valid mlx IR: 'mlx.exp' op result shape \[3\] does not match"
    ):
        deserialize(data)


def _mutations(program: bytes, seed: int, count: int):
    rng = random.Random(seed)
    for _ in range(count):
        data = bytearray(program)
        match rng.randrange(4):
            case 0:  # bit flips
                for _ in range(rng.randint(1, 4)):
                    i = rng.randrange(len(data))
                    data[i] ^= 1 << rng.randrange(8)
            case 1:  # random bytes
                for _ in range(rng.randint(1, 8)):
                    data[rng.randrange(len(data))] = rng.randrange(256)
            case 2:  # a 32-bit word (offsets, lengths, counts) set to an extreme
                i = rng.randrange(len(data) - 4)
                data[i : i + 4] = rng.choice(
                    [0, 1, 0x7FFFFFFF, 0xFFFFFFFF, 0x80000000, rng.randrange(2**32)]
                ).to_bytes(4, "little")
            case _:  # a span copied over another
                i, j = rng.randrange(len(data)), rng.randrange(len(data))
                n = rng.randint(1, 32)
                data[i : i + n] = data[j : j + n]
                data = data[: len(program)]
        yield bytes(data)


@pytest.mark.parametrize("seed", range(4))
def test_corrupted_files_raise_only_program_error(program: bytes, seed: int) -> None:
    outcomes = {"valid": 0, "invalid": 0}
    for data in _mutations(program, seed, 1500):
        try:
            read_program(data)  # a flipped payload byte is still a valid program
            outcomes["valid"] += 1
        except ProgramError:  # ... and nothing but ProgramError may escape
            outcomes["invalid"] += 1
    assert outcomes["valid"] > 0 and outcomes["invalid"] > 0, outcomes


def test_corrupted_files_deserialize_or_raise_program_error(program: bytes) -> None:
    for data in _mutations(program, 99, 400):
        try:
            module = deserialize(data)
        except ProgramError:
            continue
        # A program that still loads serializes back to the same meaning.
        read_program(serialize(module))


def test_garbage_never_raises_anything_else() -> None:
    rng = random.Random(7)
    header = b"\x00\x01\x00\x00\x0c\x00\x00\x00MLXF"
    for _ in range(2000):
        n = rng.randrange(0, 300)
        body = bytes(rng.randrange(256) for _ in range(n))
        for data in (body, header + body):
            with pytest.raises(ProgramError):
                read_program(data)


def test_overlapping_vectors_do_not_blow_up(program: bytes) -> None:
    """Aliased tables cannot make loading quadratic: a budget bounds the work."""
    from mlxir.codegen.flatbuffer import Buffer

    buf = Buffer(memoryview(program))
    assert buf.budget == len(program) + 1024
    with pytest.raises(ProgramError, match="overlap"):
        buf.spend(len(program) + 2000, "test")


# --------------------------------------------------------------------------- generated code


def test_generated_layout_matches_the_schema() -> None:
    schema = fb_generate.parse_schema(fb_generate.SCHEMA.read_text())
    assert fb_generate.LAYOUT.read_text() == fb_generate.layout_source(schema), (
        "codegen/fb is out of date: run `make fbs`"
    )


def test_flatc_bindings_match_the_layout() -> None:
    """Each generated accessor reads the vtable slot the layout says (4 + 2 * slot)."""
    from mlxir.codegen.fb import layout

    for table, fields in layout.TABLES.items():
        source = (fb_generate.FB_DIR / f"{table}.py").read_text()
        for name, (slot, *_rest) in fields.items():
            method = "".join(p[:1].upper() + p[1:] for p in name.split("_"))
            match = re.search(rf"def {method}\(self(?:, j)?\):\n\s+o = .*?Offset\((\d+)\)", source)
            assert match, f"{table}.{method}"
            assert int(match.group(1)) == 4 + 2 * slot, f"{table}.{name}"


def test_flatc_bindings_read_what_serialize_wrote(program: bytes, info: ProgramInfo) -> None:
    from mlxir.codegen.fb.Program import Program

    root = Program.GetRootAs(program, 4)
    assert Program.ProgramBufferHasIdentifier(program, 0, size_prefixed=True)
    assert root.Version() == SCHEMA_VERSION
    assert root.SlotsLength() == len(info.slots)
    assert root.InstructionsLength() == len(info.instructions)
    assert [root.OpNames(i).decode() for i in range(root.OpNamesLength())] == list(info.op_names)
    for i, ins in enumerate(info.instructions):
        fb_ins = root.Instructions(i)
        assert tuple(fb_ins.Operands(j) for j in range(fb_ins.OperandsLength())) == ins.operands
        assert tuple(fb_ins.Results(j) for j in range(fb_ins.ResultsLength())) == ins.results
    assert tuple(root.Inputs(i) for i in range(root.InputsLength())) == info.inputs


def test_generate_check_passes() -> None:
    assert fb_generate.main(["--check"]) == 0


# --------------------------------------------------------------------------- mlx-opt


def test_mlx_opt_writes_and_reads_programs(tmp_path: Path, program: bytes) -> None:
    source = tmp_path / "model.mlir"
    text = """
    mlx.global @w "parameter" : tensor<2xf32> = dense<[1.0, 2.0]> : tensor<2xf32>
    func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {
      %w = mlx.weight @w : tensor<2xf32>
      %y = mlx.add %x, %w : tensor<2xf32>, tensor<2xf32> -> tensor<2xf32>
      func.return %y : tensor<2xf32>
    }
    """
    source.write_text(text)
    out = tmp_path / "model.mlxfb"
    assert run([str(source), "-t", "mlx-fb", "-o", str(out)]) == 0
    data = out.read_bytes()
    assert data == serialize(parse(text))
    again = tmp_path / "again.mlxfb"
    assert run([str(out), "-t", "mlx-fb", "-o", str(again)]) == 0
    assert again.read_bytes() == data


def test_mlx_opt_reports_bad_programs(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.mlxfb"
    bad.write_bytes(b"not a program at all")
    assert run([str(bad)]) == 1
    err = capsys.readouterr().err
    assert "bad.mlxfb: not an .mlxfb program" in err and "Traceback" not in err
    unsupported = tmp_path / "aten.mlir"
    unsupported.write_text(
        "func.func @forward(%x: tensor<2xf32>) -> tensor<2xf32> {\n"
        "  %y = aten.exp %x : tensor<2xf32> -> tensor<2xf32>\n"
        "  func.return %y : tensor<2xf32>\n}"
    )
    out = tmp_path / "never.mlxfb"
    assert run([str(unsupported), "-t", "mlx-fb", "-o", str(out)]) == 1
    assert "cannot serialize 'aten.exp'" in capsys.readouterr().err
    assert not out.exists()


def test_mlx_opt_pipes_programs(tmp_path: Path, program: bytes) -> None:
    path = tmp_path / "model.mlxfb"
    path.write_bytes(program)
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "from mlxir.tools.mlx_opt import main; main()",
            str(path),
            "-t",
            "mlx-fb",
        ],
        capture_output=True,
        check=True,
    )
    assert result.stdout == program


def test_dtype_codes_are_the_schemas() -> None:
    """The core dtype table (`mlxir/dtypes.py`) repeats the schema's `DType` codes
    without importing the bindings: each must be the generated enum's."""
    from mlxir.codegen.fb.DType import DType as FbDType
    from mlxir.support import dtypes

    schema = {name: value for name, value in vars(FbDType).items() if not name.startswith("_")}
    by_name = {name.lower(): value for name, value in schema.items() if name != "Invalid"}
    assert {d.name: d.code for d in dtypes.DTYPES} == by_name


def test_the_op_rules_table_is_current() -> None:
    """The runtime reads `codegen/op_rules.py` instead of the dialects (no xDSL on the
    load path): it must say what the IRDL definitions say."""
    from mlxir.codegen.ops import OP_RULES_FILE, render_op_rules

    assert OP_RULES_FILE.read_text() == render_op_rules(), (
        "codegen/op_rules.py is stale: run `python -m mlxir.codegen.ops`"
    )


def test_the_runtime_spells_dynamic_as_xdsl_does() -> None:
    from mlxir.dialects.common import DYNAMIC
    from mlxir.evaluator import DYNAMIC as RUNTIME_DYNAMIC

    assert RUNTIME_DYNAMIC == DYNAMIC
