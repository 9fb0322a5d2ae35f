"""``toolkit.cuda.amp``, PyTorch's deprecated ``torch.cuda.amp``: ``autocast``, ``GradScaler``, ``custom_fwd``,
``custom_bwd``, each warning and forwarding to ``toolkit.amp`` with ``device_type="cuda"``.

It lives here, above the tensor layer it needs, and ``toolkit.amp`` installs it as ``toolkit.cuda.amp``
(the device runtime in ``toolkit.cuda`` sits below the tensor layer and may not import it).
"""

from __future__ import annotations

from ._legacy import CudaAutocast as autocast
from ._legacy import CudaGradScaler as GradScaler
from ._legacy import cuda_custom_bwd as custom_bwd
from ._legacy import cuda_custom_fwd as custom_fwd

__all__ = ["GradScaler", "autocast", "custom_bwd", "custom_fwd"]
