#!/bin/sh
# Checks the include rules of docs/architecture.md. Usage:
#   check_layers.sh SOURCE_DIR
# The table "Modules and who may use whom" of docs/architecture.md gives,
# per module, the modules it may use. Every #include "..." of
# include/mapopt/*.h and src/*/*.[ch] must then be one of:
#   - a public header mapopt/<m>.h of the file's own module or of a module
#     it may use (cli: any public header; the umbrella mapopt.h: cli only);
#   - a private header <m>/x.h of the file's own module;
#   - core/core.h or core/json.h, the library's internal base, from any
#     module but cli.
# And the umbrella include/mapopt/mapopt.h includes every public header
# but starpu.h, the header of libmapopt-starpu, which needs StarPU's own.
# Prints each violation as FILE:LINE: message and exits 1 if there is one.
set -u
ROOT=$1
cd "$ROOT" || exit 2
TABLE=$(awk -F'|' -f tests/style/modules.awk docs/architecture.md)
if [ -z "$TABLE" ]; then
  echo "docs/architecture.md: no module table found"
  exit 2
fi
# may_use M: the comma-separated list of M's row ("" for none); "?" when M
# has no row.
may_use() {
  echo "$TABLE" | awk -v m="$1" '$1 == m { print ($2 == "" ? "," : $2); f = 1 }
                                 END { if (!f) print "?" }'
}
status=0
fail() {
  echo "$1"
  status=1
}
for f in include/mapopt/*.h src/*/*.c src/*/*.h; do
  [ -f "$f" ] || continue
  case $f in
  include/mapopt/mapopt.h) continue ;; # the umbrella: every public header
  include/mapopt/*) mod=$(basename "$f" .h) ;;
  src/*) mod=$(echo "$f" | cut -d/ -f2) ;;
  esac
  uses=$(may_use "$mod")
  if [ "$uses" = "?" ]; then
    fail "$f: module '$mod' has no row in docs/architecture.md"
    continue
  fi
  grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
    sed 's/^\([0-9]*\):.*"\([^"]*\)".*/\1 \2/' >"${TMPDIR:-/tmp}/layers.$$"
  while read -r line inc; do
    where="$f:$line: #include \"$inc\""
    case $inc in
    *..*) fail "$where: no relative paths" ;;
    mapopt/mapopt.h)
      [ "$mod" = cli ] || fail "$where: the umbrella header is for programs" ;;
    mapopt/*.h)
      dep=$(basename "$inc" .h)
      if [ "$mod" != cli ] && [ "$dep" != "$mod" ]; then
        case ",$uses," in
        *",$dep,"*) ;;
        *) fail "$where: module $mod may not use $dep" ;;
        esac
      fi ;;
    */*.h)
      dep=$(echo "$inc" | cut -d/ -f1)
      if [ "$dep" != "$mod" ]; then
        case "$mod:$inc" in
        cli:*) fail "$where: cli uses only the public headers" ;;
        *:core/core.h | *:core/json.h) ;;
        *) fail "$where: private header of module $dep" ;;
        esac
      fi ;;
    *) fail "$where: not a module header" ;;
    esac
  done <"${TMPDIR:-/tmp}/layers.$$"
  rm -f "${TMPDIR:-/tmp}/layers.$$"
done
for h in include/mapopt/*.h; do
  case $h in include/mapopt/mapopt.h | include/mapopt/starpu.h) continue ;; esac
  grep -q "^#include \"mapopt/$(basename "$h")\"" include/mapopt/mapopt.h ||
    fail "include/mapopt/mapopt.h: does not include mapopt/$(basename "$h")"
done
exit $status
