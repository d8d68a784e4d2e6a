/*
 * Machine models (docs/dsl.md, "Machine models and transformations"): the base
 * model Machine(K), the six transformations (split, merge, swap, slice, reverse
 * and the factor splits balance_split / auto_split / greedy_split), the inverse
 * mapping used by indexing and the forward mapping used by task.processor(m).
 *
 * A model is a value: transform() writes a new model and one new step and
 * never touches the old model. Every step records the size tuple it was
 * applied to, so both mappings walk the chain without recomputing sizes.
 * Nothing here allocates; errors come back as an R-code plus the message of
 * their catalogue entry (mapopt/dsl.h) in a caller buffer. The factorization
 * algorithms themselves live in factor.c; MS_FACTORS steps receive their
 * factors already computed.
 *
 * Arithmetic on sizes and coordinates is int64 and checked: an overflow is
 * R06 "integer overflow" (only reachable with absurd user coordinates or
 * degenerate models, since a model's volume never exceeds N * P_K).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl/ast.h"
#include "dsl/mspace.h"

#define MAXD MAPOPT__MS_MAX_DIMS

#if defined(__GNUC__)
#define PRINTF_LIKE(f, a) __attribute__((format(printf, f, a)))
#else
#define PRINTF_LIKE(f, a)
#endif

/* Writes the message of catalogue entry id (give it as MAPOPT__DIAG(NAME))
 * into err (if any, truncating as snprintf does); returns its R-code. */
static PRINTF_LIKE(2, 5) mapopt__ms_err
    fail(mapopt_dsl_diag id, const char *fmt, char *err, size_t errlen, ...) {
  if (err && errlen) {
    va_list ap;
    va_start(ap, errlen);
    vsnprintf(err, errlen, fmt, ap);
    va_end(ap);
  }
  return (mapopt__ms_err)atoi(mapopt_dsl_diag_code(id) + 1);
}

static mapopt__ms_err overflow(char *err, size_t errlen) {
  return fail(MAPOPT__DIAG(R06_OVERFLOW), err, errlen);
}

void mapopt__ms_base(mapopt__mspace *m, int proc_kind, int64_t nodes,
                     int64_t procs) {
  m->proc_kind = proc_kind;
  m->nodes = nodes;
  m->procs = procs;
  m->nsteps = 0;
  m->steps = NULL;
  m->ndims = 2;
  m->size[0] = nodes;
  m->size[1] = procs;
}

/* R15 for a dimension argument outside [0, n). */
static mapopt__ms_err bad_dim(const char *name, int d, int n, char *err,
                              size_t errlen) {
  return fail(MAPOPT__DIAG(R15_DIMENSION), err, errlen, name, (int64_t)d, n);
}

static mapopt__ms_err too_many_dims(char *err, size_t errlen) {
  return fail(MAPOPT__DIAG(R15_TOO_MANY), err, errlen);
}

/*
 * Validates the arguments of one transformation against in (checks in the order
 * of docs/dsl.md, "The exact rules", dimension range first), then builds the
 * new size tuple and the step. in and out may alias: nothing is written before
 * all checks have passed.
 */
mapopt__ms_err mapopt__ms_transform(const mapopt__mspace *in, mapopt__ms_op op,
                                    const char *name, int a, int b, int64_t f,
                                    int64_t lo, int64_t hi,
                                    const int64_t *factors, int nf,
                                    mapopt__ms_step *step, mapopt__mspace *out,
                                    char *err, size_t errlen) {
  const int n = in->ndims;
  const int64_t *s = in->size;
  int64_t ns[MAXD]; /* new size tuple */
  int nn = n;       /* its length */

  if (!name)
    name = "transform";
  if (a < 0 || a >= n)
    return bad_dim(name, a, n, err, errlen);

  switch (op) {
  case MS_SPLIT:
    if (f < 1)
      return fail(MAPOPT__DIAG(R15_FACTOR), err, errlen, (int64_t)f);
    if (s[a] % f != 0)
      return fail(MAPOPT__DIAG(R15_DIVISIBLE), err, errlen, (int64_t)s[a], a,
                  (int64_t)f);
    if (n + 1 > MAXD)
      return too_many_dims(err, errlen);
    nn = n + 1;
    memcpy(ns, s, (size_t)a * sizeof *ns);
    ns[a] = f;
    ns[a + 1] = s[a] / f;
    memcpy(ns + a + 2, s + a + 1, (size_t)(n - a - 1) * sizeof *ns);
    break;

  case MS_MERGE:
  case MS_SWAP:
    if (b < 0 || b >= n)
      return bad_dim(name, b, n, err, errlen);
    if (a == b)
      return fail(MAPOPT__DIAG(R15_SAME_DIMENSIONS), err, errlen, name);
    if (op == MS_SWAP) {
      memcpy(ns, s, (size_t)n * sizeof *ns);
      ns[a] = s[b];
      ns[b] = s[a];
    } else {
      int64_t prod;
      if (__builtin_mul_overflow(s[a], s[b], &prod))
        return overflow(err, errlen);
      /* Old dimensions except b, in order; a's slot holds the product. */
      nn = 0;
      for (int i = 0; i < n; i++)
        if (i != b)
          ns[nn++] = i == a ? prod : s[i];
    }
    break;

  case MS_SLICE:
    if (lo < 0 || lo > hi || hi >= s[a])
      return fail(MAPOPT__DIAG(R15_SLICE), err, errlen, (int64_t)lo,
                  (int64_t)hi, (int64_t)s[a]);
    memcpy(ns, s, (size_t)n * sizeof *ns);
    ns[a] = hi - lo + 1;
    break;

  case MS_REVERSE:
    memcpy(ns, s, (size_t)n * sizeof *ns);
    break;

  case MS_FACTORS:
    if (nf < 1) {
      if (strcmp(name, "balance_split") == 0)
        return fail(MAPOPT__DIAG(R15_PARTS), err, errlen, (int64_t)nf);
      return fail(MAPOPT__DIAG(R15_DOMAIN), err, errlen, name);
    }
    if (s[a] < 1)
      return fail(MAPOPT__DIAG(R15_ZERO_SIZE), err, errlen, a);
    if (nf > MAXD || n - 1 + nf > MAXD)
      return too_many_dims(err, errlen);
    nn = n - 1 + nf;
    memcpy(ns, s, (size_t)a * sizeof *ns);
    memcpy(ns + a, factors, (size_t)nf * sizeof *ns);
    memcpy(ns + a + nf, s + a + 1, (size_t)(n - a - 1) * sizeof *ns);
    break;

  default:
    return fail(MAPOPT__DIAG(R15_UNKNOWN), err, errlen, name);
  }

  /* All checks passed: write the step, then the model. */
  mapopt__ms_step st;
  memset(&st, 0, sizeof st);
  st.op = op;
  st.a = a;
  st.b = (op == MS_MERGE || op == MS_SWAP) ? b : 0;
  st.f = op == MS_SPLIT ? f : 0;
  st.lo = op == MS_SLICE ? lo : 0;
  st.hi = op == MS_SLICE ? hi : 0;
  if (op == MS_FACTORS) {
    st.nf = nf;
    memcpy(st.factors, factors, (size_t)nf * sizeof *st.factors);
  }
  st.in_ndims = n;
  memcpy(st.in_size, s, (size_t)n * sizeof *s);

  const int nsteps = in->nsteps;
  *step = st;
  out->proc_kind = in->proc_kind;
  out->nodes = in->nodes;
  out->procs = in->procs;
  out->nsteps = nsteps + 1;
  /* By contract step is the last slot of the caller's nsteps + 1 array. */
  out->steps = step - nsteps;
  out->ndims = nn;
  memcpy(out->size, ns, (size_t)nn * sizeof *ns);
  return MS_OK;
}

/*
 * Inverse mapping: walks the steps from the last to the first, turning a
 * point of each model into a point of the model it was made from. The
 * coordinates live in one buffer edited in place (ndims is small, so the
 * memmoves are a few words). Only reverse can make a coordinate negative
 * (all other maps combine non-negative values with checked arithmetic), so
 * R12 is checked there and on the input.
 */
mapopt__ms_err mapopt__ms_inverse(const mapopt__mspace *m,
                                  const int64_t *coords, int64_t *node,
                                  int64_t *proc, char *err, size_t errlen) {
  int64_t q[MAXD];
  const int n0 = m->ndims;

  for (int i = 0; i < n0; i++) {
    if (coords[i] < 0)
      return fail(MAPOPT__DIAG(R12_NEGATIVE), err, errlen, (int64_t)coords[i],
                  i);
    q[i] = coords[i];
  }

  for (int k = m->nsteps - 1; k >= 0; k--) {
    const mapopt__ms_step *st = &m->steps[k];
    const int d = st->a;
    const int n = st->in_ndims; /* length of q after this step */
    switch (st->op) {
    case MS_SPLIT: {
      /* q[d] = p[d] + f * p[d+1]; drop p[d+1]. */
      int64_t t;
      if (__builtin_mul_overflow(st->f, q[d + 1], &t) ||
          __builtin_add_overflow(q[d], t, &t))
        return overflow(err, errlen);
      q[d] = t;
      memmove(q + d + 1, q + d + 2, (size_t)(n - d - 1) * sizeof *q);
      break;
    }
    case MS_MERGE: {
      /* p[md] splits into q[a] = p[md] / s[b] and q[b] = p[md] % s[b]. */
      const int a = d, b = st->b;
      const int md = a < b ? a : a - 1;
      const int64_t v = q[md];
      const int64_t sb = st->in_size[b];
      /* A zero-sized s[b] (a kind with no processors) has no valid point;
       * keep the value in b so that the base check rejects it. */
      const int64_t va = sb ? v / sb : 0;
      const int64_t vb = sb ? v % sb : v;
      /* Remove md, then insert the two values at their old positions. */
      memmove(q + md, q + md + 1, (size_t)(n - 2 - md) * sizeof *q);
      const int lo = a < b ? a : b, hi = a < b ? b : a;
      memmove(q + lo + 1, q + lo, (size_t)(n - 2 - lo) * sizeof *q);
      q[lo] = lo == a ? va : vb;
      memmove(q + hi + 1, q + hi, (size_t)(n - 1 - hi) * sizeof *q);
      q[hi] = hi == a ? va : vb;
      break;
    }
    case MS_SWAP: {
      const int64_t t = q[d];
      q[d] = q[st->b];
      q[st->b] = t;
      break;
    }
    case MS_SLICE:
      if (q[d] > st->hi - st->lo)
        return fail(MAPOPT__DIAG(R25_SLICED), err, errlen, d, (int64_t)q[d],
                    (int64_t)(st->hi - st->lo));
      q[d] += st->lo;
      break;
    case MS_REVERSE:
      /* p >= 0 and s >= 0, so this cannot overflow. */
      q[d] = st->in_size[d] - 1 - q[d];
      if (q[d] < 0)
        return fail(MAPOPT__DIAG(R12_NEGATIVE), err, errlen, (int64_t)q[d], d);
      break;
    case MS_FACTORS: {
      /* q[d] = sum_j p[d+j] * prod_{i<j} F_i, by Horner from the last
       * part; every partial value is at most the result, so an overflow
       * here means the result overflows. */
      const int nf = st->nf;
      int64_t acc = q[d + nf - 1];
      for (int j = nf - 2; j >= 0; j--)
        if (__builtin_mul_overflow(acc, st->factors[j], &acc) ||
            __builtin_add_overflow(acc, q[d + j], &acc))
          return overflow(err, errlen);
      q[d] = acc;
      if (nf > 1)
        memmove(q + d + 1, q + d + nf, (size_t)(n - d - 1) * sizeof *q);
      break;
    }
    default:
      return fail(MAPOPT__DIAG(R15_CORRUPT), err, errlen);
    }
  }

  if (q[0] >= m->nodes)
    return fail(MAPOPT__DIAG(R10_NODE), err, errlen, (int64_t)q[0],
                (int64_t)m->nodes);
  if (q[1] >= m->procs)
    return fail(MAPOPT__DIAG(R11_PROCESSOR), err, errlen, (int64_t)q[1],
                (int64_t)m->procs);
  *node = q[0];
  *proc = q[1];
  return MS_OK;
}

/* R21 for coordinate c of dimension d of a model of that size. */
static mapopt__ms_err outside(int64_t node, int64_t proc, int64_t c,
                              int64_t size, int d, char *err, size_t errlen) {
  return fail(MAPOPT__DIAG(R21_OUTSIDE), err, errlen, (int64_t)node,
              (int64_t)proc, (int64_t)c, (int64_t)size, d);
}

/*
 * Forward mapping: walks the steps from the first to the last, turning a point
 * of each model into a point of the next one, then checks the result against
 * the final sizes. Only slice checks its bound on the way (R21 with the sliced
 * coordinate p[d] = q[d] - lo against the new size hi - lo + 1); intermediate
 * values are otherwise unchecked. Division and remainder follow C (truncation);
 * they only see a negative value when the processor itself lies outside the
 * base model.
 */
mapopt__ms_err mapopt__ms_forward(const mapopt__mspace *m, int64_t node,
                                  int64_t proc, int64_t *out, char *err,
                                  size_t errlen) {
  int64_t q[MAXD];
  q[0] = node;
  q[1] = proc;

  for (int k = 0; k < m->nsteps; k++) {
    const mapopt__ms_step *st = &m->steps[k];
    const int d = st->a;
    const int n = st->in_ndims; /* length of q before this step */
    switch (st->op) {
    case MS_SPLIT: {
      const int64_t v = q[d];
      memmove(q + d + 2, q + d + 1, (size_t)(n - d - 1) * sizeof *q);
      q[d] = v % st->f;
      q[d + 1] = v / st->f;
      break;
    }
    case MS_MERGE: {
      const int a = d, b = st->b;
      const int md = a < b ? a : a - 1;
      int64_t v;
      if (__builtin_mul_overflow(q[a], st->in_size[b], &v) ||
          __builtin_add_overflow(v, q[b], &v))
        return overflow(err, errlen);
      memmove(q + b, q + b + 1, (size_t)(n - b - 1) * sizeof *q);
      q[md] = v;
      break;
    }
    case MS_SWAP: {
      const int64_t t = q[d];
      q[d] = q[st->b];
      q[st->b] = t;
      break;
    }
    case MS_SLICE: {
      const int64_t size = st->hi - st->lo + 1;
      int64_t c;
      if (__builtin_sub_overflow(q[d], st->lo, &c))
        return overflow(err, errlen);
      if (c < 0 || c >= size)
        return outside(node, proc, c, size, d, err, errlen);
      q[d] = c;
      break;
    }
    case MS_REVERSE:
      if (__builtin_sub_overflow(st->in_size[d] - 1, q[d], &q[d]))
        return overflow(err, errlen);
      break;
    case MS_FACTORS: {
      const int nf = st->nf;
      int64_t v = q[d];
      if (nf > 1)
        memmove(q + d + nf, q + d + 1, (size_t)(n - d - 1) * sizeof *q);
      for (int j = 0; j < nf; j++) {
        q[d + j] = v % st->factors[j];
        v /= st->factors[j];
      }
      break;
    }
    default:
      return fail(MAPOPT__DIAG(R15_CORRUPT), err, errlen);
    }
  }

  for (int i = 0; i < m->ndims; i++)
    if (q[i] < 0 || q[i] >= m->size[i])
      return outside(node, proc, q[i], m->size[i], i, err, errlen);
  memcpy(out, q, (size_t)m->ndims * sizeof *q);
  return MS_OK;
}
