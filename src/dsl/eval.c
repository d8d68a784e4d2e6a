/*
 * The interpreter of the DSL's expression language (docs/dsl.md, "Expressions,
 * values and types"): values, operators, tuples, calls, the task object and
 * print. Machine models are in evalmachine.c; the errors and budgets every part
 * raises and charges, in evalcore.c (eval.h holds what they share).
 *
 * It walks the tree directly. Every error is an R error of the catalogue,
 * raised at the location of the construct that failed; evaluation then unwinds
 * by returning false (no longjmp: scratch values live in an arena owned by the
 * caller, so nothing leaks). Steps and call depth are charged as docs/dsl.md,
 * "Limits" says, so every evaluation terminates quickly.
 *
 * What it does not do: statement binding (load.c) and the policy lookups
 * (policy.c).
 */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "dsl/eval.h"

typedef mapopt__eval ev_t;
typedef mapopt__value value;
typedef mapopt__eval_frame frame;
typedef mapopt__value_list vlist;

static bool eval(ev_t *ev, const mapopt__expr *e, value *out);

/* ---- printing ---------------------------------------------------------- */

static void print_point(const mapopt_proc_point *p, mapopt__strbuf *sb) {
  mapopt__sb_printf(sb, "%s(%" PRId64 ", %" PRId64 ")",
                    mapopt_shape_proc_name(p->kind), p->node, p->proc);
}

static void print_ints(const int64_t *v, int n, mapopt__strbuf *sb) {
  mapopt__sb_putc(sb, '(');
  for (int i = 0; i < n; i++)
    mapopt__sb_printf(sb, i ? ", %" PRId64 : "%" PRId64, v[i]);
  mapopt__sb_puts(sb, n == 1 ? ",)" : ")");
}

/* Writes v, unless sb already holds more than the printed form may: then
 * "..." once, and nothing more. Recursion follows the tuple's depth, which
 * is at most MAPOPT__DSL_MAX_TUPLE_DEPTH. */
static void print_value(const mapopt_program *prog, const value *v,
                        mapopt__strbuf *sb, size_t base) {
  if (sb->len - base > MAPOPT__DSL_PRINT_VALUE_MAX) {
    if (sb->len - base <= MAPOPT__DSL_PRINT_VALUE_MAX + 3)
      mapopt__sb_puts(sb, "...");
    return;
  }
  switch (v->kind) {
  case V_INT:
    mapopt__sb_printf(sb, "%" PRId64, v->u.i);
    break;
  case V_BOOL:
    mapopt__sb_puts(sb, v->u.b ? "True" : "False");
    break;
  case V_TUPLE:
    mapopt__sb_putc(sb, '(');
    for (int i = 0; i < v->u.tuple.n; i++) {
      if (i)
        mapopt__sb_puts(sb, ", ");
      print_value(prog, &v->u.tuple.items[i], sb, base);
    }
    mapopt__sb_puts(sb, v->u.tuple.n == 1 ? ",)" : ")");
    break;
  case V_POINT:
    print_point(&v->u.pt, sb);
    break;
  case V_SET:
    mapopt__sb_putc(sb, '{');
    for (int64_t i = 0;
         i < v->u.set.n && sb->len - base <= MAPOPT__DSL_PRINT_VALUE_MAX; i++) {
      if (i)
        mapopt__sb_puts(sb, ", ");
      print_point(&v->u.set.pts[i], sb);
    }
    mapopt__sb_putc(sb, '}');
    break;
  case V_MACHINE:
    mapopt__sb_printf(sb, "MSpace(%s, ",
                      mapopt_shape_proc_name(v->u.ms->proc_kind));
    print_ints(v->u.ms->size, v->u.ms->ndims, sb);
    mapopt__sb_putc(sb, ')');
    break;
  case V_TASK: {
    const mapopt_task_ref *r = v->u.task->ref;
    mapopt__sb_printf(sb, "Task(%s", r->name);
    if (r->is_index) {
      mapopt__sb_puts(sb, ", ");
      print_ints(r->point, r->dims, sb);
    }
    mapopt__sb_putc(sb, ')');
    break;
  }
  case V_PROC_KIND:
    mapopt__sb_puts(sb, mapopt_shape_proc_name(v->u.k));
    break;
  case V_MEM_KIND:
    mapopt__sb_puts(sb, mapopt_shape_mem_name(v->u.k));
    break;
  case V_FUNC:
    mapopt__sb_printf(sb, "<function %s>",
                      mapopt__sym_name(&prog->ast, v->u.fn->u.def.sym));
    break;
  case V_UNSET:
    mapopt__sb_puts(sb, "<unset>");
    break;
  }
}

void mapopt__value_print(const mapopt_program *prog, const value *v,
                         mapopt__strbuf *sb) {
  print_value(prog, v, sb, sb->len);
}

/* ---- value helpers ----------------------------------------------------- */

static value mk_int(int64_t i) {
  value v = {.kind = V_INT};
  v.u.i = i;
  return v;
}

static value mk_bool(bool b) {
  value v = {.kind = V_BOOL};
  v.u.b = b;
  return v;
}

/* Room for n items in the arena, charged to the value budget; NULL with
 * the error raised (R27, or out of memory). */
static value *new_items(ev_t *ev, int64_t n, mapopt__loc loc) {
  if (!mapopt__ev_charge(ev, n, loc))
    return NULL;
  value *items =
      mapopt__arena_alloc(ev->arena, (size_t)(n ? n : 1) * sizeof(value));
  if (!items)
    mapopt__ev_nomem(ev, loc);
  return items;
}

/* Makes *out the tuple of n items (already in the arena): its depth is one
 * more than its deepest item's, at most MAPOPT__DSL_MAX_TUPLE_DEPTH (R27),
 * so that printing it cannot exhaust the stack. */
static bool mk_tuple(ev_t *ev, const value *items, int64_t n, value *out,
                     mapopt__loc loc) {
  int depth = 1;
  for (int64_t i = 0; i < n; i++)
    if (items[i].kind == V_TUPLE && items[i].u.tuple.depth >= depth)
      depth = items[i].u.tuple.depth + 1;
  if (depth > MAPOPT__DSL_MAX_TUPLE_DEPTH)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R27_DEPTH), loc,
                           MAPOPT__DSL_MAX_TUPLE_DEPTH);
  out->kind = V_TUPLE;
  out->u.tuple.n = (int)n;
  out->u.tuple.depth = depth;
  out->u.tuple.items = items;
  return true;
}

static bool mk_int_tuple(ev_t *ev, const int64_t *v, int n, value *out,
                         mapopt__loc loc) {
  value *items = new_items(ev, n, loc);
  if (!items || !mapopt__ev_step(ev, n, loc))
    return false;
  for (int i = 0; i < n; i++)
    items[i] = mk_int(v[i]);
  return mk_tuple(ev, items, n, out, loc);
}

static bool is_int_tuple(const value *v) {
  if (v->kind == V_POINT)
    return true;
  if (v->kind != V_TUPLE)
    return false;
  for (int i = 0; i < v->u.tuple.n; i++)
    if (v->u.tuple.items[i].kind != V_INT)
      return false;
  return true;
}

/* ---- item lists (args, tuple items, subscripts) with unpacking ---------- */

static bool vl_push(ev_t *ev, vlist *l, const value *v, mapopt__loc loc) {
  if (l->n == l->cap) {
    int cap = l->cap ? l->cap * 2 : 8;
    value *d = new_items(ev, cap, loc);
    if (!d)
      return false;
    if (l->n)
      memcpy(d, l->items, (size_t)l->n * sizeof(value));
    l->items = d;
    l->cap = cap;
  }
  l->items[l->n++] = *v;
  return true;
}

/* Evaluates a list of items left to right, splicing unpacked tuples. A
 * wildcard item (allowed only where the grammar put one) is kept as V_UNSET
 * marker with i = 1. */
static bool eval_items(ev_t *ev, const mapopt__expr_list *list, vlist *out) {
  /* Sized for the common case without unpacking: one allocation. */
  out->n = 0;
  out->cap = list->n > 0 ? list->n : 1;
  out->items = new_items(ev, out->cap,
                         list->n ? list->items[0]->loc : (mapopt__loc){0, 0});
  if (!out->items)
    return false;
  for (int i = 0; i < list->n; i++) {
    const mapopt__expr *it = list->items[i];
    value v;
    if (it->kind == EX_WILDCARD) {
      v.kind = V_UNSET;
      v.u.i = 1;
      if (!vl_push(ev, out, &v, it->loc))
        return false;
      continue;
    }
    if (it->kind == EX_UNPACK) {
      if (!eval(ev, it->u.unpack, &v))
        return false;
      value tmp[2];
      const value *items;
      int n;
      if (!mapopt__ev_as_seq(&v, tmp, &items, &n))
        return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_UNPACK), it->loc,
                               mapopt__ev_type_name(&v));
      if (!mapopt__ev_step(ev, n, it->loc))
        return false;
      for (int j = 0; j < n; j++)
        if (!vl_push(ev, out, &items[j], it->loc))
          return false;
      continue;
    }
    if (!eval(ev, it, &v) || !vl_push(ev, out, &v, it->loc))
      return false;
  }
  return true;
}

/* ---- names and calls --------------------------------------------------- */

/* R01's hint: the global that was meant. */
static void name_note(ev_t *ev, int sym) {
  const mapopt_program *p = ev->prog;
  const char **v = mapopt__arena_zalloc(
      ev->arena, (size_t)(p->nglobals ? p->nglobals : 1) * sizeof *v);
  if (!v) {
    mapopt__ev_error_nomem(ev);
    return;
  }
  for (int i = 0; i < p->nglobals; i++)
    if (p->globals[i].kind != V_UNSET)
      v[i] = mapopt__sym_name(&p->ast, i);
  const char *name = mapopt__sym_name(&p->ast, sym);
  const char *best = mapopt_suggest(name, strlen(name), v, (size_t)p->nglobals);
  if (best)
    mapopt__ev_note(ev, MAPOPT__DIAG(N04_DID_YOU_MEAN), best);
}

static bool lookup(ev_t *ev, const mapopt__name_ref *ref, mapopt__loc loc,
                   value *out) {
  if (ref->slot >= 0 && ev->fr && ev->fr->slots[ref->slot].kind != V_UNSET) {
    *out = ev->fr->slots[ref->slot];
    return true;
  }
  const mapopt_program *p = ev->prog;
  if (ref->sym < p->nglobals && p->globals[ref->sym].kind != V_UNSET) {
    *out = p->globals[ref->sym];
    return true;
  }
  bool first = !ev->err->failed;
  mapopt__ev_fail(ev, MAPOPT__DIAG(R01_NOT_FOUND), loc,
                  mapopt__sym_name(&p->ast, ref->sym));
  if (first)
    name_note(ev, ref->sym);
  return false;
}

static bool param_accepts(mapopt__param_type t, const value *v) {
  switch (t) {
  case TYPE_INT:
    return v->kind == V_INT;
  case TYPE_BOOL:
    return v->kind == V_BOOL;
  case TYPE_IPOINT:
  case TYPE_ISPACE:
    return is_int_tuple(v);
  case TYPE_MSPACE:
    return v->kind == V_MACHINE;
  case TYPE_TASK:
    return v->kind == V_TASK;
  }
  return false;
}

static bool exec_body(ev_t *ev, const mapopt__stmt *fn, value *out);

/* Calls def fn with already evaluated arguments; loc is the call's name. */
static bool call_def(ev_t *ev, const mapopt__stmt *fn, const value *args,
                     int nargs, mapopt__loc loc, value *out) {
  const char *name = mapopt__sym_name(&ev->prog->ast, fn->u.def.sym);
  if (nargs != fn->u.def.nparams)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R03_ARGUMENTS), loc, name,
                           fn->u.def.nparams, nargs);
  for (int i = 0; i < nargs; i++)
    if (!param_accepts(fn->u.def.params[i].type, &args[i]))
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_ARGUMENT), loc, i + 1, name,
                             mapopt__param_type_text(fn->u.def.params[i].type),
                             mapopt__ev_type_name(&args[i]));
  if (ev->depth >= MAPOPT__DSL_MAX_CALL_DEPTH)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R22_RECURSION), loc,
                           MAPOPT__DSL_MAX_CALL_DEPTH, name);
  int nslots = fn->u.def.nslots > 0 ? fn->u.def.nslots : 1;
  value *slots = new_items(ev, nslots, loc);
  if (!slots)
    return false;
  memset(slots, 0, (size_t)nslots * sizeof *slots);
  for (int i = 0; i < nargs; i++)
    slots[i] = args[i]; /* parameters occupy the first slots */
  frame fr = {slots, fn};
  frame *saved = ev->fr;
  if (ev->depth == 0 && !ev->have_call_loc && ev->env->at_load) {
    ev->err->call_loc = loc;
    ev->have_call_loc = true;
  }
  ev->fr = &fr;
  ev->depth++;
  bool ok = exec_body(ev, fn, out);
  ev->depth--;
  ev->fr = saved;
  if (ev->depth == 0 && !ev->err->failed)
    ev->have_call_loc = false;
  return ok;
}

static bool eval_call(ev_t *ev, const mapopt__expr *e, value *out) {
  value f;
  if (!lookup(ev, &e->u.call.fn, e->loc, &f))
    return false;
  if (f.kind != V_FUNC)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_NOT_FUNCTION), e->loc,
                           mapopt__sym_name(&ev->prog->ast, e->u.call.fn.sym));
  vlist args;
  if (!eval_items(ev, &e->u.call.args, &args))
    return false;
  return call_def(ev, f.u.fn, args.items, args.n, e->loc, out);
}

/* ---- operators --------------------------------------------------------- */

static bool int_op(ev_t *ev, mapopt__op op, int64_t a, int64_t b, value *out,
                   mapopt__loc loc) {
  int64_t r = 0;
  bool ovf = false;
  switch (op) {
  case OP_ADD:
    ovf = mapopt__add_ovf(a, b, &r);
    break;
  case OP_SUB:
    ovf = mapopt__sub_ovf(a, b, &r);
    break;
  case OP_MUL:
    ovf = mapopt__mul_ovf(a, b, &r);
    break;
  case OP_DIV:
  case OP_MOD:
    if (b == 0)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R05_DIVISION), loc);
    if (a == INT64_MIN && b == -1) {
      if (op == OP_DIV)
        return mapopt__ev_fail(ev, MAPOPT__DIAG(R06_OVERFLOW), loc);
      r = 0;
    } else {
      r = op == OP_DIV ? a / b : a % b;
    }
    break;
  case OP_LT:
    *out = mk_bool(a < b);
    return true;
  case OP_LE:
    *out = mk_bool(a <= b);
    return true;
  case OP_GT:
    *out = mk_bool(a > b);
    return true;
  case OP_GE:
    *out = mk_bool(a >= b);
    return true;
  case OP_EQ:
    *out = mk_bool(a == b);
    return true;
  case OP_NE:
    *out = mk_bool(a != b);
    return true;
  default:
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_INT_OPERANDS), loc,
                           mapopt__op_text(op));
  }
  if (ovf)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R06_OVERFLOW), loc);
  *out = mk_int(r);
  return true;
}

static bool is_arith(mapopt__op op) {
  return op == OP_ADD || op == OP_SUB || op == OP_MUL || op == OP_DIV ||
         op == OP_MOD;
}

static bool binary(ev_t *ev, const mapopt__expr *e, value *out) {
  mapopt__op op = e->u.binary.op;
  value a, b;
  if (!eval(ev, e->u.binary.lhs, &a))
    return false;
  if (op == OP_AND || op == OP_OR) {
    /* Short-circuit: a bool left operand that decides the result ends
     * the evaluation. Otherwise both operands are evaluated, left to
     * right, and must be bools. */
    if (a.kind == V_BOOL && (op == OP_AND) != a.u.b) {
      *out = a;
      return true;
    }
    if (!eval(ev, e->u.binary.rhs, &b))
      return false;
    if (a.kind != V_BOOL || b.kind != V_BOOL)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_BINARY), e->loc,
                             mapopt__ev_type_name(&a), mapopt__op_text(op),
                             mapopt__ev_type_name(&b));
    *out = b;
    return true;
  }
  if (!eval(ev, e->u.binary.rhs, &b))
    return false;
  if (a.kind == V_INT && b.kind == V_INT)
    return int_op(ev, op, a.u.i, b.u.i, out, e->loc);
  if (a.kind == V_BOOL && b.kind == V_BOOL && (op == OP_EQ || op == OP_NE)) {
    *out = mk_bool((a.u.b == b.u.b) == (op == OP_EQ));
    return true;
  }
  if (is_arith(op) && is_int_tuple(&a) && is_int_tuple(&b)) {
    value ta[2], tb[2];
    const value *ia = NULL, *ib = NULL;
    int na = 0, nb = 0;
    mapopt__ev_as_seq(&a, ta, &ia, &na);
    mapopt__ev_as_seq(&b, tb, &ib, &nb);
    if (na != nb)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R09_LENGTHS), e->loc, na, nb);
    value *items = new_items(ev, na, e->loc);
    if (!items || !mapopt__ev_step(ev, na, e->loc))
      return false;
    for (int i = 0; i < na; i++)
      if (!int_op(ev, op, ia[i].u.i, ib[i].u.i, &items[i], e->loc))
        return false;
    return mk_tuple(ev, items, na, out, e->loc);
  }
  return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_BINARY), e->loc,
                         mapopt__ev_type_name(&a), mapopt__op_text(op),
                         mapopt__ev_type_name(&b));
}

static bool unary(ev_t *ev, const mapopt__expr *e, value *out) {
  value a;
  if (!eval(ev, e->u.unary.operand, &a))
    return false;
  mapopt__op op = e->u.unary.op;
  if (op == OP_NOT && a.kind == V_BOOL) {
    *out = mk_bool(!a.u.b);
    return true;
  }
  if (op == OP_NEG && a.kind == V_INT) {
    if (a.u.i == INT64_MIN)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R06_OVERFLOW), e->loc);
    *out = mk_int(-a.u.i);
    return true;
  }
  if (op == OP_NEG && is_int_tuple(&a)) {
    value tmp[2];
    const value *items;
    int n;
    mapopt__ev_as_seq(&a, tmp, &items, &n);
    value *r = new_items(ev, n, e->loc);
    if (!r || !mapopt__ev_step(ev, n, e->loc))
      return false;
    for (int i = 0; i < n; i++) {
      if (items[i].u.i == INT64_MIN)
        return mapopt__ev_fail(ev, MAPOPT__DIAG(R06_OVERFLOW), e->loc);
      r[i] = mk_int(-items[i].u.i);
    }
    return mk_tuple(ev, r, n, out, e->loc);
  }
  return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_UNARY), e->loc,
                         mapopt__op_text(op), mapopt__ev_type_name(&a));
}

/* ---- the task object --------------------------------------------------- */

static bool task_processor(ev_t *ev, const mapopt__taskobj *t,
                           const vlist *args, mapopt__loc loc, value *out) {
  if (args->n != 1 || args->items[0].kind != V_MACHINE)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_PROCESSOR_ARGUMENT), loc);
  const mapopt__mspace *m = args->items[0].u.ms;
  int64_t node = t->ref->proc.node, proc = t->ref->proc.proc;
  if (t->placing) {
    /* The point being placed has no processor yet (W14). */
    mapopt_program *p = ev->prog;
    const mapopt__stmt *fn = ev->fr ? ev->fr->fn : NULL;
    int sym = fn ? fn->u.def.sym : 0;
    bool first = false;
    pthread_mutex_lock(&p->lock);
    if (p->w14_done && !p->w14_done[sym]) {
      p->w14_done[sym] = 1;
      first = true;
    }
    pthread_mutex_unlock(&p->lock);
    if (first && ev->env->diags)
      mapopt__dsl_diag(ev->env->diags, MAPOPT__DIAG(W14_PROCESSOR), p->ast.file,
                       loc);
    node = proc = 0;
  }
  int64_t coords[MAPOPT__MS_MAX_DIMS];
  char msg[MAPOPT__MS_ERR_MAX];
  mapopt__ms_err r = mapopt__ms_forward(m, node, proc, coords, msg, sizeof msg);
  if (r != MS_OK)
    return mapopt__ev_ms_fail(ev, r, loc, msg);
  return mk_int_tuple(ev, coords, m->ndims, out, loc);
}

/*
 * The int tuples that live in a model or a task -- machine.size,
 * task.ipoint, task.ispace -- without building a tuple: *vals points into
 * the machine or the task. Returns false with no error when e is not such a
 * property of base, and false with an error for a task that lacks it.
 */
static bool int_property(ev_t *ev, const mapopt__expr *e, const value *base,
                         const int64_t **vals, int *n, bool *handled) {
  mapopt__member m = e->u.member.member;
  *handled = false;
  if (e->u.member.call)
    return false;
  if (base->kind == V_MACHINE && m == MEM_SIZE) {
    *handled = true;
    *vals = base->u.ms->size;
    *n = base->u.ms->ndims;
    return true;
  }
  if (base->kind != V_TASK || (m != MEM_IPOINT && m != MEM_ISPACE))
    return false;
  *handled = true;
  const mapopt__taskobj *t = base->u.task;
  if (t->is_parent || !t->ref->is_index)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R19_INDEX_ONLY), e->loc,
                           mapopt__member_text(m));
  *vals = m == MEM_IPOINT ? t->ref->point : t->ref->extents;
  *n = t->ref->dims;
  return true;
}

static bool task_member(ev_t *ev, const mapopt__expr *e,
                        const mapopt__taskobj *t, const vlist *args,
                        value *out) {
  const mapopt_task_ref *r = t->ref;
  switch (e->u.member.member) {
  case MEM_PARENT: {
    if (!t->is_parent && r->is_index)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R20_SINGLE_ONLY), e->loc);
    if (!r->parent)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R20_NO_PARENT), e->loc, r->name);
    mapopt__taskobj *po = mapopt__arena_alloc(ev->arena, sizeof *po);
    if (!po)
      return mapopt__ev_nomem(ev, e->loc);
    po->ref = r->parent;
    po->is_parent = true;
    po->placing = false;
    out->kind = V_TASK;
    out->u.task = po;
    return true;
  }
  case MEM_PROCESSOR:
    return task_processor(ev, t, args, e->loc, out);
  default:
    break;
  }
  return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_MEMBER), e->loc,
                         mapopt__member_text(e->u.member.member), "task");
}

static bool is_property(mapopt__member m) {
  return m <= MEM_PARENT;
}

/* base.member[(args)] once base is evaluated. */
static bool member_of(ev_t *ev, const mapopt__expr *e, const value *basep,
                      value *out) {
  value base = *basep;
  mapopt__member mem = e->u.member.member;
  const char *name = mapopt__member_text(mem);
  if (is_property(mem) && e->u.member.call)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_PROPERTY), e->loc, name);
  if (!is_property(mem) && !e->u.member.call)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_METHOD), e->loc, name);
  const int64_t *vals = NULL;
  int n = 0;
  bool handled;
  if (int_property(ev, e, &base, &vals, &n, &handled))
    return mk_int_tuple(ev, vals, n, out, e->loc);
  if (handled)
    return false;
  vlist args = {0};
  if (e->u.member.call && !eval_items(ev, &e->u.member.args, &args))
    return false;

  if (base.kind == V_TASK)
    return task_member(ev, e, base.u.task, &args, out);
  if (base.kind == V_MACHINE) {
    const mapopt__mspace *m = base.u.ms;
    if (mem == MEM_LEN) {
      *out = mk_int(m->ndims);
      return true;
    }
    if (mem == MEM_VOLUME) {
      int64_t v = 1;
      for (int i = 0; i < m->ndims; i++)
        if (mapopt__mul_ovf(v, m->size[i], &v))
          return mapopt__ev_fail(ev, MAPOPT__DIAG(R06_OVERFLOW), e->loc);
      *out = mk_int(v);
      return true;
    }
    return mapopt__ev_machine_method(ev, m, mem, &args, e->loc, out);
  }
  if (base.kind == V_POINT && mem == MEM_HAS) {
    if (args.n != 1 || args.items[0].kind != V_MEM_KIND)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_HAS_ARGUMENT), e->loc);
    int mk = args.items[0].u.k;
    unsigned aff = ev->prog->shape.affinity[base.u.pt.kind];
    *out = mk_bool(mk == MAPOPT_MEM_VIRTUAL || (aff >> mk) & 1u);
    return true;
  }
  if ((base.kind == V_TUPLE || base.kind == V_POINT) &&
      (mem == MEM_SIZE || mem == MEM_LEN || mem == MEM_VOLUME)) {
    if (mem == MEM_SIZE) {
      *out = base; /* the tuple, or the point itself */
      return true;
    }
    value tmp[2];
    const value *items;
    int len;
    mapopt__ev_as_seq(&base, tmp, &items, &len);
    if (mem == MEM_LEN) {
      *out = mk_int(len);
      return true;
    }
    int64_t v = 1;
    for (int i = 0; i < len; i++) {
      if (items[i].kind != V_INT)
        return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_VOLUME), e->loc);
      if (mapopt__mul_ovf(v, items[i].u.i, &v))
        return mapopt__ev_fail(ev, MAPOPT__DIAG(R06_OVERFLOW), e->loc);
    }
    *out = mk_int(v);
    return true;
  }
  return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_MEMBER), e->loc, name,
                         mapopt__ev_type_name(&base));
}

static bool member(ev_t *ev, const mapopt__expr *e, value *out) {
  value base;
  return eval(ev, e->u.member.base, &base) && member_of(ev, e, &base, out);
}

/* ---- subscripts -------------------------------------------------------- */

/* t[i] for a tuple of n values; R07 when i is out of range. */
static bool tuple_at(ev_t *ev, const mapopt__expr *e, int64_t i, int n,
                     int64_t *j) {
  *j = i < 0 ? i + n : i;
  if (*j < 0 || *j >= n)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R07_INDEX), e->loc, i, n);
  return true;
}

/* base[subs] once both are evaluated. */
static bool index_value(ev_t *ev, const mapopt__expr *e, const value *base,
                        const vlist *subs, value *out) {
  if (base->kind == V_MACHINE)
    return mapopt__ev_index_machine(ev, base->u.ms, subs, e->loc, out);
  for (int i = 0; i < subs->n; i++)
    if (subs->items[i].kind == V_UNSET)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R14_WILDCARD), e->loc);
  value tmp[2];
  const value *items = NULL;
  int n = 0;
  if (!mapopt__ev_as_seq(base, tmp, &items, &n))
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_NOT_INDEXABLE), e->loc,
                           mapopt__ev_type_name(base));
  if (subs->n != 1 || subs->items[0].kind != V_INT)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_TUPLE_INDEX), e->loc);
  int64_t j;
  if (!tuple_at(ev, e, subs->items[0].u.i, n, &j))
    return false;
  *out = items[j];
  return true;
}

/*
 * m.size[i], t.ipoint[i], t.ispace[i]: the hottest idiom of mapping
 * functions, read in place. Same result, errors and step charges as
 * building the tuple and indexing it. Returns false with *handled false
 * when e is not that idiom.
 */
static bool index_property(ev_t *ev, const mapopt__expr *e, value *out,
                           bool *handled) {
  const mapopt__expr *mem = e->u.index.base;
  const mapopt__expr_list *subs = &e->u.index.subs;
  *handled = false;
  if (mem->kind != EX_MEMBER || mem->u.member.call || subs->n != 1 ||
      subs->items[0]->kind == EX_UNPACK || subs->items[0]->kind == EX_WILDCARD)
    return false;
  mapopt__member m = mem->u.member.member;
  if (m != MEM_SIZE && m != MEM_IPOINT && m != MEM_ISPACE)
    return false;
  *handled = true;
  value base, idx;
  if (!mapopt__ev_step(ev, 1, mem->loc) || !eval(ev, mem->u.member.base, &base))
    return false;
  const int64_t *vals = NULL;
  int n = 0;
  bool known;
  if (!int_property(ev, mem, &base, &vals, &n, &known)) {
    if (known)
      return false;
    /* A tuple's .size, or an error: the general path says which. */
    value tuple;
    if (!member_of(ev, mem, &base, &tuple) || !eval(ev, subs->items[0], &idx))
      return false;
    vlist one = {&idx, 1, 1};
    return index_value(ev, e, &tuple, &one, out);
  }
  if (!mapopt__ev_step(ev, n, mem->loc) || !eval(ev, subs->items[0], &idx))
    return false;
  if (idx.kind != V_INT)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_TUPLE_INDEX), e->loc);
  int64_t j;
  if (!tuple_at(ev, e, idx.u.i, n, &j))
    return false;
  *out = mk_int(vals[j]);
  return true;
}

static bool index_expr(ev_t *ev, const mapopt__expr *e, value *out) {
  bool handled;
  bool ok = index_property(ev, e, out, &handled);
  if (handled)
    return ok;
  value base;
  vlist subs;
  return eval(ev, e->u.index.base, &base) &&
         eval_items(ev, &e->u.index.subs, &subs) &&
         index_value(ev, e, &base, &subs, out);
}

static bool slice_bound(ev_t *ev, const mapopt__expr *x, int64_t *v,
                        bool *given) {
  *given = x != NULL;
  if (!x)
    return true;
  value b;
  if (!eval(ev, x, &b))
    return false;
  if (b.kind != V_INT)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_SLICE_BOUND), x->loc,
                           mapopt__ev_type_name(&b));
  *v = b.u.i;
  return true;
}

static bool slice_expr(ev_t *ev, const mapopt__expr *e, value *out) {
  value base;
  if (!eval(ev, e->u.slice.base, &base))
    return false;
  int64_t lo = 0, hi = 0;
  bool has_lo, has_hi;
  if (!slice_bound(ev, e->u.slice.lo, &lo, &has_lo) ||
      !slice_bound(ev, e->u.slice.hi, &hi, &has_hi))
    return false;
  value tmp[2], sizes;
  const value *items;
  int n;
  if (base.kind == V_MACHINE) {
    if (!mk_int_tuple(ev, base.u.ms->size, base.u.ms->ndims, &sizes, e->loc))
      return false;
    base = sizes;
  }
  if (!mapopt__ev_as_seq(&base, tmp, &items, &n))
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_NOT_SLICEABLE), e->loc,
                           mapopt__ev_type_name(&base));
  int64_t a = lo < 0 ? lo + n : lo;
  if (a < 0)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R08_LEFT), e->loc, lo);
  int64_t b = n;
  if (has_hi && hi != 0) {
    if (hi > n)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R08_RIGHT_LENGTH), e->loc, hi, n);
    b = hi < 0 ? hi + n : hi;
    if (b < 0)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R08_RIGHT), e->loc, hi);
  }
  int64_t len = a < b ? b - a : 0;
  value *r = new_items(ev, len, e->loc);
  if (!r || !mapopt__ev_step(ev, len, e->loc))
    return false;
  for (int64_t k = 0; k < len; k++)
    r[k] = items[a + k];
  return mk_tuple(ev, r, len, out, e->loc);
}

/* ---- expressions ------------------------------------------------------- */

static bool comprehension(ev_t *ev, const mapopt__expr *e, value *out) {
  value range;
  if (!eval(ev, e->u.comp.range, &range))
    return false;
  value tmp[2];
  const value *items;
  int n;
  if (!mapopt__ev_as_seq(&range, tmp, &items, &n))
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_RANGE), e->u.comp.range->loc,
                           mapopt__ev_type_name(&range));
  value *r = new_items(ev, n, e->loc);
  if (!r)
    return false;
  int slot = e->u.comp.var.slot;
  value saved = ev->fr->slots[slot];
  for (int i = 0; i < n; i++) {
    ev->fr->slots[slot] = items[i];
    if (!eval(ev, e->u.comp.elem, &r[i]))
      return false;
  }
  ev->fr->slots[slot] = saved;
  if (!mapopt__ev_step(ev, n, e->loc))
    return false;
  return mk_tuple(ev, r, n, out, e->loc);
}

static bool eval_inner(ev_t *ev, const mapopt__expr *e, value *out) {
  switch (e->kind) {
  case EX_INT:
    *out = mk_int(e->u.ival);
    return true;
  case EX_BOOL:
    *out = mk_bool(e->u.bval);
    return true;
  case EX_PROC_KIND:
    out->kind = V_PROC_KIND;
    out->u.k = e->u.kind;
    return true;
  case EX_MEM_KIND:
    out->kind = V_MEM_KIND;
    out->u.k = e->u.kind;
    return true;
  case EX_NAME:
    if (!lookup(ev, &e->u.name, e->loc, out))
      return false;
    if (out->kind == V_FUNC)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_FUNCTION_VALUE), e->loc,
                             mapopt__sym_name(&ev->prog->ast, e->u.name.sym));
    return true;
  case EX_CALL:
    return eval_call(ev, e, out);
  case EX_MACHINE: {
    value k;
    if (!eval(ev, e->u.machine, &k))
      return false;
    if (k.kind != V_PROC_KIND)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_MACHINE_KIND), e->loc,
                             mapopt__ev_type_name(&k));
    mapopt__mspace *m = mapopt__arena_alloc(ev->arena, sizeof *m);
    if (!m)
      return mapopt__ev_nomem(ev, e->loc);
    mapopt__ms_base(m, k.u.k, ev->prog->shape.nodes,
                    ev->prog->shape.procs[k.u.k]);
    out->kind = V_MACHINE;
    out->u.ms = m;
    return true;
  }
  case EX_TUPLE: {
    vlist items;
    if (!eval_items(ev, &e->u.list, &items) ||
        !mapopt__ev_step(ev, items.n, e->loc))
      return false;
    return mk_tuple(ev, items.items, items.n, out, e->loc);
  }
  case EX_COMP:
    return comprehension(ev, e, out);
  case EX_UNARY:
    return unary(ev, e, out);
  case EX_BINARY:
    return binary(ev, e, out);
  case EX_COND: {
    value c;
    if (!eval(ev, e->u.cond.cond, &c))
      return false;
    if (c.kind != V_BOOL)
      return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_CONDITION), e->loc,
                             mapopt__ev_type_name(&c));
    return eval(ev, c.u.b ? e->u.cond.then : e->u.cond.els, out);
  }
  case EX_INDEX:
    return index_expr(ev, e, out);
  case EX_SLICE:
    return slice_expr(ev, e, out);
  case EX_MEMBER:
    return member(ev, e, out);
  case EX_UNPACK:
  case EX_WILDCARD:
    break; /* the parser only puts these inside item lists */
  }
  return mapopt__ev_fail(ev, MAPOPT__DIAG(R02_STAR), e->loc);
}

static bool eval(ev_t *ev, const mapopt__expr *e, value *out) {
  if (!mapopt__ev_step(ev, 1, e->loc))
    return false;
  if (ev->cdepth >= MAPOPT__DSL_MAX_EVAL_DEPTH)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R22_NESTING), e->loc);
  ev->cdepth++;
  bool ok = eval_inner(ev, e, out);
  ev->cdepth--;
  return ok;
}

/* ---- statements -------------------------------------------------------- */

int mapopt__print_placeholders(const char *fmt, int len) {
  int n = 0;
  for (int i = 0; i + 1 < len; i++)
    if (fmt[i] == '{' && fmt[i + 1] == '}') {
      n++;
      i++;
    }
  return n;
}

static bool exec_print(ev_t *ev, const mapopt__stmt *s) {
  const char *fmt = s->u.print.fmt;
  int len = s->u.print.fmtlen;
  if (mapopt__print_placeholders(fmt, len) > s->u.print.args.n)
    return mapopt__ev_fail(ev, MAPOPT__DIAG(R24_PRINT_ARGUMENTS), s->loc);
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ev->prog->ctx);
  int arg = 0;
  bool ok = true;
  for (int i = 0; i < len && ok; i++) {
    if (fmt[i] == '{' && i + 1 < len && fmt[i + 1] == '}') {
      value v;
      ok = eval(ev, s->u.print.args.items[arg++], &v);
      if (ok)
        mapopt__value_print(ev->prog, &v, &sb);
      i++;
    } else {
      mapopt__sb_putc(&sb, fmt[i]);
    }
  }
  if (ok && sb.failed)
    ok = mapopt__ev_nomem(ev, s->loc);
  if (ok)
    mapopt__dsl_emit_print(ev->prog, sb.data ? sb.data : "", ev->env->diags,
                           s->loc);
  mapopt__sb_destroy(&sb);
  return ok;
}

/* Reports one executed statement to the trace callback, indented by call
 * depth: "f 3:5: i = 5" or "f 4:5: return GPU(1, 1)". */
/* One trace line: "f 3:5: i = 5" for an assignment to the local named
 * target, "f 4:3: return 5" when target is NULL. */
static void trace(ev_t *ev, const mapopt__stmt *s, const char *target,
                  const value *v) {
  if (!mapopt__dsl_trace_admit(ev->prog))
    return;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ev->prog->ctx);
  mapopt__sb_printf(&sb, "%*s%s %d:%d: %s%s", 2 * (ev->depth - 1), "",
                    mapopt__sym_name(&ev->prog->ast, ev->fr->fn->u.def.sym),
                    s->loc.line, s->loc.col, target ? target : "return",
                    target ? " = " : " ");
  mapopt__value_print(ev->prog, v, &sb);
  if (!sb.failed)
    ev->prog->trace(ev->prog->trace_ud, sb.data);
  mapopt__sb_destroy(&sb);
}

static bool exec_body(ev_t *ev, const mapopt__stmt *fn, value *out) {
  const mapopt__stmt_list *body = &fn->u.def.body;
  for (int i = 0; i < body->n; i++) {
    const mapopt__stmt *s = body->items[i];
    if (!mapopt__ev_step(ev, 1, s->loc))
      return false;
    switch (s->kind) {
    case ST_ASSIGN: {
      value v;
      if (!eval(ev, s->u.assign.value, &v))
        return false;
      ev->fr->slots[s->u.assign.target.slot] = v;
      if (ev->prog->trace)
        trace(ev, s, mapopt__sym_name(&ev->prog->ast, s->u.assign.target.sym),
              &v);
      break;
    }
    case ST_RETURN:
      ev->ret_loc = s->loc;
      if (!eval(ev, s->u.ret.value, out))
        return false;
      if (ev->prog->trace)
        trace(ev, s, NULL, out);
      return true;
    case ST_PRINT:
      if (!exec_print(ev, s))
        return false;
      break;
    default:
      break;
    }
  }
  return mapopt__ev_fail(ev, MAPOPT__DIAG(R04_NO_RETURN), fn->u.def.name_loc,
                         mapopt__sym_name(&ev->prog->ast, fn->u.def.sym));
}

/* ---- entry points ------------------------------------------------------ */

static void ev_init(ev_t *ev, const mapopt__eval_env *env,
                    mapopt__eval_error *err, frame *fr) {
  memset(ev, 0, sizeof *ev);
  memset(err, 0, sizeof *err);
  ev->env = env;
  ev->prog = env->prog;
  ev->arena = env->arena;
  ev->err = err;
  ev->fr = fr;
}

static bool top_frame(ev_t *ev, frame *fr) {
  int n = ev->prog->top_frame > 0 ? ev->prog->top_frame : 1;
  fr->slots = mapopt__arena_zalloc(ev->arena, (size_t)n * sizeof(value));
  fr->fn = NULL;
  if (!fr->slots)
    return mapopt__ev_nomem(ev, (mapopt__loc){0, 0});
  return true;
}

bool mapopt__eval_top_expr(const mapopt__eval_env *env, const mapopt__expr *e,
                           value *out, mapopt__eval_error *err) {
  ev_t ev;
  frame fr;
  ev_init(&ev, env, err, &fr);
  return top_frame(&ev, &fr) && eval(&ev, e, out);
}

bool mapopt__eval_top_print(const mapopt__eval_env *env, const mapopt__stmt *s,
                            mapopt__eval_error *err) {
  ev_t ev;
  frame fr;
  ev_init(&ev, env, err, &fr);
  return top_frame(&ev, &fr) && exec_print(&ev, s);
}

bool mapopt__eval_entry(const mapopt__eval_env *env, const mapopt__stmt *fn,
                        const mapopt__taskobj *task, mapopt_proc_kind kind,
                        mapopt_map_answer *out, mapopt_proc_point *set,
                        size_t cap, mapopt__eval_error *err) {
  ev_t ev;
  ev_init(&ev, env, err, NULL);
  value arg = {.kind = V_TASK}, r;
  arg.u.task = task;
  if (!call_def(&ev, fn, &arg, 1, fn->u.def.name_loc, &r))
    return false;
  const char *fname = mapopt__sym_name(&env->prog->ast, fn->u.def.sym);
  const mapopt_proc_point *pts;
  int64_t n;
  if (r.kind == V_POINT) {
    pts = &r.u.pt;
    n = 1;
  } else if (r.kind == V_SET && r.u.set.n > 0) {
    pts = r.u.set.pts;
    n = r.u.set.n;
  } else {
    return mapopt__ev_fail(&ev, MAPOPT__DIAG(R17_RESULT), ev.ret_loc, fname,
                           mapopt__value_type_name(&r));
  }
  if (pts[0].kind != kind)
    return mapopt__ev_fail(&ev, MAPOPT__DIAG(R16_KIND), ev.ret_loc,
                           task->ref->name, mapopt_shape_proc_name(kind),
                           mapopt_shape_proc_name(pts[0].kind));
  out->kind = r.kind == V_POINT ? MAPOPT_MAP_POINT : MAPOPT_MAP_SET;
  out->function = fname;
  out->npoints = (size_t)n;
  out->points[0] = pts[0];
  for (size_t i = 0; set && i < cap && i < (size_t)n; i++)
    set[i] = pts[i];
  return true;
}
