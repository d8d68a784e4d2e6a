/*
 * One run of a command under a time limit. mapopt forks a supervisor, and
 * the supervisor forks the command:
 *
 *     mapopt --fork--> supervisor (its own session; a child subreaper)
 *                          --fork--> command (its own process group)
 *
 * The command's stdin is /dev/null, its stdout and stderr one pipe that
 * mapopt reads into a bounded capture. A socket pair joins mapopt and the
 * supervisor: the supervisor reports the command's exit on it, and mapopt
 * asks for SIGTERM ('T') or SIGKILL ('K') to everything under the
 * supervisor, and closes it when the run is over (or dies, which closes
 * it too); the supervisor then kills whatever is left, reaps it, and
 * exits.
 *
 * Why a supervisor: a process can leave its process group (setpgid) or
 * its session (setsid, as a daemon does), and a kill of the group misses
 * it. But a process whose parent dies is handed to its nearest ancestor
 * that is a child subreaper (PR_SET_CHILD_SUBREAPER) -- the supervisor --
 * whatever its group or session: so every process the command starts is a
 * descendant of the supervisor until it is reaped, and the supervisor can
 * find it (its /proc entry's parent), signal it and wait for it. It
 * cannot reach what was never its descendant: a process started through
 * another one (a daemon asked over a socket, systemd-run, at, ssh to
 * another host, the tasks Slurm starts for srun), one that changed to a
 * user mapopt may not signal (a setuid program), or anything once the
 * supervisor itself is killed with SIGKILL (its descendants then go to
 * init). docs/real.md, "Where the command runs", says the same to users.
 *
 * Why it is built this way:
 *   - Several runs may be in flight from different threads. Every
 *     descendant is created close-on-exec (pipe2, socketpair), the
 *     supervisor closes every descriptor but its own three at once, and the
 *     command marks every other inherited one close-on-exec, so no run's
 *     pipe leaks into another run's command (which would keep it open and
 *     make that run wait for the other command).
 *   - After fork only async-signal-safe functions run (mapopt may have
 *     threads): everything that allocates (the argv, the environment, the
 *     program's path found on PATH) is prepared by mapopt. The supervisor
 *     forks with _Fork, which runs no atfork handler. A failure in the
 *     command before exec (chdir, exec) is reported through a close-on-exec
 *     pipe, so "could not start" is told apart from "started and exited
 *     127".
 *   - The supervisor observes the command's exit without reaping it
 *     (waitid WNOWAIT): the zombie keeps its process id, and so the group
 *     id, reserved while the group is killed, so a kill can never reach an
 *     unrelated process that reused the id. Other descendants are signalled
 *     by process id while they are its children or their descendants, and
 *     reaped by it (zombies at least once a second, everything at the
 *     end).
 *   - mapopt waits for the command only. When it has exited, the output is
 *     read for a short linger and then everything left is killed; nothing
 *     here can hang past timeout + grace + linger (but for a process stuck
 *     in the kernel, which no signal ends).
 */
#define _GNU_SOURCE /* pipe2, close_range, strerror_r (GNU), NSIG, _Fork */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "eval/eval.h"

/* What the command was doing when it failed, reported with errno. */
enum { STAGE_SETUP = 1, STAGE_CHDIR, STAGE_EXEC };
enum { CHUNK = 64 * 1024 };
/* mapopt to the supervisor: signal everything; the supervisor to mapopt:
 * the command exited (with its si_code and si_status). */
enum { MSG_TERM = 'T', MSG_KILL = 'K', MSG_EXIT = 'X' };
/* Without a pidfd to poll, how often the supervisor checks the command's
 * exit; how often mapopt checks a stop request; how often the supervisor
 * reaps the zombies handed to it. */
static const double exit_check_s = 0.005;
static const double stop_check_s = 0.05;
static const int reap_ms = 1000;
/* The processes of one level of the tree that the supervisor signals and
 * whose children it looks for, and the levels it descends. */
enum { LEVEL = 1024, MAX_DEPTH = 64 };

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* Everything the two forked processes need, prepared before fork. */
typedef struct child_setup {
  const char *prog; /* path for execve */
  char *const *argv;
  char *const *envp;
  const char *cwd;
  int out_fd;    /* write end of the output pipe */
  int report_fd; /* write end of the start-failure pipe */
  int ctl_fd;    /* the supervisor's end of the socket pair */
  int max_fd;    /* bound for the descriptor sweep without close_range */
} child_setup;

/* The default disposition of every signal and an empty mask: dispositions
 * the caller ignores and its mask would be inherited otherwise, so that
 * SIGTERM would not end the command, or the supervisor would not see the
 * command's exit (SIGCHLD ignored). */
static void default_signals(void) {
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, NULL);
  struct sigaction dfl;
  memset(&dfl, 0, sizeof dfl);
  dfl.sa_handler = SIG_DFL;
  for (int sig = 1; sig < NSIG; sig++)
    if (sig != SIGKILL && sig != SIGSTOP)
      sigaction(sig, &dfl, NULL); /* fails harmlessly for reserved ones */
}

/* In the command: set up and exec, or report {stage, errno} and exit 127.
 * Async-signal-safe calls only. */
static _Noreturn void run_child(const child_setup *s) {
  int stage = STAGE_SETUP;
  if (setpgid(0, 0) != 0)
    goto fail;
  default_signals();
  int devnull = open("/dev/null", O_RDONLY);
  if (devnull < 0 || dup2(devnull, 0) < 0 || dup2(s->out_fd, 1) < 0 ||
      dup2(s->out_fd, 2) < 0)
    goto fail;
    /* Nothing else the supervisor has open reaches the command. The report
     * pipe is close-on-exec already and stays usable until exec. */
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

/* ---- the supervisor (async-signal-safe calls only) ----------------------- */

/* A fork that runs no atfork handler (the supervisor's copy of a threaded
 * process may hold locks no thread will release). */
static pid_t fork_plain(void) {
#if defined(__GLIBC__) && (__GLIBC__ > 2 || __GLIBC_MINOR__ >= 34)
  return _Fork();
#else
  return fork();
#endif
}

/* Closes the descriptors lo..hi (hi INT_MAX: all from lo). */
static void close_span(int lo, int hi, int max_fd) {
#ifdef SYS_close_range
  if (syscall(SYS_close_range, (unsigned)lo, hi == INT_MAX ? ~0U : (unsigned)hi,
              0) == 0)
    return;
#endif
  for (int fd = lo; fd <= hi && fd < max_fd; fd++)
    close(fd);
}

/* Closes every descriptor above 2 but the three in keep (each above 2). */
static void close_others(const int keep_in[3], int max_fd) {
  int k[3] = {keep_in[0], keep_in[1], keep_in[2]};
  for (int i = 0; i < 3; i++)
    for (int j = i + 1; j < 3; j++)
      if (k[j] < k[i]) {
        int t = k[i];
        k[i] = k[j];
        k[j] = t;
      }
  int lo = 3;
  for (int i = 0; i <= 3; i++) {
    int hi = i < 3 ? k[i] - 1 : INT_MAX;
    if (hi >= lo)
      close_span(lo, hi, max_fd);
    if (i < 3)
      lo = k[i] + 1;
  }
}

/* "/proc/N/stat" into buf. */
static void stat_path(char *buf, long pid) {
  char digits[24];
  int n = 0;
  do
    digits[n++] = (char)('0' + pid % 10);
  while ((pid /= 10) > 0);
  memcpy(buf, "/proc/", 6);
  int k = 6;
  while (n > 0)
    buf[k++] = digits[--n];
  memcpy(buf + k, "/stat", 6);
}

/* The parent of process pid from /proc, or -1. */
static long parent_of(long pid) {
  char path[48], buf[1024];
  stat_path(path, pid);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return -1;
  ssize_t n = read(fd, buf, sizeof buf - 1);
  close(fd);
  if (n <= 0)
    return -1;
  buf[n] = '\0';
  /* "pid (comm) S ppid ...": comm may hold anything, even ") ". */
  const char *p = NULL;
  for (ssize_t i = n - 1; i >= 0 && !p; i--)
    if (buf[i] == ')')
      p = buf + i;
  if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
    return -1;
  long ppid = 0;
  for (p += 4; *p >= '0' && *p <= '9'; p++)
    ppid = ppid * 10 + (*p - '0');
  return ppid;
}

/* One entry of getdents64. */
struct raw_dirent {
  unsigned long long d_ino;
  long long d_off;
  unsigned short d_reclen;
  unsigned char d_type;
  char d_name[];
};

/*
 * Calls fn(pid, ud) for every child of the supervisor, read from
 * /proc/self/task/TID/children (it has one thread): one small file rather
 * than every process's. Returns false when the kernel has no such file
 * (built without it) or it cannot be read.
 */
static bool own_children(void (*fn)(pid_t, void *), void *ud) {
  char path[64] = "/proc/self/task/", *end = path + strlen(path);
  long tid = (long)getpid(), digits = 1;
  for (long t = tid; t >= 10; t /= 10)
    digits++;
  for (long i = digits - 1, t = tid; i >= 0; i--, t /= 10)
    end[i] = (char)('0' + t % 10);
  memcpy(end + digits, "/children", 10);
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return false;
  /* "pid pid ... ": read whole (it is rewritten as children come and
   * go), the numbers taken as they complete. */
  char buf[4096];
  long pid = -1;
  ssize_t got;
  while ((got = read(fd, buf, sizeof buf)) > 0)
    for (ssize_t i = 0; i < got; i++) {
      if (buf[i] >= '0' && buf[i] <= '9') {
        pid = (pid < 0 ? 0 : pid * 10) + (buf[i] - '0');
      } else if (pid > 0) {
        fn((pid_t)pid, ud);
        pid = -1;
      }
    }
  if (pid > 0)
    fn((pid_t)pid, ud);
  close(fd);
  return got == 0;
}

/*
 * Calls fn(pid, ud) for every process whose parent is in parents (n
 * entries), found in /proc. Returns false when /proc cannot be read.
 */
static bool each_child(const pid_t *parents, size_t n,
                       void (*fn)(pid_t, void *), void *ud) {
  if (n == 1 && parents[0] == getpid() && own_children(fn, ud))
    return true;
  int dir = open("/proc", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir < 0)
    return false;
  char buf[4096] __attribute__((aligned(8)));
  long got;
  while ((got = syscall(SYS_getdents64, dir, buf, sizeof buf)) > 0) {
    for (long off = 0; off < got;) {
      const struct raw_dirent *e = (const struct raw_dirent *)(buf + off);
      off += e->d_reclen;
      long pid = 0;
      const char *c = e->d_name;
      for (; *c >= '0' && *c <= '9'; c++)
        pid = pid * 10 + (*c - '0');
      if (*c || pid <= 0)
        continue;
      long ppid = parent_of(pid);
      for (size_t i = 0; i < n; i++)
        if (parents[i] == ppid) {
          fn((pid_t)pid, ud);
          break;
        }
    }
  }
  close(dir);
  return true;
}

/* The next level of the tree: each process found is signalled and kept. */
typedef struct level_walk {
  int sig;
  pid_t *next;
  size_t n;
} level_walk;

static void signal_and_keep(pid_t pid, void *ud) {
  level_walk *w = ud;
  kill(pid, w->sig);
  if (w->n < LEVEL)
    w->next[w->n++] = pid;
}

/*
 * Sends sig to everything under the supervisor: the command's process group
 * (while the unreaped command keeps its id reserved), then every
 * descendant, level by level.
 */
static void signal_tree(pid_t cmd, int sig) {
  kill(-cmd, sig);
  pid_t levels[2][LEVEL];
  levels[0][0] = getpid();
  size_t n = 1;
  for (int depth = 0, cur = 0; n > 0 && depth < MAX_DEPTH; depth++) {
    level_walk w = {sig, levels[1 - cur], 0};
    if (!each_child(levels[cur], n, signal_and_keep, &w))
      return;
    cur = 1 - cur;
    n = w.n;
  }
}

/* Reaps pid if it is a zombie, unless it is the command (whose zombie
 * keeps the group's id until the end). */
static void reap_if_done(pid_t pid, void *ud) {
  if (pid != *(const pid_t *)ud)
    waitpid(pid, NULL, WNOHANG);
}

static void kill_one(pid_t pid, void *ud) {
  (void)ud;
  kill(pid, SIGKILL);
}

/* The end: everything left is killed and reaped. Killing a process hands
 * its children to the supervisor, so this goes on until it has none. */
static void sweep(pid_t cmd) {
  kill(-cmd, SIGKILL);
  pid_t self = getpid();
  for (;;) {
    bool scanned = each_child(&self, 1, kill_one, NULL);
    if (!scanned)
      kill(cmd, SIGKILL); /* without /proc: the command at least */
    pid_t w = waitpid(-1, NULL, 0);
    if (w < 0 && errno == EINTR)
      continue;
    if (w < 0)
      break; /* ECHILD: nothing is left */
    while (waitpid(-1, NULL, WNOHANG) > 0)
      ;
  }
}

/* Tells mapopt that the command exited. */
static void report_exit(int ctl, const siginfo_t *si) {
  int msg[3] = {MSG_EXIT, si->si_code, si->si_status};
  ssize_t w = send(ctl, msg, sizeof msg, MSG_NOSIGNAL);
  (void)w;
}

/* The supervisor: starts the command, reports its exit, signals the tree
 * when asked, and at the end kills and reaps everything. */
static _Noreturn void run_supervisor(const child_setup *s) {
  setsid(); /* out of mapopt's group: the terminal's signals never come */
#ifdef PR_SET_CHILD_SUBREAPER
  prctl(PR_SET_CHILD_SUBREAPER, 1);
#endif
  default_signals();
  const int keep[3] = {s->out_fd, s->report_fd, s->ctl_fd};
  close_others(keep, s->max_fd);
  pid_t cmd = fork_plain();
  if (cmd == 0)
    run_child(s);
  if (cmd < 0) {
    int report[2] = {STAGE_SETUP, errno};
    ssize_t w = write(s->report_fd, report, sizeof report);
    (void)w;
    _exit(0);
  }
  close(s->out_fd);
  close(s->report_fd);
  int pidfd = -1;
#ifdef SYS_pidfd_open
  pidfd = (int)syscall(SYS_pidfd_open, cmd, 0);
#endif
  bool exited = false;
  double reaped = now_s();
  for (;;) {
    struct pollfd fds[2] = {{.fd = s->ctl_fd, .events = POLLIN},
                            {.fd = pidfd, .events = POLLIN}};
    nfds_t n = pidfd >= 0 && !exited ? 2 : 1;
    int ms = !exited && pidfd < 0 ? (int)(exit_check_s * 1e3) : reap_ms;
    int ready = poll(fds, n, ms);
    if (!exited) {
      siginfo_t si;
      si.si_pid = 0;
      if (waitid(P_PID, (id_t)cmd, &si, WEXITED | WNOHANG | WNOWAIT) == 0 &&
          si.si_pid == cmd) {
        exited = true;
        report_exit(s->ctl_fd, &si);
      }
    }
    if (ready > 0 && fds[0].revents) {
      char c;
      ssize_t got = read(s->ctl_fd, &c, 1);
      if (got == 1 && (c == MSG_TERM || c == MSG_KILL))
        signal_tree(cmd, c == MSG_TERM ? SIGTERM : SIGKILL);
      else if (got == 0 || (got < 0 && errno != EINTR && errno != EAGAIN))
        break; /* mapopt is done with the run, or gone */
    }
    if (now_s() - reaped >= reap_ms * 1e-3) {
      pid_t self = getpid();
      each_child(&self, 1, reap_if_done, &cmd);
      reaped = now_s();
    }
  }
  sweep(cmd);
  _exit(0);
}

/* ---- mapopt's side ------------------------------------------------------- */

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

/* Asks the supervisor for something; a supervisor that is gone cannot
 * be told anything (and must not raise SIGPIPE here). */
static void tell(int sv, char what) {
  ssize_t w = send(sv, &what, 1, MSG_NOSIGNAL);
  (void)w;
}

/* The command's end, from the supervisor's message {MSG_EXIT, si_code,
 * si_status}. */
static void take_exit(const int msg[3], mapopt__spawn_outcome *out) {
  if (msg[0] != MSG_EXIT)
    return;
  if (msg[1] == CLD_EXITED)
    out->exit_code = msg[2];
  else if (msg[1] == CLD_KILLED || msg[1] == CLD_DUMPED)
    out->signal = msg[2];
}

/*
 * Watches the started command: reads its output from rd into the capture,
 * learns of its exit from the supervisor (socket sv), and on timeout or a
 * stop asks the supervisor for SIGTERM and, after the grace, SIGKILL. At
 * the end closes sv -- the supervisor then kills and reaps what is left --
 * and reaps the supervisor.
 */
static mapopt_status supervise(mapopt_ctx *ctx, const mapopt__spawn_spec *spec,
                               pid_t sup, int rd, int sv, double t0,
                               mapopt__spawn_outcome *out) {
  char *buf = mapopt__malloc(ctx, CHUNK);
  mapopt_status st = buf ? MAPOPT_OK : MAPOPT_ENOMEM;
  fcntl(rd, F_SETFL, fcntl(rd, F_GETFL) | O_NONBLOCK);
  double deadline = spec->timeout_s > 0 ? t0 + spec->timeout_s : INFINITY;
  double kill_at = INFINITY, linger_end = 0, t_exit = 0;
  bool exited = false;
  int msg[3];
  size_t have = 0;
  while (st == MAPOPT_OK) {
    double now = now_s();
    if (exited && (rd < 0 || now >= linger_end))
      break;
    if (!exited && sv < 0)
      break; /* the supervisor is gone: the command's status with it */
    bool stop = spec->stop && *spec->stop;
    if (!exited && !out->kill_signal && (now >= deadline || stop)) {
      tell(sv, MSG_TERM);
      out->interrupted = stop;
      out->timed_out = !stop;
      out->kill_signal = SIGTERM;
      kill_at = now + spec->grace_s;
    } else if (!exited && out->kill_signal == SIGTERM && now >= kill_at) {
      tell(sv, MSG_KILL);
      out->kill_signal = SIGKILL;
      kill_at = INFINITY;
    }
    double wake = exited ? linger_end : out->kill_signal ? kill_at : deadline;
    if (!exited && !out->kill_signal && spec->stop && wake > now + stop_check_s)
      wake = now + stop_check_s;
    struct pollfd fds[2];
    nfds_t n = 0;
    int at_rd = -1, at_sv = -1;
    if (rd >= 0) {
      at_rd = (int)n;
      fds[n++] = (struct pollfd){.fd = rd, .events = POLLIN};
    }
    if (sv >= 0 && !exited) {
      at_sv = (int)n;
      fds[n++] = (struct pollfd){.fd = sv, .events = POLLIN};
    }
    if (poll(fds, n, poll_ms(now, wake)) <= 0)
      continue;
    if (at_sv >= 0 && fds[at_sv].revents) {
      ssize_t got = read(sv, (char *)msg + have, sizeof msg - have);
      if (got > 0 && (have += (size_t)got) == sizeof msg) {
        take_exit(msg, out);
        exited = true;
        t_exit = now_s();
        linger_end = t_exit + spec->linger_s;
      } else if (got == 0 || (got < 0 && errno != EAGAIN && errno != EINTR)) {
        close(sv);
        sv = -1;
      }
    }
    if (at_rd < 0 || !fds[at_rd].revents)
      continue;
    ssize_t got = read(rd, buf, CHUNK);
    if (got > 0) {
      st = mapopt__capture_add(&out->out, buf, (size_t)got);
    } else if (got == 0 || (errno != EAGAIN && errno != EINTR)) {
      close(rd);
      rd = -1;
    }
  }
  /* Whatever is left goes: the supervisor kills and reaps it, then exits. */
  if (sv >= 0)
    close(sv);
  while (waitpid(sup, NULL, 0) < 0 && errno == EINTR)
    ;
  if (!exited)
    t_exit = now_s();
  out->wall_s = t_exit - t0;
  if (rd >= 0)
    close(rd);
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
  /* output pipe, report pipe (read, write each), socket pair (mapopt's end,
   * the supervisor's) */
  int fds[6] = {-1, -1, -1, -1, -1, -1};
  bool piped = pipe2(fds, O_CLOEXEC) == 0 && pipe2(fds + 2, O_CLOEXEC) == 0 &&
               socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds + 4) == 0;
  for (int i = 0; i < 6; i++) {
    fds[i] = above_stdio(fds[i]);
    piped &= fds[i] >= 0;
  }
  int err = errno;
  pid_t pid = piped ? fork() : -1;
  if (pid == 0) {
    setup.out_fd = fds[1];
    setup.report_fd = fds[3];
    setup.ctl_fd = fds[5];
    run_supervisor(&setup);
  }
  if (pid < 0)
    err = errno;
  for (int i = 0; i < 6; i++)
    if (fds[i] >= 0 && (i % 2 == 1 || pid < 0))
      close(fds[i]);
  if (pid < 0) {
    st = not_started(ctx, out, "cannot %s: %s",
                     piped ? "start a process" : "make a pipe",
                     errstr(err, eb, sizeof eb));
    goto done;
  }
  int rd = fds[0], prep = fds[2], sv = fds[4];
  /* Until exec, the report pipe stays open in the command: EOF means the
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
    close(sv);
    while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
      ;
    st = child_failed(ctx, &setup, report, out);
    goto done;
  }
  /* The run's time starts at exec, not at the two forks before it (which
   * take longer the more memory mapopt has mapped). */
  out->started = true;
  st = supervise(ctx, spec, pid, rd, sv, now_s(), out);
done:
  mapopt__free(ctx, prog, strlen(prog) + 1);
  return st;
}

void mapopt__spawn_outcome_destroy(mapopt__spawn_outcome *o) {
  mapopt_text_free(o->start_error);
  o->start_error = NULL;
  mapopt__capture_destroy(&o->out);
}
