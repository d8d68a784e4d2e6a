/*
 * Ports as shared links. A copy, fill or fold that is under way is a flow
 * through its ports (docs/sim.md, "Copies share the links they use": copy
 * engines, host links, peer links, the memory bus, the network interfaces); the
 * flows on a port share its bandwidth, max-min fairly as real links and
 * SimGrid's flow model do, and each flow is further capped by its own path's
 * bandwidth (a cross-socket peer copy, say). So eight copies over two ports
 * take about the most loaded port's time, instead of queueing behind each other
 * as whole-path reservations would make them.
 *
 * A copy first spends its latency, then becomes a flow. Whenever a flow
 * starts or ends, the rates of the flows connected to it through shared
 * ports are recomputed by progressive filling, and their end events are
 * scheduled again (an end event carries a generation number; a stale one
 * is ignored). Rates are integers in MB/s and the bytes left are kept in
 * MB/s x ns (thousandths of a byte), so the arithmetic is exact and runs
 * are reproducible. A connected set larger than FLOW_COMPONENT_MAX flows
 * is rebalanced only one hop around the change, the flows further away
 * keeping their rates: that bounds the cost of an event on machines with
 * thousands of flows in flight, at the price of leaving bandwidth unused
 * until those flows next change.
 */
#include "sim/engine.h"

enum { FLOW_COMPONENT_MAX = 256 };

/* The bandwidth of each port: the channel it serves. */
void mapopt__sim_ports_init(sim_t *s) {
  const mapopt_channel_params *ch = s->m->channels;
  int64_t by_gpu_port[5] = {
      ch[MAPOPT_CHAN_FB_LOCAL].bw_mbps,   /* ce */
      ch[MAPOPT_CHAN_FB_HOST].bw_mbps,    /* out */
      ch[MAPOPT_CHAN_FB_HOST].bw_mbps,    /* in */
      ch[MAPOPT_CHAN_FB_FB_PEER].bw_mbps, /* pout */
      ch[MAPOPT_CHAN_FB_FB_PEER].bw_mbps  /* pin */
  };
  int64_t by_node_port[3] = {ch[MAPOPT_CHAN_HOST_HOST].bw_mbps,
                             ch[MAPOPT_CHAN_NETWORK].bw_mbps,
                             ch[MAPOPT_CHAN_NETWORK].bw_mbps};
  for (int64_t k = 0; k < s->nports; k++) {
    int64_t j = k % s->ports_per_node;
    int64_t cap = j < 5 * s->gpus_per_node
                      ? by_gpu_port[j % 5]
                      : by_node_port[j - 5 * s->gpus_per_node];
    s->ports[k].cap = cap > 0 ? cap : 1;
    s->ports[k].head = -1;
  }
}

/* ---- port membership ----------------------------------------------------- */

static void link_flow(sim_t *s, int64_t c) {
  sim_copy *cp = copy_at(s, c);
  for (int i = 0; i < cp->nports; i++) {
    sim_port *p = &s->ports[cp->ports[i]];
    cp->port_next[i] = p->head;
    p->head = c;
    p->nflows++;
  }
}

/* The slot of port in copy c's port list. */
static int slot_of_port(const sim_copy *cp, int64_t port) {
  for (int i = 0; i < cp->nports; i++)
    if (cp->ports[i] == port)
      return i;
  return 0;
}

static void unlink_flow(sim_t *s, int64_t c) {
  sim_copy *cp = copy_at(s, c);
  for (int i = 0; i < cp->nports; i++) {
    sim_port *p = &s->ports[cp->ports[i]];
    int64_t *link = &p->head;
    while (*link >= 0 && *link != c) {
      sim_copy *o = copy_at(s, *link);
      link = &o->port_next[slot_of_port(o, cp->ports[i])];
    }
    if (*link == c)
      *link = cp->port_next[i];
    p->nflows--;
  }
}

/* ---- rebalancing --------------------------------------------------------- */

/* Adds to s->flow_set the flows on port that are not in it yet, the first
 * time port is walked in this gather; false on ENOMEM. */
static bool gather_port(sim_t *s, int64_t port) {
  sim_port *p = &s->ports[port];
  if (p->gather_stamp == s->flow_stamp)
    return true; /* its flows are in the set already */
  p->gather_stamp = s->flow_stamp;
  mapopt__vec *set = &s->flow_set;
  for (int64_t f = p->head; f >= 0;) {
    sim_copy *cp = copy_at(s, f);
    if (cp->mark != s->flow_stamp) {
      cp->mark = s->flow_stamp;
      int64_t *slot = mapopt__vec_push(set, s->ctx);
      if (!slot) {
        mapopt__sim_out_of_memory(s);
        return false;
      }
      *slot = f;
    }
    f = cp->port_next[slot_of_port(cp, port)];
  }
  return true;
}

/* Collects into s->flow_set the flows reachable from the given ports
 * through shared ports (at most FLOW_COMPONENT_MAX; past that, only those
 * on the given ports). Marks them with the current stamp. Each port is
 * walked once, and the search stops as soon as the set is too large, so
 * an event costs in proportion to FLOW_COMPONENT_MAX however many flows
 * the machine has in flight. */
static void gather(sim_t *s, const int64_t *ports, int nports) {
  mapopt__vec *set = &s->flow_set;
  for (int pass = 0; pass < 2; pass++) {
    set->len = 0;
    s->flow_stamp++;
    for (int i = 0; i < nports; i++)
      if (!gather_port(s, ports[i]))
        return;
    if (pass == 1)
      return; /* too large: one hop only */
    /* Breadth first over the ports of the flows found so far. */
    for (size_t k = 0; k < set->len && set->len <= FLOW_COMPONENT_MAX; k++) {
      sim_copy *cp = copy_at(s, MAPOPT__VEC_AT(set, int64_t, k));
      for (int i = 0; i < cp->nports && set->len <= FLOW_COMPONENT_MAX; i++)
        if (!gather_port(s, cp->ports[i]))
          return;
    }
    if (set->len <= FLOW_COMPONENT_MAX)
      return;
  }
}

/* Brings a flow's bytes left up to now at its current rate. */
static void progress(sim_t *s, sim_copy *cp) {
  int64_t done;
  if (mapopt__mul_ovf(cp->rate, s->now - cp->since, &done) || done > cp->left)
    done = cp->left;
  cp->left -= done;
  cp->since = s->now;
}

/* The share of port's capacity left to each of its unfrozen flows in this
 * round of filling (a division per port and round, not per flow). */
static int64_t port_share(sim_t *s, int64_t port) {
  sim_port *p = &s->ports[port];
  if (p->share_stamp != s->share_stamp) {
    p->share_stamp = s->share_stamp;
    p->share = p->left / p->unfrozen;
  }
  return p->share;
}

/*
 * Max-min fair rates for the flows of s->flow_set (marked with the
 * current stamp) by progressive filling: the ports' capacity less what
 * unmarked flows use is shared equally among the unfrozen flows on each
 * port; the tightest share (or a flow's own cap, if lower) freezes its
 * flows at that rate; repeat.
 */
static void fill(sim_t *s) {
  mapopt__vec *set = &s->flow_set;
  size_t n = set->len;
  for (size_t k = 0; k < n; k++) {
    sim_copy *cp = copy_at(s, MAPOPT__VEC_AT(set, int64_t, k));
    cp->frozen = false;
    for (int i = 0; i < cp->nports; i++) {
      sim_port *p = &s->ports[cp->ports[i]];
      if (p->fill_stamp != s->flow_stamp) {
        p->fill_stamp = s->flow_stamp;
        p->left = p->cap;
        p->unfrozen = 0;
        for (int64_t f = p->head; f >= 0;) { /* what outside flows use */
          sim_copy *o = copy_at(s, f);
          if (o->mark != s->flow_stamp)
            p->left -= o->rate;
          f = o->port_next[slot_of_port(o, cp->ports[i])];
        }
        if (p->left < 0)
          p->left = 0;
      }
      p->unfrozen++;
    }
  }
  for (size_t left = n; left > 0;) {
    int64_t level = INT64_MAX;
    s->share_stamp++; /* ports' shares are computed once per round */
    for (size_t k = 0; k < n; k++) {
      sim_copy *cp = copy_at(s, MAPOPT__VEC_AT(set, int64_t, k));
      if (cp->frozen)
        continue;
      if (cp->cap < level)
        level = cp->cap;
      for (int i = 0; i < cp->nports; i++) {
        int64_t share = port_share(s, cp->ports[i]);
        if (share < level)
          level = share;
      }
    }
    if (level < 1)
      level = 1; /* a flow always moves */
    size_t frozen = 0;
    for (size_t k = 0; k < n; k++) {
      sim_copy *cp = copy_at(s, MAPOPT__VEC_AT(set, int64_t, k));
      if (cp->frozen)
        continue;
      bool at_level = cp->cap <= level;
      for (int i = 0; i < cp->nports && !at_level; i++)
        at_level = port_share(s, cp->ports[i]) <= level;
      if (!at_level)
        continue;
      cp->frozen = true;
      cp->rate = level;
      frozen++;
    }
    for (size_t k = 0; k < n; k++) { /* charge this round's frozen flows */
      sim_copy *cp = copy_at(s, MAPOPT__VEC_AT(set, int64_t, k));
      if (!cp->frozen || cp->charged)
        continue;
      cp->charged = true;
      for (int i = 0; i < cp->nports; i++) {
        sim_port *p = &s->ports[cp->ports[i]];
        p->left = p->left > cp->rate ? p->left - cp->rate : 0;
        p->unfrozen--;
      }
    }
    left -= frozen;
  }
}

/* Recomputes the rates of the flows around the given ports and schedules
 * their ends again. */
static void rebalance(sim_t *s, const int64_t *ports, int nports) {
  gather(s, ports, nports);
  mapopt__vec *set = &s->flow_set;
  for (size_t k = 0; k < set->len; k++) {
    sim_copy *cp = copy_at(s, MAPOPT__VEC_AT(set, int64_t, k));
    progress(s, cp);
    cp->charged = false;
  }
  fill(s);
  for (size_t k = 0; k < set->len; k++) {
    int64_t c = MAPOPT__VEC_AT(set, int64_t, k);
    sim_copy *cp = copy_at(s, c);
    int64_t end = mapopt__sat_add(s->now, cp->left / cp->rate +
                                              (cp->left % cp->rate != 0));
    if (end == cp->end_at)
      continue;
    cp->end_at = end;
    cp->gen++;
    mapopt__sim_schedule(s, end, EV_COPY_DONE,
                         MAPOPT__SIM_COPY_EVENT(c, cp->gen));
  }
}

void mapopt__sim_flow_start(sim_t *s, int64_t c) {
  sim_copy *cp = copy_at(s, c);
  cp->since = s->now;
  cp->rate = cp->cap;
  cp->end_at = -1;
  link_flow(s, c);
  rebalance(s, cp->ports, cp->nports);
}

bool mapopt__sim_flow_end(sim_t *s, int64_t id) {
  int64_t c = MAPOPT__SIM_COPY_EVENT_COPY(id);
  sim_copy *cp = copy_at(s, c);
  if (cp->done ||
      (cp->gen & MAPOPT__SIM_GEN_MASK) != MAPOPT__SIM_COPY_EVENT_GEN(id) ||
      cp->end_at != s->now)
    return false; /* a stale end: the flow's rate changed since */
  cp->done = true;
  if (cp->flowing) {
    cp->flowing = false;
    cp->left = 0;
    unlink_flow(s, c);
    rebalance(s, cp->ports, cp->nports);
  }
  return true;
}

/* The rate a new flow of copy c (ports filled, path cap cap) would get
 * now: its cap, or its share of its busiest port. */
static int64_t flow_estimate(const sim_t *s, const sim_copy *c, int64_t cap) {
  int64_t rate = cap;
  for (int i = 0; i < c->nports; i++) {
    const sim_port *p = &s->ports[c->ports[i]];
    int64_t share = p->cap / (p->nflows + 1);
    if (share < rate)
      rate = share;
  }
  return rate > 0 ? rate : 1;
}

/* Estimated end of a copy from src into dst of bytes, for source choice. */
int64_t mapopt__sim_copy_estimate(sim_t *s, int64_t src_mem, int64_t dst_mem,
                                  int64_t bytes) {
  sim_copy c = {.src_mem = src_mem, .dst_mem = dst_mem};
  int64_t bw = 1, lat = 0;
  mapopt__sim_copy_path(s, &c, &bw, &lat);
  return mapopt__sat_add(
      s->now, mapopt__sim_copy_ns(bytes, flow_estimate(s, &c, bw), lat));
}
