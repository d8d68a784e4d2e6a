#!/bin/sh
# The user documentation stands alone: docs/, the README, the shipped
# mappers and machine presets, and the program's --help texts name no
# design document that is not in the repository (the names in $design
# below), and every relative link in docs/, the README and the corpus's
# README (apps/corpus) leads to a file that exists.
# The sources cite only what the repository has: every text file under
# src/, include/ and tests/ (comments, golden files' comment lines, fuzz
# seeds) names no .md file that does not exist, has no section sign (docs/
# pages are cited by heading, not by number), and every
# docs/X.md, "Heading" (the comma optional, the heading's text or its start,
# backticks and a leading section number left out, on one line or running
# on to the next) names a heading of docs/X.md: a line starting with #, a
# bold run-in **Heading.**, or an anchor <a id="heading"></a>. Each problem
# is printed as FILE:LINE: what.
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

TMP=${TMPDIR:-/tmp}/check_docs.d.$$
mkdir -p "$TMP" || exit 2
trap 'rm -rf "$TMP"' EXIT
# This script and its test (test_check_docs.sh), whose text shows the
# forms it checks and bad citations on purpose, are not checked.
printf '%s\n' tests/style/check_docs.sh tests/style/test_check_docs.sh \
  >"$TMP/skip"
LC_ALL=C grep -rlI "" src include tests | LC_ALL=C sort |
  grep -vxF -f "$TMP/skip" >"$TMP/sources"
# (b) No section signs (the sign is written as its UTF-8 bytes here).
sect=$(printf '\302\247')
LC_ALL=C xargs grep -nHIF "$sect" <"$TMP/sources" >"$TMP/sect"
if [ -s "$TMP/sect" ]; then
  sed 's/$/    <- a section number: cite docs\/X.md, "Heading"/' "$TMP/sect"
  status=1
fi
# (a) Every NAME.md resolves: the name or a tail of it after a '/' is a
# file relative to the repository, to the citing file's folder, or in docs/.
LC_ALL=C xargs grep -noHIE '[A-Za-z0-9_./-]*[A-Za-z0-9_-]\.md\b' \
  <"$TMP/sources" |
  awk -F: '
    function exists(path,   r, x) {
      r = (getline x < path) >= 0
      close(path)
      return r
    }
    {
      f = $1; ref = $3; dir = f
      sub(/\/[^\/]*$/, "", dir)
      for (tail = ref; tail != ""; ) {
        if (exists(tail) || exists(dir "/" tail) || exists("docs/" tail))
          next
        if (index(tail, "/") == 0)
          break
        sub(/^[^\/]*\//, "", tail)
      }
      print f ":" $2 ": " ref ": no such file in the repository"
    }' >"$TMP/md"
if [ -s "$TMP/md" ]; then
  cat "$TMP/md"
  status=1
fi
# (c) Every docs/X.md, "Heading" names a heading of docs/X.md. First the
# headings, one "docs/X.md<TAB>text" line each (fenced code left out).
for d in docs/*.md; do
  awk -v doc="$d" '
    /^```/ { fence = !fence; next }
    fence { next }
    /^#+ / { h = $0; sub(/^#+ +/, "", h); print doc "\t" h }
    {
      s = $0
      while (match(s, /<a id="[^"]+">/)) {
        print doc "\t#" substr(s, RSTART + 7, RLENGTH - 9)
        s = substr(s, RSTART + RLENGTH)
      }
      s = $0
      while (match(s, /\*\*[^*]+\*\*/)) {
        print doc "\t" substr(s, RSTART + 2, RLENGTH - 4)
        s = substr(s, RSTART + RLENGTH)
      }
    }' "$d"
done >"$TMP/headings"
xargs awk -v FS='\t' '
  function norm(t) {
    gsub(/`/, "", t)
    gsub(/[ \t]+/, " ", t)
    sub(/^ /, "", t)
    sub(/ $/, "", t)
    return t
  }
  function check(doc, q, where,   i, ok, id) {
    q = norm(q)
    ok = 0
    id = tolower(q)
    gsub(/ /, "-", id)
    for (i = 1; i <= n[doc] && !ok; i++)
      ok = q != "" && (index(head[doc, i], q) == 1 || head[doc, i] == "#" id)
    if (!ok) {
      if (n[doc] == 0)
        print where ": " doc ", \"" q "\": no such page"
      else
        print where ": " doc ", \"" q "\": no such heading in " doc
      bad = 1
    }
  }
  function unclosed() {
    print pwhere ": " pdoc ", \"" norm(ptext) "...: the heading is never closed"
    bad = 1
    pend = 0
  }
  # Scans s for references, and for the further headings of a list after
  # one ("A", "B" and "C"); a heading left open continues on the next line.
  function scan(s, where,   doc, rest, q) {
    while (1) {
      if (ldoc != "" && match(s, /^ *(,|,? *and|,? *or)? *"/)) {
        doc = ldoc
        rest = substr(s, RLENGTH + 1)
      } else if (match(s, /docs\/[A-Za-z0-9_-]+\.md,? "/)) {
        doc = substr(s, RSTART, RLENGTH)
        sub(/,? "$/, "", doc)
        rest = substr(s, RSTART + RLENGTH)
      } else {
        if (s !~ /^ *(,|,? *and|,? *or)? *$/)
          ldoc = ""
        return
      }
      q = index(rest, "\"")
      if (q == 0) {
        pend = 1; pdoc = doc; ptext = rest; pwhere = where; plines = 1
        return
      }
      check(doc, substr(rest, 1, q - 1), where)
      ldoc = doc
      s = substr(rest, q + 1)
    }
  }
  FILENAME == hfile {
    h = norm($2)
    sub(/^[0-9]+(\.[0-9]+)*\.? /, "", h)
    head[$1, ++n[$1]] = h
    next
  }
  FNR == 1 {
    if (pend)
      unclosed()
    ldoc = ""
  }
  {
    s = $0
    where = FILENAME ":" FNR
    if (pend || ldoc != "")
      sub(/^[ \t]*(\*|#+|\/\/|%note)?[ \t]*/, "", s)
    if (pend) {
      q = index(s, "\"")
      if (q > 0) {
        check(pdoc, ptext " " substr(s, 1, q - 1), pwhere)
        pend = 0
        ldoc = pdoc
        s = substr(s, q + 1)
      } else if (++plines > 3) {
        unclosed()
        next
      } else {
        ptext = ptext " " s
        next
      }
    }
    scan(s, where)
  }
  END {
    if (pend)
      unclosed()
    exit bad
  }
' hfile="$TMP/headings" "$TMP/headings" <"$TMP/sources" || status=1
[ $status = 0 ] && echo "docs stand alone"
exit $status
