#!/usr/bin/env bash
# Builds the project's own sched_ext fixtures (tests/bpf/*.bpf.c) into the committed objects
# (tests/bpf/*.bpf.o), so that tests and the page need no compiler.
# Compiler: Debian's clang-14 (apt-get install clang-14; the first that builds these with -mcpu=v3
# and BTF), or CLANG=... (clang-19, or "python3 -m ziglang cc" from PyPI's ziglang with
# -target bpfel-freestanding-none -fno-unwind-tables -fno-asynchronous-unwind-tables).
# Usage: bash scripts/build-bpf.sh [--check]   (--check: rebuild to a temp dir and diff)
set -euo pipefail
cd "$(dirname "$0")/../tests/bpf"
CLANG=${CLANG:-clang-14}
out=.
if [ "${1:-}" = --check ]; then out=$(mktemp -d); fi
for src in *.bpf.c; do
  obj="$out/${src%.c}.o"
  # no path of the build machine in the objects (DWARF comp_dir)
  $CLANG -target bpf -mcpu=v3 -g -O2 -Wall -Werror -fdebug-prefix-map="$PWD"=. -c "$src" -o "$obj"
  if [ "$out" != . ] && ! cmp -s "$obj" "${src%.c}.o"; then
    echo "tests/bpf/${src%.c}.o differs from what $CLANG builds from $src" >&2; exit 1
  fi
done
echo "built: $(ls "$out"/*.bpf.o | xargs -n1 basename | tr '\n' ' ')"
