"""Builds one distribution case in both frameworks (``toolkit.distributions`` and ``torch.distributions``)
from the shared numpy parameters of ``cases_a``."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import torch

import toolkit
import toolkit.distributions as tkd
from tests.distributions.cases_a import CASES

CASE_BY_ID = {case[0]: case for case in CASES}


def build(case: tuple, dtype: Any = np.float32, requires_grad: bool = False,
          params: dict | None = None) -> tuple[Any, Any, list, list]:
    """The case built by toolkit and by torch, with the parameter tensors each made (in order)."""
    _, make, p = case
    p = p if params is None else params
    tk_leaves: list = []
    th_leaves: list = []

    def tk_tensor(a: Any) -> toolkit.Tensor:
        t = toolkit.tensor(np.asarray(a, dtype), requires_grad=requires_grad)
        tk_leaves.append(t)
        return t

    def th_tensor(a: Any) -> torch.Tensor:
        t = torch.tensor(np.asarray(a, dtype), requires_grad=requires_grad)
        th_leaves.append(t)
        return t

    return make(tkd, tk_tensor, p), make(torch.distributions, th_tensor, p), tk_leaves, th_leaves


def rebuild_from(case: tuple, leaves: list) -> Any:
    """The toolkit distribution of ``case`` whose parameters are exactly ``leaves`` (for gradcheck)."""
    it = iter(leaves)
    take: Callable[[Any], Any] = lambda _a: next(it)  # noqa: E731
    return case[1](tkd, take, case[2])


def perturbed(params: dict) -> dict:
    """Other valid parameters of the same kind: probabilities stay in (0, 1), positive values scale, reals
    shift."""
    out = {}
    for k, v in params.items():
        v = np.asarray(v)
        if (v > 0).all() and (v < 1).all():
            out[k] = (v**1.5).astype(v.dtype)
        elif (v > 0).all():
            out[k] = (v * 1.3).astype(v.dtype)
        else:
            out[k] = (v + 0.3).astype(v.dtype)
    return out


def to_torch_value(x: Any) -> torch.Tensor:
    return torch.from_numpy(np.array(x.detach().numpy()))


def to_toolkit_value(x: torch.Tensor) -> toolkit.Tensor:
    return toolkit.from_numpy(x.detach().numpy().copy())
