/*
 * The machine of a StarPU run as the DSL sees it (include/mapopt/starpu.h):
 * reading the workers and memory nodes of the running StarPU, and turning
 * that description into the DSL's machine shape. The shape is built through
 * the DSL's own one-line form, so affinities (which memory kinds each
 * processor kind reaches) are exactly those of every other mapopt machine.
 */
#include <stdio.h>
#include <string.h>

#include "mapopt/starpu.h"

/* Workers of one StarPU type: their ids and memory nodes, capped at the
 * description's capacity. */
static int workers_of(enum starpu_worker_archtype type, unsigned count,
                      int *ids, int *nodes) {
  int n = count < MAPOPT_STARPU_MAX_WORKERS ? (int)count
                                            : MAPOPT_STARPU_MAX_WORKERS;
  for (int i = 0; i < n; i++) {
    ids[i] = starpu_worker_get_by_type(type, i);
    nodes[i] = (int)starpu_worker_get_memory_node((unsigned)ids[i]);
  }
  return n;
}

mapopt_status mapopt_starpu_machine_detect(int ranks,
                                           mapopt_starpu_machine *out) {
  if (ranks < 1 || !out)
    return MAPOPT_EINVAL;
  mapopt_starpu_machine m;
  memset(&m, 0, sizeof m);
  m.ranks = ranks;
  m.ncpus = workers_of(STARPU_CPU_WORKER, starpu_cpu_worker_get_count(),
                       m.cpu_worker, m.cpu_node);
  m.ngpus = workers_of(STARPU_CUDA_WORKER, starpu_cuda_worker_get_count(),
                       m.gpu_worker, m.gpu_node);
  int numa = starpu_memory_nodes_get_numa_count();
  m.nnuma = numa > 0 ? numa : 1;
  *out = m;
  return MAPOPT_OK;
}

mapopt_status mapopt_starpu_machine_shape(const mapopt_starpu_machine *m,
                                          mapopt_machine_shape *shape) {
  if (!m || !shape || m->ranks < 1 || m->nnuma < 1 || m->ncpus < 0 ||
      m->ngpus < 0 || m->ncpus > MAPOPT_STARPU_MAX_WORKERS ||
      m->ngpus > MAPOPT_STARPU_MAX_WORKERS || m->ncpus + m->ngpus == 0)
    return MAPOPT_EINVAL;
  /* No RDMEM (StarPU has no registered-memory node); ZCMEM follows the GPUs
   * as in the one-line form's default. */
  char line[160], err[160];
  snprintf(line, sizeof line, "nodes=%d cpu=%d gpu=%d sockets=%d rdmem=0",
           m->ranks, m->ncpus, m->ngpus, m->nnuma);
  return mapopt_shape_parse(line, shape, err, sizeof err);
}
