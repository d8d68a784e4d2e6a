/*
 * The narrow view of an instantiated run (include/mapopt/app.h, "the
 * narrow view of a run"): modules other than app and sim reach the run's
 * arrays through these getters, so a later change of how a run stores them
 * stays inside app and sim. A NULL object or an index out of range is a
 * caller's bug: it asserts in a debug build and yields NULL (0 for a size)
 * in a release one -- the convention of the simulation result's getters
 * too (src/sim/resmem.c); the header says why.
 */
#include <assert.h>

#include "mapopt/app.h"

int64_t mapopt_app_run_nops(const mapopt_app_run *run) {
  assert(run);
  return run ? run->nops : 0;
}

const mapopt_app_op *mapopt_app_run_op(const mapopt_app_run *run, int64_t i) {
  assert(run && i >= 0 && i < run->nops);
  return run && i >= 0 && i < run->nops ? &run->ops[i] : NULL;
}

const mapopt_app_op *mapopt_app_op_parent(const mapopt_app_run *run,
                                          const mapopt_app_op *op) {
  assert(op);
  return !op || op->parent < 0 ? NULL : mapopt_app_run_op(run, op->parent);
}

const mapopt_app_req *mapopt_app_op_req(const mapopt_app_op *op, size_t j) {
  assert(op && j < op->nreqs);
  return op && j < op->nreqs ? &op->reqs[j] : NULL;
}

const mapopt_app_task *mapopt_app_run_task(const mapopt_app_run *run, int t) {
  assert(run && t >= 0 && t < run->ntasks);
  return run && t >= 0 && t < run->ntasks ? &run->tasks[t] : NULL;
}

const mapopt_app_task *mapopt_app_op_task(const mapopt_app_run *run,
                                          const mapopt_app_op *op) {
  assert(op);
  return !op || op->task < 0 ? NULL : mapopt_app_run_task(run, op->task);
}

const char *mapopt_app_task_name(const mapopt_app_run *run, int t) {
  const mapopt_app_task *task = mapopt_app_run_task(run, t);
  return task ? task->name : NULL;
}

const mapopt_app_variant *mapopt_app_task_variant(const mapopt_app_task *task,
                                                  int v) {
  assert(task && v >= 0 && v < task->nvariants);
  return task && v >= 0 && v < task->nvariants ? &task->variants[v] : NULL;
}

const mapopt_app_layout_rule *
mapopt_app_variant_require(const mapopt_app_variant *var, size_t k) {
  assert(var && k < var->nrequires);
  return var && k < var->nrequires ? &var->requires[k] : NULL;
}

const mapopt_app_region *mapopt_app_run_region(const mapopt_app_run *run,
                                               int r) {
  assert(run && r >= 0 && r < run->nregions);
  return run && r >= 0 && r < run->nregions ? &run->regions[r] : NULL;
}

const mapopt_app_region *mapopt_app_req_region(const mapopt_app_run *run,
                                               const mapopt_app_req *req) {
  assert(req);
  return req ? mapopt_app_run_region(run, req->piece->region) : NULL;
}

const char *mapopt_app_region_field_name(const mapopt_app_region *r, int f) {
  assert(r && f >= 0 && f < r->nfields);
  return r && f >= 0 && f < r->nfields ? r->field_names[f] : NULL;
}

int64_t mapopt_app_region_field_bytes(const mapopt_app_region *r, int f) {
  assert(r && f >= 0 && f < r->nfields);
  return r && f >= 0 && f < r->nfields ? r->field_bytes[f] : 0;
}

int64_t mapopt_app_run_atom_elements(const mapopt_app_run *run, int64_t a) {
  assert(run && a >= 0 && a < run->natoms);
  return run && a >= 0 && a < run->natoms ? run->atom_elements[a] : 0;
}

const mapopt_app_piece_atom *
mapopt_app_piece_atom_at(const mapopt_app_piece *piece, size_t k) {
  assert(piece && k < piece->natoms);
  return piece && k < piece->natoms ? &piece->atoms[k] : NULL;
}

const char *mapopt_app_req_name(const mapopt_app_req *req, size_t k) {
  assert(req && k < req->nnames);
  return req && k < req->nnames ? req->names[k] : NULL;
}

const char *mapopt_app_run_partition_name(const mapopt_app_run *run, int p) {
  assert(run && p >= 0 && p < run->npartitions);
  return run && p >= 0 && p < run->npartitions ? run->partition_names[p] : NULL;
}

const mapopt_app_colors *
mapopt_app_run_partition_colors(const mapopt_app_run *run, int p) {
  assert(run && p >= 0 && p < run->npartitions);
  return run && p >= 0 && p < run->npartitions ? &run->partition_colors[p]
                                               : NULL;
}

bool mapopt_app_run_param(const mapopt_app_run *run, size_t i,
                          const char **name, int64_t *value) {
  assert(run);
  if (!run || i >= run->nparams)
    return false;
  *name = run->param_names[i];
  *value = run->param_values[i];
  return true;
}
