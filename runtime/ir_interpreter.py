"""A small reference interpreter over mlx-level IR, for tests.

It walks a function's ops in order and runs each through the kernels the program
runtime uses, those of the backend of MLX's default device when it is built
(`runtime/backend.py`); `mlx.weight` reads a payload, `mlx.load_state` /
`mlx.store_state` read and write named state. Outputs (and the state written) are
evaluated once, at the end of the call.

    module = parse_module(text)
    outputs = run_module(module, payloads={"w": w}, inputs=[x, 3])

State semantics: a `mlx.load_state` sees the latest `mlx.store_state` to the same
global before it in the function (program order); the caller's `state` dict receives
every stored value when the call ends. A global's first value comes from `state`,
else from `payloads`, else from its inline `dense<...>` value.
"""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping, Sequence
from dataclasses import dataclass
from typing import Any, cast

import mlx.core as mx
from xdsl.dialects import func
from xdsl.dialects.builtin import DenseIntOrFPElementsAttr, ModuleOp, TensorType
from xdsl.ir import Attribute, Operation, SSAValue
from xdsl.parser import Parser

from mlxir.dialects import mlx as mlx_dialect
from mlxir.evaluator import Kernel
from mlxir.evaluator.arrays import element_type_to_mx, to_mx
from mlxir.evaluator.props import dense_to_numpy, python_props
from mlxir.runtime.backend import backend_for


def parse_module(text: str) -> ModuleOp:
    """Parses (and verifies) IR text with every dialect `mlx-opt` knows."""
    from mlxir.dialects.context import make_context

    module = Parser(make_context(), text).parse_module()
    module.verify()
    return module


def _dtype_of(value_type: Attribute) -> mx.Dtype | None:
    if isinstance(value_type, TensorType):
        return element_type_to_mx(cast(TensorType[Attribute], value_type).get_element_type())
    return None


@dataclass
class _Step:
    op: Operation
    kernel: Kernel | None
    global_name: str | None = None


class Program:
    """A function of an mlx-level module with its kernels built once (at load)."""

    def __init__(self, module: ModuleOp, payloads: Mapping[str, Any], function: str = "forward"):
        self.globals: dict[str, mlx_dialect.GlobalOp] = {
            op.sym_name.data: op for op in module.ops if isinstance(op, mlx_dialect.GlobalOp)
        }
        functions = [
            op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == function
        ]
        if not functions:
            raise ValueError(f"the module has no function @{function}")
        self.function = functions[0]
        self.payloads = payloads
        self._weights: dict[str, mx.array] = {}
        self.steps: list[_Step] = []
        backend = backend_for(mx.default_device())
        for op in self.function.body.block.ops:
            if isinstance(op, func.ReturnOp):
                break
            if isinstance(op, mlx_dialect.WeightOp | mlx_dialect.LoadStateOp | mlx_dialect.StoreStateOp):
                self.steps.append(_Step(op, None, op.global_name.root_reference.data))
                continue
            factory = backend.kernel_factory(op.name)
            if factory is None:
                raise NotImplementedError(f"no kernel for '{op.name}'")
            kernel = factory(python_props(op), [_dtype_of(r.type) for r in op.results])
            self.steps.append(_Step(op, kernel))

    def initial_value(self, name: str) -> mx.array:
        target = self.globals[name]
        dtype = element_type_to_mx(target.type.get_element_type())
        if name in self.payloads:
            value = to_mx(self.payloads[name], dtype)
        elif isinstance(target.value, DenseIntOrFPElementsAttr):
            value = to_mx(dense_to_numpy(target.value), dtype)
        else:
            raise KeyError(f"no payload for @{name}")
        expected = tuple(target.type.get_shape())
        if tuple(value.shape) != expected:
            raise ValueError(f"payload of @{name} has shape {value.shape}, expected {expected}")
        return value

    def __call__(
        self, inputs: Sequence[Any], state: MutableMapping[str, Any] | None = None
    ) -> list[Any]:
        args = self.function.args
        if len(inputs) != len(args):
            raise ValueError(f"@{self.function.sym_name.data} takes {len(args)} inputs, got {len(inputs)}")
        env: dict[SSAValue, Any] = {}
        for arg, value in zip(args, inputs):
            dtype = _dtype_of(arg.type)
            env[arg] = to_mx(value, dtype) if dtype is not None else value
        current: dict[str, Any] = {}
        stored: dict[str, mx.array] = {}
        for step in self.steps:
            op = step.op
            name = step.global_name
            if name is not None:
                if isinstance(op, mlx_dialect.StoreStateOp):
                    current[name] = stored[name] = env[op.value]
                    continue
                if isinstance(op, mlx_dialect.WeightOp):
                    if name not in self._weights:
                        self._weights[name] = self.initial_value(name)
                    value = self._weights[name]
                elif name in current:
                    value = current[name]
                elif state is not None and name in state:
                    dtype = element_type_to_mx(self.globals[name].type.get_element_type())
                    value = current[name] = to_mx(state[name], dtype)
                else:
                    value = current[name] = self.initial_value(name)
                env[op.results[0]] = value
                continue
            assert step.kernel is not None
            results = step.kernel([env[v] for v in op.operands])
            for result, value in zip(op.results, results, strict=True):
                env[result] = value
        returned = self.function.body.block.last_op
        assert isinstance(returned, func.ReturnOp)
        outputs = [env[v] for v in returned.operands]
        mx.eval(*[v for v in (*outputs, *stored.values()) if isinstance(v, mx.array)])  # pyright: ignore[reportUnknownMemberType] (mlx's stub leaves eval's *args unannotated)
        if state is not None:
            state.update(stored)
        return outputs


def run_module(
    module: ModuleOp,
    payloads: Mapping[str, Any],
    inputs: Sequence[Any],
    state: MutableMapping[str, Any] | None = None,
    function: str = "forward",
) -> list[Any]:
    """Runs `@function` (default `@forward`) of an mlx-level module once.

    `payloads` maps a global's name to its value (numpy array, torch tensor or
    `mx.array`); `inputs` are the function's arguments in order (arrays, or Python
    ints for `index` arguments); `state` (updated in place) holds mutable globals.
    Returns the function's results: evaluated `mx.array`s, and ints for `index`."""
    return Program(module, payloads, function)(inputs, state)
