/*
 * The tuning driver (include/mapopt/tune.h): the ask / evaluate / record /
 * tell loop of one run, its parallel evaluation, deduplication and resume.
 *
 * A run proceeds in rounds. The optimizer is asked until it answers
 * MAPOPT_ENOTFOUND or `jobs` new candidates are held (fewer when the
 * budget ends); each is compiled at once (in this thread) and keyed by its
 * canonical text, or by its raw text when it does not compile, and by what
 * it decides for the run when simulated (mapopt__space_decisions: two
 * texts that place, lay out and keep every argument alike are one mapper;
 * docs/tuning.md, "Duplicates"). A key seen
 * before (in an earlier round or earlier in this one) is a duplicate: it
 * is not evaluated and consumes no budget, and in its turn the optimizer
 * is told the first one's evaluation with duplicate = true. Each new
 * candidate gets the next iteration number. The round is then evaluated by
 * `jobs` worker threads sharing the evaluator (one plan of the app run);
 * this thread records each evaluation in the database the moment it
 * finishes (in whatever order they finish, each in its own transaction)
 * and, once the round is complete, tells the optimizer every result in the
 * order it asked, findings and result included, and frees them. The
 * optimizers plan their batches before any of it is evaluated, so nothing
 * they propose depends on jobs or on timing.
 *
 * Resume replays the run: a fresh optimizer of the same seed asks the same
 * candidates, so iteration i is recognized by its hash; its recorded
 * evaluation is not recorded again. The evaluator replays it, to give the
 * optimizer the profile and findings it saw the first time: the simulator
 * is cheap and deterministic, so a replayed candidate is simulated and
 * analysed again and must agree with the record; a real run is not run
 * again, its recorded output is analysed again. Then the run simply
 * continues.
 *
 * The evaluator (evaluate.c) is the simulator or a command running the real
 * program (problem.command); the loop is the same for both. A command that
 * cannot be run at all ends the run with its reason.
 *
 * SIGINT (options.stop): workers take no new candidate, the evaluations in
 * flight finish and are recorded, and the run is marked interrupted. So is
 * a run whose optimizer cannot propose (an LLM server that keeps failing),
 * with the reason as a diagnostic.
 *
 * The llm optimizer's chat calls and replies are recorded after the ask
 * that made them, before any of their candidates is evaluated. A resumed
 * llm run hands the recorded replies back to the fresh optimizer, which
 * replays them instead of asking the model again. A candidate that is no
 * mapper (a reply without one: mapopt_candidate.failure) is not compiled;
 * it is evaluated as invalid, its failure the feedback.
 */
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "tune/tune.h"

const char *mapopt_tune_end_name(mapopt_tune_end e) {
  static const char *const n[] = {"done", "exhausted", "interrupted"};
  return (unsigned)e < sizeof n / sizeof n[0] ? n[e] : NULL;
}

/* An evaluation already told, kept to answer its duplicates. */
typedef struct known {
  char *key; /* canonical (or raw) text; the map's key (mapopt_text_free) */
  size_t keylen;
  mapopt_evaluation ev; /* feedback points to feedback; no findings, result */
  char *feedback;       /* a text */
  int64_t iteration;
  uint64_t profile; /* its profile's signature; 0: none (not simulated ok) */
  char decided[17]; /* the hash of its decisions in hex; "" when unknown */
} known;

/* One candidate of the current round. */
typedef struct slot {
  mapopt_candidate cand;
  int64_t iteration;      /* -1: a duplicate, of dup_known or slot dup_of */
  const known *dup_known; /* the earlier evaluation it duplicates */
  size_t dup_of;
  char *key; /* mapopt_text_free; owned until it moves into a known entry */
  size_t keylen;
  char hash[17];
  char decided[17];                    /* as known's */
  mapopt_program *prog;                /* NULL when the text does not compile */
  const mapopt_tune_eval_info *record; /* replayed: what was recorded */
  mapopt__tune_eval out;
  double wall_s, finished;
  mapopt_status err;
  bool evaluated;   /* out is final (set under the lock) */
  bool recorded;    /* written or checked against the record */
  uint64_t profile; /* mapopt_guide_profile_signature of its result, or 0 */
  /* Screening: the model's score in the run's unit (-1: not simulated),
   * and whether it ranked below the round's best K (not run; out is the
   * prediction). */
  double predicted;
  bool screened;
} slot;

typedef struct driver {
  mapopt_ctx *ctx;
  mapopt_tune_db *db;
  mapopt_diags *diags;
  mapopt_diags *cdiags; /* a candidate's compile diagnostics */
  const mapopt_tune_problem *problem;
  const mapopt__optimizer_vt *vt;
  mapopt_tune_config cfg;
  mapopt_guide_level level;
  const mapopt_tune_options *opts;
  int jobs;
  mapopt_machine_shape shape;
  mapopt_space *space;
  mapopt__tune_evaluator *eval;
  mapopt_optimizer *opt;
  int64_t run;
  bool claimed;  /* this process holds the run (and writes its end) */
  bool resumed;  /* a recorded run is continued */
  bool starting; /* its references are not recorded (a stop, a failure) */
  double expert;
  double deflt;
  double bar_ref;      /* racing: the baselines' best lower end (0: none) */
  char *unit;          /* the metric's unit once known (a text) */
  bool unit_in_db;     /* recorded in the run's row */
  mapopt__map known;   /* key -> known * */
  mapopt__map decided; /* known.decided -> known * */
  mapopt__vec knowns;
  mapopt_tune_eval_info **record_at; /* resume: by iteration */
  mapopt__vec records;
  mapopt__vec llm_replies; /* mapopt__llm_reply_rec: resume of an llm run */
  mapopt__llm_replay llm_replay;
  int64_t replayed;
  int64_t next_iteration, dups, dup_streak;
  int64_t best;
  double best_score, best_low, best_high; /* and its interval */
  /* Screening (docs/real.md, "Screening candidates on the model"): K, the
   * simulator on the model (the problem without its command), the default
   * mapper's predicted score, and the candidates run for real, which the budget
   * counts. */
  int screen;
  mapopt_tune_problem model;
  mapopt__tune_evaluator *screener;
  double default_predicted;
  int64_t real_runs;
  size_t nrecord_at; /* record_at's length */
  /* The round. */
  slot *slots;
  size_t nslots, cap;
  pthread_mutex_t mu;
  pthread_cond_t cv;
  size_t next_slot; /* the next slot a worker takes */
  int active;       /* workers running */
} driver;

static double mono_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static double unix_now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static bool stop_requested(const driver *d) {
  return d->opts->stop && *d->opts->stop;
}

/* A copy of s as a text (mapopt_text_free); NULL on ENOMEM. */
static char *copy_text(mapopt_ctx *ctx, const char *s) {
  return mapopt__text_new(ctx, s, strlen(s));
}

/* Every diagnostic of diags as the compiler prints them, one per line, as
 * a text (mapopt_text_free). NULL on ENOMEM. */
static char *diags_text(mapopt_ctx *ctx, const mapopt_diags *diags) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
    mapopt__sb_diag(&sb, mapopt_diags_get(diags, i));
    mapopt__sb_putc(&sb, '\n');
  }
  return mapopt__text_take(&sb, NULL);
}

/*
 * Compiles text for the run's shape. On success *prog is the program and
 * *key its canonical text; when it does not compile *prog is NULL, *key
 * the raw text and *diag_text its diagnostics. Keys and diagnostics are
 * texts (mapopt_text_free). MAPOPT_ENOMEM.
 */
static mapopt_status compile(driver *d, const char *text, mapopt_program **prog,
                             char **key, size_t *keylen, char **diag_text) {
  *prog = NULL;
  *key = *diag_text = NULL;
  size_t len = strlen(text);
  mapopt_dsl_options o = {.file = "candidate.map", .shape = &d->shape};
  mapopt_diags_clear(d->cdiags);
  mapopt_status st = mapopt_dsl_compile(d->ctx, text, len, &o, d->cdiags, prog);
  if (st == MAPOPT_ENOMEM)
    return st;
  if (st == MAPOPT_OK) {
    st = mapopt_dsl_format(*prog, key, keylen);
    if (st != MAPOPT_OK) {
      mapopt_dsl_free(*prog);
      *prog = NULL;
    }
    return st;
  }
  *prog = NULL;
  *key = mapopt__text_new(d->ctx, text, len);
  *keylen = len;
  *diag_text = diags_text(d->ctx, d->cdiags);
  if (!*key || !*diag_text) {
    mapopt_text_free(*key);
    mapopt_text_free(*diag_text);
    *key = *diag_text = NULL;
    return MAPOPT_ENOMEM;
  }
  return MAPOPT_OK;
}

/* Evaluates a compiled program (replays it when it has a record), timing
 * it; errors only for ENOMEM and for a command that cannot be run (EIO,
 * with s->out.error). */
static mapopt_status evaluate(const mapopt__tune_evaluator *ev, slot *s) {
  double t0 = mono_now();
  mapopt_status st =
      s->record ? ev->vt->replay(ev, s->prog, s->cand.text, s->record, &s->out)
                : ev->vt->evaluate(ev, s->prog, s->cand.text, &s->out);
  s->wall_s += mono_now() - t0;
  s->finished = unix_now();
  return st;
}

/* ---- the round's workers ------------------------------------------------- */

/* Whether slot s needs the evaluator: a new candidate that compiles (and
 * was not screened out). */
static bool needs_eval(const slot *s) {
  return s->iteration >= 0 && s->prog && !s->screened;
}

static void *worker(void *arg) {
  driver *d = arg;
  pthread_mutex_lock(&d->mu);
  for (;;) {
    while (d->next_slot < d->nslots && !needs_eval(&d->slots[d->next_slot]))
      d->next_slot++;
    if (d->next_slot >= d->nslots || stop_requested(d))
      break;
    slot *s = &d->slots[d->next_slot++];
    pthread_mutex_unlock(&d->mu);
    mapopt_status st = evaluate(d->eval, s);
    pthread_mutex_lock(&d->mu);
    s->err = st;
    s->evaluated = true;
    pthread_cond_broadcast(&d->cv);
  }
  d->active--;
  pthread_cond_broadcast(&d->cv);
  pthread_mutex_unlock(&d->mu);
  return NULL;
}

/* Refuses to resume run d->run: the diagnostic says why (printf's
 * format, after "cannot be resumed: "). MAPOPT_EINVAL. */
static mapopt_status cannot_resume(driver *d, const char *fmt, ...) {
  char why[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(why, sizeof why, fmt, ap);
  va_end(ap);
  mapopt_diags_add(d->diags, MAPOPT_SEV_ERROR, "", d->db->path, 0, 0,
                   "run %lld cannot be resumed: %s", (long long)d->run, why);
  return MAPOPT_EINVAL;
}

/* Checks a replayed evaluation against its record: the same status and,
 * to rounding, the same metric. The optimizer is then told the recorded
 * numbers, exactly what it was told the first time. */
static mapopt_status check_replay(driver *d, slot *s) {
  const mapopt_tune_eval_info *r = s->record;
  mapopt_evaluation *e = &s->out.ev;
  double score = e->status == MAPOPT_TUNE_OK ? e->score : 0;
  double tol = 1e-9 * fmax(fabs(r->metric), fabs(score));
  if (r->status == e->status && fabs(r->metric - score) <= tol) {
    e->score = r->metric;
    e->score_low = r->score_low;
    e->score_high = r->score_high;
    e->elapsed_s = r->elapsed_s;
    e->lower_bound_s = r->lower_bound_s;
    return MAPOPT_OK;
  }
  return cannot_resume(d,
                       "evaluation %lld was recorded as %s %.17g and is now "
                       "%s %.17g (the model, the machine or mapopt changed "
                       "since)",
                       (long long)r->iteration,
                       mapopt_tune_status_name(r->status), r->metric,
                       mapopt_tune_status_name(e->status), score);
}

/* An evaluator's error: a command that cannot be run says why. */
static mapopt_status eval_error(driver *d, mapopt_status st,
                                const mapopt__tune_eval *out) {
  if (out->error)
    mapopt_diags_add(d->diags, MAPOPT_SEV_ERROR, "", "mapopt tune", 0, 0, "%s",
                     out->error);
  return st;
}

/* Takes the metric's unit from a successful evaluation while unknown. */
static mapopt_status learn_unit(driver *d, const mapopt__tune_eval *out) {
  if (d->unit || out->ev.status != MAPOPT_TUNE_OK || !out->unit)
    return MAPOPT_OK;
  d->unit = copy_text(d->ctx, out->unit);
  return d->unit ? MAPOPT_OK : MAPOPT_ENOMEM;
}

/*
 * A successful evaluation whose profile equals an earlier one's is told
 * so, with the statements that had no effect (docs/guide.md, no-effect):
 * the earlier ones are those of the rounds already told, so the note is
 * the same however the round's evaluations finish.
 */
static mapopt_status note_unchanged(driver *d, slot *s) {
  const mapopt_sim_result *r = s->out.ev.result;
  s->profile = 0;
  if (!r || s->out.ev.status != MAPOPT_TUNE_OK || !s->out.findings || !s->key)
    return MAPOPT_OK;
  s->profile = mapopt_guide_profile_signature(r);
  /* A prediction's feedback keeps its first line (screen_out). */
  if (s->screened)
    return MAPOPT_OK;
  const known *same = NULL;
  for (size_t i = 0; i < d->knowns.len && !same; i++) {
    const known *k = MAPOPT__VEC_AT(&d->knowns, known *, i);
    if (k->profile == s->profile && k->key)
      same = k;
  }
  if (!same)
    return MAPOPT_OK;
  mapopt_status st = mapopt_guide_note_unchanged(
      s->out.findings, same->iteration, same->key, s->key);
  char *text = NULL;
  if (st == MAPOPT_OK)
    st = mapopt_guide_feedback(d->ctx, s->out.findings, d->level, &text);
  if (st != MAPOPT_OK)
    return st;
  mapopt_text_free(s->out.feedback);
  s->out.feedback = text;
  s->out.ev.feedback = text;
  return MAPOPT_OK;
}

/* Checks a replayed candidate of a screened run against its record: run
 * or screened out alike, with the same prediction. */
static mapopt_status check_screening(driver *d, const slot *s) {
  const mapopt_tune_eval_info *r = s->record;
  bool was = r->status == MAPOPT_TUNE_SCREENED;
  double tol = 1e-9 * fmax(fabs(r->predicted), fabs(s->predicted));
  if (was == s->screened &&
      (s->predicted < 0 || fabs(r->predicted - s->predicted) <= tol))
    return MAPOPT_OK;
  return cannot_resume(d,
                       "evaluation %lld was %s with a predicted score of "
                       "%.17g and now is %s with %.17g (the model or mapopt "
                       "changed since)",
                       (long long)r->iteration, was ? "screened out" : "run",
                       r->predicted, s->screened ? "screened out" : "run",
                       s->predicted);
}

/* Records (or, replayed, checks) one finished evaluation. */
static mapopt_status record(driver *d, slot *s) {
  s->recorded = true;
  if (s->err != MAPOPT_OK)
    return eval_error(d, s->err, &s->out);
  if (s->out.interrupted)
    return MAPOPT_OK; /* a stop ended it: nothing to record */
  mapopt_status nst = note_unchanged(d, s);
  if (nst == MAPOPT_OK && s->record && d->screen)
    nst = check_screening(d, s);
  if (nst != MAPOPT_OK)
    return nst;
  if (s->record)
    return s->screened ? MAPOPT_OK : check_replay(d, s);
  const mapopt_evaluation *e = &s->out.ev;
  const char *unit = NULL;
  /* A prediction's unit is the model's, not the run's. */
  if (!s->screened && learn_unit(d, &s->out) != MAPOPT_OK)
    return MAPOPT_ENOMEM;
  if (d->unit && !d->unit_in_db)
    unit = d->unit;
  /* A screened-out candidate is no measurement: no metric, no interval;
   * its prediction has a column of its own. */
  bool measured = e->status == MAPOPT_TUNE_OK && !s->screened;
  mapopt_tune_eval_info info = {.run = d->run,
                                .iteration = s->iteration,
                                .status = s->screened ? MAPOPT_TUNE_SCREENED
                                                      : e->status,
                                .metric = measured ? e->score : 0,
                                .elapsed_s = e->elapsed_s,
                                .lower_bound_s = e->lower_bound_s,
                                .wall_s = s->wall_s,
                                .finished = s->finished,
                                .text = s->cand.text,
                                .hash = s->hash,
                                .feedback = s->out.feedback,
                                .note = s->cand.note,
                                .output = s->out.output,
                                .exit_status = s->out.exit_status,
                                .signal = s->out.signal,
                                .timed_out = s->out.timed_out,
                                .runs = e->runs,
                                .score_low = measured ? e->score_low : 0,
                                .score_high = measured ? e->score_high : 0,
                                .scores = s->out.scores,
                                .predicted = s->predicted};
  mapopt_status st = mapopt__db_record(d->db, d->run, &info, unit, d->diags);
  if (st == MAPOPT_OK && unit)
    d->unit_in_db = true;
  return st;
}

/*
 * Evaluates the round with up to jobs workers and records each evaluation
 * as it finishes. *complete is false when a stop left some unevaluated.
 */
static mapopt_status run_round(driver *d, bool *complete) {
  mapopt_status st = MAPOPT_OK;
  size_t need = 0;
  for (size_t i = 0; i < d->nslots; i++)
    need += needs_eval(&d->slots[i]);
  pthread_t threads[MAPOPT_TUNE_MAX_JOBS];
  int nthreads = 0;
  d->next_slot = 0;
  d->active = 0;
  pthread_mutex_lock(&d->mu);
  while (nthreads < d->jobs && (size_t)nthreads < need) {
    if (pthread_create(&threads[nthreads], NULL, worker, d) != 0)
      break;
    nthreads++;
    d->active++;
  }
  pthread_mutex_unlock(&d->mu);
  /* Without a thread (none could be created), evaluate here. */
  if (nthreads == 0 && need > 0) {
    d->active = 1;
    worker(d);
  }
  /* Record whatever finished, in finishing order, until the workers end. */
  pthread_mutex_lock(&d->mu);
  for (;;) {
    bool again = false;
    for (size_t i = 0; i < d->nslots; i++) {
      slot *s = &d->slots[i];
      if (s->evaluated && !s->recorded) {
        pthread_mutex_unlock(&d->mu);
        mapopt_status rs = record(d, s);
        if (st == MAPOPT_OK)
          st = rs;
        pthread_mutex_lock(&d->mu);
        again = true;
      }
    }
    if (again)
      continue;
    if (d->active == 0)
      break;
    pthread_cond_wait(&d->cv, &d->mu);
  }
  pthread_mutex_unlock(&d->mu);
  for (int i = 0; i < nthreads; i++)
    pthread_join(threads[i], NULL);
  *complete = true;
  for (size_t i = 0; i < d->nslots; i++)
    if (d->slots[i].iteration >= 0 &&
        (!d->slots[i].evaluated || d->slots[i].out.interrupted))
      *complete = false;
  return st;
}

/* ---- screening ----------------------------------------------------------- */

/* The candidates a screened round holds: four for each real run, so that
 * the model's choice is a real one, or the optimizer's batch when that is
 * wider (docs/real.md, "Screening candidates on the model"). */
static int64_t screen_width(const driver *d) {
  int64_t w = 4 * (int64_t)d->screen;
  return d->cfg.batch > w ? d->cfg.batch : w;
}

/* The proposals a screened run asks at most: ceil(budget / K) rounds'
 * worth. Rounds in which candidates do not compile run fewer than K, so
 * such a run may end with fewer real runs (exhausted). */
static int64_t screen_proposals(const driver *d) {
  return (d->cfg.budget + d->screen - 1) / d->screen * screen_width(d);
}

/* What the budget counts: the real runs when screening, else every new
 * candidate. */
static int64_t spent(const driver *d) {
  return d->screen ? d->real_runs : d->next_iteration;
}

/* A model's score in the run's unit: scaled by the default mapper's
 * measured over predicted score (1 while either is unknown), so that a
 * prediction told to the optimizer compares with its measurements. */
static double in_run_unit(const driver *d, const mapopt__tune_eval *pred) {
  if (pred->ev.status != MAPOPT_TUNE_OK)
    return 0;
  double scale = d->deflt > 0 && d->default_predicted > 0
                     ? d->deflt / d->default_predicted
                     : 1;
  return pred->ev.score * scale;
}

/* Ranks slot indices by predicted score, best first; ties (and predicted
 * failures, all 0) in the order asked. */
static void rank_predicted(const driver *d, size_t *idx, size_t n) {
  for (size_t i = 1; i < n; i++)
    for (size_t j = i;
         j > 0 && d->slots[idx[j]].predicted > d->slots[idx[j - 1]].predicted;
         j--) {
      size_t t = idx[j];
      idx[j] = idx[j - 1];
      idx[j - 1] = t;
    }
}

/* Marks a screened-out slot: its prediction is its evaluation, told as
 * one (mapopt_evaluation.predicted), its feedback saying so. */
static mapopt_status screen_out(driver *d, slot *s) {
  static const char head[] = "Screened out: the machine model predicted this "
                             "mapper below the round's best; it was not run "
                             "and the score is a prediction.\n";
  mapopt_evaluation *e = &s->out.ev;
  s->screened = true;
  s->evaluated = true;
  e->predicted = true;
  e->runs = 0;
  e->score = e->score_low = e->score_high = s->predicted;
  char *fb = mapopt__text_printf(d->ctx, "%s%s", head,
                                 s->out.feedback ? s->out.feedback : "");
  if (!fb)
    return MAPOPT_ENOMEM;
  mapopt_text_free(s->out.feedback);
  s->out.feedback = fb;
  e->feedback = fb;
  return MAPOPT_OK;
}

/*
 * Screens the round: simulates each new candidate that compiles on the
 * model, runs the best K by prediction (fewer when the budget ends) and
 * screens the others out. The choice depends only on the model, so a
 * resumed run makes it again. MAPOPT_ENOMEM.
 */
static mapopt_status screen_round(driver *d) {
  size_t n = 0;
  size_t *idx = mapopt__calloc(d->ctx, d->nslots + 1, sizeof *idx);
  if (!idx)
    return MAPOPT_ENOMEM;
  mapopt_status st = MAPOPT_OK;
  for (size_t i = 0; i < d->nslots && st == MAPOPT_OK; i++) {
    slot *s = &d->slots[i];
    if (!needs_eval(s))
      continue;
    st = evaluate(d->screener, s);
    s->predicted = in_run_unit(d, &s->out);
    idx[n++] = i;
  }
  rank_predicted(d, idx, n);
  int64_t run = d->cfg.budget - d->real_runs;
  if (run > d->screen)
    run = d->screen;
  for (size_t r = 0; r < n && st == MAPOPT_OK; r++) {
    slot *s = &d->slots[idx[r]];
    if ((int64_t)r < run) {
      /* To be run: the prediction was only for the choice. */
      mapopt__tune_eval_clear(&s->out);
      d->real_runs++;
    } else {
      st = screen_out(d, s);
    }
  }
  mapopt__free(d->ctx, idx, (d->nslots + 1) * sizeof *idx);
  return st;
}

/* ---- asking and telling -------------------------------------------------- */

static void clear_slot(driver *d, slot *s) {
  mapopt_candidate_clear(d->ctx, &s->cand);
  mapopt_dsl_free(s->prog);
  mapopt_text_free(s->key);
  mapopt__tune_eval_clear(&s->out);
  *s = (slot){0};
}

static void clear_round(driver *d) {
  for (size_t i = 0; i < d->nslots; i++)
    clear_slot(d, &d->slots[i]);
  d->nslots = 0;
}

static slot *push_slot(driver *d) {
  if (d->nslots == d->cap) {
    size_t cap = d->cap ? d->cap * 2 : 8;
    slot *n =
        mapopt__realloc(d->ctx, d->slots, d->cap * sizeof *n, cap * sizeof *n);
    if (!n)
      return NULL;
    d->slots = n;
    d->cap = cap;
  }
  slot *s = &d->slots[d->nslots++];
  *s = (slot){.predicted = -1};
  return s;
}

/* Takes a new candidate into the round: the next iteration, with its
 * record when replaying; one that does not compile is evaluated here. */
static mapopt_status admit(driver *d, slot *s, const char *diag_text,
                           double compile_s) {
  s->iteration = d->next_iteration++;
  s->wall_s = compile_s;
  mapopt__tune_hash(s->key, s->keylen, s->hash);
  d->dup_streak = 0;
  if ((size_t)s->iteration < d->nrecord_at && d->record_at[s->iteration]) {
    s->record = d->record_at[s->iteration];
    d->replayed++;
    if (strcmp(s->record->hash, s->hash))
      return cannot_resume(d,
                           "evaluation %lld was recorded with hash %s and "
                           "is now %s (the optimizer or the model changed "
                           "since)",
                           (long long)s->iteration, s->record->hash, s->hash);
  }
  if (s->prog)
    return MAPOPT_OK;
  double t0 = mono_now();
  mapopt_status st = MAPOPT_OK;
  if (s->cand.failure) {
    /* No mapper to analyse: the optimizer's words are the feedback. */
    s->out = (mapopt__tune_eval){.ev.status = MAPOPT_TUNE_INVALID};
    s->out.feedback = copy_text(d->ctx, s->cand.failure);
    s->out.ev.feedback = s->out.feedback;
    st = s->out.feedback ? MAPOPT_OK : MAPOPT_ENOMEM;
  } else {
    st = mapopt__tune_eval_invalid(d->eval, s->cand.text, diag_text, &s->out);
  }
  s->wall_s += mono_now() - t0;
  s->finished = unix_now();
  s->err = st;
  s->evaluated = true;
  return MAPOPT_OK;
}

/* The index of an earlier new candidate of this round with s's key, or
 * nslots when there is none. */
static size_t same_key_in_round(const driver *d, const slot *s) {
  for (size_t i = 0; i + 1 < d->nslots; i++)
    if (d->slots[i].iteration >= 0 &&
        ((d->slots[i].keylen == s->keylen &&
          !memcmp(d->slots[i].key, s->key, s->keylen)) ||
         (s->decided[0] && !strcmp(d->slots[i].decided, s->decided))))
      return i;
  return d->nslots;
}

/* Records the chat calls and replies the optimizer holds (the llm
 * optimizer's: each call as it ends, the replies after the ask), then
 * drops them. */
static mapopt_status record_llm(driver *d) {
  mapopt_optimizer *o = d->opt;
  mapopt_status st =
      mapopt__db_record_llm(d->db, d->run, o->call_recs.data, o->call_recs.len,
                            o->reply_recs.data, o->reply_recs.len, d->diags);
  mapopt__optimizer_drop_records(o);
  return st;
}

/* The optimizer's flush: what it holds is recorded now. */
static mapopt_status flush_llm(void *ud) {
  return record_llm(ud);
}

/* The key of a candidate that is no mapper: its text, as a text. */
static mapopt_status failure_key(driver *d, slot *s) {
  s->prog = NULL;
  s->keylen = strlen(s->cand.text);
  s->key = mapopt__text_new(d->ctx, s->cand.text, s->keylen);
  return s->key ? MAPOPT_OK : MAPOPT_ENOMEM;
}

/*
 * Asks until the optimizer answers MAPOPT_ENOTFOUND or the round holds
 * jobs new candidates (fewer when the budget ends). *exhausted: the
 * optimizer proposed too many duplicates in a row. *failed: it could not
 * propose (MAPOPT_EIO from its ask; the reason is a diagnostic).
 */
static mapopt_status fill_round(driver *d, bool *exhausted, bool *failed) {
  int64_t room = d->cfg.budget - d->next_iteration;
  if (room > d->jobs)
    room = d->jobs;
  if (d->screen)
    room = screen_width(d);
  int64_t fresh = 0;
  *exhausted = *failed = false;
  while (fresh < room) {
    if (d->dup_streak >= MAPOPT_TUNE_MAX_DUPLICATES) {
      *exhausted = true;
      break;
    }
    slot *s = push_slot(d);
    if (!s)
      return MAPOPT_ENOMEM;
    mapopt_status st = mapopt_optimizer_ask(d->opt, &s->cand);
    mapopt_status rs = record_llm(d);
    if (st == MAPOPT_EIO) {
      *failed = true;
      /* A stop ended the ask: the run is interrupted, not failed. */
      if (!stop_requested(d))
        mapopt_diags_add(d->diags, MAPOPT_SEV_ERROR, "", "mapopt tune", 0, 0,
                         "%s", mapopt_optimizer_last_error(d->opt));
    }
    if (st != MAPOPT_OK) {
      d->nslots--;
      /* "Nothing now": with candidates pending, tell them and ask again;
       * with none, the optimizer is done (the caller sees an empty round).
       * An optimizer that failed ends the round likewise. */
      return rs != MAPOPT_OK                              ? rs
             : st == MAPOPT_ENOTFOUND || st == MAPOPT_EIO ? MAPOPT_OK
                                                          : st;
    }
    if (rs != MAPOPT_OK)
      return rs;
    char *diag_text = NULL;
    double t0 = mono_now();
    st = s->cand.failure ? failure_key(d, s)
                         : compile(d, s->cand.text, &s->prog, &s->key,
                                   &s->keylen, &diag_text);
    double compile_s = mono_now() - t0;
    if (st != MAPOPT_OK)
      return st;
    uint64_t decisions;
    /* Real runs are keyed by text alone: the program may read more of a
     * mapper than the application model describes. */
    st = s->prog && !d->problem->command
             ? mapopt__space_decisions(d->space, s->prog, &decisions)
             : MAPOPT_ENOTFOUND;
    if (st == MAPOPT_ENOMEM)
      return st;
    if (st == MAPOPT_OK)
      snprintf(s->decided, sizeof s->decided, "%016llx",
               (unsigned long long)decisions);
    mapopt__map_entry *k = mapopt__map_find(&d->known, s->key, s->keylen);
    if (!k && s->decided[0])
      k = mapopt__map_find(&d->decided, s->decided, 16);
    st = MAPOPT_OK;
    s->iteration = -1;
    s->dup_known = k ? k->value : NULL;
    s->dup_of = k ? d->nslots : same_key_in_round(d, s);
    if (!k && s->dup_of == d->nslots) {
      st = admit(d, s, diag_text, compile_s);
      fresh++;
    } else {
      d->dups++;
      d->dup_streak++;
      mapopt_dsl_free(s->prog);
      s->prog = NULL;
    }
    mapopt_text_free(diag_text);
    if (st != MAPOPT_OK)
      return st;
  }
  return MAPOPT_OK;
}

/* Keeps a told evaluation to answer its duplicates; takes the slot's key. */
static mapopt_status remember(driver *d, slot *s) {
  known *k = mapopt__calloc(d->ctx, 1, sizeof *k);
  known **slotp = k ? mapopt__vec_push(&d->knowns, d->ctx) : NULL;
  if (!slotp) {
    if (k)
      mapopt__free(d->ctx, k, sizeof *k);
    return MAPOPT_ENOMEM;
  }
  *slotp = k;
  k->iteration = s->iteration;
  k->profile = s->profile;
  k->ev = s->out.ev;
  k->ev.result = NULL;
  k->ev.findings = NULL;
  k->ev.feedback = NULL;
  if (s->out.feedback) {
    k->feedback = copy_text(d->ctx, s->out.feedback);
    if (!k->feedback)
      return MAPOPT_ENOMEM;
    k->ev.feedback = k->feedback;
  }
  bool inserted;
  mapopt__map_entry *e =
      mapopt__map_upsert(&d->known, d->ctx, s->key, s->keylen, &inserted);
  if (!e)
    return MAPOPT_ENOMEM;
  k->key = s->key;
  k->keylen = s->keylen;
  s->key = NULL;
  e->value = k;
  if (!s->decided[0])
    return MAPOPT_OK;
  memcpy(k->decided, s->decided, sizeof k->decided);
  e = mapopt__map_upsert(&d->decided, d->ctx, k->decided, 16, &inserted);
  if (!e)
    return MAPOPT_ENOMEM;
  e->value = k;
  return MAPOPT_OK;
}

/*
 * What an optimizer is told at the run's feedback level, so that the
 * ablation (mapopt bench --feedback) measures what each level is worth to
 * any optimizer: raw tells the output alone (status, score, the output's
 * own lines); explain adds AutoGuide's findings (what went wrong, about
 * which task and region, and how much time it puts at stake) without
 * their edits; suggest adds the edits; full adds the simulator's profile.
 */
static void at_level(mapopt_guide_level level, mapopt_evaluation *ev) {
  if (level == MAPOPT_GUIDE_RAW)
    ev->findings = NULL;
  ev->edits = ev->findings && level >= MAPOPT_GUIDE_SUGGEST;
  if (level != MAPOPT_GUIDE_FULL)
    ev->result = NULL;
}

/* Tells a duplicate: the evaluation of its first occurrence, marked, with
 * neither findings nor result (they were told with the first). */
static mapopt_status tell_duplicate(driver *d, const mapopt_candidate *c,
                                    const mapopt_evaluation *first) {
  mapopt_evaluation ev = *first;
  ev.duplicate = true;
  ev.result = NULL;
  ev.findings = NULL;
  return mapopt_optimizer_tell(d->opt, c, &ev);
}

/* The real runs up to and including slot s of the round: those of the
 * rounds before, and this round's run slots up to s. */
static int64_t spent_before(const driver *d, const slot *s) {
  int64_t later = 0;
  for (const slot *t = s + 1; t < d->slots + d->nslots; t++)
    later += needs_eval(t);
  return d->real_runs - later;
}

/* Tells the round's results in the order they were asked. */
static mapopt_status tell_round(driver *d) {
  for (size_t i = 0; i < d->nslots; i++) {
    slot *s = &d->slots[i];
    mapopt_status st;
    if (s->iteration < 0) {
      st = tell_duplicate(d, &s->cand,
                          s->dup_known ? &s->dup_known->ev
                                       : &d->slots[s->dup_of].out.ev);
      if (st != MAPOPT_OK)
        return st;
      continue;
    }
    mapopt_evaluation ev = s->out.ev;
    ev.duplicate = false;
    if (ev.status != MAPOPT_TUNE_OK)
      ev.score = 0;
    at_level(d->level, &ev);
    st = mapopt_optimizer_tell(d->opt, &s->cand, &ev);
    if (st != MAPOPT_OK)
      return st;
    /* Better only when the intervals say so (docs/real.md, "Noise");
     * a prediction never is. */
    if (ev.status == MAPOPT_TUNE_OK && !ev.predicted &&
        (d->best < 0 || mapopt__noise_better(ev.score_low, ev.score_high,
                                             d->best_low, d->best_high))) {
      d->best = s->iteration;
      d->best_score = ev.score;
      d->best_low = ev.score_low;
      d->best_high = ev.score_high;
      mapopt__tune_evaluator_race(d->eval, fmax(d->best_low, d->bar_ref));
    }
    if (d->opts->progress) {
      mapopt_tune_progress p = {d->run,
                                s->iteration,
                                d->cfg.budget,
                                s->record != NULL,
                                &s->cand,
                                &ev,
                                d->best,
                                d->best_score,
                                d->expert,
                                d->deflt,
                                d->screen ? spent_before(d, s)
                                          : s->iteration + 1,
                                d->screen > 0};
      d->opts->progress(d->opts->progress_ud, &p);
    }
    st = remember(d, s);
    if (st != MAPOPT_OK)
      return st;
  }
  return MAPOPT_OK;
}

/* The loop: rounds until the budget is spent, the optimizer runs dry or a
 * stop is requested. */
static mapopt_status drive(driver *d, mapopt_tune_end *end) {
  for (;;) {
    if (spent(d) >= d->cfg.budget) {
      *end = MAPOPT_TUNE_END_DONE;
      return MAPOPT_OK;
    }
    /* Rounds whose candidates do not compile run fewer: a screened run
     * asks at most screen_proposals. */
    if (d->screen && d->next_iteration >= screen_proposals(d)) {
      *end = MAPOPT_TUNE_END_EXHAUSTED;
      return MAPOPT_OK;
    }
    if (stop_requested(d)) {
      *end = MAPOPT_TUNE_END_INTERRUPTED;
      return MAPOPT_OK;
    }
    bool exhausted, failed, complete = true;
    mapopt_status st = fill_round(d, &exhausted, &failed);
    if (st == MAPOPT_OK && d->nslots == 0) {
      *end = failed ? MAPOPT_TUNE_END_INTERRUPTED : MAPOPT_TUNE_END_EXHAUSTED;
      return MAPOPT_OK;
    }
    if (st == MAPOPT_OK && d->screen)
      st = screen_round(d);
    if (st == MAPOPT_OK)
      st = run_round(d, &complete);
    if (st == MAPOPT_OK && complete)
      st = tell_round(d);
    clear_round(d);
    if (st != MAPOPT_OK)
      return st;
    if (!complete || failed) {
      *end = MAPOPT_TUNE_END_INTERRUPTED;
      return MAPOPT_OK;
    }
    if (exhausted) {
      *end = spent(d) >= d->cfg.budget ? MAPOPT_TUNE_END_DONE
                                       : MAPOPT_TUNE_END_EXHAUSTED;
      return MAPOPT_OK;
    }
  }
}

/* ---- setting a run up ---------------------------------------------------- */

/* Evaluates a reference mapper (expert or default) with ev (the run's
 * evaluator, or the screener for the default's prediction): its score
 * with its interval, 0 when it fails or does not compile. The unit is
 * taken from the run's evaluation when still unknown. A real run of it sets the
 * first time limits of the candidates, and gets the most runs (no best to race
 * against yet). A stop that ends it leaves *stopped set (and the score
 * unknown). The default mapper's evaluation (baseline) is told to the optimizer
 * with its canonical text, whose comments, which may name the benchmark, are
 * gone; the expert's never is: an optimizer never sees the expert. */
static mapopt_status reference(driver *d, const mapopt__tune_evaluator *ev,
                               const char *text, mapopt__noise_est *score,
                               bool *stopped, bool baseline) {
  *score = (mapopt__noise_est){0};
  if (!text || *stopped)
    return MAPOPT_OK;
  slot s = {0};
  char *diag_text = NULL;
  mapopt_status st = compile(d, text, &s.prog, &s.key, &s.keylen, &diag_text);
  mapopt_text_free(diag_text);
  if (st == MAPOPT_OK && s.prog) {
    s.cand.text = (char *)text;
    st = evaluate(ev, &s);
    s.cand.text = NULL;
    *stopped = st == MAPOPT_OK && s.out.interrupted;
    if (st == MAPOPT_OK && !*stopped && s.out.ev.status == MAPOPT_TUNE_OK) {
      *score = (mapopt__noise_est){s.out.ev.score, s.out.ev.score_low,
                                   s.out.ev.score_high, s.out.ev.runs};
      st = ev == d->eval ? learn_unit(d, &s.out) : MAPOPT_OK;
    }
    if (st == MAPOPT_OK && !*stopped && baseline) {
      mapopt_evaluation told = s.out.ev;
      at_level(d->level, &told);
      st = mapopt__optimizer_baseline(d->opt, s.key, &told);
    }
    if (st != MAPOPT_OK)
      eval_error(d, st, &s.out);
  }
  clear_slot(d, &s);
  return st;
}

/* The default mapper: the problem's, or the runtime's defaults as the
 * space renders them (an application that ships none, docs/tuning.md). */
static const char *default_text(const mapopt_tune_problem *p) {
  return p->default_mapper ? p->default_mapper : mapopt__space_default_mapper();
}

/*
 * The final check of a real-run tuning (docs/real.md, "Noise"): the best
 * and the baselines run interleaved, one run each a round, and the best's
 * speedup over each, with its interval, is recorded. A stop during it
 * leaves no check: the speedups then come from the evaluations' own
 * intervals.
 */
static mapopt_status final_check(driver *d) {
  const mapopt_tune_command *c = d->problem->command;
  int rounds = c->check_rounds ? c->check_rounds : MAPOPT_TUNE_CHECK;
  if (rounds < 1)
    return MAPOPT_OK;
  if (rounds > 1000)
    rounds = 1000;
  mapopt_tune_outcome o = {.best = -1};
  mapopt_status st = mapopt__db_outcome(d->db, d->run, d->diags, &o);
  const char *texts[3] = {o.best_text, default_text(d->problem),
                          d->problem->expert};
  double base_score[3] = {0, o.default_score, o.expert_score};
  int n = texts[2] && o.expert_score > 0 ? 3 : 2;
  double *scores = NULL;
  bool ran = false;
  if (st == MAPOPT_OK && o.best >= 0 && o.default_score > 0) {
    scores = mapopt__calloc(d->ctx, (size_t)rounds * (size_t)n, sizeof *scores);
    st = scores ? mapopt__tune_evaluator_check(d->eval, texts, n, rounds,
                                               scores, d->diags, &ran)
                : MAPOPT_ENOMEM;
  }
  static const char *const names[3] = {NULL, "default", "expert"};
  /* Real runs (runs > 0): the check's path of mapopt__noise_speedup. */
  mapopt__noise_est best = {o.best_score, o.best_low, o.best_high, 1};
  mapopt__noise_est base[3] = {
      {0},
      {o.default_score, o.default_low, o.default_high, 1},
      {o.expert_score, o.expert_low, o.expert_high, 1}};
  for (int b = 1; b < n && st == MAPOPT_OK && ran && base_score[b] > 0; b++) {
    double mine[1000], theirs[1000];
    for (int r = 0; r < rounds; r++) {
      mine[r] = scores[r * n];
      theirs[r] = scores[r * n + b];
    }
    mapopt_tune_speedup sp;
    mapopt__noise_speedup(&best, &base[b], mine, theirs, rounds, &sp);
    char *bs = mapopt__noise_scores_text(d->ctx, mine, rounds);
    char *ts = mapopt__noise_scores_text(d->ctx, theirs, rounds);
    st = bs && ts ? mapopt__db_record_check(d->db, d->run, names[b], &sp, bs,
                                            ts, d->diags)
                  : MAPOPT_ENOMEM;
    mapopt_text_free(bs);
    mapopt_text_free(ts);
  }
  if (scores)
    mapopt__free(d->ctx, scores, (size_t)rounds * (size_t)n * sizeof *scores);
  mapopt_tune_outcome_clear(&o);
  return st;
}

/* Checks config and fills its defaults into d->cfg. */
static mapopt_status check_config(driver *d, const mapopt_tune_config *c) {
  d->cfg = *c;
  if (!d->cfg.feedback)
    d->cfg.feedback = "full";
  const char *bad = NULL;
  if (!c->app || !c->machine || !c->optimizer)
    bad = "the app, machine and optimizer must be named";
  else if (!d->vt)
    bad = "unknown optimizer (see mapopt tune --help)";
  else if (c->budget < 1)
    bad = "the budget must be at least 1 evaluation";
  else if (c->batch < 0)
    bad = "the batch must be 0 (the optimizer's default) or more";
  else if (d->opts->jobs < 0 || d->opts->jobs > MAPOPT_TUNE_MAX_JOBS)
    bad = "jobs must be 0 to " MAPOPT__STR(
        MAPOPT_TUNE_MAX_JOBS) " evaluations at once";
  else if (d->problem->command && (d->problem->command->screen < 0 ||
                                   d->problem->command->screen > 64))
    bad = "screening runs 1 to 64 candidates a round (0: no screening)";
  else if (mapopt_guide_level_parse(d->cfg.feedback, &d->level) != MAPOPT_OK)
    bad = "unknown feedback level (raw, explain, suggest or full)";
  else if (d->vt == &mapopt__opt_llm && !c->llm)
    bad = "the llm optimizer needs its settings (mapopt_tune_config.llm)";
  char err[256];
  if (!bad && d->vt == &mapopt__opt_llm) {
    mapopt_llm_config cc = c->llm->client;
    cc.samples = c->batch ? c->batch : mapopt__opt_llm.default_batch;
    if (mapopt_llm_config_check(&cc, err, sizeof err) != MAPOPT_OK)
      bad = err;
  }
  if (!bad)
    return MAPOPT_OK;
  mapopt_diags_add(d->diags, MAPOPT_SEV_ERROR, "", "mapopt tune", 0, 0, "%s",
                   bad);
  return MAPOPT_EINVAL;
}

/* Loads the records of a resumed run, indexed by iteration. */
static mapopt_status load_records(driver *d) {
  mapopt_status st =
      mapopt__db_evaluations(d->db, d->run, d->diags, &d->records);
  if (st != MAPOPT_OK)
    return st;
  /* Iterations run past the budget when screening: the records bound
   * them. */
  d->nrecord_at = 1;
  for (size_t i = 0; i < d->records.len; i++) {
    const mapopt_tune_eval_info *r =
        MAPOPT__VEC_AT(&d->records, mapopt_tune_eval_info *, i);
    if (r->iteration >= 0 && (size_t)r->iteration >= d->nrecord_at)
      d->nrecord_at = (size_t)r->iteration + 1;
  }
  d->record_at = mapopt__calloc(d->ctx, d->nrecord_at, sizeof *d->record_at);
  if (!d->record_at)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < d->records.len; i++) {
    mapopt_tune_eval_info *r =
        MAPOPT__VEC_AT(&d->records, mapopt_tune_eval_info *, i);
    if (r->iteration >= 0)
      d->record_at[r->iteration] = r;
  }
  /* The llm optimizer's recorded replies, replayed instead of asked. */
  int64_t next_step;
  st = mapopt__db_llm_replay(d->db, d->run, d->diags, &d->llm_replies,
                             &next_step);
  if (st != MAPOPT_OK)
    return st;
  d->llm_replay =
      (mapopt__llm_replay){d->llm_replies.data, d->llm_replies.len, next_step};
  d->opt->replay = &d->llm_replay;
  return MAPOPT_OK;
}

/* Builds what the loop needs: space, evaluator, optimizer. */
static mapopt_status prepare(driver *d) {
  const mapopt_tune_problem *p = d->problem;
  mapopt_sim_shape(p->machine, p->run, &d->shape);
  mapopt_space_options so = {d->cfg.start_text, d->cfg.start_len,
                             d->cfg.start_file, p->command != NULL};
  mapopt_status st =
      mapopt_space_new(d->ctx, p->run, p->machine, &so, d->diags, &d->space);
  if (st == MAPOPT_OK)
    st = mapopt__tune_evaluator_new(d->ctx, p, d->level, d->opts->stop,
                                    d->diags, &d->eval);
  /* Screening simulates on the machine the candidates are compiled for:
   * --machine is the model, the command the truth. */
  d->model = *p;
  d->model.command = NULL;
  if (st == MAPOPT_OK && d->screen)
    st = mapopt__tune_evaluator_new(d->ctx, &d->model, d->level, d->opts->stop,
                                    d->diags, &d->screener);
  mapopt_optimizer_options oo = {d->cfg.seed, d->cfg.budget, d->cfg.batch,
                                 d->cfg.llm, d->opts->stop};
  /* Screening: batches of the round's width, and the proposals of every
   * round the budget allows, ceil(budget / K) of them. */
  if (d->screen) {
    oo.batch = (int)screen_width(d);
    oo.budget = screen_proposals(d);
  }
  if (st == MAPOPT_OK)
    st = mapopt__optimizer_create(d->ctx, d->vt, d->space, &oo, &d->opt);
  if (st == MAPOPT_OK) {
    d->opt->flush = flush_llm;
    d->opt->flush_ud = d;
    st = mapopt_diags_new(d->ctx, &d->cdiags);
  }
  return st;
}

static void destroy(driver *d) {
  clear_round(d);
  if (d->slots)
    mapopt__free(d->ctx, d->slots, d->cap * sizeof *d->slots);
  for (size_t i = 0; i < d->knowns.len; i++) {
    known *k = MAPOPT__VEC_AT(&d->knowns, known *, i);
    mapopt_text_free(k->key);
    mapopt_text_free(k->feedback);
    mapopt__free(d->ctx, k, sizeof *k);
  }
  mapopt__vec_destroy(&d->knowns, d->ctx);
  mapopt__map_destroy(&d->known, d->ctx);
  mapopt__map_destroy(&d->decided, d->ctx);
  for (size_t i = 0; i < d->records.len; i++)
    mapopt_tune_eval_info_free(
        d->ctx, MAPOPT__VEC_AT(&d->records, mapopt_tune_eval_info *, i));
  mapopt__vec_destroy(&d->records, d->ctx);
  for (size_t i = 0; i < d->llm_replies.len; i++)
    mapopt__llm_reply_rec_clear(
        &MAPOPT__VEC_AT(&d->llm_replies, mapopt__llm_reply_rec, i));
  mapopt__vec_destroy(&d->llm_replies, d->ctx);
  if (d->record_at)
    mapopt__free(d->ctx, d->record_at, d->nrecord_at * sizeof *d->record_at);
  mapopt__tune_evaluator_free(d->screener);
  mapopt_text_free(d->unit);
  mapopt_optimizer_free(d->opt);
  mapopt__tune_evaluator_free(d->eval);
  mapopt_space_free(d->space);
  mapopt_diags_free(d->cdiags);
  pthread_mutex_destroy(&d->mu);
  pthread_cond_destroy(&d->cv);
}

/* The end a recorded status stands for. */
static mapopt_tune_end end_of(const char *status) {
  if (!strcmp(status, "done"))
    return MAPOPT_TUNE_END_DONE;
  if (!strcmp(status, "exhausted"))
    return MAPOPT_TUNE_END_EXHAUSTED;
  return MAPOPT_TUNE_END_INTERRUPTED;
}

/* The baselines' scores, and racing's bar from their intervals. */
static void set_references(driver *d, const mapopt__noise_est *expert,
                           const mapopt__noise_est *deflt) {
  d->expert = expert->score;
  d->deflt = deflt->score;
  d->bar_ref = fmax(expert->low, deflt->low);
  mapopt__tune_evaluator_race(d->eval, d->bar_ref);
}

/* Evaluates the references of a new run (or of one whose references were
 * never recorded) and records them; a stop or a failure in them leaves the
 * run "starting" (d->starting), for a resume to make them. */
static mapopt_status start_run(driver *d) {
  mapopt__noise_est expert, deflt;
  bool stopped = stop_requested(d);
  d->starting = true; /* until the references are recorded */
  mapopt_status st =
      reference(d, d->eval, d->problem->expert, &expert, &stopped, false);
  if (st == MAPOPT_OK)
    st =
        reference(d, d->eval, default_text(d->problem), &deflt, &stopped, true);
  if (st == MAPOPT_OK && !stopped)
    st =
        mapopt__db_start_run(d->db, d->run, &expert, &deflt, d->unit, d->diags);
  d->starting = st != MAPOPT_OK || stopped;
  set_references(d, &expert, &deflt);
  d->unit_in_db = d->unit != NULL;
  return st;
}

/* Reopens the recorded run to resume it: its references, its records. */
static mapopt_status continue_run(driver *d) {
  d->resumed = true;
  mapopt_tune_outcome o = {0};
  mapopt_status st = mapopt__db_outcome(d->db, d->run, d->diags, &o);
  set_references(
      d, &(mapopt__noise_est){o.expert_score, o.expert_low, o.expert_high, 0},
      &(mapopt__noise_est){o.default_score, o.default_low, o.default_high, 0});
  mapopt_tune_outcome_clear(&o);
  /* An optimizer that shows the default mapper's evaluation is told it
   * again: a resumed run prompts as the uninterrupted one would. */
  bool stopped = stop_requested(d);
  mapopt__noise_est deflt;
  if (st == MAPOPT_OK && d->opt->baseline)
    st =
        reference(d, d->eval, default_text(d->problem), &deflt, &stopped, true);
  if (st == MAPOPT_OK)
    st = load_records(d);
  if (st == MAPOPT_OK)
    st = mapopt__db_continue_run(d->db, d->run, d->diags);
  return st;
}

/*
 * Creates the run or reopens the one to resume, claimed for this process
 * (docs/tuning.md, "Several processes on one database"); *finished when
 * the matching run had already ended. What the run needs is built before
 * anything is recorded, so that a start mapper that does not compile or a
 * malformed command leaves no run behind.
 */
static mapopt_status open_run(driver *d, const mapopt__run_key *key,
                              bool *finished, mapopt_tune_end *end) {
  *finished = false;
  char status[16];
  int64_t run;
  mapopt_status st =
      d->opts->resume ? mapopt__db_find_run(d->db, key, d->diags, &run, status)
                      : MAPOPT_ENOTFOUND;
  if (st == MAPOPT_OK && end_of(status) != MAPOPT_TUNE_END_INTERRUPTED) {
    d->run = run;
    d->resumed = *finished = true;
    *end = end_of(status);
    return MAPOPT_OK;
  }
  if (st != MAPOPT_OK && st != MAPOPT_ENOTFOUND)
    return st;
  st = prepare(d);
  bool created = false;
  if (st == MAPOPT_OK)
    st = mapopt__db_open_run(d->db, key, d->opts->resume, d->diags, &d->run,
                             status, &created, &d->claimed);
  if (st != MAPOPT_OK)
    return st;
  if (!d->claimed) { /* it ended between the look and the claim */
    d->resumed = *finished = true;
    *end = end_of(status);
    return MAPOPT_OK;
  }
  if (created || !strcmp(status, "starting")) {
    d->resumed = !created;
    return start_run(d);
  }
  return continue_run(d);
}

mapopt_status mapopt_tune_run(mapopt_ctx *ctx, mapopt_tune_db *db,
                              const mapopt_tune_problem *problem,
                              const mapopt_tune_config *config,
                              const mapopt_tune_options *opts,
                              mapopt_diags *diags, mapopt_tune_outcome *out) {
  const mapopt__optimizer_vt *vt =
      config && config->optimizer ? mapopt__optimizer_find(config->optimizer)
                                  : NULL;
  return mapopt__tune_run_with(ctx, db, problem, config, opts, vt, diags, out);
}

mapopt_status mapopt__tune_run_with(mapopt_ctx *ctx, mapopt_tune_db *db,
                                    const mapopt_tune_problem *problem,
                                    const mapopt_tune_config *config,
                                    const mapopt_tune_options *opts,
                                    const mapopt__optimizer_vt *vt,
                                    mapopt_diags *diags,
                                    mapopt_tune_outcome *out) {
  if (!ctx || !db || !problem || !problem->machine || !problem->run ||
      !config || !opts || !diags || !out)
    return MAPOPT_EINVAL;
  *out = (mapopt_tune_outcome){.best = -1};
  driver d = {.ctx = ctx,
              .db = db,
              .diags = diags,
              .problem = problem,
              .vt = vt,
              .opts = opts,
              .best = -1};
  pthread_mutex_init(&d.mu, NULL);
  pthread_cond_init(&d.cv, NULL);
  mapopt__map_init(&d.known);
  mapopt__map_init(&d.decided);
  mapopt__vec_init(&d.knowns, sizeof(known *));
  mapopt__vec_init(&d.records, sizeof(mapopt_tune_eval_info *));
  mapopt__vec_init(&d.llm_replies, sizeof(mapopt__llm_reply_rec));
  mapopt_status st = check_config(&d, config);
  if (st != MAPOPT_OK) {
    destroy(&d);
    return st;
  }
  d.jobs = opts->jobs < 1 ? 1 : opts->jobs;
  d.screen = problem->command ? problem->command->screen : 0;
  char start_hash[17];
  if (d.cfg.start_text)
    mapopt__tune_hash(d.cfg.start_text, d.cfg.start_len, start_hash);
  bool finished = false;
  mapopt_tune_end end = MAPOPT_TUNE_END_DONE;
  char *evaluator;
  st = mapopt__tune_evaluator_id(ctx, problem, &evaluator);
  mapopt__run_key key = {&d.cfg, d.cfg.start_text ? start_hash : NULL,
                         evaluator};
  if (st == MAPOPT_OK)
    st = open_run(&d, &key, &finished, &end);
  if (st == MAPOPT_OK && d.starting)
    end = MAPOPT_TUNE_END_INTERRUPTED;
  else if (st == MAPOPT_OK && !finished) {
    /* Screening scales its predictions by the default mapper's. */
    mapopt__noise_est predicted = {0};
    bool no_stop = false;
    if (d.screen)
      st = reference(&d, d.screener, default_text(problem), &predicted,
                     &no_stop, false);
    d.default_predicted = predicted.score;
    if (st == MAPOPT_OK)
      st = drive(&d, &end);
    if (st == MAPOPT_OK && end != MAPOPT_TUNE_END_INTERRUPTED &&
        d.replayed < (int64_t)d.records.len)
      st = cannot_resume(&d,
                         "the replay ended after %lld of its %zu recorded "
                         "evaluations",
                         (long long)d.replayed, d.records.len);
    if (st == MAPOPT_OK && end != MAPOPT_TUNE_END_INTERRUPTED &&
        problem->command)
      st = final_check(&d);
  }
  /* A run that failed stays resumable: it is marked interrupted (or left
   * starting, its references to be made). Only the process that claimed
   * the run writes its end. */
  if (d.claimed) {
    if (st != MAPOPT_OK)
      end = MAPOPT_TUNE_END_INTERRUPTED;
    mapopt_status s2 = mapopt__db_release_run(
        db, d.run, d.starting ? "starting" : mapopt_tune_end_name(end), d.dups,
        end != MAPOPT_TUNE_END_INTERRUPTED, diags);
    if (st == MAPOPT_OK)
      st = s2;
  }
  if (st == MAPOPT_OK)
    st = mapopt__db_outcome(db, d.run, diags, out);
  out->end = end;
  out->resumed = d.resumed;
  /* A finished run was wholly recorded before this call. */
  out->replayed = finished ? out->evaluations : d.replayed;
  mapopt_text_free(evaluator);
  destroy(&d);
  if (st != MAPOPT_OK && !out->run)
    mapopt_tune_outcome_clear(out);
  return st;
}

void mapopt_tune_outcome_clear(mapopt_tune_outcome *o) {
  if (!o)
    return;
  mapopt_text_free(o->best_text);
  mapopt_text_free(o->best_note);
  mapopt_text_free(o->unit);
  *o = (mapopt_tune_outcome){.best = -1};
}
