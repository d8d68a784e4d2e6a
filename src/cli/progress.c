/*
 * The progress line: a command that works for more than a second shows on
 * stderr what it is doing ("mapopt sim: simulating: 45% of 1200000
 * operations, 1.234 s simulated (12 s)"), redrawn in place a few times a
 * second and erased before the command prints its results. It is drawn
 * only when stderr is a terminal, so logs, pipes and tests never see it;
 * MAPOPT_PROGRESS=0 turns it off, MAPOPT_PROGRESS=1 draws it at once and
 * whatever stderr is (one line per update, for tests).
 *
 * A thread does the drawing, so a phase that reports nothing (loading a
 * large model) still shows its elapsed time. The command's thread only
 * sets the phase and, through the simulator's progress callback, the
 * numbers; a mutex keeps the two from drawing over each other, and
 * cli_progress_phase(p, NULL) erases the line before any output.
 */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

struct cli_progress {
  pthread_t thread;
  pthread_mutex_t lock;
  pthread_cond_t wake;
  const char *cmd;
  const char *phase; /* NULL: nothing to show */
  char detail[160];
  struct timespec start;
  int64_t delay_ms; /* nothing is drawn before */
  bool forced;      /* MAPOPT_PROGRESS=1: every update on its own line */
  bool stop, drawn;
};

static int64_t ms_since(const struct timespec *t0) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Erases the line drawn (under the lock). */
static void erase(cli_progress *p) {
  if (p->drawn && !p->forced)
    fputs("\r\033[K", stderr);
  p->drawn = false;
  fflush(stderr);
}

/* Draws the line (under the lock). */
static void draw(cli_progress *p) {
  int64_t ms = ms_since(&p->start);
  if (!p->phase || ms < p->delay_ms)
    return;
  fprintf(stderr, "%smapopt %s: %s%s%s (%" PRId64 " s)%s",
          p->forced ? "" : "\r\033[K", p->cmd, p->phase,
          p->detail[0] ? ": " : "", p->detail, ms / 1000,
          p->forced ? "\n" : "");
  fflush(stderr);
  p->drawn = true;
}

static void *ticker(void *arg) {
  cli_progress *p = arg;
  pthread_mutex_lock(&p->lock);
  while (!p->stop) {
    struct timespec until;
    clock_gettime(CLOCK_MONOTONIC, &until);
    until.tv_nsec += 250 * 1000000L;
    if (until.tv_nsec >= 1000000000L) {
      until.tv_sec++;
      until.tv_nsec -= 1000000000L;
    }
    pthread_cond_timedwait(&p->wake, &p->lock, &until);
    if (!p->stop)
      draw(p);
  }
  erase(p);
  pthread_mutex_unlock(&p->lock);
  return NULL;
}

cli_progress *cli_progress_start(const char *cmd) {
  const char *env = getenv("MAPOPT_PROGRESS");
  bool forced = env && strcmp(env, "1") == 0;
  const char *term = getenv("TERM");
  if ((env && strcmp(env, "0") == 0) ||
      (!forced && (!isatty(STDERR_FILENO) || (term && !strcmp(term, "dumb")))))
    return NULL;
  cli_progress *p = calloc(1, sizeof *p);
  if (!p)
    return NULL; /* no progress line: nothing else depends on it */
  p->cmd = cmd;
  p->forced = forced;
  p->delay_ms = forced ? 0 : 1000;
  clock_gettime(CLOCK_MONOTONIC, &p->start);
  pthread_condattr_t attr;
  pthread_condattr_init(&attr);
  pthread_condattr_setclock(&attr, CLOCK_MONOTONIC);
  bool ok = pthread_mutex_init(&p->lock, NULL) == 0;
  ok = ok && pthread_cond_init(&p->wake, &attr) == 0;
  pthread_condattr_destroy(&attr);
  if (!ok || pthread_create(&p->thread, NULL, ticker, p) != 0) {
    free(p);
    return NULL;
  }
  return p;
}

void cli_progress_phase(cli_progress *p, const char *phase) {
  if (!p)
    return;
  pthread_mutex_lock(&p->lock);
  if (!phase)
    erase(p);
  p->phase = phase;
  p->detail[0] = '\0';
  if (phase && p->forced)
    draw(p);
  pthread_mutex_unlock(&p->lock);
}

void cli_progress_sim(void *ud, int64_t ops_done, int64_t ops, int64_t now_ns) {
  cli_progress *p = ud;
  if (!p)
    return;
  pthread_mutex_lock(&p->lock);
  snprintf(p->detail, sizeof p->detail,
           "%" PRId64 "%% of %" PRId64 " operations, %.3f s simulated",
           ops > 0 ? ops_done * 100 / ops : 0, ops, (double)now_ns / 1e9);
  if (p->forced)
    draw(p);
  pthread_mutex_unlock(&p->lock);
}

void cli_progress_stop(cli_progress *p) {
  if (!p)
    return;
  pthread_mutex_lock(&p->lock);
  p->stop = true;
  pthread_cond_signal(&p->wake);
  pthread_mutex_unlock(&p->lock);
  pthread_join(p->thread, NULL);
  pthread_cond_destroy(&p->wake);
  pthread_mutex_destroy(&p->lock);
  free(p);
}
