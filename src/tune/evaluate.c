/*
 * Evaluators (src/tune/tune.h): what turns a compiled candidate into an
 * evaluation the driver records and tells. The simulator is the one
 * evaluator for now: it runs the candidate on the shared plan of the app
 * run (mapopt_sim_run_plan is safe to call from several threads on one
 * plan). A candidate that does not compile never reaches an evaluator: the
 * driver makes its evaluation with mapopt__tune_eval_invalid.
 *
 * Every evaluation is analysed by AutoGuide in one place, analyse(): the
 * run's raw log (or the compiler's diagnostics, printed as the compiler
 * prints them, so that the syntax rules see what a user would) with the
 * result, the mapper and its text, the run and the machine. The findings
 * and the result travel with the evaluation until the optimizer has been
 * told; the feedback text at the run's level is what the database keeps.
 * Analysis only reads its inputs, so workers analyse in parallel.
 */
#include <string.h>

#include "tune/tune.h"

void mapopt__tune_eval_clear(mapopt__tune_eval *e) {
  if (!e)
    return;
  mapopt_text_free(e->feedback);
  mapopt_findings_free(e->findings);
  mapopt_sim_result_free(e->result);
  *e = (mapopt__tune_eval){0};
}

/* AutoGuide's findings on in and their feedback text at the evaluator's
 * level, into out (whose ev points to them). MAPOPT_ENOMEM. */
static mapopt_status analyse(const mapopt__tune_evaluator *ev,
                             const mapopt_guide_input *in,
                             mapopt__tune_eval *out) {
  mapopt_status st = mapopt_guide_analyze(ev->ctx, in, &out->findings);
  if (st == MAPOPT_OK)
    st = mapopt_guide_feedback(ev->ctx, out->findings, ev->level,
                               &out->feedback);
  out->ev.findings = out->findings;
  out->ev.feedback = out->feedback;
  return st;
}

mapopt_status mapopt__tune_eval_invalid(const mapopt__tune_evaluator *ev,
                                        const char *text, const char *diag_text,
                                        mapopt__tune_eval *out) {
  *out = (mapopt__tune_eval){.ev.status = MAPOPT_TUNE_INVALID};
  mapopt_guide_input in = {.output = diag_text,
                           .output_len = strlen(diag_text),
                           .exit_status = 1,
                           .mapper_text = text,
                           .mapper_len = strlen(text),
                           .run = ev->run,
                           .machine = ev->machine};
  mapopt_status st = analyse(ev, &in, out);
  if (st != MAPOPT_OK)
    mapopt__tune_eval_clear(out);
  return st;
}

/* ---- the simulator ---------------------------------------------------------
 */

/* Simulates one candidate on the shared plan; the result goes with the
 * evaluation, for optimizers that read the profile. */
static mapopt_status evaluate_sim(const mapopt__tune_evaluator *ev,
                                  const mapopt_program *prog, const char *text,
                                  mapopt__tune_eval *out) {
  const mapopt_sim_plan *plan = ev->state;
  *out = (mapopt__tune_eval){0};
  mapopt_sim_options so = {0};
  mapopt_status st =
      mapopt_sim_run_plan(ev->ctx, ev->machine, plan, prog, &so, &out->result);
  if (st != MAPOPT_OK)
    return st;
  const mapopt_sim_result *r = out->result;
  out->ev.result = r;
  out->ev.lower_bound_s = (double)r->lower_bound_ns * 1e-9;
  if (r->error == MAPOPT_SIM_NONE) {
    out->ev.status = MAPOPT_TUNE_OK;
    out->ev.score = r->metric_value;
    out->ev.elapsed_s = (double)r->elapsed_ns * 1e-9;
  } else {
    out->ev.status = r->error == MAPOPT_SIM_TIMEOUT ? MAPOPT_TUNE_TIMEOUT
                                                    : MAPOPT_TUNE_FAILED;
  }
  mapopt_guide_input in = {.output = r->log,
                           .output_len = r->log ? strlen(r->log) : 0,
                           .exit_status = -1,
                           .timed_out = r->error == MAPOPT_SIM_TIMEOUT,
                           .result = r,
                           .mapper = prog,
                           .mapper_text = text,
                           .mapper_len = strlen(text),
                           .run = ev->run,
                           .machine = ev->machine};
  st = analyse(ev, &in, out);
  if (st != MAPOPT_OK)
    mapopt__tune_eval_clear(out);
  return st;
}

static void free_sim(mapopt__tune_evaluator *ev) {
  mapopt_sim_plan_free(ev->state);
}

static const mapopt__tune_evaluator_vt sim_vt = {"sim", evaluate_sim, free_sim};

mapopt_status mapopt__tune_sim_evaluator_new(mapopt_ctx *ctx,
                                             const mapopt_machine *machine,
                                             const mapopt_app_run *run,
                                             mapopt_guide_level level,
                                             mapopt__tune_evaluator **out) {
  mapopt__tune_evaluator *ev = mapopt__calloc(ctx, 1, sizeof *ev);
  if (!ev)
    return MAPOPT_ENOMEM;
  mapopt_sim_plan *plan;
  mapopt_status st = mapopt_sim_plan_new(ctx, run, &plan);
  if (st != MAPOPT_OK) {
    mapopt__free(ctx, ev, sizeof *ev);
    return st;
  }
  *ev = (mapopt__tune_evaluator){&sim_vt, ctx, machine, run, level, plan};
  *out = ev;
  return MAPOPT_OK;
}

void mapopt__tune_evaluator_free(mapopt__tune_evaluator *ev) {
  if (!ev)
    return;
  ev->vt->free(ev);
  mapopt__free(ev->ctx, ev, sizeof *ev);
}
