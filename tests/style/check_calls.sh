#!/bin/sh
# Checks the call rules of docs/architecture.md on the compiled library.
# Usage:
#   check_calls.sh SOURCE_DIR OBJECT...
# The objects are the library's and the program's (.../src/<module>/
# <file>.c.o, src/cli/ for the program). A file calls another when it
# leaves undefined a symbol the other defines (nm), which catches calls
# through any declaration. Two rules:
#   - a file calls only its own module and the modules the table of
#     docs/architecture.md lets its module use; a module that may use
#     "public" (cli) calls only the functions and data the public headers
#     include/mapopt/*.h declare (MAPOPT_API);
#   - the calls between files form no circle (tsort finds none), the
#     program's files among themselves included.
# Objects outside src/ (the embedded presets, apps and mappers) only hold
# data and are not checked. Exits 1 on a violation, printing it.
set -u
ROOT=$1
shift
TMP=${TMPDIR:-/tmp}/calls.$$
mkdir -p "$TMP" || exit 2
trap 'rm -rf "$TMP"' EXIT
awk -F'|' -f "$ROOT/tests/style/modules.awk" "$ROOT/docs/architecture.md" \
  >"$TMP/table"
# The public API: every name a public header declares with MAPOPT_API.
cat "$ROOT"/include/mapopt/*.h | tr '\n' ' ' | grep -o 'MAPOPT_API [^;]*;' |
  sed 's/(.*//' | grep -o 'mapopt_[a-z0-9_]*$' | sort -u >"$TMP/public"
if [ ! -s "$TMP/public" ]; then
  echo "include/mapopt/*.h: no MAPOPT_API declaration found"
  exit 2
fi
# One line per object: its name (src/<module>/<file>.c) and path.
for o in "$@"; do
  name=$(echo "$o" | sed -n 's|.*/\(src/[^/]*/[^/]*\.c\)\.o$|\1|p')
  [ -n "$name" ] && echo "$name $o"
done >"$TMP/objects"
if [ ! -s "$TMP/objects" ]; then
  echo "no objects under src/ given"
  exit 2
fi
# defs: "symbol file"; uses: "file symbol".
while read -r name o; do
  nm -P --defined-only "$o" | awk -v f="$name" '$2 ~ /^[TDRBC]$/ { print $1, f }'
done <"$TMP/objects" | sort -u >"$TMP/defs"
while read -r name o; do
  nm -P -u "$o" | awk -v f="$name" '{ print f, $1 }'
done <"$TMP/objects" | sort -u >"$TMP/uses"
# edges: "caller callee symbol", between different files.
awk 'NR == FNR { def[$1] = $2; next }
     ($2 in def) && def[$2] != $1 { print $1, def[$2], $2 }' \
  "$TMP/defs" "$TMP/uses" | sort -u >"$TMP/edges"
status=0
awk 'FILENAME == ARGV[1] { public[$1] = 1; next }
     FILENAME == ARGV[2] { uses[$1] = "," $2 ","; next }
     {
       split($1, a, "/"); split($2, b, "/")
       if (a[2] == b[2])
         next
       if (uses[a[2]] == ",public,") {
         if (!($3 in public))
           printf "%s calls %s of %s: module %s uses only the public API\n",
                  $1, $3, $2, a[2]
       } else if (index(uses[a[2]], "," b[2] ",") == 0)
         printf "%s calls %s of %s: module %s may not use %s\n",
                $1, $3, $2, a[2], b[2]
     }' "$TMP/public" "$TMP/table" "$TMP/edges" >"$TMP/bad"
if [ -s "$TMP/bad" ]; then
  cat "$TMP/bad"
  status=1
fi
if ! awk '{ print $1, $2 }' "$TMP/edges" | tsort >/dev/null 2>"$TMP/loop"; then
  echo "the calls between files form a circle:"
  cat "$TMP/loop"
  status=1
fi
exit $status
