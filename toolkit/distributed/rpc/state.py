"""The process's one RPC agent, between ``init_rpc`` and ``shutdown``."""

from __future__ import annotations

__all__ = ["current_agent", "set_current_agent", "agent_or_none"]

_agent = None


def current_agent():
    """The running agent; PyTorch's error when ``init_rpc`` has not run (or ``shutdown`` has)."""
    if _agent is None:
        raise RuntimeError("RPC has not been initialized. Call torch.distributed.rpc.init_rpc first.")
    return _agent


def agent_or_none():
    return _agent


def set_current_agent(agent) -> None:
    global _agent
    _agent = agent
