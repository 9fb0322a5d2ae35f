"""``toolkit.backends.cuda.matmul``: PyTorch's switches for CUDA matrix products.

``allow_tf32`` is the same switch as ``toolkit.set_float32_matmul_precision``
(True for ``"high"``/``"medium"``, False for ``"highest"``), as in PyTorch; the
reduced-precision reductions are kept for code that sets them. toolkit's CUDA
products accumulate in the input's dtype or wider at every setting::

    toolkit.backends.cuda.matmul.allow_tf32 = True
    toolkit.get_float32_matmul_precision()  # 'high'
"""

from __future__ import annotations

from .._core.flags import SWITCHES


class MatmulFlags:
    """The ``matmul`` flags object; an unknown name is an AttributeError, as PyTorch's ``cuBLASModule``."""

    _KEPT = ("allow_fp16_reduced_precision_reduction", "allow_bf16_reduced_precision_reduction",
             "allow_fp16_accumulation")

    def __init__(self):
        values = {"allow_fp16_reduced_precision_reduction": True, "allow_bf16_reduced_precision_reduction": True,
                  "allow_fp16_accumulation": False}
        object.__setattr__(self, "_values", values)

    def __getattr__(self, name: str):
        if name == "allow_tf32":
            return SWITCHES.float32_matmul_precision != "highest"
        if name in self._KEPT:
            return self._values[name]
        raise AttributeError(f"Unknown attribute {name}")

    def __setattr__(self, name: str, value) -> None:
        if name == "allow_tf32":
            SWITCHES.float32_matmul_precision = "high" if value else "highest"
        elif name in self._KEPT:
            self._values[name] = value
        else:
            raise AttributeError(f"Unknown attribute {name}")


matmul = MatmulFlags()


def is_built() -> bool:
    """Whether toolkit can run CUDA kernels at all (numba.cuda is part of numba, so always)."""
    return True
