/*
 * The generated task graph shared by bench_sim and bench_simgrid: a 1-D
 * halo-exchange stencil (the pattern of apps/heat1d.json) with P pieces and
 * S time steps, block-mapped onto G GPUs.
 *
 * Per step t, two index launches of P points each:
 *   relax(t, i):   RW  cells tile i (E elements, fields u, v: 16 B each)
 *                  RO  the halo edges 2i-1 and 2i+2 published by the two
 *                      neighbours (H elements of 8 B each; none past the
 *                      ends -- the stencil is not periodic)
 *   publish(t, i): RO  cells tile i (16 * H bytes read)
 *                  WD  its own halo edges 2i and 2i+1
 * so the run has 2 * P * S point tasks (plus the two initial fills).
 *
 * The dependences that the logical analysis of the simulator derives
 * (and gen_preds lists, transitively reduced):
 *   relax(t, i)   <- publish(t-1, i)         WAR on tile i (same GPU)
 *                 <- publish(t-1, i-1), publish(t-1, i+1)
 *                                            RAW on the halos: 8 * H bytes
 *   publish(t, i) <- relax(t, i)             RAW on tile i (same GPU)
 *                 <- relax(t, i-1), relax(t, i+1)
 *                                            WAR on its own halos: no data
 * (relax(t-1, i) -> relax(t, i) and publish(t-1, i) -> publish(t, i) are
 * implied by the chains above.)
 *
 * Placement (the mapper below, and bench_simgrid's host choice): point i of
 * a launch of P points runs on GPU number i * G / P, GPUs numbered node by
 * node -- the block idiom of mappers/examples/block.map.
 */
#ifndef MAPOPT_BENCH_GEN_GRAPH_H
#define MAPOPT_BENCH_GEN_GRAPH_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/app.h"
#include "mapopt/core.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

typedef struct gen_graph {
  int64_t P; /* pieces (points per launch) */
  int64_t S; /* time steps */
  int64_t E; /* elements per tile */
  int64_t H; /* elements per halo edge */
  int64_t G; /* GPUs the pieces are block-mapped onto */
} gen_graph;

/* A graph of about `tasks` point tasks (2 * P * S of them) on G GPUs. The
 * number of pieces grows with the square root of the size, so both the
 * launch width and the number of steps grow. */
static inline gen_graph gen_graph_sized(int64_t tasks, int64_t G) {
  gen_graph g = {.E = 1 << 18, .H = 1024, .G = G};
  g.P = G * 4;
  while (2 * (g.P * 2) * (g.P * 2) / 16 <= tasks)
    g.P *= 2;
  g.S = (tasks + 2 * g.P - 1) / (2 * g.P);
  if (g.S < 1)
    g.S = 1;
  return g;
}

static inline int64_t gen_tasks(const gen_graph *g) {
  return 2 * g->P * g->S;
}

/* Task numbering, in program order (a topological order):
 * id = (2 * t + kind) * P + i, kind 0 = relax, 1 = publish. */
static inline int64_t gen_id(const gen_graph *g, int64_t t, int kind,
                             int64_t i) {
  return (2 * t + kind) * g->P + i;
}

static inline int64_t gen_gpu(const gen_graph *g, int64_t id) {
  return id % g->P * g->G / g->P;
}

/* The predecessors of task id and the bytes each sends it (0: an ordering
 * dependence only). Returns their number (at most 3). */
static inline int gen_preds(const gen_graph *g, int64_t id, int64_t pred[3],
                            int64_t bytes[3]) {
  int64_t i = id % g->P, tk = id / g->P, t = tk / 2;
  int kind = (int)(tk % 2), n = 0;
  if (kind == 0) {
    if (t == 0)
      return 0; /* fed by the fills */
    pred[n] = gen_id(g, t - 1, 1, i), bytes[n++] = 0;
    if (i > 0)
      pred[n] = gen_id(g, t - 1, 1, i - 1), bytes[n++] = 8 * g->H;
    if (i < g->P - 1)
      pred[n] = gen_id(g, t - 1, 1, i + 1), bytes[n++] = 8 * g->H;
  } else {
    pred[n] = gen_id(g, t, 0, i), bytes[n++] = 0;
    if (i > 0)
      pred[n] = gen_id(g, t, 0, i - 1), bytes[n++] = 0;
    if (i < g->P - 1)
      pred[n] = gen_id(g, t, 0, i + 1), bytes[n++] = 0;
  }
  return n;
}

/* The mapopt-app/1 model of the graph (malloc'ed, NUL-terminated). The
 * time-step loop has no warm-up, so every step is one of the S iterations. */
static inline char *gen_app_json(const gen_graph *g) {
  static const char fmt[] =
      "{\n"
      "  \"format\": \"mapopt-app/1\",\n"
      "  \"name\": \"bench1d\",\n"
      "  \"params\": {\"P\": %lld, \"E\": %lld, \"H\": %lld, \"steps\": %lld,"
      " \"warm\": 0},\n"
      "  \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"
      "  \"regions\": [\n"
      "    {\"name\": \"cells\", \"fields\": [[\"u\", 8], [\"v\", 8]],\n"
      "     \"atoms\": {\"groups\": [{\"group\": \"tile\", \"count\": \"P\","
      " \"elements\": \"E\"}]}},\n"
      "    {\"name\": \"edges\", \"fields\": [[\"u\", 8]],\n"
      "     \"atoms\": {\"groups\": [{\"group\": \"edge\", \"count\": \"2 * "
      "P\","
      " \"elements\": \"H\"}]}}\n"
      "  ],\n"
      "  \"partitions\": [\n"
      "    {\"name\": \"p_cells\", \"region\": \"cells\", \"kind\": \"group\","
      " \"group\": \"tile\"},\n"
      "    {\"name\": \"p_out\", \"region\": \"edges\", \"kind\": \"list\","
      " \"colors\": [\"P\"],\n"
      "     \"entries\": [{\"group\": \"edge\", \"atom\": \"2 * c0\"},"
      " {\"group\": \"edge\", \"atom\": \"2 * c0 + 1\"}]},\n"
      "    {\"name\": \"p_in\", \"region\": \"edges\", \"kind\": \"list\","
      " \"colors\": [\"P\"],\n"
      "     \"entries\": [{\"group\": \"edge\", \"atom\": \"c0 > 0 ? 2 * c0 - 1"
      " : -1\"},\n"
      "                 {\"group\": \"edge\", \"atom\": \"c0 < P - 1 ? 2 * c0 +"
      " 2 : -1\"}]}\n"
      "  ],\n"
      "  \"tasks\": [\n"
      "    {\"name\": \"relax\", \"variants\": [\n"
      "      {\"kind\": \"GPU\", \"flops\": \"5 * elems(0)\", \"precision\":"
      " \"f64\", \"flops_eff\": 0.5}]},\n"
      "    {\"name\": \"publish\", \"variants\": [{\"kind\": \"GPU\"}]}\n"
      "  ],\n"
      "  \"program\": [\n"
      "    {\"op\": \"fill\", \"region\": \"cells\", \"fields\": [\"u\","
      " \"v\"]},\n"
      "    {\"op\": \"fill\", \"region\": \"edges\", \"fields\": [\"u\"]},\n"
      "    {\"op\": \"loop\", \"var\": \"t\", \"count\": \"steps\", \"warmup\":"
      " \"warm\", \"timed\": true, \"traced\": true, \"body\": [\n"
      "      {\"op\": \"index\", \"task\": \"relax\", \"domain\": [\"P\"],"
      " \"args\": [\n"
      "        {\"part\": \"p_cells\", \"priv\": \"RW\", \"fields\": [\"u\","
      " \"v\"]},\n"
      "        {\"part\": \"p_in\", \"priv\": \"RO\", \"fields\": [\"u\"]}]},\n"
      "      {\"op\": \"index\", \"task\": \"publish\", \"domain\": [\"P\"],"
      " \"args\": [\n"
      "        {\"part\": \"p_cells\", \"priv\": \"RO\", \"fields\": [\"u\"],"
      " \"bytes\": \"16 * H\"},\n"
      "        {\"part\": \"p_out\", \"priv\": \"WD\", \"fields\":"
      " [\"u\"]}]}]}\n"
      "  ]\n"
      "}\n";
  size_t cap = sizeof fmt + 128;
  char *s = malloc(cap);
  if (!s)
    return NULL;
  snprintf(s, cap, fmt, (long long)g->P, (long long)g->E, (long long)g->H,
           (long long)g->S);
  return s;
}

/* Prints what failed with its diagnostics, and exits. */
static inline void gen_die(const char *prog, const char *what,
                           mapopt_diags *diags) {
  char line[1024];
  fprintf(stderr, "%s: %s failed\n", prog, what);
  for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
    mapopt_diag_format(mapopt_diags_get(diags, i), line, sizeof line);
    fprintf(stderr, "  %s\n", line);
  }
  exit(1);
}

/* The block mapper: everything on GPUs, data in framebuffer memory, point i
 * of a launch of P points on GPU i * G / P. */
static const char gen_mapper[] =
    "Task * GPU;\n"
    "Region * * GPU FBMEM;\n"
    "gpus = Machine(GPU);\n"
    "flat = gpus.merge(0, 1);\n"
    "def block(Task t) {\n"
    "    return flat[t.ipoint[0] * flat.size[0] / t.ispace[0]];\n"
    "}\n"
    "IndexTaskMap relax, publish block;\n";

/* Compiles the block mapper for app on machine m, or exits naming prog. */
static inline mapopt_program *
gen_compile_mapper(mapopt_ctx *ctx, const mapopt_machine *m,
                   const mapopt_app *app, const mapopt_app_run *run,
                   mapopt_diags *diags, const char *prog) {
  mapopt_machine_shape shape;
  mapopt_sim_shape(m, run, &shape);
  mapopt_dsl_options dopts = {.file = "block.map", .shape = &shape};
  mapopt_app_task_info(app, &dopts.tasks, &dopts.ntasks);
  mapopt_program *compiled;
  if (mapopt_dsl_compile(ctx, gen_mapper, strlen(gen_mapper), &dopts, diags,
                         &compiled) != MAPOPT_OK)
    gen_die(prog, "mapper", diags);
  return compiled;
}

#endif /* MAPOPT_BENCH_GEN_GRAPH_H */
