/*
 * Machine models in the DSL's interpreter (docs/dsl.md, "Machine models and
 * transformations"): indexing a model (a point, or a point set over wildcards)
 * and its transformations (split, merge, swap, slice, reverse and the factoring
 * splits), with the errors of mspace.c raised at the construct that failed and,
 * for an index out of range, a hint that shows how the model was made.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "dsl/eval.h"

/* "(8,)", "(2, 4)": a tuple as the language prints it. */
static void sb_tuple(mapopt__strbuf *sb, const int64_t *v, int n) {
  mapopt__sb_putc(sb, '(');
  for (int i = 0; i < n; i++)
    mapopt__sb_printf(sb, i ? ", %" PRId64 : "%" PRId64, v[i]);
  mapopt__sb_puts(sb, n == 1 ? ",)" : ")");
}

/* A transformation as it was written, e.g. "merge(0, 1)". */
static void sb_step(mapopt__strbuf *sb, const mapopt__ms_step *st) {
  switch (st->op) {
  case MS_SPLIT:
    mapopt__sb_printf(sb, "split(%d, %" PRId64 ")", st->a, st->f);
    break;
  case MS_MERGE:
    mapopt__sb_printf(sb, "merge(%d, %d)", st->a, st->b);
    break;
  case MS_SWAP:
    mapopt__sb_printf(sb, "swap(%d, %d)", st->a, st->b);
    break;
  case MS_SLICE:
    mapopt__sb_printf(sb, "slice(%d, %" PRId64 ", %" PRId64 ")", st->a, st->lo,
                      st->hi);
    break;
  case MS_REVERSE:
    mapopt__sb_printf(sb, "reverse(%d)", st->a);
    break;
  case MS_FACTORS:
    mapopt__sb_printf(sb, "a split of dimension %d into ", st->a);
    sb_tuple(sb, st->factors, st->nf);
    break;
  }
}

/* R10, R11 and R25's hint: the index written, the size of the model it
 * indexes and how that model was made ("Machine(GPU): (2, 4); merge(0, 1):
 * (8,)") -- when the index is outside that size, which is the mistake to
 * fix. */
static void index_note(mapopt__eval *ev, const mapopt__mspace *m,
                       const int64_t *coords) {
  bool outside = false;
  for (int d = 0; d < m->ndims; d++)
    outside |= coords[d] >= m->size[d];
  if (!outside)
    return;
  mapopt__strbuf idx, size, how;
  mapopt__sb_init(&idx, ev->prog->ctx);
  mapopt__sb_init(&size, ev->prog->ctx);
  mapopt__sb_init(&how, ev->prog->ctx);
  mapopt__sb_putc(&idx, '[');
  for (int d = 0; d < m->ndims; d++)
    mapopt__sb_printf(&idx, d ? ", %" PRId64 : "%" PRId64, coords[d]);
  mapopt__sb_putc(&idx, ']');
  sb_tuple(&size, m->size, m->ndims);
  int64_t base[2] = {m->nodes, m->procs};
  mapopt__sb_printf(&how, "Machine(%s): ",
                    mapopt_shape_proc_name((mapopt_proc_kind)m->proc_kind));
  sb_tuple(&how, base, 2);
  for (int k = 0; k < m->nsteps; k++) {
    mapopt__sb_puts(&how, "; ");
    sb_step(&how, &m->steps[k]);
    mapopt__sb_puts(&how, ": ");
    if (k + 1 < m->nsteps)
      sb_tuple(&how, m->steps[k + 1].in_size, m->steps[k + 1].in_ndims);
    else
      sb_tuple(&how, m->size, m->ndims);
  }
  if (idx.failed || size.failed || how.failed) {
    mapopt__ev_error_nomem(ev);
  } else {
    mapopt__ev_note(ev, MAPOPT__DIAG(N08_INDEX), idx.data, size.data, how.data);
  }
  mapopt__sb_destroy(&idx);
  mapopt__sb_destroy(&size);
  mapopt__sb_destroy(&how);
}

/* An error of the inverse mapping at loc, with its hint. */
static bool inverse_fail(mapopt__eval *ev, mapopt__ms_err r, mapopt__loc loc,
                         const char *msg, const mapopt__mspace *m,
                         const int64_t *coords) {
  bool first = !ev->err->failed;
  mapopt__ev_ms_fail(ev, r, loc, msg);
  if (first && (r == MS_R10 || r == MS_R11 || r == MS_R25))
    index_note(ev, m, coords);
  return false;
}

bool mapopt__ev_index_machine(mapopt__eval *ev, const mapopt__mspace *m,
                              const mapopt__value_list *subs, mapopt__loc loc,
                              mapopt__value *out) {
  if (subs->n != m->ndims)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R13_COORDINATES), loc, subs->n,
                           m->ndims);
  int64_t coords[MAPOPT__MS_MAX_DIMS];
  int wild[MAPOPT__MS_MAX_DIMS], nwild = 0;
  int64_t total = 1;
  for (int d = 0; d < subs->n; d++) {
    const mapopt__value *c = &subs->items[d];
    if (c->kind == V_UNSET) {
      wild[nwild++] = d;
      coords[d] = 0;
      if (m->size[d] == 0 || total == 0)
        total = 0;
      else if (mapopt__mul_ovf(total, m->size[d], &total))
        total = INT64_MAX;
      continue;
    }
    if (c->kind != V_INT)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_COORDINATE), loc,
                             mapopt__ev_type_name(c));
    if (c->u.i < 0)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R12_NEGATIVE), loc, c->u.i, d);
    coords[d] = c->u.i;
  }
  char msg[MAPOPT__MS_ERR_MAX];
  mapopt_proc_point pt = {(mapopt_proc_kind)m->proc_kind, 0, 0};
  if (nwild == 0) {
    mapopt__ms_err r =
        mapopt__ms_inverse(m, coords, &pt.node, &pt.proc, msg, sizeof msg);
    if (r != MS_OK)
      return inverse_fail(ev, r, loc, msg, m, coords);
    out->kind = V_POINT;
    out->u.pt = pt;
    return true;
  }
  if (!mapopt__ev_step(ev, total, loc) || !mapopt__ev_charge(ev, total, loc))
    return false;
  mapopt_proc_point *pts =
      mapopt__arena_alloc(ev->arena, (size_t)(total ? total : 1) * sizeof *pts);
  if (!pts)
    return mapopt__ev_nomem(ev, loc);
  for (int64_t k = 0; k < total; k++) {
    /* Row-major over the wildcard positions: the last one varies fastest. */
    int64_t rem = k;
    for (int w = nwild - 1; w >= 0; w--) {
      int d = wild[w];
      coords[d] = rem % m->size[d];
      rem /= m->size[d];
    }
    mapopt__ms_err r = mapopt__ms_inverse(m, coords, &pts[k].node, &pts[k].proc,
                                          msg, sizeof msg);
    if (r != MS_OK)
      return inverse_fail(ev, r, loc, msg, m, coords);
    pts[k].kind = (mapopt_proc_kind)m->proc_kind;
  }
  out->kind = V_SET;
  out->u.set.n = total;
  out->u.set.pts = pts;
  return true;
}

/* Builds a transformed model in the arena (steps array copied + 1). */
static bool ms_apply(mapopt__eval *ev, const mapopt__mspace *in,
                     mapopt__ms_op op, const char *name, int a, int b,
                     int64_t f, int64_t lo, int64_t hi, const int64_t *factors,
                     int nf, mapopt__loc loc, mapopt__value *out) {
  mapopt__mspace *m = mapopt__arena_alloc(ev->arena, sizeof *m);
  mapopt__ms_step *steps =
      mapopt__arena_alloc(ev->arena, (size_t)(in->nsteps + 1) * sizeof *steps);
  if (!m || !steps)
    return mapopt__ev_nomem(ev, loc);
  if (in->nsteps)
    memcpy(steps, in->steps, (size_t)in->nsteps * sizeof *steps);
  char msg[MAPOPT__MS_ERR_MAX];
  mapopt__ms_err r =
      mapopt__ms_transform(in, op, name, a, b, f, lo, hi, factors, nf,
                           &steps[in->nsteps], m, msg, sizeof msg);
  if (r != MS_OK)
    return mapopt__ev_ms_fail(ev, r, loc, msg);
  m->steps = steps;
  out->kind = V_MACHINE;
  out->u.ms = m;
  return true;
}

/* decompose(N, L), memoized in the program by (N, L). */
static bool decompose_memo(mapopt__eval *ev, int64_t n, const int64_t *l, int k,
                           int64_t *res, mapopt__loc loc) {
  mapopt_program *p = ev->prog;
  int64_t key[MAPOPT__MS_MAX_DIMS + 1];
  key[0] = n;
  memcpy(key + 1, l, (size_t)k * sizeof *l);
  size_t klen = (size_t)(k + 1) * sizeof *key;
  /* Always memoized: no_memo turns off only the index-map result cache. */
  pthread_mutex_lock(&p->lock);
  mapopt__map_entry *hit =
      mapopt__map_find(&p->decompose_memo, (const char *)key, klen);
  if (hit)
    memcpy(res, hit->value, (size_t)k * sizeof *res);
  pthread_mutex_unlock(&p->lock);
  if (hit)
    return mapopt__ev_step(ev, 1, loc);
  int64_t steps = ev->steps;
  mapopt__ms_err r =
      mapopt__factor_decompose(n, l, k, res, &steps, MAPOPT__DSL_STEP_LIMIT);
  if (r != MS_OK)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R23_STEPS), loc,
                           MAPOPT__DSL_STEP_LIMIT);
  ev->steps = steps;
  pthread_mutex_lock(&p->lock);
  char *kcopy = mapopt__arena_alloc(&p->cache_arena, klen);
  int64_t *vcopy =
      mapopt__arena_alloc(&p->cache_arena, (size_t)k * sizeof *vcopy);
  bool ins = false;
  mapopt__map_entry *e =
      kcopy && vcopy
          ? (memcpy(kcopy, key, klen),
             mapopt__map_upsert(&p->decompose_memo, p->ctx, kcopy, klen, &ins))
          : NULL;
  if (e && ins) {
    memcpy(vcopy, res, (size_t)k * sizeof *res);
    e->value = vcopy;
  }
  pthread_mutex_unlock(&p->lock);
  return true; /* a failed cache insert only costs a recomputation */
}

static bool want_ints(mapopt__eval *ev, const char *method,
                      const mapopt__value_list *args, int count,
                      mapopt__loc loc) {
  if (args->n != count)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_ARGUMENT_COUNT), loc, method,
                           count, args->n);
  for (int i = 0; i < count; i++)
    if (args->items[i].kind != V_INT)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_ARGUMENT), loc, i + 1, method,
                             "int", mapopt__ev_type_name(&args->items[i]));
  return true;
}

static int to_dim(int64_t v) {
  return v < INT32_MIN ? INT32_MIN : v > INT32_MAX ? INT32_MAX : (int)v;
}

/* Validates dimension d for the factoring splits before factors are
 * computed (the range check comes first, as for every transformation). */
static bool factor_dim(mapopt__eval *ev, const mapopt__mspace *m,
                       const char *method, int64_t d, mapopt__loc loc) {
  if (d < 0 || d >= m->ndims)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R15_DIMENSION), loc, method, d,
                           m->ndims);
  return true;
}

/* balance_split(d, k), auto_split(d, L), greedy_split(d, L): checks in the
 * order dimension, parts, size, then the factors replace dimension d. A
 * domain may have extents of 0, as in the DSL mapper of Legion: greedy
 * works with them, and a dimension of one processor splits into ones
 * whatever the domain; only auto_split of more than one processor for such
 * a domain is an error (its cost divides by the extents; the DSL mapper's
 * result is undefined there). */
static bool factor_split(mapopt__eval *ev, const mapopt__mspace *m,
                         mapopt__member mem, const mapopt__value_list *args,
                         mapopt__loc loc, mapopt__value *out) {
  const char *name = mapopt__member_text(mem);
  const mapopt__value *a = args->items;
  if (args->n != 2)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_ARGUMENT_COUNT), loc, name, 2,
                           args->n);
  if (a[0].kind != V_INT)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_ARGUMENT), loc, 1, name, "int",
                           mapopt__ev_type_name(&a[0]));
  if (!factor_dim(ev, m, name, a[0].u.i, loc))
    return false;
  int64_t l[MAPOPT__MS_MAX_DIMS + 1];
  int k = 0;
  if (mem == MEM_BALANCE_SPLIT) {
    if (a[1].kind != V_INT)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_ARGUMENT), loc, 2, name,
                             "int", mapopt__ev_type_name(&a[1]));
    if (a[1].u.i < 1)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R15_PARTS), loc, a[1].u.i);
    k = a[1].u.i > MAPOPT__MS_MAX_DIMS ? MAPOPT__MS_MAX_DIMS + 1
                                       : (int)a[1].u.i;
  } else {
    bool ok =
        mapopt__ev_as_ints(&a[1], l, MAPOPT__MS_MAX_DIMS + 1, &k) && k > 0;
    for (int i = 0; ok && i < k; i++)
      ok = l[i] >= 0;
    if (!ok)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R15_DOMAIN), loc, name);
  }
  int d = (int)a[0].u.i;
  if (m->ndims - 1 + k > MAPOPT__MS_MAX_DIMS)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R15_TOO_MANY), loc);
  if (m->size[d] < 1)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R15_ZERO_SIZE), loc, d);
  for (int i = 0; mem == MEM_AUTO_SPLIT && m->size[d] > 1 && i < k; i++)
    if (l[i] == 0)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R15_ZERO_EXTENT), loc,
                             m->size[d]);
  int64_t f[MAPOPT__MS_MAX_DIMS];
  if (mem == MEM_BALANCE_SPLIT)
    mapopt__factor_balance(m->size[d], k, f);
  else if (mem == MEM_GREEDY_SPLIT)
    mapopt__factor_greedy(m->size[d], l, k, f);
  else if (!decompose_memo(ev, m->size[d], l, k, f, loc))
    return false;
  return ms_apply(ev, m, MS_FACTORS, name, d, 0, 0, 0, 0, f, k, loc, out);
}

bool mapopt__ev_machine_method(mapopt__eval *ev, const mapopt__mspace *m,
                               mapopt__member mem,
                               const mapopt__value_list *args, mapopt__loc loc,
                               mapopt__value *out) {
  const char *name = mapopt__member_text(mem);
  const mapopt__value *a = args->items;
  switch (mem) {
  case MEM_SPLIT:
    if (!want_ints(ev, name, args, 2, loc))
      return false;
    return ms_apply(ev, m, MS_SPLIT, name, to_dim(a[0].u.i), 0, a[1].u.i, 0, 0,
                    NULL, 0, loc, out);
  case MEM_MERGE:
  case MEM_SWAP:
    if (!want_ints(ev, name, args, 2, loc))
      return false;
    return ms_apply(ev, m, mem == MEM_MERGE ? MS_MERGE : MS_SWAP, name,
                    to_dim(a[0].u.i), to_dim(a[1].u.i), 0, 0, 0, NULL, 0, loc,
                    out);
  case MEM_SLICE:
    if (!want_ints(ev, name, args, 3, loc))
      return false;
    return ms_apply(ev, m, MS_SLICE, name, to_dim(a[0].u.i), 0, 0, a[1].u.i,
                    a[2].u.i, NULL, 0, loc, out);
  case MEM_REVERSE:
    if (!want_ints(ev, name, args, 1, loc))
      return false;
    return ms_apply(ev, m, MS_REVERSE, name, to_dim(a[0].u.i), 0, 0, 0, 0, NULL,
                    0, loc, out);
  case MEM_BALANCE_SPLIT:
  case MEM_AUTO_SPLIT:
  case MEM_GREEDY_SPLIT:
    return factor_split(ev, m, mem, args, loc, out);
  default:
    break;
  }
  return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_MEMBER), loc, name, "machine");
}
