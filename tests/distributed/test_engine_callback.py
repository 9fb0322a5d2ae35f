"""The autograd engine's final callbacks (``queue_callback``), which DDP uses to finish its all-reduces."""

from __future__ import annotations

import pytest
import torch

import toolkit
from toolkit.autograd.engine import ENGINE


def test_callback_runs_once_after_every_gradient_is_accumulated():
    seen = []
    for lib, engine in ((toolkit, ENGINE), (torch, torch.autograd.Variable._execution_engine)):
        a = lib.ones(3, requires_grad=True)
        b = lib.ones(3, requires_grad=True)
        log = []

        def hook(t, engine=engine, log=log, a=a, b=b):
            log.append("grad")
            if len(log) == 1:
                engine.queue_callback(lambda: log.append(("end", a.grad is not None and b.grad is not None)))

        a.register_post_accumulate_grad_hook(hook)
        b.register_post_accumulate_grad_hook(hook)
        (a * 2 + b).sum().backward()
        seen.append(log)
    assert seen[0] == seen[1] == ["grad", "grad", ("end", True)]


def test_callback_outside_backward():
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass."):
        ENGINE.queue_callback(lambda: None)
    with pytest.raises(RuntimeError, match="Final callbacks can only be installed during backward pass."):
        torch.autograd.Variable._execution_engine.queue_callback(lambda: None)
