"""The seed's script examples: script_fn, the LSTM cell, rnn_loop and the RNN ScriptModule with its print."""
# ruff: noqa: UP006, UP035, UP045, UP008, B007  (the seed's TorchScript spellings, on purpose)

from typing import Optional, Tuple

import pytest

import toolkit
import toolkit.nn.functional as F
from toolkit import nn

from ....conftest import assert_close
from .helpers import check, same


def script_fn(x):
    for i in range(5):
        x = x * x
    return x


def test_script_fn_keeps_the_loop_and_matches_python():
    a = toolkit.rand(5)
    s = check(script_fn, a)
    text = s.graph.to_string(source_locations=False)
    assert "prim::Loop" in text and "aten::mul" in text
    assert "block0(%i : int, %x.1 : Tensor)" in text
    optimized = str(s.graph_for(a))  # the plan unrolls the constant 5-step loop and fuses the chain
    assert "prim::Loop" not in optimized and optimized.count("prim::FusionGroup_0 = graph") == 1


def lstm(input, hidden: Tuple[toolkit.Tensor, toolkit.Tensor], w_ih, w_hh, b_ih, b_hh):
    hx, cx = hidden
    gates = (F.linear(input, w_ih, b_ih) + F.linear(hx, w_hh, b_hh))
    ingate, forgetgate, cellgate, outgate = gates.chunk(4, 1)
    ingate = F.sigmoid(ingate)
    forgetgate = F.sigmoid(forgetgate)
    cellgate = F.tanh(cellgate)
    outgate = F.sigmoid(outgate)
    cy = (forgetgate * cx) + (ingate * cellgate)
    hy = outgate * F.tanh(cy)
    return hy, cy


def test_lstm_cell_compiles_to_registry_ops_and_matches_python():
    toolkit.manual_seed(0)
    args = (toolkit.randn(3, 10), (toolkit.randn(3, 20), toolkit.randn(3, 20)), toolkit.randn(80, 10),
            toolkit.randn(80, 20), toolkit.randn(80), toolkit.randn(80))
    s = check(lstm, *args)
    kinds = [n.kind for n in s.graph.all_nodes()]
    assert kinds.count("aten::linear") == 2 and "aten::chunk" in kinds and kinds.count("aten::sigmoid") == 3
    assert "prim::PythonOp" not in kinds


class Cell(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)

    def forward(self, x, hidden: Optional[toolkit.Tensor]):
        if hidden is None:
            hidden = toolkit.zeros_like(x)
        h = toolkit.tanh(self.lin(x) + hidden)
        return h, h


model = Cell()


def rnn_loop(x):
    hidden = None
    for x_t in x.split(1):
        x, hidden = model(x_t, hidden)
    return x


def test_rnn_loop_over_split_with_a_global_model():
    x = toolkit.randn(6, 4)
    s = check(rnn_loop, x)
    text = s.graph.to_string(source_locations=False)
    assert "prim::Loop" in text and "aten::split" in text and "aten::linear" in text


class RNN(toolkit.jit.ScriptModule):
    def __init__(self, W_h, U_h, W_y, b_h, b_y):
        super(RNN, self).__init__()
        self.W_h = nn.Parameter(W_h)
        self.U_h = nn.Parameter(U_h)
        self.W_y = nn.Parameter(W_y)
        self.b_h = nn.Parameter(b_h)
        self.b_y = nn.Parameter(b_y)

    @toolkit.jit.script_method
    def forward(self, x, h):
        y = []
        for t in range(x.size(0)):
            h = toolkit.tanh(x[t] @ self.W_h + h @ self.U_h + self.b_h)
            y += [toolkit.tanh(h @ self.W_y + self.b_y)]
            if t % 10 == 0:
                print("stats: ", h.mean(), h.var())
        return toolkit.stack(y), h


def _rnn():
    toolkit.manual_seed(1)
    return RNN(toolkit.randn(3, 5), toolkit.randn(5, 5), toolkit.randn(5, 2), toolkit.randn(5), toolkit.randn(2))


def test_rnn_script_module_prints_every_ten_steps_and_matches_python(capsys):
    rnn = _rnn()
    x, h = toolkit.randn(25, 3), toolkit.zeros(5)
    y, hn = rnn(x, h)
    out = capsys.readouterr().out
    assert out.count("stats: ") == 3
    assert isinstance(rnn, toolkit.jit.ScriptModule) and isinstance(rnn, nn.Module)
    text = rnn.graph.to_string(source_locations=False)
    assert "prim::Print" in text and "prim::Loop" in text and "prim::If" in text
    # removing the decorator: plain Python gives the same results
    ey, eh = RNN.forward.fn(rnn, x, h)
    assert same((y, hn), (ey, eh), 1e-5)
    # trains: gradients reach the parameters through the loop
    y.sum().backward()
    assert rnn.W_h.grad is not None and rnn.W_h.grad.shape == (3, 5)


def test_rnn_script_module_saves_and_loads_with_its_loop_if_and_print(tmp_path, capsys):
    rnn = _rnn()
    x, h = toolkit.randn(25, 3), toolkit.zeros(5)
    expected = rnn(x, h)
    # interpreter built-ins as TorchScript prints them, parsed back when loading
    assert '      print("stats: ", torch.mean(h1), torch.var(h1))\n' in rnn.code
    assert "  for t in range(torch.size(x, 0)):\n" in rnn.code and "if torch.eq(torch.remainder(t, 10), 0):" in rnn.code
    toolkit.jit.save(rnn, tmp_path / "rnn.pt")
    loaded = toolkit.jit.load(tmp_path / "rnn.pt")
    capsys.readouterr()
    got = loaded(x, h)
    assert capsys.readouterr().out.count("stats: ") == 3
    assert same(got, expected, 0)


_RUN_LOADED = """
import sys
import toolkit
fn = toolkit.jit.load(sys.argv[1])
toolkit.save(fn(*toolkit.load(sys.argv[2])), sys.argv[3])
"""


def _run_in_a_fresh_process(scripted, args: tuple, tmp_path):
    """Save ``scripted``, then load and call it in a new Python process (no test code imported); its result."""
    import subprocess
    import sys

    scripted.save(tmp_path / "archive.pt")
    toolkit.save(args, tmp_path / "args.pt")
    subprocess.run([sys.executable, "-c", _RUN_LOADED, str(tmp_path / "archive.pt"), str(tmp_path / "args.pt"),
                    str(tmp_path / "out.pt")], check=True, timeout=300, capture_output=True)
    return toolkit.load(tmp_path / "out.pt")


def _seed_cases():
    from toolkit.demo import seed_net

    toolkit.manual_seed(0)
    net = seed_net().eval()
    lstm_args = (toolkit.randn(3, 10), (toolkit.randn(3, 20), toolkit.randn(3, 20)), toolkit.randn(80, 10),
                 toolkit.randn(80, 20), toolkit.randn(80), toolkit.randn(80))
    return {
        "Net": (lambda: toolkit.jit.script(net), (toolkit.randn(2, 1, 28, 28),)),
        "RNN": (_rnn, (toolkit.randn(25, 3), toolkit.zeros(5))),
        "rnn_loop": (lambda: toolkit.jit.script(rnn_loop), (toolkit.randn(6, 4),)),
        "lstm": (lambda: toolkit.jit.script(lstm), lstm_args),
    }


@pytest.mark.parametrize("name", ["Net", "RNN", "rnn_loop", "lstm"])
def test_seed_examples_save_and_run_in_a_fresh_process(name, tmp_path, capsys):
    """The seed's scripted Net, RNN ScriptModule, rnn_loop (calling a module held in a global) and lstm cell: saved,
    loaded and run by a new interpreter, they give the numbers they give here."""
    make, args = _seed_cases()[name]
    scripted = make()
    expected = scripted(*args)
    got = _run_in_a_fresh_process(scripted, args, tmp_path)
    assert_close(got, expected)
    if name == "rnn_loop":  # the global module's state travelled as constants of the archive
        assert "CONSTANTS.c0" in toolkit.jit.load(tmp_path / "archive.pt").code
