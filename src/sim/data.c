/*
 * The data of a simulation (docs/sim.md, "How it models a run"): instances in
 * memories (reuse, creation, garbage collection when a memory is full), which
 * instance holds which version of every (atom, field), and the records of
 * copies -- what each moves, from which source, after which other copies --
 * with the reservation of their ports. Deciding which copies an op needs,
 * and what follows when one arrives, is the run's (engine.c).
 *
 * It calls only the concrete machine (machine.c).
 */
#include <inttypes.h>
#include <string.h>

#include "sim/engine.h"

/* ---- instances ----------------------------------------------------------- */

/* Records a memory's live bytes for the trace's counter rows. */
static void log_memory(sim_t *s, int64_t mem) {
  if (!s->opts->trace)
    return;
  int64_t *e = mapopt__vec_push(&s->mem_log, s->ctx);
  if (e) {
    e[0] = s->now;
    e[1] = mem;
    e[2] = s->mems[mem].live;
  }
}

void mapopt__sim_mem_release(sim_t *s, int64_t i) {
  sim_inst *in = inst_at(s, i);
  if (in->freed)
    return;
  in->freed = true;
  sim_mem *mm = &s->mems[in->mem];
  mm->live -= in->bytes;
  log_memory(s, in->mem);
  mm->ninst--;
}

/* An instance no op or copy is using and holding no newest version, nor
 * contributions still to fold (a reduction instance's data is nowhere
 * else). */
static bool entirely_stale(sim_t *s, const sim_inst *in) {
  if (in->reduction && in->fold_left > 0)
    return false;
  const mapopt_app_region *rg = &s->run->regions[in->region];
  for (size_t a = 0; a < in->piece->natoms; a++)
    for (int f = 0; f < rg->nfields; f++) {
      int64_t v = in->held[slot_of(s, in, a, f)];
      if (v >= 0 && v == s->newest[af_index(s, in->piece->atoms[a].atom, f)])
        return false;
    }
  return true;
}

/* Frees stale, unused instances of memory mem, least recently used first,
 * until need bytes fit (its stale unused instances). */
static void collect_garbage(sim_t *s, int64_t mem, int64_t need) {
  sim_mem *mm = &s->mems[mem];
  while (mapopt__sat_add(mm->live, need) > mm->capacity) {
    int64_t best = -1;
    for (size_t k = 0; k < mm->insts.len; k++) {
      int64_t i = MAPOPT__VEC_AT(&mm->insts, int64_t, k);
      sim_inst *in = inst_at(s, i);
      if (in->freed || in->users > 0 || !entirely_stale(s, in))
        continue;
      if (best < 0 || in->last_use < inst_at(s, best)->last_use)
        best = i;
    }
    if (best < 0)
      return;
    mapopt__sim_mem_release(s, best);
  }
}

static int64_t align_of(const mapopt_layout *l) {
  /* The smallest power of two a with a op n (1 when none or unsatisfiable
   * within 2^40). */
  if (l->align_op == MAPOPT_ALIGN_NONE)
    return 1;
  for (int64_t a = 1; a <= ((int64_t)1 << 40); a *= 2) {
    bool ok;
    switch (l->align_op) {
    case MAPOPT_ALIGN_EQ:
      ok = a == l->align;
      break;
    case MAPOPT_ALIGN_NE:
      ok = a != l->align;
      break;
    case MAPOPT_ALIGN_LT:
      ok = a < l->align;
      break;
    case MAPOPT_ALIGN_LE:
      ok = a <= l->align;
      break;
    case MAPOPT_ALIGN_GT:
      ok = a > l->align;
      break;
    default:
      ok = a >= l->align;
      break;
    }
    if (ok)
      return a;
  }
  return 1;
}

static int64_t inst_bytes(const sim_t *s, const mapopt_app_piece *pc,
                          int region, uint64_t fields, const mapopt_layout *l) {
  const mapopt_app_region *rg = &s->run->regions[region];
  int64_t per = 0, nf = 0;
  for (int f = 0; f < rg->nfields; f++)
    if ((fields >> f) & 1u) {
      per += rg->field_bytes[f];
      nf++;
    }
  /* Saturating: a piece of 2^61 elements is INT64_MAX bytes, which no
   * memory holds (OOM), not a wrapped size that one does. */
  int64_t bytes = mapopt__sat_mul(pc->elements, per);
  int64_t a = align_of(l);
  if (a > 1 && l->soa == MAPOPT_LAYOUT_YES)
    bytes = mapopt__sat_add(bytes, mapopt__sat_mul(nf, a - 1));
  return bytes;
}

/* Whether instance in covers piece pc: the identical piece, or whole
 * atoms that include every atom of pc. */
static bool covers(const sim_t *s, const sim_inst *in,
                   const mapopt_app_piece *pc) {
  if (in->piece == pc)
    return true;
  for (size_t a = 0; a < pc->natoms; a++) {
    int64_t k = atom_index(in->piece, pc->atoms[a].atom);
    if (k < 0 ||
        in->piece->atoms[k].count != s->run->atom_elements[pc->atoms[a].atom])
      return false;
  }
  return true;
}

/* ---- the instance index --------------------------------------------------
 *
 * An instance serves a requirement only if it is of the requirement's very
 * piece or holds every atom of it whole (covers). So each instance is
 * listed under (its memory, its piece) and under (its memory, each atom it
 * holds whole), and a requirement looks at two lists only: its piece's and
 * its first atom's. Lists keep creation order, so the first instance of
 * either that serves is the one a scan of the whole memory in creation
 * order would find; freed instances are unlinked as the lists are walked.
 *
 * Each piece remembers the instances it was answered last and their
 * questions (memory, fields, layout, alignment, operator). Instances are
 * only ever added after them, and one that stops serving never serves
 * again (freed or being collected), so while such an instance still
 * serves, it is still the first that does, and the same question gets it
 * without a lookup.
 */

enum { KEY_PIECE = 0, KEY_ATOM = 1 };

/* The key of a list: memory, kind, piece or atom id; 0 is never a key. */
static uint64_t list_key(int64_t mem, int kind, int64_t id) {
  return ((uint64_t)mem << 42 | (uint64_t)kind << 41 | (uint64_t)id) + 1;
}

/* Whether list_key can name every list of this run. */
static bool index_fits(const sim_t *s) {
  return s->nmems < (INT64_C(1) << 21) &&
         s->run->npieces < (INT64_C(1) << 40) &&
         s->run->natoms < (INT64_C(1) << 40);
}

static uint64_t mix(uint64_t k) {
  k ^= k >> 33;
  k *= UINT64_C(0xff51afd7ed558ccd);
  return k ^ (k >> 33);
}

/* The list of key, added when insert (NULL on ENOMEM), or NULL if none. */
static inst_list *list_of(sim_t *s, uint64_t key, bool insert) {
  if (insert && (s->inst_lists_len + 1) * 2 > s->inst_lists_cap) {
    int64_t cap = s->inst_lists_cap ? s->inst_lists_cap * 2 : 256;
    inst_list *t = mapopt__arena_zalloc(&s->arena, (size_t)cap * sizeof *t);
    if (!t)
      return NULL;
    for (int64_t i = 0; i < s->inst_lists_cap; i++) {
      const inst_list *e = &s->inst_lists[i];
      if (!e->key)
        continue;
      uint64_t h = mix(e->key) & (uint64_t)(cap - 1);
      while (t[h].key)
        h = (h + 1) & (uint64_t)(cap - 1);
      t[h] = *e;
    }
    s->inst_lists = t;
    s->inst_lists_cap = cap;
  }
  if (!s->inst_lists_cap)
    return NULL;
  uint64_t m = (uint64_t)(s->inst_lists_cap - 1);
  for (uint64_t h = mix(key) & m;; h = (h + 1) & m) {
    inst_list *e = &s->inst_lists[h];
    if (e->key == key)
      return e;
    if (!e->key) {
      if (!insert)
        return NULL;
      *e = (inst_list){key, -1, -1};
      s->inst_lists_len++;
      return e;
    }
  }
}

static bool list_append(sim_t *s, uint64_t key, int64_t inst) {
  if (s->inst_nodes_len == s->inst_nodes_cap) {
    int64_t cap = s->inst_nodes_cap ? s->inst_nodes_cap * 2 : 256;
    hnode *d = mapopt__arena_grow(&s->arena, s->inst_nodes,
                                  (size_t)s->inst_nodes_cap * sizeof *d,
                                  (size_t)cap * sizeof *d);
    if (!d)
      return false;
    s->inst_nodes = d;
    s->inst_nodes_cap = cap;
  }
  inst_list *l = list_of(s, key, true);
  if (!l)
    return false;
  int64_t n = s->inst_nodes_len++;
  s->inst_nodes[n] = (hnode){inst, -1};
  if (l->tail >= 0)
    s->inst_nodes[l->tail].next = n;
  else
    l->head = n;
  l->tail = n;
  return true;
}

/* Lists instance id under its piece and the atoms it holds whole. */
static bool index_instance(sim_t *s, int64_t id) {
  const sim_inst *in = inst_at(s, id);
  const mapopt_app_piece *pc = in->piece;
  if (!index_fits(s))
    return true; /* find_serving scans the memory instead */
  if (!list_append(s, list_key(in->mem, KEY_PIECE, pc->id), id))
    return false;
  for (size_t a = 0; a < pc->natoms; a++)
    if (pc->atoms[a].count == s->run->atom_elements[pc->atoms[a].atom] &&
        !list_append(s, list_key(in->mem, KEY_ATOM, pc->atoms[a].atom), id))
      return false;
  return true;
}

/* Whether in, live, may serve r besides covering its piece: an instance of
 * its kind (a reduction instance with r's operator for a REDUCE
 * requirement, a normal one not being collected otherwise) of the region,
 * with the fields, layout and alignment asked for. */
static bool serves(const sim_inst *in, const mapopt_app_req *r,
                   const mapopt_layout *l, int64_t want_align) {
  bool reduce = r->priv == MAPOPT_PRIV_REDUCE;
  return in->reduction == reduce &&
         (reduce ? in->redop == (int)r->redop : !in->collect_pending) &&
         in->region == r->piece->region &&
         (in->fields & r->fields) == r->fields && in->layout.soa == l->soa &&
         in->layout.c_order == l->c_order &&
         align_of(&in->layout) >= want_align;
}

/* The first instance of the list of key that is live and serves r (and
 * covers its piece); freed ones are unlinked on the way. -1 if none. */
static int64_t first_in_list(sim_t *s, uint64_t key, const mapopt_app_req *r,
                             const mapopt_layout *l, int64_t want_align) {
  inst_list *lst = list_of(s, key, false);
  if (!lst)
    return -1;
  int64_t prev = -1;
  for (int64_t n = lst->head; n >= 0;) {
    hnode *node = &s->inst_nodes[n];
    sim_inst *in = inst_at(s, node->inst);
    if (in->freed) { /* never live again */
      if (prev >= 0)
        s->inst_nodes[prev].next = node->next;
      else
        lst->head = node->next;
      if (lst->tail == n)
        lst->tail = prev;
      n = node->next;
      continue;
    }
    if (serves(in, r, l, want_align) && covers(s, in, r->piece))
      return node->inst;
    prev = n;
    n = node->next;
  }
  return -1;
}

/* Finds a reusable instance for the requirement in mem: the
 * first in creation order that serves it and covers its piece, or -1. */
int64_t mapopt__sim_find_instance(sim_t *s, int64_t mem,
                                  const mapopt_app_req *r,
                                  const mapopt_layout *l) {
  int64_t want_align = align_of(l);
  int redop = r->priv == MAPOPT_PRIV_REDUCE ? (int)r->redop : -1;
  const mapopt_app_piece *pc = r->piece;
  if (!index_fits(s) || pc->natoms == 0) {
    /* Every instance of the region covers an empty piece. */
    sim_mem *mm = &s->mems[mem];
    for (size_t k = 0; k < mm->insts.len; k++) {
      int64_t i = MAPOPT__VEC_AT(&mm->insts, int64_t, k);
      sim_inst *in = inst_at(s, i);
      if (!in->freed && serves(in, r, l, want_align) && covers(s, in, pc))
        return i;
    }
    return -1;
  }
  inst_answer *ans = &s->piece_answers[PIECE_ANSWERS * pc->id];
  int8_t align_log2 = (int8_t)__builtin_ctzll((uint64_t)want_align);
  for (int w = 0; w < PIECE_ANSWERS; w++) {
    const inst_answer *q = &ans[w];
    if (q->inst >= 0 && q->mem == mem && q->fields == r->fields &&
        q->soa == l->soa && q->c_order == l->c_order &&
        q->align_log2 == align_log2 && q->redop == redop) {
      sim_inst *in = inst_at(s, q->inst);
      if (!in->freed && serves(in, r, l, want_align))
        return q->inst;
    }
  }
  int64_t a =
      first_in_list(s, list_key(mem, KEY_PIECE, pc->id), r, l, want_align);
  int64_t b = first_in_list(s, list_key(mem, KEY_ATOM, pc->atoms[0].atom), r, l,
                            want_align);
  int64_t first = a < 0 ? b : b < 0 || a < b ? a : b;
  if (first >= 0) { /* the older answer goes */
    memmove(&ans[1], &ans[0], (PIECE_ANSWERS - 1) * sizeof *ans);
    ans[0] = (inst_answer){
        first,     mem, r->fields, redop, (int8_t)l->soa, (int8_t)l->c_order,
        align_log2};
  }
  return first;
}

/* Creates an instance; OOM (with the default mapper's message) when it cannot
 * fit. */
int64_t mapopt__sim_create_instance(sim_t *s, int64_t op, int64_t r,
                                    int64_t mem, const mapopt_app_piece *pc,
                                    int region, uint64_t fields,
                                    const mapopt_layout *l, bool reduction) {
  int64_t bytes = inst_bytes(s, pc, region, fields, l);
  sim_mem *mm = &s->mems[mem];
  if (mapopt__sat_add(mm->live, bytes) > mm->capacity)
    collect_garbage(s, mem, bytes);
  if (mapopt__sat_add(mm->live, bytes) > mm->capacity) {
    const sim_op *o = &s->ops[op];
    const sim_proc *p = &s->procs[o->proc];
    mapopt__sim_error(
        s, MAPOPT_SIM_OOM,
        "Default mapper failed allocation of size %" PRId64
        " bytes for region requirement %" PRId64
        " of task %s in memory %s of node %" PRId64 " (memory index %" PRId64
        ", processor %s %" PRId64 ", UID %" PRId64
        "); the live instances of this mapping exceed "
        "the memory's capacity of %" PRId64 " bytes.",
        bytes, r, s->run->tasks[s->run->ops[op].task].name,
        mapopt_shape_mem_name(mm->kind), mm->node, mm->index,
        mapopt_shape_proc_name(dsl_kind(p->cls)), p->local, op, mm->capacity);
    return -1;
  }
  sim_inst *in = mapopt__vec_push(&s->insts, s->ctx);
  int64_t id = (int64_t)s->insts.len - 1;
  int64_t *slot = mapopt__vec_push(&mm->insts, s->ctx);
  int nf = s->run->regions[region].nfields;
  size_t n = pc->natoms * (size_t)nf;
  int64_t *held = mapopt__arena_alloc(&s->arena, (n ? n : 1) * 8);
  int64_t *inc = mapopt__arena_alloc(&s->arena, (n ? n : 1) * 8);
  if (!in || !slot || !held || !inc) {
    mapopt__sim_out_of_memory(s);
    return -1;
  }
  *slot = id;
  for (size_t k = 0; k < n; k++)
    held[k] = inc[k] = -1;
  *in = (sim_inst){mem, pc,     region, fields,    *l,    bytes,
                   0,   s->now, false,  reduction, false, false,
                   0,   -1,     -1,     held,      inc};
  if (reduction)
    in->redop = (int)s->run->ops[op].reqs[r].redop;
  if (!index_instance(s, id)) {
    mapopt__sim_out_of_memory(s);
    return -1;
  }
  mm->live += bytes;
  log_memory(s, mem);
  mm->ninst++;
  if (mm->live > mm->peak)
    mm->peak = mm->live;
  if (mm->ninst > mm->peak_inst)
    mm->peak_inst = mm->ninst;
  return id;
}

/* ---- holders of versions ------------------------------------------------- */

static void add_holder(sim_t *s, int64_t v, int64_t inst) {
  hnode *h = mapopt__vec_push(&s->hpool, s->ctx);
  if (!h) {
    mapopt__sim_out_of_memory(s);
    return;
  }
  h->inst = inst;
  h->next = s->holder_head[v];
  s->holder_head[v] = (int64_t)s->hpool.len - 1;
}

/* Marks (atom, field) of inst as holding version v, now complete. */
void mapopt__sim_hold(sim_t *s, int64_t inst, int64_t atom, int f, int64_t v) {
  sim_inst *in = inst_at(s, inst);
  int64_t a = atom_index(in->piece, atom);
  if (a < 0)
    return;
  int64_t k = slot_of(s, in, (size_t)a, f);
  in->held[k] = v;
  if (in->incoming[k] == v)
    in->incoming[k] = -1;
  add_holder(s, v, inst);
  int64_t af = af_index(s, atom, f);
  if (s->newest[af] < v)
    s->newest[af] = v;
}

/* Whether inst is the only holder of the newest version of some (atom,
 * field): such an instance is never collected (its data is nowhere else). */
bool mapopt__sim_only_newest_holder(sim_t *s, int64_t i) {
  sim_inst *in = inst_at(s, i);
  const mapopt_app_region *rg = &s->run->regions[in->region];
  for (size_t a = 0; a < in->piece->natoms; a++)
    for (int f = 0; f < rg->nfields; f++) {
      int64_t v = in->held[slot_of(s, in, a, f)];
      int64_t atom = in->piece->atoms[a].atom;
      if (v < 0 || v != s->newest[af_index(s, atom, f)])
        continue;
      int holders = 0;
      for (int64_t h = s->holder_head[v]; h >= 0 && holders < 2;
           h = MAPOPT__VEC_AT(&s->hpool, hnode, h).next) {
        sim_inst *o = inst_at(s, MAPOPT__VEC_AT(&s->hpool, hnode, h).inst);
        int64_t oa = atom_index(o->piece, atom);
        holders +=
            !o->freed && oa >= 0 && o->held[slot_of(s, o, (size_t)oa, f)] == v;
      }
      if (holders < 2)
        return true;
    }
  return false;
}

void mapopt__sim_release_user(sim_t *s, int64_t i) {
  sim_inst *in = inst_at(s, i);
  in->users--;
  in->last_use = s->now;
  if (in->users <= 0 && in->collect_pending && !in->freed)
    mapopt__sim_mem_release(s, i);
}

/* ---- copies -------------------------------------------------------------- */

int64_t mapopt__sim_new_copy(sim_t *s, int kind, int64_t src_inst,
                             int64_t dst_inst, int64_t op, int64_t r) {
  sim_copy *c = mapopt__vec_push(&s->copies, s->ctx);
  if (!c) {
    mapopt__sim_out_of_memory(s);
    return -1;
  }
  c->kind = kind;
  c->src_inst = src_inst;
  c->dst_inst = dst_inst;
  c->src_mem = src_inst >= 0 ? inst_at(s, src_inst)->mem : -1;
  c->dst_mem = inst_at(s, dst_inst)->mem;
  c->op = op;
  c->req = r;
  c->reducer = -1;
  c->ready_at = s->now;
  c->last_dep = -1;
  c->dep_head = -1;
  c->first_af = -1;
  s->ops[op].pending++;
  inst_at(s, dst_inst)->users++;
  if (src_inst >= 0)
    inst_at(s, src_inst)->users++;
  return (int64_t)s->copies.len - 1;
}

void mapopt__sim_copy_add_af(sim_t *s, int64_t c, int64_t atom, int f,
                             int64_t v, int64_t bytes) {
  caf *e = mapopt__vec_push(&s->copy_afs, s->ctx);
  if (!e) {
    mapopt__sim_out_of_memory(s);
    return;
  }
  sim_copy *cp = copy_at(s, c);
  *e = (caf){atom, f, v, cp->first_af};
  cp->first_af = (int64_t)s->copy_afs.len - 1;
  cp->naf++;
  cp->bytes = mapopt__sat_add(cp->bytes, bytes);
  if (cp->kind == COPY_FOLD)
    return;
  sim_inst *dst = inst_at(s, cp->dst_inst);
  int64_t a = atom_index(dst->piece, atom);
  if (a >= 0)
    dst->incoming[slot_of(s, dst, (size_t)a, f)] = v;
}

int64_t mapopt__sim_copy_producer(const sim_t *s, const sim_copy *c) {
  if (c->first_af < 0)
    return -1;
  const caf *e = &MAPOPT__VEC_AT(&s->copy_afs, caf, c->first_af);
  const mapopt__version *v = &s->dag.versions[e->version];
  if (v->kind == VER_WRITE)
    return v->producer;
  if (v->kind == VER_REDUCTION) {
    const mapopt__red_set *rs = mapopt__sim_red_set(&s->dag, e->version);
    return rs->nred > 0 ? s->dag.reducers[rs->red_off] : -1;
  }
  return -1;
}

void mapopt__sim_copy_depends(sim_t *s, int64_t c, int64_t on) {
  dnode *d = mapopt__vec_push(&s->deps, s->ctx);
  if (!d) {
    mapopt__sim_out_of_memory(s);
    return;
  }
  sim_copy *prereq = copy_at(s, on);
  d->copy = c;
  d->next = prereq->dep_head;
  prereq->dep_head = (int64_t)s->deps.len - 1;
  copy_at(s, c)->after++;
}

static bool better_source(sim_t *s, int64_t i, int64_t t, int64_t best,
                          int64_t best_t) {
  if (best < 0 || t < best_t)
    return true;
  if (t > best_t)
    return false;
  const sim_mem *a = &s->mems[inst_at(s, i)->mem];
  const sim_mem *b = &s->mems[inst_at(s, best)->mem];
  if (a->node != b->node)
    return a->node < b->node;
  if (inst_at(s, i)->mem != inst_at(s, best)->mem)
    return inst_at(s, i)->mem < inst_at(s, best)->mem;
  return i < best;
}

/* A complete holder of v that can serve piece `want`: it holds the whole
 * atom or is an instance of the identical piece. The earliest
 * estimated finish wins; ties go to (node, memory, instance). */
int64_t mapopt__sim_best_source(sim_t *s, int64_t v,
                                const mapopt_app_piece *want, int64_t atom,
                                int f, int64_t dst_mem, int64_t bytes) {
  int64_t best = -1, best_t = 0;
  for (int64_t h = s->holder_head[v]; h >= 0;
       h = MAPOPT__VEC_AT(&s->hpool, hnode, h).next) {
    int64_t i = MAPOPT__VEC_AT(&s->hpool, hnode, h).inst;
    sim_inst *in = inst_at(s, i);
    if (in->freed || in->reduction || in->mem == dst_mem)
      continue;
    int64_t a = atom_index(in->piece, atom);
    if (a < 0 || in->held[slot_of(s, in, (size_t)a, f)] != v)
      continue;
    if (in->piece != want &&
        in->piece->atoms[a].count != s->run->atom_elements[atom])
      continue;
    int64_t t = mapopt__sim_copy_estimate(s, in->mem, dst_mem, bytes);
    if (better_source(s, i, t, best, best_t)) {
      best = i;
      best_t = t;
    }
  }
  return best;
}

/* The reduction instance through which requirement r of reducer op
 * contributed (atom, f), with the atom's element count in it in *count;
 * -1 when r does not reduce it (or was not given an instance). */
int64_t mapopt__sim_reducer_instance(sim_t *s, int64_t op, size_t r,
                                     int64_t atom, int f, int64_t *count) {
  const mapopt_app_req *q = &s->run->ops[op].reqs[r];
  if (q->priv != MAPOPT_PRIV_REDUCE || !((q->fields >> f) & 1u) ||
      !s->ops[op].inst || s->ops[op].inst[r] < 0)
    return -1;
  int64_t a = atom_index(q->piece, atom);
  if (a < 0)
    return -1;
  *count = q->piece->atoms[a].count;
  return s->ops[op].inst[r];
}

/* Starts a copy whose prerequisites are done: its path and cap; it moves
 * bytes once its latency has passed (flow.c shares the ports). */
void mapopt__sim_copy_ready(sim_t *s, int64_t c) {
  sim_copy *cp = copy_at(s, c);
  int64_t bw = 1, lat = 0;
  int kind = cp->kind;
  if (kind == COPY_FILL) {
    mapopt__sim_fill_path(s, cp, &bw);
  } else {
    mapopt__sim_copy_path(s, cp, &bw, &lat);
    if (kind == COPY_FOLD)
      cp->kind = COPY_FOLD;
  }
  cp->start_at = s->now;
  cp->cap = bw > 0 ? bw : 1;
  if (mapopt__mul_ovf(cp->bytes, 1000, &cp->left))
    cp->left = INT64_MAX;
  cp->gen = 0;
  if (cp->left == 0) { /* nothing to move: done after the latency */
    cp->end_at = mapopt__sat_add(s->now, lat);
    mapopt__sim_schedule(s, cp->end_at, EV_COPY_DONE,
                         MAPOPT__SIM_COPY_EVENT(c, 0));
    return;
  }
  mapopt__sim_schedule(s, mapopt__sat_add(s->now, lat), EV_FLOW_START, c);
}
