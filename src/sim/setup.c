/*
 * Setting up a simulation: an app instantiated for the machine it is
 * simulated on, and the one rule for the rank split a run uses
 * (docs/machines.md, "Naming a machine"): the split the app asks for (DISTAL's
 * one rank per GPU), else the machine's. The machine itself is never changed:
 * the engine, the costs and the mappers' shape all take the split from
 * mapopt__sim_ranks.
 */
#include <inttypes.h>

#include "sim/sim.h"

int64_t mapopt__sim_ranks(const mapopt_machine *machine,
                          const mapopt_app_run *run) {
  int64_t r =
      run->ranks_per_node > 0 ? run->ranks_per_node : machine->ranks_per_node;
  return r > 0 ? r : 1;
}

/*
 * What simulating a run takes in memory, the run itself, its plan and the
 * engine's state together, estimated from its size: bytes per requirement
 * and per (atom, field) that requirements touch. The two rates are fitted
 * to circuit, stencil and pennant at their lassen sizes (bench/bench_scale:
 * 1750 to 3500 bytes per op), which they predict within 7%; a mapping that
 * makes many more instances or copies than those experts takes more.
 */
enum { BYTES_PER_REQ = 350, BYTES_PER_TOUCH = 100 };

static int64_t estimate_bytes(const mapopt_app_run *run) {
  int64_t reqs = 0, touches = 0;
  for (int64_t i = 0; i < run->nops; i++) {
    const mapopt_app_op *o = &run->ops[i];
    reqs += (int64_t)o->nreqs;
    for (size_t r = 0; r < o->nreqs; r++)
      touches = mapopt__sat_add(
          touches, mapopt__sat_mul((int64_t)o->reqs[r].piece->natoms,
                                   __builtin_popcountll(o->reqs[r].fields)));
  }
  return mapopt__sat_add(mapopt__sat_mul(reqs, BYTES_PER_REQ),
                         mapopt__sat_mul(touches, BYTES_PER_TOUCH));
}

/* Refuses a run whose simulation would take more than the memory limit,
 * before its plan and the engine's state are allocated. */
static mapopt_status check_bytes(const mapopt_app *app,
                                 const mapopt_app_options *opts,
                                 const mapopt_app_run *run,
                                 mapopt_diags *diags) {
  int64_t limit = opts && opts->max_bytes > 0 ? opts->max_bytes
                                              : MAPOPT_APP_DEFAULT_MAX_BYTES;
  int64_t need = estimate_bytes(run);
  if (need <= limit)
    return MAPOPT_OK;
  return mapopt_diags_add(
             diags, MAPOPT_SEV_ERROR, "", mapopt_app_name(app), 0, 0,
             "refusing to simulate: the run has %" PRId64
             " ops, and simulating it would take about %.1f GiB of memory, "
             "more than the limit of %.1f GiB (raise options max_bytes)",
             run->nops, (double)need / (1 << 30),
             (double)limit / (1 << 30)) == MAPOPT_OK
             ? MAPOPT_EINVAL
             : MAPOPT_ENOMEM;
}

mapopt_status mapopt_sim_instantiate(const mapopt_machine *machine,
                                     const mapopt_app *app,
                                     const mapopt_app_options *opts,
                                     mapopt_diags *diags,
                                     mapopt_app_run **out) {
  if (!machine || !app || !diags || !out)
    return MAPOPT_EINVAL;
  mapopt_app_machine on = {machine->nodes,
                           machine->procs[MAPOPT_PROC_GPU].count,
                           machine->ranks_per_node};
  mapopt_app_run *run;
  mapopt_status st = mapopt_app_instantiate(app, opts, &on, diags, &run);
  if (st != MAPOPT_OK)
    return st;
  if (run->ranks_per_node > 0)
    st = mapopt_machine_check_ranks(machine, run->ranks_per_node,
                                    mapopt_app_name(app), diags);
  if (st == MAPOPT_OK)
    st = check_bytes(app, opts, run, diags);
  if (st != MAPOPT_OK) {
    mapopt_app_run_free(run);
    return st;
  }
  *out = run;
  return MAPOPT_OK;
}

void mapopt_sim_shape(const mapopt_machine *machine, const mapopt_app_run *run,
                      mapopt_machine_shape *shape) {
  mapopt_machine split = *machine; /* read-only: pointers are shared */
  split.ranks_per_node = mapopt__sim_ranks(machine, run);
  mapopt_machine_shape_of(&split, shape);
}
