"""Normalization, losses, pooling, transposed convolutions and products on CUDA beyond test_ops' two samples per op:
the rest of their registry samples, non-contiguous inputs, every loss reduction, batch_norm's running statistics,
errors, and gradients through them equal to the CPU's."""

from __future__ import annotations

import numpy as np
import pytest

import toolkit
from toolkit.ops import registry

from ..conftest import assert_close
from .helpers import compare, host, needs_cuda, sample_accum, to_device
from .test_ops import SAMPLES_PER_OP

pytestmark = needs_cuda
F = toolkit.nn.functional

OPS = ("layer_norm", "batch_norm", "group_norm", "mse_loss", "l1_loss", "smooth_l1_loss", "huber_loss",
       "binary_cross_entropy", "binary_cross_entropy_with_logits", "kl_div", "glu", "avg_pool2d",
       "avg_pool2d_backward", "adaptive_avg_pool2d", "_adaptive_avg_pool2d_backward", "max_pool1d",
       "max_pool1d_with_indices", "conv_transpose1d", "conv_transpose2d", "bilinear", "dot", "vdot", "mv", "addmv",
       "outer", "ger", "baddbmm", "einsum")


def _both(fn, *arrays, **kw):
    """``fn`` on CPU and on CUDA tensors made from ``arrays``; checks the CUDA result is on the device and equal."""
    expected = fn(*to_device(list(arrays), "cpu"), **kw)
    got = fn(*to_device(list(arrays), "cuda"), **kw)
    for t in got if isinstance(got, tuple) else (got,):
        assert t.is_cuda
    compare(host(expected), host(got), getattr(fn, "__name__", "op"), sample_accum(arrays))
    return expected, got


def test_every_op_here_has_a_cuda_kernel():
    toolkit.cuda.init()
    for name in OPS:
        for o in registry.overloads(name):
            assert o.composite is not None or "cuda" in o.kernels, o.schema.full_name  # compositions run anywhere


def test_remaining_registry_samples_match_cpu():
    """test_ops runs the first samples of each op; the rest run here, in one test to keep the suite quick."""
    toolkit.cuda.init()
    for name in OPS:
        for o in registry.overloads(name):
            for i, (args, kwargs) in enumerate(o.samples(np.random.default_rng(0))):
                if i < SAMPLES_PER_OP:
                    continue
                try:
                    expected = o(*to_device(args, "cpu"), **kwargs)
                except Exception as e:
                    with pytest.raises(type(e)):
                        o(*to_device(args, "cuda"), **kwargs)
                    continue
                compare(host(expected), host(o(*to_device(args, "cuda"), **kwargs)), f"{o.schema.full_name}-{i}",
                        sample_accum(args))


def test_non_contiguous_inputs():
    rng = np.random.default_rng(1)
    x = rng.uniform(-2, 2, (4, 3, 5)).transpose(2, 1, 0)  # (5, 3, 4), strided
    _both(lambda t: F.layer_norm(t, (4,)), x)
    _both(lambda t: F.group_norm(t, 3), x)
    _both(lambda t: F.batch_norm(t, None, None, training=True), x)
    img = rng.uniform(-1, 1, (2, 5, 6)).transpose(0, 2, 1)[:, ::2]  # (2, 3, 5), strided and sliced
    _both(lambda t: F.avg_pool2d(t, 2, padding=1), img)
    _both(lambda t: F.adaptive_avg_pool2d(t, (2, 3)), img)
    _both(lambda t: F.max_pool1d(t, 2), img)
    _both(lambda a, b: F.mse_loss(a, b), x, x[::-1].copy())
    m = rng.standard_normal((4, 6))[:, ::2]
    v = rng.standard_normal(6)[::2]
    _both(toolkit.mv, m, v)
    _both(toolkit.dot, v, m[1])
    _both(toolkit.outer, v, m[:, 0])
    _both(lambda a, b: toolkit.einsum("ij,kj->ik", a, b), m, m.T.copy().T)
    _both(lambda a, w: F.conv_transpose2d(a, w, stride=2), rng.uniform(-1, 1, (1, 3, 3, 2)).transpose(0, 3, 1, 2),
          rng.uniform(-1, 1, (2, 2, 2, 2)))


@pytest.mark.filterwarnings("ignore:reduction. 'mean' divides")
@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
def test_loss_reductions(reduction):
    rng = np.random.default_rng(2)
    a, b = rng.uniform(-2, 2, (3, 4)), rng.uniform(-2, 2, (3, 4))
    p, t, w = rng.uniform(0.05, 0.95, (3, 4)), rng.uniform(0, 1, (3, 4)), rng.uniform(0.5, 2, (4,))
    kw = {"reduction": reduction}
    _both(F.mse_loss, a, b, **kw)
    _both(F.l1_loss, a, b, **kw)
    _both(lambda x, y: F.smooth_l1_loss(x, y, beta=0.5, **kw), a, b)
    _both(lambda x, y: F.smooth_l1_loss(x, y, beta=0.0, **kw), a, b)
    _both(lambda x, y: F.huber_loss(x, y, delta=0.7, **kw), a, b)
    _both(lambda x, y, z: F.binary_cross_entropy(x, y, z, **kw), p, t, np.broadcast_to(w, (3, 4)).copy())
    _both(lambda x, y, z: F.binary_cross_entropy_with_logits(x, y, pos_weight=z, **kw), a, t, w)
    _both(lambda x, y: F.kl_div(x, y, **kw), np.log(p), t)
    _both(lambda x, y: F.kl_div(x, y, log_target=True, **kw), np.log(p), np.log(t))


def test_binary_cross_entropy_clamps_log_at_zero_and_one():
    x = np.array([0.0, 1.0, 0.5, 1.0])
    y = np.array([0.0, 1.0, 0.3, 0.0])
    _, got = _both(lambda a, b: F.binary_cross_entropy(a, b, reduction="none"), x, y)
    assert got.cpu().numpy()[3] == 100.0


def test_batch_norm_training_updates_running_stats_on_device_then_eval():
    rng = np.random.default_rng(3)
    x = rng.uniform(-2, 2, (4, 3, 2))
    w, b = rng.uniform(0.5, 2, 3), rng.uniform(-1, 1, 3)
    stats = {}
    for dev in ("cpu", "cuda"):
        rm, rv = toolkit.zeros(3, dtype=toolkit.float64, device=dev), toolkit.ones(3, dtype=toolkit.float64,
                                                                                    device=dev)
        xt, wt, bt = (toolkit.tensor(a, device=dev) for a in (x, w, b))
        train = F.batch_norm(xt, rm, rv, wt, bt, training=True, momentum=0.3)
        assert rm.device.type == dev and rv.device.type == dev
        evalo = F.batch_norm(xt, rm, rv, wt, bt, training=False)
        stats[dev] = [t.cpu().numpy() for t in (train, evalo, rm, rv)]
    for a, c in zip(stats["cpu"], stats["cuda"]):  # statistics over the 4 * 2 values of a channel
        assert_close(c, a, accum=4 * 2)
    assert not np.allclose(stats["cuda"][2], 0) and not np.allclose(stats["cuda"][3], 1)


def test_batch_norm_module_float32_train_and_eval():
    toolkit.manual_seed(0)
    x = toolkit.randn(3, 2, 2, 2)
    cpu = toolkit.nn.BatchNorm2d(2)
    gpu = toolkit.nn.BatchNorm2d(2).to("cuda")
    for m, t in ((cpu, x), (gpu, x.to("cuda"))):
        m(t)
        m(t * 2)
    for name, a in cpu.state_dict().items():
        got = gpu.state_dict()[name]
        assert got.is_cuda, name
        assert_close(got.cpu(), a, accum=3 * 2 * 2, msg=name)  # statistics over a channel's 3 * 2 * 2 values
    cpu.eval()
    gpu.eval()
    assert_close(gpu(x.to("cuda")).detach().cpu(), cpu(x).detach(), accum=3 * 2 * 2)


def test_inplace_addmv_and_baddbmm():
    rng = np.random.default_rng(9)
    r = rng.standard_normal
    _both(lambda s, m, v: s.addmv_(m, v, beta=0.5, alpha=2.0), r(3), r((3, 2)), r(2))
    _both(lambda s, a, b: s.baddbmm_(a, b, alpha=-1.0), r((2, 2, 3)), r((2, 2, 4)), r((2, 4, 3)))


def test_avg_pool2d_integer_input_truncates_like_cpu():
    x = np.arange(-12, 13).reshape(1, 5, 5)
    _both(lambda t: F.avg_pool2d(t, 2, stride=2, padding=1), x)
    _both(lambda t: F.avg_pool2d(t, 3, divisor_override=2), x)


def test_einsum_more_equations():
    rng = np.random.default_rng(4)
    r = rng.standard_normal
    for eq, shapes in (("ii,i->i", [(3, 3), (3,)]), ("bij,bkj->bki", [(2, 2, 3), (2, 4, 3)]),
                       ("i,ij->j", [(1,), (3, 2)]), ("ijk->kji", [(2, 3, 2)]), ("ij,ij->", [(2, 3), (2, 3)]),
                       ("a,b,c->abc", [(2,), (3,), (2,)]), ("ij,jk->ik", [(0, 3), (3, 2)])):
        _both(lambda *ts, eq=eq: toolkit.einsum(eq, *ts), *[r(s) for s in shapes])


_ERROR_CASES = [
    (lambda x: F.layer_norm(x, (5,)), [(3, 4)]),
    (lambda x: F.group_norm(x, 3), [(2, 4, 2)]),
    (lambda x: F.batch_norm(x, None, None, training=False), [(2, 3)]),
    (lambda x: F.batch_norm(x, None, None, training=True), [(1, 3)]),
    (lambda x, y: F.mse_loss(x, y), [(2, 3), (3, 2)]),
    (lambda x, y: F.smooth_l1_loss(x, y, beta=-1.0), [(2,), (2,)]),
    (lambda x, y: F.huber_loss(x, y, delta=0.0), [(2,), (2,)]),
    (lambda x, y: F.binary_cross_entropy(x * 3, y), [(2,), (2,)]),
    (lambda x: F.glu(x, 0), [(3, 2)]),
    (lambda x: F.avg_pool2d(x, 4), [(1, 3, 3)]),
    (lambda x: F.adaptive_avg_pool2d(x, 2), [(3, 3)]),
    (lambda x: F.max_pool1d(x, 5), [(1, 2, 3)]),
    (lambda x, w: F.conv_transpose2d(x, w), [(1, 2, 3, 3), (3, 2, 2, 2)]),
    (lambda x, y: toolkit.dot(x, y), [(3,), (4,)]),
    (lambda x, y: toolkit.mv(x, y), [(2, 3), (2,)]),
    (lambda x, y, z: toolkit.baddbmm(x, y, z), [(2, 2, 2), (2, 2, 3), (2, 4, 2)]),
    (lambda x, y: toolkit.einsum("ij,jk->ik", x, y), [(2, 3), (2, 3)]),
    (lambda x: toolkit.einsum("i9->i", x), [(2, 2)]),
]


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("k", range(len(_ERROR_CASES)))
def test_errors_match_cpu(k):
    fn, shapes = _ERROR_CASES[k]
    arrays = [np.random.default_rng(5).uniform(0.1, 0.9, s) for s in shapes]
    with pytest.raises(Exception) as cpu_err:
        fn(*to_device(arrays, "cpu"))
    with pytest.raises(type(cpu_err.value)):
        fn(*to_device(arrays, "cuda"))


def test_integer_inputs_rejected_like_cpu():
    i = np.arange(6).reshape(2, 3)
    for fn in (lambda a: F.mse_loss(a, a), lambda a: F.glu(a.reshape(3, 2)),
               lambda a: F.adaptive_avg_pool2d(a.reshape(1, 2, 3), 1)):
        with pytest.raises(NotImplementedError):
            fn(toolkit.tensor(i))
        with pytest.raises(NotImplementedError):
            fn(toolkit.tensor(i, device="cuda"))


_GRAD_CASES = {
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), [(3, 4), (4,), (4,)]),
    "batch_norm": (lambda x, w, b: F.batch_norm(x, None, None, w, b, training=True), [(4, 2, 3), (2,), (2,)]),
    "mse_loss": (lambda x, y: F.mse_loss(x, y), [(3, 4), (3, 4)]),
    "bce_with_logits": (lambda x, y, p: F.binary_cross_entropy_with_logits(x, y, pos_weight=p.detach()),
                        [(3, 4), (3, 4), (4,)]),
    "avg_pool2d": (lambda x: F.avg_pool2d(x, 3, stride=2, padding=1, count_include_pad=False), [(1, 2, 5, 5)]),
    "adaptive_avg_pool2d": (lambda x: F.adaptive_avg_pool2d(x, (2, 3)), [(1, 2, 5, 4)]),
}


@pytest.mark.parametrize("name", list(_GRAD_CASES))
def test_gradients_match_cpu(name):
    fn, shapes = _GRAD_CASES[name]
    rng = np.random.default_rng(6)
    arrays = [rng.uniform(0.2, 0.8, s) for s in shapes]
    grads = {}
    for dev in ("cpu", "cuda"):
        ts = [toolkit.tensor(a, device=dev, requires_grad=True) for a in arrays]
        out = fn(*ts)
        seed = np.random.default_rng(7).uniform(-1, 1, tuple(out.shape))
        out.backward(toolkit.tensor(seed, device=dev))
        grads[dev] = [None if t.grad is None else (t.grad.is_cuda, t.grad.cpu().numpy()) for t in ts]
    for c, g in zip(grads["cpu"], grads["cuda"]):
        if c is None:
            assert g is None
            continue
        assert g[0], f"{name}: gradient not on cuda"
        assert_close(g[1], c[1], accum=sample_accum(arrays), msg=name)


@pytest.mark.parametrize("pool", [lambda x: F.avg_pool2d(x, 2, stride=1), lambda x: F.adaptive_avg_pool2d(x, 2)])
def test_pooling_double_backward_runs_the_backward_ops_on_cuda(pool):
    """The backward op's own derivative (pooling again) runs on the device too."""
    x = np.random.default_rng(8).uniform(-1, 1, (1, 1, 3, 3))
    res = []
    for dev in ("cpu", "cuda"):
        t = toolkit.tensor(x, device=dev, requires_grad=True)
        (g,) = toolkit.autograd.grad((pool(t) ** 2).sum(), t, create_graph=True)
        (gg,) = toolkit.autograd.grad((g ** 2).sum(), t)
        res.append((g.detach().cpu().numpy(), gg.cpu().numpy(), gg.is_cuda))
    assert_close(res[1][0], res[0][0], accum=x.size)
    assert_close(res[1][1], res[0][1], accum=x.size)
    assert res[1][2]
