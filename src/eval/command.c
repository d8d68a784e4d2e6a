/*
 * The command template of the evaluator: splitting it into words without
 * a shell, building the shell line with the shell option, and substituting
 * {mapper}. The quoting rules are documented in include/mapopt/eval.h.
 *
 * The aim of argv mode is that a template it accepts means exactly what
 * /bin/sh would make of it: quoting is understood the way sh understands
 * it, and whatever sh would expand, redirect or run differently is rejected
 * with its location instead of being passed on literally. The shell mode never
 * places the mapper's path in the line, only a quoted reference to the variable
 * that holds it, so no text reaches the shell that the user did not write.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "eval/eval.h"

enum { Q_NONE, Q_SINGLE, Q_DOUBLE };

static const char placeholder[] = "{mapper}";
enum { PLACEHOLDER_LEN = sizeof placeholder - 1 };

static bool at_placeholder(const char *s) {
  return strncmp(s, placeholder, PLACEHOLDER_LEN) == 0;
}

/* Appends "--run:LINE:COL: error: MESSAGE" for byte at of t to diags and
 * returns MAPOPT_EINVAL. */
static mapopt_status error_at(mapopt_diags *diags, const char *t, size_t at,
                              const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static mapopt_status error_at(mapopt_diags *diags, const char *t, size_t at,
                              const char *fmt, ...) {
  if (!diags)
    return MAPOPT_EINVAL;
  int line = 1, col = 1;
  for (size_t i = 0; i < at; i++) {
    if (t[i] == '\n') {
      line++;
      col = 1;
    } else {
      col++;
    }
  }
  va_list ap;
  va_start(ap, fmt);
  mapopt_diags_addv(diags, MAPOPT_SEV_ERROR, "", "--run", line, col, fmt, ap);
  va_end(ap);
  return MAPOPT_EINVAL;
}

static mapopt_status unterminated(mapopt_diags *diags, const char *t, size_t at,
                                  int q) {
  return error_at(diags, t, at, "unterminated %s quote",
                  q == Q_SINGLE ? "single" : "double");
}

/* What sh would do with c outside quotes, when that is not "a character
 * of the word": then an error says so. */
static mapopt_status shell_syntax(mapopt_diags *diags, const char *t,
                                  size_t at) {
  if (t[at] == '\n')
    return error_at(diags, t, at,
                    "a line break is shell syntax (it separates commands) "
                    "and the command is not run by a shell: give --shell, "
                    "or end the line with a backslash");
  return error_at(diags, t, at,
                  "'%c' is shell syntax and the command is not run by a "
                  "shell: quote it, or give --shell",
                  t[at]);
}

/* Frees words: an array of n + 1 slots whose first n may hold strings. */
static void free_words(mapopt_ctx *ctx, char **words, size_t n) {
  if (!words)
    return;
  for (size_t i = 0; i < n; i++)
    if (words[i])
      mapopt__free(ctx, words[i], strlen(words[i]) + 1);
  mapopt__free(ctx, words, (n + 1) * sizeof *words);
}

/* Moves the word in w to the end of words. */
static mapopt_status push_word(mapopt_ctx *ctx, mapopt__vec *words,
                               mapopt__strbuf *w) {
  size_t len;
  char *s = mapopt__sb_take(w, &len);
  mapopt__sb_init(w, ctx);
  if (!s)
    return MAPOPT_ENOMEM;
  char **slot = mapopt__vec_push(words, ctx);
  if (!slot) {
    mapopt__free(ctx, s, len + 1);
    return MAPOPT_ENOMEM;
  }
  *slot = s;
  return MAPOPT_OK;
}

/*
 * template -> word { blank word }
 * word     -> { char | '\' char | "'" { char } "'" | '"' { dqchar } '"' }
 * Splits t into words (quote removal done) in words.
 */
static mapopt_status split(mapopt_ctx *ctx, const char *t, mapopt_diags *diags,
                           mapopt__vec *words) {
  mapopt__strbuf w;
  mapopt__sb_init(&w, ctx);
  bool in_word = false;
  int q = Q_NONE;
  size_t qat = 0;
  mapopt_status st = MAPOPT_OK;
  for (size_t i = 0; t[i] && st == MAPOPT_OK; i++) {
    char c = t[i];
    if (q == Q_SINGLE) {
      if (c == '\'')
        q = Q_NONE;
      else
        mapopt__sb_putc(&w, c);
    } else if (q == Q_DOUBLE) {
      if (c == '"')
        q = Q_NONE;
      else if (c == '\\' && t[i + 1] == '\n')
        i++;
      else if (c == '\\' && (t[i + 1] == '"' || t[i + 1] == '\\'))
        mapopt__sb_putc(&w, t[++i]);
      else if (c == '$' || c == '`')
        st = error_at(diags, t, i,
                      "'%c' inside double quotes is shell syntax and the "
                      "command is not run by a shell: use single quotes, "
                      "or give --shell",
                      c);
      else
        mapopt__sb_putc(&w, c);
    } else if (c == ' ' || c == '\t') {
      if (in_word)
        st = push_word(ctx, words, &w);
      in_word = false;
    } else if (c == '\\') {
      if (!t[i + 1])
        st = error_at(diags, t, i,
                      "a backslash at the end of the command escapes "
                      "nothing");
      else if (t[++i] != '\n') { /* a backslash-newline joins lines */
        mapopt__sb_putc(&w, t[i]);
        in_word = true;
      }
    } else if (c == '\'' || c == '"') {
      q = c == '\'' ? Q_SINGLE : Q_DOUBLE;
      qat = i;
      in_word = true;
    } else if (c == '\n' || strchr("|&;<>()$`*?[", c) ||
               (!in_word && (c == '#' || c == '~'))) {
      st = shell_syntax(diags, t, i);
    } else {
      mapopt__sb_putc(&w, c);
      in_word = true;
    }
  }
  if (st == MAPOPT_OK && q != Q_NONE)
    st = unterminated(diags, t, qat, q);
  if (st == MAPOPT_OK && in_word)
    st = push_word(ctx, words, &w);
  if (st == MAPOPT_OK && w.failed)
    st = MAPOPT_ENOMEM;
  mapopt__sb_destroy(&w);
  return st;
}

/* Appends the reference to the path variable that means the path as one
 * word in quoting state q. */
static void put_reference(mapopt__strbuf *sb, int q) {
  static const char *const refs[] = {
      [Q_NONE] = "\"${" MAPOPT__EVAL_VAR "}\"",
      [Q_DOUBLE] = "${" MAPOPT__EVAL_VAR "}",
      [Q_SINGLE] = "'\"${" MAPOPT__EVAL_VAR "}\"'",
  };
  mapopt__sb_puts(sb, refs[q]);
}

/*
 * The shell line: t with each {mapper} replaced by a reference to the path
 * variable, quoted for where it stands. Follows sh's quoting (single
 * quotes, double quotes, backslash) only as far as needed to know that
 * place; the shell parses the rest.
 */
static mapopt_status shell_line(mapopt_ctx *ctx, const char *t,
                                mapopt_diags *diags, char **line) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  int q = Q_NONE;
  size_t qat = 0;
  bool found = false;
  mapopt_status st = MAPOPT_OK;
  for (size_t i = 0; t[i] && st == MAPOPT_OK; i++) {
    if (at_placeholder(t + i)) {
      put_reference(&sb, q);
      found = true;
      i += PLACEHOLDER_LEN - 1;
      continue;
    }
    char c = t[i];
    mapopt__sb_putc(&sb, c);
    if (q == Q_SINGLE) {
      if (c == '\'')
        q = Q_NONE;
    } else if (c == '\\') {
      if (at_placeholder(t + i + 1))
        st = error_at(diags, t, i + 1,
                      "{mapper} after a backslash: remove the backslash");
      else if (t[i + 1])
        mapopt__sb_putc(&sb, t[++i]);
    } else if (q == Q_DOUBLE) {
      if (c == '"')
        q = Q_NONE;
    } else if (c == '\'' || c == '"') {
      q = c == '\'' ? Q_SINGLE : Q_DOUBLE;
      qat = i;
    }
  }
  if (st == MAPOPT_OK && q != Q_NONE)
    st = unterminated(diags, t, qat, q);
  if (st == MAPOPT_OK && !found)
    st = error_at(diags, t, 0,
                  "the command has no {mapper}: write {mapper} where the "
                  "mapper file's path goes");
  size_t len;
  char *s = st == MAPOPT_OK ? mapopt__sb_take(&sb, &len) : NULL;
  mapopt__sb_destroy(&sb);
  if (st == MAPOPT_OK && !s)
    st = MAPOPT_ENOMEM;
  *line = s;
  return st;
}

mapopt_status mapopt__eval_cmd_parse(mapopt_ctx *ctx, const char *tmpl,
                                     bool shell, mapopt_diags *diags,
                                     mapopt__eval_cmd *cmd) {
  memset(cmd, 0, sizeof *cmd);
  cmd->shell = shell;
  if (shell)
    return shell_line(ctx, tmpl, diags, &cmd->line);
  mapopt__vec words;
  mapopt__vec_init(&words, sizeof(char *));
  mapopt_status st = split(ctx, tmpl, diags, &words);
  bool found = false;
  for (size_t i = 0; i < words.len; i++)
    found |= strstr(MAPOPT__VEC_AT(&words, char *, i), placeholder) != NULL;
  if (st == MAPOPT_OK && words.len == 0)
    st = error_at(diags, tmpl, 0, "empty command");
  else if (st == MAPOPT_OK && !found)
    st = error_at(diags, tmpl, 0,
                  "the command has no {mapper}: write {mapper} where the "
                  "mapper file's path goes");
  /* The vector becomes a NULL-terminated array of exactly len + 1. */
  char **arr = NULL;
  if (st == MAPOPT_OK) {
    arr = mapopt__calloc(ctx, words.len + 1, sizeof *arr);
    if (!arr)
      st = MAPOPT_ENOMEM;
    else
      memcpy(arr, words.data, words.len * sizeof *arr);
  }
  if (st != MAPOPT_OK)
    for (size_t i = 0; i < words.len; i++) {
      char *s = MAPOPT__VEC_AT(&words, char *, i);
      mapopt__free(ctx, s, strlen(s) + 1);
    }
  cmd->words = arr;
  cmd->nwords = st == MAPOPT_OK ? words.len : 0;
  mapopt__vec_destroy(&words, ctx);
  return st;
}

void mapopt__eval_cmd_destroy(mapopt_ctx *ctx, mapopt__eval_cmd *cmd) {
  free_words(ctx, cmd->words, cmd->nwords);
  if (cmd->line)
    mapopt__free(ctx, cmd->line, strlen(cmd->line) + 1);
  memset(cmd, 0, sizeof *cmd);
}

/* word with every {mapper} replaced by path, or NULL. */
static char *substitute(mapopt_ctx *ctx, const char *word, const char *path) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  for (const char *p = word; *p;) {
    const char *hit = strstr(p, placeholder);
    if (!hit) {
      mapopt__sb_puts(&sb, p);
      break;
    }
    mapopt__sb_putn(&sb, p, (size_t)(hit - p));
    mapopt__sb_puts(&sb, path);
    p = hit + PLACEHOLDER_LEN;
  }
  size_t len;
  return mapopt__sb_take(&sb, &len);
}

mapopt_status mapopt__eval_cmd_argv(mapopt_ctx *ctx,
                                    const mapopt__eval_cmd *cmd,
                                    const char *path, char ***argv,
                                    size_t *argc) {
  static const char *const sh[] = {"/bin/sh", "-c"};
  size_t n = cmd->shell ? 3 : cmd->nwords;
  char **arr = mapopt__calloc(ctx, n + 1, sizeof *arr);
  if (!arr)
    return MAPOPT_ENOMEM;
  for (size_t i = 0; i < n; i++) {
    if (!cmd->shell)
      arr[i] = substitute(ctx, cmd->words[i], path);
    else if (i < 2)
      arr[i] = mapopt__strndup(ctx, sh[i], strlen(sh[i]));
    else
      arr[i] = mapopt__strndup(ctx, cmd->line, strlen(cmd->line));
    if (!arr[i]) {
      free_words(ctx, arr, n);
      return MAPOPT_ENOMEM;
    }
  }
  *argv = arr;
  *argc = n;
  return MAPOPT_OK;
}

void mapopt__eval_argv_free(mapopt_ctx *ctx, char **argv) {
  size_t n = 0;
  while (argv && argv[n])
    n++;
  free_words(ctx, argv, n);
}
