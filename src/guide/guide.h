/*
 * Internal header of AutoGuide: the findings list and how rules add to it
 * (findings.c), the rules on the output text (text.c) and on the
 * simulator's profile (profile.c), and what rules ask of the optional
 * inputs -- argument names, variants, the mapper's statements -- (facts.c).
 *
 * A rule never fails on its own: every string and edit it adds lives in
 * the list's arena, and an allocation failure only marks the list, which
 * mapopt_guide_analyze then reports as MAPOPT_ENOMEM.
 */
#ifndef MAPOPT_SRC_GUIDE_GUIDE_H
#define MAPOPT_SRC_GUIDE_GUIDE_H

#include "core/core.h"
#include "mapopt/guide.h"

struct mapopt_findings {
  mapopt_ctx *ctx;
  mapopt__arena arena;
  mapopt__vec items; /* mapopt_guide_finding */
  bool failed;       /* an allocation failed: the list is incomplete */
};

/* A new finding at the end of the list, its strings empty, impact 1 for
 * errors and 0 otherwise; NULL (and the list marked) when out of memory.
 * The pointer is valid until the next add. */
mapopt_guide_finding *mapopt__guide_add(mapopt_findings *f,
                                        mapopt_guide_category cat,
                                        mapopt_guide_code code);
/* A formatted string in the list's arena; "" when out of memory. */
const char *mapopt__guide_printf(mapopt_findings *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A copy of n bytes of s in the list's arena; "" when out of memory. */
const char *mapopt__guide_strndup(mapopt_findings *f, const char *s, size_t n);
/* Appends an edit to g (operands copied; NULL stays NULL). */
void mapopt__guide_edit(mapopt_findings *f, mapopt_guide_finding *g,
                        mapopt_guide_edit_kind kind, const char *task,
                        const char *region, const char *proc,
                        const char *component, const char *value);
/* Sets the share of the run that the fix g's last edit makes would
 * recover (mapopt_guide_edit.share); nothing when g has no edit. */
void mapopt__guide_edit_share(mapopt_guide_finding *g, double share);
/* Sets g's subject from its parts: "task T, region R", "task T, function
 * F", ...; a NULL part is left out. */
void mapopt__guide_subject(mapopt_findings *f, mapopt_guide_finding *g,
                           const char *task, const char *region,
                           const char *function);
/* Puts the findings in order: errors (compile, execution, timeout,
 * crash), then the metric lines, then performance by impact; ties keep
 * the order in which the rules found them. */
void mapopt__guide_sort(mapopt_findings *f);

/* ---- facts from the optional inputs (facts.c) --------------------------- */

/* The first op of task name in the run, or NULL (also without a run). */
const mapopt_app_op *mapopt__guide_first_op(const mapopt_app_run *run,
                                            const char *task);
/* The task of the run by name, or NULL. */
const mapopt_app_task *mapopt__guide_task(const mapopt_app_run *run,
                                          const char *task);
/* The name of argument index of task ("rp_ghost"), or NULL. */
const char *mapopt__guide_arg_name(const mapopt_app_run *run, const char *task,
                                   int64_t index);
/* The IndexTaskMap function that places task's points on kind, or NULL
 * (no mapper, no run, no such statement, or a function that fails). */
const char *mapopt__guide_index_fn(const mapopt_guide_input *in,
                                   const char *task, mapopt_proc_kind kind);
/* The kinds of kinds (bit k) in "GPU,OMP,CPU" order as text: "GPU,CPU". */
const char *mapopt__guide_kind_list(mapopt_findings *f, unsigned kinds);
/* Processors of kind in the whole machine: from the machine, else from
 * the result's processor list, else 0. */
int64_t mapopt__guide_procs_of(const mapopt_guide_input *in,
                               mapopt_proc_kind kind);
/* "12.3 ms", "4.0 us", "1.20 s" for ns. */
void mapopt__guide_fmt_ns(char *buf, size_t size, int64_t ns);
/* "15.6 MB", "7.1 kB", "320 B" (10^3 multiples). */
void mapopt__guide_fmt_bytes(char *buf, size_t size, int64_t bytes);
/* "FBMEM 3 of node 0" (with the rank when a node has several), "?" for no
 * end. */
void mapopt__guide_fmt_end(char *buf, size_t size, const mapopt_sim_end *e);
/* A wait of the attribution in a few words: "task_1 A_blk@0: fold
 * FB_FB_PEER FBMEM 3 of node 0 -> FBMEM 1 of node 0, of task_4". */
void mapopt__guide_wait_label(char *buf, size_t size, const mapopt_sim_wait *w);

/* ---- rules --------------------------------------------------------------- */

/* The rules on the output text (text.c): errors, the metric lines. */
void mapopt__guide_text_rules(const mapopt_guide_input *in, mapopt_findings *f);
/* The rules on a successful simulation's critical path, by cause: copies,
 * folds and busy processors that held it back (waits.c). */
void mapopt__guide_wait_rules(const mapopt_guide_input *in, mapopt_findings *f);
/* The rules on a successful simulation's profile (profile.c). */
void mapopt__guide_profile_rules(const mapopt_guide_input *in,
                                 mapopt_findings *f);

#endif /* MAPOPT_SRC_GUIDE_GUIDE_H */
