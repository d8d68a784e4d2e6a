/*
 * `mapopt calibrate`: fits the machine model to the real runs recorded in
 * a tuning database (docs/real.md, "Calibrating the model").
 *
 * The successful evaluations of the database's real-run tuning runs (those
 * with an evaluator: `tune --run`) of one application on one machine are
 * the data: each a mapper and its measured score. Every third of them, in
 * the order recorded, is held out; the others are fitted. The fit scales
 * four groups of the machine's figures, each by one factor: the
 * processors' rates (the kernels' efficiency), the memories' bandwidths,
 * the channels' bandwidths (their latencies by the inverse), and the
 * per-task overheads (the processors' and the runtime's). Each candidate
 * set of factors simulates every fitted mapper on the one plan of the run
 * and is scored by the mean squared log ratio of predicted to measured
 * time (the inverse of the score); a pattern search over the logs of the
 * factors (steps of a factor of 2, halved whenever no step improves, down
 * to 1%) finds the factors. The note gives, on the held-out runs, the
 * median relative error of the predicted time and Kendall's tau-b between
 * predicted and measured times, before and after; -o writes the fitted
 * machine as `mapopt-machine/1` JSON, which sim and tune take as
 * --machine.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <jansson.h>

#include "cli/cli.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"

const char cli_calibrate_usage[] =
    "usage: mapopt calibrate DB [--app APP[:SIZE]] [--machine M] -o FILE\n\n"
    "Fits the simulator's machine model to the real runs recorded in the\n"
    "tuning database DB (the evaluations of `mapopt tune --run`): the\n"
    "processors' rates, the memories' and channels' bandwidths and the\n"
    "per-task overheads, each group scaled by one factor. Every third run,\n"
    "in the order recorded, is held out; the note gives their median\n"
    "relative error and Kendall's tau (predicted against measured time)\n"
    "before and after, and FILE is the fitted machine (mapopt-machine/1\n"
    "JSON) for sim and tune --machine.\n\n"
    "  --app APP      the runs of this application, as tune named it\n"
    "                 (default: the database's, when its real runs have one)\n"
    "  --machine M    the runs tuned on this machine, as tune named it, and\n"
    "                 the model fitted (default: the runs' only one)\n"
    "  -o FILE        where to write the fitted machine (never over an\n"
    "                 existing file without --force)\n"
    "  --force        overwrite FILE\n\n"
    "See docs/real.md, section 14. Exit status: 0 ok, 1 invalid input (no\n"
    "such runs, too few to hold some out, a run that does not simulate), 2\n"
    "usage error.\n";

enum { NGROUPS = 4 };
static const char *const group_names[NGROUPS] = {
    "processor rates", "memory bandwidths", "channel bandwidths",
    "per-task overheads"};

/* One recorded real run: its mapper compiled, and its measured time. */
typedef struct sample {
  mapopt_program *prog;
  double measured; /* 1 / score */
  double predicted;
  bool held_out;
} sample;

typedef struct calib {
  mapopt_ctx *ctx;
  json_t *base;     /* the machine as JSON */
  const char *unit; /* the runs' */
  const mapopt_sim_plan *plan;
  sample *s;
  size_t n;
} calib;

/* Scales the number at key of object o by f (an integer stays one, at
 * least 1 when it was). */
static void scale_key(json_t *o, const char *key, double f) {
  json_t *v = json_object_get(o, key);
  if (json_is_integer(v)) {
    double y = nearbyint((double)json_integer_value(v) * f);
    json_integer_set(v, y < 1      ? 1
                        : y > 9e15 ? (json_int_t)9e15
                                   : (json_int_t)y);
  } else if (json_is_real(v)) {
    json_real_set(v, json_real_value(v) * f);
  }
}

/* The base machine (as JSON) with the factors e^theta applied to its
 * groups, as JSON text (free()). NULL on ENOMEM. */
static char *apply(const json_t *base, const double *theta) {
  json_t *m = json_deep_copy(base);
  if (!m)
    return NULL;
  double rate = exp(theta[0]), mem = exp(theta[1]), chan = exp(theta[2]),
         over = exp(theta[3]);
  const char *k;
  json_t *v;
  json_object_foreach(json_object_get(m, "processors"), k, v) {
    scale_key(v, "gflops_f64", rate);
    scale_key(v, "gflops_f32", rate);
    scale_key(v, "gflops_f64_matrix", rate);
    scale_key(v, "overhead_ns", over);
    scale_key(v, "inner_overhead_ns", over);
  }
  size_t i;
  json_array_foreach(json_object_get(m, "affinity"), i, v)
      scale_key(v, "bw_gbs", mem);
  json_object_foreach(json_object_get(m, "channels"), k, v) {
    scale_key(v, "bw_gbs", chan);
    scale_key(v, "cross_socket_bw_gbs", chan);
    scale_key(v, "lat_ns", 1 / chan);
  }
  json_t *r = json_object_get(m, "runtime");
  static const char *const per_task[] = {"launch_ns", "launch_traced_ns",
                                         "map_ns", "map_traced_ns"};
  for (size_t j = 0; j < sizeof per_task / sizeof per_task[0]; j++)
    scale_key(r, per_task[j], over);
  scale_key(r, "ipc_lat_ns", 1 / chan);
  char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(m);
  return text;
}

/* Simulates every sample (held out too) on the machine of theta; false
 * when one does not simulate, or in another unit than the runs' (the
 * diagnostics in diags). */
static bool predict(calib *c, const double *theta, mapopt_diags *diags) {
  char *text = apply(c->base, theta);
  mapopt_machine *m = NULL;
  bool ok =
      text && mapopt_machine_load_json(c->ctx, "calibrated machine", text,
                                       strlen(text), diags, &m) == MAPOPT_OK;
  free(text);
  for (size_t i = 0; ok && i < c->n; i++) {
    mapopt_sim_result *r = NULL;
    mapopt_sim_options so = {0};
    ok = mapopt_sim_run_plan(c->ctx, m, c->plan, c->s[i].prog, &so, &r) ==
             MAPOPT_OK &&
         r->error == MAPOPT_SIM_NONE && r->metric_value > 0;
    if (!ok)
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                       "a recorded mapper does not simulate on the machine "
                       "model: %s",
                       r && r->log ? r->log : "out of memory");
    else if (strcmp(r->metric_unit, c->unit)) {
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                       "the runs are scored in %s and the simulation in %s: "
                       "give the application they ran (--app)",
                       c->unit, r->metric_unit);
      ok = false;
    }
    c->s[i].predicted = ok ? 1 / r->metric_value : 0;
    mapopt_sim_result_free(r);
  }
  mapopt_machine_free(m);
  return ok;
}

/* The mean squared log ratio of predicted to measured over the fitted. */
static double loss(const calib *c) {
  double sum = 0;
  size_t k = 0;
  for (size_t i = 0; i < c->n; i++)
    if (!c->s[i].held_out) {
      double l = log(c->s[i].predicted / c->s[i].measured);
      sum += l * l;
      k++;
    }
  return k ? sum / (double)k : 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* On the held-out samples: the median relative error of the predicted
 * time and Kendall's tau-b of predicted against measured. */
static void held_out_figures(const calib *c, double *median_err, double *tau) {
  double *e = malloc(c->n * sizeof *e);
  size_t k = 0;
  long conc = 0, disc = 0, tie_m = 0, tie_p = 0;
  for (size_t i = 0; i < c->n; i++) {
    if (!c->s[i].held_out)
      continue;
    if (e)
      e[k] = fabs(c->s[i].predicted - c->s[i].measured) / c->s[i].measured;
    k++;
    for (size_t j = i + 1; j < c->n; j++) {
      if (!c->s[j].held_out)
        continue;
      double dm = c->s[i].measured - c->s[j].measured;
      double dp = c->s[i].predicted - c->s[j].predicted;
      if (dm == 0 && dp == 0)
        continue;
      if (dm == 0)
        tie_m++;
      else if (dp == 0)
        tie_p++;
      else if ((dm > 0) == (dp > 0))
        conc++;
      else
        disc++;
    }
  }
  *median_err = 0;
  if (e && k) {
    qsort(e, k, sizeof *e, cmp_double);
    *median_err = k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
  }
  free(e);
  double d =
      sqrt((double)(conc + disc + tie_m) * (double)(conc + disc + tie_p));
  *tau = d > 0 ? (double)(conc - disc) / d : 0;
}

/* The pattern search over the log factors; *theta starts at 0 (the base
 * machine). */
static bool fit(calib *c, double *theta, mapopt_diags *diags) {
  if (!predict(c, theta, diags))
    return false;
  double best = loss(c);
  for (double step = log(2.0); step > 0.01; step /= 2) {
    bool improved = true;
    while (improved) {
      improved = false;
      for (int g = 0; g < NGROUPS; g++)
        for (int dir = -1; dir <= 1; dir += 2) {
          double t[NGROUPS];
          memcpy(t, theta, sizeof t);
          t[g] += dir * step;
          if (fabs(t[g]) > log(1000.0) || !predict(c, t, diags))
            continue;
          double l = loss(c);
          if (l < best * (1 - 1e-9)) {
            best = l;
            memcpy(theta, t, sizeof t);
            improved = true;
          }
        }
    }
  }
  return predict(c, theta, diags);
}

typedef struct calibrate_args {
  const char *db, *app, *machine, *out;
  bool force;
} calibrate_args;

static int parse_args(int argc, char **argv, calibrate_args *a) {
  *a = (calibrate_args){0};
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v;
    static const char *const valued[] = {"--app", "--machine", "-o", NULL};
    int rc = cli_option_value("calibrate", valued, argc, argv, &i, &v);
    if (rc != EXIT_VALID)
      return rc;
    if (!strcmp(o, "--app"))
      a->app = v;
    else if (!strcmp(o, "--machine"))
      a->machine = v;
    else if (!strcmp(o, "-o"))
      a->out = v;
    else if (!strcmp(o, "--force"))
      a->force = true;
    else if ((rc = cli_operand("calibrate", o, &a->db, "database")) !=
             EXIT_VALID)
      return rc;
  }
  if (!a->db)
    return cli_usage_error("calibrate", "no database given");
  if (!a->out)
    return cli_usage_error("calibrate", "no -o FILE for the fitted machine");
  return EXIT_VALID;
}

/* "app" or "app:size" of a run. */
static void app_arg(const mapopt_tune_run_info *r, char *buf, size_t n) {
  snprintf(buf, n, "%s%s%s", r->app, r->size ? ":" : "",
           r->size ? r->size : "");
}

/* Whether run r is one of those calibrated: a real run (scored, in a
 * unit) of app on machine. */
static bool chosen(const mapopt_tune_run_info *r, const char *app,
                   const char *machine) {
  char name[512];
  app_arg(r, name, sizeof name);
  return r->evaluator && r->unit && !strcmp(app, name) &&
         !strcmp(machine, r->machine);
}

/* The one application (what = "app") or machine of the database's real
 * runs, or NULL with an error naming two of them, or none. */
static const char *only(const mapopt_tune_history *h, bool machine,
                        const char *app, char *buf, size_t n,
                        mapopt_diags *diags) {
  *buf = 0;
  for (size_t i = 0; i < mapopt_tune_history_count(h); i++) {
    const mapopt_tune_run_info *r = mapopt_tune_history_run(h, i);
    char name[512];
    app_arg(r, name, sizeof name);
    if (!r->evaluator || !r->unit || (app && strcmp(app, name)))
      continue;
    const char *v = machine ? r->machine : name;
    if (!*buf) {
      snprintf(buf, n, "%s", v);
    } else if (strcmp(buf, v)) {
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                       "the database has real runs of %s '%s' and '%s': give "
                       "%s",
                       machine ? "machines" : "applications", buf, v,
                       machine ? "--machine" : "--app");
      return NULL;
    }
  }
  if (!*buf) {
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                     "the database has no real runs%s%s (mapopt tune --run "
                     "records them)",
                     app ? " of " : "", app ? app : "");
    return NULL;
  }
  return buf;
}

/* Compiles the successful evaluations of the chosen runs into samples. */
static bool load_samples(mapopt_ctx *ctx, mapopt_tune_db *db, const char *a_db,
                         const mapopt_tune_history *h, const char *app,
                         const char *machine, const cli_target *t,
                         mapopt_diags *diags, calib *c, size_t *nruns) {
  size_t cap = 0;
  *nruns = 0;
  for (size_t i = 0; i < mapopt_tune_history_count(h); i++) {
    const mapopt_tune_run_info *r = mapopt_tune_history_run(h, i);
    if (!chosen(r, app, machine))
      continue;
    if (c->unit && strcmp(c->unit, r->unit)) {
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", a_db, 0, 0,
                       "the real runs of %s on %s are scored in %s and in %s:"
                       " calibrate them from databases of one metric",
                       app, machine, c->unit, r->unit);
      return false;
    }
    c->unit = r->unit;
    (*nruns)++;
    for (int64_t it = 0; it < r->niterations; it++) {
      if (!(r->scores[it] > 0))
        continue;
      mapopt_tune_eval_info *e;
      if (mapopt_tune_db_evaluation(db, r->id, it, diags, &e) != MAPOPT_OK)
        return false;
      mapopt_dsl_options o = {.file = "recorded.map", .shape = &t->sim.shape};
      mapopt_program *prog = NULL;
      mapopt_status st =
          mapopt_dsl_compile(ctx, e->text, strlen(e->text), &o, diags, &prog);
      double score = e->metric;
      mapopt_tune_eval_info_free(ctx, e);
      if (st != MAPOPT_OK)
        return false;
      if (c->n == cap) {
        cap = cap ? 2 * cap : 16;
        sample *ns = realloc(c->s, cap * sizeof *ns);
        if (!ns) {
          mapopt_dsl_free(prog);
          return false;
        }
        c->s = ns;
      }
      c->s[c->n] = (sample){prog, 1 / score, 0, c->n % 3 == 2};
      c->n++;
    }
  }
  return true;
}

/* Fits, prints the note and writes the machine. */
static int calibrate(const calibrate_args *a, const char *app,
                     const char *machine, size_t nruns, calib *c,
                     mapopt_diags *diags) {
  size_t held = 0;
  for (size_t i = 0; i < c->n; i++)
    held += c->s[i].held_out;
  if (held < 2) {
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                     "%zu successful real runs of %s on %s: at least 6 are "
                     "needed (every third is held out, at least 2)",
                     c->n, app, machine);
    return EXIT_INVALID;
  }
  double theta[NGROUPS] = {0}, err0, tau0, err1, tau1;
  if (!predict(c, theta, diags))
    return EXIT_INVALID;
  held_out_figures(c, &err0, &tau0);
  if (!fit(c, theta, diags))
    return EXIT_INVALID;
  held_out_figures(c, &err1, &tau1);
  printf("calibrate: %zu real runs of %s on %s (%zu tuning runs): %zu "
         "fitted, %zu held out\n",
         c->n, app, machine, nruns, c->n - held, held);
  printf("  before: median error %.1f%%, Kendall tau %.3f (held out)\n",
         100 * err0, tau0);
  printf("  after:  median error %.1f%%, Kendall tau %.3f (held out)\n",
         100 * err1, tau1);
  printf("  fitted:");
  for (int g = 0; g < NGROUPS; g++)
    printf("%s %s x%.3g", g ? "," : "", group_names[g], exp(theta[g]));
  printf("\n");
  /* A fit that predicts the runs it never saw worse than the model it
   * started from has learnt the fitted runs' noise, or a difference the
   * four groups cannot express (one task's kernel, say): writing it would
   * make every later prediction worse. */
  if (err1 > err0) {
    cli_error("calibrate: the fit predicts the held-out runs worse than %s "
              "does (median error %.1f%% -> %.1f%%): %s not written",
              machine, 100 * err0, 100 * err1, a->out);
    return EXIT_INVALID;
  }
  char *json = apply(c->base, theta);
  if (!json)
    return EXIT_INVALID;
  mapopt_status st = mapopt_file_replace(a->out, json, strlen(json));
  free(json);
  if (st != MAPOPT_OK) {
    cli_error("%s: error: cannot write the machine: %s", a->out,
              strerror(errno));
    return EXIT_INVALID;
  }
  printf("  wrote %s (use it as --machine %s)\n", a->out, a->out);
  return EXIT_VALID;
}

int cli_calibrate(int argc, char **argv) {
  calibrate_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != EXIT_VALID)
    return rc;
  struct stat sb;
  if (!a.force && stat(a.out, &sb) == 0) {
    fprintf(stderr,
            "mapopt calibrate: %s exists; give --force to overwrite it\n",
            a.out);
    return EXIT_INVALID;
  }
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  mapopt_tune_db *db = NULL;
  mapopt_tune_history *h = NULL;
  mapopt_sim_plan *plan = NULL;
  cli_target t = {0};
  calib c = {0};
  char abuf[512], mbuf[512];
  const char *app = a.app, *machine = a.machine;
  size_t nruns = 0;
  rc = EXIT_INVALID;
  if (mapopt_tune_db_open_read(ctx, a.db, diags, &db) != MAPOPT_OK ||
      mapopt_tune_db_history(db, diags, &h) != MAPOPT_OK)
    goto done;
  if (!app && !(app = only(h, false, NULL, abuf, sizeof abuf, diags)))
    goto done;
  if (!machine && !(machine = only(h, true, app, mbuf, sizeof mbuf, diags)))
    goto done;
  rc = cli_target_open(ctx, "calibrate", app, NULL, machine, diags, &t);
  if (rc != EXIT_VALID)
    goto done;
  rc = EXIT_INVALID;
  c.ctx = ctx;
  char *mtext = NULL;
  if (mapopt_machine_to_json(ctx, t.sim.machine, &mtext) != MAPOPT_OK)
    goto done;
  c.base = json_loads(mtext, 0, NULL);
  mapopt_text_free(mtext);
  if (!c.base)
    goto done;
  if (!load_samples(ctx, db, a.db, h, app, machine, &t, diags, &c, &nruns) ||
      mapopt_sim_plan_new(ctx, t.sim.run, &plan) != MAPOPT_OK)
    goto done;
  c.plan = plan;
  rc = calibrate(&a, app, machine, nruns, &c, diags);
done:
  cli_print_diags(stderr, diags, 0);
  for (size_t i = 0; i < c.n; i++)
    mapopt_dsl_free(c.s[i].prog);
  free(c.s);
  json_decref(c.base);
  mapopt_sim_plan_free(plan);
  cli_target_close(&t);
  mapopt_tune_history_free(h);
  mapopt_tune_db_close(db);
  cli_close(ctx, diags);
  return rc;
}
