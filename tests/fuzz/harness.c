/* The libFuzzer entry point shared by every target; see harness.h. */
#include "harness.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size > fuzz_max_input)
    return 0;
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK)
    return 0;
  if (mapopt_diags_new(ctx, &diags) == MAPOPT_OK) {
    fuzz_target(ctx, diags, data, size);
    mapopt_diags_free(diags);
  }
  mapopt_ctx_free(ctx);
  return 0;
}
