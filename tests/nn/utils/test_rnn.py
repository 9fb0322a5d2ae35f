"""toolkit.nn.utils.rnn against torch.nn.utils.rnn: packing, padding, their gradients and errors."""

from __future__ import annotations

import numpy as np
import pytest
import torch
from torch.nn.utils import rnn as T

import toolkit
from tests.conftest import assert_close
from toolkit.nn.utils import rnn as K


def _seqs(rng, lengths, feat=(3,)):
    arrays = [rng.standard_normal((n, *feat)).astype(np.float32) for n in lengths]
    return ([torch.tensor(a, requires_grad=True) for a in arrays],
            [toolkit.tensor(a, requires_grad=True) for a in arrays])


def _same_packed(kp, tp):
    assert isinstance(kp, K.PackedSequence)
    assert_close(kp.data, tp.data)
    np.testing.assert_array_equal(kp.batch_sizes.numpy(), tp.batch_sizes.numpy())
    assert kp.batch_sizes.dtype == toolkit.int64
    for k, t in ((kp.sorted_indices, tp.sorted_indices), (kp.unsorted_indices, tp.unsorted_indices)):
        assert (k is None) == (t is None)
        if k is not None:
            np.testing.assert_array_equal(k.numpy(), t.numpy())


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_matches_torch(rng, batch_first, padding_side):
    ts, ks = _seqs(rng, [2, 5, 3], feat=(2, 3))
    out_t = T.pad_sequence(ts, batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    out_k = K.pad_sequence(ks, batch_first=batch_first, padding_value=-1.5, padding_side=padding_side)
    assert_close(out_k, out_t)
    w = rng.standard_normal(tuple(out_t.shape)).astype(np.float32)
    (out_t * torch.tensor(w)).sum().backward()
    (out_k * toolkit.tensor(w)).sum().backward()
    for k, t in zip(ks, ts):
        assert_close(k.grad, t.grad)
    assert_close(K.pad_sequence(toolkit.ones(2, 3)), T.pad_sequence(torch.ones(2, 3)))


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("enforce_sorted", [True, False])
def test_pack_and_pad_round_trip_matches_torch(rng, batch_first, enforce_sorted):
    lengths = [5, 3, 3, 1] if enforce_sorted else [3, 5, 1, 3]
    x = rng.standard_normal((4, 5, 2) if batch_first else (5, 4, 2)).astype(np.float32)
    tx, kx = torch.tensor(x, requires_grad=True), toolkit.tensor(x, requires_grad=True)
    tp = T.pack_padded_sequence(tx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    kp = K.pack_padded_sequence(kx, lengths, batch_first=batch_first, enforce_sorted=enforce_sorted)
    _same_packed(kp, tp)
    t_out, t_len = T.pad_packed_sequence(tp, batch_first=batch_first, padding_value=2.0, total_length=7)
    k_out, k_len = K.pad_packed_sequence(kp, batch_first=batch_first, padding_value=2.0, total_length=7)
    assert_close(k_out, t_out)
    np.testing.assert_array_equal(k_len.numpy(), t_len.numpy())
    assert k_len.dtype == toolkit.int64
    w = rng.standard_normal(tuple(t_out.shape)).astype(np.float32)
    (t_out * torch.tensor(w)).sum().backward()
    (k_out * toolkit.tensor(w)).sum().backward()
    assert_close(kx.grad, tx.grad)


def test_pack_sequence_unpack_and_unpad(rng):
    ts, ks = _seqs(rng, [2, 4, 1])
    tp, kp = T.pack_sequence(ts, enforce_sorted=False), K.pack_sequence(ks, enforce_sorted=False)
    _same_packed(kp, tp)
    for k, t in zip(K.unpack_sequence(kp), T.unpack_sequence(tp)):
        assert_close(k, t)
    padded_t, padded_k = T.pad_sequence(ts), K.pad_sequence(ks)
    lengths = [2, 4, 1]
    for k, t in zip(K.unpad_sequence(padded_k, toolkit.tensor(lengths)),
                    T.unpad_sequence(padded_t, torch.tensor(lengths))):
        assert_close(k, t)
    assert tuple(padded_k.shape) == tuple(padded_t.shape)  # both transposed in place


def test_packed_sequence_methods():
    kp = K.pack_sequence([toolkit.ones(3, 2), toolkit.ones(1, 2)])
    assert kp.is_cuda is False and not kp.is_pinned()
    assert kp.to(toolkit.float32) is kp
    d = kp.double()
    assert d.data.dtype == toolkit.float64 and d.batch_sizes is kp.batch_sizes
    assert kp.long().data.dtype == toolkit.int64 and kp.cpu().data.dtype == toolkit.float32
    data, batch_sizes, sorted_indices, unsorted_indices = kp
    assert sorted_indices is None and unsorted_indices is None
    again = K.PackedSequence((data, batch_sizes))
    assert again.batch_sizes is batch_sizes
    perm = toolkit.tensor([2, 0, 1])
    np.testing.assert_array_equal(K.invert_permutation(perm).numpy(), T.invert_permutation(torch.tensor([2, 0, 1])))
    assert K.invert_permutation(None) is None


def _raises_like(fn_k, fn_t):
    with pytest.raises(Exception) as expected:
        fn_t()
    with pytest.raises(type(expected.value), match=__import__("re").escape(str(expected.value))):
        fn_k()


def test_errors_match_torch():
    kx, tx = toolkit.zeros(4, 3, 2), torch.zeros(4, 3, 2)
    _raises_like(lambda: K.pack_padded_sequence(kx, [2, 3, 1]), lambda: T.pack_padded_sequence(tx, [2, 3, 1]))
    _raises_like(lambda: K.pack_padded_sequence(kx, [3, 2]), lambda: T.pack_padded_sequence(tx, [3, 2]))
    _raises_like(lambda: K.pack_padded_sequence(kx, [3, 2, 0]), lambda: T.pack_padded_sequence(tx, [3, 2, 0]))
    _raises_like(lambda: K.pack_padded_sequence(toolkit.zeros(0, 3, 2), [3, 2, 1]),
                 lambda: T.pack_padded_sequence(torch.zeros(0, 3, 2), [3, 2, 1]))
    _raises_like(lambda: K.pack_padded_sequence(kx, toolkit.tensor([[3, 2, 1]])),
                 lambda: T.pack_padded_sequence(tx, torch.tensor([[3, 2, 1]])))
    _raises_like(lambda: K.pad_sequence([toolkit.ones(2)], padding_side="mid"),
                 lambda: T.pad_sequence([torch.ones(2)], padding_side="mid"))
    _raises_like(lambda: K.pad_sequence([]), lambda: T.pad_sequence([]))
    _raises_like(lambda: K.pad_sequence(5), lambda: T.pad_sequence(5))
    _raises_like(lambda: K.pad_packed_sequence(K.pack_sequence([toolkit.ones(3)]), total_length=1),
                 lambda: T.pad_packed_sequence(T.pack_sequence([torch.ones(3)]), total_length=1))
    with pytest.raises(RuntimeError, match="pad_sequence"):
        K.pad_sequence([toolkit.ones(2, 3), toolkit.ones(3, 4)])
    with pytest.raises(AssertionError, match="Expected data to be a list or tuple of length 2"):
        K.PackedSequence(toolkit.ones(3))
