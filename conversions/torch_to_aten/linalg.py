"""Linear algebra and windows: matmul, mm, bmm, addmm, linear, convolution, pooling, and
the inverse, determinant and solve of square matrices."""

from __future__ import annotations

import operator
from collections.abc import Sequence
from typing import Any, cast

import torch
from torch.fx import Node
from xdsl.dialects.builtin import TensorType
from xdsl.ir import Operation, SSAValue
from xdsl.irdl import IRDLOperation

from mlxir.conversions.torch_to_aten.core import (
    Handler,
    ImportError_,
    ImportState,
    arguments_of,
    describe_location,
    f64_attr,
    first_value,
    has_several_results,
    i64_attr,
    packet_name,
    props,
    refuse,
    result_types,
    tensor_type_of,
    torch_overload,
    type_of_node,
    unit_attr,
)
from mlxir.conversions.torch_to_aten.nn import max_pool_indices
from mlxir.dialects import aten
from mlxir.dialects.common import int_array


def _product(op_cls: type[IRDLOperation], other: str) -> Handler:
    """`op(self, other)`: a matrix product, its right operand named `other` in the schema."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        return op_cls.build(
            operands=[state.value(args["self"]), state.value(args[other])],
            result_types=[type_of_node(node)],
        )

    return handle


def _addmm(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    beta, alpha = args["beta"], args["alpha"]
    return aten.AddmmOp.build(
        operands=[state.value(args[name]) for name in ("self", "mat1", "mat2")],
        result_types=[type_of_node(node)],
        properties=props(
            beta=f64_attr(beta) if beta != 1 else None, alpha=f64_attr(alpha) if alpha != 1 else None
        ),
    )


def _linear(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    operands: list[SSAValue | list[SSAValue]] = [
        state.value(args["input"]),
        state.value(args["weight"]),
        state.optional_value(args["bias"]),
    ]
    return aten.LinearOp.build(operands=operands, result_types=[type_of_node(node)])


def _convolution(state: ImportState, node: Node) -> Operation:
    args = arguments_of(node)
    output_padding = args["output_padding"]
    return aten.ConvolutionOp.build(
        operands=[
            state.value(args["input"]),
            state.value(args["weight"]),
            state.optional_value(args["bias"]),
        ],
        result_types=[type_of_node(node)],
        properties=props(
            stride=int_array(args["stride"]),
            padding=int_array(args["padding"]),
            dilation=int_array(args["dilation"]),
            output_padding=int_array(output_padding) if any(output_padding) else None,
            transposed=unit_attr(args["transposed"]),
            groups=i64_attr(args["groups"]),
        ),
    )


def _window(values: int | Sequence[int] | None, default: Sequence[int], n: int) -> list[int]:
    """A pooling list argument: an int stands for `n` equal entries; empty is `default`
    (`stride=[]` is the kernel size)."""
    if values is None or (isinstance(values, list | tuple) and not values):
        return list(default)
    if isinstance(values, int):
        return [values] * n
    return list(values)


def _max_pool(op_cls: type[IRDLOperation], n: int) -> Handler:
    """`max_poolNd(self, kernel_size, stride=[], padding=0, dilation=1, ceil_mode=False)`
    and its `_with_indices` form, whose indices `nn.max_pool_indices` computes."""

    def handle(state: ImportState, node: Node) -> Operation | list[SSAValue]:
        args = arguments_of(node)
        kernel = _window(args["kernel_size"], [], n)
        op = op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[tensor_type_of(first_value(node))],
            properties=props(
                kernel_size=int_array(kernel),
                stride=int_array(_window(args["stride"], kernel, n)),
                padding=int_array(_window(args["padding"], [0] * n, n)),
                dilation=int_array(_window(args["dilation"], [1] * n, n)),
                ceil_mode=unit_attr(args["ceil_mode"]),
            ),
        )
        if has_several_results(node):  # max_poolNd_with_indices
            return [state.insert(op).results[0], max_pool_indices(state, node, n)]
        return op

    return handle


def _avg_pool(op_cls: type[IRDLOperation], n: int) -> Handler:
    """`avg_poolNd(self, kernel_size, stride=[], padding=0, ceil_mode=False,
    count_include_pad=True, divisor_override=None)`."""

    def handle(state: ImportState, node: Node) -> Operation:
        args = arguments_of(node)
        kernel = _window(args["kernel_size"], [], n)
        divisor = args["divisor_override"]
        return op_cls.build(
            operands=[state.value(args["self"])],
            result_types=[type_of_node(node)],
            properties=props(
                kernel_size=int_array(kernel),
                stride=int_array(_window(args["stride"], kernel, n)),
                padding=int_array(_window(args["padding"], [0] * n, n)),
                ceil_mode=unit_attr(args["ceil_mode"]),
                count_include_pad=unit_attr(args["count_include_pad"]),
                divisor_override=i64_attr(divisor) if divisor is not None else None,
            ),
        )

    return handle


CHECKED_BY_MLX = {"aten.linalg_inv_ex", "aten._linalg_solve_ex"}
"""Factorizations whose MLX kernel fails the run where LAPACK reports an error (a
singular matrix), so their `info` is zeros whenever the program returns, and
`_linalg_check_errors` on it is kept by MLX itself. (Not `mx.linalg.cholesky`: it
returns a matrix for one that is not positive definite.)"""


def _zero_info(state: ImportState, matrices: SSAValue, info_type: Any) -> SSAValue:
    """Zeros of `info_type` (int32, one per matrix of `matrices`), shaped by a sum over
    each matrix (which empty matrices have too)."""
    matrices_type = cast(TensorType[Any], matrices.type)
    per_matrix = TensorType(matrices_type.get_element_type(), matrices_type.get_shape()[:-2])
    sum_op = cast(type[aten.ReductionOp], aten.REDUCTION_OP_CLASSES["sum"])
    total = state.insert(sum_op(matrices, [-2, -1], False, per_matrix))
    return state.insert(aten.ZerosLikeOp.build(operands=[total.results[0]], result_types=[info_type])).results[0]


def _linalg_inv_ex(state: ImportState, node: Node) -> list[SSAValue]:
    """`linalg_inv_ex(A, check_errors)` -> (inverse, info); see `CHECKED_BY_MLX`."""
    args = arguments_of(node)
    inverse_type, info_type = result_types(node)
    inverse = state.insert(
        aten.LinalgInvOp.build(operands=[state.value(args["A"])], result_types=[inverse_type])
    ).results[0]
    return [inverse, _zero_info(state, inverse, info_type)]


def _linalg_det(state: ImportState, node: Node) -> list[SSAValue]:
    """`_linalg_det(A)` -> (det, LU, pivots): the determinant (the LU factors are not
    supported where used)."""
    args = arguments_of(node)
    op = aten.LinalgDetOp.build(operands=[state.value(args["A"])], result_types=result_types(node)[:1])
    return state.inserted_results(op)


def _linalg_slogdet(state: ImportState, node: Node) -> list[SSAValue]:
    """`_linalg_slogdet(A)` -> (sign, logabsdet, LU, pivots): the first two."""
    args = arguments_of(node)
    op = aten.LinalgSlogdetOp.build(operands=[state.value(args["A"])], result_types=result_types(node)[:2])
    return state.inserted_results(op)


def _linalg_solve_ex(state: ImportState, node: Node) -> list[SSAValue | None]:
    """`_linalg_solve_ex(A, B, left, check_errors)` -> (result, LU, pivots, info): the
    solution and zeros for `info` (see `CHECKED_BY_MLX`); the LU factors are not
    supported where used."""
    args = arguments_of(node)
    a = state.value(args["A"])
    result_type, _, _, info_type = result_types(node)
    (solution,) = state.inserted_results(
        aten.LinalgSolveOp.build(
            operands=[a, state.value(args["B"])],
            result_types=[result_type],
            properties=props(right=unit_attr(not args["left"])),
        )
    )
    return [solution, None, None, _zero_info(state, a, info_type)]


def _linalg_check_errors(state: ImportState, node: Node) -> list[SSAValue]:
    """`_linalg_check_errors(info, api_name, is_matrix)`: nothing to compute where the
    factorization's own kernel fails the run (`CHECKED_BY_MLX`); refused elsewhere,
    since the check would be lost."""
    info = arguments_of(node)["info"]
    source = info.args[0] if isinstance(info, Node) and info.target is operator.getitem else None
    overload = torch_overload(source.target) if isinstance(source, Node) else None
    if overload is None or packet_name(overload) not in CHECKED_BY_MLX:
        raise ImportError_(
            f"{describe_location(node)}: the error check of {getattr(source, 'target', info)} is not supported: "
            "MLX would not fail where torch raises"
        )
    return []


def _linalg_solve_triangular(state: ImportState, node: Node) -> Operation:
    """`linalg_solve_triangular(self, B, upper, left, unitriangular)`."""
    args = arguments_of(node)
    return aten.LinalgSolveTriangularOp.build(
        operands=[state.value(args["self"]), state.value(args["B"])],
        result_types=[type_of_node(node)],
        properties=props(
            upper=unit_attr(args["upper"]),
            right=unit_attr(not args["left"]),
            unitriangular=unit_attr(args["unitriangular"]),
        ),
    )


def _cholesky_inverse(state: ImportState, node: Node) -> Operation:
    """`cholesky_inverse(self, upper)`."""
    args = arguments_of(node)
    return aten.CholeskyInverseOp.build(
        operands=[state.value(args["self"])],
        result_types=[type_of_node(node)],
        properties=props(upper=unit_attr(args["upper"])),
    )


def _used_results(node: Node) -> set[int]:
    """The indices of the results of `node` (one with several) the program reads."""
    return {
        cast(int, user.args[1]) for user in node.users if user.target is operator.getitem and user.users
    }


NOT_FAILING = "MLX would not fail where torch raises (a matrix that is not positive definite)"
"""Why the Cholesky checks are refused: `mx.linalg.cholesky` returns a matrix for any input."""


def _linalg_cholesky_ex(state: ImportState, node: Node) -> list[SSAValue]:
    """`linalg_cholesky_ex(self, upper, check_errors)` -> (L, info); `info` is computed
    from L (see `aten.LinalgCholeskyExOp`), since MLX reports no failure; for the same
    reason `check_errors` is refused."""
    args = arguments_of(node)
    if args["check_errors"]:
        raise refuse(node, f"with check_errors=True is not supported: {NOT_FAILING}")
    op = aten.LinalgCholeskyExOp.build(
        operands=[state.value(args["self"])],
        result_types=result_types(node),
        properties=props(upper=unit_attr(args["upper"])),
    )
    return state.inserted_results(op)


def _linalg_lu_factor_ex(state: ImportState, node: Node) -> list[SSAValue]:
    """`linalg_lu_factor_ex(A, pivot, check_errors)` -> (LU, pivots, info); `info` is
    computed from U's diagonal (see `aten.LinalgLuFactorExOp`). Without pivoting torch's
    CPU kernel raises, and `check_errors` would fail nowhere in MLX: both refused."""
    args = arguments_of(node)
    if not args["pivot"]:
        raise refuse(node, "with pivot=False is not supported (nor by torch on the CPU)")
    if args["check_errors"]:
        raise refuse(node, "with check_errors=True is not supported: MLX would not fail where torch raises")
    op = aten.LinalgLuFactorExOp.build(operands=[state.value(args["A"])], result_types=result_types(node))
    return state.inserted_results(op)


def _linalg_qr(state: ImportState, node: Node) -> list[SSAValue | None]:
    """`linalg_qr(A, mode)` -> (Q, R); `mode="r"` leaves Q empty in torch, not
    supported where read."""
    args = arguments_of(node)
    mode = args["mode"]
    if mode not in ("reduced", "complete", "r"):
        raise refuse(node, f"with mode={mode!r} is not supported")
    a = state.value(args["A"])
    q_type, r_type = result_types(node)
    if mode == "r":  # torch's Q is empty: the op's is the Q of the reduced factorization
        a_type, r_shape = cast(TensorType[Any], a.type), cast(TensorType[Any], r_type).get_shape()
        q_type = TensorType(a_type.get_element_type(), [*a_type.get_shape()[:-1], r_shape[-2]])
    q, r = state.inserted_results(
        aten.LinalgQrOp.build(
            operands=[a],
            result_types=[q_type, r_type],
            properties=props(complete=unit_attr(mode == "complete")),
        )
    )
    return [None if mode == "r" else q, r]


SIGN_FREE = (
    "is supported for its {values} only: MLX's and torch's LAPACK builds may choose the "
    "{vectors} with different signs (products free of the signs, such as pinv, are supported)"
)
"""Why singular vectors and eigenvectors are refused where read."""


def _linalg_svd(state: ImportState, node: Node) -> list[SSAValue | None]:
    """`_linalg_svd(A, full_matrices, compute_uv, driver)` -> (U, S, Vh): the singular
    values; a program that reads U or Vh is refused (see `SIGN_FREE`)."""
    args = arguments_of(node)
    if _used_results(node) & {0, 2}:
        raise refuse(node, SIGN_FREE.format(values="singular values", vectors="singular vectors (U, Vh)"))
    s_type = result_types(node)[1]
    op = aten.LinalgSvdvalsOp.build(operands=[state.value(args["A"])], result_types=[s_type])
    return [None, *state.inserted_results(op), None]


def _linalg_eigh(state: ImportState, node: Node) -> list[SSAValue | None]:
    """`_linalg_eigh(A, UPLO, compute_v)` -> (eigenvalues, eigenvectors): the
    eigenvalues; a program that reads the eigenvectors is refused (see `SIGN_FREE`)."""
    args = arguments_of(node)
    if 1 in _used_results(node):
        raise refuse(node, SIGN_FREE.format(values="eigenvalues", vectors="eigenvectors"))
    op = aten.LinalgEigvalshOp.build(
        operands=[state.value(args["A"])],
        result_types=result_types(node)[:1],
        properties=props(upper=unit_attr(args["UPLO"] == "U")),
    )
    return [*state.inserted_results(op), None]


def _tolerance(node: Node, value: Any, what: str) -> float | None:
    """A pinv tolerance: None (torch's default), a float, or a 0-d tensor the program
    fills with a constant (what torch makes of a float); any other tensor is refused."""
    if value is None or isinstance(value, int | float):
        return None if value is None else float(value)
    if isinstance(value, Node) and torch_overload(value.target) is torch.ops.aten.full.default:
        size, fill = value.args[:2]
        if not size and isinstance(fill, int | float):
            return float(fill)
    raise refuse(node, f"with a computed {what} tensor is not supported (only a constant)")


def _linalg_pinv(state: ImportState, node: Node) -> Operation:
    """`linalg_pinv(self, atol, rtol, hermitian)`, and its `rcond` forms (atol 0,
    rtol rcond); tolerances must be constants."""
    args = arguments_of(node)
    if "rcond" in args:
        atol, rtol = 0.0, _tolerance(node, args["rcond"], "rcond")
    else:
        atol, rtol = _tolerance(node, args["atol"], "atol"), _tolerance(node, args["rtol"], "rtol")
    return aten.LinalgPinvOp.build(
        operands=[state.value(args["self"])],
        result_types=[type_of_node(node)],
        properties=props(
            atol=f64_attr(atol) if atol is not None else None,
            rtol=f64_attr(rtol) if rtol is not None else None,
            hermitian=unit_attr(args["hermitian"]),
        ),
    )


LINALG_IMPORTERS: dict[str, Handler] = {
    "aten.matmul": _product(aten.MatmulOp, "other"),
    "aten.mm": _product(aten.MmOp, "mat2"),
    "aten.bmm": _product(aten.BmmOp, "mat2"),
    "aten.addmm": _addmm,
    "aten.linear": _linear,
    "aten.convolution": _convolution,
    "aten.max_pool2d": _max_pool(aten.MaxPool2dOp, 2),
    "aten.max_pool2d_with_indices": _max_pool(aten.MaxPool2dOp, 2),
    "aten.max_pool3d": _max_pool(aten.MaxPool3dOp, 3),
    "aten.max_pool3d_with_indices": _max_pool(aten.MaxPool3dOp, 3),
    "aten.avg_pool2d": _avg_pool(aten.AvgPool2dOp, 2),
    "aten.avg_pool3d": _avg_pool(aten.AvgPool3dOp, 3),
    "aten.linalg_inv_ex": _linalg_inv_ex,
    "aten._linalg_det": _linalg_det,
    "aten._linalg_slogdet": _linalg_slogdet,
    "aten._linalg_solve_ex": _linalg_solve_ex,
    "aten._linalg_check_errors": _linalg_check_errors,
    "aten.linalg_solve_triangular": _linalg_solve_triangular,
    "aten.cholesky_inverse": _cholesky_inverse,
    "aten.linalg_cholesky_ex": _linalg_cholesky_ex,
    "aten.linalg_lu_factor_ex": _linalg_lu_factor_ex,
    "aten.linalg_qr": _linalg_qr,
    "aten._linalg_svd": _linalg_svd,
    "aten._linalg_eigh": _linalg_eigh,
    "aten.linalg_pinv": _linalg_pinv,
}
