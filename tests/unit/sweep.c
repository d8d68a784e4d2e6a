/* The lower bound's soundness sweep; see sweep.h. */
#include <dirent.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "mapopt/mapopt.h"
#include "sweep.h"

typedef struct sweeper {
  mapopt_ctx *ctx;
  mapopt_diags *d;
  mapopt_machine *m;
  mapopt_app *app;
  mapopt_app_run *run;
  mapopt_sim_plan *plan;
  mapopt_machine_shape shape;
  sweep_stats *st;
} sweeper;

/* Compiles and simulates text; true when it ran without error. The bound
 * is checked against every such run. */
static bool one(sweeper *w, const char *name, const char *text) {
  mapopt_dsl_options o = {.file = name, .shape = &w->shape};
  mapopt_app_task_info(w->app, &o.tasks, &o.ntasks);
  mapopt_program *prog;
  mapopt_diags_clear(w->d);
  if (mapopt_dsl_compile(w->ctx, text, strlen(text), &o, w->d, &prog) !=
      MAPOPT_OK)
    return false;
  mapopt_sim_result *r;
  assert_int_equal(mapopt_sim_run_plan(w->ctx, w->m, w->plan, prog, NULL, &r),
                   MAPOPT_OK);
  bool ok = r->error == MAPOPT_SIM_NONE;
  if (ok) {
    if (r->lower_bound_ns > r->elapsed_ns)
      fail_msg("%s: lower bound %lld ns above the elapsed %lld ns:\n%s", name,
               (long long)r->lower_bound_ns, (long long)r->elapsed_ns, text);
    double eff = (double)r->lower_bound_ns / (double)r->elapsed_ns;
    if (eff > w->st->highest_eff)
      w->st->highest_eff = eff;
    if (w->st->best_ns == 0 || r->elapsed_ns < w->st->best_ns)
      w->st->best_ns = r->elapsed_ns;
    w->st->bound_ns = r->lower_bound_ns;
  }
  mapopt_sim_result_free(r);
  mapopt_dsl_free(prog);
  return ok;
}

static void shipped(sweeper *w, const char *dir) {
  DIR *dp = opendir(dir);
  assert_non_null(dp);
  struct dirent *e;
  while ((e = readdir(dp))) {
    size_t n = strlen(e->d_name);
    if (n < 5 || strcmp(e->d_name + n - 4, ".map") != 0)
      continue;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    char *text = fixture_read_file(path);
    w->st->shipped += one(w, path, text);
    free(text);
  }
  closedir(dp);
}

static void random_mappers(sweeper *w, int nrandom, uint64_t seed) {
  mapopt_space *space;
  assert_int_equal(mapopt_space_new(w->ctx, w->run, w->m, NULL, w->d, &space),
                   MAPOPT_OK);
  mapopt_optimizer *opt;
  mapopt_optimizer_options oo = {.seed = seed};
  assert_int_equal(mapopt_optimizer_new(w->ctx, "random", space, &oo, &opt),
                   MAPOPT_OK);
  while (w->st->random_valid < nrandom && w->st->random_draws < 20 * nrandom) {
    mapopt_candidate c;
    if (mapopt_optimizer_ask(opt, &c) != MAPOPT_OK)
      break;
    w->st->random_draws++;
    bool ok = one(w, "random.map", c.text);
    w->st->random_valid += ok;
    mapopt_evaluation ev = {.status = ok ? MAPOPT_TUNE_OK : MAPOPT_TUNE_FAILED,
                            .score = ok ? 1 : 0};
    assert_int_equal(mapopt_optimizer_tell(opt, &c, &ev), MAPOPT_OK);
    mapopt_candidate_clear(w->ctx, &c);
  }
  mapopt_optimizer_free(opt);
  mapopt_space_free(space);
}

static void more_mappers(sweeper *w, int nrandom, sweep_more_fn more,
                         void *ud) {
  for (int draws = 0; w->st->random_valid < nrandom && draws < 20 * nrandom;
       draws++) {
    char *text = more(ud);
    w->st->random_draws++;
    w->st->random_valid += one(w, "random.map", text);
    free(text);
  }
}

void sweep_bound(mapopt_ctx *cx, const char *app, const char *machine,
                 const char *dir, int nrandom, uint64_t seed,
                 sweep_more_fn more, void *more_ud, sweep_stats *out) {
  *out = (sweep_stats){0};
  sweeper w = {.ctx = cx, .st = out};
  assert_int_equal(mapopt_diags_new(cx, &w.d), MAPOPT_OK);
  const char *spec = NULL;
  assert_int_equal(mapopt_machine_resolve(cx, machine, w.d, &w.m), MAPOPT_OK);
  assert_int_equal(mapopt_app_resolve(cx, app, w.d, &w.app, &spec), MAPOPT_OK);
  mapopt_app_options ao = {.spec = spec, .iterations = -1, .warmup = -1};
  assert_int_equal(mapopt_sim_instantiate(w.m, w.app, &ao, w.d, &w.run),
                   MAPOPT_OK);
  mapopt_sim_shape(w.m, w.run, &w.shape);
  assert_int_equal(mapopt_sim_plan_new(cx, w.run, &w.plan), MAPOPT_OK);
  if (dir)
    shipped(&w, dir);
  else /* an application of no shipped mapper: its default mapper */
    w.st->shipped += one(&w, "default.map", "");
  random_mappers(&w, nrandom, seed);
  if (more)
    more_mappers(&w, nrandom, more, more_ud);
  mapopt_sim_plan_free(w.plan);
  mapopt_app_run_free(w.run);
  mapopt_app_free(w.app);
  mapopt_machine_free(w.m);
  mapopt_diags_free(w.d);
}
