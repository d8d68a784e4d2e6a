/*
 * The state of a loaded program that the loader (load.c), the interpreter
 * (eval.c) and the policy queries (policy.c) all use: the emitter of
 * `print` lines with its 1000-line cap (W15), the pool of scratch arenas
 * of queries, and the keys of the binding tables. It is the bottom of the
 * module's run-time files: it calls none of them.
 *
 * The print counter and the pool are shared by concurrent queries and
 * guarded by the program's mutex, never held while a callback runs.
 */
#include <string.h>

#include <stdio.h>

#include "dsl/dsl.h"

/* ---- print --------------------------------------------------------------- */

void mapopt__dsl_emit_print(mapopt_program *prog, const char *line,
                            mapopt_diags *diags, mapopt__loc loc) {
  bool emit = false, truncate = false;
  pthread_mutex_lock(&prog->lock);
  if (prog->printed < MAPOPT__DSL_PRINT_LIMIT) {
    prog->printed++;
    emit = true;
  } else if (!prog->print_truncated) {
    prog->print_truncated = true;
    truncate = true;
  }
  pthread_mutex_unlock(&prog->lock);
  if (emit && prog->print)
    prog->print(prog->print_ud, line);
  if (truncate && diags)
    mapopt__dsl_diag(diags, MAPOPT__DIAG(W15_PRINT_LIMIT), prog->ast.file, loc,
                     MAPOPT__DSL_PRINT_LIMIT);
}

bool mapopt__dsl_trace_admit(mapopt_program *prog) {
  pthread_mutex_lock(&prog->lock);
  int64_t n = prog->traced < INT64_MAX ? prog->traced++ : prog->traced;
  pthread_mutex_unlock(&prog->lock);
  if (n == MAPOPT__DSL_TRACE_LIMIT && prog->trace) {
    char line[80];
    snprintf(line, sizeof line, "... trace truncated after %d lines",
             MAPOPT__DSL_TRACE_LIMIT);
    prog->trace(prog->trace_ud, line);
  }
  return n < MAPOPT__DSL_TRACE_LIMIT;
}

/* ---- scratch ------------------------------------------------------------- */

mapopt__scratch *mapopt__scratch_get(mapopt_program *prog) {
  pthread_mutex_lock(&prog->lock);
  mapopt__scratch *s = prog->scratch_pool;
  if (s)
    prog->scratch_pool = s->next;
  pthread_mutex_unlock(&prog->lock);
  if (s)
    return s;
  s = mapopt__malloc(prog->ctx, sizeof *s);
  if (s)
    mapopt__arena_init(&s->arena, prog->ctx);
  return s;
}

void mapopt__scratch_put(mapopt_program *prog, mapopt__scratch *s) {
  mapopt__arena_reset(&s->arena);
  pthread_mutex_lock(&prog->lock);
  s->next = prog->scratch_pool;
  prog->scratch_pool = s;
  pthread_mutex_unlock(&prog->lock);
}

/* ---- binding-table keys -------------------------------------------------- */

size_t mapopt__dsl_key(char *buf, size_t size, const char *a, const char *b,
                       const char *c) {
  /* Hot in policy lookups: plain copies, no formatting. */
  const char *parts[3] = {a, b, c};
  size_t n = 0;
  for (int i = 0; i < 3 && parts[i]; i++) {
    size_t len = strlen(parts[i]);
    if (n + len + 2 > size)
      return 0;
    if (i)
      buf[n++] = '\x1f';
    memcpy(buf + n, parts[i], len);
    n += len;
  }
  buf[n] = '\0';
  return n;
}
