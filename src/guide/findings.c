/*
 * The findings list of AutoGuide: how rules add findings and edits (all
 * in one arena, so a list is freed in one call), their order, the names of
 * categories, codes, edits and levels, and the two ways out: the feedback
 * text an optimizer reads at a given level, and JSON.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "core/json.h"
#include "guide/guide.h"

/* ---- names --------------------------------------------------------------- */

static const struct {
  const char *name, *label;
} categories[] = {
#define CATEGORY_ENTRY(id, name, label) {name, label},
    MAPOPT_GUIDE_CATEGORY_LIST(CATEGORY_ENTRY)
#undef CATEGORY_ENTRY
};

static const char *const codes[] = {
#define CODE_ENTRY(id, name) name,
    MAPOPT_GUIDE_CODE_LIST(CODE_ENTRY)
#undef CODE_ENTRY
};

static const char *const edit_kinds[] = {
#define EDIT_ENTRY(id, name) name,
    MAPOPT_GUIDE_EDIT_LIST(EDIT_ENTRY)
#undef EDIT_ENTRY
};

static const char *const levels[] = {"raw", "explain", "suggest", "full"};

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

const char *mapopt_guide_category_name(mapopt_guide_category c) {
  return (unsigned)c < COUNT(categories) ? categories[c].name : NULL;
}

const char *mapopt_guide_code_name(mapopt_guide_code c) {
  return (unsigned)c < COUNT(codes) ? codes[c] : NULL;
}

mapopt_status mapopt_guide_code_parse(const char *s, mapopt_guide_code *out) {
  for (size_t i = 0; s && i < COUNT(codes); i++)
    if (strcmp(s, codes[i]) == 0) {
      *out = (mapopt_guide_code)i;
      return MAPOPT_OK;
    }
  return MAPOPT_ENOTFOUND;
}

const char *mapopt_guide_edit_kind_name(mapopt_guide_edit_kind k) {
  return (unsigned)k < COUNT(edit_kinds) ? edit_kinds[k] : NULL;
}

const char *mapopt_guide_level_name(mapopt_guide_level l) {
  return (unsigned)l < COUNT(levels) ? levels[l] : NULL;
}

mapopt_status mapopt_guide_level_parse(const char *s, mapopt_guide_level *out) {
  for (size_t i = 0; s && i < COUNT(levels); i++)
    if (strcmp(s, levels[i]) == 0) {
      *out = (mapopt_guide_level)i;
      return MAPOPT_OK;
    }
  return MAPOPT_ENOTFOUND;
}

/* ---- building ------------------------------------------------------------ */

const char *mapopt__guide_strndup(mapopt_findings *f, const char *s, size_t n) {
  char *c = mapopt__arena_strndup(&f->arena, s, n);
  if (!c) {
    f->failed = true;
    return "";
  }
  return c;
}

const char *mapopt__guide_printf(mapopt_findings *f, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *s = mapopt__arena_vprintf(&f->arena, fmt, ap);
  va_end(ap);
  if (!s) {
    f->failed = true;
    return "";
  }
  return s;
}

mapopt_guide_finding *mapopt__guide_add(mapopt_findings *f,
                                        mapopt_guide_category cat,
                                        mapopt_guide_code code) {
  mapopt_guide_finding *g = mapopt__vec_push(&f->items, f->ctx);
  if (!g) {
    f->failed = true;
    return NULL;
  }
  g->category = cat;
  g->code = code;
  g->message = g->subject = g->explain = g->suggest = "";
  g->impact = cat == MAPOPT_GUIDE_PERFORMANCE ? 0 : 1;
  return g;
}

static const char *dup_or_null(mapopt_findings *f, const char *s) {
  return s ? mapopt__guide_strndup(f, s, strlen(s)) : NULL;
}

void mapopt__guide_edit(mapopt_findings *f, mapopt_guide_finding *g,
                        mapopt_guide_edit_kind kind, const char *task,
                        const char *region, const char *proc,
                        const char *component, const char *value) {
  if (!g)
    return;
  /* Edits are few (at most a handful per finding): the array is copied
   * whole into the arena on each append. */
  mapopt_guide_edit *e =
      mapopt__arena_alloc(&f->arena, (g->nedits + 1) * sizeof *e);
  if (!e) {
    f->failed = true;
    return;
  }
  if (g->nedits)
    memcpy(e, g->edits, g->nedits * sizeof *e);
  e[g->nedits] = (mapopt_guide_edit){kind,
                                     dup_or_null(f, task),
                                     dup_or_null(f, region),
                                     dup_or_null(f, proc),
                                     dup_or_null(f, component),
                                     dup_or_null(f, value),
                                     -1};
  g->edits = e;
  g->nedits++;
}

void mapopt__guide_edit_share(mapopt_guide_finding *g, double share) {
  if (g && g->nedits)
    ((mapopt_guide_edit *)g->edits)[g->nedits - 1].share = share;
}

void mapopt__guide_subject(mapopt_findings *f, mapopt_guide_finding *g,
                           const char *task, const char *region,
                           const char *function) {
  if (!g)
    return;
  g->task = dup_or_null(f, task);
  g->region = dup_or_null(f, region);
  g->subject = mapopt__guide_printf(
      f, "%s%s%s%s%s%s", task ? "task " : "", task ? task : "",
      region ? (task ? ", region " : "region ") : "", region ? region : "",
      function ? (task || region ? ", function " : "function ") : "",
      function ? function : "");
}

/* The rank of a finding in the order of mapopt__guide_sort. */
static int rank(const mapopt_guide_finding *g) {
  if (g->category != MAPOPT_GUIDE_PERFORMANCE)
    return (int)g->category;
  bool metric = g->code == MAPOPT_GUIDE_CODE_EXEC_TIME ||
                g->code == MAPOPT_GUIDE_CODE_THROUGHPUT;
  /* "Nothing changed" right after the metric: it qualifies the rest. */
  return metric ? 10 : g->code == MAPOPT_GUIDE_CODE_NO_EFFECT ? 11 : 12;
}

void mapopt__guide_sort(mapopt_findings *f) {
  /* Insertion sort: stable, and lists are short. */
  mapopt_guide_finding *a = f->items.data;
  for (size_t i = 1; i < f->items.len; i++) {
    mapopt_guide_finding x = a[i];
    size_t j = i;
    while (j > 0 && (rank(&a[j - 1]) > rank(&x) ||
                     (rank(&a[j - 1]) == rank(&x) && rank(&x) == 12 &&
                      a[j - 1].impact < x.impact))) {
      a[j] = a[j - 1];
      j--;
    }
    a[j] = x;
  }
}

/* ---- reading ------------------------------------------------------------- */

size_t mapopt_findings_count(const mapopt_findings *f) {
  return f ? f->items.len : 0;
}

const mapopt_guide_finding *mapopt_findings_get(const mapopt_findings *f,
                                                size_t i) {
  return f && i < f->items.len
             ? &MAPOPT__VEC_AT(&f->items, mapopt_guide_finding, i)
             : NULL;
}

void mapopt_findings_free(mapopt_findings *f) {
  if (!f)
    return;
  mapopt_ctx *ctx = f->ctx;
  mapopt__vec_destroy(&f->items, ctx);
  mapopt__arena_destroy(&f->arena);
  mapopt__free(ctx, f, sizeof *f);
}

int mapopt_guide_edit_format(const mapopt_guide_edit *e, char *buf,
                             size_t size) {
  const char *t = e->task ? e->task : "*", *v = e->value ? e->value : "";
  switch (e->kind) {
  case MAPOPT_GUIDE_EDIT_PROC_KINDS:
    return snprintf(buf, size, "set the processor kinds of %s to %s", t, v);
  case MAPOPT_GUIDE_EDIT_MEMORY:
    return snprintf(buf, size, "set memory of (%s, %s, %s) to %s", t,
                    e->region ? e->region : "*", e->proc ? e->proc : "*", v);
  case MAPOPT_GUIDE_EDIT_LAYOUT:
    return snprintf(buf, size, "set layout %s of (%s, %s, %s) to %s",
                    e->component ? e->component : "", t,
                    e->region ? e->region : "*", e->proc ? e->proc : "*", v);
  case MAPOPT_GUIDE_EDIT_INDEX_MAP:
    if (strncmp(v, "like:", 5) == 0)
      return snprintf(buf, size, "place the points of %s like those of %s", t,
                      v + 5);
    return snprintf(buf, size, "set the index mapping of %s to %s", t, v);
  case MAPOPT_GUIDE_EDIT_INSTANCE_LIMIT:
    return snprintf(buf, size, "set InstanceLimit of %s to %s", t, v);
  case MAPOPT_GUIDE_EDIT_COLLECT:
    return snprintf(buf, size, "set CollectMemory of (%s, %s) %s", t,
                    e->region ? e->region : "*", v);
  case MAPOPT_GUIDE_EDIT_SINGLE_FOLLOW:
    return snprintf(buf, size, "%s %s", t,
                    strcmp(v, "parent") == 0 ? "follows its parent's processor"
                                             : "takes the default placement");
  }
  return snprintf(buf, size, "?");
}

/* ---- feedback text ------------------------------------------------------- */

static const char *label(const mapopt_guide_finding *g) {
  if (g->code == MAPOPT_GUIDE_CODE_EXEC_TIME ||
      g->code == MAPOPT_GUIDE_CODE_THROUGHPUT)
    return "Performance Metric";
  return categories[g->category].label;
}

mapopt_status mapopt_guide_feedback(mapopt_ctx *ctx, const mapopt_findings *f,
                                    mapopt_guide_level level, char **text) {
  if (!ctx || !f || !text || (unsigned)level > MAPOPT_GUIDE_FULL)
    return MAPOPT_EINVAL;
  bool explain = level == MAPOPT_GUIDE_EXPLAIN || level == MAPOPT_GUIDE_FULL;
  bool suggest = level == MAPOPT_GUIDE_SUGGEST || level == MAPOPT_GUIDE_FULL;
  mapopt__strbuf b;
  mapopt__sb_init(&b, ctx);
  for (size_t i = 0; i < f->items.len; i++) {
    const mapopt_guide_finding *g =
        &MAPOPT__VEC_AT(&f->items, mapopt_guide_finding, i);
    if (level == MAPOPT_GUIDE_RAW && !g->from_output)
      continue;
    mapopt__sb_printf(&b, "%s: %s\n", label(g), g->message);
    if (explain && g->explain[0])
      mapopt__sb_printf(&b, "Explanation: %s\n", g->explain);
    if (suggest && g->suggest[0])
      mapopt__sb_printf(&b, "Suggestion: %s\n", g->suggest);
  }
  char *t = mapopt__text_take(&b, NULL);
  if (!t)
    return MAPOPT_ENOMEM;
  *text = t;
  return MAPOPT_OK;
}

/* ---- JSON ---------------------------------------------------------------- */

mapopt_status mapopt_guide_findings_json(mapopt_ctx *ctx,
                                         const mapopt_findings *f,
                                         char **text) {
  if (!ctx || !f || !text)
    return MAPOPT_EINVAL;
  json_t *list = json_array();
  char num[32], buf[512];
  for (size_t i = 0; i < f->items.len; i++) {
    const mapopt_guide_finding *g =
        &MAPOPT__VEC_AT(&f->items, mapopt_guide_finding, i);
    json_t *o = json_object();
    json_object_set_new(o, "category",
                        json_string(mapopt_guide_category_name(g->category)));
    json_object_set_new(o, "code",
                        json_string(mapopt_guide_code_name(g->code)));
    json_object_set_new(o, "message", mapopt__json_text(g->message));
    json_object_set_new(o, "from_output", json_boolean(g->from_output));
    json_object_set_new(o, "subject", mapopt__json_text(g->subject));
    json_object_set_new(o, "task", mapopt__json_text_or_null(g->task));
    json_object_set_new(o, "region", mapopt__json_text_or_null(g->region));
    json_object_set_new(o, "line",
                        g->line ? json_integer(g->line) : json_null());
    json_object_set_new(o, "explain", mapopt__json_text(g->explain));
    json_object_set_new(o, "suggest", mapopt__json_text(g->suggest));
    /* Fixed precision, so the text is the same on every platform. */
    snprintf(num, sizeof num, "%.4f", g->impact);
    json_object_set_new(o, "impact", json_real(strtod(num, NULL)));
    json_t *edits = json_array();
    for (size_t k = 0; k < g->nedits; k++) {
      const mapopt_guide_edit *e = &g->edits[k];
      json_t *x = json_object();
      json_object_set_new(x, "kind",
                          json_string(mapopt_guide_edit_kind_name(e->kind)));
      json_object_set_new(x, "task", mapopt__json_text_or_null(e->task));
      json_object_set_new(x, "region", mapopt__json_text_or_null(e->region));
      json_object_set_new(x, "proc", mapopt__json_text_or_null(e->proc));
      json_object_set_new(x, "component",
                          mapopt__json_text_or_null(e->component));
      json_object_set_new(x, "value", mapopt__json_text_or_null(e->value));
      mapopt_guide_edit_format(e, buf, sizeof buf);
      json_object_set_new(x, "text", mapopt__json_text(buf));
      json_array_append_new(edits, x);
    }
    json_object_set_new(o, "edits", edits);
    json_array_append_new(list, o);
  }
  json_t *root = json_object();
  json_object_set_new(root, "findings", list);
  return mapopt__json_write(ctx, root, text);
}
