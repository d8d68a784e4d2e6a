/*
 * mapopt shape: the words the machine, application and mapping-language
 * modules share, below all three of them (docs/architecture.md).
 *
 *  - the processor and memory kinds, with their names and the inverse
 *    parsers (round trips: parse(name(k)) == k);
 *  - the shape of a machine as mappers see it (docs/dsl.md, "The base
 *    model"): address spaces, processors of each kind per address space
 *    and their memory affinities, with its one-line form "nodes=2 gpu=4
 *    cpu=8 omp=2" (hwloc's synthetic topologies in spirit), so tests and
 *    tools need no fixture files;
 *  - instance layouts (the answer of a Layout statement, and an
 *    application variant's layout requirements);
 *  - the names an application gives its tasks and their region arguments,
 *    which the mapping language checks mappers against.
 *
 * Nothing here allocates: every function reads or writes caller storage.
 */
#ifndef MAPOPT_SHAPE_H
#define MAPOPT_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- processor and memory kinds ----------------------------------------- */

/* Processor kinds, in the default preference order's spirit. */
typedef enum mapopt_proc_kind {
  MAPOPT_PROC_CPU,
  MAPOPT_PROC_GPU,
  MAPOPT_PROC_OMP,
  MAPOPT_PROC_IO,
  MAPOPT_PROC_PY,
  MAPOPT_PROC_PROC,
  MAPOPT_PROC_KIND_COUNT
} mapopt_proc_kind;

typedef enum mapopt_mem_kind {
  MAPOPT_MEM_SYSMEM,
  MAPOPT_MEM_FBMEM,
  MAPOPT_MEM_ZCMEM,
  MAPOPT_MEM_RDMEM,
  MAPOPT_MEM_SOCKMEM,
  MAPOPT_MEM_VIRTUAL,
  MAPOPT_MEM_KIND_COUNT
} mapopt_mem_kind;

/* "GPU" for MAPOPT_PROC_GPU; NULL for a value out of range. */
MAPOPT_API const char *mapopt_shape_proc_name(mapopt_proc_kind k);
/* "FBMEM" for MAPOPT_MEM_FBMEM; NULL for a value out of range. */
MAPOPT_API const char *mapopt_shape_mem_name(mapopt_mem_kind k);
/*
 * Case-sensitive inverses of the names; the processor-kind parser also
 * accepts lower case ("gpu"). *out is written only on success. Errors:
 * MAPOPT_EINVAL when s is NULL; MAPOPT_ENOTFOUND when s names no kind.
 */
MAPOPT_API mapopt_status mapopt_shape_proc_parse(const char *s,
                                                 mapopt_proc_kind *out);
MAPOPT_API mapopt_status mapopt_shape_mem_parse(const char *s,
                                                mapopt_mem_kind *out);

/* ---- the machine's shape ------------------------------------------------- */

/*
 * The shape of a machine as mappers see it (docs/dsl.md, "The base model"):
 * nodes (address spaces), processors of each kind per node, and for
 * `point.has(M)` the memory kinds each processor kind has affinity to (bit 1u
 * << mapopt_mem_kind; VIRTUAL is always available).
 */
typedef struct mapopt_machine_shape {
  int64_t nodes;
  int64_t procs[MAPOPT_PROC_KIND_COUNT];
  unsigned affinity[MAPOPT_PROC_KIND_COUNT];
  /* CPU sockets per node (0: none, and then no SOCKMEM); mappers do not see
   * it, but the one-line form keeps it. */
  int64_t sockets;
} mapopt_machine_shape;

/* The shape of the default preset p100x4 (2 sockets per node). */
MAPOPT_API void mapopt_shape_default(mapopt_machine_shape *shape);

/*
 * Builds a shape from the one-line synthetic description, hwloc style:
 * space-separated key=value pairs, e.g. "nodes=2 gpu=4 cpu=8 omp=2".
 * Keys: nodes, cpu, gpu, omp, io, py, proc (processors per node), sockets
 * (default 1 when there are CPUs or OMPs), and sysmem, zcmem, rdmem (0 or 1;
 * defaults: sysmem 1, zcmem 1 when there are GPUs, rdmem 1). Affinity then
 * follows docs/machines.md, "affinity": CPU -> SYSMEM, SOCKMEM, ZCMEM, RDMEM;
 * GPU -> FBMEM, ZCMEM; OMP -> SOCKMEM, SYSMEM, ZCMEM; each only where that
 * memory exists. Omitted processor counts are 0, omitted nodes is 1. *shape is
 * written only on success. Error: MAPOPT_EINVAL for a malformed description,
 * with a message naming the offending key or value (and its column) written to
 * err as snprintf writes (errlen bytes at most, always NUL-terminated when
 * errlen > 0). The message quotes at most two pieces of text (a key and a
 * value) and adds fewer than 200 bytes of its own: a buffer of 2 * strlen(text)
 * + 200 bytes always holds it whole.
 */
MAPOPT_API mapopt_status mapopt_shape_parse(const char *text,
                                            mapopt_machine_shape *shape,
                                            char *err, size_t errlen);
/* The runtime's default memory of a processor kind on a machine of this
 * shape, where a mapper's Region lists choose none (docs/dsl.md, "Region:
 * memory of each data argument"): a GPU's FBMEM; an OMP processor's
 * SOCKMEM where it can reach one, else SYSMEM; SYSMEM for the other kinds.
 * The one statement of the rule: the DSL, the search space and the
 * simulator all ask it. */
MAPOPT_API mapopt_mem_kind mapopt_shape_default_memory(
    const mapopt_machine_shape *shape, mapopt_proc_kind k);

/* Formats a shape back to the one-line form (round trip with _parse);
 * writes as snprintf does and returns the full length. */
MAPOPT_API int mapopt_shape_format(const mapopt_machine_shape *shape, char *buf,
                                   size_t size);

/* ---- instance layouts ---------------------------------------------------- */

typedef enum mapopt_layout_tri {
  MAPOPT_LAYOUT_UNSET = -1,
  MAPOPT_LAYOUT_NO = 0,
  MAPOPT_LAYOUT_YES = 1
} mapopt_layout_tri;

typedef enum mapopt_align_op {
  MAPOPT_ALIGN_NONE,
  MAPOPT_ALIGN_EQ,
  MAPOPT_ALIGN_NE,
  MAPOPT_ALIGN_LT,
  MAPOPT_ALIGN_LE,
  MAPOPT_ALIGN_GT,
  MAPOPT_ALIGN_GE
} mapopt_align_op;

/* A Layout answer (docs/dsl.md, "Layout: how instances are laid out"): each
 * component set by the matched list, or unset. soa: YES = SOA, NO = AOS.
 * c_order: YES = C_order, NO = F_order. */
typedef struct mapopt_layout {
  mapopt_layout_tri soa;
  mapopt_layout_tri c_order;
  mapopt_align_op align_op; /* NONE: no alignment constraint */
  int64_t align;
  bool compact;
  bool exact;
} mapopt_layout;

/* ---- an application's names ---------------------------------------------- */

/* A task of an application as mappers name it: for the mapping language's
 * checks of task and argument names (W11, W12). */
typedef struct mapopt_task_info {
  const char *name;
  size_t nargs;
  /* arg_names[i]: NULL-terminated list of the names of argument i. */
  const char *const *const *arg_names;
} mapopt_task_info;

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_SHAPE_H */
