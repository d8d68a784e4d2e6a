/*
 * Reading the tuning database (include/mapopt/tune.h, docs/tuning.md): a
 * run's evaluations with their texts and outputs, the history of every
 * run with its scores for reports, a run's outcome, and the llm
 * optimizer's recorded replies and usage. Every format from mapopt-tune/1
 * on is read as it is; what an older format lacks reads as unknown.
 * Writing, opening and the format are db.c's.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "tune/tune.h"

static mapopt_llm_verdict verdict_of(const char *name) {
  for (int v = MAPOPT_LLM_VALID; v <= MAPOPT_LLM_TOO_LARGE; v++)
    if (name && !strcmp(name, mapopt_llm_verdict_name((mapopt_llm_verdict)v)))
      return (mapopt_llm_verdict)v;
  return MAPOPT_LLM_NO_MAPPER;
}

/* The one integer that sql, with run bound to ?1, selects (NULL reads as 0);
 * an error naming what when the query yields no row. */
static mapopt_status run_integer(mapopt_tune_db *db, mapopt_diags *diags,
                                 const char *sql, int64_t run, const char *what,
                                 int64_t *out) {
  sqlite3_stmt *st;
  *out = 0;
  mapopt_status s = mapopt__db_prepare(db, diags, sql, &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW)
    *out = sqlite3_column_int64(st, 0);
  sqlite3_finalize(st);
  return rc == SQLITE_ROW ? MAPOPT_OK : mapopt__db_error(db, diags, what);
}

mapopt_status mapopt__db_llm_replay(mapopt_tune_db *db, int64_t run,
                                    mapopt_diags *diags, mapopt__vec *replies,
                                    int64_t *next_step) {
  sqlite3_stmt *st;
  mapopt_status s = run_integer(
      db, diags, "SELECT MAX(step) + 1 FROM llm_calls WHERE run = ?1", run,
      "cannot read the llm calls", next_step);
  if (s != MAPOPT_OK)
    return s;
  s = mapopt__db_prepare(
      db, diags,
      "SELECT step, sample, call, truncated, verdict, reply FROM"
      " llm_replies WHERE run = ?1 ORDER BY step, sample",
      &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  int rc;
  while (s == MAPOPT_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    mapopt__llm_reply_rec *r = mapopt__vec_push(replies, db->ctx);
    const char *text = (const char *)sqlite3_column_text(st, 5);
    size_t len = (size_t)sqlite3_column_bytes(st, 5);
    if (!r) {
      s = MAPOPT_ENOMEM;
      break;
    }
    *r = (mapopt__llm_reply_rec){
        .step = sqlite3_column_int64(st, 0),
        .sample = (size_t)sqlite3_column_int64(st, 1),
        .call = (size_t)sqlite3_column_int64(st, 2),
        .truncated = sqlite3_column_int(st, 3) != 0,
        .verdict = verdict_of((const char *)sqlite3_column_text(st, 4)),
        .reply = mapopt__text_new(db->ctx, text ? text : "", text ? len : 0),
        .reply_len = text ? len : 0};
    if (!r->reply) {
      replies->len--;
      s = MAPOPT_ENOMEM;
    }
  }
  if (s == MAPOPT_OK && rc != SQLITE_DONE)
    s = mapopt__db_error(db, diags, "cannot read the LLM replies");
  sqlite3_finalize(st);
  return s;
}

/* The sums of llm_calls for one run ("WHERE run = ?1"), or for every run
 * grouped ("GROUP BY run"), as columns 1..7 after the run. TOTAL, not SUM:
 * SQLite's integer SUM fails with "integer overflow" past 2^63, and a
 * server can report any usage; the sums saturate instead. */
static const char usage_sql[] =
    "SELECT run, COUNT(*), TOTAL(status != 'ok'), TOTAL(samples),"
    " TOTAL(prompt_tokens), TOTAL(completion_tokens), TOTAL(latency),"
    " TOTAL(cost) FROM llm_calls ";

/* A sum read back as a count: saturated to 0 .. INT64_MAX (NaN: 0). */
static int64_t count_of(sqlite3_stmt *st, int i) {
  double v = sqlite3_column_double(st, i);
  return !(v > 0) ? 0 : v >= 0x1p63 ? INT64_MAX : (int64_t)v;
}

static void usage_row(sqlite3_stmt *st, mapopt_tune_llm_usage *u) {
  *u = (mapopt_tune_llm_usage){sqlite3_column_int64(st, 1),
                               count_of(st, 2),
                               count_of(st, 3),
                               count_of(st, 4),
                               count_of(st, 5),
                               sqlite3_column_double(st, 6),
                               sqlite3_column_double(st, 7)};
}

void mapopt_tune_eval_info_free(mapopt_ctx *ctx, mapopt_tune_eval_info *e) {
  if (!e)
    return;
  mapopt__db_free_str(ctx, e->text);
  mapopt__db_free_str(ctx, e->hash);
  mapopt__db_free_str(ctx, e->feedback);
  mapopt__db_free_str(ctx, e->note);
  mapopt__db_free_str(ctx, e->output);
  mapopt__db_free_str(ctx, e->scores);
  mapopt__free(ctx, e, sizeof *e);
}

static mapopt_tune_status status_of(const char *name) {
  for (int s = MAPOPT_TUNE_OK; s <= MAPOPT_TUNE_SCREENED; s++)
    if (name && !strcmp(name, mapopt_tune_status_name((mapopt_tune_status)s)))
      return (mapopt_tune_status)s;
  return MAPOPT_TUNE_FAILED;
}

/* The columns eval_row reads: the common ones, then a real run's output
 * (none in a mapopt-tune/1 database), its noise (none before /4) and its
 * prediction (none before /5). */
static const char eval_columns[] =
    "SELECT e.run, e.iteration, status, metric, elapsed, lower_bound, wall,"
    " finished, text, hash, feedback, note, ";
static const char eval_outputs[] =
    "o.output, o.exit_status, o.signal, o.timed_out, ";
static const char eval_outputs_v1[] = "NULL, NULL, 0, 0, ";
static const char eval_noise[] =
    "e.runs, e.score_low, e.score_high, e.scores, ";
static const char eval_noise_v3[] = "0, NULL, NULL, NULL, ";
/* And screening's prediction (none before /5). */
static const char eval_predicted[] = "e.predicted FROM evaluations AS e";
static const char eval_predicted_v4[] = "NULL FROM evaluations AS e";
static const char eval_join[] = " LEFT JOIN outputs AS o ON o.run = e.run"
                                " AND o.iteration = e.iteration";

/* The evaluation in the current row of a statement over eval_columns. */
static mapopt_status eval_row(mapopt_ctx *ctx, sqlite3_stmt *st,
                              mapopt_tune_eval_info **out) {
  mapopt_tune_eval_info *e = mapopt__calloc(ctx, 1, sizeof *e);
  if (!e)
    return MAPOPT_ENOMEM;
  e->run = sqlite3_column_int64(st, 0);
  e->iteration = sqlite3_column_int64(st, 1);
  e->status = status_of((const char *)sqlite3_column_text(st, 2));
  e->metric = sqlite3_column_double(st, 3);
  e->elapsed_s = sqlite3_column_double(st, 4);
  e->lower_bound_s = sqlite3_column_double(st, 5);
  e->wall_s = sqlite3_column_double(st, 6);
  e->finished = sqlite3_column_double(st, 7);
  bool ok = true;
  /* A damaged record may lack its text or hash: "" then, not NULL. */
  e->text = mapopt__db_column_dup(ctx, NULL, st, 8, &ok);
  e->hash = mapopt__db_column_dup(ctx, NULL, st, 9, &ok);
  if (ok && !e->text)
    e->text = mapopt__strndup(ctx, "", 0);
  if (ok && !e->hash)
    e->hash = mapopt__strndup(ctx, "", 0);
  e->feedback = mapopt__db_column_dup(ctx, NULL, st, 10, &ok);
  e->note = mapopt__db_column_dup(ctx, NULL, st, 11, &ok);
  e->output = mapopt__db_column_dup(ctx, NULL, st, 12, &ok);
  e->exit_status = sqlite3_column_type(st, 13) == SQLITE_NULL
                       ? -1
                       : sqlite3_column_int(st, 13);
  e->signal = sqlite3_column_int(st, 14);
  e->timed_out = sqlite3_column_int(st, 15) != 0;
  e->runs = sqlite3_column_int(st, 16);
  /* Recorded without its noise (simulated, or before /4): one point. */
  e->score_low = sqlite3_column_type(st, 17) == SQLITE_NULL
                     ? e->metric
                     : sqlite3_column_double(st, 17);
  e->score_high = sqlite3_column_type(st, 18) == SQLITE_NULL
                      ? e->metric
                      : sqlite3_column_double(st, 18);
  e->scores = mapopt__db_column_dup(ctx, NULL, st, 19, &ok);
  e->predicted = sqlite3_column_type(st, 20) == SQLITE_NULL
                     ? -1
                     : sqlite3_column_double(st, 20);
  if (!ok || !e->text || !e->hash) {
    mapopt_tune_eval_info_free(ctx, e);
    return MAPOPT_ENOMEM;
  }
  *out = e;
  return MAPOPT_OK;
}

/* Appends to out (mapopt_tune_eval_info *) the evaluations of run, by
 * iteration; only iteration `only` when it is not negative. */
static mapopt_status select_evaluations(mapopt_tune_db *db, int64_t run,
                                        int64_t only, mapopt_diags *diags,
                                        mapopt__vec *out) {
  char sql[1024];
  snprintf(sql, sizeof sql,
           "%s%s%s%s%s WHERE e.run = ?1 AND (?2 < 0 OR e.iteration = ?2) "
           "ORDER BY e.iteration",
           eval_columns, db->version == 1 ? eval_outputs_v1 : eval_outputs,
           db->version < 4 ? eval_noise_v3 : eval_noise,
           db->version < 5 ? eval_predicted_v4 : eval_predicted,
           db->version == 1 ? "" : eval_join);
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(db, diags, sql, &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  sqlite3_bind_int64(st, 2, only);
  int rc;
  while (s == MAPOPT_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    mapopt_tune_eval_info **slot = mapopt__vec_push(out, db->ctx);
    s = slot ? eval_row(db->ctx, st, slot) : MAPOPT_ENOMEM;
    if (s != MAPOPT_OK && slot)
      out->len--;
  }
  if (s == MAPOPT_OK && rc != SQLITE_DONE)
    s = mapopt__db_error(db, diags, "cannot read the evaluations");
  sqlite3_finalize(st);
  return s;
}

mapopt_status mapopt__db_evaluations(mapopt_tune_db *db, int64_t run,
                                     mapopt_diags *diags, mapopt__vec *out) {
  return select_evaluations(db, run, -1, diags, out);
}

mapopt_status mapopt_tune_db_evaluation(mapopt_tune_db *db, int64_t run,
                                        int64_t iteration, mapopt_diags *diags,
                                        mapopt_tune_eval_info **out) {
  if (!db || !out || iteration < 0)
    return db && out ? MAPOPT_ENOTFOUND : MAPOPT_EINVAL;
  mapopt__vec v;
  mapopt__vec_init(&v, sizeof(mapopt_tune_eval_info *));
  mapopt_status s = select_evaluations(db, run, iteration, diags, &v);
  if (s == MAPOPT_OK && v.len == 0)
    s = MAPOPT_ENOTFOUND;
  if (s == MAPOPT_OK)
    *out = MAPOPT__VEC_AT(&v, mapopt_tune_eval_info *, 0);
  /* The first; the others of a damaged table without its key go. */
  for (size_t i = s == MAPOPT_OK; i < v.len; i++)
    mapopt_tune_eval_info_free(db->ctx,
                               MAPOPT__VEC_AT(&v, mapopt_tune_eval_info *, i));
  mapopt__vec_destroy(&v, db->ctx);
  return s;
}

/* ---- the best ----------------------------------------------------------- */

/* The best of a run's successful evaluations, taken in iteration order:
 * a later one replaces it only when better (mapopt__noise_better: its
 * interval wholly above; the highest metric, the earliest of equals, when
 * simulated). */
typedef struct best_track {
  int64_t iteration; /* -1: none yet */
  double low, high;
} best_track;

static bool take_best(best_track *b, int64_t iteration, double low,
                      double high) {
  if (b->iteration >= 0 && !mapopt__noise_better(low, high, b->low, b->high))
    return false;
  *b = (best_track){iteration, low, high};
  return true;
}

/* The interval columns of an evaluation (the metric itself before /4 and
 * where none was recorded). */
static const char *interval_columns(const mapopt_tune_db *db) {
  return db->version < 4 ? "metric, metric"
                         : "COALESCE(score_low, metric),"
                           " COALESCE(score_high, metric)";
}

/* ---- the history -------------------------------------------------------- */

struct mapopt_tune_history {
  mapopt_ctx *ctx;
  mapopt__arena arena; /* the strings and scores */
  mapopt__vec runs;    /* mapopt_tune_run_info */
};

/* Reads the runs table into h->runs (scores come after). */
static mapopt_status load_runs(mapopt_tune_db *db, mapopt_diags *diags,
                               mapopt_tune_history *h) {
  sqlite3_stmt *st;
  /* A mapopt-tune/1 database has neither the llm settings nor evaluator. */
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      db->version == 1
          ? "SELECT id, app, size, machine, optimizer, feedback, start_file,"
            " version, status, unit, seed, budget, batch, expert_score,"
            " default_score, started, finished, duplicates, NULL, NULL, NULL,"
            " NULL FROM runs ORDER BY id"
          : "SELECT id, app, size, machine, optimizer, feedback, start_file,"
            " version, status, unit, seed, budget, batch, expert_score,"
            " default_score, started, finished, duplicates, llm_model,"
            " temperature, history, evaluator FROM runs ORDER BY id",
      &st);
  if (s != MAPOPT_OK)
    return s;
  int rc;
  while (s == MAPOPT_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
    mapopt_tune_run_info *r = mapopt__vec_push(&h->runs, h->ctx);
    if (!r) {
      s = MAPOPT_ENOMEM;
      break;
    }
    bool ok = true;
    *r = (mapopt_tune_run_info){.id = sqlite3_column_int64(st, 0), .best = -1};
    r->app = mapopt__db_column_dup(h->ctx, &h->arena, st, 1, &ok);
    r->size = mapopt__db_column_dup(h->ctx, &h->arena, st, 2, &ok);
    r->machine = mapopt__db_column_dup(h->ctx, &h->arena, st, 3, &ok);
    r->optimizer = mapopt__db_column_dup(h->ctx, &h->arena, st, 4, &ok);
    r->feedback = mapopt__db_column_dup(h->ctx, &h->arena, st, 5, &ok);
    r->start_file = mapopt__db_column_dup(h->ctx, &h->arena, st, 6, &ok);
    r->version = mapopt__db_column_dup(h->ctx, &h->arena, st, 7, &ok);
    r->status = mapopt__db_column_dup(h->ctx, &h->arena, st, 8, &ok);
    r->unit = mapopt__db_column_dup(h->ctx, &h->arena, st, 9, &ok);
    r->seed = (uint64_t)sqlite3_column_int64(st, 10);
    r->budget = sqlite3_column_int64(st, 11);
    r->batch = sqlite3_column_int(st, 12);
    r->expert_score = sqlite3_column_double(st, 13);
    r->default_score = sqlite3_column_double(st, 14);
    r->started = sqlite3_column_double(st, 15);
    r->finished = sqlite3_column_double(st, 16);
    r->duplicates = sqlite3_column_int64(st, 17);
    r->llm_model = mapopt__db_column_dup(h->ctx, &h->arena, st, 18, &ok);
    r->temperature = sqlite3_column_double(st, 19);
    r->history = sqlite3_column_int64(st, 20);
    r->evaluator = mapopt__db_column_dup(h->ctx, &h->arena, st, 21, &ok);
    if (!ok)
      s = MAPOPT_ENOMEM;
  }
  if (s == MAPOPT_OK && rc != SQLITE_DONE)
    s = mapopt__db_error(db, diags, "cannot read the runs");
  sqlite3_finalize(st);
  return s;
}

/* The recorded evaluations of run (the bound on its iterations). */
static mapopt_status count_evaluations(mapopt_tune_db *db, int64_t run,
                                       mapopt_diags *diags, int64_t *n) {
  return run_integer(db, diags,
                     "SELECT COUNT(*) FROM evaluations WHERE run = ?1", run,
                     "cannot count the evaluations", n);
}

/*
 * Fills each run's scores, best and counts from one pass over the
 * evaluations (numbers only: the texts stay in the database). Scores are
 * indexed by iteration, sized by the evaluations recorded, never by the
 * budget (which may be 10^8, with a few hundred recorded; and a screened
 * run records more than its budget): a run's iterations run from 0 with
 * at most one round's worth of gaps, the evaluations in flight when it was
 * interrupted (at most 64, the most --jobs or --screen), so an iteration
 * past count + 64 is no evaluation of the run (a damaged database) and is
 * left out.
 */
static mapopt_status load_scores(mapopt_tune_db *db, mapopt_diags *diags,
                                 mapopt_tune_history *h) {
  enum { MAX_GAP = 64 };
  for (size_t i = 0; i < h->runs.len; i++) {
    mapopt_tune_run_info *r =
        &MAPOPT__VEC_AT(&h->runs, mapopt_tune_run_info, i);
    int64_t rows;
    mapopt_status s = count_evaluations(db, r->id, diags, &rows);
    if (s != MAPOPT_OK)
      return s;
    int64_t bound = r->budget <= 0 ? 0 : rows + MAX_GAP;
    sqlite3_stmt *st;
    char sql[512];
    snprintf(sql, sizeof sql,
             "SELECT iteration, status, metric, elapsed, lower_bound, %s FROM"
             " evaluations WHERE run = ?1 ORDER BY iteration",
             interval_columns(db));
    s = mapopt__db_prepare(db, diags, sql, &st);
    if (s != MAPOPT_OK)
      return s;
    sqlite3_bind_int64(st, 1, r->id);
    int64_t n = 0;
    double *scores = NULL;
    best_track best = {-1, 0, 0};
    int rc;
    while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
      int64_t it = sqlite3_column_int64(st, 0);
      if (it < 0 || it >= bound)
        continue;
      if (!scores) {
        scores =
            mapopt__arena_zalloc(&h->arena, (size_t)bound * sizeof *scores);
        if (!scores) {
          sqlite3_finalize(st);
          return MAPOPT_ENOMEM;
        }
      }
      const char *stat = (const char *)sqlite3_column_text(st, 1);
      bool ok = stat && !strcmp(stat, "ok");
      double m = ok ? sqlite3_column_double(st, 2) : 0;
      scores[it] = m;
      n = it + 1 > n ? it + 1 : n;
      r->evaluations++;
      r->compiled += stat && strcmp(stat, "invalid");
      r->succeeded += ok;
      r->screened += stat && !strcmp(stat, "screened");
      if (ok && take_best(&best, it, sqlite3_column_double(st, 5),
                          sqlite3_column_double(st, 6))) {
        r->best = it;
        r->best_score = m;
        r->best_elapsed_s = sqlite3_column_double(st, 3);
        r->lower_bound_s = sqlite3_column_double(st, 4);
      }
    }
    sqlite3_finalize(st);
    if (rc != SQLITE_DONE)
      return mapopt__db_error(db, diags, "cannot read the evaluations");
    r->scores = scores;
    r->niterations = n;
  }
  return MAPOPT_OK;
}

/* Fills each run's LLM usage from one grouped pass over llm_calls (none
 * in a mapopt-tune/1 database). */
static mapopt_status load_usage(mapopt_tune_db *db, mapopt_diags *diags,
                                mapopt_tune_history *h) {
  if (db->version == 1)
    return MAPOPT_OK;
  char sql[512];
  snprintf(sql, sizeof sql, "%sGROUP BY run ORDER BY run", usage_sql);
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(db, diags, sql, &st);
  if (s != MAPOPT_OK)
    return s;
  int rc;
  size_t i = 0;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
    int64_t run = sqlite3_column_int64(st, 0);
    /* Both are ordered by run id. */
    while (i < h->runs.len &&
           MAPOPT__VEC_AT(&h->runs, mapopt_tune_run_info, i).id < run)
      i++;
    if (i < h->runs.len &&
        MAPOPT__VEC_AT(&h->runs, mapopt_tune_run_info, i).id == run)
      usage_row(st, &MAPOPT__VEC_AT(&h->runs, mapopt_tune_run_info, i).llm);
  }
  sqlite3_finalize(st);
  return rc == SQLITE_DONE
             ? MAPOPT_OK
             : mapopt__db_error(db, diags, "cannot read the LLM calls");
}

mapopt_status mapopt_tune_db_history(mapopt_tune_db *db, mapopt_diags *diags,
                                     mapopt_tune_history **out) {
  if (!db || !out)
    return MAPOPT_EINVAL;
  mapopt_tune_history *h = mapopt__calloc(db->ctx, 1, sizeof *h);
  if (!h)
    return MAPOPT_ENOMEM;
  h->ctx = db->ctx;
  mapopt__arena_init(&h->arena, db->ctx);
  mapopt__vec_init(&h->runs, sizeof(mapopt_tune_run_info));
  /* One read transaction: a writer beside us cannot tear the picture. */
  mapopt_status s = MAPOPT_OK;
  if (sqlite3_exec(db->sq, "BEGIN", NULL, NULL, NULL) != SQLITE_OK)
    s = mapopt__db_error(db, diags, "cannot begin a read");
  if (s == MAPOPT_OK)
    s = load_runs(db, diags, h);
  if (s == MAPOPT_OK)
    s = load_scores(db, diags, h);
  if (s == MAPOPT_OK)
    s = load_usage(db, diags, h);
  sqlite3_exec(db->sq, "COMMIT", NULL, NULL, NULL);
  if (s != MAPOPT_OK) {
    mapopt_tune_history_free(h);
    return s;
  }
  *out = h;
  return MAPOPT_OK;
}

size_t mapopt_tune_history_count(const mapopt_tune_history *h) {
  return h ? h->runs.len : 0;
}

const mapopt_tune_run_info *
mapopt_tune_history_run(const mapopt_tune_history *h, size_t i) {
  return h && i < h->runs.len
             ? &MAPOPT__VEC_AT(&h->runs, mapopt_tune_run_info, i)
             : NULL;
}

void mapopt_tune_history_free(mapopt_tune_history *h) {
  if (!h)
    return;
  mapopt__vec_destroy(&h->runs, h->ctx);
  mapopt__arena_destroy(&h->arena);
  mapopt__free(h->ctx, h, sizeof *h);
}

/* ---- a run's outcome ---------------------------------------------------- */

/* A copy of s as a text (mapopt_text_free) in *out; NULL for NULL. */
static mapopt_status dup_into(mapopt_ctx *ctx, const char *s, char **out) {
  *out = NULL;
  if (!s)
    return MAPOPT_OK;
  *out = mapopt__text_new(ctx, s, strlen(s));
  return *out ? MAPOPT_OK : MAPOPT_ENOMEM;
}

/* The run's references with their intervals (before /4 and when
 * simulated, the score alone), into out. */
static mapopt_status read_references(mapopt_tune_db *db, int64_t run,
                                     mapopt_diags *diags,
                                     mapopt_tune_outcome *out,
                                     mapopt__noise_est *expert,
                                     mapopt__noise_est *deflt) {
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      db->version < 4
          ? "SELECT expert_score, default_score, unit, duplicates,"
            " (SELECT COUNT(*) FROM evaluations WHERE run = ?1), NULL, NULL,"
            " 0, NULL, NULL, 0, 0 FROM runs WHERE id = ?1"
          : "SELECT expert_score, default_score, unit, duplicates,"
            " (SELECT COUNT(*) FROM evaluations WHERE run = ?1), expert_low,"
            " expert_high, expert_runs, default_low, default_high,"
            " default_runs, (SELECT COUNT(*) FROM evaluations WHERE run = ?1"
            " AND status = 'screened') FROM runs WHERE id = ?1",
      &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  if (sqlite3_step(st) != SQLITE_ROW) {
    sqlite3_finalize(st);
    return mapopt__db_error(db, diags, "cannot read the run");
  }
  out->run = run;
  out->expert_score = sqlite3_column_double(st, 0);
  out->default_score = sqlite3_column_double(st, 1);
  s = dup_into(db->ctx, (const char *)sqlite3_column_text(st, 2), &out->unit);
  out->duplicates = sqlite3_column_int64(st, 3);
  out->evaluations = sqlite3_column_int64(st, 4);
  out->screened = sqlite3_column_int64(st, 11);
  mapopt__noise_est *est[2] = {expert, deflt};
  double score[2] = {out->expert_score, out->default_score};
  for (int i = 0; i < 2; i++) {
    int c = 5 + 3 * i;
    bool known = sqlite3_column_type(st, c) != SQLITE_NULL;
    *est[i] = (mapopt__noise_est){
        score[i], known ? sqlite3_column_double(st, c) : score[i],
        known ? sqlite3_column_double(st, c + 1) : score[i],
        sqlite3_column_int(st, c + 2)};
  }
  out->expert_low = expert->low;
  out->expert_high = expert->high;
  out->default_low = deflt->low;
  out->default_high = deflt->high;
  sqlite3_finalize(st);
  return s;
}

/* The best against a baseline: the final check's record where one was
 * made, else from the estimates. */
static mapopt_status
read_speedup(mapopt_tune_db *db, int64_t run, const char *baseline,
             const mapopt__noise_est *best, const mapopt__noise_est *base,
             mapopt_diags *diags, mapopt_tune_speedup *out) {
  mapopt__noise_speedup(best, base, NULL, NULL, 0, out);
  if (db->version < 4 || !(base->score > 0))
    return MAPOPT_OK;
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(
      db, diags,
      "SELECT rounds, ratio, low, high, verdict FROM checks WHERE run = ?1"
      " AND baseline = ?2",
      &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  mapopt__db_bind_text(st, 2, baseline);
  int rc = sqlite3_step(st);
  if (rc == SQLITE_ROW) {
    const char *v = (const char *)sqlite3_column_text(st, 4);
    *out = (mapopt_tune_speedup){
        sqlite3_column_double(st, 1), sqlite3_column_double(st, 2),
        sqlite3_column_double(st, 3), sqlite3_column_int(st, 0),
        MAPOPT_TUNE_UNKNOWN};
    for (int k = MAPOPT_TUNE_UNKNOWN; k <= MAPOPT_TUNE_SAME; k++)
      if (v && !strcmp(v, mapopt_tune_verdict_name((mapopt_tune_verdict)k)))
        out->verdict = (mapopt_tune_verdict)k;
  }
  sqlite3_finalize(st);
  return rc == SQLITE_ROW || rc == SQLITE_DONE
             ? MAPOPT_OK
             : mapopt__db_error(db, diags, "cannot read the final check");
}

/* The iteration of the run's best evaluation (take_best), -1 when none
 * succeeded. */
static mapopt_status find_best(mapopt_tune_db *db, int64_t run,
                               mapopt_diags *diags, int64_t *best) {
  char sql[512];
  snprintf(sql, sizeof sql,
           "SELECT iteration, %s FROM evaluations WHERE run = ?1 AND"
           " status = 'ok' ORDER BY iteration",
           interval_columns(db));
  sqlite3_stmt *st;
  mapopt_status s = mapopt__db_prepare(db, diags, sql, &st);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  best_track b = {-1, 0, 0};
  int rc;
  while ((rc = sqlite3_step(st)) == SQLITE_ROW)
    take_best(&b, sqlite3_column_int64(st, 0), sqlite3_column_double(st, 1),
              sqlite3_column_double(st, 2));
  sqlite3_finalize(st);
  *best = b.iteration;
  return rc == SQLITE_DONE
             ? MAPOPT_OK
             : mapopt__db_error(db, diags, "cannot find the best evaluation");
}

mapopt_status mapopt__db_outcome(mapopt_tune_db *db, int64_t run,
                                 mapopt_diags *diags,
                                 mapopt_tune_outcome *out) {
  mapopt__noise_est expert, deflt;
  mapopt_status s = read_references(db, run, diags, out, &expert, &deflt);
  if (s != MAPOPT_OK)
    return s;
  sqlite3_stmt *st;
  char sql[512];
  snprintf(sql, sizeof sql, "%sWHERE run = ?1", usage_sql);
  if ((s = mapopt__db_prepare(db, diags, sql, &st)) != MAPOPT_OK)
    return s;
  sqlite3_bind_int64(st, 1, run);
  int urc = sqlite3_step(st);
  if (urc == SQLITE_ROW)
    usage_row(st, &out->llm);
  sqlite3_finalize(st);
  if (urc != SQLITE_ROW)
    return mapopt__db_error(db, diags, "cannot read the LLM calls");
  if ((s = find_best(db, run, diags, &out->best)) != MAPOPT_OK || out->best < 0)
    return s;
  mapopt_tune_eval_info *e;
  s = mapopt_tune_db_evaluation(db, run, out->best, diags, &e);
  if (s != MAPOPT_OK)
    return s;
  out->best_score = e->metric;
  out->best_elapsed_s = e->elapsed_s;
  out->lower_bound_s = e->lower_bound_s;
  out->best_low = e->score_low;
  out->best_high = e->score_high;
  mapopt__noise_est best = {e->metric, e->score_low, e->score_high, e->runs};
  s = dup_into(db->ctx, e->text, &out->best_text);
  if (s == MAPOPT_OK)
    s = dup_into(db->ctx, e->note, &out->best_note);
  mapopt_tune_eval_info_free(db->ctx, e);
  if (s == MAPOPT_OK)
    s = read_speedup(db, run, "expert", &best, &expert, diags, &out->vs_expert);
  if (s == MAPOPT_OK)
    s = read_speedup(db, run, "default", &best, &deflt, diags,
                     &out->vs_default);
  return s;
}
