/*
 * libFuzzer target: the tuning database's reader and opener
 * (src/tune/db.c) on databases of random schemas and values. The input
 * drives a generator: a format (mapopt-tune/1 to /4, another program's,
 * none, random text), which of the tables exist, which of their columns
 * with which declared types (primary keys or none), extra columns, and rows
 * whose values are anything SQLite stores -- NULL, 0, 2^63 - 1, -2^63,
 * 1e-30, 1e308, infinities, NaN, statuses, text of random bytes, blobs. A
 * first byte of 0 writes the rest of the input as the file instead (a
 * damaged or foreign file).
 *
 * Properties: nothing crashes or reads out of bounds (ASan); the reader
 * never changes the file; a refused open (writer or reader) never changes
 * it either; a history that loads is sane -- no run's iterations past its
 * evaluations + 64, a best inside them with its own score -- and every
 * iteration it names can be asked for.
 */
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "mapopt/tune.h"

#include "harness.h"

const size_t fuzz_max_input = 4096;

/* The input, read a byte at a time (0 once it is spent). */
typedef struct input {
  const uint8_t *p;
  size_t n;
} input;

static unsigned byte(input *in) {
  if (!in->n)
    return 0;
  in->n--;
  return *in->p++;
}

/* The tables and columns a database may have, as mapopt-tune/5 has them. */
static const struct table {
  const char *name;
  const char *const cols[32];
  const char *key; /* the primary key's columns */
} tables[] = {
    {"runs",
     {"id",           "app",           "size",
      "machine",      "optimizer",     "seed",
      "budget",       "batch",         "feedback",
      "start_file",   "start_hash",    "version",
      "expert_score", "default_score", "unit",
      "status",       "duplicates",    "started",
      "finished",     "llm_model",     "temperature",
      "history",      "evaluator",     "expert_low",
      "expert_high",  "expert_runs",   "default_low",
      "default_high", "default_runs",  NULL},
     "id"},
    {"evaluations",
     {"run", "iteration", "text", "hash", "status", "metric", "elapsed",
      "lower_bound", "feedback", "note", "wall", "finished", "runs",
      "score_low", "score_high", "scores", "predicted", NULL},
     "run, iteration"},
    {"llm_calls",
     {"run", "step", "call", "status", "http_status", "attempts", "samples",
      "prompt_tokens", "completion_tokens", "latency", "cost", "error", NULL},
     "run, step, call"},
    {"llm_replies",
     {"run", "step", "sample", "call", "verdict", "truncated", "reply", NULL},
     "run, step, sample"},
    {"outputs",
     {"run", "iteration", "exit_status", "signal", "timed_out", "output", NULL},
     "run, iteration"},
    {"owners", {"run", "host", "pid", "boot", "start", "since", NULL}, "run"},
    {"checks",
     {"run", "baseline", "rounds", "ratio", "low", "high", "verdict",
      "best_scores", "base_scores", NULL},
     "run, baseline"},
};
enum { NTABLES = sizeof tables / sizeof tables[0] };

static const char *const types[] = {
    "",      " INTEGER",          " REAL",         " TEXT",
    " BLOB", " INTEGER NOT NULL", " TEXT NOT NULL"};
static const char *const formats[] = {"mapopt-tune/1",
                                      "mapopt-tune/2",
                                      "mapopt-tune/3",
                                      "mapopt-tune/4",
                                      "mapopt-tune/5",
                                      "mapopt-tune/6",
                                      "mapopt-tune/0",
                                      "mapopt-tune/03",
                                      "mapopt-tune/",
                                      "other/2",
                                      ""};
static const char *const words[] = {
    "ok",      "invalid",  "failed",    "timeout",     "crash",     "done",
    "running", "starting", "exhausted", "interrupted", "circuit",   "p100x4",
    "random",  "llm",      "full",      "valid",       "no-mapper", "default",
    "expert",  "faster",   "same",      "1 2.5 -1"};

/* Binds a value the input picks to parameter i. */
static void bind_value(sqlite3_stmt *st, int i, input *in) {
  static const double reals[] = {0,        -1.5,      1e-30, 1e308,
                                 INFINITY, -INFINITY, NAN,   2.5};
  static const sqlite3_int64 ints[] = {0,
                                       1,
                                       2,
                                       -1,
                                       3,
                                       (sqlite3_int64)1 << 40,
                                       ((sqlite3_int64)1 << 61) + 7,
                                       INT64_MAX,
                                       INT64_MIN,
                                       100000000};
  unsigned k = byte(in);
  switch (k % 8) {
  case 0:
    sqlite3_bind_null(st, i);
    break;
  case 1:
  case 2:
    sqlite3_bind_int64(st, i, ints[(k / 8) % (sizeof ints / sizeof *ints)]);
    break;
  case 3:
    sqlite3_bind_double(st, i, reals[(k / 8) % (sizeof reals / sizeof *reals)]);
    break;
  case 4:
  case 5:
    sqlite3_bind_text(st, i, words[(k / 8) % (sizeof words / sizeof *words)],
                      -1, SQLITE_STATIC);
    break;
  case 6: { /* raw bytes: invalid UTF-8, NULs */
    char buf[64];
    size_t n = byte(in) % sizeof buf;
    for (size_t j = 0; j < n; j++)
      buf[j] = (char)byte(in);
    sqlite3_bind_text(st, i, buf, (int)n, SQLITE_TRANSIENT);
    break;
  }
  default: {
    unsigned char b[8] = {(unsigned char)byte(in), (unsigned char)byte(in)};
    sqlite3_bind_blob(st, i, b, 2, SQLITE_TRANSIENT);
    break;
  }
  }
}

/* One table of the generated database: its columns, then its rows. */
static void make_table(sqlite3 *db, const struct table *t, input *in) {
  char sql[2048], cols[1024] = "";
  int ncols = 0;
  bool all = true; /* every column of the table is there */
  for (int c = 0; t->cols[c]; c++) {
    if (byte(in) % 8 == 0) { /* most columns are there */
      all = false;
      continue;
    }
    ncols++;
    snprintf(cols + strlen(cols), sizeof cols - strlen(cols), "%s%s%s",
             ncols > 1 ? ", " : "", t->cols[c],
             types[byte(in) % (sizeof types / sizeof *types)]);
  }
  if (byte(in) % 4 == 0) {
    ncols++;
    snprintf(cols + strlen(cols), sizeof cols - strlen(cols), "%sextra",
             ncols > 1 ? ", " : "");
  }
  if (!ncols)
    return;
  bool key = all && byte(in) % 2;
  snprintf(sql, sizeof sql, "CREATE TABLE %s (%s%s%s%s)", t->name, cols,
           key ? ", PRIMARY KEY (" : "", key ? t->key : "", key ? ")" : "");
  if (sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
    return;
  unsigned rows = byte(in) % 9;
  for (unsigned r = 0; r < rows; r++) {
    char ins[2048];
    snprintf(ins, sizeof ins, "INSERT OR IGNORE INTO %s VALUES (", t->name);
    for (int c = 0; c < ncols; c++)
      strcat(ins, c ? ", ?" : "?");
    strcat(ins, ")");
    sqlite3_stmt *st;
    if (sqlite3_prepare_v2(db, ins, -1, &st, NULL) != SQLITE_OK)
      return;
    for (int c = 0; c < ncols; c++)
      bind_value(st, c + 1, in);
    sqlite3_step(st);
    sqlite3_finalize(st);
  }
}

/* The generated database, into the file at path. */
static void generate(const char *path, input *in) {
  sqlite3 *db;
  if (sqlite3_open(path, &db) != SQLITE_OK) {
    sqlite3_close(db);
    return;
  }
  if (byte(in) % 2)
    sqlite3_exec(db, "PRAGMA journal_mode=WAL", NULL, NULL, NULL);
  /* One transaction, not synced: a database a second, not a dozen. */
  sqlite3_exec(db, "PRAGMA synchronous=OFF; BEGIN", NULL, NULL, NULL);
  unsigned meta = byte(in) % 4;
  if (meta) {
    sqlite3_exec(db,
                 "CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT "
                 "NULL)",
                 NULL, NULL, NULL);
    sqlite3_stmt *st;
    if (meta < 3 &&
        sqlite3_prepare_v2(db, "INSERT INTO meta VALUES ('format', ?)", -1, &st,
                           NULL) == SQLITE_OK) {
      if (meta == 1)
        sqlite3_bind_text(
            st, 1, formats[byte(in) % (sizeof formats / sizeof *formats)], -1,
            SQLITE_STATIC);
      else
        bind_value(st, 1, in);
      sqlite3_step(st);
      sqlite3_finalize(st);
    }
  }
  for (int t = 0; t < NTABLES; t++)
    if (byte(in) % 4 != 0)
      make_table(db, &tables[t], in);
  sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);
  sqlite3_close(db);
}

/* The file's bytes (malloc'ed), *len of them; NULL when unreadable. */
static unsigned char *bytes_of(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  unsigned char *buf = NULL;
  size_t cap = 0;
  *len = 0;
  for (;;) {
    if (*len == cap) {
      unsigned char *b = realloc(buf, cap = cap ? 2 * cap : 65536);
      if (!b)
        abort();
      buf = b;
    }
    size_t n = fread(buf + *len, 1, cap - *len, f);
    if (!n)
      break;
    *len += n;
  }
  fclose(f);
  return buf;
}

/* The file at path still has these bytes. */
static void unchanged(const char *path, const unsigned char *before,
                      size_t n0) {
  size_t n1;
  unsigned char *after = bytes_of(path, &n1);
  if (!after || n1 != n0 || (n0 && memcmp(before, after, n0)))
    abort();
  free(after);
}

/* Everything the report reads, checked. */
static void read_all(mapopt_ctx *ctx, mapopt_diags *diags, mapopt_tune_db *db) {
  mapopt_tune_history *h;
  if (mapopt_tune_db_history(db, diags, &h) != MAPOPT_OK)
    return;
  for (size_t i = 0; i < mapopt_tune_history_count(h); i++) {
    const mapopt_tune_run_info *r = mapopt_tune_history_run(h, i);
    if (r->niterations < 0 || r->niterations > r->evaluations + 64 ||
        r->best >= r->niterations ||
        (r->best >= 0 &&
         memcmp(&r->scores[r->best], &r->best_score, sizeof r->best_score)) ||
        r->llm.prompt_tokens < 0 || r->llm.completion_tokens < 0)
      abort();
    for (int64_t it = 0; it < r->niterations && it < 8; it++) {
      mapopt_tune_eval_info *e;
      if (mapopt_tune_db_evaluation(db, r->id, it, diags, &e) == MAPOPT_OK) {
        if (!e->text || !e->hash)
          abort();
        mapopt_tune_eval_info_free(ctx, e);
      }
    }
  }
  mapopt_tune_history_free(h);
}

static char path[64];

/* The database file of the input and its WAL companions, gone. */
static void remove_db(void) {
  char side[80];
  for (const char *const *x = (const char *const[]){"", "-wal", "-shm", NULL};
       *x; x++)
    if (snprintf(side, sizeof side, "%s%s", path, *x) > 0)
      unlink(side);
}

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size) {
  /* In memory where there is a tmpfs: the opener syncs its writes. */
  if (!path[0])
    snprintf(path, sizeof path, "%s/mapopt-fuzz-db-%ld",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp",
             (long)getpid());
  remove_db();
  input in = {data, size};
  if (size && data[0] == 0) {
    FILE *f = fopen(path, "wb");
    if (!f)
      return;
    fwrite(data + 1, 1, size - 1, f);
    fclose(f);
  } else {
    byte(&in);
    generate(path, &in);
  }
  size_t n0;
  unsigned char *before = bytes_of(path, &n0);
  if (!before) {
    remove_db();
    return;
  }
  mapopt_tune_db *db;
  if (mapopt_tune_db_open_read(ctx, path, diags, &db) == MAPOPT_OK) {
    read_all(ctx, diags, db);
    mapopt_tune_db_close(db);
  }
  unchanged(path, before, n0);
  mapopt_diags_clear(diags);
  if (mapopt_tune_db_open(ctx, path, diags, &db) == MAPOPT_OK) {
    read_all(ctx, diags, db);
    mapopt_tune_db_close(db);
  } else {
    unchanged(path, before, n0);
  }
  free(before);
  remove_db();
}
