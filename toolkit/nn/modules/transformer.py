"""``TransformerEncoderLayer`` and ``TransformerEncoder``, shaped like ``torch.nn`` (same submodule names).

Submodules carry PyTorch's names (``self_attn``, ``linear1``, ``dropout``,
``linear2``, ``norm1``, ``norm2``, ``dropout1``, ``dropout2``) so a PyTorch
state dict loads unchanged. Only the reference ("slow") path is implemented;
PyTorch's nested-tensor inference path is reproduced by its visible effect:
``TransformerEncoder`` writes zeros at padded positions (before ``norm``)
exactly when PyTorch would take that path.
"""

from __future__ import annotations

import copy
import warnings
from collections.abc import Callable

from ...autograd import is_grad_enabled
from ...ops import api
from ...tensor import Tensor
from .. import functional as F
from ..functional import _attention as FA
from .activation import GELU, ReLU
from .attention import MultiheadAttention
from .container import ModuleList
from .dropout import Dropout
from .linear import Linear
from .module import Module
from .normalization import LayerNorm

__all__ = ["TransformerEncoderLayer", "TransformerEncoder"]

_NEG_INF = float("-inf")


def _get_activation_fn(activation: str) -> Callable[[Tensor], Tensor]:
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


def _generate_square_subsequent_mask(sz: int, device=None, dtype=None) -> Tensor:
    """A float ``(sz, sz)`` mask with ``-inf`` above the diagonal and 0 elsewhere."""
    return api.triu(api.full([sz, sz], _NEG_INF, dtype=dtype, device=device), 1)


def _get_seq_len(src: Tensor, batch_first: bool) -> int | None:
    """The sequence length of a batched (3-D) or unbatched (2-D) input; None for other ranks."""
    if src.dim() == 2:
        return src.size(0)
    if src.dim() == 3:
        if batch_first:
            return src.size(1)
        return src.size(0)
    return None


def _detect_is_causal_mask(mask: Tensor | None, is_causal: bool | None = None, size: int | None = None) -> bool:
    """``is_causal`` when given; otherwise whether ``mask`` equals the square subsequent mask."""
    if is_causal is not None:
        return is_causal
    if mask is None:
        return False
    sz = mask.size(-2)
    if size is not None:
        sz = size
    causal = _generate_square_subsequent_mask(sz, dtype=mask.dtype)
    if list(mask.shape) != list(causal.shape):
        return False
    return bool(api.equal(mask, causal))


class TransformerEncoderLayer(Module):
    """Self-attention then a feed-forward block, each with a residual and LayerNorm (post-norm, or pre-norm with ``norm_first``).

    >>> layer = nn.TransformerEncoderLayer(d_model=16, nhead=4, batch_first=True); y = layer(x)
    """

    __constants__ = ["norm_first"]

    def __init__(
        self,
        d_model: int,
        nhead: int,
        dim_feedforward: int = 2048,
        dropout: float = 0.1,
        activation: str | Callable[[Tensor], Tensor] = F.relu,
        layer_norm_eps: float = 1e-5,
        batch_first: bool = False,
        norm_first: bool = False,
        bias: bool = True,
        device=None,
        dtype=None,
    ) -> None:
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **fk)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **fk)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **fk)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **fk)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        if isinstance(activation, str):
            activation = _get_activation_fn(activation)
        if activation is F.relu or isinstance(activation, ReLU):
            self.activation_relu_or_gelu = 1
        elif activation is F.gelu or isinstance(activation, GELU):
            self.activation_relu_or_gelu = 2
        else:
            self.activation_relu_or_gelu = 0
        self.activation = activation

    def __setstate__(self, state: dict) -> None:
        super().__setstate__(state)
        if not hasattr(self, "activation"):
            self.activation = F.relu

    def forward(
        self,
        src: Tensor,
        src_mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool = False,
    ) -> Tensor:
        src_key_padding_mask = FA._canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", None if src_mask is None else src_mask.dtype,
            "src_mask", src.dtype,
        )
        src_mask = FA._canonical_mask(src_mask, "src_mask", None, "", src.dtype, check_other=False)
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal=is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal=is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x: Tensor, attn_mask, key_padding_mask, is_causal: bool = False) -> Tensor:
        x = self.self_attn(x, x, x, attn_mask=attn_mask, key_padding_mask=key_padding_mask,
                           need_weights=False, is_causal=is_causal)[0]
        return self.dropout1(x)

    def _ff_block(self, x: Tensor) -> Tensor:
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


class TransformerEncoder(Module):
    """A stack of ``num_layers`` deep copies of ``encoder_layer`` (``layers.0``, ``layers.1``...), then ``norm``."""

    __constants__ = ["norm"]

    def __init__(
        self,
        encoder_layer: TransformerEncoderLayer,
        num_layers: int,
        norm: Module | None = None,
        enable_nested_tensor: bool = True,
        mask_check: bool = True,
    ) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = enable_nested_tensor
        self.mask_check = mask_check
        why = _why_not_sparsity_fast_path(encoder_layer)
        if enable_nested_tensor and why:
            warnings.warn(f"enable_nested_tensor is True, but self.use_nested_tensor is False because {why}",
                          stacklevel=2)
            self.use_nested_tensor = False

    def forward(
        self,
        src: Tensor,
        mask: Tensor | None = None,
        src_key_padding_mask: Tensor | None = None,
        is_causal: bool | None = None,
    ) -> Tensor:
        src_key_padding_mask = FA._canonical_mask(
            src_key_padding_mask, "src_key_padding_mask", None if mask is None else mask.dtype, "mask", src.dtype
        )
        mask = FA._canonical_mask(mask, "mask", None, "", src.dtype, check_other=False)
        seq_len = _get_seq_len(src, self.layers[0].self_attn.batch_first)
        is_causal = _detect_is_causal_mask(mask, is_causal, seq_len)
        output = src
        for mod in self.layers:
            output = mod(output, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask)
        if src_key_padding_mask is not None and self._takes_nested_path(src, mask, src_key_padding_mask):
            padded = api.logical_not(api.eq(src_key_padding_mask, 0)).unsqueeze(-1)
            output = api.masked_fill(output, padded, 0.0)
        if self.norm is not None:
            output = self.norm(output)
        return output


    def _takes_nested_path(self, src: Tensor, mask: Tensor | None, key_padding_mask: Tensor | None) -> bool:
        """Whether PyTorch would run this call on nested tensors (inference, left-aligned padding mask, no mask)."""
        first = self.layers[0]
        if not self.use_nested_tensor or first.training or src.dim() != 3 or key_padding_mask is None:
            return False
        if mask is not None:
            return False
        if self.mask_check:
            valid = api.eq(key_padding_mask, 0)
            left_aligned = api.arange(valid.size(1)).unsqueeze(0) < valid.sum(1, keepdim=True)
            if not bool(api.equal(valid, left_aligned)):
                return False
        if is_grad_enabled():
            sa = first.self_attn
            if (src.requires_grad or _requires_grad(sa.in_proj_weight) or _requires_grad(sa.in_proj_bias)
                    or _requires_grad(sa.out_proj.weight) or _requires_grad(sa.out_proj.bias)
                    or _requires_grad(first.norm1.weight) or _requires_grad(first.norm1.bias)
                    or _requires_grad(first.norm2.weight) or _requires_grad(first.norm2.bias)
                    or _requires_grad(first.linear1.weight) or _requires_grad(first.linear1.bias)
                    or _requires_grad(first.linear2.weight) or _requires_grad(first.linear2.bias)):
                return False
        return True


def _requires_grad(t: Tensor | None) -> bool:
    return t is not None and t.requires_grad


def _why_not_sparsity_fast_path(layer) -> str:
    """PyTorch's reason for not using nested tensors, reported in the same warning."""
    name = "encoder_layer"
    if not isinstance(layer, TransformerEncoderLayer):
        return f"{name} was not TransformerEncoderLayer"
    if layer.norm_first:
        return f"{name}.norm_first was True"
    if not layer.self_attn.batch_first:
        return f"{name}.self_attn.batch_first was not True(use batch_first for better inference performance)"
    if not layer.self_attn._qkv_same_embed_dim:
        return f"{name}.self_attn._qkv_same_embed_dim was not True"
    if layer.self_attn.in_proj_bias is None:
        return f"{name}.self_attn was passed bias=False"
    if not layer.activation_relu_or_gelu:
        return f"{name}.activation_relu_or_gelu was not True"
    if layer.norm1.eps != layer.norm2.eps:
        return f"{name}.norm1.eps was not equal to {name}.norm2.eps"
    if layer.self_attn.num_heads % 2 == 1:
        return f"{name}.self_attn.num_heads is odd"
    return ""
