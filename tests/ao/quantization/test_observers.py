"""Observers against ``torch.ao.quantization``: recorded statistics, ``calculate_qparams`` (values and dtypes)
per tensor and per channel, affine and symmetric, state-dict keys, defaults and constructor errors."""

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")


def _batches(seed: int, shape=(6, 5), n: int = 3):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(shape) * rng.uniform(0.1, 5) + rng.uniform(-2, 2)).astype(np.float32)
            for _ in range(n)]


def _pair(name: str, **kwargs):
    """The same observer built by toolkit and by torch; dtype/qscheme given by name."""
    ours_kw, theirs_kw = dict(kwargs), dict(kwargs)
    for key in ("dtype", "qscheme"):
        if key in kwargs:
            ours_kw[key] = getattr(tq, kwargs[key])
            theirs_kw[key] = getattr(torch, kwargs[key])
    return getattr(tq, name)(**ours_kw), getattr(torch.ao.quantization, name)(**theirs_kw)


def _run_and_compare(ours, theirs, batches) -> None:
    for x in batches:
        a, b = toolkit.tensor(x), torch.tensor(x)
        assert ours(a) is a
        assert theirs(b) is b
        assert_close(ours.min_val, theirs.min_val)
        assert_close(ours.max_val, theirs.max_val)
    scale, zp = ours.calculate_qparams()
    t_scale, t_zp = theirs.calculate_qparams()
    assert_close(scale, t_scale, rtol=0, atol=0)
    assert_close(zp, t_zp)
    sd, t_sd = ours.state_dict(), theirs.state_dict()
    assert list(sd) == list(t_sd)
    for k in t_sd:
        assert_close(sd[k], t_sd[k])


PER_TENSOR_CONFIGS = [
    {},
    {"dtype": "qint8"},
    {"dtype": "qint8", "qscheme": "per_tensor_symmetric"},
    {"dtype": "quint8", "qscheme": "per_tensor_symmetric"},
    {"dtype": "quint8", "qscheme": "per_tensor_symmetric", "quant_min": 0, "quant_max": 15},
    {"reduce_range": True},
    {"dtype": "qint8", "quant_min": -8, "quant_max": 7},
    {"quant_min": 0, "quant_max": 127, "eps": 1e-3},
    {"dtype": "qint32"},
]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kwargs", PER_TENSOR_CONFIGS)
def test_min_max_observer(seed, kwargs):
    ours, theirs = _pair("MinMaxObserver", **kwargs)
    assert (ours.quant_min, ours.quant_max) == (theirs.quant_min, theirs.quant_max)
    _run_and_compare(ours, theirs, _batches(seed))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kwargs", PER_TENSOR_CONFIGS[:4] + [{"averaging_constant": 0.5}, {"averaging_constant": 1}])
def test_moving_average_observer(seed, kwargs):
    ours, theirs = _pair("MovingAverageMinMaxObserver", **kwargs)
    _run_and_compare(ours, theirs, _batches(seed, n=4))


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("kwargs", [
    {},
    {"ch_axis": 1},
    {"ch_axis": 2, "dtype": "qint8", "qscheme": "per_channel_symmetric"},
    {"ch_axis": 1, "dtype": "quint8", "qscheme": "per_channel_symmetric"},
    {"ch_axis": 0, "dtype": "qint8", "quant_min": -16, "quant_max": 15},
    {"ch_axis": -1, "reduce_range": True},
    {"ch_axis": 1, "qscheme": "per_channel_affine_float_qparams"},
])
def test_per_channel_observer(seed, kwargs):
    ours, theirs = _pair("PerChannelMinMaxObserver", **kwargs)
    _run_and_compare(ours, theirs, _batches(seed, shape=(4, 3, 5)))


def test_constant_input_and_empty_input():
    ours, theirs = _pair("MinMaxObserver")
    _run_and_compare(ours, theirs, [np.full((3,), 2.5, np.float32), np.zeros((0,), np.float32)])
    ours, theirs = _pair("PerChannelMinMaxObserver", ch_axis=1)
    _run_and_compare(ours, theirs, [np.zeros((2, 3), np.float32)])


def test_unobserved_returns_defaults_with_warning():
    for name in ("MinMaxObserver", "PerChannelMinMaxObserver"):
        ours, theirs = _pair(name)
        with pytest.warns(UserWarning, match="must run observer"):
            scale, zp = ours.calculate_qparams()
        with pytest.warns(UserWarning, match="must run observer"):
            t_scale, t_zp = theirs.calculate_qparams()
        assert_close(scale, t_scale)
        assert_close(zp, t_zp)


def test_reset_and_state_dict_round_trip():
    ours, _ = _pair("PerChannelMinMaxObserver", ch_axis=0)
    ours(toolkit.tensor(_batches(0)[0]))
    fresh, _ = _pair("PerChannelMinMaxObserver", ch_axis=0)
    fresh.load_state_dict(ours.state_dict())
    assert_close(fresh.calculate_qparams(), ours.calculate_qparams())
    mm, t_mm = _pair("MinMaxObserver")
    mm(toolkit.tensor([1.0, -2.0]))
    t_mm(torch.tensor([1.0, -2.0]))
    mm.reset_min_max_vals()
    t_mm.reset_min_max_vals()
    assert_close(mm.min_val, t_mm.min_val)
    assert_close(mm.max_val, t_mm.max_val)


def test_defaults():
    for name in ("default_observer", "default_weight_observer", "default_per_channel_weight_observer"):
        ours, theirs = getattr(tq, name)(), getattr(torch.ao.quantization, name)()
        assert type(ours).__name__ == type(theirs).__name__
        assert (ours.quant_min, ours.quant_max) == (theirs.quant_min, theirs.quant_max)
        assert repr(ours.dtype).split(".")[1] == repr(theirs.dtype).split(".")[1]
        assert repr(ours.qscheme).split(".")[1] == repr(theirs.qscheme).split(".")[1]
    assert toolkit.quantization.MinMaxObserver is tq.MinMaxObserver
    assert tq.MinMaxObserver.with_args(dtype=tq.qint8)().quant_min == -128


def test_with_callable_args():
    calls = []

    def eps():
        calls.append(1)
        return 1e-4

    factory = tq.MinMaxObserver.with_callable_args(eps=eps).with_args(dtype=tq.qint8)
    a, b = factory(), factory()
    assert len(calls) == 2 and a is not b
    assert_close(a.eps, toolkit.tensor([1e-4]))


@pytest.mark.parametrize("name,kwargs,error", [
    ("MinMaxObserver", {"qscheme": "per_channel_affine"}, NotImplementedError),
    ("MovingAverageMinMaxObserver", {"qscheme": "per_channel_symmetric"}, NotImplementedError),
    ("PerChannelMinMaxObserver", {"qscheme": "per_tensor_affine"}, NotImplementedError),
    ("MinMaxObserver", {"qscheme": "per_tensor_symmetric", "reduce_range": True}, NotImplementedError),
    ("PerChannelMinMaxObserver", {"qscheme": "per_channel_symmetric", "reduce_range": True}, NotImplementedError),
    ("MinMaxObserver", {"quant_min": 1, "quant_max": 5}, AssertionError),
    ("MinMaxObserver", {"quant_min": 0, "quant_max": 0}, AssertionError),
    ("MinMaxObserver", {"dtype": "qint8", "quant_min": -200, "quant_max": 100}, AssertionError),
    ("MovingAverageMinMaxObserver", {"is_dynamic": True}, NotImplementedError),
    ("PerChannelMinMaxObserver", {"is_dynamic": True}, NotImplementedError),
])
def test_constructor_errors(name, kwargs, error):
    with pytest.raises(error):
        _pair_theirs(name, kwargs)
    with pytest.raises(error):
        _pair_ours(name, kwargs)


def _pair_theirs(name, kwargs):
    kw = {k: getattr(torch, v) if k in ("dtype", "qscheme") else v for k, v in kwargs.items()}
    return getattr(torch.ao.quantization, name)(**kw)


def _pair_ours(name, kwargs):
    kw = {k: getattr(tq, v) if k in ("dtype", "qscheme") else v for k, v in kwargs.items()}
    return getattr(tq, name)(**kw)


def test_min_greater_than_max_is_refused():
    ours, _ = _pair("MinMaxObserver")
    ours.min_val.fill_(2.0)
    ours.max_val.fill_(1.0)
    with pytest.raises(AssertionError, match="should be less than max"):
        ours.calculate_qparams()
