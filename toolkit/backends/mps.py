"""``toolkit.backends.mps``: Apple's Metal backend, which toolkit does not have (so device-picking code that
asks ``torch.backends.mps.is_available()`` falls through to CUDA or the CPU)."""

from __future__ import annotations


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False


def is_macos_or_newer(major: int, minor: int) -> bool:
    return False
