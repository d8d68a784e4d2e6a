/* The shared unit-test fixture; see fixture.h. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include "fixture.h"

mapopt_ctx *ctx;
mapopt_diags *diags;

int fixture_setup(void **state) {
  (void)state;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK)
    return -1;
  if (mapopt_diags_new(ctx, &diags) != MAPOPT_OK) {
    mapopt_ctx_free(ctx);
    return -1;
  }
  return 0;
}

int fixture_teardown(void **state) {
  (void)state;
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
  return 0;
}

void fixture_print_diags(void) {
  char line[1024];
  for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
    mapopt_diag_format(mapopt_diags_get(diags, i), line, sizeof line);
    print_message("  %s\n", line);
  }
}
