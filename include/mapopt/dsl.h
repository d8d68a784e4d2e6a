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
#include "mapopt/shape.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- programs ------------------------------------------------------------ */

typedef struct mapopt_program mapopt_program;

/* Receives each line written by `print` (without the newline). */
typedef void (*mapopt_print_fn)(void *ud, const char *line);

typedef struct mapopt_dsl_options {
  const char *file; /* name in diagnostics; "<input>" if NULL */
  const mapopt_machine_shape *shape; /* NULL: the default shape */
  const mapopt_task_info *tasks;     /* optional application, for W11/W12 */
  size_t ntasks;
  mapopt_print_fn print; /* NULL: print output is discarded */
  void *print_ud;
  bool no_memo; /* disable memoization (benchmarks) */
  /* Evaluation trace for tools (`mapopt show`): when set, each statement a
   * mapping function executes is reported as one line ("f 3:5: i = 5"), and
   * memoization is off. */
  mapopt_print_fn trace;
  void *trace_ud;
} mapopt_dsl_options;

/*
 * Parses, checks and loads a mapper (DSL.md §1.4). text has len bytes (it
 * need not be NUL-terminated). Diagnostics -- warnings, then the first error
 * -- are appended to diags in the order of DSL.md §7.1. Returns MAPOPT_OK and
 * the program in *out; MAPOPT_ESYNTAX (lexical or syntax error, E01-E04),
 * MAPOPT_ELOAD (check or load error: E05-E10 and R-errors at load time), or
 * MAPOPT_ENOMEM, with *out untouched. The options and the shape are copied.
 */
MAPOPT_API mapopt_status mapopt_dsl_compile(mapopt_ctx *ctx, const char *text,
                                            size_t len,
                                            const mapopt_dsl_options *opts,
                                            mapopt_diags *diags,
                                            mapopt_program **out);
MAPOPT_API void mapopt_dsl_free(mapopt_program *prog);

/*
 * The canonical text of the program (DSL.md §3.5). *text is allocated with
 * the program's context; free it with mapopt_text_free.
 */
MAPOPT_API mapopt_status mapopt_dsl_format(const mapopt_program *prog,
                                           char **text, size_t *len);
/* Structural equality of the two programs' syntax trees. */
MAPOPT_API bool mapopt_dsl_equal(const mapopt_program *a,
                                 const mapopt_program *b);

/* ---- policy queries (SIMULATOR.md §1) ---------------------------------------
 */

/*
 * A region argument's keys: its names in order, then its position. The
 * position is given as an int; the DSL matches it as its decimal text.
 */
typedef struct mapopt_region_keys {
  const char *const *names;
  size_t nnames;
  size_t position;
} mapopt_region_keys;

/*
 * The Task list for task (exact name first, then '*'): writes up to cap
 * kinds to out and returns the list's length; 0 means "unspecified".
 */
MAPOPT_API size_t mapopt_policy_proc_kinds(const mapopt_program *prog,
                                           const char *task,
                                           mapopt_proc_kind *out, size_t cap);

/* The concatenated Region candidate list (DSL.md §4.2 step 1); 0 entries
 * means "unspecified". Writes up to cap entries, returns the full length. */
MAPOPT_API size_t mapopt_policy_memory_list(const mapopt_program *prog,
                                            const char *task,
                                            const mapopt_region_keys *keys,
                                            mapopt_proc_kind kind,
                                            mapopt_mem_kind *out, size_t cap);

/* The first matching Layout entry; false ("unspecified") when none. */
MAPOPT_API bool mapopt_policy_layout(const mapopt_program *prog,
                                     const char *task,
                                     const mapopt_region_keys *keys,
                                     mapopt_mem_kind mem, mapopt_proc_kind kind,
                                     mapopt_layout *out);

/* InstanceLimit for task; 0 means no limit. */
MAPOPT_API int64_t mapopt_policy_instance_limit(const mapopt_program *prog,
                                                const char *task);
/* Whether the argument is collected (read-only-ness is the caller's). */
MAPOPT_API bool mapopt_policy_collect(const mapopt_program *prog,
                                      const char *task,
                                      const mapopt_region_keys *keys);
/* ControlReplicate (DSL.md §4.8): exactly the set if any statement exists,
 * else the top-level task when nodes > 1. */
MAPOPT_API bool mapopt_policy_replicated(const mapopt_program *prog,
                                         const char *task, bool top_level,
                                         int64_t nodes);

/* A processor: kind, node (address space) and local index. */
typedef struct mapopt_proc_point {
  mapopt_proc_kind kind;
  int64_t node;
  int64_t proc;
} mapopt_proc_point;

/*
 * A running or being-mapped task as mapping functions see it: for
 * task.parent and task.processor(m). parent is NULL for the top-level task.
 * For an index point, is_index is true and point/extents hold its launch
 * coordinates.
 */
typedef struct mapopt_task_ref {
  const char *name;
  bool is_index;
  int dims;
  const int64_t *point;
  const int64_t *extents;
  mapopt_proc_point proc;
  const struct mapopt_task_ref *parent;
} mapopt_task_ref;

typedef enum mapopt_map_kind {
  MAPOPT_MAP_UNSPECIFIED, /* no function applies: use the default */
  MAPOPT_MAP_POINT,       /* one processor, in points[0] */
  MAPOPT_MAP_SET          /* a point set: npoints processors */
} mapopt_map_kind;

typedef struct mapopt_map_answer {
  mapopt_map_kind kind;
  const char *function;        /* name of the function used, or NULL */
  size_t npoints;              /* full size of the answer */
  mapopt_proc_point points[1]; /* the first point (index_map uses only it) */
} mapopt_map_answer;

/*
 * IndexTaskMap (DSL.md §4.6) for one point of an index launch of task,
 * mapped to kind: point and extents have dims coordinates. On a mapping
 * error returns MAPOPT_EMAP and appends the "mapping error:" diagnostic and
 * its context note to diags. Warnings raised while mapping (W14, W15) are
 * appended to diags too. Results (including errors) are memoized by
 * (task, kind, point, extents).
 */
MAPOPT_API mapopt_status mapopt_policy_index_map(
    const mapopt_program *prog, const char *task, int dims,
    const int64_t *point, const int64_t *extents, mapopt_proc_kind kind,
    mapopt_map_answer *out, mapopt_diags *diags);

/*
 * SingleTaskMap (DSL.md §4.7) for the single task self (self->proc is its
 * initial processor: local index 0 of its kind on the parent's node). Up to
 * cap points of a point set are written to set (which may be NULL);
 * out->npoints gives the full count. R18 (another node) is the caller's
 * check: it is the substrate's error.
 */
MAPOPT_API mapopt_status mapopt_policy_single_map(
    const mapopt_program *prog, const mapopt_task_ref *self,
    mapopt_proc_kind kind, mapopt_map_answer *out, mapopt_proc_point *set,
    size_t cap, mapopt_diags *diags);

/* ---- resolution with defaults (DSL.md §4.10, SIMULATOR.md §4.2)
 * -------------- */

/*
 * The processor kind of task given the kinds it has variants for (bit
 * 1u << kind): the first usable kind of its Task list, else of the default
 * order GPU, OMP, CPU, IO, PY, PROC. A kind is usable when it has a variant
 * and the shape has processors of it. With lenient false, a list without a
 * usable kind fails; the message of R26 is then written to err and
 * MAPOPT_EMAP returned (also when nothing at all is usable).
 */
MAPOPT_API mapopt_status mapopt_policy_select_kind(
    const mapopt_program *prog, const char *task, unsigned variants,
    bool lenient, mapopt_proc_kind *out, char *err, size_t errlen);

/*
 * The memory kind for an argument of task run on kind (DSL.md §4.2 and the
 * §4.10 default): the first available entry of the memory list, VIRTUAL, or
 * the default memory of the kind.
 */
MAPOPT_API mapopt_mem_kind mapopt_policy_select_memory(
    const mapopt_program *prog, const char *task,
    const mapopt_region_keys *keys, mapopt_proc_kind kind);

/* The layout with every unset component defaulted (c_order_default: the
 * application's declared default order). */
MAPOPT_API void
mapopt_policy_resolve_layout(const mapopt_program *prog, const char *task,
                             const mapopt_region_keys *keys,
                             mapopt_mem_kind mem, mapopt_proc_kind kind,
                             bool c_order_default, mapopt_layout *out);

/*
 * The default index placement of SIMULATOR.md §4.2 for point of a launch
 * with extents (dims dimensions) over nodes address spaces of procs
 * processors each: what a substrate does when mapopt_policy_index_map
 * answers MAPOPT_MAP_UNSPECIFIED.
 */
MAPOPT_API void mapopt_policy_default_index_place(int dims,
                                                  const int64_t *point,
                                                  const int64_t *extents,
                                                  int64_t nodes, int64_t procs,
                                                  int64_t *node, int64_t *proc);

/* The machine shape the program was loaded with. */
MAPOPT_API const mapopt_machine_shape *
mapopt_dsl_shape(const mapopt_program *prog);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_DSL_H */
