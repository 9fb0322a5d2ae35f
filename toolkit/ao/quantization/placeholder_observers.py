"""Observers that record nothing to compute: they carry a configuration (the dtype a module converts to, whether
activations are quantized dynamically) to ``from_float``, or keep the tensors they see for debugging, as
``torch.ao.quantization``'s ``PlaceholderObserver``, ``NoopObserver``, ``RecordingObserver`` and
``ReuseInputObserver`` do. None of them has quantization parameters to give."""

from __future__ import annotations

import warnings

from ..._core import dtypes as _dt
from . import _qtypes as q
from .observer import _FLOAT32_EPS, ObserverBase


def _no_qparams(name: str):
    raise Exception(f"calculate_qparams should not be called for {name}")  # noqa: TRY002 - PyTorch's type


class PlaceholderObserver(ObserverBase):
    """Passes its input through; its ``dtype``/``is_dynamic`` tell ``from_float`` how to convert (float16
    weights, or int8 weights with activations quantized at run time)."""

    def __init__(self, dtype=_dt.float32, custom_op_name: str = "", compute_dtype=None, quant_min=None,
                 quant_max=None, qscheme=None, eps=None, is_dynamic: bool = False) -> None:
        super().__init__(dtype=dtype, is_dynamic=is_dynamic)
        self.qscheme = q.per_tensor_affine if qscheme is None else qscheme
        self.quant_min = quant_min
        self.quant_max = quant_max
        self.eps = _FLOAT32_EPS if eps is None else eps
        self.custom_op = custom_op_name
        if compute_dtype:
            warnings.warn("Please use `is_dynamic` instead of `compute_dtype`. `compute_dtype` will be "
                          "deprecated in a future release of PyTorch.", stacklevel=2)

    def forward(self, x):
        return x

    def extra_repr(self) -> str:
        return f"dtype={self.dtype}, is_dynamic={self.is_dynamic}"

    def calculate_qparams(self):
        _no_qparams("PlaceholderObserver")


class RecordingObserver(ObserverBase):
    """Keeps a copy of every tensor it sees (``get_tensor_value()``), for debugging."""

    def __init__(self, dtype=q.quint8):
        super().__init__(dtype=dtype, is_dynamic=False)
        self.tensor_val: list = []

    def forward(self, x):
        self.tensor_val.append(x.clone())
        return x

    def calculate_qparams(self):
        _no_qparams("RecordingObserver")

    def get_tensor_value(self) -> list:
        return self.tensor_val


class NoopObserver(ObserverBase):
    """Passes its input through; only its ``dtype`` (float16 by default) is read."""

    def __init__(self, dtype=_dt.float16, custom_op_name: str = "") -> None:
        super().__init__(dtype=dtype, is_dynamic=False)
        self.custom_op = custom_op_name

    def forward(self, x):
        return x

    def calculate_qparams(self):
        _no_qparams("NoopObserver")


class ReuseInputObserver(ObserverBase):
    """Marks an op (a reshape) whose output reuses its input's observer; passes its input through."""

    def __init__(self) -> None:
        super().__init__(q.quint8, is_dynamic=False)

    def forward(self, x):
        return x

    def calculate_qparams(self):
        _no_qparams("ReuseInputObserver")


default_placeholder_observer = PlaceholderObserver
default_debug_observer = RecordingObserver
default_reuse_input_observer = ReuseInputObserver
default_dynamic_quant_observer = PlaceholderObserver.with_args(dtype=q.quint8, quant_min=0, quant_max=255,
                                                               is_dynamic=True)
