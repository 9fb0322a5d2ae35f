"""toolkit: a notebook-first, PyTorch-shaped tensor, autograd and JIT library on numpy and numba.

``import toolkit`` compiles nothing: numba kernels compile on first use and
are cached on disk.
"""

from __future__ import annotations

import importlib as _importlib
import operator as _operator
import warnings as _warnings

from . import (
    autograd,
    cuda,
    fft,  # toolkit.fft: torch.fft's functions
    linalg,
    random,
    special,  # toolkit.special: torch.special's functions
)
from . import dispatch as _dispatch  # plugs itself in below: ops reach it through ops.runtime
from . import factories as _factories
from . import ops as _ops  # registers every op
from ._core import dtypes as _dtypes
from ._core.device import device
from ._core.dtypes import (
    bool,
    cdouble,
    cfloat,
    complex64,
    complex128,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    promote_types,
    set_default_dtype,
    short,
    uint8,
)
from ._core.flags import (
    are_deterministic_algorithms_enabled,
    get_default_device,
    get_deterministic_debug_mode,
    get_float32_matmul_precision,
    is_deterministic_algorithms_warn_only_enabled,
    set_default_device,
    set_deterministic_debug_mode,
    set_float32_matmul_precision,
    use_deterministic_algorithms,
)
from ._core.heap import keep_freed_memory as _keep_freed_memory
from ._core.memory_format import (
    channels_last,
    channels_last_3d,
    contiguous_format,
    memory_format,
    preserve_format,
)
from ._core.shape import Size
from ._core.shape import broadcast_shapes_of_sizes as broadcast_shapes
from ._core.storage import LEGACY_STORAGE_CLASSES as _LEGACY_STORAGES
from ._core.storage import Storage as UntypedStorage
from ._core.storage import TypedStorage
from ._core.threads import get_num_interop_threads, get_num_threads, set_num_interop_threads, set_num_threads
from .autograd import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    no_grad,
    set_grad_enabled,
)
from .dlpack import from_dlpack
from .factories import as_tensor, asarray, from_numpy, scalar_tensor, tensor
from .indexing import nonzero  # with as_tuple, which the registry's nonzero op has not
from .ops import api as _api
from .printing import set_printoptions
from .random import (
    Generator,
    default_generator,
    get_rng_state,
    initial_seed,
    manual_seed,
    seed,
    set_rng_state,
    thread_safe_generator,
)
from .tensor import Tensor

globals().update(_api.exported(None))  # toolkit.add, toolkit.relu...: every op the registry exports here

from ._legacy import CPU_TYPES as _LEGACY_TYPES  # noqa: E402
from ._legacy import CUDA_TYPES as _LEGACY_CUDA_TYPES  # noqa: E402

globals().update(_LEGACY_TYPES)
globals().update({cls.__name__: cls for cls in _LEGACY_STORAGES.values()})  # toolkit.FloatStorage...
for _name, _legacy_type in _LEGACY_CUDA_TYPES.items():
    setattr(cuda, _name, _legacy_type)  # toolkit.cuda.FloatTensor...: made above the device runtime, plugged in

from . import (  # noqa: E402
    _C,
    accelerator,
    amp,
    backends,
    cpu,
    distributions,
    func,
    jit,
    library,  # toolkit.library: ops defined outside the package (custom_op, Library)
    multiprocessing,
    nn,
    onnx,  # toolkit.onnx: export to ONNX (the onnx package itself is loaded only when a model is exported)
    optim,
    profiler,
    testing,
    utils,
    vision,
)
from . import _quantized as _quantized  # noqa: E402,F401  (quantized tensors' kind and kernels)
from ._core.dtypes import qint8, qint32, quint2x4, quint4x2, quint8  # noqa: E402
from ._core.qscheme import (  # noqa: E402
    per_channel_affine,
    per_channel_affine_float_qparams,
    per_channel_symmetric,
    per_tensor_affine,
    per_tensor_symmetric,
    qscheme,
)
from ._sym import *  # noqa: E402, F403
from ._torch_names import *  # noqa: E402, F403  (finfo, layout, frombuffer, cond...: torch's plain names)
from .amp import autocast, is_autocast_available  # noqa: E402
from .amp.state import *  # noqa: E402, F403  (is_autocast_enabled and the other autocast switches)
from .backends import cuda as _backends_cuda  # noqa: E402, F401  (toolkit.backends.cuda.matmul, as torch has it)
from .func import vmap  # noqa: E402  (torch.vmap is torch.func.vmap)
from .functional import cdist, tensordot  # noqa: E402  (torch.functional's, over aten::cdist / aten::tensordot)
from .jit import fork, wait  # noqa: E402  (torch.fork and torch.wait are torch.jit's)
from .serialization import *  # noqa: E402, F403
from .sparse import hspmm, smm, sparse_coo_tensor, sparse_csr_tensor, spmm  # noqa: E402  (sparse COO tensors: toolkit.sparse)

_compile_noted = False


def compile(model=None, *, fullgraph: bool = False, dynamic: bool | None = None, backend="inductor",
            mode: str | None = None, options: dict | None = None, disable: bool = False, **kwargs):
    """PyTorch's ``torch.compile``, accepted so code calling it runs: returns ``model`` itself, run eagerly.

    toolkit compiles through ``toolkit.jit.script`` / ``toolkit.jit.trace`` (graphs, fusion, numba kernels),
    which need code in their subset; ``torch.compile`` promises any Python. Rather than fail on code the JIT
    does not take, this returns the model or function unchanged (so its parameters, ``state_dict`` and
    attributes are the model's own) and notes once, as a warning, that it runs eagerly. With ``model`` None
    it returns a decorator, as PyTorch's does::

        model = toolkit.compile(model)      # the same model
        @toolkit.compile(mode="max-autotune")
        def step(x): ...
    """
    global _compile_noted

    def wrap(fn):
        global _compile_noted
        if not callable(fn):
            raise RuntimeError("toolkit.compile: model must be a callable (a module or a function)")
        if not disable and not _compile_noted:
            _compile_noted = True
            _warnings.warn("toolkit.compile runs the model eagerly (it returns the model unchanged); use "
                           "toolkit.jit.script or toolkit.jit.trace for compiled, fused graphs", UserWarning,
                           stacklevel=3)
        return fn

    return wrap if model is None else wrap(model)


def adjoint(t: Tensor) -> Tensor:
    return t.adjoint()


def isreal(t: Tensor) -> Tensor:
    return t.isreal()


def resolve_neg(t: Tensor) -> Tensor:
    return t.resolve_neg()


def is_tensor(obj) -> bool:
    return isinstance(obj, Tensor)


def numel(t: Tensor) -> int:
    return t.numel()


def is_floating_point(t: Tensor) -> bool:
    return t.is_floating_point()


def can_cast(from_, to) -> bool:
    return _dtypes.can_cast(from_, to)


def result_type(tensor1, tensor2) -> dtype:
    """The dtype an elementwise op on these two operands produces."""
    dims, zeros, scalars = [], [], []
    for x in (tensor1, tensor2):
        if isinstance(x, Tensor):
            (zeros if x.ndim == 0 else dims).append(x.dtype)
        else:
            scalars.append(x)
    return _dtypes.result_type_from(dims, zeros, scalars)


__version__ = "0.1.0"

# Submodules loaded on first use, so ``import toolkit`` does not pay for them; ``toolkit.ao.quantization`` then
# works without an import of its own, as ``torch.ao.quantization`` does (``quantization``: its older name).
_ON_FIRST_USE = frozenset({"ao", "quantization"})


def __getattr__(name: str):
    if name in _ON_FIRST_USE:
        return _importlib.import_module(f".{name}", __name__)
    raise AttributeError(f"module 'toolkit' has no attribute '{name}'")

_keep_freed_memory()  # warm pages for a training loop's arrays (toolkit._core.heap)
