/*
 * Unit tests of the simulator's cost formulas and lower bound
 * (docs/sim.md, "How it models a run" and "The lower bound"): task times
 * checked against hand-computed values at each rounding step, layout factors
 * for every row of the table, copy durations, best-case costs, and the lower
 * bound on hand-built DAGs (chains, parallel ops, an interior optimum of the
 * work bound, fenced repetitions, inner tasks) plus a property test against
 * list schedules of random DAGs. Machines and runs are plain structs built
 * here, so the test needs neither the JSON loaders nor the presets.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "core/core.h"
#include "sim/sim.h"

#define PPM INT64_C(1000000)

/* ---- a small machine: p100x4-like rates, one node ------------------------ */

static void edge(mapopt_machine *m, mapopt_proc_kind p, mapopt_mem_kind k,
                 int64_t bw, int64_t gather, int64_t atomic) {
  mapopt_affinity *e = &m->affinity[p][k];
  e->present = true;
  e->bw_mbps = bw;
  e->lat_ns = 100;
  e->gather_per_ms = gather;
  e->atomic_per_ms = atomic;
}

static void machine_init(mapopt_machine *m) {
  memset(m, 0, sizeof *m);
  m->name = "tiny";
  m->nodes = 1;
  m->ranks_per_node = 1;
  m->sockets = 2;
  m->util_count = 2;
  mapopt_machine_procs *g = &m->procs[MAPOPT_PROC_GPU];
  g->count = 4;
  g->threads = 1;
  g->mflops_f64 = 4700000;
  g->mflops_f32 = 9300000;
  g->mflops_f64_matrix = 9400000;
  g->overhead_ns = 12000;
  g->inner_overhead_ns = 20000;
  mapopt_machine_procs *c = &m->procs[MAPOPT_PROC_CPU];
  c->count = 4;
  c->threads = 1;
  c->mflops_f64 = 38400;
  c->mflops_f32 = 76800;
  c->overhead_ns = 4000;
  c->inner_overhead_ns = 21000;
  mapopt_machine_procs *o = &m->procs[MAPOPT_PROC_OMP];
  o->count = 2;
  o->threads = 6;
  o->mflops_f64 = 230400;
  o->mflops_f32 = 460800;
  o->overhead_ns = 8000;
  o->inner_overhead_ns = 22000;
  for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
    m->mems[k].present = k != MAPOPT_MEM_VIRTUAL;
  edge(m, MAPOPT_PROC_GPU, MAPOPT_MEM_FBMEM, 550000, 20000, 8000);
  edge(m, MAPOPT_PROC_GPU, MAPOPT_MEM_ZCMEM, 11000, 20, 4);
  edge(m, MAPOPT_PROC_CPU, MAPOPT_MEM_SYSMEM, 12000, 150, 80);
  edge(m, MAPOPT_PROC_CPU, MAPOPT_MEM_ZCMEM, 12000, 150, 80);
  edge(m, MAPOPT_PROC_CPU, MAPOPT_MEM_RDMEM, 10000, 150, 80);
  edge(m, MAPOPT_PROC_CPU, MAPOPT_MEM_SOCKMEM, 13000, 100, 80);
  edge(m, MAPOPT_PROC_OMP, MAPOPT_MEM_SOCKMEM, 45000, 800, 300);
  edge(m, MAPOPT_PROC_OMP, MAPOPT_MEM_SYSMEM, 35000, 800, 300);
  edge(m, MAPOPT_PROC_OMP, MAPOPT_MEM_ZCMEM, 12000, 150, 80);
}

/* ---- a small run: regions, one task with GPU/CPU/OMP variants ----------- */

static const char *const fnames[] = {"a", "b", "c", "d"};
static const int64_t fbytes0[] = {8, 8, 4, 4};
static const int64_t fbytes1[] = {8};
static const int64_t fbytes2[] = {40, 2};
static const int64_t fbytes3[] = {2, 1};

typedef struct fix {
  mapopt_machine m;
  mapopt_app_region regions[4];
  mapopt_app_piece pieces[4];
  mapopt_app_variant variants[4];
  mapopt_app_layout_rule prefers[2];
  mapopt_app_task tasks[2];
  mapopt_app_req reqs[2];
  int64_t flops[4], fixed[4];
  mapopt_app_op ops[4];
  mapopt_app_run run;
} fix;

static mapopt_app_variant mkvariant(mapopt_proc_kind k, int64_t feff,
                                    int64_t meff) {
  mapopt_app_variant v;
  memset(&v, 0, sizeof v);
  v.kind = k;
  v.flops_eff_ppm = feff;
  v.mem_eff_ppm = meff;
  return v;
}

/*
 * Task 0 has variants GPU (flops_eff 0.5, mem_eff 0.9), CPU and OMP; op 0
 * has flops 1000000007 and fixed_ns 1000 for every variant and two
 * requirements: r0 (field a of region 0, 100000001 bytes, 7 gathers, 3
 * atomics) and r1 (region 1, 5000 bytes, 3 gathers, 1 atomic).
 */
static void fix_init(fix *f) {
  memset(f, 0, sizeof *f);
  machine_init(&f->m);
  const int64_t *fb[] = {fbytes0, fbytes1, fbytes2, fbytes3};
  const int nf[] = {4, 1, 2, 2};
  for (int i = 0; i < 4; i++) {
    f->regions[i].name = "r";
    f->regions[i].nfields = nf[i];
    f->regions[i].field_names = fnames;
    f->regions[i].field_bytes = fb[i];
    f->regions[i].natoms = 1;
    f->regions[i].first_atom = i;
    f->pieces[i].id = i;
    f->pieces[i].region = i;
    f->pieces[i].partition = -1;
    f->pieces[i].elements = 1000;
  }
  f->variants[0] = mkvariant(MAPOPT_PROC_GPU, 500000, 900000);
  f->variants[1] = mkvariant(MAPOPT_PROC_CPU, 250000, PPM);
  f->variants[2] = mkvariant(MAPOPT_PROC_OMP, 500000, PPM);
  f->tasks[0].name = "t";
  f->tasks[0].nvariants = 3;
  f->tasks[0].variants = f->variants;
  f->tasks[0].variant_kinds = 7;
  f->variants[3] = mkvariant(MAPOPT_PROC_GPU, PPM, PPM);
  f->variants[3].inner = true;
  f->tasks[1].name = "inner";
  f->tasks[1].nvariants = 1;
  f->tasks[1].variants = &f->variants[3];
  f->tasks[1].inner = true;
  f->reqs[0].piece = &f->pieces[0];
  f->reqs[0].fields = 1;
  f->reqs[0].priv = MAPOPT_PRIV_RW;
  f->reqs[0].bytes = 100000001;
  f->reqs[0].gathers = 7;
  f->reqs[0].atomics = 3;
  f->reqs[1].piece = &f->pieces[1];
  f->reqs[1].fields = 1;
  f->reqs[1].priv = MAPOPT_PRIV_RO;
  f->reqs[1].bytes = 5000;
  f->reqs[1].gathers = 3;
  f->reqs[1].atomics = 1;
  for (int i = 0; i < 3; i++) {
    f->flops[i] = 1000000007;
    f->fixed[i] = 1000;
  }
  for (int i = 0; i < 4; i++) {
    mapopt_app_op *o = &f->ops[i];
    o->kind = MAPOPT_OP_TASK;
    o->task = 0;
    o->parent = -1;
    o->flops = f->flops;
    o->fixed_ns = f->fixed;
    o->nreqs = 2;
    o->reqs = f->reqs;
    o->future = -1;
    o->timing.iteration = -1;
    o->timing.repetition = -1;
  }
  f->ops[1].task = 1; /* the inner task */
  f->ops[3].kind = MAPOPT_OP_FILL;
  f->ops[3].task = -1;
  f->run.name = "fix";
  f->run.nregions = 4;
  f->run.regions = f->regions;
  f->run.npieces = 4;
  f->run.pieces = f->pieces;
  f->run.ntasks = 2;
  f->run.tasks = f->tasks;
  f->run.nops = 4;
  f->run.ops = f->ops;
}

static mapopt__task_cost_in cost_in(const fix *f, int64_t op, int variant,
                                    const mapopt_mem_kind *mems,
                                    const int64_t *lppm) {
  mapopt__task_cost_in in;
  memset(&in, 0, sizeof in);
  in.machine = &f->m;
  in.run = &f->run;
  in.op = op;
  in.variant = variant;
  in.mems = mems;
  in.layout_ppm = lppm;
  return in;
}

/* ---- integer helpers ------------------------------------------------------
 */

static void test_muldiv(void **state) {
  (void)state;
  assert_int_equal(mapopt__muldiv_ceil(10, 3, 4), 8);  /* 7.5 -> 8 */
  assert_int_equal(mapopt__muldiv_ceil(10, 4, 4), 10); /* exact */
  assert_int_equal(mapopt__muldiv_ceil(0, 5, 7), 0);
  assert_int_equal(mapopt__muldiv_ceil(5, 0, 0), 0);
  assert_int_equal(mapopt__muldiv_ceil(1, 1, 1000000), 1);
  /* The product overflows: saturate, even though the quotient would fit. */
  assert_int_equal(
      mapopt__muldiv_ceil(INT64_C(9000000000000000000), 1000, 1000000),
      INT64_MAX);
  assert_int_equal(mapopt__muldiv_ceil(INT64_C(4611686018427387904), 2, 4),
                   INT64_MAX);
  /* Just below the overflow: exact. */
  assert_int_equal(mapopt__muldiv_ceil(INT64_C(4611686018427387903), 2, 2),
                   INT64_C(4611686018427387903));
  /* Saturation is sticky and a zero rate saturates. */
  assert_int_equal(mapopt__muldiv_ceil(INT64_MAX, 1, 1), INT64_MAX);
  assert_int_equal(mapopt__muldiv_ceil(INT64_MAX, 1000000, 1000000), INT64_MAX);
  assert_int_equal(mapopt__muldiv_ceil(5, 1000, 0), INT64_MAX);
}

static void test_copy_ns(void **state) {
  (void)state;
  /* 8 MB at 12 GB/s: ceil(8e9 / 12000) = 666667, + 10000 latency. */
  assert_int_equal(mapopt__sim_copy_ns(8000000, 12000, 10000), 676667);
  assert_int_equal(mapopt__sim_copy_ns(12, 12000, 0), 1); /* 1 ns, rounded up */
  assert_int_equal(mapopt__sim_copy_ns(0, 12000, 5000), 5000);
  /* bytes * 1000 overflows: saturates, latency added without wrapping. */
  assert_int_equal(mapopt__sim_copy_ns(INT64_C(9300000000000000), 1, 5000),
                   INT64_MAX);
  assert_int_equal(mapopt__sim_copy_ns(INT64_C(9000000000000000), 1000, 5),
                   INT64_C(9000000000000005));
}

/* ---- task time ------------------------------------------------------------
 */

/*
 * Op 0 on a GPU, r0 in FBMEM with L = 1.02, r1 in ZCMEM:
 *  C   = ceil(1000000007000 / 4700000) = 212766; ceil(212766e6 / 5e5) = 425532
 *  M_0 = ceil(100000001000 / 550000) = 181819; ceil(181819 * 1.02) = 185456;
 *        ceil(185456e6 / 9e5) = 206063
 *  M_1 = ceil(5000000 / 11000) = 455; ceil(455e6 / 9e5) = 506
 *  G_0 = ceil(7e6 / 20000) + ceil(3e6 / 8000) = 350 + 375 = 725
 *  G_1 = ceil(3e6 / 20) + ceil(1e6 / 4) = 150000 + 250000 = 400000
 *  T   = 12000 + 1000 + max(425532, 206569) + 400725 = 839257
 */
static void test_task_gpu(void **state) {
  (void)state;
  fix f;
  fix_init(&f);
  mapopt_mem_kind mems[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM};
  int64_t l[] = {1020000, PPM};
  mapopt__task_cost_in in = cost_in(&f, 0, 0, mems, l);
  int64_t m[2] = {-1, -1}, g[2] = {-1, -1};
  mapopt__task_cost_parts parts;
  assert_int_equal(mapopt__sim_task_ns(&in, m, g, &parts), 839257);
  /* The parts: 12000 + 1000 fixed, C bounds the kernel (425532 > 206569),
   * memory is the random accesses' 400725; they add up to T. */
  assert_int_equal(parts.overhead, 13000);
  assert_int_equal(parts.compute, 425532);
  assert_int_equal(parts.memory, 400725);
  assert_int_equal(m[0], 206063);
  assert_int_equal(m[1], 506);
  assert_int_equal(g[0], 725);
  assert_int_equal(g[1], 400000);
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL), 839257);
  /* layout_ppm NULL: L = 1; M_0 = ceil(181819e6 / 9e5) = 202022. */
  in.layout_ppm = NULL;
  assert_int_equal(mapopt__sim_task_ns(&in, m, NULL, NULL), 839257);
  assert_int_equal(m[0], 202022);
  /* A missing affinity edge (GPU -> SYSMEM) is priced as INT64_MAX. */
  mapopt_mem_kind bad[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_SYSMEM};
  in.mems = bad;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL), INT64_MAX);
  mapopt_mem_kind virt[] = {MAPOPT_MEM_VIRTUAL, MAPOPT_MEM_FBMEM};
  in.mems = virt;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL), INT64_MAX);
}

/* in priced through memo gives what the formula gives, parts and terms
 * included. */
static void expect_memo_agrees(mapopt__task_cost_memo *memo,
                               const mapopt__task_cost_in *in) {
  int64_t m[2] = {-1, -1}, g[2] = {-1, -1}, mm[2] = {-2, -2}, gm[2] = {-2, -2};
  mapopt__task_cost_parts p = {0}, pm = {1, 1, 1};
  int64_t t = mapopt__sim_task_ns(in, m, g, &p);
  assert_int_equal(mapopt__sim_task_ns_memo(memo, in, mm, gm, &pm, NULL), t);
  assert_memory_equal(m, mm, sizeof m);
  assert_memory_equal(g, gm, sizeof g);
  if (t != INT64_MAX)
    assert_memory_equal(&p, &pm, sizeof p);
}

/* The memo of task times: every input of the formula is part of its key
 * (a change to any of them prices again), and the noise is applied to
 * each op, never memoized. */
static void test_task_memo(void **state) {
  (void)state;
  mapopt__task_cost_memo memo;
  memset(&memo, 0, sizeof memo);
  fix f;
  fix_init(&f);
  /* test_task_gpu's op: the memo's first price is the formula's. */
  mapopt_mem_kind mems[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM};
  int64_t l[] = {1020000, PPM};
  mapopt__task_cost_in in = cost_in(&f, 0, 0, mems, l);
  assert_int_equal(mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, NULL),
                   839257);
  expect_memo_agrees(&memo, &in);
  mems[1] = MAPOPT_MEM_FBMEM; /* G_1 = ceil(3e6/20000) + ceil(1e6/8000) */
  expect_memo_agrees(&memo, &in);
  l[0] = 3 * PPM; /* M_0 = 3 x 181819 / 0.9: memory-bound */
  expect_memo_agrees(&memo, &in);
  f.reqs[1].bytes = 500000000;
  expect_memo_agrees(&memo, &in);
  f.reqs[0].gathers = 7000000;
  expect_memo_agrees(&memo, &in);
  f.reqs[1].atomics = 900000;
  expect_memo_agrees(&memo, &in);
  f.reqs[1].priv = MAPOPT_PRIV_RW;
  expect_memo_agrees(&memo, &in);
  f.flops[0] = 5;
  expect_memo_agrees(&memo, &in);
  f.fixed[0] = 77;
  expect_memo_agrees(&memo, &in);
  in.layout_ppm = NULL;
  expect_memo_agrees(&memo, &in);
  mapopt_mem_kind cm[] = {MAPOPT_MEM_SYSMEM, MAPOPT_MEM_SOCKMEM};
  in = cost_in(&f, 0, 1, cm, l); /* another variant */
  expect_memo_agrees(&memo, &in);
  /* A GPU reading ZCMEM pays the operand's passes: reuse is in the key. */
  int64_t reuse[] = {5000, 1, 1};
  f.ops[0].reuse = reuse;
  f.reqs[1].priv = MAPOPT_PRIV_RO;
  mapopt_mem_kind zc[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM};
  in = cost_in(&f, 0, 0, zc, l);
  expect_memo_agrees(&memo, &in);
  reuse[0] = 1;
  expect_memo_agrees(&memo, &in);
  /* A missing memory is not kept: the next op prices again. */
  mapopt_mem_kind bad[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_SYSMEM};
  in.mems = bad;
  expect_memo_agrees(&memo, &in);
  in.mems = zc;
  expect_memo_agrees(&memo, &in);
  /* Noise: ops 0 and 2 have the same inputs and their own jitter. */
  in.noise_ppm = 100000;
  in.seed = 7;
  expect_memo_agrees(&memo, &in);
  in.op = 2;
  expect_memo_agrees(&memo, &in);
  in.op = 0;
  int64_t t0 = mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, NULL);
  in.op = 2;
  assert_int_not_equal(
      mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, NULL), t0);
  /* The inner task is priced directly. */
  mapopt_mem_kind virt[] = {MAPOPT_MEM_VIRTUAL, MAPOPT_MEM_VIRTUAL};
  in = cost_in(&f, 1, 0, virt, NULL);
  expect_memo_agrees(&memo, &in);
}

/* The memo's state names the inputs that priced an op: ops priced with
 * one state had the same inputs (the busiest tasks' statistics reuse one
 * op's price for them, result.c), a changed input is a new state, and a
 * price the memo does not keep (a missing memory, an inner task) has
 * none. */
static void test_task_memo_state(void **state) {
  (void)state;
  mapopt__task_cost_memo memo;
  memset(&memo, 0, sizeof memo);
  fix f;
  fix_init(&f);
  mapopt_mem_kind mems[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM};
  int64_t l[] = {1020000, PPM};
  mapopt__task_cost_in in = cost_in(&f, 0, 0, mems, l);
  int64_t s0 = -2, s1 = -2, s2 = -2;
  mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, &s0);
  assert_true(s0 >= 0);
  in.op = 2; /* another op, the same inputs; its noise is its own */
  in.noise_ppm = 100000;
  mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, &s1);
  assert_int_equal(s1, s0);
  l[0] = 3 * PPM;
  mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, &s1);
  assert_int_not_equal(s1, s0);
  l[0] = 1020000; /* the first inputs again: priced again, a new state */
  mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, &s2);
  assert_int_not_equal(s2, s0);
  assert_int_not_equal(s2, s1);
  mapopt_mem_kind bad[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_SYSMEM};
  in.mems = bad;
  assert_int_equal(mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, &s1),
                   INT64_MAX);
  assert_int_equal(s1, -1);
  in.mems = mems; /* the missing price left the memo as it was */
  mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, &s1);
  assert_int_equal(s1, s2);
  mapopt_mem_kind virt[] = {MAPOPT_MEM_VIRTUAL, MAPOPT_MEM_VIRTUAL};
  in = cost_in(&f, 1, 0, virt, NULL);
  mapopt__sim_task_ns_memo(&memo, &in, NULL, NULL, NULL, &s1);
  assert_int_equal(s1, -1);
}

/* The matrix peak, its fallback to f64, and f32. */
static void test_task_peaks(void **state) {
  (void)state;
  fix f;
  fix_init(&f);
  mapopt_mem_kind mems[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM};
  int64_t l[] = {1020000, PPM};
  mapopt__task_cost_in in = cost_in(&f, 0, 0, mems, l);
  /* Matrix at 9.4 TF, flops_eff 1: C = ceil(1000000007000 / 9400000) =
   * 106383 < sum M = 206569: memory-bound, T = 13000 + 206569 + 400725. */
  f.variants[0].matrix = true;
  f.variants[0].flops_eff_ppm = PPM;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL), 620294);
  /* No matrix peak: the f64 peak, C = 212766. */
  f.m.procs[MAPOPT_PROC_GPU].mflops_f64_matrix = 0;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL),
                   13000 + 212766 + 400725);
  /* f32 at 9.3 TF, flops_eff 0.5: ceil(1000000007000 / 9300000) = 107527,
   * C = 215054. */
  f.variants[0].matrix = false;
  f.variants[0].f32 = true;
  f.variants[0].flops_eff_ppm = 500000;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL),
                   13000 + 215054 + 400725);
  /* CPU, f64 38.4 GF, flops_eff 0.25, r0 in SYSMEM, r1 in SOCKMEM:
   * C = ceil(ceil(1000000007000 / 38400) * 4) = 26041667 * 4 = 104166668;
   * M_0 = ceil(100000001000 / 12000) = 8333334 (L 1.02 -> 8500001),
   * M_1 = ceil(5e6 / 13000) = 385; G_0 = ceil(7e6/150) + ceil(3e6/80) =
   * 46667 + 37500; G_1 = ceil(3e6/100) + ceil(1e6/80) = 30000 + 12500. */
  mapopt_mem_kind cm[] = {MAPOPT_MEM_SYSMEM, MAPOPT_MEM_SOCKMEM};
  in = cost_in(&f, 0, 1, cm, l);
  int64_t m[2], g[2];
  assert_int_equal(mapopt__sim_task_ns(&in, m, g, NULL),
                   4000 + 1000 + 104166668 + 46667 + 37500 + 30000 + 12500);
  assert_int_equal(m[0], 8500001);
  assert_int_equal(m[1], 385);
  assert_int_equal(g[0], 84167);
  assert_int_equal(g[1], 42500);
  /* Zero flops and no fixed time: only the memory terms. */
  f.flops[1] = 0;
  f.fixed[1] = 0;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL),
                   4000 + 8500001 + 385 + 84167 + 42500);
}

static void test_task_inner(void **state) {
  (void)state;
  fix f;
  fix_init(&f);
  mapopt_mem_kind mems[] = {MAPOPT_MEM_VIRTUAL, MAPOPT_MEM_VIRTUAL};
  mapopt__task_cost_in in = cost_in(&f, 1, 0, mems, NULL);
  int64_t m[2] = {-1, -1}, g[2] = {-1, -1};
  assert_int_equal(mapopt__sim_task_ns(&in, m, g, NULL), 20000);
  assert_int_equal(m[0], 0);
  assert_int_equal(m[1], 0);
  assert_int_equal(g[0], 0);
  assert_int_equal(g[1], 0);
}

/*
 * Noise: z = splitmix64(seed ^ uid), u = z mod 100001 - 50000 at 5%.
 * seed 1, op 0: z = 0x910a2dec89025cc1, u = -8356,
 *   T = ceil(839257 * 991644 / 1e6) = 832245;
 * seed 7, op 0: z = 0x63cbe1e459320dd7, u = 17333, T = 853804.
 */
static void test_task_noise(void **state) {
  (void)state;
  fix f;
  fix_init(&f);
  mapopt_mem_kind mems[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_ZCMEM};
  int64_t l[] = {1020000, PPM};
  mapopt__task_cost_in in = cost_in(&f, 0, 0, mems, l);
  in.noise_ppm = 50000;
  in.seed = 1;
  int64_t m[2];
  assert_int_equal(mapopt__sim_task_ns(&in, m, NULL, NULL), 832245);
  assert_int_equal(m[0], 206063); /* the terms carry no noise */
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL), 832245);
  in.seed = 7;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL), 853804);
  /* Without noise the seed does not matter. */
  in.noise_ppm = 0;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL), 839257);
  /* Range and spread over many seeds. */
  in.noise_ppm = 50000;
  int64_t lo = INT64_MAX, hi = 0;
  for (uint64_t s = 0; s < 2000; s++) {
    in.seed = s * 0x1234567ull;
    int64_t t = mapopt__sim_task_ns(&in, NULL, NULL, NULL);
    assert_in_range(t, 797294, 881220); /* ceil(T * 0.95), ceil(T * 1.05) */
    lo = t < lo ? t : lo;
    hi = t > hi ? t : hi;
  }
  assert_true(lo < 805000);
  assert_true(hi > 873000);
  /* Inner tasks take their overhead exactly, noise or not. */
  in.op = 1;
  in.seed = 1;
  assert_int_equal(mapopt__sim_task_ns(&in, NULL, NULL, NULL), 20000);
}

/* ---- layout factor ----------------------------------------------------------
 */

static mapopt_layout mklayout(mapopt_layout_tri soa, mapopt_layout_tri c) {
  mapopt_layout l;
  memset(&l, 0, sizeof l);
  l.soa = soa;
  l.c_order = c;
  return l;
}

static void test_layout_ppm(void **state) {
  (void)state;
  fix f;
  fix_init(&f);
  const mapopt_layout_tri Y = MAPOPT_LAYOUT_YES, N = MAPOPT_LAYOUT_NO,
                          U = MAPOPT_LAYOUT_UNSET;
  mapopt_layout soa = mklayout(Y, Y), aos = mklayout(N, Y);
  /* Region 0, fields 8 8 4 4: S = 24 (all fields), r0 touches a: A = 8. */
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &soa, 0xF), PPM);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 1, 0, &soa, 0xF), PPM);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &aos, 0xF),
                   3 * PPM); /* GPU: S/A = 3 */
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 1, 0, &aos, 0xF),
                   1200000); /* CPU: 1 + 0.1 * 2 */
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 2, 0, &aos, 0xF),
                   1200000); /* OMP likewise */
  /* Unset SOA means SOA. */
  mapopt_layout dflt = mklayout(U, U);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &dflt, 0xF), PPM);
  /* A = S: the instance holds only the touched field. */
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &aos, 0x1), PPM);
  /* Rounded to nearest: S = 20 (a b c), A = 12 (b c): GPU 5/3, CPU
   * 1 + 0.1 * 2/3. */
  f.reqs[0].fields = 0x6;
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &aos, 0x7), 1666667);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 1, 0, &aos, 0x7), 1066667);
  /* A single-field region: AOS is SOA. */
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 1, &aos, 0x1), PPM);
  /* Region 2, fields 40 2, touching the 2-byte field: S/A = 21, but an
   * element spans a GPU's 32-byte sector, so reading the field moves one
   * sector per element: GPU 32 / 2 = 16. CPU 1 + 0.1 * 20 = 3 capped at
   * 1.5. (S = 20 above fits in a sector: whole elements move, 5/3.) */
  f.reqs[0].piece = &f.pieces[2];
  f.reqs[0].fields = 0x2;
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &aos, 0x3),
                   16 * PPM);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 1, 0, &aos, 0x3), 1500000);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 2, 0, &aos, 0x3), 1500000);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 1, 0, &soa, 0x3), PPM);

  /* Preferences: the GPU variant prefers F_order on arg 0 (x 1.02). */
  f.reqs[0].piece = &f.pieces[0];
  f.reqs[0].fields = 0x6;
  f.prefers[0].args = 1;
  f.prefers[0].soa = U;
  f.prefers[0].c_order = N;
  f.prefers[0].penalty_ppm = 1020000;
  f.variants[0].nprefers = 1;
  f.variants[0].prefers = f.prefers;
  /* AOS C_order: 1666667 * 1.02 = 1700000.34 -> 1700000. */
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &aos, 0x7), 1700000);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &soa, 0x7), 1020000);
  mapopt_layout soa_f = mklayout(Y, N);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &soa_f, 0x7), PPM);
  /* Unset order: the app's default. */
  mapopt_layout soa_u = mklayout(Y, U);
  f.run.default_c_order = true;
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &soa_u, 0x7),
                   1020000);
  f.run.default_c_order = false;
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &soa_u, 0x7), PPM);
  /* The preference covers arg 0 only; the CPU variant has none. */
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 1, &soa, 0x1), PPM);
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 1, 0, &soa, 0x7), PPM);
  /* A preference for C_order with two rules covering arg 0: each violated
   * one multiplies in, rounded each time. */
  f.prefers[1] = f.prefers[0];
  f.prefers[1].c_order = N;
  f.prefers[1].penalty_ppm = 1100000;
  f.variants[0].nprefers = 2;
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &soa, 0x7), 1122000);
  /* Halves round up: region 3 (fields 2 1): S/A = 1.5, x 1.000001 =
   * 1500001.5 -> 1500002. */
  f.variants[0].nprefers = 1;
  f.prefers[0].penalty_ppm = 1000001;
  f.reqs[0].piece = &f.pieces[3];
  f.reqs[0].fields = 0x1;
  assert_int_equal(mapopt__sim_layout_ppm(&f.run, 0, 0, 0, &aos, 0x3), 1500002);
}

/* ---- best-case cost --------------------------------------------------------
 */

static void test_best_cost(void **state) {
  (void)state;
  fix f;
  fix_init(&f);
  f.reqs[0].gathers = f.reqs[0].atomics = 0;
  f.reqs[1].gathers = f.reqs[1].atomics = 0;
  mapopt__task_cost_in in;
  /* GPU: both requirements in FB, L = 1, no noise. */
  mapopt_mem_kind fb[] = {MAPOPT_MEM_FBMEM, MAPOPT_MEM_FBMEM};
  in = cost_in(&f, 0, 0, fb, NULL);
  int64_t c = mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_GPU);
  assert_int_equal(c, mapopt__sim_task_ns(&in, NULL, NULL, NULL));
  assert_int_equal(c, 12000 + 1000 + 425532);
  /* The best layout, not a preferred order's penalty. */
  f.prefers[0].args = 3;
  f.prefers[0].c_order = MAPOPT_LAYOUT_NO;
  f.prefers[0].soa = MAPOPT_LAYOUT_UNSET;
  f.prefers[0].penalty_ppm = 1500000;
  f.variants[0].nprefers = 1;
  f.variants[0].prefers = f.prefers;
  assert_int_equal(mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_GPU), c);
  /* CPU: SOCKMEM (13 GB/s) beats SYSMEM (12). Memory-bound once flops = 0:
   * M_0 = ceil(100000001000 / 13000) = 7692308, M_1 = 385. */
  f.flops[1] = 0;
  mapopt_mem_kind sock[] = {MAPOPT_MEM_SOCKMEM, MAPOPT_MEM_SOCKMEM};
  in = cost_in(&f, 0, 1, sock, NULL);
  c = mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_CPU);
  assert_int_equal(c, mapopt__sim_task_ns(&in, NULL, NULL, NULL));
  assert_int_equal(c, 4000 + 1000 + 7692308 + 385);
  /* OMP: SOCKMEM 45 GB/s over SYSMEM 35. */
  f.flops[2] = 0;
  in = cost_in(&f, 0, 2, sock, NULL);
  c = mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_OMP);
  assert_int_equal(c, mapopt__sim_task_ns(&in, NULL, NULL, NULL));
  assert_int_equal(c, 8000 + 1000 + 2222223 + 112);
  /* Gathers: SYSMEM has the better gather rate (150 vs 100 per ms), so
   * each term takes its own best memory; c is below every choice.
   * G_0 = ceil(3000e6 / 150) = 20 ms. */
  f.reqs[0].gathers = 3000;
  c = mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_CPU);
  assert_int_equal(c, 4000 + 1000 + 7692308 + 385 + 20000000);
  for (int a = 0; a < MAPOPT_MEM_KIND_COUNT; a++)
    for (int b = 0; b < MAPOPT_MEM_KIND_COUNT; b++) {
      if (!f.m.affinity[MAPOPT_PROC_CPU][a].present ||
          !f.m.affinity[MAPOPT_PROC_CPU][b].present)
        continue;
      mapopt_mem_kind mm[] = {(mapopt_mem_kind)a, (mapopt_mem_kind)b};
      in = cost_in(&f, 0, 1, mm, NULL);
      assert_true(c <= mapopt__sim_task_ns(&in, NULL, NULL, NULL));
    }
  /* Inner: the kind's inner overhead. */
  assert_int_equal(mapopt__sim_best_cost(&f.m, &f.run, 1, MAPOPT_PROC_GPU),
                   20000);
  /* No variant of the kind, or not a task. */
  assert_int_equal(mapopt__sim_best_cost(&f.m, &f.run, 1, MAPOPT_PROC_CPU), -1);
  assert_int_equal(mapopt__sim_best_cost(&f.m, &f.run, 3, MAPOPT_PROC_GPU), -1);
  assert_int_equal(mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_IO), -1);
  /* No processors of the kind: none at all, or none per rank (2 OMP over
   * 4 ranks). */
  f.run.ranks_per_node = 4;
  assert_int_equal(mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_OMP), -1);
  assert_true(mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_GPU) > 0);
  f.run.ranks_per_node = 0;
  f.m.procs[MAPOPT_PROC_OMP].count = 0;
  assert_int_equal(mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_OMP), -1);
  /* A memory that is absent does not count: without SOCKMEM, CPU gets
   * SYSMEM (12 GB/s): M_0 = 8333334. */
  f.m.mems[MAPOPT_MEM_SOCKMEM].present = false;
  f.reqs[0].gathers = 0;
  assert_int_equal(mapopt__sim_best_cost(&f.m, &f.run, 0, MAPOPT_PROC_CPU),
                   4000 + 1000 + 8333334 + 417);
}

static void test_proc_total(void **state) {
  (void)state;
  fix f;
  fix_init(&f);
  f.m.nodes = 3;
  assert_int_equal(mapopt__sim_proc_total(&f.m, &f.run, MAPOPT_PROC_GPU), 12);
  f.m.ranks_per_node = 2; /* the machine's, as the run says 0 */
  assert_int_equal(mapopt__sim_proc_total(&f.m, &f.run, MAPOPT_PROC_GPU), 12);
  assert_int_equal(mapopt__sim_proc_total(&f.m, &f.run, MAPOPT_PROC_OMP), 6);
  f.run.ranks_per_node = 4;
  assert_int_equal(mapopt__sim_proc_total(&f.m, &f.run, MAPOPT_PROC_GPU), 12);
  assert_int_equal(mapopt__sim_proc_total(&f.m, &f.run, MAPOPT_PROC_CPU), 12);
  assert_int_equal(mapopt__sim_proc_total(&f.m, &f.run, MAPOPT_PROC_OMP), 0);
  f.run.ranks_per_node = 8; /* max(1, 4 / 8) CPUs per rank */
  assert_int_equal(mapopt__sim_proc_total(&f.m, &f.run, MAPOPT_PROC_CPU), 24);
  assert_int_equal(mapopt__sim_proc_total(&f.m, &f.run, MAPOPT_PROC_IO), 0);
}

/* ---- lower bound on hand-built DAGs -----------------------------------------
 */

#define LB_MAXOPS 64
#define LB_MAXEDGES 1024

/*
 * Tasks: 0 GPU-only, 1 GPU or CPU, 2 CPU-only, 3 inner (GPU). Leaves have
 * no flops and no requirements, so c(p, k) = overhead(k) + fixed_ns.
 */
typedef struct lbfix {
  mapopt_machine m;
  mapopt_app_variant var[4][2];
  mapopt_app_task tasks[4];
  mapopt_app_op ops[LB_MAXOPS];
  int64_t fixed[LB_MAXOPS][2];
  int64_t flops[LB_MAXOPS][2];
  int64_t efrom[LB_MAXEDGES], eto[LB_MAXEDGES];
  int nedges;
  int32_t pred_off[LB_MAXOPS + 1], preds[LB_MAXEDGES];
  mapopt__sim_dag dag;
  mapopt_app_run run;
} lbfix;

static void lb_init(lbfix *f, int64_t ngpu, int64_t ncpu) {
  memset(f, 0, sizeof *f);
  machine_init(&f->m);
  f->m.procs[MAPOPT_PROC_GPU].count = ngpu;
  f->m.procs[MAPOPT_PROC_CPU].count = ncpu;
  f->m.procs[MAPOPT_PROC_OMP].count = 0;
  f->var[0][0] = mkvariant(MAPOPT_PROC_GPU, PPM, PPM);
  f->var[1][0] = mkvariant(MAPOPT_PROC_GPU, PPM, PPM);
  f->var[1][1] = mkvariant(MAPOPT_PROC_CPU, PPM, PPM);
  f->var[2][0] = mkvariant(MAPOPT_PROC_CPU, PPM, PPM);
  f->var[3][0] = mkvariant(MAPOPT_PROC_GPU, PPM, PPM);
  f->var[3][0].inner = true;
  const int nv[] = {1, 2, 1, 1};
  for (int t = 0; t < 4; t++) {
    f->tasks[t].name = "t";
    f->tasks[t].nvariants = nv[t];
    f->tasks[t].variants = f->var[t];
  }
  f->tasks[3].inner = true;
  f->run.name = "lb";
  f->run.tasks = f->tasks;
  f->run.ntasks = 4;
  f->run.ops = f->ops;
}

/* Adds an op; c0, c1: the wanted c(p, k) of its first and second variant
 * (the overhead is subtracted into fixed_ns). Returns its index. */
static int64_t lb_op(lbfix *f, int task, bool timed, int64_t rep, int64_t c0,
                     int64_t c1) {
  int64_t i = f->run.nops++;
  assert_true(i < LB_MAXOPS);
  mapopt_app_op *o = &f->ops[i];
  o->kind = task < 0 ? MAPOPT_OP_FILL : MAPOPT_OP_TASK;
  o->task = task;
  o->parent = -1;
  o->future = -1;
  o->flops = f->flops[i];
  o->fixed_ns = f->fixed[i];
  o->timing.timed = timed;
  o->timing.repetition = rep;
  o->timing.iteration = -1;
  if (task >= 0 && !f->tasks[task].inner) {
    int64_t c[2] = {c0, c1};
    for (int v = 0; v < f->tasks[task].nvariants; v++)
      f->fixed[i][v] = c[v] - f->m.procs[f->var[task][v].kind].overhead_ns;
  }
  return i;
}

static void lb_edge(lbfix *f, int64_t from, int64_t to) {
  assert_true(f->nedges < LB_MAXEDGES);
  f->efrom[f->nedges] = from;
  f->eto[f->nedges] = to;
  f->nedges++;
}

static int64_t lb_run(lbfix *f) {
  int64_t k = 0;
  for (int64_t i = 0; i < f->run.nops; i++) {
    f->pred_off[i] = k;
    for (int e = 0; e < f->nedges; e++)
      if (f->eto[e] == i)
        f->preds[k++] = f->efrom[e];
  }
  f->pred_off[f->run.nops] = k;
  f->dag.nops = f->run.nops;
  f->dag.pred_off = f->pred_off;
  f->dag.preds = f->preds;
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  int64_t lb = -1;
  assert_int_equal(mapopt__sim_lower_bound(ctx, &f->m, &f->run, &f->dag, &lb),
                   MAPOPT_OK);
  mapopt_ctx_free(ctx);
  return lb;
}

/* 8 ops of 100 us on 4 GPUs: a chain gives the path, 800 us; independent
 * ops give the work, 8 * 100 / 4 = 200 us. An untimed (warm-up) op and a
 * fill weigh nothing. */
static void test_lb_chain_parallel(void **state) {
  (void)state;
  static lbfix f;
  lb_init(&f, 4, 4);
  int64_t warm = lb_op(&f, 0, false, -1, 5000000, 0);
  int64_t prev = warm;
  for (int i = 0; i < 8; i++) {
    int64_t o = lb_op(&f, 0, true, -1, 100000, 0);
    lb_edge(&f, prev, o);
    prev = o;
  }
  int64_t fill = lb_op(&f, -1, true, -1, 0, 0);
  lb_edge(&f, prev, fill);
  assert_int_equal(lb_run(&f), 800000);

  lb_init(&f, 4, 4);
  warm = lb_op(&f, 0, false, -1, 5000000, 0);
  for (int i = 0; i < 8; i++)
    lb_edge(&f, warm, lb_op(&f, 0, true, -1, 100000, 0));
  assert_int_equal(lb_run(&f), 200000);
  /* One long op dominates: LB_task. */
  lb_op(&f, 0, true, -1, 700000, 0);
  assert_int_equal(lb_run(&f), 700000);
  /* No timed op: 0. */
  lb_init(&f, 4, 4);
  lb_op(&f, 0, false, -1, 100000, 0);
  assert_int_equal(lb_run(&f), 0);
}

/*
 * Ten independent ops, each 192 us on the one GPU or 64 us on the one CPU.
 * f(mu) = 10 * min(mu * 192, (1 - mu) * 64) peaks inside the simplex, at
 * mu_GPU = 16/64: 10 * 48 = 480 us; the vertices give 0 and LB_task 64.
 * The best real schedule (8 on the CPU, 2 on the GPU) takes 512 us.
 */
static void test_lb_interior(void **state) {
  (void)state;
  static lbfix f;
  lb_init(&f, 1, 1);
  for (int i = 0; i < 10; i++)
    lb_op(&f, 1, true, -1, 192000, 64000);
  assert_int_equal(lb_run(&f), 480000);
  /* Floors per op: 3 GPUs at 100 us, one CPU at 500 us. A kind with
   * mu_k = 0 costs nothing, so both vertices give 0; the balance
   * i * 100000 / 192 = (64 - i) * 500000 / 64 falls on i = 60, where both
   * terms are 31250 per op; i = 59 gives 30729, i = 61 gives 23437. */
  lb_init(&f, 3, 1);
  for (int i = 0; i < 10; i++)
    lb_op(&f, 1, true, -1, 100000, 500000);
  assert_int_equal(lb_run(&f), 312500);
  /* Ops that run on one kind only: the work splits by kind, and the
   * linear objective takes a vertex: max(4 * 100 / 1, 2 * 50 / 1). */
  lb_init(&f, 1, 1);
  for (int i = 0; i < 4; i++)
    lb_op(&f, 0, true, -1, 100000, 0);
  for (int i = 0; i < 2; i++)
    lb_op(&f, 2, true, -1, 50000, 0);
  assert_int_equal(lb_run(&f), 400000);
  /* Mixed: 4 GPU-only ops of 100 us and 4 flexible ops (100 us GPU,
   * 100 us CPU) on 1 GPU + 1 CPU. Sum = 4 * i_G * 100/64 + 4 * min(i_G,
   * i_C) * 100 / 64, at i_G = 64: 400 us (all on the GPU is best for the
   * bound; the real optimum is 400 us with the flexible ones on the CPU). */
  lb_init(&f, 1, 1);
  for (int i = 0; i < 4; i++) {
    lb_op(&f, 0, true, -1, 100000, 0);
    lb_op(&f, 1, true, -1, 100000, 100000);
  }
  assert_int_equal(lb_run(&f), 400000);
}

/*
 * Fenced mode: per repetition, then summed. Repetition 0: a chain of three
 * 100 us ops (300 us); repetition 1: eight independent ones on 4 GPUs
 * (200 us), each depending on the last op of repetition 0 -- the chain does
 * not continue across repetitions. Untimed ops and fences weigh nothing.
 */
static void test_lb_fenced(void **state) {
  (void)state;
  static lbfix f;
  lb_init(&f, 4, 4);
  f.run.timing = MAPOPT_TIMING_FENCED;
  int64_t u = lb_op(&f, 0, false, 0, 900000, 0);
  int64_t fence0 = lb_op(&f, -1, false, 0, 0, 0);
  f.ops[fence0].kind = MAPOPT_OP_FENCE;
  lb_edge(&f, u, fence0);
  int64_t prev = fence0;
  for (int i = 0; i < 3; i++) {
    int64_t o = lb_op(&f, 0, true, 0, 100000, 0);
    lb_edge(&f, prev, o);
    prev = o;
  }
  int64_t last0 = prev;
  for (int i = 0; i < 8; i++)
    lb_edge(&f, last0, lb_op(&f, 0, true, 1, 100000, 0));
  lb_op(&f, 0, false, 1, 900000, 0);
  assert_int_equal(lb_run(&f), 300000 + 200000);
  /* The same ops in window mode: one window, the chain of 3 plus one. */
  f.run.timing = MAPOPT_TIMING_WINDOW;
  assert_int_equal(lb_run(&f), 400000);
}

/*
 * Inner tasks weigh their overhead and complete after their children, but
 * start once their predecessors are mapped: x (100 us) -> p (inner, 20 us)
 * -> z (100 us) is 120 us long, not 220; with children c1 -> c2 (100 us
 * each, c1 after x), p completes after c2 and z ends at 400 us.
 */
static void test_lb_inner(void **state) {
  (void)state;
  static lbfix f;
  lb_init(&f, 8, 4);
  int64_t x = lb_op(&f, 0, true, -1, 100000, 0);
  int64_t p = lb_op(&f, 3, true, -1, 0, 0);
  int64_t z = lb_op(&f, 0, true, -1, 100000, 0);
  lb_edge(&f, x, p);
  lb_edge(&f, p, z);
  assert_int_equal(lb_run(&f), 120000);
  /* Now with children (canonical order: inside p's position). */
  lb_init(&f, 8, 4);
  x = lb_op(&f, 0, true, -1, 100000, 0);
  p = lb_op(&f, 3, true, -1, 0, 0);
  int64_t c1 = lb_op(&f, 0, true, -1, 100000, 0);
  int64_t c2 = lb_op(&f, 0, true, -1, 100000, 0);
  z = lb_op(&f, 0, true, -1, 100000, 0);
  f.ops[c1].parent = p;
  f.ops[c2].parent = p;
  lb_edge(&f, x, p);
  lb_edge(&f, x, c1);
  lb_edge(&f, c1, c2);
  lb_edge(&f, p, z);
  assert_int_equal(lb_run(&f), 400000);
  /* A fence before the inner task does chain into it. */
  lb_init(&f, 8, 4);
  x = lb_op(&f, 0, true, -1, 100000, 0);
  int64_t fence = lb_op(&f, -1, true, -1, 0, 0);
  f.ops[fence].kind = MAPOPT_OP_FENCE;
  p = lb_op(&f, 3, true, -1, 0, 0);
  z = lb_op(&f, 0, true, -1, 100000, 0);
  lb_edge(&f, x, fence);
  lb_edge(&f, fence, p);
  lb_edge(&f, p, z);
  assert_int_equal(lb_run(&f), 220000);
}

/* ---- property: LB <= the makespan of list schedules of random DAGs ------- */

/* A random app on the tiny machine (2 GPUs, 2 CPUs, 1 OMP): four tasks
 * with different kind sets, ops with random flops and requirements. */
typedef struct rnd {
  mapopt_machine m;
  mapopt_app_region region;
  mapopt_app_piece piece;
  mapopt_app_variant var[4][3];
  mapopt_app_task tasks[4];
  mapopt_app_op ops[LB_MAXOPS];
  mapopt_app_req reqs[LB_MAXOPS][2];
  int64_t flops[LB_MAXOPS][3], fixed[LB_MAXOPS][3];
  int32_t pred_off[LB_MAXOPS + 1], preds[LB_MAXEDGES];
  mapopt__sim_dag dag;
  mapopt_app_run run;
} rnd;

static int64_t rbelow(mapopt__rng *r, int64_t n) {
  return (int64_t)mapopt__rng_below(r, (uint64_t)n);
}

static void rnd_build(rnd *f, mapopt__rng *r, bool fenced) {
  memset(f, 0, sizeof *f);
  machine_init(&f->m);
  f->m.procs[MAPOPT_PROC_GPU].count = 2;
  f->m.procs[MAPOPT_PROC_CPU].count = 2;
  f->m.procs[MAPOPT_PROC_OMP].count = 1;
  f->region.nfields = 2;
  f->region.field_names = fnames;
  f->region.field_bytes = fbytes0;
  f->piece.elements = 1000;
  static const mapopt_proc_kind kinds[4][3] = {
      {MAPOPT_PROC_GPU},
      {MAPOPT_PROC_GPU, MAPOPT_PROC_CPU},
      {MAPOPT_PROC_OMP, MAPOPT_PROC_CPU},
      {MAPOPT_PROC_CPU, MAPOPT_PROC_GPU, MAPOPT_PROC_OMP}};
  static const int nv[4] = {1, 2, 2, 3};
  for (int t = 0; t < 4; t++) {
    for (int v = 0; v < nv[t]; v++) {
      mapopt_app_variant *x = &f->var[t][v];
      *x = mkvariant(kinds[t][v], 100000 + rbelow(r, 900001),
                     100000 + rbelow(r, 900001));
      x->f32 = rbelow(r, 3) == 0;
      x->matrix = rbelow(r, 3) == 0;
    }
    f->tasks[t].name = "t";
    f->tasks[t].nvariants = nv[t];
    f->tasks[t].variants = f->var[t];
  }
  int64_t n = 10 + rbelow(r, 40);
  int64_t nedges = 0, rep = 0, last_fence = -1;
  bool in_block = false;
  for (int64_t i = 0; i < n; i++) {
    mapopt_app_op *o = &f->ops[i];
    f->pred_off[i] = nedges;
    o->parent = -1;
    o->future = -1;
    o->timing.iteration = -1;
    o->timing.repetition = fenced ? rep : -1;
    o->timing.timed = fenced ? in_block : true;
    bool fence = fenced && (rbelow(r, 5) == 0 || i == n - 1);
    if (fence) {
      o->kind = MAPOPT_OP_FENCE;
      o->task = -1;
      o->timing.timed = false;
      o->timing.fence_role = in_block ? 2 : 1;
      for (int64_t j = last_fence + 1; j < i; j++)
        f->preds[nedges++] = j;
      if (last_fence >= 0)
        f->preds[nedges++] = last_fence;
      last_fence = i;
      if (in_block)
        rep++;
      in_block = !in_block;
      continue;
    }
    if (last_fence >= 0)
      f->preds[nedges++] = last_fence;
    o->kind = rbelow(r, 8) == 0 ? MAPOPT_OP_FILL : MAPOPT_OP_TASK;
    o->task = o->kind == MAPOPT_OP_TASK ? (int)rbelow(r, 4) : -1;
    o->flops = f->flops[i];
    o->fixed_ns = f->fixed[i];
    for (int v = 0; v < 3; v++) {
      f->flops[i][v] = rbelow(r, 4) == 0 ? 0 : rbelow(r, 2000000000);
      f->fixed[i][v] = rbelow(r, 20000);
    }
    o->nreqs = (size_t)rbelow(r, 3);
    o->reqs = f->reqs[i];
    for (size_t q = 0; q < o->nreqs; q++) {
      mapopt_app_req *req = &f->reqs[i][q];
      req->piece = &f->piece;
      req->fields = 1;
      req->bytes = rbelow(r, 200000000);
      req->gathers = rbelow(r, 3) == 0 ? rbelow(r, 100000) : 0;
      req->atomics = rbelow(r, 4) == 0 ? rbelow(r, 10000) : 0;
    }
    for (int64_t j = last_fence + 1; j < i; j++)
      if (rbelow(r, 4) == 0 && nedges < LB_MAXEDGES - 3 * LB_MAXOPS)
        f->preds[nedges++] = j;
  }
  f->pred_off[n] = nedges;
  f->dag.nops = n;
  f->dag.pred_off = f->pred_off;
  f->dag.preds = f->preds;
  f->run.timing = fenced ? MAPOPT_TIMING_FENCED : MAPOPT_TIMING_WINDOW;
  f->run.regions = &f->region;
  f->run.nregions = 1;
  f->run.tasks = f->tasks;
  f->run.ntasks = 4;
  f->run.ops = f->ops;
  f->run.nops = n;
}

/*
 * A list schedule: ops in canonical order, each starting when its
 * predecessors are complete and its processor is free. Random: a random
 * variant, processor, memories and layout factors. Greedy: the variant of
 * least best-case cost, the fastest memories, L = 1, the processor free
 * first. Returns the elapsed time as the engine would measure it: the
 * whole run in window mode (no warm-up), the sum of the fenced blocks in
 * fenced mode.
 */
static int64_t rnd_schedule(const rnd *f, mapopt__rng *r, bool greedy) {
  int64_t endt[LB_MAXOPS];
  int64_t free_at[3][4] = {{0}};
  int64_t fence_open = 0, elapsed = 0, makespan = 0;
  for (int64_t i = 0; i < f->run.nops; i++) {
    const mapopt_app_op *o = &f->ops[i];
    int64_t start = 0;
    for (int64_t e = f->pred_off[i]; e < f->pred_off[i + 1]; e++)
      if (endt[f->preds[e]] > start)
        start = endt[f->preds[e]];
    if (o->kind != MAPOPT_OP_TASK) {
      endt[i] = start;
      if (o->kind == MAPOPT_OP_FENCE) {
        if (o->timing.fence_role == 1)
          fence_open = start;
        else
          elapsed += start - fence_open;
      }
      continue;
    }
    const mapopt_app_task *t = &f->tasks[o->task];
    int v = (int)rbelow(r, t->nvariants);
    if (greedy)
      for (int w = 0; w < t->nvariants; w++)
        if (mapopt__sim_best_cost(&f->m, &f->run, i, t->variants[w].kind) <
            mapopt__sim_best_cost(&f->m, &f->run, i, t->variants[v].kind))
          v = w;
    mapopt_proc_kind k = t->variants[v].kind;
    int64_t np = f->m.procs[k].count;
    int p = (int)rbelow(r, np);
    if (greedy)
      for (int q = 0; q < np; q++)
        if (free_at[k][q] < free_at[k][p])
          p = q;
    mapopt_mem_kind mems[2];
    int64_t lppm[2];
    for (size_t q = 0; q < o->nreqs; q++) {
      int cand[MAPOPT_MEM_KIND_COUNT], nc = 0, fast = -1;
      for (int mk = 0; mk < MAPOPT_MEM_KIND_COUNT; mk++)
        if (f->m.affinity[k][mk].present) {
          cand[nc++] = mk;
          if (fast < 0 ||
              f->m.affinity[k][mk].bw_mbps > f->m.affinity[k][fast].bw_mbps)
            fast = mk;
        }
      mems[q] = (mapopt_mem_kind)(greedy ? fast : cand[rbelow(r, nc)]);
      lppm[q] = greedy ? PPM : PPM + rbelow(r, PPM);
    }
    mapopt__task_cost_in in;
    memset(&in, 0, sizeof in);
    in.machine = &f->m;
    in.run = &f->run;
    in.op = i;
    in.variant = v;
    in.mems = mems;
    in.layout_ppm = lppm;
    int64_t d = mapopt__sim_task_ns(&in, NULL, NULL, NULL);
    assert_true(d > 0 && d < INT64_MAX);
    if (free_at[k][p] > start)
      start = free_at[k][p];
    endt[i] = free_at[k][p] = start + d;
    if (endt[i] > makespan)
      makespan = endt[i];
  }
  return f->run.timing == MAPOPT_TIMING_FENCED ? elapsed : makespan;
}

static void test_lb_property(void **state) {
  (void)state;
  mapopt__rng r;
  mapopt__rng_seed(&r, 20240601);
  mapopt_ctx *ctx;
  assert_int_equal(mapopt_ctx_new(NULL, NULL, &ctx), MAPOPT_OK);
  static rnd f;
  int tight = 0;
  for (int trial = 0; trial < 400; trial++) {
    bool fenced = trial % 2 == 1;
    rnd_build(&f, &r, fenced);
    int64_t lb = -1;
    assert_int_equal(mapopt__sim_lower_bound(ctx, &f.m, &f.run, &f.dag, &lb),
                     MAPOPT_OK);
    assert_true(lb >= 0);
    int64_t best = INT64_MAX;
    for (int s = 0; s < 30; s++) {
      int64_t ms = rnd_schedule(&f, &r, s == 0);
      if (lb > ms)
        print_error("trial %d schedule %d: bound %lld > makespan %lld\n", trial,
                    s, (long long)lb, (long long)ms);
      assert_true(lb <= ms);
      best = ms < best ? ms : best;
    }
    /* The bound is not vacuous: it reaches half the best of the greedy
     * and 29 random schedules in most trials. */
    tight += 2 * lb >= best;
    if (getenv("SIMCOST_VERBOSE"))
      printf("trial %d: bound %lld best %lld\n", trial, (long long)lb,
             (long long)best);
  }
  mapopt_ctx_free(ctx);
  assert_true(tight >= 380);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_muldiv),
      cmocka_unit_test(test_copy_ns),
      cmocka_unit_test(test_task_gpu),
      cmocka_unit_test(test_task_peaks),
      cmocka_unit_test(test_task_inner),
      cmocka_unit_test(test_task_memo),
      cmocka_unit_test(test_task_memo_state),
      cmocka_unit_test(test_task_noise),
      cmocka_unit_test(test_layout_ppm),
      cmocka_unit_test(test_best_cost),
      cmocka_unit_test(test_proc_total),
      cmocka_unit_test(test_lb_chain_parallel),
      cmocka_unit_test(test_lb_interior),
      cmocka_unit_test(test_lb_fenced),
      cmocka_unit_test(test_lb_inner),
      cmocka_unit_test(test_lb_property),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
