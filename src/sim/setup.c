/*
 * Setting up a simulation: an app instantiated for the machine it is
 * simulated on, and the one rule for the rank split a run uses
 * (SIMULATOR.md §2.5): the split the app asks for (DISTAL's one rank per
 * GPU), else the machine's. The machine itself is never changed: the
 * engine, the costs and the mappers' shape all take the split from
 * mapopt__sim_ranks.
 */
#include "sim/sim.h"

int64_t mapopt__sim_ranks(const mapopt_machine *machine,
                          const mapopt_app_run *run) {
  int64_t r =
      run->ranks_per_node > 0 ? run->ranks_per_node : machine->ranks_per_node;
  return r > 0 ? r : 1;
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
  if (run->ranks_per_node > 0) {
    st = mapopt_machine_check_ranks(machine, run->ranks_per_node,
                                    mapopt_app_name(app), diags);
    if (st != MAPOPT_OK) {
      mapopt_app_run_free(run);
      return st;
    }
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
