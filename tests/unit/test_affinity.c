/*
 * Data-affinity placements of the search space (src/tune/affinity.c and
 * space.c, docs/tuning.md "Placements near the data"): on a model built
 * here, affinity/consumer puts each point of a fill where the first
 * reader of its piece runs under the candidate's placement of the reader,
 * affinity/producer puts each reader where the last writer of its piece
 * ran, a skew is offered on 2-D launches only and places by the skewed
 * point, a launch with no data-flow neighbour gets no affinity value,
 * affinity/prefetch puts a read-only point where the next reader of its
 * piece runs when that is not where the piece was written, the consumer
 * of a piece read at several steps is its reader of the earliest step,
 * affinity/skewed turns the reader a write serves with the piece where
 * every reader reads one piece, affinity/producer of a reduction takes the
 * contribution that must receive its inputs from elsewhere, and every
 * rendering passes the portable check without a warning.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "fixture.h"
#include "mapopt/tune.h"
#include "tune/tune.h"

/* Four tiles of a, filled by fill's four points; use's point i reads tile
 * i + 1 (mod 4), so the first reader of fill's tile i is use's point
 * i - 1; grid's 2 x 2 points read tile i0 + 2 i1 after them. lonely
 * writes b, which nothing reads, and reads nothing. fillc's tiles of c
 * are read by leaf, a task launched alone by the inner task outer: outer's
 * point j reads tile j + 2 through it. */
static const char model[] =
    "{\"format\": \"mapopt-app/1\", \"name\": \"flow\",\n"
    " \"params\": {\"n\": 4096, \"T\": 4},\n"
    " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"
    " \"regions\": [\n"
    "  {\"name\": \"a\", \"fields\": [[\"x\", 8]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": \"T\", \"elements\": \"n / T\"}]}},\n"
    "  {\"name\": \"b\", \"fields\": [[\"x\", 8]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": \"T\", \"elements\": \"n / T\"}]}},\n"
    "  {\"name\": \"c\", \"fields\": [[\"x\", 8]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": \"T\", \"elements\": \"n / T\"}]}}],\n"
    " \"partitions\": [\n"
    "  {\"name\": \"pa\", \"region\": \"a\", \"kind\": \"group\", \"group\": "
    "\"tile\"},\n"
    "  {\"name\": \"pb\", \"region\": \"b\", \"kind\": \"group\", \"group\": "
    "\"tile\"},\n"
    "  {\"name\": \"pc\", \"region\": \"c\", \"kind\": \"group\", \"group\": "
    "\"tile\"}],\n"
    " \"tasks\": [\n"
    "  {\"name\": \"fill\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"use\", \"variants\": [{\"kind\": \"GPU\", \"flops\": "
    "\"elems(0)\", \"precision\": \"f64\"}]},\n"
    "  {\"name\": \"grid\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"lonely\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"fillc\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"leaf\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"outer\", \"point\": [\"j\"], \"variants\": [{\"kind\": "
    "\"GPU\", \"inner\": true}], \"body\": [{\"op\": \"single\", \"task\": "
    "\"leaf\", \"args\": [{\"part\": \"pc\", \"proj\": [\"(j + 2) % T\"], "
    "\"priv\": \"RO\", \"fields\": [\"x\"]}]}]}],\n"
    " \"program\": [\n"
    "  {\"op\": \"index\", \"task\": \"fill\", \"domain\": [\"T\"], \"args\": "
    "[{\"part\": \"pa\", \"priv\": \"WD\", \"fields\": [\"x\"]}]},\n"
    "  {\"op\": \"index\", \"task\": \"fillc\", \"domain\": [\"T\"], "
    "\"args\": [{\"part\": \"pc\", \"priv\": \"WD\", \"fields\": [\"x\"]}]},\n"
    "  {\"op\": \"index\", \"task\": \"lonely\", \"domain\": [\"T\"], "
    "\"args\": [{\"part\": \"pb\", \"priv\": \"WD\", \"fields\": [\"x\"]}]},\n"
    "  {\"op\": \"loop\", \"var\": \"k\", \"count\": \"1\", \"warmup\": "
    "\"0\", \"timed\": true, \"body\": [\n"
    "   {\"op\": \"index\", \"task\": \"use\", \"domain\": [\"T\"], "
    "\"args\": [{\"part\": \"pa\", \"proj\": [\"(i0 + 1) % T\"], \"priv\": "
    "\"RO\", \"fields\": [\"x\"]}]},\n"
    "   {\"op\": \"index\", \"task\": \"grid\", \"domain\": [\"2\", \"2\"], "
    "\"args\": [{\"part\": \"pa\", \"proj\": [\"i0 + 2 * i1\"], \"priv\": "
    "\"RO\", \"fields\": [\"x\"]}]},\n"
    "   {\"op\": \"index\", \"task\": \"outer\", \"domain\": [\"T\"], "
    "\"args\": [{\"part\": \"pc\", \"proj\": [\"(i0 + 2) % T\"], "
    "\"priv\": \"RO\", \"fields\": [\"x\"]}]}]}]}\n";

typedef struct target {
  mapopt_machine *m;
  mapopt_app *app;
  mapopt_app_run *run;
  mapopt_space *sp;
  uint16_t choice[64];
} target;

/* The space of the application model text on machine. */
static void target_open_model(target *g, const char *machine,
                              const char *text) {
  memset(g, 0, sizeof *g);
  assert_int_equal(mapopt_machine_resolve(ctx, machine, diags, &g->m),
                   MAPOPT_OK);
  if (mapopt_app_load_json(ctx, "model.json", text, strlen(text), diags,
                           &g->app) != MAPOPT_OK) {
    fixture_print_diags();
    fail();
  }
  mapopt_app_options ao = {.iterations = -1, .warmup = -1};
  assert_int_equal(mapopt_sim_instantiate(g->m, g->app, &ao, diags, &g->run),
                   MAPOPT_OK);
  assert_int_equal(mapopt_space_new(ctx, g->run, g->m, NULL, diags, &g->sp),
                   MAPOPT_OK);
  assert_true(mapopt_space_nparams(g->sp) <= 64);
}

static void target_open(target *g, const char *machine) {
  target_open_model(g, machine, model);
}

static void target_close(target *g) {
  mapopt_space_free(g->sp);
  mapopt_app_run_free(g->run);
  mapopt_app_free(g->app);
  mapopt_machine_free(g->m);
}

static size_t param(const target *g, const char *name) {
  size_t i;
  assert_int_equal(mapopt_space_find(g->sp, name, &i), MAPOPT_OK);
  return i;
}

/* The index of value v of parameter i, or -1 when it has none. */
static int value_of(const target *g, size_t i, const char *v) {
  const mapopt_space_param *p = mapopt_space_param_at(g->sp, i);
  for (size_t k = 0; k < p->nvalues; k++)
    if (!strcmp(p->values[k], v))
      return (int)k;
  return -1;
}

static void set(target *g, const char *name, const char *v) {
  size_t i = param(g, name);
  int k = value_of(g, i, v);
  if (k < 0)
    fail_msg("%s has no value %s", name, v);
  g->choice[i] = (uint16_t)k;
}

/* The rendering of g's choice, compiled with the portable check: no
 * diagnostic at all. */
static mapopt_program *compile(const target *g, char **text) {
  size_t len;
  assert_int_equal(mapopt_space_render(g->sp, g->choice, text, &len),
                   MAPOPT_OK);
  mapopt_machine_shape shape;
  mapopt_sim_shape(g->m, g->run, &shape);
  mapopt_dsl_options o = {.file = "aff.map", .shape = &shape, .portable = true};
  mapopt_program *prog = NULL;
  mapopt_diags_clear(diags);
  mapopt_status st = mapopt_dsl_compile(ctx, *text, len, &o, diags, &prog);
  if (st != MAPOPT_OK || mapopt_diags_count(diags)) {
    fixture_print_diags();
    fail_msg("the rendering does not pass the portable check:\n%s", *text);
  }
  return prog;
}

/* The global GPU index (node * 4 + local) of every point of a launch of
 * task over ex x ey (1-D when ey is 0) under g's choice on p100x4, point
 * (x, y) into gpu[x + ex * y]: the default placement where no function
 * places it. */
static void placements(const target *g, const char *task, int64_t ex,
                       int64_t ey, int64_t *gpu) {
  char *text;
  mapopt_program *prog = compile(g, &text);
  int dims = ey ? 2 : 1;
  for (int64_t y = 0; y < (ey ? ey : 1); y++)
    for (int64_t x = 0; x < ex; x++) {
      int64_t point[2] = {x, y}, extents[2] = {ex, ey};
      mapopt_map_answer ans;
      assert_int_equal(mapopt_policy_index_map(prog, task, dims, point, extents,
                                               MAPOPT_PROC_GPU, &ans, NULL),
                       MAPOPT_OK);
      int64_t node = ans.points[0].node, proc = ans.points[0].proc;
      if (ans.kind == MAPOPT_MAP_UNSPECIFIED) /* one node of four GPUs */
        mapopt_policy_default_index_place(dims, point, extents, 1, 4, &node,
                                          &proc);
      else
        assert_int_equal(ans.kind, MAPOPT_MAP_POINT);
      gpu[x + ex * y] = node * 4 + proc;
    }
  mapopt_dsl_free(prog);
  mapopt_text_free(text);
}

/* fill's point i writes the tile use's point i - 1 reads first: under
 * use's block placement (point j on GPU j) it goes to GPU i - 1; under
 * use's default placement, wherever that puts point i - 1. */
static void test_consumer(void **state) {
  (void)state;
  target g;
  target_open(&g, "p100x4");
  set(&g, "map.use", "block");
  set(&g, "map.fill", "affinity/consumer");
  int64_t use[4], fill[4];
  placements(&g, "use", 4, 0, use);
  placements(&g, "fill", 4, 0, fill);
  for (int64_t i = 0; i < 4; i++) {
    assert_int_equal(use[i], i);
    assert_int_equal(fill[i], (i + 3) % 4);
  }
  set(&g, "map.use", "default");
  placements(&g, "use", 4, 0, use);
  placements(&g, "fill", 4, 0, fill);
  for (int64_t i = 0; i < 4; i++)
    assert_int_equal(fill[i], use[(i + 3) % 4]);
  target_close(&g);
}

/* use's point j reads tile j + 1, written by fill's point j + 1: under
 * fill's cyclic placement it goes to GPU j + 1; grid's (x, y) reads tile
 * x + 2 y, written by fill's point x + 2 y. */
static void test_producer(void **state) {
  (void)state;
  target g;
  target_open(&g, "p100x4");
  set(&g, "map.fill", "cyclic");
  set(&g, "map.use", "affinity/producer");
  set(&g, "map.grid", "affinity/producer");
  int64_t use[4], grid[4];
  placements(&g, "use", 4, 0, use);
  placements(&g, "grid", 2, 2, grid);
  for (int64_t j = 0; j < 4; j++) {
    assert_int_equal(use[j], (j + 1) % 4);
    assert_int_equal(grid[j], j);
  }
  target_close(&g);
}

/* Two affinity values that refer to each other follow each other's
 * placement with the affinity taken as the default, so the rendering is
 * defined; both functions are written. */
static void test_mutual(void **state) {
  (void)state;
  target g;
  target_open(&g, "p100x4");
  set(&g, "map.fill", "affinity/consumer");
  set(&g, "map.use", "affinity/producer");
  char *text;
  mapopt_program *prog = compile(&g, &text);
  assert_non_null(strstr(text, "IndexTaskMap fill mo_near_consumer_"));
  assert_non_null(strstr(text, "IndexTaskMap use mo_near_producer_"));
  mapopt_dsl_free(prog);
  mapopt_text_free(text);
  target_close(&g);
}

/* Skews are values of the 2-D launch only; skew/0+1 places (x, y) on the
 * block GPU of ((x + y) mod 2, y), skew/1+0 on that of (x, (y + x) mod 2). */
static void test_skew(void **state) {
  (void)state;
  target g;
  target_open(&g, "p100x4");
  assert_int_equal(value_of(&g, param(&g, "map.fill"), "skew/0+1"), -1);
  assert_int_equal(value_of(&g, param(&g, "map.use"), "skew/1+0"), -1);
  int64_t rows[4], cols[4];
  set(&g, "map.grid", "skew/0+1");
  placements(&g, "grid", 2, 2, rows);
  set(&g, "map.grid", "skew/1+0");
  placements(&g, "grid", 2, 2, cols);
  for (int64_t y = 0; y < 2; y++)
    for (int64_t x = 0; x < 2; x++) {
      assert_int_equal(rows[x + 2 * y], (x + y) % 2 + 2 * y);
      assert_int_equal(cols[x + 2 * y], x + 2 * ((y + x) % 2));
    }
  target_close(&g);
}

/* Only the relations the data flow has are offered: lonely has neither,
 * fill reads nothing, use and grid write nothing. */
static void test_offered(void **state) {
  (void)state;
  target g;
  target_open(&g, "p100x4");
  size_t lonely = param(&g, "map.lonely"), fill = param(&g, "map.fill"),
         use = param(&g, "map.use"), grid = param(&g, "map.grid");
  assert_int_equal(value_of(&g, lonely, "affinity/consumer"), -1);
  assert_int_equal(value_of(&g, lonely, "affinity/producer"), -1);
  assert_true(value_of(&g, fill, "affinity/consumer") > 0);
  assert_int_equal(value_of(&g, fill, "affinity/producer"), -1);
  assert_int_equal(value_of(&g, use, "affinity/consumer"), -1);
  assert_true(value_of(&g, use, "affinity/producer") > 0);
  assert_int_equal(value_of(&g, grid, "affinity/consumer"), -1);
  /* The templates keep their places before them. */
  assert_int_equal(value_of(&g, fill, "cyclic"), 1);
  assert_int_equal(value_of(&g, fill, "decompose"), 5);
  target_close(&g);
}

/* On two nodes, the lookup names the node as well: fill's point i on the
 * node and GPU of use's point i - 1 under cyclic-block (point j on node
 * j mod 2). */
static void test_two_nodes(void **state) {
  (void)state;
  target g;
  target_open(&g, "lassen:nodes=2");
  set(&g, "map.use", "cyclic-block");
  set(&g, "map.fill", "affinity/consumer");
  char *text;
  mapopt_program *prog = compile(&g, &text);
  for (int64_t i = 0; i < 4; i++) {
    int64_t point[1] = {i}, ext[1] = {4}, prev[1] = {(i + 3) % 4};
    mapopt_map_answer a, b;
    assert_int_equal(mapopt_policy_index_map(prog, "fill", 1, point, ext,
                                             MAPOPT_PROC_GPU, &a, NULL),
                     MAPOPT_OK);
    assert_int_equal(mapopt_policy_index_map(prog, "use", 1, prev, ext,
                                             MAPOPT_PROC_GPU, &b, NULL),
                     MAPOPT_OK);
    assert_int_equal(a.points[0].node, b.points[0].node);
    assert_int_equal(a.points[0].proc, b.points[0].proc);
    assert_int_equal(b.points[0].node, (i + 3) % 4 % 2);
  }
  mapopt_dsl_free(prog);
  mapopt_text_free(text);
  target_close(&g);
}

/* A reader launched alone is placed where its parent runs when it follows
 * its parent: fillc's point i goes where outer's point i + 2 runs; when
 * it does not, nothing places the reader and fillc keeps the default
 * placement (point i on GPU i). */
static void test_single_reader(void **state) {
  (void)state;
  target g;
  target_open(&g, "p100x4");
  assert_true(value_of(&g, param(&g, "map.fillc"), "affinity/consumer") > 0);
  /* outer is inner: its own arguments are no reads. */
  assert_int_equal(value_of(&g, param(&g, "map.outer"), "affinity/producer"),
                   -1);
  set(&g, "map.outer", "cyclic");
  set(&g, "map.fillc", "affinity/consumer");
  int64_t alone[4], follows[4];
  placements(&g, "fillc", 4, 0, alone);
  set(&g, "follow.leaf", "parent");
  placements(&g, "fillc", 4, 0, follows);
  for (int64_t i = 0; i < 4; i++) {
    assert_int_equal(alone[i], i);
    assert_int_equal(follows[i], (i + 2) % 4);
  }
  target_close(&g);
}

/* use writes nothing: its point j reads tile j + 1 before grid does.
 * Under grid's skew/0+1 the tile x + 2 y is read on GPU (x + y) mod 2 +
 * 2 y: tiles 2 and 3 away from fill's point (GPU t), tiles 0 and 1 where
 * fill wrote them. use's points 1 and 2 (tiles 2, 3) go to grid's GPUs 3
 * and 2; points 0 and 3 have no reader elsewhere and keep the default
 * placement (GPU j). fill writes, so it is offered no prefetch. */
static void test_prefetch(void **state) {
  (void)state;
  target g;
  target_open(&g, "p100x4");
  assert_int_equal(value_of(&g, param(&g, "map.fill"), "affinity/prefetch"),
                   -1);
  set(&g, "map.grid", "skew/0+1");
  set(&g, "map.use", "affinity/prefetch");
  int64_t use[4];
  placements(&g, "use", 4, 0, use);
  static const int64_t want[4] = {0, 3, 2, 3};
  for (int64_t j = 0; j < 4; j++)
    assert_int_equal(use[j], want[j]);
  /* Where grid reads every tile where it was written, nothing moves. */
  set(&g, "map.grid", "default");
  placements(&g, "use", 4, 0, use);
  for (int64_t j = 0; j < 4; j++)
    assert_int_equal(use[j], j);
  target_close(&g);
}

/* Two tiles; walk's point j reads tile (j + s) mod 2 at its step s. In
 * program order the first reader of tile 1 is walk's point 0 (its step
 * 1), but point 1 reads it at step 0, before: fill's point 1 goes where
 * walk's point 1 runs. */
static const char steps_model[] =
    "{\"format\": \"mapopt-app/1\", \"name\": \"steps\",\n"
    " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"
    " \"regions\": [{\"name\": \"a\", \"fields\": [[\"x\", 8]], "
    "\"atoms\": {\"groups\": [{\"group\": \"tile\", \"count\": 2, "
    "\"elements\": 4096}]}}],\n"
    " \"partitions\": [{\"name\": \"pa\", \"region\": \"a\", "
    "\"kind\": \"group\", \"group\": \"tile\"}],\n"
    " \"tasks\": [\n"
    "  {\"name\": \"fill\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"leaf\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"walk\", \"point\": [\"j\"], \"variants\": "
    "[{\"kind\": \"GPU\", \"inner\": true}], \"body\": [{\"op\": "
    "\"loop\", \"var\": \"s\", \"count\": 2, \"body\": [{\"op\": "
    "\"single\", \"task\": \"leaf\", \"args\": [{\"part\": \"pa\", "
    "\"proj\": [\"(j + s) % 2\"], \"priv\": \"RO\", \"fields\": "
    "[\"x\"]}]}]}]}],\n"
    " \"program\": [\n"
    "  {\"op\": \"index\", \"task\": \"fill\", \"domain\": [2], "
    "\"args\": [{\"part\": \"pa\", \"priv\": \"WD\", \"fields\": "
    "[\"x\"]}]},\n"
    "  {\"op\": \"loop\", \"var\": \"k\", \"count\": 1, \"warmup\": "
    "0, \"timed\": true, \"body\": [\n"
    "   {\"op\": \"index\", \"task\": \"walk\", \"domain\": [2], "
    "\"args\": [{\"part\": \"pa\", \"priv\": \"RO\", \"fields\": "
    "[\"x\"]}]}]}]}\n";

static void test_earliest_step(void **state) {
  (void)state;
  target g;
  target_open_model(&g, "p100x4", steps_model);
  set(&g, "map.walk", "cyclic");
  set(&g, "follow.leaf", "parent");
  set(&g, "map.fill", "affinity/consumer");
  int64_t walk[2], fill[2];
  placements(&g, "walk", 2, 0, walk);
  placements(&g, "fill", 2, 0, fill);
  assert_int_not_equal(walk[0], walk[1]);
  assert_int_equal(fill[0], walk[0]);
  assert_int_equal(fill[1], walk[1]);
  target_close(&g);
}

/* A product of blocks: fillb's tile y of b is read by prod's points (0, y)
 * and (1, y), fillc's tile x + 2 y of c by prod's (x, y) alone, and prod
 * reduces into tile x of a, which reader's point x then reads; nb's
 * points both read both tiles of h (a halo). */
static const char blocks_model[] =
    "{\"format\": \"mapopt-app/1\", \"name\": \"blocks\",\n"
    " \"params\": {\"n\": 1048576},\n"
    " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"
    " \"regions\": [\n"
    "  {\"name\": \"a\", \"fields\": [[\"x\", 8]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": 2, \"elements\": \"n\"}]}},\n"
    "  {\"name\": \"b\", \"fields\": [[\"x\", 8]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": 2, \"elements\": \"n\"}]}},\n"
    "  {\"name\": \"c\", \"fields\": [[\"x\", 8]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": 4, \"elements\": \"n\"}]}},\n"
    "  {\"name\": \"h\", \"fields\": [[\"x\", 8]], \"atoms\": {\"groups\": "
    "[{\"group\": \"tile\", \"count\": 2, \"elements\": \"n\"}]}}],\n"
    " \"partitions\": [\n"
    "  {\"name\": \"pa\", \"region\": \"a\", \"kind\": \"group\", \"group\": "
    "\"tile\"},\n"
    "  {\"name\": \"pb\", \"region\": \"b\", \"kind\": \"group\", \"group\": "
    "\"tile\"},\n"
    "  {\"name\": \"pc\", \"region\": \"c\", \"kind\": \"group\", \"group\": "
    "\"tile\"},\n"
    "  {\"name\": \"ph\", \"region\": \"h\", \"kind\": \"group\", \"group\": "
    "\"tile\"}],\n"
    " \"tasks\": [\n"
    "  {\"name\": \"home\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"fillb\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"fillc\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"fillh\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"prod\", \"variants\": [{\"kind\": \"GPU\", \"flops\": "
    "\"1000 * elems(1)\", \"precision\": \"f64\"}]},\n"
    "  {\"name\": \"reader\", \"variants\": [{\"kind\": \"GPU\"}]},\n"
    "  {\"name\": \"nb\", \"variants\": [{\"kind\": \"GPU\"}]}],\n"
    " \"program\": [\n"
    "  {\"op\": \"index\", \"task\": \"home\", \"domain\": [2], \"args\": "
    "[{\"part\": \"pa\", \"priv\": \"WD\", \"fields\": [\"x\"]}]},\n"
    "  {\"op\": \"index\", \"task\": \"fillb\", \"domain\": [2], \"args\": "
    "[{\"part\": \"pb\", \"priv\": \"WD\", \"fields\": [\"x\"]}]},\n"
    "  {\"op\": \"index\", \"task\": \"fillc\", \"domain\": [4], \"args\": "
    "[{\"part\": \"pc\", \"priv\": \"WD\", \"fields\": [\"x\"]}]},\n"
    "  {\"op\": \"index\", \"task\": \"fillh\", \"domain\": [2], \"args\": "
    "[{\"part\": \"ph\", \"priv\": \"WD\", \"fields\": [\"x\"]}]},\n"
    "  {\"op\": \"loop\", \"var\": \"k\", \"count\": 1, \"warmup\": 0, "
    "\"timed\": true, \"body\": [\n"
    "   {\"op\": \"index\", \"task\": \"prod\", \"domain\": [2, 2], "
    "\"args\": [{\"part\": \"pa\", \"proj\": [\"i0\"], \"priv\": "
    "\"REDUCE\", \"redop\": \"sum\", \"fields\": [\"x\"]}, {\"part\": "
    "\"pb\", \"proj\": [\"i1\"], \"priv\": \"RO\", \"fields\": [\"x\"]}, "
    "{\"part\": \"pc\", \"proj\": [\"i0 + 2 * i1\"], \"priv\": \"RO\", "
    "\"fields\": [\"x\"]}]},\n"
    "   {\"op\": \"index\", \"task\": \"reader\", \"domain\": [2], "
    "\"args\": [{\"part\": \"pa\", \"priv\": \"RO\", \"fields\": "
    "[\"x\"]}]},\n"
    "   {\"op\": \"index\", \"task\": \"nb\", \"domain\": [2], \"args\": "
    "[{\"part\": \"ph\", \"proj\": [\"i0\"], \"priv\": \"RO\", \"fields\": "
    "[\"x\"]}, {\"part\": \"ph\", \"proj\": [\"(i0 + 1) % 2\"], \"priv\": "
    "\"RO\", \"fields\": [\"x\"]}]}]}]}\n";

/* affinity/skewed writes tile y of b for prod's reader (y, y), turning
 * with the tile (affinity/consumer serves (0, y)); it is offered where
 * the readers of the task's tiles are distinct: not to fillc (one reader
 * per tile), not to fillh (both readers read both tiles). */
static void test_skewed(void **state) {
  (void)state;
  target g;
  target_open_model(&g, "p100x4", blocks_model);
  assert_int_equal(value_of(&g, param(&g, "map.fillc"), "affinity/skewed"), -1);
  assert_int_equal(value_of(&g, param(&g, "map.fillh"), "affinity/skewed"), -1);
  assert_true(value_of(&g, param(&g, "map.fillh"), "affinity/consumer") > 0);
  set(&g, "map.prod", "cyclic");
  int64_t prod[4], fillb[2];
  placements(&g, "prod", 2, 2, prod);
  set(&g, "map.fillb", "affinity/consumer");
  placements(&g, "fillb", 2, 0, fillb);
  for (int64_t y = 0; y < 2; y++)
    assert_int_equal(fillb[y], prod[2 * y]);
  set(&g, "map.fillb", "affinity/skewed");
  placements(&g, "fillb", 2, 0, fillb);
  for (int64_t y = 0; y < 2; y++)
    assert_int_equal(fillb[y], prod[y + 2 * y]);
  assert_int_not_equal(fillb[1], prod[2]);
  target_close(&g);
}

/* reader's point x reads tile x of a, into which prod's (x, 0) and (x, 1)
 * reduce, in any order: affinity/producer takes the one that must receive
 * its tile of b from another GPU (with fillb skewed, (0, 1) and (1, 0)),
 * as the one that ends last; where both or neither must, the last in
 * program order, (x, 1). */
static void test_last_to_end(void **state) {
  (void)state;
  target g;
  target_open_model(&g, "p100x4", blocks_model);
  set(&g, "map.prod", "cyclic");
  set(&g, "map.fillc", "affinity/consumer");
  set(&g, "map.reader", "affinity/producer");
  int64_t prod[4], reader[2];
  placements(&g, "prod", 2, 2, prod);
  set(&g, "map.fillb", "affinity/skewed");
  placements(&g, "reader", 2, 0, reader);
  assert_int_equal(reader[0], prod[0 + 2 * 1]);
  assert_int_equal(reader[1], prod[1 + 2 * 0]);
  set(&g, "map.fillb", "affinity/consumer");
  placements(&g, "reader", 2, 0, reader);
  assert_int_equal(reader[0], prod[0 + 2 * 1]);
  assert_int_equal(reader[1], prod[1 + 2 * 1]);
  target_close(&g);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_consumer),      cmocka_unit_test(test_producer),
      cmocka_unit_test(test_mutual),        cmocka_unit_test(test_skew),
      cmocka_unit_test(test_offered),       cmocka_unit_test(test_two_nodes),
      cmocka_unit_test(test_single_reader), cmocka_unit_test(test_prefetch),
      cmocka_unit_test(test_earliest_step), cmocka_unit_test(test_skewed),
      cmocka_unit_test(test_last_to_end),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
