/*
 * The discrete-event engine (SIMULATOR.md §4): issues the ops of a run,
 * resolves each through the mapping policy, allocates instances, plans
 * copies on ports, schedules tasks on processors, and stops at the end of
 * the run or at the first error, which it words as a real runtime would.
 *
 * Events are (time, sequence) keyed in a binary heap, so equal-time events
 * happen in creation order and runs are reproducible. Everything lives in
 * one arena per run.
 *
 * Simplifications, each deliberate and documented in docs/sim.md:
 *  - copies for a requirement are planned once the op is mapped and the ops
 *    that produced the data it needs have completed (so inputs are
 *    prefetched as soon as they exist, unless InstanceLimit holds the op
 *    back);
 *  - a version is copied only from complete holders; a second reader of a
 *    version whose folds are still in flight waits for them;
 *  - fills and fences pay no launch cost; index and single launches pay
 *    launch_ns once per launch statement;
 *  - without GPUDirect a network copy with an FB endpoint adds the FB_HOST
 *    latency of the staging leg on the same ports.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sim/engine.h"

/* ---- events ---------------------------------------------------------------
 */

enum {
  EV_ISSUE,      /* a context issues its next statements: id = ctx + 1 */
  EV_LAUNCHED,   /* a launch's UTIL work ended: id = first op */
  EV_MAPPED,     /* an op's mapping work ended */
  EV_COPY_READY, /* a copy may reserve its ports */
  EV_COPY_DONE,
  EV_TASK_END,
  EV_COMPLETE, /* fences and future reductions: their delay ended */
  EV_PROC_FREE /* a processor may start its next ready op */
};

#define EV(type, id)                                                           \
  ((void *)(uintptr_t)(((uint64_t)(type) << 56) | (uint64_t)(id)))
#define EV_TYPE(p) ((int)((uint64_t)(uintptr_t)(p) >> 56))
#define EV_ID(p) ((int64_t)((uint64_t)(uintptr_t)(p) & ((1ull << 56) - 1)))

/* Records the first simulated error; message lines go to errtext. */
static void sim_error(sim_t *s, mapopt_sim_error e, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static void sim_error(sim_t *s, mapopt_sim_error e, const char *fmt, ...) {
  if (failed(s))
    return;
  s->error = e;
  s->error_time = s->now;
  va_list ap;
  va_start(ap, fmt);
  mapopt__sb_vprintf(&s->errtext, fmt, ap);
  va_end(ap);
}

/* A mapping error reported by the DSL: its diagnostics are the message. */
static void dsl_error(sim_t *s, mapopt_sim_error e, size_t from) {
  if (failed(s))
    return;
  char line[1024];
  mapopt__strbuf *t = &s->errtext;
  for (size_t i = from; i < mapopt_diags_count(s->diags); i++) {
    const mapopt_diag *d = mapopt_diags_get(s->diags, i);
    if (d->severity == MAPOPT_SEV_WARNING)
      continue;
    mapopt_diag_format(d, line, sizeof line);
    mapopt__sb_printf(t, "%s%s", t->len ? "\n" : "", line);
  }
  s->error = e;
  s->error_time = s->now;
}

/* The class of a DSL mapping error by its R-code (§4.12). */
static mapopt_sim_error class_of(const mapopt_diags *d, size_t from) {
  for (size_t i = from; i < mapopt_diags_count(d); i++) {
    const char *c = mapopt_diags_get(d, i)->code;
    if (!strcmp(c, "R10") || !strcmp(c, "R11") || !strcmp(c, "R12") ||
        !strcmp(c, "R16") || !strcmp(c, "R18") || !strcmp(c, "R25"))
      return MAPOPT_SIM_INDEX;
    if (c[0] == 'R')
      return MAPOPT_SIM_POLICY;
  }
  return MAPOPT_SIM_POLICY;
}

static void schedule(sim_t *s, int64_t t, int type, int64_t id) {
  if (mapopt__heap_push(&s->events, s->ctx, t, EV(type, id)) != MAPOPT_OK)
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
}

static int proc_cls(mapopt_proc_kind k) {
  return k == MAPOPT_PROC_GPU ? PK_GPU : k == MAPOPT_PROC_OMP ? PK_OMP : PK_CPU;
}

/* ---- building the concrete machine -------------------------------------- */

static int64_t per_rank(int cls, int64_t count, int64_t ranks) {
  switch (cls) {
  case PK_GPU:
    return count / ranks;
  case PK_OMP:
    return count >= ranks ? count / ranks : 0;
  default:
    return count / ranks > 1 ? count / ranks : 1;
  }
}

static int64_t find_mem(const sim_t *s, const sim_proc *p, mapopt_mem_kind k);

static mapopt_status build_machine(sim_t *s) {
  const mapopt_machine *m = s->m;
  s->ranks =
      s->run->ranks_per_node > 0 ? s->run->ranks_per_node : m->ranks_per_node;
  if (s->ranks < 1)
    s->ranks = 1;
  s->nas = m->nodes * s->ranks;
  int64_t counts[PK_COUNT] = {
      per_rank(PK_CPU, m->procs[MAPOPT_PROC_CPU].count, s->ranks),
      per_rank(PK_GPU, m->procs[MAPOPT_PROC_GPU].count, s->ranks),
      per_rank(PK_OMP, m->procs[MAPOPT_PROC_OMP].count, s->ranks),
      per_rank(PK_UTIL, m->util_count, s->ranks)};
  if (m->procs[MAPOPT_PROC_CPU].count == 0)
    counts[PK_CPU] = 0;
  s->gpus_per_node = m->procs[MAPOPT_PROC_GPU].count;
  s->proc_base =
      mapopt__arena_zalloc(&s->arena, (size_t)(s->nas * PK_COUNT + 1) * 8);
  int64_t n = 0;
  for (int64_t as = 0; as < s->nas; as++)
    for (int c = 0; c < PK_COUNT; c++)
      n += counts[c];
  s->nprocs = n;
  s->procs =
      mapopt__arena_zalloc(&s->arena, (size_t)(n ? n : 1) * sizeof *s->procs);
  if (!s->proc_base || !s->procs)
    return MAPOPT_ENOMEM;
  int64_t id = 0;
  int64_t sockets = m->sockets > 0 ? m->sockets : 1;
  for (int64_t as = 0; as < s->nas; as++)
    for (int c = 0; c < PK_COUNT; c++) {
      s->proc_base[as * PK_COUNT + c] = id;
      for (int64_t q = 0; q < counts[c]; q++, id++) {
        sim_proc *p = &s->procs[id];
        p->cls = c;
        p->as = as;
        p->node = as / s->ranks;
        p->rank = as % s->ranks;
        p->local = q;
        p->gpu = c == PK_GPU ? p->rank * counts[PK_GPU] + q : -1;
        const mapopt_machine_procs *mp =
            c == PK_GPU ? &m->procs[MAPOPT_PROC_GPU] : NULL;
        p->socket = c == PK_GPU && mp->socket ? mp->socket[p->gpu] % sockets
                                              : q % sockets;
        mapopt__heap_init(&p->ready);
      }
    }
  s->proc_base[s->nas * PK_COUNT] = id;
  /* Memories: per address space SYSMEM, ZCMEM, RDMEM; FBMEM per GPU;
   * SOCKMEM per socket of each node. */
  int64_t nm = 0;
  mapopt_mem_kind per_as[] = {MAPOPT_MEM_SYSMEM, MAPOPT_MEM_ZCMEM,
                              MAPOPT_MEM_RDMEM};
  s->mems = mapopt__arena_zalloc(
      &s->arena,
      (size_t)(s->nas * 3 + m->nodes * (sockets + s->gpus_per_node) + 1) *
          sizeof *s->mems);
  if (!s->mems)
    return MAPOPT_ENOMEM;
  for (int64_t as = 0; as < s->nas; as++)
    for (int k = 0; k < 3; k++) {
      if (!m->mems[per_as[k]].present)
        continue;
      sim_mem *mm = &s->mems[nm++];
      mm->kind = per_as[k];
      mm->as = as;
      mm->node = as / s->ranks;
      mm->rank = as % s->ranks;
      mm->index = mm->rank;
      mm->gpu = -1;
      mm->capacity = per_as[k] == MAPOPT_MEM_SYSMEM
                         ? m->mems[per_as[k]].capacity / s->ranks
                         : m->mems[per_as[k]].capacity;
    }
  for (int64_t node = 0; node < m->nodes; node++) {
    for (int64_t g = 0;
         m->mems[MAPOPT_MEM_FBMEM].present && g < s->gpus_per_node; g++) {
      sim_mem *mm = &s->mems[nm++];
      mm->kind = MAPOPT_MEM_FBMEM;
      mm->node = node;
      mm->gpu = g;
      mm->index = g;
      int64_t per = s->gpus_per_node / s->ranks;
      mm->rank = per ? g / per : 0;
      mm->as = node * s->ranks + mm->rank;
      mm->capacity = m->mems[MAPOPT_MEM_FBMEM].capacity;
      mm->socket = m->procs[MAPOPT_PROC_GPU].socket
                       ? m->procs[MAPOPT_PROC_GPU].socket[g] % sockets
                       : 0;
    }
    for (int64_t k = 0; m->mems[MAPOPT_MEM_SOCKMEM].present && k < sockets;
         k++) {
      sim_mem *mm = &s->mems[nm++];
      mm->kind = MAPOPT_MEM_SOCKMEM;
      mm->node = node;
      mm->rank = -1;
      mm->as = -1;
      mm->index = k;
      mm->gpu = -1;
      mm->socket = k;
      mm->capacity = m->mems[MAPOPT_MEM_SOCKMEM].capacity;
    }
  }
  s->nmems = nm;
  for (int64_t i = 0; i < nm; i++)
    mapopt__vec_init(&s->mems[i].insts, sizeof(int64_t));
  s->proc_mem = mapopt__arena_alloc(
      &s->arena, (size_t)(s->nprocs * MAPOPT_MEM_KIND_COUNT + 1) * 8);
  if (!s->proc_mem)
    return MAPOPT_ENOMEM;
  for (int64_t p = 0; p < s->nprocs; p++)
    for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
      s->proc_mem[p * MAPOPT_MEM_KIND_COUNT + k] =
          find_mem(s, &s->procs[p], (mapopt_mem_kind)k);
  /* Ports per node: ce, out, in, pout, pin per GPU, then membus, nic_out,
   * nic_in. */
  s->ports_per_node = 5 * s->gpus_per_node + 3;
  s->nports = m->nodes * s->ports_per_node;
  s->ports = mapopt__arena_zalloc(&s->arena,
                                  (size_t)(s->nports + 1) * sizeof *s->ports);
  if (!s->ports)
    return MAPOPT_ENOMEM;
  static const char *const gnames[] = {"ce", "out", "in", "pout", "pin"};
  for (int64_t node = 0; node < m->nodes; node++) {
    sim_port *base = &s->ports[node * s->ports_per_node];
    for (int64_t g = 0; g < s->gpus_per_node; g++)
      for (int k = 0; k < 5; k++) {
        base[g * 5 + k].node = node;
        snprintf(base[g * 5 + k].name, sizeof base->name, "%s[GPU %" PRId64 "]",
                 gnames[k], g);
      }
    int64_t o = 5 * s->gpus_per_node;
    static const char *const nnames[] = {"membus", "nic_out", "nic_in"};
    for (int k = 0; k < 3; k++) {
      base[o + k].node = node;
      snprintf(base[o + k].name, sizeof base->name, "%s", nnames[k]);
    }
  }
  return MAPOPT_OK;
}

/* The memory of kind k that processor p uses, or -1 (DSL.md §1.2); from
 * the table built once per run. */
static int64_t mem_for(const sim_t *s, const sim_proc *p, mapopt_mem_kind k) {
  return s->proc_mem[(p - s->procs) * MAPOPT_MEM_KIND_COUNT + k];
}

static int64_t find_mem(const sim_t *s, const sim_proc *p, mapopt_mem_kind k) {
  for (int64_t i = 0; i < s->nmems; i++) {
    const sim_mem *mm = &s->mems[i];
    if (mm->kind != k || mm->node != p->node)
      continue;
    if (k == MAPOPT_MEM_FBMEM && mm->gpu == p->gpu)
      return i;
    if (k == MAPOPT_MEM_SOCKMEM && mm->socket == p->socket)
      return i;
    if ((k == MAPOPT_MEM_SYSMEM || k == MAPOPT_MEM_ZCMEM ||
         k == MAPOPT_MEM_RDMEM) &&
        mm->as == p->as)
      return i;
  }
  return -1;
}

static mapopt_proc_kind dsl_kind(int cls) {
  return cls == PK_GPU   ? MAPOPT_PROC_GPU
         : cls == PK_OMP ? MAPOPT_PROC_OMP
                         : MAPOPT_PROC_CPU;
}

static int64_t proc_id(const sim_t *s, int64_t as, int cls, int64_t local) {
  int64_t base = s->proc_base[as * PK_COUNT + cls];
  int64_t count = s->proc_base[as * PK_COUNT + cls + 1] - base;
  return local < count ? base + local : -1;
}

static int64_t procs_per_as(const sim_t *s, int cls) {
  return s->proc_base[cls + 1] - s->proc_base[cls];
}

/* ---- ports and copies -----------------------------------------------------
 */

static int64_t port_of(const sim_t *s, int64_t node, int64_t gpu, int which) {
  return node * s->ports_per_node +
         (gpu >= 0 ? gpu * 5 + which : 5 * s->gpus_per_node + which);
}
enum { P_CE, P_OUT, P_IN, P_POUT, P_PIN };
enum { P_MEMBUS, P_NIC_OUT, P_NIC_IN };

static bool is_fb(const sim_mem *m) {
  return m->kind == MAPOPT_MEM_FBMEM;
}

/* Classifies a copy and fills its ports, bandwidth and latency. */
static void copy_path(const sim_t *s, sim_copy *c, int64_t *bw, int64_t *lat) {
  const sim_mem *a = &s->mems[c->src_mem], *b = &s->mems[c->dst_mem];
  const mapopt_channel_params *ch = s->m->channels;
  c->nports = 0;
  if (a->node != b->node) {
    c->kind = MAPOPT_CHAN_NETWORK;
    const mapopt_channel_params *net = &ch[MAPOPT_CHAN_NETWORK];
    *bw = net->bw_mbps;
    *lat = net->lat_ns;
    c->ports[c->nports++] = port_of(s, a->node, -1, P_NIC_OUT);
    c->ports[c->nports++] = port_of(s, b->node, -1, P_NIC_IN);
    const sim_mem *ends[2] = {a, b};
    for (int e = 0; e < 2; e++) {
      if (!is_fb(ends[e]))
        continue;
      c->ports[c->nports++] =
          port_of(s, ends[e]->node, ends[e]->gpu, e == 0 ? P_OUT : P_IN);
      const mapopt_channel_params *fh = &ch[MAPOPT_CHAN_FB_HOST];
      if (fh->bw_mbps && fh->bw_mbps < *bw)
        *bw = fh->bw_mbps;
      if (!net->gpudirect)
        *lat += fh->lat_ns;
    }
    return;
  }
  if (is_fb(a) && is_fb(b) && a->gpu == b->gpu) {
    c->kind = MAPOPT_CHAN_FB_LOCAL;
    *bw = ch[MAPOPT_CHAN_FB_LOCAL].bw_mbps;
    *lat = ch[MAPOPT_CHAN_FB_LOCAL].lat_ns;
    c->ports[c->nports++] = port_of(s, a->node, a->gpu, P_CE);
  } else if (is_fb(a) && is_fb(b)) {
    const mapopt_channel_params *p = &ch[MAPOPT_CHAN_FB_FB_PEER];
    c->kind = MAPOPT_CHAN_FB_FB_PEER;
    *bw = a->socket != b->socket && p->cross_socket_bw_mbps
              ? p->cross_socket_bw_mbps
              : p->bw_mbps;
    *lat = p->lat_ns;
    c->ports[c->nports++] =
        port_of(s, a->node, a->gpu, p->peer_link ? P_POUT : P_OUT);
    c->ports[c->nports++] =
        port_of(s, b->node, b->gpu, p->peer_link ? P_PIN : P_IN);
  } else if (is_fb(a) || is_fb(b)) {
    c->kind = MAPOPT_CHAN_FB_HOST;
    *bw = ch[MAPOPT_CHAN_FB_HOST].bw_mbps;
    *lat = ch[MAPOPT_CHAN_FB_HOST].lat_ns;
    c->ports[c->nports++] = is_fb(a) ? port_of(s, a->node, a->gpu, P_OUT)
                                     : port_of(s, b->node, b->gpu, P_IN);
  } else {
    c->kind = MAPOPT_CHAN_HOST_HOST;
    *bw = ch[MAPOPT_CHAN_HOST_HOST].bw_mbps;
    *lat = ch[MAPOPT_CHAN_HOST_HOST].lat_ns;
    c->ports[c->nports++] = port_of(s, a->node, -1, P_MEMBUS);
  }
  if (a->as != b->as && a->as >= 0 && b->as >= 0)
    *lat += s->m->runtime.ipc_lat_ns;
}

/* A fill on the destination: FB_LOCAL for FB, HOST_HOST otherwise. */
static void fill_path(const sim_t *s, sim_copy *c, int64_t *bw) {
  const sim_mem *b = &s->mems[c->dst_mem];
  c->nports = 1;
  if (is_fb(b)) {
    *bw = s->m->channels[MAPOPT_CHAN_FB_LOCAL].bw_mbps;
    c->ports[0] = port_of(s, b->node, b->gpu, P_CE);
  } else {
    *bw = s->m->channels[MAPOPT_CHAN_HOST_HOST].bw_mbps;
    c->ports[0] = port_of(s, b->node, -1, P_MEMBUS);
  }
}

/* Estimated end of a copy from src into dst of bytes, for source choice. */
static int64_t copy_estimate(sim_t *s, int64_t src_mem, int64_t dst_mem,
                             int64_t bytes) {
  sim_copy c = {.src_mem = src_mem, .dst_mem = dst_mem};
  int64_t bw = 1, lat = 0;
  copy_path(s, &c, &bw, &lat);
  int64_t start = s->now;
  for (int i = 0; i < c.nports; i++)
    if (s->ports[c.ports[i]].free_at > start)
      start = s->ports[c.ports[i]].free_at;
  return start + mapopt__sim_copy_ns(bytes, bw > 0 ? bw : 1, lat);
}

/* ---- instances -------------------------------------------------------------
 */

/* Index of (atom a of the piece, field f) in an instance's arrays. */
static int64_t slot_of(const sim_t *s, const sim_inst *in, size_t a, int f) {
  return (int64_t)a * s->run->regions[in->region].nfields + f;
}

/* The piece-atom index of atom in the instance's piece, or -1. */
static int64_t atom_index(const mapopt_app_piece *pc, int64_t atom) {
  size_t lo = 0, hi = pc->natoms;
  while (lo < hi) {
    size_t mid = (lo + hi) / 2;
    if (pc->atoms[mid].atom < atom)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < pc->natoms && pc->atoms[lo].atom == atom ? (int64_t)lo : -1;
}

static int64_t af_index(const sim_t *s, int64_t atom, int f) {
  return s->af_off[atom] + f;
}

/* Records a memory's live bytes for the trace's counter rows. */
static void log_memory(sim_t *s, int64_t mem) {
  if (!s->opts->trace_path)
    return;
  int64_t *e = mapopt__vec_push(&s->mem_log, s->ctx);
  if (e) {
    e[0] = s->now;
    e[1] = mem;
    e[2] = s->mems[mem].live;
  }
}

static void mem_release(sim_t *s, int64_t i) {
  sim_inst *in = inst_at(s, i);
  if (in->freed)
    return;
  in->freed = true;
  sim_mem *mm = &s->mems[in->mem];
  mm->live -= in->bytes;
  log_memory(s, in->mem);
  mm->ninst--;
}

/* An instance no op or copy is using and holding no newest version. */
static bool entirely_stale(sim_t *s, const sim_inst *in) {
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
 * until need bytes fit (SIMULATOR.md §4.7). */
static void collect_garbage(sim_t *s, int64_t mem, int64_t need) {
  sim_mem *mm = &s->mems[mem];
  while (mm->live + need > mm->capacity) {
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
    mem_release(s, best);
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
  int64_t bytes = pc->elements * per;
  int64_t a = align_of(l);
  if (a > 1 && l->soa == MAPOPT_LAYOUT_YES)
    bytes += nf * (a - 1);
  return bytes;
}

static uint64_t region_mask(const mapopt_app_region *rg) {
  return rg->nfields >= 64 ? ~0ull : (1ull << rg->nfields) - 1;
}

/* Whether instance in covers piece pc: the identical piece, or whole
 * atoms that include every atom of pc (§4.4 step 1). */
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

/* Finds a reusable instance for the requirement in mem (§4.4 step 1). */
static int64_t find_instance(sim_t *s, int64_t mem, const mapopt_app_req *r,
                             const mapopt_layout *l) {
  sim_mem *mm = &s->mems[mem];
  int64_t want_align = align_of(l);
  for (size_t k = 0; k < mm->insts.len; k++) {
    int64_t i = MAPOPT__VEC_AT(&mm->insts, int64_t, k);
    sim_inst *in = inst_at(s, i);
    if (in->freed || in->reduction || in->collect_pending ||
        in->region != r->piece->region ||
        (in->fields & r->fields) != r->fields || in->layout.soa != l->soa ||
        in->layout.c_order != l->c_order || align_of(&in->layout) < want_align)
      continue;
    if (covers(s, in, r->piece))
      return i;
  }
  return -1;
}

/* Creates an instance; OOM (with the §5.3 message) when it cannot fit. */
static int64_t create_instance(sim_t *s, int64_t op, int64_t r, int64_t mem,
                               const mapopt_app_piece *pc, int region,
                               uint64_t fields, const mapopt_layout *l,
                               bool reduction) {
  int64_t bytes = inst_bytes(s, pc, region, fields, l);
  sim_mem *mm = &s->mems[mem];
  if (mm->live + bytes > mm->capacity)
    collect_garbage(s, mem, bytes);
  if (mm->live + bytes > mm->capacity) {
    const sim_op *o = &s->ops[op];
    const sim_proc *p = &s->procs[o->proc];
    sim_error(s, MAPOPT_SIM_OOM,
              "Default mapper failed allocation of size %" PRId64
              " bytes for region requirement %" PRId64
              " of task %s in memory %s of node %" PRId64
              " (memory index %" PRId64 ", processor %s %" PRId64
              ", UID %" PRId64 "); the live instances of this mapping exceed "
              "the memory's capacity of %" PRId64 " bytes.",
              bytes, r, s->run->tasks[s->run->ops[op].task].name,
              mapopt_shape_mem_name(mm->kind), mm->node, mm->index,
              mapopt_shape_proc_name(dsl_kind(p->cls)), p->local, op,
              mm->capacity);
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
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
    return -1;
  }
  *slot = id;
  for (size_t k = 0; k < n; k++)
    held[k] = inc[k] = -1;
  *in = (sim_inst){mem,   pc,        region, fields, *l, bytes, 0,  s->now,
                   false, reduction, false,  false,  0,  held,  inc};
  mm->live += bytes;
  log_memory(s, mem);
  mm->ninst++;
  if (mm->live > mm->peak)
    mm->peak = mm->live;
  if (mm->ninst > mm->peak_inst)
    mm->peak_inst = mm->ninst;
  return id;
}

/* ---- holders of versions ---------------------------------------------------
 */

static void add_holder(sim_t *s, int64_t v, int64_t inst) {
  hnode *h = mapopt__vec_push(&s->hpool, s->ctx);
  if (!h) {
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
    return;
  }
  h->inst = inst;
  h->next = s->holder_head[v];
  s->holder_head[v] = (int64_t)s->hpool.len - 1;
}

/* Marks (atom, field) of inst as holding version v, now complete. */
static void hold(sim_t *s, int64_t inst, int64_t atom, int f, int64_t v) {
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

/* ---- forward declarations of the state machine ----------------------------
 */

static void try_ready(sim_t *s, int64_t op);
static void plan_copies(sim_t *s, int64_t op, int64_t r);
static void op_complete(sim_t *s, int64_t op);
static void try_mappable(sim_t *s, int64_t op);
static void wake_waiters(sim_t *s, int64_t v);

/* ---- copies
 * ------------------------------------------------------------------ */

static int64_t new_copy(sim_t *s, int kind, int64_t src_inst, int64_t dst_inst,
                        int64_t op, int64_t r) {
  sim_copy *c = mapopt__vec_push(&s->copies, s->ctx);
  if (!c) {
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
    return -1;
  }
  c->kind = kind;
  c->src_inst = src_inst;
  c->dst_inst = dst_inst;
  c->src_mem = src_inst >= 0 ? inst_at(s, src_inst)->mem : -1;
  c->dst_mem = inst_at(s, dst_inst)->mem;
  c->op = op;
  c->req = r;
  c->ready_at = s->now;
  c->dep_head = -1;
  c->first_af = -1;
  s->ops[op].pending++;
  inst_at(s, dst_inst)->users++;
  if (src_inst >= 0)
    inst_at(s, src_inst)->users++;
  return (int64_t)s->copies.len - 1;
}

static void copy_add_af(sim_t *s, int64_t c, int64_t atom, int f, int64_t v,
                        int64_t bytes) {
  caf *e = mapopt__vec_push(&s->copy_afs, s->ctx);
  if (!e) {
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
    return;
  }
  sim_copy *cp = copy_at(s, c);
  *e = (caf){atom, f, v, cp->first_af};
  cp->first_af = (int64_t)s->copy_afs.len - 1;
  cp->naf++;
  cp->bytes += bytes;
  if (cp->kind == COPY_FOLD)
    return;
  sim_inst *dst = inst_at(s, cp->dst_inst);
  int64_t a = atom_index(dst->piece, atom);
  if (a >= 0)
    dst->incoming[slot_of(s, dst, (size_t)a, f)] = v;
}

static void copy_depends(sim_t *s, int64_t c, int64_t on) {
  dnode *d = mapopt__vec_push(&s->deps, s->ctx);
  if (!d) {
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
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
 * atom or is an instance of the identical piece (§4.5). The earliest
 * estimated finish wins; ties go to (node, memory, instance). */
static int64_t best_source(sim_t *s, int64_t v, const mapopt_app_piece *want,
                           int64_t atom, int f, int64_t dst_mem,
                           int64_t bytes) {
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
    int64_t t = copy_estimate(s, in->mem, dst_mem, bytes);
    if (better_source(s, i, t, best, best_t)) {
      best = i;
      best_t = t;
    }
  }
  return best;
}

/* The reduction instance through which reducer op contributed (atom, f). */
static int64_t reducer_instance(sim_t *s, int64_t op, int64_t atom, int f,
                                int64_t *count) {
  const mapopt_app_op *o = &s->run->ops[op];
  for (size_t r = 0; r < o->nreqs; r++) {
    const mapopt_app_req *q = &o->reqs[r];
    if (q->priv != MAPOPT_PRIV_REDUCE || !((q->fields >> f) & 1u))
      continue;
    int64_t a = atom_index(q->piece, atom);
    if (a >= 0 && s->ops[op].inst && s->ops[op].inst[r] >= 0) {
      *count = q->piece->atoms[a].count;
      return s->ops[op].inst[r];
    }
  }
  return -1;
}

/* The copies a plan is building: one per source instance and kind. */
typedef struct copy_plan {
  int64_t op, r, dst;
  int64_t src[64];
  int kind[64];
  int64_t copy[64];
  int n;
  int64_t base_copies[64];
  int nbase;
} copy_plan;

static int64_t plan_copy(sim_t *s, copy_plan *p, int kind, int64_t src) {
  for (int i = 0; i < p->n; i++)
    if (p->src[i] == src && p->kind[i] == kind)
      return p->copy[i];
  int64_t c = new_copy(s, kind, src, p->dst, p->op, p->r);
  if (c >= 0 && p->n < 64) {
    p->src[p->n] = src;
    p->kind[p->n] = kind;
    p->copy[p->n++] = c;
  }
  return c;
}

static void add_waiter(sim_t *s, int64_t v, int64_t op, int64_t r) {
  hnode *w = mapopt__vec_push(&s->waiters, s->ctx);
  if (!w) {
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
    return;
  }
  w->inst = op * 64 + r; /* requirement positions are < 64 */
  w->next = s->wait_head[v];
  s->wait_head[v] = (int64_t)s->waiters.len - 1;
  s->ops[op].pending++;
}

static int64_t field_bytes(const sim_t *s, int64_t atom, int f) {
  return s->run->regions[s->run->atom_region[atom]].field_bytes[f];
}

/* Brings version v of (atom, f) into the plan's destination. Returns the
 * copy that delivers it (for dependences), or -1. */
static int64_t need_version(sim_t *s, copy_plan *p, int64_t atom, int f,
                            int64_t v, int64_t count, int depth) {
  sim_inst *dst = inst_at(s, p->dst);
  int64_t a = atom_index(dst->piece, atom);
  if (a < 0 || depth > 8)
    return -1;
  int64_t k = slot_of(s, dst, (size_t)a, f);
  if (dst->held[k] == v || dst->incoming[k] == v)
    return -1;
  const mapopt__version *ver = &s->dag.versions[v];
  int64_t bytes = count * field_bytes(s, atom, f);
  if (ver->kind == VER_FILL) {
    int64_t c = plan_copy(s, p, COPY_FILL, -1);
    if (c >= 0)
      copy_add_af(s, c, atom, f, v, bytes);
    return c;
  }
  int64_t src = best_source(s, v, dst->piece, atom, f, dst->mem, bytes);
  if (src >= 0) {
    int64_t c = plan_copy(s, p, -1, src);
    if (c >= 0)
      copy_add_af(s, c, atom, f, v, bytes);
    return c;
  }
  if (ver->kind != VER_REDUCTION)
    return -1; /* the data is nowhere (never materialized): nothing to move */
  if (s->fold_target[v] >= 0) {
    add_waiter(s, v, p->op, p->r);
    return -1;
  }
  /* This instance becomes the fold target: base first, then the folds. */
  s->fold_target[v] = p->dst;
  int64_t base = ver->base >= 0
                     ? need_version(s, p, atom, f, ver->base, count, depth + 1)
                     : -1;
  dst->incoming[k] = v;
  for (int64_t i = 0; i < ver->nred; i++) {
    int64_t rop = s->dag.reducers[ver->red_off + i];
    int64_t rc = 0;
    int64_t rinst = reducer_instance(s, rop, atom, f, &rc);
    if (rinst < 0)
      continue;
    int64_t c = plan_copy(s, p, COPY_FOLD, rinst);
    if (c < 0)
      return -1;
    copy_add_af(s, c, atom, f, v, rc * field_bytes(s, atom, f));
    s->fold_left[v]++;
    if (base >= 0)
      copy_depends(s, c, base);
  }
  if (s->fold_left[v] == 0) {
    /* No reducer left an instance (inner reducers map virtually): the
     * version is complete here at once, and readers waiting for it go on,
     * instead of waiting for folds that will never come. */
    hold(s, p->dst, atom, f, v);
    wake_waiters(s, v);
  }
  return -1;
}

static void release_user(sim_t *s, int64_t i);

/* Plans the copies of requirement r of op (§4.5), once it is mapped and its
 * data exists. Idempotent: what is held or in flight is not planned again. */
static void plan_copies(sim_t *s, int64_t op, int64_t r) {
  sim_op *o = &s->ops[op];
  if (!o->inst || o->inst[r] < 0)
    return;
  const mapopt_app_req *req = &s->run->ops[op].reqs[r];
  if (req->priv == MAPOPT_PRIV_WD || req->priv == MAPOPT_PRIV_REDUCE)
    return;
  int64_t q = s->dag.req_off[op] + r;
  const int64_t *need = &s->dag.need[s->dag.need_off[q]];
  copy_plan p = {.op = op, .r = r, .dst = o->inst[r]};
  const mapopt_app_piece *pc = req->piece;
  int64_t k = 0;
  for (size_t a = 0; a < pc->natoms; a++)
    for (int f = 0; f < MAPOPT_APP_MAX_FIELDS; f++) {
      if (!((req->fields >> f) & 1u))
        continue;
      int64_t v = need[k++];
      if (v >= 0)
        need_version(s, &p, pc->atoms[a].atom, f, v, pc->atoms[a].count, 0);
    }
  for (int i = 0; i < p.n; i++) {
    sim_copy *c = copy_at(s, p.copy[i]);
    if (c->after == 0)
      schedule(s, s->now, EV_COPY_READY, p.copy[i]);
  }
}

/* Reserves the ports of a copy whose prerequisites are done. */
static void copy_ready(sim_t *s, int64_t c) {
  sim_copy *cp = copy_at(s, c);
  int64_t bw = 1, lat = 0;
  int kind = cp->kind;
  if (kind == COPY_FILL) {
    fill_path(s, cp, &bw);
  } else {
    copy_path(s, cp, &bw, &lat);
    if (kind == COPY_FOLD)
      cp->kind = COPY_FOLD;
  }
  int64_t start = s->now;
  for (int i = 0; i < cp->nports; i++)
    if (s->ports[cp->ports[i]].free_at > start)
      start = s->ports[cp->ports[i]].free_at;
  cp->start_at = start;
  cp->end_at = start + mapopt__sim_copy_ns(cp->bytes, bw > 0 ? bw : 1, lat);
  for (int i = 0; i < cp->nports; i++)
    s->ports[cp->ports[i]].free_at = cp->end_at;
  schedule(s, cp->end_at, EV_COPY_DONE, c);
}

static void wake_waiters(sim_t *s, int64_t v) {
  int64_t w = s->wait_head[v];
  s->wait_head[v] = -1;
  while (w >= 0) {
    hnode n = MAPOPT__VEC_AT(&s->waiters, hnode, w);
    int64_t op = n.inst / 64, r = n.inst % 64;
    s->ops[op].pending--;
    plan_copies(s, op, r);
    try_ready(s, op);
    w = n.next;
  }
}

static void copy_done(sim_t *s, int64_t c) {
  sim_copy cp = *copy_at(s, c);
  for (int64_t k = cp.first_af; k >= 0;) {
    caf e = MAPOPT__VEC_AT(&s->copy_afs, caf, k);
    k = e.next;
    if (cp.kind != COPY_FOLD) {
      hold(s, cp.dst_inst, e.atom, e.field, e.version);
      inst_at(s, cp.dst_inst)->copied = cp.kind != COPY_FILL;
      continue;
    }
    sim_inst *src = inst_at(s, cp.src_inst);
    if (--src->fold_left <= 0)
      mem_release(s, cp.src_inst);
    if (--s->fold_left[e.version] == 0) {
      hold(s, cp.dst_inst, e.atom, e.field, e.version);
      wake_waiters(s, e.version);
    }
  }
  for (int64_t d = cp.dep_head; d >= 0;) {
    dnode n = MAPOPT__VEC_AT(&s->deps, dnode, d);
    sim_copy *dc = copy_at(s, n.copy);
    if (--dc->after == 0)
      schedule(s, s->now, EV_COPY_READY, n.copy);
    d = n.next;
  }
  if (cp.src_inst >= 0)
    release_user(s, cp.src_inst);
  release_user(s, cp.dst_inst);
  sim_op *o = &s->ops[cp.op];
  o->last_copy = c;
  o->pending--;
  try_ready(s, cp.op);
}

/* ---- instance users and collection ----------------------------------------
 */

/* Whether inst is the only holder of the newest version of some (atom,
 * field): such an instance is never collected (§4.7). */
static bool only_newest_holder(sim_t *s, int64_t i) {
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

static void release_user(sim_t *s, int64_t i) {
  sim_inst *in = inst_at(s, i);
  in->users--;
  in->last_use = s->now;
  if (in->users <= 0 && in->collect_pending && !in->freed)
    mem_release(s, i);
}

/* ---- issuing
 * ------------------------------------------------------------------ */

static int64_t util_start(sim_t *s, int64_t as, int64_t cost) {
  int64_t base = s->proc_base[as * PK_COUNT + PK_UTIL];
  int64_t n = s->proc_base[as * PK_COUNT + PK_UTIL + 1] - base;
  int64_t best = base;
  for (int64_t k = base; k < base + n; k++)
    if (s->procs[k].free_at < s->procs[best].free_at)
      best = k;
  if (n == 0)
    return s->now + cost;
  sim_proc *u = &s->procs[best];
  int64_t start = u->free_at > s->now ? u->free_at : s->now;
  u->free_at = start + cost;
  int64_t *job = mapopt__vec_push(&s->util_jobs, s->ctx);
  if (job) {
    job[0] = best;
    job[1] = start;
    job[2] = start + cost;
  }
  return start + cost;
}

static sim_ctx *ctx_of(sim_t *s, int64_t parent) {
  return &s->ctxs[parent < 0 ? 0 : s->plan->ctx_of_op[parent]];
}

static void issue_op(sim_t *s, int64_t op);
static bool place_single(sim_t *s, int64_t op);
static void place_index_launch(sim_t *s, int64_t first);

/*
 * Runs a context's body forward, within its window: each launch statement
 * is placed when the body reaches it (so the default round-robin follows
 * program order, §4.10), and its ops are issued once the runtime's launch
 * work on a UTIL processor ends (§4.1). The body does not wait for that
 * work, as a task's body does not wait for the runtime's analysis.
 */
static void ctx_issue(sim_t *s, int64_t parent) {
  sim_ctx *c = ctx_of(s, parent);
  int64_t window =
      s->m->runtime.window_ops > 0 ? s->m->runtime.window_ops : 1024;
  const mapopt_machine_runtime *rt = &s->m->runtime;
  while (!failed(s) && c->next >= 0 && c->outstanding < window) {
    int64_t op = c->next;
    const mapopt_app_op *o = &s->run->ops[op];
    /* Counted as the parent's children from here, so the parent cannot
     * complete while they are still being launched. */
    if (o->kind != MAPOPT_OP_TASK) {
      c->next = s->next_sib[op];
      c->outstanding++;
      if (parent >= 0)
        s->ops[parent].children_left++;
      issue_op(s, op);
      continue;
    }
    int64_t last = op;
    for (int64_t k = op; k >= 0 && s->run->ops[k].launch == o->launch &&
                         s->run->ops[k].kind == MAPOPT_OP_TASK;
         k = s->next_sib[k]) {
      last = k;
      c->outstanding++;
      if (parent >= 0)
        s->ops[parent].children_left++;
    }
    c->next = s->next_sib[last];
    if (o->is_index)
      place_index_launch(s, op);
    else
      place_single(s, op);
    int64_t cost = o->timing.traced ? rt->launch_traced_ns : rt->launch_ns;
    schedule(s, util_start(s, c->as, cost), EV_LAUNCHED, op);
  }
}

static void launched(sim_t *s, int64_t first) {
  const mapopt_app_op *o = &s->run->ops[first];
  for (int64_t op = first;
       op >= 0 && !failed(s) && s->run->ops[op].launch == o->launch &&
       s->run->ops[op].kind == MAPOPT_OP_TASK;
       op = s->next_sib[op])
    issue_op(s, op);
}

/* ---- mapping
 * ------------------------------------------------------------------ */

static const char *task_name(const sim_t *s, int64_t op) {
  return s->run->tasks[s->run->ops[op].task].name;
}

/* The processor kind of a task, selected once (§4.2 step 1). */
static int task_kind(sim_t *s, int task) {
  if (s->task_kind[task] != -1)
    return s->task_kind[task];
  char err[512];
  mapopt_proc_kind k;
  const mapopt_app_task *t = &s->run->tasks[task];
  if (mapopt_policy_select_kind(s->prog, t->name, t->variant_kinds,
                                s->opts->lenient_kinds, &k, err,
                                sizeof err) != MAPOPT_OK) {
    sim_error(s, MAPOPT_SIM_NO_VARIANT, "%s", err);
    s->task_kind[task] = -2;
    return -2;
  }
  s->task_kind[task] = (int)k;
  return (int)k;
}

static int variant_of(const sim_t *s, int task, int kind) {
  const mapopt_app_task *t = &s->run->tasks[task];
  for (int v = 0; v < t->nvariants; v++)
    if ((int)t->variants[v].kind == kind)
      return v;
  return 0;
}

static void set_ref(sim_t *s, int64_t op, int kind, int64_t proc,
                    const mapopt_task_ref *parent) {
  const mapopt_app_op *o = &s->run->ops[op];
  sim_op *so = &s->ops[op];
  so->kind = kind;
  so->proc = proc;
  so->as = s->procs[proc].as;
  so->variant = variant_of(s, o->task, kind);
  if (s->plan->ctx_of_op[op] > 0) /* it will be a parent */
    ctx_of(s, op)->ref = (mapopt_task_ref){
        task_name(s, op),
        o->is_index,
        o->dims,
        o->point,
        o->extents,
        {(mapopt_proc_kind)kind, s->procs[proc].as, s->procs[proc].local},
        parent};
}

static const mapopt_task_ref *parent_ref(sim_t *s, int64_t op,
                                         const mapopt_task_ref *main_ref) {
  int64_t p = s->run->ops[op].parent;
  return p >= 0 ? &ctx_of(s, p)->ref : main_ref;
}

/* Places every point of an index launch (index placement depends only on
 * the policy), then applies the back-pressure rule of §4.8. */
static void place_index_launch(sim_t *s, int64_t first) {
  const mapopt_app_op *f = &s->run->ops[first];
  int kind = task_kind(s, f->task);
  if (kind < 0)
    return;
  int cls = proc_cls((mapopt_proc_kind)kind);
  static const mapopt_task_ref main_ref = {
      "main", false, 0, NULL, NULL, {MAPOPT_PROC_CPU, 0, 0}, NULL};
  int64_t limit = s->task_limit[f->task];
  int64_t *count = NULL;
  if (limit > 0 && !s->opts->no_backpressure_errors)
    count = mapopt__arena_zalloc(&s->arena, (size_t)s->nprocs * 8);
  for (int64_t op = first; op >= 0 && s->run->ops[op].launch == f->launch &&
                           s->run->ops[op].kind == MAPOPT_OP_TASK;
       op = s->next_sib[op]) {
    const mapopt_app_op *o = &s->run->ops[op];
    mapopt_map_answer ans;
    size_t from = mapopt_diags_count(s->diags);
    mapopt_status st = mapopt_policy_index_map(
        s->prog, task_name(s, op), o->dims, o->point, o->extents,
        (mapopt_proc_kind)kind, &ans, s->diags);
    if (st == MAPOPT_EMAP) {
      dsl_error(s, class_of(s->diags, from), from);
      return;
    }
    if (st != MAPOPT_OK) {
      sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
      return;
    }
    int64_t node, local;
    if (ans.kind == MAPOPT_MAP_UNSPECIFIED)
      mapopt_policy_default_index_place(o->dims, o->point, o->extents, s->nas,
                                        procs_per_as(s, cls), &node, &local);
    else {
      node = ans.points[0].node;
      local = ans.points[0].proc;
    }
    int64_t proc = node < s->nas ? proc_id(s, node, cls, local) : -1;
    if (proc < 0) {
      sim_error(s, MAPOPT_SIM_INDEX,
                "Slice processor index out of bound! %" PRId64 " >= %" PRId64,
                local, procs_per_as(s, cls));
      return;
    }
    set_ref(s, op, kind, proc, parent_ref(s, op, &main_ref));
    if (count && ++count[proc] > limit) {
      sim_error(s, MAPOPT_SIM_BACKPRESSURE,
                "Assertion 'event.exists()' failed");
      return;
    }
  }
}

/* Places a single task (§4.2 step 2, DSL.md §4.7). */
static bool place_single(sim_t *s, int64_t op) {
  const mapopt_app_op *o = &s->run->ops[op];
  int kind = task_kind(s, o->task);
  if (kind < 0)
    return false;
  int cls = proc_cls((mapopt_proc_kind)kind);
  static const mapopt_task_ref main_ref = {
      "main", false, 0, NULL, NULL, {MAPOPT_PROC_CPU, 0, 0}, NULL};
  const mapopt_task_ref *parent = parent_ref(s, op, &main_ref);
  int64_t as = o->parent >= 0 ? s->ops[o->parent].as : 0;
  if (procs_per_as(s, cls) == 0) {
    sim_error(s, MAPOPT_SIM_NO_VARIANT,
              "Invalid policy: task %s requested %s, but has no valid task "
              "variant for the kind",
              task_name(s, op), mapopt_shape_proc_name(kind));
    return false;
  }
  mapopt_task_ref self = {task_name(s, op),
                          false,
                          0,
                          NULL,
                          NULL,
                          {(mapopt_proc_kind)kind, as, 0},
                          parent};
  mapopt_map_answer ans;
  mapopt_proc_point set[64];
  size_t from = mapopt_diags_count(s->diags);
  mapopt_status st = mapopt_policy_single_map(
      s->prog, &self, (mapopt_proc_kind)kind, &ans, set, 64, s->diags);
  if (st == MAPOPT_EMAP) {
    dsl_error(s, class_of(s->diags, from), from);
    return false;
  }
  if (st != MAPOPT_OK) {
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
    return false;
  }
  int64_t local = 0;
  if (ans.kind == MAPOPT_MAP_UNSPECIFIED) {
    if (o->parent >= 0) {
      int64_t *rr = &s->rr[as * 3 + (cls == PK_GPU   ? 1
                                     : cls == PK_OMP ? 2
                                                     : 0)];
      local = (*rr)++ % procs_per_as(s, cls);
    }
  } else {
    size_t n = ans.npoints < 64 ? ans.npoints : 64;
    if (ans.kind == MAPOPT_MAP_POINT)
      set[0] = ans.points[0];
    size_t best = 0;
    for (size_t i = 0; i < n; i++) {
      if (set[i].node != as) {
        sim_error(s, MAPOPT_SIM_INDEX,
                  "Assertion failed: single task must stay on its parent's "
                  "node\n%s: note: while mapping task '%s' with '%s'",
                  mapopt_diags_count(s->diags) ? "mapper" : "mapper",
                  task_name(s, op), ans.function ? ans.function : "?");
        return false;
      }
      int64_t pi = proc_id(s, as, cls, set[i].proc);
      int64_t pb = proc_id(s, as, cls, set[best].proc);
      if (pi >= 0 && pb >= 0 && s->procs[pi].assigned < s->procs[pb].assigned)
        best = i;
    }
    local = set[best].proc;
  }
  int64_t proc = proc_id(s, as, cls, local);
  if (proc < 0) {
    sim_error(s, MAPOPT_SIM_INDEX,
              "Slice processor index out of bound! %" PRId64 " >= %" PRId64,
              local, procs_per_as(s, cls));
    return false;
  }
  set_ref(s, op, kind, proc, parent);
  return true;
}

static void admit(sim_t *s, int64_t op);

static void try_mappable(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  if (failed(s) || !o->issued || o->state != OS_ISSUED || o->preds_unmapped > 0)
    return;
  const mapopt_app_op *ao = &s->run->ops[op];
  o->state = OS_MAPPABLE;
  o->mappable_at = s->now;
  if (ao->kind != MAPOPT_OP_TASK) {
    o->state = OS_ADMITTED;
    schedule(s, s->now, EV_MAPPED, op);
    return;
  }
  if (o->proc < 0)
    return;
  int64_t limit = s->task_limit[ao->task];
  if (limit > 0) {
    int64_t key = ao->task * s->nprocs + o->proc;
    if (s->limit_count[key] >= limit) {
      o->cause = CAUSE_BACKPRESSURE;
      if (mapopt__heap_push(&s->limit_wait[key], s->ctx, op, EV(0, op)) !=
          MAPOPT_OK)
        sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
      return;
    }
    s->limit_count[key]++;
  }
  admit(s, op);
}

/* Charges the mapping work on a UTIL processor of the mapping address
 * space (§4.1). */
static void admit(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  sim_ctx *c = ctx_of(s, ao->parent);
  o->state = OS_ADMITTED;
  const mapopt_machine_runtime *rt = &s->m->runtime;
  int64_t cost = ao->timing.traced ? rt->map_traced_ns : rt->map_ns;
  int64_t map_as = c->replicated ? o->as : c->as;
  if (!c->replicated && o->as != c->as)
    cost += o->as / s->ranks == c->as / s->ranks
                ? rt->ipc_lat_ns
                : s->m->channels[MAPOPT_CHAN_NETWORK].lat_ns;
  schedule(s, util_start(s, map_as, cost), EV_MAPPED, op);
}

static uint64_t instance_fields(const sim_t *s, const mapopt_app_req *r) {
  if (s->opts->instance_fields_requested)
    return r->fields;
  return region_mask(&s->run->regions[r->piece->region]);
}

/* The policy's answers for one requirement of one task on one kind. Every
 * point of a launch asks the same questions, so they are asked once: one
 * slot per (task, requirement position, kind), remembering which names
 * it answered for. */
struct req_policy {
  const char *const *names; /* the requirement's names array answered */
  size_t nnames;
  mapopt_mem_kind mem;
  mapopt_layout layout;
  bool collect;
};

/* Whether the cached answer was for these names (the run may give each op
 * its own copy of the same names). */
static bool same_names(const req_policy *v, const mapopt_app_req *req) {
  if (v->names == req->names)
    return true;
  for (size_t i = 0; i < req->nnames; i++)
    if (v->names[i] != req->names[i] && strcmp(v->names[i], req->names[i]))
      return false;
  return true;
}

enum { POLICY_WAYS = 4 }; /* launches of one task with different names */

static const req_policy *req_decision(sim_t *s, int task, size_t r,
                                      const mapopt_app_req *req, int kind) {
  size_t slot =
      (((size_t)task * 64 + r) * MAPOPT_PROC_KIND_COUNT + (size_t)kind) *
      POLICY_WAYS;
  req_policy *ways = &s->policy_cache[slot];
  for (int w = 0; w < POLICY_WAYS; w++)
    if (ways[w].names && ways[w].nnames == req->nnames &&
        same_names(&ways[w], req))
      return &ways[w];
  /* A miss: fill an empty way, else replace in turn. */
  int w = 0;
  while (w < POLICY_WAYS && ways[w].names)
    w++;
  if (w == POLICY_WAYS)
    w = (int)(s->policy_evict++ % POLICY_WAYS);
  req_policy *v = &ways[w];
  const char *tn = s->run->tasks[task].name;
  mapopt_region_keys keys = {req->names, req->nnames, r};
  v->names = req->names;
  v->nnames = req->nnames;
  v->mem =
      mapopt_policy_select_memory(s->prog, tn, &keys, (mapopt_proc_kind)kind);
  mapopt_policy_resolve_layout(s->prog, tn, &keys, v->mem,
                               (mapopt_proc_kind)kind, s->run->default_c_order,
                               &v->layout);
  v->collect = mapopt_policy_collect(s->prog, tn, &keys);
  return v;
}

/* Allocates the instances of a mapped task (§4.2 steps 3-4, §4.4). */
static bool map_instances(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  const mapopt_app_task *t = &s->run->tasks[ao->task];
  o->inst = mapopt__arena_alloc(&s->arena, (ao->nreqs ? ao->nreqs : 1) * 8);
  if (!o->inst) {
    sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
    return false;
  }
  const sim_proc *p = &s->procs[o->proc];
  for (size_t r = 0; r < ao->nreqs; r++) {
    o->inst[r] = -1;
    const mapopt_app_req *req = &ao->reqs[r];
    if (t->inner || req->fields == 0) /* no data: no instance */
      continue;
    const req_policy *pol = req_decision(s, ao->task, r, req, o->kind);
    if (!pol) {
      sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
      return false;
    }
    mapopt_mem_kind mk = pol->mem;
    if (mk == MAPOPT_MEM_VIRTUAL) {
      sim_error(s, MAPOPT_SIM_POLICY,
                "Invalid mapper output: virtual mapping requested for region "
                "requirement %zu of leaf task %s",
                r, t->name);
      return false;
    }
    int64_t mem = mem_for(s, p, mk);
    if (mem < 0 || !s->m->affinity[o->kind][mk].present) {
      mk = o->kind == MAPOPT_PROC_GPU ? MAPOPT_MEM_FBMEM : MAPOPT_MEM_SYSMEM;
      mem = mem_for(s, p, mk);
    }
    if (mem < 0) {
      sim_error(s, MAPOPT_SIM_MODEL,
                "no %s memory for processor %s %" PRId64 " of node %" PRId64,
                mapopt_shape_mem_name(mk),
                mapopt_shape_proc_name((mapopt_proc_kind)o->kind), p->local,
                p->node);
      return false;
    }
    mapopt_layout l = pol->layout;
    if (mk != pol->mem) /* the fallback memory: its own layout answer */ {
      mapopt_region_keys keys = {req->names, req->nnames, r};
      mapopt_policy_resolve_layout(s->prog, t->name, &keys, mk,
                                   (mapopt_proc_kind)o->kind,
                                   s->run->default_c_order, &l);
    }
    int64_t id;
    if (req->priv == MAPOPT_PRIV_REDUCE) {
      id = create_instance(s, op, (int64_t)r, mem, req->piece,
                           req->piece->region, req->fields, &l, true);
      if (id >= 0)
        inst_at(s, id)->fold_left =
            (int64_t)req->piece->natoms * __builtin_popcountll(req->fields);
    } else {
      id = find_instance(s, mem, req, &l);
      if (id < 0)
        id = create_instance(s, op, (int64_t)r, mem, req->piece,
                             req->piece->region, instance_fields(s, req), &l,
                             false);
    }
    if (id < 0)
      return false;
    sim_inst *in = inst_at(s, id);
    in->users++;
    in->last_use = s->now;
    o->inst[r] = id;
  }
  return true;
}

static void on_mapped(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  if (ao->kind == MAPOPT_OP_TASK && !map_instances(s, op))
    return;
  o->state = OS_MAPPED;
  o->mapped_at = s->now;
  if (o->proc >= 0)
    s->procs[o->proc].assigned++;
  for (int64_t k = s->succ_off[op]; k < s->succ_off[op + 1]; k++) {
    int64_t succ = s->succ[k];
    s->ops[succ].preds_unmapped--;
    try_mappable(s, succ);
    try_ready(s, succ); /* inner successors wait only for mapping */
  }
  for (size_t r = 0; r < ao->nreqs; r++)
    if (o->raw_left[r] == 0)
      plan_copies(s, op, (int64_t)r);
  try_ready(s, op);
}

/* ---- running --------------------------------------------------------------
 */

static void try_start(sim_t *s, int64_t proc);

static bool fence_preds_complete(const sim_t *s, int64_t op) {
  for (int64_t k = s->dag.pred_off[op]; k < s->dag.pred_off[op + 1]; k++) {
    int64_t p = s->dag.preds[k];
    if (s->run->ops[p].kind == MAPOPT_OP_FENCE &&
        s->ops[p].state != OS_COMPLETE)
      return false;
  }
  return true;
}

static void try_ready(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  if (failed(s) || o->state != OS_MAPPED || o->pending > 0)
    return;
  const mapopt_app_op *ao = &s->run->ops[op];
  bool inner = ao->kind == MAPOPT_OP_TASK && s->run->tasks[ao->task].inner;
  if (inner ? !fence_preds_complete(s, op) : o->preds_incomplete > 0)
    return;
  o->state = OS_READY;
  o->ready_at = s->now;
  const mapopt_machine_runtime *rt = &s->m->runtime;
  switch (ao->kind) {
  case MAPOPT_OP_TASK:
    if (mapopt__heap_push(&s->procs[o->proc].ready, s->ctx, s->now,
                          EV(0, op)) != MAPOPT_OK) {
      sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
      return;
    }
    try_start(s, o->proc);
    break;
  case MAPOPT_OP_FILL:
    o->state = OS_EXECUTED;
    o->start_at = o->end_at = s->now;
    op_complete(s, op);
    break;
  case MAPOPT_OP_FENCE:
    schedule(s, s->now + rt->fence_ns, EV_COMPLETE, op);
    break;
  case MAPOPT_OP_FUTURE_REDUCE:
    schedule(s, s->now + rt->future_ns, EV_COMPLETE, op);
    break;
  }
}

/* Checks the variant's layout requirements (§4.9): a violation is the
 * kernel's error when the task starts. */
static bool check_layout(sim_t *s, int64_t op) {
  const sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  const mapopt_app_variant *v = &s->run->tasks[ao->task].variants[o->variant];
  for (size_t k = 0; k < v->nrequires; k++) {
    const mapopt_app_layout_rule *rule = &v->requires[k];
    for (size_t r = 0; r < ao->nreqs && r < 64; r++) {
      if (!((rule->args >> r) & 1u) || o->inst[r] < 0)
        continue;
      const sim_inst *in = inst_at(s, o->inst[r]);
      bool single = __builtin_popcountll(in->fields) == 1;
      bool bad = (rule->c_order != MAPOPT_LAYOUT_UNSET &&
                  rule->c_order != in->layout.c_order) ||
                 (!single && rule->soa != MAPOPT_LAYOUT_UNSET &&
                  rule->soa != in->layout.soa);
      if (!bad)
        continue;
      if (rule->error == MAPOPT_LAYOUT_ERROR_DGEMM) {
        sim_error(s, MAPOPT_SIM_LAYOUT,
                  "** On entry to DGEMM parameter number 8 had an illegal "
                  "value");
      } else {
        sim_error(s, MAPOPT_SIM_LAYOUT,
                  "Assertion failed: stride does not match expected value.\n"
                  "[mapopt-sim] task %s, region requirement %zu (%s), layout "
                  "%s %s, on %s %" PRId64,
                  task_name(s, op), r,
                  ao->reqs[r].nnames ? ao->reqs[r].names[0] : "?",
                  in->layout.soa == MAPOPT_LAYOUT_YES ? "SOA" : "AOS",
                  in->layout.c_order == MAPOPT_LAYOUT_YES ? "C_order"
                                                          : "F_order",
                  mapopt_shape_proc_name((mapopt_proc_kind)o->kind),
                  s->procs[o->proc].local);
      }
      return false;
    }
  }
  return true;
}

/* The memory kind and layout factor of each requirement of a mapped op,
 * as the cost formula wants them. A requirement without fields has no
 * instance; it moves no bytes, so its processor's default memory stands
 * in. */
void mapopt__sim_cost_inputs(sim_t *s, int64_t op, mapopt_mem_kind *mems,
                             int64_t *ppm, size_t n) {
  const sim_op *o = &s->ops[op];
  for (size_t r = 0; r < n; r++) {
    if (o->inst[r] < 0) {
      mems[r] =
          o->kind == MAPOPT_PROC_GPU ? MAPOPT_MEM_FBMEM : MAPOPT_MEM_SYSMEM;
      ppm[r] = 1000000;
      continue;
    }
    const sim_inst *in = inst_at(s, o->inst[r]);
    mems[r] = s->mems[in->mem].kind;
    ppm[r] = mapopt__sim_layout_ppm(s->run, op, o->variant, (int)r, &in->layout,
                                    in->fields);
  }
}

static void start_task(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  sim_proc *p = &s->procs[o->proc];
  const mapopt_app_op *ao = &s->run->ops[op];
  const mapopt_app_task *t = &s->run->tasks[ao->task];
  o->state = OS_RUNNING;
  o->start_at = s->now;
  if (s->now > o->ready_at)
    o->cause = CAUSE_QUEUE;
  int64_t dur;
  if (t->inner) {
    dur = s->m->procs[o->kind].inner_overhead_ns;
  } else {
    if (!check_layout(s, op))
      return;
    mapopt_mem_kind mems[64];
    int64_t ppm[64];
    size_t n = ao->nreqs < 64 ? ao->nreqs : 64;
    mapopt__sim_cost_inputs(s, op, mems, ppm, n);
    mapopt__task_cost_in in = {s->m,
                               s->run,
                               op,
                               o->variant,
                               mems,
                               ppm,
                               (int64_t)(s->opts->noise * 1e6 + 0.5),
                               s->opts->seed};
    dur = mapopt__sim_task_ns(&in, NULL, NULL);
  }
  p->running = true;
  p->free_at = s->now + dur;
  schedule(s, s->now + dur, EV_TASK_END, op);
  if (t->inner) {
    /* The body is issued from this task's address space (§4.1). */
    sim_ctx *c = ctx_of(s, op);
    c->as = o->as;
    c->replicated = mapopt_policy_replicated(s->prog, t->name, false, s->nas);
    o->children_left++; /* held until the body has run */
    ctx_issue(s, op);
  }
}

static void try_start(sim_t *s, int64_t proc) {
  sim_proc *p = &s->procs[proc];
  if (failed(s) || p->running || p->free_at > s->now)
    return;
  mapopt__heap_item it;
  if (mapopt__heap_pop(&p->ready, &it))
    start_task(s, EV_ID(it.data));
}

/* Writers' instances hold the versions they produced (§4.5). */
static void publish_writes(sim_t *s, int64_t op) {
  const mapopt_app_op *ao = &s->run->ops[op];
  sim_op *o = &s->ops[op];
  for (int64_t k = s->vprod_off[op]; k < s->vprod_off[op + 1]; k++) {
    int64_t v = s->vprod[k];
    const mapopt__version *ver = &s->dag.versions[v];
    int64_t af = af_index(s, ver->atom, ver->field);
    if (ver->kind == VER_FILL) {
      if (s->newest[af] < v)
        s->newest[af] = v;
      continue;
    }
    for (size_t r = 0; r < ao->nreqs; r++) {
      const mapopt_app_req *req = &ao->reqs[r];
      if ((req->priv == MAPOPT_PRIV_RW || req->priv == MAPOPT_PRIV_WD) &&
          o->inst && o->inst[r] >= 0 && ((req->fields >> ver->field) & 1u) &&
          atom_index(req->piece, ver->atom) >= 0) {
        hold(s, o->inst[r], ver->atom, ver->field, v);
        inst_at(s, o->inst[r])->copied = false;
        break;
      }
    }
  }
}

static void task_end(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  sim_proc *p = &s->procs[o->proc];
  const mapopt_app_op *ao = &s->run->ops[op];
  p->running = false;
  p->assigned--;
  o->state = OS_EXECUTED;
  o->end_at = s->now;
  publish_writes(s, op);
  /* Instances: users, CollectMemory (§4.7). */
  for (size_t r = 0; r < ao->nreqs; r++) {
    if (!o->inst || o->inst[r] < 0)
      continue;
    const mapopt_app_req *req = &ao->reqs[r];
    const req_policy *pol = req_decision(s, ao->task, r, req, o->kind);
    /* CollectMemory untracks the instance now, unless it is the only
     * holder of the newest data (§4.7); it is freed when its last user is
     * done, and no later op reuses it. Only copies are collected: the
     * instance the data was written or filled in is its home, which the
     * mapper keeps (the expert's footprint of BENCHMARKS.md §6.4). */
    if (req->priv == MAPOPT_PRIV_RO && pol && pol->collect &&
        inst_at(s, o->inst[r])->copied && !only_newest_holder(s, o->inst[r]))
      inst_at(s, o->inst[r])->collect_pending = true;
    release_user(s, o->inst[r]);
  }
  /* InstanceLimit: the next waiting op of this task on this processor. */
  int64_t limit = s->task_limit[ao->task];
  if (limit > 0) {
    int64_t key = ao->task * s->nprocs + o->proc;
    s->limit_count[key]--;
    mapopt__heap_item it;
    if (mapopt__heap_pop(&s->limit_wait[key], &it)) {
      s->limit_count[key]++;
      admit(s, EV_ID(it.data));
    }
  }
  if (s->run->tasks[ao->task].inner) {
    if (--o->children_left == 0)
      op_complete(s, op);
  } else {
    op_complete(s, op);
  }
  try_start(s, o->proc);
}

static void op_complete(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  const mapopt_app_op *ao = &s->run->ops[op];
  o->state = OS_COMPLETE;
  o->complete_at = s->now;
  s->ops_done++;
  if (ao->kind == MAPOPT_OP_FILL)
    publish_writes(s, op);
  /* Consumers plan their copies first: a successor must not become ready
   * before the copies of the data this op produced are requested. */
  for (int64_t k = s->rawsucc_off[op]; k < s->rawsucc_off[op + 1]; k++) {
    int64_t q = s->rawsucc[k];
    int64_t cop = s->req_op[q];
    int64_t r = q - s->dag.req_off[cop];
    if (--s->ops[cop].raw_left[r] == 0 && s->ops[cop].state >= OS_MAPPED) {
      plan_copies(s, cop, r);
    }
  }
  for (int64_t k = s->succ_off[op]; k < s->succ_off[op + 1]; k++) {
    int64_t succ = s->succ[k];
    s->ops[succ].preds_incomplete--;
    s->ops[succ].last_pred = op;
    try_ready(s, succ);
  }
  sim_ctx *c = ctx_of(s, ao->parent);
  c->outstanding--;
  if (ao->parent >= 0) {
    sim_op *parent = &s->ops[ao->parent];
    if (--parent->children_left == 0 && parent->state == OS_EXECUTED)
      op_complete(s, ao->parent);
  }
  ctx_issue(s, ao->parent);
}

static void issue_op(sim_t *s, int64_t op) {
  sim_op *o = &s->ops[op];
  o->state = OS_ISSUED;
  o->issued = true;
  o->issued_at = s->now;
  try_mappable(s, op);
}

/* ---- setup
 * ------------------------------------------------------------------- */

/* The per-evaluation state (§7: only mapping results, instances, copies
 * and events). */
static mapopt_status setup(sim_t *s) {
  const mapopt_app_run *run = s->run;
  const mapopt_sim_plan *pl = s->plan;
  mapopt__arena *a = &s->arena;
  s->dag = pl->dag;
  s->succ_off = pl->succ_off;
  s->succ = pl->succ;
  s->rawsucc_off = pl->rawsucc_off;
  s->rawsucc = pl->rawsucc;
  s->req_op = pl->req_op;
  s->vprod_off = pl->vprod_off;
  s->vprod = pl->vprod;
  s->next_sib = pl->next_sib;
  s->af_off = pl->af_off;
  mapopt_status st = build_machine(s);
  if (st != MAPOPT_OK)
    return st;
  int64_t n = run->nops;
  /* Every field is set in the loop below: one pass over the ops. */
  s->ops = mapopt__arena_alloc(a, (size_t)(n ? n : 1) * sizeof *s->ops);
  s->ctxs = mapopt__arena_zalloc(a, (size_t)pl->nctx * sizeof *s->ctxs);
  s->task_kind =
      mapopt__arena_alloc(a, (size_t)(run->ntasks + 1) * sizeof(int));
  s->task_limit = mapopt__arena_alloc(a, (size_t)(run->ntasks + 1) * 8);
  s->rr = mapopt__arena_zalloc(a, (size_t)(s->nas * 3 + 1) * 8);
  s->limit_count =
      mapopt__arena_zalloc(a, (size_t)(run->ntasks * s->nprocs + 1) * 8);
  s->limit_wait = mapopt__arena_zalloc(
      a, (size_t)(run->ntasks * s->nprocs + 1) * sizeof(mapopt__heap));
  int64_t nv = s->dag.nversions;
  s->holder_head = mapopt__arena_alloc(a, (size_t)(nv + 1) * 8);
  s->fold_target = mapopt__arena_alloc(a, (size_t)(nv + 1) * 8);
  s->fold_left = mapopt__arena_zalloc(a, (size_t)(nv + 1) * 8);
  s->wait_head = mapopt__arena_alloc(a, (size_t)(nv + 1) * 8);
  s->newest = mapopt__arena_alloc(a, (size_t)(pl->naf + 1) * 8);
  if (!s->ops || !s->ctxs || !s->task_kind || !s->task_limit || !s->rr ||
      !s->limit_count || !s->limit_wait || !s->holder_head || !s->fold_target ||
      !s->wait_head || !s->newest)
    return MAPOPT_ENOMEM;
  for (int64_t v = 0; v < nv; v++)
    s->holder_head[v] = s->fold_target[v] = s->wait_head[v] = -1;
  for (int64_t k = 0; k < pl->naf; k++)
    s->newest[k] = -1;
  for (int t = 0; t < run->ntasks; t++) {
    s->task_kind[t] = -1;
    s->task_limit[t] =
        mapopt_policy_instance_limit(s->prog, run->tasks[t].name);
  }
  for (int64_t i = 0; i < pl->nctx; i++)
    s->ctxs[i].next = pl->ctx_first[i];
  s->ctxs[0].as = 0;
  s->ctxs[0].replicated =
      mapopt_policy_replicated(s->prog, "main", true, s->nas);
  for (int64_t i = 0; i < n; i++) {
    sim_op *o = &s->ops[i];
    *o = (sim_op){.proc = -1, .last_pred = -1, .last_copy = -1};
    o->preds_unmapped = o->preds_incomplete =
        s->dag.pred_off[i + 1] - s->dag.pred_off[i];
    o->raw_left =
        mapopt__arena_alloc(a, (run->ops[i].nreqs ? run->ops[i].nreqs : 1) * 8);
    if (!o->raw_left)
      return MAPOPT_ENOMEM;
    for (size_t r = 0; r < run->ops[i].nreqs; r++) {
      int64_t q = s->dag.req_off[i] + (int64_t)r;
      o->raw_left[r] = s->dag.raw_off[q + 1] - s->dag.raw_off[q];
    }
  }
  s->policy_cache = mapopt__arena_zalloc(
      a, (size_t)(run->ntasks * 64 * MAPOPT_PROC_KIND_COUNT * POLICY_WAYS + 1) *
             sizeof *s->policy_cache);
  if (!s->policy_cache)
    return MAPOPT_ENOMEM;
  for (int64_t k = 0; k < run->ntasks * s->nprocs; k++)
    mapopt__heap_init(&s->limit_wait[k]);
  return MAPOPT_OK;
}

/* The growable state, initialized before anything can fail so that
 * teardown always sees valid containers. */

/* Lends the workspace's containers to an evaluation, and takes them back
 * emptied: their memory serves the next evaluation. */
static void borrow(sim_t *s, const pooled_arena *pa) {
  s->insts = pa->insts;
  s->hpool = pa->hpool;
  s->waiters = pa->waiters;
  s->copies = pa->copies;
  s->copy_afs = pa->copy_afs;
  s->deps = pa->deps;
  s->util_jobs = pa->util_jobs;
  s->events = pa->events;
}

static void give_back(sim_t *s, pooled_arena *pa) {
  mapopt__vec *vs[] = {&s->insts,    &s->hpool, &s->waiters,  &s->copies,
                       &s->copy_afs, &s->deps,  &s->util_jobs};
  for (size_t i = 0; i < sizeof vs / sizeof vs[0]; i++)
    vs[i]->len = 0;
  s->events.len = 0;
  pa->insts = s->insts;
  pa->hpool = s->hpool;
  pa->waiters = s->waiters;
  pa->copies = s->copies;
  pa->copy_afs = s->copy_afs;
  pa->deps = s->deps;
  pa->util_jobs = s->util_jobs;
  pa->events = s->events;
}

static void teardown(sim_t *s) {
  for (int64_t i = 0; s->procs && i < s->nprocs; i++)
    mapopt__heap_destroy(&s->procs[i].ready, s->ctx);
  for (int64_t i = 0; s->mems && i < s->nmems; i++)
    mapopt__vec_destroy(&s->mems[i].insts, s->ctx);
  for (int64_t k = 0; s->limit_wait && k < (int64_t)s->run->ntasks * s->nprocs;
       k++)
    mapopt__heap_destroy(&s->limit_wait[k], s->ctx);
  mapopt__sb_destroy(&s->errtext);
  mapopt__sb_destroy(&s->log);
}

/* ---- the event loop
 * ---------------------------------------------------------- */

static void dispatch(sim_t *s, int type, int64_t id) {
  switch (type) {
  case EV_ISSUE:
    ctx_issue(s, id - 1);
    break;
  case EV_LAUNCHED:
    launched(s, id);
    break;
  case EV_MAPPED:
    on_mapped(s, id);
    break;
  case EV_COPY_READY:
    copy_ready(s, id);
    break;
  case EV_COPY_DONE:
    copy_done(s, id);
    break;
  case EV_TASK_END:
    task_end(s, id);
    break;
  case EV_COMPLETE:
    s->ops[id].state = OS_EXECUTED;
    op_complete(s, id);
    break;
  }
}

static void event_loop(sim_t *s) {
  int64_t max_events =
      s->opts->max_events > 0 ? s->opts->max_events : 1000000000;
  schedule(s, 0, EV_ISSUE, 0);
  mapopt__heap_item it;
  while (!failed(s) && mapopt__heap_pop(&s->events, &it)) {
    if (it.time > s->time_limit || s->nevents >= max_events) {
      s->now = it.time < s->time_limit ? it.time : s->time_limit;
      sim_error(s, MAPOPT_SIM_TIMEOUT, "simulated time limit exceeded (%g s)",
                (double)s->time_limit / 1e9);
      break;
    }
    s->now = it.time;
    s->nevents++;
    dispatch(s, EV_TYPE(it.data), EV_ID(it.data));
  }
  if (!failed(s) && s->ops_done < s->run->nops)
    sim_error(s, MAPOPT_SIM_DEADLOCK,
              "simulation deadlock: %" PRId64 " of %" PRId64
              " operations never completed (internal error)",
              s->run->nops - s->ops_done, s->run->nops);
}

mapopt_status
mapopt_sim_run_plan(mapopt_ctx *ctx, const mapopt_machine *machine,
                    const mapopt_sim_plan *plan, const mapopt_program *prog,
                    const mapopt_sim_options *opts, mapopt_sim_result **out) {
  static const mapopt_sim_options defaults;
  if (!ctx || !machine || !plan || !prog || !out)
    return MAPOPT_EINVAL;
  const mapopt_app_run *run = plan->run;
  if (!opts)
    opts = &defaults;
  struct timespec w0, w1;
  clock_gettime(CLOCK_MONOTONIC, &w0);
  sim_t s;
  memset(&s, 0, sizeof s);
  s.ctx = ctx;
  s.m = machine;
  s.run = run;
  s.plan = plan;
  s.prog = prog;
  mapopt_sim_plan *mplan = (mapopt_sim_plan *)plan; /* its pool only */
  pthread_mutex_lock(&mplan->lock);
  pooled_arena *pa = mplan->pool;
  if (pa)
    mplan->pool = pa->next;
  pthread_mutex_unlock(&mplan->lock);
  if (!pa) {
    pa = mapopt__malloc(ctx, sizeof *pa);
    if (!pa)
      return MAPOPT_ENOMEM;
    mapopt__arena_init(&pa->arena, ctx);
    mapopt__sim_workspace_init(pa);
  }
  s.opts = opts;
  s.time_limit = opts->time_limit_ns > 0 ? opts->time_limit_ns
                                         : (int64_t)3600 * 1000000000;
  s.arena = pa->arena;
  borrow(&s, pa);
  mapopt__vec_init(&s.mem_log, 3 * sizeof(int64_t));
  mapopt__sb_init(&s.errtext, ctx);
  mapopt__sb_init(&s.log, ctx);
  mapopt_sim_result *res = mapopt__calloc(ctx, 1, sizeof *res);
  mapopt_status st = res ? mapopt_diags_new(ctx, &s.diags) : MAPOPT_ENOMEM;
  if (st == MAPOPT_OK)
    st = setup(&s);
  if (st == MAPOPT_OK) {
    event_loop(&s);
    st = mapopt__sim_fill_result(&s, res);
  }
  if (st == MAPOPT_OK) {
    clock_gettime(CLOCK_MONOTONIC, &w1);
    res->sim_wall_us =
        (w1.tv_sec - w0.tv_sec) * 1000000 + (w1.tv_nsec - w0.tv_nsec) / 1000;
    res->error_text = s.errtext.len
                          ? mapopt__strndup(ctx, s.errtext.data, s.errtext.len)
                          : NULL;
    st = mapopt__sim_write_log(&s, res);
  }
  if (st == MAPOPT_OK && opts->trace_path)
    st = mapopt__sim_write_trace(&s, res, opts->trace_path);
  if (s.diags)
    mapopt_diags_free(s.diags);
  mapopt__vec_destroy(&s.mem_log, ctx);
  teardown(&s);
  give_back(&s, pa);
  mapopt__arena_reset(&s.arena);
  pa->arena = s.arena;
  pthread_mutex_lock(&mplan->lock);
  pa->next = mplan->pool;
  mplan->pool = pa;
  pthread_mutex_unlock(&mplan->lock);
  if (st != MAPOPT_OK) {
    mapopt_sim_result_free(ctx, res);
    return st;
  }
  *out = res;
  return MAPOPT_OK;
}

mapopt_status mapopt_sim_run(mapopt_ctx *ctx, const mapopt_machine *machine,
                             const mapopt_app_run *run,
                             const mapopt_program *prog,
                             const mapopt_sim_options *opts,
                             mapopt_sim_result **out) {
  mapopt_sim_plan *plan;
  mapopt_status st = mapopt_sim_plan_new(ctx, run, &plan);
  if (st != MAPOPT_OK)
    return st;
  st = mapopt_sim_run_plan(ctx, machine, plan, prog, opts, out);
  mapopt_sim_plan_free(plan);
  return st;
}
