/*
 * Evaluators (src/tune/tune.h): what turns a compiled candidate into an
 * evaluation the driver records and tells. Two of them:
 *   - the simulator runs the candidate on the shared plan of the app run
 *     (mapopt_sim_run_plan is safe to call from several threads on one
 *     plan);
 *   - a command runs the real program with the candidate (mapopt/eval.h):
 *     each evaluation in its own private directory and process group, with
 *     the time limit of the tuning run (fixed, or 10x the best so far). The
 *     score, status and feedback are the real run's; the candidate is also
 *     simulated on the machine model, and that prediction goes with the
 *     evaluation as its profile, which optimizers that order parameters
 *     by their weight in a profile (guided, ccd) need and a real run's
 *     output cannot give.
 * A candidate that does not compile never reaches an evaluator: the driver
 * makes its evaluation with mapopt__tune_eval_invalid.
 *
 * Every evaluation is analysed by AutoGuide in one place, analyse(): the
 * run's raw log or output (or the compiler's diagnostics, printed as the
 * compiler prints them, so that the syntax rules see what a user would)
 * with the result when simulated, the exit status, signal and timeout when
 * run, the mapper and its text, the run and the machine. The findings and
 * the result travel with the evaluation until the optimizer has been told;
 * the feedback text at the run's level is what the database keeps, with a
 * real run's output, from which a resume analyses it again. Analysis only
 * reads its inputs, so workers analyse in parallel.
 */
#include <math.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/json.h"
#include "tune/tune.h"

void mapopt__tune_eval_clear(mapopt__tune_eval *e) {
  if (!e)
    return;
  mapopt_text_free(e->feedback);
  mapopt_findings_free(e->findings);
  mapopt_sim_result_free(e->result);
  mapopt_text_free(e->output);
  mapopt_text_free(e->error);
  mapopt_text_free(e->scores);
  *e = (mapopt__tune_eval){0};
}

/* AutoGuide's findings on in and their feedback text at the evaluator's
 * level, into out (whose ev points to them). MAPOPT_ENOMEM. */
static mapopt_status analyse(const mapopt__tune_evaluator *ev,
                             const mapopt_guide_input *in,
                             mapopt__tune_eval *out) {
  mapopt_status st = mapopt_guide_analyze(ev->ctx, in, &out->findings);
  if (st == MAPOPT_OK)
    st = mapopt_guide_feedback(ev->ctx, out->findings, ev->level,
                               &out->feedback);
  out->ev.findings = out->findings;
  out->ev.feedback = out->feedback;
  return st;
}

mapopt_status mapopt__tune_eval_invalid(const mapopt__tune_evaluator *ev,
                                        const char *text, const char *diag_text,
                                        mapopt__tune_eval *out) {
  *out = (mapopt__tune_eval){.ev.status = MAPOPT_TUNE_INVALID};
  mapopt_guide_input in = {.output = diag_text,
                           .output_len = strlen(diag_text),
                           .exit_status = 1,
                           .mapper_text = text,
                           .mapper_len = strlen(text),
                           .run = ev->run,
                           .machine = ev->machine};
  mapopt_status st = analyse(ev, &in, out);
  if (st != MAPOPT_OK)
    mapopt__tune_eval_clear(out);
  return st;
}

/* ---- the simulator ------------------------------------------------------- */

/* Simulates one candidate on the shared plan; the result goes with the
 * evaluation, for optimizers that read the profile. */
static mapopt_status evaluate_sim(const mapopt__tune_evaluator *ev,
                                  const mapopt_program *prog, const char *text,
                                  mapopt__tune_eval *out) {
  const mapopt_sim_plan *plan = ev->state;
  *out = (mapopt__tune_eval){0};
  mapopt_sim_options so = {0};
  mapopt_status st =
      mapopt_sim_run_plan(ev->ctx, ev->machine, plan, prog, &so, &out->result);
  if (st != MAPOPT_OK)
    return st;
  const mapopt_sim_result *r = out->result;
  out->ev.result = r;
  out->ev.lower_bound_s = (double)r->lower_bound_ns * 1e-9;
  if (r->error == MAPOPT_SIM_NONE) {
    out->ev.status = MAPOPT_TUNE_OK;
    out->ev.score = out->ev.score_low = out->ev.score_high = r->metric_value;
    out->ev.elapsed_s = (double)r->elapsed_ns * 1e-9;
    out->unit = r->metric_unit;
  } else {
    out->ev.status = r->error == MAPOPT_SIM_TIMEOUT ? MAPOPT_TUNE_TIMEOUT
                                                    : MAPOPT_TUNE_FAILED;
  }
  mapopt_guide_input in = {.output = r->log,
                           .output_len = r->log ? strlen(r->log) : 0,
                           .exit_status = -1,
                           .timed_out = r->error == MAPOPT_SIM_TIMEOUT,
                           .result = r,
                           .mapper = prog,
                           .mapper_text = text,
                           .mapper_len = strlen(text),
                           .run = ev->run,
                           .machine = ev->machine};
  st = analyse(ev, &in, out);
  if (st != MAPOPT_OK)
    mapopt__tune_eval_clear(out);
  return st;
}

/* The simulator is deterministic: a replay simulates again, and the
 * driver checks the result against the record. */
static mapopt_status replay_sim(const mapopt__tune_evaluator *ev,
                                const mapopt_program *prog, const char *text,
                                const mapopt_tune_eval_info *rec,
                                mapopt__tune_eval *out) {
  (void)rec;
  return evaluate_sim(ev, prog, text, out);
}

static void free_sim(mapopt__tune_evaluator *ev) {
  mapopt_sim_plan_free(ev->state);
}

static const mapopt__tune_evaluator_vt sim_vt = {"sim", evaluate_sim,
                                                 replay_sim, free_sim};

static mapopt_status sim_evaluator_new(mapopt__tune_evaluator *ev) {
  mapopt_sim_plan *plan;
  mapopt_status st = mapopt_sim_plan_new(ev->ctx, ev->run, &plan);
  if (st == MAPOPT_OK) {
    ev->vt = &sim_vt;
    ev->state = plan;
  }
  return st;
}

/* ---- a command: real runs ------------------------------------------------ */

typedef struct cmd_state {
  mapopt_evaluator *ev;
  mapopt_sim_plan *plan; /* for the simulated profile */
  double timeout_s;      /* > 0: every run's limit */
  mapopt_eval_timeout_policy policy;
  int repeat_min, repeat_max; /* racing's runs per candidate */
  pthread_mutex_t mu;
  double best_s; /* wall time of one run of the fastest success; 0: none */
  double bar;    /* racing: the best interval's lower end; 0: none */
} cmd_state;

/* The time limit for the next run, and noting a success's wall time. */
static double next_limit(cmd_state *cs) {
  if (cs->timeout_s > 0)
    return cs->timeout_s;
  pthread_mutex_lock(&cs->mu);
  double best = cs->best_s;
  pthread_mutex_unlock(&cs->mu);
  return mapopt_eval_timeout(&cs->policy, best);
}

static void note_success(cmd_state *cs, double wall_s) {
  pthread_mutex_lock(&cs->mu);
  if (wall_s > 0 && (cs->best_s <= 0 || wall_s < cs->best_s))
    cs->best_s = wall_s;
  pthread_mutex_unlock(&cs->mu);
}

/* The tuner's score of a successful result: throughput, higher is better
 * -- the metric itself when larger is better, else its inverse (1/s for a
 * time, as the simulator scores one). False when the metric cannot be a
 * score: a throughput must be finite and above 0, the score of every
 * failure (a negative GFLOP/s would rank below them). */
static bool score_of(const mapopt_eval_result *r, double *score,
                     const char **unit) {
  bool time = !strcmp(r->metric_unit, "s");
  if (r->direction == MAPOPT_EVAL_HIGHER) {
    *score = r->metric;
    *unit = *r->metric_unit ? r->metric_unit : "metric";
  } else {
    if (!(r->metric > 0))
      return false;
    *score = 1 / r->metric;
    *unit = time ? "1/s" : "1/metric";
  }
  return isfinite(*score) && *score > 0;
}

/* A run's metric as a score (score_of's rule), 0 when it cannot be one. */
static double run_score(double metric, mapopt_eval_direction direction) {
  double x = direction == MAPOPT_EVAL_HIGHER ? metric
             : metric > 0                    ? 1 / metric
                                             : 0;
  return isfinite(x) && x > 0 ? x : 0;
}

/* Racing (mapopt_eval_more_fn): one more run while the candidate's
 * interval still reaches the best's. */
static bool race_on(void *ud, const double *values, int n,
                    mapopt_eval_direction direction) {
  cmd_state *cs = ud;
  double scores[1000]; /* mapopt_eval_run_repeats makes at most 1000 */
  int k = n < (int)(sizeof scores / sizeof scores[0])
              ? n
              : (int)(sizeof scores / sizeof scores[0]);
  for (int i = 0; i < k; i++)
    scores[i] = run_score(values[i], direction);
  pthread_mutex_lock(&cs->mu);
  double bar = cs->bar;
  pthread_mutex_unlock(&cs->mu);
  return mapopt__noise_contender(scores, k, bar);
}

/* The interval of a successful result's score, from its runs', and those
 * as recorded (out->scores). */
static mapopt_status take_interval(mapopt_ctx *ctx, const mapopt_eval_result *r,
                                   mapopt__tune_eval *out) {
  double *v = mapopt__calloc(ctx, (size_t)r->runs, sizeof *v);
  if (!v)
    return MAPOPT_ENOMEM;
  for (int i = 0; i < r->runs; i++)
    v[i] = run_score(r->values[i], r->direction);
  double median;
  mapopt__noise_summary(v, r->runs, &median, &out->ev.score_low,
                        &out->ev.score_high);
  out->ev.runs = r->runs;
  out->scores = mapopt__noise_scores_text(ctx, v, r->runs);
  mapopt__free(ctx, v, (size_t)r->runs * sizeof *v);
  return out->scores ? MAPOPT_OK : MAPOPT_ENOMEM;
}

/* AutoGuide on a real run's output (out->output and the exit status,
 * signal and timeout in out). */
static mapopt_status analyse_output(const mapopt__tune_evaluator *ev,
                                    const mapopt_program *prog,
                                    const char *text, mapopt__tune_eval *out) {
  const char *o = out->output ? out->output : "";
  mapopt_guide_input in = {.output = o,
                           .output_len = strlen(o),
                           .exit_status = out->exit_status,
                           .signal = out->signal,
                           .timed_out = out->timed_out,
                           .scored = out->ev.status == MAPOPT_TUNE_OK,
                           .mapper = prog,
                           .mapper_text = text,
                           .mapper_len = strlen(text),
                           .run = ev->run,
                           .machine = ev->machine};
  return analyse(ev, &in, out);
}

/* The diagnostics of a command that cannot run, one per line, into
 * out->error. */
static mapopt_status fail_setup(mapopt_ctx *ctx, const char *why,
                                mapopt__tune_eval *out) {
  out->error = mapopt__text_printf(ctx, "the command cannot be run: %s", why);
  return out->error ? MAPOPT_EIO : MAPOPT_ENOMEM;
}

/* A finished real run into the evaluation: status and score from the
 * result, and what AutoGuide needs. A timed-out run's signal is the one
 * the evaluator sent, not a crash: AutoGuide is told only the timeout. */
static mapopt_status take_result(const mapopt__tune_evaluator *ev,
                                 const mapopt_eval_result *r,
                                 mapopt__tune_eval *out) {
  cmd_state *cs = ev->state;
  static const mapopt_tune_status status_of[] = {
      [MAPOPT_EVAL_OK] = MAPOPT_TUNE_OK,
      [MAPOPT_EVAL_FAILED] = MAPOPT_TUNE_FAILED,
      [MAPOPT_EVAL_SIGNALED] = MAPOPT_TUNE_CRASH,
      [MAPOPT_EVAL_TIMEOUT] = MAPOPT_TUNE_TIMEOUT,
      [MAPOPT_EVAL_NO_METRIC] = MAPOPT_TUNE_FAILED,
      [MAPOPT_EVAL_START_FAILED] = MAPOPT_TUNE_FAILED};
  out->output = mapopt__text_new(ev->ctx, r->output, r->output_len);
  if (!out->output)
    return MAPOPT_ENOMEM;
  out->timed_out = r->status == MAPOPT_EVAL_TIMEOUT;
  out->exit_status = r->exit_code;
  out->signal = out->timed_out ? 0 : r->signal;
  out->ev.status = status_of[r->status];
  if (r->status == MAPOPT_EVAL_OK) {
    if (score_of(r, &out->ev.score, &out->unit)) {
      out->ev.elapsed_s = r->wall_median_s;
      note_success(cs, out->ev.elapsed_s);
      return take_interval(ev->ctx, r, out);
    } else {
      out->ev.status = MAPOPT_TUNE_FAILED;
      out->ev.score = 0;
    }
  }
  return MAPOPT_OK;
}

/* The simulator's prediction of the candidate, as the evaluation's
 * profile (out->ev.result); AutoGuide's findings stay the real run's. */
static mapopt_status add_profile(const mapopt__tune_evaluator *ev,
                                 const mapopt_program *prog,
                                 mapopt__tune_eval *out) {
  cmd_state *cs = ev->state;
  mapopt_sim_options so = {0};
  mapopt_status st = mapopt_sim_run_plan(ev->ctx, ev->machine, cs->plan, prog,
                                         &so, &out->result);
  out->ev.result = out->result;
  return st;
}

/* Runs the command with the candidate. A run that fails is an evaluation;
 * a command that cannot be started, or whose private directory cannot be
 * made, is MAPOPT_EIO: nothing else would run either. A run a stop ended
 * is no evaluation (out->interrupted). */
static mapopt_status evaluate_cmd(const mapopt__tune_evaluator *ev,
                                  const mapopt_program *prog, const char *text,
                                  mapopt__tune_eval *out) {
  cmd_state *cs = ev->state;
  *out = (mapopt__tune_eval){.exit_status = -1};
  mapopt_diags *diags;
  if (mapopt_diags_new(ev->ctx, &diags) != MAPOPT_OK)
    return MAPOPT_ENOMEM;
  mapopt_eval_result *r = NULL;
  mapopt_eval_repeats rep = {cs->repeat_min, cs->repeat_max, race_on, cs};
  mapopt_status st = mapopt_eval_run_repeats(cs->ev, text, strlen(text),
                                             next_limit(cs), &rep, diags, &r);
  if (st == MAPOPT_EIO) {
    const mapopt_diag *d =
        mapopt_diags_count(diags) ? mapopt_diags_get(diags, 0) : NULL;
    st = fail_setup(ev->ctx, d ? d->message : "no private directory", out);
  } else if (st == MAPOPT_OK && r->status == MAPOPT_EVAL_START_FAILED) {
    st = fail_setup(ev->ctx, r->output, out);
  } else if (st == MAPOPT_OK && r->status == MAPOPT_EVAL_INTERRUPTED) {
    out->interrupted = true; /* no evaluation: a resume runs it again */
  } else if (st == MAPOPT_OK) {
    st = take_result(ev, r, out);
    if (st == MAPOPT_OK)
      st = analyse_output(ev, prog, text, out);
    if (st == MAPOPT_OK)
      st = add_profile(ev, prog, out);
  }
  mapopt_eval_result_free(r);
  mapopt_diags_free(diags);
  if (st != MAPOPT_OK && st != MAPOPT_EIO)
    mapopt__tune_eval_clear(out);
  return st;
}

/* A real run is not repeated on resume: the record gives its status and
 * numbers, and its recorded output the findings the optimizer saw. */
static mapopt_status replay_cmd(const mapopt__tune_evaluator *ev,
                                const mapopt_program *prog, const char *text,
                                const mapopt_tune_eval_info *rec,
                                mapopt__tune_eval *out) {
  *out = (mapopt__tune_eval){.exit_status = rec->exit_status,
                             .signal = rec->signal,
                             .timed_out = rec->timed_out};
  out->ev.status = rec->status;
  out->ev.score = rec->metric;
  out->ev.score_low = rec->score_low;
  out->ev.score_high = rec->score_high;
  out->ev.runs = rec->runs;
  out->ev.elapsed_s = rec->elapsed_s;
  if (rec->status == MAPOPT_TUNE_OK)
    note_success(ev->state, rec->elapsed_s);
  const char *o = rec->output ? rec->output : "";
  out->output = mapopt__text_new(ev->ctx, o, strlen(o));
  mapopt_status st =
      out->output ? analyse_output(ev, prog, text, out) : MAPOPT_ENOMEM;
  if (st == MAPOPT_OK)
    st = add_profile(ev, prog, out);
  if (st != MAPOPT_OK)
    mapopt__tune_eval_clear(out);
  return st;
}

static void free_cmd(mapopt__tune_evaluator *ev) {
  cmd_state *cs = ev->state;
  mapopt_eval_free(cs->ev);
  mapopt_sim_plan_free(cs->plan);
  pthread_mutex_destroy(&cs->mu);
  mapopt__free(ev->ctx, cs, sizeof *cs);
}

static const mapopt__tune_evaluator_vt cmd_vt = {"command", evaluate_cmd,
                                                 replay_cmd, free_cmd};

static mapopt_status cmd_evaluator_new(mapopt__tune_evaluator *ev,
                                       const mapopt_tune_command *c,
                                       const volatile sig_atomic_t *stop,
                                       mapopt_diags *diags) {
  if (!c->eval || !(c->timeout_s >= 0) || !isfinite(c->timeout_s))
    return MAPOPT_EINVAL;
  cmd_state *cs = mapopt__calloc(ev->ctx, 1, sizeof *cs);
  if (!cs)
    return MAPOPT_ENOMEM;
  /* The run's stop ends the commands in flight too. */
  mapopt_eval_options eo = *c->eval;
  if (!eo.stop)
    eo.stop = stop;
  mapopt_status st = mapopt_eval_new(ev->ctx, &eo, diags, &cs->ev);
  if (st == MAPOPT_OK)
    st = mapopt_sim_plan_new(ev->ctx, ev->run, &cs->plan);
  if (st != MAPOPT_OK) {
    mapopt_eval_free(cs->ev);
    mapopt__free(ev->ctx, cs, sizeof *cs);
    return st;
  }
  cs->timeout_s = c->timeout_s;
  cs->policy = c->policy;
  cs->repeat_min = eo.repeat < 1 ? 1 : eo.repeat;
  cs->repeat_max = c->repeat_max > 0 ? c->repeat_max : MAPOPT_TUNE_REPEAT_MAX;
  if (cs->repeat_max < cs->repeat_min)
    cs->repeat_max = cs->repeat_min;
  pthread_mutex_init(&cs->mu, NULL);
  ev->vt = &cmd_vt;
  ev->state = cs;
  return MAPOPT_OK;
}

void mapopt__tune_evaluator_race(mapopt__tune_evaluator *ev, double bar) {
  if (ev->vt != &cmd_vt)
    return;
  cmd_state *cs = ev->state;
  pthread_mutex_lock(&cs->mu);
  cs->bar = bar;
  pthread_mutex_unlock(&cs->mu);
}

mapopt_status mapopt__tune_evaluator_check(const mapopt__tune_evaluator *ev,
                                           const char *const *texts, int n,
                                           int rounds, double *scores,
                                           mapopt_diags *diags, bool *ran) {
  *ran = false;
  if (ev->vt != &cmd_vt)
    return MAPOPT_OK;
  cmd_state *cs = ev->state;
  mapopt_eval_repeats once = {1, 1, NULL, NULL};
  mapopt_status st = MAPOPT_OK;
  bool stopped = false;
  for (int k = 0; k < rounds * n && st == MAPOPT_OK && !stopped; k++) {
    /* Round r starts r places further along the list: each mapper runs
     * first, second, ... equally often, so that whatever favours a place
     * in the round (the pause before it, a cache the previous run warmed)
     * is no mapper's alone. */
    int round = k / n, i = (k % n + round) % n;
    const char *text = texts[i];
    double *score_at = &scores[round * n + i];
    mapopt_eval_result *r = NULL;
    *score_at = 0;
    st = mapopt_eval_run_repeats(cs->ev, text, strlen(text), next_limit(cs),
                                 &once, diags, &r);
    if (st != MAPOPT_OK)
      break;
    double score;
    const char *unit;
    if (r->status == MAPOPT_EVAL_OK && score_of(r, &score, &unit))
      *score_at = score;
    stopped = r->status == MAPOPT_EVAL_INTERRUPTED;
    if (r->status == MAPOPT_EVAL_START_FAILED) {
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt tune", 0, 0,
                       "the command cannot be run: %s", r->output);
      st = MAPOPT_EIO;
    }
    mapopt_eval_result_free(r);
  }
  *ran = st == MAPOPT_OK && !stopped;
  return st;
}

/* ---- choosing one -------------------------------------------------------- */

mapopt_status mapopt__tune_evaluator_new(mapopt_ctx *ctx,
                                         const mapopt_tune_problem *problem,
                                         mapopt_guide_level level,
                                         const volatile sig_atomic_t *stop,
                                         mapopt_diags *diags,
                                         mapopt__tune_evaluator **out) {
  mapopt__tune_evaluator *ev = mapopt__calloc(ctx, 1, sizeof *ev);
  if (!ev)
    return MAPOPT_ENOMEM;
  *ev = (mapopt__tune_evaluator){NULL,         ctx,   problem->machine,
                                 problem->run, level, NULL};
  mapopt_status st = problem->command
                         ? cmd_evaluator_new(ev, problem->command, stop, diags)
                         : sim_evaluator_new(ev);
  if (st != MAPOPT_OK) {
    mapopt__free(ctx, ev, sizeof *ev);
    return st;
  }
  *out = ev;
  return MAPOPT_OK;
}

void mapopt__tune_evaluator_free(mapopt__tune_evaluator *ev) {
  if (!ev)
    return;
  ev->vt->free(ev);
  mapopt__free(ev->ctx, ev, sizeof *ev);
}

/* jansson's string of s, or null for NULL. */
static json_t *str_or_null(const char *s) {
  return s ? mapopt__json_text(s) : json_null();
}

mapopt_status mapopt__tune_evaluator_id(mapopt_ctx *ctx,
                                        const mapopt_tune_problem *problem,
                                        char **out) {
  *out = NULL;
  const mapopt_tune_command *c = problem->command;
  if (!c || !c->eval)
    return MAPOPT_OK;
  const mapopt_eval_options *e = c->eval;
  json_t *o = json_object(), *env = json_array();
  if (!o || !env) {
    json_decref(o);
    json_decref(env);
    return MAPOPT_ENOMEM;
  }
  for (const char *const *v = e->env; v && *v; v++)
    json_array_append_new(env, mapopt__json_text(*v));
  json_object_set_new(o, "run", str_or_null(e->run));
  json_object_set_new(o, "shell", json_boolean(e->shell));
  json_object_set_new(o, "metric", str_or_null(e->metric));
  json_object_set_new(o, "direction",
                      json_string(mapopt_eval_direction_name(e->direction)
                                      ? mapopt_eval_direction_name(e->direction)
                                      : "?"));
  json_object_set_new(o, "repeat", json_integer(e->repeat < 1 ? 1 : e->repeat));
  if (c->repeat_max > 0)
    json_object_set_new(o, "repeat_max", json_integer(c->repeat_max));
  /* Screening changes which candidates run: another run. */
  if (c->screen > 0)
    json_object_set_new(o, "screen", json_integer(c->screen));
  json_object_set_new(o, "workdir", str_or_null(e->workdir));
  json_object_set_new(o, "env", env);
  json_object_set_new(o, "output_cap", json_integer((json_int_t)e->output_cap));
  json_object_set_new(o, "timeout_s", json_real(c->timeout_s));
  json_object_set_new(o, "timeout_policy",
                      json_pack("[f, f, f]", c->policy.factor,
                                c->policy.floor_s, c->policy.first_s));
  char *text = json_dumps(o, JSON_COMPACT);
  json_decref(o);
  if (!text)
    return MAPOPT_ENOMEM;
  *out = mapopt__text_new(ctx, text, strlen(text));
  free(text);
  return *out ? MAPOPT_OK : MAPOPT_ENOMEM;
}
