/*
 * The shared vocabulary of mapopt/shape.h: the names of the processor and
 * memory kinds and their parsers, the default preset's shape and the
 * one-line synthetic description ("nodes=2 gpu=4 cpu=8 omp=2"), in the
 * spirit of hwloc's synthetic topologies, so tests and the CLI need no
 * fixture files.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mapopt/shape.h"

#define BIT(m) (1u << (m))

/* ---- kinds --------------------------------------------------------------- */

static const char *const proc_names[MAPOPT_PROC_KIND_COUNT] = {
    "CPU", "GPU", "OMP", "IO", "PY", "PROC"};
static const char *const mem_names[MAPOPT_MEM_KIND_COUNT] = {
    "SYSMEM", "FBMEM", "ZCMEM", "RDMEM", "SOCKMEM", "VIRTUAL"};

const char *mapopt_shape_proc_name(mapopt_proc_kind k) {
  return (unsigned)k < MAPOPT_PROC_KIND_COUNT ? proc_names[k] : NULL;
}

const char *mapopt_shape_mem_name(mapopt_mem_kind k) {
  return (unsigned)k < MAPOPT_MEM_KIND_COUNT ? mem_names[k] : NULL;
}

mapopt_mem_kind mapopt_shape_default_memory(const mapopt_machine_shape *shape,
                                            mapopt_proc_kind k) {
  if (k == MAPOPT_PROC_GPU)
    return MAPOPT_MEM_FBMEM;
  if (k == MAPOPT_PROC_OMP && (shape->affinity[k] >> MAPOPT_MEM_SOCKMEM) & 1u)
    return MAPOPT_MEM_SOCKMEM;
  return MAPOPT_MEM_SYSMEM;
}

/* Lower case of an ASCII letter; anything else unchanged. */
static char lower(char c) {
  return c >= 'A' && c <= 'Z' ? (char)(c - 'A' + 'a') : c;
}

static bool equal_lower(const char *name, const char *s) {
  for (; *name && *s; name++, s++)
    if (lower(*name) != *s)
      return false;
  return *name == *s;
}

mapopt_status mapopt_shape_proc_parse(const char *s, mapopt_proc_kind *out) {
  if (!s)
    return MAPOPT_EINVAL;
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
    if (strcmp(proc_names[k], s) == 0 || equal_lower(proc_names[k], s)) {
      *out = (mapopt_proc_kind)k;
      return MAPOPT_OK;
    }
  return MAPOPT_ENOTFOUND;
}

mapopt_status mapopt_shape_mem_parse(const char *s, mapopt_mem_kind *out) {
  if (!s)
    return MAPOPT_EINVAL;
  for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
    if (strcmp(mem_names[k], s) == 0) {
      *out = (mapopt_mem_kind)k;
      return MAPOPT_OK;
    }
  return MAPOPT_ENOTFOUND;
}

/* ---- shapes -------------------------------------------------------------- */

/* Affinity per docs/machines.md, "affinity", restricted to the memories that
 * exist. */
static void set_affinity(mapopt_machine_shape *s, bool sys, bool sock, bool zc,
                         bool rd) {
  unsigned have = (sys ? BIT(MAPOPT_MEM_SYSMEM) : 0) |
                  (sock ? BIT(MAPOPT_MEM_SOCKMEM) : 0) |
                  (zc ? BIT(MAPOPT_MEM_ZCMEM) : 0) |
                  (rd ? BIT(MAPOPT_MEM_RDMEM) : 0) | BIT(MAPOPT_MEM_FBMEM);
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
    s->affinity[k] = 0;
  s->affinity[MAPOPT_PROC_CPU] =
      have & (BIT(MAPOPT_MEM_SYSMEM) | BIT(MAPOPT_MEM_SOCKMEM) |
              BIT(MAPOPT_MEM_ZCMEM) | BIT(MAPOPT_MEM_RDMEM));
  s->affinity[MAPOPT_PROC_GPU] =
      have & (BIT(MAPOPT_MEM_FBMEM) | BIT(MAPOPT_MEM_ZCMEM));
  s->affinity[MAPOPT_PROC_OMP] =
      have & (BIT(MAPOPT_MEM_SOCKMEM) | BIT(MAPOPT_MEM_SYSMEM) |
              BIT(MAPOPT_MEM_ZCMEM));
}

void mapopt_shape_default(mapopt_machine_shape *s) {
  memset(s, 0, sizeof *s);
  s->nodes = 1;
  s->procs[MAPOPT_PROC_CPU] = 4;
  s->procs[MAPOPT_PROC_GPU] = 4;
  s->procs[MAPOPT_PROC_OMP] = 2;
  s->sockets = 2;
  set_affinity(s, true, true, true, true);
}

static const char *const proc_keys[MAPOPT_PROC_KIND_COUNT] = {
    "cpu", "gpu", "omp", "io", "py", "proc"};

mapopt_status mapopt_shape_parse(const char *text, mapopt_machine_shape *out,
                                 char *err, size_t errlen) {
  mapopt_machine_shape s;
  memset(&s, 0, sizeof s);
  s.nodes = 1;
  int64_t sockets = -1, sys = 1, zc = -1, rd = 1;
  const char *p = text;
  for (;;) {
    while (*p == ' ' || *p == '\t' || *p == ',')
      p++;
    if (!*p)
      break;
    const char *key = p;
    while (*p && *p != '=' && *p != ' ' && *p != '\t' && *p != ',')
      p++;
    size_t klen = (size_t)(p - key);
    int col = (int)(key - text) + 1;
    if (*p != '=') {
      snprintf(err, errlen, "column %d: expected key=value, got '%.*s'", col,
               (int)klen, key);
      return MAPOPT_EINVAL;
    }
    p++;
    const char *val = p;
    errno = 0;
    char *end;
    long long v = strtoll(val, &end, 10);
    if (end == val || (*end && *end != ' ' && *end != '\t' && *end != ',') ||
        errno || v < 0 || v > (1LL << 40)) {
      int vlen = 0;
      while (val[vlen] && val[vlen] != ' ' && val[vlen] != '\t' &&
             val[vlen] != ',')
        vlen++;
      snprintf(err, errlen,
               "column %d: value of '%.*s' must be an integer in [0, 2^40], "
               "got '%.*s'",
               (int)(val - text) + 1, (int)klen, key, vlen, val);
      return MAPOPT_EINVAL;
    }
    p = end;
    int64_t *slot = NULL;
    if (klen == 5 && strncmp(key, "nodes", 5) == 0)
      slot = &s.nodes;
    for (int k = 0; k < MAPOPT_PROC_KIND_COUNT && !slot; k++)
      if (strlen(proc_keys[k]) == klen && strncmp(key, proc_keys[k], klen) == 0)
        slot = &s.procs[k];
    if (!slot && klen == 7 && strncmp(key, "sockets", 7) == 0)
      slot = &sockets;
    if (!slot && klen == 6 && strncmp(key, "sysmem", 6) == 0)
      slot = &sys;
    if (!slot && klen == 5 && strncmp(key, "zcmem", 5) == 0)
      slot = &zc;
    if (!slot && klen == 5 && strncmp(key, "rdmem", 5) == 0)
      slot = &rd;
    if (!slot) {
      snprintf(err, errlen,
               "column %d: unknown key '%.*s' (expected nodes, cpu, gpu, omp, "
               "io, py, proc, sockets, sysmem, zcmem or rdmem)",
               col, (int)klen, key);
      return MAPOPT_EINVAL;
    }
    *slot = v;
  }
  if (s.nodes < 1) {
    snprintf(err, errlen, "nodes must be at least 1");
    return MAPOPT_EINVAL;
  }
  if (sys > 1 || zc > 1 || rd > 1) {
    snprintf(err, errlen, "sysmem, zcmem and rdmem must be 0 or 1");
    return MAPOPT_EINVAL;
  }
  if (sockets < 0)
    sockets = s.procs[MAPOPT_PROC_CPU] || s.procs[MAPOPT_PROC_OMP] ? 1 : 0;
  if (zc < 0)
    zc = s.procs[MAPOPT_PROC_GPU] > 0;
  set_affinity(&s, sys, sockets > 0, zc, rd);
  s.sockets = sockets;
  *out = s;
  return MAPOPT_OK;
}

int mapopt_shape_format(const mapopt_machine_shape *s, char *buf, size_t size) {
  int n = snprintf(buf, size, "nodes=%" PRId64, s->nodes);
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
    if (s->procs[k] && n >= 0 && (size_t)n < size)
      n += snprintf(buf + n, size - (size_t)n, " %s=%" PRId64, proc_keys[k],
                    s->procs[k]);
  unsigned all = 0;
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
    all |= s->affinity[k];
  /* A shape built by hand may leave sockets 0 while it has SOCKMEM: it has
   * at least one socket then. */
  int64_t sockets =
      s->sockets > 0 || !((all >> MAPOPT_MEM_SOCKMEM) & 1) ? s->sockets : 1;
  if (n >= 0 && (size_t)n < size)
    n += snprintf(buf + n, size - (size_t)n,
                  " sockets=%" PRId64 " sysmem=%d zcmem=%d rdmem=%d", sockets,
                  (all >> MAPOPT_MEM_SYSMEM) & 1, (all >> MAPOPT_MEM_ZCMEM) & 1,
                  (all >> MAPOPT_MEM_RDMEM) & 1);
  return n;
}
