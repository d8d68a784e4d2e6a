/*
 * A program that misbehaves on demand, for the command evaluator's tests
 * (tests/unit/test_eval.c): `evalprog MODE [ARGS]` succeeds with a metric,
 * fails, crashes, hangs, leaves children behind, floods its output, or
 * reports on the environment it was started in. It is built without
 * sanitizers, so that a crash is a real signal and not a sanitizer report.
 *
 * With EVALPROG_READY set to a path, that file is created once the mode has
 * started (flee-hang: once its descendant's pid is written), for a test
 * that must act while the program runs.
 *
 * `evalprog mapper FILE` takes its mode from the mapper file, for the
 * tuner's tests (tests/unit/test_tune.c), whose candidates differ only in
 * their text: the first `mode_NAME` or `mode_NAME_N` in it (a task name,
 * `Task mode_fail CPU;`) runs mode NAME with argument N -- milliseconds for
 * sleep. Each such run appends NAME to the file $EVALPROG_LOG, when set;
 * mode hangonce reads it back: it hangs when the log names it once (its
 * first run) and prints a time on the runs after, so that a run stopped
 * in the hang and resumed ends.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int usage(void) {
  fprintf(stderr, "usage: evalprog MODE [ARGS]\n");
  return 2;
}

static void hang(void) {
  for (;;)
    pause();
}

/* Mode "flee HOW": a child leaves the command's process group -- "group"
 * (setpgid(0, 0)), "session" (setsid) or "daemon" (a grandchild, whose
 * parent exits at once, calls setsid) -- prints "child=PID" and lives on,
 * holding the output; the command waits for that line before it goes on
 * (so the line is always in the output), then prints a metric and exits,
 * or with "flee-hang" hangs. */
static void flee(const char *how) {
  int ready[2];
  if (pipe(ready) != 0)
    exit(4);
  if (fork() == 0) {
    bool daemon = !strcmp(how, "daemon");
    if (daemon && fork() != 0)
      _exit(0);
    if (!strcmp(how, "group"))
      setpgid(0, 0);
    else
      setsid();
    char line[64];
    int n = snprintf(line, sizeof line, "child=%ld\n", (long)getpid());
    if (write(1, line, (size_t)n) != n || write(ready[1], "r", 1) != 1)
      _exit(4);
    hang();
  }
  char c;
  if (read(ready[0], &c, 1) != 1)
    exit(4);
}

/* Creates the file $EVALPROG_READY names, if set. */
static void mark_ready(void) {
  const char *ready = getenv("EVALPROG_READY");
  if (!ready)
    return;
  int fd = open(ready, O_WRONLY | O_CREAT | O_CLOEXEC, 0600);
  if (fd >= 0)
    close(fd);
}

/* How many lines of the file $EVALPROG_LOG are name (0 when unset). */
static int logged(const char *name) {
  const char *log = getenv("EVALPROG_LOG");
  FILE *f = log ? fopen(log, "r") : NULL;
  char line[64];
  int n = 0;
  while (f && fgets(line, sizeof line, f))
    n += strcspn(line, "\n") == strlen(name) &&
         !strncmp(line, name, strlen(name));
  if (f)
    fclose(f);
  return n;
}

/* Appends name as a line to the file $EVALPROG_LOG, when set. */
static void log_run(const char *name) {
  const char *log = getenv("EVALPROG_LOG");
  FILE *f = log ? fopen(log, "a") : NULL;
  if (f) {
    fprintf(f, "%s\n", name);
    fclose(f);
  }
}

/* The number after "value=" in the mapper file path, or -1. */
static double value_in(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return -1;
  char buf[4096];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *v = strstr(buf, "value=");
  return v ? atof(v + 6) : -1;
}

/* Whether the mapper at path has a Layout statement that aligns a region
 * to 128 bytes (a layout choice every optimizer can propose for the test
 * applications: their kernels forbid AOS, which the tuners' feasibility
 * filter rules out). */
static bool has_aligned_layout(const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return false;
  char line[4096];
  bool aligned = false;
  while (!aligned && fgets(line, sizeof line, f))
    aligned = !strncmp(line, "Layout", 6) && strstr(line, "Align == 128");
  fclose(f);
  return aligned;
}

/* Modes "noisy MS FILE" and "layout MS FILE", the noise tests of the tuner
 * (tests/cli/test_noise.sh): sleeps MS milliseconds times a factor drawn
 * uniformly from [0.8, 1.2] (from /dev/urandom: every run its own, as a
 * real machine's noise), 2.8 times as long for slow, and prints the time
 * it measured. noisy ignores the mapper FILE; layout is slow unless FILE
 * aligns a region to 128 bytes. */
static void timed(double ms, bool slow) {
  unsigned r = 0;
  FILE *u = fopen("/dev/urandom", "rb");
  if (!u || fread(&r, sizeof r, 1, u) != 1)
    exit(4);
  fclose(u);
  double t = ms * 1e-3 * (0.8 + 0.4 * (r / 4294967295.0)) * (slow ? 2.8 : 1);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  usleep((useconds_t)(t * 1e6));
  clock_gettime(CLOCK_MONOTONIC, &t1);
  printf("ELAPSED TIME = %.6f s\n",
         (double)(t1.tv_sec - t0.tv_sec) +
             (double)(t1.tv_nsec - t0.tv_nsec) * 1e-9);
}

int main(int argc, char **argv);

/* Mode "mapper": the mode named in the mapper at path. */
static int by_mapper(const char *argv0, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    return 4;
  static char buf[65536];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  const char *m = strstr(buf, "mode_");
  if (!m)
    return usage();
  char name[64] = "", arg[64] = "";
  sscanf(m + 5, "%63[a-z]_%63[0-9]", name, arg);
  if (!strcmp(name, "sleep"))
    snprintf(arg, sizeof arg, "%.3f", atof(arg) / 1000);
  log_run(name);
  char *args[] = {(char *)argv0, name, arg, NULL};
  return main(3, args);
}

int main(int argc, char **argv) {
  if (argc < 2)
    return usage();
  const char *mode = argv[1];
  const char *arg = argc > 2 ? argv[2] : "";
  /* flee-hang is ready once its descendant has written its pid: a test
   * that stops it then finds the pid in the output. */
  if (strcmp(mode, "mapper") && strcmp(mode, "flee-hang"))
    mark_ready();
  if (!strcmp(mode, "mapper")) {
    return by_mapper(argv[0], arg);
  } else if (!strcmp(mode, "value")) { /* the metric is written in the mapper */
    printf("mapper %s\nELAPSED TIME = %.3f s\n",
           value_in(arg) >= 0 ? "read" : "unreadable", value_in(arg));
  } else if (!strcmp(mode, "fail")) {
    printf("starting\n");
    fflush(stdout);
    fprintf(stderr, "error: the mapper asks for 9 GPUs\n");
    return 3;
  } else if (!strcmp(mode, "segv")) {
    printf("about to crash\n");
    fflush(stdout);
    raise(SIGSEGV);
  } else if (!strcmp(mode, "hang")) {
    printf("hanging\n");
    fflush(stdout);
    hang();
  } else if (!strcmp(mode, "hangonce")) { /* see the top of the file */
    if (logged("hangonce") <= 1) {
      printf("hanging\n");
      fflush(stdout);
      hang();
    }
    printf("ELAPSED TIME = 0.010 s\n");
  } else if (!strcmp(mode, "hangat")) {
    /* "hangat K FILE": logs itself and hangs on the K-th logged run, a
     * run in flight that only a stop ends; the other runs take 10 ms. */
    log_run("hangat");
    if (logged("hangat") == atoi(arg)) {
      printf("hanging\n");
      fflush(stdout);
      hang();
    }
    printf("ELAPSED TIME = 0.010 s\n");
  } else if (!strcmp(mode, "stubborn")) { /* needs SIGKILL */
    signal(SIGTERM, SIG_IGN);
    hang();
  } else if (!strcmp(mode, "grandchild")) { /* leaves a child holding the
                                               output open, in its group */
    if (fork() == 0)
      hang();
    printf("ELAPSED TIME = 0.250 s\n");
  } else if (!strcmp(mode, "escape")) { /* a child that leaves the group */
    if (fork() == 0) {
      setsid();
      sleep(20);
      _exit(0);
    }
    printf("ELAPSED TIME = 0.500 s\n");
  } else if (!strcmp(mode, "flee")) {
    flee(arg);
    printf("ELAPSED TIME = 0.500 s\n");
  } else if (!strcmp(mode, "flee-hang")) {
    flee(arg);
    mark_ready();
    printf("hanging\n");
    fflush(stdout);
    hang();
  } else if (!strcmp(mode, "flood")) { /* ARG megabytes, then a metric */
    static char line[1024];
    memset(line, 'x', sizeof line - 1);
    line[sizeof line - 1] = '\n';
    long mb = atol(arg);
    for (long i = 0; i < mb * 1024; i++)
      fwrite(line, 1, sizeof line, stdout);
    printf("GFLOPS = 7.5 GFLOPS\n");
  } else if (!strcmp(mode, "nometric")) {
    printf("done\n");
  } else if (!strcmp(mode, "gflops")) {
    printf("GFLOPS =  12.500 GFLOPS\n");
  } else if (!strcmp(mode, "negative")) { /* a throughput below zero */
    printf("GFLOPS =  -5.000 GFLOPS\n");
  } else if (!strcmp(mode, "pernode")) {
    printf("On 2 nodes achieved GFLOPS per node: 33.250000.\n");
  } else if (!strcmp(mode, "both")) {
    printf("ELAPSED TIME =   2.000 s\nGFLOPS =  50.000 GFLOPS\n");
  } else if (!strcmp(mode, "time")) {
    printf("iteration 1\nELAPSED TIME =   1.500 s\n");
  } else if (!strcmp(mode, "count")) {
    /* Run k (counted in ./count in the working directory) prints the
     * metric argv[2 + k]; the last argument is the mapper. */
    int k = 0;
    FILE *f = fopen("count", "r");
    if (f) {
      if (fscanf(f, "%d", &k) != 1)
        k = 0;
      fclose(f);
    }
    f = fopen("count", "w");
    if (!f)
      return 4;
    fprintf(f, "%d\n", k + 1);
    fclose(f);
    if (2 + k >= argc - 1)
      return 5;
    printf("ELAPSED TIME = %s s\n", argv[2 + k]);
  } else if (!strcmp(mode, "path")) { /* arg is the path, as passed */
    const char *env = getenv("MAPOPT_MAPPER");
    printf("same=%d readable=%d\n", env && !strcmp(env, arg),
           value_in(arg) >= 0);
    printf("ELAPSED TIME = %.3f s\n", value_in(arg));
  } else if (!strcmp(mode, "env")) {
    const char *v = getenv(arg);
    printf("%s=%s\nELAPSED TIME = 1 s\n", arg, v ? v : "(unset)");
  } else if (!strcmp(mode, "pwd")) {
    char buf[4096];
    printf("cwd=%s\nELAPSED TIME = 1 s\n", getcwd(buf, sizeof buf));
  } else if (!strcmp(mode, "stdin")) { /* stdin must be at EOF at once */
    char c;
    printf("stdin read %zd\nELAPSED TIME = 1 s\n", read(0, &c, 1));
  } else if (!strcmp(mode, "fds")) { /* descriptors beyond 0-2 */
    int open_fds = 0;
    for (int fd = 3; fd < 1024; fd++)
      open_fds += fcntl(fd, F_GETFD) >= 0;
    printf("open fds %d\nELAPSED TIME = 1 s\n", open_fds);
  } else if (!strcmp(mode, "interleave")) {
    fputs("out1\n", stdout);
    fflush(stdout);
    fputs("err1\n", stderr);
    fputs("out2\n", stdout);
    fflush(stdout);
    fputs("ELAPSED TIME = 1 s\n", stdout);
  } else if (!strcmp(mode, "print")) { /* prints its argument */
    printf("%s\n", arg);
  } else if (!strcmp(mode, "noisy") && argc > 3) {
    timed(atof(arg), false);
  } else if (!strcmp(mode, "layout") && argc > 3) {
    timed(atof(arg), !has_aligned_layout(argv[3]));
  } else if (!strcmp(mode, "sleep")) { /* sleeps ARG seconds, then ok */
    usleep((useconds_t)(atof(arg) * 1e6));
    printf("ELAPSED TIME = %s s\n", arg);
  } else {
    return usage();
  }
  return 0;
}
