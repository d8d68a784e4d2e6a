#!/bin/sh
# The user documentation stands alone: docs/, the README, the shipped
# mappers and machine presets, and the program's --help texts name no
# design document that is not in the repository (SIMULATOR.md, DSL.md,
# ...), and every relative link in docs/, the README and the corpus's
# README (apps/corpus) leads to a file that exists.
# Usage: check_docs.sh SOURCE_DIR
set -u
ROOT=$1
cd "$ROOT" || exit 2
status=0
design='\(SIMULATOR\|DSL\|BENCHMARKS\|AUTOGUIDE\|ARCHITECTURE\|STYLE\)\.md'
if grep -n "$design" README.md docs/*.md mappers/*/*.map machines/*.json \
     apps/*.json apps/builtin/*.json apps/corpus/*.json apps/corpus/README.md \
     src/cli/*.c; then
  echo "FAIL: the lines above refer to design documents users do not have"
  status=1
fi
# Relative links: [text](path) and [text](path#anchor), from each file's
# folder.
for f in README.md docs/*.md apps/corpus/README.md; do
  dir=$(dirname "$f")
  grep -o '](\([^)#]*\)[^)]*)' "$f" | sed 's/^](\([^)#]*\).*/\1/' | sort -u |
    while read -r link; do
      case $link in
        http*|mailto:*|'') continue ;;
      esac
      if [ ! -e "$dir/$link" ]; then
        echo "FAIL: $f links to $link, which does not exist"
        echo x >> "${TMPDIR:-/tmp}/check_docs.$$"
      fi
    done
done
if [ -e "${TMPDIR:-/tmp}/check_docs.$$" ]; then
  rm -f "${TMPDIR:-/tmp}/check_docs.$$"
  status=1
fi
[ $status = 0 ] && echo "docs stand alone"
exit $status
