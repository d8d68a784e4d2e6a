/*
 * mapopt machine: the model of a GPU cluster that the simulator runs on
 * (docs/machines.md, "The JSON format, key by key"): identical nodes of
 * processors and memories, affinity edges with bandwidths and access rates,
 * copy channels, runtime overheads and address spaces (ranks).
 *
 * A machine comes from a preset ("p100x4", "lassen:nodes=4"), a
 * `mapopt-machine/1` JSON file, or the one-line synthetic description of
 * the DSL ("nodes=2 gpu=4 cpu=8 omp=2"). It is validated when loaded and
 * immutable afterwards; the struct below is public for reading. All rates
 * are integers, converted once at load time: bandwidth in MB/s (1 GB/s = 1000),
 * peaks in MFLOP/s, gather and atomic rates in accesses per ms, times in ns,
 * capacities in bytes.
 */
#ifndef MAPOPT_MACHINE_H
#define MAPOPT_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/core.h"
#include "mapopt/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Copy channels (docs/machines.md, "channels"). */
typedef enum mapopt_channel {
  MAPOPT_CHAN_FB_LOCAL,
  MAPOPT_CHAN_FB_FB_PEER,
  MAPOPT_CHAN_FB_HOST,
  MAPOPT_CHAN_HOST_HOST,
  MAPOPT_CHAN_NETWORK,
  MAPOPT_CHAN_COUNT
} mapopt_channel;

/* "FB_LOCAL", ...; NULL when out of range. */
MAPOPT_API const char *mapopt_channel_name(mapopt_channel c);

/* One processor kind of a node (CPU, GPU, OMP; IO, PY, PROC are never
 * modelled and have count 0). */
typedef struct mapopt_machine_procs {
  int64_t count;      /* per node */
  int64_t threads;    /* OMP: cores per processor; others 1 */
  int64_t mflops_f64; /* per processor (OMP: threads x per-core) */
  int64_t mflops_f32;
  int64_t mflops_f64_matrix; /* 0: same as f64 */
  int64_t cache_bytes;       /* the last-level cache one processor's kernels
                                block their operands in (a GPU's L2) */
  int64_t overhead_ns;       /* task_overhead_ns of a leaf task */
  int64_t inner_overhead_ns; /* processor time of an inner task body */
  /* Socket of each processor: GPUs as listed ("socket"), CPU i and OMP j
   * on socket i mod sockets. count entries; NULL when count is 0. */
  const int64_t *socket;
} mapopt_machine_procs;

/* One memory kind. VIRTUAL is never present. */
typedef struct mapopt_machine_mems {
  bool present;
  /* How many: SYSMEM, ZCMEM, RDMEM one per node; SOCKMEM one per socket;
   * FBMEM one per GPU. */
  int64_t capacity; /* bytes, per memory (before the rank split) */
} mapopt_machine_mems;

/* A processor -> memory affinity edge (docs/machines.md, "affinity"). */
typedef struct mapopt_affinity {
  bool present; /* false: no access */
  int64_t bw_mbps;
  int64_t lat_ns;
  int64_t gather_per_ms;
  int64_t atomic_per_ms;
} mapopt_affinity;

typedef struct mapopt_channel_params {
  bool present;
  int64_t bw_mbps;
  int64_t cross_socket_bw_mbps; /* FB_FB_PEER only; 0: same as bw */
  int64_t lat_ns;
  bool peer_link; /* FB_FB_PEER: dedicated pout/pin ports ("peer_link")
                     instead of the host-link ports ("host_link") */
  bool gpudirect; /* NETWORK only */
} mapopt_channel_params;

typedef struct mapopt_machine_runtime {
  int64_t launch_ns, launch_traced_ns;
  int64_t map_ns, map_traced_ns;
  int64_t fence_ns, future_ns, ipc_lat_ns;
  int64_t window_ops;
} mapopt_machine_runtime;

typedef struct mapopt_machine {
  const char *name; /* preset or file name */
  int64_t nodes;
  int64_t ranks_per_node; /* R >= 1; divides the GPU count */
  int64_t sockets;        /* per node */
  int64_t util_count;     /* UTIL processors per node */
  mapopt_machine_procs procs[MAPOPT_PROC_KIND_COUNT];
  mapopt_machine_mems mems[MAPOPT_MEM_KIND_COUNT];
  mapopt_affinity affinity[MAPOPT_PROC_KIND_COUNT][MAPOPT_MEM_KIND_COUNT];
  mapopt_channel_params channels[MAPOPT_CHAN_COUNT];
  mapopt_machine_runtime runtime;
} mapopt_machine;

/*
 * The most nodes a machine may have, however it is given: a JSON file's
 * "nodes", the largest "max" its params may allow, a preset's
 * nodes=N, the one-line form. Simulating 1024 nodes takes seconds to a
 * minute; a machine beyond it is refused rather than left to run for hours.
 */
#define MAPOPT_MACHINE_MAX_NODES 1024

/*
 * Loads a machine from `mapopt-machine/1` JSON text. file names the input
 * in diagnostics. Every problem -- malformed JSON, unknown keys, missing
 * mandatory edges, impossible numbers -- is an error diagnostic located at
 * FILE:LINE:COL of the offending key or value. On success *out is owned by
 * the caller (mapopt_machine_free). Errors: MAPOPT_EINVAL when there is an
 * error diagnostic; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_machine_load_json(mapopt_ctx *ctx,
                                                  const char *file,
                                                  const char *text, size_t len,
                                                  mapopt_diags *diags,
                                                  mapopt_machine **out);

/*
 * Resolves a machine argument as the CLI accepts it: a preset name with
 * optional parameters ("lassen:nodes=4"), "local" (the probe's file), the
 * path of a JSON file (it ends in ".json" or contains '/'), or the one-line
 * shape ("nodes=2 gpu=4 ..."), which takes the p100x4 preset's rates for
 * what it does not say. *out is owned by the caller (mapopt_machine_free).
 * Errors, each with a diagnostic: MAPOPT_ENOTFOUND for an unknown preset or
 * an unprobed "local", MAPOPT_EINVAL for a bad value, MAPOPT_EIO for an
 * unreadable file; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_machine_resolve(mapopt_ctx *ctx,
                                                const char *arg,
                                                mapopt_diags *diags,
                                                mapopt_machine **out);

MAPOPT_API void mapopt_machine_free(mapopt_machine *m);

/*
 * The path of the `local` machine's file, $HOME/.cache/mapopt/local.json:
 * what mapopt_machine_resolve("local") reads and `mapopt machine probe`
 * writes. *path is a text freed with mapopt_text_free. Errors:
 * MAPOPT_ENOTFOUND when $HOME is not set; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_machine_local_path(mapopt_ctx *ctx,
                                                   char **path);

/* The names of the built-in presets, NULL-terminated. */
MAPOPT_API const char *const *mapopt_machine_presets(void);
/* The JSON text of a built-in preset (NULL if unknown). */
MAPOPT_API const char *mapopt_machine_preset_json(const char *name);

/*
 * Whether m can run ranks ranks per node (docs/machines.md, "Naming a
 * machine"): ranks must divide the GPUs of a node, as the loader also requires
 * of a machine's own ranks_per_node. Error: MAPOPT_EINVAL with the error "WHO:
 * error: ranks_per_node (R) must divide the GPU count (G)" appended to diags
 * (MAPOPT_ENOMEM when it cannot be).
 */
MAPOPT_API mapopt_status mapopt_machine_check_ranks(const mapopt_machine *m,
                                                    int64_t ranks,
                                                    const char *who,
                                                    mapopt_diags *diags);

/*
 * The DSL's view of the machine (docs/dsl.md, "The base model"): address spaces
 * (nodes x ranks) and processors of each kind per address space, and the
 * affinity kinds for point.has().
 */
MAPOPT_API void mapopt_machine_shape_of(const mapopt_machine *m,
                                        mapopt_machine_shape *shape);

/* Serializes m as `mapopt-machine/1` JSON (loads back to an equal model)
 * into *text, freed with mapopt_text_free. Error: MAPOPT_ENOMEM. */
MAPOPT_API mapopt_status mapopt_machine_to_json(mapopt_ctx *ctx,
                                                const mapopt_machine *m,
                                                char **text);

/*
 * Derives the `local` machine from this host (docs/machines.md, "Probing this
 * host"). With measure, runs a 0.5 s copy micro-benchmark for bandwidth.
 * Missing or unreadable /sys and /proc files fall back to defaults, which the
 * machine's "sources" (in its JSON) record. On success *out is owned by the
 * caller (mapopt_machine_free); the CLI writes mapopt_machine_to_json of it to
 * mapopt_machine_local_path, which resolve("local") reads. Errors:
 * MAPOPT_ENOMEM; MAPOPT_EINVAL, with its diagnostics, if the model derived from
 * this host fails its own validation (an internal error).
 */
MAPOPT_API mapopt_status mapopt_machine_probe(mapopt_ctx *ctx, bool measure,
                                              mapopt_diags *diags,
                                              mapopt_machine **out);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_MACHINE_H */
