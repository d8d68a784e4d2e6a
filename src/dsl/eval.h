/*
 * The interpreter's state and what its files share (eval.c: expressions
 * and statements; evalcore.c: errors, budgets and value views;
 * evalmachine.c: machine models). Internal to the dsl module.
 */
#ifndef MAPOPT_SRC_DSL_EVAL_H
#define MAPOPT_SRC_DSL_EVAL_H

#include "dsl/dsl.h"
#include "dsl/mspace.h"

typedef struct mapopt__eval_frame {
  mapopt__value *slots;
  const mapopt__stmt *fn; /* the executing def, NULL at top level */
} mapopt__eval_frame;

struct mapopt__eval {
  const mapopt__eval_env *env;
  mapopt_program *prog;
  mapopt__arena *arena;
  mapopt__eval_error *err;
  int64_t steps;
  int64_t values; /* built, when env->values does not count them */
  int depth;      /* active calls */
  int cdepth;     /* C recursion of eval() */
  mapopt__eval_frame *fr;
  mapopt__loc ret_loc; /* location of the return that produced the value */
  bool have_call_loc;
};

/* Evaluated items: call arguments, tuple items, subscripts. */
typedef struct mapopt__value_list {
  mapopt__value *items;
  int n;
  int cap;
} mapopt__value_list;

/* ---- errors and budgets (evalcore.c) ------------------------------------ */

/* Raises the catalogue entry id (give it as MAPOPT__DIAG(NAME)) at loc,
 * its message formatted from fmt (the entry's template). Only the first
 * error of an evaluation counts. Returns false. */
bool mapopt__ev_fail(mapopt__eval *ev, mapopt_dsl_diag id, const char *fmt,
                     mapopt__loc loc, ...)
    __attribute__((format(printf, 3, 5)));
/* Raises an error of the machine-model functions (mspace.c): its R-code
 * and the message they formatted from the catalogue. Returns false. */
bool mapopt__ev_ms_fail(mapopt__eval *ev, mapopt__ms_err code, mapopt__loc loc,
                        const char *msg);
/* Raises out of memory at loc, when it is the evaluation's first error.
 * Returns false. */
bool mapopt__ev_nomem(mapopt__eval *ev, mapopt__loc loc);
/* Attaches the hint id (formatted from fmt, its template) to the error
 * just raised. Call it only right after raising that error, when it was
 * the evaluation's first. Out of memory makes the whole error ENOMEM. */
void mapopt__ev_note(mapopt__eval *ev, mapopt_dsl_diag id, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
/* The error becomes out of memory: its message and hint are dropped. */
void mapopt__ev_error_nomem(mapopt__eval *ev);
/* Charges n steps (R23). false with the error raised past the limit. */
bool mapopt__ev_step(mapopt__eval *ev, int64_t n, mapopt__loc loc);
/* Charges n values (tuple items, points, call frames' slots) to the
 * budget of R27 before they are built: without it, a few statements that
 * each double a tuple take gigabytes. */
bool mapopt__ev_charge(mapopt__eval *ev, int64_t n, mapopt__loc loc);

/* ---- value views (evalcore.c) ------------------------------------------- */

/* v's type as type-mismatch messages name it (an empty set is still a
 * point set there). */
const char *mapopt__ev_type_name(const mapopt__value *v);
/* Views a tuple or point as a sequence of values (a point is the int tuple
 * (node, local index)). Writes into tmp for points. */
bool mapopt__ev_as_seq(const mapopt__value *v, mapopt__value tmp[2],
                       const mapopt__value **items, int *n);
/* Extracts an int tuple (or point) of at most cap items into out; false
 * if v is not one. */
bool mapopt__ev_as_ints(const mapopt__value *v, int64_t *out, int cap, int *n);

/* ---- machine models (evalmachine.c) ------------------------------------- */

/* m[c0, ..., c(r-1)] (docs/dsl.md, "Indexing: from grid coordinates to a
 * processor"): a point, or a point set for wildcards (unset subscripts). */
bool mapopt__ev_index_machine(mapopt__eval *ev, const mapopt__mspace *m,
                              const mapopt__value_list *subs, mapopt__loc loc,
                              mapopt__value *out);
/* m.METHOD(args) for a machine model m: split, merge, swap, slice,
 * reverse and the factoring splits. */
bool mapopt__ev_machine_method(mapopt__eval *ev, const mapopt__mspace *m,
                               mapopt__member mem,
                               const mapopt__value_list *args, mapopt__loc loc,
                               mapopt__value *out);

#endif /* MAPOPT_SRC_DSL_EVAL_H */
