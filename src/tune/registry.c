/*
 * The optimizers by name (include/mapopt/tune.h): the registry that
 * mapopt_optimizer_new and the driver look names up in. It sits above
 * every optimizer's file, which all use optimizer.c's batching, so the
 * calls between the files stay a tree.
 */
#include <string.h>

#include "tune/tune.h"

static const mapopt__optimizer_vt *const registry[] = {
    &mapopt__opt_guided, &mapopt__opt_random, &mapopt__opt_opentuner,
    &mapopt__opt_ccd, &mapopt__opt_llm};
static const char *const names[] = {"guided", "random", "opentuner",
                                    "ccd",    "llm",    NULL};

const char *const *mapopt_optimizer_names(void) {
  return names;
}

const mapopt__optimizer_vt *mapopt__optimizer_find(const char *name) {
  for (size_t i = 0; i < sizeof registry / sizeof registry[0]; i++)
    if (!strcmp(registry[i]->name, name))
      return registry[i];
  return NULL;
}

mapopt_status mapopt_optimizer_new(mapopt_ctx *ctx, const char *name,
                                   const mapopt_space *space,
                                   const mapopt_optimizer_options *o,
                                   mapopt_optimizer **out) {
  if (!ctx || !name || !space || !out)
    return MAPOPT_EINVAL;
  const mapopt__optimizer_vt *vt = mapopt__optimizer_find(name);
  if (!vt)
    return MAPOPT_ENOTFOUND;
  return mapopt__optimizer_create(ctx, vt, space, o, out);
}
