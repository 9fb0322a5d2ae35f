"""Dynamically quantized LSTM and GRU: int8 weights, float activations quantized on the fly at every gate
product, as ``torch.ao.nn.quantized.dynamic.LSTM``/``GRU`` (same constructor, state dict keys, checks and
numbers for the same weights). ``from_float`` turns a float ``nn.LSTM``/``nn.GRU`` carrying a ``qconfig`` into
one; ``quantize_dynamic`` calls it::

    lstm = nn.LSTM(16, 32, num_layers=2)
    lstm.qconfig = default_dynamic_qconfig
    qlstm = LSTM.from_float(lstm)
    out, (h, c) = qlstm(x)                 # x (T, B, 16) float32, or a PackedSequence
"""

from __future__ import annotations

import numbers
import warnings

from ..... import nn
from .....nn.modules.module import _addindent
from .....nn.utils.rnn import PackedSequence
from .....ops import api
from .....tensor import Tensor
from ....quantization import _qtypes
from . import _recurrence
from ._packed import (
    CellParamsDynamic,
    PackedParameter,
    pack_weight_bias,
    quantize_weight,
    unpack,
    weight_observer_factory,
)

__all__ = ["RNNBase", "LSTM", "GRU"]

_GATES = {"LSTM": 4, "GRU": 3}


def _permute(hx: Tensor, permutation: Tensor | None) -> Tensor:
    return hx if permutation is None else hx.index_select(1, permutation)


class RNNBase(nn.Module):
    """What LSTM and GRU share: the per-layer packed weights (``_all_weight_values``), the checks and the
    layer/direction loop. Built directly, the weights are random (``randn`` quantized with scale 0.1), as
    PyTorch's; ``from_float`` or ``load_state_dict`` gives them meaning."""

    _FLOAT_MODULE = nn.RNNBase
    _version = 2

    def __init__(self, mode: str, input_size: int, hidden_size: int, num_layers: int = 1, bias: bool = True,
                 batch_first: bool = False, dropout: float = 0.0, bidirectional: bool = False,
                 dtype=_qtypes.qint8) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.dtype = dtype
        self.version = 2
        self.training = False
        if not isinstance(dropout, numbers.Number) or not 0 <= dropout <= 1 or isinstance(dropout, bool):
            raise ValueError("dropout should be a number in range [0, 1] representing the probability of an "
                             "element being zeroed")
        if dropout > 0 and num_layers == 1:
            warnings.warn("dropout option adds dropout after all but last recurrent layer, so non-zero dropout "
                          f"expects num_layers greater than 1, but got dropout={dropout} and "
                          f"num_layers={num_layers}", stacklevel=2)
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        cells = []
        for layer in range(num_layers):
            for _ in range(self._num_directions):
                layer_input = input_size if layer == 0 else hidden_size * self._num_directions
                w_ih, w_hh = api.randn(gate_size, layer_input), api.randn(gate_size, hidden_size)
                b_ih, b_hh = api.randn(gate_size), api.randn(gate_size)
                if dtype is not _qtypes.qint8:
                    raise NotImplementedError(f"toolkit's dynamic quantized {mode} stores int8 weights only, not "
                                              f"{dtype}")
                q_ih = api.quantize_per_tensor(w_ih, 0.1, 0, _qtypes.qint8)
                q_hh = api.quantize_per_tensor(w_hh, 0.1, 0, _qtypes.qint8)
                cells.append(self._cell(q_ih, q_hh, b_ih, b_hh))
        self._all_weight_values = nn.ModuleList(cells)

    @property
    def _num_directions(self) -> int:
        return 2 if self.bidirectional else 1

    def _cell(self, q_ih: Tensor, q_hh: Tensor, b_ih: Tensor, b_hh: Tensor) -> PackedParameter:
        params = CellParamsDynamic(pack_weight_bias(q_ih, b_ih, self.dtype), pack_weight_bias(q_hh, b_hh, self.dtype),
                                   b_ih, b_hh, reduce_range=self.version is not None and self.version >= 2)
        return PackedParameter(params)

    def _get_name(self) -> str:
        return "DynamicQuantizedRNN"

    # The float layers' repr arguments; the dynamic modules have no projection.
    proj_size = 0
    extra_repr = nn.RNNBase.extra_repr

    def __repr__(self) -> str:
        """``Module.__repr__`` without the packed weights' holders (PyTorch prints none of them)."""
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): {_addindent(repr(mod), 2)}" for key, mod in self._modules.items()
                       if not isinstance(mod, (PackedParameter, nn.ModuleList))]
        lines = extra_lines + child_lines
        body = ""
        if lines:
            body = extra_lines[0] if len(extra_lines) == 1 and not child_lines else \
                "\n  " + "\n  ".join(lines) + "\n"
        return f"{self._get_name()}({body})"

    # -- checks, with PyTorch's messages --------------------------------------------------------
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        expected = 2 if batch_sizes is not None else 3
        if input.dim() != expected:
            raise RuntimeError(f"input must have {expected} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * self._num_directions, mini_batch, self.hidden_size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        self.version = local_metadata.get("version", None)
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)

    # -- weights ---------------------------------------------------------------------------------
    def _names(self):
        """``(index, suffix, layer)`` of each layer and direction, in ``_all_weight_values`` order."""
        for layer in range(self.num_layers):
            for direction in range(self._num_directions):
                yield layer * self._num_directions + direction, "_reverse" if direction == 1 else "", layer

    def set_weight_bias(self, weight_bias_dict: dict) -> None:
        """Pack quantized weights and float biases named as the float module's parameters
        (``weight_ih_l0``, ``bias_hh_l1_reverse``...), one flat dict of all of them."""
        cells = []
        for _, suffix, layer in self._names():
            w = [weight_bias_dict[f"weight_{k}_l{layer}{suffix}"] for k in ("ih", "hh")]
            b = [weight_bias_dict[f"bias_{k}_l{layer}{suffix}"] for k in ("ih", "hh")]
            cells.append(self._cell(w[0], w[1], b[0], b[1]))
        self._all_weight_values = nn.ModuleList(cells)

    def _weight_bias(self) -> dict:
        out: dict = {"weight": {}, "bias": {}}
        for idx, suffix, layer in self._names():
            params = self._all_weight_values[idx].param
            for kind, packed in (("ih", params.packed_ih), ("hh", params.packed_hh)):
                weight, bias = unpack(packed)
                out["weight"][f"weight_{kind}_l{layer}{suffix}"] = weight
                out["bias"][f"bias_{kind}_l{layer}{suffix}"] = bias
        return out

    def get_weight(self) -> dict:
        """The int8 weights by the float module's names (``weight_ih_l0``...)."""
        return self._weight_bias()["weight"]

    def get_bias(self) -> dict:
        """The float biases by the float module's names (``bias_ih_l0``...)."""
        return self._weight_bias()["bias"]

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> RNNBase:
        """The dynamic twin of a float ``nn.LSTM`` or ``nn.GRU`` (with a ``qconfig``): each weight observed by
        a fresh weight observer and quantized, and packed with its float bias."""
        if type(mod) not in (nn.LSTM, nn.GRU):
            raise AssertionError("nn.quantized.dynamic.RNNBase.from_float only works for nn.LSTM and nn.GRU")
        factory = weight_observer_factory(mod, RuntimeError, "Unsupported dtype for dynamic RNN quantization: {}")
        if getattr(mod, "proj_size", 0):
            raise NotImplementedError(f"nn.quantized.dynamic.LSTM.from_float: proj_size={mod.proj_size} is not "
                                      "supported (the dynamic LSTM has no projection weights)")
        qmod = {"LSTM": LSTM, "GRU": GRU}[mod.mode](mod.input_size, mod.hidden_size, mod.num_layers, mod.bias,
                                                     mod.batch_first, mod.dropout, mod.bidirectional,
                                                     factory().dtype)
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        weights = {}
        for _, suffix, layer in qmod._names():
            for kind in ("ih", "hh"):
                name = f"l{layer}{suffix}"
                weights[f"weight_{kind}_{name}"] = quantize_weight(getattr(mod, f"weight_{kind}_{name}"), factory)
                weights[f"bias_{kind}_{name}"] = getattr(mod, f"bias_{kind}_{name}")
        qmod.set_weight_bias(weights)
        return qmod

    # -- the recurrence ------------------------------------------------------------------------
    # The Tensor path is written in the subset script mode compiles (as ``nn.RNNBase``'s): the layer/direction
    # loop walks ``_all_weight_values`` (unrolled, each cell's packed weights read as constants) and the time
    # loop becomes a ``prim::Loop``. A PackedSequence is eager only, as ``isinstance`` drops it when scripting.
    def _forward(self, input: Tensor, h0: Tensor | None, c0: Tensor | None, n_states: int):
        """Check, run every layer over ``input`` (T, B, I) (or batch first) and restore its layout:
        ``(output, h_n, c_n)``; ``c_n`` is ``h_n`` again unless ``n_states == 2`` (LSTM)."""
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(f"input.size(-1) must be equal to input_size. Expected {self.input_size}, "
                               f"got {input.size(-1)}")
        num_directions = 2 if self.bidirectional else 1
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        expected = [self.num_layers * num_directions, mini_batch, self.hidden_size]
        h = api.zeros(expected, dtype=input.dtype, device=input.device) if h0 is None else h0
        c = h if c0 is None else c0
        if n_states == 2:
            self._check_state(h, expected, "Expected hidden[0] size {}, got {}")
            self._check_state(c, expected, "Expected hidden[1] size {}, got {}")
        else:
            self._check_state(h, expected, "Expected hidden size {}, got {}")
        if self.mode == "LSTM" and not self.bias:
            raise RuntimeError("quantized LSTM requires biases")
        x = input.transpose(0, 1) if self.batch_first else input
        h0s = api.unbind(h, 0)
        c0s = api.unbind(c, 0)
        h_n: list[Tensor] = []
        c_n: list[Tensor] = []
        outs: list[Tensor] = []
        for idx, holder in enumerate(self._all_weight_values):
            cell = holder.param
            layer, direction = idx // num_directions, idx % num_directions
            out, h_last, c_last = _recurrence.run_direction(self.mode, cell.packed_ih, cell.packed_hh,
                                                            cell.reduce_range, x, h0s[idx], c0s[idx],
                                                            direction == 1)
            outs.append(out)
            h_n.append(h_last)
            c_n.append(c_last)
            if direction == num_directions - 1:
                x = outs[0] if num_directions == 1 else api.cat(outs, 2)
                outs = []
                if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                    x = api.dropout(x, self.dropout, True)
        if self.batch_first:
            x = x.transpose(0, 1)
        return x, api.stack(h_n, 0), api.stack(c_n, 0)

    def _check_state(self, state: Tensor, expected: list[int], msg: str) -> None:
        if list(state.shape) != expected:
            raise RuntimeError(msg.format((expected[0], expected[1], expected[2]), list(state.shape)))

    def _forward_packed(self, input: PackedSequence, hx, n_states: int):
        """``_forward`` over a PackedSequence: the states permuted into its sorted order, each step run on the
        live rows, the output packed like the input: ``(output, h_n, c_n)``, ``c_n`` None unless LSTM."""
        data, batch_sizes, sorted_indices, unsorted_indices = input
        if hx is None:
            zeros = api.zeros(self.num_layers * self._num_directions, int(batch_sizes[0]), self.hidden_size,
                              dtype=data.dtype, device=data.device)
            states = [zeros] * n_states
        else:
            states = [_permute(h, sorted_indices) for h in (hx if n_states == 2 else (hx,))]
        self.check_input(data, batch_sizes)
        expected = self.get_expected_hidden_size(data, batch_sizes)
        if n_states == 2:
            for i, state in enumerate(states):
                self.check_hidden_size(state, expected, f"Expected hidden[{i}] size {{}}, got {{}}")
        else:
            self.check_hidden_size(states[0], expected)
        sizes = [int(b) for b in batch_sizes.tolist()]
        out, h_n, c_n = _recurrence.run_layers_packed(self, data, sizes, states[0],
                                                      states[1] if n_states == 2 else None)
        out = PackedSequence(out, batch_sizes, sorted_indices, unsorted_indices)
        return out, _permute(h_n, unsorted_indices), None if c_n is None else _permute(c_n, unsorted_indices)


class LSTM(RNNBase):
    """A dynamically quantized LSTM: ``forward(input, (h_0, c_0))`` returns ``(output, (h_n, c_n))`` as
    ``nn.LSTM``, every gate product an int8 dynamic linear."""

    _FLOAT_MODULE = nn.LSTM

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def _get_name(self) -> str:
        return "DynamicQuantizedLSTM"

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None):
        if isinstance(input, PackedSequence):
            out, h_n, c_n = self._forward_packed(input, hx, 2)
            return out, (h_n, c_n)
        h0: Tensor | None = None
        c0: Tensor | None = None
        if hx is not None:
            h0, c0 = hx[0], hx[1]
        out, h_n, c_n = self._forward(input, h0, c0, 2)
        return out, (h_n, c_n)


class GRU(RNNBase):
    """A dynamically quantized GRU: ``forward(input, h_0)`` returns ``(output, h_n)`` as ``nn.GRU``."""

    _FLOAT_MODULE = nn.GRU

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("GRU", *args, **kwargs)

    def _get_name(self) -> str:
        return "DynamicQuantizedGRU"

    def forward(self, input: Tensor, hx: Tensor | None = None):
        if isinstance(input, PackedSequence):
            out, h_n, _ = self._forward_packed(input, hx, 1)
            return out, h_n
        out, h_n, _ = self._forward(input, hx, None, 1)
        return out, h_n
