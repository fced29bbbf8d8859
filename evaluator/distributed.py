"""The collectives: `mlx.all_sum`, `mlx.all_gather`, `mlx.send`, `mlx.recv`, over the
world group of `mx.distributed` (docs/distributed.md). The group is formed once, when
the first program with a collective loads: `mx.distributed.init()` joins the ranks a
launcher started (ring: `MLX_HOSTFILE` and `MLX_RANK`; MPI: `mpirun`'s environment)
and is a group of one otherwise, where every collective is the identity."""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import cast

import mlx.core as mx

from mlxir.evaluator.registry import Kernel, Props, ResultDtypes, int_of, kernel


@cache
def world_group() -> mx.distributed.Group:
    return mx.distributed.init()


@kernel("mlx.all_sum")
def _all_sum(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    group = world_group()
    return lambda operands: (mx.distributed.all_sum(operands[0], group=group),)


@kernel("mlx.all_gather")
def _all_gather(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    group = world_group()
    axis = int_of(props, "axis")
    ranks = int_of(props, "ranks")
    if group.size() != ranks:
        raise ValueError(f"it gathers over {ranks} ranks, and this group has {group.size()}")
    if ranks == 1:
        return lambda operands: (operands[0],)

    def run(operands: Sequence[mx.array]) -> tuple[mx.array]:
        x = operands[0]
        # all_gather stacks along axis 0: move the axis there and back.
        moved = mx.moveaxis(x, axis, 0)
        gathered = mx.distributed.all_gather(moved, group=group)
        return (mx.moveaxis(gathered, 0, axis),)

    return run


@kernel("mlx.send")
def _send(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    group = world_group()
    peer = int_of(props, "peer")
    if group.size() == 1:
        return lambda operands: (operands[0],)
    return lambda operands: (mx.distributed.send(operands[0], peer, group=group),)


@kernel("mlx.recv")
def _recv(props: Props, result_dtypes: ResultDtypes) -> Kernel:
    group = world_group()
    peer = int_of(props, "peer")
    if group.size() == 1:
        return lambda operands: (operands[0],)
    # The template is often a send's result, which nothing else reads: the dependency
    # makes the send run (first), or two ranks swapping arrays would wait forever.
    def run(operands: Sequence[mx.array]) -> tuple[mx.array]:
        received = mx.distributed.recv_like(operands[0], peer, group=group)
        return (cast(mx.array, mx.depends(received, operands[0])),)  # pyright: ignore[reportUnknownMemberType] (mlx.core's stub leaves depends' result unannotated)

    return run
