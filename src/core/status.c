/*
 * Status codes and the context object. The names and messages of the status
 * codes come from the single list in mapopt/core.h.
 */
#include <stdlib.h>

#include "core/core.h"

const char *mapopt_status_name(mapopt_status status) {
  switch (status) {
#define NAME_CASE(name, code, msg)                                             \
  case MAPOPT_##name:                                                          \
    return #name;
    MAPOPT_STATUS_LIST(NAME_CASE)
#undef NAME_CASE
  }
  return "EUNKNOWN";
}

const char *mapopt_strerror(mapopt_status status) {
  switch (status) {
#define MSG_CASE(name, code, msg)                                              \
  case MAPOPT_##name:                                                          \
    return msg;
    MAPOPT_STATUS_LIST(MSG_CASE)
#undef MSG_CASE
  }
  return "unknown status";
}

/* The default hook: the C library's allocator. */
static void *libc_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  (void)ud;
  (void)osize;
  if (nsize == 0) {
    free(ptr);
    return NULL;
  }
  return realloc(ptr, nsize);
}

mapopt_status mapopt_ctx_new(mapopt_alloc_fn alloc, void *ud,
                             mapopt_ctx **out) {
  if (!out)
    return MAPOPT_EINVAL;
  if (!alloc)
    alloc = libc_alloc;
  mapopt_ctx *ctx = alloc(ud, NULL, 0, sizeof *ctx);
  if (!ctx)
    return MAPOPT_ENOMEM;
  ctx->alloc = alloc;
  ctx->alloc_ud = ud;
  *out = ctx;
  return MAPOPT_OK;
}

void mapopt_ctx_free(mapopt_ctx *ctx) {
  if (ctx)
    ctx->alloc(ctx->alloc_ud, ctx, sizeof *ctx, 0);
}
