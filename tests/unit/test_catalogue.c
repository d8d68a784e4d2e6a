/*
 * The DSL's diagnostic catalogue (MAPOPT_DSL_DIAG_LIST in mapopt/dsl.h) against
 * its documentation, the tables of docs/dsl.md, "Diagnostics catalogue", both
 * ways:
 *   - every code of the catalogue has a row, and every row's code is in
 *     the catalogue;
 *   - every template matches a message form of its row, and every form
 *     (the `...` spans of the message column, examples after "e.g." aside)
 *     is matched by a template of its code.
 * A message that contains backticks is written ``...`` in the docs, as
 * Markdown does. A form's ⟨x⟩ stands for any text; a template's conversion (%s,
 * %d, ...) stands for one word of the form (so the docs may print a fixed
 * limit,
 * "(64)", where the template has "(%d)"). Also: codes are well formed and
 * their severity follows their letter (P, the portability warnings, are
 * warnings).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "mapopt/dsl.h"

enum { MAX_ROWS = 128, MAX_FORMS = 512, MAX_TEXT = 1024 };

#define HOLE '\x02' /* a form's ⟨x⟩ */
#define CONV '\x01' /* a template's conversion */

typedef struct form {
  char code[4];
  char text[MAX_TEXT];
  bool used;
} form;

typedef struct doc {
  char codes[MAX_ROWS][4];
  int nrows;
  form forms[MAX_FORMS];
  int nforms;
} doc;

static char *read_doc(void) {
  FILE *f = fopen(MAPOPT_SOURCE_DIR "/docs/dsl.md", "rb");
  assert_non_null(f);
  static char buf[1 << 20];
  size_t n = fread(buf, 1, sizeof buf - 1, f);
  fclose(f);
  buf[n] = '\0';
  return buf;
}

/* Copies a `...` span, turning each ⟨x⟩ into HOLE. */
static void add_form(doc *d, const char *code, const char *s, size_t n) {
  assert_true(d->nforms < MAX_FORMS);
  form *f = &d->forms[d->nforms++];
  memcpy(f->code, code, 4);
  size_t k = 0;
  for (size_t i = 0; i < n && k + 1 < MAX_TEXT;) {
    if (strncmp(s + i, "⟨", strlen("⟨")) == 0) {
      const char *close = strstr(s + i, "⟩");
      assert_non_null(close);
      f->text[k++] = HOLE;
      i = (size_t)(close - s) + strlen("⟩");
    } else {
      f->text[k++] = s[i++];
    }
  }
  f->text[k] = '\0';
  f->used = false;
}

/* The rows of the catalogue's tables: "| CODE | MESSAGE | CAUSE |". */
static void parse_doc(doc *d, const char *text) {
  const char *start = strstr(text, "## 11. Diagnostics catalogue");
  const char *end = start ? strstr(start, "\n## 12.") : NULL;
  assert_non_null(start);
  assert_non_null(end);
  d->nrows = d->nforms = 0;
  for (const char *line = start; line < end;) {
    const char *eol = strchr(line, '\n');
    if (!eol || eol > end)
      eol = end;
    if (eol - line > 8 && line[0] == '|' && strchr("EWRNP", line[2]) &&
        line[3] >= '0' && line[3] <= '9' && line[4] >= '0' && line[4] <= '9' &&
        strncmp(line + 5, " | ", 3) == 0) {
      char code[4] = {line[2], line[3], line[4], '\0'};
      assert_true(d->nrows < MAX_ROWS);
      memcpy(d->codes[d->nrows++], code, 4);
      /* The message cell, without its "(e.g. ...)" examples. */
      const char *cell = line + 8;
      const char *cell_end = strstr(cell, " | ");
      assert_non_null(cell_end);
      int depth = 0;
      bool example = false, in_code = false;
      const char *span = NULL;
      for (const char *p = cell; p < cell_end; p++) {
        if (!in_code && !example && strncmp(p, "(e.g.", 5) == 0) {
          example = true;
          depth = 0;
        }
        if (example) {
          depth += *p == '(' ? 1 : *p == ')' ? -1 : 0;
          if (depth == 0)
            example = false;
          continue;
        }
        if (!in_code && strncmp(p, "`` ", 3) == 0) {
          /* A message that contains backticks: ``text `code` text``, the
           * spaces inside the double backticks not part of it. */
          const char *close = strstr(p + 3, " ``");
          assert_non_null(close);
          add_form(d, code, p + 3, (size_t)(close - p - 3));
          p = close + 2;
        } else if (*p == '`' && !in_code) {
          in_code = true;
          span = p + 1;
        } else if (*p == '`') {
          in_code = false;
          add_form(d, code, span, (size_t)(p - span));
        }
      }
      assert_false(in_code);
    }
    line = eol + 1;
  }
}

/* The template with each conversion replaced by CONV. */
static void sample(const char *tpl, char *out, size_t size) {
  size_t k = 0;
  for (const char *p = tpl; *p && k + 1 < size; p++) {
    if (*p != '%') {
      out[k++] = *p;
      continue;
    }
    if (p[1] == '%') {
      out[k++] = '%';
      p++;
      continue;
    }
    p++;
    while (*p && !strchr("diouxXcsp", *p))
      p++; /* flags, width, precision, length */
    assert_true(*p != '\0');
    out[k++] = CONV;
  }
  out[k] = '\0';
}

/* Whether form f and template sample t can describe the same message: a
 * HOLE of f matches any text of t, a CONV of t matches one word of f
 * (no space, no HOLE), everything else must be equal. Dynamic programming
 * from the ends. */
static bool matches(const char *f, const char *t) {
  size_t n = strlen(f), m = strlen(t);
  bool *r = calloc((n + 1) * (m + 1), 1);
  assert_non_null(r);
#define R(i, j) r[(i) * (m + 1) + (j)]
  R(n, m) = true;
  for (size_t i = n + 1; i-- > 0;)
    for (size_t j = m + 1; j-- > 0;) {
      if (i == n && j == m)
        continue;
      bool v = false;
      if (i < n && f[i] == HOLE)
        v = R(i + 1, j) || (j < m && R(i, j + 1));
      if (!v && j < m && t[j] == CONV)
        v = R(i, j + 1) ||
            (i < n && f[i] != ' ' && f[i] != HOLE && R(i + 1, j));
      if (!v && i < n && j < m && f[i] == t[j] && f[i] != HOLE && t[j] != CONV)
        v = R(i + 1, j + 1);
      R(i, j) = v;
    }
  bool ok = R(0, 0);
#undef R
  free(r);
  return ok;
}

static void test_catalogue_matches_docs(void **state) {
  (void)state;
  static doc d;
  parse_doc(&d, read_doc());
  int failures = 0;
  for (int i = 0; i < MAPOPT_DSL_DIAG_COUNT; i++) {
    const char *code = mapopt_dsl_diag_code((mapopt_dsl_diag)i);
    const char *tpl = mapopt_dsl_diag_template((mapopt_dsl_diag)i);
    mapopt_severity sev = mapopt_dsl_diag_severity((mapopt_dsl_diag)i);
    /* The letter says the severity (R errors are mapping errors). */
    mapopt_severity want = code[0] == 'E' ? MAPOPT_SEV_ERROR
                           : code[0] == 'W' || code[0] == 'P'
                               ? MAPOPT_SEV_WARNING
                           : code[0] == 'R' ? MAPOPT_SEV_MAPPING_ERROR
                                            : MAPOPT_SEV_NOTE;
    assert_int_equal(strlen(code), 3);
    assert_int_equal(sev, want);
    char smp[MAX_TEXT];
    sample(tpl, smp, sizeof smp);
    bool row = false, documented = false;
    for (int r = 0; r < d.nrows; r++)
      row |= strcmp(d.codes[r], code) == 0;
    for (int k = 0; k < d.nforms; k++)
      if (strcmp(d.forms[k].code, code) == 0 && matches(d.forms[k].text, smp))
        documented = d.forms[k].used = true;
    if (!row || !documented) {
      print_error("%s \"%s\": %s\n", code, tpl,
                  row ? "no message form of its row matches it"
                      : "no row in docs/dsl.md");
      failures++;
    }
  }
  for (int r = 0; r < d.nrows; r++) {
    bool known = false;
    for (int i = 0; i < MAPOPT_DSL_DIAG_COUNT && !known; i++)
      known = strcmp(mapopt_dsl_diag_code((mapopt_dsl_diag)i), d.codes[r]) == 0;
    if (!known) {
      print_error("docs/dsl.md documents %s, which is not in the catalogue\n",
                  d.codes[r]);
      failures++;
    }
  }
  for (int k = 0; k < d.nforms; k++)
    if (!d.forms[k].used) {
      print_error("docs/dsl.md: %s form \"%s\" matches no template\n",
                  d.forms[k].code, d.forms[k].text);
      failures++;
    }
  print_message("%d templates, %d codes and %d message forms documented\n",
                (int)MAPOPT_DSL_DIAG_COUNT, d.nrows, d.nforms);
  assert_int_equal(failures, 0);
  assert_true(d.nrows >= 50 && d.nforms >= d.nrows);
}

/* The matcher itself, so that a broken one cannot pass the check above. */
static void test_matcher(void **state) {
  (void)state;
  char smp[MAX_TEXT];
  sample("recursion depth limit (%d) exceeded in call to '%s'", smp,
         sizeof smp);
  assert_true(
      matches("recursion depth limit (64) exceeded in call to '\x02'", smp));
  assert_false(matches("recursion depth limit (64) exceeded", smp));
  assert_false(matches("recursion limit (64) exceeded in call to '\x02'", smp));
  sample("type mismatch: cannot unpack %s", smp, sizeof smp);
  assert_true(matches("type mismatch: \x02", smp));
  assert_false(matches("type mismatch: int + tuple", smp));
  sample("slice's right index is out of bound: %" PRId64, smp, sizeof smp);
  assert_true(matches("slice's right index is out of bound: \x02", smp));
  assert_false(
      matches("slice's right index is out of bound: \x02 > \x02", smp));
}

int main(void) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(test_matcher),
      cmocka_unit_test(test_catalogue_matches_docs),
  };
  return cmocka_run_group_tests(tests, NULL, NULL);
}
