"""``toolkit.ao.nn.quantized.dynamic``: modules with int8 weights whose float activations are quantized on the
fly at each product, as ``torch.ao.nn.quantized.dynamic`` (``quantize_dynamic`` swaps them in through their
``from_float``): ``Linear``, ``LSTM``, ``GRU``, ``RNNCell``, ``LSTMCell``, ``GRUCell``. Inputs and outputs are
float32; the numbers are PyTorch's x86 engine's for the same weights."""

from .linear import Linear  # noqa: F401
from .rnn import GRU, LSTM, RNNBase  # noqa: F401
from .rnn_cell import GRUCell, LSTMCell, RNNCell, RNNCellBase  # noqa: F401

__all__ = ["Linear", "LSTM", "GRU", "LSTMCell", "GRUCell", "RNNCell"]
