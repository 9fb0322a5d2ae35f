"""Functional convolutions (the registry ops, plus PyTorch-signature wrappers where needed)."""

__all__: list = []
