"""Module state for ensembling and ``vmap``: ``stack_module_state`` and ``replace_all_batch_norm_modules_``."""

from __future__ import annotations

from collections.abc import Sequence

from ..nn.modules.module import Module
from ..nn.modules.normalization import _BatchNorm
from ..ops import api
from ..tensor import Tensor

__all__ = ["stack_module_state", "replace_all_batch_norm_modules_"]


def _stacked_leaf(tensors: list[Tensor], name: str) -> Tensor:
    """The tensors stacked, as a new leaf that requires grad when all of them do."""
    if len({t.requires_grad for t in tensors}) > 1:
        raise RuntimeError(f"Expected {name} from each model to have the same .requires_grad")
    result = api.stack(tensors)
    return result.detach().requires_grad_() if tensors[0].requires_grad else result


def _stack(models: Sequence[Module], named: str) -> dict[str, Tensor]:
    dicts = [dict(getattr(m, named)()) for m in models]
    return {k: _stacked_leaf([d[k] for d in dicts], k) for k in dicts[0]}


def stack_module_state(models: Sequence[Module]) -> tuple[dict[str, Tensor], dict[str, Tensor]]:
    """``(params, buffers)``: each model's parameters and buffers stacked along a new leading dim.

    The stacked parameters are new leaves that require grad where the originals did, so an ensemble runs as
    ``vmap(lambda p, b, x: functional_call(base, (p, b), (x,)))(params, buffers, x)``.
    """
    if len(models) == 0:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if not (all(m.training for m in models) or all(not m.training for m in models)):
        raise RuntimeError("stack_module_state: Expected all models to have the same training/eval mode.")
    model0_typ = type(models[0])
    if not all(type(m) is model0_typ for m in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    return _stack(models, "named_parameters"), _stack(models, "named_buffers")


def replace_all_batch_norm_modules_(root: Module) -> Module:
    """Stop every batch norm in ``root`` from tracking running stats, in place: what ``vmap`` over a batch
    norm needs, as ``torch.func`` documents."""
    for m in root.modules():
        if isinstance(m, _BatchNorm) and m.track_running_stats:
            m.running_mean = None
            m.running_var = None
            m.num_batches_tracked = None
            m.track_running_stats = False
    return root
