#!/bin/sh
# check_docs.sh's source checks on a small tree made here: a clean tree
# passes, and each kind of bad citation fails with its FILE:LINE line.
# Usage: test_check_docs.sh SOURCE_DIR
set -u
CHECK=$1/tests/style/check_docs.sh
T=${TMPDIR:-/tmp}/test_check_docs.$$
trap 'rm -rf "$T"' EXIT
fails=0
# A tree with one page, one source file and one golden file, all clean.
make_tree() {
  rm -rf "$T"
  mkdir -p "$T/docs" "$T/src/m" "$T/tests/g" "$T/mappers/x" "$T/machines" \
    "$T/apps/builtin" "$T/apps/corpus" "$T/src/cli"
  for f in README.md mappers/x/a.map machines/a.json apps/a.json \
    apps/builtin/a.json apps/corpus/a.json apps/corpus/README.md \
    src/cli/a.c; do
    : >"$T/$f"
  done
  cat >"$T/docs/page.md" <<'EOF'
# A page

## 2. Running it

- **Copies share the links they use.** Text.

<a id="duplicates"></a>So is a proposal.

### 5.4 `Layout`: how instances are laid out

```
# not a heading
```
EOF
  cat >"$T/src/m/a.c" <<'EOF'
/* See docs/page.md, "Running it", "Copies share the links" and
 * "Duplicates"; README.md; docs/page.md, "Layout: how instances are
 * laid out". */
EOF
  cat >"$T/tests/g/a.test" <<'EOF'
Cases of docs/page.md "Running it".
%note docs/page.md, "Copies share
%note the links they use"
EOF
}
# expect NAME STATUS OUTPUT_LINE: check_docs exits with STATUS and, when
# OUTPUT_LINE is not empty, prints it.
expect() {
  out=$(sh "$CHECK" "$T" 2>&1)
  st=$?
  if [ "$st" != "$2" ]; then
    echo "FAIL $1: exit $st, not $2"
    echo "$out"
    fails=$((fails + 1))
  elif [ -n "$3" ] && ! printf '%s\n' "$out" | grep -qxF "$3"; then
    echo "FAIL $1: no line '$3' in"
    echo "$out"
    fails=$((fails + 1))
  else
    echo "ok   $1"
  fi
}
make_tree
expect clean 0 "docs stand alone"

make_tree
printf '/* (DESIGN.md) */\n' >>"$T/src/m/a.c"
expect missing-md 1 "src/m/a.c:4: DESIGN.md: no such file in the repository"

make_tree
printf 'see docs/other.md\n' >>"$T/tests/g/a.test"
expect missing-page 1 "tests/g/a.test:4: docs/other.md: no such file in the repository"

make_tree
printf '/* see \302\2474.2 */\n' >>"$T/src/m/a.c"
expect section-sign 1 \
  "src/m/a.c:4:/* see $(printf '\302\247')4.2 */    <- a section number: cite docs/X.md, \"Heading\""

make_tree
printf '/* docs/page.md, "Walking it" */\n' >>"$T/src/m/a.c"
expect heading 1 \
  'src/m/a.c:4: docs/page.md, "Walking it": no such heading in docs/page.md'

make_tree
printf '/* docs/page.md, "Running it" and "Nothing" */\n' >>"$T/src/m/a.c"
expect list-item 1 \
  'src/m/a.c:4: docs/page.md, "Nothing": no such heading in docs/page.md'

make_tree
printf '/* docs/page.md, "Copies share\n * the wires" */\n' >>"$T/src/m/a.c"
expect two-lines 1 \
  'src/m/a.c:4: docs/page.md, "Copies share the wires": no such heading in docs/page.md'

make_tree
printf '/* docs/page.md, "not a heading" */\n' >>"$T/src/m/a.c"
expect code-fence 1 \
  'src/m/a.c:4: docs/page.md, "not a heading": no such heading in docs/page.md'

make_tree
printf '/* docs/page.md, "Running it\n *\n *\n *\n */\n' >>"$T/src/m/a.c"
expect never-closed 1 \
  'src/m/a.c:4: docs/page.md, "Running it...: the heading is never closed'

[ $fails = 0 ] && echo "all check_docs cases pass"
exit $((fails > 0))
