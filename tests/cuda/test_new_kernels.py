"""Every sample of the ops whose CUDA kernels live in the newer kernel modules, against the CPU.

``test_ops.py`` checks two samples of every op; the samples past those cover the kernels' other paths
(``include_self=False``, integer means, wrapped diagonals, transposed and grouped 3-d convolutions...).
"""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.ops import registry

from .helpers import compare, host, needs_cuda, sample_accum, to_device

pytestmark = needs_cuda

MODULES = ("products_tensor", "view_scatter", "conv3d", "reduce_write", "pooling_more", "linalg_solves",
           "matrix_exp", "distances", "linalg_ldl", "linalg_lstsq", "gamma", "shape_join")


def _ops():
    if not toolkit.cuda.is_available():
        return []
    toolkit.cuda.init()
    return [o for o in registry.all_ops()
            if "cuda" in o.kernels and o.samples is not None and o.kind is not registry.INPLACE
            and getattr(o.kernels["cuda"], "__module__", "").rsplit(".", 1)[-1] in MODULES]


def _cases():
    for o in _ops():
        for i, s in enumerate(o.samples(np.random.default_rng(0))):
            yield pytest.param(o, s, id=f"{o.schema.full_name}-{i}")


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("o,sample", list(_cases()))
def test_every_sample_matches_cpu(o, sample):
    args, kwargs = sample
    try:
        expected = o(*to_device(args, "cpu"), **kwargs)
    except Exception as e:  # the CUDA kernel must refuse the same input the same way
        with pytest.raises(type(e)):
            o(*to_device(args, "cuda"), **kwargs)
        return
    got = o(*to_device(args, "cuda"), **kwargs)
    for t in (got if isinstance(got, (list, tuple)) else (got,)):
        if isinstance(t, toolkit.Tensor):
            assert t.is_cuda, f"{o.name} returned a {t.device} tensor"
    compare(host(expected), host(got), o.schema.full_name, sample_accum(args))


def test_inplace_variants_write_into_cuda_tensors():
    x = toolkit.zeros(3, 4, device="cuda")
    x.fill_diagonal_(2.0)
    np.testing.assert_array_equal(x.cpu().numpy(), np.eye(3, 4) * 2)
    y = toolkit.zeros(5, device="cuda")
    y.put_(toolkit.tensor([0, 4, 4], device="cuda"), toolkit.tensor([1.0, 2.0, 3.0], device="cuda"),
           accumulate=True)
    np.testing.assert_array_equal(y.cpu().numpy(), [1, 0, 0, 0, 5])
    z = toolkit.ones(3, device="cuda")
    z.scatter_reduce_(0, toolkit.tensor([0, 0, 2], device="cuda"), toolkit.tensor([2.0, 3.0, 4.0], device="cuda"),
                      "prod")
    np.testing.assert_array_equal(z.cpu().numpy(), [6, 1, 4])


def test_ex_variants_report_failures_per_matrix():
    a = np.stack([np.eye(2) * 2, np.zeros((2, 2))])
    x = toolkit.tensor(a, device="cuda")
    inv, info = toolkit.linalg.inv_ex(x)
    assert info.is_cuda and info.dtype == toolkit.int32
    np.testing.assert_array_equal(info.cpu().numpy(), [0, 1])
    np.testing.assert_allclose(inv.cpu().numpy()[0], np.eye(2) / 2)
    assert np.isnan(inv.cpu().numpy()[1]).all()
    _, info = toolkit.linalg.cholesky_ex(toolkit.tensor(-a, device="cuda"))
    np.testing.assert_array_equal(info.cpu().numpy(), toolkit.linalg.cholesky_ex(toolkit.tensor(-a))[1].numpy())
    lu, piv, info = toolkit.linalg.lu_factor_ex(x)
    want = toolkit.linalg.lu_factor_ex(toolkit.tensor(a))
    for g, w in zip((lu, piv, info), want):
        np.testing.assert_array_equal(g.cpu().numpy(), w.numpy())
    with pytest.raises(RuntimeError, match="U\\[1,1\\] is zero"):
        toolkit.linalg.lu_factor(x)


def test_mvlgamma_checks_its_domain_on_the_device():
    x = toolkit.tensor([2.0, 3.0], device="cuda")
    np.testing.assert_allclose(toolkit.mvlgamma(x, 2).cpu().numpy(), toolkit.mvlgamma(x.cpu(), 2).numpy())
    with pytest.raises(RuntimeError, match="greater than"):
        toolkit.mvlgamma(x, 5)


def test_unbind_of_a_vector_gives_zero_dim_views():
    x = toolkit.tensor([4.0, 5.0], device="cuda")
    parts = x.unbind(0)
    assert [p.shape for p in parts] == [(), ()]
    assert [p.item() for p in parts] == [4.0, 5.0]
    assert toolkit.unravel_index(toolkit.tensor(5, device="cuda"), (2, 3))[1].item() == 2
