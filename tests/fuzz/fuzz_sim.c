/*
 * libFuzzer target: arbitrary bytes as a mapper for small built-in
 * applications, simulated end to end. Whatever the mapper says, a
 * simulation ends in a result or a clean simulated error -- never a crash,
 * a hang (the event budget bounds it) or a lower bound above the elapsed
 * time. The first byte picks the application.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/app.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

#include "harness.h"

static const char *const apps[] = {"circuit:small", "stencil:small",
                                   "pennant:small", "cannon:small-k",
                                   "johnson:small", "apps/ring2.json"};

const size_t fuzz_max_input = 1 << 14;

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *d, const uint8_t *data,
                 size_t size) {
  if (size < 1)
    return;
  const char *arg = apps[data[0] % (sizeof apps / sizeof apps[0])];
  if (strchr(arg, '/')) /* files need the source tree: use the built-ins */
    arg = "circuit:small";
  mapopt_machine *m = NULL;
  mapopt_app *app = NULL;
  mapopt_app_run *run = NULL;
  mapopt_program *prog = NULL;
  mapopt_sim_result *res = NULL;
  const char *spec = NULL;
  if (mapopt_machine_resolve(ctx, data[0] & 0x80 ? "lassen:nodes=2" : "p100x4",
                             d, &m) != MAPOPT_OK ||
      mapopt_app_resolve(ctx, arg, d, &app, &spec) != MAPOPT_OK)
    abort(); /* the built-ins always load */
  mapopt_app_options ao = {.spec = spec, .iterations = 2, .warmup = 1};
  if (mapopt_sim_instantiate(m, app, &ao, d, &run) != MAPOPT_OK)
    abort();
  mapopt_machine_shape shape;
  mapopt_sim_shape(m, run, &shape);
  mapopt_dsl_options opts = {.file = "fuzz.map", .shape = &shape};
  if (mapopt_dsl_compile(ctx, (const char *)data + 1, size - 1, &opts, d,
                         &prog) == MAPOPT_OK) {
    mapopt_sim_options so = {.max_events = 200000,
                             .time_limit_ns = 100000000000};
    if (mapopt_sim_run(ctx, m, run, prog, &so, &res) != MAPOPT_OK)
      abort();
    if (res->error == MAPOPT_SIM_NONE && res->lower_bound_ns > res->elapsed_ns)
      abort();
    if (res->error != MAPOPT_SIM_NONE && !res->error_text)
      abort();
    mapopt_sim_result_free(res);
  }
  mapopt_dsl_free(prog);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  mapopt_machine_free(m);
}
