/*
 * Dependence analysis (docs/sim.md, "How it models a run"): the logical DAG of
 * a run and the version of every (atom, field) each requirement needs. It
 * depends only on the application, never on the mapping, so one DAG serves
 * every evaluation of the same run.
 *
 * Ops are analysed in canonical order. Per (atom, field) the analysis keeps
 * the current version, the ops that produced it, the readers since, and the
 * open reduction set. Choices where the spec is silent:
 *  - requirements of inner tasks (mapped virtually) get the dependences of
 *    their privilege but change no state, so the inner task's children --
 *    analysed next, in the parent's context -- see the real producers;
 *  - a reduction with another operator than the open set closes that set
 *    first (the folds must happen in order), then opens its own;
 *  - coherence `simultaneous` is analysed as exclusive (conservative);
 *  - a fence depends on every op since the previous fence and on that
 *    fence, and every later op depends on the newest fence: the same
 *    orderings as "every earlier op", without quadratic edge lists.
 */
#include <string.h>

#include "sim/sim.h"

typedef struct reader {
  int32_t op;
  int32_t next; /* index in the reader pool, -1 ends */
} reader;

typedef struct af_state {
  int32_t version;  /* current version id, -1: never written */
  int32_t readers;  /* head in the reader pool, -1: none */
  int32_t red_head; /* open reduction set: reducers in the pool */
  int32_t red_base; /* version the open set reduces into */
  int red_op;       /* its operator; -1: no open set */
} af_state;

typedef struct growable {
  int32_t *data;
  int64_t len, cap;
  mapopt__arena *in; /* the arena it grows in */
} growable;

typedef struct analysis {
  mapopt__arena *arena;  /* the DAG's */
  mapopt__arena scratch; /* the analysis state, freed at the end */
  const mapopt_app_run *run;
  int64_t *af_off; /* per atom: first (atom, field) index (the DAG's) */
  af_state *af;
  reader *pool;
  int64_t npool, pool_cap;
  int32_t pool_free; /* reader entries of dropped lists, -1: none */
  mapopt__version *versions;
  int64_t nversions, versions_cap;
  mapopt__red_set *red_sets;
  int64_t nred_sets, red_sets_cap;
  growable preds, raw, need, reducers;
  int32_t *mark;    /* per op: the op whose pred list last included it */
  int32_t *rawmark; /* per op: the requirement whose raw list includes it */
  int32_t *fut_op;  /* per future: the op analysed so far that produced it */
  int64_t last_fence;
  int64_t fence_from; /* first op after the newest fence */
  bool failed;
  bool too_big; /* a list outgrew MAPOPT__SIM_INDEX_MAX */
} analysis;

/* Grows data (cap elements of elem bytes) to hold need elements, doubling,
 * in arena: the DAG's lists in the plan's, the analysis state in its own
 * (freed when the DAG is built). */
static void *grow(analysis *an, mapopt__arena *arena, void *data, int64_t *cap,
                  int64_t need, size_t elem) {
  if (need <= *cap)
    return data;
  if (need > MAPOPT__SIM_INDEX_MAX) {
    an->failed = an->too_big = true;
    return NULL;
  }
  int64_t ncap = *cap ? *cap : 64;
  while (ncap < need)
    ncap *= 2;
  void *d =
      mapopt__arena_grow(arena, data, (size_t)*cap * elem, (size_t)ncap * elem);
  if (!d) {
    an->failed = true;
    return NULL;
  }
  *cap = ncap;
  return d;
}

static void push(analysis *an, growable *g, int64_t v) {
  if (g->len < g->cap) {
    g->data[g->len++] = v;
    return;
  }
  int32_t *d = grow(an, g->in, g->data, &g->cap, g->len + 1, sizeof *d);
  if (!d)
    return;
  g->data = d;
  g->data[g->len++] = v;
}

static int64_t pool_add(analysis *an, int64_t op, int64_t next) {
  if (an->pool_free >= 0) {
    int64_t e = an->pool_free;
    an->pool_free = an->pool[e].next;
    an->pool[e] = (reader){(int32_t)op, (int32_t)next};
    return e;
  }
  reader *p =
      grow(an, &an->scratch, an->pool, &an->pool_cap, an->npool + 1, sizeof *p);
  if (!p)
    return -1;
  an->pool = p;
  p[an->npool] = (reader){(int32_t)op, (int32_t)next};
  return an->npool++;
}

/* Gives the entries of a list that is dropped back to the pool: the live
 * lists (readers since the last write, the open reduction set) are short,
 * so the pool stays the size of what is live, not of every read of the
 * run. */
static void pool_release(analysis *an, int64_t head) {
  if (head < 0)
    return;
  int64_t tail = head;
  while (an->pool[tail].next >= 0)
    tail = an->pool[tail].next;
  an->pool[tail].next = an->pool_free;
  an->pool_free = (int32_t)head;
}

/* A new version of (atom, field) af; ref: its producer, or for
 * VER_REDUCTION its set. */
static int64_t new_version(analysis *an, mapopt__ver_kind kind, int64_t af,
                           int64_t ref) {
  mapopt__version *v = grow(an, an->arena, an->versions, &an->versions_cap,
                            an->nversions + 1, sizeof *v);
  if (!v)
    return -1;
  an->versions = v;
  mapopt__version *nv = &v[an->nversions];
  *nv = (mapopt__version){.af = (uint32_t)af, .kind = (uint32_t)kind};
  if (kind == VER_REDUCTION)
    nv->red_set = (int32_t)ref;
  else
    nv->producer = (int32_t)ref;
  return an->nversions++;
}

static bool is_ancestor(const mapopt_app_run *run, int64_t anc, int64_t op) {
  for (int64_t p = run->ops[op].parent; p >= 0; p = run->ops[p].parent)
    if (p == anc)
      return true;
  return false;
}

/* Adds pred to op's list unless it is already there or an ancestor. */
static void add_pred(analysis *an, int64_t op, int64_t pred) {
  if (pred < 0 || pred == op || an->mark[pred] == op ||
      is_ancestor(an->run, pred, op))
    return;
  an->mark[pred] = (int32_t)op;
  push(an, &an->preds, pred);
}

/* Adds the ops that produced version v to the RAW list of requirement q. */
static void add_raw(analysis *an, int64_t q, int64_t v) {
  while (v >= 0) {
    const mapopt__version *ver = &an->versions[v];
    if (ver->kind == VER_REDUCTION) {
      const mapopt__red_set *rs = &an->red_sets[ver->red_set];
      for (int64_t i = 0; i < rs->nred; i++) {
        int64_t op = an->reducers.data[rs->red_off + i];
        if (an->rawmark[op] != q) {
          an->rawmark[op] = (int32_t)q;
          push(an, &an->raw, op);
        }
      }
      v = rs->base;
      continue;
    }
    if (ver->producer >= 0 && an->rawmark[ver->producer] != q) {
      an->rawmark[ver->producer] = (int32_t)q;
      push(an, &an->raw, ver->producer);
    }
    break;
  }
}

/* Adds the producers of the current version (the RAW predecessors): down
 * a chain of reduction versions, each one's reducers, then the producer of
 * the write that the chain starts from. A loop, not a recursion: the chain
 * grows by one version per reduce-then-read round. */
static void add_producers(analysis *an, int64_t op, int64_t v) {
  while (v >= 0) {
    const mapopt__version *ver = &an->versions[v];
    if (ver->kind != VER_REDUCTION) {
      add_pred(an, op, ver->producer);
      return;
    }
    const mapopt__red_set *rs = &an->red_sets[ver->red_set];
    for (int64_t i = 0; i < rs->nred; i++)
      add_pred(an, op, an->reducers.data[rs->red_off + i]);
    v = rs->base;
  }
}

/* Closes the open reduction set of s into a new version. */
static void close_reductions(analysis *an, af_state *s) {
  if (s->red_op < 0)
    return;
  mapopt__red_set *rs = grow(an, an->arena, an->red_sets, &an->red_sets_cap,
                             an->nred_sets + 1, sizeof *rs);
  if (!rs)
    return;
  an->red_sets = rs;
  int64_t v = new_version(an, VER_REDUCTION, s - an->af, an->nred_sets);
  if (v < 0)
    return;
  rs = &an->red_sets[an->nred_sets++];
  *rs = (mapopt__red_set){s->red_base, (int32_t)an->reducers.len, 0};
  for (int64_t r = s->red_head; r >= 0; r = an->pool[r].next) {
    push(an, &an->reducers, an->pool[r].op);
    rs->nred++;
  }
  pool_release(an, s->red_head);
  s->version = (int32_t)v;
  s->red_op = -1;
  s->red_head = -1;
}

static void add_readers_and_reducers(analysis *an, int64_t op,
                                     const af_state *s) {
  for (int64_t r = s->readers; r >= 0; r = an->pool[r].next)
    add_pred(an, op, an->pool[r].op);
  for (int64_t r = s->red_head; r >= 0; r = an->pool[r].next)
    add_pred(an, op, an->pool[r].op);
}

/* One (atom, field) of one requirement. Returns the needed version. */
static int64_t touch(analysis *an, int64_t op, const mapopt_app_req *req,
                     bool is_fill, bool virt, int64_t atom, int field) {
  af_state *s = &an->af[an->af_off[atom] + field];
  mapopt_priv priv = is_fill ? MAPOPT_PRIV_WD : req->priv;
  int64_t need = -1;
  switch (priv) {
  case MAPOPT_PRIV_RO:
    add_producers(an, op, s->version);
    for (int64_t r = s->red_head; r >= 0; r = an->pool[r].next)
      add_pred(an, op, an->pool[r].op);
    if (virt)
      break;
    close_reductions(an, s);
    need = s->version;
    s->readers = (int32_t)pool_add(an, op, s->readers);
    break;
  case MAPOPT_PRIV_RW:
  case MAPOPT_PRIV_WD:
    add_producers(an, op, s->version);
    add_readers_and_reducers(an, op, s);
    if (virt)
      break;
    if (priv == MAPOPT_PRIV_RW) {
      close_reductions(an, s);
      need = s->version;
    } else {
      s->red_op = -1; /* pending reductions are discarded */
      pool_release(an, s->red_head);
      s->red_head = -1;
    }
    s->version = (int32_t)new_version(an, is_fill ? VER_FILL : VER_WRITE,
                                      s - an->af, op);
    pool_release(an, s->readers);
    s->readers = -1;
    break;
  case MAPOPT_PRIV_REDUCE:
    add_producers(an, op, s->version);
    for (int64_t r = s->readers; r >= 0; r = an->pool[r].next)
      add_pred(an, op, an->pool[r].op);
    if (s->red_op >= 0 && s->red_op != (int)req->redop) {
      for (int64_t r = s->red_head; r >= 0; r = an->pool[r].next)
        add_pred(an, op, an->pool[r].op);
      if (!virt)
        close_reductions(an, s);
    }
    if (virt)
      break;
    if (s->red_op < 0) {
      s->red_op = (int)req->redop;
      s->red_base = s->version;
      s->red_head = -1;
    }
    /* An op reducing the same (atom, field) through two requirements is
     * one reducer of the set (its requirements are analysed one after the
     * other, so it would be the head). */
    if (s->red_head < 0 || an->pool[s->red_head].op != op)
      s->red_head = (int32_t)pool_add(an, op, s->red_head);
    break;
  }
  return need < 0 || an->versions[need].kind == VER_NONE ? -1 : need;
}

/* The latest op before op i that produced future f, or -1. Futures of an
 * instantiated run are numbered 0..nfutures-1 and looked up in fut_op, so
 * that the analysis stays linear in the number of ops; a number outside
 * that range (a run built by hand) is searched for. */
static int64_t future_op(const analysis *an, int64_t i, int64_t f) {
  if (f >= 0 && f < an->run->nfutures)
    return an->fut_op[f];
  for (int64_t j = i - 1; j >= 0; j--)
    if (an->run->ops[j].future == f)
      return j;
  return -1;
}

static void analyse_op(analysis *an, mapopt__sim_dag *dag, int64_t i) {
  const mapopt_app_run *run = an->run;
  const mapopt_app_op *op = &run->ops[i];
  dag->pred_off[i] = (int32_t)an->preds.len;
  dag->ver_off[i] = (int32_t)an->nversions;
  add_pred(an, i, an->last_fence);
  for (size_t w = 0; w < op->nwaits; w++)
    add_pred(an, i, future_op(an, i, op->waits[w]));
  if (op->kind == MAPOPT_OP_FENCE) {
    for (int64_t j = an->fence_from; j < i; j++)
      add_pred(an, i, j);
    an->last_fence = i;
    an->fence_from = i + 1;
  }
  if (op->kind == MAPOPT_OP_FUTURE_REDUCE)
    for (int64_t j = i - 1; j >= 0 && run->ops[j].launch == op->launch; j--)
      add_pred(an, i, j);
  bool virt =
      op->kind == MAPOPT_OP_TASK && op->task >= 0 && run->tasks[op->task].inner;
  bool is_fill = op->kind == MAPOPT_OP_FILL;
  for (size_t r = 0; r < op->nreqs; r++) {
    int64_t q = dag->req_off[i] + (int64_t)r;
    const mapopt_app_req *req = &op->reqs[r];
    dag->need_off[q] = (int32_t)an->need.len;
    dag->raw_off[q] = (int32_t)an->raw.len;
    const mapopt_app_piece *pc = req->piece;
    dag->req_piece[q] = (int32_t)pc->id;
    dag->req_priv[q] = (uint8_t)req->priv;
    for (size_t a = 0; a < pc->natoms; a++)
      for (uint64_t fm = req->fields; fm; fm &= fm - 1) {
        int f = __builtin_ctzll(fm); /* the fields, in order */
        int64_t v = touch(an, i, req, is_fill, virt, pc->atoms[a].atom, f);
        push(an, &an->need, v);
        if (v >= 0) {
          add_raw(an, q, v);
          if (an->versions[v].kind == VER_REDUCTION)
            dag->reads_reduction[q] = 1;
        }
      }
  }
  if (op->future >= 0 && op->future < run->nfutures)
    an->fut_op[op->future] = (int32_t)i;
}

/* A growable list as the DAG keeps it: never NULL, even when empty. */
static int32_t *final_list(analysis *an, growable *g) {
  if (!g->data)
    g->data = grow(an, g->in, NULL, &g->cap, 1, sizeof *g->data);
  return g->data;
}

mapopt_status mapopt__sim_dag_build(mapopt__arena *arena, mapopt__arena *build,
                                    const mapopt_app_run *run,
                                    mapopt__sim_dag *dag) {
  analysis an;
  memset(&an, 0, sizeof an);
  an.arena = arena;
  an.preds.in = an.need.in = an.reducers.in = arena;
  an.raw.in = build;
  mapopt__arena_init(&an.scratch, arena->ctx);
  an.run = run;
  an.last_fence = -1;
  an.pool_free = -1;
  int64_t n = run->nops;
  memset(dag, 0, sizeof *dag);
  dag->nops = n;
  mapopt__arena *sa = &an.scratch;
  mapopt_status st = MAPOPT_EINVAL;
  if (n >= MAPOPT__SIM_INDEX_MAX || run->natoms >= MAPOPT__SIM_INDEX_MAX ||
      run->npieces > MAPOPT__SIM_INDEX_MAX) /* req_piece is 32-bit */
    goto done;
  an.af_off = mapopt__arena_alloc(arena, (size_t)(run->natoms + 1) * 8);
  an.mark = mapopt__arena_alloc(sa, (size_t)(n + 1) * 4);
  an.rawmark = mapopt__arena_alloc(sa, (size_t)(n + 1) * 4);
  an.fut_op = mapopt__arena_alloc(sa, (size_t)(run->nfutures + 1) * 4);
  dag->pred_off = mapopt__arena_alloc(arena, (size_t)(n + 1) * 4);
  dag->req_off = mapopt__arena_alloc(arena, (size_t)(n + 1) * 4);
  dag->ver_off = mapopt__arena_alloc(arena, (size_t)(n + 1) * 4);
  st = MAPOPT_ENOMEM;
  if (!an.af_off || !an.mark || !an.rawmark || !dag->pred_off ||
      !dag->req_off || !dag->ver_off || !an.fut_op)
    goto done;
  for (int64_t f = 0; f < run->nfutures; f++)
    an.fut_op[f] = -1;
  int64_t naf = 0;
  for (int64_t a = 0; a < run->natoms; a++) {
    an.af_off[a] = naf;
    naf += run->regions[run->atom_region[a]].nfields;
  }
  an.af_off[run->natoms] = naf;
  dag->af_off = an.af_off;
  dag->naf = naf;
  st = MAPOPT_EINVAL; /* a version names its (atom, field) in 30 bits */
  if (naf > MAPOPT__SIM_AF_MAX)
    goto done;
  st = MAPOPT_ENOMEM;
  /* A version names its (atom, field) by index: the atom back from it. */
  dag->af_atom = mapopt__arena_alloc(arena, (size_t)(naf + 1) * 4);
  if (!dag->af_atom)
    goto done;
  for (int64_t a = 0; a < run->natoms; a++)
    for (int64_t k = an.af_off[a]; k < an.af_off[a + 1]; k++)
      dag->af_atom[k] = (int32_t)a;
  an.af = mapopt__arena_alloc(sa, (size_t)(naf ? naf : 1) * sizeof *an.af);
  if (!an.af)
    goto done;
  for (int64_t k = 0; k < naf; k++)
    an.af[k] = (af_state){-1, -1, -1, -1, -1};
  /* Every (atom, field) of every requirement has one entry in need: its
   * length is known, so it is allocated once. So is a bound on the
   * versions: a write or fill touch makes one, and a reduction set is
   * closed into one at most once per reduce touch that opened or joined
   * it. A list grown by doubling touches twice its final size of fresh
   * memory, and on this kind of machine fresh memory is most of a plan's
   * build (docs/sim.md, "Benchmarks"). */
  int64_t nreqs = 0, nneed = 0, nwrites = 0;
  for (int64_t i = 0; i < n; i++) {
    const mapopt_app_op *o = &run->ops[i];
    dag->req_off[i] = (int32_t)nreqs;
    nreqs += (int64_t)o->nreqs;
    for (size_t r = 0; r < o->nreqs; r++) {
      int64_t touches = (int64_t)o->reqs[r].piece->natoms *
                        __builtin_popcountll(o->reqs[r].fields);
      nneed += touches;
      if (o->kind == MAPOPT_OP_FILL || o->reqs[r].priv != MAPOPT_PRIV_RO)
        nwrites += touches;
    }
    an.mark[i] = -1;
    an.rawmark[i] = -1;
  }
  st = MAPOPT_EINVAL;
  if (nreqs >= MAPOPT__SIM_INDEX_MAX || nneed >= MAPOPT__SIM_INDEX_MAX ||
      nwrites >= MAPOPT__SIM_INDEX_MAX)
    goto done;
  st = MAPOPT_ENOMEM;
  dag->req_off[n] = (int32_t)nreqs;
  dag->nreqs = nreqs;
  dag->need_off = mapopt__arena_alloc(arena, (size_t)(nreqs + 1) * 4);
  dag->raw_off = mapopt__arena_alloc(arena, (size_t)(nreqs + 1) * 4);
  dag->req_piece = mapopt__arena_alloc(arena, (size_t)(nreqs + 1) * 4);
  dag->req_priv = mapopt__arena_alloc(arena, (size_t)(nreqs + 1));
  dag->reads_reduction = mapopt__arena_zalloc(arena, (size_t)(nreqs + 1));
  an.need.cap = nneed ? nneed : 1;
  an.need.data = mapopt__arena_alloc(arena, (size_t)an.need.cap * 4);
  an.versions_cap = nwrites ? nwrites : 1;
  an.versions = mapopt__arena_alloc(arena, (size_t)an.versions_cap *
                                               sizeof(mapopt__version));
  /* The predecessor and RAW lists are estimated: without reductions a
   * needed version has one producer (one RAW entry per need entry), and an
   * op waits for about one op per touch and the newest fence. A run whose
   * writes wait for many readers, or that reduces, outgrows the estimate
   * and doubles from there. */
  an.preds.cap = nneed + n + 1;
  an.raw.cap = nneed + 1;
  if (an.preds.cap >= MAPOPT__SIM_INDEX_MAX)
    an.preds.cap = MAPOPT__SIM_INDEX_MAX - 1;
  an.preds.data = mapopt__arena_alloc(arena, (size_t)an.preds.cap * 4);
  an.raw.data = mapopt__arena_alloc(build, (size_t)an.raw.cap * 4);
  if (!dag->need_off || !dag->raw_off || !dag->req_piece || !dag->req_priv ||
      !dag->reads_reduction || !an.need.data || !an.versions ||
      !an.preds.data || !an.raw.data)
    goto done;
  for (int64_t i = 0; i < n && !an.failed; i++)
    analyse_op(&an, dag, i);
  dag->pred_off[n] = (int32_t)an.preds.len;
  dag->ver_off[n] = (int32_t)an.nversions;
  dag->need_off[nreqs] = (int32_t)an.need.len;
  dag->raw_off[nreqs] = (int32_t)an.raw.len;
  /* The lists were grown in the DAG's arena: they are the DAG's. */
  dag->preds = final_list(&an, &an.preds);
  dag->need = final_list(&an, &an.need);
  dag->raw = final_list(&an, &an.raw);
  dag->reducers = final_list(&an, &an.reducers);
  dag->versions = an.versions;
  dag->nversions = an.nversions;
  dag->red_sets = an.red_sets;
  st = an.too_big ? MAPOPT_EINVAL : an.failed ? MAPOPT_ENOMEM : MAPOPT_OK;
done:
  mapopt__arena_destroy(&an.scratch);
  return st;
}
