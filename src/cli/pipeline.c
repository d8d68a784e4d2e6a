/*
 * The simulation pipeline every command that simulates shares (`mapopt
 * sim`, `mapopt show --app`, and the tuning commands, which stop before
 * the mapper): resolve the machine and the application, instantiate the
 * run (with the app's rank split), compile the mapper against the run's
 * shape and the app's task names, simulate, and free everything in the
 * reverse order. A mapper keeps its text, which AutoGuide quotes. Only the
 * public API is used.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

int cli_mapper_open(mapopt_ctx *ctx, const cli_pipeline *p, const char *path,
                    const mapopt_dsl_options *base, mapopt_diags *diags,
                    cli_mapper *m) {
  memset(m, 0, sizeof *m);
  mapopt_dsl_options opts = *base;
  opts.shape = &p->shape;
  mapopt_app_task_info(p->app, &opts.tasks, &opts.ntasks);
  if (path) {
    if (mapopt_file_read(ctx, path, diags, &m->text, &m->len) != MAPOPT_OK)
      return EXIT_INVALID;
    m->owned = true;
    snprintf(m->file, sizeof m->file, "%s", path);
  } else {
    /* A built-in application's expert mapper; for any other, the default
     * mapper, which needs no file: no statements, the DSL's defaults
     * (docs/dsl.md, "Defaults, all in one place"). */
    const char *name = mapopt_app_name(p->app);
    const char *text = mapopt_app_builtin_mapper(name, "expert");
    m->text = (char *)(text ? text : ""); /* compiled in: never freed */
    m->len = strlen(m->text);
    if (text)
      snprintf(m->file, sizeof m->file, "mappers/%s/expert.map", name);
    else
      snprintf(m->file, sizeof m->file, "(the default mapper)");
  }
  opts.file = m->file;
  mapopt_status st =
      mapopt_dsl_compile(ctx, m->text, m->len, &opts, diags, &m->prog);
  if (st == MAPOPT_ENOMEM)
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", m->file, 0, 0,
                     "out of memory");
  return st == MAPOPT_OK ? EXIT_VALID : EXIT_INVALID;
}

void cli_mapper_close(cli_mapper *m) {
  mapopt_dsl_free(m->prog);
  if (m->owned)
    mapopt_text_free(m->text);
  memset(m, 0, sizeof *m);
}

/* A run refused for its size: the library names the field of
 * mapopt_app_options that sets the limit ("options max_ops"); the command
 * line's user needs the flag, so a note names it, with the limit now. */
static void limit_note(mapopt_diags *diags, size_t from,
                       const mapopt_app_options *ao) {
  for (size_t i = from; i < mapopt_diags_count(diags); i++) {
    const char *m = mapopt_diags_get(diags, i)->message;
    bool ops = strstr(m, "options max_ops") != NULL;
    bool bytes = strstr(m, "options max_bytes") != NULL;
    if (!ops && !bytes)
      continue;
    mapopt_diags_add(
        diags, MAPOPT_SEV_NOTE, "", "mapopt", 0, 0,
        ops ? "the limit is %" PRId64 " operations: raise it with --max-ops N"
            : "the limit is %" PRId64 " bytes: raise it with --max-bytes B",
        ops ? (ao->max_ops > 0 ? ao->max_ops : INT64_C(10000000))
            : (ao->max_bytes > 0 ? ao->max_bytes : INT64_C(4) << 30));
    return;
  }
}

int cli_pipeline_setup(mapopt_ctx *ctx, const char *cmd,
                       const cli_pipeline_args *a, mapopt_diags *diags,
                       cli_pipeline *p) {
  memset(p, 0, sizeof *p);
  p->progress = a->progress;
  cli_progress_phase(p->progress, "loading the machine and the application");
  if (mapopt_machine_resolve(ctx, a->machine ? a->machine : "p100x4", diags,
                             &p->machine) != MAPOPT_OK)
    return EXIT_INVALID;
  const char *spec = NULL;
  if (mapopt_app_resolve(ctx, a->app, diags, &p->app, &spec) != MAPOPT_OK)
    return EXIT_INVALID;
  if (spec && a->size) {
    cli_error("mapopt %s: give the size either after ':' or with --size, not "
              "both",
              cmd);
    return EXIT_USAGE;
  }
  p->spec = spec ? spec : a->size;
  mapopt_app_options ao = {.spec = p->spec,
                           .iterations = a->iterations,
                           .warmup = a->warmup,
                           .max_ops = a->max_ops,
                           .max_bytes = a->max_bytes};
  size_t from = mapopt_diags_count(diags);
  cli_progress_phase(p->progress, "instantiating the application");
  if (mapopt_sim_instantiate(p->machine, p->app, &ao, diags, &p->run) !=
      MAPOPT_OK) {
    if (a->limit_flags)
      limit_note(diags, from, &ao);
    return EXIT_INVALID;
  }
  mapopt_sim_shape(p->machine, p->run, &p->shape);
  return EXIT_VALID;
}

int cli_pipeline_open(mapopt_ctx *ctx, const char *cmd,
                      const cli_pipeline_args *a, mapopt_diags *diags,
                      cli_pipeline *p) {
  int rc = cli_pipeline_setup(ctx, cmd, a, diags, p);
  if (rc != EXIT_VALID)
    return rc;
  cli_progress_phase(p->progress, "compiling the mapper");
  if (cli_mapper_open(ctx, p, a->mapper, &a->dsl, diags, &p->mapper) !=
      EXIT_VALID)
    return EXIT_INVALID;
  cli_progress_phase(p->progress, NULL);
  cli_print_diags(stderr, diags, 0); /* the mapper's warnings */
  mapopt_diags_clear(diags);
  return EXIT_VALID;
}

mapopt_status cli_pipeline_run(mapopt_ctx *ctx, cli_pipeline *p,
                               const mapopt_sim_options *opts) {
  mapopt_sim_options o = *opts;
  if (p->progress) {
    o.progress = cli_progress_sim;
    o.progress_ud = p->progress;
  }
  mapopt_sim_plan *plan;
  cli_progress_phase(p->progress, "analysing the dependences");
  mapopt_status st = mapopt_sim_plan_new(ctx, p->run, &plan);
  if (st == MAPOPT_OK) {
    cli_progress_phase(p->progress, "simulating");
    st =
        mapopt_sim_run_plan(ctx, p->machine, plan, p->mapper.prog, &o, &p->res);
    mapopt_sim_plan_free(plan);
  }
  cli_progress_phase(p->progress, NULL);
  return st;
}

void cli_pipeline_close(cli_pipeline *p) {
  mapopt_sim_result_free(p->res);
  cli_mapper_close(&p->mapper);
  mapopt_app_run_free(p->run);
  mapopt_app_free(p->app);
  mapopt_machine_free(p->machine);
  memset(p, 0, sizeof *p);
}
