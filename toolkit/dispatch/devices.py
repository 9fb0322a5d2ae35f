"""Which device an op runs on, and that device's kernel (CUDA kernels are set up on first use)."""

from __future__ import annotations

from .. import cuda
from .._core.device import CPU
from .._core.names import NAME_STATE
from ..ops.registry import OpDef
from ..tensor import Tensor
from .names import NamedCall


class SparseCall(Exception):
    """Raised where a call's scan of its tensors meets a sparse one: the caller runs the op's sparse kernel
    instead (``running.run_sparse``). The strided path pays nothing for it until a sparse tensor shows up."""


def device_of(op: OpDef, bound: list):
    dev = None
    for i in op.tensor_args:
        v = bound[i]
        if isinstance(v, Tensor):
            if v._sparse_key is not None:
                raise SparseCall
            if v._extra is not None and "names" in v._extra and not NAME_STATE.off:
                raise NamedCall
            d = v._storage.device
            if dev is None:
                dev = d
            elif d != dev:
                raise RuntimeError(
                    f"{op.name}: Expected all tensors to be on the same device, but found at least two devices, "
                    f"{dev} and {d}!"
                )
        elif isinstance(v, list):
            for e in v:
                if e is not None:
                    if e._sparse_key is not None:
                        raise SparseCall
                    if e._extra is not None and "names" in e._extra and not NAME_STATE.off:
                        raise NamedCall
                    d = e._storage.device
                    if dev is None:
                        dev = d
                    elif d != dev:
                        raise RuntimeError(
                            f"{op.name}: Expected all tensors to be on the same device, but found at least two "
                            f"devices, {dev} and {d}!"
                        )
    return dev or CPU


def cuda_device(dev):
    """``cuda`` as ``cuda:<current device>`` (what tensors report, as in PyTorch); checks CUDA is usable."""
    cuda._lazy_init()
    return dev if dev.index is not None else type(dev)("cuda", cuda.current_device())


def kernel_for(op: OpDef, dev):
    k = op.kernels.get(dev.type)
    if k is None:
        if dev.type == "cuda":
            if not cuda.is_available():
                raise RuntimeError(
                    f"{op.name}: a tensor on '{dev}' was asked for, but CUDA is not available "
                    "(numba.cuda finds no GPU); use device='cpu'"
                )
        raise NotImplementedError(f"{op.name}: no kernel for device '{dev.type}'")
    return k
