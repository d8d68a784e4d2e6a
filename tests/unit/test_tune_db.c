/*
 * The tuning database under hostile conditions (src/tune/db.c, owner.c):
 * opening reads before it writes (a foreign SQLite file, a newer format
 * and, for a reader, an empty file are refused byte for byte unchanged; a
 * reader never writes); every older format read as it is and brought up
 * to date by a writer; sums of token counts past 2^63; a budget of 10^8 or
 * 2^61 with a few evaluations; and who writes a run: a second process that
 * resumes a run another live process is writing is refused and changes
 * nothing, a dead owner's claim is taken over, a run whose references a
 * stop cut short is resumed from them.
 */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "fixture.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"
#include "tune/tune.h"

/* A path for a database file that does not exist yet. */
static void fresh_path(char path[64]) {
  snprintf(path, 64, "/tmp/mapopt-test-db-XXXXXX");
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  close(fd);
  unlink(path);
}

/* One value of a query on the file, as text (a copy to free; "" for
 * none). */
static char *query(const char *path, const char *stmt) {
  sqlite3 *db;
  assert_int_equal(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL),
                   SQLITE_OK);
  sqlite3_stmt *st;
  assert_int_equal(sqlite3_prepare_v2(db, stmt, -1, &st, NULL), SQLITE_OK);
  char *v = strdup("");
  if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0)) {
    free(v);
    v = strdup((const char *)sqlite3_column_text(st, 0));
  }
  sqlite3_finalize(st);
  sqlite3_close(db);
  return v;
}

static void expect_query(const char *path, const char *stmt, const char *want) {
  char *got = query(path, stmt);
  if (strcmp(got, want))
    fail_msg("%s: got '%s', want '%s'", stmt, got, want);
  free(got);
}

/* The file's bytes (a copy to free), *len of them. */
static char *bytes_of(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  assert_non_null(f);
  char *buf = NULL;
  size_t cap = 0;
  *len = 0;
  for (;;) {
    if (*len == cap)
      buf = realloc(buf, cap = cap ? 2 * cap : 65536);
    size_t n = fread(buf + *len, 1, cap - *len, f);
    if (n == 0)
      break;
    *len += n;
  }
  fclose(f);
  return buf;
}

static bool exists(const char *path) {
  struct stat sb;
  return stat(path, &sb) == 0;
}

/* The first diagnostic's message, or "". */
static const char *first_message(void) {
  return mapopt_diags_count(diags) ? mapopt_diags_get(diags, 0)->message : "";
}

/* Opening the file at path (as a writer, or a reader) fails with says in
 * the first diagnostic, and leaves the file's bytes as they were and no
 * WAL companion behind. */
static void refused_unchanged(const char *path, bool reader, const char *says) {
  size_t n0, n1;
  char *before = bytes_of(path, &n0);
  mapopt_tune_db *db = NULL;
  mapopt_diags_clear(diags);
  mapopt_status st = reader ? mapopt_tune_db_open_read(ctx, path, diags, &db)
                            : mapopt_tune_db_open(ctx, path, diags, &db);
  assert_int_equal(st, MAPOPT_EIO);
  assert_null(db);
  if (!strstr(first_message(), says))
    fail_msg("got '%s', want '%s'", first_message(), says);
  assert_string_equal(mapopt_diags_get(diags, 0)->file, path);
  char *after = bytes_of(path, &n1);
  assert_int_equal(n0, n1);
  assert_memory_equal(before, after, n0);
  char wal[80];
  snprintf(wal, sizeof wal, "%s-wal", path);
  assert_false(exists(wal));
  free(before);
  free(after);
  mapopt_diags_clear(diags);
}

/* ---- opening ------------------------------------------------------------- */

/* Another program's SQLite database, a newer mapopt's, and one without a
 * format are refused by writers and readers alike, without a byte
 * changed; an empty file is refused by a reader (unchanged) and becomes a
 * database for a writer. */
static void test_refused_unchanged(void **state) {
  (void)state;
  char path[64];
  fresh_path(path);
  fixture_sql(path, "CREATE TABLE notes (id INTEGER PRIMARY KEY, text TEXT);"
                    "INSERT INTO notes VALUES (1, 'mine');");
  for (int reader = 0; reader < 2; reader++)
    refused_unchanged(path, reader,
                      "not a mapopt tuning database: it has no meta table");
  expect_query(path, "SELECT COUNT(*) FROM sqlite_schema", "1");
  fixture_db_remove(path);

  fixture_sql(path,
              "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
              "INSERT INTO meta VALUES ('format', 'mapopt-tune/6');");
  for (int reader = 0; reader < 2; reader++)
    refused_unchanged(path, reader,
                      "written by a newer mapopt (format 'mapopt-tune/6'): "
                      "this one reads mapopt-tune/1 to mapopt-tune/5; nothing "
                      "was changed");
  fixture_db_remove(path);

  fixture_sql(path,
              "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);");
  refused_unchanged(path, false, "its meta table has no format");
  fixture_db_remove(path);

  FILE *f = fopen(path, "w");
  fclose(f);
  refused_unchanged(path, true, "an empty file, not a mapopt tuning database");
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_db_close(db);
  expect_query(path, "SELECT value FROM meta WHERE key = 'format'",
               "mapopt-tune/5");
  fixture_db_remove(path);
}

/* A simulated run of random on circuit:small, budget 2, recorded in the
 * database at path; returns its id. */
static int64_t record_run(const char *path) {
  mapopt_machine *m;
  mapopt_app *a;
  mapopt_app_run *run;
  const char *spec;
  assert_int_equal(mapopt_machine_resolve(ctx, "p100x4", diags, &m), MAPOPT_OK);
  assert_int_equal(mapopt_app_resolve(ctx, "circuit:small", diags, &a, &spec),
                   MAPOPT_OK);
  mapopt_app_options ao = {.spec = spec, .iterations = -1, .warmup = -1};
  assert_int_equal(mapopt_sim_instantiate(m, a, &ao, diags, &run), MAPOPT_OK);
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_problem p = {m, run, NULL, NULL, NULL};
  mapopt_tune_config c = {.app = "circuit",
                          .size = "small",
                          .machine = "p100x4",
                          .optimizer = "random",
                          .budget = 2};
  mapopt_tune_options o = {.jobs = 1};
  mapopt_tune_outcome out;
  assert_int_equal(mapopt_tune_run(ctx, db, &p, &c, &o, diags, &out),
                   MAPOPT_OK);
  int64_t id = out.run;
  mapopt_tune_outcome_clear(&out);
  mapopt_tune_db_close(db);
  mapopt_app_run_free(run);
  mapopt_app_free(a);
  mapopt_machine_free(m);
  return id;
}

/* A reader reads a database without writing a byte of it, and cannot
 * write through its handle. */
static void test_reader_writes_nothing(void **state) {
  (void)state;
  char path[64];
  fresh_path(path);
  int64_t run = record_run(path);
  size_t n0, n1;
  char *before = bytes_of(path, &n0);
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open_read(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_history *h;
  assert_int_equal(mapopt_tune_db_history(db, diags, &h), MAPOPT_OK);
  assert_int_equal(mapopt_tune_history_count(h), 1);
  assert_int_equal(mapopt_tune_history_run(h, 0)->evaluations, 2);
  mapopt_tune_history_free(h);
  mapopt_tune_eval_info *e;
  assert_int_equal(mapopt_tune_db_evaluation(db, run, 1, diags, &e), MAPOPT_OK);
  mapopt_tune_eval_info_free(ctx, e);
  mapopt_tune_eval_info info = {
      .run = run, .iteration = 5, .text = "x", .hash = "0"};
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt__db_record(db, run, &info, NULL, diags), MAPOPT_EIO);
  mapopt_diags_clear(diags);
  mapopt_tune_db_close(db);
  char *after = bytes_of(path, &n1);
  assert_int_equal(n0, n1);
  assert_memory_equal(before, after, n0);
  free(before);
  free(after);
  fixture_db_remove(path);
}

/* The mapopt-tune/1 schema (before the llm optimizer and real runs), with
 * one run of two evaluations. */
static const char v1_schema[] =
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "INSERT INTO meta VALUES ('format', 'mapopt-tune/1');"
    "CREATE TABLE runs (id INTEGER PRIMARY KEY, app TEXT NOT NULL, size TEXT,"
    " machine TEXT NOT NULL, optimizer TEXT NOT NULL, seed INTEGER NOT NULL,"
    " budget INTEGER NOT NULL, batch INTEGER NOT NULL, feedback TEXT NOT NULL,"
    " start_file TEXT, start_hash TEXT, version TEXT NOT NULL,"
    " expert_score REAL, default_score REAL, unit TEXT, status TEXT NOT NULL,"
    " duplicates INTEGER NOT NULL DEFAULT 0, started REAL NOT NULL,"
    " finished REAL);"
    "CREATE TABLE evaluations (run INTEGER NOT NULL REFERENCES runs(id),"
    " iteration INTEGER NOT NULL, text TEXT NOT NULL, hash TEXT NOT NULL,"
    " status TEXT NOT NULL, metric REAL NOT NULL, elapsed REAL,"
    " lower_bound REAL, feedback TEXT, note TEXT, wall REAL NOT NULL,"
    " finished REAL NOT NULL, PRIMARY KEY (run, iteration));"
    "INSERT INTO runs VALUES (1, 'circuit', 'small', 'p100x4', 'random', 0, 2,"
    " 0, 'full', NULL, NULL, 'old', 2.0, 1.0, '1/s', 'done', 0, 1.0, 2.0);"
    "INSERT INTO evaluations VALUES (1, 0, 'Task * GPU;', '0', 'ok', 3.0,"
    " 1.0, 0.5, NULL, 'random', 0.1, 1.5);"
    "INSERT INTO evaluations VALUES (1, 1, 'Task * CPU;', '1', 'failed', 0,"
    " NULL, NULL, 'x', 'random', 0.1, 1.6);";

/* Reads the one run of a database in the v1 schema above. */
static void check_v1_run(mapopt_tune_db *db) {
  mapopt_tune_history *h;
  assert_int_equal(mapopt_tune_db_history(db, diags, &h), MAPOPT_OK);
  assert_int_equal(mapopt_tune_history_count(h), 1);
  const mapopt_tune_run_info *r = mapopt_tune_history_run(h, 0);
  assert_int_equal(r->evaluations, 2);
  assert_int_equal(r->best, 0);
  assert_true(r->best_score == 3.0);
  assert_null(r->llm_model);
  assert_null(r->evaluator);
  mapopt_tune_history_free(h);
  mapopt_tune_eval_info *e;
  assert_int_equal(mapopt_tune_db_evaluation(db, 1, 1, diags, &e), MAPOPT_OK);
  assert_string_equal(e->text, "Task * CPU;");
  assert_null(e->output);
  mapopt_tune_eval_info_free(ctx, e);
  /* Recorded before mapopt-tune/4: no runs, its interval one point. */
  assert_int_equal(mapopt_tune_db_evaluation(db, 1, 0, diags, &e), MAPOPT_OK);
  assert_int_equal(e->runs, 0);
  assert_true(e->score_low == 3.0 && e->score_high == 3.0);
  assert_null(e->scores);
  mapopt_tune_eval_info_free(ctx, e);
}

/* A reader reads the v1 run of the database at path, whose format stays
 * format. */
static void read_as_is(const char *path, const char *format) {
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open_read(ctx, path, diags, &db), MAPOPT_OK);
  check_v1_run(db);
  mapopt_tune_db_close(db);
  expect_query(path, "SELECT value FROM meta WHERE key = 'format'", format);
}

/* A writer opens the database at path: it is then of the current format. */
static void write_current(const char *path) {
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_db_close(db);
  expect_query(path, "SELECT value FROM meta WHERE key = 'format'",
               "mapopt-tune/5");
}

/* Every older format is read as it is (mapopt-tune/1 and /2 by a reader,
 * unchanged) and brought up to date by a writer, its rows kept. */
static void test_older_formats(void **state) {
  (void)state;
  char path[64];
  fresh_path(path);
  fixture_sql(path, v1_schema);
  read_as_is(path, "mapopt-tune/1");
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
  check_v1_run(db);
  mapopt_tune_db_close(db);
  expect_query(path, "SELECT value FROM meta WHERE key = 'format'",
               "mapopt-tune/5");
  expect_query(path, "SELECT COUNT(*) FROM owners", "0");
  /* A mapopt-tune/2 database: what /3 adds is the owners table. */
  fixture_sql(path,
              "DROP TABLE owners;"
              "UPDATE meta SET value = 'mapopt-tune/2' WHERE key = 'format';");
  read_as_is(path, "mapopt-tune/2");
  write_current(path);
  expect_query(path, "SELECT COUNT(*) FROM evaluations", "2");
  /* A mapopt-tune/4 database: what /5 adds is screening's prediction. */
  fixture_sql(path,
              "ALTER TABLE evaluations DROP COLUMN predicted;"
              "UPDATE meta SET value = 'mapopt-tune/4' WHERE key = 'format';");
  read_as_is(path, "mapopt-tune/4");
  write_current(path);
  assert_int_equal(mapopt_tune_db_open_read(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_eval_info *e;
  assert_int_equal(mapopt_tune_db_evaluation(db, 1, 1, diags, &e), MAPOPT_OK);
  assert_true(e->predicted == -1); /* recorded without screening */
  mapopt_tune_eval_info_free(ctx, e);
  mapopt_tune_db_close(db);
  expect_query(path,
               "SELECT COUNT(*) FROM pragma_table_info('evaluations') WHERE "
               "name = 'predicted'",
               "1");
  expect_query(path, "SELECT COUNT(*) FROM evaluations", "2");
  fixture_db_remove(path);
}

/* ---- what a hostile database holds --------------------------------------- */

/* Token counts whose sum passes 2^63 (a server may report any usage):
 * the history and the outcome saturate instead of failing. */
static void test_token_sums_saturate(void **state) {
  (void)state;
  char path[64];
  fresh_path(path);
  int64_t run = record_run(path);
  char stmt[512];
  for (int i = 0; i < 3; i++) {
    snprintf(stmt, sizeof stmt,
             "INSERT INTO llm_calls VALUES (%lld, %d, 0, 'ok', 200, 1, 1,"
             " 4611686018427387904, 9223372036854775807, 0.5, 0, NULL)",
             (long long)run, i);
    fixture_sql(path, stmt);
  }
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open_read(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_history *h;
  mapopt_status st = mapopt_tune_db_history(db, diags, &h);
  fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  const mapopt_tune_run_info *r = mapopt_tune_history_run(h, 0);
  assert_int_equal(r->llm.calls, 3);
  assert_int_equal(r->llm.prompt_tokens, INT64_MAX);
  assert_int_equal(r->llm.completion_tokens, INT64_MAX);
  assert_true(r->llm.latency_s == 1.5);
  mapopt_tune_history_free(h);
  mapopt_tune_db_close(db);
  assert_int_equal(mapopt_tune_db_open(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_outcome o = {0};
  assert_int_equal(mapopt__db_outcome(db, run, diags, &o), MAPOPT_OK);
  assert_int_equal(o.llm.prompt_tokens, INT64_MAX);
  mapopt_tune_outcome_clear(&o);
  mapopt_tune_db_close(db);
  fixture_db_remove(path);
}

/* What a reader finds of the first run at path: its iterations and its
 * evaluations. */
static void first_run(const char *path, int64_t *niterations,
                      int64_t *evaluations) {
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open_read(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_history *h;
  assert_int_equal(mapopt_tune_db_history(db, diags, &h), MAPOPT_OK);
  *niterations = mapopt_tune_history_run(h, 0)->niterations;
  *evaluations = mapopt_tune_history_run(h, 0)->evaluations;
  mapopt_tune_history_free(h);
  mapopt_tune_db_close(db);
}

/* A budget of 10^8 or 2^61 with two evaluations: the history holds two
 * scores, not a budget's worth; an iteration far past the recorded ones
 * (a damaged database) is left out. */
static void test_budget_not_scores(void **state) {
  (void)state;
  char path[64];
  fresh_path(path);
  int64_t run = record_run(path), n, e;
  static const char *const budgets[] = {"100000000", "2305843009213693952"};
  char stmt[256];
  for (size_t i = 0; i < 2; i++) {
    snprintf(stmt, sizeof stmt, "UPDATE runs SET budget = %s WHERE id = %lld",
             budgets[i], (long long)run);
    fixture_sql(path, stmt);
    first_run(path, &n, &e);
    assert_int_equal(n, 2);
    assert_int_equal(e, 2);
  }
  snprintf(stmt, sizeof stmt,
           "INSERT INTO evaluations (run, iteration, text, hash, status,"
           " metric, elapsed, lower_bound, feedback, note, wall, finished)"
           " VALUES (%lld, 1099511627776, 'x', '0', 'ok', 1.0, 1.0, NULL,"
           " NULL, NULL, 0.1, 1.0)",
           (long long)run);
  fixture_sql(path, stmt);
  first_run(path, &n, &e);
  assert_int_equal(n, 2);
  fixture_db_remove(path);
}

/* Damaged rows (found by fuzz_db): an evaluations table without its key,
 * with one iteration twice and no text, is read without a leak, the text
 * as "". */
static void test_damaged_rows(void **state) {
  (void)state;
  char path[64];
  fresh_path(path);
  fixture_sql(path, v1_schema);
  fixture_sql(path,
              "DROP TABLE evaluations;"
              "CREATE TABLE evaluations (run, iteration, text, hash,"
              " status, metric, elapsed, lower_bound, feedback, note,"
              " wall, finished);"
              "INSERT INTO evaluations VALUES (1, 0, NULL, NULL, 'ok', 2,"
              " 1, NULL, NULL, NULL, 0, 0);"
              "INSERT INTO evaluations VALUES (1, 0, 'x', 'y', 'ok', 3, 1,"
              " NULL, NULL, NULL, 0, 0);");
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open_read(ctx, path, diags, &db), MAPOPT_OK);
  mapopt_tune_eval_info *e;
  assert_int_equal(mapopt_tune_db_evaluation(db, 1, 0, diags, &e), MAPOPT_OK);
  assert_string_equal(e->text, "");
  assert_string_equal(e->hash, "");
  mapopt_tune_eval_info_free(ctx, e);
  mapopt_tune_db_close(db);
  fixture_db_remove(path);
}

/* ---- who writes a run ---------------------------------------------------- */

/* What the ownership tests tune: circuit:small with random, in the
 * database at path. */
typedef struct world {
  mapopt_machine *m;
  mapopt_app *a;
  mapopt_app_run *run;
  char path[64];
} world;

static void world_open(world *w) {
  const char *spec;
  assert_int_equal(mapopt_machine_resolve(ctx, "p100x4", diags, &w->m),
                   MAPOPT_OK);
  assert_int_equal(
      mapopt_app_resolve(ctx, "circuit:small", diags, &w->a, &spec), MAPOPT_OK);
  mapopt_app_options ao = {.spec = spec, .iterations = -1, .warmup = -1};
  assert_int_equal(mapopt_sim_instantiate(w->m, w->a, &ao, diags, &w->run),
                   MAPOPT_OK);
  fresh_path(w->path);
}

static void world_close(world *w) {
  mapopt_app_run_free(w->run);
  mapopt_app_free(w->a);
  mapopt_machine_free(w->m);
  fixture_db_remove(w->path);
}

/* Tunes (or resumes) random on the world with budget 8 in its database;
 * returns mapopt_tune_run's status, the outcome in *out. */
static mapopt_status tune(world *w, bool resume,
                          const volatile sig_atomic_t *stop,
                          mapopt_tune_progress_fn progress, void *ud,
                          mapopt_tune_outcome *out) {
  mapopt_tune_db *db;
  assert_int_equal(mapopt_tune_db_open(ctx, w->path, diags, &db), MAPOPT_OK);
  mapopt_tune_problem p = {
      w->m, w->run, mapopt_app_builtin_mapper("circuit", "expert"), NULL, NULL};
  mapopt_tune_config c = {.app = "circuit",
                          .size = "small",
                          .machine = "p100x4",
                          .optimizer = "random",
                          .budget = 8};
  mapopt_tune_options o = {1, resume, stop, progress, ud};
  mapopt_status st = mapopt_tune_run(ctx, db, &p, &c, &o, diags, out);
  mapopt_tune_db_close(db);
  return st;
}

/* The progress callback of the run that another process tries to take
 * over: at the third evaluation it forks that process, which resumes the
 * run, and waits for it. */
typedef struct rival {
  world *w;
  int status; /* the rival's exit status: 0 refused busy, else why not */
  bool ran;
} rival;

static void fork_rival(void *ud, const mapopt_tune_progress *p) {
  rival *r = ud;
  if (p->iteration != 2)
    return;
  pid_t pid = fork();
  if (pid == 0) {
    mapopt_diags_clear(diags);
    mapopt_tune_outcome out;
    mapopt_status st = tune(r->w, true, NULL, NULL, NULL, &out);
    bool said = strstr(first_message(), "is being written by process") &&
                strstr(first_message(), "wait for it to end");
    _exit(st == MAPOPT_EBUSY && said ? 0 : st == MAPOPT_OK ? 2 : 3);
  }
  int ws;
  assert_int_equal(waitpid(pid, &ws, 0), pid);
  r->status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 100;
  r->ran = true;
}

/*
 * A run another live process is writing is not taken over: the second
 * process (a --resume, or a second identical bench) is refused with the
 * owner named and changes nothing; the first finishes its run, which ends
 * done with every evaluation once.
 */
static void test_live_owner_kept(void **state) {
  (void)state;
  world w;
  world_open(&w);
  rival r = {&w, -1, false};
  mapopt_tune_outcome out;
  assert_int_equal(tune(&w, false, NULL, fork_rival, &r, &out), MAPOPT_OK);
  assert_true(r.ran);
  assert_int_equal(r.status, 0);
  assert_int_equal(out.end, MAPOPT_TUNE_END_DONE);
  assert_int_equal(out.evaluations, 8);
  mapopt_tune_outcome_clear(&out);
  expect_query(w.path, "SELECT status FROM runs", "done");
  expect_query(w.path, "SELECT COUNT(*) FROM runs", "1");
  expect_query(w.path, "SELECT COUNT(*) FROM owners", "0");
  world_close(&w);
}

/* Stops the run after `after` evaluations. */
typedef struct stopper {
  volatile sig_atomic_t stop;
  int64_t after;
} stopper;

static void stop_after(void *ud, const mapopt_tune_progress *p) {
  stopper *s = ud;
  if (p->iteration + 1 >= s->after)
    s->stop = 1;
}

/* This process as a row of owners for run, with its start time moved by
 * shift ticks (0: this very process, alive; 1: a process that reused its
 * id, dead). */
static void own(const char *path, int64_t run, long long shift) {
  mapopt__owner me;
  mapopt__owner_self(&me);
  char stmt[512];
  snprintf(stmt, sizeof stmt,
           "INSERT OR REPLACE INTO owners VALUES (%lld, '%s', %ld, '%s', %lld,"
           " 0)",
           (long long)run, me.host, me.pid, me.boot, me.start + shift);
  fixture_sql(path, stmt);
}

/* A claim a live process holds is refused, whoever asks (this process
 * too); a dead owner's claim -- a process id reused by another process, or
 * an owner on another host -- is taken over, and the run continues. */
static void test_stale_owner_taken_over(void **state) {
  (void)state;
  world w;
  world_open(&w);
  stopper s = {0, 3};
  mapopt_tune_outcome out;
  assert_int_equal(tune(&w, false, &s.stop, stop_after, &s, &out), MAPOPT_OK);
  assert_int_equal(out.end, MAPOPT_TUNE_END_INTERRUPTED);
  int64_t run = out.run;
  mapopt_tune_outcome_clear(&out);
  expect_query(w.path, "SELECT COUNT(*) FROM owners", "0");
  own(w.path, run, 0);
  mapopt_diags_clear(diags);
  assert_int_equal(tune(&w, true, NULL, NULL, NULL, &out), MAPOPT_EBUSY);
  assert_non_null(strstr(first_message(), "is being written by process"));
  mapopt_diags_clear(diags);
  expect_query(w.path, "SELECT status FROM runs", "interrupted");
  expect_query(w.path, "SELECT COUNT(*) FROM evaluations", "3");
  own(w.path, run, 1);
  assert_int_equal(tune(&w, true, NULL, NULL, NULL, &out), MAPOPT_OK);
  assert_true(out.resumed);
  assert_int_equal(out.evaluations, 8);
  mapopt_tune_outcome_clear(&out);
  expect_query(w.path, "SELECT status FROM runs", "done");
  expect_query(w.path, "SELECT COUNT(*) FROM owners", "0");
  /* an owner on another host: the database was moved, its owner is gone */
  fixture_sql(w.path,
              "UPDATE runs SET status = 'interrupted';"
              "INSERT INTO owners VALUES (1, 'elsewhere.invalid', 1, NULL,"
              " NULL, 0);");
  assert_int_equal(tune(&w, true, NULL, NULL, NULL, &out), MAPOPT_OK);
  assert_int_equal(out.end, MAPOPT_TUNE_END_DONE);
  mapopt_tune_outcome_clear(&out);
  world_close(&w);
}

/* A stop that comes before the references are made (before any
 * candidate) records none of them: the run stays "starting", and a resume
 * makes them and goes on. */
static void test_stop_in_references(void **state) {
  (void)state;
  world w;
  world_open(&w);
  volatile sig_atomic_t stop = 1;
  mapopt_tune_outcome out;
  assert_int_equal(tune(&w, false, &stop, NULL, NULL, &out), MAPOPT_OK);
  assert_int_equal(out.end, MAPOPT_TUNE_END_INTERRUPTED);
  assert_int_equal(out.evaluations, 0);
  mapopt_tune_outcome_clear(&out);
  expect_query(w.path, "SELECT status FROM runs", "starting");
  expect_query(w.path, "SELECT expert_score IS NULL FROM runs", "1");
  assert_int_equal(tune(&w, true, NULL, NULL, NULL, &out), MAPOPT_OK);
  assert_int_equal(out.end, MAPOPT_TUNE_END_DONE);
  assert_true(out.expert_score > 0);
  assert_int_equal(out.evaluations, 8);
  mapopt_tune_outcome_clear(&out);
  expect_query(w.path, "SELECT COUNT(*) FROM runs", "1");
  world_close(&w);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_refused_unchanged),
      cmocka_unit_test(test_reader_writes_nothing),
      cmocka_unit_test(test_older_formats),
      cmocka_unit_test(test_token_sums_saturate),
      cmocka_unit_test(test_budget_not_scores),
      cmocka_unit_test(test_damaged_rows),
      cmocka_unit_test(test_live_owner_kept),
      cmocka_unit_test(test_stale_owner_taken_over),
      cmocka_unit_test(test_stop_in_references),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
