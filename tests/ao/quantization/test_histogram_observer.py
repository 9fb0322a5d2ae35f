"""HistogramObserver against torch: the running histogram (combined across calls whose ranges grow) and the
qparams of the L2 range search, for several distributions, dtypes and schemes."""

import numpy as np
import pytest
import torch

import toolkit
from tests.conftest import assert_close
from toolkit.ao import quantization as tq

pytestmark = pytest.mark.filterwarnings("ignore:Please use quant_min")

_CONFIGS = {
    "affine": ({}, {}),
    "reduce_range": ({"reduce_range": True}, {"reduce_range": True}),
    "qint8_symmetric": ({"dtype": tq.qint8, "qscheme": toolkit.per_tensor_symmetric},
                        {"dtype": torch.qint8, "qscheme": torch.per_tensor_symmetric}),
    "few_bins": ({"bins": 64}, {"bins": 64}),
}


def _batch(rng, kind: str, step: int) -> np.ndarray:
    if kind == "normal":
        x = rng.standard_normal(400) * (step + 1)
    elif kind == "exponential":
        x = rng.exponential(1.0, 300) + step
    elif kind == "uniform":
        x = rng.uniform(-1, 3 + step, (4, 50))
    elif kind == "outlier":
        x = np.concatenate([rng.standard_normal(800), [25.0 * (step + 1)]])
    else:  # shrinking then growing ranges, and a constant batch
        x = np.full(10, 0.5) if step == 0 else rng.standard_normal(200) * (3 - step)
    return x.astype(np.float32)


@pytest.mark.parametrize("config", list(_CONFIGS))
@pytest.mark.parametrize("kind", ["normal", "exponential", "uniform", "outlier", "mixed"])
def test_qparams_and_histogram_match_torch(config, kind):
    ours_kw, theirs_kw = _CONFIGS[config]
    ours, theirs = tq.HistogramObserver(**ours_kw), torch.ao.quantization.HistogramObserver(**theirs_kw)
    rng = np.random.default_rng(len(kind) * 7 + len(config))
    for step in range(3):
        x = _batch(rng, kind, step)
        a = toolkit.tensor(x)
        assert ours(a) is a
        theirs(torch.tensor(x))
        assert_close(ours.histogram, theirs.histogram, rtol=0, atol=0)
        assert_close(ours.min_val, theirs.min_val, rtol=0, atol=0)
        assert_close(ours.max_val, theirs.max_val, rtol=0, atol=0)
        scale, zp = ours.calculate_qparams()
        t_scale, t_zp = theirs.calculate_qparams()
        assert_close(scale, t_scale, rtol=0, atol=0)
        assert_close(zp, t_zp, rtol=0, atol=0)


def test_default_histogram_observer_and_uninitialized_defaults():
    obs = tq.default_histogram_observer()
    assert (obs.quant_min, obs.quant_max) == (0, 127)
    with pytest.warns(UserWarning, match="must run observer"):
        scale, zp = tq.HistogramObserver().calculate_qparams()
    assert_close(scale, torch.tensor([1.0]))
    assert_close(zp, torch.tensor([0]))


def test_infinities_are_ignored_with_a_warning():
    ours, theirs = tq.HistogramObserver(), torch.ao.quantization.HistogramObserver()
    x = np.array([1.0, -2.0, np.inf, 3.0], dtype=np.float32)
    with pytest.warns(UserWarning, match="inf detected"):
        ours(toolkit.tensor(x))
    with pytest.warns(UserWarning):
        theirs(torch.tensor(x))
    assert_close(ours.histogram, theirs.histogram)
    assert_close(ours.calculate_qparams()[0], theirs.calculate_qparams()[0], rtol=0, atol=0)


def test_refusals():
    with pytest.raises(NotImplementedError, match="per_tensor"):
        tq.HistogramObserver(qscheme=toolkit.per_channel_affine)
    with pytest.raises(NotImplementedError, match="dynamic"):
        tq.HistogramObserver(is_dynamic=True)


def test_state_dict_keys_match_torch():
    assert list(tq.HistogramObserver().state_dict()) == list(torch.ao.quantization.HistogramObserver().state_dict())
