/*
 * What every part of the DSL's interpreter shares: raising an R-error and
 * its hint (only an evaluation's first error counts), the step and value
 * budgets every evaluation is charged against (docs/dsl.md, "Limits": R23,
 * R27), and the views of values as type names and int tuples.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dsl/eval.h"

/* Records the first error of an evaluation: code at loc with message msg
 * (owned from here; NULL: out of memory). Returns false. */
static bool raise_error(mapopt__eval *ev, const char *code, mapopt__loc loc,
                        char *msg) {
  mapopt__eval_error *err = ev->err;
  snprintf(err->code, sizeof err->code, "%s", code);
  err->loc = loc;
  err->msg = msg;
  err->nomem = !msg;
  err->in_call = ev->depth > 0 && ev->have_call_loc;
  return false;
}

/* fmt formatted with ap, owned by the caller; NULL when out of memory. */
static char *vtext(mapopt__eval *ev, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));

static char *vtext(mapopt__eval *ev, const char *fmt, va_list ap) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ev->prog->ctx);
  mapopt__sb_vprintf(&sb, fmt, ap);
  return mapopt__sb_take(&sb, NULL);
}

bool mapopt__ev_fail(mapopt__eval *ev, mapopt_dsl_diag id, const char *fmt,
                     mapopt__loc loc, ...) {
  if (ev->err->failed)
    return false;
  ev->err->failed = true;
  va_list ap;
  va_start(ap, loc);
  char *msg = vtext(ev, fmt, ap);
  va_end(ap);
  return raise_error(ev, mapopt_dsl_diag_code(id), loc, msg);
}

bool mapopt__ev_ms_fail(mapopt__eval *ev, mapopt__ms_err code, mapopt__loc loc,
                        const char *msg) {
  if (ev->err->failed)
    return false;
  ev->err->failed = true;
  char c[4];
  snprintf(c, sizeof c, "R%02d", (int)code);
  return raise_error(ev, c, loc,
                     mapopt__strndup(ev->prog->ctx, msg, strlen(msg)));
}

bool mapopt__ev_nomem(mapopt__eval *ev, mapopt__loc loc) {
  if (ev->err->failed)
    return false;
  ev->err->failed = true;
  return raise_error(ev, "", loc, NULL);
}

void mapopt__eval_error_clear(mapopt_ctx *ctx, mapopt__eval_error *err) {
  if (err->msg)
    mapopt__free(ctx, err->msg, strlen(err->msg) + 1);
  if (err->note)
    mapopt__free(ctx, err->note, strlen(err->note) + 1);
  err->msg = err->note = NULL;
}

void mapopt__ev_error_nomem(mapopt__eval *ev) {
  mapopt__eval_error_clear(ev->prog->ctx, ev->err);
  ev->err->nomem = true;
}

void mapopt__ev_note(mapopt__eval *ev, mapopt_dsl_diag id, const char *fmt,
                     ...) {
  mapopt__eval_error *err = ev->err;
  if (err->nomem || err->note)
    return;
  va_list ap;
  va_start(ap, fmt);
  err->note = vtext(ev, fmt, ap);
  va_end(ap);
  snprintf(err->note_code, sizeof err->note_code, "%s",
           mapopt_dsl_diag_code(id));
  if (!err->note)
    mapopt__ev_error_nomem(ev);
}

bool mapopt__ev_step(mapopt__eval *ev, int64_t n, mapopt__loc loc) {
  ev->steps += n;
  if (ev->steps > MAPOPT__DSL_STEP_LIMIT)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R23_STEPS), loc,
                           MAPOPT__DSL_STEP_LIMIT);
  return true;
}

bool mapopt__ev_charge(mapopt__eval *ev, int64_t n, mapopt__loc loc) {
  int64_t *used = ev->env->values ? ev->env->values : &ev->values;
  *used = mapopt__sat_add(*used, n);
  if (*used > MAPOPT__DSL_VALUE_LIMIT)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R27_VALUES), loc,
                           MAPOPT__DSL_VALUE_LIMIT);
  return true;
}

const char *mapopt__value_type_name(const mapopt__value *v) {
  switch (v->kind) {
  case V_INT:
    return "int";
  case V_BOOL:
    return "bool";
  case V_TUPLE:
    return "tuple";
  case V_POINT:
    return "point";
  case V_SET:
    return v->u.set.n ? "point set" : "empty point set";
  case V_MACHINE:
    return "machine";
  case V_TASK:
    return "task";
  case V_PROC_KIND:
    return "processor kind";
  case V_MEM_KIND:
    return "memory kind";
  case V_FUNC:
    return "function";
  case V_UNSET:
    break;
  }
  return "unset";
}

const char *mapopt__ev_type_name(const mapopt__value *v) {
  /* In type-mismatch messages an empty set is still a point set. */
  return v->kind == V_SET ? "point set" : mapopt__value_type_name(v);
}

bool mapopt__ev_as_seq(const mapopt__value *v, mapopt__value tmp[2],
                       const mapopt__value **items, int *n) {
  if (v->kind == V_TUPLE) {
    *items = v->u.tuple.items;
    *n = v->u.tuple.n;
    return true;
  }
  if (v->kind == V_POINT) {
    tmp[0] = (mapopt__value){.kind = V_INT, .u.i = v->u.pt.node};
    tmp[1] = (mapopt__value){.kind = V_INT, .u.i = v->u.pt.proc};
    *items = tmp;
    *n = 2;
    return true;
  }
  return false;
}

bool mapopt__ev_as_ints(const mapopt__value *v, int64_t *out, int cap, int *n) {
  mapopt__value tmp[2];
  const mapopt__value *items;
  int len;
  if (!mapopt__ev_as_seq(v, tmp, &items, &len) || len > cap)
    return false;
  for (int i = 0; i < len; i++) {
    if (items[i].kind != V_INT)
      return false;
    out[i] = items[i].u.i;
  }
  *n = len;
  return true;
}
