/*
 * One run of a command under a time limit: fork and exec without a shell,
 * the child in its own process group with stdin from /dev/null and stdout
 * and stderr on one pipe; then a poll loop that reads the output into a
 * bounded capture, notices the command's exit, and on timeout sends
 * SIGTERM and later SIGKILL to the whole group.
 *
 * Why it is built this way:
 *   - Several runs may be in flight from different threads. Every
 *     descriptor is created close-on-exec (pipe2), and the child marks
 *     every other inherited one close-on-exec, so no run's pipe leaks into
 *     another run's command (which would keep it open and make that run
 *     wait for the other command).
 *   - Between fork and exec the child calls only async-signal-safe
 *     functions: everything that allocates (the argv, the environment, the
 *     program's path found on PATH) is prepared by the parent. A failure
 *     in the child (chdir, exec) is reported through a close-on-exec pipe,
 *     so "could not start" is told apart from "started and exited 127".
 *   - The command's exit is observed without reaping it (waitid WNOWAIT):
 *     the zombie keeps its process id, and so the group id, reserved while
 *     the group is killed, so a kill can never reach an unrelated process
 *     that reused the id.
 *   - The loop waits for the command only. When it has exited, the output
 *     is read for a short linger and then the group is killed; a
 *     descendant that left the group and keeps the pipe open is simply no
 *     longer read. Nothing here can hang past timeout + grace + linger.
 */
#define _GNU_SOURCE /* pipe2, close_range, strerror_r (GNU), NSIG */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval/eval.h"

/* What the child was doing when it failed, reported with errno. */
enum { STAGE_SETUP = 1, STAGE_CHDIR, STAGE_EXEC };
enum { CHUNK = 64 * 1024 };
/* Without a pidfd to poll, how often the command's exit is checked. */
static const double exit_check_s = 0.005;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Everything the child needs, prepared before fork. */
typedef struct child_setup {
  const char *prog; /* path for execve */
  char *const *argv;
  char *const *envp;
  const char *cwd;
  int out_fd;    /* write end of the output pipe */
  int report_fd; /* write end of the start-failure pipe */
  int max_fd;    /* bound for the descriptor sweep without close_range */
} child_setup;

/* In the child: set up and exec, or report {stage, errno} and exit 127.
 * Async-signal-safe calls only (we may be a fork of a threaded process). */
static _Noreturn void run_child(const child_setup *s) {
  int stage = STAGE_SETUP;
  if (setpgid(0, 0) != 0)
    goto fail;
  /* Dispositions the caller ignores and its signal mask are inherited
   * across exec; the command gets the defaults, so SIGTERM ends it. */
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction(sig, &dfl, NULL); /* fails harmlessly for reserved ones */
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(s->out_fd, 1) < 0 ||
      dup2(s->out_fd, 2) < 0)
    goto fail;
    /* Nothing else the caller has open reaches the command. The report pipe
     * is close-on-exec already and stays usable until exec. */
#ifdef CLOSE_RANGE_CLOEXEC
  if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) != 0)
#endif
    for (int fd = 3; fd < s->max_fd; fd++)
      fcntl(fd, F_SETFD, FD_CLOEXEC);
  if (s->cwd) {
    stage = STAGE_CHDIR;
    if (chdir(s->cwd) != 0)
      goto fail;
  }
  stage = STAGE_EXEC;
  execve(s->prog, s->argv, s->envp);
fail:;
  int report[2] = {stage, errno};
  ssize_t w = write(s->report_fd, report, sizeof report);
  (void)w;
  _exit(127);
}

/* Records why the command did not start. MAPOPT_ENOMEM when the message
 * cannot be stored. */
static mapopt_status not_started(mapopt_ctx *ctx, mapopt__spawn_outcome *out,
                                 const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static mapopt_status not_started(mapopt_ctx *ctx, mapopt__spawn_outcome *out,
                                 const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  out->started = false;
  out->start_error = mapopt__text_vprintf(ctx, fmt, ap);
  va_end(ap);
  return out->start_error ? MAPOPT_OK : MAPOPT_ENOMEM;
}

static const char *errstr(int err, char *buf, size_t size) {
  return strerror_r(err, buf, size);
}

/* The value of PATH in envp, or the C library's default. */
static const char *env_path(char *const *envp) {
  for (char *const *e = envp; *e; e++)
    if (strncmp(*e, "PATH=", 5) == 0)
      return *e + 5;
  return "/bin:/usr/bin";
}

/*
 * The file to execve for argv0: argv0 itself when it has a slash (relative
 * to the child's working directory, as exec would take it), else the first
 * executable regular file named argv0 in PATH. Either *prog (allocated) or
 * out->start_error is set.
 */
static mapopt_status find_program(mapopt_ctx *ctx, const char *argv0,
                                  char *const *envp, mapopt__spawn_outcome *out,
                                  char **prog) {
  *prog = NULL;
  if (!argv0[0])
    return not_started(ctx, out, "'': command not found (empty name)");
  if (strchr(argv0, '/')) {
    *prog = mapopt__strndup(ctx, argv0, strlen(argv0));
    return *prog ? MAPOPT_OK : MAPOPT_ENOMEM;
  }
  size_t nlen = strlen(argv0);
  for (const char *p = env_path(envp);; p++) {
    const char *end = strchr(p, ':');
    size_t dlen = end ? (size_t)(end - p) : strlen(p);
    mapopt__strbuf sb;
    mapopt__sb_init(&sb, ctx);
    mapopt__sb_putn(&sb, dlen ? p : ".", dlen ? dlen : 1);
    mapopt__sb_putc(&sb, '/');
    mapopt__sb_putn(&sb, argv0, nlen);
    size_t len;
    char *cand = mapopt__sb_take(&sb, &len);
    if (!cand)
      return MAPOPT_ENOMEM;
    struct stat stb;
    if (stat(cand, &stb) == 0 && S_ISREG(stb.st_mode) &&
        access(cand, X_OK) == 0) {
      *prog = cand;
      return MAPOPT_OK;
    }
    mapopt__free(ctx, cand, len + 1);
    if (!end)
      break;
    p = end;
  }
  return not_started(ctx, out, "%s: command not found", argv0);
}

/* fd, moved above the standard descriptors if it is one of them (when the
 * caller runs with one closed), so that the child's dup2 cannot clobber
 * it. */
static int above_stdio(int fd) {
  if (fd < 0 || fd > 2)
    return fd;
  int n = fcntl(fd, F_DUPFD_CLOEXEC, 3);
  close(fd);
  return n;
}

/* The reason a child reported, as the outcome's start error. */
static mapopt_status child_failed(mapopt_ctx *ctx, const child_setup *s,
                                  const int report[2],
                                  mapopt__spawn_outcome *out) {
  char eb[128];
  const char *why = errstr(report[1], eb, sizeof eb);
  if (report[0] == STAGE_CHDIR)
    return not_started(ctx, out, "cannot enter the working directory %s: %s",
                       s->cwd, why);
  if (report[0] != STAGE_EXEC)
    return not_started(ctx, out, "cannot set up the command: %s", why);
  bool relative = s->prog[0] != '/';
  return not_started(ctx, out, "%s: %s%s%s%s", s->argv[0], why,
                     relative && s->cwd ? " (relative to the working "
                                          "directory "
                                        : "",
                     relative && s->cwd ? s->cwd : "",
                     relative && s->cwd ? ")" : "");
}

/* Milliseconds from now until wake, for poll: -1 for never. */
static int poll_ms(double now, double wake) {
  if (wake == INFINITY)
    return -1;
  double ms = ceil((wake - now) * 1e3);
  return ms <= 0 ? 0 : ms > 60000 ? 60000 : (int)ms;
}

/*
 * Supervises the started command pid whose output arrives on rd: the loop
 * described at the top of the file. Always kills what is left of the group
 * and reaps the command before returning.
 */
static mapopt_status supervise(mapopt_ctx *ctx, const mapopt__spawn_spec *spec,
                               pid_t pid, int rd, double t0,
                               mapopt__spawn_outcome *out) {
  char *buf = mapopt__malloc(ctx, CHUNK);
  mapopt_status st = buf ? MAPOPT_OK : MAPOPT_ENOMEM;
  fcntl(rd, F_SETFL, fcntl(rd, F_GETFL) | O_NONBLOCK);
  int pidfd = -1;
#ifdef SYS_pidfd_open
  pidfd = (int)syscall(SYS_pidfd_open, pid, 0); /* close-on-exec */
#endif
  double deadline = spec->timeout_s > 0 ? t0 + spec->timeout_s : INFINITY;
  double kill_at = INFINITY, linger_end = 0, t_exit = 0;
  bool exited = false;
  while (st == MAPOPT_OK) {
    double now = now_s();
    if (!exited) {
      siginfo_t si;
      si.si_pid = 0;
      int r = waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT);
      /* ECHILD: someone else reaped it (the caller ignores SIGCHLD). */
      if ((r == 0 && si.si_pid == pid) || (r < 0 && errno == ECHILD)) {
        exited = true;
        t_exit = now;
        linger_end = now + spec->linger_s;
      }
    }
    if (exited && (rd < 0 || now >= linger_end))
      break;
    if (!exited && !out->timed_out && now >= deadline) {
      kill(-pid, SIGTERM);
      out->timed_out = true;
      out->kill_signal = SIGTERM;
      kill_at = now + spec->grace_s;
    } else if (!exited && out->kill_signal == SIGTERM && now >= kill_at) {
      kill(-pid, SIGKILL);
      out->kill_signal = SIGKILL;
      kill_at = INFINITY;
    }
    double wake = exited ? linger_end : out->timed_out ? kill_at : deadline;
    if (!exited && pidfd < 0 && wake > now + exit_check_s)
      wake = now + exit_check_s;
    struct pollfd fds[2];
    nfds_t n = 0;
    if (rd >= 0)
      fds[n++] = (struct pollfd){.fd = rd, .events = POLLIN};
    if (pidfd >= 0 && !exited)
      fds[n++] = (struct pollfd){.fd = pidfd, .events = POLLIN};
    if (poll(fds, n, poll_ms(now, wake)) <= 0 || rd < 0 || !fds[0].revents)
      continue;
    ssize_t got = read(rd, buf, CHUNK);
    if (got > 0) {
      st = mapopt__capture_add(&out->out, buf, (size_t)got);
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      close(rd);
      rd = -1;
    }
  }
  /* Whatever is left of the group goes; the command, not yet reaped,
   * keeps the group id reserved until waitpid below. */
  kill(-pid, SIGKILL);
  int status = 0;
  pid_t w;
  do
    w = waitpid(pid, &status, 0);
  while (w < 0 && errno == EINTR);
  if (!exited)
    t_exit = now_s();
  out->wall_s = t_exit - t0;
  if (w == pid && WIFEXITED(status))
    out->exit_code = WEXITSTATUS(status);
  else if (w == pid && WIFSIGNALED(status))
    out->signal = WTERMSIG(status);
  if (rd >= 0)
    close(rd);
  if (pidfd >= 0)
    close(pidfd);
  mapopt__free(ctx, buf, CHUNK);
  return st;
}

mapopt_status mapopt__eval_spawn(mapopt_ctx *ctx,
                                 const mapopt__spawn_spec *spec,
                                 mapopt__spawn_outcome *out) {
  memset(out, 0, sizeof *out);
  out->exit_code = -1;
  mapopt__capture_init(&out->out, ctx, spec->output_cap);
  char *prog;
  mapopt_status st = find_program(ctx, spec->argv[0], spec->envp, out, &prog);
  if (st != MAPOPT_OK || !prog)
    return st;
  long open_max = sysconf(_SC_OPEN_MAX);
  child_setup setup = {
      .prog = prog,
      .argv = spec->argv,
      .envp = spec->envp,
      .cwd = spec->cwd,
      .max_fd = open_max > 0 && open_max < 65536 ? (int)open_max : 65536};
  char eb[128];
  int fds[4] = {-1, -1, -1, -1}; /* output pipe, report pipe: read, write */
  bool piped = pipe2(fds, O_CLOEXEC) == 0 && pipe2(fds + 2, O_CLOEXEC) == 0;
  for (int i = 0; i < 4; i++) {
    fds[i] = above_stdio(fds[i]);
    piped &= fds[i] >= 0;
  }
  int err = errno;
  double t0 = now_s();
  pid_t pid = piped ? fork() : -1;
  if (pid == 0) {
    setup.out_fd = fds[1];
    setup.report_fd = fds[3];
    run_child(&setup);
  }
  if (pid < 0)
    err = errno;
  for (int i = 0; i < 4; i++)
    if (fds[i] >= 0 && (i % 2 == 1 || pid < 0))
      close(fds[i]);
  if (pid < 0) {
    st = not_started(ctx, out, "cannot %s: %s",
                     piped ? "start a process" : "make a pipe",
                     errstr(err, eb, sizeof eb));
    goto done;
  }
  int rd = fds[0], prep = fds[2];
  /* Until exec, the report pipe stays open in the child: EOF means the
   * command is running. */
  int report[2];
  size_t have = 0;
  while (have < sizeof report) {
    ssize_t r = read(prep, (char *)report + have, sizeof report - have);
    if (r > 0)
      have += (size_t)r;
    else if (r == 0 || errno != EINTR)
      break;
  }
  close(prep);
  if (have == sizeof report) {
    close(rd);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
    st = child_failed(ctx, &setup, report, out);
    goto done;
  }
  out->started = true;
  st = supervise(ctx, spec, pid, rd, t0, out);
done:
  mapopt__free(ctx, prog, strlen(prog) + 1);
  return st;
}

void mapopt__spawn_outcome_destroy(mapopt__spawn_outcome *o) {
  mapopt_text_free(o->start_error);
  o->start_error = NULL;
  mapopt__capture_destroy(&o->out);
}
