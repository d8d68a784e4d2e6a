/*
 * What the tuning commands (space, tune, bench, report) share: setting an
 * application run up on a machine, the options of tune and bench with the
 * llm optimizer's settings and usage, the flag of the signals that stop a
 * run, and the paper's table -- runs grouped by benchmark (simulated and
 * real runs apart) and optimizer, with the statistics of their final best
 * throughput normalized to the expert mapper, and for llm rows the share
 * of replies that parse and run and the tokens spent.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"

int cli_target_open(mapopt_ctx *ctx, const char *cmd, const char *app_arg,
                    const char *size, const char *machine_arg,
                    mapopt_diags *diags, cli_target *t) {
  memset(t, 0, sizeof *t);
  cli_pipeline_args pa = {.machine = machine_arg,
                          .app = app_arg,
                          .size = size,
                          .iterations = -1,
                          .warmup = -1};
  int rc = cli_pipeline_setup(ctx, cmd, &pa, diags, &t->sim);
  if (rc != EXIT_VALID)
    return rc;
  /* The spec returned by the resolution points into app_arg, after ':'. */
  bool in_arg = t->sim.spec && t->sim.spec != size;
  size_t n = in_arg ? (size_t)(t->sim.spec - 1 - app_arg) : strlen(app_arg);
  t->name = malloc(n + 1);
  if (!t->name) {
    fprintf(stderr, "mapopt %s: out of memory\n", cmd);
    return EXIT_INVALID;
  }
  memcpy(t->name, app_arg, n);
  t->name[n] = 0;
  /* Only a built-in application (not a file that happens to share its
   * name) has shipped mappers. */
  if (mapopt_app_builtin_json(t->name)) {
    t->expert = mapopt_app_builtin_mapper(t->name, "expert");
    t->deflt = mapopt_app_builtin_mapper(t->name, "default");
  }
  return EXIT_VALID;
}

void cli_target_close(cli_target *t) {
  cli_pipeline_close(&t->sim);
  free(t->name);
  memset(t, 0, sizeof *t);
}

void cli_tune_defaults(cli_tune_settings *s) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
  mapopt_llm_config c;
  mapopt_llm_config_init(&c);
  *s = (cli_tune_settings){.machine = "p100x4",
                           .db = "mapopt-tune.db",
                           .feedback = "full",
                           .budget = 10,
                           .jobs = cpus < 1 ? 1
                                   : cpus > MAPOPT_TUNE_MAX_JOBS
                                       ? MAPOPT_TUNE_MAX_JOBS
                                       : cpus,
                           .samples = 1,
                           .history = MAPOPT_LLM_DEFAULT_HISTORY,
                           .temperature = c.temperature};
}

/* The llm optimizer's options start here in the tables below. */
enum { FIRST_LLM_STR = 3, FIRST_LLM_INT = 4 };

int cli_tune_option(const char *cmd, const char *o, const char *v,
                    cli_tune_settings *s, bool *taken) {
  static const char *const strs[] = {"--machine", "--db", "--feedback",
                                     "--llm-base-url", "--llm-model"};
  const char **str_at[] = {&s->machine, &s->db, &s->feedback, &s->llm_url,
                           &s->llm_model};
  static const char *const ints[] = {"--budget", "--seed",    "--jobs",
                                     "--batch",  "--samples", "--history"};
  int64_t *int_at[] = {&s->budget, &s->seed,    &s->jobs,
                       &s->batch,  &s->samples, &s->history};
  static const int64_t lo[] = {1, 0, 1, 0, 1, 1};
  static const int64_t hi[] = {
      100000000, INT64_MAX / 2, MAPOPT_TUNE_MAX_JOBS, 4096, 64, 1000};
  /* All llm: the temperature, and prices in USD per million tokens. */
  static const char *const reals[] = {"--temperature", "--price-in",
                                      "--price-out"};
  double *real_at[] = {&s->temperature, &s->price_in, &s->price_out};
  static const double rhi[] = {2, 1e6, 1e6};
  *taken = true;
  if (!strcmp(o, "--no-portable")) {
    s->no_portable = true;
    return EXIT_VALID;
  }
  for (size_t k = 0; k < sizeof strs / sizeof strs[0]; k++)
    if (!strcmp(o, strs[k])) {
      *str_at[k] = v;
      if (k >= FIRST_LLM_STR && !s->llm_flag)
        s->llm_flag = strs[k];
      return EXIT_VALID;
    }
  for (size_t k = 0; k < sizeof ints / sizeof ints[0]; k++)
    if (!strcmp(o, ints[k])) {
      if (k >= FIRST_LLM_INT && !s->llm_flag)
        s->llm_flag = ints[k];
      if (cli_parse_i64(v, lo[k], hi[k], int_at[k]))
        return EXIT_VALID;
      return cli_usage_error(cmd, "%s must be an integer from %lld to %lld", o,
                             (long long)lo[k], (long long)hi[k]);
    }
  for (size_t k = 0; k < sizeof reals / sizeof reals[0]; k++)
    if (!strcmp(o, reals[k])) {
      if (!s->llm_flag)
        s->llm_flag = reals[k];
      if (cli_parse_double(v, 0, rhi[k], real_at[k]))
        return EXIT_VALID;
      return cli_usage_error(cmd, "%s must be a number from 0 to %g", o,
                             rhi[k]);
    }
  *taken = false;
  return EXIT_VALID;
}

/* The one mutable global of the program: a signal handler can reach
 * nothing else. */
static volatile sig_atomic_t interrupted;

static void on_signal(int sig) {
  interrupted = sig;
}

const volatile sig_atomic_t *cli_catch_signals(void) {
  /* Ctrl-C, Ctrl-\, a closed terminal, a scheduler's time limit (SIGTERM
   * first): each ends what is in flight and leaves the run resumable. */
  static const int sigs[] = {SIGINT, SIGQUIT, SIGHUP, SIGTERM};
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigemptyset(&sa.sa_mask);
  /* The second one finds the default action back and kills at once. */
  sa.sa_flags = SA_RESETHAND;
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++)
    sigaction(sigs[i], &sa, NULL);
  return &interrupted;
}

bool cli_known_optimizer(const char *name) {
  for (const char *const *n = mapopt_optimizer_names(); *n; n++)
    if (!strcmp(*n, name))
      return true;
  return false;
}

int cli_unknown_optimizer(const char *cmd, const char *name) {
  char built[256] = "";
  for (const char *const *n = mapopt_optimizer_names(); *n; n++)
    snprintf(built + strlen(built), sizeof built - strlen(built), "%s%s",
             n == mapopt_optimizer_names() ? "" : ", ", *n);
  return cli_usage_error(cmd, "unknown optimizer '%s' (this build has: %s)",
                         name, built);
}

bool cli_uses_feedback(const char *optimizer) {
  return !strcmp(optimizer, "guided") || cli_is_llm(optimizer);
}

bool cli_is_llm(const char *optimizer) {
  return !strcmp(optimizer, "llm");
}

int cli_batch_of(const cli_tune_settings *s, const char *optimizer) {
  return (int)(cli_is_llm(optimizer) ? s->samples : s->batch);
}

int cli_check_llm_flags(const char *cmd, const cli_tune_settings *s,
                        bool uses_llm) {
  if (s->llm_flag && !uses_llm)
    return cli_usage_error(cmd, "%s is for the llm optimizer only",
                           s->llm_flag);
  if (uses_llm && s->batch && !strcmp(cmd, "tune"))
    return cli_usage_error(cmd, "the llm optimizer's batch is its samples: "
                                "give --samples instead of --batch");
  return EXIT_VALID;
}

int cli_llm_setup(const char *cmd, const cli_tune_settings *s,
                  mapopt_tune_llm *out) {
  *out = (mapopt_tune_llm){.history = (size_t)s->history,
                           .allow_unportable = s->no_portable};
  mapopt_llm_config *c = &out->client;
  mapopt_llm_config_init(c);
  mapopt_llm_config_from_env(c, NULL, NULL);
  if (s->llm_url)
    c->base_url = s->llm_url;
  if (s->llm_model)
    c->model = s->llm_model;
  c->temperature = s->temperature;
  c->samples = (int)s->samples;
  c->price_in = s->price_in;
  c->price_out = s->price_out;
  char err[256];
  if (mapopt_llm_config_check(c, err, sizeof err) == MAPOPT_OK)
    return EXIT_VALID;
  fprintf(stderr, "mapopt %s: %s (or give --llm-base-url and --llm-model)\n",
          cmd, err);
  return EXIT_INVALID;
}

void cli_print_llm_usage(FILE *f, const mapopt_tune_llm_usage *u) {
  if (!u->calls)
    return;
  fprintf(f,
          "llm: %lld calls (%lld failed), %lld replies, %lld prompt + %lld "
          "completion tokens, %.1f s",
          (long long)u->calls, (long long)u->failed_calls,
          (long long)u->replies, (long long)u->prompt_tokens,
          (long long)u->completion_tokens, u->latency_s);
  if (u->cost > 0)
    fprintf(f, ", cost %.4f USD", u->cost);
  fputc('\n', f);
}

json_t *cli_llm_usage_json(const mapopt_tune_llm_usage *u) {
  if (!u->calls)
    return json_null();
  return json_pack(
      "{s:I,s:I,s:I,s:I,s:I,s:f,s:f}", "calls", (json_int_t)u->calls,
      "failed_calls", (json_int_t)u->failed_calls, "replies",
      (json_int_t)u->replies, "prompt_tokens", (json_int_t)u->prompt_tokens,
      "completion_tokens", (json_int_t)u->completion_tokens, "latency_s",
      u->latency_s, "cost_usd", u->cost);
}

void cli_llm_figures_of(const cli_row *row, cli_llm_figures *f) {
  double e = (double)(row->evaluations ? row->evaluations : 1);
  double runs = (double)(row->nruns ? row->nruns : 1);
  double tokens = (double)(row->llm.prompt_tokens + row->llm.completion_tokens);
  double bests = row->stats.mean * (double)row->nruns;
  *f = (cli_llm_figures){(double)row->compiled / e, (double)row->succeeded / e,
                         tokens / runs, bests > 0 ? tokens / bests : -1,
                         row->llm.cost / runs};
}

bool cli_default_is_best(double best_score, double default_score,
                         double elapsed_s, double lower_bound_s,
                         int64_t evaluations, char *why, size_t n) {
  if (!(default_score > 0) || best_score > default_score * (1 + 1e-9))
    return false;
  double over = lower_bound_s > 0 ? elapsed_s / lower_bound_s : 0;
  if (over >= 1 && over < 1.01)
    snprintf(why, n,
             "its time is within %.1f%% of the lower bound (%.6g s against "
             "%.6g s), so no mapper can be much faster",
             100 * (over - 1), elapsed_s, lower_bound_s);
  else
    snprintf(why, n, "none of the %lld mappers evaluated beat it",
             (long long)evaluations);
  return true;
}

double cli_normalized(const mapopt_tune_run_info *r, double score,
                      const char **base) {
  if (r->expert_score > 0) {
    *base = "expert";
    return score / r->expert_score;
  }
  if (r->default_score > 0) {
    *base = "default";
    return score / r->default_score;
  }
  *base = NULL;
  return score;
}

/* ---- the table ----------------------------------------------------------- */

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Statistics over n values (0 for a run that found nothing valid). The
 * std is the sample standard deviation (0 for one run). */
static void stats_of(double *v, size_t n, size_t valid, cli_stats *s) {
  *s = (cli_stats){.runs = n, .valid = valid};
  if (!n)
    return;
  double sum = 0;
  for (size_t i = 0; i < n; i++)
    sum += v[i];
  s->mean = sum / (double)n;
  double ss = 0;
  for (size_t i = 0; i < n; i++)
    ss += (v[i] - s->mean) * (v[i] - s->mean);
  s->std = n > 1 ? sqrt(ss / (double)(n - 1)) : 0;
  qsort(v, n, sizeof *v, cmp_double);
  s->worst = v[0];
  s->best = v[n - 1];
  s->median = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static bool same(const char *a, const char *b) {
  return a == b || (a && b && !strcmp(a, b));
}

static void row_label(const mapopt_tune_run_info *r, char *buf, size_t n) {
  if (r->llm_model) /* llm runs of different models are not one row */
    snprintf(buf, n, "%s:%s(%s)@%lld", r->optimizer, r->llm_model, r->feedback,
             (long long)r->budget);
  else if (cli_uses_feedback(r->optimizer))
    snprintf(buf, n, "%s(%s)@%lld", r->optimizer, r->feedback,
             (long long)r->budget);
  else
    snprintf(buf, n, "%s@%lld", r->optimizer, (long long)r->budget);
}

static bool wanted(const mapopt_tune_run_info *r, const int64_t *ids,
                   size_t nids) {
  if (!ids)
    return true;
  for (size_t i = 0; i < nids; i++)
    if (ids[i] == r->id)
      return true;
  return false;
}

/* The group of r, appended when new; NULL when out of memory. */
static cli_group *group_of(cli_table *t, const mapopt_tune_run_info *r) {
  for (size_t g = 0; g < t->ngroups; g++)
    if (same(t->groups[g].app, r->app) && same(t->groups[g].size, r->size) &&
        same(t->groups[g].machine, r->machine) &&
        same(t->groups[g].evaluator, r->evaluator))
      return &t->groups[g];
  cli_group *n = realloc(t->groups, (t->ngroups + 1) * sizeof *n);
  if (!n)
    return NULL;
  t->groups = n;
  cli_group *g = &t->groups[t->ngroups++];
  *g = (cli_group){r->app, r->size, r->machine, NULL, NULL, 0, r->evaluator};
  return g;
}

/* The row of r in g, appended when new; NULL when out of memory. */
static cli_row *row_of(cli_group *g, const mapopt_tune_run_info *r) {
  char label[96];
  row_label(r, label, sizeof label);
  cli_row *row = NULL;
  for (size_t i = 0; i < g->nrows && !row; i++)
    if (!strcmp(g->rows[i].label, label))
      row = &g->rows[i];
  if (!row) {
    cli_row *n = realloc(g->rows, (g->nrows + 1) * sizeof *n);
    if (!n)
      return NULL;
    g->rows = n;
    row = &g->rows[g->nrows++];
    *row = (cli_row){0};
    memcpy(row->label, label, sizeof label);
  }
  const mapopt_tune_run_info **runs =
      realloc(row->runs, (row->nruns + 1) * sizeof *runs);
  if (!runs)
    return NULL;
  row->runs = runs;
  row->runs[row->nruns++] = r;
  row->evaluations += r->evaluations;
  row->compiled += r->compiled;
  row->succeeded += r->succeeded;
  mapopt_tune_llm_usage *u = &row->llm;
  u->calls += r->llm.calls;
  u->failed_calls += r->llm.failed_calls;
  u->replies += r->llm.replies;
  u->prompt_tokens += r->llm.prompt_tokens;
  u->completion_tokens += r->llm.completion_tokens;
  u->latency_s += r->llm.latency_s;
  u->cost += r->llm.cost;
  return row;
}

bool cli_table_build(const mapopt_tune_history *h, const int64_t *ids,
                     size_t nids, cli_table *t) {
  *t = (cli_table){0};
  for (size_t i = 0; i < mapopt_tune_history_count(h); i++) {
    const mapopt_tune_run_info *r = mapopt_tune_history_run(h, i);
    if (!wanted(r, ids, nids))
      continue;
    cli_group *g = group_of(t, r);
    if (!g || !row_of(g, r)) {
      cli_table_free(t);
      return false;
    }
  }
  for (size_t gi = 0; gi < t->ngroups; gi++) {
    cli_group *g = &t->groups[gi];
    for (size_t ri = 0; ri < g->nrows; ri++) {
      cli_row *row = &g->rows[ri];
      double *v = malloc((row->nruns ? row->nruns : 1) * sizeof *v);
      if (!v) {
        cli_table_free(t);
        return false;
      }
      size_t valid = 0;
      for (size_t k = 0; k < row->nruns; k++) {
        const mapopt_tune_run_info *r = row->runs[k];
        const char *base;
        double x = cli_normalized(r, r->best_score, &base);
        v[k] = r->best >= 0 ? x : 0;
        valid += r->best >= 0;
        if (!g->base)
          g->base = base;
      }
      stats_of(v, row->nruns, valid, &row->stats);
      free(v);
    }
  }
  return true;
}

void cli_table_free(cli_table *t) {
  for (size_t g = 0; g < t->ngroups; g++) {
    for (size_t r = 0; r < t->groups[g].nrows; r++)
      free(t->groups[g].rows[r].runs);
    free(t->groups[g].rows);
  }
  free(t->groups);
  *t = (cli_table){0};
}
