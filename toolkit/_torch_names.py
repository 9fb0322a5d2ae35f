"""The plain-Python names of ``torch`` that are not ops, gathered for ``toolkit/__init__``: dtype limits, layouts,
buffers, switches, introspection, ``cond`` and the symbolic-size hints; each lives in a module of its own kind.
(``fork``/``wait``, which are ``toolkit.jit``'s, ``toolkit/__init__`` takes from there itself.)"""

from __future__ import annotations

from . import types  # noqa: F401  (toolkit.types, as torch.types)
from ._buffers import from_file, frombuffer
from ._cond import cond
from ._core.layout_kinds import (
    _mkldnn,
    jagged,
    layout,
    sparse_bsc,
    sparse_bsr,
    sparse_coo,
    sparse_csc,
    sparse_csr,
    strided,
)
from ._core.type_info import finfo, iinfo
from ._introspection import get_device_module, is_storage, is_vulkan_available, typename
from ._switches import (
    init_num_threads,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    is_warn_always_enabled,
    set_anomaly_enabled,
    set_default_tensor_type,
    set_flush_denormal,
    set_warn_always,
)
from ._sym_constraints import sym_constrain_range, sym_constrain_range_for_size, sym_fresh_size
from .nn.attention import SDPBackend as _SDPBackend  # noqa: F401  (loads toolkit.nn.attention, as torch does)
from .utils import hooks as _utils_hooks  # noqa: F401  (toolkit.utils.hooks likewise)

__all__ = ["_mkldnn", "cond", "finfo", "from_file", "frombuffer", "get_device_module", "iinfo",
           "init_num_threads", "is_anomaly_check_nan_enabled", "is_anomaly_enabled", "is_storage",
           "is_vulkan_available", "is_warn_always_enabled", "jagged", "layout", "set_anomaly_enabled",
           "set_default_tensor_type", "set_flush_denormal", "set_warn_always", "sparse_bsc", "sparse_bsr",
           "sparse_coo", "sparse_csc", "sparse_csr", "strided", "sym_constrain_range", "sym_constrain_range_for_size",
           "sym_fresh_size", "typename", "types"]
