/*
 * AutoGuide's rules on the output text: what a run printed, line by line.
 * They must work on any log -- a real Legion or StarPU run as well as the
 * simulator's -- so they match the wording that the runtime, the kernels
 * and the DSL mapper print (docs/dsl.md "Diagnostics", docs/sim.md), each
 * by a fixed substring that real and simulated runs share:
 *
 *   FILE:LINE:COL: error: MESSAGE          a mapper that does not compile
 *   FILE:LINE:COL: mapping error: MESSAGE  a mapping function that failed
 *   FILE: note: while placing point (3,) of task 'k' with 'f'
 *   Slice processor index out of bound! 4 >= 4     (and the other errors)
 *   ELAPSED TIME =   0.137 s                        (and the metric lines)
 *
 * An error line becomes one finding; the note and `[mapopt-sim]` context
 * lines after it add the task, the function and the region. When the
 * application run, the mapper and the machine are given, the findings name
 * argument positions, variants and statements precisely; without them
 * they say what the text alone allows.
 */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "guide/guide.h"

/* ---- lines --------------------------------------------------------------- */

typedef struct span {
  const char *s;
  size_t n;
} span;

/* The first occurrence of needle in s, or NULL. */
static const char *find(span s, const char *needle) {
  size_t k = strlen(needle);
  for (size_t i = 0; k <= s.n && i + k <= s.n; i++)
    if (memcmp(s.s + i, needle, k) == 0)
      return s.s + i;
  return NULL;
}

static bool starts(span s, const char *prefix) {
  size_t k = strlen(prefix);
  return s.n >= k && memcmp(s.s, prefix, k) == 0;
}

static span trim(span s) {
  while (s.n && isspace((unsigned char)s.s[0]))
    s.s++, s.n--;
  while (s.n && isspace((unsigned char)s.s[s.n - 1]))
    s.n--;
  return s;
}

static span after(span s, const char *p) {
  return (span){p, s.n - (size_t)(p - s.s)};
}

/* The identifier-like word ([A-Za-z0-9_.]) at the start of s, or "". */
static span word(span s) {
  size_t i = 0;
  while (i < s.n &&
         (isalnum((unsigned char)s.s[i]) || s.s[i] == '_' || s.s[i] == '.'))
    i++;
  return (span){s.s, i};
}

/* The word that follows needle in s (or "" when needle is absent). */
static span word_after(span s, const char *needle) {
  const char *p = find(s, needle);
  return p ? word(after(s, p + strlen(needle))) : (span){s.s, 0};
}

/* The integer that follows needle in s; false when there is none. */
static bool int_after(span s, const char *needle, int64_t *out) {
  span w = word_after(s, needle);
  if (!w.n || !isdigit((unsigned char)w.s[0]))
    return false;
  char buf[32];
  size_t n = w.n < sizeof buf - 1 ? w.n : sizeof buf - 1;
  memcpy(buf, w.s, n);
  buf[n] = '\0';
  *out = strtoll(buf, NULL, 10);
  return true;
}

/* The k-th (from 0) text between single quotes in s, or "". */
static span quoted(span s, int k) {
  const char *p = s.s, *end = s.s + s.n;
  for (;;) {
    const char *a = memchr(p, '\'', (size_t)(end - p));
    if (!a)
      return (span){s.s, 0};
    const char *b = memchr(a + 1, '\'', (size_t)(end - a - 1));
    if (!b)
      return (span){s.s, 0};
    if (k-- == 0)
      return (span){a + 1, (size_t)(b - a - 1)};
    p = b + 1;
  }
}

/* ---- the scan ---------------------------------------------------------- */

enum { SEV_NONE, SEV_ERROR, SEV_MAPPING, SEV_NOTE, SEV_WARNING };

/* One line of the output, split the way DSL diagnostics are written. */
typedef struct line_info {
  span text; /* the whole line, trimmed */
  span msg;  /* the message: after "error: " etc., or the whole line */
  int sev;
  int line, col; /* the mapper location, 0 when none */
} line_info;

/* What the lines after an error say about it. */
typedef struct where {
  const char *task, *function, *point;
  bool single; /* "while mapping task": a single task */
  int64_t req; /* stride context: the argument position, -1 */
  const char *region, *layout, *kind;
} where;

typedef struct scan {
  const mapopt_guide_input *in;
  mapopt_findings *f;
  const char *text;
  size_t len;
} scan;

static const char *dup(scan *S, span s) {
  return mapopt__guide_strndup(S->f, s.s, s.n);
}

/* Parses "FILE:LINE:COL" (or "FILE") before a severity marker. */
static void location(span loc, int *line, int *col) {
  *line = *col = 0;
  /* Scan back over ":COL" and ":LINE". */
  size_t e = loc.n, k = e;
  while (k > 0 && isdigit((unsigned char)loc.s[k - 1]))
    k--;
  if (k == e || k == 0 || loc.s[k - 1] != ':')
    return;
  size_t c0 = k, j = k - 1;
  while (j > 0 && isdigit((unsigned char)loc.s[j - 1]))
    j--;
  if (j == k - 1 || j == 0 || loc.s[j - 1] != ':')
    return;
  *line = atoi(loc.s + j);
  *col = atoi(loc.s + c0);
}

static line_info classify(span raw) {
  line_info li = {trim(raw), trim(raw), SEV_NONE, 0, 0};
  static const struct {
    const char *marker;
    int sev;
  } marks[] = {{": mapping error: ", SEV_MAPPING},
               {": error: ", SEV_ERROR},
               {": note: ", SEV_NOTE},
               {": warning: ", SEV_WARNING}};
  for (size_t i = 0; i < sizeof marks / sizeof marks[0]; i++) {
    const char *p = find(li.text, marks[i].marker);
    if (!p)
      continue;
    li.sev = marks[i].sev;
    location((span){li.text.s, (size_t)(p - li.text.s)}, &li.line, &li.col);
    li.msg = after(li.text, p + strlen(marks[i].marker));
    return li;
  }
  /* The evaluation layer's own prefixes (the seed paper's feedback form)
   * say which kind of error it is. */
  static const struct {
    const char *prefix;
    int sev;
  } prefixes[] = {{"Execution Error: ", SEV_MAPPING},
                  {"Compile Error: ", SEV_ERROR}};
  for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
    if (starts(li.msg, prefixes[i].prefix)) {
      li.msg = trim(after(li.msg, li.msg.s + strlen(prefixes[i].prefix)));
      li.sev = prefixes[i].sev;
    }
  return li;
}

/* The next line of the output from *pos, or false at the end. */
static bool next_line(const scan *S, size_t *pos, span *out) {
  if (*pos >= S->len)
    return false;
  const char *s = S->text + *pos;
  const char *nl = memchr(s, '\n', S->len - *pos);
  size_t n = nl ? (size_t)(nl - s) : S->len - *pos;
  *out = (span){s, n};
  *pos += n + (nl ? 1 : 0);
  return true;
}

/* Reads the note and context lines that follow an error at *pos. */
static void read_where(scan *S, size_t pos, where *w) {
  *w = (where){.req = -1};
  span raw;
  for (int k = 0; k < 4 && next_line(S, &pos, &raw); k++) {
    line_info li = classify(raw);
    span m = li.msg;
    if (li.sev == SEV_NOTE && find(m, "while placing point")) {
      w->task = dup(S, quoted(m, 0));
      w->function = dup(S, quoted(m, 1));
      const char *p = find(m, "point ");
      const char *q = p ? find(after(m, p), ")") : NULL;
      if (p && q)
        w->point = dup(S, (span){p + 6, (size_t)(q - p - 5)});
    } else if (li.sev == SEV_NOTE && find(m, "while mapping task")) {
      w->task = dup(S, quoted(m, 0));
      w->function = dup(S, quoted(m, 1));
      w->single = true;
    } else if (starts(m, "[mapopt-sim] task ") &&
               find(m, "region requirement")) {
      /* "[mapopt-sim] task T, region requirement R (NAME), layout SOA
       * C_order, on CPU 0" after a stride failure. */
      w->task = dup(S, word_after(m, "task "));
      int_after(m, "region requirement ", &w->req);
      w->region = dup(S, word_after(m, "("));
      const char *l = find(m, "layout ");
      const char *c = l ? find(after(m, l), ",") : NULL;
      if (l && c)
        w->layout = dup(S, (span){l + 7, (size_t)(c - l - 7)});
      w->kind = dup(S, word_after(m, ", on "));
    } else if (li.sev != SEV_NOTE) {
      break;
    }
  }
}

/* The mapper's line n (1-based), trimmed; "" when not given. */
static span mapper_line(const scan *S, int n) {
  const char *t = S->in->mapper_text;
  size_t len = t ? S->in->mapper_len : 0, i = 0;
  for (int k = 1; k < n && i < len; i++)
    if (t[i] == '\n')
      k++;
  if (n <= 0 || i >= len)
    return (span){"", 0};
  const char *nl = memchr(t + i, '\n', len - i);
  return trim((span){t + i, nl ? (size_t)(nl - t - i) : len - i});
}

/* ---- writing findings --------------------------------------------------- */

typedef struct text_rule text_rule;
typedef void (*fill_fn)(scan *S, const text_rule *r, const line_info *li,
                        const where *w, mapopt_guide_finding *g);

struct text_rule {
  const char *needle;
  mapopt_guide_code code;
  mapopt_guide_category cat; /* for a line without a severity marker */
  fill_fn fill;
  const char *explain; /* function errors: the plain-words meaning */
  const char *hint;    /* function errors: what to write instead */
};

#define P(...) mapopt__guide_printf(S->f, __VA_ARGS__)

/* The edit that takes a broken placement function out of play for task:
 * the default placement. */
static void default_placement(scan *S, const where *w,
                              mapopt_guide_finding *g) {
  if (!w->task || !w->task[0])
    return;
  mapopt__guide_edit(S->f, g,
                     w->single ? MAPOPT_GUIDE_EDIT_SINGLE_FOLLOW
                               : MAPOPT_GUIDE_EDIT_INDEX_MAP,
                     w->task, NULL, NULL, NULL, "default");
}

/* Where in the mapping it happened, for explanations: " (in function f,
 * placing point (3,) of task k)" or "". */
static const char *in_function(scan *S, const where *w) {
  if (!w->function || !w->function[0])
    return "";
  if (w->single)
    return P(" (in function %s, placing task %s)", w->function, w->task);
  return P(" (in function %s, placing point %s of task %s)", w->function,
           w->point ? w->point : "?", w->task);
}

/* The error inside a mapping function (R-codes): the rule's words, where
 * it happened, and the default placement as the fallback edit. */
static void fill_function_error(scan *S, const text_rule *r,
                                const line_info *li, const where *w,
                                mapopt_guide_finding *g) {
  g->explain = P("%s%s.", r->explain, in_function(S, w));
  const char *at = li->line ? P(" (line %d)", li->line) : "";
  if (w->task && w->task[0])
    g->suggest =
        P("%s%s; or remove the %s statement for %s so it takes the "
          "default placement.",
          r->hint, at, w->single ? "SingleTaskMap" : "IndexTaskMap", w->task);
  else
    g->suggest = P("%s%s.", r->hint, at);
  default_placement(S, w, g);
}

/* E01-E04. */
static void fill_syntax(scan *S, const text_rule *r, const line_info *li,
                        const where *w, mapopt_guide_finding *g) {
  (void)r, (void)w;
  span stmt = mapper_line(S, li->line);
  const char *quote =
      stmt.n ? P(" The line reads `%.*s`.", (int)stmt.n, stmt.s) : "";
  g->explain = P("The mapper is not valid DSL text: the parser stopped at "
                 "line %d, column %d (%.*s).%s",
                 li->line, li->col, (int)li->msg.n, li->msg.s, quote);
  if (find(li->msg, "expecting '{'"))
    g->suggest = P("Write a function body in braces after its parameters: "
                   "`def f(Task t) { return m[0, 0]; }` (no ':' as in "
                   "Python).");
  else if (find(li->msg, "expecting ';'") || find(li->msg, "or ';'"))
    g->suggest = P("End the statement at line %d with ';', e.g. `Task * GPU;`.",
                   li->line);
  else
    g->suggest = P("Rewrite line %d in the DSL's syntax (docs/dsl.md lists "
                   "every statement, e.g. `Region * * GPU FBMEM;`).",
                   li->line);
}

/* The task names of a map statement's text ("IndexTaskMap a, b f;"), as
 * set-index-map/set-single-follow edits to the default placement. */
static void map_statement_defaults(scan *S, span stmt,
                                   mapopt_guide_finding *g) {
  bool single = starts(stmt, "SingleTaskMap");
  if (!single && !starts(stmt, "IndexTaskMap"))
    return;
  span rest = trim(after(stmt, stmt.s + (single ? 13 : 12)));
  span names[16];
  size_t n = 0;
  while (rest.n && n < 16) {
    while (rest.n && (rest.s[0] == ',' || isspace((unsigned char)rest.s[0])))
      rest = after(rest, rest.s + 1);
    span w = rest.n && rest.s[0] == '*' ? (span){rest.s, 1} : word(rest);
    if (!w.n)
      break;
    names[n++] = w;
    rest = after(rest, w.s + w.n);
  }
  /* The last name is the function. */
  for (size_t i = 0; i + 1 < n; i++)
    mapopt__guide_edit(S->f, g,
                       single ? MAPOPT_GUIDE_EDIT_SINGLE_FOLLOW
                              : MAPOPT_GUIDE_EDIT_INDEX_MAP,
                       dup(S, names[i]), NULL, NULL, NULL, "default");
}

/* E06-E08. */
static void fill_undefined_function(scan *S, const text_rule *r,
                                    const line_info *li, const where *w,
                                    mapopt_guide_finding *g) {
  (void)r, (void)w;
  /* The name is quoted after ": " ("IndexTaskMap's" has a quote too). */
  const char *q = find(li->msg, ": '");
  span fn = q ? quoted(after(li->msg, q), 0) : (span){"", 0};
  const char *name = dup(S, fn);
  span stmt = mapper_line(S, li->line);
  g->line = li->line;
  if (stmt.n)
    g->subject = P("line %d: %.*s", li->line, (int)stmt.n, stmt.s);
  if (find(li->msg, "must be like")) {
    g->explain = P("A placement function receives exactly one task, but '%s' "
                   "is declared with other parameters.",
                   name);
    g->suggest = P("Declare it as `def %s(Task t) { ... }` and read what it "
                   "needs from t (t.ipoint, t.ispace, t.parent).",
                   name);
  } else if (find(li->msg, "is a ")) {
    g->explain = P("The statement names '%s' as its placement function, but "
                   "'%s' is a value, not a function.",
                   name, name);
    g->suggest = P("Name a function defined with `def`, e.g. `def f(Task t) "
                   "{ return m[0, 0]; }`.");
  } else {
    g->explain = P("The statement names the function '%s', but no function of "
                   "that name is defined before it.",
                   name);
    g->suggest = P("Define `def %s(Task t) { ... }` above the statement, or "
                   "name a function that is defined (check the spelling).",
                   name);
  }
  map_statement_defaults(S, stmt, g);
}

/* E05, E09, E10. */
static void fill_statement_error(scan *S, const text_rule *r,
                                 const line_info *li, const where *w,
                                 mapopt_guide_finding *g) {
  (void)w;
  span stmt = mapper_line(S, li->line);
  g->line = li->line;
  g->explain = P("%s.", r->explain);
  g->suggest = P("%s: line %d%s%.*s%s.", r->hint, li->line, stmt.n ? ", `" : "",
                 (int)stmt.n, stmt.s, stmt.n ? "`" : "");
  if (r->code == MAPOPT_GUIDE_CODE_ALIGNMENT && starts(stmt, "Layout")) {
    /* Layout T R F ...: the same key with a valid alignment. */
    span rest = trim(after(stmt, stmt.s + 6)), key[3];
    for (int i = 0; i < 3; i++) {
      key[i] = rest.n && rest.s[0] == '*' ? (span){rest.s, 1} : word(rest);
      rest = trim(after(rest, key[i].s + key[i].n));
    }
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_LAYOUT, dup(S, key[0]),
                       dup(S, key[1]), dup(S, key[2]), "align", "64");
  }
}

/* R01: "NAME not found". */
static void fill_undefined_name(scan *S, const text_rule *r,
                                const line_info *li, const where *w,
                                mapopt_guide_finding *g) {
  (void)r;
  span name = word(li->msg);
  const char *n = dup(S, name);
  g->explain = P("The name '%s' is used but was never assigned%s: names must "
                 "be bound at the top level of the mapper before the "
                 "functions that use them run.",
                 n, in_function(S, w));
  const char *kind = NULL;
  char low[64];
  size_t k = name.n < sizeof low - 1 ? name.n : sizeof low - 1;
  for (size_t i = 0; i < k; i++)
    low[i] = (char)tolower((unsigned char)name.s[i]);
  low[k] = '\0';
  if (strstr(low, "gpu"))
    kind = "GPU";
  else if (strstr(low, "omp"))
    kind = "OMP";
  else if (strstr(low, "cpu"))
    kind = "CPU";
  if (kind)
    g->suggest = P("Add `%s = Machine(%s);` near the top of the mapper, "
                   "before the functions that use it.",
                   n, kind);
  else
    g->suggest = P("Assign it at the top level before it is used (`%s = "
                   "...;`), or correct the spelling.",
                   n);
  default_placement(S, w, g);
}

/* R10, R11: "... out of bound! Q >= N". */
static void fill_out_of_bound(scan *S, const text_rule *r, const line_info *li,
                              const where *w, mapopt_guide_finding *g) {
  bool node = r->code == MAPOPT_GUIDE_CODE_NODE_OOB;
  int64_t q = 0, n = 0;
  int_after(li->msg, "! ", &q);
  int_after(li->msg, ">= ", &n);
  const char *what = node ? "node" : "processor";
  const char *task = w->task && w->task[0] ? w->task : "a task";
  const char *fn = w->function && w->function[0]
                       ? P("The function %s", w->function)
                       : P("The placement function");
  const char *point = w->point ? P("point %s", w->point) : P("a point");
  g->explain =
      P("%s sent %s of %s to %s %" PRId64 ", but %s only %" PRId64
        " %s%s (numbered 0 to %" PRId64 ").",
        fn, point, task, what, q, node ? "the machine has" : "a node has", n,
        what, n == 1 ? "" : "s", n - 1);
  if (node)
    g->suggest =
        P("Keep the node coordinate below the machine's size: e.g. `return "
          "m[ip[0] %% m.size[0], ...];`, or spread the points in blocks, "
          "`m[ip[0] * m.size[0] / t.ispace[0], ...]`.");
  else
    g->suggest =
        P("Keep the processor coordinate below the machine's size: e.g. "
          "`return m[..., ip[0] %% m.size[1]];`, or spread the points in "
          "blocks, `ip[0] * m.size[1] / t.ispace[0]`.");
  if (w->task && w->task[0] && !w->single)
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_INDEX_MAP, w->task, NULL,
                       NULL, NULL, "block");
  default_placement(S, w, g);
}

/* R16: "T is actually mapped to K, but machine model is for K2". */
static void fill_kind_mismatch(scan *S, const text_rule *r, const line_info *li,
                               const where *w, mapopt_guide_finding *g) {
  (void)r;
  const char *p = find(li->msg, " is actually mapped to ");
  const char *task = w->task && w->task[0] ? w->task
                     : p ? dup(S, (span){li->msg.s, (size_t)(p - li->msg.s)})
                         : "the task";
  const char *k = dup(S, word_after(li->msg, "mapped to "));
  const char *m = dup(S, word_after(li->msg, "model is for "));
  g->explain = P("%s runs on %s processors (its Task statement), but its "
                 "placement function returns a point of a %s machine model.",
                 task, k, m);
  g->suggest = P("Make the function index a %s machine model (`m = "
                 "Machine(%s);` and `return m[...];`), or bind functions by "
                 "kind (`IndexTaskMap %s f;`).",
                 k, k, k);
  where wt = *w;
  wt.task = task;
  default_placement(S, &wt, g);
  const mapopt_app_task *t = mapopt__guide_task(S->in->run, task);
  mapopt_proc_kind pk;
  if (mapopt_shape_proc_parse(m, &pk) == MAPOPT_OK &&
      (!t || t->variant_kinds >> pk & 1u))
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_PROC_KINDS, task, NULL, NULL,
                       NULL, m);
}

/* R18. */
static void fill_single_node(scan *S, const text_rule *r, const line_info *li,
                             const where *w, mapopt_guide_finding *g) {
  (void)r, (void)li;
  const char *task = w->task && w->task[0] ? w->task : "a single task";
  g->explain = P("The SingleTaskMap function sent %s to another node than its "
                 "parent's; a single task must run on its parent's node.",
                 task);
  g->suggest = P("Return a processor of the parent's node, e.g. `return "
                 "m[*t.parent.processor(m)];` (the parent's own processor).");
  if (w->task && w->task[0])
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_SINGLE_FOLLOW, w->task, NULL,
                       NULL, NULL, "parent");
}

/* The kinds task can run on here: its variants (with the run) that the
 * machine has, as a Task list; NULL when unknown. */
static const char *usable_kinds(scan *S, const char *task) {
  const mapopt_app_task *t = mapopt__guide_task(S->in->run, task);
  if (!t)
    return NULL;
  /* Without a machine or a result, every kind counts as present. */
  bool known = S->in->machine || S->in->result;
  unsigned kinds = 0;
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
    if ((t->variant_kinds >> k & 1u) &&
        (!known || mapopt__guide_procs_of(S->in, (mapopt_proc_kind)k) > 0))
      kinds |= 1u << k;
  return kinds ? mapopt__guide_kind_list(S->f, kinds) : NULL;
}

/* R26: "Invalid policy: task T requested K, but has no valid task
 * variant for the kind". */
static void fill_no_variant(scan *S, const text_rule *r, const line_info *li,
                            const where *w, mapopt_guide_finding *g) {
  (void)r, (void)w;
  const char *task = dup(S, word_after(li->msg, "task "));
  const char *k = dup(S, word_after(li->msg, "requested "));
  mapopt__guide_subject(S->f, g, task, NULL, NULL);
  const char *kinds = usable_kinds(S, task);
  g->explain = P("%s has no %s version (variant), so it cannot run there, and "
                 "its Task list offers no kind it can run on.",
                 task, k);
  const mapopt_app_task *t = mapopt__guide_task(S->in->run, task);
  const mapopt_machine *m = S->in->machine;
  if (kinds) {
    g->suggest = P("List a kind %s has a variant for: `Task %s %s;`.", task,
                   task, kinds);
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_PROC_KINDS, task, NULL, NULL,
                       NULL, kinds);
  } else if (t && m && t->variant_kinds) {
    /* No Task line can help: the machine has none of the kinds the task
     * has variants for. */
    const char *need = mapopt__guide_kind_list(S->f, t->variant_kinds);
    mapopt_proc_kind first =
        (t->variant_kinds >> MAPOPT_PROC_CPU & 1u)   ? MAPOPT_PROC_CPU
        : (t->variant_kinds >> MAPOPT_PROC_OMP & 1u) ? MAPOPT_PROC_OMP
                                                     : MAPOPT_PROC_GPU;
    const char *lower = first == MAPOPT_PROC_CPU   ? "cpu"
                        : first == MAPOPT_PROC_OMP ? "omp"
                                                   : "gpu";
    g->explain = P("%s runs only on %s (its variants), and the machine %s has "
                   "no %s processors: no Task line can place it.",
                   task, need, m->name ? m->name : "given",
                   mapopt_shape_proc_name(first));
    bool one_line = m->name && strchr(m->name, '=');
    g->suggest =
        one_line ? P("Give the machine %s processors rather than changing the "
                     "mapper: add `%s=N` to its one-line form, e.g. "
                     "`--machine '%s %s=8'`.",
                     mapopt_shape_proc_name(first), lower, m->name, lower)
                 : P("Give the machine %s processors rather than changing the "
                     "mapper: a \"%s\" entry under \"processors\" in its "
                     "machine file, or `%s=N` in a one-line machine.",
                     mapopt_shape_proc_name(first),
                     mapopt_shape_proc_name(first), lower);
  } else {
    g->suggest =
        P("Give %s fallback kinds after %s, e.g. `Task %s GPU,OMP,CPU;`.", task,
          k, task);
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_PROC_KINDS, task, NULL, NULL,
                       NULL, "GPU,OMP,CPU");
  }
}

/* "virtual mapping requested for region requirement R of leaf task T". */
static void fill_virtual_leaf(scan *S, const text_rule *r, const line_info *li,
                              const where *w, mapopt_guide_finding *g) {
  (void)r, (void)w;
  int64_t req = 0;
  int_after(li->msg, "region requirement ", &req);
  const char *task = dup(S, word_after(li->msg, "leaf task "));
  const char *name = mapopt__guide_arg_name(S->in->run, task, req);
  const char *region = name ? name : P("%" PRId64, req);
  mapopt__guide_subject(S->f, g, task, region, NULL);
  g->explain = P("VIRTUAL means \"no instance\" and is only for tasks that "
                 "launch other tasks; %s does the work itself and needs %s%s "
                 "in memory.",
                 task, name ? "" : "its argument ", region);
  g->suggest = P("Give it a real memory: `Region %s %s GPU FBMEM;` (on a CPU, "
                 "SYSMEM).",
                 task, region);
  mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_MEMORY, task, region, "GPU",
                     NULL, "FBMEM");
  mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_MEMORY, task, region, "CPU",
                     NULL, "SYSMEM");
}

/* The first layout requirement rule of task's variant of kind that has
 * error err and covers argument req (-1: any); NULL when none or unknown. */
static const mapopt_app_layout_rule *required_layout(scan *S, const char *task,
                                                     mapopt_proc_kind kind,
                                                     int64_t req,
                                                     mapopt_layout_error err) {
  const mapopt_app_task *t = mapopt__guide_task(S->in->run, task);
  for (int v = 0; t && v < t->nvariants; v++) {
    const mapopt_app_variant *va = mapopt_app_task_variant(t, v);
    if (va->kind != kind)
      continue;
    for (size_t i = 0; i < va->nrequires; i++)
      if (mapopt_app_variant_require(va, i)->error == err &&
          (req < 0 ||
           (req < 64 && mapopt_app_variant_require(va, i)->args >> req & 1u)))
        return mapopt_app_variant_require(va, i);
  }
  return NULL;
}

/* "SOA F_order": the components a rule requires, the others as found. */
static void layout_words(const mapopt_app_layout_rule *rule, bool have_soa,
                         bool soa, bool c_order, const char **w_soa,
                         const char **w_order) {
  *w_soa = rule && rule->soa != MAPOPT_LAYOUT_UNSET
               ? (rule->soa == MAPOPT_LAYOUT_YES ? "SOA" : "AOS")
           : have_soa ? (soa ? "SOA" : "AOS")
                      : NULL;
  *w_order = rule && rule->c_order != MAPOPT_LAYOUT_UNSET
                 ? (rule->c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order")
                 : (c_order ? "F_order" : "C_order");
}

/* The order to try first when only the text is known: the other one than
 * the mapper's text asks for; dflt when it asks for both or neither. */
static const char *other_order(const scan *S, const char *dflt) {
  const char *mt = S->in->mapper_text;
  span m = {mt ? mt : "", mt ? S->in->mapper_len : 0};
  bool f = find(m, "F_order") != NULL, c = find(m, "C_order") != NULL;
  return f && !c ? "C_order" : c && !f ? "F_order" : dflt;
}

static const char *flip(const char *order) {
  return strcmp(order, "C_order") == 0 ? "F_order" : "C_order";
}

/* Text alone: both orders for every layout, the likelier first. */
static void guess_order(scan *S, mapopt_guide_finding *g, const char *first) {
  g->suggest = P("Ask for the other order: `Layout * * * SOA %s;` (if that "
                 "fails too, %s).",
                 first, flip(first));
  mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_LAYOUT, "*", "*", "*", "order",
                     first);
  mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_LAYOUT, "*", "*", "*", "order",
                     flip(first));
}

/* "Assertion failed: stride does not match expected value." */
static void fill_stride(scan *S, const text_rule *r, const line_info *li,
                        const where *w, mapopt_guide_finding *g) {
  (void)r, (void)li;
  const char *task = w->task ? w->task : "*";
  const char *kind = w->kind ? w->kind : "*";
  const char *region = w->region ? w->region : "*";
  bool soa = !w->layout || strncmp(w->layout, "SOA", 3) == 0;
  bool c_order = w->layout && strstr(w->layout, "C_order");
  mapopt_proc_kind pk = MAPOPT_PROC_CPU;
  const mapopt_app_layout_rule *rule =
      w->kind && mapopt_shape_proc_parse(w->kind, &pk) == MAPOPT_OK
          ? required_layout(S, task, pk, w->req, MAPOPT_LAYOUT_ERROR_STRIDE)
          : NULL;
  const char *ws, *wo;
  layout_words(rule, w->layout != NULL, soa, c_order, &ws, &wo);
  if (!w->task) {
    /* A real run's assertion names nothing: F_order is the default layout,
     * so a C_order request is the likelier cause. */
    g->explain = P("A kernel expects its data laid out differently in memory "
                   "(the order of dimensions or fields) than the mapper asked "
                   "for: its stride check failed.");
    guess_order(S, g, other_order(S, "F_order"));
    return;
  }
  mapopt__guide_subject(S->f, g, task, region, NULL);
  g->explain = P("The %s kernel of %s expects %s laid out differently in "
                 "memory than the instance it got (%s): its stride check "
                 "failed.",
                 kind, task, region, w->layout ? w->layout : "?");
  g->suggest = P("Ask for the layout the kernel expects: `Layout %s %s %s%s%s "
                 "%s;`%s.",
                 task, region, kind, ws ? " " : "", ws ? ws : "", wo,
                 rule ? "" : " (if it still fails, try the other order)");
  mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_LAYOUT, task, region, kind,
                     "order", wo);
  if (ws && (!soa || !w->layout || strcmp(ws, "SOA") != 0))
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_LAYOUT, task, region, kind,
                       "soa", ws);
}

/* "Invalid layout: task T, region requirement R (NAME), AOS F_order in
 * MEM: ..." -- an AOS F_order instance, which the DSL mapper of Legion
 * asks Legion for as F, Y, Z, ... without X (docs/legion.md). */
static void fill_aos_order(scan *S, const text_rule *r, const line_info *li,
                           const where *w, mapopt_guide_finding *g) {
  (void)r, (void)w;
  const char *task = dup(S, word_after(li->msg, "task "));
  const char *region = dup(S, word_after(li->msg, "("));
  mapopt__guide_subject(S->f, g, task, region, NULL);
  g->explain = P("The instance of %s for %s is AOS in F order, which the DSL "
                 "mapper of Legion asks Legion to lay out as F, Y, Z, ... "
                 "without X: Legion cannot build it.",
                 region, task);
  g->suggest = P("Keep each element's fields together in the order Legion "
                 "can build, `Layout %s %s * AOS C_order;`, or store them "
                 "apart, `Layout %s %s * SOA F_order;`.",
                 task, region, task, region);
  mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_LAYOUT, task, region, "*",
                     "order", "C_order");
  mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_LAYOUT, task, region, "*",
                     "soa", "SOA");
}

/* "** On entry to DGEMM parameter number 8 had an illegal value". */
static void fill_blas(scan *S, const text_rule *r, const line_info *li,
                      const where *w, mapopt_guide_finding *g) {
  (void)r, (void)w;
  span routine = word_after(li->msg, "On entry to ");
  if (!routine.n)
    routine = word(li->msg);
  int64_t param = 0;
  int_after(li->msg, "parameter number ", &param);
  const char *rname = dup(S, routine);
  g->explain =
      P("The BLAS routine %s rejected its parameter %" PRId64 "%s: a "
        "matrix is stored in the other order (row- versus "
        "column-major) than the kernel passes to BLAS.",
        rname, param, param == 8 ? " (the leading dimension of A)" : "");
  /* With the run: the tasks whose kernels have this requirement. */
  const mapopt_app_run *run = S->in->run;
  for (int t = 0; run && t < run->ntasks; t++)
    for (int v = 0; v < mapopt_app_run_task(run, t)->nvariants; v++) {
      const mapopt_app_variant *va =
          mapopt_app_task_variant(mapopt_app_run_task(run, t), v);
      for (size_t i = 0; i < va->nrequires; i++) {
        const mapopt_app_layout_rule *rule = mapopt_app_variant_require(va, i);
        if (rule->error != MAPOPT_LAYOUT_ERROR_DGEMM ||
            rule->c_order == MAPOPT_LAYOUT_UNSET)
          continue;
        const char *order =
            rule->c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order";
        if (!g->nedits)
          g->suggest = P("Store the matrices in %s: `Layout %s * %s SOA %s;` "
                         "(or `Layout * * * SOA %s;`).",
                         order, mapopt_app_task_name(run, t),
                         mapopt_shape_proc_name(va->kind), order, order);
        mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_LAYOUT,
                           mapopt_app_task_name(run, t), "*",
                           mapopt_shape_proc_name(va->kind), "order", order);
        break;
      }
    }
  if (g->nedits)
    return;
  /* Text alone: the other order than the mapper asks for; BLAS kernels of
   * row-major codes are the common case. */
  guess_order(S, g, other_order(S, "C_order"));
}

/* The most points of one launch of task per processor of its kind, from
 * the run; 0 when unknown. */
static int64_t points_per_proc(scan *S, const char *task,
                               mapopt_proc_kind kind) {
  const mapopt_app_op *o = mapopt__guide_first_op(S->in->run, task);
  int64_t procs = mapopt__guide_procs_of(S->in, kind);
  if (!o || !o->is_index || procs <= 0)
    return 0;
  int64_t n = 1;
  for (int d = 0; d < o->dims; d++)
    n *= o->extents[d];
  return (n + procs - 1) / procs;
}

/* "Assertion 'event.exists()' failed". */
static void fill_backpressure(scan *S, const text_rule *r, const line_info *li,
                              const where *w, mapopt_guide_finding *g) {
  (void)r, (void)li, (void)w;
  g->explain = P("InstanceLimit lets only so many of a task's points wait on "
                 "one processor, but one index launch puts more of them on a "
                 "processor than the limit allows, and the runtime asserts.");
  const mapopt_app_run *run = S->in->run;
  for (int t = 0; run && S->in->mapper && t < run->ntasks; t++) {
    const mapopt_app_task *tk = mapopt_app_run_task(run, t);
    int64_t limit = mapopt_policy_instance_limit(S->in->mapper, tk->name);
    mapopt_proc_kind kind;
    if (limit <= 0 ||
        mapopt_policy_select_kind(S->in->mapper, tk->name, tk->variant_kinds,
                                  true, &kind, NULL) != MAPOPT_OK)
      continue;
    int64_t per = points_per_proc(S, tk->name, kind);
    if (per <= limit)
      continue;
    if (!g->nedits) {
      mapopt__guide_subject(S->f, g, tk->name, NULL, NULL);
      g->explain = P("`InstanceLimit %s %" PRId64 ";` lets %" PRId64 " of %s's "
                     "points wait on one processor, but each launch puts "
                     "%" PRId64 " on a %s, and the runtime asserts.",
                     tk->name, limit, limit, tk->name, per,
                     mapopt_shape_proc_name(kind));
      g->suggest = P("Remove `InstanceLimit %s %" PRId64 ";`, or raise it to "
                     "`InstanceLimit %s %" PRId64 ";`.",
                     tk->name, limit, tk->name, per);
    }
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_INSTANCE_LIMIT, tk->name,
                       NULL, NULL, NULL, "none");
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_INSTANCE_LIMIT, tk->name,
                       NULL, NULL, NULL, P("%" PRId64, per));
  }
  if (!g->nedits)
    g->suggest = P("Raise or remove the `InstanceLimit T N;` statements of "
                   "index-launched tasks: N must be at least the number of "
                   "points one launch puts on a processor.");
}

/* "Default mapper failed allocation of size N bytes for region requirement
 * R of task T in memory KIND ...". */
static void fill_oom(scan *S, const text_rule *r, const line_info *li,
                     const where *w, mapopt_guide_finding *g) {
  (void)r, (void)w;
  span m = li->msg;
  int64_t size = 0, req = -1, cap = 0;
  int_after(m, "allocation of size ", &size);
  int_after(m, "region requirement ", &req);
  int_after(m, "capacity of ", &cap);
  const char *task = dup(S, word_after(m, "of task "));
  span memw = word_after(m, "in memory ");
  mapopt_mem_kind mk;
  bool known_mem = mapopt_shape_mem_parse(dup(S, memw), &mk) == MAPOPT_OK;
  const char *mem = known_mem ? mapopt_shape_mem_name(mk) : "memory";
  const char *name = mapopt__guide_arg_name(S->in->run, task, req);
  const char *region = name ? name : req >= 0 ? P("%" PRId64, req) : NULL;
  mapopt__guide_subject(S->f, g, task, region, NULL);
  char sz[32], cz[32];
  mapopt__guide_fmt_bytes(sz, sizeof sz, size);
  mapopt__guide_fmt_bytes(cz, sizeof cz, cap);
  g->explain =
      P("The data placed in %s does not fit: a new %s instance of %s%s "
        "for %s would exceed %s%s.",
        mem, sz, name || !region ? "" : "argument ",
        region ? region : "an argument", task,
        cap ? "its capacity of " : "its capacity", cap ? cz : "");
  /* Which remedies the mapper does not use yet (unknown: all). */
  const mapopt_app_op *op = mapopt__guide_first_op(S->in->run, task);
  bool collected = false, read_only = true;
  int64_t limit =
      S->in->mapper ? mapopt_policy_instance_limit(S->in->mapper, task) : 0;
  if (op && req >= 0 && (size_t)req < op->nreqs) {
    mapopt_region_keys keys = {mapopt_app_op_req(op, req)->names,
                               mapopt_app_op_req(op, req)->nnames, (size_t)req};
    read_only = mapopt_app_op_req(op, req)->priv == MAPOPT_PRIV_RO;
    collected =
        S->in->mapper && mapopt_policy_collect(S->in->mapper, task, &keys);
  }
  const char *parts[3];
  int np = 0;
  if (!collected) {
    parts[np++] = P("add `CollectMemory %s *;` so %s's read-only inputs are "
                    "freed once it has run",
                    task, task);
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_COLLECT, task, "*", NULL,
                       NULL, "on");
  }
  if (limit != 1) {
    parts[np++] = P("add `InstanceLimit %s 1;` so fewer %s are mapped (each "
                    "holding its instances) ahead of time",
                    task, task);
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_INSTANCE_LIMIT, task, NULL,
                       NULL, NULL, "1");
  }
  if (known_mem && mk == MAPOPT_MEM_FBMEM && region && read_only) {
    parts[np++] = P("put %s%s in zero-copy memory, `Region %s %s GPU ZCMEM;` "
                    "(slower to read, but outside the framebuffer)",
                    name ? "" : "argument ", region, task, region);
    mapopt__guide_edit(S->f, g, MAPOPT_GUIDE_EDIT_MEMORY, task, region, "GPU",
                       NULL, "ZCMEM");
  }
  if (np == 0)
    g->suggest = P("Keep less data in %s: place some of %s's arguments in "
                   "another memory with `Region` statements.",
                   mem, task);
  else
    g->suggest = P("%c%s%s%s%s%s.", toupper((unsigned char)parts[0][0]),
                   parts[0] + 1, np > 1 ? "; or " : "", np > 1 ? parts[1] : "",
                   np > 2 ? "; or " : "", np > 2 ? parts[2] : "");
}

/* "simulated time limit exceeded (L s)". */
/* A run stopped at its time limit: the text's line (limit) or the
 * evaluator's flag (limit NULL). */
static void timeout_advice(scan *S, mapopt_guide_finding *g, span limit) {
  g->explain =
      P("The run did not finish within its time limit%s%.*s%s: the "
        "mapping is far too slow, or stuck.",
        limit.n ? " (" : "", (int)limit.n, limit.s, limit.n ? ")" : "");
  g->suggest = P("Undo the last change; look for a task moved to a slow kind "
                 "(`Task T CPU;` for a GPU task) or data a GPU task reads from "
                 "ZCMEM or SYSMEM.");
}

static void fill_timeout(scan *S, const text_rule *r, const line_info *li,
                         const where *w, mapopt_guide_finding *g) {
  (void)r, (void)w;
  timeout_advice(S, g, li->msg);
}

static void fill_generic(scan *S, const text_rule *r, const line_info *li,
                         const where *w, mapopt_guide_finding *g) {
  (void)w, (void)li;
  g->explain = P("%s.", r->explain);
  g->suggest = P("%s.", r->hint);
}

/* ---- the rule table ------------------------------------------------------ */

#define CE MAPOPT_GUIDE_COMPILE_ERROR
#define EE MAPOPT_GUIDE_EXECUTION_ERROR
#define C(x) MAPOPT_GUIDE_CODE_##x

static const text_rule rules[] = {
    {"syntax error, unexpected", C(SYNTAX), CE, fill_syntax, NULL, NULL},
    {"Unrecognized character", C(SYNTAX), CE, fill_syntax, NULL, NULL},
    {"unterminated string constant", C(SYNTAX), CE, fill_syntax, NULL, NULL},
    {"integer literal out of range", C(SYNTAX), CE, fill_syntax, NULL, NULL},
    {"function undefined:", C(UNDEFINED_FUNCTION), CE, fill_undefined_function,
     NULL, NULL},
    {"mapping function is undefined", C(UNDEFINED_FUNCTION), CE,
     fill_undefined_function, NULL, NULL},
    {"Entry mapping function's definition must be like", C(UNDEFINED_FUNCTION),
     CE, fill_undefined_function, NULL, NULL},
    {"duplicate parameter", C(REDEFINITION), CE, fill_statement_error,
     "A function has two parameters of the same name", "Rename one of the two"},
    {"redefinition of global", C(REDEFINITION), CE, fill_statement_error,
     "A global name is bound twice",
     "Rename one of the two or remove the second"},
    {"alignment must be a positive power of two", C(ALIGNMENT), CE,
     fill_statement_error, "An alignment must be a power of two",
     "Use `Align==64`, 128 or 256"},
    {"evaluation step limit", C(STEP_LIMIT), EE, fill_function_error,
     "A mapping function took more than the 1,000,000 evaluation steps "
     "allowed for one answer",
     "Compute the processor from t.ipoint with arithmetic instead of "
     "building large tuples"},
    {"Sharding node index out of bound!", C(NODE_OOB), EE, fill_out_of_bound,
     NULL, NULL},
    {"Slice processor index out of bound!", C(SLICE_OOB), EE, fill_out_of_bound,
     NULL, NULL},
    {"but machine model is for", C(KIND_MISMATCH), EE, fill_kind_mismatch, NULL,
     NULL},
    {"single task must stay on its parent's node", C(SINGLE_NODE), EE,
     fill_single_node, NULL, NULL},
    {"but has no valid task variant for the kind", C(NO_VARIANT), EE,
     fill_no_variant, NULL, NULL},
    {"virtual mapping requested for region requirement", C(VIRTUAL_LEAF), EE,
     fill_virtual_leaf, NULL, NULL},
    {"stride does not match expected value", C(LAYOUT_STRIDE), EE, fill_stride,
     NULL, NULL},
    {"AOS F_order in", C(LAYOUT_AOS_ORDER), EE, fill_aos_order, NULL, NULL},
    {"had an illegal value", C(BLAS_LD), EE, fill_blas, NULL, NULL},
    {"event.exists()", C(BACKPRESSURE), EE, fill_backpressure, NULL, NULL},
    {"failed allocation of size", C(OOM), EE, fill_oom, NULL, NULL},
    {"simulated time limit exceeded", C(TIMEOUT), MAPOPT_GUIDE_TIMEOUT,
     fill_timeout, NULL, NULL},
    {"type mismatch", C(TYPE_ERROR), EE, fill_function_error,
     "A mapping function combined values of the wrong types",
     "Check the types of the operands (t.ipoint and t.ispace are tuples: "
     "take a coordinate, `t.ipoint[0]`; a condition must be a comparison; "
     "the function must return `m[...]` of a machine model)"},
    {"tuple length mismatch", C(TYPE_ERROR), EE, fill_function_error,
     "Two tuples of different lengths were combined",
     "Combine tuples of the same length (e.g. t.ipoint with t.ispace)"},
    {"wildcard is only allowed", C(TYPE_ERROR), EE, fill_function_error,
     "'*' was used to index something that is not a machine model",
     "Use `*` only inside `m[...]` of a machine model"},
    {"must return a machine point", C(TYPE_ERROR), EE, fill_function_error,
     "A placement function returned something other than a processor",
     "End the function with `return m[...];` where m is a machine model such "
     "as `Machine(GPU)`"},
    {"argument number mismatch", C(ARGUMENT_COUNT), EE, fill_function_error,
     "A function was called with the wrong number of arguments",
     "Call it with as many arguments as its `def` has parameters"},
    {"Not enough arguments for print()", C(ARGUMENT_COUNT), EE,
     fill_function_error, "A print() has more {} placeholders than values",
     "Give print() one value per {}"},
    {"function without return", C(NO_RETURN), EE, fill_function_error,
     "A function reached its end without returning a value",
     "End it with `return m[...];`"},
    {"out of bound for tuple of length", C(TUPLE_INDEX), EE,
     fill_function_error,
     "A tuple was indexed past its end (items are numbered from 0)",
     "Keep indices below the tuple's length; t.ipoint has as many items as "
     "the launch has dimensions"},
    {"slice's right index is out of bound", C(TUPLE_INDEX), EE,
     fill_function_error, "A slice of a tuple went past its end",
     "Keep slice bounds within the tuple's length"},
    {"slice's left index is out of bound", C(TUPLE_INDEX), EE,
     fill_function_error, "A slice of a tuple went past its end",
     "Keep slice bounds within the tuple's length"},
    {"negative machine coordinate", C(MACHINE_INDEX), EE, fill_function_error,
     "A machine model was indexed with a negative coordinate",
     "Keep every coordinate in [0, m.size[d]), e.g. `i % m.size[d]`"},
    {"machine index has", C(MACHINE_INDEX), EE, fill_function_error,
     "A machine model was indexed with the wrong number of coordinates",
     "Give one coordinate per dimension of the machine model (m.len of them; "
     "`Machine(GPU)` has two: node and processor)"},
    {"is outside the machine model", C(MACHINE_INDEX), EE, fill_function_error,
     "task.processor(m) found the processor outside the machine model m",
     "Ask for the processor in a machine model that contains it, e.g. the "
     "unsplit `Machine(GPU)`"},
    {"machine index out of bound for sliced dimension", C(MACHINE_INDEX), EE,
     fill_function_error, "A sliced machine model was indexed past its end",
     "Keep coordinates within the slice's size"},
    {"out of range for a", C(MACHINE_INDEX), EE, fill_function_error,
     "A machine transformation named a dimension the model does not have",
     "Use dimensions 0 to m.len - 1"},
    {"is not divisible by", C(MACHINE_INDEX), EE, fill_function_error,
     "A split factor does not divide the dimension",
     "Split by a divisor of m.size[d], or use auto_split"},
    {"factor must be positive", C(MACHINE_INDEX), EE, fill_function_error,
     "A split factor is not positive", "Split by a positive factor"},
    {"must be different dimensions", C(MACHINE_INDEX), EE, fill_function_error,
     "merge or swap was given the same dimension twice",
     "Give two different dimensions"},
    {"slice out of bound", C(MACHINE_INDEX), EE, fill_function_error,
     "A slice of a machine model is empty or outside it",
     "Slice within [0, m.size[d])"},
    {"number of parts must be positive", C(MACHINE_INDEX), EE,
     fill_function_error, "balance_split was asked for no parts",
     "Ask for a positive number of parts"},
    {"second argument must be a tuple of non-negative integers",
     C(MACHINE_INDEX), EE, fill_function_error,
     "auto_split or greedy_split got a bad shape to fit",
     "Pass a tuple of sizes, such as t.ispace"},
    {"for a domain with an extent of 0", C(MACHINE_INDEX), EE,
     fill_function_error,
     "auto_split was asked to split processors for an empty domain",
     "Clamp the domain's extents to at least 1"},
    {"cannot factor dimension", C(MACHINE_INDEX), EE, fill_function_error,
     "A dimension of size 0 cannot be split", "Split a non-empty dimension"},
    {"machine model would have more than", C(MACHINE_INDEX), EE,
     fill_function_error,
     "Splitting made a machine model of too many "
     "dimensions",
     "Split fewer times (at most 16 dimensions)"},
    {"division by zero", C(ARITHMETIC), EE, fill_function_error,
     "A mapping function divided by zero",
     "Guard the divisor, e.g. `d > 0 ? x / d : 0`"},
    {"integer overflow", C(ARITHMETIC), EE, fill_function_error,
     "A mapping function's arithmetic overflowed 64 bits",
     "Keep intermediate values small (divide before multiplying)"},
    {"is only defined for index-launched tasks", C(TASK_PROPERTY), EE,
     fill_function_error,
     "t.ipoint and t.ispace exist only for points of index launches",
     "Use them only in IndexTaskMap functions; a SingleTaskMap function can "
     "read t.parent"},
    {"has no parent", C(TASK_PROPERTY), EE, fill_function_error,
     "t.parent was read where there is no parent",
     "Use t.parent only in SingleTaskMap functions of tasks launched by "
     "another task"},
    {"parent is only defined for single tasks", C(TASK_PROPERTY), EE,
     fill_function_error, "t.parent exists only for single tasks",
     "Use t.ipoint in IndexTaskMap functions instead"},
    {"recursion depth limit", C(RECURSION), EE, fill_function_error,
     "A function called itself (directly or not) too deeply",
     "Compute the answer directly, without recursion"},
    {"evaluation nested too deeply", C(RECURSION), EE, fill_function_error,
     "An expression is nested too deeply to evaluate",
     "Split the expression into assignments"},
    /* The language's size limits (E04 at compile time, R27 and R15's
     * corrupt model while evaluating; docs/limits.md). */
    {"expression nested too deeply", C(SYNTAX), CE, fill_statement_error,
     "An expression is nested deeper than the parser allows",
     "Split the expression into assignments"},
    {"selector too long", C(SYNTAX), CE, fill_statement_error,
     "The names of one Region, Layout or CollectMemory key are too long "
     "together",
     "Use shorter names or `*`"},
    {"mapper too large", C(SYNTAX), CE, fill_statement_error,
     "The mapper file is larger than the DSL accepts",
     "Write the placement as a function instead of tables"},
    {"value budget exceeded", C(STEP_LIMIT), EE, fill_function_error,
     "A mapping function built more tuple items and points than one answer "
     "may",
     "Compute the processor with arithmetic instead of building large "
     "tuples"},
    {"tuples nested more than", C(STEP_LIMIT), EE, fill_function_error,
     "A mapping function nested tuples deeper than the DSL allows",
     "Use flat tuples"},
    {"unknown transformation", C(MACHINE_INDEX), EE, fill_function_error,
     "A machine model was transformed by a method it does not have",
     "Use split, merge, swap, slice, reverse, auto_split, greedy_split or "
     "balance_split"},
    {"corrupt machine model", C(MODEL_ERROR), EE, fill_generic,
     "A machine model value was corrupt (an internal error)",
     "Report it with the mapper; try another mapping meanwhile"},
    {"simulation deadlock", C(MODEL_ERROR), EE, fill_generic,
     "The simulator stopped with work left (an internal error)",
     "Report it with the mapper and the application; try another mapping "
     "meanwhile"},
};

/* R01 ("NAME not found"): a single word before " not found". */
static bool undefined_name(span msg) {
  span w = word(msg);
  return w.n > 0 && w.n + 10 == msg.n &&
         memcmp(msg.s + w.n, " not found", 10) == 0;
}

static const text_rule undefined_name_rule = {
    NULL, C(UNDEFINED_NAME), EE, fill_undefined_name, NULL, NULL};

/* Whether the list has a finding of code with this message already (the
 * same error printed by several ranks is one finding). */
static bool seen(const mapopt_findings *f, mapopt_guide_code code, span msg) {
  for (size_t i = 0; i < mapopt_findings_count(f); i++) {
    const mapopt_guide_finding *g = mapopt_findings_get(f, i);
    if (g->code == code && strlen(g->message) == msg.n &&
        memcmp(g->message, msg.s, msg.n) == 0)
      return true;
  }
  return false;
}

static void add_error(scan *S, const text_rule *r, const line_info *li,
                      size_t next) {
  if (seen(S->f, r->code, li->msg))
    return;
  where w;
  read_where(S, next, &w);
  mapopt_guide_category cat = li->sev == SEV_ERROR     ? CE
                              : li->sev == SEV_MAPPING ? EE
                                                       : r->cat;
  mapopt_guide_finding *g = mapopt__guide_add(S->f, cat, r->code);
  if (!g)
    return;
  g->message = dup(S, li->msg);
  g->from_output = true;
  g->line = li->line;
  if (w.task)
    mapopt__guide_subject(S->f, g, w.task, w.region, w.function);
  r->fill(S, r, li, &w, g);
}

/* ---- metric lines -------------------------------------------------------- */

/* The number after the first '=' or ':' from p in s, and what follows. */
static bool number_in(span s, const char *from, double *v) {
  const char *p = find(s, from);
  if (!p)
    return false;
  p += strlen(from);
  char buf[64];
  size_t n = (size_t)(s.s + s.n - p);
  n = n < sizeof buf - 1 ? n : sizeof buf - 1;
  memcpy(buf, p, n);
  buf[n] = '\0';
  char *end;
  *v = strtod(buf, &end);
  return end != buf;
}

static bool metric_line(scan *S, const line_info *li) {
  double v;
  span m = li->msg;
  if (starts(m, "ELAPSED TIME") && number_in(m, "=", &v)) {
    mapopt_guide_finding *g =
        mapopt__guide_add(S->f, MAPOPT_GUIDE_PERFORMANCE, C(EXEC_TIME));
    if (!g)
      return true;
    g->message = dup(S, m);
    g->from_output = true;
    bool ms = find(m, " ms") != NULL;
    g->explain = P("The timed iterations took %.4g s (lower is better).",
                   ms ? v / 1e3 : v);
    return true;
  }
  if ((starts(m, "GFLOPS") && number_in(m, "=", &v)) ||
      (find(m, "achieved GFLOPS per node") &&
       number_in(m, "GFLOPS per node:", &v))) {
    mapopt_guide_finding *g =
        mapopt__guide_add(S->f, MAPOPT_GUIDE_PERFORMANCE, C(THROUGHPUT));
    if (!g)
      return true;
    g->message = dup(S, m);
    g->from_output = true;
    g->explain = P("The run computed %.6g GFLOP/s%s (higher is better).", v,
                   find(m, "per node") ? " per node" : "");
    return true;
  }
  return false;
}

/* ---- crashes ------------------------------------------------------------- */

static const struct {
  int signal;
  const char *name, *text, *meaning;
} signals[] = {
    {11, "SIGSEGV", "Segmentation fault", "an invalid memory access"},
    {6, "SIGABRT", "Aborted", "the program aborted itself"},
    {7, "SIGBUS", "Bus error", "an invalid memory access"},
    {8, "SIGFPE", "Floating point exception", "an arithmetic fault"},
    {4, "SIGILL", "Illegal instruction", "an illegal instruction"},
    {9, "SIGKILL", "Killed", "it was killed (often for using too much memory)"},
};

static void add_crash(scan *S, int sig, span line) {
  size_t k = 0, n = sizeof signals / sizeof signals[0];
  while (k < n && signals[k].signal != sig)
    k++;
  mapopt_guide_finding *g =
      mapopt__guide_add(S->f, MAPOPT_GUIDE_CRASH, C(CRASH));
  if (!g)
    return;
  g->from_output = line.n > 0;
  g->message = line.n  ? dup(S, line)
               : k < n ? P("killed by signal %d (%s)", sig, signals[k].name)
                       : P("killed by signal %d", sig);
  g->explain = P("The program died%s%s%s; a crash is a fault in the program "
                 "or the runtime, which an unusual mapping can trigger.",
                 k < n ? " of " : "", k < n ? signals[k].meaning : "",
                 k < n ? "" : " of a signal");
  g->suggest = P("Undo the last change to the mapper and try a different "
                 "one; if a valid mapping crashes, report it.");
}

/* The last line of the output that is not the simulator's own. */
static span last_line(const scan *S) {
  span raw, last = {"", 0};
  size_t pos = 0;
  while (next_line(S, &pos, &raw)) {
    span t = trim(raw);
    if (t.n && !starts(t, "[mapopt-sim]"))
      last = t;
  }
  return last;
}

static bool has_error(const mapopt_findings *f) {
  for (size_t i = 0; i < mapopt_findings_count(f); i++)
    if (mapopt_findings_get(f, i)->category != MAPOPT_GUIDE_PERFORMANCE)
      return true;
  return false;
}

static bool has_metric(const mapopt_findings *f) {
  for (size_t i = 0; i < mapopt_findings_count(f); i++) {
    mapopt_guide_code c = mapopt_findings_get(f, i)->code;
    if (c == C(EXEC_TIME) || c == C(THROUGHPUT))
      return true;
  }
  return false;
}

void mapopt__guide_text_rules(const mapopt_guide_input *in,
                              mapopt_findings *f) {
  scan sc = {in, f, in->output, in->output_len}, *S = &sc;
  if (!sc.text && in->result)
    sc.text = in->result->log ? in->result->log : in->result->error_text;
  if (sc.text && !in->output)
    sc.len = strlen(sc.text);
  if (!sc.text)
    sc.text = "", sc.len = 0;
  span raw;
  size_t pos = 0;
  int crash_sig = 0;
  span crash_line = {"", 0};
  while (next_line(S, &pos, &raw)) {
    line_info li = classify(raw);
    if (!li.msg.n || li.sev == SEV_NOTE || li.sev == SEV_WARNING ||
        starts(li.msg, "[mapopt-sim]"))
      continue;
    if (metric_line(S, &li))
      continue;
    const text_rule *r = NULL;
    for (size_t i = 0; i < sizeof rules / sizeof rules[0] && !r; i++)
      if (find(li.msg, rules[i].needle))
        r = &rules[i];
    if (!r && undefined_name(li.msg))
      r = &undefined_name_rule;
    if (r) {
      add_error(S, r, &li, pos);
      continue;
    }
    for (size_t k = 0; k < sizeof signals / sizeof signals[0] && !crash_sig;
         k++)
      if (find(li.msg, signals[k].text) &&
          (signals[k].signal != 9 || starts(li.msg, "Killed"))) {
        crash_sig = signals[k].signal;
        crash_line = li.msg;
      }
  }
  /* What the exit status and the evaluator say when the text said nothing
   * recognizable. */
  if (in->signal > 0 || crash_sig) {
    if (!has_error(f))
      add_crash(S, in->signal > 0 ? in->signal : crash_sig, crash_line);
  }
  if (in->timed_out && !has_error(f)) {
    mapopt_guide_finding *g =
        mapopt__guide_add(f, MAPOPT_GUIDE_TIMEOUT, C(TIMEOUT));
    if (g) {
      g->message = P("the run was stopped at its time limit");
      timeout_advice(S, g, (span){"", 0});
    }
  }
  bool failed_run = in->exit_status > 0 ||
                    (in->result && in->result->error != MAPOPT_SIM_NONE);
  if (failed_run && !has_error(f)) {
    span last = last_line(S);
    mapopt_guide_finding *g = mapopt__guide_add(f, EE, C(FAILED));
    if (g) {
      g->from_output = last.n > 0;
      g->message = last.n ? dup(S, last) : P("the run failed");
      g->explain = in->exit_status > 0
                       ? P("The run failed (exit status %d) without an error "
                           "message AutoGuide knows.",
                           in->exit_status)
                       : P("The run failed without an error message "
                           "AutoGuide knows.");
      g->suggest = P("Read the output's last lines for the cause; undo the "
                     "last change to the mapper if it is the suspect.");
    }
  }
  if (in->exit_status == 0 && !in->scored && !has_error(f) && !has_metric(f) &&
      !(in->result && in->result->error == MAPOPT_SIM_NONE)) {
    mapopt_guide_finding *g = mapopt__guide_add(f, EE, C(NO_METRIC));
    if (g) {
      g->message = P("no metric line in the output");
      g->explain = P("The run succeeded but printed no timing line (ELAPSED "
                     "TIME or GFLOPS), so it cannot be scored.");
      g->suggest = P("Make the program print its metric, e.g. `ELAPSED TIME "
                     "= 0.137 s`.");
    }
  }
}
