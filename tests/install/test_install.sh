#!/bin/sh
# The installed tree: `cmake --install` into a temporary prefix puts the
# program, the headers, both libraries, mapopt.pc, the manual pages and the
# bash completion where docs/c-api.md says; the shared library exports the
# public API and nothing else; the manual pages say what --help says; and
# the example program of docs/c-api.md builds with the pkg-config flags
# alone and runs. Usage: test_install.sh BUILD_DIR SOURCE_DIR CC
set -u
BUILD=$1
ROOT=$2
CC=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }
has() { if [ -e "$1" ]; then ok; else bad "missing $1"; fi; }

P=$T/prefix
if cmake --install "$BUILD" --prefix "$P" >"$T/install.log" 2>&1; then ok; else
  bad "cmake --install failed"; cat "$T/install.log"; exit 1
fi
PC=$(find "$P" -name mapopt.pc | head -n 1)
[ -n "$PC" ] || { echo "FAIL: no mapopt.pc installed"; exit 1; }
LIB=$(dirname "$(dirname "$PC")")
has "$P/bin/mapopt"
has "$P/include/mapopt/mapopt.h"
for h in "$ROOT"/include/mapopt/*.h; do has "$P/include/mapopt/$(basename "$h")"; done
has "$LIB/libmapopt.a"
has "$LIB/libmapopt.so"
has "$P/share/man/man1/mapopt.1"
has "$P/share/bash-completion/completions/mapopt"
has "$P/share/doc/mapopt/c-api.md"
if "$P/bin/mapopt" --version | grep -q '^mapopt [0-9]'; then ok; else bad "--version"; fi
# No private header is installed.
if ls "$P/include/mapopt" | grep -qv '\.h$'; then bad "stray files in include/mapopt"; else ok; fi

# Manual pages: one per command, made from --help: every option the help
# names is in the page, and man renders it without complaint.
for c in $("$P/bin/mapopt" --commands); do
  page=$P/share/man/man1/mapopt-$c.1
  has "$page"
  "$P/bin/mapopt" "$c" --help > "$T/help"
  for o in $(grep -o -- '--[a-z][a-z-]*' "$T/help" | sort -u); do
    esc=$(printf '%s' "$o" | sed 's/-/\\\\-/g')
    if grep -q -- "$esc" "$page"; then ok; else bad "mapopt-$c.1 lacks $o"; fi
  done
  if command -v man >/dev/null 2>&1; then
    if MANWIDTH=80 man -l "$page" 2>"$T/manerr" | grep -q "mapopt-$c"; then ok
    else bad "man -l $page"; fi
    if [ -s "$T/manerr" ]; then bad "man warns on mapopt-$c.1"; cat "$T/manerr"; else ok; fi
  fi
done
if grep -q -- '\\-\\-version' "$P/share/man/man1/mapopt.1"; then ok; else bad "mapopt.1 lacks --version"; fi
if "$P/bin/mapopt" --help | grep -q -- '--version'; then ok; else bad "--help lacks --version"; fi

# Bash completion: valid, and it completes commands, options and presets.
COMP=$P/share/bash-completion/completions/mapopt
if command -v bash >/dev/null 2>&1; then
  complete_words() { # completes the last of the given words
    bash -c '. "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1));
             _mapopt; echo "${COMPREPLY[*]}"' sh "$COMP" "$@"
  }
  if bash -n "$COMP"; then ok; else bad "completion script has a syntax error"; fi
  case " $(complete_words mapopt si) " in *" sim "*) ok;; *) bad "completion of si";; esac
  case " $(complete_words mapopt sim --comp) " in *" --compare "*) ok;; *) bad "completion of --comp";; esac
  case " $(complete_words mapopt sim circuit --machine lass) " in *" lassen "*) ok;; *) bad "completion of --machine lass";; esac
  case " $(complete_words mapopt check --app circ) " in *" circuit "*) ok;; *) bad "completion of --app circ";; esac
fi

# The shared library exports the public API only: each exported symbol is
# a mapopt_ function or datum declared in a public header, and each
# function declared there is exported. (starpu.h declares libmapopt-starpu,
# a library of its own.)
nm -D --defined-only "$LIB/libmapopt.so" | awk '{ print $3 }' | sort -u > "$T/exported"
ls "$P"/include/mapopt/*.h | grep -v '/starpu\.h$' | xargs cat | tr '\n' ' ' | grep -o 'MAPOPT_API [^;]*;' \
  | sed 's/(.*//' | grep -o 'mapopt_[a-z0-9_]*$' | sort -u > "$T/declared"
if [ "$(wc -l < "$T/declared")" -gt 100 ]; then ok; else bad "few declarations found"; fi
extra=$(comm -23 "$T/exported" "$T/declared")
missing=$(comm -13 "$T/exported" "$T/declared")
if [ -z "$extra" ]; then ok; else bad "exported but not public: $extra"; fi
if [ -z "$missing" ]; then ok; else bad "public but not exported: $missing"; fi

# The example of docs/c-api.md, built with pkg-config only, against the
# installed tree (not the source tree), and run.
sed -n '/<!-- example: begin -->/,/<!-- example: end -->/p' "$ROOT/docs/c-api.md" \
  | sed '1,2d;$d' | sed '$d' > "$T/simulate.c"
if grep -q 'int main' "$T/simulate.c"; then ok; else bad "no example in docs/c-api.md"; fi
export PKG_CONFIG_PATH="$(dirname "$PC")"
FLAGS=$(pkg-config --cflags --libs mapopt)
case "$FLAGS" in *"$ROOT"*|*"$BUILD"*) bad "pkg-config flags point into the build: $FLAGS";; *) ok;; esac
if (cd "$T" && $CC -std=c11 -Wall -Wextra -Werror -o simulate simulate.c $FLAGS) 2>"$T/cc.log"; then ok; else
  bad "the example does not build with '$FLAGS'"; cat "$T/cc.log"
fi
if [ -x "$T/simulate" ]; then
  if ldd "$T/simulate" | grep -q "$LIB/libmapopt.so"; then bad "linked to the build tree"; fi
  if (cd "$T" && LD_LIBRARY_PATH="$LIB" ./simulate > out 2> err); then ok; else
    bad "the example failed"; cat "$T/err"
  fi
  if LD_LIBRARY_PATH="$LIB" ldd "$T/simulate" | grep -q "$LIB/libmapopt.so"; then ok; else
    bad "the example is not linked to the installed shared library"
  fi
  # Every line of the output docs/c-api.md shows (but "...") is printed.
  sed -n '/<!-- example output: begin -->/,/<!-- example output: end -->/p' \
    "$ROOT/docs/c-api.md" | sed '1,2d;$d' | sed '$d' | grep -v '^\.\.\.$' > "$T/shown"
  if [ "$(wc -l < "$T/shown")" -ge 8 ]; then ok; else bad "no example output in docs/c-api.md"; fi
  cat "$T/out" "$T/err" > "$T/all"
  while IFS= read -r want; do
    if grep -qxF -- "$want" "$T/all"; then ok; else bad "the example does not print '$want'"; fi
  done < "$T/shown"
fi
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
