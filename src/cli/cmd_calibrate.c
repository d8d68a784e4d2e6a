/*
 * `mapopt calibrate`: fits the machine model, and the application's kernel
 * efficiencies, to the real runs recorded in a tuning database
 * (docs/real.md, "Calibrating the model").
 *
 * The successful evaluations of the database's real-run tuning runs (those
 * with an evaluator: `tune --run`) of one application on one machine are
 * the data: each a mapper and its measured score. This file chooses and
 * reads them, prints the note and writes the files; the fit is the tuning
 * library's (mapopt_calibrate, src/tune/calibrate.c): every third run, in
 * the order recorded, held out; the machine's figures scaled in four
 * groups, one factor each, then one factor per (task, processor kind)
 * kernel the fitted mappers run, kept when it lowers the held-out error.
 * The note gives, on the held-out runs, the median relative error of the
 * predicted time and Kendall's tau-b between predicted and measured times,
 * before and after; a fit that predicts them worse than the starting model
 * is refused. -o writes the fitted machine as `mapopt-machine/1` JSON,
 * which sim and tune take as --machine, and --app-out the fitted
 * application as `mapopt-app/1` JSON, which they take as the application.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"

const char cli_calibrate_usage[] =
    "usage: mapopt calibrate DB [--app APP[:SIZE]] [--machine M] -o FILE\n"
    "                          [--app-out FILE] [--force]\n\n"
    "Fits the simulator's model to the real runs recorded in the tuning\n"
    "database DB (the evaluations of `mapopt tune --run`): the processors'\n"
    "rates, the memories' and channels' bandwidths and the per-task\n"
    "overheads, each group scaled by one factor; then, fitted together\n"
    "with the groups, the efficiencies of each task's kernel on each\n"
    "processor kind the runs used, one factor a kernel, kept when they\n"
    "predict the held-out runs better (by more than 0.1 point of median\n"
    "error). Every third run, in the order recorded, is held out; the note\n"
    "gives their median relative error and Kendall's tau (predicted against\n"
    "measured time) before and after, and FILE is the fitted machine\n"
    "(mapopt-machine/1 JSON) for sim and tune --machine.\n\n"
    "  --app APP      the runs of this application, as tune named it\n"
    "                 (default: the database's, when its real runs have one)\n"
    "  --machine M    the runs tuned on this machine, as tune named it, and\n"
    "                 the model fitted (default: the runs' only one)\n"
    "  -o FILE        where to write the fitted machine (never over an\n"
    "                 existing file without --force)\n"
    "  --app-out FILE\n"
    "                 where to write the fitted application (mapopt-app/1\n"
    "                 JSON, the application for sim and tune; unchanged\n"
    "                 when the kernels' factors are not kept; never over an\n"
    "                 existing file without --force)\n"
    "  --force        overwrite the files\n\n"
    "See docs/real.md, section 14. Exit status: 0 ok, 1 invalid input (no\n"
    "such runs, too few to hold some out, a run that does not simulate, a\n"
    "fit that predicts the held-out runs worse), 2 usage error.\n";

typedef struct calibrate_args {
  const char *db, *app, *machine, *out, *app_out;
  bool force;
} calibrate_args;

static int parse_args(int argc, char **argv, calibrate_args *a) {
  *a = (calibrate_args){0};
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v;
    static const char *const valued[] = {"--app", "--machine", "-o",
                                         "--app-out", NULL};
    int rc = cli_option_value("calibrate", valued, argc, argv, &i, &v);
    if (rc != EXIT_VALID)
      return rc;
    if (!strcmp(o, "--app"))
      a->app = v;
    else if (!strcmp(o, "--machine"))
      a->machine = v;
    else if (!strcmp(o, "-o"))
      a->out = v;
    else if (!strcmp(o, "--app-out"))
      a->app_out = v;
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

/* The recorded runs: each chosen run's successful evaluations, their
 * mappers compiled for the target's shape (owned: free them with
 * mapopt_dsl_free). */
typedef struct samples {
  mapopt_calib_sample *s;
  size_t n, cap;
  const char *unit; /* the runs' */
  size_t nruns;     /* tuning runs they come from */
} samples;

static bool push_sample(samples *ss, mapopt_program *prog, double measured) {
  if (ss->n == ss->cap) {
    size_t cap = ss->cap ? 2 * ss->cap : 16;
    mapopt_calib_sample *ns = realloc(ss->s, cap * sizeof *ns);
    if (!ns)
      return false;
    ss->s = ns;
    ss->cap = cap;
  }
  ss->s[ss->n++] = (mapopt_calib_sample){prog, measured};
  return true;
}

static bool load_samples(mapopt_ctx *ctx, mapopt_tune_db *db, const char *a_db,
                         const mapopt_tune_history *h, const char *app,
                         const char *machine, const cli_target *t,
                         mapopt_diags *diags, samples *ss) {
  for (size_t i = 0; i < mapopt_tune_history_count(h); i++) {
    const mapopt_tune_run_info *r = mapopt_tune_history_run(h, i);
    if (!chosen(r, app, machine))
      continue;
    if (ss->unit && strcmp(ss->unit, r->unit)) {
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", a_db, 0, 0,
                       "the real runs of %s on %s are scored in %s and in %s:"
                       " calibrate them from databases of one metric",
                       app, machine, ss->unit, r->unit);
      return false;
    }
    ss->unit = r->unit;
    ss->nruns++;
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
      if (!push_sample(ss, prog, 1 / score)) {
        mapopt_dsl_free(prog);
        return false;
      }
    }
  }
  return true;
}

static void print_figures(const char *what, const mapopt_calib_figures *f) {
  printf("  %s median error %.1f%%, Kendall tau %.3f (held out)\n", what,
         100 * f->median_error, f->tau);
}

static void print_factors(const double *factor) {
  for (int g = 0; g < MAPOPT_CALIB_NGROUPS; g++)
    printf("%s %s x%.3g", g ? "," : "",
           mapopt_calib_group_name((mapopt_calib_group)g), factor[g]);
}

/* The note: the figures, the factors and the kernels' verdict. */
static void print_note(const mapopt_calib_result *r, const char *app,
                       const char *machine, size_t nruns) {
  printf("calibrate: %zu real runs of %s on %s (%zu tuning runs): %zu "
         "fitted, %zu held out\n",
         r->nfitted + r->nheld_out, app, machine, nruns, r->nfitted,
         r->nheld_out);
  print_figures("before:", &r->before);
  print_figures("after: ", &r->after);
  printf("  fitted:");
  print_factors(r->factor);
  printf("\n");
  if (!r->nkernels)
    return;
  if (r->joint_chosen) {
    printf("  the groups alone: median error %.1f%%, Kendall tau %.3f (held "
           "out);",
           100 * r->machine_alone.median_error, r->machine_alone.tau);
    print_factors(r->machine_alone_factor);
    printf("\n");
  }
  printf("  with the kernels: median error %.1f%%, Kendall tau %.3f (held "
         "out): %s\n",
         100 * r->joint.median_error, r->joint.tau,
         r->joint_chosen ? "kept"
                         : "not 0.1 point below the groups alone, not kept "
                           "(the application unchanged)");
  if (!r->joint_chosen)
    return;
  size_t unscaled = 0;
  for (size_t k = 0; k < r->nkernels; k++) {
    const mapopt_calib_kernel *kn = &r->kernels[k];
    if (kn->flops_eff_after == kn->flops_eff_before &&
        kn->mem_eff_after == kn->mem_eff_before) {
      unscaled++;
      continue;
    }
    printf("    %s on %s x%.3g: flops_eff %.6g -> %.6g, mem_eff %.6g -> "
           "%.6g\n",
           kn->task, mapopt_shape_proc_name(kn->kind), kn->factor,
           kn->flops_eff_before, kn->flops_eff_after, kn->mem_eff_before,
           kn->mem_eff_after);
  }
  if (unscaled)
    printf("    %s%zu kernel%s as the model has %s\n",
           unscaled < r->nkernels ? "the other " : "all ", unscaled,
           unscaled > 1 ? "s" : "", unscaled > 1 ? "them" : "it");
}

static bool write_text(const char *path, const char *text, const char *what) {
  if (mapopt_file_replace(path, text, strlen(text)) == MAPOPT_OK)
    return true;
  cli_error("%s: error: cannot write the %s: %s", path, what, strerror(errno));
  return false;
}

/* Fits, prints the note and writes the files. */
static int calibrate(mapopt_ctx *ctx, const calibrate_args *a, const char *app,
                     const char *machine, const cli_target *t,
                     const samples *ss, mapopt_diags *diags) {
  char name[1100];
  snprintf(name, sizeof name, "%s on %s", app, machine);
  mapopt_app_options ao = {.spec = t->sim.spec, .iterations = -1, .warmup = -1};
  mapopt_calib_problem p = {.machine = t->sim.machine,
                            .app = t->sim.app,
                            .app_options = &ao,
                            .unit = ss->unit,
                            .name = name,
                            .samples = ss->s,
                            .nsamples = ss->n};
  mapopt_calib_result *r = NULL;
  if (mapopt_calibrate(ctx, &p, diags, &r) != MAPOPT_OK)
    return EXIT_INVALID;
  print_note(r, app, machine, ss->nruns);
  int rc = EXIT_INVALID;
  /* A fit that predicts the runs it never saw worse than the model it
   * started from has learnt the fitted runs' noise, or a difference that
   * neither the four groups nor the kernels express: writing it would
   * make every later prediction worse. */
  if (r->after.median_error > r->before.median_error) {
    cli_error("calibrate: the fit predicts the held-out runs worse than %s "
              "does (median error %.1f%% -> %.1f%%): %s%s%s not written",
              machine, 100 * r->before.median_error,
              100 * r->after.median_error, a->out, a->app_out ? " and " : "",
              a->app_out ? a->app_out : "");
  } else if (write_text(a->out, r->machine_json, "machine") &&
             (!a->app_out ||
              write_text(a->app_out, r->app_json, "application"))) {
    printf("  wrote %s (use it as --machine %s)\n", a->out, a->out);
    if (a->app_out)
      printf("  wrote %s (%suse it as the application %s%s%s)\n", a->app_out,
             r->app_changed ? "" : "unchanged; ", a->app_out,
             t->sim.spec ? ":" : "", t->sim.spec ? t->sim.spec : "");
    rc = EXIT_VALID;
  }
  mapopt_calib_result_free(r);
  return rc;
}

/* Whether path may be written: it does not exist, or --force. */
static bool may_write(const calibrate_args *a, const char *path) {
  struct stat sb;
  if (!path || a->force || stat(path, &sb) != 0)
    return true;
  fprintf(stderr, "mapopt calibrate: %s exists; give --force to overwrite it\n",
          path);
  return false;
}

int cli_calibrate(int argc, char **argv) {
  calibrate_args a;
  int rc = parse_args(argc, argv, &a);
  if (rc != EXIT_VALID)
    return rc;
  if (!may_write(&a, a.out) || !may_write(&a, a.app_out))
    return EXIT_INVALID;
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  mapopt_tune_db *db = NULL;
  mapopt_tune_history *h = NULL;
  cli_target t = {0};
  samples ss = {0};
  char abuf[512], mbuf[512];
  const char *app = a.app, *machine = a.machine;
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
  if (load_samples(ctx, db, a.db, h, app, machine, &t, diags, &ss))
    rc = calibrate(ctx, &a, app, machine, &t, &ss, diags);
done:
  cli_print_diags(stderr, diags, 0);
  for (size_t i = 0; i < ss.n; i++) /* the samples own their mappers */
    mapopt_dsl_free((mapopt_program *)ss.s[i].mapper);
  free(ss.s);
  cli_target_close(&t);
  mapopt_tune_history_free(h);
  mapopt_tune_db_close(db);
  cli_close(ctx, diags);
  return rc;
}
