/*
 * libFuzzer target: an application model and a mapper together, the way a
 * user or a tuner gives them: the bytes before the first line "%%" are a
 * `mapopt-app/1` file, the rest is the mapper (none: the built-in
 * circuit expert's text is used, so that the model alone is exercised). The
 * model is instantiated on two p100x4 nodes within small limits, the
 * mapper compiled against it, and the run simulated with an event budget.
 * Whatever the two say, the outcome is a located rejection or a result: a
 * rejection always carries an error, a simulated failure its text, and a
 * run that completes a lower bound within its elapsed time.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/app.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

#include "harness.h"

const size_t fuzz_max_input = 1 << 18;

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *d, const uint8_t *data,
                 size_t size) {
  const char *text = (const char *)data;
  const char *sep = NULL;
  for (size_t i = 0; i + 3 <= size && !sep; i++)
    if (memcmp(text + i, "%%\n", 3) == 0 && (i == 0 || text[i - 1] == '\n'))
      sep = text + i;
  size_t app_len = sep ? (size_t)(sep - text) : size;
  const char *mapper =
      sep ? sep + 3 : mapopt_app_builtin_mapper("circuit", "expert");
  size_t mapper_len = sep ? size - app_len - 3 : strlen(mapper);
  mapopt_machine *m = NULL;
  if (mapopt_machine_resolve(ctx, "p100x4:nodes=2", d, &m) != MAPOPT_OK)
    abort(); /* a preset always resolves */
  mapopt_app *app = NULL;
  mapopt_app_run *run = NULL;
  mapopt_program *prog = NULL;
  mapopt_sim_result *res = NULL;
  mapopt_status st =
      mapopt_app_load_json(ctx, "fuzz.json", text, app_len, d, &app);
  if (st == MAPOPT_EINVAL && mapopt_diags_errors(d) == 0)
    abort();
  if (st != MAPOPT_OK)
    goto out;
  mapopt_app_options ao = {
      .iterations = -1, .warmup = -1, .max_ops = 20000, .max_bytes = 64 << 20};
  st = mapopt_sim_instantiate(m, app, &ao, d, &run);
  if (st == MAPOPT_EINVAL && mapopt_diags_errors(d) == 0)
    abort();
  if (st != MAPOPT_OK)
    goto out;
  mapopt_machine_shape shape;
  mapopt_sim_shape(m, run, &shape);
  mapopt_dsl_options opts = {.file = "fuzz.map", .shape = &shape};
  mapopt_app_task_info(app, &opts.tasks, &opts.ntasks);
  st = mapopt_dsl_compile(ctx, mapper, mapper_len, &opts, d, &prog);
  if (st != MAPOPT_OK) {
    if (st != MAPOPT_ENOMEM && mapopt_diags_errors(d) == 0)
      abort();
    goto out;
  }
  mapopt_sim_options so = {.max_events = 200000, .time_limit_ns = 100000000000};
  if (mapopt_sim_run(ctx, m, run, prog, &so, &res) != MAPOPT_OK)
    abort();
  if (res->error == MAPOPT_SIM_NONE &&
      (res->lower_bound_ns > res->elapsed_ns || res->efficiency > 1.0))
    abort();
  if (res->error != MAPOPT_SIM_NONE && !res->error_text)
    abort();
out:
  mapopt_sim_result_free(res);
  mapopt_dsl_free(prog);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  mapopt_machine_free(m);
}
