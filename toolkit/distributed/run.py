"""``python -m toolkit.distributed.run -n 2 train.py [args]``: start a script on N MPI processes.

It runs ``mpirun`` with the flags this kind of machine needs: ``--allow-run-as-root`` when run as root (with
Open MPI's confirmation variables), ``--oversubscribe`` so N may exceed the cores, no core binding, and the
shared-memory transport settings that work inside containers. Plain ``mpirun -n 2 python train.py`` works
too when those are not needed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys

from ._mpi import MPI_ENV_DEFAULTS


def mpirun_command(nproc: int, argv: list[str], python: str | None = None, module: bool = False) -> list[str]:
    """The mpirun command line that starts ``argv`` (a script and its arguments) on ``nproc`` processes."""
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        raise RuntimeError("toolkit.distributed.run: mpirun not found; install Open MPI (apt-get install "
                           "openmpi-bin libopenmpi-dev, or conda install -c conda-forge openmpi mpi4py)")
    cmd = [mpirun, "-n", str(nproc), "--oversubscribe", "--bind-to", "none"]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-run-as-root")
    cmd += [python or sys.executable, "-u"]
    if module:
        cmd.append("-m")
    return cmd + list(argv)


def mpirun_env(env: dict | None = None) -> dict:
    """The environment for mpirun: the caller's, plus the Open MPI settings unless already set."""
    env = dict(os.environ if env is None else env)
    for k, v in MPI_ENV_DEFAULTS.items():
        env.setdefault(k, v)
    return env


def main(args: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m toolkit.distributed.run",
                                description="Run a training script on N MPI processes (as torchrun does).")
    p.add_argument("-n", "--nproc-per-node", "--nproc_per_node", dest="nproc", type=int, default=1,
                   help="number of processes (default 1)")
    p.add_argument("-m", "--module", action="store_true", help="run the script as a module (python -m)")
    p.add_argument("script", help="the training script (or module with -m)")
    p.add_argument("script_args", nargs=argparse.REMAINDER, help="arguments for the script")
    ns = p.parse_args(args)
    if ns.nproc < 1:
        p.error(f"-n must be at least 1, got {ns.nproc}")
    try:
        cmd = mpirun_command(ns.nproc, [ns.script, *ns.script_args], module=ns.module)
    except RuntimeError as e:
        print(e, file=sys.stderr)
        return 2
    return subprocess.call(cmd, env=mpirun_env())


if __name__ == "__main__":
    sys.exit(main())
