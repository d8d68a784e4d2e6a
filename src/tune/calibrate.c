/*
 * Calibration (docs/real.md, "Calibrating the model"): the machine and
 * application models fitted to real runs, each a mapper and its measured
 * time.
 *
 * A candidate model is a vector theta of log factors: one per group of the
 * machine's figures (mapopt_calib_group), then one per kernel, a (task,
 * processor kind) variant that some fitted mapper runs, scaling that
 * variant's flops_eff and mem_eff. It is applied to the starting models'
 * JSON (mapopt_machine_to_json, mapopt_app_to_json), loaded back, and every
 * sample is simulated on it; its loss is the mean squared log ratio of
 * predicted to measured time over the fitted samples (every third, in the
 * order given, is held out). A pattern search over the logs (steps of a
 * factor of 2, halved whenever no step helps, down to 1%) fits the
 * machine's groups alone from the starting model; a second one fits the
 * groups and the kernels together, again from the starting model. The
 * kernels' factors are kept only when they lower the held-out median error
 * by more than the noise; the held-out runs judge, the fitted ones fit.
 */
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core.h"
#include "mapopt/sim.h"
#include "mapopt/tune.h"

static const char *const group_names[MAPOPT_CALIB_NGROUPS] = {
    "processor rates", "memory bandwidths", "channel bandwidths",
    "per-task overheads"};

const char *mapopt_calib_group_name(mapopt_calib_group g) {
  return (unsigned)g < MAPOPT_CALIB_NGROUPS ? group_names[g] : NULL;
}

/* The search never scales a figure by more than this, either way. */
#define MAX_FACTOR 1000.0
/* A relative difference of time below this is the measurements' noise (a
 * time printed to the millisecond, a run's jitter), not the model's. */
#define NOISE 0.001

/* Where a kernel's variant is in the application's JSON. */
typedef struct kernel_ref {
  size_t task, variant; /* indices in "tasks" and its "variants" */
} kernel_ref;

typedef struct calib {
  mapopt_ctx *ctx;
  const mapopt_calib_problem *p;
  mapopt__arena arena;
  json_t *machine, *app; /* the starting models */
  /* The application's variants numbered in task order: task t's are
   * first_variant[t] .. first_variant[t + 1] - 1. */
  size_t ntasks, *first_variant;
  size_t nkernels;
  kernel_ref *kernel_refs;
  mapopt_calib_kernel *kernels; /* in the result's arena */
  size_t ntheta;                /* MAPOPT_CALIB_NGROUPS + nkernels */
  /* The run of the kernel factors last instantiated (run_theta) and its
   * plan: a candidate that moves only the machine's groups reuses them. */
  double *run_theta;
  mapopt_app_run *run;
  mapopt_sim_plan *plan;
  double *predicted; /* per sample, on the last candidate simulated */
} calib;

static bool held_out(size_t i) {
  return i % 3 == 2;
}

static bool no_memory(mapopt_diags *diags) {
  mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                   "out of memory");
  return false;
}

/* ---- the candidate models --------------------------------------------- */

/* Scales the number at key of object o by f (an integer stays one, at
 * least 1 when it was). */
static void scale_key(json_t *o, const char *key, double f) {
  json_t *v = json_object_get(o, key);
  if (json_is_integer(v)) {
    double y = nearbyint((double)json_integer_value(v) * f);
    json_integer_set(v, y < 1      ? 1
                        : y > 9e15 ? (json_int_t)9e15
                                   : (json_int_t)y);
  } else if (json_is_real(v)) {
    json_real_set(v, json_real_value(v) * f);
  }
}

/* JSON text (free()) of the starting machine with the groups' factors
 * e^theta[g] applied; NULL on ENOMEM. */
static char *machine_text(const calib *c, const double *theta) {
  json_t *m = json_deep_copy(c->machine);
  if (!m)
    return NULL;
  double rate = exp(theta[MAPOPT_CALIB_RATES]);
  double mem = exp(theta[MAPOPT_CALIB_MEMORY]);
  double chan = exp(theta[MAPOPT_CALIB_CHANNELS]);
  double over = exp(theta[MAPOPT_CALIB_OVERHEADS]);
  const char *k;
  json_t *v;
  json_object_foreach(json_object_get(m, "processors"), k, v) {
    scale_key(v, "gflops_f64", rate);
    scale_key(v, "gflops_f32", rate);
    scale_key(v, "gflops_f64_matrix", rate);
    scale_key(v, "overhead_ns", over);
    scale_key(v, "inner_overhead_ns", over);
  }
  size_t i;
  json_array_foreach(json_object_get(m, "affinity"), i, v)
      scale_key(v, "bw_gbs", mem);
  json_object_foreach(json_object_get(m, "channels"), k, v) {
    scale_key(v, "bw_gbs", chan);
    scale_key(v, "cross_socket_bw_gbs", chan);
    scale_key(v, "lat_ns", 1 / chan);
  }
  json_t *r = json_object_get(m, "runtime");
  static const char *const per_task[] = {"launch_ns", "launch_traced_ns",
                                         "map_ns", "map_traced_ns"};
  for (size_t j = 0; j < sizeof per_task / sizeof per_task[0]; j++)
    scale_key(r, per_task[j], over);
  scale_key(r, "ipc_lat_ns", 1 / chan);
  char *text = json_dumps(m, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
  json_decref(m);
  return text;
}

static json_t *task_of(const json_t *app, size_t t) {
  return json_array_get(json_object_get(app, "tasks"), t);
}

static json_t *variants_of(const json_t *app, size_t t) {
  return json_object_get(task_of(app, t), "variants");
}

/* An efficiency (docs/apps.md: in (0, 1]) scaled by f. At most 1: a
 * kernel does not beat its processor's peak rate or its memory's
 * bandwidth, and one that seems to says that the machine's figures are
 * low, which the groups fit for every task at once; the part of a factor
 * above what takes the efficiency to 1 is dropped (the search gains
 * nothing by it, so it never takes that step). Rounded to the millionths
 * the simulator prices it in, and at least one of them. */
static double scaled_eff(double eff, double f) {
  double x = nearbyint(eff * f * 1e6) / 1e6;
  return x > 1 ? 1 : x < 1e-6 ? 1e-6 : x;
}

/* JSON text (free()) of the starting application with the kernels'
 * factors e^theta[MAPOPT_CALIB_NGROUPS + k] applied; NULL on ENOMEM. */
static char *app_text(const calib *c, const double *theta) {
  json_t *a = json_deep_copy(c->app);
  if (!a)
    return NULL;
  bool ok = true;
  for (size_t k = 0; k < c->nkernels; k++) {
    const mapopt_calib_kernel *kn = &c->kernels[k];
    double f = exp(theta[MAPOPT_CALIB_NGROUPS + k]);
    json_t *v = json_array_get(variants_of(a, c->kernel_refs[k].task),
                               c->kernel_refs[k].variant);
    ok = ok &&
         !json_object_set_new(v, "flops_eff",
                              json_real(scaled_eff(kn->flops_eff_before, f))) &&
         !json_object_set_new(v, "mem_eff",
                              json_real(scaled_eff(kn->mem_eff_before, f)));
  }
  char *text = ok ? json_dumps(a, JSON_INDENT(2) | JSON_PRESERVE_ORDER) : NULL;
  json_decref(a);
  return text;
}

/* Instantiates the run of theta's kernel factors and its plan, unless it
 * is the one already held. */
static bool use_run(calib *c, const double *theta, mapopt_diags *diags) {
  const double *kt = theta + MAPOPT_CALIB_NGROUPS;
  size_t bytes = c->nkernels * sizeof *kt;
  if (c->plan && (!bytes || !memcmp(c->run_theta, kt, bytes)))
    return true;
  mapopt_sim_plan_free(c->plan);
  mapopt_app_run_free(c->run);
  c->plan = NULL;
  c->run = NULL;
  char *text = app_text(c, theta);
  if (!text)
    return no_memory(diags);
  mapopt_app *app = NULL;
  bool ok = mapopt_app_load_json(c->ctx, "calibrated application", text,
                                 strlen(text), diags, &app) == MAPOPT_OK &&
            mapopt_sim_instantiate(c->p->machine, app, c->p->app_options, diags,
                                   &c->run) == MAPOPT_OK &&
            mapopt_sim_plan_new(c->ctx, c->run, &c->plan) == MAPOPT_OK;
  free(text);
  mapopt_app_free(app);
  if (ok && bytes)
    memcpy(c->run_theta, kt, bytes);
  return ok;
}

/* Marks in ran[] (by variant number) the variants that result r ran. */
static void note_kernels(const calib *c, const mapopt_sim_result *r,
                         bool *ran) {
  for (size_t i = 0; i < mapopt_sim_result_ndecisions(r); i++) {
    const mapopt_sim_decision *d = mapopt_sim_result_decision(r, i);
    if (d->inner)
      continue;
    const char *kind = mapopt_shape_proc_name(d->proc.kind);
    for (size_t t = 0; t < c->ntasks; t++) {
      if (strcmp(json_string_value(json_object_get(task_of(c->app, t), "name")),
                 d->task))
        continue;
      size_t v;
      const json_t *var;
      json_array_foreach(variants_of(c->app, t), v, var) {
        if (!strcmp(json_string_value(json_object_get(var, "kind")), kind))
          ran[c->first_variant[t] + v] = true;
      }
    }
  }
}

/* Simulates the fitted samples, and with held_too the held-out ones, on
 * the models of theta into c->predicted; false when one does not simulate
 * or is scored in another unit than the runs (the reason in diags). With
 * ran, marks the variants that the fitted samples run. */
static bool predict(calib *c, const double *theta, bool held_too, bool *ran,
                    mapopt_diags *diags) {
  if (!use_run(c, theta, diags))
    return false;
  char *text = machine_text(c, theta);
  if (!text)
    return no_memory(diags);
  mapopt_machine *m = NULL;
  bool ok = mapopt_machine_load_json(c->ctx, "calibrated machine", text,
                                     strlen(text), diags, &m) == MAPOPT_OK;
  free(text);
  const mapopt_calib_problem *p = c->p;
  for (size_t i = 0; ok && i < p->nsamples; i++) {
    if (held_out(i) && !held_too)
      continue;
    mapopt_sim_result *r = NULL;
    mapopt_sim_options so = {.record_decisions = ran && !held_out(i)};
    ok = mapopt_sim_run_plan(c->ctx, m, c->plan, p->samples[i].mapper, &so,
                             &r) == MAPOPT_OK &&
         r->error == MAPOPT_SIM_NONE && r->metric_value > 0;
    if (!ok) {
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                       "a recorded mapper does not simulate on the machine "
                       "model: %s",
                       r && r->log ? r->log : "out of memory");
    } else if (strcmp(r->metric_unit, p->unit)) {
      mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                       "the runs are scored in %s and the simulation in %s: "
                       "give the application they ran (--app)",
                       p->unit, r->metric_unit);
      ok = false;
    } else if (so.record_decisions) {
      note_kernels(c, r, ran);
    }
    c->predicted[i] = ok ? 1 / r->metric_value : 0;
    mapopt_sim_result_free(r);
  }
  mapopt_machine_free(m);
  return ok;
}

/* ---- judging and searching -------------------------------------------- */

/* The mean squared log ratio of predicted to measured over the fitted. */
static double loss(const calib *c) {
  double sum = 0;
  size_t k = 0;
  for (size_t i = 0; i < c->p->nsamples; i++)
    if (!held_out(i)) {
      double l = log(c->predicted[i] / c->p->samples[i].measured);
      sum += l * l;
      k++;
    }
  return k ? sum / (double)k : 0;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The held-out figures of the last candidate simulated; false on ENOMEM. */
static bool held_out_figures(const calib *c, mapopt_calib_figures *f) {
  const mapopt_calib_sample *s = c->p->samples;
  size_t n = c->p->nsamples, k = 0;
  double *e = mapopt__malloc(c->ctx, n * sizeof *e);
  if (!e)
    return false;
  long conc = 0, disc = 0, tie_m = 0, tie_p = 0;
  for (size_t i = 0; i < n; i++) {
    if (!held_out(i))
      continue;
    e[k++] = fabs(c->predicted[i] - s[i].measured) / s[i].measured;
    for (size_t j = i + 1; j < n; j++) {
      if (!held_out(j))
        continue;
      double dm = s[i].measured - s[j].measured;
      double dp = c->predicted[i] - c->predicted[j];
      if (dm == 0 && dp == 0)
        continue;
      if (dm == 0)
        tie_m++;
      else if (dp == 0)
        tie_p++;
      else if ((dm > 0) == (dp > 0))
        conc++;
      else
        disc++;
    }
  }
  qsort(e, k, sizeof *e, cmp_double);
  f->median_error = k % 2 ? e[k / 2] : (e[k / 2 - 1] + e[k / 2]) / 2;
  mapopt__free(c->ctx, e, n * sizeof *e);
  double d =
      sqrt((double)(conc + disc + tie_m) * (double)(conc + disc + tie_p));
  f->tau = d > 0 ? (double)(conc - disc) / d : 0;
  return true;
}

/* How the pattern search moves. */
typedef struct search_rule {
  /* Each step that lowers the loss is taken at once, in the order of the
   * factors; or (steepest) only the one step of the sweep that lowers it
   * most, so that the factor that explains most of what is left moves
   * first: a difference of one kernel then moves that kernel's factor,
   * not the groups' (which the other kernels' factors would have to
   * undo, a state no single step leaves). */
  bool steepest;
  /* What a step must lower the loss by, besides a relative 1e-9. */
  double min_gain;
} search_rule;

/* The pattern search over the log factors theta[0 .. nmoved - 1], from
 * theta, on the fitted samples; ends with theta's models simulated, the
 * held-out samples too. A step whose models do not simulate is not taken
 * (its reason is left in diags). */
static bool search(calib *c, double *theta, size_t nmoved,
                   const search_rule *rule, mapopt_diags *diags) {
  size_t bytes = c->ntheta * sizeof *theta;
  double *t = mapopt__arena_alloc(&c->arena, bytes);
  if (!t)
    return no_memory(diags);
  if (!predict(c, theta, false, NULL, diags))
    return false;
  double best = loss(c);
  for (double step = log(2.0); step > 0.01; step /= 2) {
    bool improved = true;
    while (improved) {
      improved = false;
      size_t steepest = 0; /* 1 + the index of its factor; 0: none */
      double steepest_dir = 0, steepest_loss = best;
      for (size_t g = 0; g < nmoved; g++)
        for (int dir = -1; dir <= 1; dir += 2) {
          memcpy(t, theta, bytes);
          t[g] += dir * step;
          if (fabs(t[g]) > log(MAX_FACTOR) ||
              !predict(c, t, false, NULL, diags))
            continue;
          double l = loss(c);
          if (!rule->steepest && l < best * (1 - 1e-9) - rule->min_gain) {
            best = l;
            memcpy(theta, t, bytes);
            improved = true;
          } else if (rule->steepest &&
                     l < steepest_loss * (1 - 1e-9) - rule->min_gain) {
            steepest = g + 1;
            steepest_dir = dir;
            steepest_loss = l;
          }
        }
      if (steepest) {
        theta[steepest - 1] += steepest_dir * step;
        best = steepest_loss;
        improved = true;
      }
    }
  }
  return predict(c, theta, true, NULL, diags);
}

/* ---- the fit ------------------------------------------------------------ */

/* The kernels that ran[] marks, in variant order, into c (their names in
 * owned, the result's). */
static bool take_kernels(calib *c, const bool *ran, mapopt__arena *owned) {
  size_t n = 0;
  for (size_t v = 0; v < c->first_variant[c->ntasks]; v++)
    n += ran[v];
  c->kernel_refs =
      mapopt__arena_zalloc(&c->arena, (n + 1) * sizeof(kernel_ref));
  c->kernels = mapopt__arena_zalloc(owned, (n + 1) * sizeof *c->kernels);
  c->run_theta = mapopt__arena_zalloc(&c->arena, (n + 1) * sizeof(double));
  if (!c->kernel_refs || !c->kernels || !c->run_theta)
    return false;
  for (size_t t = 0; t < c->ntasks; t++) {
    const char *name =
        json_string_value(json_object_get(task_of(c->app, t), "name"));
    size_t v;
    const json_t *var;
    json_array_foreach(variants_of(c->app, t), v, var) {
      if (!ran[c->first_variant[t] + v])
        continue;
      const char *kind = json_string_value(json_object_get(var, "kind"));
      mapopt_calib_kernel *k = &c->kernels[c->nkernels];
      k->task = mapopt__arena_strndup(owned, name, strlen(name));
      if (!k->task)
        return false;
      for (int pk = 0; pk < MAPOPT_PROC_KIND_COUNT; pk++)
        if (!strcmp(kind, mapopt_shape_proc_name((mapopt_proc_kind)pk)))
          k->kind = (mapopt_proc_kind)pk;
      k->flops_eff_before =
          json_number_value(json_object_get(var, "flops_eff"));
      k->mem_eff_before = json_number_value(json_object_get(var, "mem_eff"));
      c->kernel_refs[c->nkernels++] = (kernel_ref){t, v};
    }
  }
  c->ntheta = MAPOPT_CALIB_NGROUPS + c->nkernels;
  return true;
}

/* The starting models as JSON, and the application's variants numbered. */
static bool load_models(calib *c) {
  char *text = NULL;
  if (mapopt_machine_to_json(c->ctx, c->p->machine, &text) != MAPOPT_OK)
    return false;
  c->machine = json_loads(text, 0, NULL);
  mapopt_text_free(text);
  text = NULL;
  if (mapopt_app_to_json(c->ctx, c->p->app, &text) != MAPOPT_OK)
    return false;
  c->app = json_loads(text, 0, NULL);
  mapopt_text_free(text);
  if (!c->machine || !c->app)
    return false;
  c->ntasks = json_array_size(json_object_get(c->app, "tasks"));
  c->first_variant =
      mapopt__arena_alloc(&c->arena, (c->ntasks + 1) * sizeof(size_t));
  if (!c->first_variant)
    return false;
  c->first_variant[0] = 0;
  for (size_t t = 0; t < c->ntasks; t++)
    c->first_variant[t + 1] =
        c->first_variant[t] + json_array_size(variants_of(c->app, t));
  return true;
}

/* The result as the library allocates it: the public struct first. */
typedef struct result_impl {
  mapopt_calib_result pub;
  mapopt_ctx *ctx;
  mapopt__arena owned; /* the kernels and their task names */
} result_impl;

void mapopt_calib_result_free(mapopt_calib_result *r) {
  if (!r)
    return;
  result_impl *impl = (result_impl *)r;
  mapopt_text_free(r->machine_json);
  mapopt_text_free(r->app_json);
  mapopt__arena_destroy(&impl->owned);
  mapopt__free(impl->ctx, impl, sizeof *impl);
}

/* The kernels' factors of joint (fitted with the groups, kept or not), and
 * the chosen model's group factors and texts. */
static bool finish(calib *c, const double *joint, const double *chosen,
                   mapopt_calib_result *r) {
  for (size_t k = 0; k < c->nkernels; k++) {
    mapopt_calib_kernel *kn = &c->kernels[k];
    kn->factor = exp(joint[MAPOPT_CALIB_NGROUPS + k]);
    kn->flops_eff_after = scaled_eff(kn->flops_eff_before, kn->factor);
    kn->mem_eff_after = scaled_eff(kn->mem_eff_before, kn->factor);
    r->app_changed |=
        r->joint_chosen && (kn->flops_eff_after != kn->flops_eff_before ||
                            kn->mem_eff_after != kn->mem_eff_before);
  }
  for (int g = 0; g < MAPOPT_CALIB_NGROUPS; g++)
    r->factor[g] = exp(chosen[g]);
  char *m = machine_text(c, chosen), *a = app_text(c, chosen);
  r->machine_json = m ? mapopt__text_new(c->ctx, m, strlen(m)) : NULL;
  r->app_json = a ? mapopt__text_new(c->ctx, a, strlen(a)) : NULL;
  free(m);
  free(a);
  return r->machine_json && r->app_json;
}

static mapopt_status fit(calib *c, result_impl *res, mapopt_diags *diags) {
  mapopt_calib_result *r = &res->pub;
  const mapopt_calib_problem *p = c->p;
  r->nheld_out = p->nsamples / 3;
  r->nfitted = p->nsamples - r->nheld_out;
  if (r->nheld_out < 2) {
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt calibrate", 0, 0,
                     "%zu successful real runs of %s: at least 6 are needed "
                     "(every third is held out, at least 2)",
                     p->nsamples, p->name);
    return MAPOPT_EINVAL;
  }
  bool *ran = mapopt__arena_zalloc(&c->arena, c->first_variant[c->ntasks] + 1);
  c->predicted =
      mapopt__arena_zalloc(&c->arena, p->nsamples * sizeof *c->predicted);
  if (!ran || !c->predicted)
    return no_memory(diags), MAPOPT_ENOMEM;
  /* The starting model, with no kernels to scale yet. */
  const double start[MAPOPT_CALIB_NGROUPS] = {0};
  c->ntheta = MAPOPT_CALIB_NGROUPS;
  if (!predict(c, start, true, ran, diags))
    return MAPOPT_EINVAL;
  if (!held_out_figures(c, &r->before) || !take_kernels(c, ran, &res->owned))
    return no_memory(diags), MAPOPT_ENOMEM;
  r->kernels = c->kernels;
  r->nkernels = c->nkernels;
  size_t bytes = c->ntheta * sizeof(double);
  double *machine_alone = mapopt__arena_zalloc(&c->arena, bytes);
  double *joint = mapopt__arena_zalloc(&c->arena, bytes);
  if (!machine_alone || !joint)
    return no_memory(diags), MAPOPT_ENOMEM;
  static const search_rule machine_rule = {.steepest = false};
  if (!search(c, machine_alone, MAPOPT_CALIB_NGROUPS, &machine_rule, diags) ||
      !held_out_figures(c, &r->machine_alone))
    return MAPOPT_EINVAL;
  for (int g = 0; g < MAPOPT_CALIB_NGROUPS; g++)
    r->machine_alone_factor[g] = exp(machine_alone[g]);
  r->joint = r->machine_alone;
  /* The joint search starts from the starting model too, not from the
   * groups fitted alone: those may have absorbed one kernel's difference
   * into every task's (docs/real.md's heat1d case), and the steepest steps
   * give it back to that kernel first. A gain of loss below NOISE^2 is
   * what an error of NOISE on every fitted run would cost: noise. */
  static const search_rule joint_rule = {.steepest = true,
                                         .min_gain = NOISE * NOISE};
  if (c->nkernels && (!search(c, joint, c->ntheta, &joint_rule, diags) ||
                      !held_out_figures(c, &r->joint)))
    return MAPOPT_EINVAL;
  r->joint_chosen =
      r->joint.median_error < r->machine_alone.median_error - NOISE;
  r->after = r->joint_chosen ? r->joint : r->machine_alone;
  if (!finish(c, joint, r->joint_chosen ? joint : machine_alone, r))
    return no_memory(diags), MAPOPT_ENOMEM;
  return MAPOPT_OK;
}

mapopt_status mapopt_calibrate(mapopt_ctx *ctx, const mapopt_calib_problem *p,
                               mapopt_diags *diags, mapopt_calib_result **out) {
  if (!ctx || !p || !p->machine || !p->app || !p->app_options || !p->unit ||
      !p->name || (!p->samples && p->nsamples) || !out)
    return MAPOPT_EINVAL;
  result_impl *res = mapopt__calloc(ctx, 1, sizeof *res);
  if (!res)
    return MAPOPT_ENOMEM;
  res->ctx = ctx;
  mapopt__arena_init(&res->owned, ctx);
  calib c = {.ctx = ctx, .p = p};
  mapopt__arena_init(&c.arena, ctx);
  mapopt_status st = MAPOPT_ENOMEM;
  if (load_models(&c))
    st = fit(&c, res, diags);
  else
    no_memory(diags);
  json_decref(c.machine);
  json_decref(c.app);
  mapopt_sim_plan_free(c.plan);
  mapopt_app_run_free(c.run);
  mapopt__arena_destroy(&c.arena);
  if (st != MAPOPT_OK) {
    mapopt_calib_result_free(&res->pub);
    return st;
  }
  *out = &res->pub;
  return MAPOPT_OK;
}
