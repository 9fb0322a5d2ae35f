"""Device objects, spelled and compared as in PyTorch (``device('cuda:0')``)."""

from __future__ import annotations

_TYPES = ("cpu", "cuda", "meta")


class device:
    """Where a tensor's memory lives: ``cpu`` or ``cuda`` with an optional index."""

    __slots__ = ("type", "index")

    def __init__(self, type_or_str, index: int | None = None):
        if isinstance(type_or_str, device):
            self.type, self.index = type_or_str.type, type_or_str.index
            return
        if isinstance(type_or_str, int) and not isinstance(type_or_str, bool):
            self.type, self.index = "cuda", type_or_str
            return
        if not isinstance(type_or_str, str):
            raise TypeError(f"device(): expected a string or device, got {type(type_or_str).__name__}")
        s = type_or_str.strip()
        if ":" in s:
            if index is not None:
                raise RuntimeError(f"device(): type (string) must not include an index because index was passed explicitly: {s}")
            s, _, idx = s.partition(":")
            if not idx.isdigit():
                raise RuntimeError(f"Invalid device string: '{type_or_str}'")
            index = int(idx)
        if s not in _TYPES:
            raise RuntimeError(
                f"Expected one of {', '.join(_TYPES)} device type at start of device string: {type_or_str}"
            )
        self.type = s
        self.index = index

    def __repr__(self) -> str:
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"

    def __str__(self) -> str:
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and self.type == other.type and self.index == other.index

    def __hash__(self) -> int:
        return hash((self.type, self.index))

    def __enter__(self) -> device:
        """``with toolkit.device("cuda"):`` makes this the factories' default device inside the block, as
        PyTorch's device context does; the block's end restores the default it found."""
        _ENTERED.append(DEFAULT_DEVICE.device)
        DEFAULT_DEVICE.device = None if self.type == "cpu" else self
        return self

    def __exit__(self, *exc) -> None:
        DEFAULT_DEVICE.device = _ENTERED.pop()


class _DefaultDevice:
    """The device factories use when given none (``toolkit.set_default_device``, ``with toolkit.device(...)``).

    ``device`` is None for the CPU, so the common case costs factories one attribute test."""

    __slots__ = ("device",)

    def __init__(self):
        self.device: device | None = None


DEFAULT_DEVICE = _DefaultDevice()
_ENTERED: list = []  # the defaults that open ``with device(...)`` blocks found, innermost last

CPU = device("cpu")


def as_device(d) -> device:
    """Accept a device, a string or an int (CUDA ordinal); ``None`` means CPU."""
    if d is None:
        return CPU
    if isinstance(d, device):
        return d
    if d == "cpu":
        return CPU
    return device(d)
