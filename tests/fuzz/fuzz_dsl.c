/*
 * libFuzzer target: parse, check and load arbitrary bytes as a mapper; for
 * every program that loads, check the printer's round trip and run a few
 * mapping queries. Any crash, sanitizer report, hang or round-trip
 * mismatch is a bug. The same entry point replays the checked-in corpus
 * under ctest (replay.c), so every corpus file is a regression test.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dsl_check.h"
#include "harness.h"

const size_t fuzz_max_input = 1 << 20;

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size) {
  fuzz_dsl_check(ctx, diags, (const char *)data, size);
}
