"""Recurrent layers: RNN, LSTM, GRU and their single-step Cell forms, shaped like ``torch.nn``.

The recurrences are compositions of registered ops, so autograd (and double
backward) need nothing special. Each layer projects the whole input sequence
with one matrix multiply before the time loop; only the hidden-to-hidden
product runs per step, and on the CPU the LSTM and GRU gate arithmetic is one
fused cell op, so a step costs two ops and two backward nodes. Parameter
names, shapes, gate order and the default initialisation order follow PyTorch, so state dicts transfer and the same seed
gives the same weights. A ``PackedSequence`` input runs the same steps on the live rows of each time step
only, and gives a ``PackedSequence`` output, as PyTorch.

The multi-layer modules are written in the subset script mode compiles, so
``toolkit.jit.script(nn.LSTM(...))`` gives one graph with eager's checks and
numbers: the layer/direction loop walks ``_all_weights`` (unrolled, each weight
read by a constant name) and the time loop becomes a ``prim::Loop``.
"""

from __future__ import annotations

import math
import numbers
import warnings

from ..._core.state import is_tracing
from ...ops import api
from ...ops.rnn_steps import (
    _fused,
    _gru_step,
    _input_gates,
    _lstm_step,
    _rnn_step,
    run_direction,
    run_packed_direction,
    run_packed_layers,
)
from ...tensor import Tensor
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]


def _permute_hidden(hx: Tensor, permutation: Tensor | None) -> Tensor:
    """``hx`` with its batch (dim 1) reordered by ``permutation`` (a PackedSequence's sort order)."""
    return hx if permutation is None else hx.index_select(1, permutation)


# ---------------------------------------------------------------------------------------------
# Multi-layer recurrent modules
# ---------------------------------------------------------------------------------------------
class RNNBase(Module):
    """Shared parameter layout, checks and the layer/direction loop of RNN, LSTM and GRU."""

    __constants__ = ["mode", "input_size", "hidden_size", "num_layers", "bias", "batch_first", "dropout",
                     "bidirectional", "proj_size"]

    _GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device=None,
        dtype=None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        for name, value, kind in (("bias", bias, bool), ("batch_first", batch_first, bool),
                                  ("input_size", input_size, int), ("hidden_size", hidden_size, int)):
            if not isinstance(value, kind):
                raise TypeError(f"{name} should be of type {kind.__name__}, got: {type(value).__name__}")
        if input_size <= 0:
            raise ValueError("input_size must be greater than zero")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in self._GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = self._GATES[mode] * hidden_size
        num_directions = 2 if bidirectional else 1
        real_hidden = proj_size if proj_size > 0 else hidden_size
        fk = {"device": device, "dtype": dtype}
        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes = [("weight_ih", (gate_size, layer_input)), ("weight_hh", (gate_size, real_hidden))]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes += [("weight_hr", (proj_size, hidden_size))]
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(api.empty(shape, **fk)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    @property
    def _flat_weights(self) -> list:
        return [getattr(self, n) for n in self._flat_weights_names]

    @property
    def all_weights(self) -> list:
        """Parameters grouped per layer and direction, as PyTorch lists them."""
        return [[getattr(self, w) for w in ws] for ws in self._all_weights]

    def flatten_parameters(self) -> None:
        """No-op: there is no cuDNN weight buffer to compact."""

    def reset_parameters(self) -> None:
        """Every parameter ~ U(-1/sqrt(hidden_size), 1/sqrt(hidden_size)), in registration order."""
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- checks --------------------------------------------------------------------------------
    # Written in the subset script mode compiles (no generators, str.format for messages, weights read by
    # constant names), so ``toolkit.jit.script`` runs the same checks with the same messages.
    def check_input(self, input: Tensor, batch_sizes: Tensor | None = None) -> None:
        w = getattr(self, self._flat_weights_names[0])
        if input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None = None) -> tuple[int, int, int]:
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        size = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, size)

    def check_hidden_size(self, hx: Tensor, expected_hidden_size: tuple[int, int, int],
                          msg: str = "Expected hidden size {}, got {}") -> None:
        if is_tracing():
            # The expected sizes are the traced input's (0-dim tensors): read for a check, not as data flow, so
            # without the tracer's warning about tensors made numbers (PyTorch's tracer gives none here).
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                expected_hidden_size = tuple(int(s) for s in expected_hidden_size)
        if list(hx.shape) != list(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.shape)))

    def _mode_name(self) -> str:
        return "LSTM" if self.mode == "LSTM" else ("GRU" if self.mode == "GRU" else "RNN")

    def _initial_states(self, input: Tensor, hx, is_batched: bool, n_states: int):
        """``(h0, c0)`` for batched ``input``: zeros when ``hx`` is None, else ``hx`` checked (``c0`` is None
        unless ``n_states == 2``, where ``hx`` is the pair ``(h_0, c_0)``)."""
        expected = self.get_expected_hidden_size(input)
        if hx is None:
            h0 = api.zeros(expected, dtype=input.dtype, device=input.device)
            c0 = None
            if n_states == 2:
                c0 = api.zeros((expected[0], expected[1], self.hidden_size), dtype=input.dtype, device=input.device)
            return h0, c0
        kind = "batched 3-D" if is_batched else "unbatched 2-D"
        want = 3 if is_batched else 2
        if n_states == 2:
            h0, c0 = hx[0], hx[1]
            if h0.dim() != want or c0.dim() != want:
                raise RuntimeError(f"For {kind} input, hx and cx should also be {want}-D but got "
                                   f"({h0.dim()}-D, {c0.dim()}-D) tensors")
            if not is_batched:
                h0, c0 = h0.unsqueeze(1), c0.unsqueeze(1)
            self.check_hidden_size(h0, expected)
            self.check_hidden_size(c0, (expected[0], expected[1], self.hidden_size),
                                   "Expected hidden[1] size {}, got {}")
            return h0, c0
        h0 = hx
        if h0.dim() != want:
            raise RuntimeError(f"For {kind} input, hx should also be {want}-D but got {h0.dim()}-D tensor")
        if not is_batched:
            h0 = h0.unsqueeze(1)
        self.check_hidden_size(h0, expected)
        return h0, None

    # -- the recurrence ------------------------------------------------------------------------
    def _forward(self, input: Tensor, hx, n_states: int):
        """Validate, run every layer and direction, restore the caller's layout; returns
        ``(output, h_n, c_n)`` with ``c_n`` None unless ``n_states == 2`` (LSTM)."""
        if not isinstance(input, Tensor):
            raise TypeError(f"{self._mode_name()}: expected a Tensor or PackedSequence input, got "
                            f"{type(input).__name__}")
        if input.dim() != 2 and input.dim() != 3:
            raise ValueError(f"{self._mode_name()}: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        self.check_input(input)
        h0, c0 = self._initial_states(input, hx, is_batched, n_states)
        x = input.transpose(0, 1) if self.batch_first else input
        if is_tracing():
            out, h_n, c_n = self._run_op(x, h0, c0)
        else:
            out, h_n, c_n = self._run(x, h0, c0)
        if self.batch_first:
            out = out.transpose(0, 1)
        if not is_batched:
            out = out.squeeze(batch_dim)
            h_n = h_n.squeeze(1)
            if c_n is not None:
                c_n = c_n.squeeze(1)
        return out, h_n, c_n

    # -- packed sequences ----------------------------------------------------------------------
    def _forward_packed(self, packed: PackedSequence, hx, n_states: int):
        """The recurrence over a PackedSequence: the states are permuted into the packed (sorted) order, each
        step runs on its ``batch_sizes[t]`` live rows, and the output is packed like the input."""
        data, batch_sizes, sorted_indices, unsorted_indices = packed
        sizes = [int(b) for b in batch_sizes.tolist()]
        if data.dtype != self._flat_weights[0].dtype:
            w = self._flat_weights[0]
            raise ValueError(
                f"RNN input dtype ({data.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({data.dtype})"
            )
        if data.dim() != 2:
            raise RuntimeError(f"input must have 2 dimensions, got {data.dim()}")
        if self.input_size != data.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {data.size(-1)}"
            )
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        expected = (self.num_layers * num_directions, sizes[0], real_hidden)
        expected_cell = (self.num_layers * num_directions, sizes[0], self.hidden_size)
        if hx is None:
            h0 = api.zeros(expected, dtype=data.dtype, device=data.device)
            c0 = api.zeros(expected_cell, dtype=data.dtype, device=data.device) if n_states == 2 else None
        elif n_states == 2:
            h0, c0 = _permute_hidden(hx[0], sorted_indices), _permute_hidden(hx[1], sorted_indices)
            self.check_hidden_size(h0, expected)
            self.check_hidden_size(c0, expected_cell, "Expected hidden[1] size {}, got {}")
        else:
            h0, c0 = _permute_hidden(hx, sorted_indices), None
            self.check_hidden_size(h0, expected)
        names = self._all_weights
        x, h_n, c_n = run_packed_layers(
            lambda idx, x, h, c, reverse: self._run_direction_packed(x, sizes, names[idx], h, c, reverse),
            data, h0, c0, self.num_layers, self.bidirectional, self.dropout, self.training)
        output = PackedSequence(x, batch_sizes, sorted_indices, unsorted_indices)
        hidden = _permute_hidden(h_n, unsorted_indices)
        if n_states == 2:
            return output, (hidden, _permute_hidden(c_n, unsorted_indices))
        return output, hidden

    def _run_direction_packed(self, data: Tensor, sizes: list[int], names: list[str], h: Tensor, c,
                              reverse: bool):
        """One layer in one direction over packed ``data`` (N, I): ``(outputs (N, H), last h, last c)``; the
        loop over the shrinking (or, in reverse, growing) batch is ``rnn_steps.run_packed_direction``."""
        w_ih, w_hh = getattr(self, names[0]), getattr(self, names[1])
        b_ih = getattr(self, names[2]) if self.bias else None
        b_hh = getattr(self, names[3]) if self.bias else None
        w_hr_t = getattr(self, names[-1]).t().contiguous() if self.proj_size > 0 else None
        mode = self.mode
        if mode != "GRU" and b_ih is not None and b_hh is not None:
            b_ih, b_hh = b_ih + b_hh, None
        gates = _input_gates(data.unsqueeze(1), w_ih, b_ih).squeeze(1)
        w_hh_t = w_hh.t().contiguous()
        fused = _fused(gates)

        def step(gi: Tensor, h: Tensor, c):
            if mode == "LSTM":
                h, c = _lstm_step(gi, h, c, w_hh_t, b_hh, fused)
                return (h if w_hr_t is None else api.mm(h, w_hr_t)), c
            if mode == "GRU":
                return _gru_step(gi, h, w_hh_t, b_hh, fused), c
            return _rnn_step(gi, h, w_hh_t, b_hh, mode == "RNN_RELU"), c

        return run_packed_direction(step, gates, sizes, h, c, reverse)

    def _run_op(self, x: Tensor, h0: Tensor, c0):
        """``_run`` as the one op PyTorch's tracer records for the module (``aten::lstm``, ``aten::gru``,
        ``aten::rnn_tanh``, ``aten::rnn_relu``), so a traced model keeps the recurrence over any sequence length
        (the loop below would be unrolled into the trace step by step)."""
        args = (self._flat_weights, self.bias, self.num_layers, float(self.dropout), self.training,
                self.bidirectional, False)
        if self.mode == "LSTM":
            return api.lstm(x, [h0, c0], *args)
        out, h_n = (api.gru if self.mode == "GRU" else api.rnn_relu if self.mode == "RNN_RELU" else api.rnn_tanh)(
            x, h0, *args)
        return out, h_n, None

    def _run(self, x: Tensor, h0: Tensor, c0):
        """All layers and directions over time-major ``x`` (T, B, I); returns ``(output, h_n, c_n)``.

        The loop runs over the weight names of each layer and direction (``_all_weights``), known when the
        module is built, so script mode unrolls it and reads each weight by a constant name.
        """
        num_directions = 2 if self.bidirectional else 1
        h0s = api.unbind(h0, 0)
        c0s = h0s if c0 is None else api.unbind(c0, 0)
        h_n: list[Tensor] = []
        c_n: list[Tensor] = []
        outs: list[Tensor] = []
        for idx, names in enumerate(self._all_weights):
            layer, direction = idx // num_directions, idx % num_directions
            out, h, c = self._run_direction(x, names, h0s[idx], None if c0 is None else c0s[idx], direction == 1)
            outs.append(out)
            h_n.append(h)
            if c is not None:
                c_n.append(c)
            if direction == num_directions - 1:
                x = outs[0] if num_directions == 1 else api.cat(outs, 2)
                outs = []
                if self.dropout > 0 and self.training and layer < self.num_layers - 1:
                    x = api.dropout(x, self.dropout, True)
        return x, api.stack(h_n, 0), None if c0 is None else api.stack(c_n, 0)

    def _run_direction(self, x: Tensor, names: list[str], h: Tensor, c, reverse: bool):
        """One layer in one direction: ``(outputs (T, B, H), last h, last c)`` (``c`` None except LSTM)."""
        w_ih, w_hh = getattr(self, names[0]), getattr(self, names[1])
        b_ih = getattr(self, names[2]) if self.bias else None
        b_hh = getattr(self, names[3]) if self.bias else None
        w_hr = getattr(self, names[-1]) if self.proj_size > 0 else None
        return run_direction(self.mode, x, h, c, w_ih, w_hh, b_ih, b_hh, w_hr, reverse)


class RNN(RNNBase):
    """Elman RNN: ``h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh)`` (or relu), stacked and optionally bidirectional."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx, 1)
        out, h_n, _ = self._forward(input, hx, 1)
        return out, h_n


class LSTM(RNNBase):
    """Long short-term memory, gates i, f, g, o; returns ``(output, (h_n, c_n))``; ``proj_size`` projects h."""

    def __init__(self, *args, **kwargs) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes=None) -> tuple[int, int, int]:
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        return (self.num_layers * (2 if self.bidirectional else 1), mini_batch, self.hidden_size)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None):
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx, 2)
        out, h_n, c_n = self._forward(input, hx, 2)
        return out, (h_n, c_n)


class GRU(RNNBase):
    """Gated recurrent unit, gates r, z, n with ``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``."""

    def __init__(self, *args, **kwargs) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> tuple[Tensor, Tensor]:
        if isinstance(input, PackedSequence):
            return self._forward_packed(input, hx, 1)
        out, h_n, _ = self._forward(input, hx, 1)
        return out, h_n


# ---------------------------------------------------------------------------------------------
# Single-step cells
# ---------------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """Parameters ``weight_ih (G*H, I)``, ``weight_hh (G*H, H)``, ``bias_ih``, ``bias_hh`` (G*H,)."""

    __constants__ = ["input_size", "hidden_size", "bias"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device=None, dtype=None):
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        fk = {"device": device, "dtype": dtype}
        self.weight_ih = Parameter(api.empty((num_chunks * hidden_size, input_size), **fk))
        self.weight_hh = Parameter(api.empty((num_chunks * hidden_size, hidden_size), **fk))
        if bias:
            self.bias_ih = Parameter(api.empty((num_chunks * hidden_size,), **fk))
            self.bias_hh = Parameter(api.empty((num_chunks * hidden_size,), **fk))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _hidden(self, input: Tensor, hx: Tensor | None, is_batched: bool) -> Tensor:
        """The (batched) state to start from: zeros when not given, checked against the batched input."""
        if hx is None:
            return api.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)
        h = hx if is_batched else hx.unsqueeze(0)
        if h.size(0) != input.size(0) or h.size(1) != self.hidden_size:
            raise RuntimeError(f"hidden has inconsistent hidden_size or batch: got {list(h.shape)} "
                               f"expected {[input.size(0), self.hidden_size]}")
        return h

    def _check_input(self, name: str, input: Tensor) -> None:
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if input.size(-1) != self.input_size:
            raise RuntimeError(f"input has inconsistent input_size: got {input.size(-1)} expected {self.input_size}")


def _cell_input_gates(x: Tensor, w_ih: Tensor, b_ih: Tensor | None) -> Tensor:
    """``x @ W_ih.T + b_ih`` for a batched (2-D) step input."""
    w_t = w_ih.t()
    if b_ih is None:
        return api.mm(x, w_t)
    return api.addmm(b_ih, x, w_t)


class RNNCell(RNNCellBase):
    """One Elman step: ``h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh)`` (or relu)."""

    __constants__ = ["input_size", "hidden_size", "bias", "nonlinearity"]

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, nonlinearity: str = "tanh",
                 device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        self._check_input("RNNCell", input)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"RNNCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        h = self._hidden(input, hx, is_batched)
        if self.nonlinearity != "tanh" and self.nonlinearity != "relu":
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        gi = _cell_input_gates(input, self.weight_ih, self.bias_ih)
        out = _rnn_step(gi, h, self.weight_hh.t(), self.bias_hh, self.nonlinearity == "relu")
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    """One LSTM step; returns ``(h', c')``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        self._check_input("LSTMCell", input)
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            h = self._hidden(input, None, is_batched)
            c = self._hidden(input, None, is_batched)
        else:
            if hx[0].dim() not in (1, 2):
                raise ValueError(f"LSTMCell: Expected hx[0] to be 1D or 2D, got {hx[0].dim()}D instead")
            if hx[1].dim() not in (1, 2):
                raise ValueError(f"LSTMCell: Expected hx[1] to be 1D or 2D, got {hx[1].dim()}D instead")
            h = self._hidden(input, hx[0], is_batched)
            c = self._hidden(input, hx[1], is_batched)
        gi = _cell_input_gates(input, self.weight_ih, self.bias_ih)
        h2, c2 = _lstm_step(gi, h, c, self.weight_hh.t(), self.bias_hh, _fused(gi))
        return (h2, c2) if is_batched else (h2.squeeze(0), c2.squeeze(0))


class GRUCell(RNNCellBase):
    """One GRU step; returns ``h'``."""

    def __init__(self, input_size: int, hidden_size: int, bias: bool = True, device=None, dtype=None) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        self._check_input("GRUCell", input)
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"GRUCell: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        h = self._hidden(input, hx, is_batched)
        gi = _cell_input_gates(input, self.weight_ih, self.bias_ih)
        out = _gru_step(gi, h, self.weight_hh.t(), self.bias_hh, _fused(gi))
        return out if is_batched else out.squeeze(0)

