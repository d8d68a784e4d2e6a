/*
 * The prompt of the LLM layer (mapopt_llm_prompt_build, docs/llm.md
 * section 4): golden files for circuit and cosma on p100x4, which
 * attempts are shown and how repeated feedback and runs are said once,
 * untrusted text, the pieces each point uses (by formula and by example),
 * the sockets, and other applications' sections.
 *
 * The golden prompts are tests/llm/golden/NAME.prompt; with UPDATE=1 in
 * the environment the test writes them instead of comparing (read the
 * diff before committing it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "../llm/llm_fixture.h"
#include "fixture.h"
#include "mapopt/llm.h"

static char *read_text(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  *len = fread(buf, 1, (size_t)n, f);
  buf[*len] = '\0';
  fclose(f);
  return buf;
}

/* A circuit tuning run as the llm optimizer tells it: numbered from 0,
 * two early failures, a mapper that runs as the default mapper does
 * (profile 0x33), the best (4), a tie of it with an AOS layout that ran
 * as 2 did, and the latest. The timing lines have the shape of
 * mapopt_guide_critical_path_line's. */
static const char golden_default[] =
    "# The default mapper: every decision is the runtime's default\n"
    "Task * GPU, OMP, CPU, IO, PY, PROC;\n";
static const mapopt_llm_attempt golden_baseline = {
    -1,
    golden_default,
    51.25,
    "Performance Metric: Execution time is 0.0195 s.",
    0.0195,
    "critical path 19.5 ms by cause: calculate_new_currents: compute 9.1 ms "
    "(47%); distribute_charge rp_ghost@2: reduction FB_FB_PEER FBMEM 1 -> "
    "FBMEM 0 of node 0 4.2 ms (22%); update_voltages: compute 3.0 ms (15%); "
    "(no task): runtime 1.9 ms (10%); 3 more 1.3 ms (6%).",
    0x33};
static const mapopt_llm_attempt golden_attempts[] = {
    {0, "Task * GPU;\n", 0,
     "Invalid policy: task init_piece requested GPU, "
     "but has no valid task variant for the kind",
     0, NULL, 0},
    {1, NULL, 0,
     "The reply had no fenced code block, and the reply as a whole is not a "
     "valid mapper.",
     0, NULL, 0},
    {2, "Task * GPU, CPU;\n", 51.25,
     "Performance Metric: Execution time is 0.0195 s.", 0.0195, NULL, 0x33},
    {3, "Task * GPU, CPU;\nRegion * * GPU ZCMEM;\n", 12.5, NULL, 0.08,
     "critical path 80.0 ms by cause: calculate_new_currents: compute 61.2 ms "
     "(77%); distribute_charge: compute 14.1 ms (18%); 2 more 4.7 ms (6%).",
     0x44},
    {4, NULL, 57.5, "Performance Metric: Execution time is 0.0174 s.", 0.0174,
     "critical path 17.4 ms by cause: calculate_new_currents: compute 9.1 ms "
     "(52%); update_voltages: compute 3.0 ms (17%); distribute_charge: "
     "compute 2.9 ms (17%); 4 more 2.4 ms (14%).",
     0x66},
    {5, "Task * GPU, CPU;\nLayout * * * AOS;\n", 51.25,
     "Performance Metric: Execution time is 0.0195 s.", 0.0195, NULL, 0x33},
    {6, "Task * CPU;\n", 9.75,
     "Performance Metric: Execution time is 0.1026 s.", 0.1026,
     "critical path 102.6 ms by cause: calculate_new_currents: compute 70.3 ms "
     "(69%); distribute_charge: compute 20.5 ms (20%); 3 more 11.8 ms (12%).",
     0x77},
};

/* Written here, not taken from mappers/, so that the golden file changes
 * only with the prompt. */
static const char golden_best[] =
    "# shared and ghost nodes in zero-copy memory\n"
    "Task * GPU, CPU;\n"
    "Region * * GPU FBMEM;\n"
    "Region * * CPU SYSMEM;\n"
    "Region * rp_shared GPU ZCMEM;\n"
    "Region * rp_ghost GPU ZCMEM;\n"
    "Layout * * * SOA C_order;\n"
    "mgpu = Machine(GPU);\n"
    "def cyclic1d(Task t) {\n"
    "    return mgpu[t.ipoint[0] / mgpu.size[1], t.ipoint[0] % "
    "mgpu.size[1]];\n"
    "}\n"
    "IndexTaskMap GPU cyclic1d;\n";

/* Builds the prompt of in twice (the same bytes) and compares it with
 * tests/llm/golden/NAME.prompt (UPDATE=1 writes it instead). */
static void check_golden(const mapopt_llm_prompt_input *in, const char *name) {
  mapopt_llm_prompt p, q;
  assert_int_equal(mapopt_llm_prompt_build(ctx, in, &p), MAPOPT_OK);
  assert_int_equal(mapopt_llm_prompt_build(ctx, in, &q), MAPOPT_OK);
  assert_int_equal(p.user_len, q.user_len);
  assert_memory_equal(p.user, q.user, p.user_len);
  assert_string_equal(p.system, q.system);
  mapopt_llm_prompt_destroy(&q);
  assert_int_equal(strlen(p.system), p.system_len);

  size_t len = p.system_len + p.user_len + 64;
  char *got = malloc(len);
  snprintf(got, len, "=== system\n%s=== user\n%s", p.system, p.user);
  char path[512];
  snprintf(path, sizeof path, "%s/tests/llm/golden/%s.prompt",
           MAPOPT_SOURCE_DIR, name);
  const char *update = getenv("UPDATE");
  if (update && !strcmp(update, "1")) {
    FILE *f = fopen(path, "wb");
    assert_non_null(f);
    fputs(got, f);
    fclose(f);
    print_message("wrote %s\n", path);
  } else {
    size_t wlen;
    char *want = read_text(path, &wlen);
    assert_non_null(want);
    if (strcmp(got, want)) {
      size_t i = 0;
      while (got[i] && got[i] == want[i])
        i++;
      fail_msg("prompt differs from %s at byte %zu: \"%.60s\"", path, i,
               got + i);
    }
    free(want);
  }
  free(got);
  mapopt_llm_prompt_destroy(&p);
}

static void test_prompt_golden(void **state) {
  (void)state;
  mapopt_llm_attempt attempts[7];
  memcpy(attempts, golden_attempts, sizeof attempts);
  attempts[4].mapper = golden_best;
  mapopt_llm_prompt_input in = {
      .run = llm_circuit.run,
      .machine = llm_circuit.machine,
      .best_mapper = golden_best,
      .best_score = 57.5,
      .best_feedback = "Performance Metric: Execution time is 0.0174 s.",
      .baseline = &golden_baseline,
      .attempts = attempts,
      .nattempts = 7,
  };
  check_golden(&in, "circuit_p100x4");
  /* docs/llm.md shows this user message whole: it must be this one. */
  mapopt_llm_prompt p;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  size_t dlen;
  char *doc = read_text(MAPOPT_SOURCE_DIR "/docs/llm.md", &dlen);
  assert_non_null(doc);
  if (!strstr(doc, p.user))
    fail_msg("docs/llm.md, \"An example\", is not the golden user message");
  free(doc);
  mapopt_llm_prompt_destroy(&p);
}

/* The first prompt of a cosma run, as the llm optimizer of mapopt tune
 * sends it (anonymous): four address spaces per node, pieces of 3-D
 * launches, the default mapper's result (numbers of the shape the
 * simulator gives, fixed here so that the file changes only with the
 * prompt). */
static void test_prompt_golden_cosma(void **state) {
  (void)state;
  llm_world w;
  assert_int_equal(llm_world_open(ctx, "cosma", "p100x4", &w), 0);
  static const mapopt_llm_attempt baseline = {
      -1,
      "Task * GPU, OMP, CPU, IO, PY, PROC;\n",
      8732.27,
      "Performance Metric: On 1 nodes achieved GFLOPS per node: "
      "8732.274354.\n"
      "Performance: task_1 waits 666.8 ms (29% of the run) on the folds of "
      "task_4's contributions to A_blk\n",
      2.29,
      "critical path 2.29 s by cause: task_4: compute 1.22 s (53%); task_1 "
      "A_blk@0: fold FB_FB_PEER FBMEM 1 -> FBMEM 2 of node 0, of task_4 "
      "666.8 ms (29%); task_4 B_blk@1: copy FB_FB_PEER FBMEM 2 -> FBMEM 3 of "
      "node 0, of task_2 400.1 ms (17%); 3 more 400.0 us (0%).",
      0x51};
  mapopt_llm_prompt_input in = {
      .run = w.run,
      .machine = w.machine,
      .objective = "throughput in GFLOP/s per node",
      .baseline = &baseline,
      .anonymous = true,
  };
  check_golden(&in, "cosma_p100x4");
  llm_world_close(&w);
}

/* Where s first occurs in the prompt, or -1. */
static long at(const mapopt_llm_prompt *p, const char *s) {
  const char *f = strstr(p->user, s);
  return f ? f - p->user : -1;
}

/* Which attempts are shown (docs/llm.md, "Which attempts are shown"). */
static void test_prompt_history(void **state) {
  (void)state;
  static const char *const mappers[8] = {
      "Task * GPU;\nRegion * * GPU FBMEM;\n",  /* 0: the best */
      "Task * GPU;\nRegion * * GPU ZCMEM;\n",  /* 1: as 0 ran, profile */
      "Task * CPU;\n",                         /* 2: far from all */
      "Task * GPU;\nInstanceLimit x 1;\n",     /* 3: fails, mended by 4 */
      "Task * GPU;\nRegion * * GPU SYSMEM;\n", /* 4: runs */
      "Task * GPU;\nLayout * * * AOS;\n",      /* 5: ran as 4 did */
      "Task * GPU;\nCollectMemory * *;\n",     /* 6: fails, unmended */
      "Task * GPU;\nInstanceLimit y 2;\n",     /* 7: the latest, fails */
  };
  double scores[8] = {9, 9, 2, 0, 4, 4, 0, 0};
  uint64_t profiles[8] = {0x10, 0x10, 0x20, 0, 0x40, 0x40, 0, 0};
  const char *feedback[8] = {"F-best", "F-best", "F-cpu", "F-limit-x",
                             "F-four", "F-four", "F-oom", "F-limit"};
  mapopt_llm_attempt a[8];
  for (int i = 0; i < 8; i++)
    a[i] = (mapopt_llm_attempt){.iteration = i,
                                .mapper = mappers[i],
                                .score = scores[i],
                                .feedback = feedback[i],
                                .elapsed_s = scores[i] > 0 ? 0.5 : 0,
                                .profile = profiles[i]};
  a[4].timing = "critical path 0.5 s by cause: x: compute 0.5 s (100%).";
  mapopt_llm_prompt_input in = {.run = llm_circuit.run,
                                .machine = llm_circuit.machine,
                                .best_mapper = mappers[0],
                                .best_score = 9,
                                .best_feedback = "F-best",
                                .attempts = a,
                                .nattempts = 8,
                                .history = 4};
  mapopt_llm_prompt p;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  /* The rule comes before the first attempt. */
  long rule = at(&p, "shown oldest first, at most 4: the latest");
  assert_true(rule > 0 && rule < at(&p, "## Attempt"));

  /* The best once, above; its feedback once. */
  assert_true(at(&p, "# Current best mapper\nAttempt 0, score 9, elapsed "
                     "0.5 s:\n") > 0);
  assert_int_equal(at(&p, "## Attempt 0:"), -1);
  /* The latest (7), the unmended failure (6), then the most different of
   * the rest (2, four statements from every mapper shown), then 4, which
   * stands for 5; 1 ran as the best and 3's failure is 7's. */
  long seven = at(&p, "## Attempt 7: score 0\n");
  long six = at(&p, "## Attempt 6: score 0\n");
  long two = at(&p, "## Attempt 2: score 2, elapsed 0.5 s\n");
  long four = at(&p, "## Attempt 4: score 4, elapsed 0.5 s\n");
  assert_true(two > 0 && two < four && four < six && six < seven);
  assert_int_equal(at(&p, "## Attempt 1:"), -1);
  assert_int_equal(at(&p, "## Attempt 3:"), -1);
  assert_int_equal(at(&p, "## Attempt 5:"), -1);
  at(&p, "Run: critical path 0.5 s by cause: x: compute 0.5 s (100%).\n");
  at(&p, "\nNot shown: 1 (= 0), 3 (score 0), 5 (= 4).\n");
  assert_true(at(&p, "Feedback:\nF-oom\n") > 0);
  mapopt_llm_prompt_destroy(&p);

  /* With room for all: the mended failure 3 too (oldest first); the
   * attempts that ran as an earlier one never, a failure whose feedback
   * is shown already neither. */
  in.history = 10;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  assert_true(at(&p, "## Attempt 3: score 0") > 0);
  assert_true(at(&p, "## Attempt 3: score 0") < at(&p, "## Attempt 7:"));
  assert_int_equal(at(&p, "## Attempt 1:"), -1);
  at(&p, "\nNot shown: 1 (= 0), 5 (= 4).\n");
  mapopt_llm_prompt_destroy(&p);
  a[3].feedback = "F-limit";
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  assert_int_equal(at(&p, "## Attempt 3:"), -1);
  mapopt_llm_prompt_destroy(&p);

  in.nattempts = 0;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  assert_int_equal(at(&p, "# Attempts"), -1);
  mapopt_llm_prompt_destroy(&p);

  in.run = NULL;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_EINVAL);
}

/* Five attempts that ran the same way, with the same feedback: the
 * feedback once, "same as" and "profile unchanged" for the others. */
static void test_prompt_dedupe(void **state) {
  (void)state;
  static const char fb[] = "Performance Metric: Execution time is 0.0195 s.\n"
                           "Explanation: a long paragraph.\n";
  static const char *const mappers[5] = {
      "Task * GPU, CPU;\n", "Task * GPU, CPU;\nLayout * * * SOA;\n",
      "Task * GPU, CPU;\nCollectMemory * *;\n",
      "Task * GPU, CPU;\nInstanceLimit calculate_new_currents 8;\n",
      "Task * GPU, CPU;\nRegion * * CPU SYSMEM;\n"};
  mapopt_llm_attempt a[5];
  for (int i = 0; i < 5; i++)
    a[i] = (mapopt_llm_attempt){i, mappers[i], 51.25, fb, 0.0195, NULL, 0x77};
  mapopt_llm_prompt_input in = {.run = llm_circuit.run,
                                .machine = llm_circuit.machine,
                                .best_mapper = mappers[0],
                                .best_score = 51.25,
                                .best_feedback = fb,
                                .attempts = a,
                                .nattempts = 5,
                                .history = 5};
  mapopt_llm_prompt p;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  const char *first = strstr(p.user, "Explanation: a long paragraph.");
  assert_non_null(first);
  assert_null(strstr(first + 1, "Explanation: a long paragraph."));
  /* Only the best and the latest: the others ran as the best did. */
  at(&p, "## Attempt 4: score 51.25");
  at(&p, "Profile unchanged from attempt 0: the statements that differ had "
         "no effect.\nFeedback: same as attempt 0.\n");
  at(&p, "Not shown: 1 (= 0), 2 (= 0), 3 (= 0).\n");
  mapopt_llm_prompt_destroy(&p);
  /* A feedback that differs in its first line only: the explanation
   * shown above is left out, the first line kept. */
  a[4].feedback = "Performance Metric: Execution time is 0.02 s.\n"
                  "Explanation: a long paragraph.\n";
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  at(&p, "Feedback:\nPerformance Metric: Execution time is 0.02 s.\n(1 "
         "explanation or suggestion line shown above left out)\n");
  mapopt_llm_prompt_destroy(&p);
}

static void test_prompt_untrusted_text(void **state) {
  (void)state;
  /* A mapper holding a fence gets a longer one; long texts are cut. */
  char *big = malloc(40000);
  memset(big, 'a', 39999);
  for (int i = 80; i < 39999; i += 81)
    big[i] = '\n';
  big[39999] = '\0';
  mapopt_llm_attempt a[2] = {
      {0, "Task * GPU;\n````\n```\n", 1, big, 0, NULL, 0},
      {1, big, 2, NULL, 0, NULL, 0},
  };
  mapopt_llm_prompt_input in = {.run = llm_circuit.run,
                                .machine = llm_circuit.machine,
                                .objective = "GFLOP/s of the run",
                                .attempts = a,
                                .nattempts = 2};
  mapopt_llm_prompt p;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  assert_non_null(strstr(p.user, "\n`````mapper\nTask * GPU;\n````\n```\n"
                                 "`````\n"));
  assert_non_null(strstr(p.user, "Maximize GFLOP/s of the run."));
  assert_non_null(strstr(p.user, "\n## Attempt 0: score 1\n"));
  /* 16 KiB of the mapper and 4 KiB of the feedback, cut at a line end. */
  /* 39999 bytes in lines of 81: the feedback keeps 50 lines (4050 bytes),
   * the mapper 202 (16362 bytes). */
  assert_non_null(strstr(p.user, "[... 35949 more bytes not shown]"));
  assert_non_null(strstr(p.user, "[... 23637 more bytes not shown]"));
  assert_true(p.user_len < 30000);
  mapopt_llm_prompt_destroy(&p);
  free(big);
}

/* Pieces no formula fits are given by example; a whole region is named;
 * numbered fields in a row are written as their ends. */
static void test_prompt_pieces_by_example(void **state) {
  (void)state;
  static const char model[] =
      "{\"format\": \"mapopt-app/1\", \"name\": \"probe\",\n"
      " \"params\": {\"T\": 4},\n"
      " \"timing\": {\"mode\": \"window\", \"metric\": \"time\"},\n"
      " \"regions\": [{\"name\": \"cells\", \"fields\": [[\"u0\", 8], "
      "[\"u1\", 8], [\"u2\", 8], [\"w\", 4]],\n"
      "   \"atoms\": {\"groups\": [{\"group\": \"tile\", \"count\": \"T\", "
      "\"elements\": \"64\"}]}}],\n"
      " \"partitions\": [{\"name\": \"p_cells\", \"region\": \"cells\", "
      "\"kind\": \"group\", \"group\": \"tile\"}],\n"
      " \"tasks\": [{\"name\": \"relax\", \"variants\": [{\"kind\": "
      "\"CPU\"}]}],\n"
      " \"program\": [{\"op\": \"loop\", \"var\": \"t\", \"count\": \"2\", "
      "\"timed\": true, \"body\": [\n"
      "  {\"op\": \"index\", \"task\": \"relax\", \"domain\": "
      "[\"T\"], \"args\": [\n"
      "   {\"part\": \"p_cells\", \"proj\": [\"(i0 * i0) % T\"], \"priv\": "
      "\"RO\", \"fields\": [\"u0\", \"u1\", \"u2\"]},\n"
      "   {\"region\": \"cells\", \"priv\": \"RO\", \"fields\": "
      "[\"w\"]}]}]}]}\n";
  char path[] = "/tmp/mapopt-test-llm-XXXXXX";
  int fd = mkstemp(path);
  assert_true(fd >= 0);
  assert_int_equal(write(fd, model, sizeof model - 1),
                   (ssize_t)sizeof model - 1);
  close(fd);
  llm_world w;
  int rc = llm_world_open(ctx, path, "p100x4", &w);
  unlink(path);
  assert_int_equal(rc, 0);
  mapopt_llm_prompt_input in = {.run = w.run, .machine = w.machine};
  mapopt_llm_prompt p;
  assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
  /* Points 0..3 read pieces 0, 1, 0, 1: neither i + b nor (i + b) mod 4. */
  if (!strstr(p.user, "- 0: p_cells[0] at (0), [0] at (2), ..., cells; "
                      "read-only; u0 to u2 of cells;") ||
      !strstr(p.user, "- 1: cells; read-only; w of cells; 256 elements, "
                      "1.0 KiB; the whole region\n") ||
      !strstr(p.user, "fields u0 to u2 8 each, w 4\n"))
    fail_msg("unexpected prompt:\n%s", p.user);
  mapopt_llm_prompt_destroy(&p);
  llm_world_close(&w);
}

static void test_prompt_other_apps(void **state) {
  (void)state;
  static const struct {
    const char *app, *machine;
    const char *parts[4];
  } cases[] = {
      {"cannon",
       "p100x4",
       {"GPU (f64; requires C_order on arguments 0, 1, 2 (the run fails "
        "otherwise))",
        "GPU (inner: only launches other tasks)", "single launches from task_5",
        "Launches: 1 index launch over (2, 2) from main"}},
      {"stencil",
       "lassen:nodes=2",
       {"prefers F_order on argument 0 (else its time is multiplied by "
        "1.02)",
        "2 nodes, 1 address space per node",
        "- between nodes: ", "requires SOA F_order on argument 0"}},
      /* Which piece each launch of an inner task's body reads: plain,
       * modulo the partition's colours, several partitions by launch. */
      {"pumma",
       "p100x4",
       {"Each point launches, in order: task_4 x2 (n = 0 to 1).\n",
        "- 1: B_half[i, n], B; read-only; val of B; 25000000 elements, "
        "190.7 MiB\n",
        "- 2: C_tile[n, j], C; read-only; val of C; 25000000 elements, "
        "190.7 MiB\n",
        "pieces of A_tile, B_tile or C_tile, by launch\n"}},
      {"solomonik",
       "p100x4",
       {"- 1: B_chunk[i, (i + j + n) mod 2], B; read-only",
        "- 2: C_chunk[(i + j + n) mod 2, j], C; read-only",
        "Each point launches, in order: task_4 x2 (n = 0 to 1).\n",
        "- 0: A_blk[i, j], A; reduction (sum)"}},
      /* Four address spaces of one GPU each: the socket of every GPU. */
      {"cosma",
       "p100x4",
       {"shown for node 0, address spaces 0 to 3; every node is alike):\n"
        "- socket 0: GPU[0, 0], GPU[1, 0], CPU[0, 0], CPU[1, 0], CPU[2, 0], "
        "CPU[3, 0], its SOCKMEM\n- socket 1: GPU[2, 0], GPU[3, 0], its "
        "SOCKMEM\n",
        "- ZCMEM: one per address space",
        "- between GPUs of a node: 10 GB/s on one socket, 7 GB/s across "
        "sockets",
        "4 address spaces per node"}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    llm_world w;
    assert_int_equal(llm_world_open(ctx, cases[i].app, cases[i].machine, &w),
                     0);
    mapopt_llm_prompt_input in = {.run = w.run, .machine = w.machine};
    mapopt_llm_prompt p;
    assert_int_equal(mapopt_llm_prompt_build(ctx, &in, &p), MAPOPT_OK);
    for (int k = 0; k < 4; k++)
      if (!strstr(p.user, cases[i].parts[k]))
        fail_msg("%s: no \"%s\" in\n%s", cases[i].app, cases[i].parts[k],
                 p.user);
    mapopt_llm_prompt_destroy(&p);
    llm_world_close(&w);
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_prompt_golden),
      cmocka_unit_test(test_prompt_golden_cosma),
      cmocka_unit_test(test_prompt_dedupe),
      cmocka_unit_test(test_prompt_history),
      cmocka_unit_test(test_prompt_untrusted_text),
      cmocka_unit_test(test_prompt_other_apps),
      cmocka_unit_test(test_prompt_pieces_by_example),
  };
  return cmocka_run_group_tests(tests, llm_circuit_setup, llm_circuit_teardown);
}
