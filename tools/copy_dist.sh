#!/usr/bin/env bash
# Copies the wheels given as arguments into <workspace>/dist/, replacing older
# wheels of the same distributions. Run by `./bazelw run //:dist`.
set -euo pipefail
if [ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]; then
  echo "copy_dist.sh: run me with 'bazel run //:dist'" >&2
  exit 2
fi
dest="$BUILD_WORKSPACE_DIRECTORY/dist"
mkdir -p "$dest"
for whl in "$@"; do
  name="$(basename "$whl")"
  rm -f "$dest/${name%%-*}"-*.whl
  cp "$whl" "$dest/$name"
  chmod 0644 "$dest/$name"
  echo "dist/$name"
done
