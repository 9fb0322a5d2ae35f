"""``import toolkit`` is light: it compiles nothing and loads none of the heavy libraries (numba, llvmlite, torch,
scipy, matplotlib, IPython are imported lazily, where they are used). Checked by what was imported, not timed."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("numba", "llvmlite", "torch", "scipy", "matplotlib", "IPython", "tensorboard", "visdom")


def test_import_loads_no_heavy_library():
    code = "import sys, json, toolkit; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.check_output([sys.executable, "-c", code], text=True)))
    assert not [m for m in HEAVY if m in loaded], "imported by `import toolkit`"
