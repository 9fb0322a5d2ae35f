"""The few ``torch._C`` switches that scripts written for PyTorch's JIT call, mapped onto toolkit's settings.

Seed code enables CPU fusion with ``torch._C._jit_override_can_fuse_on_cpu(True)``;
with toolkit that line keeps working (fusion on the CPU is what toolkit does by
default). The other switches answer as PyTorch's do.
"""

from __future__ import annotations

from .jit.runtime.executor import SETTINGS, set_fusion_enabled


def _settings():
    return SETTINGS


def _jit_override_can_fuse_on_cpu(enabled: bool) -> None:
    """Allow (or forbid) fusing on the CPU: the same switch as ``toolkit.jit.set_fusion_enabled``."""
    set_fusion_enabled(bool(enabled))


def _jit_can_fuse_on_cpu() -> bool:
    return _settings().fusion_enabled


def _jit_override_can_fuse_on_gpu(enabled: bool) -> None:
    """Accepted for compatibility: GPU fusion follows the same switch as the CPU's."""
    _jit_override_can_fuse_on_cpu(enabled)


def _jit_can_fuse_on_gpu() -> bool:
    return _settings().fusion_enabled


def _jit_set_texpr_fuser_enabled(enabled: bool) -> None:
    _jit_override_can_fuse_on_cpu(enabled)


def _jit_texpr_fuser_enabled() -> bool:
    return _settings().fusion_enabled


def _jit_set_profiling_executor(enabled: bool) -> bool:
    """Always the profiling executor here; returns the previous setting (True), as PyTorch does."""
    return True


def _jit_set_profiling_mode(enabled: bool) -> bool:
    return True


def _get_graph_executor_optimize(optimize: bool | None = None) -> bool:
    return True
