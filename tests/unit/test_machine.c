/*
 * Unit tests of the machine module: every preset loads and has the figures of
 * docs/machines.md, "The built-in presets", converted to integers; each kind of
 * bad input gives its exact located diagnostic; the rank split in shape_of;
 * every argument form of resolve; load(to_json(m)) == m; the probe on this host
 * and on a fake /sys + /proc tree; and out of memory at every allocation of a
 * load.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "machine/machine.h"

#include "failing_alloc.h"
#include "fixture.h"

static mapopt_machine *resolve_ok(const char *arg) {
  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  mapopt_status st = mapopt_machine_resolve(ctx, arg, diags, &m);
  if (st != MAPOPT_OK) {
    print_message("resolve(%s): %s\n", arg, mapopt_status_name(st));
    fixture_print_diags();
  }
  assert_int_equal(st, MAPOPT_OK);
  assert_non_null(m);
  return m;
}

/* The first diagnostic, formatted, after a failed resolve. */
static const char *resolve_fails(const char *arg, mapopt_status want) {
  static char buf[1024];
  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  mapopt_status st = mapopt_machine_resolve(ctx, arg, diags, &m);
  assert_int_equal(st, want);
  assert_null(m);
  assert_true(mapopt_diags_count(diags) > 0);
  mapopt_diag_format(mapopt_diags_get(diags, 0), buf, sizeof buf);
  return buf;
}

/* ---- presets ------------------------------------------------------------ */

static void test_preset_list(void **state) {
  (void)state;
  static const char *const want[] = {"a100x4", "cpu-cluster", "h100x8",
                                     "lassen", "p100x4",      "p100x4-nvlink"};
  const char *const *names = mapopt_machine_presets();
  size_t n = 0;
  while (names[n])
    n++;
  assert_int_equal(n, sizeof want / sizeof want[0]);
  for (size_t i = 0; i < n; i++) {
    assert_string_equal(names[i], want[i]);
    const char *json = mapopt_machine_preset_json(names[i]);
    assert_non_null(json);
    mapopt_machine *m = resolve_ok(names[i]);
    assert_string_equal(m->name, names[i]);
    mapopt_machine_free(m);
    /* The public loader accepts the same text. */
    mapopt_diags_clear(diags);
    assert_int_equal(
        mapopt_machine_load_json(ctx, names[i], json, strlen(json), diags, &m),
        MAPOPT_OK);
    mapopt_machine_free(m);
  }
  assert_null(mapopt_machine_preset_json("nosuch"));
  assert_string_equal(mapopt_channel_name(MAPOPT_CHAN_FB_FB_PEER),
                      "FB_FB_PEER");
  assert_null(mapopt_channel_name(MAPOPT_CHAN_COUNT));
}

#define MIB (INT64_C(1) << 20)

static void test_p100x4(void **state) {
  (void)state;
  mapopt_machine *m = resolve_ok("p100x4");
  assert_int_equal(m->nodes, 1);
  assert_int_equal(m->ranks_per_node, 1);
  assert_int_equal(m->sockets, 2);
  assert_int_equal(m->util_count, 2);
  const mapopt_machine_procs *gpu = &m->procs[MAPOPT_PROC_GPU];
  assert_int_equal(gpu->count, 4);
  assert_int_equal(gpu->mflops_f64, 4700000);
  assert_int_equal(gpu->mflops_f32, 9300000);
  assert_int_equal(gpu->mflops_f64_matrix, 4700000);
  assert_int_equal(gpu->overhead_ns, 12000);
  assert_int_equal(gpu->inner_overhead_ns, 20000);
  static const int64_t sock[] = {0, 0, 1, 1};
  for (int i = 0; i < 4; i++)
    assert_int_equal(gpu->socket[i], sock[i]);
  const mapopt_machine_procs *cpu = &m->procs[MAPOPT_PROC_CPU];
  assert_int_equal(cpu->count, 4);
  assert_int_equal(cpu->mflops_f64, 38400);
  assert_int_equal(cpu->mflops_f32, 76800);
  assert_int_equal(cpu->socket[1], 1); /* CPU i on socket i mod 2 */
  assert_int_equal(cpu->socket[2], 0);
  const mapopt_machine_procs *omp = &m->procs[MAPOPT_PROC_OMP];
  assert_int_equal(omp->count, 2);
  assert_int_equal(omp->threads, 6);
  assert_int_equal(omp->mflops_f64, 6 * 38400); /* threads x per core */
  assert_int_equal(omp->overhead_ns, 8000);
  assert_int_equal(m->procs[MAPOPT_PROC_IO].count, 0);
  assert_int_equal(m->mems[MAPOPT_MEM_FBMEM].capacity, 15000 * MIB);
  assert_int_equal(m->mems[MAPOPT_MEM_ZCMEM].capacity, 2048 * MIB);
  assert_int_equal(m->mems[MAPOPT_MEM_SYSMEM].capacity, 150000 * MIB);
  assert_int_equal(m->mems[MAPOPT_MEM_RDMEM].capacity, 512 * MIB);
  assert_int_equal(m->mems[MAPOPT_MEM_SOCKMEM].capacity, 40000 * MIB);
  assert_false(m->mems[MAPOPT_MEM_VIRTUAL].present);
  const mapopt_affinity *fb = &m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_FBMEM];
  assert_true(fb->present);
  assert_int_equal(fb->bw_mbps, 550000);
  assert_int_equal(fb->lat_ns, 500);
  assert_int_equal(fb->gather_per_ms, 20000000);
  assert_int_equal(fb->atomic_per_ms, 8000000);
  const mapopt_affinity *zc = &m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_ZCMEM];
  assert_int_equal(zc->bw_mbps, 11000);
  assert_int_equal(zc->gather_per_ms, 20000);
  assert_int_equal(zc->atomic_per_ms, 4000);
  assert_false(m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_SYSMEM].present);
  assert_false(m->affinity[MAPOPT_PROC_CPU][MAPOPT_MEM_FBMEM].present);
  /* Every CPU and OMP edge of docs/machines.md, "affinity". */
  static const int cpu_mems[] = {MAPOPT_MEM_SYSMEM, MAPOPT_MEM_ZCMEM,
                                 MAPOPT_MEM_RDMEM, MAPOPT_MEM_SOCKMEM};
  for (int i = 0; i < 4; i++)
    assert_int_equal(m->affinity[MAPOPT_PROC_CPU][cpu_mems[i]].bw_mbps, 12000);
  assert_int_equal(m->affinity[MAPOPT_PROC_OMP][MAPOPT_MEM_SOCKMEM].bw_mbps,
                   45000);
  assert_int_equal(m->affinity[MAPOPT_PROC_OMP][MAPOPT_MEM_SYSMEM].bw_mbps,
                   35000);
  assert_true(m->affinity[MAPOPT_PROC_OMP][MAPOPT_MEM_ZCMEM].present);
  const mapopt_channel_params *ch = m->channels;
  assert_int_equal(ch[MAPOPT_CHAN_FB_LOCAL].bw_mbps, 250000);
  assert_int_equal(ch[MAPOPT_CHAN_FB_LOCAL].lat_ns, 5000);
  assert_int_equal(ch[MAPOPT_CHAN_FB_FB_PEER].bw_mbps, 10000);
  assert_int_equal(ch[MAPOPT_CHAN_FB_FB_PEER].cross_socket_bw_mbps, 7000);
  assert_false(ch[MAPOPT_CHAN_FB_FB_PEER].peer_link);
  assert_int_equal(ch[MAPOPT_CHAN_FB_FB_PEER].lat_ns, 10000);
  assert_int_equal(ch[MAPOPT_CHAN_FB_HOST].bw_mbps, 12000);
  assert_int_equal(ch[MAPOPT_CHAN_HOST_HOST].bw_mbps, 20000);
  assert_int_equal(ch[MAPOPT_CHAN_NETWORK].bw_mbps, 12500);
  assert_int_equal(ch[MAPOPT_CHAN_NETWORK].lat_ns, 8000);
  assert_true(ch[MAPOPT_CHAN_NETWORK].gpudirect);
  const mapopt_machine_runtime *r = &m->runtime;
  assert_int_equal(r->launch_ns, 60000);
  assert_int_equal(r->launch_traced_ns, 15000);
  assert_int_equal(r->map_ns, 40000);
  assert_int_equal(r->map_traced_ns, 8000);
  assert_int_equal(r->fence_ns, 20000);
  assert_int_equal(r->future_ns, 5000);
  assert_int_equal(r->ipc_lat_ns, 3000);
  assert_int_equal(r->window_ops, 1024);
  mapopt_machine_free(m);
}

static void test_other_presets(void **state) {
  (void)state;
  mapopt_machine *m = resolve_ok("lassen");
  const mapopt_channel_params *peer = &m->channels[MAPOPT_CHAN_FB_FB_PEER];
  assert_int_equal(peer->bw_mbps, 75000);
  assert_int_equal(peer->cross_socket_bw_mbps, 30000);
  assert_true(peer->peer_link);
  assert_int_equal(peer->lat_ns, 7000);
  assert_int_equal(m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_FBMEM].bw_mbps,
                   810000);
  assert_int_equal(m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_ZCMEM].bw_mbps,
                   60000);
  assert_int_equal(m->channels[MAPOPT_CHAN_FB_HOST].bw_mbps, 60000);
  assert_int_equal(m->channels[MAPOPT_CHAN_NETWORK].bw_mbps, 25000);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].mflops_f32, 15700000);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].overhead_ns, 10000);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].mflops_f64, 16 * 24800);
  mapopt_machine_free(m);

  m = resolve_ok("a100x4");
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].mflops_f64, 9700000);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].mflops_f64_matrix, 19500000);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].mflops_f32, 19500000);
  assert_int_equal(m->mems[MAPOPT_MEM_FBMEM].capacity, 39000 * MIB);
  assert_int_equal(m->sockets, 1);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].threads, 48);
  assert_int_equal(m->util_count, 4);
  assert_int_equal(m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_FBMEM].bw_mbps,
                   1320000);
  mapopt_machine_free(m);

  m = resolve_ok("h100x8");
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].count, 8);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].socket[3], 0);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].socket[4], 1);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].mflops_f64_matrix, 67000000);
  assert_int_equal(m->mems[MAPOPT_MEM_FBMEM].capacity, 79000 * MIB);
  assert_int_equal(m->mems[MAPOPT_MEM_SYSMEM].capacity, 1000000 * MIB);
  assert_int_equal(m->channels[MAPOPT_CHAN_NETWORK].bw_mbps, 400000);
  assert_int_equal(m->channels[MAPOPT_CHAN_FB_LOCAL].lat_ns, 4000);
  mapopt_machine_free(m);

  m = resolve_ok("p100x4-nvlink");
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].mflops_f64, 5300000);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].mflops_f32, 10600000);
  assert_int_equal(m->channels[MAPOPT_CHAN_FB_FB_PEER].bw_mbps, 20000);
  assert_true(m->channels[MAPOPT_CHAN_FB_FB_PEER].peer_link);
  assert_int_equal(m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_ZCMEM].bw_mbps,
                   11000);
  mapopt_machine_free(m);

  m = resolve_ok("cpu-cluster");
  assert_int_equal(m->nodes, 4);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].count, 0);
  assert_null(m->procs[MAPOPT_PROC_GPU].socket);
  assert_false(m->mems[MAPOPT_MEM_ZCMEM].present);
  assert_false(m->mems[MAPOPT_MEM_FBMEM].present);
  assert_true(m->mems[MAPOPT_MEM_RDMEM].present);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].threads, 26);
  assert_int_equal(m->procs[MAPOPT_PROC_CPU].mflops_f64, 40000);
  assert_false(m->channels[MAPOPT_CHAN_FB_HOST].present);
  assert_int_equal(m->channels[MAPOPT_CHAN_NETWORK].lat_ns, 7000);
  mapopt_machine_free(m);
}

/* ---- diagnostics -------------------------------------------------------- */

/* A valid one-socket CPU machine, one section per line, and pieces to
 * build broken ones from. Line 1 is HEAD. */
#define HEAD "{\"format\": \"mapopt-machine/1\", \"name\": \"t\",\n"
#define CPU2                                                                   \
  "\"processors\": {\"CPU\": {\"count\": 2, \"gflops_f64\": 10, "              \
  "\"gflops_f32\": 20}},\n"
#define SYS "\"memories\": {\"SYSMEM\": {\"capacity_mib\": 100}},\n"
#define EDGE(p, m, bw)                                                         \
  "{\"proc\": \"" p "\", \"mem\": \"" m "\", \"bw_gbs\": " bw                  \
  ", \"lat_ns\": 1, \"gather_mps\": 1, \"atomic_mps\": 1}"
#define HH "\"channels\": {\"HOST_HOST\": {\"bw_gbs\": 10, \"lat_ns\": 1}}}\n"
#define GOOD                                                                   \
  HEAD CPU2 SYS "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH

/* Two GPUs on two sockets: FB, ZC, the GPU rows and the GPU channels. */
#define GPU_HEAD(extra)                                                        \
  "{\"format\": \"mapopt-machine/1\", \"sockets\": 2" extra ",\n"
#define GPU_PROCS(count, socket)                                               \
  "\"processors\": {\"GPU\": {\"count\": " count ", \"gflops_f64\": 1, "       \
  "\"gflops_f32\": 2, \"socket\": " socket "}},\n"
#define GPU_MEMS                                                               \
  "\"memories\": {\"FBMEM\": {\"capacity_mib\": 10}, \"ZCMEM\": "              \
  "{\"capacity_mib\": 10}},\n"
#define GPU_EDGES EDGE("GPU", "FBMEM", "100") ", " EDGE("GPU", "ZCMEM", "5")
#define GPU_CHANS                                                              \
  "\"channels\": {\"FB_LOCAL\": {\"bw_gbs\": 1, \"lat_ns\": 1}, "              \
  "\"FB_HOST\": {\"bw_gbs\": 1, \"lat_ns\": 1}, \"FB_FB_PEER\": "              \
  "{\"bw_gbs\": 1, \"lat_ns\": 1}, \"HOST_HOST\": {\"bw_gbs\": 1, "            \
  "\"lat_ns\": 1}}}\n"
#define GPU_GOOD                                                               \
  GPU_HEAD("")                                                                 \
  GPU_PROCS("2", "[0, 1]")                                                     \
  GPU_MEMS "\"affinity\": [" GPU_EDGES "],"                                    \
           "\n" GPU_CHANS

static const struct {
  const char *json;
  const char *want; /* the first diagnostic, formatted */
} bad_cases[] = {
    {HEAD CPU2 SYS "\"affinity\": [{\"proc\": \"CPU\", \"mem\": \"SYSMEM\", "
                   "\"bandwith\": 10}],\n" HH,
     "m.json:4:47: error: unknown key \"bandwith\" in affinity CPU -> SYSMEM"},
    {HEAD "\"bogus\": 1,\n" CPU2 SYS
          "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:2:1: error: unknown key \"bogus\" in the machine"},
    {HEAD CPU2 "\"memories\": {\"SYSMEM\": {\"capacity_mib\": 100}, \"RDMEM\": "
               "{\"capacity_mib\": 1}},\n"
               "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:4:13: error: missing mandatory affinity CPU -> RDMEM"},
    {GPU_HEAD("") GPU_PROCS("2", "[0, 1]") GPU_MEMS
     "\"affinity\": [" EDGE("GPU", "ZCMEM", "5") "],\n" GPU_CHANS,
     "m.json:4:13: error: missing mandatory affinity GPU -> FBMEM"},
    {GPU_HEAD("")
         GPU_PROCS("2", "[0, 1]") "\"memories\": {\"FBMEM\": "
                                  "{\"capacity_mib\": 10}, \"ZCMEM\": "
                                  "{\"capacity_mib\": 10}, \"SYSMEM\": "
                                  "{\"capacity_mib\": 10}},\n"
                                  "\"affinity\": [" GPU_EDGES ", " EDGE(
                                      "GPU", "SYSMEM", "5") "],\n" GPU_CHANS,
     "m.json:4:202: error: forbidden affinity GPU -> SYSMEM: a GPU accesses "
     "only its FBMEM and ZCMEM"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") ", " EDGE(
         "CPU", "FBMEM", "10") "],\n" HH,
     "m.json:4:109: error: forbidden affinity CPU -> FBMEM: CPU and OMP "
     "processors cannot access FBMEM"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE("CPU", "SYSMEM", "-5") "],\n" HH,
     "m.json:4:57: error: \"bw_gbs\" in affinity CPU -> SYSMEM must be "
     "positive, got -5"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE("CPU", "SYSMEM", "0") "],\n" HH,
     "m.json:4:57: error: \"bw_gbs\" in affinity CPU -> SYSMEM must be "
     "positive, got 0"},
    {HEAD CPU2 SYS
     "\"affinity\": [" EDGE("CPU", "SYSMEM", "\"fast\"") "],\n" HH,
     "m.json:4:57: error: \"bw_gbs\" in affinity CPU -> SYSMEM must be a "
     "number, not string"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE("CPU", "SYSMEM", "0.0001") "],\n" HH,
     "m.json:4:57: error: \"bw_gbs\" in affinity CPU -> SYSMEM must be at "
     "least 0.001, got 0.0001"},
    {HEAD CPU2 "\"memories\": {\"SYSMEM\": {\"capacity_mib\": 0}},\n"
               "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:3:41: error: \"capacity_mib\" in memories.SYSMEM must be an "
     "integer in [1, 1073741824]"},
    {HEAD "\"processors\": {\"CPU\": {\"count\": 5000, \"gflops_f64\": 10, "
          "\"gflops_f32\": 20}},\n" SYS
          "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:2:33: error: \"count\" in processors.CPU must be an integer in "
     "[0, 4096]"},
    {HEAD "\"nodes\": \"4\",\n" CPU2 SYS
          "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:2:10: error: \"nodes\" in the machine must be an integer in [1, "
     "1024]"},
    {GPU_HEAD(", \"ranks_per_node\": 3") GPU_PROCS("2", "[0, 1]") GPU_MEMS
     "\"affinity\": [" GPU_EDGES "],\n" GPU_CHANS,
     "m.json:1:64: error: ranks_per_node (3) must divide the GPU count (2)"},
    {GPU_HEAD("") GPU_PROCS("2", "[0, 2]") GPU_MEMS "\"affinity\": [" GPU_EDGES
                                                    "],\n" GPU_CHANS,
     "m.json:2:84: error: GPU 1's socket 2 is out of range: the machine has "
     "2 sockets"},
    {GPU_HEAD("") GPU_PROCS("2", "[0, 1, 1]") GPU_MEMS
     "\"affinity\": [" GPU_EDGES "],\n" GPU_CHANS,
     "m.json:2:80: error: \"socket\" in processors.GPU has 3 entries for 2 "
     "GPUs"},
    {GPU_HEAD("") GPU_PROCS(
         "2", "[0, 1]") "\"memories\": {\"ZCMEM\": {\"capacity_mib\": 10}},\n"
                        "\"affinity\": [" EDGE("GPU", "ZCMEM",
                                               "5") "],\n" GPU_CHANS,
     "m.json:3:13: error: missing FBMEM in memories: the machine has GPUs"},
    {HEAD CPU2 "\"memories\": {\"SYSMEM\": {\"capacity_mib\": 100}, \"FBMEM\": "
               "{\"capacity_mib\": 1}},\n"
               "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:3:56: error: FBMEM needs GPUs, and the machine has none"},
    {HEAD CPU2 SYS
     "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n"
                                                   "\"channels\": {}}\n",
     "m.json:5:13: error: missing channel HOST_HOST: every machine copies "
     "between host memories"},
    {GPU_HEAD("") GPU_PROCS("2", "[0, 1]") GPU_MEMS
     "\"affinity\": [" GPU_EDGES "],\n"
     "\"channels\": {\"HOST_HOST\": {\"bw_gbs\": 1, \"lat_ns\": 1}}}\n",
     "m.json:5:13: error: missing channel FB_LOCAL: the machine has GPUs"},
    {HEAD "\"nodes\": 2,\n" CPU2 SYS
          "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:6:13: error: missing channel NETWORK: the machine has several "
     "nodes"},
    {"{\"format\": \"mapopt-machine/2\",\n" CPU2 SYS
     "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:1:12: error: unsupported format \"mapopt-machine/2\" (expected "
     "\"mapopt-machine/1\")"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") ", " EDGE(
         "CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:4:109: error: duplicate affinity CPU -> SYSMEM (first given at "
     "4:14)"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE("TPU", "SYSMEM", "10") "],\n" HH,
     "m.json:4:23: error: unknown processor kind \"TPU\" in affinity[0] "
     "(expected CPU, GPU or OMP)"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") ", " EDGE(
         "OMP", "SYSMEM", "10") "],\n" HH,
     "m.json:4:109: error: affinity OMP -> SYSMEM: the machine has no OMP "
     "processors"},
    {HEAD CPU2 "\"memories\": {\"SYSMEM\": {\"per\": \"gpu\", "
               "\"capacity_mib\": 100}},\n"
               "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:3:32: error: \"per\" of SYSMEM must be \"node\", not \"gpu\""},
    {HEAD "\"processors\": {\"CPU\": {\"count\": 2}},\n" SYS
          "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     "m.json:2:23: error: missing key \"gflops_f64\" in processors.CPU"},
    {HEAD "\"processors\": {\"UTIL\": {\"count\": 2}},\n" SYS
          "\"affinity\": [],\n" HH,
     "m.json:2:15: error: the machine has no CPU, GPU or OMP processors"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE(
         "CPU", "SYSMEM", "10") "],\n"
                                "\"runtime\": {\"window_ops\": 0},\n" HH,
     "m.json:5:27: error: \"window_ops\" in runtime must be an integer in [1, "
     "1048576]"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE(
         "CPU", "SYSMEM", "10") "],\n"
                                "\"sources\": {\"CPU\": 3},\n" HH,
     "m.json:5:20: error: \"CPU\" in sources must be a string, not integer"},
    {HEAD CPU2 SYS "\"affinity\": [" EDGE("CPU", "SYSMEM", "10") "],\n" HH,
     NULL /* valid: checks the base case itself */},
    {GPU_GOOD, NULL},
};

static void test_bad_json(void **state) {
  (void)state;
  int failures = 0; /* every case is tried, and every failure shown */
  for (size_t i = 0; i < sizeof bad_cases / sizeof bad_cases[0]; i++) {
    mapopt_diags_clear(diags);
    mapopt_machine *m = NULL;
    const char *text = bad_cases[i].json;
    mapopt_status st =
        mapopt_machine_load_json(ctx, "m.json", text, strlen(text), diags, &m);
    if (!bad_cases[i].want) {
      if (st != MAPOPT_OK) {
        print_message("case %zu should load:\n", i);
        fixture_print_diags();
        failures++;
      }
      mapopt_machine_free(m);
      continue;
    }
    char got[1024] = "";
    if (mapopt_diags_count(diags))
      mapopt_diag_format(mapopt_diags_get(diags, 0), got, sizeof got);
    if (st != MAPOPT_EINVAL || strcmp(got, bad_cases[i].want) != 0) {
      print_message("case %zu:\n%s\n", i, text);
      fixture_print_diags();
      /* What the first diagnostic points at. */
      const mapopt_diag *d =
          mapopt_diags_count(diags) ? mapopt_diags_get(diags, 0) : NULL;
      const char *p = text;
      for (int l = 1; d && l < d->line && p; l++)
        p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
      if (d && p && d->col > 0)
        print_message("  at: %.20s\n", p + d->col - 1);
      failures++;
    }
    assert_null(m);
  }
  assert_int_equal(failures, 0);
  /* Malformed JSON is located too. */
  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  const char *text = "{\"format\": \"mapopt-machine/1\",}";
  assert_int_equal(
      mapopt_machine_load_json(ctx, "m.json", text, strlen(text), diags, &m),
      MAPOPT_EINVAL);
  const mapopt_diag *d = mapopt_diags_get(diags, 0);
  assert_string_equal(d->file, "m.json");
  assert_int_equal(d->line, 1);
  assert_true(d->col > 1);
}

/* Rates round to nearest at load; a missing name comes from the file. */
static void test_conversions(void **state) {
  (void)state;
  const char *text =
      "{\"format\": \"mapopt-machine/1\",\n"
      "\"processors\": {\"OMP\": {\"count\": 1, \"threads\": 3, "
      "\"gflops_f64\": 1.0004, \"gflops_f32\": 2.0005}},\n"
      "\"memories\": {\"SOCKMEM\": {\"capacity_mib\": 3}},\n"
      "\"affinity\": [{\"proc\": \"OMP\", \"mem\": \"SOCKMEM\", \"bw_gbs\": "
      "12.3456, \"lat_ns\": 0, \"gather_mps\": 0.0015, \"atomic_mps\": 7}],\n"
      "\"channels\": {\"HOST_HOST\": {\"bw_gbs\": 1, \"lat_ns\": 1}},\n"
      "\"runtime\": {\"map_ns\": 1, \"inner_overhead_ns\": 7}}\n";
  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  assert_int_equal(mapopt_machine_load_json(ctx, "dir/mine.json", text,
                                            strlen(text), diags, &m),
                   MAPOPT_OK);
  assert_string_equal(m->name, "mine");
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].mflops_f64, 3 * 1000);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].mflops_f32, 3 * 2001);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].inner_overhead_ns, 7);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].overhead_ns, 8000);
  const mapopt_affinity *a = &m->affinity[MAPOPT_PROC_OMP][MAPOPT_MEM_SOCKMEM];
  assert_int_equal(a->bw_mbps, 12346);
  assert_int_equal(a->gather_per_ms, 2);
  assert_int_equal(a->atomic_per_ms, 7000);
  assert_int_equal(m->mems[MAPOPT_MEM_SOCKMEM].capacity, 3 * MIB);
  assert_int_equal(m->runtime.map_ns, 1);
  assert_int_equal(m->runtime.launch_ns, 60000);
  assert_int_equal(m->runtime.window_ops, 1024);
  assert_int_equal(m->util_count, 1);
  assert_int_equal(m->sockets, 1);
  assert_int_equal(m->nodes, 1);
  mapopt_machine_free(m);
}

/* ---- shapes ------------------------------------------------------------- */

#define BIT(k) (1u << (k))

static void test_shape_of(void **state) {
  (void)state;
  mapopt_machine_shape s;
  mapopt_machine *m = resolve_ok("p100x4");
  mapopt_machine_shape_of(m, &s);
  mapopt_machine_shape d;
  mapopt_shape_default(&d);
  assert_memory_equal(&s, &d, sizeof s); /* the DSL's default shape */
  assert_int_equal(s.affinity[MAPOPT_PROC_GPU],
                   BIT(MAPOPT_MEM_FBMEM) | BIT(MAPOPT_MEM_ZCMEM));
  mapopt_machine_free(m);

  /* A 4-GPU node with 4 ranks: 4 address spaces of 1 GPU, 1 CPU (4/4),
   * no OMP (2 < 4). */
  m = resolve_ok("p100x4:ranks_per_node=4");
  assert_int_equal(m->ranks_per_node, 4);
  mapopt_machine_shape_of(m, &s);
  assert_int_equal(s.nodes, 4);
  assert_int_equal(s.procs[MAPOPT_PROC_GPU], 1);
  assert_int_equal(s.procs[MAPOPT_PROC_CPU], 1);
  assert_int_equal(s.procs[MAPOPT_PROC_OMP], 0);
  mapopt_machine_free(m);

  m = resolve_ok("lassen:nodes=2,ranks_per_node=2");
  mapopt_machine_shape_of(m, &s);
  assert_int_equal(s.nodes, 4);
  assert_int_equal(s.procs[MAPOPT_PROC_GPU], 2);
  assert_int_equal(s.procs[MAPOPT_PROC_CPU], 2);
  assert_int_equal(s.procs[MAPOPT_PROC_OMP], 1);
  mapopt_machine_free(m);

  m = resolve_ok("h100x8:ranks_per_node=8");
  mapopt_machine_shape_of(m, &s);
  assert_int_equal(s.nodes, 8);
  assert_int_equal(s.procs[MAPOPT_PROC_CPU], 1);
  assert_int_equal(s.procs[MAPOPT_PROC_OMP], 0);
  mapopt_machine_free(m);

  m = resolve_ok("cpu-cluster");
  mapopt_machine_shape_of(m, &s);
  assert_int_equal(s.nodes, 4);
  assert_int_equal(s.procs[MAPOPT_PROC_GPU], 0);
  assert_int_equal(s.affinity[MAPOPT_PROC_CPU], BIT(MAPOPT_MEM_SYSMEM) |
                                                    BIT(MAPOPT_MEM_RDMEM) |
                                                    BIT(MAPOPT_MEM_SOCKMEM));
  assert_int_equal(s.affinity[MAPOPT_PROC_OMP],
                   BIT(MAPOPT_MEM_SYSMEM) | BIT(MAPOPT_MEM_SOCKMEM));
  mapopt_machine_free(m);
}

/* The machine of a one-line description has the shape that description
 * gives the DSL. */
static void test_one_line(void **state) {
  (void)state;
  static const char *const lines[] = {"nodes=2 gpu=4 cpu=8 omp=2",
                                      "gpu=2",
                                      "cpu=3 sockets=2",
                                      "nodes=3 cpu=2 gpu=1 zcmem=0",
                                      "omp=4 rdmem=0 sysmem=0 sockets=4",
                                      "cpu=1,gpu=8,sockets=0"};
  for (size_t i = 0; i < sizeof lines / sizeof lines[0]; i++) {
    mapopt_machine_shape want, got;
    char err[256];
    assert_int_equal(mapopt_shape_parse(lines[i], &want, err, sizeof err),
                     MAPOPT_OK);
    mapopt_machine *m = resolve_ok(lines[i]);
    mapopt_machine_shape_of(m, &got);
    assert_int_equal(got.nodes, want.nodes);
    assert_int_equal(got.sockets, want.sockets);
    /* The one-line form keeps the socket count (it printed sockets=1 for
     * any number of sockets). */
    char back[256], again[256];
    mapopt_shape_format(&got, back, sizeof back);
    mapopt_machine_shape round;
    assert_int_equal(mapopt_shape_parse(back, &round, err, sizeof err),
                     MAPOPT_OK);
    mapopt_shape_format(&round, again, sizeof again);
    assert_string_equal(back, again);
    assert_int_equal(round.sockets, want.sockets);
    for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++) {
      assert_int_equal(got.procs[k], want.procs[k]);
      if (want.procs[k])
        assert_int_equal(got.affinity[k], want.affinity[k]);
    }
    assert_string_equal(m->name, lines[i]);
    mapopt_machine_free(m);
  }
  mapopt_machine *m = resolve_ok("nodes=2 gpu=4 cpu=8 omp=2 sockets=2");
  assert_int_equal(m->sockets, 2);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].socket[1], 0);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].socket[2], 1);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].threads, 6);
  assert_int_equal(m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_FBMEM].bw_mbps,
                   550000);
  assert_int_equal(m->mems[MAPOPT_MEM_FBMEM].capacity, 15000 * MIB);
  assert_true(m->channels[MAPOPT_CHAN_NETWORK].present);
  mapopt_machine_free(m);
  m = resolve_ok("cpu=2");
  assert_false(m->mems[MAPOPT_MEM_ZCMEM].present);
  assert_false(m->channels[MAPOPT_CHAN_FB_LOCAL].present);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].count, 0);
  mapopt_machine_free(m);

  assert_string_equal(resolve_fails("nodes=2 tpu=1", MAPOPT_EINVAL),
                      "nodes=2 tpu=1: error: invalid machine description: "
                      "column 9: unknown key 'tpu' (expected nodes, cpu, "
                      "gpu, omp, io, py, proc, sockets, sysmem, zcmem or "
                      "rdmem)");
  assert_string_equal(resolve_fails("gpu=2 io=1", MAPOPT_EINVAL),
                      "gpu=2 io=1: error: io, py and proc processors are not "
                      "modelled by the simulator");
  assert_string_equal(resolve_fails("nodes=2", MAPOPT_EINVAL),
                      "nodes=2: error: the machine has no CPU, GPU or OMP "
                      "processors");
}

/* ---- resolve ------------------------------------------------------------ */

static void test_resolve_params(void **state) {
  (void)state;
  mapopt_machine *m = resolve_ok("lassen:nodes=4");
  assert_int_equal(m->nodes, 4);
  assert_string_equal(m->name, "lassen");
  mapopt_machine_free(m);
  m = resolve_ok("p100x4:nodes=2");
  assert_int_equal(m->nodes, 2);
  mapopt_machine_free(m);
  m = resolve_ok("cpu-cluster:nodes=16");
  assert_int_equal(m->nodes, 16);
  mapopt_machine_free(m);
  m = resolve_ok("lassen:nodes=1024");
  assert_int_equal(m->nodes, MAPOPT_MACHINE_MAX_NODES);
  mapopt_machine_free(m);

  assert_string_equal(resolve_fails("lassen:nodes=1025", MAPOPT_EINVAL),
                      "lassen:nodes=1025: error: parameter nodes=1025 of "
                      "machine \"lassen\" is out of range [1, 1024]");
  /* One limit for every way of giving a machine (the one-line form allowed
   * 2^20 nodes, and a run on them did not end). */
  assert_string_equal(resolve_fails("nodes=1048576 gpu=4 cpu=4", MAPOPT_EINVAL),
                      "nodes=1048576 gpu=4 cpu=4: error: too large: at most "
                      "nodes=1024, cpu=4096, gpu=1024, omp=1024 and "
                      "sockets=64");
  assert_string_equal(resolve_fails("lassen:gpus=2", MAPOPT_EINVAL),
                      "lassen:gpus=2: error: unknown parameter \"gpus\" "
                      "(parameters: nodes, ranks_per_node)");
  assert_string_equal(resolve_fails("lassen:nodes=x", MAPOPT_EINVAL),
                      "lassen:nodes=x: error: parameter nodes must be a "
                      "positive integer, got \"x\"");
  assert_string_equal(resolve_fails("lassen:nodes=0", MAPOPT_EINVAL),
                      "lassen:nodes=0: error: parameter nodes must be a "
                      "positive integer, got \"0\"");
  assert_string_equal(resolve_fails("lassen:nodes", MAPOPT_EINVAL),
                      "lassen:nodes: error: malformed parameter \"nodes\" "
                      "(expected NAME=VALUE)");
  assert_string_equal(resolve_fails("lassen:", MAPOPT_EINVAL),
                      "lassen:: error: expected NAME=VALUE parameters after "
                      "':'");
  assert_string_equal(resolve_fails("lassen:nodes=2,nodes=3", MAPOPT_EINVAL),
                      "lassen:nodes=2,nodes=3: error: parameter nodes is "
                      "given twice");
  assert_string_equal(
      resolve_fails("cpu-cluster:ranks_per_node=2", MAPOPT_EINVAL),
      "cpu-cluster:ranks_per_node=2: error: machine \"cpu-cluster\" has no "
      "parameter \"ranks_per_node\" (it takes nodes)");
  assert_string_equal(resolve_fails("p100x4:ranks_per_node=3", MAPOPT_EINVAL),
                      "p100x4:ranks_per_node=3: error: ranks_per_node (3) "
                      "must divide the GPU count (4)");
  assert_string_equal(resolve_fails("p100x4:ranks_per_node=8", MAPOPT_EINVAL),
                      "p100x4:ranks_per_node=8: error: parameter "
                      "ranks_per_node=8 of machine \"p100x4\" is out of range "
                      "[1, 4]");
  const char *msg = resolve_fails("p200", MAPOPT_ENOTFOUND);
  assert_non_null(strstr(msg, "p200: error: unknown machine \"p200\" "
                              "(presets: a100x4, cpu-cluster, h100x8, lassen, "
                              "p100x4, p100x4-nvlink, local;"));
  msg = resolve_fails("nosuch:nodes=2", MAPOPT_ENOTFOUND);
  assert_non_null(strstr(msg, "unknown machine \"nosuch\""));
}

static char tmpdir[64];

static void write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

static void test_resolve_files(void **state) {
  (void)state;
  char path[256];
  snprintf(path, sizeof path, "%s/mine.json", tmpdir);
  write_file(path, GPU_GOOD);
  mapopt_machine *m = resolve_ok(path);
  assert_string_equal(m->name, "mine");
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].count, 2);
  mapopt_machine_free(m);
  /* Diagnostics name the file. */
  snprintf(path, sizeof path, "%s/bad.json", tmpdir);
  write_file(path, "{\"format\": \"mapopt-machine/1\", \"nodes\": 0}");
  char want[512];
  snprintf(want, sizeof want,
           "%s:1:41: error: \"nodes\" in the machine must be an integer in "
           "[1, 1024]",
           path);
  assert_string_equal(resolve_fails(path, MAPOPT_EINVAL), want);
  snprintf(path, sizeof path, "%s/missing.json", tmpdir);
  assert_non_null(strstr(resolve_fails(path, MAPOPT_EIO),
                         "missing.json: error: cannot read file: No such"));
  assert_non_null(strstr(resolve_fails("nosuch.json", MAPOPT_EIO),
                         "nosuch.json: error: cannot read file"));
}

/* ---- round trip --------------------------------------------------------- */

static void round_trip(const mapopt_machine *m) {
  char *text = NULL;
  assert_int_equal(mapopt_machine_to_json(ctx, m, &text), MAPOPT_OK);
  mapopt_diags_clear(diags);
  mapopt_machine *back = NULL;
  mapopt_status st = mapopt_machine_load_json(ctx, "rt.json", text,
                                              strlen(text), diags, &back);
  if (st != MAPOPT_OK) {
    print_message("%s", text);
    fixture_print_diags();
  }
  assert_int_equal(st, MAPOPT_OK);
  assert_true(mapopt__machine_equal(m, back));
  /* And the text is a fixed point. */
  char *again = NULL;
  assert_int_equal(mapopt_machine_to_json(ctx, back, &again), MAPOPT_OK);
  assert_string_equal(text, again);
  mapopt_text_free(again);
  mapopt_text_free(text);
  mapopt_machine_free(back);
}

static void test_round_trip(void **state) {
  (void)state;
  const char *const *names = mapopt_machine_presets();
  for (size_t i = 0; names[i]; i++) {
    mapopt_machine *m = resolve_ok(names[i]);
    round_trip(m);
    mapopt_machine_free(m);
  }
  static const char *const more[] = {"lassen:nodes=8,ranks_per_node=4",
                                     "nodes=2 gpu=4 cpu=8 omp=2 sockets=2",
                                     "cpu=2 zcmem=1", "omp=1"};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) {
    mapopt_machine *m = resolve_ok(more[i]);
    round_trip(m);
    mapopt_machine_free(m);
  }
  /* Equality sees a changed rate. */
  mapopt_machine *a = resolve_ok("p100x4"), *b = resolve_ok("p100x4");
  assert_true(mapopt__machine_equal(a, b));
  b->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_ZCMEM].atomic_per_ms++;
  assert_false(mapopt__machine_equal(a, b));
  mapopt_machine_free(a);
  mapopt_machine_free(b);
}

/* ---- probe -------------------------------------------------------------- */

static void test_probe_host(void **state) {
  (void)state;
  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  mapopt_status st = mapopt_machine_probe(ctx, false, diags, &m);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  assert_string_equal(m->name, "local");
  assert_true(m->procs[MAPOPT_PROC_CPU].count >= 1);
  assert_true(m->util_count >= 1);
  assert_true(m->mems[MAPOPT_MEM_SYSMEM].capacity > 0);
  if (m->procs[MAPOPT_PROC_GPU].count == 0) {
    assert_false(m->mems[MAPOPT_MEM_ZCMEM].present);
    assert_false(m->mems[MAPOPT_MEM_FBMEM].present);
  }
  round_trip(m);
  mapopt_machine_free(m);
}

static void test_probe_measure(void **state) {
  (void)state;
  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  assert_int_equal(mapopt_machine_probe(ctx, true, diags, &m), MAPOPT_OK);
  assert_true(m->affinity[MAPOPT_PROC_CPU][MAPOPT_MEM_SYSMEM].bw_mbps >= 1);
  char *text;
  assert_int_equal(mapopt_machine_to_json(ctx, m, &text), MAPOPT_OK);
  assert_non_null(strstr(text, "memcpy benchmark (0.5 s)"));
  mapopt_text_free(text);
  mapopt_machine_free(m);
}

static void mkdirs(const char *root, const char *rel) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", root, rel);
  for (char *p = path + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(path, 0755);
      *p = '/';
    }
  mkdir(path, 0755);
}

/* A fake host: 2 sockets x 8 cores with AVX-512 at 2.5 GHz (hyperthreads
 * listed twice), 64 GiB, two A100 80 GB. */
static void test_probe_fake_host(void **state) {
  (void)state;
  char root[128], path[512];
  snprintf(root, sizeof root, "%s/host", tmpdir);
  mkdirs(root, "sys/devices/system/node/node0");
  mkdirs(root, "sys/devices/system/node/node1");
  mkdirs(root, "proc/driver/nvidia/gpus/0000:01:00.0");
  mkdirs(root, "proc/driver/nvidia/gpus/0000:41:00.0");
  snprintf(path, sizeof path, "%s/proc/cpuinfo", root);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  for (int t = 0; t < 2; t++)
    for (int s = 0; s < 2; s++)
      for (int c = 0; c < 8; c++)
        fprintf(f,
                "processor\t: %d\nphysical id\t: %d\ncore id\t\t: %d\n"
                "cpu MHz\t\t: 2500.000\nflags\t\t: fpu sse2 avx avx2 fma "
                "avx512f avx512dq\n\n",
                t * 16 + s * 8 + c, s, c);
  fclose(f);
  snprintf(path, sizeof path, "%s/proc/meminfo", root);
  write_file(path, "MemTotal:       67108864 kB\nMemFree: 1 kB\n");
  snprintf(path, sizeof path,
           "%s/proc/driver/nvidia/gpus/0000:01:00.0/information", root);
  write_file(path, "Model: \t\t NVIDIA A100-SXM4-80GB\nIRQ:   \t\t 42\n");
  snprintf(path, sizeof path,
           "%s/proc/driver/nvidia/gpus/0000:41:00.0/information", root);
  write_file(path, "Model: \t\t NVIDIA A100-SXM4-80GB\n");

  mapopt_diags_clear(diags);
  mapopt_machine *m = NULL;
  mapopt_status st =
      mapopt__machine_probe_at(ctx, root, false, false, diags, &m);
  if (st != MAPOPT_OK)
    fixture_print_diags();
  assert_int_equal(st, MAPOPT_OK);
  assert_int_equal(m->sockets, 2);
  /* 16 cores: UTIL 2, OMP 2 x 4 (half of each socket), CPU 16-2-8-1. */
  assert_int_equal(m->util_count, 2);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].count, 2);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].threads, 4);
  assert_int_equal(m->procs[MAPOPT_PROC_CPU].count, 5);
  /* 2.5 GHz x 32 flop/cycle (avx512f). */
  assert_int_equal(m->procs[MAPOPT_PROC_CPU].mflops_f64, 80000);
  assert_int_equal(m->procs[MAPOPT_PROC_CPU].mflops_f32, 160000);
  assert_int_equal(m->procs[MAPOPT_PROC_OMP].mflops_f64, 4 * 80000);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].count, 2);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].mflops_f64_matrix, 19500000);
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].socket[1], 1);
  /* 80 GB from the model name, less 1 GiB; ZC 2048 MiB; SYSMEM 60%. */
  assert_int_equal(m->mems[MAPOPT_MEM_FBMEM].capacity, (81920 - 1024) * MIB);
  assert_int_equal(m->mems[MAPOPT_MEM_ZCMEM].capacity, 2048 * MIB);
  assert_int_equal(m->mems[MAPOPT_MEM_SYSMEM].capacity, 65536 * 6 / 10 * MIB);
  /* 10 GB/s per core; OMP 4 cores = 40 GB/s, within the socket's 80. */
  assert_int_equal(m->affinity[MAPOPT_PROC_CPU][MAPOPT_MEM_SYSMEM].bw_mbps,
                   10000);
  assert_int_equal(m->affinity[MAPOPT_PROC_OMP][MAPOPT_MEM_SOCKMEM].bw_mbps,
                   40000);
  assert_int_equal(m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_FBMEM].bw_mbps,
                   1321750); /* 85% of 1555 */
  round_trip(m);
  char *text;
  assert_int_equal(mapopt_machine_to_json(ctx, m, &text), MAPOPT_OK);
  assert_non_null(strstr(text, "2 x \\\"NVIDIA A100-SXM4-80GB\\\" from "
                               "/proc/driver/nvidia/gpus"));
  assert_non_null(strstr(text, "2 NUMA nodes"));
  mapopt_text_free(text);
  mapopt_machine_free(m);

  /* An empty host: every fact falls back, and the sources say so. */
  snprintf(root, sizeof root, "%s/empty", tmpdir);
  mkdirs(root, "x");
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt__machine_probe_at(ctx, root, false, false, diags, &m),
                   MAPOPT_OK);
  assert_int_equal(m->sockets, 1);
  assert_int_equal(m->procs[MAPOPT_PROC_CPU].count, 1);
  assert_int_equal(m->procs[MAPOPT_PROC_CPU].mflops_f64, 8000); /* 2 GHz x 4 */
  assert_int_equal(m->procs[MAPOPT_PROC_GPU].count, 0);
  assert_int_equal(m->mems[MAPOPT_MEM_SYSMEM].capacity, 8192 * 6 / 10 * MIB);
  assert_int_equal(mapopt_machine_to_json(ctx, m, &text), MAPOPT_OK);
  assert_non_null(strstr(text, "/proc/meminfo unreadable"));
  assert_non_null(strstr(text, "/sys/devices/system/node missing"));
  assert_non_null(strstr(text, "no NVIDIA GPU found"));
  mapopt_text_free(text);
  round_trip(m);
  mapopt_machine_free(m);
}

/* resolve("local") reads what the probe wrote to ~/.cache/mapopt. */
static void test_local(void **state) {
  (void)state;
  char home[128], path[256];
  snprintf(home, sizeof home, "%s/home", tmpdir);
  mkdirs(home, ".cache/mapopt");
  const char *old = getenv("HOME");
  char *saved = old ? strdup(old) : NULL;
  setenv("HOME", home, 1);
  assert_non_null(strstr(resolve_fails("local", MAPOPT_ENOTFOUND),
                         "local: error: machine \"local\" has not been "
                         "probed: run 'mapopt machine probe' to create"));
  mapopt_machine *m = NULL;
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_machine_probe(ctx, false, diags, &m), MAPOPT_OK);
  char *text;
  assert_int_equal(mapopt_machine_to_json(ctx, m, &text), MAPOPT_OK);
  snprintf(path, sizeof path, "%s/.cache/mapopt/local.json", home);
  write_file(path, text);
  mapopt_text_free(text);
  mapopt_machine *l = resolve_ok("local");
  assert_true(mapopt__machine_equal(m, l));
  mapopt_machine_free(l);
  l = resolve_ok("local:nodes=3");
  assert_int_equal(l->nodes, 3);
  mapopt_machine_free(l);
  mapopt_machine_free(m);
  if (saved) {
    setenv("HOME", saved, 1);
    free(saved);
  }
}

/* ---- out of memory ------------------------------------------------------ */

static void test_enomem(void **state) {
  (void)state;
  failing_alloc b = {.left = -1, .sticky = true};
  mapopt_ctx *c;
  assert_int_equal(mapopt_ctx_new(failing_realloc, &b, &c), MAPOPT_OK);
  static const char *const args[] = {"lassen:nodes=2", "gpu=2 cpu=2",
                                     "lassen:nodes=1999"};
  for (size_t a = 0; a < sizeof args / sizeof args[0]; a++) {
    mapopt_status want = a == 2 ? MAPOPT_EINVAL : MAPOPT_OK;
    bool done = false;
    for (long n = 0; !done && n < 100000; n++) {
      b.left = -1;
      mapopt_diags *d;
      assert_int_equal(mapopt_diags_new(c, &d), MAPOPT_OK);
      b.left = n;
      mapopt_machine *m = NULL;
      mapopt_status st = mapopt_machine_resolve(c, args[a], d, &m);
      b.left = -1;
      if (st == want) {
        done = true;
        if (m) {
          char *text = NULL;
          /* to_json under the same starvation. */
          for (long k = 0;; k++) {
            b.left = k;
            st = mapopt_machine_to_json(c, m, &text);
            b.left = -1;
            if (st == MAPOPT_OK)
              break;
            assert_int_equal(st, MAPOPT_ENOMEM);
          }
          mapopt_text_free(text);
        }
      } else {
        assert_int_equal(st, MAPOPT_ENOMEM);
        assert_null(m);
      }
      mapopt_machine_free(m);
      mapopt_diags_free(d);
    }
    assert_true(done);
  }
  /* The probe, on the fake host of test_probe_fake_host. */
  char root[128];
  snprintf(root, sizeof root, "%s/host", tmpdir);
  for (long n = 0;; n++) {
    b.left = -1;
    mapopt_diags *d;
    assert_int_equal(mapopt_diags_new(c, &d), MAPOPT_OK);
    b.left = n;
    mapopt_machine *m = NULL;
    mapopt_status st = mapopt__machine_probe_at(c, root, false, false, d, &m);
    b.left = -1;
    mapopt_machine_free(m);
    mapopt_diags_free(d);
    if (st == MAPOPT_OK)
      break;
    assert_int_equal(st, MAPOPT_ENOMEM);
    assert_null(m);
  }
  mapopt_ctx_free(c);
}

int main(void) {
  snprintf(tmpdir, sizeof tmpdir, "/tmp/mapopt-test-machine-XXXXXX");
  if (!mkdtemp(tmpdir))
    return 1;
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_preset_list),
      cmocka_unit_test(test_p100x4),
      cmocka_unit_test(test_other_presets),
      cmocka_unit_test(test_bad_json),
      cmocka_unit_test(test_conversions),
      cmocka_unit_test(test_shape_of),
      cmocka_unit_test(test_one_line),
      cmocka_unit_test(test_resolve_params),
      cmocka_unit_test(test_resolve_files),
      cmocka_unit_test(test_round_trip),
      cmocka_unit_test(test_probe_host),
      cmocka_unit_test(test_probe_measure),
      cmocka_unit_test(test_probe_fake_host),
      cmocka_unit_test(test_local),
      cmocka_unit_test(test_enomem),
  };
  int rc = cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmpdir);
  if (system(cmd) != 0)
    rc = rc ? rc : 1;
  return rc;
}
