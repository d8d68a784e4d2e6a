/*
 * "Nothing changed" (docs/guide.md, no-effect): a run whose profile equals
 * an earlier attempt's -- the same decisions resolved, the same times --
 * says so, and names the statements that differ between the two mappers:
 * they had no effect. The profile's signature hashes what a report holds
 * of a successful run (elapsed time, processors, copies, memories, the
 * critical path and its attribution, the busiest tasks with the memory and
 * layout of each argument), so two runs that differ in any decision the
 * simulator applied to the timed work, or in any time, differ in it.
 */
#include <inttypes.h>
#include <string.h>

#include "guide/guide.h"

/* FNV-1a over 64-bit words and strings. */
typedef struct sig {
  uint64_t h;
} sig;

static void mix(sig *s, uint64_t v) {
  for (int i = 0; i < 8; i++) {
    s->h ^= (v >> (8 * i)) & 0xff;
    s->h *= 0x100000001b3ull;
  }
}

static void mix_str(sig *s, const char *t) {
  for (; t && *t; t++) {
    s->h ^= (unsigned char)*t;
    s->h *= 0x100000001b3ull;
  }
  mix(s, 0x5a);
}

static void mix_end(sig *s, const mapopt_sim_end *e) {
  mix_str(s, e->kind);
  mix(s, (uint64_t)e->node);
  mix(s, (uint64_t)e->rank);
  mix(s, (uint64_t)e->index);
}

uint64_t mapopt_guide_profile_signature(const mapopt_sim_result *r) {
  sig s = {0xcbf29ce484222325ull};
  if (!r)
    return 0;
  mix(&s, (uint64_t)r->error);
  mix(&s, (uint64_t)r->elapsed_ns);
  for (size_t i = 0; i < mapopt_sim_result_nprocs(r); i++) {
    mix(&s, (uint64_t)mapopt_sim_result_proc(r, i)->busy_ns);
    mix(&s, (uint64_t)mapopt_sim_result_proc(r, i)->tasks);
  }
  for (int k = 0; k < MAPOPT_SIM_COPY_KINDS; k++) {
    mix(&s, (uint64_t)mapopt_sim_result_copy(r, k)->bytes);
    mix(&s, (uint64_t)mapopt_sim_result_copy(r, k)->count);
    mix(&s, (uint64_t)mapopt_sim_result_copy(r, k)->busy_ns);
  }
  for (size_t i = 0; i < mapopt_sim_result_nmems(r); i++)
    mix(&s, (uint64_t)mapopt_sim_result_mem(r, i)->peak_bytes);
  const mapopt_sim_critical_path *cp = &r->critical_path;
  const int64_t parts[] = {cp->compute_ns, cp->copy_ns, cp->runtime_ns,
                           cp->queue_ns, cp->backpressure_ns};
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    mix(&s, (uint64_t)parts[i]);
  for (size_t i = 0; i < mapopt_sim_result_nwaits(r); i++) {
    const mapopt_sim_wait *w = mapopt_sim_result_wait(r, i);
    mix_str(&s, w->task);
    mix(&s, (uint64_t)w->arg);
    mix(&s, (uint64_t)w->cause);
    mix(&s, (uint64_t)w->channel);
    mix_str(&s, w->other);
    mix_end(&s, &w->from);
    mix_end(&s, &w->to);
    mix(&s, (uint64_t)w->exposed_ns);
    mix(&s, (uint64_t)w->waited_ns);
    mix(&s, (uint64_t)w->bytes);
  }
  for (size_t i = 0; i < mapopt_sim_result_ntop(r); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(r, i);
    mix_str(&s, t->task);
    mix(&s, (uint64_t)t->kind);
    mix(&s, (uint64_t)t->busy_ns);
    mix(&s, (uint64_t)t->procs_used);
    mix(&s, (uint64_t)t->proc_max_ns);
    for (size_t q = 0; q < mapopt_sim_task_nreqs(t); q++) {
      const mapopt_sim_req_stats *rq = mapopt_sim_task_req(t, q);
      mix(&s, (uint64_t)rq->memory);
      mix(&s, (uint64_t)rq->layout.soa);
      mix(&s, (uint64_t)rq->layout.c_order);
      mix(&s, (uint64_t)rq->instance_bytes);
    }
  }
  return s.h;
}

/* ---- the statements two mappers differ in ---------------------------------
 */

/* A statement of a canonical mapper text: a line that starts at column 0,
 * with the indented lines (a function's body) and the closing brace that
 * follow it. */
typedef struct stmt {
  const char *at;
  size_t len;   /* the whole statement */
  size_t first; /* its first line */
} stmt;

static size_t statements(const char *text, stmt *out, size_t cap) {
  size_t n = 0;
  const char *p = text;
  while (p && *p) {
    const char *eol = strchr(p, '\n');
    size_t line = eol ? (size_t)(eol - p) : strlen(p);
    const char *next = eol ? eol + 1 : p + line;
    bool cont = *p == ' ' || *p == '\t' || *p == '}';
    bool skip = line == 0 || *p == '#';
    if (cont && n > 0) {
      out[n - 1].len = (size_t)(next - out[n - 1].at);
    } else if (!skip && n < cap) {
      out[n++] = (stmt){p, (size_t)(next - p), line};
    }
    p = next;
  }
  return n;
}

static bool has_stmt(const stmt *list, size_t n, const stmt *x) {
  for (size_t i = 0; i < n; i++)
    if (list[i].len == x->len && memcmp(list[i].at, x->at, x->len) == 0)
      return true;
  return false;
}

/* "`A`, `B`" for the first lines of the statements of a that b lacks (at
 * most four, then how many more); "" for none. */
static const char *missing(mapopt_findings *f, const stmt *a, size_t na,
                           const stmt *b, size_t nb) {
  const char *out = "";
  size_t k = 0;
  for (size_t i = 0; i < na; i++) {
    if (has_stmt(b, nb, &a[i]))
      continue;
    if (k++ < 4)
      out = mapopt__guide_printf(f, "%s%s`%.*s`", out, out[0] ? ", " : "",
                                 (int)a[i].first, a[i].at);
  }
  if (k > 4)
    out = mapopt__guide_printf(f, "%s and %zu more", out, k - 4);
  return out;
}

mapopt_status mapopt_guide_note_unchanged(mapopt_findings *f, int64_t earlier,
                                          const char *earlier_text,
                                          const char *text) {
  if (!f || !earlier_text || !text)
    return MAPOPT_EINVAL;
  enum { CAP = 256 };
  stmt a[CAP], b[CAP];
  size_t na = statements(text, a, CAP), nb = statements(earlier_text, b, CAP);
  const char *added = missing(f, a, na, b, nb);
  const char *removed = missing(f, b, nb, a, na);
  mapopt_guide_finding *g = mapopt__guide_add(f, MAPOPT_GUIDE_PERFORMANCE,
                                              MAPOPT_GUIDE_CODE_NO_EFFECT);
  if (!g)
    return MAPOPT_ENOMEM;
  g->subject = mapopt__guide_printf(f, "evaluation %" PRId64, earlier);
  g->message = mapopt__guide_printf(
      f,
      "nothing changed: this run's profile equals that of evaluation %" PRId64
      " (the same decisions, the same times)",
      earlier);
  const char *what =
      added[0] && removed[0]
          ? mapopt__guide_printf(f, "it has %s where that one has %s", added,
                                 removed)
      : added[0]   ? mapopt__guide_printf(f, "it adds %s", added)
      : removed[0] ? mapopt__guide_printf(f, "it drops %s", removed)
                   : "the two texts differ in comments and spacing only";
  g->explain = mapopt__guide_printf(f,
                                    "The statements this mapper differs in "
                                    "from evaluation %" PRId64 "'s had no "
                                    "effect on the run: %s.",
                                    earlier, what);
  g->suggest = mapopt__guide_printf(
      f, "Change something else: these statements leave the run as it was "
         "(a placement that puts every point where it already goes, a "
         "memory or layout for data no timed task reads, a limit that is "
         "never reached).");
  mapopt__guide_sort(f);
  return f->failed ? MAPOPT_ENOMEM : MAPOPT_OK;
}
