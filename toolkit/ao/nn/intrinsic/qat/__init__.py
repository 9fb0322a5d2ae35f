"""``toolkit.ao.nn.intrinsic.qat``: the fused sequences for quantization-aware training (fake-quantized weights;
conv-bn with the BatchNorm folded into the weight), as ``torch.ao.nn.intrinsic.qat`` defines them."""

from .modules import *  # noqa: F401, F403
from .modules import __all__  # noqa: F401
