"""``import toolkit`` is light: it compiles nothing and loads none of the heavy libraries (numba, llvmlite, torch,
scipy, matplotlib, IPython are imported lazily, where they are used). Checked by what was imported, and by
the CPU time of the import (never wall time)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

HEAVY = ("numba", "llvmlite", "torch", "scipy", "matplotlib", "IPython", "tensorboard", "visdom")


def test_import_loads_no_heavy_library():
    code = "import sys, json, toolkit; print(json.dumps(sorted(sys.modules)))"
    loaded = set(json.loads(subprocess.check_output([sys.executable, "-c", code], text=True)))
    assert not [m for m in HEAVY if m in loaded], "imported by `import toolkit`"


def test_import_takes_under_half_a_second_of_cpu(tmp_path):
    # CPU time of the importing process (not wall time), with bytecode compiled once beforehand as any installed
    # package has it; the least of three fresh processes. About 0.3 s on a quiet two-core machine, and up to
    # 0.37 s measured beside busy processes (shared caches slow the CPU too): the bound catches a gross
    # regression, such as a heavy library imported at the top, not a few milliseconds.
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = str(tmp_path / "pycache")
    code = "import time; t = time.process_time(); import toolkit; print(time.process_time() - t)"
    subprocess.check_call([sys.executable, "-c", "import toolkit"], env=env)
    seconds = min(float(subprocess.check_output([sys.executable, "-c", code], env=env, text=True))
                  for _ in range(3))
    assert seconds <= 0.5, f"import toolkit took {seconds:.3f} s of CPU"
