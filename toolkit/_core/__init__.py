"""Core metadata shared by every layer: dtypes, devices, shapes and storage."""
