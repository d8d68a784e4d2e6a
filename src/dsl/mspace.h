/*
 * Machine models of the DSL (docs/dsl.md, "Machine models and
 * transformations" and "Factorization algorithms"): a base model Machine(K) of
 * size (N, P_K) plus a chain of transformations, the inverse mapping from a
 * model point to a processor (indexing), the forward mapping from a
 * processor to a model point (task.processor(m)), and the three
 * factorization algorithms balance, greedy and decompose.
 *
 * Everything here is pure and allocation-free: models are values the caller
 * stores (the interpreter keeps them in its arenas); a transformation writes
 * a new model from an old one. Errors are reported as an R-code and an
 * exact message (docs/dsl.md, "Errors raised while running mapper code (R)")
 * written into a caller buffer.
 */
#ifndef MAPOPT_SRC_DSL_MSPACE_H
#define MAPOPT_SRC_DSL_MSPACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define MAPOPT__MS_MAX_DIMS 16

typedef enum mapopt__ms_op {
  MS_SPLIT,   /* a = d, f = factor */
  MS_MERGE,   /* a, b */
  MS_SWAP,    /* a, b */
  MS_SLICE,   /* a = d, lo, hi */
  MS_REVERSE, /* a = d */
  MS_FACTORS  /* a = d, factors[0..nf): balance_split, auto_split, greedy_split
               */
} mapopt__ms_op;

/* One transformation, with the size tuple of the model it was applied to
 * (inverse and forward mappings need it). */
typedef struct mapopt__ms_step {
  mapopt__ms_op op;
  int a;
  int b;
  int64_t lo;
  int64_t hi;
  int64_t f;
  int nf;
  int64_t factors[MAPOPT__MS_MAX_DIMS];
  int in_ndims;
  int64_t in_size[MAPOPT__MS_MAX_DIMS];
} mapopt__ms_step;

/*
 * A machine model value. steps points to nsteps transformations in
 * application order (T1 first); the storage is owned by whoever built the
 * model (typically an arena) and is shared, never mutated, between models:
 * a transformed model's steps array is the old one's plus one step.
 */
typedef struct mapopt__mspace {
  int proc_kind; /* mapopt_proc_kind of Machine(K) */
  int64_t nodes; /* N */
  int64_t procs; /* P_K */
  int nsteps;
  const mapopt__ms_step *steps;
  int ndims;
  int64_t size[MAPOPT__MS_MAX_DIMS];
} mapopt__mspace;

/* Every message of this module fits in MAPOPT__MS_ERR_MAX bytes: its
 * catalogue templates have at most 98 bytes of text, at most five numbers
 * (20 bytes as int64, 11 as int) and at most one method name (13 bytes at
 * most, "balance_split"): 98 + 5 * 20 + 13 < 256. A caller's buffer of this
 * size never cuts one short. */
#define MAPOPT__MS_ERR_MAX 256

/* Error codes of this module: the R codes of the diagnostic catalogue. */
typedef enum mapopt__ms_err {
  MS_OK = 0,
  MS_R02 = 2,  /* type mismatch (bad argument shape) */
  MS_R06 = 6,  /* 64-bit overflow ("integer overflow") */
  MS_R10 = 10, /* node index out of bound */
  MS_R11 = 11, /* processor index out of bound */
  MS_R12 = 12, /* negative coordinate */
  MS_R13 = 13, /* wrong number of coordinates */
  MS_R15 = 15, /* bad transformation argument */
  MS_R21 = 21, /* forward map out of range */
  MS_R23 = 23, /* step budget exhausted (decompose) */
  MS_R25 = 25  /* inverse slice bound */
} mapopt__ms_err;

/* The base model Machine(K): size (nodes, procs), no steps. */
void mapopt__ms_base(mapopt__mspace *m, int proc_kind, int64_t nodes,
                     int64_t procs);

/*
 * Applies one transformation to in, writing the new model to *out and the
 * new step to *step (which out->steps[out->nsteps - 1] must then point to:
 * the caller provides storage for in->nsteps + 1 steps, copies in->steps
 * into it and passes its last slot as step). op-specific arguments:
 *   MS_SPLIT: a = d, f          MS_MERGE/MS_SWAP: a, b
 *   MS_SLICE: a = d, lo, hi     MS_REVERSE: a = d
 *   MS_FACTORS: a = d, factors[0..nf) already computed by the caller
 * name is the DSL method name used in messages ("split", "balance_split").
 * Returns MS_OK, or MS_R15 with the catalogue's message in err (MS_R06
 * "integer overflow" if a merged size overflows).
 */
mapopt__ms_err mapopt__ms_transform(const mapopt__mspace *in, mapopt__ms_op op,
                                    const char *name, int a, int b, int64_t f,
                                    int64_t lo, int64_t hi,
                                    const int64_t *factors, int nf,
                                    mapopt__ms_step *step, mapopt__mspace *out,
                                    char *err, size_t errlen);

/*
 * Inverse mapping (indexing without wildcards): coords has m->ndims
 * non-negative entries. Writes the processor (node, local index) on
 * success. Errors: R12, R25, R10, R11 with the catalogue's messages;
 * R06 "integer overflow" if an inverse map overflows int64.
 */
mapopt__ms_err mapopt__ms_inverse(const mapopt__mspace *m,
                                  const int64_t *coords, int64_t *node,
                                  int64_t *proc, char *err, size_t errlen);

/*
 * Forward mapping of processor (node, proc) into m (task.processor(m)):
 * writes m->ndims coordinates to out. Error: R21 (R06 on overflow, only
 * possible for a processor far outside the base model).
 */
mapopt__ms_err mapopt__ms_forward(const mapopt__mspace *m, int64_t node,
                                  int64_t proc, int64_t *out, char *err,
                                  size_t errlen);

/* balance(N, k) (docs/dsl.md, "balance(N, k)") into out[0..k). N >= 1,
 * 1 <= k <= 16. */
void mapopt__factor_balance(int64_t n, int k, int64_t *out);
/* greedy(N, L) into out[0..k). N >= 1, L[i] >= 1, 1 <= k <= 16. */
void mapopt__factor_greedy(int64_t n, const int64_t *l, int k, int64_t *out);
/*
 * decompose(N, L) into out[0..k). *steps is charged one step per candidate
 * examined; if it would exceed step_limit, returns MS_R23 without a result.
 */
mapopt__ms_err mapopt__factor_decompose(int64_t n, const int64_t *l, int k,
                                        int64_t *out, int64_t *steps,
                                        int64_t step_limit);

#endif /* MAPOPT_SRC_DSL_MSPACE_H */
