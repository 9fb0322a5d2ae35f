"""``MultiheadAttention``, shaped like ``torch.nn.MultiheadAttention`` (same parameters, init and outputs)."""

from __future__ import annotations

from ...ops import api
from ...tensor import Tensor
from .. import init
from ..functional import _attention as FA
from ..parameter import Parameter
from .linear import NonDynamicallyQuantizableLinear
from .module import Module

__all__ = ["MultiheadAttention"]


class MultiheadAttention(Module):
    """Attention from ``num_heads`` parallel heads over projected queries, keys and values.

    Parameters: ``in_proj_weight (3E, E)`` and ``in_proj_bias (3E,)`` (or
    ``q/k/v_proj_weight`` when ``kdim``/``vdim`` differ from ``embed_dim``),
    ``out_proj`` (Linear E -> E), optional ``bias_k``/``bias_v`` (1, 1, E).
    ``forward`` returns ``(attn_output, attn_weights)``, the weights averaged
    over heads unless ``average_attn_weights=False``.

    >>> mha = nn.MultiheadAttention(16, 4, batch_first=True); out, w = mha(x, x, x)
    """

    __constants__ = ["batch_first"]

    def __init__(
        self,
        embed_dim: int,
        num_heads: int,
        dropout: float = 0.0,
        bias: bool = True,
        add_bias_kv: bool = False,
        add_zero_attn: bool = False,
        kdim: int | None = None,
        vdim: int | None = None,
        batch_first: bool = False,
        device=None,
        dtype=None,
    ) -> None:
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        fk = {"device": device, "dtype": dtype}
        super().__init__()
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads = num_heads
        self.dropout = dropout
        self.batch_first = batch_first
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != self.embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(api.empty((embed_dim, embed_dim), **fk))
            self.k_proj_weight = Parameter(api.empty((embed_dim, self.kdim), **fk))
            self.v_proj_weight = Parameter(api.empty((embed_dim, self.vdim), **fk))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(api.empty((3 * embed_dim, embed_dim), **fk))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(api.empty((3 * embed_dim,), **fk))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **fk)
        if add_bias_kv:
            self.bias_k = Parameter(api.empty((1, 1, embed_dim), **fk))
            self.bias_v = Parameter(api.empty((1, 1, embed_dim), **fk))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        """Xavier-uniform projections, zero biases, Xavier-normal ``bias_k``/``bias_v`` (PyTorch's order)."""
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
            init.constant_(self.out_proj.bias, 0.0)
        if self.bias_k is not None:
            init.xavier_normal_(self.bias_k)
        if self.bias_v is not None:
            init.xavier_normal_(self.bias_v)

    def forward(
        self,
        query: Tensor,
        key: Tensor,
        value: Tensor,
        key_padding_mask: Tensor | None = None,
        need_weights: bool = True,
        attn_mask: Tensor | None = None,
        average_attn_weights: bool = True,
        is_causal: bool = False,
    ) -> tuple[Tensor, Tensor | None]:
        is_batched = query.dim() == 3
        key_padding_mask = FA._canonical_mask(
            key_padding_mask, "key_padding_mask", None if attn_mask is None else attn_mask.dtype,
            "attn_mask", query.dtype,
        )
        attn_mask = FA._canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, check_other=False)
        if self.batch_first and is_batched:  # keep query/key/value identities: self-attention projects once
            if key is value:
                if query is key:
                    query = query.transpose(1, 0)
                    key = query
                    value = query
                else:
                    query = query.transpose(1, 0)
                    key = key.transpose(1, 0)
                    value = key
            else:
                query = query.transpose(1, 0)
                key = key.transpose(1, 0)
                value = value.transpose(1, 0)
        if not self._qkv_same_embed_dim:
            out, weights = FA.multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
                training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
                attn_mask=attn_mask, use_separate_proj_weight=True, q_proj_weight=self.q_proj_weight,
                k_proj_weight=self.k_proj_weight, v_proj_weight=self.v_proj_weight,
                average_attn_weights=average_attn_weights, is_causal=is_causal,
            )
        else:
            out, weights = FA.multi_head_attention_forward(
                query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight, self.in_proj_bias,
                self.bias_k, self.bias_v, self.add_zero_attn, self.dropout, self.out_proj.weight, self.out_proj.bias,
                training=self.training, key_padding_mask=key_padding_mask, need_weights=need_weights,
                attn_mask=attn_mask, average_attn_weights=average_attn_weights, is_causal=is_causal,
            )
        if self.batch_first and is_batched:
            out = out.transpose(1, 0)
        return out, weights

    def merge_masks(self, attn_mask: Tensor | None, key_padding_mask: Tensor | None, query: Tensor):
        """One ``(N, heads, L, S)`` additive mask from both masks, and its type (0, 1 or 2) as PyTorch reports it."""
        mask_type = None
        merged = None
        if key_padding_mask is not None:
            mask_type = 1
            merged = key_padding_mask
        if attn_mask is not None:
            batch_size, seq_len, _ = query.shape
            mask_type = 2
            if attn_mask.dim() == 3:
                attn_mask_expanded = attn_mask.reshape(batch_size, -1, seq_len, seq_len)
            else:
                attn_mask_expanded = attn_mask.reshape(1, 1, seq_len, seq_len).expand(
                    batch_size, self.num_heads, -1, -1)
            merged = attn_mask_expanded
            if key_padding_mask is not None:
                kpm = key_padding_mask.reshape(batch_size, 1, 1, seq_len).expand(-1, self.num_heads, -1, -1)
                merged = attn_mask_expanded + kpm
        return merged, mask_type
