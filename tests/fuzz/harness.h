/*
 * What every fuzz target shares: harness.c owns the libFuzzer entry point,
 * drops inputs longer than the target's limit and gives each input a fresh
 * context and diagnostics list, so a target holds only its own checks.
 */
#ifndef MAPOPT_TESTS_FUZZ_HARNESS_H
#define MAPOPT_TESTS_FUZZ_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "mapopt/core.h"

/* Longest input the target accepts; longer ones are skipped, which keeps
 * every run of the target bounded in time. */
extern const size_t fuzz_max_input;

/* Runs one input. Any violated property ends the process with abort(). */
void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size);

#endif
