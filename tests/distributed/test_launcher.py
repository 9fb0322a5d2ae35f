"""``python -m toolkit.distributed.run``: the mpirun command it builds and a real launch."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from toolkit.distributed.run import mpirun_command, mpirun_env

from ._launch import ROOT, needs_mpi, shared_job


@needs_mpi
def test_run_starts_n_ranks_with_the_script_arguments(tmp_path_factory):
    # The DDP tests' job is started by the launcher: reuse it rather than paying for another MPI start.
    out = shared_job(tmp_path_factory, "ddp", 2, "worker_ddp.py", "--epochs", "3", launcher=True)
    for r in range(2):
        with open(os.path.join(out, f"rank{r}.json")) as f:
            assert json.load(f)["argv"] == ["--epochs", "3"]


@needs_mpi
def test_mpirun_command_flags():
    cmd = mpirun_command(4, ["train.py", "-x"])
    assert cmd[1:6] == ["-n", "4", "--oversubscribe", "--bind-to", "none"]
    assert cmd[-3:] == ["-u", "train.py", "-x"]
    assert ("--allow-run-as-root" in cmd) == (os.geteuid() == 0)
    env = mpirun_env({"OMPI_MCA_btl_vader_single_copy_mechanism": "cma"})
    assert env["OMPI_ALLOW_RUN_AS_ROOT"] == "1" and env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] == "1"
    assert env["OMPI_MCA_btl_vader_single_copy_mechanism"] == "cma"  # the caller's setting wins


def test_bad_process_count():
    proc = subprocess.run([sys.executable, "-m", "toolkit.distributed.run", "-n", "0", "x.py"], cwd=ROOT,
                          capture_output=True, text=True)
    assert proc.returncode == 2 and "-n must be at least 1, got 0" in proc.stderr


def test_import_toolkit_does_not_load_mpi():
    code = "import toolkit, toolkit.distributed, toolkit.nn.parallel, sys; print('mpi4py' in sys.modules)"
    assert subprocess.check_output([sys.executable, "-c", code], text=True).strip() == "False"
