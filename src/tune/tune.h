/*
 * The tune module's internal header: the search space's state, shared by
 * the space (space.c) and the optimizers.
 */
#ifndef MAPOPT_SRC_TUNE_TUNE_H
#define MAPOPT_SRC_TUNE_TUNE_H

#include "core/core.h"
#include "mapopt/tune.h"

/* What the space knows of one task of the run. */
typedef struct space_task {
  bool used;          /* some op runs it */
  bool leaf;          /* not inner */
  bool reads;         /* it has a read-only argument with fields */
  unsigned usable;    /* bit k: it has a kind-k variant and the machine has
                         kind-k processors */
  int default_kind;   /* first usable kind of the default order, or -1 */
  int base_kind;      /* its kind when the kind parameter is default */
  int index_dims;     /* dimensions of its index launches; -1 none, -2 mixed */
  int parent_task;    /* the task of its single launches' parent; -1 none,
                         -2 several */
  int64_t kind_param; /* 1 + its kind parameter, 0 none */
  int64_t map_param;  /* 1 + its index-map parameter, 0 none */
  mapopt__vec keys;   /* const char *: its region-argument keys */
  mapopt__vec ambiguous; /* const char *: first names that two arguments
                            of one op share (keyed by position instead) */
} space_task;

struct mapopt_space {
  mapopt_ctx *ctx;
  mapopt__arena arena;
  const mapopt_app_run *run;
  const mapopt_machine *machine;
  mapopt_machine_shape shape;
  char *base; /* the base mapper's text, or NULL */
  size_t base_len;
  space_task *tasks;      /* per run task */
  char *region_used;      /* per run region: a leaf uses it */
  mapopt__vec params;     /* mapopt_space_param */
  mapopt__vec param_task; /* int: each parameter's task, -1 none */
};

/* The task of parameter i (-1 for layout parameters). */
int mapopt__space_task_of(const mapopt_space *sp, size_t i);
/* The processor kind task t gets under choice (-1 when it has none). */
int mapopt__space_kind_of(const mapopt_space *sp, const uint16_t *choice,
                          int task);

/* ---- optimizers ------------------------------------------------------------
 */

/* One optimizer's functions. state is the optimizer's own (zeroed, size
 * bytes, owned by the mapopt_optimizer). ask and tell return MAPOPT_OK,
 * MAPOPT_ENOTFOUND (ask: nothing left) or MAPOPT_ENOMEM. */
typedef struct mapopt__optimizer_vt {
  const char *name;
  size_t size;
  mapopt_status (*init)(mapopt_optimizer *opt);
  mapopt_status (*ask)(mapopt_optimizer *opt, mapopt_candidate *out);
  mapopt_status (*tell)(mapopt_optimizer *opt, const mapopt_candidate *c,
                        const mapopt_evaluation *e);
  void (*destroy)(mapopt_optimizer *opt);
} mapopt__optimizer_vt;

struct mapopt_optimizer {
  mapopt_ctx *ctx;
  const mapopt_space *space;
  const mapopt__optimizer_vt *vt;
  mapopt_optimizer_options opts;
  mapopt__rng rng;
  int64_t next_tag;
  void *state;
};

/* Fills a candidate for choice (copied): renders its text; note is copied.
 * MAPOPT_ENOMEM (the candidate is then cleared). */
mapopt_status mapopt__candidate_make(mapopt_optimizer *opt,
                                     const uint16_t *choice, const char *note,
                                     mapopt_candidate *out);

extern const mapopt__optimizer_vt mapopt__opt_random;

#endif /* MAPOPT_SRC_TUNE_TUNE_H */
