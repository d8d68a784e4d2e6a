/*
 * The lexer of the mapping DSL (docs/dsl.md, "Lexical rules"): bytes to tokens,
 * one token of lookahead beyond the current one, and the single exit for every
 * parse diagnostic (lexical errors E01-E03, and the syntax errors the parser
 * formats). It allocates nothing except the diagnostic itself; token texts
 * point into the source.
 *
 * Columns count bytes; only LF ends a line. Bytes >= 0x80 are legal only in
 * comments and strings, which are skipped or taken verbatim.
 */
#include "dsl/lex.h"

#include <stdarg.h>
#include <string.h>

static const char *const spellings[TK__COUNT] = {
#define SPELL_CLASS(name, text) text,
#define SPELL_QUOTED(name, text) "'" text "'",
    MAPOPT__TK_CLASSES(SPELL_CLASS) MAPOPT__TK_PUNCT(SPELL_QUOTED)
        MAPOPT__TK_WORDS(SPELL_QUOTED)
#undef SPELL_CLASS
#undef SPELL_QUOTED
};

static const struct {
  const char *text;
  size_t len;
  mapopt__tok tok;
} words[] = {
#define WORD(name, text) {text, sizeof text - 1, TK_##name},
    MAPOPT__TK_WORDS(WORD)
#undef WORD
};

const char *mapopt__tok_spelling(mapopt__tok t) {
  return (unsigned)t < TK__COUNT ? spellings[t] : "?";
}

const char *mapopt__tok_word(mapopt__tok t) {
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (words[i].tok == t)
      return words[i].text;
  return NULL;
}

void mapopt__lex_init(mapopt__lexer *lx, mapopt_ctx *ctx, const char *file,
                      mapopt_diags *diags, const char *text, size_t len) {
  memset(&lx->tok, 0, sizeof lx->tok);
  lx->src = text;
  lx->len = len;
  lx->pos = 0;
  lx->line = 1;
  lx->bol = 0;
  lx->has_ahead = false;
  lx->ctx = ctx;
  lx->file = file;
  lx->diags = diags;
  lx->status = MAPOPT_OK;
}

_Noreturn void mapopt__lex_throw(mapopt__lexer *lx, mapopt_status status) {
  lx->status = status;
  longjmp(lx->jmp, 1);
}

/* The one place where a parse diagnostic is stored. */
mapopt_status mapopt__lex_add_sb(mapopt__lexer *lx, mapopt_dsl_diag id,
                                 mapopt__loc loc, mapopt__strbuf *msg) {
  mapopt_status st = MAPOPT_ENOMEM;
  if (!msg->failed && msg->data &&
      mapopt__dsl_diag(lx->diags, id, "%s", lx->file, loc, msg->data) ==
          MAPOPT_OK)
    st = MAPOPT_ESYNTAX;
  mapopt__sb_destroy(msg);
  return st;
}

_Noreturn void mapopt__lex_error_sb(mapopt__lexer *lx, mapopt_dsl_diag id,
                                    mapopt__loc loc, mapopt__strbuf *msg) {
  mapopt__lex_throw(lx, mapopt__lex_add_sb(lx, id, loc, msg));
}

mapopt_status mapopt__lex_note(mapopt__lexer *lx, mapopt_dsl_diag id,
                               const char *fmt, mapopt__loc loc, ...) {
  va_list ap;
  va_start(ap, loc);
  mapopt_status st = mapopt__dsl_diagv(lx->diags, id, fmt, lx->file, loc, ap);
  va_end(ap);
  return st == MAPOPT_OK ? MAPOPT_ESYNTAX : st;
}

_Noreturn void mapopt__lex_error(mapopt__lexer *lx, mapopt_dsl_diag id,
                                 const char *fmt, mapopt__loc loc, ...) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, lx->ctx);
  va_list ap;
  va_start(ap, loc);
  mapopt__sb_vprintf(&sb, fmt, ap);
  va_end(ap);
  mapopt__lex_error_sb(lx, id, loc, &sb);
}

static mapopt__loc here(const mapopt__lexer *lx, size_t pos) {
  mapopt__loc loc = {lx->line, (int)(pos - lx->bol + 1)};
  return loc;
}

static bool is_alpha(unsigned char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

static bool is_digit(unsigned char c) {
  return c >= '0' && c <= '9';
}

/* Skips whitespace and comments, keeping the line count. */
static void skip_blank(mapopt__lexer *lx) {
  const char *s = lx->src;
  while (lx->pos < lx->len) {
    char c = s[lx->pos];
    if (c == '\n') {
      lx->pos++;
      lx->line++;
      lx->bol = lx->pos;
    } else if (c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v') {
      lx->pos++;
    } else if (c == '#' ||
               (c == '/' && lx->pos + 1 < lx->len && s[lx->pos + 1] == '/')) {
      const char *nl = memchr(s + lx->pos, '\n', lx->len - lx->pos);
      lx->pos = nl ? (size_t)(nl - s) : lx->len;
    } else {
      break;
    }
  }
}

static mapopt__tok word_or_ident(const char *text, size_t len) {
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    if (words[i].len == len && memcmp(words[i].text, text, len) == 0)
      return words[i].tok;
  return TK_IDENT;
}

/* The punctuation token at s (n bytes available), or TK_EOF if none. */
static mapopt__tok punct(const char *s, size_t n, size_t *len) {
  char c = s[0], d = n > 1 ? s[1] : '\0';
  *len = 2;
  switch (c) {
  case '=':
    if (d == '=')
      return TK_EQ;
    break;
  case '!':
    if (d == '=')
      return TK_NE;
    break;
  case '<':
    if (d == '=')
      return TK_LE;
    break;
  case '>':
    if (d == '=')
      return TK_GE;
    break;
  case '&':
    if (d == '&')
      return TK_AND;
    return TK_EOF;
  case '|':
    if (d == '|')
      return TK_OR;
    return TK_EOF;
  default:
    break;
  }
  *len = 1;
  switch (c) {
  case '+':
    return TK_PLUS;
  case '-':
    return TK_MINUS;
  case '*':
    return TK_STAR;
  case '/':
    return TK_SLASH;
  case '%':
    return TK_PERCENT;
  case '=':
    return TK_ASSIGN;
  case '<':
    return TK_LT;
  case '>':
    return TK_GT;
  case '!':
    return TK_BANG;
  case '?':
    return TK_QUESTION;
  case ':':
    return TK_COLON;
  case ',':
    return TK_COMMA;
  case ';':
    return TK_SEMI;
  case '.':
    return TK_DOT;
  case '(':
    return TK_LPAREN;
  case ')':
    return TK_RPAREN;
  case '[':
    return TK_LBRACKET;
  case ']':
    return TK_RBRACKET;
  case '{':
    return TK_LBRACE;
  case '}':
    return TK_RBRACE;
  default:
    return TK_EOF;
  }
}

/* Scans one token into *t. */
static void scan(mapopt__lexer *lx, mapopt__token *t) {
  skip_blank(lx);
  const char *s = lx->src;
  size_t start = lx->pos;
  t->loc = here(lx, start);
  t->text = s + start;
  t->ival = 0;
  if (start == lx->len) {
    t->type = TK_EOF;
    t->len = 0;
    return;
  }
  unsigned char c = (unsigned char)s[start];
  size_t p = start;
  if (is_alpha(c)) {
    while (p < lx->len &&
           (is_alpha((unsigned char)s[p]) || is_digit((unsigned char)s[p])))
      p++;
    t->type = word_or_ident(s + start, p - start);
  } else if (is_digit(c)) {
    uint64_t v = 0;
    bool big = false;
    while (p < lx->len && is_digit((unsigned char)s[p])) {
      unsigned d = (unsigned)(s[p] - '0');
      if (v > ((uint64_t)INT64_MAX - d) / 10)
        big = true;
      else
        v = v * 10 + d;
      p++;
    }
    if (big)
      mapopt__lex_error(lx, MAPOPT__DIAG(E03_INTEGER), t->loc,
                        (int)(p - start > INT32_MAX ? INT32_MAX : p - start),
                        s + start);
    t->type = TK_INT;
    t->ival = (int64_t)v;
  } else if (c == '"') {
    p++;
    while (p < lx->len && s[p] != '"' && s[p] != '\n')
      p++;
    if (p == lx->len || s[p] != '"')
      mapopt__lex_error(lx, MAPOPT__DIAG(E02_STRING), t->loc);
    p++;
    t->type = TK_STRING;
  } else {
    size_t n;
    t->type = punct(s + start, lx->len - start, &n);
    if (t->type == TK_EOF) {
      if (c > 0x20 && c < 0x7f)
        mapopt__lex_error(lx, MAPOPT__DIAG(E01_CHAR), t->loc, c);
      mapopt__lex_error(lx, MAPOPT__DIAG(E01_BYTE), t->loc, c);
    }
    p += n;
  }
  t->len = p - start;
  lx->pos = p;
}

void mapopt__lex_next(mapopt__lexer *lx) {
  if (lx->has_ahead) {
    lx->tok = lx->ahead;
    lx->has_ahead = false;
  } else {
    scan(lx, &lx->tok);
  }
}

mapopt__tok mapopt__lex_peek(mapopt__lexer *lx) {
  if (!lx->has_ahead) {
    scan(lx, &lx->ahead);
    lx->has_ahead = true;
  }
  return lx->ahead.type;
}
