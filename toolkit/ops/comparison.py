"""Comparisons and logic: eq ne lt le gt ge, logical_*, isnan/isinf/isfinite, allclose, equal, bitwise ops."""
