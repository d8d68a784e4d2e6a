/*
 * The tuning database (include/mapopt/tune.h, docs/tuning.md): SQLite in
 * WAL mode with a table of runs, one of evaluations, one of what real runs
 * printed (outputs: AutoGuide's input, kept to replay a resumed real run
 * without running it again), for the llm optimizer one of its chat calls
 * and one of the replies they brought, and one of the processes that hold
 * runs (owners). The driver writes each evaluation in its own transaction
 * the moment it finishes, and each chat call as soon as it ends, with the
 * replies of each prompt before any is evaluated; with WAL and
 * synchronous=NORMAL a commit is in the operating system's hands when
 * sqlite3_step returns, so killing the process loses nothing (only a power
 * cut could lose the last commits). Reports read runs with their scores
 * (the history) and single evaluations with their texts.
 *
 * Opening reads before it writes: a file that is not a mapopt database (a
 * foreign SQLite database, a newer format) is refused untouched; an empty
 * one becomes a database only for a writer; mapopt_tune_db_open_read never
 * writes, and reads every format since mapopt-tune/1 as it is. A writer
 * brings an older database up to date, in one write transaction.
 *
 * A run is written by one process at a time, its owner (owner.c): opening
 * a run for writing claims it in the same transaction that finds it, and a
 * claim of a live process is never taken over.
 *
 * Only the thread that opened the database uses it.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "tune/tune.h"

/* The value of meta.format is mapopt-tune/N; this mapopt writes N = 5 and
 * reads 1 to 5. */
enum { FORMAT_VERSION = 5 };
static const char format_prefix[] = "mapopt-tune/";

/* Every table, as a fresh database has them; each statement creates what is
 * missing, so an older database gets its new tables from it too. */
static const char schema[] =
    "CREATE TABLE IF NOT EXISTS meta ("
    " key TEXT PRIMARY KEY, value TEXT NOT NULL);"
    "CREATE TABLE IF NOT EXISTS runs ("
    " id INTEGER PRIMARY KEY,"
    " app TEXT NOT NULL, size TEXT, machine TEXT NOT NULL,"
    " optimizer TEXT NOT NULL, seed INTEGER NOT NULL,"
    " budget INTEGER NOT NULL, batch INTEGER NOT NULL,"
    " feedback TEXT NOT NULL, start_file TEXT, start_hash TEXT,"
    " version TEXT NOT NULL,"
    " expert_score REAL, default_score REAL, unit TEXT,"
    " status TEXT NOT NULL, duplicates INTEGER NOT NULL DEFAULT 0,"
    " started REAL NOT NULL, finished REAL,"
    " llm_model TEXT, temperature REAL, history INTEGER, evaluator TEXT,"
    " expert_low REAL, expert_high REAL, expert_runs INTEGER,"
    " default_low REAL, default_high REAL, default_runs INTEGER);"
    "CREATE TABLE IF NOT EXISTS evaluations ("
    " run INTEGER NOT NULL REFERENCES runs(id),"
    " iteration INTEGER NOT NULL,"
    " text TEXT NOT NULL, hash TEXT NOT NULL, status TEXT NOT NULL,"
    " metric REAL NOT NULL, elapsed REAL, lower_bound REAL,"
    " feedback TEXT, note TEXT,"
    " wall REAL NOT NULL, finished REAL NOT NULL,"
    " runs INTEGER, score_low REAL, score_high REAL, scores TEXT,"
    " predicted REAL,"
    " PRIMARY KEY (run, iteration));"
    "CREATE INDEX IF NOT EXISTS evaluations_hash ON evaluations(hash);"
    "CREATE TABLE IF NOT EXISTS llm_calls ("
    " run INTEGER NOT NULL REFERENCES runs(id),"
    " step INTEGER NOT NULL, call INTEGER NOT NULL,"
    " status TEXT NOT NULL, http_status INTEGER, attempts INTEGER NOT NULL,"
    " samples INTEGER NOT NULL,"
    " prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL,"
    " latency REAL NOT NULL, cost REAL NOT NULL, error TEXT,"
    " PRIMARY KEY (run, step, call));"
    "CREATE TABLE IF NOT EXISTS llm_replies ("
    " run INTEGER NOT NULL REFERENCES runs(id),"
    " step INTEGER NOT NULL, sample INTEGER NOT NULL, call INTEGER NOT NULL,"
    " verdict TEXT NOT NULL, truncated INTEGER NOT NULL, reply TEXT NOT NULL,"
    " PRIMARY KEY (run, step, sample));"
    "CREATE TABLE IF NOT EXISTS outputs ("
    " run INTEGER NOT NULL, iteration INTEGER NOT NULL,"
    " exit_status INTEGER, signal INTEGER, timed_out INTEGER NOT NULL,"
    " output TEXT NOT NULL,"
    " PRIMARY KEY (run, iteration),"
    " FOREIGN KEY (run, iteration) REFERENCES evaluations(run, iteration));"
    "CREATE TABLE IF NOT EXISTS checks ("
    " run INTEGER NOT NULL REFERENCES runs(id), baseline TEXT NOT NULL,"
    " rounds INTEGER NOT NULL, ratio REAL, low REAL, high REAL,"
    " verdict TEXT NOT NULL, best_scores TEXT, base_scores TEXT,"
    " PRIMARY KEY (run, baseline));"
    "CREATE TABLE IF NOT EXISTS owners ("
    " run INTEGER PRIMARY KEY REFERENCES runs(id),"
    " host TEXT NOT NULL, pid INTEGER NOT NULL, boot TEXT, start INTEGER,"
    " since REAL NOT NULL);";

/* What a mapopt-tune/1 database's runs lack: the llm settings and the
 * evaluator (NULL: the simulator, which made every run it holds). */
static const char migrate_v1[] = "ALTER TABLE runs ADD COLUMN llm_model TEXT;"
                                 "ALTER TABLE runs ADD COLUMN temperature REAL;"
                                 "ALTER TABLE runs ADD COLUMN history INTEGER;"
                                 "ALTER TABLE runs ADD COLUMN evaluator TEXT;";

/* What a database before mapopt-tune/4 lacks: the noise of real runs
 * (docs/real.md, "Noise"; its final checks come with the schema), and
 * before /5 the predicted score of screening (docs/real.md, "Screening
 * candidates on the model"). Each column is added where it is missing. */
static const char *const added_columns[][3] = {
    {"runs", "expert_low", "REAL"},        {"runs", "expert_high", "REAL"},
    {"runs", "expert_runs", "INTEGER"},    {"runs", "default_low", "REAL"},
    {"runs", "default_high", "REAL"},      {"runs", "default_runs", "INTEGER"},
    {"evaluations", "runs", "INTEGER"},    {"evaluations", "score_low", "REAL"},
    {"evaluations", "score_high", "REAL"}, {"evaluations", "scores", "TEXT"},
    {"evaluations", "predicted", "REAL"}};

void mapopt__tune_hash(const char *text, size_t len, char out[17]) {
  snprintf(out, 17, "%016llx",
           (unsigned long long)mapopt__hash_bytes(text, len));
}

static double unix_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Appends "PATH: error: database: WHAT" and returns MAPOPT_EIO (ENOMEM when
 * SQLite ran out of memory). */
mapopt_status mapopt__db_error(mapopt_tune_db *db, mapopt_diags *diags,
                               const char *what) {
  int code = db->sq ? sqlite3_errcode(db->sq) : SQLITE_CANTOPEN;
  db->failed_rc = code;
  if (diags)
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", db->path, 0, 0,
                     "database: %s: %s", what,
                     db->sq ? sqlite3_errmsg(db->sq) : "cannot open");
  return code == SQLITE_NOMEM ? MAPOPT_ENOMEM : MAPOPT_EIO;
}

/* Prepares sql; on failure the error is in diags. */
mapopt_status mapopt__db_prepare(mapopt_tune_db *db, mapopt_diags *diags,
                                 const char *sql, sqlite3_stmt **st) {
  if (sqlite3_prepare_v2(db->sq, sql, -1, st, NULL) != SQLITE_OK)
    return mapopt__db_error(db, diags, "cannot prepare a statement");
  return MAPOPT_OK;
}

/* Binds text (NULL binds SQL NULL). */
void mapopt__db_bind_text(sqlite3_stmt *st, int i, const char *s) {
  if (s)
    sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT);
  else
    sqlite3_bind_null(st, i);
}

/* Binds x, or NULL when x is 0 (unknown). */
void mapopt__db_bind_known(sqlite3_stmt *st, int i, double x) {
  if (x != 0)
    sqlite3_bind_double(st, i, x);
  else
    sqlite3_bind_null(st, i);
}

/* Steps a statement that returns no row, then finalizes it. */
mapopt_status mapopt__db_exec(mapopt_tune_db *db, mapopt_diags *diags,
                              sqlite3_stmt *st, const char *what) {
  int rc = sqlite3_step(st);
  mapopt_status s =
      rc == SQLITE_DONE ? MAPOPT_OK : mapopt__db_error(db, diags, what);
  sqlite3_finalize(st);
  return s;
}

/* Copies column i (NULL stays NULL) into arena, or with ctx when arena
 * is NULL. *ok turns false on out of memory. */
char *mapopt__db_column_dup(mapopt_ctx *ctx, mapopt__arena *arena,
                            sqlite3_stmt *st, int i, bool *ok) {
  const char *t = (const char *)sqlite3_column_text(st, i);
  if (!t)
    return NULL;
  size_t n = (size_t)sqlite3_column_bytes(st, i);
  char *s =
      arena ? mapopt__arena_strndup(arena, t, n) : mapopt__strndup(ctx, t, n);
  if (!s)
    *ok = false;
  return s;
}

void mapopt__db_free_str(mapopt_ctx *ctx, char *s) {
  if (s)
    mapopt__free(ctx, s, strlen(s) + 1);
}

/* Runs sql (no rows), or says what failed. */
static mapopt_status exec_sql(mapopt_tune_db *db, mapopt_diags *diags,
                              const char *sql, const char *what) {
  if (sqlite3_exec(db->sq, sql, NULL, NULL, NULL) != SQLITE_OK)
    return mapopt__db_error(db, diags, what);
  return MAPOPT_OK;
}

/* A refused file: "PATH: error: WHY; nothing was changed". */
static mapopt_status refuse(mapopt_tune_db *db, mapopt_diags *diags,
                            const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mapopt_status refuse(mapopt_tune_db *db, mapopt_diags *diags,
                            const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  if (diags)
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", db->path, 0, 0,
                     "%s; nothing was changed", why);
  return MAPOPT_EIO;
}

/*
 * Reads what the file is, writing nothing: *version 0 for an empty
 * database (no table at all), else the N of its mapopt-tune/N format.
 * Anything else is refused with a diagnostic: a file SQLite cannot read, a
 * database without mapopt's meta table or format, a format of another
 * program, a newer mapopt-tune.
 */
static mapopt_status probe(mapopt_tune_db *db, mapopt_diags *diags,
                           int *version) {
  sqlite3_stmt *st;
  *version = 0;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "SELECT (SELECT COUNT(*) FROM sqlite_schema), (SELECT COUNT(*)"
      " FROM sqlite_schema WHERE type = 'table' AND name = 'meta')",
      &st);
  if (s != MAPOPT_OK)
    return s;
  int rc = sqlite3_step(st);
  int64_t objects = rc == SQLITE_ROW ? sqlite3_column_int64(st, 0) : 0;
  bool meta = rc == SQLITE_ROW && sqlite3_column_int64(st, 1) > 0;
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW)
    return mapopt__db_error(db, diags, "cannot read");
  if (objects == 0)
    return MAPOPT_OK;
  if (!meta)
    return refuse(db, diags,
                  "not a mapopt tuning database: it has no meta table "
                  "(another program's SQLite database?)");
  s = mapopt__db_prepare(db, diags,
                         "SELECT value FROM meta WHERE key = 'format'", &st);
  if (s != MAPOPT_OK)
    return s;
  rc = sqlite3_step(st);
  char format[128] = "";
  if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
    snprintf(format, sizeof format, "%s",
             (const char *)sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  if (rc != SQLITE_ROW && rc != SQLITE_DONE)
    return mapopt__db_error(db, diags, "cannot read the format");
  if (rc == SQLITE_DONE)
    return refuse(db, diags,
                  "not a mapopt tuning database: its meta table has no "
                  "format");
  size_t np = sizeof format_prefix - 1;
  const char *num = format + np;
  char *end;
  long n = strncmp(format, format_prefix, np) || !*num || *num == '0'
               ? 0
               : strtol(num, &end, 10);
  if (n > 0 && !*end && n <= FORMAT_VERSION) {
    *version = (int)n;
    return MAPOPT_OK;
  }
  if (n > FORMAT_VERSION && !*end)
    return refuse(db, diags,
                  "written by a newer mapopt (format '%s'): this one reads "
                  "mapopt-tune/1 to mapopt-tune/5",
                  format);
  return refuse(db, diags, "not a mapopt tuning database (format '%s')",
                format);
}

/* Adds the columns of added_columns that the tables lack. */
static mapopt_status add_columns(mapopt_tune_db *db, mapopt_diags *diags) {
  mapopt_status s = MAPOPT_OK;
  for (size_t i = 0; i < sizeof added_columns / sizeof added_columns[0]; i++) {
    sqlite3_stmt *st;
    s = mapopt__db_prepare(
        db, diags, "SELECT 1 FROM pragma_table_info(?1) WHERE name = ?2", &st);
    if (s != MAPOPT_OK)
      return s;
    mapopt__db_bind_text(st, 1, added_columns[i][0]);
    mapopt__db_bind_text(st, 2, added_columns[i][1]);
    int rc = sqlite3_step(st);
    sqlite3_finalize(st);
    if (rc != SQLITE_ROW && rc != SQLITE_DONE)
      return mapopt__db_error(db, diags, "cannot read the tables");
    if (rc == SQLITE_ROW)
      continue;
    char sql[160];
    snprintf(sql, sizeof sql, "ALTER TABLE %s ADD COLUMN %s %s",
             added_columns[i][0], added_columns[i][1], added_columns[i][2]);
    if ((s = exec_sql(db, diags, sql, "cannot migrate to mapopt-tune/5")) !=
        MAPOPT_OK)
      return s;
  }
  return s;
}

/* Makes a fresh database, or brings one of an older format up to date, in
 * one write transaction that looks again first: another process may have
 * done it meanwhile. A failure rolls it all back. */
static mapopt_status make_current(mapopt_tune_db *db, mapopt_diags *diags,
                                  int version) {
  mapopt_status s =
      exec_sql(db, diags, "BEGIN IMMEDIATE", "cannot begin a write");
  if (s != MAPOPT_OK)
    return s;
  s = probe(db, diags, &version);
  if (s == MAPOPT_OK && version == 1)
    s = exec_sql(db, diags, migrate_v1, "cannot migrate from mapopt-tune/1");
  if (s == MAPOPT_OK && version >= 1 && version < FORMAT_VERSION)
    s = add_columns(db, diags);
  if (s == MAPOPT_OK && version < FORMAT_VERSION)
    s = exec_sql(db, diags, schema, "cannot create the tables");
  if (s == MAPOPT_OK && version < FORMAT_VERSION) {
    char sql[160];
    snprintf(sql, sizeof sql,
             "INSERT OR REPLACE INTO meta VALUES ('format', '%s%d')",
             format_prefix, FORMAT_VERSION);
    s = exec_sql(db, diags, sql, "cannot write the format");
  }
  if (s == MAPOPT_OK)
    s = exec_sql(db, diags, "COMMIT", "cannot commit the format");
  if (s != MAPOPT_OK)
    sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
  db->version = FORMAT_VERSION;
  return s;
}

/* Opens path for writing (creating a missing file) or, with readonly,
 * only for reading; immutable reads a file whose folder lets no one make
 * the WAL's companion files (see mapopt_tune_db_open_read). */
static mapopt_status open_file(mapopt_tune_db *db, mapopt_diags *diags,
                               bool readonly, bool immutable) {
  int flags = SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI |
              (readonly ? SQLITE_OPEN_READONLY
                        : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  /* As a URI, so that no character of the path is taken for a query. */
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, db->ctx);
  mapopt__sb_puts(&sb, "file:");
  for (const char *p = db->path; *p; p++)
    if (*p == '%' || *p == '?' || *p == '#')
      mapopt__sb_printf(&sb, "%%%02X", (unsigned char)*p);
    else
      mapopt__sb_putc(&sb, *p);
  if (immutable)
    mapopt__sb_puts(&sb, "?immutable=1");
  size_t len;
  char *uri = mapopt__sb_take(&sb, &len);
  if (!uri)
    return MAPOPT_ENOMEM;
  if (db->sq)
    sqlite3_close(db->sq);
  db->sq = NULL;
  int rc = sqlite3_open_v2(uri, &db->sq, flags, NULL);
  mapopt__free(db->ctx, uri, len + 1);
  if (rc != SQLITE_OK)
    return mapopt__db_error(db, diags, "cannot open");
  /* Several processes may share a database: wait for a writer rather than
   * failing at once. */
  sqlite3_busy_timeout(db->sq, 30000);
  return MAPOPT_OK;
}

/* Opens the database at path; see mapopt_tune_db_open and _open_read. */
static mapopt_status db_open(mapopt_ctx *ctx, const char *path, bool readonly,
                             mapopt_diags *diags, mapopt_tune_db **out) {
  if (!ctx || !path || !out)
    return MAPOPT_EINVAL;
  mapopt_tune_db *db = mapopt__calloc(ctx, 1, sizeof *db);
  if (!db)
    return MAPOPT_ENOMEM;
  db->ctx = ctx;
  db->readonly = readonly;
  db->path = mapopt__strndup(ctx, path, strlen(path));
  mapopt_status s = db->path ? MAPOPT_OK : MAPOPT_ENOMEM;
  if (s == MAPOPT_OK)
    s = open_file(db, diags, readonly, false);
  int version = 0;
  if (s == MAPOPT_OK)
    s = probe(db, readonly ? NULL : diags, &version);
  if (s == MAPOPT_EIO && readonly) {
    /* A WAL database in a folder where its companion files cannot be made
     * (its reader may not write there, and so no writer has it open) is
     * read as it is on disk; any other failure is told. */
    int code = db->failed_rc;
    if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN)
      s = open_file(db, diags, true, true);
    else
      s = MAPOPT_OK;
    if (s == MAPOPT_OK)
      s = probe(db, diags, &version);
  }
  if (s == MAPOPT_OK && readonly && version == 0)
    s = refuse(db, diags, "an empty file, not a mapopt tuning database");
  db->version = version;
  if (s == MAPOPT_OK && !readonly && version < FORMAT_VERSION)
    s = make_current(db, diags, version);
  /* WAL is the file's own setting, set outside a transaction: only once
   * the file is known to be mapopt's (a no-op when it is WAL already). */
  if (s == MAPOPT_OK && !readonly)
    s = exec_sql(db, diags,
                 "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;"
                 " PRAGMA foreign_keys=ON;",
                 "cannot set WAL mode");
  if (s != MAPOPT_OK) {
    mapopt_tune_db_close(db);
    return s;
  }
  *out = db;
  return MAPOPT_OK;
}

mapopt_status mapopt_tune_db_open(mapopt_ctx *ctx, const char *path,
                                  mapopt_diags *diags, mapopt_tune_db **out) {
  return db_open(ctx, path, false, diags, out);
}

mapopt_status mapopt_tune_db_open_read(mapopt_ctx *ctx, const char *path,
                                       mapopt_diags *diags,
                                       mapopt_tune_db **out) {
  return db_open(ctx, path, true, diags, out);
}

void mapopt_tune_db_close(mapopt_tune_db *db) {
  if (!db)
    return;
  sqlite3_close(db->sq);
  mapopt__db_free_str(db->ctx, db->path);
  mapopt__free(db->ctx, db, sizeof *db);
}

/* ---- runs --------------------------------------------------------------- */

/* Binds what identifies a run (config, start hash, version, the llm
 * settings, the evaluator) to ?1..?14. */
static void bind_key(sqlite3_stmt *st, const mapopt__run_key *k) {
  const mapopt_tune_config *c = k->config;
  mapopt__db_bind_text(st, 1, c->app);
  mapopt__db_bind_text(st, 2, c->size);
  mapopt__db_bind_text(st, 3, c->machine);
  mapopt__db_bind_text(st, 4, c->optimizer);
  sqlite3_bind_int64(st, 5, (sqlite3_int64)c->seed);
  sqlite3_bind_int64(st, 6, c->budget);
  sqlite3_bind_int(st, 7, c->batch);
  mapopt__db_bind_text(st, 8, c->feedback);
  mapopt__db_bind_text(st, 9, k->start_hash);
  mapopt__db_bind_text(st, 10, MAPOPT_VERSION);
  if (c->llm) {
    mapopt__db_bind_text(st, 11, c->llm->client.model);
    sqlite3_bind_double(st, 12, c->llm->client.temperature);
    sqlite3_bind_int64(st, 13,
                       (sqlite3_int64)(c->llm->history
                                           ? c->llm->history
                                           : MAPOPT_LLM_DEFAULT_HISTORY));
  } else {
    for (int i = 11; i <= 13; i++)
      sqlite3_bind_null(st, i);
  }
  mapopt__db_bind_text(st, 14, k->evaluator);
}

/* The latest run matching k: *run and its status, or *run 0. */
static mapopt_status find_run(mapopt_tune_db *db, const mapopt__run_key *k,
                              mapopt_diags *diags, int64_t *run,
                              char status[16]) {
  sqlite3_stmt *st;
  *run = 0;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "SELECT id, status FROM runs WHERE app = ?1 AND size IS ?2 AND "
      "machine = ?3 AND optimizer = ?4 AND seed = ?5 AND budget = ?6 AND "
      "batch = ?7 AND feedback = ?8 AND start_hash IS ?9 AND version = ?10 "
      "AND llm_model IS ?11 AND temperature IS ?12 AND history IS ?13 "
      "AND evaluator IS ?14 ORDER BY id DESC LIMIT 1",
      &st);
  if (s != MAPOPT_OK)
    return s;
  bind_key(st, k);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    *run = sqlite3_column_int64(st, 0);
    const char *v = (const char *)sqlite3_column_text(st, 1);
    snprintf(status, 16, "%s", v ? v : "");
  } else if (rc != SQLITE_DONE) {
    s = mapopt__db_error(db, diags, "cannot look the run up");
  }
  sqlite3_finalize(st);
  return s;
}

mapopt_status mapopt__db_find_run(mapopt_tune_db *db, const mapopt__run_key *k,
                                  mapopt_diags *diags, int64_t *run,
                                  char status[16]) {
  mapopt_status s = find_run(db, k, diags, run, status);
  return s == MAPOPT_OK && !*run ? MAPOPT_ENOTFOUND : s;
}

/* Inserts a new run, status "starting"; its references come later. */
static mapopt_status insert_run(mapopt_tune_db *db, const mapopt__run_key *k,
                                mapopt_diags *diags, int64_t *run) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "INSERT INTO runs (app, size, machine, optimizer, seed, budget, batch,"
      " feedback, start_hash, version, llm_model, temperature, history,"
      " evaluator, start_file, status, started) VALUES (?1, ?2, ?3, ?4, ?5,"
      " ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, 'starting', ?16)",
      &st);
  if (s != MAPOPT_OK)
    return s;
  bind_key(st, k);
  mapopt__db_bind_text(st, 15, k->config->start_file);
  sqlite3_bind_double(st, 16, unix_now());
  s = mapopt__db_exec(db, diags, st, "cannot record the run");
  if (s == MAPOPT_OK)
    *run = sqlite3_last_insert_rowid(db->sq);
  return s;
}

/* The recorded owner of run into *o; *held false when it has none. */
static mapopt_status owner_of(mapopt_tune_db *db, int64_t run,
                              mapopt_diags *diags, bool *held, mapopt__owner *o,
                              double *since) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "SELECT host, pid, boot, start, since FROM owners WHERE run = ?1", &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  int rc = sqlite3_step(st);
  *held = rc == SQLITE_ROW;
  memset(o, 0, sizeof *o);
  if (*held) {
    const char *h = (const char *)sqlite3_column_text(st, 0);
    const char *b = (const char *)sqlite3_column_text(st, 2);
    snprintf(o->host, sizeof o->host, "%s", h ? h : "");
    o->pid = (long)sqlite3_column_int64(st, 1);
    snprintf(o->boot, sizeof o->boot, "%s", b ? b : "");
    o->start = sqlite3_column_type(st, 3) == SQLITE_NULL
                   ? -1
                   : sqlite3_column_int64(st, 3);
    *since = sqlite3_column_double(st, 4);
  } else if (rc != SQLITE_DONE) {
    s = mapopt__db_error(db, diags, "cannot read who writes the run");
  }
  sqlite3_finalize(st);
  return s;
}

/* Makes this process the owner of run. */
static mapopt_status claim(mapopt_tune_db *db, int64_t run,
                           mapopt_diags *diags) {
  mapopt__owner me;
  mapopt__owner_self(&me);
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "INSERT OR REPLACE INTO owners (run, host, pid, boot, start,"
      " since) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
      &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  mapopt__db_bind_text(st, 2, me.host);
  sqlite3_bind_int64(st, 3, me.pid);
  mapopt__db_bind_text(st, 4, me.boot[0] ? me.boot : NULL);
  if (me.start >= 0)
    sqlite3_bind_int64(st, 5, me.start);
  else
    sqlite3_bind_null(st, 5);
  sqlite3_bind_double(st, 6, unix_now());
  return mapopt__db_exec(db, diags, st, "cannot claim the run");
}

/* Refuses run, held by the live process o since the Unix time since. */
static mapopt_status busy(mapopt_tune_db *db, int64_t run,
                          const mapopt__owner *o, double since,
                          mapopt_diags *diags) {
  char when[64] = "?";
  time_t t = (time_t)since;
  struct tm tm;
  if (gmtime_r(&t, &tm))
    strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S UTC", &tm);
  mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", db->path, 0, 0,
                   "run %lld is being written by process %ld on %s (since "
                   "%s): wait for it to end, or use another database",
                   (long long)run, o->pid, o->host, when);
  return MAPOPT_EBUSY;
}

/* Whether a recorded status means the run ended. */
static bool ended(const char *status) {
  return !strcmp(status, "done") || !strcmp(status, "exhausted");
}

mapopt_status mapopt__db_open_run(mapopt_tune_db *db, const mapopt__run_key *k,
                                  bool resume, mapopt_diags *diags,
                                  int64_t *run, char status[16], bool *created,
                                  bool *claimed) {
  *created = *claimed = false;
  *run = 0;
  status[0] = '\0';
  mapopt_status s =
      exec_sql(db, diags, "BEGIN IMMEDIATE", "cannot begin a write");
  if (s != MAPOPT_OK)
    return s;
  if (resume)
    s = find_run(db, k, diags, run, status);
  if (s == MAPOPT_OK && *run && !ended(status)) {
    bool held = false;
    mapopt__owner o;
    double since = 0;
    s = owner_of(db, *run, diags, &held, &o, &since);
    if (s == MAPOPT_OK && held && mapopt__owner_alive(&o))
      s = busy(db, *run, &o, since, diags);
  } else if (s == MAPOPT_OK && !*run) {
    s = insert_run(db, k, diags, run);
    snprintf(status, 16, "starting");
    *created = s == MAPOPT_OK;
  }
  if (s == MAPOPT_OK && !ended(status))
    s = claim(db, *run, diags);
  if (s == MAPOPT_OK)
    s = exec_sql(db, diags, "COMMIT", "cannot commit the run");
  if (s != MAPOPT_OK) {
    sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
    *created = false;
  }
  *claimed = s == MAPOPT_OK && !ended(status);
  return s;
}

/* Binds an interval and its runs to parameters i, i + 1 and i + 2. */
static void bind_noise(sqlite3_stmt *st, int i, double low, double high,
                       int runs) {
  mapopt__db_bind_known(st, i, low);
  mapopt__db_bind_known(st, i + 1, high);
  sqlite3_bind_int(st, i + 2, runs);
}

mapopt_status mapopt__db_start_run(mapopt_tune_db *db, int64_t run,
                                   const mapopt__noise_est *expert,
                                   const mapopt__noise_est *deflt,
                                   const char *unit, mapopt_diags *diags) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "UPDATE runs SET expert_score = ?2, default_score = ?3, unit = ?4,"
      " status = 'running', expert_low = ?5, expert_high = ?6,"
      " expert_runs = ?7, default_low = ?8, default_high = ?9,"
      " default_runs = ?10 WHERE id = ?1",
      &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  mapopt__db_bind_known(st, 2, expert->score);
  mapopt__db_bind_known(st, 3, deflt->score);
  mapopt__db_bind_text(st, 4, unit);
  bind_noise(st, 5, expert->low, expert->high, expert->runs);
  bind_noise(st, 8, deflt->low, deflt->high, deflt->runs);
  return mapopt__db_exec(db, diags, st, "cannot record the run's references");
}

mapopt_status mapopt__db_continue_run(mapopt_tune_db *db, int64_t run,
                                      mapopt_diags *diags) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "UPDATE runs SET status = 'running', finished = NULL WHERE id = ?1", &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  return mapopt__db_exec(db, diags, st, "cannot update the run");
}

mapopt_status mapopt__db_release_run(mapopt_tune_db *db, int64_t run,
                                     const char *status, int64_t duplicates,
                                     bool finished, mapopt_diags *diags) {
  mapopt__owner me;
  mapopt__owner_self(&me);
  mapopt_status s =
      exec_sql(db, diags, "BEGIN IMMEDIATE", "cannot begin a write");
  if (s != MAPOPT_OK)
    return s;
  bool held = false;
  mapopt__owner o;
  double since;
  s = owner_of(db, run, diags, &held, &o, &since);
  /* Ours: this host and process id (and start, where known). */
  bool ours = held && !strcmp(o.host, me.host) && o.pid == me.pid &&
              o.start == me.start;
  sqlite3_stmt *st = NULL;
  if (s == MAPOPT_OK && ours)
    s = mapopt__db_prepare(
        db, diags,
        "UPDATE runs SET status = ?2, duplicates = ?3, finished = ?4"
        " WHERE id = ?1",
        &st);
  if (st) {
    sqlite3_bind_int64(st, 1, run);
    mapopt__db_bind_text(st, 2, status);
    sqlite3_bind_int64(st, 3, duplicates);
    mapopt__db_bind_known(st, 4, finished ? unix_now() : 0);
    s = mapopt__db_exec(db, diags, st, "cannot update the run");
    if (s == MAPOPT_OK &&
        mapopt__db_prepare(db, diags, "DELETE FROM owners WHERE run = ?1",
                           &st) == MAPOPT_OK) {
      sqlite3_bind_int64(st, 1, run);
      s = mapopt__db_exec(db, diags, st, "cannot release the run");
    } else if (s == MAPOPT_OK) {
      s = MAPOPT_EIO;
    }
  }
  if (s == MAPOPT_OK)
    s = exec_sql(db, diags, "COMMIT", "cannot commit the run");
  if (s != MAPOPT_OK)
    sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
  return s;
}

/* ---- evaluations -------------------------------------------------------- */

/* Inserts the evaluations row of e. */
static mapopt_status insert_evaluation(mapopt_tune_db *db, int64_t run,
                                       const mapopt_tune_eval_info *e,
                                       mapopt_diags *diags) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "INSERT INTO evaluations (run, iteration, text, hash, status, metric,"
      " elapsed, lower_bound, feedback, note, wall, finished, score_low,"
      " score_high, runs, scores, predicted) VALUES (?1, ?2, ?3, ?4, ?5,"
      " ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17)",
      &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  sqlite3_bind_int64(st, 2, e->iteration);
  mapopt__db_bind_text(st, 3, e->text);
  mapopt__db_bind_text(st, 4, e->hash);
  mapopt__db_bind_text(st, 5, mapopt_tune_status_name(e->status));
  sqlite3_bind_double(st, 6, e->metric);
  mapopt__db_bind_known(st, 7, e->elapsed_s);
  mapopt__db_bind_known(st, 8, e->lower_bound_s);
  mapopt__db_bind_text(st, 9, e->feedback);
  mapopt__db_bind_text(st, 10, e->note);
  sqlite3_bind_double(st, 11, e->wall_s);
  sqlite3_bind_double(st, 12, e->finished);
  bind_noise(st, 13, e->score_low, e->score_high, e->runs);
  mapopt__db_bind_text(st, 16, e->scores);
  if (e->predicted >= 0)
    sqlite3_bind_double(st, 17, e->predicted);
  else
    sqlite3_bind_null(st, 17);
  return mapopt__db_exec(db, diags, st, "cannot record an evaluation");
}

/* Inserts the outputs row of a real run's evaluation e. */
static mapopt_status insert_output(mapopt_tune_db *db, int64_t run,
                                   const mapopt_tune_eval_info *e,
                                   mapopt_diags *diags) {
  sqlite3_stmt *st;
  mapopt_status s =
      mapopt__db_prepare(db, diags,
                         "INSERT INTO outputs (run, iteration, exit_status,"
                         " signal, timed_out, output) VALUES (?1, ?2, ?3,"
                         " ?4, ?5, ?6)",
                         &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  sqlite3_bind_int64(st, 2, e->iteration);
  if (e->exit_status >= 0)
    sqlite3_bind_int(st, 3, e->exit_status);
  else
    sqlite3_bind_null(st, 3);
  sqlite3_bind_int(st, 4, e->signal);
  sqlite3_bind_int(st, 5, e->timed_out);
  mapopt__db_bind_text(st, 6, e->output);
  return mapopt__db_exec(db, diags, st, "cannot record a run's output");
}

/* Sets the run's unit when it has none. */
static mapopt_status set_unit(mapopt_tune_db *db, int64_t run, const char *unit,
                              mapopt_diags *diags) {
  sqlite3_stmt *st;
  if (mapopt__db_prepare(
          db, diags, "UPDATE runs SET unit = ?2 WHERE id = ?1 AND unit IS NULL",
          &st) != MAPOPT_OK)
    return MAPOPT_EIO;
  sqlite3_bind_int64(st, 1, run);
  mapopt__db_bind_text(st, 2, unit);
  return mapopt__db_exec(db, diags, st, "cannot record the unit");
}

/* ---- the llm optimizer's calls and replies ------------------------------- */

/* "ok", or the error's name in lower case with '-' for '_' ("too-large"). */
static void call_status(mapopt_llm_error e, char out[16]) {
  const char *n = e == MAPOPT_LLM_ERR_NONE ? "ok" : mapopt_llm_error_name(e);
  size_t i = 0;
  for (; n[i] && i < 15; i++)
    out[i] = n[i] == '_'
                 ? '-'
                 : (char)(n[i] >= 'A' && n[i] <= 'Z' ? n[i] - 'A' + 'a' : n[i]);
  out[i] = 0;
}

static mapopt_status insert_call(mapopt_tune_db *db, int64_t run,
                                 const mapopt__llm_call_rec *r,
                                 mapopt_diags *diags) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "INSERT INTO llm_calls (run, step, call, status, http_status,"
      " attempts, samples, prompt_tokens, completion_tokens, latency, cost,"
      " error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)",
      &st);
  if (s != MAPOPT_OK)
    return s;
  char status[16];
  call_status(r->call.error, status);
  sqlite3_bind_int64(st, 1, run);
  sqlite3_bind_int64(st, 2, r->step);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)r->index);
  mapopt__db_bind_text(st, 4, status);
  if (r->call.http_status)
    sqlite3_bind_int(st, 5, r->call.http_status);
  else
    sqlite3_bind_null(st, 5);
  sqlite3_bind_int(st, 6, r->call.attempts);
  sqlite3_bind_int64(st, 7, (sqlite3_int64)r->call.nchoices);
  sqlite3_bind_int64(st, 8, r->call.prompt_tokens);
  sqlite3_bind_int64(st, 9, r->call.completion_tokens);
  sqlite3_bind_double(st, 10, (double)r->call.latency_ms / 1000);
  sqlite3_bind_double(st, 11, r->call.cost);
  mapopt__db_bind_text(st, 12, r->call.error_text);
  return mapopt__db_exec(db, diags, st, "cannot record an LLM call");
}

static mapopt_status insert_reply(mapopt_tune_db *db, int64_t run,
                                  const mapopt__llm_reply_rec *r,
                                  mapopt_diags *diags) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "INSERT INTO llm_replies (run, step, sample, call, verdict,"
      " truncated, reply) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
      &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  sqlite3_bind_int64(st, 2, r->step);
  sqlite3_bind_int64(st, 3, (sqlite3_int64)r->sample);
  sqlite3_bind_int64(st, 4, (sqlite3_int64)r->call);
  mapopt__db_bind_text(st, 5, mapopt_llm_verdict_name(r->verdict));
  sqlite3_bind_int(st, 6, r->truncated);
  sqlite3_bind_text(st, 7, r->reply, (int)r->reply_len, SQLITE_TRANSIENT);
  return mapopt__db_exec(db, diags, st, "cannot record an LLM reply");
}

mapopt_status mapopt__db_record_llm(mapopt_tune_db *db, int64_t run,
                                    const mapopt__llm_call_rec *calls,
                                    size_t ncalls,
                                    const mapopt__llm_reply_rec *replies,
                                    size_t nreplies, mapopt_diags *diags) {
  if (ncalls == 0 && nreplies == 0)
    return MAPOPT_OK;
  if (sqlite3_exec(db->sq, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return mapopt__db_error(db, diags, "cannot begin a write");
  mapopt_status s = MAPOPT_OK;
  for (size_t i = 0; s == MAPOPT_OK && i < ncalls; i++)
    s = insert_call(db, run, &calls[i], diags);
  for (size_t i = 0; s == MAPOPT_OK && i < nreplies; i++)
    s = insert_reply(db, run, &replies[i], diags);
  if (sqlite3_exec(db->sq, s == MAPOPT_OK ? "COMMIT" : "ROLLBACK", NULL, NULL,
                   NULL) != SQLITE_OK &&
      s == MAPOPT_OK)
    s = mapopt__db_error(db, diags, "cannot commit the LLM calls");
  return s;
}

mapopt_status mapopt__db_record(mapopt_tune_db *db, int64_t run,
                                const mapopt_tune_eval_info *e,
                                const char *unit, mapopt_diags *diags) {
  /* One transaction: an evaluation is never recorded without its output. */
  if (sqlite3_exec(db->sq, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
    return mapopt__db_error(db, diags, "cannot begin recording an evaluation");
  mapopt_status s = insert_evaluation(db, run, e, diags);
  if (s == MAPOPT_OK && e->output)
    s = insert_output(db, run, e, diags);
  if (s == MAPOPT_OK && unit)
    s = set_unit(db, run, unit, diags);
  if (s == MAPOPT_OK &&
      sqlite3_exec(db->sq, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
    s = mapopt__db_error(db, diags, "cannot commit an evaluation");
  if (s != MAPOPT_OK)
    sqlite3_exec(db->sq, "ROLLBACK", NULL, NULL, NULL);
  return s;
}

mapopt_status
mapopt__db_record_check(mapopt_tune_db *db, int64_t run, const char *baseline,
                        const mapopt_tune_speedup *sp, const char *best_scores,
                        const char *base_scores, mapopt_diags *diags) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "INSERT OR REPLACE INTO checks (run, baseline, rounds, ratio, low,"
      " high, verdict, best_scores, base_scores) VALUES (?1, ?2, ?3, ?4, ?5,"
      " ?6, ?7, ?8, ?9)",
      &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  mapopt__db_bind_text(st, 2, baseline);
  sqlite3_bind_int(st, 3, sp->rounds);
  mapopt__db_bind_known(st, 4, sp->ratio);
  mapopt__db_bind_known(st, 5, sp->low);
  mapopt__db_bind_known(st, 6, sp->high);
  mapopt__db_bind_text(st, 7, mapopt_tune_verdict_name(sp->verdict));
  mapopt__db_bind_text(st, 8, best_scores);
  mapopt__db_bind_text(st, 9, base_scores);
  return mapopt__db_exec(db, diags, st, "cannot record the final check");
}
