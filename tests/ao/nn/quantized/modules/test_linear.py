"""``toolkit.ao.nn.quantized.Linear`` against ``torch.ao.nn.quantized.Linear``: ``from_float`` of identical
observed float layers gives the same weight, scale and zero point, the same output integers, PyTorch's state dict
keys (a PyTorch state dict loads) and repr."""

import copy
import pickle

import numpy as np
import pytest
import torch

import toolkit
import toolkit.ao.nn.quantized as nnq

from .twins import assert_q_equal, observed_pair, state_dict_to_toolkit, tk

pytestmark = pytest.mark.filterwarnings("ignore:.*quantized tensor creation functions",
                                        "ignore:.*_empty_affine_quantized", "ignore:.*per_channel")


def _pair(per_channel, bias=True, shape=(6, 5)):
    rng = np.random.default_rng(0)
    calibration = rng.standard_normal((16, shape[1])).astype(np.float32) * 2
    ours, theirs = observed_pair(lambda lib: lib.nn.Linear(shape[1], shape[0], bias=bias), per_channel,
                                 calibration)
    return nnq.Linear.from_float(ours), torch.ao.nn.quantized.Linear.from_float(theirs)


@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("bias", [False, True])
def test_from_float_matches_torch(per_channel, bias):
    ours, theirs = _pair(per_channel, bias)
    assert_q_equal(ours.weight(), theirs.weight())
    assert (ours.bias() is None) == (theirs.bias() is None)
    if bias:
        np.testing.assert_array_equal(ours.bias().numpy(), theirs.bias().detach().numpy())
    assert (ours.scale, ours.zero_point) == (theirs.scale, theirs.zero_point)
    for shape in ((4, 5), (2, 3, 5)):
        x = torch.quantize_per_tensor(torch.randn(*shape) * 2, 0.03, 128, torch.quint8)
        assert_q_equal(ours(tk(x)), theirs(x))


def test_repr_and_state_dict_keys_are_torchs():
    ours, theirs = _pair(False)
    assert repr(ours) == repr(theirs).replace("torch.", "toolkit.")
    assert repr(nnq.Linear(4, 3)) == ("QuantizedLinear(in_features=4, out_features=3, scale=1.0, zero_point=0, "
                                      "qscheme=toolkit.per_tensor_affine)")
    sd, tsd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(tsd) == ["scale", "zero_point", "_packed_params.dtype", "_packed_params._packed_params"]
    assert sd._metadata[""]["version"] == tsd._metadata[""]["version"] == 3


def test_load_state_dict_of_a_torch_model():
    _, theirs = _pair(True, shape=(3, 4))
    ours = nnq.Linear(4, 3)
    ours.load_state_dict(state_dict_to_toolkit(theirs.state_dict()))
    assert (ours.scale, ours.zero_point) == (theirs.scale, theirs.zero_point)
    assert_q_equal(ours.weight(), theirs.weight())
    x = torch.quantize_per_tensor(torch.randn(5, 4), 0.05, 100, torch.quint8)
    assert_q_equal(ours(tk(x)), theirs(x))
    again = nnq.Linear(4, 3, bias_=False)
    again.load_state_dict(ours.state_dict())
    assert_q_equal(again(tk(x)), theirs(x))


def test_copies_and_pickles_compute_the_same():
    ours, theirs = _pair(False)
    x = torch.quantize_per_tensor(torch.randn(3, 5), 0.03, 128, torch.quint8)
    for clone in (copy.deepcopy(ours), pickle.loads(pickle.dumps(ours))):
        assert_q_equal(clone(tk(x)), theirs(x))


def test_from_float_errors_are_torchs():
    with pytest.raises(AssertionError, match="only works for Linear"):
        nnq.Linear.from_float(toolkit.nn.Conv2d(1, 1, 1))
    with pytest.raises(AssertionError, match="must have qconfig defined"):
        nnq.Linear.from_float(toolkit.nn.Linear(2, 2))
    with pytest.raises(RuntimeError, match="Unsupported dtype"):
        nnq.Linear(2, 2, dtype=toolkit.quint8)


def test_the_old_name_is_the_same_package():
    import toolkit.nn.quantized as old

    assert old.Linear is nnq.Linear and old.Conv2d is nnq.Conv2d and old.QFunctional is nnq.QFunctional
