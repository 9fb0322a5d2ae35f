"""Functional attention: ``scaled_dot_product_attention`` and ``multi_head_attention_forward``.

Both are compositions of registered ops (matmul, softmax, masked_fill, linear
algebra), so autograd, double backward and the tracer see ordinary ops. They
follow PyTorch's reference math step by step, including its conventions for
boolean masks (``True`` = take part in attention for SDPA, ``True`` = masked
out for MultiheadAttention) and for rows whose keys are all masked.

They are written in the subset of Python that script mode compiles (as
PyTorch's own ``multi_head_attention_forward`` is written for TorchScript):
shapes compared as lists, dtypes compared with ``==``, Optional values tested
before use, one name per value. So a scripted ``MultiheadAttention`` or
Transformer runs them as graph nodes, never as Python fallback calls.
"""

from __future__ import annotations

import math
import warnings

from ..._core import dtypes as _dt
from ...ops import api
from ...tensor import Tensor
from ._dropout import dropout

__all__ = ["scaled_dot_product_attention", "multi_head_attention_forward"]

_NEG_INF = float("-inf")


def _dropout(x: Tensor, p: float) -> Tensor:
    """Inverted dropout of attention weights; the weights themselves when ``p`` is 0."""
    if p > 0.0:
        return dropout(x, p, True)
    return x


def _safe_softmax(x: Tensor) -> Tensor:
    """Softmax over the last dim that gives zeros (not NaN) for rows that are all ``-inf``, as PyTorch's SDPA does."""
    dead = api.all(api.eq(x, _NEG_INF), -1, True)
    zeros = api.zeros_like(x)
    out = api.softmax(api.where(dead, zeros, x), -1)
    return api.where(dead, zeros, out)


def scaled_dot_product_attention(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    attn_mask: Tensor | None = None,
    dropout_p: float = 0.0,
    is_causal: bool = False,
    scale: float | None = None,
    enable_gqa: bool = False,
) -> Tensor:
    """``softmax(q @ k.T * scale + mask) @ v`` over the last two dims, as ``torch.nn.functional.scaled_dot_product_attention``.

    A boolean ``attn_mask`` marks positions that take part (``True``); a float one
    is added to the scores. ``dropout_p`` is always applied (pass 0.0 in eval).

    >>> q = toolkit.randn(2, 4, 8); out = F.scaled_dot_product_attention(q, q, q, is_causal=True)
    """
    if query.dtype != key.dtype or query.dtype != value.dtype:
        raise RuntimeError(
            "Expected query, key, and value to have the same dtype, but got query.dtype: "
            f"{_dtype_name(query)} key.dtype: {_dtype_name(key)} and value.dtype: {_dtype_name(value)} instead."
        )
    if query.dim() < 2 or key.dim() < 2 or value.dim() < 2:
        raise RuntimeError(
            "scaled_dot_product_attention: expected query, key and value to have at least 2 dims, got "
            f"{query.dim()}, {key.dim()} and {value.dim()}"
        )
    if is_causal and attn_mask is not None:
        raise RuntimeError("_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True")
    if not query.is_floating_point():
        raise RuntimeError(f"scaled_dot_product_attention: expected a floating-point query, got {_dtype_name(query)}")
    L, S = query.size(-2), key.size(-2)
    scale_factor = 1.0 / math.sqrt(query.size(-1)) if scale is None else scale
    if enable_gqa and query.dim() >= 3 and key.size(-3) != query.size(-3):
        key = api.repeat_interleave(key, query.size(-3) // key.size(-3), -3)
        value = api.repeat_interleave(value, query.size(-3) // value.size(-3), -3)
    scores = api.matmul(query, key.transpose(-2, -1)) * scale_factor
    if is_causal:
        keep = api.tril(api.ones((L, S), dtype=_dt.bool))
        scores = api.masked_fill(scores, api.logical_not(keep), _NEG_INF)
    elif attn_mask is not None:
        if attn_mask.dtype == _dt.bool:
            scores = api.masked_fill(scores, api.logical_not(attn_mask), _NEG_INF)
        else:
            scores = scores + attn_mask
    weights = _safe_softmax(scores)
    weights = _dropout(weights, dropout_p)
    return api.matmul(weights, value)


def _dtype_name(t: Tensor) -> str:
    """PyTorch's C++ dtype spelling in messages (``float``, ``double``, ``c10::Half``, ``signed char``)."""
    d = t.dtype
    if d == _dt.float32:
        return "float"
    if d == _dt.float64:
        return "double"
    if d == _dt.float16:
        return "c10::Half"
    if d == _dt.int64:
        return "long int"
    if d == _dt.int32:
        return "int"
    if d == _dt.int16:
        return "short int"
    if d == _dt.int8:
        return "signed char"
    if d == _dt.uint8:
        return "unsigned char"
    return "bool"


def _mha_shape_check(
    query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None, attn_mask: Tensor | None,
    num_heads: int,
) -> bool:
    """Whether the inputs are batched; PyTorch's AssertionErrors for inconsistent ranks."""
    if query.dim() == 3:
        if key.dim() != 3 or value.dim() != 3:
            raise AssertionError(
                "For batched (3-D) `query`, expected `key` and `value` to be 3-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None:
            if key_padding_mask.dim() != 2:
                raise AssertionError(
                    "For batched (3-D) `query`, expected `key_padding_mask` to be `None` or 2-D"
                    f" but found {key_padding_mask.dim()}-D tensor instead"
                )
        if attn_mask is not None:
            if attn_mask.dim() != 2 and attn_mask.dim() != 3:
                raise AssertionError(
                    "For batched (3-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                    f" but found {attn_mask.dim()}-D tensor instead"
                )
        return True
    if query.dim() == 2:
        if key.dim() != 2 or value.dim() != 2:
            raise AssertionError(
                "For unbatched (2-D) `query`, expected `key` and `value` to be 2-D"
                f" but found {key.dim()}-D and {value.dim()}-D tensors respectively"
            )
        if key_padding_mask is not None:
            if key_padding_mask.dim() != 1:
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `key_padding_mask` to be `None` or 1-D"
                    f" but found {key_padding_mask.dim()}-D tensor instead"
                )
        if attn_mask is not None:
            if attn_mask.dim() != 2 and attn_mask.dim() != 3:
                raise AssertionError(
                    "For unbatched (2-D) `query`, expected `attn_mask` to be `None`, 2-D or 3-D"
                    f" but found {attn_mask.dim()}-D tensor instead"
                )
            if attn_mask.dim() == 3:
                if list(attn_mask.shape) != [num_heads, query.size(0), key.size(0)]:
                    expected = (num_heads, query.size(0), key.size(0))
                    raise AssertionError(f"Expected `attn_mask` shape to be {expected} but got {attn_mask.shape}")
        return False
    raise AssertionError(
        f"query should be unbatched 2D or batched 3D tensor but received {query.dim()}-D query tensor"
    )


def _canonical_mask(
    mask: Tensor | None,
    mask_name: str,
    other_type,
    other_name: str,
    target_type,
    check_other: bool = True,
) -> Tensor | None:
    """A boolean mask as an additive float mask (``-inf`` where True); float masks pass through."""
    if mask is not None:
        mask_dtype = mask.dtype
        is_float = mask.is_floating_point()
        if mask_dtype != _dt.bool and not is_float:
            raise AssertionError(f"only bool and floating types of {mask_name} are supported")
        if check_other and other_type is not None:
            if mask_dtype != other_type:
                warnings.warn(
                    f"Support for mismatched {mask_name} and {other_name} is deprecated. "
                    "Use same type for both instead.",
                    stacklevel=3,
                )
        if not is_float:
            mask = api.masked_fill(api.zeros_like(mask, dtype=target_type), mask, _NEG_INF)
    return mask


def _pad_last(x: Tensor) -> Tensor:
    """Append one zero column on the last dim (``F.pad(x, (0, 1))``)."""
    return api.cat([x, api.zeros_like(x.narrow(-1, 0, 1))], -1)


def _in_projection_packed(q: Tensor, k: Tensor, v: Tensor, w: Tensor, b: Tensor | None) -> list[Tensor]:
    """q, k, v projected by the packed ``(3E, E)`` weight, one matmul when they are the same tensor."""
    E = q.size(-1)
    if k is v:
        if q is k:
            return list(api.chunk(api.linear(q, w, b), 3, -1))
        w_q, w_kv = api.split(w, [E, E * 2], 0)
        if b is None:
            q_p = api.linear(q, w_q, None)
            kv = api.linear(k, w_kv, None)
        else:
            b_q, b_kv = api.split(b, [E, E * 2], 0)
            q_p = api.linear(q, w_q, b_q)
            kv = api.linear(k, w_kv, b_kv)
        k_p, v_p = api.split(kv, E, -1)
        return [q_p, k_p, v_p]
    w_q, w_k, w_v = api.chunk(w, 3, 0)
    if b is None:
        return [api.linear(q, w_q, None), api.linear(k, w_k, None), api.linear(v, w_v, None)]
    b_q, b_k, b_v = api.chunk(b, 3, 0)
    return [api.linear(q, w_q, b_q), api.linear(k, w_k, b_k), api.linear(v, w_v, b_v)]


def _in_projection(
    q: Tensor, k: Tensor, v: Tensor, w_q: Tensor, w_k: Tensor, w_v: Tensor, b: Tensor | None
) -> list[Tensor]:
    """q, k, v projected by separate weights (``kdim``/``vdim`` differ from ``embed_dim``), the bias packed."""
    if b is None:
        return [api.linear(q, w_q, None), api.linear(k, w_k, None), api.linear(v, w_v, None)]
    b_q, b_k, b_v = api.chunk(b, 3, 0)
    return [api.linear(q, w_q, b_q), api.linear(k, w_k, b_k), api.linear(v, w_v, b_v)]


def _check_attn_mask_shape(attn_mask: Tensor, bsz: int, num_heads: int, tgt_len: int, src_len: int) -> Tensor:
    """A 2-D mask as ``(1, L, S)``, a 3-D one checked to be ``(N * heads, L, S)``; PyTorch's RuntimeErrors."""
    if attn_mask.dim() == 2:
        if list(attn_mask.shape) != [tgt_len, src_len]:
            expected = (tgt_len, src_len)
            raise RuntimeError(f"The shape of the 2D attn_mask is {attn_mask.shape}, but should be {expected}.")
        return attn_mask.unsqueeze(0)
    if attn_mask.dim() == 3:
        if list(attn_mask.shape) != [bsz * num_heads, tgt_len, src_len]:
            expected = (bsz * num_heads, tgt_len, src_len)
            raise RuntimeError(f"The shape of the 3D attn_mask is {attn_mask.shape}, but should be {expected}.")
        return attn_mask
    raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")


def multi_head_attention_forward(
    query: Tensor,
    key: Tensor,
    value: Tensor,
    embed_dim_to_check: int,
    num_heads: int,
    in_proj_weight: Tensor | None,
    in_proj_bias: Tensor | None,
    bias_k: Tensor | None,
    bias_v: Tensor | None,
    add_zero_attn: bool,
    dropout_p: float,
    out_proj_weight: Tensor,
    out_proj_bias: Tensor | None,
    training: bool = True,
    key_padding_mask: Tensor | None = None,
    need_weights: bool = True,
    attn_mask: Tensor | None = None,
    use_separate_proj_weight: bool = False,
    q_proj_weight: Tensor | None = None,
    k_proj_weight: Tensor | None = None,
    v_proj_weight: Tensor | None = None,
    static_k: Tensor | None = None,
    static_v: Tensor | None = None,
    average_attn_weights: bool = True,
    is_causal: bool = False,
) -> tuple[Tensor, Tensor | None]:
    """Multi-head attention on sequence-first ``(L, N, E)`` inputs, as ``torch.nn.functional.multi_head_attention_forward``.

    Written in the subset script mode compiles (as PyTorch's is), so a scripted
    ``MultiheadAttention`` or Transformer runs it as graph nodes.
    """
    is_batched = _mha_shape_check(query, key, value, key_padding_mask, attn_mask, num_heads)
    if not is_batched:
        query = query.unsqueeze(1)
        key = key.unsqueeze(1)
        value = value.unsqueeze(1)
        if key_padding_mask is not None:
            key_padding_mask = key_padding_mask.unsqueeze(0)
    tgt_len, bsz, embed_dim = query.shape
    src_len = key.size(0)
    other_type = None
    if attn_mask is not None:
        other_type = attn_mask.dtype
    key_padding_mask = _canonical_mask(key_padding_mask, "key_padding_mask", other_type, "attn_mask", query.dtype)
    if is_causal and attn_mask is None:
        raise RuntimeError(
            "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method "
            "`generate_square_subsequent_mask` to create this mask."
        )
    if is_causal and key_padding_mask is None and not need_weights:
        attn_mask = None
    else:
        attn_mask = _canonical_mask(attn_mask, "attn_mask", None, "", query.dtype, False)
        if key_padding_mask is not None:
            is_causal = False
    if embed_dim != embed_dim_to_check:
        raise AssertionError(f"was expecting embedding dimension of {embed_dim_to_check}, but got {embed_dim}")
    head_dim = embed_dim // num_heads
    if head_dim * num_heads != embed_dim:
        raise AssertionError(f"embed_dim {embed_dim} not divisible by num_heads {num_heads}")
    if use_separate_proj_weight:
        if list(key.shape[:2]) != list(value.shape[:2]):
            raise AssertionError(
                f"key's sequence and batch dims {key.shape[:2]} do not match value's {value.shape[:2]}"
            )
        if q_proj_weight is None or k_proj_weight is None or v_proj_weight is None:
            raise AssertionError(
                "use_separate_proj_weight is True but q_proj_weight, k_proj_weight or v_proj_weight is None"
            )
        q, k, v = _in_projection(query, key, value, q_proj_weight, k_proj_weight, v_proj_weight, in_proj_bias)
    else:
        if list(key.shape) != list(value.shape):
            raise AssertionError(f"key shape {key.shape} does not match value shape {value.shape}")
        if in_proj_weight is None:
            raise AssertionError("use_separate_proj_weight is False but in_proj_weight is None")
        q, k, v = _in_projection_packed(query, key, value, in_proj_weight, in_proj_bias)

    if attn_mask is not None:
        attn_mask = _check_attn_mask_shape(attn_mask, bsz, num_heads, tgt_len, src_len)

    if bias_k is not None and bias_v is not None:
        if static_k is not None or static_v is not None:
            raise AssertionError("bias cannot be added to static key.")
        k = api.cat([k, bias_k.repeat(1, bsz, 1)], 0)
        v = api.cat([v, bias_v.repeat(1, bsz, 1)], 0)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    elif bias_k is not None:
        raise AssertionError("bias_k is set but bias_v is None")
    elif bias_v is not None:
        raise AssertionError("bias_v is set but bias_k is None")

    q = q.reshape(tgt_len, bsz * num_heads, head_dim).transpose(0, 1)
    if static_k is None:
        k = k.reshape(k.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    else:
        k = static_k
    if static_v is None:
        v = v.reshape(v.size(0), bsz * num_heads, head_dim).transpose(0, 1)
    else:
        v = static_v
    if add_zero_attn:
        zeros = api.zeros([bsz * num_heads, 1, head_dim], dtype=k.dtype)
        k = api.cat([k, zeros], 1)
        v = api.cat([v, zeros], 1)
        if attn_mask is not None:
            attn_mask = _pad_last(attn_mask)
        if key_padding_mask is not None:
            key_padding_mask = _pad_last(key_padding_mask)
    src_len = k.size(1)

    if key_padding_mask is not None:
        if list(key_padding_mask.shape) != [bsz, src_len]:
            expected = (bsz, src_len)
            raise AssertionError(f"expecting key_padding_mask shape of {expected}, but got {key_padding_mask.shape}")
        kpm = key_padding_mask.reshape(bsz, 1, 1, src_len).expand(-1, num_heads, -1, -1)
        kpm = kpm.reshape(bsz * num_heads, 1, src_len)
        if attn_mask is None:
            attn_mask = kpm
        else:
            attn_mask = attn_mask + kpm
    if not training:
        dropout_p = 0.0

    if need_weights:
        q_scaled = q * math.sqrt(1.0 / float(q.size(-1)))
        if attn_mask is not None:
            weights = api.baddbmm(attn_mask, q_scaled, k.transpose(-2, -1))
        else:
            weights = api.bmm(q_scaled, k.transpose(-2, -1))
        weights = api.softmax(weights, -1)
        weights = _dropout(weights, dropout_p)
        out = api.bmm(weights, v)
        out = out.transpose(0, 1).reshape(tgt_len * bsz, embed_dim)
        out = api.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
        weights = weights.reshape(bsz, num_heads, tgt_len, src_len)
        if average_attn_weights:
            weights = weights.mean(1)
        if not is_batched:
            out = out.squeeze(1)
            weights = weights.squeeze(0)
        return out, weights

    if attn_mask is not None:
        if attn_mask.size(0) == 1 and attn_mask.dim() == 3:
            attn_mask = attn_mask.unsqueeze(0)
        else:
            attn_mask = attn_mask.reshape(bsz, num_heads, -1, src_len)
    q = q.reshape(bsz, num_heads, tgt_len, head_dim)
    k = k.reshape(bsz, num_heads, src_len, head_dim)
    v = v.reshape(bsz, num_heads, src_len, head_dim)
    out = scaled_dot_product_attention(q, k, v, attn_mask, dropout_p, is_causal)
    out = out.permute(2, 0, 1, 3).reshape(bsz * tgt_len, embed_dim)
    out = api.linear(out, out_proj_weight, out_proj_bias).reshape(tgt_len, bsz, -1)
    if not is_batched:
        out = out.squeeze(1)
    return out, None
