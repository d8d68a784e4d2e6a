/*
 * The checks the DSL fuzz targets share (dsl_check.c): compile, print and
 * compile again, and query.
 */
#ifndef MAPOPT_TESTS_FUZZ_DSL_CHECK_H
#define MAPOPT_TESTS_FUZZ_DSL_CHECK_H

#include <stddef.h>

#include "mapopt/core.h"

/* Compiles the mapper text (size bytes) and checks it; abort() on a
 * violated property. */
void fuzz_dsl_check(mapopt_ctx *ctx, mapopt_diags *diags, const char *text,
                    size_t size);

#endif
