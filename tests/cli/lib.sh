# What the CLI test scripts share (sourced, not run): a scratch folder,
# removed at exit, that they run in; counting passes and failures; the two
# checks; and the summary line that makes the exit status.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
pass=0
fail=0

ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*"; }

# expect_rc WANT CMD...: runs CMD with stdout in out, stderr in err.
expect_rc() {
  want=$1; shift
  "$@" >out 2>err
  rc=$?
  if [ "$rc" = "$want" ]; then ok; else bad "'$*' exited $rc, want $want"; cat err; fi
}
# expect_in FILE TEXT: FILE contains the fixed string TEXT.
expect_in() {
  if grep -qF -- "$2" "$1"; then ok; else bad "$1 lacks '$2'"; cat "$1"; fi
}

# Exits 77 (skipped) when the sqlite3 program, which reads the databases
# the scripts check, is not installed.
require_sqlite3() {
  if ! command -v sqlite3 > /dev/null; then
    echo "SKIP: the sqlite3 program is not installed (apt-get install sqlite3)"
    exit 77
  fi
}

# Prints the counts; the status is 0 when nothing failed.
finish() {
  echo "$pass passed, $fail failed"
  [ "$fail" = 0 ]
}
