"""``python -m toolkit.as_torch`` and ``toolkit.as_torch.install()``: a torch program runs with toolkit as torch.

The programs run in subprocesses: this test process has PyTorch (the oracle) imported, which ``install()``
refuses to shadow.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

import toolkit.as_torch
from toolkit.as_torch import toolkit_name


def run(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def write(path: Path, source: str) -> Path:
    path.write_text(textwrap.dedent(source))
    return path


@pytest.mark.parametrize("name, expected", [
    ("torch", "toolkit"),
    ("torch.nn", "toolkit.nn"),
    ("torch.nn.functional", "toolkit.nn.functional"),
    ("torch.utils.data", "toolkit.utils.data"),
    ("torchvision", "toolkit.vision"),
    ("torchvision.transforms", "toolkit.vision.transforms"),
    ("numpy", None),
    ("torchaudio", None),
    ("torch_geometric", None),
])
def test_toolkit_name(name, expected):
    assert toolkit_name(name) == expected


def test_runs_a_torch_program_as_main(tmp_path):
    (tmp_path / "prog").mkdir()
    write(tmp_path / "prog" / "helper.py", "import torch\nVALUE = torch.ones(2).sum().item()\n")
    script = write(tmp_path / "prog" / "train.py", """\
        import sys
        import torch
        import torch.nn as nn
        import torch.nn.functional as F
        import torchvision.transforms as T
        from torch.utils.data import DataLoader, TensorDataset
        import toolkit
        import helper  # the script's folder is first on sys.path

        assert torch is toolkit and nn is toolkit.nn and F is toolkit.nn.functional
        assert T is toolkit.vision.transforms and sys.modules["torchvision"] is toolkit.vision
        assert torch.__spec__.name == "toolkit"  # toolkit's modules keep their own spec
        net = nn.Linear(3, 1)
        assert isinstance(net, toolkit.nn.Module)
        loader = DataLoader(TensorDataset(torch.randn(4, 3), torch.randn(4, 1)), batch_size=2)
        loss = sum(F.mse_loss(net(x), y) for x, y in loader)
        loss.backward()
        print(__name__, sys.argv, helper.VALUE, net.weight.grad.shape)
    """)
    proc = run(["-m", "toolkit.as_torch", str(script), "--epochs", "1"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == f"__main__ [{str(script)!r}, '--epochs', '1'] 2.0 toolkit.Size([1, 3])"


def test_exit_status_and_errors_are_the_programs(tmp_path):
    script = write(tmp_path / "fails.py", "import torch\nraise SystemExit(3)\n")
    assert run(["-m", "toolkit.as_torch", str(script)], tmp_path).returncode == 3
    script = write(tmp_path / "raises.py", "import torch\ntorch.zeros(2) + torch.zeros(3)\n")
    proc = run(["-m", "toolkit.as_torch", str(script)], tmp_path)
    assert proc.returncode == 1 and "RuntimeError" in proc.stderr


def test_a_module_toolkit_lacks_is_named(tmp_path):
    script = write(tmp_path / "uses_missing.py", """\
        import torch
        try:
            import torch.no_such_module
        except ModuleNotFoundError as e:
            print(e.name, "|", e)
    """)
    proc = run(["-m", "toolkit.as_torch", str(script)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == ("torch.no_such_module | No module named 'torch.no_such_module': toolkit has no "
                                   "such module ('toolkit.no_such_module' does not exist)")


def test_spawned_processes_get_toolkit_too(tmp_path):
    script = write(tmp_path / "spawns.py", """\
        import multiprocessing as mp
        import torch

        def child(q):
            q.put((torch.__name__, type(torch.zeros(1)).__module__))

        if __name__ == "__main__":
            mp.set_start_method("spawn", force=True)
            q = mp.Queue()
            p = mp.Process(target=child, args=(q,))
            p.start()
            print(q.get())
            p.join()
    """)
    proc = run(["-m", "toolkit.as_torch", str(script)], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "('toolkit', 'toolkit.tensor')"


def test_install_in_a_notebook_and_uninstall(tmp_path):
    code = textwrap.dedent("""\
        import toolkit.as_torch
        toolkit.as_torch.install()
        import torch, torch.nn, toolkit
        assert torch is toolkit and torch.nn is toolkit.nn
        toolkit.as_torch.uninstall()
        import torch
        print(torch.__name__, torch.__file__.endswith("toolkit/__init__.py"))
    """)
    proc = run(["-c", code], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "torch False"  # PyTorch itself once the hook is gone


def test_install_refuses_when_torch_is_already_imported():
    assert "torch" in sys.modules  # the oracle, imported by conftest
    with pytest.raises(RuntimeError, match="already imported"):
        toolkit.as_torch.install()


def test_usage(tmp_path):
    proc = run(["-m", "toolkit.as_torch"], tmp_path)
    assert proc.returncode == 2 and "usage: python -m toolkit.as_torch script.py" in proc.stdout
