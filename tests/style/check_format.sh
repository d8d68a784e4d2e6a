#!/bin/sh
# Every C source and header is formatted with the checked-in .clang-format
# (docs/architecture.md), and no file of the library or the CLI is longer than
# 1,500 lines (a longer one is split along its sections).
# Usage: check_format.sh CLANG_FORMAT REPO_ROOT
set -u
cf=$1
cd "$2" || exit 1
bad=0
total=0
for f in $(git ls-files '*.c' '*.h' 2>/dev/null || find src include tests bench -name '*.[ch]'); do
  total=$((total + 1))
  if ! "$cf" --dry-run --Werror "$f" >/dev/null 2>&1; then
    echo "not formatted: $f (run: clang-format -i $f)"
    bad=$((bad + 1))
  fi
done
for f in $(git ls-files 'src/*.c' 'src/*.h' 'include/*.h' 2>/dev/null ||
  find src include -name '*.[ch]'); do
  total=$((total + 1))
  n=$(wc -l <"$f")
  if [ "$n" -gt 1500 ]; then
    echo "too long: $f ($n lines, at most 1500: split it along its sections)"
    bad=$((bad + 1))
  fi
done
echo "$((total - bad)) passed, $bad failed"
[ "$bad" = 0 ]
