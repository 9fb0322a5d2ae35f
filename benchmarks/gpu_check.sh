#!/usr/bin/env bash
# The GPU check: run once from the repository root on a machine with an NVIDIA GPU (about ten minutes in all).
#
#   benchmarks/gpu_check.sh                 # results in ./gpu-results/, or in $OUT when it is set
#
# Steps, each with a time limit of its own (GPU_CHECK_LIMIT_<STEP> seconds), the next one run when one fails:
#   install    the venv with the dev and cuda extras (`make cuda-venv`); skipped with GPU_CHECK_SKIP_INSTALL=1
#   nvidia-smi the GPU, its driver and what runs on it
#   facts      numba, numba.cuda (which implementation, is_available, the device, driver and runtime versions),
#              toolkit.cuda; PyTorch's CUDA in a process of its own
#   tests      tests/cuda on the GPU (`make test-cuda`): a log and junit XML; GPU_CHECK_PYTEST_ARGS replaces
#              the Makefile's CUDA_PYTEST_ARGS (which tests, how many workers)
#   bench      the CUDA benchmarks (`make bench-cuda`), one round of processes unless TOOLKIT_BENCH_ROUNDS says
#              otherwise (it prints its tables at the end only)
# Every step's output goes to $OUT/<step>.log, a line per step to $OUT/summary.txt; the exit status is 1 when a
# step failed. TOOLKIT_CUDA_SIMULATOR=1 runs the same steps on numba's CUDA simulator (no GPU needed: a dry run
# of this script; the simulator is slow, so give it a few tests with GPU_CHECK_PYTEST_ARGS).
set -u
cd "$(dirname "$0")/.."

OUT=${OUT:-gpu-results}
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
PY=.venv/bin/python
MAKE_CUDA=(make --no-print-directory -o .venv/.installed-cuda)  # the targets without reinstalling
export TOOLKIT_BENCH_ROUNDS=${TOOLKIT_BENCH_ROUNDS:-1}
if [ "${TOOLKIT_CUDA_SIMULATOR:-}" = 1 ]; then
    export NUMBA_ENABLE_CUDASIM=1
fi
: > "$OUT/summary.txt"
failed=0

# step NAME LIMIT_S COMMAND...: COMMAND's output to $OUT/NAME.log within GPU_CHECK_LIMIT_<NAME> (or LIMIT_S)
# seconds. SIGINT first, so that pytest still writes its junit XML, then SIGKILL 30 s later.
step() {
    local name=$1 limit=$2 var rc start=$SECONDS
    shift 2
    var=GPU_CHECK_LIMIT_$(echo "$name" | tr 'a-z-' 'A-Z_')
    limit=${!var:-$limit}
    echo "== $name (at most ${limit} s): $(printf '%s\n' "$*" | head -n 1)"
    timeout -s INT -k 30 "$limit" "$@" > "$OUT/$name.log" 2>&1
    rc=$?
    [ "$rc" = 124 ] && echo "(stopped after $limit s)" >> "$OUT/$name.log"
    tail -n 4 "$OUT/$name.log"
    echo "$name: $([ "$rc" = 0 ] && echo ok || echo "FAILED (exit $rc)") in $((SECONDS - start)) s" \
        | tee -a "$OUT/summary.txt"
    [ "$rc" = 0 ] || failed=1
}

FACTS='
import importlib.metadata, json, os, platform, sys

def fact(name, get):
    try:
        facts[name] = get()
    except Exception as e:  # a fact that cannot be read says why
        facts[name] = f"{type(e).__name__}: {e}"

facts = {"python": platform.python_version(), "simulator": os.environ.get("NUMBA_ENABLE_CUDASIM") == "1"}
if sys.argv[1] == "torch":
    import torch
    fact("torch", lambda: torch.__version__)
    fact("torch.version.cuda", lambda: torch.version.cuda)
    fact("torch.cuda.is_available()", torch.cuda.is_available)
    fact("torch device", lambda: torch.cuda.get_device_name(0))
else:
    import numba
    from numba import cuda
    fact("numba", lambda: numba.__version__)
    fact("numba-cuda", lambda: importlib.metadata.version("numba-cuda"))
    fact("numba.cuda implementation", lambda: cuda.implementation)
    fact("numba.cuda.is_available()", cuda.is_available)
    fact("device", lambda: str(cuda.get_current_device().name))
    fact("compute capability", lambda: cuda.get_current_device().compute_capability)
    fact("driver version", lambda: cuda.cudadrv.driver.driver.get_version())
    fact("runtime (NVRTC) version", lambda: cuda.runtime.get_version())
    import toolkit
    fact("toolkit.cuda.is_available()", toolkit.cuda.is_available)
    fact("toolkit.cuda.get_device_name(0)", lambda: toolkit.cuda.get_device_name(0))
    fact("numba.cuda.detect()", cuda.detect)
    fact("CUDA wheels", lambda: dict(sorted((d.name, d.version) for d in importlib.metadata.distributions()
                                            if d.name.startswith(("nvidia-", "cuda-")))))
print(json.dumps(facts, indent=1, default=str))
'

if [ "${GPU_CHECK_SKIP_INSTALL:-}" = 1 ]; then
    echo "install: skipped (GPU_CHECK_SKIP_INSTALL=1)" | tee -a "$OUT/summary.txt"
else
    step install 240 make --no-print-directory cuda-venv
fi
if [ "${TOOLKIT_CUDA_SIMULATOR:-}" = 1 ]; then
    echo "nvidia-smi: skipped (simulator)" | tee -a "$OUT/summary.txt"
else
    step nvidia-smi 30 nvidia-smi
    cat "$OUT/nvidia-smi.log"
fi
step facts 60 "$PY" -c "$FACTS" numba
step torch-facts 60 "$PY" -c "$FACTS" torch
cat "$OUT/facts.log" "$OUT/torch-facts.log"
JUNIT="${PYTEST_ADDOPTS:-} --junitxml=$OUT/tests.xml"
if [ -n "${GPU_CHECK_PYTEST_ARGS:-}" ]; then
    PYTEST_ADDOPTS=$JUNIT step tests 240 "${MAKE_CUDA[@]}" test-cuda CUDA_PYTEST_ARGS="$GPU_CHECK_PYTEST_ARGS"
else
    PYTEST_ADDOPTS=$JUNIT step tests 240 "${MAKE_CUDA[@]}" test-cuda
fi
step bench 180 "${MAKE_CUDA[@]}" bench-cuda
if [ "${TOOLKIT_CUDA_SIMULATOR:-}" != 1 ] && grep -q -e "did not run" -e "Not run" "$OUT/bench.log"; then
    echo "bench: FAILED (the CUDA benchmarks did not run on the GPU, see bench.log)" | tee -a "$OUT/summary.txt"
    failed=1
fi

echo "== results in $OUT"
cat "$OUT/summary.txt"
exit "$failed"
