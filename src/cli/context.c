/*
 * A command's context and diagnostics list, with or without a memory
 * budget counted by the context's allocator.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

/* The allocator of a budgeted context (mapopt_alloc_fn): the C library's,
 * refusing to grow the bytes in use past the limit. The CLI allocates
 * from one thread per context. */
static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  cli_budget *b = ud;
  if (nsize == 0) {
    free(ptr);
    b->live -= (int64_t)osize;
    return NULL;
  }
  int64_t grow = (int64_t)nsize - (int64_t)osize;
  if (grow > 0 && b->live + grow > b->limit) {
    b->hit = true;
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p)
    b->live += grow;
  return p;
}

static bool open_with(mapopt_alloc_fn fn, void *ud, mapopt_ctx **ctx,
                      mapopt_diags **diags) {
  if (mapopt_ctx_new(fn, ud, ctx) != MAPOPT_OK) {
    fprintf(stderr, "mapopt: out of memory\n");
    return false;
  }
  if (mapopt_diags_new(*ctx, diags) != MAPOPT_OK) {
    mapopt_ctx_free(*ctx);
    fprintf(stderr, "mapopt: out of memory\n");
    return false;
  }
  return true;
}

bool cli_open(mapopt_ctx **ctx, mapopt_diags **diags) {
  return open_with(NULL, NULL, ctx, diags);
}

bool cli_open_budget(mapopt_ctx **ctx, mapopt_diags **diags, cli_budget *b) {
  return open_with(budget_alloc, b, ctx, diags);
}

void cli_close(mapopt_ctx *ctx, mapopt_diags *diags) {
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
}
