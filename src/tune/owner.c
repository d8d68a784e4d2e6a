/*
 * Who writes a run (docs/tuning.md, "Several processes on one database"):
 * a process is named by its host, its process id, the boot it runs in and
 * its start time since that boot, so that a process id reused after the
 * owner died, or after a reboot, is not mistaken for the owner.
 *
 * A recorded owner is alive when it is on this host, in this boot, and
 * /proc shows a process of its id started at its start time. An owner on
 * another host is never alive here: SQLite's WAL mode, which the database
 * uses, needs every process that opens it on one machine (it shares memory
 * between them), so a database that names another host was copied or
 * moved, and its owner writes it no longer. Without /proc (boot and start
 * unknown), a process of the recorded id that signals can reach counts as
 * alive.
 */
#define _GNU_SOURCE /* gethostname */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tune/tune.h"

/* The boot id, or "" when /proc does not give it. */
static void boot_id(char out[40]) {
  out[0] = '\0';
  FILE *f = fopen("/proc/sys/kernel/random/boot_id", "re");
  if (!f)
    return;
  if (!fgets(out, 40, f))
    out[0] = '\0';
  fclose(f);
  out[strcspn(out, "\n")] = '\0';
}

/* The start time of process pid in clock ticks since boot (field 22 of
 * /proc/PID/stat), or -1. */
static long long start_of(long pid) {
  char path[64], buf[1024];
  snprintf(path, sizeof path, "/proc/%ld/stat", pid);
  FILE *f = fopen(path, "re");
  if (!f)
    return -1;
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  /* After "pid (comm)": comm may hold spaces and parentheses. */
  const char *p = strrchr(buf, ')');
  if (!p)
    return -1;
  /* Fields 3 to 21, then the start time. */
  for (int field = 2; field < 22 && p; field++)
    p = strchr(p + 1, ' ');
  long long start;
  return p && sscanf(p + 1, "%lld", &start) == 1 ? start : -1;
}

void mapopt__owner_self(mapopt__owner *o) {
  memset(o, 0, sizeof *o);
  if (gethostname(o->host, sizeof o->host) != 0)
    snprintf(o->host, sizeof o->host, "unknown");
  o->host[sizeof o->host - 1] = '\0';
  o->pid = (long)getpid();
  boot_id(o->boot);
  o->start = start_of(o->pid);
}

bool mapopt__owner_alive(const mapopt__owner *o) {
  mapopt__owner me;
  mapopt__owner_self(&me);
  if (strcmp(o->host, me.host) != 0)
    return false;
  if (o->boot[0] && me.boot[0] && strcmp(o->boot, me.boot) != 0)
    return false;
  if (o->start >= 0 && me.start >= 0)
    return start_of(o->pid) == o->start;
  return o->pid > 0 && (kill((pid_t)o->pid, 0) == 0 || errno == EPERM);
}
