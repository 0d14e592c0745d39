#!/usr/bin/env bash
# Development build of chainrule-cuda's two libraries without Bazel (cuda/README.md,
# "Development build without Bazel"; Note [one C ABI, two builds] in csrc/cr_cuda.h).
#
#   cuda/tools/build.sh host   # g++ only: chainrule_cuda/libchainrule_cuda_host.so
#   cuda/tools/build.sh gpu    # nvcc + g++: chainrule_cuda/libchainrule_cuda.so
#   cuda/tools/build.sh all    # both
#
# Which sources go where (the same rules as cuda/BUILD.bazel): every csrc/**/*.cc in
# both builds — the host compiler for the host build (-DCR_HOST_BUILD=1), nvcc (-x cu)
# for the GPU build, so kernel files (CR_HD bodies, launch.h) get their __global__
# wrappers there and plain C++ compiles unchanged — except *_host.cc (host build only)
# and *_cuda.cc (GPU build only).
# Objects are kept in cuda/build/<kind>/ and rebuilt when their source or any header
# under csrc/ is newer. Environment: CXX (g++), NVCC (/usr/local/cuda/bin/nvcc, else
# nvcc on PATH), CUDA_HOME (nvcc's toolkit), JOBS (2).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"   # cuda/
csrc="$here/csrc"
CXX="${CXX:-g++}"
JOBS="${JOBS:-2}"
COMMON_FLAGS=(-O2 -std=c++17 -fPIC -fvisibility=hidden -Wall -I"$csrc")

find_nvcc() {
  if [[ -n "${NVCC:-}" ]]; then echo "$NVCC"; return; fi
  for c in /usr/local/cuda/bin/nvcc /usr/local/cuda-13.0/bin/nvcc; do
    [[ -x "$c" ]] && { echo "$c"; return; }
  done
  command -v nvcc || { echo "build.sh: nvcc not found (set NVCC)" >&2; exit 1; }
}

# sources <kind>: the source files of one build, one a line.
sources() {
  local skip="_cuda.cc"
  [[ "$1" == gpu ]] && skip="_host.cc"
  find "$csrc" -name '*.cc' | grep -v -- "$skip\$" | sort
}

# compile <kind> <src> <obj>: one object, unless it is newer than its inputs.
compile() {
  local kind="$1" src="$2" obj="$3"
  if [[ -f "$obj" && "$obj" -nt "$src" && -z "$(find "$csrc" \( -name '*.h' -o -name '*.cuh' \) -newer "$obj" | head -1)" ]]; then
    return
  fi
  mkdir -p "$(dirname "$obj")"
  echo "  $(basename "$src")"
  if [[ "$kind" == host ]]; then
    "$CXX" $COMMON_FLAGS_STR -DCR_HOST_BUILD=1 -c "$src" -o "$obj"
  else
    "$NVCC_BIN" -c -x cu -std=c++17 -O2 -Xcompiler -fPIC -Xcompiler -fvisibility=hidden \
      -ccbin "$CXX_PATH" -gencode=arch=compute_90,code=sm_90 \
      -gencode=arch=compute_90,code=compute_90 -I"$csrc" -I"$CUDA_INC" -I"$CUDA_INC/cccl" \
      "$src" -o "$obj"
  fi
}
export -f compile
export CXX csrc

build() {
  local kind="$1" lib
  local objdir="$here/build/$kind"
  if [[ "$kind" == host ]]; then
    lib="$here/chainrule_cuda/libchainrule_cuda_host.so"
  else
    NVCC_BIN="$(find_nvcc)"
    CUDA_HOME="${CUDA_HOME:-$(cd "$(dirname "$NVCC_BIN")/.." && pwd)}"
    CUDA_INC="$CUDA_HOME/include"
    CXX_PATH="$(command -v "$CXX")"
    export NVCC_BIN CUDA_INC CXX_PATH
    lib="$here/chainrule_cuda/libchainrule_cuda.so"
  fi
  export COMMON_FLAGS_STR="${COMMON_FLAGS[*]}"
  # Objects of an older version of this script (other flags, other compiler) are stale.
  local stamp
  stamp="$(cat "${BASH_SOURCE[0]}" | sha256sum | cut -c1-16) $CXX ${NVCC_BIN:-}"
  if [[ "$(cat "$objdir/.stamp" 2>/dev/null)" != "$stamp" ]]; then
    rm -rf "$objdir" && mkdir -p "$objdir" && echo "$stamp" > "$objdir/.stamp"
  fi
  echo "building $lib"
  mkdir -p "$(dirname "$lib")"
  local objs=()
  while read -r src; do
    printf '%s\0%s\0' "$src" "$objdir/${src#"$csrc"/}.o"
  done < <(sources "$kind") | xargs -0 -n 2 -P "$JOBS" bash -c \
    'compile "$0" "$1" "$2"' "$kind"
  mapfile -t objs < <(sources "$kind" | sed "s|^$csrc/|$objdir/|; s|\$|.o|")
  if [[ "$kind" == host ]]; then
    "$CXX" -shared "${objs[@]}" -o "$lib" -lpthread
  else
    # Static cudart (no libcudart.so at run time; libcuda.so.1 is dlopen'ed by it).
    # cuBLAS is not linked: the kernels load it at run time (dlopen).
    "$CXX" -shared "${objs[@]}" -o "$lib" -L"$CUDA_HOME/lib64" -lcudart_static -ldl -lpthread -lrt -Wl,--exclude-libs,ALL
  fi
}

case "${1:-host}" in
  host) build host ;;
  gpu) build gpu ;;
  all) build host; build gpu ;;
  *) echo "usage: $0 host|gpu|all" >&2; exit 2 ;;
esac
