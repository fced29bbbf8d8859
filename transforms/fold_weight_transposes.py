"""`fold-weight-transposes`: a weight read only through one transpose stored
transposed at compile time. A pass of its own, not in `optimize-mlx` (`catalog.py`
says why)."""

from __future__ import annotations

from typing import cast

from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern, op_type_rewrite_pattern
from xdsl.rewriter import InsertPoint

from mlxir.dialects import mlx
from mlxir.dialects.common import ints
from mlxir.dialects.weights import array_of, dense_attr
from mlxir.support import dtypes
from mlxir.transforms.constant_weights import new_read, reads_of, weight_global


class FoldWeightTranspose(RewritePattern):
    """`transpose(weight @w)` → `weight @w'`, where `@w`'s value in the IR is transposed
    at compile time, when every read of `@w` is transposed the same way (the `linear`
    lowering's `w.T`). A global without a value in the IR is left alone."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: mlx.TransposeOp, rewriter: PatternRewriter) -> None:
        weight, target = op.input.owner, weight_global(op.input)
        if not isinstance(weight, mlx.WeightOp) or target is None:
            return
        perm = list(ints(op.axes))
        reads = reads_of(target)
        if weight not in reads:
            return
        for read in reads:
            users = [use.operation for use in read.result.uses]
            if not users or not all(
                isinstance(u, mlx.TransposeOp) and list(ints(u.axes)) == perm for u in users
            ):
                return
        new_type = op.result.type
        transposed = array_of(cast(DenseIntOrFPElementsAttr, target.value)).transpose(perm)
        dtype = dtypes.of_ir(new_type.get_element_type())
        assert dtype is not None  # the global's value had this element type
        folded = mlx.GlobalOp(target.sym_name.data, new_type, target.kind.data)
        folded.properties["value"] = dense_attr(transposed, dtype, tuple(new_type.get_shape()))
        folded.attributes.update(target.attributes)
        folded.location = target.location
        module = cast(ModuleOp, target.parent_op())  # reads_of found reads in it
        rewriter.replace(target, folded, [])
        for read in reads:
            replacement = new_read(target.sym_name.data, new_type, module)
            replacement.location = read.location
            rewriter.insert(replacement, InsertPoint.before(read))
            for use in list(read.result.uses):
                rewriter.replace(use.operation, [], [replacement.results[0]])
            rewriter.erase(read)
