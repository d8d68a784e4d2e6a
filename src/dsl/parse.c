/*
 * The recursive-descent parser of the mapping DSL (docs/dsl.md): tokens from
 * lex.c to the tree of ast.h, in the program's arena. It stops at the first
 * error, reporting exactly one diagnostic.
 *
 * Expected tokens. Every test of the current token (test, accept, expect)
 * adds the tested tokens to p->expected, and consuming a token clears it.
 * When no rule accepts the current token, p->expected therefore holds
 * exactly the tokens that could have continued the parse there, which is
 * what "expecting ..." lists. syntax_error() is the one place
 * where that message is formatted.
 *
 * Nesting. Two limits, both MAPOPT__DSL_MAX_NESTING, both reported as
 * "expression nested too deeply": the parser recurses only through expr(),
 * whose depth is counted (enter/leave), and no expression tree may be
 * taller than the limit (loops build tall trees without recursion here:
 * left-associative chains, postfix chains, runs of prefix operators; the
 * printer, the comparison and the interpreter recurse on them). So no input
 * can exhaust the stack, and any tree this parser accepts can be walked
 * recursively. Each nested expr() call parses a strictly deeper node of the
 * tree, so the canonical form of an accepted tree is accepted again.
 *
 * Not done here: names are not resolved (slots stay -1), no semantic checks.
 */
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "dsl/lex.h"

/* A set of token types. */
typedef struct tokset {
  uint64_t w[2];
} tokset;

_Static_assert(TK__COUNT <= 128, "a tokset holds 128 token types");

static void ts_add(tokset *s, mapopt__tok t) {
  s->w[t >> 6] |= (uint64_t)1 << (t & 63);
}

static bool ts_has(const tokset *s, mapopt__tok t) {
  return (s->w[t >> 6] >> (t & 63)) & 1;
}

static void ts_add_range(tokset *s, mapopt__tok first, mapopt__tok last) {
  for (int t = first; t <= (int)last; t++)
    ts_add(s, (mapopt__tok)t);
}

typedef struct parser {
  mapopt__lexer lx;
  mapopt__ast *ast;
  tokset expected; /* tokens tested at the current position */
  /* The identifier that began the statement being parsed as an assignment,
   * until its '=' is read: an error there may be a misspelled keyword or
   * an `if`, which syntax_error's hints recognize. */
  mapopt__token lead;
  bool has_lead;
  int prev_line; /* the line of the token before the current one */
  int level;     /* recursion depth through expr() and unary() */
  /* Legacy map statements (map_stmt): the function definition to put
   * before the statement just parsed, and the functions already made. */
  struct mapopt__stmt *pending;
  int legacy_syms[64];
  int nlegacy;
  /* The top-level statements parsed so far (program's list), where a
   * legacy statement looks up its machine model's kind. */
  const struct growbuf *stmts;
} parser;

/* A list under construction, grown by doubling inside the arena. */
struct growbuf {
  void *data;
  int n;
  int cap;
  size_t elem;
};
typedef struct growbuf growbuf;

/* ---- errors ------------------------------------------------------------ */

static int cmp_spelling(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The statement keywords, for a statement whose first word is misspelled. */
static const mapopt__tok stmt_words[] = {
    TK_TASK,          TK_REGION,       TK_LAYOUT,        TK_INSTANCELIMIT,
    TK_COLLECTMEMORY, TK_INDEXTASKMAP, TK_SINGLETASKMAP, TK_CONTROLREPLICATE,
    TK_DEF,           TK_RETURN,       TK_PRINT};

/*
 * The hints after a syntax error (MAPOPT_ESYNTAX, or MAPOPT_ENOMEM when
 * one cannot be stored):
 *   - a statement that began with an identifier not followed by '=': `if`
 *     or `else` (N07: the language has none), or a misspelled statement
 *     keyword (N04: did you mean 'Task'?);
 *   - an identifier where reserved words could come (a kind, a method, a
 *     layout constraint): the word meant (N04);
 *   - a ';' expected where the next line began: it is missing at the end
 *     of the line before (N09);
 *   - otherwise, when there were too many possibilities for the message
 *     to list (long) but not more than MAX_HINTED, all of them (N06).
 */
static mapopt_status syntax_hint(parser *p, bool long_list) {
  enum { MAX_HINTED = 12 };
  const mapopt__token *t = &p->lx.tok;
  const char *words[TK__COUNT];
  size_t n = 0;
  if (p->has_lead) {
    const mapopt__token *l = &p->lead;
    if ((l->len == 2 && memcmp(l->text, "if", 2) == 0) ||
        (l->len == 4 && memcmp(l->text, "else", 4) == 0))
      return mapopt__lex_note(&p->lx, MAPOPT__DIAG(N07_NO_IF), l->loc);
    for (size_t i = 0; i < sizeof stmt_words / sizeof stmt_words[0]; i++)
      words[n++] = mapopt__tok_word(stmt_words[i]);
    const char *best = mapopt_suggest(l->text, l->len, words, n);
    return best ? mapopt__lex_note(&p->lx, MAPOPT__DIAG(N04_DID_YOU_MEAN),
                                   l->loc, best)
                : MAPOPT_ESYNTAX;
  }
  if (t->type == TK_IDENT) {
    for (int k = 0; k < TK__COUNT; k++)
      if (ts_has(&p->expected, (mapopt__tok)k) &&
          mapopt__tok_word((mapopt__tok)k))
        words[n++] = mapopt__tok_word((mapopt__tok)k);
    const char *best = mapopt_suggest(t->text, t->len, words, n);
    if (best)
      return mapopt__lex_note(&p->lx, MAPOPT__DIAG(N04_DID_YOU_MEAN), t->loc,
                              best);
  }
  /* A statement that could have ended on the line before. */
  if (ts_has(&p->expected, TK_SEMI) && p->prev_line > 0 &&
      t->loc.line > p->prev_line)
    return mapopt__lex_note(&p->lx, MAPOPT__DIAG(N09_SEMICOLON), t->loc,
                            p->prev_line);
  int n_expected = 0;
  for (int k = 0; k < TK__COUNT; k++)
    n_expected += ts_has(&p->expected, (mapopt__tok)k);
  if (!long_list || n_expected > MAX_HINTED)
    return MAPOPT_ESYNTAX;
  mapopt__strbuf list;
  mapopt__sb_init(&list, p->lx.ctx);
  for (int k = 0, i = 0; k < TK__COUNT; k++)
    if (ts_has(&p->expected, (mapopt__tok)k))
      mapopt__sb_printf(&list, "%s%s", i++ ? ", " : "",
                        mapopt__tok_spelling((mapopt__tok)k));
  mapopt_status st = list.failed
                         ? MAPOPT_ENOMEM
                         : mapopt__lex_note(&p->lx, MAPOPT__DIAG(N06_EXPECTING),
                                            t->loc, list.data);
  mapopt__sb_destroy(&list);
  return st;
}

/* "syntax error, unexpected TOK[, expecting LIST]" at the current token
 * (E04_UNEXPECTED, E04_EXPECTING). */
static _Noreturn void syntax_error(parser *p) {
  const mapopt__token *t = &p->lx.tok;
  mapopt__strbuf tok, list, msg;
  mapopt__sb_init(&tok, p->lx.ctx);
  mapopt__sb_init(&list, p->lx.ctx);
  mapopt__sb_init(&msg, p->lx.ctx);
  mapopt__sb_puts(&tok, mapopt__tok_spelling(t->type));
  if (t->type == TK_IDENT) {
    mapopt__sb_puts(&tok, " '");
    mapopt__sb_putn(&tok, t->text, t->len);
    mapopt__sb_putc(&tok, '\'');
  } else if (t->type == TK_INT || t->type == TK_STRING) {
    mapopt__sb_putc(&tok, ' ');
    mapopt__sb_putn(&tok, t->text, t->len);
  }
  enum { MAX_LISTED = 4 };
  const char *listed[MAX_LISTED + 1];
  int n = 0;
  for (int k = 0; k < TK__COUNT && n <= MAX_LISTED; k++)
    if (ts_has(&p->expected, (mapopt__tok)k))
      listed[n++] = mapopt__tok_spelling((mapopt__tok)k);
  bool expecting = n > 0 && n <= MAX_LISTED;
  if (expecting) {
    qsort(listed, (size_t)n, sizeof listed[0], cmp_spelling);
    for (int i = 0; i < n; i++) {
      if (i > 0)
        mapopt__sb_puts(&list, " or ");
      mapopt__sb_puts(&list, listed[i]);
    }
  }
  mapopt_dsl_diag id;
  if (tok.failed || list.failed)
    msg.failed = true;
  else if (expecting)
    mapopt__sb_printf(&msg, MAPOPT_DSL_TEMPLATE(E04_EXPECTING), tok.data,
                      list.data);
  else
    mapopt__sb_printf(&msg, MAPOPT_DSL_TEMPLATE(E04_UNEXPECTED), tok.data);
  id = expecting ? MAPOPT_DSL_E04_EXPECTING : MAPOPT_DSL_E04_UNEXPECTED;
  mapopt__sb_destroy(&tok);
  mapopt__sb_destroy(&list);
  mapopt_status st = mapopt__lex_add_sb(&p->lx, id, t->loc, &msg);
  if (st == MAPOPT_ESYNTAX)
    st = syntax_hint(p, n > MAX_LISTED);
  mapopt__lex_throw(&p->lx, st);
}

static _Noreturn void nesting_error(parser *p, mapopt__loc loc) {
  mapopt__lex_error(&p->lx, MAPOPT__DIAG(E04_NESTING), loc,
                    MAPOPT__DSL_MAX_NESTING);
}

static _Noreturn void no_memory(parser *p) {
  mapopt__lex_throw(&p->lx, MAPOPT_ENOMEM);
}

/* ---- tokens ------------------------------------------------------------ */

static void next(parser *p) {
  p->prev_line = p->lx.tok.loc.line;
  mapopt__lex_next(&p->lx);
  memset(&p->expected, 0, sizeof p->expected);
}

static mapopt__tok cur(const parser *p) {
  return p->lx.tok.type;
}

static bool test(parser *p, mapopt__tok t) {
  ts_add(&p->expected, t);
  return cur(p) == t;
}

static bool test_set(parser *p, const tokset *s) {
  p->expected.w[0] |= s->w[0];
  p->expected.w[1] |= s->w[1];
  return ts_has(s, cur(p));
}

static bool accept(parser *p, mapopt__tok t) {
  if (!test(p, t))
    return false;
  next(p);
  return true;
}

/* Consumes a token of type t and returns it, or fails. */
static mapopt__token expect(parser *p, mapopt__tok t) {
  if (!test(p, t))
    syntax_error(p);
  mapopt__token tok = p->lx.tok;
  next(p);
  return tok;
}

/* Consumes a token in [first, last] and returns its offset from first. */
static int expect_range(parser *p, mapopt__tok first, mapopt__tok last) {
  tokset s = {{0, 0}};
  ts_add_range(&s, first, last);
  if (!test_set(p, &s))
    syntax_error(p);
  int k = (int)(cur(p) - first);
  next(p);
  return k;
}

/* ---- memory ------------------------------------------------------------ */

static void *alloc(parser *p, size_t n) {
  void *m = mapopt__arena_zalloc(&p->ast->arena, n);
  if (!m)
    no_memory(p);
  return m;
}

static void *push(parser *p, growbuf *b) {
  if (b->n == b->cap) {
    if (b->cap > (1 << 29))
      no_memory(p);
    int cap = b->cap ? 2 * b->cap : 4;
    void *d =
        mapopt__arena_grow(&p->ast->arena, b->data, (size_t)b->cap * b->elem,
                           (size_t)cap * b->elem);
    if (!d)
      no_memory(p);
    b->data = d;
    b->cap = cap;
  }
  void *item = (char *)b->data + (size_t)b->n++ * b->elem;
  memset(item, 0, b->elem);
  return item;
}

static const char *copy_text(parser *p, const char *s, size_t n) {
  char *d = mapopt__arena_strndup(&p->ast->arena, s, n);
  if (!d)
    no_memory(p);
  return d;
}

static int intern(parser *p, const mapopt__token *t) {
  int sym = mapopt__sym_intern(p->ast, t->text, t->len);
  if (sym < 0)
    no_memory(p);
  return sym;
}

static mapopt__expr *new_expr(parser *p, mapopt__expr_kind kind,
                              mapopt__loc loc) {
  mapopt__expr *e = alloc(p, sizeof *e);
  e->kind = kind;
  e->loc = loc;
  return e;
}

static mapopt__stmt *new_stmt(parser *p, mapopt__stmt_kind kind,
                              mapopt__loc loc) {
  mapopt__stmt *s = alloc(p, sizeof *s);
  s->kind = kind;
  s->loc = loc;
  return s;
}

static mapopt__expr_list expr_list(const growbuf *b) {
  mapopt__expr_list l = {b->data, b->n};
  return l;
}

/* ---- nesting ----------------------------------------------------------- */

static void enter(parser *p) {
  if (++p->level > MAPOPT__DSL_MAX_NESTING)
    nesting_error(p, p->lx.tok.loc);
}

static void leave(parser *p) {
  p->level--;
}

/* The height of a new node whose tallest child has height h, at loc. */
static int height(parser *p, int h, mapopt__loc loc) {
  if (h + 1 > MAPOPT__DSL_MAX_NESTING)
    nesting_error(p, loc);
  return h + 1;
}

static int max2(int a, int b) {
  return a > b ? a : b;
}

/* ---- expressions ------------------------------------------------------- */

/*
 * Each expression function returns the node and stores the height of its
 * tree in *h (a leaf has height 1).
 */
static mapopt__expr *expr(parser *p, int *h);

/* item -> "*" expr | expr */
static mapopt__expr *item(parser *p, int *h) {
  if (!test(p, TK_STAR))
    return expr(p, h);
  mapopt__expr *e = new_expr(p, EX_UNPACK, p->lx.tok.loc);
  next(p);
  int ho;
  e->u.unpack = expr(p, &ho);
  *h = height(p, ho, e->loc);
  return e;
}

/*
 * "(" [ args ] ")", with args -> item { "," item }
 * Called at "("; *h is the tallest argument's height (0 for none).
 */
static mapopt__expr_list call_args(parser *p, int *h) {
  growbuf b = {NULL, 0, 0, sizeof(mapopt__expr *)};
  *h = 0;
  next(p);
  if (!accept(p, TK_RPAREN)) {
    do {
      int hi;
      *(mapopt__expr **)push(p, &b) = item(p, &hi);
      *h = max2(*h, hi);
    } while (accept(p, TK_COMMA));
    expect(p, TK_RPAREN);
  }
  return expr_list(&b);
}

/*
 * "(" item { "," item } ")"
 * One item that is not unpacked is a parenthesised expression (no node);
 * anything else is a tuple. Called at "(".
 */
static mapopt__expr *paren(parser *p, int *h) {
  mapopt__loc loc = p->lx.tok.loc;
  growbuf b = {NULL, 0, 0, sizeof(mapopt__expr *)};
  int hmax = 0;
  next(p);
  do {
    int hi;
    *(mapopt__expr **)push(p, &b) = item(p, &hi);
    hmax = max2(hmax, hi);
  } while (accept(p, TK_COMMA));
  expect(p, TK_RPAREN);
  mapopt__expr *first = ((mapopt__expr **)b.data)[0];
  if (b.n == 1 && first->kind != EX_UNPACK) {
    first->paren = true;
    *h = hmax;
    return first;
  }
  mapopt__expr *e = new_expr(p, EX_TUPLE, loc);
  e->u.list = expr_list(&b);
  *h = height(p, hmax, loc);
  return e;
}

/* "tuple" "(" expr "for" IDENT "in" expr ")"; called at "tuple". */
static mapopt__expr *comprehension(parser *p, int *h) {
  mapopt__expr *e = new_expr(p, EX_COMP, p->lx.tok.loc);
  int he, hr;
  next(p);
  expect(p, TK_LPAREN);
  e->u.comp.elem = expr(p, &he);
  expect(p, TK_FOR);
  mapopt__token var = expect(p, TK_IDENT);
  e->u.comp.var.sym = intern(p, &var);
  e->u.comp.var.slot = -1;
  e->u.comp.var_loc = var.loc;
  expect(p, TK_IN);
  e->u.comp.range = expr(p, &hr);
  expect(p, TK_RPAREN);
  *h = height(p, max2(he, hr), e->loc);
  return e;
}

/*
 * primary -> INT | "True" | "False" | proc_kind | mem_kind
 *          | IDENT [ "(" [ args ] ")" ]
 *          | "Machine" "(" expr ")"
 *          | "(" item { "," item } ")"
 *          | "tuple" "(" expr "for" IDENT "in" expr ")"
 */
static mapopt__expr *primary(parser *p, int *h) {
  tokset first = {{0, 0}};
  ts_add(&first, TK_INT);
  ts_add(&first, TK_TRUE);
  ts_add(&first, TK_FALSE);
  ts_add_range(&first, TK_CPU, TK_PROC);
  ts_add_range(&first, TK_SYSMEM, TK_VIRTUAL);
  ts_add(&first, TK_IDENT);
  ts_add(&first, TK_MACHINE);
  ts_add(&first, TK_LPAREN);
  ts_add(&first, TK_TUPLE);
  if (!test_set(p, &first))
    syntax_error(p);
  mapopt__token t = p->lx.tok;
  mapopt__expr *e;
  *h = 1;
  switch (t.type) {
  case TK_LPAREN:
    return paren(p, h);
  case TK_TUPLE:
    return comprehension(p, h);
  case TK_INT:
    e = new_expr(p, EX_INT, t.loc);
    e->u.ival = t.ival;
    next(p);
    return e;
  case TK_TRUE:
  case TK_FALSE:
    e = new_expr(p, EX_BOOL, t.loc);
    e->u.bval = t.type == TK_TRUE;
    next(p);
    return e;
  case TK_MACHINE: {
    int ha;
    e = new_expr(p, EX_MACHINE, t.loc);
    next(p);
    expect(p, TK_LPAREN);
    e->u.machine = expr(p, &ha);
    expect(p, TK_RPAREN);
    *h = height(p, ha, t.loc);
    return e;
  }
  case TK_IDENT: {
    int sym = intern(p, &t);
    next(p);
    if (!test(p, TK_LPAREN)) {
      e = new_expr(p, EX_NAME, t.loc);
      e->u.name.sym = sym;
      e->u.name.slot = -1;
      return e;
    }
    int ha;
    e = new_expr(p, EX_CALL, t.loc);
    e->u.call.fn.sym = sym;
    e->u.call.fn.slot = -1;
    e->u.call.args = call_args(p, &ha);
    *h = height(p, ha, t.loc);
    return e;
  }
  default:
    if (t.type >= TK_CPU && t.type <= TK_PROC) {
      e = new_expr(p, EX_PROC_KIND, t.loc);
      e->u.kind = (int)(t.type - TK_CPU);
    } else {
      e = new_expr(p, EX_MEM_KIND, t.loc);
      e->u.kind = (int)(t.type - TK_SYSMEM);
    }
    next(p);
    return e;
  }
}

/* index -> "*" | item    (a "*" directly followed by "," or "]" is the
 * wildcard; any other "*" begins an unpack item) */
static mapopt__expr *index_item(parser *p, int *h) {
  if (test(p, TK_STAR)) {
    mapopt__tok after = mapopt__lex_peek(&p->lx);
    if (after == TK_COMMA || after == TK_RBRACKET) {
      mapopt__expr *e = new_expr(p, EX_WILDCARD, p->lx.tok.loc);
      next(p);
      *h = 1;
      return e;
    }
  }
  return item(p, h);
}

/*
 * subscript -> [ expr ] ":" [ expr ] | index { "," index }
 * Called at "[", through "]". It is a slice when a ":" follows the optional
 * first expression at top level; a conditional consumes its own ":".
 */
static mapopt__expr *subscript(parser *p, mapopt__expr *base, int *h) {
  mapopt__loc loc = p->lx.tok.loc;
  mapopt__expr *first = NULL;
  int hmax = *h, hi;
  next(p);
  bool slice = test(p, TK_COLON);
  if (!slice && !test(p, TK_STAR)) {
    first = expr(p, &hi);
    hmax = max2(hmax, hi);
    slice = test(p, TK_COLON);
  }
  mapopt__expr *e;
  if (slice) {
    next(p);
    e = new_expr(p, EX_SLICE, loc);
    e->u.slice.base = base;
    e->u.slice.lo = first;
    if (!test(p, TK_RBRACKET)) {
      e->u.slice.hi = expr(p, &hi);
      hmax = max2(hmax, hi);
    }
  } else {
    growbuf b = {NULL, 0, 0, sizeof(mapopt__expr *)};
    if (!first) {
      first = index_item(p, &hi);
      hmax = max2(hmax, hi);
    }
    *(mapopt__expr **)push(p, &b) = first;
    while (accept(p, TK_COMMA)) {
      *(mapopt__expr **)push(p, &b) = index_item(p, &hi);
      hmax = max2(hmax, hi);
    }
    e = new_expr(p, EX_INDEX, loc);
    e->u.index.base = base;
    e->u.index.subs = expr_list(&b);
  }
  expect(p, TK_RBRACKET);
  *h = height(p, hmax, loc);
  return e;
}

/* postfix -> primary { "[" subscript "]" | "." member [ "(" [ args ] ")" ] } */
static mapopt__expr *postfix(parser *p, int *h) {
  mapopt__expr *e = primary(p, h);
  for (;;) {
    if (test(p, TK_LBRACKET)) {
      e = subscript(p, e, h);
    } else if (accept(p, TK_DOT)) {
      /* member -> "size" | "len" | ... | "greedy_split" */
      mapopt__loc loc = p->lx.tok.loc;
      int m = expect_range(p, TK_SIZE, TK_GREEDY_SPLIT);
      mapopt__expr *mem = new_expr(p, EX_MEMBER, loc);
      mem->u.member.base = e;
      mem->u.member.member = (mapopt__member)m;
      int ha = 0;
      if (test(p, TK_LPAREN)) {
        mem->u.member.call = true;
        mem->u.member.args = call_args(p, &ha);
      }
      *h = height(p, max2(*h, ha), loc);
      e = mem;
    } else {
      return e;
    }
  }
}

/*
 * unary -> ( "-" | "!" ) unary | postfix
 * A run of prefix operators is read in a loop, not by recursion, so it
 * costs no stack; the height limit bounds its length.
 */
static mapopt__expr *unary(parser *p, int *h) {
  mapopt__expr *ops[MAPOPT__DSL_MAX_NESTING];
  int n = 0;
  while (test(p, TK_MINUS) || test(p, TK_BANG)) {
    /* n + 1 operators over an operand make a tree at least n + 2 tall. */
    if (n + 1 >= MAPOPT__DSL_MAX_NESTING)
      nesting_error(p, p->lx.tok.loc);
    mapopt__expr *u = new_expr(p, EX_UNARY, p->lx.tok.loc);
    u->u.unary.op = cur(p) == TK_MINUS ? OP_NEG : OP_NOT;
    ops[n++] = u;
    next(p);
  }
  mapopt__expr *e = postfix(p, h);
  while (n > 0) {
    mapopt__expr *u = ops[--n];
    u->u.unary.operand = e;
    *h = height(p, *h, u->loc);
    e = u;
  }
  return e;
}

/* The binary operators, by level: 0 is ||, 5 is * / %. */
enum { NLEVELS = 6 };
static const struct {
  mapopt__tok tok;
  mapopt__op op;
  int level;
} binops[] = {
    {TK_OR, OP_OR, 0},       {TK_AND, OP_AND, 1},  {TK_EQ, OP_EQ, 2},
    {TK_NE, OP_NE, 2},       {TK_LT, OP_LT, 3},    {TK_LE, OP_LE, 3},
    {TK_GT, OP_GT, 3},       {TK_GE, OP_GE, 3},    {TK_PLUS, OP_ADD, 4},
    {TK_MINUS, OP_SUB, 4},   {TK_STAR, OP_MUL, 5}, {TK_SLASH, OP_DIV, 5},
    {TK_PERCENT, OP_MOD, 5},
};

/* Tests for an operator of the level; sets *op when there is one. */
static bool test_binop(parser *p, int level, mapopt__op *op) {
  bool found = false;
  for (size_t i = 0; i < sizeof binops / sizeof binops[0]; i++)
    if (binops[i].level == level && test(p, binops[i].tok)) {
      *op = binops[i].op;
      found = true;
    }
  return found;
}

/*
 * or_expr  -> and_expr { "||" and_expr }
 * and_expr -> eq_expr { "&&" eq_expr }
 * eq_expr  -> rel_expr { ( "==" | "!=" ) rel_expr }
 * rel_expr -> add_expr { ( "<" | "<=" | ">" | ">=" ) add_expr }
 * add_expr -> mul_expr { ( "+" | "-" ) mul_expr }
 * mul_expr -> unary { ( "*" | "/" | "%" ) unary }
 * One function for the six left-associative levels; level 0 is or_expr.
 */
static mapopt__expr *binary(parser *p, int level, int *h) {
  if (level == NLEVELS)
    return unary(p, h);
  mapopt__expr *e = binary(p, level + 1, h);
  mapopt__op op;
  while (test_binop(p, level, &op)) {
    mapopt__expr *b = new_expr(p, EX_BINARY, p->lx.tok.loc);
    next(p);
    int hr;
    b->u.binary.op = op;
    b->u.binary.lhs = e;
    b->u.binary.rhs = binary(p, level + 1, &hr);
    *h = height(p, max2(*h, hr), b->loc);
    e = b;
  }
  return e;
}

/*
 * expr -> or_expr [ "?" expr ":" expr ]
 * The else branches of a chain `a ? b : c ? d : e` are read in a loop, not
 * by recursion, so that the canonical form, which writes a conditional in
 * an else branch in parentheses (print.c), costs one level of recursion
 * per conditional, like the tree it came from.
 */
static mapopt__expr *expr(parser *p, int *h) {
  enter(p);
  mapopt__expr *chain[MAPOPT__DSL_MAX_NESTING];
  int hchain[MAPOPT__DSL_MAX_NESTING];
  int n = 0;
  mapopt__expr *e = binary(p, 0, h);
  while (test(p, TK_QUESTION)) {
    /* n + 1 conditionals over an else branch make a tree n + 2 tall. */
    if (n + 1 >= MAPOPT__DSL_MAX_NESTING)
      nesting_error(p, p->lx.tok.loc);
    mapopt__expr *c = new_expr(p, EX_COND, p->lx.tok.loc);
    int ha;
    next(p);
    c->u.cond.cond = e;
    c->u.cond.then = expr(p, &ha);
    expect(p, TK_COLON);
    hchain[n] = max2(*h, ha);
    chain[n++] = c;
    e = binary(p, 0, h);
  }
  while (n > 0) {
    mapopt__expr *c = chain[--n];
    c->u.cond.els = e;
    *h = height(p, max2(hchain[n], *h), c->loc);
    e = c;
  }
  leave(p);
  return e;
}

/* ---- statements -------------------------------------------------------- */

static mapopt__sel name_sel(parser *p, const mapopt__token *t) {
  mapopt__sel s = {SEL_NAME, t->loc, NULL, 0, 0};
  s.name = copy_text(p, t->text, t->len);
  return s;
}

static mapopt__sel_list star_list(parser *p) {
  mapopt__sel_list l = {alloc(p, sizeof(mapopt__sel)), 1};
  l.items[0].kind = SEL_STAR;
  l.items[0].loc = p->lx.tok.loc;
  next(p);
  return l;
}

/* name_list -> IDENT { "," IDENT } */
static mapopt__sel_list name_list(parser *p) {
  growbuf b = {NULL, 0, 0, sizeof(mapopt__sel)};
  do {
    mapopt__token t = expect(p, TK_IDENT);
    *(mapopt__sel *)push(p, &b) = name_sel(p, &t);
  } while (accept(p, TK_COMMA));
  mapopt__sel_list l = {b.data, b.n};
  return l;
}

/* task_sel -> "*" | IDENT
 * region_sel -> "*" | IDENT | INT   (when region is set) */
static mapopt__sel selector(parser *p, bool region) {
  mapopt__sel s = {SEL_STAR, p->lx.tok.loc, NULL, 0, 0};
  if (accept(p, TK_STAR))
    return s;
  if (region && test(p, TK_INT)) {
    s.kind = SEL_INT;
    s.pos = p->lx.tok.ival;
    next(p);
    return s;
  }
  mapopt__token t = expect(p, TK_IDENT);
  return name_sel(p, &t);
}

enum { F_STAR = 1, F_PROC = 2, F_MEM = 4, F_OPTIONAL = 8 };

/* field -> "*" | proc_kind | mem_kind, those allowed by flags; with
 * F_OPTIONAL, FIELD_NONE when none is there. */
static mapopt__field field(parser *p, int flags) {
  tokset s = {{0, 0}};
  if (flags & F_STAR)
    ts_add(&s, TK_STAR);
  if (flags & F_PROC)
    ts_add_range(&s, TK_CPU, TK_PROC);
  if (flags & F_MEM)
    ts_add_range(&s, TK_SYSMEM, TK_VIRTUAL);
  mapopt__field f = {FIELD_NONE, 0, p->lx.tok.loc};
  if (!test_set(p, &s)) {
    if (flags & F_OPTIONAL)
      return f;
    syntax_error(p);
  }
  mapopt__tok t = cur(p);
  if (t == TK_STAR) {
    f.kind = FIELD_STAR;
  } else if (t >= TK_CPU && t <= TK_PROC) {
    f.kind = FIELD_PROC;
    f.value = (int)(t - TK_CPU);
  } else {
    f.kind = FIELD_MEM;
    f.value = (int)(t - TK_SYSMEM);
  }
  next(p);
  return f;
}

/* proc_kind { "," proc_kind }, or mem_kind { "," mem_kind } */
static uint8_t *kind_list(parser *p, mapopt__tok first, mapopt__tok last,
                          int *n) {
  growbuf b = {NULL, 0, 0, 1};
  do
    *(uint8_t *)push(p, &b) = (uint8_t)expect_range(p, first, last);
  while (accept(p, TK_COMMA));
  *n = b.n;
  return b.data;
}

/* task_stmt -> "Task" ( "*" | name_list ) proc_kind { "," proc_kind } ";" */
static void task_stmt(parser *p, mapopt__stmt *s) {
  next(p);
  if (test(p, TK_STAR))
    s->u.task.tasks = star_list(p);
  else
    s->u.task.tasks = name_list(p);
  s->u.task.kinds = kind_list(p, TK_CPU, TK_PROC, &s->u.task.nkinds);
  expect(p, TK_SEMI);
}

/* region_stmt -> "Region" task_sel region_sel ( proc_kind | "*" )
 *                mem_kind { "," mem_kind } ";" */
static void region_stmt(parser *p, mapopt__stmt *s) {
  next(p);
  s->u.region.task = selector(p, false);
  s->u.region.region = selector(p, true);
  s->u.region.proc = field(p, F_STAR | F_PROC);
  s->u.region.mems = kind_list(p, TK_SYSMEM, TK_VIRTUAL, &s->u.region.nmems);
  expect(p, TK_SEMI);
}

/* constraint -> "SOA" | "AOS" | "C_order" | "F_order" | "Compact" | "Exact"
 *             | "No_Align"
 *             | "Align" ( "==" | "!=" | "<" | "<=" | ">" | ">=" ) INT */
static void constraint(parser *p, mapopt__constraint *c) {
  static const mapopt__cons_kind kinds[] = {
      CONS_SOA,     CONS_AOS,   CONS_C_ORDER, CONS_F_ORDER,
      CONS_COMPACT, CONS_EXACT, CONS_ALIGN,   CONS_NO_ALIGN};
  _Static_assert(TK_NO_ALIGN - TK_SOA + 1 == sizeof kinds / sizeof kinds[0],
                 "one constraint kind per constraint word");
  c->loc = p->lx.tok.loc;
  c->kind = kinds[expect_range(p, TK_SOA, TK_NO_ALIGN)];
  if (c->kind != CONS_ALIGN)
    return;
  static const struct {
    mapopt__tok tok;
    mapopt__op op;
  } ops[] = {{TK_EQ, OP_EQ}, {TK_NE, OP_NE}, {TK_LT, OP_LT},
             {TK_LE, OP_LE}, {TK_GT, OP_GT}, {TK_GE, OP_GE}};
  size_t i = 0;
  tokset s = {{0, 0}};
  for (size_t k = 0; k < sizeof ops / sizeof ops[0]; k++) {
    ts_add(&s, ops[k].tok);
    if (ops[k].tok == cur(p))
      i = k;
  }
  if (!test_set(p, &s))
    syntax_error(p);
  c->align_op = ops[i].op;
  next(p);
  c->align = expect(p, TK_INT).ival;
}

/* layout_stmt -> "Layout" task_sel region_sel ( mem_kind | proc_kind | "*" )
 *                { constraint } ";" */
static void layout_stmt(parser *p, mapopt__stmt *s) {
  growbuf b = {NULL, 0, 0, sizeof(mapopt__constraint)};
  next(p);
  s->u.layout.task = selector(p, false);
  s->u.layout.region = selector(p, true);
  s->u.layout.field = field(p, F_STAR | F_PROC | F_MEM);
  while (!accept(p, TK_SEMI))
    constraint(p, push(p, &b));
  s->u.layout.cons = b.data;
  s->u.layout.ncons = b.n;
}

/* limit_stmt -> "InstanceLimit" IDENT [ proc_kind | "*" ] INT ";" */
static void limit_stmt(parser *p, mapopt__stmt *s) {
  next(p);
  mapopt__token t = expect(p, TK_IDENT);
  s->u.limit.task = name_sel(p, &t);
  s->u.limit.legacy = field(p, F_STAR | F_PROC | F_OPTIONAL);
  s->u.limit.limit_loc = p->lx.tok.loc;
  s->u.limit.limit = expect(p, TK_INT).ival;
  expect(p, TK_SEMI);
}

/* collect_stmt -> "CollectMemory" task_sel region_sel ";" */
static void collect_stmt(parser *p, mapopt__stmt *s) {
  next(p);
  s->u.collect.task = selector(p, false);
  s->u.collect.region = selector(p, true);
  expect(p, TK_SEMI);
}

static mapopt__stmt *statement(parser *p);

/*
 * The function that stands for a legacy map statement's (machine model,
 * function) pair: `def F_on_M(Task t) { return M.len == 1 ? M[F(t.ipoint,
 * t.ispace, M)] : M[*F(t.ipoint, t.ispace, M)]; }` (F returns one
 * coordinate of a one-dimensional model, else a tuple of them), parsed
 * from text written here at the statement's position (so its diagnostics
 * point there), and queued to go before the statement. A pair seen before
 * reuses its function. Returns its name's symbol.
 */
static int legacy_function(parser *p, const mapopt__token *mspace,
                           const mapopt__token *fn, mapopt__loc at) {
  char name[160];
  snprintf(name, sizeof name, "%.*s_on_%.*s", (int)fn->len, fn->text,
           (int)mspace->len, mspace->text);
  mapopt__token t = {.type = TK_IDENT, .text = name, .len = strlen(name)};
  int sym = intern(p, &t);
  for (int i = 0; i < p->nlegacy; i++)
    if (p->legacy_syms[i] == sym)
      return sym;
  /* Leading spaces put the text's first token at the statement's column. */
  int ml = (int)mspace->len, fl = (int)fn->len;
  const char *m = mspace->text, *f = fn->text;
  const char *text = mapopt__arena_printf(
      &p->ast->arena,
      "%*sdef %s(Task t) { return %.*s.len == 1 ? %.*s[%.*s(t.ipoint, "
      "t.ispace, %.*s)] : %.*s[*%.*s(t.ipoint, t.ispace, %.*s)]; }",
      at.col - 1, "", name, ml, m, ml, m, fl, f, ml, m, ml, m, fl, f, ml, m);
  if (!text)
    no_memory(p);
  parser sub = *p;
  sub.pending = NULL;
  sub.nlegacy = 0;
  mapopt__lex_init(&sub.lx, p->lx.ctx, p->lx.file, p->lx.diags, text,
                   strlen(text));
  sub.lx.line = at.line;
  mapopt__stmt *def = NULL;
  if (setjmp(sub.lx.jmp) == 0) {
    next(&sub);
    def = statement(&sub);
    def->legacy = true;
  } else {
    mapopt__lex_throw(&p->lx, sub.lx.status);
  }
  p->pending = def;
  if (p->nlegacy < (int)(sizeof p->legacy_syms / sizeof p->legacy_syms[0]))
    p->legacy_syms[p->nlegacy++] = sym;
  return sym;
}

/*
 * The processor kind of the machine model a global names, when the
 * statements above bind it to `Machine(K)` or to transformations of one
 * (`m = Machine(GPU); m2 = m.merge(0, 1);`); -1 when they do not.
 */
static int model_kind(const parser *p, int sym) {
  const mapopt__stmt *const *stmts = p->stmts->data;
  for (int depth = 0; depth < MAPOPT__DSL_MAX_NESTING; depth++) {
    const mapopt__expr *e = NULL;
    for (int i = p->stmts->n - 1; i >= 0 && !e; i--)
      if (stmts[i]->kind == ST_ASSIGN && stmts[i]->u.assign.target.sym == sym)
        e = stmts[i]->u.assign.value;
    while (e && e->kind == EX_MEMBER && e->u.member.call)
      e = e->u.member.base;
    if (!e)
      return -1;
    if (e->kind == EX_MACHINE)
      return e->u.machine->kind == EX_PROC_KIND ? e->u.machine->u.kind : -1;
    if (e->kind != EX_NAME)
      return -1;
    sym = e->u.name.sym;
  }
  return -1;
}

/*
 * index_map_stmt  -> "IndexTaskMap" map_target IDENT [ IDENT ] ";"
 * single_map_stmt -> "SingleTaskMap" map_target IDENT [ IDENT ] ";"
 * map_target      -> "*" | "CPU" | "GPU" | "OMP" | name_list
 *
 * The form with two names is the DISTAL mappers' older one, `IndexTaskMap
 * T M f;`, whose f takes (IPoint, ISpace, MSpace) and returns coordinates
 * of machine model M. It is read as a function of the task that indexes M
 * with f's result, defined just before the statement (so `fmt` writes the
 * current form). Bound to `*`, it is bound instead to the kind of M's
 * processors when the statements above say which (CPU, GPU or OMP): the
 * DSL mapper ignores '*' bindings but honours kind keys, and a function
 * returning points of M fits only tasks of that kind anyway.
 */
static void map_stmt(parser *p, mapopt__stmt *s) {
  next(p);
  if (test(p, TK_STAR)) {
    s->u.map.targets = star_list(p);
  } else if (test(p, TK_CPU) || test(p, TK_GPU) || test(p, TK_OMP)) {
    mapopt__sel_list l = {alloc(p, sizeof(mapopt__sel)), 1};
    l.items[0].kind = SEL_KIND;
    l.items[0].loc = p->lx.tok.loc;
    l.items[0].proc_kind = (int)(cur(p) - TK_CPU);
    next(p);
    s->u.map.targets = l;
  } else {
    s->u.map.targets = name_list(p);
  }
  mapopt__token fn = expect(p, TK_IDENT);
  s->u.map.fn = intern(p, &fn);
  s->u.map.fn_loc = fn.loc;
  /* The older form: fn was the machine model. (Not offered in "expecting"
   * lists: the current form is what an error should suggest.) */
  if (cur(p) == TK_IDENT) {
    mapopt__token f = p->lx.tok;
    char *kept = (char *)copy_text(p, f.text, f.len);
    f.text = kept;
    next(p);
    s->legacy = true;
    s->u.map.fn = legacy_function(p, &fn, &f, s->loc);
    mapopt__sel *t = &s->u.map.targets.items[0];
    int k = t->kind == SEL_STAR ? model_kind(p, intern(p, &fn)) : -1;
    if (k == MAPOPT_PROC_CPU || k == MAPOPT_PROC_GPU || k == MAPOPT_PROC_OMP) {
      t->kind = SEL_KIND;
      t->proc_kind = k;
    }
  }
  expect(p, TK_SEMI);
}

/* replicate_stmt -> "ControlReplicate" name_list ";" */
static void replicate_stmt(parser *p, mapopt__stmt *s) {
  next(p);
  s->u.replicate.names = name_list(p);
  expect(p, TK_SEMI);
}

/* assign_stmt -> IDENT "=" expr ";" */
static void assign_stmt(parser *p, mapopt__stmt *s) {
  int h;
  s->u.assign.target.sym = intern(p, &p->lx.tok);
  s->u.assign.target.slot = -1;
  p->lead = p->lx.tok;
  p->has_lead = true;
  next(p);
  expect(p, TK_ASSIGN);
  p->has_lead = false;
  s->u.assign.value = expr(p, &h);
  expect(p, TK_SEMI);
}

/* return_stmt -> "return" expr ";" */
static void return_stmt(parser *p, mapopt__stmt *s) {
  int h;
  next(p);
  s->u.ret.value = expr(p, &h);
  expect(p, TK_SEMI);
}

/* print_stmt -> "print" "(" STRING { "," expr } ")" ";" */
static void print_stmt(parser *p, mapopt__stmt *s) {
  growbuf b = {NULL, 0, 0, sizeof(mapopt__expr *)};
  next(p);
  expect(p, TK_LPAREN);
  mapopt__token fmt = expect(p, TK_STRING);
  s->u.print.fmt = copy_text(p, fmt.text + 1, fmt.len - 2);
  s->u.print.fmtlen = (int)(fmt.len - 2);
  while (accept(p, TK_COMMA)) {
    int h;
    *(mapopt__expr **)push(p, &b) = expr(p, &h);
  }
  expect(p, TK_RPAREN);
  expect(p, TK_SEMI);
  s->u.print.args = expr_list(&b);
}

/* body_stmt -> assign_stmt | return_stmt | print_stmt */
static mapopt__stmt *body_stmt(parser *p) {
  mapopt__loc loc = p->lx.tok.loc;
  if (test(p, TK_IDENT)) {
    mapopt__stmt *s = new_stmt(p, ST_ASSIGN, loc);
    assign_stmt(p, s);
    return s;
  }
  if (test(p, TK_RETURN)) {
    mapopt__stmt *s = new_stmt(p, ST_RETURN, loc);
    return_stmt(p, s);
    return s;
  }
  if (test(p, TK_PRINT)) {
    mapopt__stmt *s = new_stmt(p, ST_PRINT, loc);
    print_stmt(p, s);
    return s;
  }
  syntax_error(p);
}

/* param -> type_name IDENT
 * type_name -> "int" | "bool" | "IPoint" | "ISpace" | "MSpace" | "Task" */
static void param(parser *p, mapopt__param *pm) {
  if (test(p, TK_TASK)) {
    pm->type = TYPE_TASK;
    next(p);
  } else {
    pm->type = (mapopt__param_type)expect_range(p, TK_TY_INT, TK_TY_MSPACE);
  }
  mapopt__token name = expect(p, TK_IDENT);
  pm->sym = intern(p, &name);
  pm->loc = name.loc;
}

/* func_def -> "def" IDENT "(" [ param { "," param } ] ")"
 *             "{" body_stmt { body_stmt } "}" */
static void func_def(parser *p, mapopt__stmt *s) {
  growbuf params = {NULL, 0, 0, sizeof(mapopt__param)};
  growbuf body = {NULL, 0, 0, sizeof(mapopt__stmt *)};
  next(p);
  mapopt__token name = expect(p, TK_IDENT);
  s->u.def.sym = intern(p, &name);
  s->u.def.name_loc = name.loc;
  expect(p, TK_LPAREN);
  if (!accept(p, TK_RPAREN)) {
    do
      param(p, push(p, &params));
    while (accept(p, TK_COMMA));
    expect(p, TK_RPAREN);
  }
  expect(p, TK_LBRACE);
  do
    *(mapopt__stmt **)push(p, &body) = body_stmt(p);
  while (!accept(p, TK_RBRACE));
  s->u.def.params = params.data;
  s->u.def.nparams = params.n;
  s->u.def.body.items = body.data;
  s->u.def.body.n = body.n;
  s->u.def.nslots = 0;
}

/*
 * statement -> task_stmt | region_stmt | layout_stmt | limit_stmt
 *            | collect_stmt | index_map_stmt | single_map_stmt
 *            | replicate_stmt | func_def | assign_stmt | print_stmt
 */
static mapopt__stmt *statement(parser *p) {
  static const struct {
    mapopt__tok tok;
    mapopt__stmt_kind kind;
    void (*parse)(parser *, mapopt__stmt *);
  } starts[] = {
      {TK_TASK, ST_TASK, task_stmt},
      {TK_REGION, ST_REGION, region_stmt},
      {TK_LAYOUT, ST_LAYOUT, layout_stmt},
      {TK_INSTANCELIMIT, ST_LIMIT, limit_stmt},
      {TK_COLLECTMEMORY, ST_COLLECT, collect_stmt},
      {TK_INDEXTASKMAP, ST_INDEX_MAP, map_stmt},
      {TK_SINGLETASKMAP, ST_SINGLE_MAP, map_stmt},
      {TK_CONTROLREPLICATE, ST_REPLICATE, replicate_stmt},
      {TK_DEF, ST_DEF, func_def},
      {TK_IDENT, ST_ASSIGN, assign_stmt},
      {TK_PRINT, ST_PRINT, print_stmt},
  };
  for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++)
    if (test(p, starts[i].tok)) {
      mapopt__stmt *s = new_stmt(p, starts[i].kind, p->lx.tok.loc);
      starts[i].parse(p, s);
      return s;
    }
  syntax_error(p);
}

/* program -> { statement } */
static void program(parser *p) {
  growbuf b = {NULL, 0, 0, sizeof(mapopt__stmt *)};
  p->stmts = &b;
  next(p);
  while (!test(p, TK_EOF)) {
    mapopt__stmt *st = statement(p);
    if (p->pending) /* a legacy map statement's function goes first */
      *(mapopt__stmt **)push(p, &b) = p->pending;
    p->pending = NULL;
    *(mapopt__stmt **)push(p, &b) = st;
  }
  p->ast->stmts.items = b.data;
  p->ast->stmts.n = b.n;
}

mapopt_status mapopt__dsl_parse(mapopt__ast *ast, const char *text, size_t len,
                                mapopt_diags *diags) {
  parser p;
  p.ast = ast;
  p.level = 0;
  p.pending = NULL;
  p.nlegacy = 0;
  p.has_lead = false;
  p.prev_line = 0;
  memset(&p.expected, 0, sizeof p.expected);
  mapopt__lex_init(&p.lx, ast->ctx, ast->file, diags, text, len);
  if (setjmp(p.lx.jmp) == 0) {
    program(&p);
    return MAPOPT_OK;
  }
  return p.lx.status;
}
