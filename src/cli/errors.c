/*
 * The CLI's messages on stderr: errors with their control characters
 * escaped, usage errors with their hint, and diagnostics, GCC style. The
 * bottom of the CLI's files: it calls none of them.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

/* Writes the formatted message and a newline to stderr with its control
 * characters as \xNN: a file name or argument with a terminal escape
 * sequence is shown, never obeyed. */
static void verror(const char *fmt, va_list ap) {
  char first[512];
  va_list ap2;
  va_copy(ap2, ap);
  int n = vsnprintf(first, sizeof first, fmt, ap2);
  va_end(ap2);
  if (n < 0)
    return;
  char *msg = (size_t)n < sizeof first ? first : malloc((size_t)n + 1);
  if (!msg)
    return;
  if (msg != first)
    vsnprintf(msg, (size_t)n + 1, fmt, ap);
  for (const unsigned char *c = (const unsigned char *)msg; *c; c++) {
    if (*c < 0x20 || *c == 0x7f)
      fprintf(stderr, "\\x%02X", *c);
    else
      fputc(*c, stderr);
  }
  fputc('\n', stderr);
  if (msg != first)
    free(msg);
}

void cli_error(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  verror(fmt, ap);
  va_end(ap);
}

int cli_usage_error(const char *cmd, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  cli_error("mapopt %s: %s", cmd, line);
  fprintf(stderr, "Try 'mapopt %s --help'.\n", cmd);
  return EXIT_USAGE;
}

void cli_print_diags(FILE *f, const mapopt_diags *diags, size_t from) {
  char line[1024];
  for (size_t i = from; i < mapopt_diags_count(diags); i++) {
    const mapopt_diag *d = mapopt_diags_get(diags, i);
    int n = mapopt_diag_format(d, line, sizeof line);
    if (n >= 0 && (size_t)n >= sizeof line) {
      /* Long messages (a 1 MB integer literal) are printed whole. */
      char *big = malloc((size_t)n + 1);
      if (big) {
        mapopt_diag_format(d, big, (size_t)n + 1);
        fprintf(f, "%s\n", big);
        free(big);
        continue;
      }
    }
    fprintf(f, "%s\n", line);
  }
}
