"""``torch.special``'s other names for ops ``toolkit`` already has: ``special.erf`` is ``erf``, ``special.psi`` and
``special.digamma`` are ``digamma``, ``special.expit`` is ``sigmoid``, ``special.gammainc`` is ``igamma``...

Each is registered under PyTorch's ATen name (``special_erf``) in the ``special`` namespace, sharing its op's
kernel, meta rule, derivative and samples: one definition, two names. Unlike ``pointwise.alias`` these are
functions of ``toolkit.special`` only, with no Tensor method and no in-place variant, as in PyTorch.
"""

from __future__ import annotations

from . import activation, gamma, nn, reduction, transcendental  # noqa: F401  (register the ops named here)
from .registry import OpDef, get, op


def special_alias(d: OpDef, public: str, schema: str | None = None) -> OpDef:
    """Register ``special_<public>`` as ``toolkit.special.<public>``, another name of op ``d``.

    ``schema`` gives the alias PyTorch's own schema where it differs from ``d``'s (``special.round`` takes
    ``decimals`` with a default of 0; ``special.log_softmax`` takes ``dtype`` by keyword only); the argument
    names stay ``d``'s, so the shared derivative reads them.
    """
    name = f"special_{public}"
    a = op(
        schema or f"{name}{str(d.schema)[len(d.schema.full_name):]}",
        kind=d.kind,
        formula=d.formula,
        promotion=d.promotion,
        mode_promotion=d.mode_promotion,
        check_dtypes=d.check_dtypes,
        method=False,
        function=public,
        namespace="special",
        differentiable=d.differentiable,
        nondiff_args=tuple(d.arg_names[i] for i in d.tensor_args if i not in d.diff_args),
        promote_args=None if d.promote_args is d.tensor_args else tuple(d.arg_names[i] for i in d.promote_args),
        scalar_self=d.scalar_self,
        doc=f"``toolkit.special.{public}``: another name of :func:`{d.name}`.\n\n{d.doc}",
        grad_fn=d,  # ``special.expit`` records ``SigmoidBackward0``
    )(d.kernels["cpu"])
    a.kernels = d.kernels  # shared dict: a device's kernel registered later for ``d`` serves both
    if d.derivative is not None:
        a.grad(d.derivative)
    if d.meta is not None:
        a.meta_rule(d.meta)
    positional = sum(1 for x in a.args if not x.kwarg_only)
    a.samples = lambda rng: ((args, kw) for args, kw in d.samples(rng)
                             if set(kw) <= set(a.arg_names) and len(args) <= positional)
    return a


# torch.special name -> the op it names (and PyTorch's schema where it differs from the op's).
_ALIASES = {
    "erf": ("erf", None),
    "erfc": ("erfc", None),
    "erfinv": ("erfinv", None),
    "expm1": ("expm1", None),
    "exp2": ("exp2", None),
    "log1p": ("log1p", None),
    "digamma": ("digamma", None),
    "psi": ("digamma", None),
    "gammaln": ("lgamma", None),
    "polygamma": ("polygamma", None),
    "multigammaln": ("mvlgamma", None),
    "i0": ("i0", None),
    "logit": ("logit", None),
    "sinc": ("sinc", None),
    "expit": ("sigmoid", None),
    "xlogy": ("xlogy.Tensor", "special_xlogy(Tensor self, Tensor other) -> Tensor"),
    "gammainc": ("igamma", None),
    "gammaincc": ("igammac", None),
    "round": ("round.decimals", "special_round(Tensor self, *, int decimals=0) -> Tensor"),
    "softmax": ("softmax.int", "special_softmax(Tensor self, int dim, ScalarType? dtype=None) -> Tensor"),
    "log_softmax": ("log_softmax.int",
                    "special_log_softmax(Tensor self, int dim, *, ScalarType? dtype=None) -> Tensor"),
    "logsumexp": ("logsumexp", None),
}

ALIASES = {public: special_alias(get(target), public, schema) for public, (target, schema) in _ALIASES.items()}
