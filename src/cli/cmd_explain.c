/*
 * `mapopt explain`: AutoGuide on a saved run. It reads the run's raw output
 * (any program's, or `mapopt sim`'s log), optionally the simulator's report
 * and the mapper, application and machine it ran with, and prints the
 * findings as the feedback text an optimizer reads (at a chosen level) or
 * as JSON. Findings are the result, not a failure: the exit status is 0
 * whenever the analysis ran.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

const char cli_explain_usage[] =
    "usage: mapopt explain LOG [--report R.json] [--mapper F] [--app A]\n"
    "                          [--machine M] [--level L] [--json]\n\n"
    "Reads LOG, the output of a run of a mapper (a Legion or StarPU\n"
    "program's stdout and stderr, or the log of mapopt sim; '-' for stdin),\n"
    "and prints what AutoGuide finds in it: each error or bottleneck with an\n"
    "explanation and a suggested change to the mapper.\n\n"
    "  --report R.json      the simulator's report of the same run (mapopt\n"
    "                       sim --report): adds findings from its profile\n"
    "  --mapper F           the mapper the run used: statements are named\n"
    "  --app A              the application (built-in name[:size] or JSON\n"
    "                       file): tasks, arguments and variants are named\n"
    "  --machine M          the machine (default p100x4 with --app)\n"
    "  --level L            raw, explain, suggest or full (default full):\n"
    "                       raw prints the output's own lines only\n"
    "  --json               print every finding with its structured edits\n"
    "  --exit-status N      the run's exit status (a failed run without a\n"
    "                       known message is reported as failed)\n"
    "  --signal N           the run died of signal N\n"
    "  --timed-out          the run was stopped at its time limit\n\n"
    "Exit status: 0 the analysis ran (with findings or not), 1 an input\n"
    "could not be read or is invalid, 2 usage error.\n";

typedef struct explain_args {
  const char *log, *report, *mapper, *app, *machine;
  mapopt_guide_level level;
  bool json, timed_out;
  int exit_status, signal;
} explain_args;

static int parse_explain_args(int argc, char **argv, explain_args *a) {
  memset(a, 0, sizeof *a);
  a->level = MAPOPT_GUIDE_FULL;
  a->exit_status = -1;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    static const char *const valued[] = {
        "--report", "--mapper",      "--app",    "--machine",
        "--level",  "--exit-status", "--signal", NULL};
    const char *val;
    if (cli_option_value("explain", valued, argc, argv, &i, &val) != EXIT_VALID)
      return EXIT_USAGE;
    int64_t n;
    if (!strcmp(o, "--report")) {
      a->report = val;
    } else if (!strcmp(o, "--mapper")) {
      a->mapper = val;
    } else if (!strcmp(o, "--app")) {
      a->app = val;
    } else if (!strcmp(o, "--machine")) {
      a->machine = val;
    } else if (!strcmp(o, "--level")) {
      if (mapopt_guide_level_parse(val, &a->level) != MAPOPT_OK)
        return cli_usage_error("explain",
                               "--level takes raw, explain, "
                               "suggest or full, not '%s'",
                               val);
    } else if (!strcmp(o, "--exit-status")) {
      if (!cli_parse_i64(val, 0, 255, &n))
        return cli_usage_error("explain", "--exit-status must be 0 to 255");
      a->exit_status = (int)n;
    } else if (!strcmp(o, "--signal")) {
      if (!cli_parse_i64(val, 1, 64, &n))
        return cli_usage_error("explain", "--signal must be 1 to 64");
      a->signal = (int)n;
    } else if (!strcmp(o, "--json")) {
      a->json = true;
    } else if (!strcmp(o, "--timed-out")) {
      a->timed_out = true;
    } else if (strcmp(o, "-") == 0 && !a->log) {
      a->log = o;
    } else if (cli_operand("explain", o, &a->log, "log file") != EXIT_VALID) {
      return EXIT_USAGE;
    }
  }
  if (!a->log)
    return cli_usage_error("explain", "no log file given");
  return EXIT_VALID;
}

/* Everything explain loads, freed in one place. */
typedef struct loaded {
  char *log, *report, *mapper_text;
  size_t log_len, report_len, mapper_len;
  bool log_malloced;
  mapopt_sim_result *res;
  mapopt_machine *machine;
  mapopt_app *app;
  mapopt_app_run *run;
  mapopt_program *prog;
} loaded;

static void unload(loaded *L) {
  if (L->log_malloced)
    free(L->log);
  else
    mapopt_text_free(L->log);
  mapopt_text_free(L->report);
  mapopt_text_free(L->mapper_text);
  mapopt_sim_result_free(L->res);
  mapopt_dsl_free(L->prog);
  mapopt_app_run_free(L->run);
  mapopt_app_free(L->app);
  mapopt_machine_free(L->machine);
}

/* Loads the inputs; false after a diagnostic (in diags, or printed). */
static bool load(mapopt_ctx *ctx, mapopt_diags *diags, const explain_args *a,
                 loaded *L) {
  if (strcmp(a->log, "-") == 0) {
    L->log = cli_read_stdin(&L->log_len);
    L->log_malloced = true;
    if (!L->log) {
      fprintf(stderr, "mapopt explain: out of memory reading stdin\n");
      return false;
    }
  } else if (mapopt_file_read(ctx, a->log, diags, &L->log, &L->log_len) !=
             MAPOPT_OK) {
    return false;
  }
  if (a->report &&
      (mapopt_file_read(ctx, a->report, diags, &L->report, &L->report_len) !=
           MAPOPT_OK ||
       mapopt_sim_report_read(ctx, a->report, L->report, L->report_len, diags,
                              &L->res) != MAPOPT_OK))
    return false;
  if (a->app || a->machine || a->mapper) {
    if (mapopt_machine_resolve(ctx, a->machine ? a->machine : "p100x4", diags,
                               &L->machine) != MAPOPT_OK)
      return false;
  }
  if (a->app) {
    const char *spec = NULL;
    mapopt_app_options ao = {.iterations = -1, .warmup = -1};
    if (mapopt_app_resolve(ctx, a->app, diags, &L->app, &spec) != MAPOPT_OK)
      return false;
    ao.spec = spec;
    if (mapopt_sim_instantiate(L->machine, L->app, &ao, diags, &L->run) !=
        MAPOPT_OK)
      return false;
  }
  if (a->mapper) {
    if (mapopt_file_read(ctx, a->mapper, diags, &L->mapper_text,
                         &L->mapper_len) != MAPOPT_OK)
      return false;
    /* A mapper that does not compile is what the log may be about: its
     * text still serves (to quote lines), its diagnostics are the log's. */
    mapopt_machine_shape shape;
    if (L->run)
      mapopt_sim_shape(L->machine, L->run, &shape);
    else
      mapopt_machine_shape_of(L->machine, &shape);
    mapopt_dsl_options opts = {.file = a->mapper, .shape = &shape};
    if (L->app)
      mapopt_app_task_info(L->app, &opts.tasks, &opts.ntasks);
    mapopt_diags *scratch;
    if (mapopt_diags_new(ctx, &scratch) != MAPOPT_OK)
      return false;
    mapopt_status st = mapopt_dsl_compile(ctx, L->mapper_text, L->mapper_len,
                                          &opts, scratch, &L->prog);
    mapopt_diags_free(scratch);
    if (st == MAPOPT_ENOMEM) {
      fprintf(stderr, "mapopt explain: out of memory\n");
      return false;
    }
  }
  return true;
}

int cli_explain(int argc, char **argv) {
  explain_args a;
  int rc = parse_explain_args(argc, argv, &a);
  if (rc != EXIT_VALID)
    return rc;
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  loaded L = {0};
  mapopt_findings *f = NULL;
  char *text = NULL;
  rc = EXIT_INVALID;
  if (!load(ctx, diags, &a, &L))
    goto done;
  mapopt_guide_input in = {.output = L.log,
                           .output_len = L.log_len,
                           .exit_status = a.exit_status,
                           .signal = a.signal,
                           .timed_out = a.timed_out,
                           .result = L.res,
                           .mapper = L.prog,
                           .mapper_text = L.mapper_text,
                           .mapper_len = L.mapper_len,
                           .run = L.run,
                           .machine = L.machine};
  mapopt_status st = mapopt_guide_analyze(ctx, &in, &f);
  if (st == MAPOPT_OK)
    st = a.json ? mapopt_guide_findings_json(ctx, f, &text)
                : mapopt_guide_feedback(ctx, f, a.level, &text);
  if (st != MAPOPT_OK) {
    fprintf(stderr, "mapopt explain: %s\n", mapopt_strerror(st));
    goto done;
  }
  fputs(text, stdout);
  rc = EXIT_VALID;
done:
  cli_print_diags(stderr, diags, 0);
  mapopt_text_free(text);
  mapopt_findings_free(f);
  unload(&L);
  cli_close(ctx, diags);
  return rc;
}
