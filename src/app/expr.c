/*
 * The integer expression language of application models (docs/apps.md,
 * "Expressions"): a tokenizer and recursive-descent parser from text to a small
 * tree, and an evaluator over int64 with C truncation in which overflow and
 * division by zero are errors, never wrapped or trapped.
 *
 * The parser knows nothing of JSON or of which names exist: names are
 * interned through a callback and checked against their scope by the
 * loader; errors come back as (offset, message) for the loader to locate.
 * The evaluator allocates nothing.
 */
#include "app/app.h"

#include <stdio.h>
#include <string.h>

/* ---- tokenizer ----------------------------------------------------------- */

typedef enum {
  T_END,
  T_INT,
  T_NAME,
  T_LP,
  T_RP,
  T_COMMA,
  T_QUEST,
  T_COLON,
  T_PLUS,
  T_MINUS,
  T_STAR,
  T_SLASH,
  T_PCT,
  T_LT,
  T_LE,
  T_GT,
  T_GE,
  T_EQ,
  T_NE,
  T_AND,
  T_OR,
  T_NOT,
  T_BAD
} tok_kind;

typedef struct parser {
  mapopt__arena *arena;
  mapopt__app_intern_fn intern;
  void *ud;
  const char *text;
  size_t len;
  size_t pos;   /* next byte to scan */
  tok_kind tok; /* current token */
  size_t tpos;  /* its offset */
  size_t tlen;  /* its length */
  int64_t tval; /* T_INT */
  bool toobig;  /* T_INT out of range */
  int depth;
  /* error */
  bool failed, nomem;
  uint32_t err_off;
  const char *msg; /* in the arena */
} parser;

static bool is_name_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_digit(char c) {
  return c >= '0' && c <= '9';
}

static void next(parser *p) {
  while (p->pos < p->len &&
         (p->text[p->pos] == ' ' || p->text[p->pos] == '\t' ||
          p->text[p->pos] == '\n' || p->text[p->pos] == '\r'))
    p->pos++;
  p->tpos = p->pos;
  if (p->pos >= p->len) {
    p->tok = T_END;
    p->tlen = 0;
    return;
  }
  const char *s = p->text + p->pos;
  size_t rest = p->len - p->pos;
  char c = s[0], d = rest > 1 ? s[1] : '\0';
  size_t n = 1;
  if (is_digit(c)) {
    int64_t v = 0;
    bool big = false;
    n = 0;
    while (n < rest && is_digit(s[n])) {
      int dig = s[n] - '0';
      if (v > (INT64_MAX - dig) / 10)
        big = true;
      else
        v = v * 10 + dig;
      n++;
    }
    p->tok = T_INT;
    p->tval = v;
    p->toobig = big;
  } else if (is_name_start(c)) {
    while (n < rest && (is_name_start(s[n]) || is_digit(s[n])))
      n++;
    p->tok = T_NAME;
  } else {
    switch (c) {
    case '(':
      p->tok = T_LP;
      break;
    case ')':
      p->tok = T_RP;
      break;
    case ',':
      p->tok = T_COMMA;
      break;
    case '?':
      p->tok = T_QUEST;
      break;
    case ':':
      p->tok = T_COLON;
      break;
    case '+':
      p->tok = T_PLUS;
      break;
    case '-':
      p->tok = T_MINUS;
      break;
    case '*':
      p->tok = T_STAR;
      break;
    case '/':
      p->tok = T_SLASH;
      break;
    case '%':
      p->tok = T_PCT;
      break;
    case '<':
      p->tok = d == '=' ? T_LE : T_LT;
      n = d == '=' ? 2 : 1;
      break;
    case '>':
      p->tok = d == '=' ? T_GE : T_GT;
      n = d == '=' ? 2 : 1;
      break;
    case '=':
      p->tok = d == '=' ? T_EQ : T_BAD;
      n = d == '=' ? 2 : 1;
      break;
    case '!':
      p->tok = d == '=' ? T_NE : T_NOT;
      n = d == '=' ? 2 : 1;
      break;
    case '&':
      p->tok = d == '&' ? T_AND : T_BAD;
      n = d == '&' ? 2 : 1;
      break;
    case '|':
      p->tok = d == '|' ? T_OR : T_BAD;
      n = d == '|' ? 2 : 1;
      break;
    default:
      p->tok = T_BAD;
      break;
    }
  }
  p->tlen = n;
  p->pos += n;
}

static void fail(parser *p, size_t off, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The one place syntax errors are formatted: the first one wins. */
static void fail(parser *p, size_t off, const char *fmt, ...) {
  if (p->failed)
    return;
  p->failed = true;
  p->err_off = (uint32_t)off;
  va_list ap;
  va_start(ap, fmt);
  p->msg = mapopt__arena_vprintf(p->arena, fmt, ap);
  va_end(ap);
  if (!p->msg)
    p->nomem = true;
}

/* The tree would be deeper than every walk of it (evaluation, printing)
 * may go: a nesting of parentheses, or a long flat chain of operators. */
static void too_deep(parser *p, size_t off) {
  fail(p, off,
       "expression nested too deeply (more than %d levels of operators, "
       "calls, conditionals or parentheses)",
       MAPOPT_APP_MAX_EXPR_DEPTH);
}

/* What the current token is, for "expected X, got Y" messages. */
static void describe(const parser *p, char *buf, size_t n) {
  if (p->tok == T_END)
    snprintf(buf, n, "the end of the expression");
  else
    snprintf(buf, n, "'%.*s'", (int)(p->tlen > 20 ? 20 : p->tlen),
             p->text + p->tpos);
}

static int height(const mapopt__app_ex_node *n) {
  return n ? n->height : 0;
}

static mapopt__app_ex_node *mk(parser *p, mapopt__app_ex_op op, size_t off,
                               const mapopt__app_ex_node *a,
                               const mapopt__app_ex_node *b,
                               const mapopt__app_ex_node *c) {
  mapopt__app_ex_node *nd = mapopt__arena_alloc(p->arena, sizeof *nd);
  if (!nd) {
    p->nomem = true;
    p->failed = true;
    return NULL;
  }
  nd->op = op;
  nd->off = (uint32_t)off;
  nd->v = 0;
  nd->a = a;
  nd->b = b;
  nd->c = c;
  int h = height(a) > height(b) ? height(a) : height(b);
  nd->height = (height(c) > h ? height(c) : h) + 1;
  if (nd->height > MAPOPT_APP_MAX_EXPR_DEPTH) {
    too_deep(p, off);
    return NULL;
  }
  return nd;
}

static const mapopt__app_ex_node *expr(parser *p);

static const struct {
  const char *name;
  mapopt__app_ex_op op;
  int nargs; /* -1: two or more */
} funcs[] = {{"min", EX_MIN, -1},     {"max", EX_MAX, -1},
             {"cdiv", EX_CDIV, 2},    {"gcd", EX_GCD, 2},
             {"lcm", EX_LCM, 2},      {"elems", EX_ELEMS, 1},
             {"fbytes", EX_FBYTES, 1}};

/* call -> NAME '(' [ expr { ',' expr } ] ')'   (NAME a function) */
static const mapopt__app_ex_node *call(parser *p, size_t off, size_t nlen) {
  const char *name = p->text + off;
  int f = -1;
  for (int i = 0; i < (int)(sizeof funcs / sizeof funcs[0]); i++)
    if (strlen(funcs[i].name) == nlen && memcmp(funcs[i].name, name, nlen) == 0)
      f = i;
  if (f < 0) {
    fail(p, off,
         "unknown function \"%.*s\" (functions: min, max, cdiv, gcd, "
         "lcm, elems, fbytes)",
         (int)nlen, name);
    return NULL;
  }
  next(p); /* '(' */
  mapopt__app_ex_op op = funcs[f].op;
  if (op == EX_ELEMS || op == EX_FBYTES) {
    if (p->tok != T_INT || p->toobig) {
      fail(p, p->tpos, "%s() takes one integer literal (a requirement index)",
           funcs[f].name);
      return NULL;
    }
    mapopt__app_ex_node *nd = mk(p, op, off, NULL, NULL, NULL);
    if (!nd)
      return NULL;
    nd->v = p->tval;
    next(p);
    if (p->tok != T_RP) {
      fail(p, p->tpos, "%s() takes one integer literal (a requirement index)",
           funcs[f].name);
      return NULL;
    }
    next(p);
    return nd;
  }
  const mapopt__app_ex_node *acc = NULL;
  int n = 0;
  if (p->tok != T_RP) {
    for (;;) {
      const mapopt__app_ex_node *arg = expr(p);
      if (!arg)
        return NULL;
      n++;
      if (!acc)
        acc = arg;
      else if (funcs[f].nargs < 0 || n == 2)
        acc = mk(p, op, off, acc, arg, NULL); /* min(a,b,c) = min(min(a,b),c) */
      if (!acc)
        return NULL;
      if (p->tok != T_COMMA)
        break;
      next(p);
    }
  }
  if (p->tok != T_RP) {
    char d[48];
    describe(p, d, sizeof d);
    fail(p, p->tpos, "expected ',' or ')' in the call of %s(), got %s",
         funcs[f].name, d);
    return NULL;
  }
  next(p);
  if (funcs[f].nargs < 0 ? n < 2 : n != funcs[f].nargs) {
    fail(p, off, "%s() takes %s arguments, not %d", funcs[f].name,
         funcs[f].nargs < 0 ? "two or more" : "two", n);
    return NULL;
  }
  return acc;
}

/* primary -> INT | NAME | call | '(' expr ')' */
static const mapopt__app_ex_node *primary(parser *p) {
  size_t off = p->tpos;
  switch (p->tok) {
  case T_INT: {
    if (p->toobig) {
      fail(p, off, "integer literal %.*s is out of range", (int)p->tlen,
           p->text + off);
      return NULL;
    }
    mapopt__app_ex_node *nd = mk(p, EX_INT, off, NULL, NULL, NULL);
    if (nd)
      nd->v = p->tval;
    next(p);
    return nd;
  }
  case T_NAME: {
    size_t nlen = p->tlen;
    next(p);
    if (p->tok == T_LP)
      return call(p, off, nlen);
    int32_t sym = p->intern(p->ud, p->text + off, nlen);
    if (sym < 0) {
      p->nomem = p->failed = true;
      return NULL;
    }
    mapopt__app_ex_node *nd = mk(p, EX_NAME, off, NULL, NULL, NULL);
    if (nd)
      nd->v = sym;
    return nd;
  }
  case T_LP: {
    next(p);
    const mapopt__app_ex_node *e = expr(p);
    if (!e)
      return NULL;
    if (p->tok != T_RP) {
      char d[48];
      describe(p, d, sizeof d);
      fail(p, p->tpos, "expected ')', got %s", d);
      return NULL;
    }
    next(p);
    return e;
  }
  case T_BAD:
    fail(p, off, "unexpected character '%c'", p->text[off]);
    return NULL;
  default: {
    char d[48];
    describe(p, d, sizeof d);
    fail(p, off, "expected an operand, got %s", d);
    return NULL;
  }
  }
}

/* unary -> ( '-' | '+' | '!' ) unary | primary */
static const mapopt__app_ex_node *unary(parser *p) {
  if (p->tok == T_MINUS || p->tok == T_PLUS || p->tok == T_NOT) {
    tok_kind t = p->tok;
    size_t off = p->tpos;
    if (++p->depth > MAPOPT_APP_MAX_EXPR_DEPTH) {
      too_deep(p, off);
      return NULL;
    }
    next(p);
    const mapopt__app_ex_node *a = unary(p);
    p->depth--;
    if (!a)
      return NULL;
    if (t == T_PLUS)
      return a;
    /* Fold a negated literal so that -9223372036854775808 is not needed
     * but "-1" stays a constant. */
    if (t == T_MINUS && a->op == EX_INT && a->v != INT64_MIN) {
      mapopt__app_ex_node *nd = mk(p, EX_INT, off, NULL, NULL, NULL);
      if (nd)
        nd->v = -a->v;
      return nd;
    }
    return mk(p, t == T_MINUS ? EX_NEG : EX_NOT, off, a, NULL, NULL);
  }
  return primary(p);
}

/* Binary levels, loosest first; each is `level -> next { OP next }`. */
static const struct {
  tok_kind tok;
  mapopt__app_ex_op op;
  int level;
} binops[] = {
    {T_OR, EX_OR, 0},     {T_AND, EX_AND, 1},  {T_EQ, EX_EQ, 2},
    {T_NE, EX_NE, 2},     {T_LT, EX_LT, 3},    {T_LE, EX_LE, 3},
    {T_GT, EX_GT, 3},     {T_GE, EX_GE, 3},    {T_PLUS, EX_ADD, 4},
    {T_MINUS, EX_SUB, 4}, {T_STAR, EX_MUL, 5}, {T_SLASH, EX_DIV, 5},
    {T_PCT, EX_MOD, 5},
};
enum { NLEVELS = 6 };

/* or -> and { '||' and }; and -> eq { '&&' eq }; eq -> rel { ('=='|'!=')
 * rel }; rel -> add { ('<'|'<='|'>'|'>=') add }; add -> mul { ('+'|'-')
 * mul }; mul -> unary { ('*'|'/'|'%') unary } */
static const mapopt__app_ex_node *binary(parser *p, int level) {
  if (level == NLEVELS)
    return unary(p);
  const mapopt__app_ex_node *a = binary(p, level + 1);
  while (a) {
    int k = -1;
    for (int i = 0; i < (int)(sizeof binops / sizeof binops[0]); i++)
      if (binops[i].level == level && binops[i].tok == p->tok)
        k = i;
    if (k < 0)
      break;
    size_t off = p->tpos;
    next(p);
    const mapopt__app_ex_node *b = binary(p, level + 1);
    if (!b)
      return NULL;
    a = mk(p, binops[k].op, off, a, b, NULL);
  }
  return a;
}

/* expr -> or [ '?' expr ':' expr ] */
static const mapopt__app_ex_node *expr(parser *p) {
  if (++p->depth > MAPOPT_APP_MAX_EXPR_DEPTH) {
    too_deep(p, p->tpos);
    return NULL;
  }
  const mapopt__app_ex_node *c = binary(p, 0);
  if (c && p->tok == T_QUEST) {
    size_t off = p->tpos;
    next(p);
    const mapopt__app_ex_node *a = expr(p);
    if (!a)
      return NULL;
    if (p->tok != T_COLON) {
      char d[48];
      describe(p, d, sizeof d);
      fail(p, p->tpos, "expected ':' of '?', got %s", d);
      return NULL;
    }
    next(p);
    const mapopt__app_ex_node *b = expr(p);
    if (!b)
      return NULL;
    c = mk(p, EX_COND, off, c, a, b);
  }
  p->depth--;
  return c;
}

bool mapopt__app_expr_parse(mapopt__arena *arena, mapopt__app_intern_fn intern,
                            void *ud, const char *text, size_t len,
                            const mapopt__app_ex_node **root, uint32_t *err_off,
                            const char **msg, bool *nomem) {
  parser p = {0};
  p.arena = arena;
  p.intern = intern;
  p.ud = ud;
  p.text = text;
  p.len = len;
  *nomem = false;
  if (len > UINT32_MAX) {
    *msg = "expression too long";
    *err_off = 0;
    return false;
  }
  next(&p);
  const mapopt__app_ex_node *e = NULL;
  if (p.tok == T_END)
    fail(&p, 0, "empty expression");
  else
    e = expr(&p);
  if (e && p.tok == T_BAD) {
    fail(&p, p.tpos, "unexpected character '%c'", text[p.tpos]);
  } else if (e && p.tok != T_END) {
    char d[48];
    describe(&p, d, sizeof d);
    fail(&p, p.tpos, "unexpected %s after the expression", d);
  }
  if (p.failed) {
    *nomem = p.nomem;
    *err_off = p.err_off;
    *msg = p.msg;
    return false;
  }
  *root = e;
  return true;
}

/* ---- evaluation ---------------------------------------------------------- */

static bool err(mapopt__app_env *env, mapopt__app_eval_err e,
                const mapopt__app_ex_node *n) {
  if (env->err == EVAL_OK) {
    env->err = e;
    env->err_off = n->off;
  }
  return false;
}

static int64_t gcd64(int64_t a, int64_t b) {
  /* Callers exclude INT64_MIN. */
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b) {
    int64_t t = a % b;
    a = b;
    b = t;
  }
  return a;
}

static bool ev(const mapopt__app_ex_node *n, mapopt__app_env *env,
               int64_t *out) {
  int64_t a, b;
  switch (n->op) {
  case EX_INT:
    *out = n->v;
    return true;
  case EX_NAME: {
    int32_t sym = (int32_t)n->v;
    for (int i = env->n - 1; i >= 0; i--)
      if (env->sym[i] == sym) {
        *out = env->val[i];
        return true;
      }
    if (sym < env->nsyms && env->slot_of[sym] >= 0) {
      *out = env->params[env->slot_of[sym]];
      return true;
    }
    return err(env, EVAL_UNDEFINED, n);
  }
  case EX_ELEMS:
  case EX_FBYTES:
    if (n->v >= env->nreqs || !env->elems)
      return err(env, EVAL_NOREQ, n);
    *out = (n->op == EX_ELEMS ? env->elems : env->fbytes)[n->v];
    return true;
  case EX_NEG:
    if (!ev(n->a, env, &a))
      return false;
    if (a == INT64_MIN)
      return err(env, EVAL_OVERFLOW, n);
    *out = -a;
    return true;
  case EX_NOT:
    if (!ev(n->a, env, &a))
      return false;
    *out = !a;
    return true;
  case EX_AND:
    if (!ev(n->a, env, &a))
      return false;
    if (!a) {
      *out = 0;
      return true;
    }
    if (!ev(n->b, env, &b))
      return false;
    *out = b != 0;
    return true;
  case EX_OR:
    if (!ev(n->a, env, &a))
      return false;
    if (a) {
      *out = 1;
      return true;
    }
    if (!ev(n->b, env, &b))
      return false;
    *out = b != 0;
    return true;
  case EX_COND:
    if (!ev(n->a, env, &a))
      return false;
    return ev(a ? n->b : n->c, env, out);
  default:
    break;
  }
  if (!ev(n->a, env, &a) || !ev(n->b, env, &b))
    return false;
  switch (n->op) {
  case EX_ADD:
    if (mapopt__add_ovf(a, b, out))
      return err(env, EVAL_OVERFLOW, n);
    return true;
  case EX_SUB:
    if (mapopt__sub_ovf(a, b, out))
      return err(env, EVAL_OVERFLOW, n);
    return true;
  case EX_MUL:
    if (mapopt__mul_ovf(a, b, out))
      return err(env, EVAL_OVERFLOW, n);
    return true;
  case EX_DIV:
  case EX_MOD:
  case EX_CDIV:
    if (b == 0)
      return err(env, EVAL_DIVZERO, n);
    if (a == INT64_MIN && b == -1) {
      if (n->op == EX_MOD) {
        *out = 0;
        return true;
      }
      return err(env, EVAL_OVERFLOW, n);
    }
    if (n->op == EX_DIV) {
      *out = a / b;
    } else if (n->op == EX_MOD) {
      *out = a % b;
    } else {
      int64_t q = a / b;
      if (a % b != 0 && ((a < 0) == (b < 0)))
        q++;
      *out = q;
    }
    return true;
  case EX_LT:
    *out = a < b;
    return true;
  case EX_LE:
    *out = a <= b;
    return true;
  case EX_GT:
    *out = a > b;
    return true;
  case EX_GE:
    *out = a >= b;
    return true;
  case EX_EQ:
    *out = a == b;
    return true;
  case EX_NE:
    *out = a != b;
    return true;
  case EX_MIN:
    *out = a < b ? a : b;
    return true;
  case EX_MAX:
    *out = a > b ? a : b;
    return true;
  case EX_GCD:
  case EX_LCM: {
    if (a == INT64_MIN || b == INT64_MIN)
      return err(env, EVAL_OVERFLOW, n);
    int64_t g = gcd64(a, b);
    if (n->op == EX_GCD) {
      *out = g;
      return true;
    }
    if (g == 0) {
      *out = 0;
      return true;
    }
    int64_t r;
    if (mapopt__mul_ovf(a / g, b, &r))
      return err(env, EVAL_OVERFLOW, n);
    *out = r < 0 ? -r : r;
    return true;
  }
  default:
    return err(env, EVAL_UNDEFINED, n);
  }
}

bool mapopt__app_expr_eval(const mapopt__app_expr *e, mapopt__app_env *env,
                           int64_t *out) {
  const mapopt__app_ex_node *r = e->root;
  if (r->op == EX_INT) { /* the common constant case */
    *out = r->v;
    return true;
  }
  return ev(r, env, out);
}

void mapopt__app_expr_walk(const mapopt__app_ex_node *n,
                           void (*fn)(void *ud, const mapopt__app_ex_node *n),
                           void *ud) {
  while (n) {
    fn(ud, n);
    if (n->b)
      mapopt__app_expr_walk(n->b, fn, ud);
    if (n->c)
      mapopt__app_expr_walk(n->c, fn, ud);
    n = n->a;
  }
}

int mapopt__app_expr_col(const mapopt__app_expr *e, uint32_t off) {
  int64_t c = (int64_t)e->col + (e->quoted ? 1 : 0) + off;
  return c > INT32_MAX ? INT32_MAX : (int)c;
}

const char *mapopt__app_expr_excerpt(const mapopt__app_expr *e,
                                     char buf[MAPOPT__APP_EXCERPT]) {
  size_t len = strlen(e->text);
  if (len < MAPOPT__APP_EXCERPT)
    return e->text;
  snprintf(buf, MAPOPT__APP_EXCERPT, "%.*s...", MAPOPT__APP_EXCERPT - 4,
           e->text);
  return buf;
}
