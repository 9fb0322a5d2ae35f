"""Variable-length sequences for recurrent layers: ``PackedSequence`` and the pack / pad helpers.

A packed sequence stores a batch of sequences sorted by decreasing length, time step by time step, without
padding: ``data`` holds the ``batch_sizes[t]`` live rows of each step one after another. Recurrent layers read
it to skip the padded positions. Packing and padding are compositions of registered ops (slicing, ``cat``,
``index_select``), so gradients flow through them.

    >>> seqs = [toolkit.ones(3, 2), toolkit.ones(1, 2)]
    >>> packed = pack_sequence(seqs)          # data (4, 2), batch_sizes [2, 1, 1]
    >>> padded, lengths = pad_packed_sequence(packed)   # (3, 2, 2), [3, 1]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple

import toolkit as api

from ...tensor import Tensor

__all__ = [
    "PackedSequence", "invert_permutation", "pack_padded_sequence", "pad_packed_sequence", "pad_sequence",
    "unpad_sequence", "pack_sequence", "unpack_sequence",
]


def _bind(optional, fn: Callable):
    return None if optional is None else fn(optional)


class PackedSequence_(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


class PackedSequence(PackedSequence_):
    """The ``data`` and ``batch_sizes`` of a packed batch of sequences (made by ``pack_padded_sequence``).

    ``sorted_indices`` is the order the batch was sorted into (None when it was already sorted) and
    ``unsorted_indices`` its inverse. ``batch_sizes`` always stays a CPU int64 tensor.
    """

    def __new__(cls, data: Tensor, batch_sizes: Tensor | None = None, sorted_indices: Tensor | None = None,
                unsorted_indices: Tensor | None = None):
        return super().__new__(cls, *_packed_sequence_init_args(data, batch_sizes, sorted_indices,
                                                                 unsorted_indices))

    def pin_memory(self) -> PackedSequence:
        return type(self)(self.data.pin_memory(), self.batch_sizes,
                          _bind(self.sorted_indices, lambda t: t.pin_memory()),
                          _bind(self.unsorted_indices, lambda t: t.pin_memory()))

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Convert ``data`` like ``Tensor.to``; the indices follow its device (``self`` when nothing changes)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        non_blocking = kwargs.get("non_blocking", False)

        def call_to(t: Tensor) -> Tensor:
            return t.to(data.device, non_blocking=non_blocking)

        return type(self)(data, self.batch_sizes, _bind(self.sorted_indices, call_to),
                          _bind(self.unsorted_indices, call_to))

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        ex = api.tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.is_cuda:
            return self.to(*args, **kwargs)
        kwargs["device"] = "cuda"
        return self.to(*args, **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        ex = api.tensor((), dtype=self.data.dtype, device=self.data.device).to(*args, **kwargs)
        if ex.device.type == "cpu":
            return self.to(*args, **kwargs)
        kwargs["device"] = "cpu"
        return self.to(*args, **kwargs)

    def double(self) -> PackedSequence:
        return self.to(dtype=api.double)

    def float(self) -> PackedSequence:
        return self.to(dtype=api.float)

    def half(self) -> PackedSequence:
        return self.to(dtype=api.half)

    def long(self) -> PackedSequence:
        return self.to(dtype=api.long)

    def int(self) -> PackedSequence:
        return self.to(dtype=api.int)

    def short(self) -> PackedSequence:
        return self.to(dtype=api.short)

    def char(self) -> PackedSequence:
        return self.to(dtype=api.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=api.uint8)

    @property
    def is_cuda(self) -> bool:
        """Whether ``data`` lives on a GPU."""
        return self.data.is_cuda

    def is_pinned(self) -> bool:
        return self.data.is_pinned()


def _packed_sequence_init_args(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None):
    if unsorted_indices is None:
        unsorted_indices = invert_permutation(sorted_indices)
    if batch_sizes is not None:
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created manually. "
                "They should be instantiated by functions like pack_sequence and pack_padded_sequences in "
                "nn.utils.rnn. https://pytorch.org/docs/stable/nn.html#torch.nn.utils.rnn.pack_sequence"
            )
        return data, batch_sizes, sorted_indices, unsorted_indices
    if not (isinstance(data, (list, tuple)) and len(data) == 2):
        raise AssertionError("Expected data to be a list or tuple of length 2")
    return data[0], data[1], sorted_indices, unsorted_indices


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a 1-D index permutation (``out[permutation[i]] = i``)."""
    if permutation is None:
        return None
    output = api.empty_like(permutation)
    output.scatter_(0, permutation, api.arange(0, permutation.numel(), device=permutation.device))
    return output


def _batch_sizes_of(lengths: list[int]) -> list[int]:
    """How many sequences are still running at each time step (lengths sorted decreasing)."""
    return [sum(1 for n in lengths if n > t) for t in range(lengths[0])]


def pack_padded_sequence(input: Tensor, lengths: Tensor | list[int], batch_first: bool = False,
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``) of sequences of ``lengths``.

    With ``enforce_sorted=False`` the batch is sorted by decreasing length first, and the permutation is kept
    in the result so ``pad_packed_sequence`` restores the original order.
    """
    if not isinstance(lengths, Tensor):
        lengths = api.as_tensor(lengths, dtype=api.int64, device="cpu")
    else:
        lengths = lengths.to(dtype=api.int64)
    if enforce_sorted:
        sorted_indices = None
    else:
        lengths, sorted_indices = api.sort(lengths, descending=True)
        sorted_indices = sorted_indices.to(input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if lengths.dim() != 1 or lengths.device.type != "cpu":
        raise RuntimeError("'lengths' argument should be a 1D CPU int64 tensor, but got "
                           f"{lengths.dim()}D {lengths.device} Long tensor")
    if batch_first:
        input = input.transpose(0, 1)
    if input.numel() == 0:
        raise RuntimeError("Cannot pack empty tensors.")
    batch_size = input.size(1)
    length_list = [int(n) for n in lengths.tolist()]
    if len(length_list) != batch_size:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(length_list)} "
                           f"(batch_size={batch_size})")
    if length_list[-1] <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' "
                           "that is <= 0")
    if any(a < b for a, b in zip(length_list, length_list[1:])):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement if "
            "you do not need ONNX exportability."
        )
    if length_list[0] > input.size(0):
        raise RuntimeError(f"pack_padded_sequence: the longest length {length_list[0]} exceeds the "
                           f"{input.size(0)} time steps of the input")
    sizes = _batch_sizes_of(length_list)
    data = api.cat([input[t, :bs] for t, bs in enumerate(sizes)], 0)
    batch_sizes = api.tensor(sizes, dtype=api.int64)
    return PackedSequence(data, batch_sizes, sorted_indices, None)


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """The inverse of ``pack_padded_sequence``: ``(padded, lengths)`` in the batch's original order."""
    sizes = [int(n) for n in sequence.batch_sizes.tolist()]
    max_seq_length = len(sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    data = sequence.data
    batch = sizes[0]
    trailing = tuple(data.shape[1:])
    steps = []
    offset = 0
    for bs in sizes:
        step = data[offset:offset + bs]
        offset += bs
        if bs < batch:
            pad = api.full((batch - bs, *trailing), padding_value, dtype=data.dtype, device=data.device)
            step = api.cat([step, pad], 0)
        steps.append(step)
    for _ in range(max_seq_length - len(sizes)):
        steps.append(api.full((batch, *trailing), padding_value, dtype=data.dtype, device=data.device))
    padded = api.stack(steps, 1 if batch_first else 0)
    lengths = api.tensor([sum(1 for bs in sizes if bs > b) for b in range(batch)], dtype=api.int64)
    if sequence.unsorted_indices is not None:
        batch_dim = 0 if batch_first else 1
        return padded.index_select(batch_dim, sequence.unsorted_indices), lengths[sequence.unsorted_indices.cpu()]
    return padded, lengths


def pad_sequence(sequences: Tensor | list[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack sequences of sizes ``(L_i, *)`` into ``(T, B, *)`` (``(B, T, *)`` with ``batch_first``), padded
    with ``padding_value`` on ``padding_side`` (``"right"`` or ``"left"``)."""
    if not isinstance(sequences, Iterable):
        raise RuntimeError(f"pad_sequence: Expected iterable for input sequences, but got arg of type: "
                           f"{type(sequences)}")
    sequences = tuple(sequences)
    if len(sequences) == 0:
        raise RuntimeError("received an empty list of sequences")
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    first = sequences[0]
    trailing = tuple(first.shape[1:])
    max_len = max(s.size(0) for s in sequences)
    rows = []
    for s in sequences:
        if tuple(s.shape[1:]) != trailing:
            raise RuntimeError(f"pad_sequence: every sequence must have trailing dimensions {list(trailing)}, "
                               f"got {list(s.shape)}")
        s = s.to(first.dtype)
        missing = max_len - s.size(0)
        if missing:
            pad = api.full((missing, *trailing), padding_value, dtype=first.dtype, device=s.device)
            s = api.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return api.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Tensor, batch_first: bool = False) -> list[Tensor]:
    """Split a padded batch back into its sequences (``padded_sequences`` is transposed in place when
    ``batch_first`` is False, as PyTorch does)."""
    unpadded_sequences = []
    if not batch_first:
        padded_sequences.transpose_(0, 1)
    for seq, length in zip(padded_sequences, lengths.tolist() if isinstance(lengths, Tensor) else lengths,
                           strict=True):
        unpadded_sequences.append(seq[:int(length)])
    return unpadded_sequences


def pack_sequence(sequences: list[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """Pack a list of sequences ``(L_i, *)``: ``pad_sequence`` then ``pack_padded_sequence``."""
    lengths = api.as_tensor([v.size(0) for v in sequences])
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences a ``PackedSequence`` holds, in their original order."""
    padded_sequences, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded_sequences, lengths, batch_first=True)
