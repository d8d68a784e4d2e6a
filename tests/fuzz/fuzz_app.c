/*
 * libFuzzer target: arbitrary bytes as a `mapopt-app/1` file, loaded and
 * instantiated with bounded sizes. Every input must load or fail with a
 * diagnostic, never crash, hang or allocate without bound.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/app.h"

#include "harness.h"

const size_t fuzz_max_input = 1 << 20;

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size) {
  mapopt_app *app = NULL;
  mapopt_status st = mapopt_app_load_json(ctx, "fuzz.json", (const char *)data,
                                          size, diags, &app);
  if (st == MAPOPT_OK) {
    mapopt_app_options opts = {.iterations = -1,
                               .warmup = -1,
                               .max_ops = 20000,
                               .max_bytes = 64 << 20};
    mapopt_app_machine mach = {2, 4, 1};
    mapopt_app_run *run = NULL;
    st = mapopt_app_instantiate(app, &opts, &mach, diags, &run);
    if (st == MAPOPT_EINVAL && mapopt_diags_errors(diags) == 0)
      abort(); /* a rejection always says why */
    mapopt_app_run_free(run);
  } else if (st == MAPOPT_EINVAL && mapopt_diags_errors(diags) == 0) {
    abort();
  }
  mapopt_app_free(app);
}
