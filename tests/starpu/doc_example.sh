#!/bin/sh
# docs/starpu.md shows apps/starpu/example.c, from its first #include on, as
# its complete example; this test keeps the two the same. Usage:
#   doc_example.sh REPO_ROOT
set -u
cd "$1" || exit 1
doc=$(mktemp)
src=$(mktemp)
trap 'rm -f "$doc" "$src"' EXIT
awk '/^\*\*A complete example\*\*/ {found = 1}
     found && /^```c$/ {inside = 1; next}
     inside && /^```$/ {exit}
     inside {print}' docs/starpu.md >"$doc"
sed -n '/^#include/,$p' apps/starpu/example.c >"$src"
if ! [ -s "$doc" ] || ! diff -u "$src" "$doc"; then
  echo "docs/starpu.md's example differs from apps/starpu/example.c"
  exit 1
fi
echo "docs/starpu.md shows apps/starpu/example.c"
