#!/bin/sh
# `mapopt tune --optimizer llm`, `bench` and `report` against llm_server,
# the scripted chat-completions server (tests/llm/llm_server.c): a tuning
# run of ten iterations completes, records its calls and tokens, and
# records the same rows when run again; the API key is in no output, no
# database and no report, even when a reply quotes it or the server echoes
# it; bench gives the llm row its parse and run shares and tokens; the
# flags are checked; a mapopt-tune/1 database is read as it is by report
# and migrated by tune. Exit 77
# (skipped) without the sqlite3 program.
# Usage: test_llm.sh MAPOPT_BINARY LLM_SERVER SCRIPT
set -u
M=$1
SERVER=$2
SCRIPT=$3
. "$(dirname "$0")/lib.sh"
require_sqlite3

KEY=sk-mapopt-cli-SECRET-7731 # tests/llm/replies/tune08.txt quotes it
SPID=
trap 'if [ -n "$SPID" ]; then kill "$SPID"; fi; rm -rf "$T"' EXIT

# Starts a fresh server (every model from its first reply) and points the
# environment at it.
start_server() {
  if [ -n "$SPID" ]; then kill "$SPID"; wait "$SPID" 2> /dev/null; fi
  rm -f port
  "$SERVER" --script "$SCRIPT" --port-file port --key "$KEY" --log srv.log &
  SPID=$!
  i=0
  while [ ! -s port ] && [ $i -lt 500 ]; do sleep 0.01; i=$((i + 1)); done
  MAPOPT_LLM_BASE_URL=http://127.0.0.1:$(cat port)/v1
  export MAPOPT_LLM_BASE_URL
}
unset OPENAI_BASE_URL OPENAI_API_KEY
export MAPOPT_LLM_MODEL=tune10 MAPOPT_LLM_API_KEY=$KEY

# Every row of the run but the times (wall, finished, latency).
rows() {
  sqlite3 "$1" "SELECT iteration, hash, status, metric, note, feedback, text
                FROM evaluations ORDER BY iteration;
                SELECT step, call, status, http_status, attempts, samples,
                prompt_tokens, completion_tokens, cost, error
                FROM llm_calls ORDER BY step, call;
                SELECT * FROM llm_replies ORDER BY step, sample"
}

# ---- ten iterations, twice ---------------------------------------------------
for db in a b; do
  start_server
  expect_rc 0 "$M" tune circuit --optimizer llm --db $db.db --out $db.map \
    --price-in 0.5 --price-out 1.5
  cp out $db.out
  cp err $db.err
  rows $db.db > $db.rows
done
expect_in a.out "circuit on p100x4: 10 evaluations by llm"
expect_in a.out "llm: 10 calls (0 failed), 10 replies,"
expect_in a.out "cost 0.0"
expect_in a.out "--optimizer llm --seed 0 --budget 10 --llm-model tune10 --temperature 0.7 --samples 1 --history 5"
expect_in a.err "evaluation 5/10 [llm step 5 sample 1: invalid]: invalid"
expect_in a.err "evaluation 6/10 [llm step 6 sample 1: no-mapper]: invalid"
expect_in a.err "evaluation 10/10 [llm step 10 sample 1: valid]: ok"
[ "$(sqlite3 a.db "SELECT COUNT(*), SUM(prompt_tokens > 0),
                   SUM(completion_tokens > 0), SUM(cost > 0) FROM llm_calls")" \
  = "10|10|10|10" ] && ok || bad "the calls were not all recorded with tokens"
[ "$(sqlite3 a.db "SELECT COUNT(*) FROM evaluations")" = 10 ] && ok ||
  bad "not ten evaluations"
if cmp -s a.rows b.rows; then ok; else
  bad "a second run recorded other rows"
  diff a.rows b.rows | head -20
fi
# The summary's tokens are the database's.
sum=$(sqlite3 a.db "SELECT SUM(prompt_tokens) || ' prompt + ' ||
                    SUM(completion_tokens) || ' completion' FROM llm_calls")
expect_in a.out "$sum tokens"

# The report: the llm table beside the others.
expect_rc 0 "$M" report a.db --html r.html
expect_in r.html '<table class="llm">'
expect_in r.html "llm:tune10(full)@10"

# The key: in no output, database or report (tune08 quotes it: redacted).
sqlite3 a.db .dump > a.dump
expect_in a.dump "[redacted]"
if grep -l -F -- "$KEY" a.* b.* r.html srv.log 2> /dev/null; then
  bad "the key leaked into the files above"
else ok; fi

# ---- a server that refuses the key: the run is interrupted, the key not told
start_server
MAPOPT_LLM_API_KEY=sk-wrong-OTHER-1234 expect_rc 1 "$M" tune circuit:small \
  --optimizer llm --db w.db --out w.map
expect_in err "error: the LLM server refused the prompt: HTTP 401 from"
expect_in err "Incorrect API key provided: [redacted]"
expect_in err "interrupted after 0 of 10 evaluations"
if grep -q -F "sk-wrong-OTHER-1234" out err; then bad "the key was printed"; else ok; fi

# ---- bench: the llm row and its replies, tokens and cost ---------------------
start_server
expect_rc 0 "$M" bench --apps circuit --size small --optimizers random,llm \
  --budget 4 --runs 1 --db c.db --price-in 1 --price-out 2
expect_in out "circuit:small  llm:tune10(full)@4"
expect_in out "the llm optimizer's replies"
expect_in out "calls failed replies  parse    run  tokens/run tokens/1.0x   USD/run"
# Four mappers that compile and run: 100% of each.
grep "llm:tune10(full)@4 " out | tail -1 | grep -q "      4      0       4   100%   100%" &&
  ok || bad "bench's llm line: $(tail -1 out)"
expect_rc 0 "$M" bench --apps circuit --size small --optimizers llm \
  --budget 4 --runs 1 --db c.db --json
expect_in out '"parse_share": 1.0'
expect_in out '"tokens_per_x":'

# ---- flags ---------------------------------------------------------------------
expect_rc 2 "$M" tune circuit --optimizer llm --temperature 3
expect_in err "--temperature must be a number from 0 to 2"
expect_rc 2 "$M" tune circuit --samples 2
expect_in err "--samples is for the llm optimizer only"
expect_rc 2 "$M" tune circuit --optimizer llm --batch 2
expect_in err "give --samples instead of --batch"
expect_rc 2 "$M" bench --optimizers random --price-in 1
expect_in err "--price-in is for the llm optimizer only"
env -u MAPOPT_LLM_BASE_URL "$M" tune circuit --optimizer llm > out 2> err
[ $? = 1 ] && ok || bad "tune without a server did not exit 1"
expect_in err "mapopt tune: no LLM server: set MAPOPT_LLM_BASE_URL (or OPENAI_BASE_URL)"
expect_rc 0 "$M" tune circuit:small --optimizer llm --budget 1 --db f.db \
  --out f.map --llm-model valid --samples 2 --temperature 0 --quiet
expect_in out "--llm-model valid --temperature 0 --samples 2 --history 5"
[ "$(sqlite3 f.db "SELECT llm_model, temperature, batch, history FROM runs")" \
  = "valid|0.0|2|5" ] && ok || bad "the run's llm settings were not recorded"

# ---- a mapopt-tune/1 database is migrated ---------------------------------------
sqlite3 old.db "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
  INSERT INTO meta VALUES ('format', 'mapopt-tune/1');
  CREATE TABLE runs (id INTEGER PRIMARY KEY, app TEXT NOT NULL, size TEXT,
    machine TEXT NOT NULL, optimizer TEXT NOT NULL, seed INTEGER NOT NULL,
    budget INTEGER NOT NULL, batch INTEGER NOT NULL, feedback TEXT NOT NULL,
    start_file TEXT, start_hash TEXT, version TEXT NOT NULL,
    expert_score REAL, default_score REAL, unit TEXT, status TEXT NOT NULL,
    duplicates INTEGER NOT NULL DEFAULT 0, started REAL NOT NULL,
    finished REAL);
  CREATE TABLE evaluations (run INTEGER NOT NULL REFERENCES runs(id),
    iteration INTEGER NOT NULL, text TEXT NOT NULL, hash TEXT NOT NULL,
    status TEXT NOT NULL, metric REAL NOT NULL, elapsed REAL,
    lower_bound REAL, feedback TEXT, note TEXT, wall REAL NOT NULL,
    finished REAL NOT NULL, PRIMARY KEY (run, iteration));
  INSERT INTO runs VALUES (1, 'circuit', 'small', 'p100x4', 'random', 0, 1,
    0, 'full', NULL, NULL, 'old', 2.0, 1.0, '1/s', 'done', 0, 1.0, 2.0);
  INSERT INTO evaluations VALUES (1, 0, 'Task * GPU;', '0', 'ok', 3.0, 1.0,
    0.5, NULL, 'random', 0.1, 1.5);"
# report reads it as it is, writing nothing; a writer (tune) brings it up
# to date
expect_rc 0 "$M" report old.db --html old.html
expect_in old.html "1.500"
[ "$(sqlite3 old.db "SELECT value FROM meta WHERE key = 'format'")" \
  = "mapopt-tune/1" ] && ok || bad "report changed the old database"
expect_rc 0 "$M" tune circuit:small --optimizer random --budget 1 --db old.db \
  --out old.map --quiet
[ "$(sqlite3 old.db "SELECT value FROM meta WHERE key = 'format';
                     SELECT COUNT(*) FROM runs WHERE llm_model IS NULL")" \
  = "mapopt-tune/5
2" ] && ok || bad "the old database was not migrated"

finish
