"""``python -m benchmarks.worker MODE SPEC``: run one benchmark step in this fresh process and print JSON.

``time``: SPEC is ``{"setup": "module:function", "args": [...], "number": N, "repeat": R}``. The setup
function imports its own library and returns the callable to time; one untimed call warms it up (numba's
and PyTorch's lazy compilation, caches), then ``repeat`` samples of ``number`` calls each are timed. Each
call's result is dropped at once (timeit's loop keeps no reference), so outputs are never kept alive across
timed calls. Prints ``{"samples": [seconds per call, ...], "threads": ...}``.

``call``: SPEC is ``{"setup": "module:function", "args": [...]}``; the function's JSON-able result is printed.

Either way, a process that ends up holding both toolkit and torch exits with an error instead of a figure.
"""

from __future__ import annotations

import importlib
import json
import sys
import timeit

from benchmarks.harness import thread_settings


def _one_library(setup: str) -> None:
    if "toolkit" in sys.modules and "torch" in sys.modules:
        sys.exit(f"{setup} imported both toolkit and torch: each library must be timed in a process of its own")


def main(mode: str, spec: str) -> None:
    s = json.loads(spec)
    module, name = s["setup"].split(":")
    result = getattr(importlib.import_module(module), name)(*s["args"])
    _one_library(s["setup"])
    if mode == "call":
        print(json.dumps(result))
        return
    result()
    number = s["number"]
    samples = [timeit.timeit(result, number=number) / number for _ in range(s["repeat"])]
    print(json.dumps({"samples": samples, "threads": thread_settings()}))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
