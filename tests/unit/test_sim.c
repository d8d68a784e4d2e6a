/*
 * Unit tests of the discrete-event simulator (docs/sim.md, "How it models a
 * run"), end to end through the public API: a machine and an app are loaded
 * from JSON text written here, a mapper is compiled from DSL text,
 * mapopt_sim_run runs them, and the tests assert on the result's fields.
 *
 * Every expected time is computed by hand from the cost model (docs/sim.md,
 * "How it models a run"; src/sim/cost.c); the arithmetic is in the comments.
 * The machine "tiny" below has round rates and zero runtime overheads (launch,
 * map, fence, future), so a timeline is just task times and copy times:
 *   GPU: 4 (sockets 0,0,1,1), 1000 GFLOP/s f64 = 1e6 MFLOP/s, overhead 10 us
 *   CPU: 2, 10 GFLOP/s f64 = 1e4 MFLOP/s, overhead 4 us; UTIL: 1
 *   FBMEM 1 MiB (1048576 B) per GPU; SYSMEM 1024 MiB; ZCMEM 64 MiB
 *   GPU -> FB 500 GB/s; GPU -> ZC 10 GB/s, gather 20 M/s; CPU -> SYS 10 GB/s
 *   FB_LOCAL 100 GB/s lat 1000; FB_FB_PEER 3 GB/s (2 GB/s cross-socket)
 *   lat 3000 on the host-link ports; FB_HOST 4 GB/s lat 2000; HOST_HOST
 *   20 GB/s lat 500.
 * Copy time = lat + ceil(bytes * 1000 / bw_MBps).
 *
 * Every successful run also checks the contract of docs/sim.md, "The lower
 * bound": 0 < lower_bound_ns <= elapsed_ns and efficiency <= 1.
 *
 * Where a test fails, the expected value is the hand-computed one (the
 * arithmetic is in the comment), not the engine's current output.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "mapopt/app.h"
#include "mapopt/core.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

#include "failing_alloc.h"
#include "fixture.h"
#include "simcase.h"

/* One GPU task k with a roofline cost: 3e6 flops at efficiency 0.5, one RW
 * requirement on A (n elements x 8 B), optional extra requirement keys. */
static const char app_one[] =
    APP_HEAD("{\"n\": 1000, \"f\": 3000000}") "\"regions\": [" REGION(
        "A", "8",
        "n") "], \"partitions\": [],"
             "\"tasks\": [{\"name\": \"k\", \"variants\": ["
             " {\"kind\": \"GPU\", \"flops\": \"f\", \"precision\": \"f64\","
             "  \"flops_eff\": 0.5},"
             " {\"kind\": \"CPU\", \"flops\": \"f\", \"precision\": \"f64\","
             "  \"flops_eff\": 0.5}]}]," LOOP1(
                 "{\"op\": \"single\", \"task\": \"k\", \"args\": [{\"region\":"
                 " \"A\", \"priv\": \"RW\", \"fields\": [\"x\"]}]}");

/* ---- task time ----------------------------------------------------------- */

static void test_task_time_flops_bound(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_one, NULL, "");
  expect_ok(&c);
  /* C = ceil(ceil(3e6 * 1000 / 1e6) * 1e6 / 500000) = 3000 * 2 = 6000.
   * M = bytes 1000 x 8 x 2 (RW) = 16000 B at 500 GB/s:
   *     ceil(16000 * 1000 / 500000) = 32.
   * T = 10000 + max(6000, 32) = 16000; elapsed = T (zero overheads). */
  assert_int_equal(c.res->elapsed_ns, 16000);
  assert_int_equal(proc(&c, "GPU", 0, 0)->busy_ns, 16000);
  assert_int_equal(proc(&c, "GPU", 0, 0)->tasks, 1);
  assert_int_equal(proc(&c, "GPU", 0, 1)->busy_ns, 0);
  /* The lower bound: the best case of the only task is the task itself. */
  assert_int_equal(c.res->lower_bound_ns, 16000);
  /* Instance of A in FB 0: 8000 B. */
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_bytes, 8000);
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->capacity, 1048576);
  sim_free(&c);
}

static void test_task_time_bytes_bound(void **state) {
  (void)state;
  simcase c;
  /* f = 1000: C = ceil(ceil(1000*1000/1e6) * 1e6/500000) = 1 * 2 = 2.
   * n = 62501: M = 62501 x 16 = 1000016 B: ceil(1000016000 / 500000) =
   * ceil(2000.032) = 2001. T = 10000 + 2001 = 12001. */
  sim(&c, tiny(), app_one, "f=1000,n=62501", "");
  expect_ok(&c);
  assert_int_equal(c.res->elapsed_ns, 12001);
  sim_free(&c);
  /* The same on ZCMEM, 10 GB/s: ceil(1000016000 / 10000) = 100002;
   * T = 10000 + 100002 = 110002. The FB instance is not created. */
  sim(&c, tiny(), app_one, "f=1000,n=62501", "Region k * GPU ZCMEM;");
  expect_ok(&c);
  assert_int_equal(c.res->elapsed_ns, 110002);
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_bytes, 0);
  assert_int_equal(mem(&c, MAPOPT_MEM_ZCMEM, 0)->peak_bytes, 500008);
  sim_free(&c);
}

/* mem_eff, gathers and atomics (integer rounding per term). */
static const char app_eff[] = APP_HEAD("{\"n\": 1000}") "\"regions\": [" REGION(
    "A", "8",
    "n") "], \"partitions\": [],"
         "\"tasks\": [{\"name\": \"k\", \"variants\": ["
         " {\"kind\": \"GPU\", \"flops\": \"1000\", \"flops_eff\": 0.5,"
         "  \"mem_eff\": 0.7, \"fixed_ns\": \"7\"}]}]," LOOP1(
             "{\"op\": \"single\", \"task\": \"k\", \"args\": [{\"region\":"
             " \"A\", \"priv\": \"RO\", \"fields\": [\"x\"], \"bytes\":"
             " \"1000001\", \"gathers\": \"10\", \"atomics\": \"3\"}]}");

static void test_task_time_eff_gathers(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_eff, NULL, "");
  expect_ok(&c);
  /* C = 2 (as above).
   * M: t = ceil(1000001 * 1000 / 500000) = ceil(2000.002) = 2001;
   *    L = 1; ns = ceil(2001 * 1e6 / 700000) = ceil(2858.57) = 2859.
   * G (FB: 20000 M/s = 2e7 per ms, 8000 M/s = 8e6 per ms):
   *    ceil(10 * 1e6 / 2e7) = 1; ceil(3 * 1e6 / 8e6) = 1.
   * T = 10000 + 7 + max(2, 2859) + 1 + 1 = 12868. */
  assert_int_equal(c.res->elapsed_ns, 12868);
  sim_free(&c);
  /* In ZCMEM: bw 10 GB/s, gather 20 M/s = 20000/ms, atomic 4000/ms.
   * M: t = ceil(1000001000 / 10000) = 100001; ns = ceil(100001e6/7e5) =
   *    ceil(142858.57) = 142859.
   * G: ceil(10e6 / 20000) = 500; ceil(3e6 / 4000) = 750.
   * T = 10000 + 7 + 142859 + 500 + 750 = 154116. */
  sim(&c, tiny(), app_eff, NULL, "Region * * GPU ZCMEM;");
  expect_ok(&c);
  assert_int_equal(c.res->elapsed_ns, 154116);
  sim_free(&c);
}

/* ---- copies -----------------------------------------------------------------
 */

/* prod writes A (WD) and cons reads it (RO); both cost only the overhead
 * (bytes 0). A is n x 8 B = 8000 B. */
static const char app_copy[] =
    APP_HEAD("{\"n\": 1000}") "\"regions\": [" REGION(
        "A", "8",
        "n") "], \"partitions\": [],"
             "\"tasks\": ["
             " {\"name\": \"prod\", \"variants\": [{\"kind\": \"GPU\"},"
             "  {\"kind\": \"CPU\"}]},"
             " {\"name\": \"cons\", \"variants\": [{\"kind\": "
             "\"GPU\"}]}]," LOOP1("{\"op\": \"single\", \"task\": \"prod\", "
                                  "\"args\": [{\"region\":"
                                  " \"A\", \"priv\": \"WD\", \"fields\": "
                                  "[\"x\"], \"bytes\": \"0\"}]},"
                                  "{\"op\": \"single\", \"task\": \"cons\", "
                                  "\"args\": [{\"region\":"
                                  " \"A\", \"priv\": \"RO\", \"fields\": "
                                  "[\"x\"], \"bytes\": \"0\"}]}");

#define ON_GPU(n)                                                              \
  "g = Machine(GPU);\n"                                                        \
  "def on(Task t) { return g[0, " #n "]; }\n"                                  \
  "SingleTaskMap cons on;\n"

static void test_copy_fb_fb_peer(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_copy, NULL, ON_GPU(1));
  expect_ok(&c);
  /* prod on GPU 0: 0 .. 10000. Copy FB0 -> FB1, same socket, 3 GB/s:
   * 3000 + ceil(8000 * 1000 / 3000) = 3000 + ceil(2666.7) = 5667,
   * 10000 .. 15667. cons on GPU 1: 15667 .. 25667. */
  expect_copies(&c, MAPOPT_CHAN_FB_FB_PEER, 8000, 1, 5667);
  expect_copies(&c, MAPOPT_CHAN_FB_HOST, 0, 0, 0);
  assert_int_equal(c.res->elapsed_ns, 25667);
  assert_int_equal(proc(&c, "GPU", 0, 1)->busy_ns, 10000);
  sim_free(&c);
  /* GPU 2 is on the other socket: 2 GB/s, 3000 + 4000 = 7000. */
  sim(&c, tiny(), app_copy, NULL, ON_GPU(2));
  expect_ok(&c);
  expect_copies(&c, MAPOPT_CHAN_FB_FB_PEER, 8000, 1, 7000);
  assert_int_equal(c.res->elapsed_ns, 27000);
  sim_free(&c);
}

static void test_copy_fb_host(void **state) {
  (void)state;
  simcase c;
  /* prod on CPU 0 writes A in SYSMEM: 0 .. 4000. Copy SYSMEM -> FB0 on
   * FB_HOST, 4 GB/s: 2000 + ceil(8000000 / 4000) = 4000, 4000 .. 8000.
   * cons on GPU 0: 8000 .. 18000. */
  sim(&c, tiny(), app_copy, NULL, "Task prod CPU;");
  expect_ok(&c);
  expect_copies(&c, MAPOPT_CHAN_FB_HOST, 8000, 1, 4000);
  expect_copies(&c, MAPOPT_CHAN_FB_FB_PEER, 0, 0, 0);
  assert_int_equal(c.res->elapsed_ns, 18000);
  assert_int_equal(mem(&c, MAPOPT_MEM_SYSMEM, 0)->peak_bytes, 8000);
  sim_free(&c);
  /* Bytes that do not divide: n = 1001 -> 8008 B: 2000 + ceil(2002) =
   * 4002; elapsed 4000 + 4002 + 10000 = 18002. */
  sim(&c, tiny(), app_copy, "n=1001", "Task prod CPU;");
  expect_ok(&c);
  expect_copies(&c, MAPOPT_CHAN_FB_HOST, 8008, 1, 4002);
  assert_int_equal(c.res->elapsed_ns, 18002);
  sim_free(&c);
}

/* Two consumers read A from FB 0: both copies need out[0] (host-link port
 * under PCIe), so the second waits for the first (FIFO). */
static const char app_two_cons[] =
    APP_HEAD("{\"n\": 1000}") "\"regions\": [" REGION(
        "A", "8",
        "n") "], \"partitions\": [],"
             "\"tasks\": ["
             " {\"name\": \"prod\", \"variants\": [{\"kind\": \"GPU\"}]},"
             " {\"name\": \"c1\", \"variants\": [{\"kind\": \"GPU\"}]},"
             " {\"name\": \"c2\", \"variants\": [{\"kind\": \"GPU\"}]}]," LOOP1(
                 "{\"op\": \"single\", \"task\": \"prod\", \"args\": "
                 "[{\"region\":"
                 " \"A\", \"priv\": \"WD\", \"fields\": [\"x\"], \"bytes\": "
                 "\"0\"}]},"
                 "{\"op\": \"single\", \"task\": \"c1\", \"args\": "
                 "[{\"region\":"
                 " \"A\", \"priv\": \"RO\", \"fields\": [\"x\"], \"bytes\": "
                 "\"0\"}]},"
                 "{\"op\": \"single\", \"task\": \"c2\", \"args\": "
                 "[{\"region\":"
                 " \"A\", \"priv\": \"RO\", \"fields\": [\"x\"], \"bytes\": "
                 "\"0\"}]}");

static void test_copy_port_contention(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_two_cons, NULL,
      "g = Machine(GPU);\n"
      "def one(Task t) { return g[0, 1]; }\n"
      "def two(Task t) { return g[0, 2]; }\n"
      "SingleTaskMap c1 one;\n"
      "SingleTaskMap c2 two;\n");
  expect_ok(&c);
  /* prod 0 .. 10000 on GPU 0. Both copies are ready at 10000 and move
   * bytes after their 3000 ns latency, sharing out[0] (the host link,
   * FB_HOST's 4000 MB/s):
   *   FB0 -> FB1 (same socket, capped at 3000 MB/s) and FB0 -> FB2
   *   (cross-socket, capped at 2000): max-min fair shares of out[0] are
   *   2000 each; 8000 B at 2000 MB/s = 4000 ns: both 13000 .. 17000.
   * c1 on GPU 1 and c2 on GPU 2: 17000 .. 27000. (Whole-path reservations
   * would have queued c2's copy behind c1's: 32667.) */
  expect_copies(&c, MAPOPT_CHAN_FB_FB_PEER, 16000, 2, 2 * 7000);
  assert_int_equal(c.res->elapsed_ns, 27000);
  sim_free(&c);
  /* Control: from GPU 0 to GPUs 1 and 3? Both still leave through
   * out[0]. Sources on different GPUs do not contend; see the ghost test.
   * With peer_link, peer copies use pout/pin and still contend on pout[0]:
   * same times. */
}

/* prod on GPU 0 writes A (1000 x 8 B) and B (2000 x 8 B); use on GPU 1
 * reads both: two copies over the same two ports. */
static const char app_two_sizes[] =
    APP_HEAD("{\"n\": 1000}") "\"regions\": [" REGION("A", "8", "n") "," REGION(
        "B", "8",
        "2 * n") "], \"partitions\": [],"
                 "\"tasks\": ["
                 " {\"name\": \"prod\", \"variants\": [{\"kind\": \"GPU\"}]},"
                 " {\"name\": \"use\", \"variants\": [{\"kind\": "
                 "\"GPU\"}]}]," LOOP1(
                     "{\"op\": \"single\", \"task\": \"prod\", \"args\": ["
                     " {\"region\": \"A\", \"priv\": \"WD\", \"bytes\": \"0\"},"
                     " {\"region\": \"B\", \"priv\": \"WD\", \"bytes\": "
                     "\"0\"}]},"
                     "{\"op\": \"single\", \"task\": \"use\", \"args\": ["
                     " {\"region\": \"A\", \"priv\": \"RO\", \"bytes\": \"0\"},"
                     " {\"region\": \"B\", \"priv\": \"RO\", \"bytes\": "
                     "\"0\"}]}");

static void test_copy_bandwidth_sharing(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_two_sizes, NULL,
      "g = Machine(GPU);\n"
      "def one(Task t) { return g[0, 1]; }\n"
      "SingleTaskMap use one;\n");
  expect_ok(&c);
  /* prod 0 .. 10000 on GPU 0. Both copies FB0 -> FB1 (same socket: each
   * capped at 3000 MB/s) start moving at 13000, after their latency, on
   * out[0] and in[1] (4000 MB/s each): max-min fair shares of 2000.
   *   A, 8000 B: 8e6 / 2000 = 4000 ns, done at 17000;
   *   B, 16000 B: 8000 B moved by then, the rest alone at its cap of
   *   3000: ceil(8e6 / 3000) = 2667, done at 19667.
   * use 19667 .. 29667. (Queued whole, A would end at 15667 and B at
   * 24001.) */
  expect_copies(&c, MAPOPT_CHAN_FB_FB_PEER, 24000, 2, 7000 + 9667);
  assert_int_equal(c.res->elapsed_ns, 29667);
  sim_free(&c);
}

/* ---- OOM --------------------------------------------------------------------
 */

/* One GPU task RW on n one-byte elements: the instance is n bytes. */
static const char app_bytes[] =
    APP_HEAD("{\"n\": 1048576}") "\"regions\": [" REGION(
        "R", "1",
        "n") "], \"partitions\": [],"
             "\"tasks\": [{\"name\": \"k\", \"variants\": [{\"kind\": "
             "\"GPU\"}]}]," LOOP1(
                 "{\"op\": \"single\", \"task\": \"k\", \"args\": [{\"region\":"
                 " \"R\", \"priv\": \"RW\", \"fields\": [\"x\"], \"bytes\": "
                 "\"0\"}]}");

static void test_oom_exact_capacity(void **state) {
  (void)state;
  simcase c;
  /* 1048576 B in a 1 MiB FB: fits exactly. */
  sim(&c, tiny(), app_bytes, NULL, "");
  expect_ok(&c);
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_bytes, 1048576);
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_instances, 1);
  assert_int_equal(c.res->elapsed_ns, 10000);
  sim_free(&c);
  /* One byte more: OOM worded as Legion words it; the op is UID 0. */
  sim(&c, tiny(), app_bytes, "n=1048577", "");
  expect_error(&c, MAPOPT_SIM_OOM,
               "Default mapper failed allocation of size 1048577 bytes for "
               "region requirement 0 of task k in memory FBMEM of node 0 "
               "(memory index 0, processor GPU 0, UID 0); the live instances "
               "of this mapping exceed the memory's capacity of 1048576 "
               "bytes.");
  assert_int_equal(c.res->error_time_ns, 0);
  assert_non_null(strstr(c.res->log, "[mapopt-sim] error class OOM at "
                                     "t=0.000000 s\n"));
  sim_free(&c);
}

/* ---- CollectMemory, InstanceLimit -------------------------------------------
 */

/* prod (CPU) writes A and B in SYSMEM; then k reads A, then k reads B,
 * both on GPU 0. A and B are n one-byte elements each. */
static const char app_collect[] =
    APP_HEAD("{\"n\": 600000}") "\"regions\": [" REGION(
        "A", "1",
        "n") "," REGION("B", "1",
                        "n") "],"
                             " \"partitions\": [],"
                             "\"tasks\": ["
                             " {\"name\": \"prod\", \"variants\": [{\"kind\": "
                             "\"CPU\"}]},"
                             " {\"name\": \"k\", \"variants\": [{\"kind\": "
                             "\"GPU\"}]}]," LOOP1(
                                 "{\"op\": \"single\", \"task\": \"prod\", "
                                 "\"args\": ["
                                 " {\"region\": \"A\", \"priv\": \"WD\", "
                                 "\"fields\": [\"x\"],"
                                 "  \"bytes\": \"0\"},"
                                 " {\"region\": \"B\", \"priv\": \"WD\", "
                                 "\"fields\": [\"x\"],"
                                 "  \"bytes\": \"0\"}]},"
                                 "{\"op\": \"single\", \"task\": \"k\", "
                                 "\"args\": [{\"region\":"
                                 " \"A\", \"priv\": \"RO\", \"fields\": "
                                 "[\"x\"], \"bytes\": \"0\"}]},"
                                 "{\"op\": \"single\", \"task\": \"k\", "
                                 "\"args\": [{\"region\":"
                                 " \"B\", \"priv\": \"RO\", \"fields\": "
                                 "[\"x\"], \"bytes\": \"0\"}]}");

static void test_collect_memory(void **state) {
  (void)state;
  simcase c;
  /* InstanceLimit holds k(B) until k(A) executes; CollectMemory then frees
   * A's FB instance (SYSMEM still holds A), so B's 600000 B fit:
   *   prod on CPU 0: 0 .. 4000;
   *   copy A SYSMEM -> FB0: 2000 + ceil(600000 * 1000 / 4000) = 152000,
   *   4000 .. 156000; k(A): 156000 .. 166000;
   *   k(B) admitted at 166000; copy B 166000 .. 318000; k(B) .. 328000. */
  sim(&c, tiny(), app_collect, NULL,
      "InstanceLimit k 1;\nCollectMemory k *;\n");
  expect_ok(&c);
  assert_int_equal(proc(&c, "GPU", 0, 0)->tasks, 2);
  assert_int_equal(c.res->elapsed_ns, 328000);
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_bytes, 600000);
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_instances, 1);
  expect_copies(&c, MAPOPT_CHAN_FB_HOST, 1200000, 2, 304000);
  sim_free(&c);
  /* Without CollectMemory A's instance stays valid (it holds the newest
   * version; pressure GC evicts only stale instances): OOM when k(B) (UID
   * 2) maps at 166000. */
  sim(&c, tiny(), app_collect, NULL, "InstanceLimit k 1;\n");
  expect_error(&c, MAPOPT_SIM_OOM,
               "Default mapper failed allocation of size 600000 bytes for "
               "region requirement 0 of task k in memory FBMEM of node 0 "
               "(memory index 0, processor GPU 0, UID 2); the live instances "
               "of this mapping exceed the memory's capacity of 1048576 "
               "bytes.");
  assert_int_equal(c.res->error_time_ns, 166000);
  sim_free(&c);
  /* Without InstanceLimit both map at t = 0, ahead of execution: OOM at 0
   * even with CollectMemory. */
  sim(&c, tiny(), app_collect, NULL, "CollectMemory k *;\n");
  assert_int_equal(c.res->error, MAPOPT_SIM_OOM);
  assert_int_equal(c.res->error_time_ns, 0);
  sim_free(&c);
}

static void test_instance_limit_delays(void **state) {
  (void)state;
  simcase c;
  /* n = 1000: a copy alone is 2000 + ceil(1000 * 1000 / 4000) = 2250.
   * Without a limit both k map at 0 and both copies start when prod ends,
   * sharing in[0] after their latency: 2000 MB/s each, 1000 B in 500 ns:
   * A and B 4000 .. 6500 (prefetched). k(A) 6500 .. 16500, k(B) 16500 ..
   * 26500. */
  sim(&c, tiny(), app_collect, "n=1000", "");
  expect_ok(&c);
  assert_int_equal(c.res->elapsed_ns, 26500);
  sim_free(&c);
  /* InstanceLimit k 1: k(B) stays MAPPABLE until k(A) executes at 16250,
   * so its copy runs 16250 .. 18500 and k(B) 18500 .. 28500: start shifted
   * by the copy it could not prefetch. */
  sim(&c, tiny(), app_collect, "n=1000", "InstanceLimit k 1;");
  expect_ok(&c);
  /* Each k runs once. */
  assert_int_equal(proc(&c, "GPU", 0, 0)->tasks, 2);
  assert_int_equal(proc(&c, "GPU", 0, 0)->busy_ns, 20000);
  assert_int_equal(c.res->elapsed_ns, 28500);
  sim_free(&c);
}

/* An index launch of k over [4] on the pieces of a 4-atom region. */
static const char app_index4[] = APP_HEAD(
    "{\"P\": 4}") "\"regions\": [{\"name\": \"A\", \"fields\": [[\"x\", 8]], "
                  "\"atoms\":"
                  " {\"groups\": [{\"group\": \"g\", \"count\": \"P\", "
                  "\"elements\":"
                  " \"100\"}]}}],"
                  "\"partitions\": [{\"name\": \"p\", \"region\": \"A\", "
                  "\"kind\":"
                  " \"group\", \"group\": \"g\"}],"
                  "\"tasks\": [{\"name\": \"k\", \"variants\": [{\"kind\": "
                  "\"GPU\"}]}]," LOOP1("{\"op\": \"index\", \"task\": \"k\", "
                                       "\"domain\": [\"P\"],"
                                       " \"args\": [{\"part\": \"p\", "
                                       "\"priv\": \"RW\", \"fields\":"
                                       " [\"x\"], \"bytes\": \"0\"}]}");

static void test_backpressure_error(void **state) {
  (void)state;
  static const char all_on_0[] = "g = Machine(GPU);\n"
                                 "def zero(Task t) { return g[0, 0]; }\n"
                                 "IndexTaskMap k zero;\n"
                                 "InstanceLimit k 1;\n";
  simcase c;
  /* 4 points of one launch on GPU 0 with limit 1: InstanceLimit's failure
   * rule. */
  sim(&c, tiny(), app_index4, NULL, all_on_0);
  expect_error(&c, MAPOPT_SIM_BACKPRESSURE,
               "Assertion 'event.exists()' failed");
  sim_free(&c);
  /* Limit 4 admits the 4 points: no error. */
  sim(&c, tiny(), app_index4, NULL,
      "g = Machine(GPU);\n"
      "def zero(Task t) { return g[0, 0]; }\n"
      "IndexTaskMap k zero;\n"
      "InstanceLimit k 4;\n");
  expect_ok(&c);
  assert_int_equal(c.res->elapsed_ns, 40000);
  sim_free(&c);
  /* One point per GPU (default placement) with limit 1: no error; the 4
   * points run in parallel, 10000 each. */
  sim(&c, tiny(), app_index4, NULL, "InstanceLimit k 1;");
  expect_ok(&c);
  assert_int_equal(c.res->elapsed_ns, 10000);
  sim_free(&c);
  /* backpressure_errors = false: only delays; the 4 points run one after
   * another on GPU 0: 4 x 10000. */
  mapopt_sim_options o = {.no_backpressure_errors = true};
  sim_opts(&c, tiny(), app_index4, NULL, all_on_0, &o);
  expect_ok(&c);
  assert_int_equal(c.res->elapsed_ns, 40000);
  assert_int_equal(proc(&c, "GPU", 0, 0)->tasks, 4);
  sim_free(&c);
}

/* ---- default index placement ------------------------------------------------
 */

static const char app_place[] =
    APP_HEAD("{\"a\": 8, \"b\": 1}") "\"regions\": [" REGION(
        "A", "8",
        "1") "], \"partitions\": [],"
             "\"tasks\": [{\"name\": \"k\", \"variants\": [{\"kind\": "
             "\"GPU\"}]}]," LOOP1(
                 "{\"op\": \"index\", \"task\": \"k\", \"domain\": [\"a\", "
                 "\"b\"],"
                 " \"args\": [{\"region\": \"A\", \"priv\": \"RO\", \"fields\":"
                 " [\"x\"], \"bytes\": \"0\"}]}");

static void test_default_index_placement(void **state) {
  (void)state;
  simcase c;
  mapopt_sim_options o = {.record_decisions = true};
  /* 8 points on 2 x 4 GPUs: point l -> (l / 4, l % 4). */
  sim_opts(&c, resolve("nodes=2 gpu=4"), app_place, NULL, "", &o);
  expect_ok(&c);
  assert_int_equal(c.res->ndecisions, 8);
  for (size_t i = 0; i < 8; i++) {
    const mapopt_sim_decision *d = &c.res->decisions[i];
    int64_t l = d->point[0];
    assert_int_equal(d->proc.kind, MAPOPT_PROC_GPU);
    assert_int_equal(d->proc.node, l / 4);
    assert_int_equal(d->proc.proc, l % 4);
  }
  sim_free(&c);
  /* A (2, 2) domain on 1 x 4 GPUs: GPU i0 + 2 * i1. */
  sim_opts(&c, resolve("nodes=1 gpu=4"), app_place, "a=2,b=2", "", &o);
  expect_ok(&c);
  assert_int_equal(c.res->ndecisions, 4);
  for (size_t i = 0; i < 4; i++) {
    const mapopt_sim_decision *d = &c.res->decisions[i];
    assert_int_equal(d->dims, 2);
    assert_int_equal(d->proc.node, 0);
    assert_int_equal(d->proc.proc, d->point[0] + 2 * d->point[1]);
  }
  sim_free(&c);
}

/* An index launch over [2] of inner tasks outer, each launching leaf over
 * [4]. */
static const char app_nested[] = APP_HEAD("{}") "\"regions\": [" REGION(
    "A", "8",
    "1") "], \"partitions\": [],"
         "\"tasks\": [{\"name\": \"leaf\", \"variants\": [{\"kind\": "
         "\"GPU\"}]},"
         " {\"name\": \"outer\", \"point\": [\"o\"], \"variants\": [{\"kind\":"
         " \"GPU\", \"inner\": true}], \"body\": [{\"op\": \"index\", \"task\":"
         " \"leaf\", \"domain\": [\"4\"], \"point\": [\"l\"], \"args\": "
         "[]}]}]," LOOP1(
             "{\"op\": \"index\", \"task\": \"outer\", \"domain\": [\"2\"],"
             " \"args\": []}");

/* A launch from inside a task stays on that task's node by default, as the
 * mappers of replicated runs slice nested launches over local processors;
 * the top-level launch is split over the nodes. */
static void test_default_nested_placement(void **state) {
  (void)state;
  simcase c;
  mapopt_sim_options o = {.record_decisions = true};
  sim_opts(&c, resolve("nodes=2 gpu=4"), app_nested, NULL, "", &o);
  expect_ok(&c);
  int leaves = 0;
  for (size_t i = 0; i < c.res->ndecisions; i++) {
    const mapopt_sim_decision *d = &c.res->decisions[i];
    if (strcmp(d->task, "leaf"))
      continue;
    /* Leaf point l on GPU l of its outer's node: ops are in canonical
     * order, each outer's leaves right after it. */
    int64_t outer_node = -1, outer_op = -1;
    for (size_t k = 0; k < c.res->ndecisions; k++) {
      const mapopt_sim_decision *p = &c.res->decisions[k];
      if (!strcmp(p->task, "outer") && p->op < d->op && p->op > outer_op) {
        outer_op = p->op;
        outer_node = p->proc.node;
      }
    }
    assert_int_equal(d->proc.node, outer_node);
    assert_int_equal(d->proc.proc, d->point[0]);
    leaves++;
  }
  assert_int_equal(leaves, 8);
  /* Each node runs exactly one outer and its four leaves. */
  for (int64_t node = 0; node < 2; node++) {
    int outers = 0, here = 0;
    for (size_t i = 0; i < c.res->ndecisions; i++) {
      const mapopt_sim_decision *d = &c.res->decisions[i];
      if (d->proc.node != node)
        continue;
      outers += !strcmp(d->task, "outer");
      here += !strcmp(d->task, "leaf");
    }
    assert_int_equal(outers, 1);
    assert_int_equal(here, 4);
  }
  sim_free(&c);
}

/* ---- layout requirements ----------------------------------------------------
 */

/* k has a GPU variant that needs C_order (cuBLAS, dgemm error) and a CPU
 * variant that needs SOA F_order (stride error); A has two fields so SOA
 * and AOS differ. */
static const char app_layout[] =
    "{\"format\": \"mapopt-app/1\", \"name\": \"t\", \"params\": {},"
    " \"default_order\": \"C_order\","
    " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},"
    "\"regions\": [{\"name\": \"A\", \"fields\": [[\"x\", 8], [\"y\", 8]],"
    " \"atoms\": {\"groups\": [{\"group\": \"g\", \"count\": \"1\","
    " \"elements\": \"10\"}]}}], \"partitions\": [],"
    "\"tasks\": [{\"name\": \"k\", \"variants\": ["
    " {\"kind\": \"GPU\", \"requires\": [{\"args\": [0], \"order\":"
    "  \"C_order\", \"error\": \"dgemm\"}]},"
    " {\"kind\": \"CPU\", \"requires\": [{\"args\": [0], \"soa\": true,"
    "  \"order\": \"F_order\", \"error\": \"stride\"}]}]}]," LOOP1(
        "{\"op\": \"single\", \"task\": \"k\", \"args\": [{\"region\":"
        " \"A\", \"priv\": \"RW\", \"fields\": [\"x\", \"y\"], \"bytes\":"
        " \"0\"}]}");

static void test_layout_errors(void **state) {
  (void)state;
  simcase c;
  /* The app's default order C_order satisfies cuBLAS. */
  sim(&c, tiny(), app_layout, NULL, "");
  expect_ok(&c);
  sim_free(&c);
  sim(&c, tiny(), app_layout, NULL, "Layout * * * AOS C_order;");
  expect_ok(&c);
  sim_free(&c);
  sim(&c, tiny(), app_layout, NULL, "Layout * * * F_order;");
  expect_error(&c, MAPOPT_SIM_LAYOUT,
               "** On entry to DGEMM parameter number 8 had an illegal "
               "value");
  assert_non_null(strstr(c.res->error_text,
                         "DGEMM parameter number 8 had an illegal value"));
  sim_free(&c);
  /* The CPU variant: C_order (the app default) violates F_order. The error
   * happens when the task starts, at t = 0 here. */
  sim(&c, tiny(), app_layout, NULL, "Task k CPU;");
  expect_error(&c, MAPOPT_SIM_LAYOUT,
               "Assertion failed: stride does not match expected value.\n"
               "[mapopt-sim] task k, region requirement 0 (A), layout SOA "
               "C_order, on CPU 0");
  assert_int_equal(c.res->error_time_ns, 0);
  sim_free(&c);
  /* AOS F_order is mapopt's F, X only with mapopt_aos_order: the CPU
   * kernel's stride check sees it. */
  mapopt_sim_options mo = {.mapopt_aos_order = true};
  sim_opts(&c, tiny(), app_layout, NULL,
           "Task k CPU;\nLayout * * * AOS F_order;", &mo);
  assert_int_equal(c.res->error, MAPOPT_SIM_LAYOUT);
  assert_non_null(
      strstr(c.res->error_text, "stride does not match expected value"));
  sim_free(&c);
  sim(&c, tiny(), app_layout, NULL, "Task k CPU;\nLayout * * * SOA F_order;");
  expect_ok(&c);
  sim_free(&c);
}

/* The DSL mapper of Legion asks for the order F, Y, ... (no X) for AOS
 * with F order, given or by default when the Layout gives none (even in an
 * application whose default order is C): by default the run fails where
 * the first such instance is made (docs/legion.md); mapopt_aos_order lays
 * it out F, X as the language defines it. */
static void test_layout_aos_f_order(void **state) {
  (void)state;
  static const char *const aos_f[] = {"Layout * * * AOS;",
                                      "Layout * * * AOS F_order;",
                                      "Layout * A * SOA AOS C_order F_order;"};
  for (size_t i = 0; i < sizeof aos_f / sizeof aos_f[0]; i++) {
    simcase c;
    char mapper[128];
    snprintf(mapper, sizeof mapper, "Task k CPU;\n%s", aos_f[i]);
    sim(&c, tiny(), app_layout, NULL, mapper);
    expect_error(&c, MAPOPT_SIM_LAYOUT,
                 "Invalid layout: task k, region requirement 0 (A), AOS "
                 "F_order in SYSMEM: the DSL mapper orders the dimensions F, "
                 "Y, Z, ... without X, which Legion cannot lay out; use SOA, "
                 "or AOS C_order (mapopt sim --aos-order mapopt simulates F, "
                 "X, Y, ...)");
    assert_int_equal(c.res->error_time_ns, 0);
    sim_free(&c);
  }
  /* The app's default order (C) applies to AOS with mapopt's order. */
  simcase c;
  mapopt_sim_options mo = {.mapopt_aos_order = true};
  sim_opts(&c, tiny(), app_layout, NULL, "Layout * * * AOS;", &mo);
  expect_ok(&c);
  sim_free(&c);
  /* AOS C_order is built by both. */
  sim(&c, tiny(), app_layout, NULL, "Layout * * * AOS C_order;");
  expect_ok(&c);
  sim_free(&c);
}

/* ---- kinds, policy errors ---------------------------------------------------
 */

static const char app_gpu_only[] =
    APP_HEAD("{\"n\": 10}") "\"regions\": [" REGION(
        "A", "8",
        "n") "], \"partitions\": [],"
             "\"tasks\": [{\"name\": \"k\", \"variants\": [{\"kind\": "
             "\"GPU\"}]}]," LOOP1(
                 "{\"op\": \"index\", \"task\": \"k\", \"domain\": [\"4\"],"
                 " \"args\": [{\"region\": \"A\", \"priv\": \"RO\", \"fields\":"
                 " [\"x\"], \"bytes\": \"0\"}]}");

static void test_no_variant(void **state) {
  (void)state;
  simcase c;
  /* Located at the Task statement whose list has no usable kind. */
  sim(&c, tiny(), app_gpu_only, NULL, "Task k CPU;");
  expect_error(&c, MAPOPT_SIM_NO_VARIANT,
               "t.map:1:6: mapping error: Invalid policy: task k requested "
               "CPU, but has no valid task variant for the kind");
  sim_free(&c);
  /* K is the first kind listed. */
  sim(&c, tiny(), app_gpu_only, NULL, "Task * OMP, CPU;");
  expect_error(&c, MAPOPT_SIM_NO_VARIANT,
               "t.map:1:6: mapping error: Invalid policy: task k requested "
               "OMP, but has no valid task variant for the kind");
  sim_free(&c);
  /* lenient_kinds falls back to the default order: GPU. */
  mapopt_sim_options o = {.lenient_kinds = true};
  sim_opts(&c, tiny(), app_gpu_only, NULL, "Task k CPU;", &o);
  expect_ok(&c);
  assert_int_equal(proc(&c, "GPU", 0, 3)->tasks, 1);
  assert_int_equal(c.res->elapsed_ns, 10000);
  sim_free(&c);
  /* A usable kind later in the list is taken. */
  sim(&c, tiny(), app_gpu_only, NULL, "Task k CPU, GPU;");
  expect_ok(&c);
  sim_free(&c);
}

static void test_virtual_on_leaf(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_gpu_only, NULL, "Region k * GPU VIRTUAL;");
  expect_error(&c, MAPOPT_SIM_POLICY,
               "Invalid mapper output: virtual mapping requested for region "
               "requirement 0 of leaf task k");
  sim_free(&c);
}

static void test_dsl_mapping_error(void **state) {
  (void)state;
  simcase c;
  /* docs/validation.md V14: point 3 asks for GPU 4 of 4. The message is
   * printed as the DSL formats diagnostics, with its note line (R11:
   * INDEX). */
  sim(&c, tiny(), app_gpu_only, NULL,
      "mgpu = Machine(GPU);\n"
      "def f(Task t) {\n"
      "  ip = t.ipoint;\n"
      "  return mgpu[0, ip[0] + 1];\n"
      "}\n"
      "IndexTaskMap k f;\n");
  expect_error(&c, MAPOPT_SIM_INDEX,
               "t.map:4:14: mapping error: Slice processor index out of "
               "bound! 4 >= 4\n"
               "t.map:4:14: note: index [0, 4] is outside the machine "
               "model's size (1, 4) (Machine(GPU): (1, 4))\n"
               "t.map: note: while placing point (3,) of task 'k' with 'f'");
  sim_free(&c);
  /* A type error in the function is a POLICY error (R-code other than the
   * INDEX ones). */
  sim(&c, tiny(), app_gpu_only, NULL,
      "mgpu = Machine(GPU);\n"
      "def f(Task t) {\n"
      "  return mgpu[0, t.ipoint + 1];\n"
      "}\n"
      "IndexTaskMap k f;\n");
  assert_int_equal(c.res->error, MAPOPT_SIM_POLICY);
  assert_non_null(strstr(c.res->error_text, "t.map:3:"));
  assert_non_null(strstr(c.res->error_text, ": mapping error: "));
  assert_non_null(strstr(c.res->error_text, "type mismatch"));
  assert_non_null(strstr(c.res->error_text,
                         "\nt.map: note: while placing point (0,) of task "
                         "'k' with 'f'"));
  sim_free(&c);
}

/* ---- TIMEOUT ----------------------------------------------------------------
 */

static void test_timeout(void **state) {
  (void)state;
  simcase c;
  /* f = 2e12 flops at 1e6 MFLOP/s, eff 0.5: C = 4e9 ns = 4 s > 1 s. */
  mapopt_sim_options o = {.time_limit_ns = 1000000000};
  sim_opts(&c, tiny(), app_one, "f=2000000000000", "", &o);
  expect_error(&c, MAPOPT_SIM_TIMEOUT, "simulated time limit exceeded (1 s)");
  assert_int_equal(c.res->error_time_ns, 1000000000);
  assert_non_null(
      strstr(c.res->log, "[mapopt-sim] error class TIMEOUT at t=1.000000 s\n"));
  sim_free(&c);
  /* The same run without a limit takes 4.00001 s. */
  sim(&c, tiny(), app_one, "f=2000000000000", "");
  expect_ok(&c);
  assert_int_equal(c.res->elapsed_ns, 4000010000);
  assert_non_null(strstr(c.res->log, "ELAPSED TIME =   4.000 s\n"));
  sim_free(&c);
}

/* ---- timing window ------------------------------------------------------- */

/* Warm-up 2 + timed 3 iterations of a 16 us task on GPU 0, each iteration
 * depending on the previous one (RW on A). */
static const char app_window[] =
    APP_HEAD("{\"n\": 1000}") "\"regions\": [" REGION(
        "A", "8",
        "n") "], \"partitions\": [],"
             "\"tasks\": [{\"name\": \"k\", \"variants\": [{\"kind\": \"GPU\","
             " \"flops\": \"3000000\", \"flops_eff\": 0.5}]}],"
             "\"program\": [{\"op\": \"loop\", \"var\": \"t\", \"count\": "
             "\"3\","
             " \"warmup\": \"2\", \"timed\": true, \"body\": ["
             "{\"op\": \"single\", \"task\": \"k\", \"args\": [{\"region\":"
             " \"A\", \"priv\": \"RW\", \"fields\": [\"x\"]}]}]}]}";

static void test_timing_window(void **state) {
  (void)state;
  simcase c;
  sim(&c, tiny(), app_window, NULL, "");
  expect_ok(&c);
  /* Each k takes 16000 (see test_task_time_flops_bound); iterations end at
   * 16000, 32000, ..., 80000. t0 = 32000 (end of warm-up 2), t1 = 80000.
   * Elapsed = 48000; only timed-window work counts as busy. */
  assert_int_equal(c.res->iterations_warmup, 2);
  assert_int_equal(c.res->iterations_timed, 3);
  assert_int_equal(c.res->elapsed_ns, 48000);
  assert_int_equal(proc(&c, "GPU", 0, 0)->busy_ns, 48000);
  assert_int_equal(c.res->lower_bound_ns, 48000);
  sim_free(&c);
}

/* ---- determinism --------------------------------------------------------- */

static char *heat_app;

static void load_heat(void) {
  if (heat_app)
    return;
  heat_app = fixture_read_file(MAPOPT_SOURCE_DIR "/apps/heat1d.json");
}

typedef struct outputs {
  char *log, *report, *trace;
  int64_t elapsed;
} outputs;

static void run_heat(const mapopt_sim_options *o, const char *mapper,
                     outputs *out) {
  load_heat();
  mapopt_sim_options opts = *o;
  opts.trace = true;
  simcase c;
  sim_opts(&c, resolve("p100x4"), heat_app, "small", mapper, &opts);
  expect_ok(&c);
  out->log = strdup(c.res->log);
  assert_int_equal(mapopt_sim_report_json(ctx, c.res, false, &out->report),
                   MAPOPT_OK);
  out->trace = strdup(c.res->trace);
  out->elapsed = c.res->elapsed_ns;
  sim_free(&c);
}

static void outputs_free(outputs *o) {
  free(o->log);
  mapopt_text_free(o->report);
  free(o->trace);
}

/* apps/heat1d.json at size small (n = 65536, T = 4: tiles of 16384) on
 * p100x4 with the default mapper: one tile per GPU, every number of the
 * GPU work and of the halo copies computed by hand. */
static void test_heat1d_small(void **state) {
  (void)state;
  load_heat();
  simcase c;
  sim(&c, resolve("p100x4"), heat_app, "small", "");
  expect_ok(&c);
  assert_int_equal(c.res->iterations_timed, 10);
  assert_int_equal(c.res->iterations_warmup, 2);
  /* relax: C = ceil(ceil(5 * 16384 * 1000 / 4.7e6) * 1e6 / 5e5) =
   *   ceil(17.43) * 2 = 36; M = cells RW 16384 x 16 x 2 = 524288 B at
   *   550 GB/s: ceil(524288000 / 550000) = 954, plus p_in RO 2 x 8 = 16 B:
   *   ceil(16000 / 550000) = 1 (the end tiles read one edge: 8 B, still
   *   1 ns); T = 12000 + max(36, 955) = 12955.
   * publish: bytes 16 -> 1 ns; p_out WD 16 B -> 1 ns; T = 12002.
   * 10 timed iterations: 10 x (12955 + 12002) = 249570 per GPU. */
  for (int g = 0; g < 4; g++) {
    assert_int_equal(proc(&c, "GPU", 0, g)->tasks, 20);
    assert_int_equal(proc(&c, "GPU", 0, g)->busy_ns, 249570);
  }
  /* Halo copies per iteration: tile i reads edge 2i-1 from tile i-1 and
   * edge 2i+2 from tile i+1: 6 copies of 8 B, started together. GPUs 1
   * and 2 each send two (out[1], out[2]) and receive two (in[1], in[2]):
   * every copy shares a host link (12 GB/s) with one other, so it moves
   * at 6000 MB/s, below its own cap (10 GB/s same socket, 7 GB/s across):
   * 10000 + ceil(8000 / 6000) = 10002 each. The window counts the copies
   * that start in [t0, t1): those of iterations 3 to 11, 54 copies,
   * 432 B, 540108 ns. Those of the first timed one (2) start earlier: its
   * points are mapped ahead of the fence that opens the window, and their
   * edges, written in the last warm-up iteration, move while the fence
   * waits for the warm-up's last points (a fence holds tasks back, not
   * the copies of mapped ones: docs/sim.md, "How it models a run"). */
  expect_copies(&c, MAPOPT_CHAN_FB_FB_PEER, 432, 54, 540108);
  expect_copies(&c, MAPOPT_CHAN_FB_HOST, 0, 0, 0);
  /* FB 0 holds tile 0 (all fields: 16384 x 16 B), its two out edges and
   * its one in edge (8 B each). */
  assert_int_equal(mem(&c, MAPOPT_MEM_FBMEM, 0)->peak_bytes, 262144 + 16 + 8);
  sim_free(&c);
}

static void test_determinism_three_runs(void **state) {
  (void)state;
  mapopt_sim_options o = {.seed = 1, .noise = 0.05};
  outputs r[3];
  for (int i = 0; i < 3; i++)
    run_heat(&o, "Region * * GPU FBMEM;", &r[i]);
  for (int i = 1; i < 3; i++) {
    assert_string_equal(r[0].log, r[i].log);
    assert_string_equal(r[0].report, r[i].report);
    assert_string_equal(r[0].trace, r[i].trace);
  }
  assert_true(strlen(r[0].trace) > 100);
  /* Noise changes the times: with noise 0 the elapsed time differs. */
  mapopt_sim_options quiet = {.seed = 1};
  outputs q;
  run_heat(&quiet, "Region * * GPU FBMEM;", &q);
  assert_true(q.elapsed != r[0].elapsed);
  outputs_free(&q);
  for (int i = 0; i < 3; i++)
    outputs_free(&r[i]);
}

/* The log with its seed line removed. */
static void drop_seed_line(char *log) {
  char *p = strstr(log, "[mapopt-sim] seed ");
  assert_non_null(p);
  char *e = strchr(p, '\n');
  assert_non_null(e);
  memmove(p, e + 1, strlen(e + 1) + 1);
}

static void test_determinism_seed_without_noise(void **state) {
  (void)state;
  mapopt_sim_options o0 = {.seed = 0}, o1 = {.seed = 1};
  outputs a, b;
  run_heat(&o0, "", &a);
  run_heat(&o1, "", &b);
  assert_non_null(strstr(a.log, "[mapopt-sim] seed 0\n"));
  assert_non_null(strstr(b.log, "[mapopt-sim] seed 1\n"));
  assert_string_not_equal(a.log, b.log);
  drop_seed_line(a.log);
  drop_seed_line(b.log);
  assert_string_equal(a.log, b.log);
  assert_string_equal(a.report, b.report);
  assert_string_equal(a.trace, b.trace);
  assert_int_equal(a.elapsed, b.elapsed);
  outputs_free(&a);
  outputs_free(&b);
}

/* ---- fenced timing ------------------------------------------------------ */

/* Fenced mode with more timed repetitions than the 4096 windows the
 * simulator once kept (it dropped the rest silently, so the elapsed time
 * counted 4096 of them): every one counts. One task of 16 us per
 * repetition on tiny's GPU (10 us of fixed cost, 3e6 flops at 500 GF/s). */
static void test_fenced_many_windows(void **state) {
  (void)state;
  static const char app[] =
      "{\"format\": \"mapopt-app/1\", \"name\": \"t\", \"params\": {\"n\": "
      "1000, \"f\": 3000000, \"reps\": 5000},"
      " \"timing\": {\"mode\": \"fenced\", \"metric\": \"time\"},"
      " \"regions\": [" REGION(
          "A", "8",
          "n") "], \"partitions\": [],"
               " \"tasks\": [{\"name\": \"k\", \"variants\": ["
               "  {\"kind\": \"GPU\", \"flops\": \"f\", \"precision\": \"f64\","
               "   \"flops_eff\": 0.5}]}],"
               " \"program\": [{\"op\": \"loop\", \"var\": \"r\", \"count\": "
               "\"reps\","
               "  \"warmup\": \"0\", \"timed\": true, \"body\": [{\"op\": "
               "\"timed\","
               "  \"body\": [{\"op\": \"single\", \"task\": \"k\", \"args\": "
               "[{\"region\":"
               "  \"A\", \"priv\": \"RW\", \"fields\": [\"x\"]}]}]}]}]}";
  simcase c;
  sim(&c, tiny(), app, NULL, "");
  expect_ok(&c);
  assert_int_equal(c.res->iterations_timed, 5000);
  assert_int_equal(c.res->elapsed_ns, (int64_t)5000 * 16000);
  sim_free(&c);
}

/* ---- allocation failure ------------------------------------------------- */

/*
 * The whole pipeline -- machine, application, mapper, simulation, report
 * -- with the Nth allocation failing, for every N: each step reports
 * MAPOPT_ENOMEM, never a simulated error, and frees everything; nothing
 * crashes or leaks (ASan checks the leaks).
 */
static void test_allocation_failure(void **state) {
  (void)state;
  static const char mapper[] = "Task * GPU, CPU;\nInstanceLimit relax 2;\n"
                               "CollectMemory * *;\n";
  long n;
  for (n = 1;; n++) {
    failing_alloc f = {.left = n - 1};
    mapopt_ctx *c;
    if (mapopt_ctx_new(failing_realloc, &f, &c) != MAPOPT_OK)
      continue;
    mapopt_diags *d = NULL;
    mapopt_machine *m = NULL;
    mapopt_app *app = NULL;
    mapopt_app_run *run = NULL;
    mapopt_program *prog = NULL;
    mapopt_sim_result *res = NULL;
    char *report = NULL;
    bool ok =
        mapopt_diags_new(c, &d) == MAPOPT_OK &&
        mapopt_machine_resolve(c, "lassen:nodes=2", d, &m) == MAPOPT_OK &&
        mapopt_app_resolve(c, "stencil:small", d, &app, NULL) == MAPOPT_OK;
    if (ok) {
      mapopt_app_options ao = {.spec = "small", .iterations = 2, .warmup = 1};
      mapopt_app_machine am = {m->nodes, 4, 1};
      ok = mapopt_app_instantiate(app, &ao, &am, d, &run) == MAPOPT_OK;
    }
    if (ok) {
      mapopt_machine_shape shape;
      mapopt_machine_shape_of(m, &shape);
      mapopt_dsl_options o = {.file = "m.map", .shape = &shape};
      ok = mapopt_dsl_compile(c, mapper, strlen(mapper), &o, d, &prog) ==
           MAPOPT_OK;
    }
    mapopt_status st = MAPOPT_ENOMEM;
    if (ok) {
      mapopt_sim_options so = {.trace = true};
      st = mapopt_sim_run(c, m, run, prog, &so, &res);
      assert_true(st == MAPOPT_OK || st == MAPOPT_ENOMEM);
      /* The host's lack of memory is never the mapper's failure: no
       * simulated error says it (a tuner would record it as one). */
      if (st == MAPOPT_OK && res->error_text)
        assert_null(strstr(res->error_text, "out of memory"));
      if (st == MAPOPT_OK)
        st = mapopt_sim_report_json(c, res, false, &report);
    }
    bool done = !f.failed; /* the failure point was never reached */
    if (done) {
      assert_int_equal(st, MAPOPT_OK);
      assert_int_equal(res->error, MAPOPT_SIM_NONE);
    }
    mapopt_text_free(report);
    mapopt_sim_result_free(res);
    mapopt_dsl_free(prog);
    mapopt_app_run_free(run);
    mapopt_app_free(app);
    mapopt_machine_free(m);
    mapopt_diags_free(d);
    mapopt_ctx_free(c);
    assert_int_equal(f.live, 0);
    if (done)
      break;
  }
  print_message("the pipeline succeeded from allocation %ld on\n", n);
  assert_true(n > 100);
}

/* An app's own rank split (johnson: one rank per GPU) reaches the shape
 * its mappers compile against, without changing the machine; an app
 * without one keeps the machine's split; a split that does not divide the
 * GPUs of a node is an error (the machine loader's rule). */
static void test_instantiate_rank_split(void **state) {
  (void)state;
  static const struct {
    const char *app;
    int64_t ranks; /* expected ranks per node on p100x4 (4 GPUs) */
  } cases[] = {{"johnson:small", 4}, {"circuit:small", 1}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mapopt_machine *m = NULL;
    mapopt_app *app = NULL;
    mapopt_app_run *run = NULL;
    const char *spec = NULL;
    assert_int_equal(mapopt_machine_resolve(ctx, "p100x4", diags, &m),
                     MAPOPT_OK);
    assert_int_equal(m->ranks_per_node, 1);
    assert_int_equal(mapopt_app_resolve(ctx, cases[i].app, diags, &app, &spec),
                     MAPOPT_OK);
    mapopt_app_options ao = {.spec = spec, .iterations = 1, .warmup = 0};
    assert_int_equal(mapopt_sim_instantiate(m, app, &ao, diags, &run),
                     MAPOPT_OK);
    assert_int_equal(m->ranks_per_node, 1); /* untouched */
    mapopt_machine_shape shape;
    mapopt_sim_shape(m, run, &shape);
    assert_int_equal(shape.nodes, cases[i].ranks);
    assert_int_equal(shape.procs[MAPOPT_PROC_GPU], 4 / cases[i].ranks);
    mapopt_app_run_free(run);
    mapopt_app_free(app);
    mapopt_machine_free(m);
  }
  /* circuit asking for 3 ranks per node of p100x4's 4 GPUs. */
  const char *json = mapopt_app_builtin_json("circuit");
  assert_non_null(json);
  size_t n = strlen(json) + 64;
  char *three = malloc(n);
  snprintf(three, n, "{\"run\": {\"ranks_per_node\": 3},%s", json + 1);
  mapopt_machine *m = NULL;
  mapopt_app *app = NULL;
  mapopt_app_run *run = NULL;
  assert_int_equal(mapopt_machine_resolve(ctx, "p100x4", diags, &m), MAPOPT_OK);
  assert_int_equal(mapopt_app_load_json(ctx, "three.json", three, strlen(three),
                                        diags, &app),
                   MAPOPT_OK);
  mapopt_diags_clear(diags);
  mapopt_app_options ao = {.spec = "small", .iterations = 1, .warmup = 0};
  assert_int_equal(mapopt_sim_instantiate(m, app, &ao, diags, &run),
                   MAPOPT_EINVAL);
  assert_null(run);
  char line[256];
  mapopt_diag_format(mapopt_diags_get(diags, 0), line, sizeof line);
  assert_string_equal(line, "circuit: error: ranks_per_node (3) must divide "
                            "the GPU count (4)");
  mapopt_diags_clear(diags);
  mapopt_app_free(app);
  mapopt_machine_free(m);
  free(three);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_fenced_many_windows),
      cmocka_unit_test(test_allocation_failure),
      cmocka_unit_test(test_instantiate_rank_split),
      cmocka_unit_test(test_task_time_flops_bound),
      cmocka_unit_test(test_task_time_bytes_bound),
      cmocka_unit_test(test_task_time_eff_gathers),
      cmocka_unit_test(test_copy_fb_fb_peer),
      cmocka_unit_test(test_copy_fb_host),
      cmocka_unit_test(test_copy_port_contention),
      cmocka_unit_test(test_copy_bandwidth_sharing),
      cmocka_unit_test(test_default_nested_placement),
      cmocka_unit_test(test_oom_exact_capacity),
      cmocka_unit_test(test_collect_memory),
      cmocka_unit_test(test_instance_limit_delays),
      cmocka_unit_test(test_backpressure_error),
      cmocka_unit_test(test_default_index_placement),
      cmocka_unit_test(test_layout_errors),
      cmocka_unit_test(test_layout_aos_f_order),
      cmocka_unit_test(test_no_variant),
      cmocka_unit_test(test_virtual_on_leaf),
      cmocka_unit_test(test_dsl_mapping_error),
      cmocka_unit_test(test_timeout),
      cmocka_unit_test(test_timing_window),
      cmocka_unit_test(test_heat1d_small),
      cmocka_unit_test(test_determinism_three_runs),
      cmocka_unit_test(test_determinism_seed_without_noise),
  };
  int rc = cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
  free(heat_app);
  return rc;
}
