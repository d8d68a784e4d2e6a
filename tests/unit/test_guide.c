/*
 * Unit tests of AutoGuide (include/mapopt/guide.h). One fixture per rule:
 * raw output text -- the seed paper's nine messages and every error the
 * DSL, the simulator and real runtimes print -- or a real simulation of a
 * built-in benchmark, mapped so that the phenomenon occurs, with the code,
 * subject and first edit expected. The performance rules are checked end
 * to end: the statement a finding suggests, put in the mapper, makes the
 * simulated run faster.
 *
 * Also: a report read back gives the same findings as the run itself; the
 * four feedback levels; determinism; names and edit texts; located errors
 * of the report reader; and allocation failure at every point of the main
 * entry points.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapopt/app.h"
#include "mapopt/dsl.h"
#include "mapopt/guide.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

#include "failing_alloc.h"
#include "fixture.h"

#define C(x) MAPOPT_GUIDE_CODE_##x
#define E(x) MAPOPT_GUIDE_EDIT_##x

/* ---- helpers --------------------------------------------------------------
 */

static const mapopt_guide_finding *find_code(const mapopt_findings *f,
                                             mapopt_guide_code code) {
  for (size_t i = 0; i < mapopt_findings_count(f); i++)
    if (mapopt_findings_get(f, i)->code == code)
      return mapopt_findings_get(f, i);
  return NULL;
}

static bool same(const char *a, const char *b) {
  return (!a && !b) || (a && b && strcmp(a, b) == 0);
}

/* Whether g has the edit (NULL operands must be NULL). */
static bool has_edit(const mapopt_guide_finding *g, mapopt_guide_edit_kind k,
                     const char *task, const char *region, const char *proc,
                     const char *component, const char *value) {
  for (size_t i = 0; g && i < g->nedits; i++) {
    const mapopt_guide_edit *e = &g->edits[i];
    if (e->kind == k && same(e->task, task) && same(e->region, region) &&
        same(e->proc, proc) && same(e->component, component) &&
        same(e->value, value))
      return true;
  }
  return false;
}

static void print_findings(const mapopt_findings *f) {
  char *t;
  if (mapopt_guide_findings_json(ctx, f, &t) == MAPOPT_OK) {
    print_message("%s", t);
    mapopt_text_free(t);
  }
}

/* ---- rules on text alone ---------------------------------------------------
 */

typedef struct text_case {
  const char *output;
  int exit_status, signal;
  bool timed_out;
  const char *mapper_text;
  mapopt_guide_code code;
  mapopt_guide_category category;
  /* The first edit expected (kind -1: none at all). */
  int edit;
  const char *task, *region, *proc, *component, *value;
  const char *in_suggest; /* a substring of the suggestion, or NULL */
} text_case;

#define NO_EDIT -1, NULL, NULL, NULL, NULL, NULL
#define CE MAPOPT_GUIDE_COMPILE_ERROR
#define EE MAPOPT_GUIDE_EXECUTION_ERROR
#define PF MAPOPT_GUIDE_PERFORMANCE

static const text_case text_cases[] = {
    /* The seed paper's nine raw messages. */
    {"m.map:1:14: error: syntax error, unexpected ':', expecting '{'\n", 1, 0,
     false, "def f(Task t):\n  return 0;\n", C(SYNTAX), CE, NO_EDIT,
     "`def f(Task t) {"},
    {"m.map:2:37: error: IndexTaskMap's function undefined: 'f' is not "
     "defined before this statement\n",
     1, 0, false,
     "mgpu = Machine(GPU);\nIndexTaskMap calculate_new_currents, "
     "update_voltages f;\n",
     C(UNDEFINED_FUNCTION), CE, E(INDEX_MAP), "calculate_new_currents", NULL,
     NULL, NULL, "default", "`def f(Task t) { ... }`"},
    {"Compile Error: mgpu not found\n", 1, 0, false, NULL, C(UNDEFINED_NAME),
     CE, NO_EDIT, "`mgpu = Machine(GPU);`"},
    {"Assertion failed: stride does not match expected value.\n", 1, 0, false,
     NULL, C(LAYOUT_STRIDE), EE, E(LAYOUT), "*", "*", "*", "order", "F_order",
     "`Layout * * * SOA F_order;`"},
    {"DGEMM parameter number 8 had an illegal value\n", 1, 0, false,
     "Layout * * * SOA C_order;\n", C(BLAS_LD), EE, E(LAYOUT), "*", "*", "*",
     "order", "F_order", "`Layout * * * SOA F_order;`"},
    {"Slice processor index out of bound! 4 >= 4\n", 1, 0, false, NULL,
     C(SLICE_OOB), EE, NO_EDIT, "ip[0] % m.size[1]"},
    {"Assertion 'event.exists()' failed\n", 1, 0, false, NULL, C(BACKPRESSURE),
     EE, NO_EDIT, "InstanceLimit"},
    {"ELAPSED TIME =   0.137 s\n", 0, 0, false, NULL, C(EXEC_TIME), PF, NO_EDIT,
     NULL},
    {"On 1 nodes achieved GFLOPS per node: 9996.693628.\n", 0, 0, false, NULL,
     C(THROUGHPUT), PF, NO_EDIT, NULL},
    {"GFLOPS = 14025.984 GFLOPS\n", 0, 0, false, NULL, C(THROUGHPUT), PF,
     NO_EDIT, NULL},
    /* The simulator's and the DSL's wording, with their context lines. */
    {"** On entry to DGEMM parameter number 8 had an illegal value\n", 1, 0,
     false, "Layout * * * SOA F_order;\n", C(BLAS_LD), EE, E(LAYOUT), "*", "*",
     "*", "order", "C_order", "C_order"},
    {"Assertion failed: stride does not match expected value.\n"
     "[mapopt-sim] task stencil, region requirement 0 (private), layout SOA "
     "C_order, on CPU 0\n"
     "[mapopt-sim] error class LAYOUT at t=0.020829 s\n",
     1, 0, false, NULL, C(LAYOUT_STRIDE), EE, E(LAYOUT), "stencil", "private",
     "CPU", "order", "F_order", "`Layout stencil private CPU SOA F_order;`"},
    {"m.map:5:14: mapping error: Slice processor index out of bound! 4 >= 4\n"
     "m.map: note: while placing point (3,) of task 'k' with 'f'\n",
     1, 0, false, NULL, C(SLICE_OOB), EE, E(INDEX_MAP), "k", NULL, NULL, NULL,
     "block", "m.size[1]"},
    {"m.map:3:10: mapping error: Sharding node index out of bound! 1 >= 1\n"
     "m.map: note: while placing point (4,) of task 'step' with 'bad'\n",
     1, 0, false, NULL, C(NODE_OOB), EE, E(INDEX_MAP), "step", NULL, NULL, NULL,
     "block", "m.size[0]"},
    {"Default mapper failed allocation of size 2147483648 bytes for region "
     "requirement 2 of task task_4 in memory FBMEM of node 0\n",
     1, 0, false, NULL, C(OOM), EE, E(COLLECT), "task_4", "*", NULL, NULL, "on",
     "`CollectMemory task_4 *;`"},
    {"Invalid policy: task task_4 requested CPU, but has no valid task variant "
     "for the kind\n",
     1, 0, false, NULL, C(NO_VARIANT), EE, E(PROC_KINDS), "task_4", NULL, NULL,
     NULL, "GPU,OMP,CPU", "`Task task_4 GPU,OMP,CPU;`"},
    {"m.map:9:12: mapping error: step is actually mapped to GPU, but machine "
     "model is for CPU\n"
     "m.map: note: while placing point (0,) of task 'step' with 'f'\n",
     1, 0, false, NULL, C(KIND_MISMATCH), EE, E(INDEX_MAP), "step", NULL, NULL,
     NULL, "default", "Machine(GPU)"},
    {"mapper: Assertion failed: single task must stay on its parent's node\n"
     "mapper: note: while mapping task 'leaf' with 'g'\n",
     1, 0, false, NULL, C(SINGLE_NODE), EE, E(SINGLE_FOLLOW), "leaf", NULL,
     NULL, NULL, "parent", "t.parent.processor(m)"},
    {"Invalid mapper output: virtual mapping requested for region requirement "
     "1 of leaf task k\n",
     1, 0, false, NULL, C(VIRTUAL_LEAF), EE, E(MEMORY), "k", "1", "GPU", NULL,
     "FBMEM", "`Region k 1 GPU FBMEM;`"},
    {"m.map:3:9: mapping error: type mismatch: int + tuple\n"
     "m.map: note: while placing point (1,) of task 'k' with 'f'\n",
     1, 0, false, NULL, C(TYPE_ERROR), EE, E(INDEX_MAP), "k", NULL, NULL, NULL,
     "default", "t.ipoint[0]"},
    {"m.map:4:10: error: argument number mismatch: 'g' expects 2 arguments, "
     "got 1\n",
     1, 0, false, NULL, C(ARGUMENT_COUNT), CE, NO_EDIT, "line 4"},
    {"m.map:2:3: mapping error: evaluation step limit (1000000) exceeded\n"
     "m.map: note: while placing point (0,) of task 'k' with 'f'\n",
     1, 0, false, NULL, C(STEP_LIMIT), EE, E(INDEX_MAP), "k", NULL, NULL, NULL,
     "default", "arithmetic"},
    {"m.map:3:12: mapping error: index 3 out of bound for tuple of length 2 "
     "(Index out of bound for TupleIntNode)\n",
     1, 0, false, NULL, C(TUPLE_INDEX), EE, NO_EDIT, "length"},
    {"m.map:3:12: mapping error: machine index has 3 coordinates but the "
     "machine model has 2 dimensions\n"
     "m.map: note: while placing point (2,) of task 'k' with 'f'\n",
     1, 0, false, NULL, C(MACHINE_INDEX), EE, E(INDEX_MAP), "k", NULL, NULL,
     NULL, "default", "one coordinate per dimension"},
    {"m.map:6:3: mapping error: function without return: 'f'\n", 1, 0, false,
     NULL, C(NO_RETURN), EE, NO_EDIT, "return m[...]"},
    {"m.map:4:20: mapping error: division by zero\n", 1, 0, false, NULL,
     C(ARITHMETIC), EE, NO_EDIT, "d > 0 ? x / d : 0"},
    {"m.map:2:12: mapping error: task.ipoint is only defined for "
     "index-launched tasks\n",
     1, 0, false, NULL, C(TASK_PROPERTY), EE, NO_EDIT, "t.parent"},
    {"m.map:2:12: mapping error: recursion depth limit (64) exceeded in call "
     "to 'f'\n",
     1, 0, false, NULL, C(RECURSION), EE, NO_EDIT, "without recursion"},
    {"m.map:2:1: error: redefinition of global 'x' (first bound at 1:1)\n", 1,
     0, false, NULL, C(REDEFINITION), CE, NO_EDIT, "Rename"},
    {"m.map:1:15: error: Align==3: alignment must be a positive power of two\n",
     1, 0, false, "Layout t r GPU Align==3;\n", C(ALIGNMENT), CE, E(LAYOUT),
     "t", "r", "GPU", "align", "64", "Align==64"},
    {"simulated time limit exceeded (3600 s)\n"
     "[mapopt-sim] error class TIMEOUT at t=3600.000000 s\n",
     1, 0, false, NULL, C(TIMEOUT), MAPOPT_GUIDE_TIMEOUT, NO_EDIT, "Undo"},
    {"", -1, 0, true, NULL, C(TIMEOUT), MAPOPT_GUIDE_TIMEOUT, NO_EDIT, "Undo"},
    {"", -1, 11, false, NULL, C(CRASH), MAPOPT_GUIDE_CRASH, NO_EDIT, "Undo"},
    {"Legion process received signal 11: Segmentation fault\n", 139, 0, false,
     NULL, C(CRASH), MAPOPT_GUIDE_CRASH, NO_EDIT, NULL},
    {"simulation deadlock: 3 of 10 operations never completed (internal "
     "error)\n",
     1, 0, false, NULL, C(MODEL_ERROR), EE, NO_EDIT, "Report it"},
    {"starting\nsomething odd happened\n", 3, 0, false, NULL, C(FAILED), EE,
     NO_EDIT, "last lines"},
    {"starting\ndone\n", 0, 0, false, NULL, C(NO_METRIC), EE, NO_EDIT,
     "ELAPSED TIME"},
};

static mapopt_findings *analyze_text(const text_case *c) {
  mapopt_guide_input in = {.output = c->output,
                           .output_len = strlen(c->output),
                           .exit_status = c->exit_status,
                           .signal = c->signal,
                           .timed_out = c->timed_out,
                           .mapper_text = c->mapper_text,
                           .mapper_len =
                               c->mapper_text ? strlen(c->mapper_text) : 0};
  mapopt_findings *f = NULL;
  assert_int_equal(mapopt_guide_analyze(ctx, &in, &f), MAPOPT_OK);
  return f;
}

static void test_text_rules(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof text_cases / sizeof text_cases[0]; i++) {
    const text_case *c = &text_cases[i];
    mapopt_findings *f = analyze_text(c);
    const mapopt_guide_finding *g = mapopt_findings_get(f, 0);
    if (!g || g->code != c->code || g->category != c->category ||
        (c->edit < 0
             ? g->nedits != 0
             : !g->nedits ||
                   !has_edit(g, (mapopt_guide_edit_kind)c->edit, c->task,
                             c->region, c->proc, c->component, c->value) ||
                   g->edits[0].kind != (mapopt_guide_edit_kind)c->edit) ||
        (c->in_suggest && !strstr(g->suggest, c->in_suggest)) ||
        !g->explain[0]) {
      print_message("case %zu (%s): want %s\n", i, c->output,
                    mapopt_guide_code_name(c->code));
      print_findings(f);
      fail();
    }
    mapopt_findings_free(f);
  }
}

/* A catalogue template with each conversion replaced by a sample value
 * (a word for %s and %c, 2 for a number). */
static void instantiate(const char *tpl, char *out, size_t cap) {
  size_t k = 0;
  for (const char *p = tpl; *p && k + 8 < cap; p++) {
    if (*p != '%') {
      out[k++] = *p;
      continue;
    }
    if (*++p == '%') {
      out[k++] = '%';
      continue;
    }
    while (*p && strchr("0123456789.-+ #*lhzjt", *p))
      p++;
    k += (size_t)snprintf(out + k, cap - k, "%s", strchr("sc", *p) ? "x" : "2");
  }
  out[k] = '\0';
}

/*
 * Every error of the DSL's diagnostic catalogue (mapopt/dsl.h), as the
 * mapper prints it, yields a finding of its own rule: not the generic
 * "failed" one, and a compile error for an error, an execution error for
 * a mapping error. AutoGuide's rules match the messages' text (a real
 * run's output has no codes), so rewording a template without its rule
 * fails here instead of silently losing the finding.
 */
static void test_catalogue_findings(void **state) {
  (void)state;
  int checked = 0;
  for (int i = 0; i < MAPOPT_DSL_DIAG_COUNT; i++) {
    mapopt_severity sev = mapopt_dsl_diag_severity((mapopt_dsl_diag)i);
    if (sev != MAPOPT_SEV_ERROR && sev != MAPOPT_SEV_MAPPING_ERROR)
      continue;
    char msg[1024], out[1200];
    instantiate(mapopt_dsl_diag_template((mapopt_dsl_diag)i), msg, sizeof msg);
    bool compile = sev == MAPOPT_SEV_ERROR;
    snprintf(out, sizeof out, "m.map:1:1: %s: %s\n",
             compile ? "error" : "mapping error", msg);
    text_case c = {.output = out, .exit_status = 1};
    mapopt_findings *f = analyze_text(&c);
    const mapopt_guide_finding *g = mapopt_findings_get(f, 0);
    if (!g || g->code == C(FAILED) || g->category != (compile ? CE : EE)) {
      print_message("%s: %s", mapopt_dsl_diag_code((mapopt_dsl_diag)i), out);
      print_findings(f);
      fail();
    }
    mapopt_findings_free(f);
    checked++;
  }
  assert_true(checked > 50); /* the catalogue was really walked */
}

/* The message of a text finding is its line, without the location. */
static void test_text_details(void **state) {
  (void)state;
  /* A compile error quotes the mapper's line; line numbers are kept. */
  const text_case *c = &text_cases[0];
  mapopt_findings *f = analyze_text(c);
  const mapopt_guide_finding *g = mapopt_findings_get(f, 0);
  assert_string_equal(g->message,
                      "syntax error, unexpected ':', expecting '{'");
  assert_true(g->from_output);
  assert_int_equal(g->line, 1);
  assert_non_null(strstr(g->explain, "`def f(Task t):`"));
  mapopt_findings_free(f);
  /* The same error printed twice (two ranks) is one finding; the note
   * names the task and the function. */
  text_case twice = text_cases[12];
  char buf[1024];
  snprintf(buf, sizeof buf, "%s%s", twice.output, twice.output);
  twice.output = buf;
  f = analyze_text(&twice);
  assert_int_equal(mapopt_findings_count(f), 1);
  g = mapopt_findings_get(f, 0);
  assert_string_equal(g->subject, "task k, function f");
  assert_string_equal(g->task, "k");
  assert_non_null(strstr(g->explain, "point (3,) of k to processor 4"));
  mapopt_findings_free(f);
  /* Errors come before the metric lines. */
  text_case mixed = {.output = "ELAPSED TIME = 1.0 s\nAssertion "
                               "'event.exists()' failed\n",
                     .exit_status = 1};
  f = analyze_text(&mixed);
  assert_int_equal(mapopt_findings_count(f), 2);
  assert_int_equal(mapopt_findings_get(f, 0)->code, C(BACKPRESSURE));
  assert_int_equal(mapopt_findings_get(f, 1)->code, C(EXEC_TIME));
  mapopt_findings_free(f);
  /* Nothing recognizable and no status: no findings. */
  text_case quiet = {.output = "hello\n", .exit_status = -1};
  f = analyze_text(&quiet);
  assert_int_equal(mapopt_findings_count(f), 0);
  mapopt_findings_free(f);
}

/* ---- simulated runs
 * ---------------------------------------------------------- */

typedef struct sim_case {
  const char *app;     /* built-in name with an optional ":size" */
  const char *mapper;  /* shipped mapper ("expert") */
  const char *prepend; /* statements put before it, or NULL */
  const char *drop;    /* its lines containing this are left out, or NULL */
  const char *append;  /* statements put after it, or NULL */
} sim_case;

typedef struct simmed {
  mapopt_machine *machine;
  mapopt_app *app;
  mapopt_app_run *run;
  mapopt_program *prog;
  char *text;
  mapopt_sim_result *res;
} simmed;

static char *mapper_text(const sim_case *c) {
  char name[64];
  snprintf(name, sizeof name, "%s", c->app);
  char *colon = strchr(name, ':');
  if (colon)
    *colon = '\0';
  const char *base = mapopt_app_builtin_mapper(name, c->mapper);
  assert_non_null(base);
  size_t n = strlen(base) + (c->prepend ? strlen(c->prepend) : 0) +
             (c->append ? strlen(c->append) : 0) + 3;
  char *t = malloc(n);
  assert_non_null(t);
  snprintf(t, n, "%s\n", c->prepend ? c->prepend : "");
  for (const char *p = base; *p;) {
    const char *e = strchr(p, '\n');
    size_t len = e ? (size_t)(e - p + 1) : strlen(p);
    char line[512];
    snprintf(line, sizeof line, "%.*s", (int)len, p);
    if (!c->drop || !strstr(line, c->drop))
      strcat(t, line);
    p += len;
  }
  if (c->append) {
    strcat(t, "\n");
    strcat(t, c->append);
  }
  return t;
}

/* Simulates c on p100x4 with that many warm-up iterations (-1: the
 * app's own). */
static void simulate_warmup(const sim_case *c, int64_t warmup, simmed *s) {
  memset(s, 0, sizeof *s);
  const char *spec = NULL;
  if (mapopt_machine_resolve(ctx, "p100x4", diags, &s->machine) != MAPOPT_OK ||
      mapopt_app_resolve(ctx, c->app, diags, &s->app, &spec) != MAPOPT_OK) {
    fixture_print_diags();
    fail();
  }
  mapopt_app_options ao = {.spec = spec, .iterations = -1, .warmup = warmup};
  assert_int_equal(
      mapopt_sim_instantiate(s->machine, s->app, &ao, diags, &s->run),
      MAPOPT_OK);
  mapopt_machine_shape shape;
  mapopt_sim_shape(s->machine, s->run, &shape);
  s->text = mapper_text(c);
  mapopt_dsl_options o = {.file = "m.map", .shape = &shape};
  if (mapopt_dsl_compile(ctx, s->text, strlen(s->text), &o, diags, &s->prog) !=
      MAPOPT_OK) {
    fixture_print_diags();
    fail();
  }
  mapopt_diags_clear(diags);
  mapopt_sim_options so = {0};
  assert_int_equal(
      mapopt_sim_run(ctx, s->machine, s->run, s->prog, &so, &s->res),
      MAPOPT_OK);
}

static void simulate(const sim_case *c, simmed *s) {
  simulate_warmup(c, -1, s);
}

static void simmed_free(simmed *s) {
  mapopt_sim_result_free(s->res);
  mapopt_dsl_free(s->prog);
  free(s->text);
  mapopt_app_run_free(s->run);
  mapopt_app_free(s->app);
  mapopt_machine_free(s->machine);
}

static mapopt_guide_input sim_input(const simmed *s, bool with_inputs) {
  mapopt_guide_input in = {.output = s->res->log,
                           .output_len = strlen(s->res->log),
                           .exit_status = s->res->error ? 1 : 0,
                           .result = s->res};
  if (with_inputs) {
    in.mapper = s->prog;
    in.mapper_text = s->text;
    in.mapper_len = strlen(s->text);
    in.run = s->run;
    in.machine = s->machine;
  }
  return in;
}

static mapopt_findings *analyze_sim(const simmed *s, bool with_inputs) {
  mapopt_guide_input in = sim_input(s, with_inputs);
  mapopt_findings *f = NULL;
  assert_int_equal(mapopt_guide_analyze(ctx, &in, &f), MAPOPT_OK);
  return f;
}

/* Expects finding code for (task, region) with the first edit as given;
 * returns it (owned by f). */
static const mapopt_guide_finding *
expect(const mapopt_findings *f, mapopt_guide_code code, const char *task,
       const char *region, mapopt_guide_edit_kind k, const char *etask,
       const char *eregion, const char *eproc, const char *ecomp,
       const char *value) {
  const mapopt_guide_finding *g = find_code(f, code);
  if (!g || !same(g->task, task) || !same(g->region, region) || !g->nedits ||
      g->edits[0].kind != k ||
      !has_edit(g, k, etask, eregion, eproc, ecomp, value) || !g->message[0] ||
      !g->explain[0] || !g->suggest[0]) {
    print_message("want %s on %s/%s\n", mapopt_guide_code_name(code), task,
                  region ? region : "-");
    print_findings(f);
    fail();
  }
  return g;
}

/* The elapsed time of c with the statement put first. */
static int64_t elapsed_with(const sim_case *c, const char *statement) {
  char pre[512];
  snprintf(pre, sizeof pre, "%s\n%s", statement, c->prepend ? c->prepend : "");
  sim_case d = *c;
  d.prepend = pre;
  simmed s;
  simulate(&d, &s);
  assert_int_equal(s.res->error, MAPOPT_SIM_NONE);
  int64_t t = s.res->elapsed_ns;
  simmed_free(&s);
  return t;
}

/* The statement between the first pair of backquotes of the suggestion. */
static void suggested_statement(const mapopt_guide_finding *g, char *buf,
                                size_t size) {
  const char *a = strchr(g->suggest, '`');
  assert_non_null(a);
  const char *b = strchr(a + 1, '`');
  assert_non_null(b);
  snprintf(buf, size, "%.*s", (int)(b - a - 1), a + 1);
}

/* Circuit's expert keeps rp_shared and rp_ghost in ZCMEM; the atomics of
 * distribute_charge into rp_ghost dominate its time. */
static void test_zc_hot_circuit(void **state) {
  (void)state;
  sim_case c = {"circuit", "expert", NULL, NULL, NULL};
  simmed s;
  simulate(&c, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g =
      expect(f, C(ZC_HOT), "distribute_charge", "rp_ghost", E(MEMORY),
             "distribute_charge", "rp_ghost", "GPU", NULL, "FBMEM");
  assert_non_null(strstr(g->message, "% of GPU time in distribute_charge"));
  assert_true(g->impact > 0.1 && g->impact < 0.5);
  char stmt[256];
  suggested_statement(g, stmt, sizeof stmt);
  assert_string_equal(stmt, "Region distribute_charge rp_ghost GPU FBMEM;");
  /* The metric line comes first, measured against the lower bound. */
  assert_int_equal(mapopt_findings_get(f, 0)->code, C(EXEC_TIME));
  assert_non_null(strstr(mapopt_findings_get(f, 0)->explain, "lower bound"));
  assert_true(elapsed_with(&c, stmt) < s.res->elapsed_ns);
  mapopt_findings_free(f);
  simmed_free(&s);
}

static void test_cpu_on_critical_path(void **state) {
  (void)state;
  sim_case c = {"circuit", "alt-cpu-cnc", NULL, NULL, NULL};
  simmed s;
  simulate(&c, &s);
  mapopt_findings *f = analyze_sim(&s, false); /* the report alone */
  const mapopt_guide_finding *g = expect(
      f, C(CPU_ON_CRITICAL_PATH), "calculate_new_currents", NULL, E(PROC_KINDS),
      "calculate_new_currents", NULL, NULL, NULL, "GPU,CPU");
  char stmt[256];
  suggested_statement(g, stmt, sizeof stmt);
  assert_string_equal(stmt, "Task calculate_new_currents GPU,CPU;");
  /* The statement replaces the mapper's (the first binding wins). */
  assert_true(elapsed_with(&c, stmt) * 10 < s.res->elapsed_ns);
  mapopt_findings_free(f);
  simmed_free(&s);
}

/* distribute_charge and update_voltages on reversed GPUs: update_voltages
 * is ready when its data is, but its GPU is busy with the points of
 * calculate_new_currents placed there for other pieces; the critical path
 * queues there (the copies between the GPUs are small and mostly hidden,
 * so they are no finding). Placed like calculate_new_currents, it runs
 * after its own piece's. The queue forms in the first iteration, behind
 * the tasks that initialize the circuit, and every later iteration keeps
 * it; timed from there (no warm-up) it costs 41% of the run. (After a
 * warm-up, the fence that opens the window drains every GPU, and the
 * iterations after it never form the queue: 0.137 s against 0.237 s.) */
static void test_processor_wait_reverse(void **state) {
  (void)state;
  sim_case c = {"circuit", "alt-reverse-gpu", NULL, NULL, NULL};
  simmed s;
  simulate_warmup(&c, 0, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g = expect(
      f, C(PROCESSOR_WAIT), "update_voltages", NULL, E(INDEX_MAP),
      "update_voltages", NULL, NULL, NULL, "like:calculate_new_currents");
  assert_non_null(strstr(g->message, "busy with calculate_new_currents"));
  assert_non_null(strstr(g->message, "% of the run)"));
  assert_null(find_code(f, C(COPY_BOUND)));
  char stmt[256], after[512];
  suggested_statement(g, stmt, sizeof stmt);
  assert_string_equal(stmt, "IndexTaskMap update_voltages cyclic1d;");
  /* In place of the statement that binds update_voltages now. */
  snprintf(after, sizeof after,
           "IndexTaskMap distribute_charge reverse_gpu;\n%s", stmt);
  sim_case fixed = {"circuit", "alt-reverse-gpu", NULL,
                    "IndexTaskMap distribute_charge, update_voltages", after};
  simmed s2;
  simulate_warmup(&fixed, 0, &s2);
  assert_true(s2.res->elapsed_ns * 3 < s.res->elapsed_ns * 2);
  simmed_free(&s2);
  mapopt_findings_free(f);
  simmed_free(&s);
}

static void test_zc_hot_stencil(void **state) {
  (void)state;
  sim_case c = {"stencil", "expert", "Region * private GPU ZCMEM;", NULL, NULL};
  simmed s;
  simulate(&c, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g =
      expect(f, C(ZC_HOT), "stencil", "private", E(MEMORY), "stencil",
             "private", "GPU", NULL, "FBMEM");
  assert_true(g->impact > 0.3);
  mapopt_findings_free(f);
  simmed_free(&s);
}

/* Cannon at n = 42000 fits only with CollectMemory and InstanceLimit; the
 * remedy the mapper lacks comes first. */
static void test_oom_cannon_large(void **state) {
  (void)state;
  sim_case c = {"cannon:large", "expert", NULL, "CollectMemory", NULL};
  simmed s;
  simulate(&c, &s);
  assert_int_equal(s.res->error, MAPOPT_SIM_OOM);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g =
      expect(f, C(OOM), "task_4", "C_tile", E(COLLECT), "task_4", "*", NULL,
             NULL, "on");
  assert_int_equal(g->category, EE);
  /* InstanceLimit task_4 1 is there already: not suggested. */
  assert_false(has_edit(g, E(INSTANCE_LIMIT), "task_4", NULL, NULL, NULL, "1"));
  mapopt_findings_free(f);
  simmed_free(&s);
  c.drop = "InstanceLimit task_4";
  simulate(&c, &s);
  f = analyze_sim(&s, true);
  expect(f, C(OOM), "task_4", "C_tile", E(INSTANCE_LIMIT), "task_4", NULL, NULL,
         NULL, "1");
  mapopt_findings_free(f);
  simmed_free(&s);
}

static void test_backpressure_johnson(void **state) {
  (void)state;
  sim_case c = {"johnson", "expert", "InstanceLimit task_4 1;", NULL, NULL};
  simmed s;
  simulate(&c, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g =
      expect(f, C(BACKPRESSURE), "task_4", NULL, E(INSTANCE_LIMIT), "task_4",
             NULL, NULL, NULL, "none");
  assert_true(has_edit(g, E(INSTANCE_LIMIT), "task_4", NULL, NULL, NULL, "2"));
  mapopt_findings_free(f);
  simmed_free(&s);
}

/* Every point of stencil and increment on GPU 0. */
static void test_imbalance(void **state) {
  (void)state;
  sim_case c = {"stencil", "expert",
                "def zero(Task t) { return Machine(GPU)[0, 0]; }\n"
                "IndexTaskMap stencil, increment zero;",
                NULL, NULL};
  simmed s;
  simulate(&c, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g =
      expect(f, C(IMBALANCE), "stencil", NULL, E(INDEX_MAP), "stencil", NULL,
             NULL, NULL, "block");
  assert_string_equal(g->subject, "task stencil, function zero");
  assert_non_null(strstr(g->message, "ran on 1 of them"));
  assert_true(g->impact > 0.5);
  mapopt_findings_free(f);
  simmed_free(&s);
}

static void test_aos_few_fields(void **state) {
  (void)state;
  sim_case c = {"stencil", "expert", "Layout * * * AOS C_order;", NULL, NULL};
  simmed s;
  simulate(&c, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g =
      expect(f, C(AOS_FEW_FIELDS), "increment", "private", E(LAYOUT),
             "increment", "private", "GPU", "soa", "SOA");
  char stmt[256];
  suggested_statement(g, stmt, sizeof stmt);
  assert_string_equal(stmt, "Layout increment private GPU SOA;");
  mapopt_findings_free(f);
  simmed_free(&s);
}

/* AOS F_order, which the DSL mapper of Legion cannot have Legion lay out
 * (docs/legion.md): the run fails where the instance is made; the fix is
 * AOS C_order (the first edit) or SOA, and AOS C_order runs. */
static void test_aos_f_order(void **state) {
  (void)state;
  sim_case c = {"stencil", "expert", "Layout stencil private * AOS;", NULL,
                NULL};
  simmed s;
  simulate(&c, &s);
  assert_int_equal(s.res->error, MAPOPT_SIM_LAYOUT);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g =
      expect(f, C(LAYOUT_AOS_ORDER), "stencil", "private", E(LAYOUT), "stencil",
             "private", "*", "order", "C_order");
  assert_true(has_edit(g, E(LAYOUT), "stencil", "private", "*", "soa", "SOA"));
  char stmt[256];
  suggested_statement(g, stmt, sizeof stmt);
  assert_string_equal(stmt, "Layout stencil private * AOS C_order;");
  mapopt_findings_free(f);
  simmed_free(&s);
  sim_case fixed = {"stencil", "expert", stmt, NULL, NULL};
  simulate(&fixed, &s);
  assert_int_equal(s.res->error, MAPOPT_SIM_NONE);
  simmed_free(&s);
}

/* Circuit at its small size: update_voltages is almost all GPU start-up
 * cost, and the CPU (4 us to start) does its little work sooner. */
static void test_overhead_bound(void **state) {
  (void)state;
  sim_case c = {"circuit:small", "expert", NULL, NULL, NULL};
  simmed s;
  simulate(&c, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  expect(f, C(OVERHEAD_BOUND), "update_voltages", NULL, E(PROC_KINDS),
         "update_voltages", NULL, NULL, NULL, "CPU,GPU");
  mapopt_findings_free(f);
  /* Without the machine the per-task cost is unknown: no such finding. */
  f = analyze_sim(&s, false);
  for (size_t i = 0; i < mapopt_findings_count(f); i++)
    assert_true(mapopt_findings_get(f, i)->task == NULL ||
                mapopt_findings_get(f, i)->code != C(OVERHEAD_BOUND));
  mapopt_findings_free(f);
  simmed_free(&s);
}

/* Cannon at n = 45600 fills 93% of a P100's framebuffer. */
static void test_fb_near_capacity(void **state) {
  (void)state;
  sim_case c = {"cannon:large,n=45600", "expert", NULL, NULL, NULL};
  simmed s;
  simulate(&c, &s);
  assert_int_equal(s.res->error, MAPOPT_SIM_NONE);
  mapopt_findings *f = analyze_sim(&s, false);
  expect(f, C(FB_NEAR_CAPACITY), "task_4", NULL, E(COLLECT), "task_4", "*",
         NULL, NULL, "on");
  mapopt_findings_free(f);
  /* The expert has both remedies already: the warning stays, no edit. */
  f = analyze_sim(&s, true);
  const mapopt_guide_finding *g = find_code(f, C(FB_NEAR_CAPACITY));
  assert_non_null(g);
  assert_int_equal(g->nedits, 0);
  assert_non_null(strstr(g->message, "of 15.73 GB"));
  mapopt_findings_free(f);
  simmed_free(&s);
}

/* solomonik's expert limits task_4 to one instance per GPU: half of the
 * critical path waits for InstanceLimit to admit task_4's points, which
 * the attribution puts on task_4 itself. */
static void test_limit_stall(void **state) {
  (void)state;
  sim_case c = {"solomonik", "expert", NULL, NULL, NULL};
  simmed s;
  simulate(&c, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  const mapopt_guide_finding *g =
      expect(f, C(LIMIT_STALL), "task_4", NULL, E(INSTANCE_LIMIT), "task_4",
             NULL, NULL, NULL, "2");
  assert_true(
      has_edit(g, E(INSTANCE_LIMIT), "task_4", NULL, NULL, NULL, "none"));
  char stmt[256];
  suggested_statement(g, stmt, sizeof stmt);
  assert_string_equal(stmt, "InstanceLimit task_4 2;");
  assert_true(elapsed_with(&c, stmt) < s.res->elapsed_ns);
  mapopt_findings_free(f);
  simmed_free(&s);
}

/* ---- saved reports ----------------------------------------------------------
 */

static char *findings_json(const mapopt_findings *f) {
  char *t;
  assert_int_equal(mapopt_guide_findings_json(ctx, f, &t), MAPOPT_OK);
  return t;
}

/* A report read back writes the same text, and gives the same findings. */
static void test_report_round_trip(void **state) {
  (void)state;
  static const sim_case cases[] = {
      {"circuit", "expert", NULL, NULL, NULL},
      {"circuit", "alt-reverse-gpu", NULL, NULL, NULL},
      {"circuit", "alt-cpu-cnc", NULL, NULL, NULL},
      {"stencil", "expert", "Layout * * * AOS C_order;", NULL, NULL},
      {"johnson", "expert", "InstanceLimit task_4 1;", NULL, NULL},
      {"cannon:large", "expert", NULL, "CollectMemory", NULL},
      {"pennant:small", "expert", NULL, NULL, NULL},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    simmed s;
    simulate(&cases[i], &s);
    char *report, *again;
    assert_int_equal(mapopt_sim_report_json(ctx, s.res, false, &report),
                     MAPOPT_OK);
    mapopt_sim_result *back;
    if (mapopt_sim_report_read(ctx, "r.json", report, strlen(report), diags,
                               &back) != MAPOPT_OK) {
      fixture_print_diags();
      fail();
    }
    assert_int_equal(mapopt_sim_report_json(ctx, back, false, &again),
                     MAPOPT_OK);
    assert_string_equal(report, again);
    for (int with = 0; with < 2; with++) {
      mapopt_findings *f = analyze_sim(&s, with);
      mapopt_guide_input in = sim_input(&s, with);
      in.result = back;
      mapopt_findings *g;
      assert_int_equal(mapopt_guide_analyze(ctx, &in, &g), MAPOPT_OK);
      char *a = findings_json(f), *b = findings_json(g);
      assert_string_equal(a, b);
      assert_true(mapopt_findings_count(f) > 0);
      mapopt_text_free(a);
      mapopt_text_free(b);
      mapopt_findings_free(f);
      mapopt_findings_free(g);
    }
    mapopt_text_free(report);
    mapopt_text_free(again);
    mapopt_sim_result_free(back);
    simmed_free(&s);
  }
}

static void test_report_errors(void **state) {
  (void)state;
  /* Each starts with the format (29 more characters), without which a
   * report is refused (test_attrib's test_old_report_refused). */
#define F "{\"format\": \"mapopt-report/2\", "
  fixture_expect_report_error(F "\"status\": ", "r.json:1:41: error:");
  fixture_expect_report_error(
      "[]", "r.json:1:1: error: the report must be an object");
  fixture_expect_report_error(
      F "\"status\": \"ok\", \"bogus\": 1}",
      "r.json:1:47: error: unknown key \"bogus\" in the report");
  fixture_expect_report_error(
      F "\"status\": \"ok\", \"error_class\": \"NOPE\"}",
      "r.json:1:62: error: \"error_class\" in the report has an "
      "unknown value \"NOPE\"");
  fixture_expect_report_error(
      F "\"status\": \"error\", \"error_class\": \"NONE\"}",
      "r.json:1:41: error: \"status\" must be \"ok\"");
#undef F
  /* A real report with one value broken. */
  sim_case c = {"circuit:small", "expert", NULL, NULL, NULL};
  simmed s;
  simulate(&c, &s);
  char *report;
  assert_int_equal(mapopt_sim_report_json(ctx, s.res, false, &report),
                   MAPOPT_OK);
  /* CPU 0 is idle: its busy time is the first "busy_ns": 0. */
  char *p = strstr(report, "\"busy_ns\": 0,");
  assert_non_null(p);
  size_t n = strlen(report) + 8;
  char *broken = malloc(n);
  snprintf(broken, n, "%.*s\"busy_ns\": true%s", (int)(p - report), report,
           p + 12);
  fixture_expect_report_error(broken,
                              "\"busy_ns\" in a processor must be an integer");
  free(broken);
  mapopt_text_free(report);
  simmed_free(&s);
}

/* ---- feedback levels, JSON, names ------------------------------------------
 */

static char *feedback(const mapopt_findings *f, mapopt_guide_level l) {
  char *t;
  assert_int_equal(mapopt_guide_feedback(ctx, f, l, &t), MAPOPT_OK);
  return t;
}

static void test_levels(void **state) {
  (void)state;
  sim_case c = {"circuit", "alt-reverse-gpu", NULL, NULL, NULL};
  simmed s;
  simulate_warmup(&c, 0, &s);
  mapopt_findings *f = analyze_sim(&s, true);
  char *raw = feedback(f, MAPOPT_GUIDE_RAW);
  char *ex = feedback(f, MAPOPT_GUIDE_EXPLAIN);
  char *su = feedback(f, MAPOPT_GUIDE_SUGGEST);
  char *full = feedback(f, MAPOPT_GUIDE_FULL);
  /* raw: the output's own lines only. */
  assert_non_null(strstr(raw, "Performance Metric: ELAPSED TIME = "));
  assert_null(strstr(raw, "Explanation:"));
  assert_null(strstr(raw, "Suggestion:"));
  assert_null(strstr(raw, "Performance: "));
  /* explain and suggest add one kind of line each; full both. */
  assert_non_null(strstr(ex, "Explanation: "));
  assert_null(strstr(ex, "Suggestion:"));
  assert_non_null(strstr(ex, "Performance: update_voltages waits"));
  assert_non_null(strstr(su, "Suggestion: Fixes, with the time each"));
  assert_null(strstr(su, "Explanation:"));
  assert_non_null(strstr(full, "Explanation: "));
  assert_non_null(strstr(full, "Suggestion: "));
  assert_true(strlen(full) > strlen(ex) && strlen(full) > strlen(su));
  /* An error in the full form of the seed paper. */
  text_case oom = text_cases[14];
  mapopt_findings *g = analyze_text(&oom);
  char *t = feedback(g, MAPOPT_GUIDE_FULL);
  assert_true(
      strncmp(t, "Execution Error: Default mapper failed allocation", 49) == 0);
  assert_non_null(strstr(t, "\nExplanation: The data placed in FBMEM"));
  assert_non_null(strstr(t, "\nSuggestion: Add `CollectMemory task_4 *;`"));
  mapopt_text_free(t);
  mapopt_findings_free(g);
  /* Names both ways. */
  for (int l = MAPOPT_GUIDE_RAW; l <= MAPOPT_GUIDE_FULL; l++) {
    mapopt_guide_level back;
    assert_int_equal(
        mapopt_guide_level_parse(mapopt_guide_level_name(l), &back), MAPOPT_OK);
    assert_int_equal(back, l);
  }
  mapopt_guide_level lv;
  assert_int_equal(mapopt_guide_level_parse("verbose", &lv), MAPOPT_ENOTFOUND);
  assert_null(mapopt_guide_level_name((mapopt_guide_level)4));
  assert_int_equal(mapopt_guide_feedback(ctx, f, (mapopt_guide_level)7, &t),
                   MAPOPT_EINVAL);
  mapopt_text_free(raw);
  mapopt_text_free(ex);
  mapopt_text_free(su);
  mapopt_text_free(full);
  mapopt_findings_free(f);
  simmed_free(&s);
}

static void test_names_and_edits(void **state) {
  (void)state;
  for (int c = 0; c < MAPOPT_GUIDE_CODE_COUNT; c++) {
    mapopt_guide_code back;
    const char *n = mapopt_guide_code_name((mapopt_guide_code)c);
    assert_non_null(n);
    assert_int_equal(mapopt_guide_code_parse(n, &back), MAPOPT_OK);
    assert_int_equal(back, c);
  }
  mapopt_guide_code code;
  assert_int_equal(mapopt_guide_code_parse("nope", &code), MAPOPT_ENOTFOUND);
  assert_null(mapopt_guide_code_name(MAPOPT_GUIDE_CODE_COUNT));
  assert_string_equal(mapopt_guide_category_name(MAPOPT_GUIDE_COMPILE_ERROR),
                      "compile-error");
  assert_string_equal(mapopt_guide_edit_kind_name(E(SINGLE_FOLLOW)),
                      "set-single-follow");
  static const struct {
    mapopt_guide_edit e;
    const char *text;
  } edits[] = {
      {{E(MEMORY), "t", "r", "GPU", NULL, "FBMEM", -1},
       "set memory of (t, r, GPU) to FBMEM"},
      {{E(LAYOUT), "t", "*", "CPU", "order", "F_order", -1},
       "set layout order of (t, *, CPU) to F_order"},
      {{E(INDEX_MAP), "a", NULL, NULL, NULL, "like:b", -1},
       "place the points of a like those of b"},
      {{E(INDEX_MAP), "a", NULL, NULL, NULL, "cyclic", -1},
       "set the index mapping of a to cyclic"},
      {{E(PROC_KINDS), "a", NULL, NULL, NULL, "GPU,CPU", -1},
       "set the processor kinds of a to GPU,CPU"},
      {{E(INSTANCE_LIMIT), "a", NULL, NULL, NULL, "none", -1},
       "set InstanceLimit of a to none"},
      {{E(COLLECT), "a", "*", NULL, NULL, "on", -1},
       "set CollectMemory of (a, *) on"},
      {{E(SINGLE_FOLLOW), "a", NULL, NULL, NULL, "parent", -1},
       "a follows its parent's processor"},
  };
  char buf[128];
  for (size_t i = 0; i < sizeof edits / sizeof edits[0]; i++) {
    mapopt_guide_edit_format(&edits[i].e, buf, sizeof buf);
    assert_string_equal(buf, edits[i].text);
  }
}

static void test_json(void **state) {
  (void)state;
  text_case c = text_cases[12]; /* slice-oob with its note */
  mapopt_findings *f = analyze_text(&c);
  char *t = findings_json(f);
  assert_non_null(strstr(t, "\"code\": \"slice-oob\""));
  assert_non_null(strstr(t, "\"category\": \"execution-error\""));
  assert_non_null(strstr(t, "\"line\": 5"));
  assert_non_null(strstr(t, "\"kind\": \"set-index-map\""));
  assert_non_null(strstr(t, "\"text\": \"set the index mapping of k to "
                            "block\""));
  assert_non_null(strstr(t, "\"region\": null"));
  mapopt_text_free(t);
  mapopt_findings_free(f);
}

/* The same inputs give the same bytes. */
static void test_determinism(void **state) {
  (void)state;
  sim_case c = {"circuit", "alt-reverse-gpu", NULL, NULL, NULL};
  char *first = NULL;
  for (int k = 0; k < 2; k++) {
    simmed s;
    simulate(&c, &s);
    mapopt_findings *f = analyze_sim(&s, true);
    char *j = findings_json(f), *t = feedback(f, MAPOPT_GUIDE_FULL);
    size_t n = strlen(j) + strlen(t) + 1;
    char *both = malloc(n);
    snprintf(both, n, "%s%s", j, t);
    if (first) {
      assert_string_equal(first, both);
      free(both);
    } else {
      first = both;
    }
    mapopt_text_free(j);
    mapopt_text_free(t);
    mapopt_findings_free(f);
    simmed_free(&s);
  }
  free(first);
}

static void test_bad_arguments(void **state) {
  (void)state;
  mapopt_findings *f = NULL;
  mapopt_guide_input in = {.output = NULL, .output_len = 3, .exit_status = -1};
  assert_int_equal(mapopt_guide_analyze(ctx, &in, &f), MAPOPT_EINVAL);
  assert_int_equal(mapopt_guide_analyze(NULL, &in, &f), MAPOPT_EINVAL);
  assert_null(f);
  in.output_len = 0; /* nothing at all: an empty list */
  assert_int_equal(mapopt_guide_analyze(ctx, &in, &f), MAPOPT_OK);
  assert_int_equal(mapopt_findings_count(f), 0);
  assert_null(mapopt_findings_get(f, 0));
  char *t;
  assert_int_equal(mapopt_guide_feedback(ctx, f, MAPOPT_GUIDE_FULL, &t),
                   MAPOPT_OK);
  assert_string_equal(t, "");
  mapopt_text_free(t);
  mapopt_findings_free(f);
  mapopt_findings_free(NULL);
}

/* ---- allocation failure
 * ------------------------------------------------------ */

/* Every allocation of analyze, feedback, JSON and the report reader fails
 * in turn: each returns MAPOPT_ENOMEM (or succeeds) and leaks nothing. */
static void test_allocation_failure(void **state) {
  (void)state;
  sim_case c = {"circuit", "alt-reverse-gpu", NULL, NULL, NULL};
  simmed s;
  simulate(&c, &s);
  char *report;
  assert_int_equal(mapopt_sim_report_json(ctx, s.res, false, &report),
                   MAPOPT_OK);
  mapopt_guide_input in = sim_input(&s, true);
  static const char oom_text[] =
      "Default mapper failed allocation of size 8 bytes for region "
      "requirement 2 of task calculate_new_currents in memory FBMEM of node "
      "0\n";
  bool done = false;
  for (long n = 0; !done; n++) {
    failing_alloc fa = {.left = n};
    mapopt_ctx *c2;
    if (mapopt_ctx_new(failing_realloc, &fa, &c2) != MAPOPT_OK)
      continue;
    mapopt_diags *d2 = NULL;
    mapopt_findings *f = NULL;
    mapopt_sim_result *back = NULL;
    char *t = NULL, *j = NULL;
    mapopt_status st = mapopt_diags_new(c2, &d2);
    if (st == MAPOPT_OK)
      st = mapopt_sim_report_read(c2, "r.json", report, strlen(report), d2,
                                  &back);
    mapopt_guide_input in2 = in;
    in2.result = back;
    if (st == MAPOPT_OK &&
        (st = mapopt_guide_analyze(c2, &in2, &f)) == MAPOPT_OK)
      st = mapopt_guide_feedback(c2, f, MAPOPT_GUIDE_FULL, &t);
    if (st == MAPOPT_OK)
      st = mapopt_guide_findings_json(c2, f, &j);
    mapopt_findings *f2 = NULL;
    mapopt_guide_input in3 = {.output = oom_text,
                              .output_len = strlen(oom_text),
                              .exit_status = 1,
                              .run = s.run,
                              .mapper = s.prog};
    if (st == MAPOPT_OK)
      st = mapopt_guide_analyze(c2, &in3, &f2);
    assert_true(st == MAPOPT_OK || st == MAPOPT_ENOMEM);
    if (st == MAPOPT_OK) {
      assert_true(mapopt_findings_count(f) > 2);
      assert_true(mapopt_findings_count(f2) == 1);
    }
    mapopt_findings_free(f2);
    mapopt_text_free(t);
    mapopt_text_free(j);
    mapopt_findings_free(f);
    mapopt_sim_result_free(back);
    mapopt_diags_free(d2);
    mapopt_ctx_free(c2);
    assert_int_equal(fa.live, 0);
    done = st == MAPOPT_OK && !fa.failed; /* no allocation left to fail */
  }
  mapopt_text_free(report);
  simmed_free(&s);
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_text_rules),
      cmocka_unit_test(test_catalogue_findings),
      cmocka_unit_test(test_text_details),
      cmocka_unit_test(test_zc_hot_circuit),
      cmocka_unit_test(test_cpu_on_critical_path),
      cmocka_unit_test(test_processor_wait_reverse),
      cmocka_unit_test(test_zc_hot_stencil),
      cmocka_unit_test(test_oom_cannon_large),
      cmocka_unit_test(test_backpressure_johnson),
      cmocka_unit_test(test_imbalance),
      cmocka_unit_test(test_aos_few_fields),
      cmocka_unit_test(test_aos_f_order),
      cmocka_unit_test(test_overhead_bound),
      cmocka_unit_test(test_fb_near_capacity),
      cmocka_unit_test(test_limit_stall),
      cmocka_unit_test(test_report_round_trip),
      cmocka_unit_test(test_report_errors),
      cmocka_unit_test(test_levels),
      cmocka_unit_test(test_names_and_edits),
      cmocka_unit_test(test_json),
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_bad_arguments),
      cmocka_unit_test(test_allocation_failure),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
