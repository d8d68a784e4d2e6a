/*
 * mapopt dsl: the mapping language (docs/dsl.md; design in DSL.md).
 *
 * A mapper file is compiled in three steps -- parse, check, load -- into a
 * mapopt_program: the resolved policy. A substrate (the simulator, the
 * `mapopt show` command) then asks the program the questions of
 * SIMULATOR.md §1 (processor kinds, memories, layouts, placements, limits)
 * through the mapopt_policy_* functions. A loaded program is immutable
 * except for internal caches, which are locked: any number of threads may
 * query one program at once.
 */
#ifndef MAPOPT_DSL_H
#define MAPOPT_DSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/core.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Processor kinds of the DSL, in the default preference order's spirit. */
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
MAPOPT_API const char *mapopt_proc_kind_name(mapopt_proc_kind k);
MAPOPT_API const char *mapopt_mem_kind_name(mapopt_mem_kind k);
/* Case-sensitive inverse of the names; MAPOPT_ENOTFOUND if unknown. The
 * processor-kind parser also accepts lower case ("gpu"). */
MAPOPT_API mapopt_status mapopt_proc_kind_parse(const char *s,
                                                mapopt_proc_kind *out);
MAPOPT_API mapopt_status mapopt_mem_kind_parse(const char *s,
                                               mapopt_mem_kind *out);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_DSL_H */
