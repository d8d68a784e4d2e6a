/*
 * Unit tests for machine models and factorization (src/dsl/mspace.c,
 * src/dsl/factor.c): the worked examples of docs/dsl.md, "Transformations
 * reshape the grid, not the machine", the golden cases (tests/dsl) 38-43,
 * 45-47, 56, 62-66 and 87 computed through the module, the exact R messages,
 * overflow handling, the decompose step budget, and round-trip properties of
 * the inverse and forward mappings.
 *
 * Models are built from a one-line description such as
 * "split(1,2) merge(0,1)" so that every case is one table row. The factor
 * splits are written balance(d,k), auto(d,L...) and greedy(d,L...); the
 * helper computes their factors the way the interpreter does.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dsl/mspace.h"

#define MAXD MAPOPT__MS_MAX_DIMS
#define NOLIM INT64_MAX

/* A model plus the storage for its steps. */
typedef struct chain {
  mapopt__ms_step steps[64];
  mapopt__mspace m;
} chain;

static void chain_base(chain *c, int64_t nodes, int64_t procs) {
  mapopt__ms_base(&c->m, 1, nodes, procs);
}

/*
 * Applies the transformations described by ops to c->m, stopping at the
 * first error; returns its code and leaves the message in err.
 */
static mapopt__ms_err chain_apply(chain *c, const char *ops, char *err,
                                  size_t errlen) {
  const char *s = ops;
  while (*s) {
    while (*s == ' ')
      s++;
    if (!*s)
      break;
    char name[32];
    int len = 0;
    while (s[len] && s[len] != '(')
      len++;
    assert_true(len > 0 && len < 32 && s[len] == '(');
    memcpy(name, s, (size_t)len);
    name[len] = 0;
    s += len + 1;
    int64_t arg[MAXD + 2];
    int na = 0;
    while (*s != ')') {
      char *end;
      arg[na++] = strtoll(s, &end, 10);
      assert_true(end != s);
      s = end;
      if (*s == ',')
        s++;
    }
    s++;

    mapopt__ms_op op;
    const char *dsl = name;
    int64_t factors[MAXD + 1];
    int nf = 0;
    int d = (int)arg[0];
    if (!strcmp(name, "split")) {
      op = MS_SPLIT;
    } else if (!strcmp(name, "merge")) {
      op = MS_MERGE;
    } else if (!strcmp(name, "swap")) {
      op = MS_SWAP;
    } else if (!strcmp(name, "slice")) {
      op = MS_SLICE;
    } else if (!strcmp(name, "reverse")) {
      op = MS_REVERSE;
    } else {
      op = MS_FACTORS;
      bool ok = d >= 0 && d < c->m.ndims && c->m.size[d] >= 1;
      if (!strcmp(name, "balance")) {
        dsl = "balance_split";
        nf = (int)arg[1];
        if (ok && nf >= 1 && nf <= MAXD)
          mapopt__factor_balance(c->m.size[d], nf, factors);
      } else {
        nf = na - 1;
        if (!strcmp(name, "auto")) {
          dsl = "auto_split";
          int64_t steps = 0;
          if (ok && nf >= 1 && nf <= MAXD)
            assert_int_equal(mapopt__factor_decompose(c->m.size[d], arg + 1, nf,
                                                      factors, &steps, NOLIM),
                             MS_OK);
        } else {
          assert_string_equal(name, "greedy");
          dsl = "greedy_split";
          if (ok && nf >= 1 && nf <= MAXD)
            mapopt__factor_greedy(c->m.size[d], arg + 1, nf, factors);
        }
      }
    }
    int b = na > 1 ? (int)arg[1] : 0;
    int64_t f = na > 1 ? arg[1] : 0;
    int64_t lo = na > 1 ? arg[1] : 0, hi = na > 2 ? arg[2] : 0;
    assert_true(c->m.nsteps < 64);
    /* in and out alias on purpose: transform must allow it. */
    mapopt__ms_err rc =
        mapopt__ms_transform(&c->m, op, dsl, d, b, f, lo, hi, factors, nf,
                             &c->steps[c->m.nsteps], &c->m, err, errlen);
    if (rc != MS_OK)
      return rc;
    assert_ptr_equal(c->m.steps, c->steps);
  }
  return MS_OK;
}

static void build(chain *c, int64_t nodes, int64_t procs, const char *ops) {
  char err[256] = "";
  chain_base(c, nodes, procs);
  mapopt__ms_err rc = chain_apply(c, ops, err, sizeof err);
  if (rc != MS_OK)
    fail_msg("building '%s': R%02d %s", ops, (int)rc, err);
}

/* Parses "(a, b, ...)" into v; returns the count. */
static int tuple(const char *s, int64_t *v) {
  int n = 0;
  while (*s) {
    if ((*s >= '0' && *s <= '9') || *s == '-') {
      char *end;
      v[n++] = strtoll(s, &end, 10);
      s = end;
    } else {
      s++;
    }
  }
  return n;
}

static void assert_size(const mapopt__mspace *m, const char *want) {
  int64_t v[MAXD];
  int n = tuple(want, v);
  char got[256];
  int off = snprintf(got, sizeof got, "(");
  for (int i = 0; i < m->ndims; i++)
    off += snprintf(got + off, sizeof got - (size_t)off, "%s%lld",
                    i ? ", " : "", (long long)m->size[i]);
  snprintf(got + off, sizeof got - (size_t)off, ")");
  if (n != m->ndims)
    fail_msg("size %s, want %s", got, want);
  for (int i = 0; i < n; i++)
    if (v[i] != m->size[i])
      fail_msg("size %s, want %s", got, want);
}

/* ---- inverse mapping (indexing) ---------------------------------------- */

typedef struct inv_case {
  int64_t nodes, procs;
  const char *ops;
  const char *size;   /* expected model size, NULL to skip */
  const char *coords; /* index tuple */
  int code;           /* expected R-code, 0 for success */
  int64_t node, proc; /* expected processor on success */
  const char *msg;    /* expected message on failure */
} inv_case;

static const inv_case inv_cases[] = {
    /* The docs' worked examples (case 63). */
    {2, 4, "merge(0,1)", "(8)", "(5)", 0, 1, 1, NULL},
    {2, 4, "merge(1,0)", "(8)", "(5)", 0, 1, 2, NULL},
    {2, 4, "split(1,2)", "(2,2,2)", "(1,1,1)", 0, 1, 3, NULL},
    {2, 4, "swap(0,1)", "(4,2)", "(3,1)", 0, 1, 3, NULL},
    {2, 4, "slice(1,1,2)", "(2,2)", "(1,1)", 0, 1, 2, NULL},
    {2, 4, "reverse(1)", "(2,4)", "(0,0)", 0, 0, 3, NULL},
    {2, 4, "balance(1,2)", "(2,2,2)", "(1,1,1)", 0, 1, 3, NULL},
    /* Case 56: intermediate sizes are not enforced. */
    {2, 4, "split(1,2)", "(2,2,2)", "(0,2,0)", 0, 0, 2, NULL},
    /* Cases 38, 39 and 41. */
    {2, 4, "", "(2,4)", "(1,1)", 0, 1, 1, NULL},
    {2, 4, "", NULL, "(0,2)", 0, 0, 2, NULL},
    {2, 4, "merge(0,1)", NULL, "(6)", 0, 1, 2, NULL},
    {2, 4, "merge(1,0)", NULL, "(5)", 0, 1, 2, NULL},
    /* Cases 45-47 and 62 (Machine(OMP) on TC has size (2, 0)). */
    {2, 4, "", NULL, "(0,4)", MS_R11, 0, 0,
     "Slice processor index out of bound! 4 >= 4"},
    {2, 4, "", NULL, "(2,0)", MS_R10, 0, 0,
     "Sharding node index out of bound! 2 >= 2"},
    {2, 4, "", NULL, "(-1,0)", MS_R12, 0, 0,
     "negative machine coordinate -1 in dimension 0"},
    {2, 0, "", "(2,0)", "(0,0)", MS_R11, 0, 0,
     "Slice processor index out of bound! 0 >= 0"},
    {2, 0, "merge(0,1)", "(0)", "(0)", MS_R11, 0, 0,
     "Slice processor index out of bound! 0 >= 0"},
    {2, 0, "merge(1,0)", "(0)", "(3)", MS_R11, 0, 0,
     "Slice processor index out of bound! 1 >= 0"},
    /* Merging over a zero-sized dimension b keeps the value in b. */
    {2, 0, "merge(0,1)", "(0)", "(3)", MS_R11, 0, 0,
     "Slice processor index out of bound! 3 >= 0"},
    /* Case 87: the slice bound. */
    {2, 4, "slice(1,1,2)", NULL, "(0,2)", MS_R25, 0, 0,
     "machine index out of bound for sliced dimension 1: 2 > 1"},
    {2, 4, "slice(1,1,2) swap(0,1)", NULL, "(3,0)", MS_R25, 0, 0,
     "machine index out of bound for sliced dimension 1: 3 > 1"},
    /* A negative intermediate coordinate, at the level where it appears. */
    {2, 4, "reverse(1) swap(0,1)", NULL, "(5,0)", MS_R12, 0, 0,
     "negative machine coordinate -2 in dimension 1"},
    {2, 4, "split(1,2) reverse(2)", NULL, "(0,0,3)", MS_R12, 0, 0,
     "negative machine coordinate -2 in dimension 2"},
    /* The R12 check comes before later steps' checks. */
    {2, 4, "slice(1,1,2) reverse(1)", NULL, "(0,9)", MS_R12, 0, 0,
     "negative machine coordinate -8 in dimension 1"},
    /* Checks on the base come last: R10 before R11. */
    {2, 4, "", NULL, "(7,9)", MS_R10, 0, 0,
     "Sharding node index out of bound! 7 >= 2"},
    /* Overflowing inverse maps. */
    {2, 4, "split(1,2)", NULL, "(0,0,9223372036854775807)", MS_R06, 0, 0,
     "integer overflow"},
    {2, 4, "balance(1,2)", NULL, "(0,0,4611686018427387904)", MS_R06, 0, 0,
     "integer overflow"},
    {2, 4, "balance(1,2)", NULL, "(0,2,4611686018427387903)", MS_R06, 0, 0,
     "integer overflow"},
    {2, 4, "balance(1,2)", NULL, "(0,0,4611686018427387903)", MS_R11, 0, 0,
     "Slice processor index out of bound! 9223372036854775806 >= 4"},
    /* Longer chains: merge/split round trips and mixed ops. */
    {2, 4, "merge(0,1) split(0,2)", "(2,4)", "(1,3)", 0, 1, 3, NULL},
    {2, 4, "merge(1,0) split(0,4)", "(4,2)", "(1,1)", 0, 1, 2, NULL},
    {2, 4, "split(1,2) merge(2,0)", "(2,4)", "(1,3)", 0, 1, 3, NULL},
    {2, 4, "split(1,2) merge(0,2)", "(4,2)", "(3,1)", 0, 1, 3, NULL},
    {2, 4, "split(1,2) swap(0,2) reverse(0)", "(2,2,2)", "(0,1,1)", 0, 1, 3,
     NULL},
    {3, 6, "balance(1,2) slice(0,1,2) merge(0,2)", "(4,3)", "(3,2)", 0, 2, 5,
     NULL},
    {4, 4, "auto(0,4,2,4)", "(2,1,2,4)", "(1,0,1,3)", 0, 3, 3, NULL},
};

static void test_inverse_table(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof inv_cases / sizeof *inv_cases; i++) {
    const inv_case *t = &inv_cases[i];
    chain c;
    build(&c, t->nodes, t->procs, t->ops);
    if (t->size)
      assert_size(&c.m, t->size);
    int64_t q[MAXD];
    assert_int_equal(tuple(t->coords, q), c.m.ndims);
    char err[256] = "";
    int64_t node = -7, proc = -7;
    int rc = mapopt__ms_inverse(&c.m, q, &node, &proc, err, sizeof err);
    if (rc != t->code)
      fail_msg("case %zu (%s)%s: got R%02d '%s', want R%02d", i, t->ops,
               t->coords, rc, err, t->code);
    if (t->code == 0) {
      if (node != t->node || proc != t->proc)
        fail_msg("case %zu (%s)%s: got (%lld, %lld), want (%lld, %lld)", i,
                 t->ops, t->coords, (long long)node, (long long)proc,
                 (long long)t->node, (long long)t->proc);
    } else {
      assert_string_equal(err, t->msg);
      assert_int_equal(node, -7); /* nothing written on failure */
    }
  }
}

/* Case 40: step over (16), hierarchical block. */
static void test_case40(void **state) {
  (void)state;
  chain c;
  build(&c, 2, 4, "");
  static const int64_t pts[][3] = {{13, 1, 2}, {3, 0, 1}};
  for (size_t k = 0; k < 2; k++) {
    int64_t i = pts[k][0];
    int64_t n = i * c.m.size[0] / 16, b = 16 / c.m.size[0];
    int64_t q[2] = {n, i % b * c.m.size[1] / b}, node, proc;
    assert_int_equal(mapopt__ms_inverse(&c.m, q, &node, &proc, NULL, 0), MS_OK);
    assert_int_equal(node, pts[k][1]);
    assert_int_equal(proc, pts[k][2]);
  }
}

/*
 * tile2d and its 3-D version (golden cases 42 and 43):
 * a = g.auto_split(0, ispace); b = a.auto_split(r, ispace / a.size[:-1]);
 * then b[owner..., wrap...].
 */
static void tile(int64_t nodes, int64_t procs, int r, const int64_t *ispace,
                 const int64_t *pt, const char *asize, const char *bsize,
                 int64_t want_node, int64_t want_proc) {
  chain c;
  char ops[128], err[256];
  int off = snprintf(ops, sizeof ops, "auto(0");
  for (int k = 0; k < r; k++)
    off += snprintf(ops + off, sizeof ops - (size_t)off, ",%lld",
                    (long long)ispace[k]);
  snprintf(ops + off, sizeof ops - (size_t)off, ")");
  build(&c, nodes, procs, ops);
  if (asize)
    assert_size(&c.m, asize);
  off = snprintf(ops, sizeof ops, "auto(%d", r);
  for (int k = 0; k < r; k++)
    off += snprintf(ops + off, sizeof ops - (size_t)off, ",%lld",
                    (long long)(ispace[k] / c.m.size[k]));
  snprintf(ops + off, sizeof ops - (size_t)off, ")");
  assert_int_equal(chain_apply(&c, ops, err, sizeof err), MS_OK);
  if (bsize)
    assert_size(&c.m, bsize);
  int64_t q[MAXD], node, proc;
  for (int k = 0; k < r; k++) {
    q[k] = pt[k] * c.m.size[k] / ispace[k];
    q[k + r] = pt[k] % c.m.size[k + r];
  }
  assert_int_equal(mapopt__ms_inverse(&c.m, q, &node, &proc, err, sizeof err),
                   MS_OK);
  if (node != want_node || proc != want_proc)
    fail_msg("tile point (%lld, %lld, ...) -> GPU(%lld, %lld), want "
             "GPU(%lld, %lld)",
             (long long)pt[0], (long long)pt[1], (long long)node,
             (long long)proc, (long long)want_node, (long long)want_proc);
}

static void test_tile2d(void **state) {
  (void)state;
  const int64_t s2[] = {4, 4};
  tile(2, 4, 2, s2, (int64_t[]){3, 1}, "(2,1,4)", "(2,1,2,2)", 1, 3);
  tile(2, 4, 2, s2, (int64_t[]){2, 2}, NULL, NULL, 1, 0);
  tile(2, 4, 2, s2, (int64_t[]){0, 1}, NULL, NULL, 0, 2);
  /* The closed form: (i, j) -> node i/2, GPU i%2 + 2*(j%2). */
  for (int64_t i = 0; i < 4; i++)
    for (int64_t j = 0; j < 4; j++)
      tile(2, 4, 2, s2, (int64_t[]){i, j}, NULL, NULL, i / 2,
           i % 2 + 2 * (j % 2));
  const int64_t s3[] = {2, 2, 2};
  tile(1, 4, 3, s3, (int64_t[]){1, 1, 0}, "(1,1,1,4)", "(1,1,1,2,2,1)", 0, 3);
  tile(1, 4, 3, s3, (int64_t[]){1, 0, 1}, NULL, NULL, 0, 1);
  tile(2, 4, 3, s3, (int64_t[]){1, 1, 0}, "(2,1,1,4)", "(2,1,1,1,2,2)", 1, 1);
  tile(2, 4, 3, s3, (int64_t[]){0, 1, 1}, NULL, NULL, 0, 3);
}

/* ---- forward mapping ----------------------------------------------------- */

typedef struct fwd_case {
  int64_t nodes, procs;
  const char *ops;
  int64_t node, proc;
  int code;
  const char *want; /* coordinates, or the message */
} fwd_case;

static const fwd_case fwd_cases[] = {
    {2, 4, "merge(0,1)", 1, 2, 0, "(6)"},
    {2, 4, "split(1,2)", 1, 2, 0, "(1,0,1)"},
    {2, 4, "slice(1,3,3)", 1, 2, MS_R21,
     "processor(m): processor (1, 2) is outside the machine model "
     "(coordinate -1 not in [0, 1) in dimension 1)"},
    {2, 4, "slice(1,0,1)", 1, 2, MS_R21,
     "processor(m): processor (1, 2) is outside the machine model "
     "(coordinate 2 not in [0, 2) in dimension 1)"},
    {2, 4, "slice(1,2,3)", 1, 2, 0, "(1,0)"},
    {2, 4, "", 1, 2, 0, "(1,2)"},
    {2, 4, "merge(1,0)", 1, 2, 0, "(5)"},
    {2, 4, "swap(0,1)", 1, 2, 0, "(2,1)"},
    {2, 4, "reverse(1)", 1, 2, 0, "(1,1)"},
    {2, 4, "balance(1,2)", 1, 3, 0, "(1,1,1)"},
    {12, 4, "auto(0,3,5)", 7, 2, 0, "(1,2,2)"},
    {2, 4, "slice(0,1,1) merge(0,1)", 1, 2, 0, "(2)"},
    {2, 4, "slice(0,1,1) merge(0,1)", 0, 2, MS_R21,
     "processor(m): processor (0, 2) is outside the machine model "
     "(coordinate -1 not in [0, 1) in dimension 0)"},
    /* The final range check (processor outside the base model, W14 on a
     * kind with no processors). */
    {2, 4, "", 2, 0, MS_R21,
     "processor(m): processor (2, 0) is outside the machine model "
     "(coordinate 2 not in [0, 2) in dimension 0)"},
    {2, 0, "merge(0,1)", 0, 0, MS_R21,
     "processor(m): processor (0, 0) is outside the machine model "
     "(coordinate 0 not in [0, 0) in dimension 0)"},
    {2, 4, "", 0, -1, MS_R21,
     "processor(m): processor (0, -1) is outside the machine model "
     "(coordinate -1 not in [0, 4) in dimension 1)"},
    {2, 4, "reverse(1)", 0, INT64_MIN, MS_R06, "integer overflow"},
    {2, 4, "merge(0,1)", INT64_MAX, 0, MS_R06, "integer overflow"},
};

static void test_forward_table(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof fwd_cases / sizeof *fwd_cases; i++) {
    const fwd_case *t = &fwd_cases[i];
    chain c;
    build(&c, t->nodes, t->procs, t->ops);
    char err[256] = "";
    int64_t out[MAXD];
    int rc = mapopt__ms_forward(&c.m, t->node, t->proc, out, err, sizeof err);
    if (rc != t->code)
      fail_msg("case %zu (%s): got R%02d '%s', want R%02d", i, t->ops, rc, err,
               t->code);
    if (rc == MS_OK) {
      int64_t v[MAXD];
      int n = tuple(t->want, v);
      assert_int_equal(n, c.m.ndims);
      for (int k = 0; k < n; k++)
        if (out[k] != v[k])
          fail_msg("case %zu (%s): coordinate %d is %lld, want %s", i, t->ops,
                   k, (long long)out[k], t->want);
    } else {
      assert_string_equal(err, t->want);
    }
  }
}

/* Chains on which forward and inverse must be mutually inverse. */
static const struct {
  int64_t nodes, procs;
  const char *ops;
} rt_chains[] = {
    {2, 4, ""},
    {2, 4, "merge(0,1)"},
    {2, 4, "merge(1,0)"},
    {2, 4, "split(1,2) swap(0,2)"},
    {3, 12, "balance(1,3) merge(3,0) reverse(1)"},
    {6, 4, "auto(0,12,4) greedy(2,2,2) merge(2,0)"},
    {4, 6, "merge(1,0) split(0,3) split(1,2) reverse(2) swap(0,1) merge(2,1)"},
    {5, 8, "split(1,4) balance(0,1) greedy(2,1,2)"},
    {2, 8, "split(1,2) split(2,2) split(3,2) merge(3,0) merge(1,2)"},
};

/* Odometer over every point of a model with sizes s[0..n). */
static bool next_point(int64_t *p, const int64_t *s, int n) {
  for (int i = n - 1; i >= 0; i--) {
    if (++p[i] < s[i])
      return true;
    p[i] = 0;
  }
  return false;
}

/*
 * Property: for bijective chains every processor maps forward to a point
 * that maps back to it, and every point of the model is hit exactly once.
 * With slices, in-range processors map back and out-of-range ones give R21.
 */
static void test_round_trip(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof rt_chains / sizeof *rt_chains; i++) {
    chain c;
    build(&c, rt_chains[i].nodes, rt_chains[i].procs, rt_chains[i].ops);
    int64_t vol = 1;
    for (int k = 0; k < c.m.ndims; k++)
      vol *= c.m.size[k];
    assert_int_equal(vol, c.m.nodes * c.m.procs);
    for (int64_t n = 0; n < c.m.nodes; n++)
      for (int64_t p = 0; p < c.m.procs; p++) {
        int64_t pt[MAXD], node, proc;
        assert_int_equal(mapopt__ms_forward(&c.m, n, p, pt, NULL, 0), MS_OK);
        assert_int_equal(mapopt__ms_inverse(&c.m, pt, &node, &proc, NULL, 0),
                         MS_OK);
        assert_int_equal(node, n);
        assert_int_equal(proc, p);
      }
    int64_t pt[MAXD] = {0};
    int64_t count = 0;
    do {
      int64_t node, proc, back[MAXD];
      assert_int_equal(mapopt__ms_inverse(&c.m, pt, &node, &proc, NULL, 0),
                       MS_OK);
      assert_int_equal(mapopt__ms_forward(&c.m, node, proc, back, NULL, 0),
                       MS_OK);
      assert_memory_equal(back, pt, (size_t)c.m.ndims * sizeof *pt);
      count++;
    } while (next_point(pt, c.m.size, c.m.ndims));
    assert_int_equal(count, vol);
  }

  chain c;
  build(&c, 3, 8, "slice(1,2,5) slice(0,1,2) merge(1,0)");
  assert_size(&c.m, "(8)");
  for (int64_t n = 0; n < 3; n++)
    for (int64_t p = 0; p < 8; p++) {
      int64_t pt[MAXD], node, proc;
      char err[256];
      int rc = mapopt__ms_forward(&c.m, n, p, pt, err, sizeof err);
      bool inside = n >= 1 && n <= 2 && p >= 2 && p <= 5;
      assert_int_equal(rc, inside ? MS_OK : MS_R21);
      if (inside) {
        assert_int_equal(mapopt__ms_inverse(&c.m, pt, &node, &proc, NULL, 0),
                         MS_OK);
        assert_int_equal(node, n);
        assert_int_equal(proc, p);
      }
    }
}

/* ---- transformation sizes and errors ------------------------------------ */

typedef struct tr_case {
  int64_t nodes, procs;
  const char *ops;
  int code;
  const char *want; /* size on success, message on failure */
} tr_case;

static const tr_case tr_cases[] = {
    /* Case 62 and the worked-example sizes. */
    {2, 4, "", 0, "(2,4)"},
    {2, 0, "", 0, "(2,0)"},
    /* Case 64. */
    {1, 12, "balance(1,2)", 0, "(1,6,2)"},
    {1, 30, "balance(1,3)", 0, "(1,5,3,2)"},
    /* Case 65. */
    {12, 4, "auto(0,3,5)", 0, "(3,4,4)"},
    {12, 4, "greedy(0,3,5)", 0, "(2,6,4)"},
    {6, 4, "auto(0,12,4)", 0, "(6,1,4)"},
    {4, 4, "auto(0,2,2,2)", 0, "(2,2,1,4)"},
    {4, 4, "auto(0,4,2,4)", 0, "(2,1,2,4)"},
    /* Others. */
    {2, 4, "split(1,1)", 0, "(2,1,4)"},
    {2, 4, "split(1,4)", 0, "(2,4,1)"},
    {2, 4, "merge(0,1) split(0,8)", 0, "(8,1)"},
    {2, 4, "slice(1,0,3) slice(1,3,3)", 0, "(2,1)"},
    {2, 4, "balance(0,1) balance(0,3)", 0, "(2,1,1,4)"},
    {2, 0, "split(1,5) balance(1,2)", 0, "(2,5,1,0)"},
    {2, 0, "split(1,5) swap(1,2) merge(2,0)", 0, "(0,10)"},
    {2, 4,
     "split(1,1) split(1,1) split(1,1) split(1,1) split(1,1) "
     "split(1,1) split(1,1) split(1,1) split(1,1) split(1,1) "
     "split(1,1) split(1,1) split(1,1) split(1,1)",
     0, "(2,1,1,1,1,1,1,1,1,1,1,1,1,1,1,4)"},
    {2, 4, "balance(0,15)", 0, "(2,1,1,1,1,1,1,1,1,1,1,1,1,1,1,4)"},
    /* Case 66 and the other R15 messages. */
    {2, 4, "split(1,3)", MS_R15,
     "split: size 4 of dimension 1 is not divisible by 3"},
    {2, 4, "split(1,0)", MS_R15, "split: factor must be positive, got 0"},
    {2, 4, "split(1,-2)", MS_R15, "split: factor must be positive, got -2"},
    {2, 4, "split(2,3)", MS_R15,
     "split: dimension 2 out of range for a 2-dimensional machine model"},
    {2, 4, "split(-1,0)", MS_R15,
     "split: dimension -1 out of range for a 2-dimensional machine model"},
    {2, 4, "merge(1,1)", MS_R15,
     "merge's arguments must be different "
     "dimensions"},
    {2, 4, "merge(0,5)", MS_R15,
     "merge: dimension 5 out of range for a 2-dimensional machine model"},
    {2, 4, "merge(3,3)", MS_R15,
     "merge: dimension 3 out of range for a 2-dimensional machine model"},
    {2, 4, "swap(0,0)", MS_R15,
     "swap's arguments must be different "
     "dimensions"},
    {2, 4, "swap(0,2)", MS_R15,
     "swap: dimension 2 out of range for a 2-dimensional machine model"},
    {2, 4, "merge(0,1) swap(0,1)", MS_R15,
     "swap: dimension 1 out of range for a 1-dimensional machine model"},
    {2, 4, "slice(1,2,4)", MS_R15,
     "slice out of bound: [2, 4] is not a non-empty range within [0, 4)"},
    {2, 4, "slice(1,2,1)", MS_R15,
     "slice out of bound: [2, 1] is not a non-empty range within [0, 4)"},
    {2, 4, "slice(1,-1,1)", MS_R15,
     "slice out of bound: [-1, 1] is not a non-empty range within [0, 4)"},
    {2, 0, "slice(1,0,0)", MS_R15,
     "slice out of bound: [0, 0] is not a non-empty range within [0, 0)"},
    {2, 4, "slice(2,0,0)", MS_R15,
     "slice: dimension 2 out of range for a 2-dimensional machine model"},
    {2, 4, "reverse(2)", MS_R15,
     "reverse: dimension 2 out of range for a 2-dimensional machine model"},
    {2, 4, "balance(1,0)", MS_R15,
     "balance_split: number of parts must be positive, got 0"},
    {2, 4, "balance(1,-3)", MS_R15,
     "balance_split: number of parts must be positive, got -3"},
    {2, 4, "balance(2,2)", MS_R15,
     "balance_split: dimension 2 out of range "
     "for a 2-dimensional machine model"},
    {2, 0, "balance(1,2)", MS_R15, "cannot factor dimension 1 of size 0"},
    {2, 0, "auto(1,2,2)", MS_R15, "cannot factor dimension 1 of size 0"},
    {2, 0, "greedy(1,2)", MS_R15, "cannot factor dimension 1 of size 0"},
    {2, 4, "greedy(3,2)", MS_R15,
     "greedy_split: dimension 3 out of range "
     "for a 2-dimensional machine model"},
    {2, 4, "balance(1,16)", MS_R15,
     "machine model would have more than 16 dimensions"},
    {2, 4, "balance(1,15) split(0,1)", MS_R15,
     "machine model would have more than 16 dimensions"},
    {2, 4,
     "split(1,1) split(1,1) split(1,1) split(1,1) split(1,1) "
     "split(1,1) split(1,1) split(1,1) split(1,1) split(1,1) "
     "split(1,1) split(1,1) split(1,1) split(1,1) split(1,1)",
     MS_R15, "machine model would have more than 16 dimensions"},
    /* Size overflow (only with a zero-sized dimension). */
    {2, 0, "split(1,4611686018427387904) merge(0,1)", MS_R06,
     "integer overflow"},
};

static void test_transform_table(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof tr_cases / sizeof *tr_cases; i++) {
    const tr_case *t = &tr_cases[i];
    chain c;
    char err[256] = "";
    chain_base(&c, t->nodes, t->procs);
    int rc = chain_apply(&c, t->ops, err, sizeof err);
    if (rc != t->code)
      fail_msg("case %zu (%s): got R%02d '%s', want R%02d", i, t->ops, rc, err,
               t->code);
    if (rc == MS_OK)
      assert_size(&c.m, t->want);
    else
      assert_string_equal(err, t->want);
  }
}

/* A failed transformation writes neither the model nor the step, the old
 * model survives a transformation, and messages truncate safely. */
static void test_transform_contract(void **state) {
  (void)state;
  chain c;
  build(&c, 2, 4, "split(1,2)");
  mapopt__mspace before = c.m;
  mapopt__ms_step sentinel;
  memset(&sentinel, 0xab, sizeof sentinel);
  c.steps[1] = sentinel;
  char err[8];
  assert_int_equal(mapopt__ms_transform(&c.m, MS_SPLIT, "split", 2, 0, 3, 0, 0,
                                        NULL, 0, &c.steps[1], &c.m, err,
                                        sizeof err),
                   MS_R15);
  assert_string_equal(err, "split: "); /* truncated to 7 characters */
  assert_memory_equal(&c.m, &before, sizeof before);
  assert_memory_equal(&c.steps[1], &sentinel, sizeof sentinel);
  assert_int_equal(mapopt__ms_transform(&c.m, MS_SPLIT, "split", 2, 0, 3, 0, 0,
                                        NULL, 0, &c.steps[1], &c.m, NULL, 0),
                   MS_R15);

  /* Branching: two models from the same parent keep their own sizes. */
  mapopt__mspace m1, m2;
  mapopt__ms_step s1[2], s2[2];
  s1[0] = s2[0] = c.steps[0];
  assert_int_equal(mapopt__ms_transform(&c.m, MS_MERGE, "merge", 0, 1, 0, 0, 0,
                                        NULL, 0, &s1[1], &m1, NULL, 0),
                   MS_OK);
  assert_int_equal(mapopt__ms_transform(&c.m, MS_REVERSE, "reverse", 2, 0, 0, 0,
                                        0, NULL, 0, &s2[1], &m2, NULL, 0),
                   MS_OK);
  assert_size(&c.m, "(2,2,2)");
  assert_size(&m1, "(4,2)");
  assert_size(&m2, "(2,2,2)");
  assert_ptr_equal(m1.steps, s1);
  assert_int_equal(m1.nsteps, 2);
  assert_int_equal(s1[1].in_ndims, 3);
  int64_t q[3] = {3, 1}, node, proc;
  assert_int_equal(mapopt__ms_inverse(&m1, q, &node, &proc, NULL, 0), MS_OK);
  assert_int_equal(node, 1);
  assert_int_equal(proc, 3);
  int64_t r[3] = {0, 0, 0};
  assert_int_equal(mapopt__ms_inverse(&m2, r, &node, &proc, NULL, 0), MS_OK);
  assert_int_equal(node, 0);
  assert_int_equal(proc, 2);
}

/* ---- factorization ------------------------------------------------------- */

typedef struct fac_case {
  char alg; /* 'b'alance, 'g'reedy, 'd'ecompose */
  int64_t n;
  const char *arg; /* k for balance, L otherwise */
  const char *want;
} fac_case;

static const fac_case fac_cases[] = {
    {'b', 6, "2", "(3,2)"},
    {'b', 12, "2", "(6,2)"},
    {'b', 30, "3", "(5,3,2)"},
    {'b', 19, "2", "(19,1)"},
    {'b', 1, "3", "(1,1,1)"},
    {'b', 12, "1", "(12)"},
    {'b', 8, "2", "(4,2)"},
    {'b', 64, "4", "(4,4,2,2)"},
    {'b', 2, "16", "(2,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1)"},
    /* Large primes: 2^61-1, (2^31-1)^2 and 2^31-1 times 2^32-5. */
    {'b', 2305843009213693951, "2", "(2305843009213693951,1)"},
    {'b', 4611686014132420609, "2", "(2147483647,2147483647)"},
    {'b', 9223372021822390277, "3", "(4294967291,2147483647,1)"},
    {'b', 9223372036854775807, "3", "(577545073,6769801,2359)"},
    {'b', 4611686018427387904, "2", "(2147483648,2147483648)"},
    {'g', 6, "(12,4)", "(6,1)"},
    {'g', 12, "(3,5)", "(2,6)"},
    {'g', 1, "(3,5)", "(1,1)"},
    {'g', 8, "(1,1,1)", "(2,2,2)"},
    {'g', 9223372036854775783, "(1,2)", "(1,9223372036854775783)"},
    {'d', 4, "(4,2,4)", "(2,1,2)"},
    {'d', 6, "(12,4)", "(6,1)"},
    {'d', 4, "(2,2,2)", "(2,2,1)"},
    {'d', 12, "(3,5)", "(3,4)"},
    {'d', 1, "(3,5,7)", "(1,1,1)"},
    {'d', 2, "(4,4)", "(2,1)"},
    {'d', 4, "(2,4)", "(2,2)"},
    {'d', 2, "(2,2,2)", "(2,1,1)"},
    {'d', 4, "(1,2,2)", "(1,2,2)"},
    {'d', 7, "(5)", "(7)"},
    /* Greedy (2,6) is not among the ties here. */
    {'d', 12, "(3,5)", "(3,4)"},
    {'d', 4, "(4,4,4)", "(2,2,1)"},
    {'d', 36, "(6,6)", "(6,6)"},
    {'d', 24, "(100,1)", "(24,1)"},
    {'d', 9223372036854775783, "(1,2)", "(1,9223372036854775783)"},
};

static void test_factor_table(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof fac_cases / sizeof *fac_cases; i++) {
    const fac_case *t = &fac_cases[i];
    int64_t arg[MAXD], want[MAXD], out[MAXD];
    int na = tuple(t->arg, arg);
    int nw = tuple(t->want, want);
    int k = t->alg == 'b' ? (int)arg[0] : na;
    assert_int_equal(nw, k);
    memset(out, 0, sizeof out);
    if (t->alg == 'b') {
      mapopt__factor_balance(t->n, k, out);
    } else if (t->alg == 'g') {
      mapopt__factor_greedy(t->n, arg, k, out);
    } else {
      int64_t steps = 5;
      assert_int_equal(
          mapopt__factor_decompose(t->n, arg, k, out, &steps, NOLIM), MS_OK);
      assert_true(steps > 5);
    }
    for (int j = 0; j < k; j++)
      if (out[j] != want[j])
        fail_msg("case %zu: %c(%lld, %s) slot %d is %lld, want %s", i, t->alg,
                 (long long)t->n, t->arg, j, (long long)out[j], t->want);
  }
}

/* The step budget: one step per candidate, checked before enumerating. */
static void test_decompose_budget(void **state) {
  (void)state;
  int64_t out[MAXD], steps;
  const int64_t l3[] = {2, 2, 2};
  /* 4 = 2^2 over 3 slots: C(4, 2) = 6 candidates. */
  steps = 0;
  assert_int_equal(mapopt__factor_decompose(4, l3, 3, out, &steps, 6), MS_OK);
  assert_int_equal(steps, 6);
  steps = 10;
  assert_int_equal(mapopt__factor_decompose(4, l3, 3, out, &steps, 16), MS_OK);
  assert_int_equal(steps, 16);
  steps = 0;
  out[0] = -1;
  assert_int_equal(mapopt__factor_decompose(4, l3, 3, out, &steps, 5), MS_R23);
  assert_int_equal(steps, 0);
  assert_int_equal(out[0], -1);
  /* 12 = 2^2 * 3 over 2 slots: 3 * 2 candidates. */
  const int64_t l2[] = {3, 5};
  steps = 0;
  assert_int_equal(mapopt__factor_decompose(12, l2, 2, out, &steps, 100),
                   MS_OK);
  assert_int_equal(steps, 6);
  /* N = 1 is one candidate. */
  steps = 0;
  assert_int_equal(mapopt__factor_decompose(1, l2, 2, out, &steps, 1), MS_OK);
  assert_int_equal(steps, 1);
  assert_int_equal(mapopt__factor_decompose(1, l2, 2, out, &steps, 1), MS_R23);
  /* Explosive cases fail at once instead of enumerating. */
  int64_t l16[MAXD];
  for (int j = 0; j < MAXD; j++)
    l16[j] = j + 1;
  steps = 0;
  assert_int_equal(
      mapopt__factor_decompose(INT64_C(1) << 62, l16, 16, out, &steps, 1000000),
      MS_R23);
  assert_int_equal(steps, 0);
  /* Exactly C(77, 15) candidates: one short of the budget fails. */
  assert_int_equal(mapopt__factor_decompose(INT64_C(1) << 62, l16, 16, out,
                                            &steps, INT64_C(3527930788646879)),
                   MS_R23);
  assert_int_equal(steps, 0);
  /* 2*3*5*...*47 (15 distinct primes) over 16 slots: 16^15 candidates. */
  int64_t primorial = INT64_C(614889782588491410);
  assert_int_equal(mapopt__factor_decompose(primorial, l16, 16, out, &steps,
                                            (INT64_C(1) << 60) - 1),
                   MS_R23);
  /* 2^30 * 3^18 over 16 slots: the count overflows int64 and saturates,
   * which fails even without a limit. */
  assert_int_equal(mapopt__factor_decompose(INT64_C(415989582513831936), l16,
                                            16, out, &steps, NOLIM),
                   MS_R23);
  assert_int_equal(steps, 0);
  /* Already over budget. */
  steps = 7;
  assert_int_equal(mapopt__factor_decompose(4, l3, 3, out, &steps, 6), MS_R23);
  /* A big but affordable one: 2^20 over 4 slots, C(23, 3) = 1771. */
  steps = 0;
  const int64_t l4[] = {64, 64, 16, 16};
  assert_int_equal(
      mapopt__factor_decompose(INT64_C(1) << 20, l4, 4, out, &steps, NOLIM),
      MS_OK);
  assert_int_equal(steps, 1771);
  assert_int_equal(out[0] * out[1] * out[2] * out[3], INT64_C(1) << 20);
}

/*
 * Property check against a brute force over all ordered factorizations:
 * decompose's result multiplies to N, has the minimal cost (within the
 * tolerance), and is greedy's result whenever greedy is tied.
 */
static double brute_min;
static void brute(int64_t n, const int64_t *l, int k, int j, double acc) {
  if (j == k - 1) {
    double c = acc + (double)n / (double)l[j];
    if (c < brute_min)
      brute_min = c;
    return;
  }
  for (int64_t d = 1; d <= n; d++)
    if (n % d == 0)
      brute(n / d, l, k, j + 1, acc + (double)d / (double)l[j]);
}

static void test_decompose_property(void **state) {
  (void)state;
  static const int64_t ls[][3] = {{1, 1, 1}, {3, 5, 7}, {8, 2, 4},  {10, 1, 3},
                                  {2, 9, 9}, {6, 6, 1}, {16, 4, 12}};
  for (int k = 1; k <= 3; k++)
    for (size_t li = 0; li < sizeof ls / sizeof *ls; li++)
      for (int64_t n = 1; n <= 130; n++) {
        const int64_t *l = ls[li];
        int64_t out[MAXD], g[MAXD], steps = 0;
        assert_int_equal(mapopt__factor_decompose(n, l, k, out, &steps, NOLIM),
                         MS_OK);
        mapopt__factor_greedy(n, l, k, g);
        int64_t prod = 1;
        double c = 0, gc = 0;
        for (int j = 0; j < k; j++) {
          prod *= out[j];
          c += (double)out[j] / (double)l[j];
          gc += (double)g[j] / (double)l[j];
        }
        assert_int_equal(prod, n);
        brute_min = 1e300;
        brute(n, l, k, 0, 0.0);
        assert_true(c <= brute_min + 1e-9);
        if (gc <= brute_min + 1e-9)
          assert_memory_equal(out, g, (size_t)k * sizeof *g);
      }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_inverse_table),
      cmocka_unit_test(test_case40),
      cmocka_unit_test(test_tile2d),
      cmocka_unit_test(test_forward_table),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_transform_table),
      cmocka_unit_test(test_transform_contract),
      cmocka_unit_test(test_factor_table),
      cmocka_unit_test(test_decompose_budget),
      cmocka_unit_test(test_decompose_property),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
