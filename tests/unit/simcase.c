/* The simulator tests' shared cases (see simcase.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "simcase.h"

/* ---- the machine --------------------------------------------------------- */

/* The tiny machine; %s slots: FB capacity in MiB, runtime object. */
static const char tiny_fmt[] =
    "{\"format\": \"mapopt-machine/1\", \"name\": \"tiny\",\n"
    " \"nodes\": 1, \"ranks_per_node\": 1, \"sockets\": 2,\n"
    " \"processors\": {\n"
    "  \"CPU\": {\"count\": 2, \"gflops_f64\": 10, \"gflops_f32\": 20,"
    " \"overhead_ns\": 4000},\n"
    "  \"GPU\": {\"count\": 4, \"gflops_f64\": 1000, \"gflops_f32\": 2000,"
    " \"overhead_ns\": 10000, \"socket\": [0, 0, 1, 1]},\n"
    "  \"UTIL\": {\"count\": 1}},\n"
    " \"memories\": {\n"
    "  \"SYSMEM\": {\"per\": \"node\", \"capacity_mib\": 1024},\n"
    "  \"ZCMEM\": {\"per\": \"node\", \"capacity_mib\": 64},\n"
    "  \"FBMEM\": {\"per\": \"gpu\", \"capacity_mib\": %s}},\n"
    " \"affinity\": [\n"
    "  {\"proc\": \"GPU\", \"mem\": \"FBMEM\", \"bw_gbs\": 500, \"lat_ns\": "
    "500,"
    " \"gather_mps\": 20000, \"atomic_mps\": 8000},\n"
    "  {\"proc\": \"GPU\", \"mem\": \"ZCMEM\", \"bw_gbs\": 10, \"lat_ns\": "
    "1500,"
    " \"gather_mps\": 20, \"atomic_mps\": 4},\n"
    "  {\"proc\": \"CPU\", \"mem\": \"SYSMEM\", \"bw_gbs\": 10, \"lat_ns\": "
    "100,"
    " \"gather_mps\": 100, \"atomic_mps\": 50},\n"
    "  {\"proc\": \"CPU\", \"mem\": \"ZCMEM\", \"bw_gbs\": 10, \"lat_ns\": 100,"
    " \"gather_mps\": 100, \"atomic_mps\": 50}],\n"
    " \"channels\": {\n"
    "  \"FB_LOCAL\": {\"bw_gbs\": 100, \"lat_ns\": 1000},\n"
    "  \"FB_FB_PEER\": {\"bw_gbs\": 3, \"cross_socket_bw_gbs\": 2,"
    " \"lat_ns\": 3000, \"peer_ports\": \"host_link\"},\n"
    "  \"FB_HOST\": {\"bw_gbs\": 4, \"lat_ns\": 2000},\n"
    "  \"HOST_HOST\": {\"bw_gbs\": 20, \"lat_ns\": 500}},\n"
    " \"runtime\": %s}\n";

const char zero_runtime[] =
    "{\"launch_ns\": 0, \"launch_traced_ns\": 0, \"map_ns\": 0,"
    " \"map_traced_ns\": 0, \"fence_ns\": 0, \"future_ns\": 0,"
    " \"ipc_lat_ns\": 0}";

mapopt_machine *machine_json(const char *fb_mib, const char *runtime) {
  char text[4096];
  int n = snprintf(text, sizeof text, tiny_fmt, fb_mib, runtime);
  assert_true(n > 0 && (size_t)n < sizeof text);
  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  mapopt_status st =
      mapopt_machine_load_json(ctx, "tiny.json", text, (size_t)n, diags, &m);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  return m;
}

mapopt_machine *tiny(void) {
  return machine_json("1", zero_runtime);
}

mapopt_machine *resolve(const char *arg) {
  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  mapopt_status st = mapopt_machine_resolve(ctx, arg, diags, &m);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  return m;
}

/* ---- one simulation ------------------------------------------------------ */

/* Loads app (JSON text) with the size spec (or NULL), compiles mapper
 * (named "t.map" in diagnostics) for m's shape, and simulates. Takes
 * ownership of m. */
void sim_opts(simcase *c, mapopt_machine *m, const char *app, const char *spec,
              const char *mapper, const mapopt_sim_options *opts) {
  memset(c, 0, sizeof *c);
  c->m = m;
  if (opts)
    c->opts = *opts;
  mapopt_diags_clear(diags);
  mapopt_status st =
      mapopt_app_load_json(ctx, "app.json", app, strlen(app), diags, &c->app);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  mapopt_app_options ao = {.spec = spec, .iterations = -1, .warmup = -1};
  st = mapopt_sim_instantiate(m, c->app, &ao, diags, &c->run);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  mapopt_machine_shape shape;
  mapopt_sim_shape(m, c->run, &shape);
  mapopt_dsl_options dopts = {.file = "t.map", .shape = &shape};
  mapopt_app_task_info(c->app, &dopts.tasks, &dopts.ntasks);
  st = mapopt_dsl_compile(ctx, mapper, strlen(mapper), &dopts, diags, &c->prog);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  st = mapopt_sim_run(ctx, c->m, c->run, c->prog, &c->opts, &c->res);
  assert_int_equal(st, MAPOPT_OK);
  assert_non_null(c->res);
  assert_non_null(c->res->log);
  if (c->res->error == MAPOPT_SIM_NONE) {
    /* The lower bound is valid and efficiency in (0, 1]. */
    assert_true(c->res->lower_bound_ns > 0);
    assert_true(c->res->lower_bound_ns <= c->res->elapsed_ns);
    assert_true(c->res->efficiency > 0 && c->res->efficiency <= 1.0);
  }
}

void sim(simcase *c, mapopt_machine *m, const char *app, const char *spec,
         const char *mapper) {
  sim_opts(c, m, app, spec, mapper, NULL);
}

void sim_free(simcase *c) {
  mapopt_sim_result_free(c->res);
  mapopt_dsl_free(c->prog);
  mapopt_app_run_free(c->run);
  mapopt_app_free(c->app);
  mapopt_machine_free(c->m);
  memset(c, 0, sizeof *c);
}

/* The run succeeded; on failure print its log. */
void expect_ok(const simcase *c) {
  if (c->res->error != MAPOPT_SIM_NONE)
    print_message("unexpected error:\n%s", c->res->log);
  assert_int_equal(c->res->error, MAPOPT_SIM_NONE);
}

/* The run failed with class e and exactly the message text. */
void expect_error(const simcase *c, mapopt_sim_error e, const char *text) {
  if (c->res->error != e)
    print_message("log:\n%s", c->res->log);
  assert_string_equal(mapopt_sim_error_name(c->res->error),
                      mapopt_sim_error_name(e));
  assert_non_null(c->res->error_text);
  assert_string_equal(c->res->error_text, text);
  /* The log ends with the message lines, then the class line. */
  char tail[2048];
  snprintf(tail, sizeof tail, "%s\n[mapopt-sim] error class %s at t=", text,
           mapopt_sim_error_name(e));
  assert_non_null(strstr(c->res->log, tail));
}

const mapopt_sim_proc_stats *proc(const simcase *c, const char *kind,
                                  int64_t node, int64_t index) {
  for (size_t i = 0; i < c->res->nprocs; i++) {
    const mapopt_sim_proc_stats *p = &c->res->procs[i];
    if (!strcmp(p->kind, kind) && p->node == node && p->index == index)
      return p;
  }
  fail_msg("no processor %s %lld", kind, (long long)index);
  return NULL;
}

const mapopt_sim_mem_stats *mem(const simcase *c, mapopt_mem_kind k,
                                int64_t index) {
  for (size_t i = 0; i < c->res->nmems; i++) {
    const mapopt_sim_mem_stats *m = &c->res->mems[i];
    if (m->kind == k && m->index == index)
      return m;
  }
  fail_msg("no memory %d %lld", (int)k, (long long)index);
  return NULL;
}

void expect_copies(const simcase *c, int kind, int64_t bytes, int64_t count,
                   int64_t busy) {
  const mapopt_sim_copy_stats *s = &c->res->copies[kind];
  assert_int_equal(s->bytes, bytes);
  assert_int_equal(s->count, count);
  assert_int_equal(s->busy_ns, busy);
}
