/*
 * Unit tests of libmapopt-starpu without MPI: the machine's DSL shape;
 * placement of index points and single tasks (kind lists, mapping
 * functions, defaults, and every mapping error with the simulator's exact
 * text); memory nodes and layouts; the storage geometry of every layout;
 * codelet copies with specific nodes; concurrent queries; loading errors
 * and out of memory. Most tests use a synthetic machine (worker ids and
 * memory nodes chosen so that a wrong translation shows); the last starts
 * StarPU with 2 CPU workers to detect the real machine and register data.
 */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mapopt/starpu.h"

#include "failing_alloc.h"
#include "fixture.h"

/* 2 ranks of 2 CPU workers (ids 5 and 7, NUMA nodes 1 and 2) and,
 * optionally, 2 CUDA workers (ids 3, 4 on memory nodes 3, 4). */
static mapopt_starpu_machine machine(int gpus) {
  mapopt_starpu_machine m;
  memset(&m, 0, sizeof m);
  m.ranks = 2;
  m.ncpus = 2;
  m.ngpus = gpus;
  m.nnuma = 2;
  m.cpu_worker[0] = 5;
  m.cpu_worker[1] = 7;
  m.cpu_node[0] = 1;
  m.cpu_node[1] = 2;
  for (int i = 0; i < gpus; i++) {
    m.gpu_worker[i] = 3 + i;
    m.gpu_node[i] = 3 + i;
  }
  return m;
}

static mapopt_starpu *compile_with(const char *text, int gpus,
                                   const mapopt_starpu_options *opts) {
  mapopt_diags_clear(diags);
  mapopt_starpu_machine m = machine(gpus);
  mapopt_starpu *s = NULL;
  mapopt_status st = mapopt_starpu_compile(ctx, "m.map", text, strlen(text), &m,
                                           opts, diags, &s);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  return s;
}

static mapopt_starpu *compile(const char *text, int gpus) {
  return compile_with(text, gpus, NULL);
}

static const unsigned CPU = 1u << MAPOPT_PROC_CPU;
static const unsigned GPU = 1u << MAPOPT_PROC_GPU;

static mapopt_starpu_place place1(mapopt_starpu *s, const char *task,
                                  unsigned variants, int64_t i, int64_t n) {
  mapopt_starpu_place p;
  mapopt_diags_clear(diags);
  mapopt_status st =
      mapopt_starpu_place_index(s, task, variants, 1, &i, &n, diags, &p);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  return p;
}

/* The diagnostics after a failed query, one formatted line each. */
static const char *diag_lines(void) {
  static char buf[2048];
  size_t n = 0;
  buf[0] = 0;
  for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
    char line[512];
    mapopt_diag_format(mapopt_diags_get(diags, i), line, sizeof line);
    n += (size_t)snprintf(buf + n, sizeof buf - n, "%s%s", i ? "\n" : "", line);
  }
  return buf;
}

static const char *index_fails(mapopt_starpu *s, const char *task,
                               unsigned variants, int64_t i, int64_t n) {
  mapopt_starpu_place p;
  mapopt_diags_clear(diags);
  assert_int_equal(
      mapopt_starpu_place_index(s, task, variants, 1, &i, &n, diags, &p),
      MAPOPT_EMAP);
  return diag_lines();
}

static bool has_worker(const mapopt_starpu_place *p, int w) {
  return p->workers[w / 32] >> (w % 32) & 1u;
}

/* ---- the machine ------------------------------------------------------- */

static void test_shape(void **state) {
  (void)state;
  mapopt_machine_shape sh;
  mapopt_starpu_machine m = machine(0);
  assert_int_equal(mapopt_starpu_machine_shape(&m, &sh), MAPOPT_OK);
  assert_int_equal(sh.nodes, 2);
  assert_int_equal(sh.procs[MAPOPT_PROC_CPU], 2);
  assert_int_equal(sh.procs[MAPOPT_PROC_GPU], 0);
  assert_int_equal(sh.procs[MAPOPT_PROC_OMP], 0);
  unsigned cpu = sh.affinity[MAPOPT_PROC_CPU];
  assert_true(cpu >> MAPOPT_MEM_SYSMEM & 1);
  assert_true(cpu >> MAPOPT_MEM_SOCKMEM & 1);
  assert_false(cpu >> MAPOPT_MEM_RDMEM & 1);
  assert_false(cpu >> MAPOPT_MEM_ZCMEM & 1);
  m = machine(2);
  assert_int_equal(mapopt_starpu_machine_shape(&m, &sh), MAPOPT_OK);
  assert_int_equal(sh.procs[MAPOPT_PROC_GPU], 2);
  assert_true(sh.affinity[MAPOPT_PROC_GPU] >> MAPOPT_MEM_FBMEM & 1);
  assert_true(sh.affinity[MAPOPT_PROC_GPU] >> MAPOPT_MEM_ZCMEM & 1);
  assert_true(sh.affinity[MAPOPT_PROC_CPU] >> MAPOPT_MEM_ZCMEM & 1);
  /* Bad descriptions. */
  m = machine(0);
  m.ranks = 0;
  assert_int_equal(mapopt_starpu_machine_shape(&m, &sh), MAPOPT_EINVAL);
  m = machine(0);
  m.ncpus = 0;
  assert_int_equal(mapopt_starpu_machine_shape(&m, &sh), MAPOPT_EINVAL);
  m = machine(0);
  m.ncpus = MAPOPT_STARPU_MAX_WORKERS + 1;
  assert_int_equal(mapopt_starpu_machine_shape(&m, &sh), MAPOPT_EINVAL);
  m = machine(0);
  m.nnuma = 0;
  assert_int_equal(mapopt_starpu_machine_shape(&m, &sh), MAPOPT_EINVAL);
  mapopt_starpu *s = NULL;
  assert_int_equal(
      mapopt_starpu_compile(ctx, "m.map", "", 0, &m, NULL, diags, &s),
      MAPOPT_EINVAL);
  assert_null(s);
}

/* ---- placement --------------------------------------------------------- */

static void test_default_index(void **state) {
  (void)state;
  mapopt_starpu *s = compile("", 0);
  /* 4 points on 2 ranks x 2 workers: blocked over ranks, then workers. */
  static const int rank[] = {0, 0, 1, 1}, worker[] = {5, 7, 5, 7};
  for (int i = 0; i < 4; i++) {
    mapopt_starpu_place p = place1(s, "t", CPU, i, 4);
    assert_int_equal(p.kind, MAPOPT_PROC_CPU);
    assert_int_equal(p.rank, rank[i]);
    assert_int_equal(p.proc, i % 2);
    assert_int_equal(p.worker, worker[i]);
    assert_true(has_worker(&p, worker[i]));
    assert_false(has_worker(&p, worker[(i + 1) % 2]));
  }
  /* A (2, 2) domain: greedy splits dimension 0 over the ranks. */
  int64_t pt[2] = {1, 0}, ext[2] = {2, 2};
  mapopt_starpu_place p;
  assert_int_equal(
      mapopt_starpu_place_index(s, "t", CPU, 2, pt, ext, diags, &p), MAPOPT_OK);
  assert_int_equal(p.rank, 1);
  assert_int_equal(p.proc, 0);
  /* Points outside the domain and bad dimensions are the caller's error. */
  pt[0] = 2;
  assert_int_equal(
      mapopt_starpu_place_index(s, "t", CPU, 2, pt, ext, diags, &p),
      MAPOPT_EINVAL);
  assert_int_equal(
      mapopt_starpu_place_index(s, "t", CPU, 4, pt, ext, diags, &p),
      MAPOPT_EINVAL);
  mapopt_starpu_free(s);
}

static void test_index_map(void **state) {
  (void)state;
  mapopt_starpu *s =
      compile("c = Machine(CPU);\n"
              "def cyc(Task t) { i = t.ipoint[0];\n"
              "  return c[i % c.size[0], i / c.size[0] % c.size[1]]; }\n"
              "def bad(Task t) { return c[t.ipoint[0], 0]; }\n"
              "def far(Task t) { return c[0, t.ipoint[0]]; }\n"
              "IndexTaskMap cyclic cyc;\nIndexTaskMap oob bad;\n"
              "IndexTaskMap sliced far;\n",
              0);
  mapopt_starpu_place p = place1(s, "cyclic", CPU, 3, 8);
  assert_int_equal(p.rank, 1);
  assert_int_equal(p.proc, 1);
  assert_int_equal(p.worker, 7);
  p = place1(s, "cyclic", CPU, 2, 8);
  assert_int_equal(p.rank, 0);
  assert_int_equal(p.proc, 1);
  /* Mapping errors read as the simulator prints them. */
  assert_string_equal(index_fails(s, "oob", CPU, 2, 4),
                      "m.map:4:27: mapping error: Sharding node index out of "
                      "bound! 2 >= 2\n"
                      "m.map:4:27: note: index [2, 0] is outside the machine "
                      "model's size (2, 2) (Machine(CPU): (2, 2))\n"
                      "m.map: note: while placing point (2,) of task 'oob' "
                      "with 'bad'");
  assert_string_equal(index_fails(s, "sliced", CPU, 3, 4),
                      "m.map:5:27: mapping error: Slice processor index out "
                      "of bound! 3 >= 2\n"
                      "m.map:5:27: note: index [0, 3] is outside the machine "
                      "model's size (2, 2) (Machine(CPU): (2, 2))\n"
                      "m.map: note: while placing point (3,) of task 'sliced' "
                      "with 'far'");
  mapopt_starpu_free(s);
}

static void test_kinds(void **state) {
  (void)state;
  /* No GPU workers: GPU and OMP are skipped, CPU is chosen. */
  mapopt_starpu *s = compile("Task * GPU, OMP, CPU;\nTask g GPU;\n", 0);
  assert_int_equal(place1(s, "t", CPU | GPU, 0, 1).kind, MAPOPT_PROC_CPU);
  assert_string_equal(index_fails(s, "g", CPU | GPU, 0, 1),
                      "m.map:2:6: mapping error: Invalid policy: task g "
                      "requested "
                      "GPU, but has no valid task variant for the kind");
  mapopt_starpu_free(s);
  mapopt_starpu_options o = {.lenient_kinds = true};
  s = compile_with("Task g GPU;\n", 0, &o);
  assert_int_equal(place1(s, "g", CPU | GPU, 0, 1).kind, MAPOPT_PROC_CPU);
  mapopt_starpu_free(s);
  /* With CUDA workers the default order prefers GPU; ids come from the
   * GPU table. A function returning CPU points for a GPU task is R16. */
  s = compile("c = Machine(CPU);\ndef k(Task t) { return c[0, 0]; }\n"
              "IndexTaskMap wrong k;\n",
              2);
  mapopt_starpu_place p = place1(s, "t", CPU | GPU, 3, 4);
  assert_int_equal(p.kind, MAPOPT_PROC_GPU);
  assert_int_equal(p.rank, 1);
  assert_int_equal(p.worker, 4);
  assert_int_equal(place1(s, "t", CPU, 3, 4).worker, 7);
  assert_string_equal(index_fails(s, "wrong", CPU | GPU, 0, 1),
                      "m.map:2:17: mapping error: wrong is actually mapped to "
                      "GPU, but machine model is for CPU\n"
                      "m.map: note: while placing point (0,) of task 'wrong' "
                      "with 'k'");
  /* A codelet's variants. */
  struct starpu_codelet cl;
  memset(&cl, 0, sizeof cl);
  assert_int_equal(mapopt_starpu_codelet_variants(&cl), 0);
  cl.cpu_funcs[0] = (starpu_cpu_func_t)1;
  assert_int_equal(mapopt_starpu_codelet_variants(&cl), CPU);
  cl.cuda_funcs[0] = (starpu_cuda_func_t)1;
  assert_int_equal(mapopt_starpu_codelet_variants(&cl), CPU | GPU);
  mapopt_starpu_free(s);
}

static void test_single(void **state) {
  (void)state;
  mapopt_starpu *s =
      compile("c = Machine(CPU);\n"
              "def same(Task t) { return c[*t.parent.processor(c)]; }\n"
              "def both(Task t) { return c[t.parent.processor(c)[0], *]; }\n"
              "def away(Task t) { return c[1, 0]; }\n"
              "SingleTaskMap same_t same;\nSingleTaskMap both_t both;\n"
              "SingleTaskMap away_t away;\n",
              0);
  mapopt_starpu_place p;
  /* From the top level: rank 0, processor 0, every time. */
  for (int k = 0; k < 3; k++) {
    assert_int_equal(mapopt_starpu_place_single(s, "t", CPU, NULL, diags, &p),
                     MAPOPT_OK);
    assert_int_equal(p.rank, 0);
    assert_int_equal(p.proc, 0);
  }
  /* Deeper: round-robin over the parent's rank's workers. */
  int64_t pt = 3, ext = 4;
  mapopt_task_ref parent = {"step", true, 1, &pt, &ext, {MAPOPT_PROC_CPU, 1, 1},
                            NULL};
  for (int k = 0; k < 3; k++) {
    assert_int_equal(
        mapopt_starpu_place_single(s, "t", CPU, &parent, diags, &p), MAPOPT_OK);
    assert_int_equal(p.rank, 1);
    assert_int_equal(p.proc, k % 2);
  }
  /* On the parent's processor; a point set allows all its workers. */
  assert_int_equal(
      mapopt_starpu_place_single(s, "same_t", CPU, &parent, diags, &p),
      MAPOPT_OK);
  assert_int_equal(p.rank, 1);
  assert_int_equal(p.proc, 1);
  assert_int_equal(p.worker, 7);
  assert_false(has_worker(&p, 5));
  assert_int_equal(
      mapopt_starpu_place_single(s, "both_t", CPU, &parent, diags, &p),
      MAPOPT_OK);
  assert_int_equal(p.worker, 5);
  assert_true(has_worker(&p, 5));
  assert_true(has_worker(&p, 7));
  /* Another rank than the parent's: R18. */
  parent.proc.node = 0;
  mapopt_diags_clear(diags);
  assert_int_equal(
      mapopt_starpu_place_single(s, "away_t", CPU, &parent, diags, &p),
      MAPOPT_EMAP);
  assert_string_equal(diag_lines(),
                      "m.map: mapping error: Assertion failed: single task "
                      "must stay on its parent's node\n"
                      "m.map: note: while mapping task 'away_t' with 'away'");
  mapopt_starpu_free(s);
}

/* ---- memory and layout ----------------------------------------------------
 */

static mapopt_starpu_memory memory(mapopt_starpu *s, const char *task,
                                   const char *name, size_t pos,
                                   const mapopt_starpu_place *p) {
  const char *names[] = {name};
  mapopt_region_keys keys = {names, 1, pos};
  mapopt_starpu_memory m;
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_starpu_memory_of(s, task, &keys, p, diags, &m),
                   MAPOPT_OK);
  return m;
}

static void test_memory(void **state) {
  (void)state;
  mapopt_starpu *s = compile("Region t * CPU RDMEM, SOCKMEM;\n"
                             "Region r * CPU ZCMEM, SYSMEM;\n"
                             "Region g * GPU ZCMEM;\n"
                             "Region v 1 CPU VIRTUAL;\n",
                             2);
  mapopt_starpu_place cpu1 = place1(s, "t", CPU, 1, 4); /* rank 0, CPU 1 */
  /* The default: SYSMEM, main RAM, which is not worker 7's own node. */
  mapopt_starpu_memory m = memory(s, "d", "x", 0, &cpu1);
  assert_int_equal(m.kind, MAPOPT_MEM_SYSMEM);
  assert_int_equal(m.node, STARPU_MAIN_RAM);
  assert_int_equal(m.codelet_node, STARPU_MAIN_RAM);
  /* RDMEM does not exist: SOCKMEM, the worker's NUMA node. */
  m = memory(s, "t", "x", 0, &cpu1);
  assert_int_equal(m.kind, MAPOPT_MEM_SOCKMEM);
  assert_int_equal(m.node, 2);
  assert_int_equal(m.codelet_node, STARPU_SPECIFIC_NODE_LOCAL);
  /* ZCMEM (there are GPUs) is main RAM for a CPU. */
  m = memory(s, "r", "x", 0, &cpu1);
  assert_int_equal(m.kind, MAPOPT_MEM_ZCMEM);
  assert_int_equal(m.node, STARPU_MAIN_RAM);
  /* A GPU: its framebuffer by default; ZCMEM is main RAM in place. */
  mapopt_starpu_place gpu1 = place1(s, "g", CPU | GPU, 1, 4);
  m = memory(s, "d", "x", 0, &gpu1);
  assert_int_equal(m.kind, MAPOPT_MEM_FBMEM);
  assert_int_equal(m.node, 4);
  assert_int_equal(m.codelet_node, STARPU_SPECIFIC_NODE_LOCAL);
  m = memory(s, "g", "x", 0, &gpu1);
  assert_int_equal(m.kind, MAPOPT_MEM_ZCMEM);
  assert_int_equal(m.codelet_node, STARPU_SPECIFIC_NODE_CPU);
  /* VIRTUAL: every StarPU task is a leaf. */
  const char *names[] = {"x"};
  mapopt_region_keys keys = {names, 1, 1};
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_starpu_memory_of(s, "v", &keys, &cpu1, diags, &m),
                   MAPOPT_EMAP);
  assert_string_equal(diag_lines(),
                      "m.map: mapping error: Invalid mapper output: virtual "
                      "mapping requested for region requirement 1 of leaf "
                      "task v");
  mapopt_starpu_free(s);
}

static void test_layout(void **state) {
  (void)state;
  const char *names[] = {"A_tile", "A"};
  mapopt_region_keys keys = {names, 2, 0};
  mapopt_layout l;
  mapopt_starpu *s = compile("Layout t A SYSMEM AOS;\n", 0);
  mapopt_starpu_place p = place1(s, "t", CPU, 0, 1);
  mapopt_starpu_layout_of(s, "u", &keys, &p, MAPOPT_MEM_SYSMEM, &l);
  assert_int_equal(l.soa, MAPOPT_LAYOUT_YES);
  assert_int_equal(l.c_order, MAPOPT_LAYOUT_NO);
  mapopt_starpu_layout_of(s, "t", &keys, &p, MAPOPT_MEM_SYSMEM, &l);
  assert_int_equal(l.soa, MAPOPT_LAYOUT_NO);
  assert_int_equal(l.c_order, MAPOPT_LAYOUT_NO);
  mapopt_starpu_layout_of(s, "t", &keys, &p, MAPOPT_MEM_SOCKMEM, &l);
  assert_int_equal(l.soa, MAPOPT_LAYOUT_YES);
  mapopt_starpu_free(s);
  /* The application's declared default order fills an unset order. */
  mapopt_starpu_options o = {.c_order_default = true};
  s = compile_with("Layout t * * AOS;\nLayout u * * F_order;\n", 0, &o);
  mapopt_starpu_layout_of(s, "t", &keys, &p, MAPOPT_MEM_SYSMEM, &l);
  assert_int_equal(l.c_order, MAPOPT_LAYOUT_YES);
  mapopt_starpu_layout_of(s, "u", &keys, &p, MAPOPT_MEM_SYSMEM, &l);
  assert_int_equal(l.c_order, MAPOPT_LAYOUT_NO);
  mapopt_starpu_free(s);
}

static mapopt_layout layout(bool soa, bool c_order) {
  return (mapopt_layout){soa ? MAPOPT_LAYOUT_YES : MAPOPT_LAYOUT_NO,
                         c_order ? MAPOPT_LAYOUT_YES : MAPOPT_LAYOUT_NO,
                         MAPOPT_ALIGN_NONE,
                         0,
                         false,
                         false};
}

static void test_geometry(void **state) {
  (void)state;
  int64_t e[2] = {5, 3}; /* X = 5, Y = 3 */
  mapopt_starpu_geometry g;
  /* SOA F_order: X, Y, F. */
  mapopt_layout l = layout(true, false);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 2, 8, &g), MAPOPT_OK);
  assert_int_equal(g.nstorage, 3);
  assert_int_equal(g.storage[0], 0);
  assert_int_equal(g.storage[1], 1);
  assert_int_equal(g.storage[2], -1);
  assert_int_equal(g.n[0], 5);
  assert_int_equal(g.n[1], 3);
  assert_int_equal(g.n[2], 2);
  assert_int_equal(g.ld[1], 5);
  assert_int_equal(g.ld[2], 15);
  assert_int_equal(g.stride[0], 1);
  assert_int_equal(g.stride[1], 5);
  assert_int_equal(g.field_stride, 15);
  assert_int_equal(g.elements, 30);
  /* SOA C_order: Y, X, F. */
  l = layout(true, true);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 2, 8, &g), MAPOPT_OK);
  assert_int_equal(g.storage[0], 1);
  assert_int_equal(g.stride[0], 3);
  assert_int_equal(g.stride[1], 1);
  assert_int_equal(g.field_stride, 15);
  /* AOS F_order: F, X, Y. */
  l = layout(false, false);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 2, 8, &g), MAPOPT_OK);
  assert_int_equal(g.storage[0], -1);
  assert_int_equal(g.field_stride, 1);
  assert_int_equal(g.stride[0], 2);
  assert_int_equal(g.stride[1], 10);
  /* AOS C_order: F, Y, X. */
  l = layout(false, true);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 2, 8, &g), MAPOPT_OK);
  assert_int_equal(g.stride[1], 2);
  assert_int_equal(g.stride[0], 6);
  /* One field: no field dimension, AOS is SOA; a matrix. */
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 1, 8, &g), MAPOPT_OK);
  assert_int_equal(g.nstorage, 2);
  assert_int_equal(g.stride[1], 1);
  assert_int_equal(g.stride[0], 3);
  assert_int_equal(g.field_stride, 0);
  assert_int_equal(g.align, 0);
  /* Alignment: the smallest power of two from 16 that satisfies. */
  static const struct {
    mapopt_align_op op;
    int64_t n;
    size_t want;
  } al[] = {{MAPOPT_ALIGN_EQ, 64, 64}, {MAPOPT_ALIGN_GE, 100, 128},
            {MAPOPT_ALIGN_GT, 16, 32}, {MAPOPT_ALIGN_LE, 8, 8},
            {MAPOPT_ALIGN_LT, 16, 8},  {MAPOPT_ALIGN_NE, 16, 32},
            {MAPOPT_ALIGN_LT, 1, 0}};
  for (size_t i = 0; i < sizeof al / sizeof *al; i++) {
    l.align_op = al[i].op;
    l.align = al[i].n;
    assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 1, 8, &g), MAPOPT_OK);
    assert_int_equal(g.align, al[i].want);
  }
  /* Too many storage dimensions, bad counts, overflow. */
  int64_t e3[3] = {2, 2, 2}, big[2] = {(int64_t)1 << 40, 2};
  assert_int_equal(mapopt_starpu_geometry_of(&l, 3, e3, 2, 8, &g),
                   MAPOPT_EINVAL);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 3, e3, 1, 8, &g), MAPOPT_OK);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 0, e3, 1, 8, &g),
                   MAPOPT_EINVAL);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 0, 8, &g),
                   MAPOPT_EINVAL);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, big, 1, 8, &g),
                   MAPOPT_ERANGE);
}

static void cpu_noop(void *buffers[], void *arg) {
  (void)buffers;
  (void)arg;
}

static void test_codelet_copies(void **state) {
  (void)state;
  mapopt_starpu *s = compile("", 0);
  struct starpu_codelet base;
  memset(&base, 0, sizeof base);
  base.cpu_funcs[0] = cpu_noop;
  base.nbuffers = 2;
  struct starpu_codelet *out;
  int local[2] = {STARPU_SPECIFIC_NODE_LOCAL, STARPU_SPECIFIC_NODE_LOCAL};
  assert_int_equal(mapopt_starpu_codelet(s, &base, 2, local, &out), MAPOPT_OK);
  assert_ptr_equal(out, &base);
  int ram[2] = {STARPU_SPECIFIC_NODE_LOCAL, STARPU_MAIN_RAM};
  assert_int_equal(mapopt_starpu_codelet(s, &base, 2, ram, &out), MAPOPT_OK);
  assert_ptr_not_equal(out, &base);
  assert_int_equal(out->specific_nodes, 1);
  assert_int_equal(out->nodes[0], STARPU_SPECIFIC_NODE_LOCAL);
  assert_int_equal(out->nodes[1], STARPU_MAIN_RAM);
  assert_ptr_equal(out->cpu_funcs[0], cpu_noop);
  assert_int_equal(base.specific_nodes, 0);
  struct starpu_codelet *again;
  assert_int_equal(mapopt_starpu_codelet(s, &base, 2, ram, &again), MAPOPT_OK);
  assert_ptr_equal(again, out);
  int other[2] = {STARPU_MAIN_RAM, STARPU_MAIN_RAM};
  assert_int_equal(mapopt_starpu_codelet(s, &base, 2, other, &again),
                   MAPOPT_OK);
  assert_ptr_not_equal(again, out);
  assert_int_equal(
      mapopt_starpu_codelet(s, &base, STARPU_NMAXBUFS + 1, ram, &again),
      MAPOPT_EINVAL);
  mapopt_starpu_free(s);
}

/* ---- concurrency, loading, out of memory ------------------------------------
 */

typedef struct worker_arg {
  mapopt_starpu *s;
  int bad;
} worker_arg;

static void *query_thread(void *arg) {
  worker_arg *w = arg;
  mapopt_diags *d;
  if (mapopt_diags_new(ctx, &d) != MAPOPT_OK) {
    w->bad++;
    return NULL;
  }
  int64_t pt = 3, ext = 4;
  mapopt_task_ref parent = {"step", true, 1, &pt, &ext, {MAPOPT_PROC_CPU, 1, 0},
                            NULL};
  for (int k = 0; k < 2000; k++) {
    mapopt_starpu_place p;
    int64_t i = k % 16, n = 16;
    if (mapopt_starpu_place_index(w->s, "cyclic", CPU, 1, &i, &n, d, &p) !=
            MAPOPT_OK ||
        p.rank != i % 2 || p.proc != i / 2 % 2)
      w->bad++;
    if (mapopt_starpu_place_single(w->s, "leaf", CPU, &parent, d, &p) !=
        MAPOPT_OK)
      w->bad++;
  }
  mapopt_diags_free(d);
  return NULL;
}

static void test_concurrent(void **state) {
  (void)state;
  mapopt_starpu *s =
      compile("c = Machine(CPU);\n"
              "def cyc(Task t) { i = t.ipoint[0];\n"
              "  return c[i % c.size[0], i / c.size[0] % c.size[1]]; }\n"
              "IndexTaskMap cyclic cyc;\n",
              0);
  pthread_t th[4];
  worker_arg w[4];
  for (int i = 0; i < 4; i++) {
    w[i] = (worker_arg){s, 0};
    pthread_create(&th[i], NULL, query_thread, &w[i]);
  }
  for (int i = 0; i < 4; i++) {
    pthread_join(th[i], NULL);
    assert_int_equal(w[i].bad, 0);
  }
  /* 8000 round-robin placements happened: the next one is processor 0. */
  int64_t pt = 0, ext = 1;
  mapopt_task_ref parent = {"step", true, 1, &pt, &ext, {MAPOPT_PROC_CPU, 1, 0},
                            NULL};
  mapopt_starpu_place p;
  assert_int_equal(
      mapopt_starpu_place_single(s, "leaf", CPU, &parent, diags, &p),
      MAPOPT_OK);
  assert_int_equal(p.proc, 0);
  mapopt_starpu_free(s);
}

static void test_load_errors(void **state) {
  (void)state;
  mapopt_starpu_machine m = machine(0);
  mapopt_starpu *s = NULL;
  mapopt_diags_clear(diags);
  assert_int_equal(
      mapopt_starpu_load(ctx, "/nonexistent/x.map", &m, NULL, diags, &s),
      MAPOPT_EIO);
  assert_null(s);
  assert_non_null(strstr(diag_lines(), "/nonexistent/x.map: error: cannot "
                                       "read file"));
  char path[] = "/tmp/mapopt-starpu-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  const char *text = "Task * CPU\n";
  assert_int_equal(write(fd, text, strlen(text)), (ssize_t)strlen(text));
  close(fd);
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_starpu_load(ctx, path, &m, NULL, diags, &s),
                   MAPOPT_ESYNTAX);
  char want[256];
  snprintf(want, sizeof want,
           "%s:2:1: error: syntax error, unexpected end of file, expecting "
           "',' or ';'\n"
           "%s:2:1: note: is a ';' missing at the end of line 1?",
           path, path);
  assert_string_equal(diag_lines(), want);
  unlink(path);
  /* The program's task list enables the unknown-name warnings. */
  static const char *const arg0[] = {"cells", NULL};
  static const char *const *const args[] = {arg0};
  static const mapopt_task_info tasks[] = {{"step", 1, args}};
  mapopt_starpu_options o = {.tasks = tasks, .ntasks = 1};
  s = compile_with("Task stepp CPU;\nRegion step ghost CPU SYSMEM;\n", 0, &o);
  assert_string_equal(diag_lines(),
                      "m.map:1:6: warning: no task named 'stepp' in the "
                      "application; this statement has no effect\n"
                      "m.map:1:6: note: did you mean 'step'?\n"
                      "m.map:2:13: warning: task 'step' has no region "
                      "argument 'ghost'\n"
                      "m.map:2:13: note: the region arguments of task 'step' "
                      "are: cells");
  mapopt_starpu_free(s);
}

static void test_out_of_memory(void **state) {
  (void)state;
  const char *text = "c = Machine(CPU);\ndef f(Task t) { return c[0, 0]; }\n"
                     "IndexTaskMap t f;\n";
  mapopt_starpu_machine m = machine(0);
  long n;
  for (n = 1;; n++) {
    failing_alloc fa = {.left = n - 1};
    mapopt_ctx *c;
    if (mapopt_ctx_new(failing_realloc, &fa, &c) != MAPOPT_OK)
      continue;
    mapopt_diags *d;
    if (mapopt_diags_new(c, &d) != MAPOPT_OK) {
      mapopt_ctx_free(c);
      continue;
    }
    mapopt_starpu *s = NULL;
    mapopt_status st =
        mapopt_starpu_compile(c, "m.map", text, strlen(text), &m, NULL, d, &s);
    bool done = !fa.failed;
    if (st == MAPOPT_OK) {
      struct starpu_codelet base, *out;
      memset(&base, 0, sizeof base);
      int nodes[1] = {STARPU_MAIN_RAM};
      st = mapopt_starpu_codelet(s, &base, 1, nodes, &out);
      done = !fa.failed;
      mapopt_starpu_free(s);
    }
    if (!done)
      assert_int_equal(st, MAPOPT_ENOMEM);
    mapopt_diags_free(d);
    mapopt_ctx_free(c);
    assert_int_equal(fa.live, 0);
    if (done) {
      assert_int_equal(st, MAPOPT_OK);
      break;
    }
  }
  assert_true(n > 5);
}

/* ---- with StarPU running --------------------------------------------------
 */

static void test_starpu_running(void **state) {
  (void)state;
  char home[] = "/tmp/mapopt-starpu-home-XXXXXX";
  assert_non_null(mkdtemp(home));
  setenv("STARPU_HOME", home, 1);
  setenv("STARPU_NCPU", "2", 1);
  setenv("STARPU_WORKERS_NOBIND", "1", 1);
  setenv("STARPU_SILENT", "1", 1);
  assert_int_equal(starpu_init(NULL), 0);
  mapopt_starpu_machine m;
  assert_int_equal(mapopt_starpu_machine_detect(0, &m), MAPOPT_EINVAL);
  assert_int_equal(mapopt_starpu_machine_detect(1, &m), MAPOPT_OK);
  assert_int_equal(m.ranks, 1);
  assert_int_equal(m.ncpus, (int)starpu_cpu_worker_get_count());
  assert_true(m.ncpus >= 1);
  assert_true(m.nnuma >= 1);
  for (int i = 0; i < m.ncpus; i++)
    assert_int_equal(starpu_worker_get_type(m.cpu_worker[i]),
                     STARPU_CPU_WORKER);
  mapopt_starpu *s = NULL;
  assert_int_equal(
      mapopt_starpu_compile(ctx, "m.map", "", 0, &m, NULL, diags, &s),
      MAPOPT_OK);
  int64_t i = m.ncpus - 1, n = m.ncpus;
  mapopt_starpu_place p;
  assert_int_equal(mapopt_starpu_place_index(s, "t", CPU, 1, &i, &n, diags, &p),
                   MAPOPT_OK);
  assert_int_equal(p.worker,
                   starpu_worker_get_by_type(STARPU_CPU_WORKER, m.ncpus - 1));
  mapopt_starpu_free(s);
  /* Registration follows the geometry: a block for 2 fields, a matrix for
   * one, a vector for one dimension. */
  static double buf[5 * 3 * 2];
  int64_t e[2] = {5, 3};
  mapopt_layout l = layout(false, true);
  mapopt_starpu_geometry g;
  starpu_data_handle_t h;
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 2, 8, &g), MAPOPT_OK);
  mapopt_starpu_register(&h, STARPU_MAIN_RAM, buf, &g);
  assert_int_equal(starpu_block_get_nx(h), 2);
  assert_int_equal(starpu_block_get_ny(h), 3);
  assert_int_equal(starpu_block_get_nz(h), 5);
  assert_int_equal(starpu_block_get_local_ldy(h), 2);
  assert_int_equal(starpu_block_get_local_ldz(h), 6);
  starpu_data_unregister(h);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 2, e, 1, 8, &g), MAPOPT_OK);
  mapopt_starpu_register(&h, STARPU_MAIN_RAM, buf, &g);
  assert_int_equal(starpu_matrix_get_nx(h), 3);
  assert_int_equal(starpu_matrix_get_ny(h), 5);
  assert_int_equal(starpu_matrix_get_local_ld(h), 3);
  starpu_data_unregister(h);
  assert_int_equal(mapopt_starpu_geometry_of(&l, 1, e, 1, 8, &g), MAPOPT_OK);
  mapopt_starpu_register(&h, STARPU_MAIN_RAM, buf, &g);
  assert_int_equal(starpu_vector_get_nx(h), 5);
  starpu_data_unregister(h);
  mapopt_starpu_register(&h, -1, buf, &g); /* no copy on this process */
  assert_null((void *)starpu_data_get_local_ptr(h));
  starpu_data_unregister(h);
  starpu_shutdown();
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", home);
  assert_int_equal(system(cmd), 0);
}

/* `test_starpu running` runs only the test that starts StarPU, which ctest
 * runs without leak checking: StarPU 1.3.10 leaves about 1 KB allocated by
 * a module it has unloaded at shutdown. */
int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_shape),
      cmocka_unit_test(test_default_index),
      cmocka_unit_test(test_index_map),
      cmocka_unit_test(test_kinds),
      cmocka_unit_test(test_single),
      cmocka_unit_test(test_memory),
      cmocka_unit_test(test_layout),
      cmocka_unit_test(test_geometry),
      cmocka_unit_test(test_codelet_copies),
      cmocka_unit_test(test_concurrent),
      cmocka_unit_test(test_load_errors),
      cmocka_unit_test(test_out_of_memory),
  };
  const struct CMUnitTest running[] = {
      cmocka_unit_test(test_starpu_running),
  };
  if (argc > 1 && !strcmp(argv[1], "running"))
    return cmocka_run_group_tests(running, fixture_setup, fixture_teardown);
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
