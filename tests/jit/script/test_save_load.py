"""Save/load round trips of scripted code with loops and ifs."""

import io

import toolkit

from .helpers import same
from .test_modules import Block
from .test_seed import script_fn


def _roundtrip(m):
    buf = io.BytesIO()
    toolkit.jit.save(m, buf)
    buf.seek(0)
    return toolkit.jit.load(buf)


def test_scripted_function_with_a_loop_round_trips():
    s = toolkit.jit.script(script_fn)
    loaded = _roundtrip(s)
    a = toolkit.rand(5)
    assert same(loaded(a), script_fn(a))
    assert any(n.kind == "prim::Loop" for n in loaded.graph.all_nodes())


def test_scripted_module_with_a_loop_over_modulelist_and_an_if_round_trips():
    toolkit.manual_seed(0)
    m = Block(4)
    loaded = _roundtrip(toolkit.jit.script(m))
    x = toolkit.randn(2, 4)
    assert same(loaded(x), m(x), 1e-5)
    assert "if self.training:" in loaded.code
