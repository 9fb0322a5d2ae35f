"""``swap_in_optimizer_params_and_state``: run an optimizer on other parameters and state for a while (as
``torch.optim.swap_in_optimizer_params_and_state``), restoring its own on exit."""

from __future__ import annotations

import contextlib
from collections import defaultdict
from collections.abc import Iterator
from typing import Any

from toolkit.tensor import Tensor

from .optimizer import Optimizer

__all__ = ["swap_in_optimizer_params_and_state"]

_NAME = "swap_in_optimizer_params_and_state"


def _validate_state_field(state: Any) -> dict[Any, Any]:
    """``state`` must map packed parameter ids to per-parameter state dicts."""
    if not isinstance(state, dict):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be a dict mapping packed parameter ids "
                           f"to per-param state dicts, got {type(state).__name__}.")
    if any(isinstance(k, Tensor) for k in state):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style state keyed by packed parameter ids.")
    if any(isinstance(k, int) and not isinstance(v, dict) for k, v in state.items()):
        raise RuntimeError(f"{_NAME} requires per-parameter optimizer state entries to be dictionaries.")
    return state


def _validate_group_against_live(idx: int, group: dict[str, Any], swapin_group: Any) -> list[int]:
    """A swap-in group is a dict with the live group's keys and as many packed ids as it has params."""
    if not isinstance(swapin_group, dict):
        raise RuntimeError(f"{_NAME} requires each optimizer param group to be a dictionary.")
    ids = swapin_group.get("params")
    if not isinstance(ids, list) or not all(isinstance(pid, int) for pid in ids):
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param_groups[*]['params'] entries keyed "
                           "by packed parameter ids.")
    if len(group["params"]) != len(ids):
        raise RuntimeError(f"swapin_optim_state param group {idx} has a different number of params than the live "
                           "optimizer param group.")
    swapin_only = [k for k in swapin_group if k not in group]
    live_only = [k for k in group if k not in swapin_group]
    if swapin_only or live_only:
        raise RuntimeError(f"{_NAME} requires optimizer.state_dict()-style param group keys to exactly match the "
                           f"live optimizer group keys for group {idx}. Keys only in swap-in: {swapin_only}. Keys "
                           f"only in live: {live_only}.")
    return ids


def _prepare_swap_in(optimizer: Optimizer, swapin_parameters: dict[str, Tensor],
                     swapin_optim_state: dict[str, Any]) -> tuple[dict[Any, Any], list[tuple[dict, dict, list]]]:
    """Check the swap-in state against the live optimizer; pair each live group with its swap-in group and
    the tensors (taken in order from ``swapin_parameters``) that replace its params."""
    if not optimizer.state:
        raise RuntimeError(f"{_NAME} requires initialized optimizer state.")
    if not isinstance(swapin_optim_state, dict):
        raise RuntimeError(f"{_NAME} requires a DCP-style optimizer state_dict.")
    state = _validate_state_field(swapin_optim_state.get("state"))
    groups = swapin_optim_state.get("param_groups")
    if not isinstance(groups, list):
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['param_groups'] to be a list of param-group dicts, "
                           f"got {type(groups).__name__}.")
    if len(optimizer.param_groups) != len(groups):
        raise RuntimeError("swapin_optim_state has a different number of parameter groups than the live optimizer.")
    flat = list(swapin_parameters.values())
    offset = 0
    seen: set[int] = set()
    infos = []
    for idx, (group, swapin_group) in enumerate(zip(optimizer.param_groups, groups, strict=True)):
        ids = _validate_group_against_live(idx, group, swapin_group)
        seen.update(ids)
        if offset + len(ids) > len(flat):
            raise RuntimeError(f"{_NAME} requires the explicit parameter state to match optimizer.param_groups "
                               "ordering.")
        infos.append((group, swapin_group, flat[offset:offset + len(ids)]))
        offset += len(ids)
    extra = [k for k in state if k not in seen]
    if extra:
        raise RuntimeError(f"{_NAME} requires swapin_optim_state['state'] to be keyed only by packed parameter ids "
                           f"from param_groups[*]['params']; got extra keys {extra!r}.")
    return state, infos


@contextlib.contextmanager
def swap_in_optimizer_params_and_state(optimizer: Optimizer, swapin_parameters: dict[str, Tensor],
                                       swapin_optim_state: dict[str, Any]) -> Iterator[None]:
    """Inside the ``with`` block ``optimizer`` works on ``swapin_parameters`` (in the order of its own params)
    and on the ``state_dict()``-shaped ``swapin_optim_state``; on exit its own params, options and state return.

    In-place updates of the swap-in state tensors are visible in ``swapin_optim_state`` afterwards.

    Example::

        with toolkit.optim.swap_in_optimizer_params_and_state(opt, dict(model2.named_parameters()), sd):
            opt.step()
    """
    state, infos = _prepare_swap_in(optimizer, swapin_parameters, swapin_optim_state)
    original_state = optimizer.state
    snapshots = [dict(g) for g in optimizer.param_groups]
    try:
        swapin_state: defaultdict = defaultdict(dict)
        for live_group, swapin_group, params in infos:
            live_group["params"] = params
            for key, value in swapin_group.items():
                if key != "params":
                    live_group[key] = value
            for param, param_id in zip(params, swapin_group["params"], strict=True):
                swapin_state[param] = dict(state.get(param_id, {}))
        optimizer.state = swapin_state
        yield
    finally:
        for group, snapshot in zip(optimizer.param_groups, snapshots, strict=True):
            group.clear()
            group.update(snapshot)
        optimizer.state = original_state
