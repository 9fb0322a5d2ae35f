"""Modules against their ``torch.nn`` twins, generated from one table of constructor arguments.

For each case both twins are built with the same arguments, torch's state dict is loaded into toolkit's
(strict), and the test compares state-dict keys and shapes, repr, outputs (and state after the call) and
the gradients of the floating inputs on random data.
"""

from __future__ import annotations

import os
import subprocess
import textwrap
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pytest
import torch

import toolkit

from ..conftest import assert_close
from ..distributed._launch import check, mpirun_command, mpirun_env, needs_mpi

f32 = np.float32


def _x(*shape):
    return lambda rng: [rng.standard_normal(shape).astype(f32)]


def _xs(*shapes):
    return lambda rng: [rng.standard_normal(s).astype(f32) for s in shapes]


def _pos(*shape):
    return lambda rng: [rng.uniform(0.5, 2.0, shape).astype(f32)]


def _unpool_inputs(nd: int, shape, kernel: int):
    """Values and indices from torch's max pooling, as MaxUnpool consumes them."""
    pool = getattr(torch.nn.functional, f"max_pool{nd}d")

    def make(rng):
        x = torch.from_numpy(rng.standard_normal(shape).astype(f32))
        values, indices = pool(x, kernel, return_indices=True)
        return [values.numpy(), indices.numpy()]
    return make


def _classes_and_targets(n, c, dtype=np.int64):
    def make(rng):
        return [rng.standard_normal((n, c)).astype(f32), rng.integers(0, c, (n,)).astype(dtype)]
    return make


def _multilabel_targets(rng):
    target = np.full((3, 4), -1, dtype=np.int64)
    target[0, :2] = [3, 0]
    target[1, :1] = [1]
    target[2, :3] = [2, 1, 0]
    return [rng.standard_normal((3, 4)).astype(f32), target]


def _ctc_inputs(rng):
    t, n, c, s = 12, 2, 5, 4
    logits = torch.from_numpy(rng.standard_normal((t, n, c)).astype(f32))
    log_probs = torch.log_softmax(logits, 2).numpy()
    targets = rng.integers(1, c, (n, s)).astype(np.int64)
    return [log_probs, targets, np.array([12, 10], dtype=np.int64), np.array([4, 3], dtype=np.int64)]


@dataclass
class Case:
    name: str
    args: tuple = ()
    kwargs: dict = field(default_factory=dict)
    inputs: Callable = _x(2, 3, 8)
    id: str = ""
    accum: int = 1


CASES = [
    # padding
    *[Case(f"{kind}Pad{nd}d", (p,), {}, _x(2, 3, *([7] * nd)), id=f"{kind}{nd}d-{p}")
      for kind in ("Reflection", "Replication", "Zero", "Circular") for nd in (1, 2, 3)
      for p in (2, tuple(range(1, 2 * nd + 1)))],
    *[Case(f"ConstantPad{nd}d", (p, 1.5), {}, _x(2, 3, *([5] * nd)), id=f"{nd}d-{p}")
      for nd in (1, 2, 3) for p in (1, tuple(range(2 * nd)))],
    Case("ZeroPad2d", ((1, -1, 2, 0),), {}, _x(2, 3, 5, 5), id="negative"),
    Case("ReflectionPad2d", (1,), {}, _x(3, 5, 5), id="unbatched"),
    # shuffles, resampling
    Case("PixelShuffle", (2,), {}, _x(2, 8, 3, 4)),
    Case("PixelUnshuffle", (2,), {}, _x(2, 2, 4, 6)),
    Case("ChannelShuffle", (3,), {}, _x(2, 6, 3, 4)),
    Case("Upsample", (), {"scale_factor": 2}, _x(2, 3, 4, 5), id="nearest"),
    Case("Upsample", (), {"size": (7, 9), "mode": "bilinear"}, _x(2, 3, 4, 5), id="bilinear-size"),
    Case("Upsample", (), {"scale_factor": (2.0, 1.5), "mode": "bicubic", "align_corners": True},
         _x(1, 2, 4, 4), id="bicubic"),
    Case("Upsample", (), {"scale_factor": 3, "mode": "linear"}, _x(2, 3, 5), id="linear"),
    Case("Upsample", (), {"size": 6, "mode": "trilinear"}, _x(1, 2, 3, 4, 5), id="trilinear"),
    Case("UpsamplingNearest2d", (), {"scale_factor": 2}, _x(2, 3, 4, 5)),
    Case("UpsamplingBilinear2d", ((6, 7),), {}, _x(2, 3, 4, 5)),
    # normalization
    Case("InstanceNorm1d", (3,), {}, _x(2, 3, 8), id="plain"),
    Case("InstanceNorm1d", (3,), {"affine": True, "track_running_stats": True}, _x(2, 3, 8), id="affine-stats"),
    Case("InstanceNorm1d", (3,), {}, _x(3, 8), id="unbatched"),
    Case("InstanceNorm2d", (3,), {"affine": True}, _x(2, 3, 4, 5)),
    Case("InstanceNorm3d", (3,), {"track_running_stats": True, "momentum": 0.3}, _x(2, 3, 3, 4, 5)),
    Case("LocalResponseNorm", (3,), {}, _x(2, 6, 4, 4), id="odd"),
    Case("LocalResponseNorm", (2,), {"alpha": 0.1, "beta": 0.5, "k": 2.0}, _x(2, 5, 7), id="even"),
    Case("CrossMapLRN2d", (3,), {"alpha": 0.1}, _x(2, 6, 4, 4), id="odd"),
    Case("CrossMapLRN2d", (5,), {"alpha": 0.5, "beta": 0.6, "k": 2}, _x(2, 7, 3, 3), id="wide"),
    Case("RMSNorm", (8,), {}, _x(2, 3, 8), id="default"),
    Case("RMSNorm", ([3, 8],), {"eps": 1e-3, "elementwise_affine": False}, _x(2, 3, 8), id="noaffine"),
    # fold
    Case("Fold", ((4, 5), (2, 2)), {}, _x(2, 12, 12)),
    Case("Fold", (6, 3), {"padding": 1, "stride": 2}, _x(1, 18, 9), id="strided"),
    Case("Unfold", ((2, 3),), {}, _x(2, 3, 5, 6)),
    Case("Unfold", (3,), {"dilation": 2, "padding": 1, "stride": 2}, _x(2, 2, 7, 7), id="strided"),
    # convolution
    Case("Conv3d", (2, 4, 3), {}, _x(2, 2, 5, 5, 5), accum=54),
    Case("Conv3d", (4, 4, (1, 2, 3)), {"stride": 2, "padding": 1, "groups": 2, "bias": False}, _x(1, 4, 5, 6, 7),
         id="grouped", accum=12),
    Case("Conv3d", (2, 3, 3), {"padding": "same", "padding_mode": "circular"}, _x(1, 2, 4, 4, 4), id="circular",
         accum=54),
    Case("ConvTranspose3d", (3, 2, 3), {}, _x(2, 3, 3, 3, 3), accum=81),
    Case("ConvTranspose3d", (2, 4, 2), {"stride": 2, "output_padding": 1, "groups": 2, "dilation": 1},
         _x(1, 2, 3, 3, 3), id="strided", accum=8),
    # pooling
    Case("MaxPool3d", (2,), {}, _x(2, 3, 4, 4, 4)),
    Case("MaxPool3d", (3,), {"stride": 2, "padding": 1, "return_indices": True}, _x(1, 2, 5, 5, 5), id="indices"),
    Case("AvgPool1d", (3,), {"stride": 2, "padding": 1}, _x(2, 3, 9)),
    Case("AvgPool1d", (2,), {"ceil_mode": True, "count_include_pad": False}, _x(2, 3, 9), id="ceil"),
    Case("AvgPool3d", (2,), {}, _x(2, 3, 4, 4, 4)),
    Case("AvgPool3d", (3,), {"stride": 2, "padding": 1, "divisor_override": 5}, _x(1, 2, 5, 5, 5), id="divisor"),
    Case("AdaptiveAvgPool1d", (4,), {}, _x(2, 3, 9)),
    Case("AdaptiveAvgPool3d", ((2, None, 3),), {}, _x(2, 3, 5, 4, 7)),
    Case("AdaptiveMaxPool1d", (4,), {}, _x(2, 3, 9)),
    Case("AdaptiveMaxPool2d", ((3, 2),), {"return_indices": True}, _x(2, 3, 7, 5)),
    Case("AdaptiveMaxPool3d", (2,), {}, _x(2, 3, 5, 4, 7)),
    Case("FractionalMaxPool2d", (2,), {"output_size": (4, 5),
                                        "_random_samples": np.array([[[0.3, 0.7]], [[0.1, 0.9]]], dtype=f32)},
         _x(2, 1, 8, 9)),
    Case("FractionalMaxPool2d", ((2, 3),), {"output_ratio": 0.5, "return_indices": True,
                                             "_random_samples": np.full((1, 2, 2), 0.25, dtype=f32)},
         _x(1, 2, 8, 9), id="ratio"),
    Case("FractionalMaxPool3d", (2,), {"output_size": 3,
                                        "_random_samples": np.full((2, 1, 3), 0.6, dtype=f32)},
         _x(2, 1, 6, 6, 6)),
    Case("LPPool1d", (2, 3), {"stride": 2}, _pos(2, 3, 9)),
    Case("LPPool2d", (3.0, 2), {}, _pos(2, 3, 6, 6)),
    Case("LPPool3d", (1, (2, 2, 1)), {"ceil_mode": True}, _pos(1, 2, 5, 4, 3)),
    Case("MaxUnpool1d", (2,), {}, _unpool_inputs(1, (2, 3, 8), 2)),
    Case("MaxUnpool2d", (2,), {}, _unpool_inputs(2, (2, 3, 4, 6), 2)),
    Case("MaxUnpool3d", (2,), {}, _unpool_inputs(3, (1, 2, 4, 4, 4), 2)),
    # losses
    Case("MultiMarginLoss", (), {}, _classes_and_targets(5, 4)),
    Case("MultiMarginLoss", (2, 0.5), {"reduction": "none"}, _classes_and_targets(5, 4), id="p2"),
    Case("MultiLabelMarginLoss", (), {}, _multilabel_targets),
    Case("MultiLabelMarginLoss", (), {"reduction": "sum"}, _multilabel_targets, id="sum"),
    Case("GaussianNLLLoss", (), {}, lambda rng: [*_xs((4, 3), (4, 3))(rng), *_pos(4, 3)(rng)]),
    Case("GaussianNLLLoss", (), {"full": True, "reduction": "sum"},
         lambda rng: [*_xs((4, 3), (4, 3))(rng), *_pos(4, 1)(rng)], id="full"),
    Case("TripletMarginWithDistanceLoss", (), {}, _xs((4, 6), (4, 6), (4, 6))),
    Case("TripletMarginWithDistanceLoss", (), {"margin": 0.5, "swap": True, "reduction": "none"},
         _xs((4, 6), (4, 6), (4, 6)), id="swap"),
    Case("CTCLoss", (), {}, _ctc_inputs),
    Case("CTCLoss", (), {"reduction": "sum", "zero_infinity": True}, _ctc_inputs, id="sum"),
    # activations, distances
    Case("PReLU", (), {}, _x(2, 3, 4)),
    Case("PReLU", (3,), {"init": 0.1}, _x(2, 3, 4), id="channels"),
    Case("PairwiseDistance", (), {}, _xs((4, 6), (4, 6))),
    Case("PairwiseDistance", (1.0,), {"keepdim": True}, _xs((4, 6), (4, 6)), id="p1"),
    Case("CosineSimilarity", (), {}, _xs((4, 6), (4, 6))),
    Case("CosineSimilarity", (0,), {"eps": 1e-6}, _xs((4, 6), (1, 6)), id="broadcast"),
    Case("LinearCrossEntropyLoss", (6, 5), {}, lambda rng: [rng.standard_normal((4, 6)).astype(f32),
                                                            rng.integers(0, 5, (4,))], accum=6),
    Case("LinearCrossEntropyLoss", (6, 5), {"bias": True, "label_smoothing": 0.1, "reduction": "sum"},
         lambda rng: [rng.standard_normal((4, 6)).astype(f32), rng.integers(0, 5, (4,))], id="bias", accum=6),
    Case("AdaptiveLogSoftmaxWithLoss", (8, 10, [3, 6]), {"div_value": 2.0},
         lambda rng: [rng.standard_normal((6, 8)).astype(f32), np.array([0, 2, 3, 5, 7, 9])], accum=8),
    Case("AdaptiveLogSoftmaxWithLoss", (8, 10, [4]), {"head_bias": True},
         lambda rng: [rng.standard_normal((8,)).astype(f32), np.array(6)], id="unbatched", accum=8),
    # sparse
    Case("EmbeddingBag", (10, 4), {}, lambda rng: [rng.integers(0, 10, (3, 5))], id="mean-2d"),
    Case("EmbeddingBag", (10, 4), {"mode": "sum", "padding_idx": 2},
         lambda rng: [rng.integers(0, 10, (9,)), np.array([0, 3, 3, 7]), rng.standard_normal(9).astype(f32)],
         id="sum-offsets-weights"),
    Case("EmbeddingBag", (10, 4), {"mode": "max", "include_last_offset": True},
         lambda rng: [rng.integers(0, 10, (9,)), np.array([0, 2, 5, 9])], id="max-last-offset"),
    # batch norm across processes (one process here)
    Case("SyncBatchNorm", (3,), {}, _x(4, 3, 5)),
    Case("SyncBatchNorm", (3,), {"momentum": None, "affine": False}, _x(4, 3, 2, 2, 2), id="cumulative"),
]


def _side(value, lib):
    """A constructor argument for ``lib``: numpy arrays become that library's tensors."""
    if isinstance(value, np.ndarray):
        return torch.from_numpy(value.copy()) if lib is torch else toolkit.tensor(value)
    return value


def _pair(case: Case):
    kwargs_t = {k: _side(v, torch) for k, v in case.kwargs.items()}
    kwargs_k = {k: _side(v, toolkit) for k, v in case.kwargs.items()}
    torch.manual_seed(0)
    tm = getattr(torch.nn, case.name)(*case.args, **kwargs_t)
    km = getattr(toolkit.nn, case.name)(*case.args, **kwargs_k)
    return tm, km


def _state(module) -> dict:
    return {k: tuple(v.shape) for k, v in module.state_dict().items()}


def _float_outputs(out):
    outs = out if isinstance(out, tuple) else (out,)
    return [o for o in outs if o.dtype.is_floating_point]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.name}-{c.id}" if c.id else c.name for c in CASES])
def test_module_matches_torch(case: Case):
    rng = np.random.default_rng(0)
    tm, km = _pair(case)
    assert _state(km) == _state(tm)
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()},
                       strict=True)
    assert repr(km) == repr(tm)

    arrays = case.inputs(rng)
    t_in = [torch.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    k_in = [toolkit.tensor(a, requires_grad=a.dtype.kind == "f") for a in arrays]
    t_out, k_out = tm(*t_in), km(*k_in)
    assert_close(k_out, t_out, accum=case.accum)
    for key, value in tm.state_dict().items():
        assert_close(km.state_dict()[key], value, accum=case.accum, msg=key)

    t_float, k_float = _float_outputs(t_out), _float_outputs(k_out)
    if not any(o.requires_grad for o in t_float):
        return
    grads = [rng.standard_normal(tuple(o.shape)).astype(f32) for o in t_float]
    torch.autograd.backward(t_float, [torch.from_numpy(g) for g in grads])
    toolkit.autograd.backward(k_float, [toolkit.tensor(g) for g in grads])
    for t, k in zip(t_in, k_in):
        if t.requires_grad:
            assert_close(k.grad, t.grad, accum=max(case.accum, 8))
    for (name, tp), kp in zip(tm.named_parameters(), km.parameters()):
        assert_close(kp.grad, tp.grad, accum=max(case.accum, 64), msg=name)


def test_convert_sync_batchnorm_shares_parameters():
    net = toolkit.nn.Sequential(toolkit.nn.Conv2d(2, 3, 1), toolkit.nn.BatchNorm2d(3),
                                toolkit.nn.Sequential(toolkit.nn.BatchNorm1d(3, affine=False)))
    converted = toolkit.nn.SyncBatchNorm.convert_sync_batchnorm(net)
    tnet = torch.nn.Sequential(torch.nn.Conv2d(2, 3, 1), torch.nn.BatchNorm2d(3),
                               torch.nn.Sequential(torch.nn.BatchNorm1d(3, affine=False)))
    assert repr(converted) == repr(torch.nn.SyncBatchNorm.convert_sync_batchnorm(tnet))
    assert converted[1].weight is net[1].weight
    assert converted[2][0].running_mean is net[2][0].running_mean


def test_container_warns_and_adds_children():
    with pytest.warns(FutureWarning):
        box = toolkit.nn.Container(fc=toolkit.nn.Linear(2, 3))
    with pytest.warns(FutureWarning):
        tbox = torch.nn.Container(fc=torch.nn.Linear(2, 3))
    assert repr(box) == repr(tbox)
    assert [n for n, _ in box.named_parameters()] == ["fc.weight", "fc.bias"]


def test_adaptive_log_softmax_log_prob_and_predict():
    rng = np.random.default_rng(1)
    torch.manual_seed(0)
    tm = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    km = toolkit.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0)
    km.load_state_dict({k: toolkit.tensor(v.numpy()) for k, v in tm.state_dict().items()})
    x = rng.standard_normal((16, 8)).astype(f32)
    with torch.no_grad():
        assert_close(km.log_prob(toolkit.tensor(x)), tm.log_prob(torch.tensor(x)), accum=8)
        assert_close(km.predict(toolkit.tensor(x)), tm.predict(torch.tensor(x)))


@pytest.mark.parametrize("path", [
    "padding.ReflectionPad2d", "padding.ZeroPad2d", "pixelshuffle.PixelShuffle", "pixelshuffle.PixelUnshuffle",
    "channelshuffle.ChannelShuffle", "upsampling.Upsample", "instancenorm.InstanceNorm2d",
    "normalization.LocalResponseNorm", "normalization.RMSNorm", "fold.Fold", "conv.Conv3d", "pooling.MaxPool3d",
    "pooling.AdaptiveMaxPool2d", "loss.CTCLoss", "distance.PairwiseDistance", "activation.PReLU",
    "activation.MultiheadAttention", "linear.NonDynamicallyQuantizableLinear", "batchnorm.BatchNorm2d",
    "batchnorm.SyncBatchNorm", "sparse.EmbeddingBag", "adaptive.AdaptiveLogSoftmaxWithLoss", "container.Container",
])
def test_module_path_matches_torch(path: str):
    """Checkpoints pickle classes by their ``torch.nn.modules.<file>.<Class>`` path; each resolves under toolkit."""
    file, name = path.split(".")
    torch_module = __import__(f"torch.nn.modules.{file}", fromlist=[name])
    toolkit_module = __import__(f"toolkit.nn.modules.{file}", fromlist=[name])
    assert hasattr(torch_module, name)
    assert getattr(toolkit_module, name) is getattr(toolkit.nn, name)


LAZY_CASES = [
    ("LazyLinear", (4,), {}, (2, 3, 5)),
    ("LazyLinear", (4,), {"bias": False}, (6,)),
    ("LazyConv1d", (4, 3), {"padding": 1}, (2, 3, 8)),
    ("LazyConv2d", (4, 3), {"groups": 2, "stride": 2}, (2, 6, 7, 7)),
    ("LazyConv3d", (2, 2), {"bias": False}, (3, 4, 4, 4)),
    ("LazyConvTranspose1d", (4, 3), {"stride": 2}, (2, 3, 5)),
    ("LazyConvTranspose2d", (4, 3), {"groups": 2}, (2, 6, 4, 4)),
    ("LazyConvTranspose3d", (2, 2), {}, (1, 3, 3, 3, 3)),
    ("LazyBatchNorm1d", (), {}, (4, 3, 5)),
    ("LazyBatchNorm2d", (), {"affine": False}, (4, 3, 2, 2)),
    ("LazyBatchNorm3d", (), {"track_running_stats": False}, (2, 3, 2, 2, 2)),
    ("LazyInstanceNorm1d", (), {}, (2, 3, 5)),
    ("LazyInstanceNorm2d", (), {"affine": False}, (2, 3, 4, 4)),
    ("LazyInstanceNorm3d", (), {}, (2, 3, 2, 2, 2)),
]


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY_CASES, ids=[f"{c[0]}-{i}" for i, c in enumerate(LAZY_CASES)])
def test_lazy_module_matches_torch(name, args, kwargs, shape):
    """The first call infers the shapes and turns the module into its eager class; it then computes as torch's."""
    rng = np.random.default_rng(0)
    tm, km = getattr(torch.nn, name)(*args, **kwargs), getattr(toolkit.nn, name)(*args, **kwargs)
    assert repr(km) == repr(tm)
    x = rng.standard_normal(shape).astype(f32)
    tm(torch.tensor(x))
    km(toolkit.tensor(x))
    assert type(km).__name__ == type(tm).__name__
    assert repr(km) == repr(tm)
    assert _state(km) == _state(tm)
    assert not any(toolkit.nn.modules.lazy.is_lazy(p) for p in km.parameters())
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    x2 = rng.standard_normal(shape).astype(f32)
    tx, kx = torch.tensor(x2, requires_grad=True), toolkit.tensor(x2, requires_grad=True)
    t_out, k_out = tm(tx), km(kx)
    assert_close(k_out, t_out, accum=64)
    g = rng.standard_normal(tuple(t_out.shape)).astype(f32)
    t_out.backward(torch.from_numpy(g))
    k_out.backward(toolkit.tensor(g))
    assert_close(kx.grad, tx.grad, accum=64)


@pytest.mark.parametrize("name,args,kwargs,shape", LAZY_CASES[:8:3], ids=[c[0] for c in LAZY_CASES[:8:3]])
def test_lazy_module_takes_shapes_from_state_dict(name, args, kwargs, shape):
    """Loading an initialized state dict into a fresh lazy module materializes its parameters."""
    rng = np.random.default_rng(0)
    tm, km = getattr(torch.nn, name)(*args, **kwargs), getattr(toolkit.nn, name)(*args, **kwargs)
    x = rng.standard_normal(shape).astype(f32)
    tm(torch.tensor(x))
    km.load_state_dict({k: toolkit.tensor(v.detach().numpy().copy()) for k, v in tm.state_dict().items()})
    assert _state(km) == _state(tm)
    assert_close(km(toolkit.tensor(x)), tm(torch.tensor(x)), accum=64)
    assert type(km).__name__ == type(tm).__name__


_SYNC_BN_WORKER = textwrap.dedent("""
    import datetime, sys
    import numpy as np
    import toolkit
    import toolkit.distributed as dist

    dist.init_process_group("mpi", timeout=datetime.timedelta(seconds=30))
    r, n = dist.get_rank(), dist.get_world_size()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4 * n, 3, 5)).astype(np.float32)
    g = rng.standard_normal((4 * n, 3, 5)).astype(np.float32)
    bn = toolkit.nn.SyncBatchNorm(3, momentum=0.3)
    with toolkit.no_grad():
        bn.weight.copy_(toolkit.tensor([0.5, 1.5, 2.0]))
        bn.bias.copy_(toolkit.tensor([0.1, -0.2, 0.3]))
    xs = toolkit.tensor(x[4 * r:4 * (r + 1)], requires_grad=True)
    out = bn(xs)
    out.backward(toolkit.tensor(g[4 * r:4 * (r + 1)]))
    np.savez(sys.argv[1] + f"/rank{r}.npz", out=out.detach().numpy(), grad=xs.grad.numpy(),
             weight_grad=bn.weight.grad.numpy(), bias_grad=bn.bias.grad.numpy(),
             running_mean=bn.running_mean.numpy(), running_var=bn.running_var.numpy())
""")


@needs_mpi
def test_sync_batchnorm_on_two_processes_equals_batchnorm_on_the_whole_batch(tmp_path):
    """Two ranks with half a batch each: outputs, input gradients and running statistics are those of one
    BatchNorm over the whole batch; parameter gradients summed over ranks are its parameter gradients."""
    script = tmp_path / "worker_sync_bn.py"
    script.write_text(_SYNC_BN_WORKER)
    env = mpirun_env()
    env["PYTHONPATH"] = os.getcwd() + os.pathsep + env.get("PYTHONPATH", "")
    proc = subprocess.run(mpirun_command(2, [str(script), str(tmp_path)]), env=env, capture_output=True,
                          text=True, timeout=120)
    check(proc)
    ranks = [np.load(tmp_path / f"rank{r}.npz") for r in range(2)]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 3, 5)).astype(f32)
    g = rng.standard_normal((8, 3, 5)).astype(f32)
    bn = torch.nn.BatchNorm1d(3, momentum=0.3)
    with torch.no_grad():
        bn.weight.copy_(torch.tensor([0.5, 1.5, 2.0]))
        bn.bias.copy_(torch.tensor([0.1, -0.2, 0.3]))
    tx = torch.tensor(x, requires_grad=True)
    out = bn(tx)
    out.backward(torch.from_numpy(g))
    assert_close(np.concatenate([rk["out"] for rk in ranks]), out.detach().numpy(), accum=40)
    assert_close(np.concatenate([rk["grad"] for rk in ranks]), tx.grad.numpy(), accum=40)
    assert_close(ranks[0]["weight_grad"] + ranks[1]["weight_grad"], bn.weight.grad.numpy(), accum=40)
    assert_close(ranks[0]["bias_grad"] + ranks[1]["bias_grad"], bn.bias.grad.numpy(), accum=40)
    for rk in ranks:
        assert_close(rk["running_mean"], bn.running_mean.numpy(), accum=40)
        assert_close(rk["running_var"], bn.running_var.numpy(), accum=40)
