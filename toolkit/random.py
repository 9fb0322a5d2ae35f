"""Seeding and generator state, as ``torch.random``: ``manual_seed``, ``get_rng_state``, ``fork_rng``...

The default generator is PyTorch's CPU Mersenne Twister, so::

    toolkit.manual_seed(0); toolkit.rand(3, 4)   # == torch.manual_seed(0); torch.rand(3, 4)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

from .ops._generator import Generator, default_generator

__all__ = ["Generator", "default_generator", "fork_rng", "get_rng_state", "initial_seed", "manual_seed", "seed",
           "set_rng_state", "thread_safe_generator"]


def manual_seed(seed) -> Generator:
    """Seed the default generator; returns it (``toolkit.manual_seed(0).initial_seed() == 0``)."""
    return default_generator.manual_seed(int(seed))


def seed() -> int:
    """Seed the default generator non-deterministically and return the seed."""
    return default_generator.seed()


def initial_seed() -> int:
    """The seed the default generator was last seeded with."""
    return default_generator.initial_seed()


def get_rng_state():
    """The default generator's state as a uint8 tensor (PyTorch's 5056-byte layout)."""
    return default_generator.get_state()


def set_rng_state(new_state) -> None:
    """Restore the default generator from ``get_rng_state()``."""
    default_generator.set_state(new_state)


@contextlib.contextmanager
def fork_rng(devices=None, enabled: bool = True, device_type: str = "cpu") -> Iterator[None]:
    """Run a block with the default generator's state saved before and restored after it."""
    if not enabled:
        yield
        return
    saved = default_generator.clone_state()
    try:
        yield
    finally:
        default_generator.set_state(saved._state_bytes())


def thread_safe_generator() -> Generator | None:
    """The generator of the calling DataLoader thread worker, or ``None`` (use the default generator).

    PyTorch's thread workers each own a generator; toolkit's DataLoader workers are processes (each with its own
    default generator, seeded per worker), so there is never a thread worker's generator and this answers ``None``,
    as PyTorch does in the main process and in process workers::

        toolkit.randint(0, 10, (5,), generator=toolkit.random.thread_safe_generator())
    """
    return None
