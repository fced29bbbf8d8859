"""`transform-interpreter`: a transform-dialect script that says which passes run
where, interpreted by xDSL's transform interpreter over mlxir's IR.

    mlx-opt model.mlir -p 'transform-interpreter{transform_file="only-decode.mlir"}'

The script is a `transform.named_sequence @__transform_main` (`entry_point` names
another) in `transform_file`, read with the transform dialect beside mlxir's. Its
`transform.apply_registered_pass` names any pass `-p` takes (mlxir's own, plugins
included), with its options.

What mlxir adds to xDSL's interpreter, for scripts on mlxir programs:
- `transform.apply_registered_pass` on `func.func` handles, not only modules: each
  function runs the pass alone (moved into a module of its own, with the `mlx.global`
  declarations it may read, and moved back), so one step of a program can be
  canonicalized and its others left as they are;
- `transform.structured.match` takes `op_attrs` (every attribute or property named
  must equal the given value), so a script picks a function by its `sym_name`.

Supported ops: xDSL's transform interpreter (`named_sequence`, `structured.match`
with `ops` and, here, `op_attrs`, `apply_registered_pass`, `get_parent_op`,
`get_producer_of_operand`, `get_consumers_of_result`, `get_defining_op`,
`get_result`, `merge_handles`, `split_handle`, `select`, `cast`, `yield`,
`param.constant`, `include`); refused with one line naming the op: the tiling ops
(`structured.tile_using_for`/`forall` act on `linalg`, not on mlxir's tensor ops),
`structured.match`'s `interface` and type filters, and a pass applied to a handle
of anything but modules and functions. docs/transform-scripts.md has an example.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from xdsl.context import Context
from xdsl.dialects import builtin, func, transform
from xdsl.interpreter import Interpreter, PythonValues, impl, register_impls
from xdsl.interpreters.transform import OperationHandle, TransformFunctions
from xdsl.ir import Attribute, Operation
from xdsl.passes import ModulePass, PassPipeline
from xdsl.utils.exceptions import InterpretationError, PassFailedException


@register_impls
class MlxirTransformFunctions(TransformFunctions):
    """xDSL's transform interpreter, with functions as pass targets and `op_attrs`."""

    @impl(transform.MatchOp)
    def run_match_op(self, interpreter: Interpreter, op: transform.MatchOp, args: PythonValues) -> PythonValues:
        wanted = op.op_attrs
        # xDSL's own implementation, through its `impl` wrapper (which returns the values
        # with a successor).
        if wanted is None:
            return super().run_match_op(interpreter, op, args).values
        stripped = transform.MatchOp.create(
            operands=list(op.operands),
            result_types=[r.type for r in op.results],
            properties={k: v for k, v in op.properties.items() if k != "op_attrs"},
        )
        (matched,) = super().run_match_op(interpreter, stripped, args).values
        assert isinstance(matched, OperationHandle)
        candidates: tuple[Operation, ...] = cast(tuple[Operation, ...], matched.ops)  # pyright: ignore[reportUnknownMemberType] (OperationHandle is generic in its ops)
        kept = tuple(candidate for candidate in candidates if _has_attributes(candidate, dict(wanted.data)))
        return (OperationHandle(*kept),)

    @impl(transform.ApplyRegisteredPassOp)
    def run_apply_registered_pass_op(
        self, interpreter: Interpreter, op: transform.ApplyRegisteredPassOp, args: PythonValues
    ) -> PythonValues:
        (targets,) = args
        assert isinstance(targets, OperationHandle)
        spec = op.pass_name.data
        options: dict[str, Attribute] = dict(op.options.data)
        if options:
            spec += "{" + " ".join(f"{k}={_option(v)}" for k, v in options.items()) + "}"
        pipeline = PassPipeline.parse_spec(self.passes, spec)
        for target in cast(tuple[Operation, ...], targets.ops):  # pyright: ignore[reportUnknownMemberType] (generic in its ops)
            if isinstance(target, builtin.ModuleOp):
                pipeline.apply(self.ctx, target)
            elif isinstance(target, func.FuncOp):
                _apply_to_function(pipeline, self.ctx, target)
            else:
                raise InterpretationError(
                    f"transform.apply_registered_pass: '{spec}' on a {target.name}: "
                    "mlxir applies passes to builtin.module and func.func handles only"
                )
        return (cast(Any, targets),)


def _has_attributes(op: Operation, wanted: dict[str, Attribute]) -> bool:
    return all(op.attributes.get(name, op.properties.get(name)) == value for name, value in wanted.items())


def _option(value: Any) -> str:
    if isinstance(value, builtin.StringAttr):
        return f'"{value.data}"'
    if isinstance(value, builtin.IntegerAttr):
        number: int = value.value.data
        boolean = cast(Attribute, value.type) == builtin.i1  # pyright: ignore[reportUnknownMemberType] (generic in its type)
        return ("true" if number else "false") if boolean else str(number)
    if value == builtin.UnitAttr():
        return "true"
    return str(value)


def _apply_to_function(pipeline: PassPipeline, ctx: Context, function: func.FuncOp) -> None:
    """Runs `pipeline` on `function` alone: in a module of its own beside copies of the
    module's symbol declarations it may read (`mlx.global`s), then put back where it
    was. The copies are dropped; a pass that changed a global is refused."""
    from mlxir.dialects import mlx

    parent = function.parent_block()
    if parent is None:
        raise InterpretationError("transform.apply_registered_pass: a function outside any module")
    anchor = function.next_op
    globals_ = [g for g in parent.ops if isinstance(g, mlx.GlobalOp)]
    copies = [g.clone() for g in globals_]
    function.detach()
    scratch = builtin.ModuleOp([*copies, function])
    try:
        pipeline.apply(ctx, scratch)
    finally:
        function.detach()
        if anchor is None:
            parent.add_op(function)
        else:
            parent.insert_op_before(function, anchor)
    if [str(c) for c in copies] != [str(g) for g in globals_]:
        raise InterpretationError(
            "transform.apply_registered_pass: a pass applied to one function changed the module's globals"
        )


@dataclass(frozen=True)
class TransformInterpreterPass(ModulePass):
    """Runs a transform script (`transform_file`) that says which passes apply where."""

    name = "transform-interpreter"

    transform_file: str | None = None
    entry_point: str = "__transform_main"

    def apply(self, ctx: Context, op: builtin.ModuleOp) -> None:
        from mlxir.conversions.registry import registered_passes

        if self.transform_file is None:
            raise PassFailedException("transform-interpreter: give the script as transform_file=\"path.mlir\"")
        script = _read_script(Path(self.transform_file))
        entry = next(
            (
                s
                for s in script.walk()
                if isinstance(s, transform.NamedSequenceOp) and s.sym_name.data == self.entry_point
            ),
            None,
        )
        if entry is None:
            raise PassFailedException(
                f"transform-interpreter: {self.transform_file} has no transform.named_sequence @{self.entry_point}"
            )
        interpreter = Interpreter(script)
        interpreter.register_implementations(MlxirTransformFunctions(ctx, registered_passes()))
        try:
            interpreter.call_op(entry, (OperationHandle(op),))
        except InterpretationError as error:
            lines = str(error).strip().splitlines()
            raise PassFailedException(f"transform-interpreter: {lines[-1] if lines else error}") from None


def _read_script(path: Path) -> builtin.ModuleOp:
    from mlxir.dialects.context import parse_mlir_file

    if not path.is_file():
        raise PassFailedException(f"transform-interpreter: no transform script '{path}'")
    try:
        return parse_mlir_file(path, transform.Transform)
    except ValueError as error:
        raise PassFailedException(f"transform-interpreter: {error}") from None
