/*
 * The machine model seen from outside: its `mapopt-machine/1` JSON text
 * (what `mapopt machine show` prints and `mapopt machine probe` writes) and
 * the shape the DSL uses for Machine(K) and point.has() (docs/machines.md,
 * "Naming a machine", ranks_per_node).
 *
 * The writer is the loader's inverse on every model the loader produces:
 * integer rates are printed as exact decimals in the file's units (550000
 * MB/s is "550", 12500 is "12.5"), so load(to_json(m)) equals m. A model
 * assembled by hand with values the file format cannot express (a capacity
 * that is not whole MiB, an OMP peak that is not threads x a per-core value)
 * is written to the nearest expressible value.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "machine/machine.h"

/* v / 1000 as the shortest exact decimal ("550", "12.5", "0.001"). */
static void put_milli(mapopt__strbuf *sb, int64_t v) {
  if (v < 0) {
    mapopt__sb_putc(sb, '-');
    v = -v;
  }
  int64_t frac = v % 1000;
  mapopt__sb_printf(sb, "%" PRId64, v / 1000);
  if (frac) {
    char digits[8];
    snprintf(digits, sizeof digits, "%03d", (int)frac);
    size_t n = 3;
    while (digits[n - 1] == '0')
      n--;
    mapopt__sb_putc(sb, '.');
    mapopt__sb_putn(sb, digits, n);
  }
}

static void put_string(mapopt__strbuf *sb, const char *s) {
  mapopt__sb_putc(sb, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\') {
      mapopt__sb_putc(sb, '\\');
      mapopt__sb_putc(sb, (char)*p);
    } else if (*p == '\n') {
      mapopt__sb_puts(sb, "\\n");
    } else if (*p == '\t') {
      mapopt__sb_puts(sb, "\\t");
    } else if (*p < 0x20) {
      mapopt__sb_printf(sb, "\\u%04x", *p);
    } else {
      mapopt__sb_putc(sb, (char)*p);
    }
  }
  mapopt__sb_putc(sb, '"');
}

/* Separator before the next member of an object or array. */
static void sep(mapopt__strbuf *sb, bool *first, const char *indent) {
  mapopt__sb_puts(sb, *first ? "\n" : ",\n");
  mapopt__sb_puts(sb, indent);
  *first = false;
}

static void put_proc(mapopt__strbuf *sb, const mapopt_machine *m, int kind,
                     bool *first) {
  const mapopt_machine_procs *p = &m->procs[kind];
  int64_t def_overhead = kind == MAPOPT_PROC_GPU   ? 10000
                         : kind == MAPOPT_PROC_OMP ? 8000
                                                   : 4000;
  /* A kind with no processors and default values says nothing. */
  if (!p->count && p->overhead_ns == def_overhead &&
      p->inner_overhead_ns == 20000 && !p->mflops_f64 && !p->mflops_f32 &&
      !p->mflops_f64_matrix && p->threads == 1)
    return;
  sep(sb, first, "    ");
  mapopt__sb_printf(sb, "\"%s\": {\"count\": %" PRId64,
                    mapopt_shape_proc_name((mapopt_proc_kind)kind), p->count);
  int64_t threads = p->threads > 0 ? p->threads : 1;
  if (kind == MAPOPT_PROC_OMP)
    mapopt__sb_printf(sb, ", \"threads\": %" PRId64, threads);
  if (p->mflops_f64) {
    mapopt__sb_puts(sb, ", \"gflops_f64\": ");
    put_milli(sb, (p->mflops_f64 + threads / 2) / threads);
  }
  if (p->mflops_f32) {
    mapopt__sb_puts(sb, ", \"gflops_f32\": ");
    put_milli(sb, (p->mflops_f32 + threads / 2) / threads);
  }
  if (p->mflops_f64_matrix) {
    mapopt__sb_puts(sb, ", \"gflops_f64_matrix\": ");
    put_milli(sb, p->mflops_f64_matrix);
  }
  mapopt__sb_printf(
      sb, ", \"overhead_ns\": %" PRId64 ", \"inner_overhead_ns\": %" PRId64,
      p->overhead_ns, p->inner_overhead_ns);
  if (p->cache_bytes != mapopt__machine_default_cache_kib(kind, threads) * 1024)
    mapopt__sb_printf(sb, ", \"cache_kib\": %" PRId64, p->cache_bytes / 1024);
  if (kind == MAPOPT_PROC_GPU && p->count > 0 && p->socket) {
    mapopt__sb_puts(sb, ", \"socket\": [");
    for (int64_t i = 0; i < p->count; i++)
      mapopt__sb_printf(sb, "%s%" PRId64, i ? ", " : "", p->socket[i]);
    mapopt__sb_putc(sb, ']');
  }
  mapopt__sb_putc(sb, '}');
}

/* The order edges are written in: GPU rows first, as the presets do. */
static const int proc_order[] = {MAPOPT_PROC_GPU, MAPOPT_PROC_CPU,
                                 MAPOPT_PROC_OMP};
static const int mem_order[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM,
                                MAPOPT_MEM_SYSMEM, MAPOPT_MEM_SOCKMEM,
                                MAPOPT_MEM_RDMEM};

mapopt_status mapopt_machine_to_json(mapopt_ctx *ctx, const mapopt_machine *m,
                                     char **text) {
  const mapopt__machine_impl *mi = mapopt__machine_cimpl_of(m);
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_puts(&sb, "{\n  \"format\": \"mapopt-machine/1\",\n  \"name\": ");
  put_string(&sb, m->name ? m->name : "machine");
  mapopt__sb_printf(&sb,
                    ",\n  \"nodes\": %" PRId64 ", \"ranks_per_node\": %" PRId64
                    ", \"sockets\": %" PRId64 ",\n  \"processors\": {",
                    m->nodes, m->ranks_per_node, m->sockets);
  bool first = true;
  put_proc(&sb, m, MAPOPT_PROC_CPU, &first);
  put_proc(&sb, m, MAPOPT_PROC_OMP, &first);
  put_proc(&sb, m, MAPOPT_PROC_GPU, &first);
  sep(&sb, &first, "    ");
  mapopt__sb_printf(&sb, "\"UTIL\": {\"count\": %" PRId64 "}\n  },",
                    m->util_count);

  mapopt__sb_puts(&sb, "\n  \"memories\": {");
  first = true;
  static const int mem_list[] = {MAPOPT_MEM_SYSMEM, MAPOPT_MEM_SOCKMEM,
                                 MAPOPT_MEM_ZCMEM, MAPOPT_MEM_RDMEM,
                                 MAPOPT_MEM_FBMEM};
  for (size_t i = 0; i < sizeof mem_list / sizeof mem_list[0]; i++) {
    int k = mem_list[i];
    if (!m->mems[k].present)
      continue;
    sep(&sb, &first, "    ");
    mapopt__sb_printf(
        &sb, "\"%s\": {\"per\": \"%s\", \"capacity_mib\": %" PRId64 "}",
        mapopt_shape_mem_name((mapopt_mem_kind)k),
        k == MAPOPT_MEM_SOCKMEM ? "socket"
        : k == MAPOPT_MEM_FBMEM ? "gpu"
                                : "node",
        (m->mems[k].capacity + (1 << 19)) >> 20);
  }
  mapopt__sb_puts(&sb, first ? "}," : "\n  },");

  mapopt__sb_puts(&sb, "\n  \"affinity\": [");
  first = true;
  for (size_t i = 0; i < sizeof proc_order / sizeof proc_order[0]; i++)
    for (size_t j = 0; j < sizeof mem_order / sizeof mem_order[0]; j++) {
      int p = proc_order[i], k = mem_order[j];
      const mapopt_affinity *a = &m->affinity[p][k];
      if (!a->present)
        continue;
      sep(&sb, &first, "    ");
      mapopt__sb_printf(&sb, "{\"proc\": \"%s\", \"mem\": \"%s\", \"bw_gbs\": ",
                        mapopt_shape_proc_name((mapopt_proc_kind)p),
                        mapopt_shape_mem_name((mapopt_mem_kind)k));
      put_milli(&sb, a->bw_mbps);
      mapopt__sb_printf(
          &sb, ", \"lat_ns\": %" PRId64 ", \"gather_mps\": ", a->lat_ns);
      put_milli(&sb, a->gather_per_ms);
      mapopt__sb_puts(&sb, ", \"atomic_mps\": ");
      put_milli(&sb, a->atomic_per_ms);
      mapopt__sb_putc(&sb, '}');
    }
  mapopt__sb_puts(&sb, first ? "]," : "\n  ],");

  mapopt__sb_puts(&sb, "\n  \"channels\": {");
  first = true;
  for (int c = 0; c < MAPOPT_CHAN_COUNT; c++) {
    const mapopt_channel_params *ch = &m->channels[c];
    if (!ch->present)
      continue;
    sep(&sb, &first, "    ");
    mapopt__sb_printf(
        &sb, "\"%s\": {\"bw_gbs\": ", mapopt_channel_name((mapopt_channel)c));
    put_milli(&sb, ch->bw_mbps);
    if (c == MAPOPT_CHAN_FB_FB_PEER && ch->cross_socket_bw_mbps) {
      mapopt__sb_puts(&sb, ", \"cross_socket_bw_gbs\": ");
      put_milli(&sb, ch->cross_socket_bw_mbps);
    }
    mapopt__sb_printf(&sb, ", \"lat_ns\": %" PRId64, ch->lat_ns);
    if (c == MAPOPT_CHAN_FB_FB_PEER)
      mapopt__sb_printf(&sb, ", \"peer_ports\": \"%s\"",
                        ch->peer_link ? "peer_link" : "host_link");
    if (c == MAPOPT_CHAN_NETWORK)
      mapopt__sb_printf(&sb, ", \"gpudirect\": %s",
                        ch->gpudirect ? "true" : "false");
    mapopt__sb_putc(&sb, '}');
  }
  mapopt__sb_puts(&sb, first ? "}," : "\n  },");

  const mapopt_machine_runtime *r = &m->runtime;
  mapopt__sb_printf(
      &sb,
      "\n  \"runtime\": {\"launch_ns\": %" PRId64
      ", \"launch_traced_ns\": %" PRId64 ", \"map_ns\": %" PRId64
      ", \"map_traced_ns\": %" PRId64 ",\n              \"fence_ns\": %" PRId64
      ", \"future_ns\": %" PRId64 ", \"ipc_lat_ns\": %" PRId64
      ", \"window_ops\": %" PRId64 "}",
      r->launch_ns, r->launch_traced_ns, r->map_ns, r->map_traced_ns,
      r->fence_ns, r->future_ns, r->ipc_lat_ns, r->window_ops);

  bool any_param = false;
  for (int k = 0; k < MAPOPT__MPARAM_COUNT; k++)
    any_param |= mi->param_max[k] > 0;
  if (any_param) {
    mapopt__sb_puts(&sb, ",\n  \"params\": {");
    first = true;
    for (int k = 0; k < MAPOPT__MPARAM_COUNT; k++)
      if (mi->param_max[k]) {
        mapopt__sb_printf(&sb, "%s\"%s\": {\"max\": %" PRId64 "}",
                          first ? "" : ", ", mapopt__machine_param_names[k],
                          mi->param_max[k]);
        first = false;
      }
    mapopt__sb_putc(&sb, '}');
  }
  if (mi->nsources) {
    mapopt__sb_puts(&sb, ",\n  \"sources\": {");
    first = true;
    for (size_t i = 0; i < mi->nsources; i++) {
      sep(&sb, &first, "    ");
      put_string(&sb, mi->sources[i].key);
      mapopt__sb_puts(&sb, ": ");
      put_string(&sb, mi->sources[i].value);
    }
    mapopt__sb_puts(&sb, "\n  }");
  }
  mapopt__sb_puts(&sb, "\n}\n");
  char *t = mapopt__text_take(&sb, NULL);
  if (!t)
    return MAPOPT_ENOMEM;
  *text = t;
  return MAPOPT_OK;
}

void mapopt_machine_shape_of(const mapopt_machine *m, mapopt_machine_shape *s) {
  memset(s, 0, sizeof *s);
  int64_t r = m->ranks_per_node > 0 ? m->ranks_per_node : 1;
  s->nodes = m->nodes * r;
  int64_t cpu = m->procs[MAPOPT_PROC_CPU].count;
  int64_t gpu = m->procs[MAPOPT_PROC_GPU].count;
  int64_t omp = m->procs[MAPOPT_PROC_OMP].count;
  /* A rank always has a CPU when the node has any, GPUs are split
   * evenly (r divides them), OMP groups only when there is one per rank. */
  s->procs[MAPOPT_PROC_GPU] = gpu / r;
  s->procs[MAPOPT_PROC_CPU] = cpu == 0 ? 0 : cpu / r > 1 ? cpu / r : 1;
  s->procs[MAPOPT_PROC_OMP] = omp >= r ? omp / r : 0;
  for (int p = 0; p < MAPOPT_PROC_KIND_COUNT; p++)
    for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
      if (m->affinity[p][k].present)
        s->affinity[p] |= 1u << k;
  unsigned all = 0;
  for (int p = 0; p < MAPOPT_PROC_KIND_COUNT; p++)
    all |= s->affinity[p];
  s->sockets = (all >> MAPOPT_MEM_SOCKMEM) & 1 ? m->sockets : 0;
}
