#!/usr/bin/env bash
# Builds chainrule-cuda with nvcc and g++ directly (no Bazel, no network) and runs the
# CUDA layer's tests on the GPU, then the benchmark. For an H100/H200 machine (sm_90)
# with Python 3.12, numpy, pytest, nvcc and PyTorch (CUDA); see cuda/README.md, "On a
# GPU machine".
#
#   cuda/gpu/run_gpu_tests.sh                # build, GPU tests, host-build tests, bench
#   cuda/gpu/run_gpu_tests.sh --build-only   # just the two libraries (works without a GPU)
#   cuda/gpu/run_gpu_tests.sh --no-bench     # skip bench/cuda.py
#   cuda/gpu/run_gpu_tests.sh -- -k matmul   # extra pytest arguments after --
#
# Environment: PYTHON (python3), RESULTS (cuda/gpu/results: logs and JUnit XML),
# WHEELHOUSE (a folder of wheels to install missing Python packages from, offline),
# JOBS (all cores), NVCC / CUDA_HOME / CXX (passed to cuda/tools/build.sh).
set -uo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
PYTHON="${PYTHON:-python3}"
RESULTS="${RESULTS:-$ROOT/cuda/gpu/results}"
export JOBS="${JOBS:-$(nproc)}"
build_only=0 bench=1 pytest_args=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build-only) build_only=1 ;;
    --no-bench) bench=0 ;;
    --) shift; pytest_args=("$@"); break ;;
    *) echo "usage: $0 [--build-only] [--no-bench] [-- pytest args]" >&2; exit 2 ;;
  esac
  shift
done

mkdir -p "$RESULTS"
declare -A status
say() { echo "== $*" | tee -a "$RESULTS/summary.txt"; }
: > "$RESULTS/summary.txt"

say "machine"
{
  nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>&1 || true
  "${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}" --version 2>&1 | tail -2 || true
  "$PYTHON" -c 'import sys, numpy; print("python", sys.version.split()[0], "numpy", numpy.__version__)'
  "$PYTHON" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available())' 2>&1 || echo "torch: not importable (the PyTorch comparisons skip)"
} | tee -a "$RESULTS/summary.txt"

# Python packages the tests need; install missing ones from WHEELHOUSE (no network).
missing=()
for module in numpy ml_dtypes pytest; do
  "$PYTHON" -c "import $module" 2>/dev/null || missing+=("$module")
done
if [[ ${#missing[@]} -gt 0 && $build_only -eq 0 ]]; then
  if [[ -n "${WHEELHOUSE:-}" ]]; then
    "$PYTHON" -m pip install --no-index --find-links "$WHEELHOUSE" "${missing[@]}" || exit 1
  else
    echo "missing Python packages: ${missing[*]} (set WHEELHOUSE to a folder with their wheels)" >&2
    exit 1
  fi
fi

say "build (cuda/tools/build.sh all, JOBS=$JOBS)"
if "$ROOT/cuda/tools/build.sh" all 2>&1 | tee "$RESULTS/build.log"; then
  status[build]=ok
else
  status[build]=FAILED
fi
# The C++ engine (engine_cpp/README.md's build, one object per core): the bench's chain
# is measured with it, as users run it. Optional: without it the Python engine runs.
say "build: the C++ engine (optional)"
build_engine() {
  local flags=(-O2 -std=c++17 -fPIC -fvisibility=hidden) dirs dir
  dirs="$("$PYTHON" -c 'import sysconfig, pybind11, numpy
print(sysconfig.get_paths()["include"], pybind11.get_include(), numpy.get_include())')" || return 1
  for dir in $dirs; do flags+=(-I"$dir"); done
  export ENGINE_FLAGS="${flags[*]}" ENGINE_OBJS="$ROOT/cuda/build/engine"
  mkdir -p "$ENGINE_OBJS"
  ls "$ROOT"/engine_cpp/src/*.cc | xargs -P "$JOBS" -I{} bash -c \
    'g++ $ENGINE_FLAGS -c "$1" -o "$ENGINE_OBJS/$(basename "$1").o"' _ {} || return 1
  g++ -shared "$ENGINE_OBJS"/*.o -o "$ROOT/engine_cpp/chainrule_engine/_engine.so"
}
if build_engine 2>&1 | tee -a "$RESULTS/build.log"; [[ ${PIPESTATUS[0]} -eq 0 ]]; then
  status[engine]=ok
else
  status[engine]="not built (the Python engine runs)"
fi
echo "engine: ${status[engine]}" | tee -a "$RESULTS/summary.txt"

if [[ "${status[build]}" != ok || $build_only -eq 1 ]]; then
  say "build: ${status[build]}"
  [[ "${status[build]}" == ok ]]; exit $?
fi

run_tests() {  # run_tests <name> <env assignments...>: cuda/tests under one library
  local name="$1"; shift
  say "tests: $name"
  (cd "$ROOT" && env PYTHONPATH="$ROOT/core:$ROOT/cuda:$ROOT/core/tests" CHAINRULE_ENGINE=python "$@" \
     "$PYTHON" -m pytest cuda/tests -q -rs -p no:cacheprovider \
     --junitxml "$RESULTS/$name.xml" "${pytest_args[@]}") 2>&1 | tee "$RESULTS/$name.log"
  if [[ ${PIPESTATUS[0]} -eq 0 ]]; then status[$name]=ok; else status[$name]=FAILED; fi
}

# The GPU library: is_available() must be True here, or every GPU test would skip.
if (cd "$ROOT" && PYTHONPATH="$ROOT/core:$ROOT/cuda" "$PYTHON" -c '
import sys, chainrule as cr
print("chainrule.cuda:", cr.cuda.is_available(), cr.cuda.unavailable_reason() or cr.cuda.get_device_name())
sys.exit(0 if cr.cuda.is_available() else 1)' 2>&1 | tee -a "$RESULTS/summary.txt"; exit "${PIPESTATUS[0]}"); then
  run_tests gpu CHAINRULE_CUDA_EMULATE=0
else
  status[gpu]="FAILED (no usable GPU)"
fi
run_tests host CHAINRULE_CUDA_EMULATE=1

if [[ $bench -eq 1 && -f "$ROOT/bench/cuda.py" ]]; then
  say "bench: bench/cuda.py"
  if (cd "$ROOT" && PYTHONPATH="$ROOT/core:$ROOT/cuda:$ROOT/engine_cpp" "$PYTHON" bench/cuda.py) 2>&1 | tee "$RESULTS/bench.log"; then
    status[bench]=ok
  else
    status[bench]=FAILED
  fi
fi

say "summary (logs and JUnit XML in $RESULTS)"
rc=0
for step in build engine gpu host bench; do
  [[ -n "${status[$step]:-}" ]] || continue
  echo "$step: ${status[$step]}" | tee -a "$RESULTS/summary.txt"
  [[ "${status[$step]}" == ok || $step == engine ]] || rc=1
done
exit $rc
