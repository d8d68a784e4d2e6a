/*
 * `mapopt sim`: simulate one mapping of an application on a machine model
 * and print what a real run prints (the raw log), optionally writing the
 * JSON report and a Chrome trace. A simulated failure (out of memory, a
 * mapping error) is a result, printed as a real runtime would print it;
 * the exit status is then 1. With --explain, AutoGuide's findings and a
 * summary of where the time went follow the log; with --compare, a second
 * mapper runs on the same run and the differences that explain the gap
 * are printed instead.
 */
#include <errno.h>
#include <inttypes.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

const char cli_sim_usage[] =
    "usage: mapopt sim APP[:SIZE,PARAM=V...] [--mapper FILE] [OPTIONS]\n\n"
    "Simulates APP -- a built-in application (see mapopt apps) or a\n"
    "mapopt-app/1 JSON file -- under the mapper FILE (default: the built-in\n"
    "application's expert mapper; for any other application the default\n"
    "mapper, no statements: the DSL's defaults) and prints the run's log:\n"
    "the metric lines a real run prints, or its error.\n\n"
    "  --machine M          preset[:params] (default p100x4), a machine JSON\n"
    "                       file, or a one-line shape ('nodes=2 gpu=4')\n"
    "  --size S             size preset and overrides, e.g. small or\n"
    "                       'small,n=4096'\n"
    "  --iterations N       timed iterations (default: the app's)\n"
    "  --warmup N           untimed leading iterations\n"
    "  --explain            after the log, what AutoGuide finds and where the\n"
    "                       time went: the busiest tasks' time split into\n"
    "                       overhead, compute and memory and their waiting,\n"
    "                       the processors' load, the copies per channel, the\n"
    "                       memory of the busiest tasks' data\n"
    "  --compare FILE       run the mapper FILE too (same app, machine and\n"
    "                       options) and print what differs between the two\n"
    "                       runs, the largest change first\n"
    "  --report FILE        write the JSON report\n"
    "  --trace FILE         write a Chrome trace (open in Perfetto)\n"
    "  --json               print the report instead of the log\n"
    "  --stats              include wall-clock statistics in the report\n"
    "  --bench              simulate repeatedly and print events per second\n"
    "                       (per core: CPU time of the simulation only)\n"
    "  --seed N             seed of the noise generator (default 0)\n"
    "  --noise X            relative task-time jitter, 0 to 0.5 (default 0)\n"
    "  --time-limit S       simulated seconds before TIMEOUT (default 3600)\n"
    "  --max-ops N          refuse a run of more than N operations (default\n"
    "                       10000000)\n"
    "  --max-bytes B        the most memory the run may take, model and\n"
    "                       simulation (suffix K, M, G or T for KiB ... TiB;\n"
    "                       default 4G): a larger model is refused, and a\n"
    "                       simulation that outgrows it stops\n"
    "  --lenient-kinds [true|false]  fall back to the default kind order\n"
    "  --backpressure-errors true|false  the event.exists() rule (default "
    "true)\n"
    "  --instance-fields all|requested  fields of new instances (default "
    "all)\n"
    "  --region-keys auto|names|positions|both  how Region, Layout and\n"
    "                       CollectMemory match an argument: auto (default)\n"
    "                       as the DSL mapper of Legion in one run, by\n"
    "                       position when the mapper keys only positions,\n"
    "                       else by name; both: names, then the position\n"
    "  --aos-order legion|mapopt  AOS with F order: legion (default) fails\n"
    "                       the run as the DSL mapper's order F, Y, ... does\n"
    "                       on Legion; mapopt simulates F, X, Y, ...\n"
    "                       (docs/legion.md)\n\n"
    "On a terminal, a run that takes more than a second shows its progress\n"
    "on stderr.\n\n"
    "Exit status: 0 the run succeeded (with --compare: both), 1 invalid\n"
    "input or a failed run, 2 usage error.\n";

typedef struct sim_args {
  const char *app, *mapper, *machine, *size, *report, *trace, *compare;
  bool json, stats, bench, explain;
  mapopt_sim_options opts;
  mapopt_region_keys_mode region_keys;
  int64_t iterations, warmup, max_ops, max_bytes;
} sim_args;

/* "4096", "64M", "4G": bytes, with a binary suffix; false otherwise. */
static bool parse_bytes(const char *s, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || errno || v < 1)
    return false;
  static const char suffixes[] = "KMGT";
  const char *k = *end ? strchr(suffixes, *end) : NULL;
  if (*end && (!k || end[1]))
    return false;
  int shift = k ? 10 * (int)(k - suffixes + 1) : 0;
  if (v > (INT64_MAX >> shift))
    return false;
  *out = (int64_t)v << shift;
  return true;
}

static bool parse_bool(const char *s, bool *out) {
  if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "yes"))
    *out = true;
  else if (!strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "no"))
    *out = false;
  else
    return false;
  return true;
}

static int parse_sim_args(int argc, char **argv, sim_args *a) {
  memset(a, 0, sizeof *a);
  a->machine = "p100x4";
  a->iterations = a->warmup = -1;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    static const char *const valued[] = {"--mapper",
                                         "--machine",
                                         "--size",
                                         "--report",
                                         "--trace",
                                         "--compare",
                                         "--max-ops",
                                         "--max-bytes",
                                         "--seed",
                                         "--noise",
                                         "--time-limit",
                                         "--iterations",
                                         "--warmup",
                                         "--backpressure-errors",
                                         "--instance-fields",
                                         "--region-keys",
                                         "--aos-order",
                                         NULL};
    const char *val;
    if (cli_option_value("sim", valued, argc, argv, &i, &val) != EXIT_VALID)
      return EXIT_USAGE;
    int64_t n;
    if (!strcmp(o, "--mapper")) {
      a->mapper = val;
    } else if (!strcmp(o, "--machine")) {
      a->machine = val;
    } else if (!strcmp(o, "--size")) {
      a->size = val;
    } else if (!strcmp(o, "--report")) {
      a->report = val;
    } else if (!strcmp(o, "--trace")) {
      a->trace = val;
    } else if (!strcmp(o, "--compare")) {
      a->compare = val;
    } else if (!strcmp(o, "--explain")) {
      a->explain = true;
    } else if (!strcmp(o, "--max-ops")) {
      if (!cli_parse_i64(val, 1, INT64_MAX, &a->max_ops))
        return cli_usage_error("sim", "--max-ops must be a positive integer");
    } else if (!strcmp(o, "--max-bytes")) {
      if (!parse_bytes(val, &a->max_bytes))
        return cli_usage_error("sim", "--max-bytes must be a positive "
                                      "number of bytes, e.g. 8G");
    } else if (!strcmp(o, "--json")) {
      a->json = true;
    } else if (!strcmp(o, "--stats")) {
      a->stats = true;
    } else if (!strcmp(o, "--bench")) {
      a->bench = true;
    } else if (!strcmp(o, "--seed")) {
      if (!cli_parse_i64(val, 0, INT64_MAX, &n))
        return cli_usage_error("sim", "--seed must be a non-negative integer");
      a->opts.seed = (uint64_t)n;
    } else if (!strcmp(o, "--noise")) {
      if (!cli_parse_double(val, 0, 0.5, &a->opts.noise))
        return cli_usage_error("sim", "--noise must be a number in [0, 0.5]");
    } else if (!strcmp(o, "--time-limit")) {
      if (!cli_parse_i64(val, 1, 1000000000, &n))
        return cli_usage_error("sim", "--time-limit must be 1 to 1e9 seconds");
      a->opts.time_limit_ns = n * 1000000000;
    } else if (!strcmp(o, "--iterations")) {
      if (!cli_parse_i64(val, 1, 1000000, &a->iterations))
        return cli_usage_error("sim", "--iterations must be 1 to 1000000");
    } else if (!strcmp(o, "--warmup")) {
      if (!cli_parse_i64(val, 0, 1000000, &a->warmup))
        return cli_usage_error("sim", "--warmup must be 0 to 1000000");
    } else if (!strcmp(o, "--lenient-kinds")) {
      a->opts.lenient_kinds = true;
      bool b;
      if (i + 1 < argc && parse_bool(argv[i + 1], &b)) {
        a->opts.lenient_kinds = b;
        i++;
      }
    } else if (!strcmp(o, "--backpressure-errors")) {
      bool b;
      if (!parse_bool(val, &b))
        return cli_usage_error("sim", "--backpressure-errors takes true or "
                                      "false");
      a->opts.no_backpressure_errors = !b;
    } else if (!strcmp(o, "--instance-fields")) {
      if (!strcmp(val, "requested"))
        a->opts.instance_fields_requested = true;
      else if (strcmp(val, "all"))
        return cli_usage_error("sim", "--instance-fields takes all or "
                                      "requested");
    } else if (!strcmp(o, "--region-keys")) {
      if (!cli_region_keys(val, &a->region_keys))
        return cli_usage_error("sim", "--region-keys takes auto, names, "
                                      "positions or both");
    } else if (!strcmp(o, "--aos-order")) {
      if (!strcmp(val, "mapopt"))
        a->opts.mapopt_aos_order = true;
      else if (strcmp(val, "legion"))
        return cli_usage_error("sim", "--aos-order takes legion or mapopt");
    } else if (cli_operand("sim", o, &a->app, "application") != EXIT_VALID) {
      return EXIT_USAGE;
    }
  }
  if (!a->app)
    return cli_usage_error("sim", "no application given");
  if (a->compare &&
      (a->report || a->trace || a->json || a->bench || a->explain || a->stats))
    return cli_usage_error("sim", "--compare prints the two runs' "
                                  "differences: no --report, --trace, --json, "
                                  "--stats, --bench or --explain with it");
  if (a->bench && (a->explain || a->json))
    return cli_usage_error("sim", "--bench prints a rate: no --explain or "
                                  "--json with it");
  return EXIT_VALID;
}

static double cpu_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* --bench: one plan, evaluations repeated for at least a second of CPU
 * time; prints the rate docs/sim.md, "Benchmarks" states targets for (ops,
 * copies, fills and folds per second). */
static int bench(mapopt_ctx *ctx, const mapopt_machine *m,
                 const mapopt_app_run *run, const mapopt_program *prog,
                 const mapopt_sim_options *opts) {
  mapopt_sim_plan *plan;
  double t0 = cpu_seconds();
  if (mapopt_sim_plan_new(ctx, run, &plan) != MAPOPT_OK)
    return EXIT_INVALID;
  double plan_s = cpu_seconds() - t0;
  int64_t events = 0, runs = 0;
  double start = cpu_seconds(), spent = 0;
  int rc = EXIT_VALID;
  while (spent < 1.0 || runs < 3) {
    mapopt_sim_result *res;
    if (mapopt_sim_run_plan(ctx, m, plan, prog, opts, &res) != MAPOPT_OK) {
      rc = EXIT_INVALID;
      break;
    }
    events += res->events;
    runs++;
    if (res->error != MAPOPT_SIM_NONE)
      rc = EXIT_INVALID;
    mapopt_sim_result_free(res);
    spent = cpu_seconds() - start;
  }
  mapopt_sim_plan_free(plan);
  printf("%" PRId64 " simulations, %" PRId64 " events each, %.3f ms each; "
         "%.3g events/s per core (plan built once in %.3f ms)\n",
         runs, runs ? events / runs : 0, spent / (double)runs * 1e3,
         (double)events / spent, plan_s * 1e3);
  return rc;
}

/* Writes text to path; false after printing why it could not. */
static bool write_output(const char *path, const char *what, const char *text) {
  if (mapopt_file_replace(path, text, strlen(text)) == MAPOPT_OK)
    return true;
  cli_error("%s: error: cannot write the %s: %s", path, what, strerror(errno));
  return false;
}

/* --explain: AutoGuide's findings on the run (its log, result, mapper,
 * app run and machine), then where the time went. false when out of
 * memory. */
static bool explain(mapopt_ctx *ctx, const cli_pipeline *p) {
  mapopt_guide_input in = {.output = p->res->log,
                           .output_len = strlen(p->res->log),
                           .exit_status =
                               p->res->error == MAPOPT_SIM_NONE ? 0 : 1,
                           .result = p->res,
                           .mapper = p->mapper.prog,
                           .mapper_text = p->mapper.text,
                           .mapper_len = p->mapper.len,
                           .run = p->run,
                           .machine = p->machine};
  mapopt_findings *f = NULL;
  char *findings = NULL, *summary = NULL;
  bool ok = mapopt_guide_analyze(ctx, &in, &f) == MAPOPT_OK &&
            mapopt_guide_feedback(ctx, f, MAPOPT_GUIDE_FULL, &findings) ==
                MAPOPT_OK &&
            mapopt_guide_summary(ctx, p->res, &summary) == MAPOPT_OK;
  if (ok)
    printf("\nWhat AutoGuide finds (mapopt explain):\n%s\n%s", findings,
           summary);
  mapopt_text_free(findings);
  mapopt_text_free(summary);
  mapopt_findings_free(f);
  return ok;
}

/* A run's error lines, indented, after the comparison's line for it. */
static void print_failure(const char *tag, const mapopt_sim_result *r) {
  if (r->error == MAPOPT_SIM_NONE || !r->error_text)
    return;
  printf("%s failed with:\n", tag);
  for (const char *l = r->error_text; *l;) {
    const char *e = strchr(l, '\n');
    int n = e ? (int)(e - l) : (int)strlen(l);
    printf("  %.*s\n", n, l);
    l += n + (e ? 1 : 0);
  }
}

/* --compare FILE: the pipeline's mapper (A) and FILE (B) on one plan of
 * the same run, then the differences. The exit status is 0 when both
 * runs succeed. */
static int compare(mapopt_ctx *ctx, cli_pipeline *p, const char *file,
                   const mapopt_sim_options *opts, mapopt_diags *diags) {
  cli_mapper b;
  mapopt_dsl_options dsl = {0};
  cli_progress_phase(p->progress, "compiling the mapper to compare");
  int rc = cli_mapper_open(ctx, p, file, &dsl, diags, &b);
  cli_progress_phase(p->progress, NULL);
  cli_print_diags(stderr, diags, 0); /* B's warnings or its error */
  mapopt_diags_clear(diags);
  mapopt_sim_plan *plan = NULL;
  mapopt_sim_result *rb = NULL;
  char *text = NULL;
  if (rc != EXIT_VALID)
    goto done;
  rc = EXIT_INVALID;
  mapopt_sim_options o = *opts;
  o.progress = p->progress ? cli_progress_sim : NULL;
  o.progress_ud = p->progress;
  cli_progress_phase(p->progress, "analysing the dependences");
  bool ok = mapopt_sim_plan_new(ctx, p->run, &plan) == MAPOPT_OK;
  cli_progress_phase(p->progress, "simulating A");
  ok = ok && mapopt_sim_run_plan(ctx, p->machine, plan, p->mapper.prog, &o,
                                 &p->res) == MAPOPT_OK;
  cli_progress_phase(p->progress, "simulating B");
  ok = ok &&
       mapopt_sim_run_plan(ctx, p->machine, plan, b.prog, &o, &rb) == MAPOPT_OK;
  cli_progress_phase(p->progress, NULL);
  if (!ok || mapopt_guide_compare(ctx, p->res, p->mapper.file, rb, b.file,
                                  &text) != MAPOPT_OK) {
    fprintf(stderr, "mapopt sim: out of memory\n");
    goto done;
  }
  fputs(text, stdout);
  print_failure("A", p->res);
  print_failure("B", rb);
  rc = p->res->error == MAPOPT_SIM_NONE && rb->error == MAPOPT_SIM_NONE
           ? EXIT_VALID
           : EXIT_INVALID;
done:
  mapopt_text_free(text);
  mapopt_sim_result_free(rb);
  mapopt_sim_plan_free(plan);
  cli_mapper_close(&b);
  return rc;
}

/* The note after a TIMEOUT: which flag sets the limit. */
static void timeout_note(const mapopt_sim_result *r, const sim_args *a) {
  if (r->error == MAPOPT_SIM_TIMEOUT)
    fprintf(stderr,
            "mapopt sim: note: the simulated time limit is %" PRId64
            " s; raise it with --time-limit S\n",
            (a->opts.time_limit_ns > 0 ? a->opts.time_limit_ns
                                       : MAPOPT_SIM_DEFAULT_TIME_LIMIT_NS) /
                1000000000);
}

int cli_sim(int argc, char **argv) {
  sim_args a;
  int rc = parse_sim_args(argc, argv, &a);
  if (rc != EXIT_VALID)
    return rc;
  a.opts.trace = a.trace != NULL;
  /* Everything the run holds -- model, plan, simulation -- counts against
   * --max-bytes (the limit the instantiation's estimate also uses). */
  cli_budget budget = {.limit =
                           a.max_bytes > 0 ? a.max_bytes : INT64_C(4) << 30};
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open_budget(&ctx, &diags, &budget))
    return EXIT_INVALID;
  cli_progress *progress = a.bench ? NULL : cli_progress_start("sim");
  cli_pipeline p;
  cli_pipeline_args pa = {.machine = a.machine,
                          .app = a.app,
                          .size = a.size,
                          .iterations = a.iterations,
                          .warmup = a.warmup,
                          .mapper = a.mapper,
                          .dsl = {.region_keys = a.region_keys},
                          .max_ops = a.max_ops,
                          .max_bytes = a.max_bytes,
                          .limit_flags = true,
                          .progress = progress};
  rc = cli_pipeline_open(ctx, "sim", &pa, diags, &p);
  if (rc != EXIT_VALID)
    goto done;
  if (a.compare) {
    rc = compare(ctx, &p, a.compare, &a.opts, diags);
    goto done;
  }
  rc = EXIT_INVALID;
  if (a.bench) {
    rc = bench(ctx, p.machine, p.run, p.mapper.prog, &a.opts);
    goto done;
  }
  mapopt_status st = cli_pipeline_run(ctx, &p, &a.opts);
  if (st != MAPOPT_OK) {
    cli_error("mapopt sim: %s", mapopt_strerror(st));
    goto done;
  }
  char *report = NULL;
  if ((a.report || a.json) &&
      mapopt_sim_report_json(ctx, p.res, a.stats, &report) != MAPOPT_OK) {
    fprintf(stderr, "mapopt sim: out of memory\n");
    goto done;
  }
  /* The log first: a file that cannot be written loses nothing else. */
  fputs(a.json ? report : p.res->log, stdout);
  rc = p.res->error == MAPOPT_SIM_NONE ? EXIT_VALID : EXIT_INVALID;
  cli_progress_stop(progress); /* nothing slow is left */
  progress = NULL;
  if (a.explain && !explain(ctx, &p)) {
    fprintf(stderr, "mapopt sim: out of memory\n");
    rc = EXIT_INVALID;
  }
  timeout_note(p.res, &a);
  if (a.report && !write_output(a.report, "report", report))
    rc = EXIT_INVALID;
  if (a.trace && !write_output(a.trace, "trace", p.res->trace))
    rc = EXIT_INVALID;
  mapopt_text_free(report);
done:
  cli_progress_stop(progress);
  cli_print_diags(stderr, diags, 0);
  if (budget.hit)
    fprintf(stderr,
            "mapopt sim: note: the run needs more memory than its limit of "
            "%" PRId64 " bytes: raise it with --max-bytes B\n",
            budget.limit);
  cli_pipeline_close(&p);
  cli_close(ctx, diags);
  return rc;
}
