/*
 * libFuzzer target: arbitrary bytes as a `mapopt-machine/1` file. Every
 * input must load or fail with a located diagnostic; a loaded machine must
 * survive the JSON round trip and give a shape.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/machine.h"

#include "harness.h"

const size_t fuzz_max_input = 1 << 20;

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size) {
  mapopt_machine *m = NULL;
  mapopt_status st = mapopt_machine_load_json(
      ctx, "fuzz.json", (const char *)data, size, diags, &m);
  if (st == MAPOPT_OK) {
    mapopt_machine_shape shape;
    mapopt_machine_shape_of(m, &shape);
    char *text;
    if (mapopt_machine_to_json(ctx, m, &text) == MAPOPT_OK) {
      mapopt_machine *again = NULL;
      if (mapopt_machine_load_json(ctx, "again.json", text, strlen(text), diags,
                                   &again) != MAPOPT_OK)
        abort(); /* what we write must load */
      mapopt_machine_free(again);
      mapopt_text_free(text);
    }
  } else if (st == MAPOPT_EINVAL && mapopt_diags_errors(diags) == 0) {
    abort(); /* a rejection always says why */
  }
  mapopt_machine_free(m);
}
