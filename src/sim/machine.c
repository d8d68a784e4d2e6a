/*
 * The engine's base (docs/sim.md, "How it models a run"): the concrete machine
 * a run executes on -- the processors of every address space (DSL kinds and
 * UTIL), the memories with their capacities, the copy ports of every node
 * -- and the classification of a copy into its channel, ports, bandwidth
 * and latency. Also the two primitives every other stage uses: recording
 * the first simulated error and queueing an event.
 *
 * It calls nothing else of the engine.
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include "sim/engine.h"

/* ---- errors and events --------------------------------------------------- */

void mapopt__sim_error(sim_t *s, mapopt_sim_error e, const char *fmt, ...) {
  if (failed(s))
    return;
  s->error = e;
  s->error_time = s->now;
  va_list ap;
  va_start(ap, fmt);
  mapopt__sb_vprintf(&s->errtext, fmt, ap);
  va_end(ap);
}

void mapopt__sim_out_of_memory(sim_t *s) {
  s->out_of_memory = true;
  mapopt__sim_error(s, MAPOPT_SIM_MODEL, "out of memory");
}

void mapopt__sim_schedule(sim_t *s, int64_t t, int type, int64_t id) {
  if (mapopt__heap_push(&s->events, s->ctx, t, EV(type, id)) != MAPOPT_OK)
    mapopt__sim_out_of_memory(s);
}

/* ---- building the concrete machine --------------------------------------- */

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

/* The memory of kind k that processor p uses, or -1 (docs/dsl.md, "How the
 * memory is chosen"): the table mem_for reads is built from this once per run.
 */
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

mapopt_status mapopt__sim_build_machine(sim_t *s) {
  const mapopt_machine *m = s->m;
  s->ranks = mapopt__sim_ranks(m, s->run);
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
        p->last_op = -1;
        p->evq_head = p->evq_tail = -1;
        p->gpu = c == PK_GPU ? p->rank * counts[PK_GPU] + q : -1;
        const mapopt_machine_procs *mp =
            c == PK_GPU ? &m->procs[MAPOPT_PROC_GPU] : NULL;
        p->socket = c == PK_GPU && mp->socket ? mp->socket[p->gpu] % sockets
                                              : q % sockets;
        mapopt__fifo_init(&p->ready);
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
  /* The names are the trace's thread names (docs/sim.md, "The trace"). */
  static const char *const gnames[] = {"copy engine", "host link out",
                                       "host link in", "peer link out",
                                       "peer link in"};
  for (int64_t node = 0; node < m->nodes; node++) {
    sim_port *base = &s->ports[node * s->ports_per_node];
    for (int64_t g = 0; g < s->gpus_per_node; g++)
      for (int k = 0; k < 5; k++) {
        base[g * 5 + k].node = node;
        snprintf(base[g * 5 + k].name, sizeof base->name, "GPU %" PRId64 " %s",
                 g, gnames[k]);
      }
    int64_t o = 5 * s->gpus_per_node;
    static const char *const nnames[] = {"memory bus", "network out",
                                         "network in"};
    for (int k = 0; k < 3; k++) {
      base[o + k].node = node;
      snprintf(base[o + k].name, sizeof base->name, "%s", nnames[k]);
    }
  }
  return MAPOPT_OK;
}

/* ---- ports and copy paths ------------------------------------------------ */

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
void mapopt__sim_copy_path(const sim_t *s, sim_copy *c, int64_t *bw,
                           int64_t *lat) {
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
void mapopt__sim_fill_path(const sim_t *s, sim_copy *c, int64_t *bw) {
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

/* ---- runtime work on UTIL processors ------------------------------------- */

/*
 * A UTIL processor does its work in the order it was given, so the events
 * of its work end in (time, sequence) order: they wait in its queue, and
 * only the first is in the event heap, which stays as small as the number
 * of processors and copies in flight instead of holding every mapping the
 * window lets ahead (most of its items). The events pop in the order a
 * heap of all of them would give: each keeps the sequence number it took
 * when it was scheduled.
 */
static void util_event_queue(sim_t *s, int64_t proc, int64_t t, int type,
                             int64_t op) {
  sim_proc *u = &s->procs[proc];
  uint64_t seq = mapopt__heap_take_seq(&s->events);
  int64_t e = s->util_free;
  if (e >= 0) {
    s->util_free = MAPOPT__VEC_AT(&s->util_events, util_event, e).next;
  } else if (mapopt__vec_push(&s->util_events, s->ctx)) {
    e = (int64_t)s->util_events.len - 1;
  } else {
    mapopt__sim_out_of_memory(s);
    return;
  }
  MAPOPT__VEC_AT(&s->util_events, util_event, e) =
      (util_event){t, seq, EV(type, op), -1};
  if (u->evq_tail >= 0) {
    MAPOPT__VEC_AT(&s->util_events, util_event, u->evq_tail).next = e;
    u->evq_tail = e;
    return;
  }
  u->evq_head = u->evq_tail = e;
  if (mapopt__heap_push_keyed(&s->events, s->ctx, t, seq,
                              EV(EV_UTIL_NEXT, proc)) != MAPOPT_OK)
    mapopt__sim_out_of_memory(s);
}

mapopt__heap_item mapopt__sim_util_next(sim_t *s, int64_t proc) {
  sim_proc *u = &s->procs[proc];
  int64_t e = u->evq_head;
  util_event *ev = &MAPOPT__VEC_AT(&s->util_events, util_event, e);
  mapopt__heap_item it = {ev->time, ev->seq, ev->data};
  u->evq_head = ev->next;
  ev->next = s->util_free;
  s->util_free = e;
  if (u->evq_head < 0) {
    u->evq_tail = -1;
  } else {
    const util_event *next =
        &MAPOPT__VEC_AT(&s->util_events, util_event, u->evq_head);
    if (mapopt__heap_push_keyed(&s->events, s->ctx, next->time, next->seq,
                                EV(EV_UTIL_NEXT, proc)) != MAPOPT_OK)
      mapopt__sim_out_of_memory(s);
  }
  return it;
}

void mapopt__sim_util_work(sim_t *s, int64_t as, int64_t cost, int64_t op,
                           int what, int type) {
  int64_t base = s->proc_base[as * PK_COUNT + PK_UTIL];
  int64_t n = s->proc_base[as * PK_COUNT + PK_UTIL + 1] - base;
  int64_t best = base;
  for (int64_t k = base; k < base + n; k++)
    if (s->procs[k].free_at < s->procs[best].free_at)
      best = k;
  if (n == 0) {
    mapopt__sim_schedule(s, mapopt__sat_add(s->now, cost), type, op);
    return;
  }
  sim_proc *u = &s->procs[best];
  int64_t start = u->free_at > s->now ? u->free_at : s->now;
  u->free_at = mapopt__sat_add(start, cost);
  util_job *job = mapopt__vec_push(&s->util_jobs, s->ctx);
  if (job)
    *job = (util_job){best, start, u->free_at, op, what};
  util_event_queue(s, best, u->free_at, type, op);
}
