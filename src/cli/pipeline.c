/*
 * The simulation pipeline every command that simulates shares (`mapopt
 * sim`, `mapopt show --app`, and the tuning commands, which stop before
 * the mapper): resolve the machine and the application, instantiate the
 * run (with the app's rank split), compile the mapper against the run's
 * shape and the app's task names, simulate, and free everything in the
 * reverse order. Only the public API is used.
 */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* The mapper: the file, or the built-in app's expert mapper. */
static mapopt_status compile_mapper(mapopt_ctx *ctx, const char *path,
                                    cli_pipeline *p,
                                    const mapopt_dsl_options *base,
                                    mapopt_diags *diags) {
  mapopt_dsl_options opts = *base;
  opts.shape = &p->shape;
  mapopt_app_task_info(p->app, &opts.tasks, &opts.ntasks);
  if (path)
    return cli_compile_file(ctx, path, &opts, diags, &p->prog);
  const char *name = mapopt_app_name(p->app);
  const char *text = mapopt_app_builtin_mapper(name, "expert");
  if (!text) {
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", name, 0, 0,
                     "no built-in expert mapper for this application: "
                     "give --mapper FILE");
    return MAPOPT_ENOTFOUND;
  }
  char file[300];
  snprintf(file, sizeof file, "mappers/%s/expert.map", name);
  opts.file = file;
  return mapopt_dsl_compile(ctx, text, strlen(text), &opts, diags, &p->prog);
}

int cli_pipeline_setup(mapopt_ctx *ctx, const char *cmd,
                       const cli_pipeline_args *a, mapopt_diags *diags,
                       cli_pipeline *p) {
  memset(p, 0, sizeof *p);
  if (mapopt_machine_resolve(ctx, a->machine ? a->machine : "p100x4", diags,
                             &p->machine) != MAPOPT_OK)
    return EXIT_INVALID;
  const char *spec = NULL;
  if (mapopt_app_resolve(ctx, a->app, diags, &p->app, &spec) != MAPOPT_OK)
    return EXIT_INVALID;
  if (spec && a->size) {
    fprintf(stderr,
            "mapopt %s: give the size either after ':' or with --size, not "
            "both\n",
            cmd);
    return EXIT_USAGE;
  }
  p->spec = spec ? spec : a->size;
  mapopt_app_options ao = {.spec = p->spec,
                           .iterations = a->iterations,
                           .warmup = a->warmup,
                           .max_ops = a->max_ops,
                           .max_bytes = a->max_bytes};
  if (mapopt_sim_instantiate(p->machine, p->app, &ao, diags, &p->run) !=
      MAPOPT_OK)
    return EXIT_INVALID;
  mapopt_sim_shape(p->machine, p->run, &p->shape);
  return EXIT_VALID;
}

int cli_pipeline_open(mapopt_ctx *ctx, const char *cmd,
                      const cli_pipeline_args *a, mapopt_diags *diags,
                      cli_pipeline *p) {
  int rc = cli_pipeline_setup(ctx, cmd, a, diags, p);
  if (rc != EXIT_VALID)
    return rc;
  if (compile_mapper(ctx, a->mapper, p, &a->dsl, diags) != MAPOPT_OK)
    return EXIT_INVALID;
  cli_print_diags(stderr, diags, 0); /* the mapper's warnings */
  mapopt_diags_clear(diags);
  return EXIT_VALID;
}

mapopt_status cli_pipeline_run(mapopt_ctx *ctx, cli_pipeline *p,
                               const mapopt_sim_options *opts) {
  return mapopt_sim_run(ctx, p->machine, p->run, p->prog, opts, &p->res);
}

void cli_pipeline_close(cli_pipeline *p) {
  mapopt_sim_result_free(p->res);
  mapopt_dsl_free(p->prog);
  mapopt_app_run_free(p->run);
  mapopt_app_free(p->app);
  mapopt_machine_free(p->machine);
  memset(p, 0, sizeof *p);
}
