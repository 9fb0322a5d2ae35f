"""Factories, copies and random numbers on the device.

- ``zeros``/``ones``/``full``/``empty`` and their ``*_like`` forms fill on the device;
- other factories (``arange``, ``eye``, ``linspace``, ...) are made by their CPU
  kernel from Python numbers and copied up once;
- random ops draw on the host with toolkit's generator and copy the numbers to
  the device, so ``toolkit.rand(3, device='cuda')`` equals ``toolkit.rand(3).cuda()``
  under the same seed (PyTorch's CUDA generator gives other numbers than its CPU one);
- ``_to_copy`` moves data between host and device (the cast of a download is
  done on the host by the CPU kernel, so it rounds exactly as on the CPU).
"""

from __future__ import annotations

import numpy as np

from ..._core import dtypes as _dt
from ...ops import registry as R
from .array import CudaArray, copy_into, copy_strided, fill, full
from .registration import register_table


def _float_or(dtype):
    return (dtype or _dt.get_default_dtype()).np


def _on_host(device) -> bool:
    return device is not None and device.type == "cpu"


def _filled(name: str, value):
    cpu = R.get(name).kernels["cpu"]

    def kernel(size, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
        if _on_host(device):
            return cpu(size, dtype, layout, device, pin_memory, requires_grad)
        cpu((0,) if any(s < 0 for s in size) else size, dtype)  # the CPU kernel's checks (negative sizes)
        out = CudaArray.empty(tuple(size), _float_or(dtype))
        return out if value is None else fill(out, value)

    return kernel


def _full(size, fill_value, dtype=None, layout=None, device=None, pin_memory=None, requires_grad=False):
    cpu = R.get("full").kernels["cpu"]
    if _on_host(device):
        return cpu(size, fill_value, dtype)
    d = cpu((0,), fill_value, dtype).dtype  # the CPU kernel's dtype inference and checks
    return full(tuple(size), fill_value, d)


def _like(name: str, value):
    cpu = R.get(name).kernels["cpu"]

    def kernel(self, *args, **kwargs):
        opts = dict(zip(("dtype", "layout", "device", "pin_memory", "requires_grad", "memory_format"), args))
        opts.update(kwargs)
        fill_value = value
        if name == "full_like":
            fill_value, opts = args[0], dict(zip(("dtype", "layout", "device", "pin_memory", "requires_grad",
                                                   "memory_format"), args[1:]))
        dtype = opts.get("dtype")
        if _on_host(opts.get("device")):
            host = np.empty(self.shape, self.dtype)
            return cpu(host, *args, **kwargs)
        d = dtype.np if dtype is not None else self.dtype
        out = CudaArray.empty(self.shape, d)
        return out if fill_value is None else fill(out, fill_value)

    return kernel


def host_made(op):
    """A kernel that runs the CPU kernel (device inputs downloaded) and uploads its result."""
    cpu = op.kernels["cpu"]
    dev_idx = op.device_arg

    def kernel(*args):
        host = [a.get() if isinstance(a, CudaArray) else a for a in args]
        r = cpu(*host)
        if dev_idx is not None and _on_host(args[dev_idx]):
            return r
        if isinstance(r, (list, tuple)):
            return type(r)(CudaArray.from_host(x) for x in r)
        return CudaArray.from_host(np.asarray(r))

    kernel.__name__ = f"{op.name}_cuda"
    return kernel


def to_copy(self, dtype=None, device=None, non_blocking=False, copy=False):
    """Host to device, device to host, or a cast on the device."""
    cpu = R.get("_to_copy").kernels["cpu"]
    if isinstance(self, np.ndarray):
        return CudaArray.from_host(cpu(self, dtype))
    if _on_host(device):
        host = self.get()
        return host if dtype is None or dtype.np == host.dtype else cpu(host, dtype)
    return copy_strided(self, None if dtype is None else dtype.np)


def clone(self, memory_format=None):
    return copy_strided(self)


def fill_(self, value):
    return full(self.shape, value, self.dtype)


def fill_tensor_(self, value):
    if value.ndim != 0:
        raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor with {value.ndim} dimensions.")
    out = CudaArray.empty(self.shape, self.dtype)
    return copy_into(out, value)


def zero_(self):
    return full(self.shape, 0, self.dtype)


def register() -> list:
    kernels = {
        "zeros": _filled("zeros", 0), "ones": _filled("ones", 1), "empty": _filled("empty", None), "full": _full,
        "zeros_like": _like("zeros_like", 0), "ones_like": _like("ones_like", 1),
        "empty_like": _like("empty_like", None), "full_like": _like("full_like", None),
        "_to_copy": to_copy, "clone": clone, "fill_.Scalar": fill_, "fill_.Tensor": fill_tensor_, "zero_": zero_,
        "copy_": R.get("copy_").kernels["cpu"],  # np.broadcast_to on a CudaArray is a device view
    }
    done = register_table(kernels)
    for op in R.all_ops():
        if "cuda" in op.kernels or "cpu" not in op.kernels:
            continue
        # Random in-place fills (``uniform_``, ``bernoulli_``, ...) are the in-place ops that take a generator.
        if op.kind in (R.RANDOM, R.FACTORY) or (op.kind is R.INPLACE and "generator" in op.arg_names):
            op.kernel("cuda")(host_made(op))
            done.append(op)
    return done
