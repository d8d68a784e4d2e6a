/*
 * mapopt guide: AutoGuide (docs/guide.md). It reads what an evaluation of
 * a mapper printed -- the raw output of any run: a Legion or StarPU
 * program, or the simulator's log -- with its exit status, and, when
 * available, the simulator's result, the mapper, the application run and
 * the machine, and says what happened and what to change:
 *
 *   Execution Error: Slice processor index out of bound! 4 >= 4
 *   Explanation: the mapping function f sent a point of k to processor 4,
 *   but each node has only 4 of that kind (numbered 0 to 3).
 *   Suggestion: ...
 *
 * The result is a list of findings, most important first, each with a
 * category, a stable code, its subject, an explanation in plain words, a
 * concrete suggestion in DSL syntax, and the same suggestion as structured
 * edits from a small closed vocabulary that a search (the guided optimizer)
 * applies to its choice vector.
 *
 * Rules look only at the output, the result, the application model, the
 * machine and the mapper: they never know a benchmark by name. Analysis is
 * deterministic (the same input gives byte-identical findings) and only
 * reads its inputs, so any number of analyses may run at once.
 */
#ifndef MAPOPT_GUIDE_H
#define MAPOPT_GUIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "mapopt/app.h"
#include "mapopt/core.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- categories and codes ------------------------------------------------ */

/* clang-format off */
#define MAPOPT_GUIDE_CATEGORY_LIST(X)                                          \
  X(COMPILE_ERROR, "compile-error", "Compile Error")                           \
  X(EXECUTION_ERROR, "execution-error", "Execution Error")                     \
  X(TIMEOUT, "timeout", "Timeout")                                             \
  X(CRASH, "crash", "Crash")                                                   \
  X(PERFORMANCE, "performance", "Performance")
/* clang-format on */

typedef enum mapopt_guide_category {
#define MAPOPT_GUIDE_CATEGORY_ENUM(id, name, label) MAPOPT_GUIDE_##id,
  MAPOPT_GUIDE_CATEGORY_LIST(MAPOPT_GUIDE_CATEGORY_ENUM)
#undef MAPOPT_GUIDE_CATEGORY_ENUM
} mapopt_guide_category;

/* "compile-error" for MAPOPT_GUIDE_COMPILE_ERROR; NULL out of range. */
MAPOPT_API const char *mapopt_guide_category_name(mapopt_guide_category c);

/*
 * The codes, stable identifiers of what a finding is about (docs/guide.md
 * gives an example of each). Errors found in the output:
 *   syntax             the mapper does not parse (E01-E04)
 *   undefined-function a map statement names no function (E06-E08)
 *   undefined-name     a name is used before it is bound (R01)
 *   redefinition       a global or parameter bound twice (E05, E09)
 *   alignment          a bad Align constraint (E10)
 *   type-error         wrong operand, argument or result type (R02, R09,
 *                      R14, R17)
 *   argument-count     a call with the wrong number of arguments (R03, R24)
 *   no-return          a function ends without return (R04)
 *   tuple-index        a tuple index or slice out of range (R07, R08)
 *   machine-index      a bad machine coordinate or transformation (R12,
 *                      R13, R15, R21, R25)
 *   arithmetic         division by zero, overflow (R05, R06)
 *   task-property      ipoint/ispace/parent where undefined (R19, R20)
 *   recursion          too deep a call chain (R22)
 *   step-limit         the evaluation step budget ran out (R23)
 *   node-oob           a point sent to a node that does not exist (R10)
 *   slice-oob          a point sent to a processor that does not exist (R11)
 *   kind-mismatch      the function's machine is of another kind (R16)
 *   single-node        a single task sent off its parent's node (R18)
 *   no-variant         a Task list without a kind the task can run on (R26)
 *   virtual-leaf       VIRTUAL for an argument of a leaf task
 *   layout-stride      a kernel's stride check failed (wrong layout)
 *   blas-ld            BLAS rejected a leading dimension (wrong order)
 *   backpressure       InstanceLimit below what one launch puts on a
 *                      processor
 *   oom                an instance did not fit in its memory
 *   model-error        the model or the runtime failed otherwise
 *   failed             the run failed with no recognized message
 *   no-metric          the run succeeded but printed no metric
 *   timeout            the run hit its time limit
 *   crash              the run died of a signal
 * Performance (the metric lines, then the profile of a simulated run):
 *   exec-time          the elapsed-time line (with the lower bound)
 *   throughput         a GFLOP/s line
 *   imbalance          one processor of a kind far busier than the others
 *   copy-bound         the critical path waits for copies of an argument
 *   reduction-bound    the critical path waits for the folds of reduced
 *                      data
 *   processor-wait     the critical path waits for a busy processor
 *   zc-hot             a GPU task spends its time reaching into ZCMEM
 *   fb-near-capacity   the framebuffer is nearly full
 *   aos-few-fields     AOS on a GPU while few of the fields are read
 *   overhead-bound     tasks too small for the per-task runtime cost
 *   cpu-on-critical-path  a task with a GPU variant runs on a CPU and
 *                      holds up the run
 *   limit-stall        InstanceLimit holds back work on the critical path
 *   no-effect          the run's profile equals an earlier attempt's: the
 *                      statements that differ had no effect
 *                      (mapopt_guide_note_unchanged)
 */
/* clang-format off */
#define MAPOPT_GUIDE_CODE_LIST(X)                                              \
  X(SYNTAX, "syntax")                                                          \
  X(UNDEFINED_FUNCTION, "undefined-function")                                  \
  X(UNDEFINED_NAME, "undefined-name")                                          \
  X(REDEFINITION, "redefinition")                                              \
  X(ALIGNMENT, "alignment")                                                    \
  X(TYPE_ERROR, "type-error")                                                  \
  X(ARGUMENT_COUNT, "argument-count")                                          \
  X(NO_RETURN, "no-return")                                                    \
  X(TUPLE_INDEX, "tuple-index")                                                \
  X(MACHINE_INDEX, "machine-index")                                            \
  X(ARITHMETIC, "arithmetic")                                                  \
  X(TASK_PROPERTY, "task-property")                                            \
  X(RECURSION, "recursion")                                                    \
  X(STEP_LIMIT, "step-limit")                                                  \
  X(NODE_OOB, "node-oob")                                                      \
  X(SLICE_OOB, "slice-oob")                                                    \
  X(KIND_MISMATCH, "kind-mismatch")                                            \
  X(SINGLE_NODE, "single-node")                                                \
  X(NO_VARIANT, "no-variant")                                                  \
  X(VIRTUAL_LEAF, "virtual-leaf")                                              \
  X(LAYOUT_STRIDE, "layout-stride")                                            \
  X(BLAS_LD, "blas-ld")                                                        \
  X(BACKPRESSURE, "backpressure")                                              \
  X(OOM, "oom")                                                                \
  X(MODEL_ERROR, "model-error")                                                \
  X(FAILED, "failed")                                                          \
  X(NO_METRIC, "no-metric")                                                    \
  X(TIMEOUT, "timeout")                                                        \
  X(CRASH, "crash")                                                            \
  X(EXEC_TIME, "exec-time")                                                    \
  X(THROUGHPUT, "throughput")                                                  \
  X(IMBALANCE, "imbalance")                                                    \
  X(COPY_BOUND, "copy-bound")                                                  \
  X(ZC_HOT, "zc-hot")                                                          \
  X(FB_NEAR_CAPACITY, "fb-near-capacity")                                      \
  X(AOS_FEW_FIELDS, "aos-few-fields")                                          \
  X(OVERHEAD_BOUND, "overhead-bound")                                          \
  X(CPU_ON_CRITICAL_PATH, "cpu-on-critical-path")                              \
  X(LIMIT_STALL, "limit-stall")                                                \
  X(LAYOUT_AOS_ORDER, "layout-aos-order")                                      \
  X(REDUCTION_BOUND, "reduction-bound")                                        \
  X(PROCESSOR_WAIT, "processor-wait")                                          \
  X(NO_EFFECT, "no-effect")
/* clang-format on */

typedef enum mapopt_guide_code {
#define MAPOPT_GUIDE_CODE_ENUM(id, name) MAPOPT_GUIDE_CODE_##id,
  MAPOPT_GUIDE_CODE_LIST(MAPOPT_GUIDE_CODE_ENUM)
#undef MAPOPT_GUIDE_CODE_ENUM
      MAPOPT_GUIDE_CODE_COUNT
} mapopt_guide_code;

/* "oom" for MAPOPT_GUIDE_CODE_OOM; NULL out of range. */
MAPOPT_API const char *mapopt_guide_code_name(mapopt_guide_code c);
/* The inverse; MAPOPT_ENOTFOUND for an unknown name. */
MAPOPT_API mapopt_status mapopt_guide_code_parse(const char *s,
                                                 mapopt_guide_code *out);

/* ---- edits -----------------------------------------------------------------
 *
 * The closed vocabulary of structured edits. Every operand is a string;
 * task is a task name or "*", region a region argument's name, its
 * position as decimal text, or "*", proc a processor kind ("GPU", "CPU",
 * "OMP") or "*". The statement each edit stands for is given on the
 * right (DSL syntax; docs/dsl.md):
 *
 *   PROC_KINDS      task; value "GPU,CPU": the kinds in preference order
 *                   (`Task task GPU,CPU;`)
 *   MEMORY          task, region, proc; value a memory kind, "FBMEM"
 *                   (`Region task region proc FBMEM;`)
 *   LAYOUT          task, region, proc; component "soa" with value "SOA" or
 *                   "AOS", "order" with "C_order" or "F_order", "align" with
 *                   "none", "64" or "128" (`Layout task region proc SOA;`)
 *   INDEX_MAP       task; value the index-mapping template: "block",
 *                   "cyclic", "block-nodes-cyclic-procs", "cyclic-nodes",
 *                   "decompose", "hierarchical-block", "default" (no
 *                   IndexTaskMap), or "like:OTHER": place task's points
 *                   where OTHER's points of the same coordinates go
 *                   (`IndexTaskMap task F;`)
 *   INSTANCE_LIMIT  task; value "N" (a positive integer) or "none"
 *                   (`InstanceLimit task N;`)
 *   COLLECT         task, region; value "on" or "off"
 *                   (`CollectMemory task region;`)
 *   SINGLE_FOLLOW   task (a single task); value "parent": run on its
 *                   parent's processor, or "default": the default
 *                   placement (`SingleTaskMap task F;`)
 */
/* clang-format off */
#define MAPOPT_GUIDE_EDIT_LIST(X)                                              \
  X(PROC_KINDS, "set-proc-kinds")                                              \
  X(MEMORY, "set-memory")                                                      \
  X(LAYOUT, "set-layout")                                                      \
  X(INDEX_MAP, "set-index-map")                                                \
  X(INSTANCE_LIMIT, "set-instance-limit")                                      \
  X(COLLECT, "set-collect")                                                    \
  X(SINGLE_FOLLOW, "set-single-follow")
/* clang-format on */

typedef enum mapopt_guide_edit_kind {
#define MAPOPT_GUIDE_EDIT_ENUM(id, name) MAPOPT_GUIDE_EDIT_##id,
  MAPOPT_GUIDE_EDIT_LIST(MAPOPT_GUIDE_EDIT_ENUM)
#undef MAPOPT_GUIDE_EDIT_ENUM
} mapopt_guide_edit_kind;

/* "set-memory" for MAPOPT_GUIDE_EDIT_MEMORY; NULL out of range. */
MAPOPT_API const char *mapopt_guide_edit_kind_name(mapopt_guide_edit_kind k);

typedef struct mapopt_guide_edit {
  mapopt_guide_edit_kind kind;
  const char *task;
  const char *region;    /* MEMORY, LAYOUT, COLLECT; else NULL */
  const char *proc;      /* MEMORY, LAYOUT; else NULL */
  const char *component; /* LAYOUT: "soa", "order" or "align"; else NULL */
  const char *value;
  /* The share of the run its fix would recover by the finding's own
   * estimate (the fix's "would recover up to"), at most the finding's
   * impact; negative where the finding gives no estimate per fix. */
  double share;
} mapopt_guide_edit;

/*
 * The edit in words, e.g. "set memory of (distribute_charge, rp_ghost, GPU)
 * to FBMEM". Writes at most size bytes (NUL-terminated when size > 0) and
 * returns the full length, as snprintf does.
 */
MAPOPT_API int mapopt_guide_edit_format(const mapopt_guide_edit *e, char *buf,
                                        size_t size);

/* ---- findings ------------------------------------------------------------ */

typedef struct mapopt_guide_finding {
  mapopt_guide_category category;
  mapopt_guide_code code;
  /* The line of the output it was found in (from_output), or, for a
   * finding from the profile, the measured observation. Never NULL. */
  const char *message;
  bool from_output;
  /* What it is about, in words ("task k, function f", "task
   * distribute_charge, region rp_ghost"); "" when unknown. task and region
   * are its parts when known (else NULL); line is the mapper line (0:
   * unknown). */
  const char *subject;
  const char *task;
  const char *region;
  int line;
  const char *explain; /* one sentence, plain words */
  const char *suggest; /* what to change, with DSL statements */
  /* An estimate of the share of the elapsed time at stake (0 to 1) for a
   * performance finding; 1 for an error, 0 for a metric line. */
  double impact;
  size_t nedits;
  const mapopt_guide_edit *edits; /* most promising first */
} mapopt_guide_finding;

/* A list of findings; owns every string and edit it points to. */
typedef struct mapopt_findings mapopt_findings;

MAPOPT_API size_t mapopt_findings_count(const mapopt_findings *f);
/* Finding i (0 is the most important); NULL past the end. Valid until the
 * list is freed. */
MAPOPT_API const mapopt_guide_finding *
mapopt_findings_get(const mapopt_findings *f, size_t i);
MAPOPT_API void mapopt_findings_free(mapopt_findings *f);

/* ---- analysis ------------------------------------------------------------ */

typedef struct mapopt_guide_input {
  /* The raw output (stdout and stderr) of the evaluation: output_len bytes,
   * need not be NUL-terminated. NULL: the result's log, if any. */
  const char *output;
  size_t output_len;
  int exit_status; /* -1: unknown */
  int signal;      /* the signal that ended the run, 0: none */
  bool timed_out;  /* the evaluator stopped the run at its time limit */
  /* The evaluator read a metric from the output (one of its own form,
   * --metric, which AutoGuide cannot recognize): no "no metric" finding. */
  bool scored;
  /* Optional (NULL): the simulator's result, the mapper (compiled, and its
   * text for quoting lines), the application run and the machine. With
   * them, findings name statements, regions and tasks precisely. */
  const mapopt_sim_result *result;
  const mapopt_program *mapper;
  const char *mapper_text;
  size_t mapper_len;
  const mapopt_app_run *run;
  const mapopt_machine *machine;
} mapopt_guide_input;

/*
 * Analyses one evaluation. On success *out is a new list (possibly empty)
 * owned by the caller; it does not point into in, which may be freed
 * afterwards. MAPOPT_EINVAL for a NULL argument; MAPOPT_ENOMEM, with *out
 * untouched and nothing leaked.
 */
MAPOPT_API mapopt_status mapopt_guide_analyze(mapopt_ctx *ctx,
                                              const mapopt_guide_input *in,
                                              mapopt_findings **out);

/* ---- feedback text ------------------------------------------------------- */

/* The feedback levels, for ablation: the output's own lines only; with
 * explanations; with suggestions; with both. */
typedef enum mapopt_guide_level {
  MAPOPT_GUIDE_RAW,
  MAPOPT_GUIDE_EXPLAIN,
  MAPOPT_GUIDE_SUGGEST,
  MAPOPT_GUIDE_FULL
} mapopt_guide_level;

/* "raw", "explain", "suggest", "full"; NULL out of range. */
MAPOPT_API const char *mapopt_guide_level_name(mapopt_guide_level l);
/* The inverse; MAPOPT_ENOTFOUND for another string. */
MAPOPT_API mapopt_status mapopt_guide_level_parse(const char *s,
                                                  mapopt_guide_level *out);

/*
 * The feedback text for an optimizer at level, one block per finding:
 *
 *   LABEL: MESSAGE            the finding's message; LABEL is "Compile
 *                             Error", "Execution Error", "Timeout", "Crash",
 *                             "Performance Metric" (a metric line) or
 *                             "Performance"
 *   Explanation: EXPLAIN      explain and full
 *   Suggestion: SUGGEST       suggest and full
 *
 * At raw, only findings from the output appear, without the two lines.
 * *text is NUL-terminated; free it with mapopt_text_free. MAPOPT_EINVAL for
 * a NULL argument or a bad level, MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_guide_feedback(mapopt_ctx *ctx,
                                               const mapopt_findings *f,
                                               mapopt_guide_level level,
                                               char **text);

/*
 * The findings as JSON: {"findings": [{"category", "code", "message",
 * "from_output", "subject", "task", "region", "line", "explain",
 * "suggest", "impact", "edits": [{"kind", "task", "region", "proc",
 * "component", "value", "text"}]}]}, absent parts as null. Free with
 * mapopt_text_free. MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_guide_findings_json(mapopt_ctx *ctx,
                                                    const mapopt_findings *f,
                                                    char **text);

/* ---- nothing changed ------------------------------------------------------
 */

/*
 * A signature of a simulated run's profile (what its report holds of it:
 * the elapsed time, processors, copies, memories, the critical path and
 * its attribution, the busiest tasks with the memory and layout of their
 * arguments): two runs with the same signature resolved the same decisions
 * into the same times. 0 for NULL.
 */
MAPOPT_API uint64_t mapopt_guide_profile_signature(const mapopt_sim_result *r);

/*
 * Notes in f that its run's profile equals that of evaluation `earlier`
 * (the signatures are equal), whose mapper text was earlier_text: a
 * no-effect finding, after the metric lines, naming the statements (lines
 * that start a top-level statement in the two canonical texts) by which
 * text differs from earlier_text -- they had no effect. MAPOPT_EINVAL for
 * a NULL argument; MAPOPT_ENOMEM (f is then incomplete).
 */
MAPOPT_API mapopt_status mapopt_guide_note_unchanged(mapopt_findings *f,
                                                     int64_t earlier,
                                                     const char *earlier_text,
                                                     const char *text);

/* ---- a run's time, for people -------------------------------------------- */

/*
 * Where a simulated run's time went, as text a person reads at once (what
 * `mapopt sim --explain` prints after the findings): the elapsed time and
 * the lower bound; the critical path's parts; the busiest tasks, each with
 * its busy time split into fixed overhead, compute and memory access and
 * the time its points waited for data and for a processor; the load of
 * each processor kind; bytes, copies and copy time per channel; and the
 * memory and layout of the busiest tasks' arguments, the most expensive
 * to reach first. Computed from r alone (a result read back from a report
 * serves too); a failed run gets one line. *text is NUL-terminated; free
 * it with mapopt_text_free. MAPOPT_EINVAL for a NULL argument;
 * MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_guide_summary(mapopt_ctx *ctx,
                                              const mapopt_sim_result *r,
                                              char **text);

/*
 * A simulated run's critical path in one line, for a prompt or a log:
 * "critical path 17.4 ms by cause: TASK ARG@POS: CAUSE ... 9.0 ms (52%);
 * ...", the `max` entries of the attribution with the most exposed time
 * (mapopt_sim_result.waits, in their order) and at least 1% of the path,
 * then how many more and what they add up to. *text NULL (and MAPOPT_OK) for a
 * failed run or one without an attribution; else a text to free with
 * mapopt_text_free. MAPOPT_EINVAL for a NULL argument; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_guide_critical_path_line(
    mapopt_ctx *ctx, const mapopt_sim_result *r, size_t max, char **text);

/*
 * What differs between two runs of the same application on the same
 * machine (under two mappers, A and B, named label_a and label_b; NULL:
 * "A", "B"): both elapsed times and how much faster one is, then every
 * difference that can explain the gap, the largest change of time first --
 * per task (its time on its busiest processor, how its busy time splits,
 * the kind, memories and layouts chosen for it), per copy channel (copy
 * time, bytes, copies), per memory kind (the busiest tasks' time reaching
 * data there, peak bytes) and per part of the critical path. At most 16
 * are listed. *text as for mapopt_guide_summary. MAPOPT_EINVAL for a NULL
 * ctx, a, b or text; MAPOPT_ENOMEM.
 */
MAPOPT_API mapopt_status mapopt_guide_compare(mapopt_ctx *ctx,
                                              const mapopt_sim_result *a,
                                              const char *label_a,
                                              const mapopt_sim_result *b,
                                              const char *label_b, char **text);

#ifdef __cplusplus
}
#endif
#endif /* MAPOPT_GUIDE_H */
