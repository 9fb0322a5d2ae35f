"""Lazy access to mpi4py: ``import toolkit`` never loads MPI; the first process-group call does."""

from __future__ import annotations

import importlib.util
import os

# Settings every process needs before MPI starts: a container blocks the cross-memory-attach single copy
# (ptrace), and an MPI started as root (a singleton, without mpirun) refuses to run unless told it may.
MPI_ENV_DEFAULTS = {
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none",
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}

_MPI = None


def mpi():
    """The ``mpi4py.MPI`` module, initializing MPI on first use; a clear error when MPI is missing."""
    global _MPI
    if _MPI is None:
        for k, v in MPI_ENV_DEFAULTS.items():
            os.environ.setdefault(k, v)
        try:
            import mpi4py  # optional: mpi4py

            mpi4py.rc.threads = True
            from mpi4py import MPI  # optional: mpi4py
        except ImportError as e:
            raise RuntimeError(
                "toolkit.distributed needs MPI: install Open MPI (apt-get install openmpi-bin libopenmpi-dev, "
                f"or conda install -c conda-forge openmpi) and mpi4py (pip install mpi4py): {e}"
            ) from e
        _MPI = MPI
    return _MPI


def is_available() -> bool:
    """Whether mpi4py and an MPI library can be loaded (without starting MPI if it is not already)."""
    if _MPI is not None:
        return True
    try:
        return importlib.util.find_spec("mpi4py") is not None
    except (ImportError, ValueError):
        return False
