/*
 * Writing a loaded model back as `mapopt-app/1` JSON. The output loads
 * back to an equal model: expressions are written as their source text,
 * numbers with enough digits to round-trip, and defaults explicitly where
 * that is simpler than remembering whether they were given. It is not a
 * pretty-printer of the original file (key order and formatting are the
 * writer's own).
 */
#include "app/app.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

void mapopt__app_json_string(mapopt__strbuf *sb, const char *s) {
  mapopt__sb_putc(sb, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    switch (*p) {
    case '"':
      mapopt__sb_puts(sb, "\\\"");
      break;
    case '\\':
      mapopt__sb_puts(sb, "\\\\");
      break;
    case '\n':
      mapopt__sb_puts(sb, "\\n");
      break;
    case '\t':
      mapopt__sb_puts(sb, "\\t");
      break;
    case '\r':
      mapopt__sb_puts(sb, "\\r");
      break;
    default:
      if (*p < 0x20)
        mapopt__sb_printf(sb, "\\u%04x", *p);
      else
        mapopt__sb_putc(sb, (char)*p);
    }
  }
  mapopt__sb_putc(sb, '"');
}

typedef struct writer {
  mapopt__strbuf sb;
  const mapopt_app *app;
  int indent;
} writer;

static void nl(writer *w) {
  mapopt__sb_putc(&w->sb, '\n');
  for (int i = 0; i < w->indent; i++)
    mapopt__sb_puts(&w->sb, "  ");
}

static void key(writer *w, bool *first, const char *k) {
  if (!*first)
    mapopt__sb_putc(&w->sb, ',');
  *first = false;
  nl(w);
  mapopt__app_json_string(&w->sb, k);
  mapopt__sb_puts(&w->sb, ": ");
}

/* Inline key (same line). */
static void ikey(writer *w, bool *first, const char *k) {
  if (!*first)
    mapopt__sb_puts(&w->sb, ", ");
  *first = false;
  mapopt__app_json_string(&w->sb, k);
  mapopt__sb_puts(&w->sb, ": ");
}

static void str(writer *w, const char *s) {
  mapopt__app_json_string(&w->sb, s);
}

static void expr(writer *w, const mapopt__app_expr *e) {
  str(w, e->text);
}

static void exprs(writer *w, mapopt__app_expr *const *e, int n) {
  mapopt__sb_putc(&w->sb, '[');
  for (int i = 0; i < n; i++) {
    if (i)
      mapopt__sb_puts(&w->sb, ", ");
    expr(w, e[i]);
  }
  mapopt__sb_putc(&w->sb, ']');
}

static void strs(writer *w, const char *const *s, size_t n) {
  mapopt__sb_putc(&w->sb, '[');
  for (size_t i = 0; i < n; i++) {
    if (i)
      mapopt__sb_puts(&w->sb, ", ");
    str(w, s[i]);
  }
  mapopt__sb_putc(&w->sb, ']');
}

static void num(writer *w, double d) {
  mapopt__sb_printf(&w->sb, "%.17g", d);
}

static void rules(writer *w, const mapopt__app_rule *r, size_t n, bool req) {
  mapopt__sb_putc(&w->sb, '[');
  for (size_t i = 0; i < n; i++) {
    bool f = true;
    mapopt__sb_puts(&w->sb, i ? ", {" : "{");
    ikey(w, &f, "args");
    mapopt__sb_putc(&w->sb, '[');
    for (size_t j = 0; j < r[i].nargs_listed; j++)
      mapopt__sb_printf(&w->sb, "%s%" PRId64, j ? ", " : "",
                        r[i].args_listed[j]);
    mapopt__sb_putc(&w->sb, ']');
    if (r[i].soa != MAPOPT_LAYOUT_UNSET) {
      ikey(w, &f, "soa");
      mapopt__sb_puts(&w->sb, r[i].soa == MAPOPT_LAYOUT_YES ? "true" : "false");
    }
    if (r[i].c_order != MAPOPT_LAYOUT_UNSET) {
      ikey(w, &f, "order");
      str(w, r[i].c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order");
    }
    if (req) {
      ikey(w, &f, "error");
      str(w, r[i].error == MAPOPT_LAYOUT_ERROR_DGEMM ? "dgemm" : "stride");
    } else {
      ikey(w, &f, "penalty");
      num(w, r[i].penalty);
    }
    mapopt__sb_putc(&w->sb, '}');
  }
  mapopt__sb_putc(&w->sb, ']');
}

static void stmts(writer *w, const mapopt__app_stmt *s, int n);

static void req(writer *w, const mapopt__app_req *rq, bool *f, bool fill) {
  const mapopt_app *app = w->app;
  const mapopt__app_region *r = &app->regions[rq->region];
  if (rq->part >= 0) {
    ikey(w, f, "part");
    str(w, app->parts[rq->part].name);
    if (rq->nproj) {
      ikey(w, f, "proj");
      exprs(w, rq->proj, rq->nproj);
    }
  } else {
    ikey(w, f, "region");
    str(w, r->name);
  }
  if (!fill) {
    ikey(w, f, "priv");
    str(w, mapopt_app_priv_name(rq->priv));
    if (rq->priv == MAPOPT_PRIV_REDUCE) {
      ikey(w, f, "redop");
      str(w, mapopt__app_redop_name(rq->redop));
    }
    if (rq->simultaneous) {
      ikey(w, f, "coherence");
      str(w, "simultaneous");
    }
  }
  if (rq->fields_given) {
    ikey(w, f, "fields");
    mapopt__sb_putc(&w->sb, '[');
    bool first = true;
    for (int k = 0; k < r->nfields; k++)
      if (rq->fields & (UINT64_C(1) << k)) {
        mapopt__sb_puts(&w->sb, first ? "" : ", ");
        first = false;
        str(w, r->field_names[k]);
      }
    mapopt__sb_putc(&w->sb, ']');
  }
  if (rq->nnames) {
    ikey(w, f, "names");
    strs(w, rq->names, rq->nnames);
  }
  static const char *const ann[] = {"bytes", "gathers", "atomics"};
  const mapopt__app_expr *ae[] = {rq->bytes, rq->gathers, rq->atomics};
  for (int i = 0; i < 3; i++)
    if (ae[i]) {
      ikey(w, f, ann[i]);
      expr(w, ae[i]);
    }
}

static void stmt(writer *w, const mapopt__app_stmt *st) {
  const mapopt_app *app = w->app;
  static const char *const ops[] = {"index", "single", "fill",
                                    "fence", "loop",   "timed"};
  bool f = true;
  mapopt__sb_putc(&w->sb, '{');
  ikey(w, &f, "op");
  str(w, ops[st->kind]);
  switch (st->kind) {
  case ST_INDEX:
  case ST_SINGLE:
    ikey(w, &f, "task");
    str(w, app->tasks[st->task].name);
    if (st->kind == ST_INDEX) {
      ikey(w, &f, "domain");
      exprs(w, st->domain, st->ndims);
      if (st->point_given) {
        ikey(w, &f, "point");
        strs(w, st->point, (size_t)st->ndims);
      }
    }
    if (st->future >= 0) {
      ikey(w, &f, "future");
      mapopt__sb_puts(&w->sb, "{\"name\": ");
      str(w, app->futures[st->future]);
      if (st->kind == ST_INDEX) {
        mapopt__sb_puts(&w->sb, ", \"redop\": ");
        str(w, mapopt__app_redop_name(st->fredop));
      }
      mapopt__sb_putc(&w->sb, '}');
    }
    if (st->nwaits) {
      ikey(w, &f, "wait");
      mapopt__sb_putc(&w->sb, '[');
      for (int i = 0; i < st->nwaits; i++) {
        if (i)
          mapopt__sb_puts(&w->sb, ", ");
        str(w, app->futures[st->waits[i]]);
      }
      mapopt__sb_putc(&w->sb, ']');
    }
    ikey(w, &f, "args");
    mapopt__sb_putc(&w->sb, '[');
    w->indent++;
    for (int i = 0; i < st->nargs; i++) {
      if (i)
        mapopt__sb_putc(&w->sb, ',');
      nl(w);
      bool g = true;
      mapopt__sb_putc(&w->sb, '{');
      req(w, &st->args[i], &g, false);
      mapopt__sb_putc(&w->sb, '}');
    }
    w->indent--;
    mapopt__sb_putc(&w->sb, ']');
    break;
  case ST_FILL:
    req(w, &st->args[0], &f, true);
    break;
  case ST_FENCE:
    break;
  case ST_LOOP:
    ikey(w, &f, "var");
    str(w, st->var);
    ikey(w, &f, "count");
    expr(w, st->count);
    if (st->warmup) {
      ikey(w, &f, "warmup");
      expr(w, st->warmup);
    }
    if (st->timed) {
      ikey(w, &f, "timed");
      mapopt__sb_puts(&w->sb, "true");
    }
    if (st->traced) {
      ikey(w, &f, "traced");
      mapopt__sb_puts(&w->sb, "true");
    }
    /* fall through */
  case ST_TIMED:
    ikey(w, &f, "body");
    stmts(w, st->body, st->nbody);
    break;
  }
  mapopt__sb_putc(&w->sb, '}');
}

static void stmts(writer *w, const mapopt__app_stmt *s, int n) {
  mapopt__sb_putc(&w->sb, '[');
  w->indent++;
  for (int i = 0; i < n; i++) {
    if (i)
      mapopt__sb_putc(&w->sb, ',');
    nl(w);
    stmt(w, &s[i]);
  }
  w->indent--;
  if (n)
    nl(w);
  mapopt__sb_putc(&w->sb, ']');
}

static void region(writer *w, const mapopt__app_region *r) {
  bool f = true;
  mapopt__sb_putc(&w->sb, '{');
  ikey(w, &f, "name");
  str(w, r->name);
  ikey(w, &f, "fields");
  mapopt__sb_putc(&w->sb, '[');
  for (int i = 0; i < r->nfields; i++) {
    mapopt__sb_puts(&w->sb, i ? ", [" : "[");
    str(w, r->field_names[i]);
    mapopt__sb_printf(&w->sb, ", %" PRId64 "]", r->field_bytes[i]);
  }
  mapopt__sb_putc(&w->sb, ']');
  if (r->nnames) {
    ikey(w, &f, "names");
    strs(w, r->names, r->nnames);
  }
  ikey(w, &f, "atoms");
  bool g = true;
  mapopt__sb_putc(&w->sb, '{');
  if (r->grid) {
    ikey(w, &g, "grid");
    exprs(w, r->gsize, r->gdims);
    if (r->gelements) {
      ikey(w, &g, "elements");
      expr(w, r->gelements);
    } else {
      ikey(w, &g, "extent");
      exprs(w, r->gextent, r->gdims);
    }
  } else {
    ikey(w, &g, "groups");
    mapopt__sb_putc(&w->sb, '[');
    for (int i = 0; i < r->ngroups; i++) {
      bool h = true;
      mapopt__sb_puts(&w->sb, i ? ", {" : "{");
      ikey(w, &h, "group");
      str(w, r->groups[i].name);
      ikey(w, &h, "count");
      expr(w, r->groups[i].count);
      ikey(w, &h, "elements");
      expr(w, r->groups[i].elements);
      mapopt__sb_putc(&w->sb, '}');
    }
    mapopt__sb_putc(&w->sb, ']');
  }
  mapopt__sb_puts(&w->sb, "}}");
}

static void part(writer *w, const mapopt__app_part *p) {
  const mapopt_app *app = w->app;
  const mapopt__app_region *r = &app->regions[p->region];
  static const char *const kinds[] = {"group", "rect", "list"};
  bool f = true;
  mapopt__sb_putc(&w->sb, '{');
  ikey(w, &f, "name");
  str(w, p->name);
  ikey(w, &f, "region");
  str(w, r->name);
  ikey(w, &f, "kind");
  str(w, kinds[p->kind]);
  if (p->nnames) {
    ikey(w, &f, "names");
    strs(w, p->names, p->nnames);
  }
  if (p->kind == PART_GROUP) {
    ikey(w, &f, "group");
    str(w, r->groups[p->group].name);
  } else {
    ikey(w, &f, "colors");
    exprs(w, p->colors, p->ncolors);
  }
  if (p->kind == PART_RECT) {
    ikey(w, &f, "lo");
    exprs(w, p->lo, r->gdims);
    ikey(w, &f, "hi");
    exprs(w, p->hi, r->gdims);
  }
  if (p->kind == PART_LIST) {
    ikey(w, &f, "entries");
    mapopt__sb_putc(&w->sb, '[');
    w->indent++;
    for (int i = 0; i < p->nentries; i++) {
      const mapopt__app_entry *e = &p->entries[i];
      if (i)
        mapopt__sb_putc(&w->sb, ',');
      nl(w);
      bool g = true;
      mapopt__sb_putc(&w->sb, '{');
      if (e->group >= 0) {
        ikey(w, &g, "group");
        str(w, r->groups[e->group].name);
      }
      ikey(w, &g, "atom");
      if (r->grid && (e->natom > 1 || r->gdims == 1))
        exprs(w, e->atom, e->natom);
      else
        expr(w, e->atom[0]);
      if (e->count) {
        ikey(w, &g, "count");
        expr(w, e->count);
      }
      mapopt__sb_putc(&w->sb, '}');
    }
    w->indent--;
    mapopt__sb_putc(&w->sb, ']');
  }
  mapopt__sb_putc(&w->sb, '}');
}

static void task(writer *w, const mapopt__app_task *t) {
  bool f = true;
  mapopt__sb_putc(&w->sb, '{');
  ikey(w, &f, "name");
  str(w, t->name);
  if (t->npoint) {
    ikey(w, &f, "point");
    strs(w, t->point, (size_t)t->npoint);
  }
  ikey(w, &f, "variants");
  mapopt__sb_putc(&w->sb, '[');
  w->indent++;
  for (int i = 0; i < t->nvariants; i++) {
    const mapopt__app_variant *v = &t->variants[i];
    if (i)
      mapopt__sb_putc(&w->sb, ',');
    nl(w);
    bool g = true;
    mapopt__sb_putc(&w->sb, '{');
    ikey(w, &g, "kind");
    str(w, mapopt_shape_proc_name(v->kind));
    if (v->inner) {
      ikey(w, &g, "inner");
      mapopt__sb_puts(&w->sb, "true");
    }
    ikey(w, &g, "precision");
    str(w, v->f32 ? "f32" : "f64");
    if (v->matrix) {
      ikey(w, &g, "matrix");
      mapopt__sb_puts(&w->sb, "true");
    }
    ikey(w, &g, "flops_eff");
    num(w, v->flops_eff);
    ikey(w, &g, "mem_eff");
    num(w, v->mem_eff);
    if (v->flops) {
      ikey(w, &g, "flops");
      expr(w, v->flops);
    }
    if (v->fixed_ns) {
      ikey(w, &g, "fixed_ns");
      expr(w, v->fixed_ns);
    }
    if (v->reuse) {
      ikey(w, &g, "reuse");
      expr(w, v->reuse);
    }
    if (v->nrequires) {
      ikey(w, &g, "requires");
      rules(w, v->requires, v->nrequires, true);
    }
    if (v->nprefers) {
      ikey(w, &g, "prefers");
      rules(w, v->prefers, v->nprefers, false);
    }
    mapopt__sb_putc(&w->sb, '}');
  }
  w->indent--;
  mapopt__sb_putc(&w->sb, ']');
  if (t->has_body) {
    ikey(w, &f, "body");
    w->indent++;
    stmts(w, t->body, t->nbody);
    w->indent--;
  }
  mapopt__sb_putc(&w->sb, '}');
}

mapopt_status mapopt_app_to_json(mapopt_ctx *ctx, const mapopt_app *app,
                                 char **text) {
  if (!ctx || !app || !text)
    return MAPOPT_EINVAL;
  writer w = {.app = app};
  mapopt__sb_init(&w.sb, ctx);
  bool f = true;
  mapopt__sb_putc(&w.sb, '{');
  w.indent = 1;
  key(&w, &f, "format");
  str(&w, "mapopt-app/1");
  key(&w, &f, "name");
  str(&w, app->name);
  key(&w, &f, "params");
  mapopt__sb_putc(&w.sb, '{');
  bool g = true;
  for (int i = 0; i < app->nparams; i++) {
    ikey(&w, &g, app->params[i].name);
    mapopt__sb_printf(&w.sb, "%" PRId64, app->params[i].value);
  }
  mapopt__sb_putc(&w.sb, '}');
  if (app->nderived) {
    key(&w, &f, "derived");
    mapopt__sb_putc(&w.sb, '{');
    w.indent++;
    for (int j = 0; j < app->nderived; j++) {
      if (j)
        mapopt__sb_putc(&w.sb, ',');
      nl(&w);
      str(&w, app->derived[j].name);
      mapopt__sb_puts(&w.sb, ": ");
      expr(&w, app->derived[j].expr);
    }
    w.indent--;
    mapopt__sb_putc(&w.sb, '}');
  }
  if (app->nsizes) {
    key(&w, &f, "sizes");
    mapopt__sb_putc(&w.sb, '{');
    w.indent++;
    for (int i = 0; i < app->nsizes; i++) {
      const mapopt__app_size *sz = &app->sizes[i];
      if (i)
        mapopt__sb_putc(&w.sb, ',');
      nl(&w);
      str(&w, sz->name);
      mapopt__sb_puts(&w.sb, ": {");
      bool h = true;
      for (size_t j = 0; j < sz->n; j++) {
        ikey(&w, &h, app->params[sz->param[j]].name);
        mapopt__sb_printf(&w.sb, "%" PRId64, sz->value[j]);
      }
      mapopt__sb_putc(&w.sb, '}');
    }
    w.indent--;
    mapopt__sb_putc(&w.sb, '}');
  }
  key(&w, &f, "default_order");
  str(&w, app->default_c_order ? "C_order" : "F_order");
  key(&w, &f, "timing");
  g = true;
  mapopt__sb_putc(&w.sb, '{');
  ikey(&w, &g, "mode");
  str(&w, app->timing == MAPOPT_TIMING_FENCED ? "fenced" : "window");
  ikey(&w, &g, "metric");
  str(&w, app->metric_gflops ? "gflops" : "time");
  if (app->timing_flops) {
    ikey(&w, &g, "flops");
    expr(&w, app->timing_flops);
  }
  if (app->per_node) {
    ikey(&w, &g, "per_node");
    mapopt__sb_puts(&w.sb, "true");
  }
  if (app->log_style) {
    ikey(&w, &g, "log");
    str(&w, app->log_style);
  }
  if (app->log_settings) {
    ikey(&w, &g, "log_settings");
    str(&w, app->log_settings->source);
  }
  mapopt__sb_putc(&w.sb, '}');
  if (app->ranks_per_node) {
    key(&w, &f, "run");
    mapopt__sb_puts(&w.sb, "{\"ranks_per_node\": ");
    expr(&w, app->ranks_per_node);
    mapopt__sb_putc(&w.sb, '}');
  }
  key(&w, &f, "regions");
  mapopt__sb_putc(&w.sb, '[');
  w.indent++;
  for (int i = 0; i < app->nregions; i++) {
    if (i)
      mapopt__sb_putc(&w.sb, ',');
    nl(&w);
    region(&w, &app->regions[i]);
  }
  w.indent--;
  mapopt__sb_putc(&w.sb, ']');
  key(&w, &f, "partitions");
  mapopt__sb_putc(&w.sb, '[');
  w.indent++;
  for (int i = 0; i < app->npartitions; i++) {
    if (i)
      mapopt__sb_putc(&w.sb, ',');
    nl(&w);
    part(&w, &app->parts[i]);
  }
  w.indent--;
  mapopt__sb_putc(&w.sb, ']');
  key(&w, &f, "tasks");
  mapopt__sb_putc(&w.sb, '[');
  w.indent++;
  for (int i = 0; i < app->ntasks; i++) {
    if (i)
      mapopt__sb_putc(&w.sb, ',');
    nl(&w);
    task(&w, &app->tasks[i]);
  }
  w.indent--;
  mapopt__sb_putc(&w.sb, ']');
  key(&w, &f, "program");
  stmts(&w, app->program, app->nprogram);
  mapopt__sb_puts(&w.sb, "\n}\n");
  char *t = mapopt__text_take(&w.sb, NULL);
  if (!t)
    return MAPOPT_ENOMEM;
  *text = t;
  return MAPOPT_OK;
}
