/*
 * Setting up a simulation: an app instantiated for the machine it is
 * simulated on (see mapopt_sim_instantiate in mapopt/sim.h).
 */
#include "mapopt/sim.h"

mapopt_status mapopt_sim_instantiate(mapopt_machine *machine,
                                     const mapopt_app *app,
                                     const mapopt_app_options *opts,
                                     mapopt_diags *diags,
                                     mapopt_app_run **out) {
  mapopt_app_machine on = {machine->nodes,
                           machine->procs[MAPOPT_PROC_GPU].count,
                           machine->ranks_per_node};
  mapopt_status st = mapopt_app_instantiate(app, opts, &on, diags, out);
  if (st == MAPOPT_OK && (*out)->ranks_per_node > 0)
    machine->ranks_per_node = (*out)->ranks_per_node;
  return st;
}
