/*
 * Internals of the machine module, shared by its files: the owning wrapper
 * around the public mapopt_machine, the compiled-in preset table (generated
 * at build time from the JSON files of machines/ by
 * cmake/embed.cmake), the loader entry point with preset
 * parameters, and helpers for tests.
 *
 * A machine owns everything it points to through one arena, so
 * mapopt_machine_free is a single call whatever the machine came from.
 */
#ifndef MAPOPT_SRC_MACHINE_H
#define MAPOPT_SRC_MACHINE_H

#include <inttypes.h>

#include "core/core.h"
#include "mapopt/machine.h"

/* A free-text provenance entry of the "sources" object. */
typedef struct mapopt__machine_source {
  const char *key;
  const char *value;
} mapopt__machine_source;

/* Parameters a preset accepts ("lassen:nodes=4"), from its "params". */
enum { MAPOPT__MPARAM_NODES, MAPOPT__MPARAM_RANKS, MAPOPT__MPARAM_COUNT };

typedef struct mapopt__machine_impl {
  mapopt_machine pub; /* first: a mapopt_machine * is a pointer to this */
  mapopt_ctx *ctx;
  mapopt__arena arena; /* the name, socket lists, sources */
  mapopt__machine_source *sources;
  size_t nsources;
  int64_t param_max[MAPOPT__MPARAM_COUNT]; /* 0: not a parameter */
} mapopt__machine_impl;

static inline mapopt__machine_impl *mapopt__machine_impl_of(mapopt_machine *m) {
  return (mapopt__machine_impl *)m;
}
static inline const mapopt__machine_impl *
mapopt__machine_cimpl_of(const mapopt_machine *m) {
  return (const mapopt__machine_impl *)m;
}

/* The message of a rank split that does not divide the GPUs of a node
 * (docs/machines.md, "Naming a machine"): ranks per node, then GPUs per node.
 */
#define MAPOPT__MACHINE_RANKS_ERROR                                            \
  "ranks_per_node (%" PRId64 ") must divide the GPU count (%" PRId64 ")"

/* A zeroed machine with its arena; NULL on ENOMEM. */
mapopt__machine_impl *mapopt__machine_new(mapopt_ctx *ctx);

/* Names of the parameters, indexed by MAPOPT__MPARAM_*. */
extern const char *const mapopt__machine_param_names[MAPOPT__MPARAM_COUNT];

/*
 * Values requested for a preset's parameters; 0 means not requested. arg
 * is the resolve argument, named by diagnostics about the values.
 */
typedef struct mapopt__machine_params {
  const char *arg;
  int64_t value[MAPOPT__MPARAM_COUNT];
} mapopt__machine_params;

/*
 * mapopt_machine_load_json with parameters applied on top of the file's
 * values (params may be NULL). A parameter the file does not declare in
 * "params", or a value out of its range, is an error naming params->arg.
 */
mapopt_status mapopt__machine_load(mapopt_ctx *ctx, const char *file,
                                   const char *text, size_t len,
                                   const mapopt__machine_params *params,
                                   mapopt_diags *diags, mapopt_machine **out);

/* Field-by-field equality of two models (names, socket lists, every rate;
 * sources and parameter declarations are not part of the model). */
bool mapopt__machine_equal(const mapopt_machine *a, const mapopt_machine *b);

/*
 * The probe with its inputs redirected, hwloc style, for tests: root is
 * prepended to every /sys and /proc path ("" for the real host), and
 * nvidia-smi is consulted only when use_smi is set.
 */
mapopt_status mapopt__machine_probe_at(mapopt_ctx *ctx, const char *root,
                                       bool use_smi, bool measure,
                                       mapopt_diags *diags,
                                       mapopt_machine **out);

/* The compiled-in presets (generated file), sorted by name. */
typedef struct mapopt__machine_preset {
  const char *name; /* the file name without ".json" */
  const char *json;
} mapopt__machine_preset;

extern const mapopt__machine_preset mapopt__machine_presets[];
extern const size_t mapopt__machine_presets_count;
/* The names again, NULL-terminated, for mapopt_machine_presets(). */
extern const char *const mapopt__machine_presets_names[];

/* The cache a processor of kind has when its file does not say (KiB). */
int64_t mapopt__machine_default_cache_kib(int kind, int64_t threads);

#endif /* MAPOPT_SRC_MACHINE_H */
