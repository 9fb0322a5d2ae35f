"""Op families; importing this package registers every op in the registry."""

import importlib.util as _importlib_util

from . import (  # noqa: F401
    activation,
    activation_nn,
    batch_norm_parts,
    combinatorics,
    comparison,
    complex_ops,
    conv,
    conversion,
    covariance,
    ctc_loss,
    decomposition,
    differences,
    distances,
    dropout,
    elementwise,
    embedding_bag,
    extrema,
    factorization,
    factory,
    factory_indices,
    factory_strided,
    fake_quantize,
    fft,
    fft_freq,
    fft_primitives,
    fill,
    fill_diagonal,
    float_bits,
    fractional_pool,
    gamma,
    gamma_sampling,
    gradient,
    grid_sample,
    histogramdd,
    histograms,
    householder,
    im2col,
    indexing,
    ldl,
    linalg,
    linalg_eig,
    linalg_structure,
    loss,
    loss_nll,
    lowrank,
    lu,
    lu_with_info,
    margin_losses,
    matrix_functions,
    moments,
    nan_reductions,
    nn,
    nn_linear,
    normalization,
    normalization_aten,
    norms,
    one_hot,
    padding,
    pixel_shuffle,
    pointwise,
    pooling,
    pooling_1d,
    pooling_3d,
    pooling_adaptive,
    predicates,
    products,
    put,
    qr_householder,
    quantiles,
    quantized,
    quantized_conv,
    quantized_elementwise,
    quantized_linear,
    quantized_pool,
    random,
    reduction,
    rnn_cells,
    rnn_fused,
    rrelu,
    scans,
    scatter_reduce,
    search,
    selection,
    shape,
    shape_join,
    shape_order,
    solves,
    sorting,
    sparse_ops,
    special_aliases,
    special_bessel,
    special_functions,
    special_polynomials,
    spectral,
    splits,
    tensor_solves,
    transcendental,
    uniques,
    unpool,
    upsample,
    vander,
    view,
    view_compose,
    view_copies,
    view_inplace,
    view_order,
    view_parts,
    windows,
)
from .registry import all_ops, get, names, op  # noqa: F401


class _OpNamespace:
    """``toolkit.ops.<namespace>``: the ops registered in one namespace (``extension::lltm_forward`` is
    ``toolkit.ops.extension.lltm_forward``), as ``torch.ops.<namespace>`` gives them."""

    def __init__(self, name: str):
        self.name = name

    def __getattr__(self, op_name: str):
        if not op_name.startswith("__"):
            try:
                return get(f"{self.name}::{op_name}")
            except KeyError:
                pass
        raise AttributeError(f"'_OpNamespace' '{self.name}' object has no attribute '{op_name}'")

    def __repr__(self) -> str:
        return f"toolkit.ops.{self.name}"


def __getattr__(name: str):
    """A namespace ops are registered in (``toolkit.library`` defines them: ``toolkit.ops.extension``). This package's
    own modules keep their names (``toolkit.ops.quantized`` is the module; its ops are ``get("quantized::linear")``),
    and a name no op uses stays an AttributeError, so ``from toolkit.ops import <module>`` still imports modules."""
    if (not name.startswith("_") and any(n.startswith(name + "::") for n in names())
            and _importlib_util.find_spec(f"{__name__}.{name}") is None):
        return _OpNamespace(name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

