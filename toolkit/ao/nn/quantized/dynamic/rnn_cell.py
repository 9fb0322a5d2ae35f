"""Dynamically quantized single-step cells: ``RNNCell``, ``LSTMCell``, ``GRUCell`` as
``torch.ao.nn.quantized.dynamic`` has them. A step's two gate products are dynamic int8 linears (the input and
the hidden state each quantized on the fly, 7-bit as PyTorch's x86 kernels do); the cell arithmetic is the
float cell's. The biases live in the packed weights; ``bias_ih``/``bias_hh`` are kept as PyTorch keeps them
(random, and not read by ``forward``)::

    cell = nn.LSTMCell(8, 16)
    cell.qconfig = default_dynamic_qconfig
    h, c = LSTMCell.from_float(cell)(x, (h, c))
"""

from __future__ import annotations

from ..... import nn
from .....ops import api
from .....ops import quantized_linear as _ql
from .....tensor import Tensor
from ....quantization import _qtypes
from ._packed import pack_weight_bias, quantize_weight, unpack, weight_observer_factory
from ._recurrence import gru_step, lstm_step, rnn_step

__all__ = ["RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


class RNNCellBase(nn.Module):
    """The packed weights (``_packed_weight_ih``, ``_packed_weight_hh``), checks, state dict and ``from_float``
    the three cells share."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, num_chunks: int = 4,
                 dtype=_qtypes.qint8) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_dtype = dtype
        if bias:
            self.bias_ih = api.randn(num_chunks * hidden_size)
            self.bias_hh = api.randn(num_chunks * hidden_size)
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        if dtype is not _qtypes.qint8:
            raise NotImplementedError(f"toolkit's dynamic quantized cells store int8 weights only, not {dtype}")
        weight_ih = api.quantize_per_tensor(api.randn(num_chunks * hidden_size, input_size), 1.0, 0, dtype)
        weight_hh = api.quantize_per_tensor(api.randn(num_chunks * hidden_size, hidden_size), 1.0, 0, dtype)
        self._packed_weight_ih = pack_weight_bias(weight_ih, self.bias_ih, dtype)
        self._packed_weight_hh = pack_weight_bias(weight_hh, self.bias_hh, dtype)

    def _get_name(self) -> str:
        return "DynamicQuantizedRNNBase"

    extra_repr = nn.RNNCellBase.extra_repr

    def check_forward_input(self, input: Tensor) -> None:
        if input.size(1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)}, expected {self.input_size}")

    def check_forward_hidden(self, input: Tensor, hx: Tensor, hidden_label: str = "") -> None:
        if input.size(0) != hx.size(0):
            raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{hidden_label} batch size "
                               f"{hx.size(0)}")
        if hx.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden{hidden_label} has inconsistent hidden_size: got {hx.size(1)}, expected "
                               f"{self.hidden_size}")

    def _zeros(self, input: Tensor) -> Tensor:
        return api.zeros(input.size(0), self.hidden_size, dtype=input.dtype, device=input.device)

    # The forwards are written in the subset script mode compiles: the packed weights are read as constants and
    # the steps are ``_recurrence``'s (input quantized to 7 bits, as PyTorch's x86 kernels do for RNN cells).
    def _hidden(self, input: Tensor, hx: Tensor | None) -> Tensor:
        """``hx`` checked against ``input``, or zeros when it is None (the cells with one state)."""
        self.check_forward_input(input)
        if hx is None:
            return self._zeros(input)
        self.check_forward_hidden(input, hx, "")
        return hx

    def _input_gates(self, input: Tensor) -> Tensor:
        return _ql.linear_dynamic(input, self._packed_weight_ih, True)

    @classmethod
    def from_float(cls, mod: nn.Module, use_precomputed_fake_quant: bool = False) -> RNNCellBase:
        """The dynamic twin of a float ``nn.LSTMCell``, ``nn.GRUCell`` or ``nn.RNNCell`` with a ``qconfig``."""
        kinds = {nn.LSTMCell: LSTMCell, nn.GRUCell: GRUCell, nn.RNNCell: RNNCell}
        if type(mod) not in kinds:
            raise AssertionError("nn.quantized.dynamic.RNNCellBase.from_float only works for nn.LSTMCell, "
                                 "nn.GRUCell and nn.RNNCell")
        factory = weight_observer_factory(mod, RuntimeError, "Unsupported dtype for dynamic RNN quantization: {}")
        dtype = factory().dtype
        if type(mod) is nn.RNNCell:
            qmod = RNNCell(mod.input_size, mod.hidden_size, bias=mod.bias, nonlinearity=mod.nonlinearity,
                           dtype=dtype)
        else:
            qmod = kinds[type(mod)](mod.input_size, mod.hidden_size, bias=mod.bias, dtype=dtype)
        if not mod.bias:
            raise AssertionError("mod.bias must be True")
        qmod.set_weight_bias({"weight": {"weight_ih": quantize_weight(mod.weight_ih, factory),
                                         "weight_hh": quantize_weight(mod.weight_hh, factory)},
                              "bias": {"bias_ih": mod.bias_ih, "bias_hh": mod.bias_hh}})
        return qmod

    def _weight_bias(self) -> dict:
        out: dict = {"weight": {}, "bias": {}}
        for kind, packed in (("ih", self._packed_weight_ih), ("hh", self._packed_weight_hh)):
            out["weight"][f"weight_{kind}"], out["bias"][f"bias_{kind}"] = unpack(packed)
        return out

    def get_weight(self) -> dict:
        """``{"weight_ih": int8 weight, "weight_hh": ...}``."""
        return self._weight_bias()["weight"]

    def get_bias(self) -> dict:
        """``{"bias_ih": float bias, "bias_hh": ...}`` (the packed ones, which ``forward`` adds)."""
        return self._weight_bias()["bias"]

    def set_weight_bias(self, weight_bias_dict: dict) -> None:
        """Pack ``{"weight": {"weight_ih", "weight_hh"}, "bias": {"bias_ih", "bias_hh"}}``."""
        w, b = weight_bias_dict["weight"], weight_bias_dict["bias"]
        self._packed_weight_ih = pack_weight_bias(w["weight_ih"], b["bias_ih"], self.weight_dtype)
        self._packed_weight_hh = pack_weight_bias(w["weight_hh"], b["bias_hh"], self.weight_dtype)

    def _save_to_state_dict(self, destination, prefix, keep_vars) -> None:
        super()._save_to_state_dict(destination, prefix, keep_vars)
        destination[prefix + "_packed_weight_ih"] = self._packed_weight_ih
        destination[prefix + "_packed_weight_hh"] = self._packed_weight_hh

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                              error_msgs) -> None:
        self._packed_weight_ih = state_dict.pop(prefix + "_packed_weight_ih")
        self._packed_weight_hh = state_dict.pop(prefix + "_packed_weight_hh")
        super()._load_from_state_dict(state_dict, prefix, local_metadata, False, missing_keys, unexpected_keys,
                                      error_msgs)


class RNNCell(RNNCellBase):
    """One dynamically quantized Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 dtype=_qtypes.qint8) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, dtype=dtype)
        self.nonlinearity = nonlinearity

    def _get_name(self) -> str:
        return "DynamicQuantizedRNNCell"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        h = self._hidden(input, hx)
        if self.nonlinearity != "tanh" and self.nonlinearity != "relu":
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        return rnn_step(self._packed_weight_hh, True, self._input_gates(input), h, self.nonlinearity == "relu")


class LSTMCell(RNNCellBase):
    """One dynamically quantized LSTM step; ``forward(input, (h, c))`` returns ``(h', c')``."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, num_chunks=4, **kwargs)

    def _get_name(self) -> str:
        return "DynamicQuantizedLSTMCell"

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        self.check_forward_input(input)
        if hx is None:
            h = self._zeros(input)
            c = h
        else:
            h, c = hx[0], hx[1]
        self.check_forward_hidden(input, h, "[0]")
        self.check_forward_hidden(input, c, "[1]")
        return lstm_step(self._packed_weight_hh, True, self._input_gates(input), h, c)


class GRUCell(RNNCellBase):
    """One dynamically quantized GRU step; ``forward(input, h)`` returns ``h'``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, dtype=_qtypes.qint8) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, dtype=dtype)

    def _get_name(self) -> str:
        return "DynamicQuantizedGRUCell"

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        h = self._hidden(input, hx)
        return gru_step(self._packed_weight_hh, True, self._input_gates(input), h)
