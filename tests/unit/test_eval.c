/*
 * Unit tests of the command evaluator: the template rules (table-driven,
 * errors included), {mapper} substitution, the shell mode with a path full
 * of spaces and quotes, the bounded capture, and evaluations of
 * tests/eval/evalprog -- a program that succeeds, fails, crashes, hangs,
 * leaves children holding its output, prints 100 MB or no metric -- each
 * of which must end with the right status, quickly. Then repeats and their
 * median, determinism, evaluations in parallel threads, the timeout policy,
 * option errors, I/O errors and every allocation failure.
 */
#define _GNU_SOURCE /* pthread_sigmask, realpath */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "eval/eval.h"
#include "failing_alloc.h"
#include "fixture.h"

/* The test program, quoted for a template. */
#define PROG "'" EVALPROG "'"

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* The first diagnostic, formatted, or "". */
static const char *first_diag(void) {
  static char line[512];
  line[0] = '\0';
  if (mapopt_diags_count(diags))
    mapopt_diag_format(mapopt_diags_get(diags, 0), line, sizeof line);
  return line;
}

/* ---- the template -------------------------------------------------------- */

/* A template and its words joined by '|', its shell line, or the start of
 * its diagnostic. */
typedef struct split_case {
  const char *tmpl;
  bool shell;
  const char *want; /* words joined by '|' or the shell line */
  const char *error;
} split_case;

static const split_case split_cases[] = {
    {"prog {mapper}", false, "prog|{mapper}", NULL},
    {"  prog \t -mapping={mapper}  ", false, "prog|-mapping={mapper}", NULL},
    {"prog 'a  b' {mapper}", false, "prog|a  b|{mapper}", NULL},
    {"prog \"a \\\"b\\\" \\\\ \\c\" {mapper}", false,
     "prog|a \"b\" \\ \\c|{mapper}", NULL},
    {"prog a\\ b\\'c {mapper}", false, "prog|a b'c|{mapper}", NULL},
    {"prog '' \"\" {mapper}", false, "prog|||{mapper}", NULL},
    {"prog ab\\\ncd {mapper}", false, "prog|abcd|{mapper}", NULL},
    {"prog \"ab\\\ncd\" {mapper}", false, "prog|abcd|{mapper}", NULL},
    {"p'r'\"o\"g '{mapper}'", false, "prog|{mapper}", NULL},
    {"prog 'a|b;c>d$e*f' a#b a~b x=~ {mapper}", false,
     "prog|a|b;c>d$e*f|a#b|a~b|x=~|{mapper}", NULL},
    {"srun -N2 --ntasks-per-node=4 ./a.out -mapping {mapper} -n 100", false,
     "srun|-N2|--ntasks-per-node=4|./a.out|-mapping|{mapper}|-n|100", NULL},
    {"prog 'abc {mapper}", false, NULL,
     "--run:1:6: error: unterminated single quote"},
    {"prog x \"abc {mapper}", false, NULL,
     "--run:1:8: error: unterminated double quote"},
    {"prog \\\n  'x {mapper}", false, NULL,
     "--run:2:3: error: unterminated single quote"},
    {"prog {mapper} \\", false, NULL,
     "--run:1:15: error: a backslash at the end of the command escapes "
     "nothing"},
    {"prog {mapper} > log", false, NULL,
     "--run:1:15: error: '>' is shell syntax and the command is not run by "
     "a shell: quote it, or give --shell"},
    {"prog {mapper} | cat", false, NULL, "--run:1:15: error: '|' is shell"},
    {"prog {mapper}; x", false, NULL, "--run:1:14: error: ';' is shell"},
    {"prog {mapper} &", false, NULL, "--run:1:15: error: '&' is shell"},
    {"prog $HOME/{mapper}", false, NULL, "--run:1:6: error: '$' is shell"},
    {"prog \"$HOME\" {mapper}", false, NULL,
     "--run:1:7: error: '$' inside double quotes is shell syntax"},
    {"prog `x` {mapper}", false, NULL, "--run:1:6: error: '`' is shell"},
    {"prog *.txt {mapper}", false, NULL, "--run:1:6: error: '*' is shell"},
    {"prog a? {mapper}", false, NULL, "--run:1:7: error: '?' is shell"},
    {"prog [ab] {mapper}", false, NULL, "--run:1:6: error: '[' is shell"},
    {"prog (x) {mapper}", false, NULL, "--run:1:6: error: '(' is shell"},
    {"prog {mapper} # note", false, NULL, "--run:1:15: error: '#' is shell"},
    {"prog ~/x {mapper}", false, NULL, "--run:1:6: error: '~' is shell"},
    {"prog {mapper}\nprog2", false, NULL,
     "--run:1:14: error: a line break is shell syntax"},
    {"prog x", false, NULL,
     "--run:1:1: error: the command has no {mapper}: write {mapper} where "
     "the mapper file's path goes"},
    {"prog {mapp3r}", false, NULL, "--run:1:1: error: the command has no"},
    {" \t ", false, NULL, "--run:1:1: error: empty command"},
    {"", false, NULL, "--run:1:1: error: empty command"},
    /* shell mode: the line, with quoted references to the path */
    {"prog {mapper}", true, "prog \"${MAPOPT_MAPPER}\"", NULL},
    {"prog -m={mapper} > log 2>&1", true,
     "prog -m=\"${MAPOPT_MAPPER}\" > log 2>&1", NULL},
    {"prog \"--m={mapper}x\"", true, "prog \"--m=${MAPOPT_MAPPER}x\"", NULL},
    {"prog '{mapper}' 'a\\'{mapper}", true,
     "prog ''\"${MAPOPT_MAPPER}\"'' 'a\\'\"${MAPOPT_MAPPER}\"", NULL},
    {"echo \"a\\\"{mapper}\" $HOME", true,
     "echo \"a\\\"${MAPOPT_MAPPER}\" $HOME", NULL},
    {"prog \\{mapper}", true, NULL,
     "--run:1:7: error: {mapper} after a backslash"},
    {"prog '{mapper}", true, NULL,
     "--run:1:6: error: unterminated single quote"},
    {"prog \"x\\\" {mapper}", true, NULL,
     "--run:1:6: error: unterminated double quote"},
    {"prog $MAPOPT_MAPPER", true, NULL, "--run:1:1: error: the command has no"},
};

static void test_split(void **state) {
  (void)state;
  for (size_t i = 0; i < sizeof split_cases / sizeof split_cases[0]; i++) {
    const split_case *c = &split_cases[i];
    mapopt_diags_clear(diags);
    mapopt__eval_cmd cmd;
    mapopt_status st =
        mapopt__eval_cmd_parse(ctx, c->tmpl, c->shell, diags, &cmd);
    if (c->error) {
      if (st != MAPOPT_EINVAL ||
          strncmp(first_diag(), c->error, strlen(c->error)) != 0)
        fail_msg("case %zu '%s': got status %d and '%s', want '%s'", i, c->tmpl,
                 st, first_diag(), c->error);
      assert_int_equal(mapopt_diags_count(diags), 1);
      continue;
    }
    if (st != MAPOPT_OK)
      fail_msg("case %zu '%s': %s", i, c->tmpl, first_diag());
    char got[512] = "";
    if (c->shell) {
      snprintf(got, sizeof got, "%s", cmd.line);
    } else {
      for (size_t w = 0; w < cmd.nwords; w++)
        snprintf(got + strlen(got), sizeof got - strlen(got), "%s%s",
                 w ? "|" : "", cmd.words[w]);
    }
    if (strcmp(got, c->want) != 0)
      fail_msg("case %zu '%s': got '%s', want '%s'", i, c->tmpl, got, c->want);
    mapopt__eval_cmd_destroy(ctx, &cmd);
  }
}

static void test_substitute(void **state) {
  (void)state;
  mapopt__eval_cmd cmd;
  assert_int_equal(mapopt__eval_cmd_parse(ctx,
                                          "prog -mapping={mapper} {mapper}"
                                          "{mapper} x",
                                          false, diags, &cmd),
                   MAPOPT_OK);
  char **argv;
  size_t argc;
  assert_int_equal(
      mapopt__eval_cmd_argv(ctx, &cmd, "/t/a b'c/m.map", &argv, &argc),
      MAPOPT_OK);
  assert_int_equal(argc, 4);
  assert_string_equal(argv[0], "prog");
  assert_string_equal(argv[1], "-mapping=/t/a b'c/m.map");
  assert_string_equal(argv[2], "/t/a b'c/m.map/t/a b'c/m.map");
  assert_string_equal(argv[3], "x");
  assert_null(argv[4]);
  mapopt__eval_argv_free(ctx, argv);
  mapopt__eval_cmd_destroy(ctx, &cmd);
  /* The shell mode never puts the path in the line. */
  assert_int_equal(
      mapopt__eval_cmd_parse(ctx, "prog {mapper}", true, diags, &cmd),
      MAPOPT_OK);
  assert_int_equal(
      mapopt__eval_cmd_argv(ctx, &cmd, "/t/$(rm -rf x)/m.map", &argv, &argc),
      MAPOPT_OK);
  assert_int_equal(argc, 3);
  assert_string_equal(argv[0], "/bin/sh");
  assert_string_equal(argv[1], "-c");
  assert_string_equal(argv[2], "prog \"${MAPOPT_MAPPER}\"");
  mapopt__eval_argv_free(ctx, argv);
  mapopt__eval_cmd_destroy(ctx, &cmd);
}

/* ---- the capture --------------------------------------------------------- */

/* Feeds text to a capture of cap bytes in chunks of chunk bytes. */
static char *capture(const char *text, size_t cap, size_t chunk,
                     uint64_t *dropped) {
  mapopt__capture c;
  mapopt__capture_init(&c, ctx, cap);
  size_t n = strlen(text);
  for (size_t off = 0; off < n; off += chunk)
    assert_int_equal(
        mapopt__capture_add(&c, text + off, n - off < chunk ? n - off : chunk),
        MAPOPT_OK);
  assert_int_equal(c.total, n);
  char *out;
  size_t len;
  assert_int_equal(mapopt__capture_text(&c, &out, &len, dropped), MAPOPT_OK);
  assert_int_equal(strlen(out), len);
  mapopt__capture_destroy(&c);
  return out;
}

static void test_capture(void **state) {
  (void)state;
  uint64_t dropped;
  /* Under the cap: everything, for any chunking. */
  for (size_t chunk = 1; chunk < 8; chunk++) {
    char *t = capture("hello\nworld\n", 1024, chunk, &dropped);
    assert_string_equal(t, "hello\nworld\n");
    assert_int_equal(dropped, 0);
    free(t);
  }
  /* Over it: head 16 bytes (a quarter of 64), tail from a line start. */
  char big[4096] = "";
  for (int i = 0; i < 100; i++)
    snprintf(big + strlen(big), sizeof big - strlen(big), "line %02d\n", i);
  const char *want = "line 00\nline 01\n[mapopt: 736 bytes of output "
                     "dropped]\nline 94\nline 95\nline 96\nline 97\n"
                     "line 98\nline 99\n";
  for (size_t chunk = 1; chunk < 100; chunk += 7) {
    char *t = capture(big, 64, chunk, &dropped);
    assert_string_equal(t, want);
    assert_int_equal(dropped, strlen(big) - 16 - 48);
    free(t);
  }
  /* A tail that starts inside a line starts at the next line; a head that
   * ends inside one ends at the line before. */
  const char *want2 = "line 00\n[mapopt: 752 bytes of output "
                      "dropped]\nline 95\nline 96\nline 97\nline 98\n"
                      "line 99\n";
  char *t2 = capture(big, 60, 5, &dropped);
  assert_string_equal(t2, want2);
  free(t2);
  /* No newline in the tail: kept whole; NUL bytes become spaces. */
  mapopt__capture c;
  mapopt__capture_init(&c, ctx, 8);
  assert_int_equal(mapopt__capture_add(&c, "ab\0cdefghijkl", 13), MAPOPT_OK);
  char *t;
  size_t len;
  assert_int_equal(mapopt__capture_text(&c, &t, &len, &dropped), MAPOPT_OK);
  assert_string_equal(t, "ab\n[mapopt: 5 bytes of output dropped]\nghijkl");
  assert_int_equal(dropped, 5);
  free(t);
  mapopt__capture_destroy(&c);
  mapopt__capture_init(&c, ctx, 1024);
  assert_int_equal(mapopt__capture_add(&c, "a\0b", 3), MAPOPT_OK);
  assert_int_equal(mapopt__capture_text(&c, &t, &len, &dropped), MAPOPT_OK);
  assert_int_equal(len, 3);
  assert_string_equal(t, "a b");
  free(t);
  mapopt__capture_destroy(&c);
}

/* ---- evaluations --------------------------------------------------------- */

/* Evaluates mapper with opts; the evaluator must build. */
static mapopt_eval_result *eval_opts(const mapopt_eval_options *opts,
                                     const char *mapper, double timeout_s) {
  mapopt_diags_clear(diags);
  mapopt_evaluator *ev;
  if (mapopt_eval_new(ctx, opts, diags, &ev) != MAPOPT_OK)
    fail_msg("mapopt_eval_new: %s", first_diag());
  mapopt_eval_result *r;
  mapopt_status st =
      mapopt_eval_run(ev, mapper, strlen(mapper), timeout_s, diags, &r);
  if (st != MAPOPT_OK)
    fail_msg("mapopt_eval_run: %s: %s", mapopt_strerror(st), first_diag());
  mapopt_eval_free(ev);
  return r;
}

static mapopt_eval_result *eval_cmd(const char *run, double timeout_s) {
  mapopt_eval_options o = {.run = run};
  return eval_opts(&o, "Task * CPU;\n# value=2.5\n", timeout_s);
}

static void check(const mapopt_eval_result *r, mapopt_eval_status status,
                  const char *summary) {
  if (r->status != status || strcmp(r->summary, summary) != 0)
    fail_msg("got %s '%s', want %s '%s'; output:\n%s",
             mapopt_eval_status_name(r->status), r->summary,
             mapopt_eval_status_name(status), summary, r->output);
}

static void test_ok(void **state) {
  (void)state;
  double t0 = now_s();
  mapopt_eval_result *r = eval_cmd(PROG " value {mapper}", 30);
  double around = now_s() - t0; /* the run's wall time lies within it */
  check(r, MAPOPT_EVAL_OK, "ok: time 2.5 s");
  assert_int_equal(r->exit_code, 0);
  assert_int_equal(r->signal, 0);
  assert_int_equal(r->runs, 1);
  assert_true(r->metric == 2.5 && r->values[0] == 2.5);
  assert_string_equal(r->metric_name, "time");
  assert_string_equal(r->metric_unit, "s");
  assert_int_equal(r->direction, MAPOPT_EVAL_LOWER);
  assert_string_equal(r->output, "mapper read\nELAPSED TIME = 2.500 s\n");
  assert_int_equal(r->output_bytes, r->output_len);
  assert_int_equal(r->output_dropped, 0);
  assert_true(r->wall_s[0] > 0 && r->wall_s[0] <= around);
  assert_null(r->dir);
  /* The private directory is gone. */
  struct stat st;
  assert_non_null(r->argv[2]);
  assert_int_equal(stat(r->argv[2], &st), -1);
  mapopt_eval_result_free(r);
}

static void test_failures(void **state) {
  (void)state;
  mapopt_eval_result *r = eval_cmd(PROG " fail {mapper}", 30);
  check(r, MAPOPT_EVAL_FAILED,
        "failed: exit status 3: error: the mapper asks for 9 GPUs");
  assert_int_equal(r->exit_code, 3);
  assert_true(isnan(r->metric));
  assert_null(r->metric_name);
  /* stdout and stderr merged in the order they were written */
  assert_string_equal(r->output,
                      "starting\nerror: the mapper asks for 9 GPUs\n");
  mapopt_eval_result_free(r);

  r = eval_cmd(PROG " segv {mapper}", 30);
  check(r, MAPOPT_EVAL_SIGNALED,
        "signal: killed by SIGSEGV (signal 11): about to crash");
  assert_int_equal(r->signal, SIGSEGV);
  assert_int_equal(r->exit_code, -1);
  mapopt_eval_result_free(r);

  r = eval_cmd(PROG " nometric {mapper}", 30);
  check(r, MAPOPT_EVAL_NO_METRIC,
        "no-metric: exit status 0 but no output line matched 'achieved "
        "GFLOPS per node: x', 'GFLOPS = x' or 'ELAPSED TIME = x s'");
  assert_int_equal(r->exit_code, 0);
  assert_string_equal(r->output, "done\n");
  mapopt_eval_result_free(r);

  r = eval_cmd("/nonexistent/prog {mapper}", 30);
  check(r, MAPOPT_EVAL_START_FAILED,
        "start-failed: /nonexistent/prog: No such file or directory");
  assert_string_equal(r->output, "/nonexistent/prog: No such file or "
                                 "directory");
  assert_int_equal(r->exit_code, -1);
  mapopt_eval_result_free(r);

  r = eval_cmd("no-such-command-mapopt {mapper}", 30);
  check(r, MAPOPT_EVAL_START_FAILED,
        "start-failed: no-such-command-mapopt: command not found");
  mapopt_eval_result_free(r);

  /* A relative program is taken from the working directory. */
  r = eval_cmd("./prog {mapper}", 30);
  assert_int_equal(r->status, MAPOPT_EVAL_START_FAILED);
  assert_non_null(strstr(r->summary, "./prog: No such file or directory "
                                     "(relative to the working directory "));
  mapopt_eval_result_free(r);

  mapopt_eval_options o = {.run = PROG " value {mapper}",
                           .workdir = "/nonexistent"};
  r = eval_opts(&o, "value=1", 30);
  check(r, MAPOPT_EVAL_START_FAILED,
        "start-failed: cannot enter the working directory /nonexistent: No "
        "such file or directory");
  mapopt_eval_result_free(r);
}

/* The wall-clock bound of the supervisor's tests: each case takes well
 * under a second when the supervisor works, and 20 s (a held pipe, a
 * 20 s grace period) or forever when it does not, so half of the 20 s
 * separates the two on a loaded machine under the sanitizers too. */
#define STUCK_S 10.0

static void test_timeouts(void **state) {
  (void)state;
  double t0 = now_s();
  mapopt_eval_result *r = eval_cmd(PROG " hang {mapper}", 0.3);
  check(r, MAPOPT_EVAL_TIMEOUT,
        "timeout: still running after 0.3 s; process group killed with "
        "SIGTERM");
  assert_int_equal(r->signal, SIGTERM);
  assert_string_equal(r->output, "hanging\n");
  assert_true(r->wall_s[0] >= 0.3);
  assert_true(now_s() - t0 < STUCK_S);
  mapopt_eval_result_free(r);

  /* A command that ignores SIGTERM gets SIGKILL after the grace period. */
  mapopt_eval_options o = {.run = PROG " stubborn {mapper}", .grace_s = 0.2};
  t0 = now_s();
  r = eval_opts(&o, "value=1", 0.3);
  check(r, MAPOPT_EVAL_TIMEOUT,
        "timeout: still running after 0.3 s; process group killed with "
        "SIGTERM, then SIGKILL");
  assert_int_equal(r->signal, SIGKILL);
  assert_true(now_s() - t0 < STUCK_S);
  mapopt_eval_result_free(r);

  /* The caller's blocked SIGTERM is not inherited: the command still dies
   * of SIGTERM, long before the grace period ends. */
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &term, &old);
  o = (mapopt_eval_options){.run = PROG " hang {mapper}", .grace_s = 20};
  t0 = now_s();
  r = eval_opts(&o, "value=1", 0.2);
  pthread_sigmask(SIG_SETMASK, &old, NULL);
  assert_int_equal(r->status, MAPOPT_EVAL_TIMEOUT);
  assert_int_equal(r->signal, SIGTERM);
  assert_true(now_s() - t0 < STUCK_S);
  mapopt_eval_result_free(r);
}

/* The state of process pid from /proc: 0 when it is gone. */
static char proc_state(long pid) {
  char path[64], buf[512];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "r");
  if (!f)
    return 0;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *p = strrchr(buf, ')');
  return p && p[1] == ' ' ? p[2] : 0;
}

static void test_leftovers(void **state) {
  (void)state;
  /* A grandchild in the group holding the output: killed, not waited
   * for. */
  double t0 = now_s();
  mapopt_eval_result *r = eval_cmd(PROG " grandchild {mapper}", 10);
  check(r, MAPOPT_EVAL_OK, "ok: time 0.25 s");
  assert_true(now_s() - t0 < STUCK_S);
  mapopt_eval_result_free(r);

  /* A shell's background child, whose pid is known: it is gone (or a zombie
   * waiting for its new parent) soon after -- polled for up to STUCK_S, the
   * bound that separates a killed process from one left running. */
  mapopt_eval_options o = {.run = "sh -c 'sleep 600 & echo pid=$!; "
                                  "echo ELAPSED TIME = 1 s' {mapper}"};
  r = eval_opts(&o, "value=1", 10);
  check(r, MAPOPT_EVAL_OK, "ok: time 1 s");
  const char *p = strstr(r->output, "pid=");
  assert_non_null(p);
  long pid = atol(p + 4);
  char s = 'R';
  for (double t = now_s();
       (s = proc_state(pid)) != 0 && s != 'Z' && now_s() - t < STUCK_S;)
    usleep(10000);
  assert_true(s == 0 || s == 'Z');
  mapopt_eval_result_free(r);

  /* A child that left the group and holds the output for 20 s. */
  t0 = now_s();
  r = eval_cmd(PROG " escape {mapper}", 10);
  check(r, MAPOPT_EVAL_OK, "ok: time 0.5 s");
  assert_true(now_s() - t0 < STUCK_S);
  mapopt_eval_result_free(r);
}

/* The pid after "child=" in the output (a descendant evalprog flee
 * started). */
static long child_pid(const mapopt_eval_result *r) {
  const char *p = strstr(r->output, "child=");
  if (!p)
    fail_msg("no child= in the output:\n%s", r->output);
  return atol(p + 6);
}

/* Whether process pid is gone: mapopt_eval_run returns only when every
 * process of the evaluation has been killed and reaped, so this is known
 * the moment it returns. */
static bool gone(long pid) {
  return kill((pid_t)pid, 0) == -1 && errno == ESRCH;
}

/*
 * Descendants that leave the command's process group -- setpgid(0, 0),
 * setsid(), a daemon's double fork -- are killed with the rest when the
 * command exits and when it times out: none outlives its evaluation (or
 * sees its directory removed under it).
 */
static void test_escapees(void **state) {
  (void)state;
  static const char *const how[] = {"group", "session", "daemon"};
  for (size_t i = 0; i < sizeof how / sizeof how[0]; i++) {
    char run[PATH_MAX + 64];
    snprintf(run, sizeof run, PROG " flee %s {mapper}", how[i]);
    mapopt_eval_result *r = eval_cmd(run, 30);
    check(r, MAPOPT_EVAL_OK, "ok: time 0.5 s");
    long pid = child_pid(r);
    if (!gone(pid))
      fail_msg("flee %s: process %ld outlived its evaluation", how[i], pid);
    mapopt_eval_result_free(r);
    snprintf(run, sizeof run, PROG " flee-hang %s {mapper}", how[i]);
    mapopt_eval_options o = {.run = run, .grace_s = 0.1};
    r = eval_opts(&o, "value=1", 0.2);
    assert_int_equal(r->status, MAPOPT_EVAL_TIMEOUT);
    pid = child_pid(r);
    if (!gone(pid))
      fail_msg("flee-hang %s: process %ld outlived its timeout", how[i], pid);
    mapopt_eval_result_free(r);
  }
}

/* A caller that ignores SIGCHLD (its children are reaped by the kernel)
 * still gets the command's exit status: the supervisor reports it. */
static void test_sigchld_ignored(void **state) {
  (void)state;
  struct sigaction ign = {.sa_handler = SIG_IGN}, old;
  sigemptyset(&ign.sa_mask);
  sigaction(SIGCHLD, &ign, &old);
  mapopt_eval_result *r = eval_cmd(PROG " fail {mapper}", 30);
  sigaction(SIGCHLD, &old, NULL);
  check(r, MAPOPT_EVAL_FAILED,
        "failed: exit status 3: error: the mapper asks for 9 GPUs");
  mapopt_eval_result_free(r);
}

/* A run that is stopped (the tuner's SIGINT or SIGTERM): its command is
 * ended at once, the evaluation is interrupted, nothing is left. */
static volatile sig_atomic_t stop_flag;
static char ready_path[64];

static void *raise_stop(void *arg) {
  (void)arg;
  /* Set the flag once the command has started (it creates the file). */
  for (int i = 0; i < 3000 && access(ready_path, F_OK) != 0; i++)
    usleep(10000);
  stop_flag = 1;
  return NULL;
}

static void test_stop(void **state) {
  (void)state;
  snprintf(ready_path, sizeof ready_path, "/tmp/mapopt-test-ready-XXXXXX");
  int fd = mkstemp(ready_path);
  assert_true(fd >= 0);
  close(fd);
  unlink(ready_path);
  char env0[96];
  snprintf(env0, sizeof env0, "EVALPROG_READY=%s", ready_path);
  const char *env[] = {env0, NULL};
  mapopt_eval_options o = {.run = PROG " flee-hang session {mapper}",
                           .env = env,
                           .repeat = 3,
                           .grace_s = 0.1,
                           .stop = &stop_flag};
  stop_flag = 0;
  pthread_t th;
  assert_int_equal(pthread_create(&th, NULL, raise_stop, NULL), 0);
  mapopt_eval_result *r = eval_opts(&o, "value=1", 600);
  assert_int_equal(pthread_join(th, NULL), 0);
  check(r, MAPOPT_EVAL_INTERRUPTED,
        "interrupted in run 1 of 3: stopped; process group killed with "
        "SIGTERM");
  assert_int_equal(r->runs, 1);
  assert_true(gone(child_pid(r)));
  mapopt_eval_result_free(r);
  /* Stopped before it starts: nothing runs. */
  unlink(ready_path);
  r = eval_opts(&o, "value=1", 600);
  check(r, MAPOPT_EVAL_INTERRUPTED, "interrupted: stopped before run 1 of 3");
  assert_int_equal(r->runs, 0);
  assert_int_equal(access(ready_path, F_OK), -1);
  mapopt_eval_result_free(r);
  stop_flag = 0;
}

/*
 * A relative --tmpdir or TMPDIR is taken from the working directory of the
 * caller, not of the command (which runs in the private directory): the
 * mapper's path handed to the command is absolute.
 */
static void test_relative_tmpdir(void **state) {
  (void)state;
  char base[] = "/tmp/mapopt-test-rel-XXXXXX", old[PATH_MAX];
  assert_non_null(mkdtemp(base));
  assert_non_null(getcwd(old, sizeof old));
  assert_int_equal(chdir(base), 0);
  assert_int_equal(mkdir("rel", 0700), 0);
  const char *saved = getenv("TMPDIR");
  char *keep = saved ? strdup(saved) : NULL;
  for (int k = 0; k < 2; k++) {
    mapopt_eval_options o = {.run = PROG " path {mapper}"};
    if (k == 0)
      o.tmpdir = "rel";
    else
      setenv("TMPDIR", "./rel", 1);
    mapopt_eval_result *r = eval_opts(&o, "value=4.25", 30);
    check(r, MAPOPT_EVAL_OK, "ok: time 4.25 s");
    assert_string_equal(r->output,
                        "same=1 readable=1\nELAPSED TIME = 4.250 s\n");
    assert_true(r->argv[2][0] == '/');
    mapopt_eval_result_free(r);
  }
  if (keep)
    setenv("TMPDIR", keep, 1);
  else
    unsetenv("TMPDIR");
  free(keep);
  assert_int_equal(rmdir("rel"), 0);
  assert_int_equal(chdir(old), 0);
  assert_int_equal(rmdir(base), 0);
}

/*
 * The metric scan: an empty match at the very end of the output (after its
 * last line) is no line and is not read past; a number longer than any
 * buffer is read whole (1e70 written out in 71 digits); a long non-number
 * is quoted cut, with "...".
 */
static void test_metric_edges(void **state) {
  (void)state;
  mapopt_eval_options o = {.run = PROG " print 1.5 {mapper}",
                           .metric = "^([0-9.]*)",
                           .direction = MAPOPT_EVAL_HIGHER};
  mapopt_eval_result *r = eval_opts(&o, "value=1", 30);
  check(r, MAPOPT_EVAL_OK, "ok: metric 1.5");
  mapopt_eval_result_free(r);
  char digits[80], run[PATH_MAX + 160];
  memset(digits, '0', sizeof digits);
  digits[0] = '1';
  digits[71] = '\0';
  snprintf(run, sizeof run, PROG " print 'GFLOPS = %s GFLOPS' {mapper}",
           digits);
  r = eval_cmd(run, 30);
  check(r, MAPOPT_EVAL_OK, "ok: gflops 1e+70 GFLOP/s");
  assert_true(r->metric == 1e70);
  mapopt_eval_result_free(r);
  memset(digits, 'a', 79);
  digits[79] = '\0';
  snprintf(run, sizeof run, PROG " print 'time: %s' {mapper}", digits);
  o = (mapopt_eval_options){.run = run, .metric = "time: ([a-z]+)"};
  r = eval_opts(&o, "value=1", 30);
  assert_int_equal(r->status, MAPOPT_EVAL_NO_METRIC);
  char want[160];
  snprintf(want, sizeof want,
           "no-metric: the metric '%.60s...' is not a "
           "number",
           digits);
  check(r, MAPOPT_EVAL_NO_METRIC, want);
  mapopt_eval_result_free(r);
}

static void test_flood(void **state) {
  (void)state;
  struct rusage ru0, ru1;
  getrusage(RUSAGE_SELF, &ru0);
  mapopt_eval_options o = {.run = PROG " flood 100 {mapper}",
                           .output_cap = 64 * 1024};
  mapopt_eval_result *r = eval_opts(&o, "value=1", 120);
  getrusage(RUSAGE_SELF, &ru1);
  check(r, MAPOPT_EVAL_OK, "ok: gflops 7.5 GFLOP/s");
  const uint64_t printed = 100ull * 1024 * 1024 + strlen("GFLOPS = 7.5 "
                                                         "GFLOPS\n");
  assert_int_equal(r->output_bytes, printed);
  /* At most the cap is kept, plus the marker line, which says how much
   * was dropped. */
  char marker[80];
  snprintf(marker, sizeof marker, "[mapopt: %llu bytes of output dropped]\n",
           (unsigned long long)r->output_dropped);
  assert_true(r->output_len <= 64 * 1024 + strlen(marker));
  assert_true(r->output_len > 32 * 1024);
  assert_int_equal(r->output_bytes - r->output_dropped,
                   r->output_len - strlen(marker));
  assert_true(r->output_dropped > printed - 64 * 1024);
  const char *m = strstr(r->output, marker);
  assert_non_null(m);
  assert_true(m[-1] == '\n' && !strncmp(m + strlen(marker), "xxxx", 4));
  /* Memory stayed bounded: far less than the 100 MB printed. */
  assert_true(ru1.ru_maxrss - ru0.ru_maxrss < 40 * 1024);
  mapopt_eval_result_free(r);
}

static void test_metric_forms(void **state) {
  (void)state;
  static const struct {
    const char *mode, *summary, *name;
    double value;
    mapopt_eval_direction dir;
  } cases[] = {
      {"time", "ok: time 1.5 s", "time", 1.5, MAPOPT_EVAL_LOWER},
      {"gflops", "ok: gflops 12.5 GFLOP/s", "gflops", 12.5, MAPOPT_EVAL_HIGHER},
      {"pernode", "ok: gflops-per-node 33.25 GFLOP/s per node",
       "gflops-per-node", 33.25, MAPOPT_EVAL_HIGHER},
      {"both", "ok: gflops 50 GFLOP/s", "gflops", 50, MAPOPT_EVAL_HIGHER},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char run[PATH_MAX + 64];
    snprintf(run, sizeof run, PROG " %s {mapper}", cases[i].mode);
    mapopt_eval_result *r = eval_cmd(run, 30);
    check(r, MAPOPT_EVAL_OK, cases[i].summary);
    assert_string_equal(r->metric_name, cases[i].name);
    assert_true(r->metric == cases[i].value);
    assert_int_equal(r->direction, cases[i].dir);
    mapopt_eval_result_free(r);
  }
  /* A custom metric: the last match counts; direction as given. */
  mapopt_eval_options o = {.run = PROG " print 'score 7\nscore 42 ok' "
                                       "{mapper}",
                           .metric = "^score ([0-9]+)",
                           .direction = MAPOPT_EVAL_HIGHER};
  mapopt_eval_result *r = eval_opts(&o, "value=1", 30);
  check(r, MAPOPT_EVAL_OK, "ok: metric 42");
  assert_string_equal(r->metric_name, "metric");
  assert_string_equal(r->metric_unit, "");
  assert_int_equal(r->direction, MAPOPT_EVAL_HIGHER);
  mapopt_eval_result_free(r);
  o.metric = "time: ([a-z]+)";
  o.run = PROG " print 'time: abc' {mapper}";
  r = eval_opts(&o, "value=1", 30);
  check(r, MAPOPT_EVAL_NO_METRIC,
        "no-metric: the metric 'abc' is not a "
        "number");
  mapopt_eval_result_free(r);
  o.metric = "time: ([0-9]+)";
  r = eval_opts(&o, "value=1", 30);
  check(r, MAPOPT_EVAL_NO_METRIC,
        "no-metric: exit status 0 but no output "
        "line matched --metric 'time: ([0-9]+)'");
  assert_string_equal(r->metric_name, "metric");
  mapopt_eval_result_free(r);
}

/* Reads the whole file at path into buf. */
static void slurp(const char *path, char *buf, size_t size) {
  FILE *f = fopen(path, "r");
  assert_non_null(f);
  size_t n = fread(buf, 1, size - 1, f);
  buf[n] = '\0';
  fclose(f);
}

static void test_repeat(void **state) {
  (void)state;
  mapopt_eval_options o = {.run = PROG " count 5 1 3 {mapper}", .repeat = 3};
  mapopt_eval_result *r = eval_opts(&o, "value=1", 30);
  check(r, MAPOPT_EVAL_OK, "ok: time 3 s (median of 3 runs)");
  assert_int_equal(r->runs, 3);
  assert_true(r->values[0] == 5 && r->values[1] == 1 && r->values[2] == 3);
  for (int i = 0; i < 3; i++)
    assert_true(r->wall_s[i] > 0);
  /* one run's wall time: the middle one of the three */
  int below = 0, above = 0;
  for (int i = 0; i < 3; i++) {
    below += r->wall_s[i] <= r->wall_median_s;
    above += r->wall_s[i] >= r->wall_median_s;
  }
  assert_true(below >= 2 && above >= 2);
  mapopt_eval_result_free(r);

  o = (mapopt_eval_options){.run = PROG " count 4 1 3 2 {mapper}", .repeat = 4};
  r = eval_opts(&o, "value=1", 30);
  check(r, MAPOPT_EVAL_OK, "ok: time 2.5 s (median of 4 runs)");
  mapopt_eval_result_free(r);

  /* The third run fails (no value for it): the evaluation stops there. */
  o = (mapopt_eval_options){.run = PROG " count 4 1 {mapper}", .repeat = 5};
  r = eval_opts(&o, "value=1", 30);
  check(r, MAPOPT_EVAL_FAILED, "failed in run 3 of 5: exit status 5");
  assert_int_equal(r->runs, 3);
  assert_true(r->values[1] == 1 && isnan(r->values[2]));
  mapopt_eval_result_free(r);

  /* Kept: the directory holds the mapper and what the runs wrote. */
  o = (mapopt_eval_options){
      .run = PROG " count 1 2 {mapper}", .repeat = 2, .keep = true};
  r = eval_opts(&o, "Task * GPU;\n", 30);
  check(r, MAPOPT_EVAL_OK, "ok: time 1.5 s (median of 2 runs)");
  assert_non_null(r->dir);
  char path[PATH_MAX], buf[64];
  snprintf(path, sizeof path, "%s/mapper.map", r->dir);
  assert_string_equal(r->argv[4], path);
  slurp(path, buf, sizeof buf);
  assert_string_equal(buf, "Task * GPU;\n");
  assert_int_equal(unlink(path), 0);
  snprintf(path, sizeof path, "%s/count", r->dir);
  slurp(path, buf, sizeof buf);
  assert_string_equal(buf, "2\n");
  assert_int_equal(unlink(path), 0);
  assert_int_equal(rmdir(r->dir), 0);
  mapopt_eval_result_free(r);
}

/* A repeats callback: once more while the values so far sum below 6;
 * it notes the direction it was given. */
static mapopt_eval_direction seen_direction;
static bool below_six(void *ud, const double *values, int n,
                      mapopt_eval_direction direction) {
  (void)ud;
  seen_direction = direction;
  double sum = 0;
  for (int i = 0; i < n; i++)
    sum += values[i];
  return sum < 6;
}
static bool always(void *ud, const double *values, int n,
                   mapopt_eval_direction direction) {
  (void)ud, (void)values, (void)n, (void)direction;
  return true;
}

/* Repeats decided as the runs go (mapopt_eval_run_repeats): the callback
 * stops them between min and max; max bounds them; counts out of range
 * are refused. */
static void test_repeats_decided(void **state) {
  (void)state;
  mapopt_eval_options o = {.run = PROG " count 5 1 3 2 {mapper}"};
  mapopt_evaluator *ev;
  assert_int_equal(mapopt_eval_new(ctx, &o, diags, &ev), MAPOPT_OK);
  mapopt_eval_repeats rep = {1, 5, below_six, NULL};
  mapopt_eval_result *r;
  seen_direction = MAPOPT_EVAL_HIGHER;
  assert_int_equal(
      mapopt_eval_run_repeats(ev, "value=1", 7, 30, &rep, diags, &r),
      MAPOPT_OK);
  check(r, MAPOPT_EVAL_OK, "ok: time 3 s (median of 2 runs)");
  assert_int_equal(seen_direction, MAPOPT_EVAL_LOWER);
  mapopt_eval_result_free(r);
  mapopt_eval_free(ev);

  assert_int_equal(mapopt_eval_new(ctx, &o, diags, &ev), MAPOPT_OK);
  rep = (mapopt_eval_repeats){2, 3, always, NULL};
  assert_int_equal(
      mapopt_eval_run_repeats(ev, "value=1", 7, 30, &rep, diags, &r),
      MAPOPT_OK);
  check(r, MAPOPT_EVAL_OK, "ok: time 3 s (median of 3 runs)");
  mapopt_eval_result_free(r);
  rep = (mapopt_eval_repeats){1, 1001, always, NULL};
  mapopt_diags_clear(diags);
  assert_int_equal(
      mapopt_eval_run_repeats(ev, "value=1", 7, 30, &rep, diags, &r),
      MAPOPT_EINVAL);
  mapopt_diags_clear(diags);
  mapopt_eval_free(ev);
}

/* The child's surroundings: environment, working directory, stdin,
 * descriptors, and the order of its two output streams. */
static void test_child_setup(void **state) {
  (void)state;
  const char *env[] = {"MAPOPT_TEST_VAR=a b 'c'", "HOME=/elsewhere", NULL};
  mapopt_eval_options o = {.run = PROG " env MAPOPT_TEST_VAR {mapper}",
                           .env = env};
  mapopt_eval_result *r = eval_opts(&o, "value=1", 30);
  assert_string_equal(r->output,
                      "MAPOPT_TEST_VAR=a b 'c'\nELAPSED TIME = 1 s\n");
  mapopt_eval_result_free(r);
  o.run = PROG " env HOME {mapper}";
  r = eval_opts(&o, "value=1", 30);
  assert_string_equal(r->output, "HOME=/elsewhere\nELAPSED TIME = 1 s\n");
  mapopt_eval_result_free(r);

  /* By default the command runs in the private directory. */
  char want[PATH_MAX + 16], real[PATH_MAX];
  o = (mapopt_eval_options){.run = PROG " pwd {mapper}", .keep = true};
  r = eval_opts(&o, "value=1", 30);
  assert_non_null(realpath(r->dir, real));
  snprintf(want, sizeof want, "cwd=%s\n", real);
  assert_non_null(strstr(r->output, want));
  snprintf(want, sizeof want, "%s/mapper.map", r->dir);
  unlink(want);
  rmdir(r->dir);
  mapopt_eval_result_free(r);
  o = (mapopt_eval_options){.run = PROG " pwd {mapper}", .workdir = "/"};
  r = eval_opts(&o, "value=1", 30);
  assert_string_equal(r->output, "cwd=/\nELAPSED TIME = 1 s\n");
  mapopt_eval_result_free(r);

  r = eval_cmd(PROG " stdin {mapper}", 30);
  assert_string_equal(r->output, "stdin read 0\nELAPSED TIME = 1 s\n");
  mapopt_eval_result_free(r);
  /* A descriptor the caller left inheritable does not reach the child. */
  int leak = open("/dev/null", O_RDONLY);
  assert_true(leak > 2);
  r = eval_cmd(PROG " fds {mapper}", 30);
  assert_string_equal(r->output, "open fds 0\nELAPSED TIME = 1 s\n");
  mapopt_eval_result_free(r);
  close(leak);
  r = eval_cmd(PROG " interleave {mapper}", 30);
  assert_string_equal(r->output, "out1\nerr1\nout2\nELAPSED TIME = 1 s\n");
  mapopt_eval_result_free(r);
}

/* A private directory whose path has spaces, quotes and shell syntax: the
 * program gets it intact, with and without the shell. */
static void test_awkward_path(void **state) {
  (void)state;
  char base[] = "/tmp/mapopt-test-XXXXXX";
  assert_non_null(mkdtemp(base));
  char tmp[PATH_MAX];
  snprintf(tmp, sizeof tmp, "%s/it's a \"dir\" $(x) `y` \\", base);
  assert_int_equal(mkdir(tmp, 0700), 0);
  static const struct {
    const char *run;
    bool shell;
  } cases[] = {
      {PROG " path {mapper}", false},
      {PROG " path {mapper} | cat", true},
      {PROG " path '{mapper}' && true", true},
      {PROG " path \"{mapper}\"", true},
      {"p=" PROG "; \"$p\" path {mapper}", true},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mapopt_eval_options o = {
        .run = cases[i].run, .shell = cases[i].shell, .tmpdir = tmp};
    mapopt_eval_result *r = eval_opts(&o, "value=4.25", 30);
    if (r->status != MAPOPT_EVAL_OK ||
        strcmp(r->output, "same=1 readable=1\nELAPSED TIME = 4.250 s\n"))
      fail_msg("case %zu: %s\n%s", i, r->summary, r->output);
    /* The path is in argv, never in a shell line. */
    if (cases[i].shell)
      assert_null(strstr(r->argv[2], "mapopt-test"));
    else
      assert_int_equal(strncmp(r->argv[2], tmp, strlen(tmp)), 0);
    mapopt_eval_result_free(r);
  }
  assert_int_equal(rmdir(tmp), 0);
  assert_int_equal(rmdir(base), 0);
}

/* Everything but wall times and the directory's name is the same on every
 * evaluation of the same command. */
static void test_determinism(void **state) {
  (void)state;
  static const char *const runs[] = {
      PROG " value {mapper}", PROG " fail {mapper}",
      PROG " segv {mapper}",  PROG " nometric {mapper}",
      PROG " hang {mapper}",  PROG " flood 2 {mapper}"};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    mapopt_eval_options o = {.run = runs[i], .repeat = 2, .output_cap = 4096};
    mapopt_eval_result *a = eval_opts(&o, "value=1.5", 0.3);
    mapopt_eval_result *b = eval_opts(&o, "value=1.5", 0.3);
    assert_int_equal(a->status, b->status);
    assert_int_equal(a->runs, b->runs);
    assert_int_equal(a->exit_code, b->exit_code);
    assert_int_equal(a->signal, b->signal);
    assert_true(a->metric == b->metric ||
                (isnan(a->metric) && isnan(b->metric)));
    assert_int_equal(a->output_len, b->output_len);
    assert_memory_equal(a->output, b->output, a->output_len);
    assert_int_equal(a->output_bytes, b->output_bytes);
    assert_int_equal(a->output_dropped, b->output_dropped);
    assert_string_equal(a->summary, b->summary);
    for (int k = 0; k < a->runs; k++)
      assert_memory_equal(&a->values[k], &b->values[k], sizeof(double));
    mapopt_eval_result_free(a);
    mapopt_eval_result_free(b);
  }
}

/* ---- threads ------------------------------------------------------------- */

typedef struct job {
  const mapopt_evaluator *ev;
  char mapper[32];
  double timeout_s;
  mapopt_eval_result *r;
  double took;
} job;

static void *run_job(void *arg) {
  job *j = arg;
  double t0 = now_s();
  if (mapopt_eval_run(j->ev, j->mapper, strlen(j->mapper), j->timeout_s, NULL,
                      &j->r) != MAPOPT_OK)
    j->r = NULL;
  j->took = now_s() - t0;
  return NULL;
}

static void test_threads(void **state) {
  (void)state;
  /* One evaluator shared by four threads, each with its own mapper; a
   * fifth evaluation hangs until its timeout meanwhile. */
  mapopt_eval_options o = {.run = PROG " value {mapper}"};
  mapopt_eval_options oh = {.run = PROG " hang {mapper}"};
  mapopt_evaluator *ev, *hang;
  assert_int_equal(mapopt_eval_new(ctx, &o, diags, &ev), MAPOPT_OK);
  assert_int_equal(mapopt_eval_new(ctx, &oh, diags, &hang), MAPOPT_OK);
  enum { N = 5 };
  job jobs[N];
  pthread_t th[N];
  for (int i = 0; i < N; i++) {
    jobs[i] = (job){.ev = i == 0 ? hang : ev, .timeout_s = i == 0 ? 6 : 30};
    snprintf(jobs[i].mapper, sizeof jobs[i].mapper, "value=%d.5", i);
    assert_int_equal(pthread_create(&th[i], NULL, run_job, &jobs[i]), 0);
  }
  for (int i = 0; i < N; i++)
    assert_int_equal(pthread_join(th[i], NULL), 0);
  assert_non_null(jobs[0].r);
  assert_int_equal(jobs[0].r->status, MAPOPT_EVAL_TIMEOUT);
  for (int i = 1; i < N; i++) {
    assert_non_null(jobs[i].r);
    assert_int_equal(jobs[i].r->status, MAPOPT_EVAL_OK);
    assert_true(jobs[i].r->metric == i + 0.5);
    /* Own private directories. */
    for (int k = 1; k < i; k++)
      assert_string_not_equal(jobs[i].r->argv[2], jobs[k].r->argv[2]);
    /* Not held up by the hanging one (its output pipe never reached
     * them): each takes milliseconds, the hanging one its 6 s. */
    assert_true(jobs[i].took < 3);
  }
  for (int i = 0; i < N; i++)
    mapopt_eval_result_free(jobs[i].r);
  mapopt_eval_free(ev);
  mapopt_eval_free(hang);
}

/* ---- policy, options, errors --------------------------------------------- */

static void test_timeout_policy(void **state) {
  (void)state;
  const mapopt_eval_timeout_policy p = {
      .factor = 3, .floor_s = 1, .first_s = 60};
  static const struct {
    bool custom;
    double best, want;
  } cases[] = {
      {false, 0, 600},        {false, -1, 600},   {false, NAN, 600},
      {false, INFINITY, 600}, {false, 2, 20},     {false, 0.1, 5},
      {false, 0.5, 5},        {false, 100, 1000}, {true, 0, 60},
      {true, 10, 30},         {true, 0.2, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double got =
        mapopt_eval_timeout(cases[i].custom ? &p : NULL, cases[i].best);
    if (got != cases[i].want)
      fail_msg("case %zu: got %g, want %g", i, got, cases[i].want);
  }
}

static void test_option_errors(void **state) {
  (void)state;
  const char *bad_env[] = {"1X=2", NULL};
  const char *no_eq[] = {"FOO", NULL};
  static const struct {
    mapopt_eval_options o;
    const char *error;
  } cases[] = {
      {{.run = NULL}, "--run: error: no command given"},
      {{.run = "p {mapper}", .repeat = 1001},
       "--repeat: error: the repeat count must be 1 to 1000"},
      {{.run = "p {mapper}", .repeat = -1}, "--repeat: error"},
      {{.run = "p {mapper}", .output_cap = 100}, "output cap: error"},
      {{.run = "p {mapper}", .grace_s = -1}, "grace: error"},
      {{.run = "p {mapper}", .metric = "(a"},
       "--metric:1:1: error: invalid regular expression: "},
      {{.run = "p {mapper}", .metric = "time [0-9]+"},
       "--metric:1:1: error: the regular expression has no group"},
      /* repetitions in repetitions: 2^34 and 10^6 copies, gigabytes for
       * the C library's compiler */
      {{.run = "p {mapper}", .metric = "(t++++++++++++++++++++++++++++++++++)"},
       "--metric:1:4: error: '+' repeats a repetition: two in a row are "
       "undefined"},
      {{.run = "p {mapper}", .metric = "time: (.+?)s"},
       "--metric:1:10: error: '?' repeats a repetition"},
      {{.run = "p {mapper}", .metric = "((((((((((a*)+)+)+)+)+)+)+)+)+)+"},
       "--metric:1:1: error: the regular expression is too large once its "
       "repetitions are written out"},
      {{.run = "p {mapper}", .metric = "((a{1000}){1000})"},
       "--metric:1:1: error: the regular expression is too large"},
      {{.run = "p {mapper}", .direction = (mapopt_eval_direction)7},
       "--direction: error"},
      {{.run = "p 'x {mapper}"}, "--run:1:3: error: unterminated single"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    mapopt_diags_clear(diags);
    mapopt_evaluator *ev = NULL;
    assert_int_equal(mapopt_eval_new(ctx, &cases[i].o, diags, &ev),
                     MAPOPT_EINVAL);
    assert_null(ev);
    if (strncmp(first_diag(), cases[i].error, strlen(cases[i].error)))
      fail_msg("case %zu: got '%s', want '%s'", i, first_diag(),
               cases[i].error);
  }
  /* brackets and intervals of ordinary size compile */
  static const char *const fine[] = {"^Total: ([0-9.eE+-]+) GFLOP/s",
                                     "([[:digit:]]{1,30}[.][0-9]{3})",
                                     "(x{255})+"};
  for (size_t i = 0; i < sizeof fine / sizeof fine[0]; i++) {
    mapopt_eval_options ok = {.run = "p {mapper}", .metric = fine[i]};
    mapopt_evaluator *ev = NULL;
    mapopt_diags_clear(diags);
    if (mapopt_eval_new(ctx, &ok, diags, &ev) != MAPOPT_OK)
      fail_msg("%s: %s", fine[i], first_diag());
    mapopt_eval_free(ev);
  }
  mapopt_eval_options o = {.run = "p {mapper}", .env = bad_env};
  mapopt_evaluator *ev = NULL;
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_eval_new(ctx, &o, diags, &ev), MAPOPT_EINVAL);
  assert_string_equal(first_diag(), "--env:1:1: error: '1X=2' is not "
                                    "NAME=VALUE");
  o.env = no_eq;
  assert_int_equal(mapopt_eval_new(ctx, &o, NULL, &ev), MAPOPT_EINVAL);
  /* A bad timeout, an unusable temporary directory. */
  o = (mapopt_eval_options){.run = PROG " value {mapper}",
                            .tmpdir = "/nonexistent/dir"};
  assert_int_equal(mapopt_eval_new(ctx, &o, diags, &ev), MAPOPT_OK);
  mapopt_eval_result *r = NULL;
  assert_int_equal(mapopt_eval_run(ev, "x", 1, -1, diags, &r), MAPOPT_EINVAL);
  assert_int_equal(mapopt_eval_run(ev, "x", 1, NAN, diags, &r), MAPOPT_EINVAL);
  mapopt_diags_clear(diags);
  assert_int_equal(mapopt_eval_run(ev, "x", 1, 1, diags, &r), MAPOPT_EIO);
  assert_null(r);
  assert_string_equal(first_diag(), "/nonexistent/dir: error: cannot make a "
                                    "private directory: No such file or "
                                    "directory");
  mapopt_eval_free(ev);
  assert_string_equal(mapopt_eval_status_name(MAPOPT_EVAL_NO_METRIC),
                      "no-metric");
  assert_null(mapopt_eval_status_name((mapopt_eval_status)99));
  assert_string_equal(mapopt_eval_direction_name(MAPOPT_EVAL_HIGHER), "higher");
}

/*
 * Every allocation failing in turn, through a whole evaluation with a
 * repeat and a failing run: each ends in MAPOPT_ENOMEM or the right result,
 * frees everything and leaves no process behind.
 */
static void test_allocation_failure(void **state) {
  (void)state;
  for (long n = 1;; n++) {
    failing_alloc f = {.left = n - 1};
    mapopt_ctx *c;
    if (mapopt_ctx_new(failing_realloc, &f, &c) != MAPOPT_OK)
      continue;
    mapopt_eval_options o = {.run = PROG " count 2 1 {mapper}",
                             .shell = n % 2 == 0,
                             .repeat = 3,
                             .metric = "TIME = ([0-9.]+)"};
    mapopt_evaluator *ev = NULL;
    mapopt_eval_result *r = NULL;
    mapopt_status st = mapopt_eval_new(c, &o, NULL, &ev);
    if (st == MAPOPT_OK)
      st = mapopt_eval_run(ev, "value=1", 7, 30, NULL, &r);
    assert_true(st == MAPOPT_OK || st == MAPOPT_ENOMEM);
    bool done = !f.failed;
    if (st == MAPOPT_OK) {
      assert_int_equal(r->status, MAPOPT_EVAL_FAILED);
      assert_int_equal(r->runs, 3);
    }
    mapopt_eval_result_free(r);
    mapopt_eval_free(ev);
    mapopt_ctx_free(c);
    assert_int_equal(f.live, 0);
    if (done) {
      assert_int_equal(st, MAPOPT_OK);
      break;
    }
  }
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_split),
      cmocka_unit_test(test_substitute),
      cmocka_unit_test(test_capture),
      cmocka_unit_test(test_ok),
      cmocka_unit_test(test_failures),
      cmocka_unit_test(test_timeouts),
      cmocka_unit_test(test_leftovers),
      cmocka_unit_test(test_escapees),
      cmocka_unit_test(test_stop),
      cmocka_unit_test(test_sigchld_ignored),
      cmocka_unit_test(test_relative_tmpdir),
      cmocka_unit_test(test_metric_edges),
      cmocka_unit_test(test_flood),
      cmocka_unit_test(test_metric_forms),
      cmocka_unit_test(test_repeat),
      cmocka_unit_test(test_repeats_decided),
      cmocka_unit_test(test_child_setup),
      cmocka_unit_test(test_awkward_path),
      cmocka_unit_test(test_determinism),
      cmocka_unit_test(test_threads),
      cmocka_unit_test(test_timeout_policy),
      cmocka_unit_test(test_option_errors),
      cmocka_unit_test(test_allocation_failure),
  };
  return cmocka_run_group_tests(tests, fixture_setup, fixture_teardown);
}
