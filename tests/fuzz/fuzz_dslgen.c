/*
 * libFuzzer target, structure-aware: the bytes are choices, read one at a
 * time, that build a mapper out of the shapes that once broke the
 * interpreter and the printer -- long chains of bindings that nest a tuple
 * in the previous one, tuples that double with each statement, flat
 * chains of thousands of operators, deep parentheses and comprehensions,
 * recursive functions, machine transformations, long `Task` lists, prints
 * of all of it -- with a byte of the input now and then copied as is, so
 * that the texts are not always well formed. The program is then checked
 * as fuzz_dsl checks a text (dsl_check.c). Small inputs thus reach inputs
 * of megabytes, which raw bytes under a size cap never do.
 */
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsl_check.h"
#include "harness.h"

const size_t fuzz_max_input = 1 << 12;

/* The text is capped at the DSL's own limit and a little more, so that the
 * "mapper too large" path is reached too. */
enum { MAX_TEXT = (16 << 20) + 1024 };

typedef struct gen {
  const uint8_t *in;
  size_t n, at;
  char *out;
  size_t len, cap;
  bool full;
  int names; /* globals a0, a1, ... defined so far */
} gen;

/* The next choice in [0, k); 0 once the input is used up. */
static unsigned pick(gen *g, unsigned k) {
  return g->at < g->n ? g->in[g->at++] % k : 0;
}

/* A count spread over orders of magnitude: 1 to 2^14 and a little more. */
static unsigned amount(gen *g) {
  unsigned e = pick(g, 15);
  return (1u << e) + pick(g, 8);
}

static void emit(gen *g, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void emit(gen *g, const char *fmt, ...) {
  if (g->full)
    return;
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (k < 0 || g->len + (size_t)k + 1 > MAX_TEXT) {
    g->full = true;
    return;
  }
  if (g->len + (size_t)k + 1 > g->cap) {
    size_t cap = g->cap ? g->cap : 4096;
    while (cap < g->len + (size_t)k + 1)
      cap *= 2;
    char *o = realloc(g->out, cap);
    if (!o) {
      g->full = true;
      return;
    }
    g->out = o;
    g->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(g->out + g->len, (size_t)k + 1, fmt, ap);
  va_end(ap);
  g->len += (size_t)k;
}

/* A global defined earlier (or a0, which may be undefined). */
static int earlier(gen *g) {
  return g->names ? (int)pick(g, (unsigned)g->names) : 0;
}

static const char *const ops[] = {"+", "-", "*", "/", "%", "<", "==", "&&"};

/* One statement. */
static void statement(gen *g) {
  int a = g->names++;
  unsigned n = amount(g);
  switch (pick(g, 13)) {
  case 0: /* a chain of bindings, each nesting the previous tuple */
    emit(g, "a%d = 1;\n", a);
    for (unsigned k = 0; k < n; k++, a = g->names++)
      emit(g, "a%d = (a%d, %u);\n", a + 1, a, k);
    break;
  case 1: /* tuples that double */
    emit(g, "a%d = (1, 2, 3, 4);\n", a);
    for (unsigned k = 0; k < n % 40; k++, a = g->names++)
      emit(g, "a%d = (*a%d, *a%d);\n", a + 1, a, a);
    break;
  case 2: { /* a flat chain of operators */
    const char *op = ops[pick(g, 8)];
    emit(g, "a%d = 1", a);
    for (unsigned k = 0; k < n; k++)
      emit(g, " %s %u", op, 1 + k % 7);
    emit(g, ";\n");
    break;
  }
  case 3: /* parentheses, deep */
    emit(g, "a%d = ", a);
    for (unsigned k = 0; k < n % 400; k++)
      emit(g, "(");
    emit(g, "a%d", earlier(g));
    for (unsigned k = 0; k < n % 400; k++)
      emit(g, ")");
    emit(g, ";\n");
    break;
  case 4: /* a large tuple literal */
    emit(g, "a%d = (", a);
    for (unsigned k = 0; k < n; k++)
      emit(g, k ? ", %u" : "%u", k);
    emit(g, ");\n");
    break;
  case 5: /* recursion */
    emit(g,
         "def f%d(int x) { return x > 0 ? f%d(x - 1) + 1 : 0; }\n"
         "a%d = f%d(%u);\n",
         a, a, a, a, n % 200);
    break;
  case 6: /* comprehensions in comprehensions */
    emit(g, "a%d = ", a);
    for (unsigned k = 0; k < n % 60; k++)
      emit(g, "tuple(x%u for x%u in ", k, k);
    emit(g, "(1, 2, 3)");
    for (unsigned k = 0; k < n % 60; k++)
      emit(g, ")");
    emit(g, ";\n");
    break;
  case 7:
    emit(g, "print(\"{} {}\", a%d, a%d);\n", earlier(g), earlier(g));
    break;
  case 8: /* a long Task list, names repeated or not */
    emit(g, "Task ");
    for (unsigned k = 0; k < n; k++)
      emit(g, k ? ", t%u" : "t%u", pick(g, 2) ? k : 0);
    emit(g, " GPU, CPU;\n");
    break;
  case 9: { /* machine transformations */
    static const char *const tr[] = {
        "split(0, 2)",         "merge(0, 1)",           "swap(0, 1)",
        "balance_split(1, 3)", "auto_split(0, (2, 3))", "slice(0, 0, 1)",
        "reverse(1)"};
    emit(g, "a%d = Machine(GPU)", a);
    for (unsigned k = 0; k < n % 30; k++)
      emit(g, ".%s", tr[pick(g, 7)]);
    emit(g, ";\n");
    break;
  }
  case 10: /* an index mapping function over all of it */
    emit(g,
         "def m%d(Task t) {\n  m = Machine(GPU);\n  v = a%d;\n"
         "  return m[t.ipoint[0] %% m.size[0], t.ipoint[1] %% m.size[1]];\n"
         "}\nIndexTaskMap step m%d;\n",
         a, earlier(g), a);
    break;
  case 11: /* unpacking into a call */
    emit(g, "def g%d(int x, int y) { return x + y; }\na%d = g%d(*a%d);\n", a, a,
         a, earlier(g));
    break;
  default: /* a byte of the input as is */
    if (g->at < g->n) {
      char c = (char)g->in[g->at++];
      emit(g, "%c", c ? c : ' ');
    }
    break;
  }
}

void fuzz_target(mapopt_ctx *ctx, mapopt_diags *diags, const uint8_t *data,
                 size_t size) {
  gen g = {data, size, 0, NULL, 0, 0, false, 0};
  emit(&g, "Task * GPU, CPU;\n");
  while (g.at < g.n && !g.full)
    statement(&g);
  if (g.out)
    fuzz_dsl_check(ctx, diags, g.out, g.len);
  free(g.out);
}
