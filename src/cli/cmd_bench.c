/*
 * `mapopt bench`: the paper's experiment. For each application and
 * optimizer (and, for optimizers that read feedback, each feedback level:
 * the ablation), R tuning runs with seeds S..S+R-1 at budget N; the table
 * gives the best throughput each run found, normalized to the expert
 * mapper: mean, std, worst, median, best and valid runs.
 *
 * Every run goes through the tuning driver into the database. A run
 * already recorded with the same settings is reused (runs are
 * deterministic), and an interrupted one is resumed, so rerunning an
 * interrupted bench continues it. Rows of the llm optimizer (only when
 * named: it needs a model) get a second table: the share of its replies
 * that parse and that run, and the tokens it spent.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"

const char cli_bench_usage[] =
    "usage: mapopt bench [OPTIONS]\n\n"
    "Runs every optimizer on every application R times (seeds S..S+R-1) at\n"
    "a budget of N evaluations and prints the throughput of the best mapper\n"
    "each run found, normalized to the expert mapper: mean, std (sample),\n"
    "worst, median, best, and the runs that found a valid mapper. Runs\n"
    "already in the database with the same settings are reused; an\n"
    "interrupted bench continues where it stopped when rerun.\n\n"
    "  --apps A,B,...|all       applications (default all built-ins)\n"
    "  --optimizers O1,O2,...   optimizers (default all but llm: guided,\n"
    "                           random, opentuner, ccd)\n"
    "  --budget N               evaluations per run (default 10)\n"
    "  --runs R                 runs per application and optimizer (default "
    "5)\n"
    "  --seed S                 the first seed (default 0)\n"
    "  --machine M              machine preset or file (default p100x4)\n"
    "  --size S                 every application's size (default: each\n"
    "                           one's paper size)\n"
    "  --feedback L1,L2,...     feedback levels (raw, explain, suggest,\n"
    "                           full; default full); optimizers that read\n"
    "                           feedback (guided) get one row per level;\n"
    "                           the others run at full\n"
    "  --jobs J, --batch B      as for mapopt tune (batch 0: each\n"
    "                           optimizer's own)\n"
    "  --db FILE                the tuning database (default mapopt-tune.db)\n"
    "  --quiet                  no per-run lines on stderr\n"
    "  --json                   print the table as JSON\n"
    "  --samples, --temperature, --history, --llm-base-url, --llm-model,\n"
    "  --price-in, --price-out  the llm optimizer's, as for mapopt tune\n\n"
    "Exit status: 0 ok, 1 invalid input or interrupted, 2 usage error.\n";

typedef struct bench_args {
  const char *apps, *optimizers, *size;
  cli_tune_settings set; /* set.feedback: a list of levels */
  int64_t runs;
  bool json, quiet;
  mapopt_tune_llm llm; /* when llm is among the optimizers */
} bench_args;

/* Splits a comma-separated list in place into a NULL-terminated vector
 * (malloc'd; NULL when out of memory). */
static char **split(char *list) {
  size_t n = 1;
  for (char *p = list; *p; p++)
    n += *p == ',';
  char **v = calloc(n + 1, sizeof *v);
  if (!v)
    return NULL;
  size_t i = 0;
  for (char *tok = list, *next; tok; tok = next) {
    next = strchr(tok, ',');
    if (next)
      *next++ = 0;
    if (*tok)
      v[i++] = tok;
  }
  return v;
}

static int parse_bench_args(int argc, char **argv, bench_args *a) {
  *a = (bench_args){.apps = "all", .runs = 5};
  cli_tune_defaults(&a->set);
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v;
    static const char *const valued[] = {
        "--apps",      "--optimizers",  "--size",
        "--runs",      "--machine",     "--feedback",
        "--db",        "--budget",      "--seed",
        "--jobs",      "--batch",       "--samples",
        "--history",   "--temperature", "--llm-base-url",
        "--llm-model", "--price-in",    "--price-out",
        NULL};
    bool taken;
    int rc = cli_option_value("bench", valued, argc, argv, &i, &v);
    if (rc == EXIT_VALID)
      rc = cli_tune_option("bench", o, v, &a->set, &taken);
    if (rc != EXIT_VALID)
      return rc;
    if (taken)
      continue;
    if (!strcmp(o, "--json"))
      a->json = true;
    else if (!strcmp(o, "--quiet"))
      a->quiet = true;
    else if (!strcmp(o, "--apps"))
      a->apps = v;
    else if (!strcmp(o, "--optimizers"))
      a->optimizers = v;
    else if (!strcmp(o, "--size"))
      a->size = v;
    else if (!strcmp(o, "--runs")) {
      if (!cli_parse_i64(v, 1, 10000, &a->runs))
        return cli_usage_error("bench",
                               "--runs must be an integer from 1 to 10000");
    } else
      return cli_usage_error("bench", "unknown argument '%s'", o);
  }
  return EXIT_VALID;
}

/* The lists the bench runs over, checked. */
typedef struct bench_lists {
  char *apps_buf, *opts_buf, *levels_buf;
  char **apps, **opts, **levels;
} bench_lists;

static void free_lists(bench_lists *l) {
  free(l->apps_buf);
  free(l->opts_buf);
  free(l->levels_buf);
  free(l->apps);
  free(l->opts);
  free(l->levels);
}

/* The names joined by commas; without llm when skip_llm. */
static char *join_names(const char *const *names, bool skip_llm) {
  size_t n = 1;
  for (const char *const *p = names; *p; p++)
    n += strlen(*p) + 1;
  char *s = malloc(n);
  if (!s)
    return NULL;
  s[0] = 0;
  for (const char *const *p = names; *p; p++) {
    if (skip_llm && cli_is_llm(*p))
      continue;
    if (*s)
      strcat(s, ",");
    strcat(s, *p);
  }
  return s;
}

static int make_lists(bench_args *a, bench_lists *l) {
  *l = (bench_lists){0};
  l->apps_buf = strcmp(a->apps, "all")
                    ? strdup(a->apps)
                    : join_names(mapopt_app_builtins(), false);
  l->opts_buf = a->optimizers ? strdup(a->optimizers)
                              : join_names(mapopt_optimizer_names(), true);
  l->levels_buf = strdup(a->set.feedback);
  if (!l->apps_buf || !l->opts_buf || !l->levels_buf ||
      !(l->apps = split(l->apps_buf)) || !(l->opts = split(l->opts_buf)) ||
      !(l->levels = split(l->levels_buf))) {
    fprintf(stderr, "mapopt bench: out of memory\n");
    return EXIT_INVALID;
  }
  if (!l->apps[0] || !l->opts[0] || !l->levels[0])
    return cli_usage_error("bench", "empty --apps, --optimizers or "
                                    "--feedback list");
  bool llm = false;
  for (char **o = l->opts; *o; o++) {
    if (!cli_known_optimizer(*o))
      return cli_unknown_optimizer("bench", *o);
    llm |= cli_is_llm(*o);
  }
  int rc = cli_check_llm_flags("bench", &a->set, llm);
  if (rc != EXIT_VALID)
    return rc;
  mapopt_guide_level level;
  for (char **v = l->levels; *v; v++)
    if (mapopt_guide_level_parse(*v, &level) != MAPOPT_OK)
      return cli_usage_error("bench",
                             "unknown feedback level '%s' (raw, "
                             "explain, suggest or full)",
                             *v);
  return llm ? cli_llm_setup("bench", &a->set, &a->llm) : EXIT_VALID;
}

/* Run ids of the bench, in order. */
typedef struct id_list {
  int64_t *ids;
  size_t n, cap;
} id_list;

static bool push_id(id_list *l, int64_t id) {
  if (l->n == l->cap) {
    size_t cap = l->cap ? l->cap * 2 : 64;
    int64_t *n = realloc(l->ids, cap * sizeof *n);
    if (!n)
      return false;
    l->ids = n;
    l->cap = cap;
  }
  l->ids[l->n++] = id;
  return true;
}

/* Runs (or reuses) every run of one application. */
static int bench_app(mapopt_ctx *ctx, mapopt_tune_db *db, const bench_args *a,
                     const bench_lists *l, const char *app,
                     const volatile sig_atomic_t *stop, mapopt_diags *diags,
                     id_list *ids) {
  cli_target t;
  int rc =
      cli_target_open(ctx, "bench", app, a->size, a->set.machine, diags, &t);
  mapopt_tune_problem p = {t.sim.machine, t.sim.run, t.expert, t.deflt, NULL};
  for (char **o = l->opts; *o && rc == EXIT_VALID; o++) {
    /* Optimizers outside the ablation run once, at the full level: they
     * are told all they use (ccd reads the profile). */
    for (char **lv = l->levels; *lv && rc == EXIT_VALID; lv++) {
      if (lv != l->levels && !cli_uses_feedback(*o))
        break;
      const char *level = cli_uses_feedback(*o) ? *lv : "full";
      for (int64_t r = 0; r < a->runs && rc == EXIT_VALID; r++) {
        mapopt_tune_config c = {t.name,
                                t.sim.spec,
                                a->set.machine,
                                *o,
                                (uint64_t)(a->set.seed + r),
                                a->set.budget,
                                cli_batch_of(&a->set, *o),
                                level,
                                NULL,
                                NULL,
                                0,
                                cli_is_llm(*o) ? &a->llm : NULL};
        mapopt_tune_options opts = {(int)a->set.jobs, true, stop, NULL, NULL};
        mapopt_tune_outcome out;
        if (mapopt_tune_run(ctx, db, &p, &c, &opts, diags, &out) != MAPOPT_OK) {
          rc = EXIT_INVALID;
          break;
        }
        if (out.end == MAPOPT_TUNE_END_INTERRUPTED)
          rc = EXIT_INVALID;
        else if (!push_id(ids, out.run))
          rc = EXIT_INVALID;
        if (!a->quiet && out.end != MAPOPT_TUNE_END_INTERRUPTED) {
          fprintf(stderr, "%s %s%s%s%s seed %lld: ", t.name, *o,
                  cli_uses_feedback(*o) ? "(" : "",
                  cli_uses_feedback(*o) ? *lv : "",
                  cli_uses_feedback(*o) ? ")" : "", (long long)c.seed);
          if (out.best < 0)
            fprintf(stderr, "no valid mapper");
          else if (out.expert_score > 0)
            fprintf(stderr, "%.3fx expert", out.best_score / out.expert_score);
          else
            fprintf(stderr, "%.6g %s", out.best_score,
                    out.unit ? out.unit : "");
          fprintf(stderr, " (run %lld%s)\n", (long long)out.run,
                  out.resumed && out.replayed == out.evaluations
                      ? ", from the database"
                      : "");
        }
        mapopt_tune_outcome_clear(&out);
      }
    }
  }
  cli_target_close(&t);
  return rc;
}

static const char *group_name(const cli_group *g, char *buf, size_t n) {
  snprintf(buf, n, "%s%s%s%s", g->app, g->size ? ":" : "",
           g->size ? g->size : "",
           g->base && !strcmp(g->base, "expert") ? ""
           : g->base                             ? " (vs default)"
                                                 : " (raw)");
  return buf;
}

/* The llm rows' second table: replies that parse and run, tokens. */
static void print_llm_table(const cli_table *t, int wn, int wl) {
  bool any = false;
  char name[256];
  for (size_t gi = 0; gi < t->ngroups; gi++) {
    group_name(&t->groups[gi], name, sizeof name);
    for (size_t ri = 0; ri < t->groups[gi].nrows; ri++) {
      const cli_row *r = &t->groups[gi].rows[ri];
      if (!cli_is_llm(r->runs[0]->optimizer))
        continue;
      if (!any)
        printf("\nthe llm optimizer's replies: the share of evaluated "
               "mappers that compile (parse) and run, and the tokens spent\n"
               "per run and per 1.0x of the normalized best\n\n"
               "%-*s  %-*s %6s %6s %7s %6s %6s %11s %11s %9s\n",
               wn, "benchmark", wl, "optimizer", "calls", "failed", "replies",
               "parse", "run", "tokens/run", "tokens/1.0x", "USD/run");
      any = true;
      cli_llm_figures f;
      cli_llm_figures_of(r, &f);
      printf("%-*s  %-*s %6lld %6lld %7lld %5.0f%% %5.0f%% %11.0f ", wn, name,
             wl, r->label, (long long)r->llm.calls,
             (long long)r->llm.failed_calls, (long long)r->llm.replies,
             100 * f.parse, 100 * f.run, f.tokens_per_run);
      if (f.tokens_per_x >= 0)
        printf("%11.0f", f.tokens_per_x);
      else
        printf("%11s", "-");
      printf(" %9.4f\n", f.cost_per_run);
    }
  }
}

static void print_table_text(const bench_args *a, const cli_table *t) {
  char name[256];
  char batch[32] = "each optimizer's own";
  if (a->set.batch)
    snprintf(batch, sizeof batch, "%lld", (long long)a->set.batch);
  printf("mapopt bench: machine %s, budget %lld, seeds %lld..%lld (%lld runs "
         "each), batch %s, size %s\n",
         a->set.machine, (long long)a->set.budget, (long long)a->set.seed,
         (long long)(a->set.seed + a->runs - 1), (long long)a->runs, batch,
         a->size ? a->size : "paper (each app's default)");
  printf("throughput of the best mapper found, normalized to the expert "
         "mapper (higher is better)\n");
  /* An application that ships no expert: its default mapper, which every
   * run evaluates first (docs/tuning.md). */
  for (size_t gi = 0; gi < t->ngroups; gi++) {
    const char *base = t->groups[gi].base;
    if (!base || strcmp(base, "expert"))
      printf("  %s: x the %s (it ships no expert mapper)\n",
             group_name(&t->groups[gi], name, sizeof name),
             base ? "default mapper" : "raw metric: no baseline ran");
  }
  putchar('\n');
  /* column widths: the longest benchmark and row names */
  int wn = 9, wl = 9;
  for (size_t gi = 0; gi < t->ngroups; gi++) {
    int n = (int)strlen(group_name(&t->groups[gi], name, sizeof name));
    wn = n > wn ? n : wn;
    for (size_t ri = 0; ri < t->groups[gi].nrows; ri++) {
      int l = (int)strlen(t->groups[gi].rows[ri].label);
      wl = l > wl ? l : wl;
    }
  }
  printf("%-*s  %-*s %8s %8s %8s %8s %8s  %s\n", wn, "benchmark", wl,
         "optimizer", "mean", "std", "worst", "median", "best", "valid");
  for (size_t gi = 0; gi < t->ngroups; gi++) {
    group_name(&t->groups[gi], name, sizeof name);
    for (size_t ri = 0; ri < t->groups[gi].nrows; ri++) {
      const cli_row *r = &t->groups[gi].rows[ri];
      const cli_stats *s = &r->stats;
      printf("%-*s  %-*s %8.3f %8.3f %8.3f %8.3f %8.3f  %zu/%zu\n", wn, name,
             wl, r->label, s->mean, s->std, s->worst, s->median, s->best,
             s->valid, s->runs);
    }
  }
  print_llm_table(t, wn, wl);
}

static void print_table_json(const bench_args *a, const cli_table *t) {
  json_t *j = json_object(), *rows = json_array(), *seeds = json_array();
  for (int64_t r = 0; r < a->runs; r++)
    json_array_append_new(seeds, json_integer(a->set.seed + r));
  json_object_set_new(j, "machine", json_string(a->set.machine));
  json_object_set_new(j, "budget", json_integer(a->set.budget));
  json_object_set_new(j, "batch", json_integer(a->set.batch));
  json_object_set_new(j, "size", a->size ? json_string(a->size) : json_null());
  json_object_set_new(j, "seeds", seeds);
  json_object_set_new(j, "db", json_string(a->set.db));
  for (size_t gi = 0; gi < t->ngroups; gi++) {
    const cli_group *g = &t->groups[gi];
    for (size_t ri = 0; ri < g->nrows; ri++) {
      const cli_row *r = &g->rows[ri];
      json_t *o = json_object(), *ids = json_array();
      for (size_t k = 0; k < r->nruns; k++)
        json_array_append_new(ids, json_integer(r->runs[k]->id));
      json_object_set_new(o, "app", json_string(g->app));
      json_object_set_new(o, "size",
                          g->size ? json_string(g->size) : json_null());
      json_object_set_new(o, "normalized_to",
                          g->base ? json_string(g->base) : json_null());
      json_object_set_new(o, "optimizer", json_string(r->runs[0]->optimizer));
      json_object_set_new(o, "feedback", json_string(r->runs[0]->feedback));
      json_object_set_new(o, "row", json_string(r->label));
      json_object_set_new(o, "runs", json_integer((json_int_t)r->stats.runs));
      json_object_set_new(o, "valid", json_integer((json_int_t)r->stats.valid));
      json_object_set_new(o, "mean", json_real(r->stats.mean));
      json_object_set_new(o, "std", json_real(r->stats.std));
      json_object_set_new(o, "worst", json_real(r->stats.worst));
      json_object_set_new(o, "median", json_real(r->stats.median));
      json_object_set_new(o, "best", json_real(r->stats.best));
      json_object_set_new(o, "run_ids", ids);
      if (cli_is_llm(r->runs[0]->optimizer)) {
        cli_llm_figures f;
        cli_llm_figures_of(r, &f);
        json_t *u = cli_llm_usage_json(&r->llm);
        if (json_is_object(u)) {
          json_object_set_new(u, "parse_share", json_real(f.parse));
          json_object_set_new(u, "run_share", json_real(f.run));
          json_object_set_new(u, "tokens_per_run", json_real(f.tokens_per_run));
          json_object_set_new(u, "tokens_per_x",
                              f.tokens_per_x >= 0 ? json_real(f.tokens_per_x)
                                                  : json_null());
        }
        json_object_set_new(o, "llm", u);
      }
      json_array_append_new(rows, o);
    }
  }
  json_object_set_new(j, "rows", rows);
  cli_dump_json(j);
}

int cli_bench(int argc, char **argv) {
  bench_args a;
  bench_lists l;
  int rc = parse_bench_args(argc, argv, &a);
  if (rc != EXIT_VALID)
    return rc;
  rc = make_lists(&a, &l);
  if (rc != EXIT_VALID) {
    free_lists(&l);
    return rc;
  }
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags)) {
    free_lists(&l);
    return EXIT_INVALID;
  }
  mapopt_tune_db *db = NULL;
  mapopt_tune_history *h = NULL;
  id_list ids = {0};
  cli_table t = {0};
  const volatile sig_atomic_t *stop = cli_catch_signals();
  rc = EXIT_INVALID;
  if (mapopt_tune_db_open(ctx, a.set.db, diags, &db) != MAPOPT_OK)
    goto done;
  for (char **app = l.apps; *app; app++)
    if ((rc = bench_app(ctx, db, &a, &l, *app, stop, diags, &ids)) !=
        EXIT_VALID) {
      if (*stop)
        fprintf(stderr, "mapopt bench: interrupted; every finished "
                        "evaluation is recorded: run the same command to "
                        "continue\n");
      goto done;
    }
  rc = EXIT_INVALID;
  if (mapopt_tune_db_history(db, diags, &h) != MAPOPT_OK)
    goto done;
  if (!cli_table_build(h, ids.ids, ids.n, &t)) {
    fprintf(stderr, "mapopt bench: out of memory\n");
    goto done;
  }
  if (a.json)
    print_table_json(&a, &t);
  else
    print_table_text(&a, &t);
  rc = EXIT_VALID;
done:
  cli_print_diags(stderr, diags, 0);
  cli_table_free(&t);
  mapopt_tune_history_free(h);
  free(ids.ids);
  mapopt_tune_db_close(db);
  cli_close(ctx, diags);
  free_lists(&l);
  return rc;
}
