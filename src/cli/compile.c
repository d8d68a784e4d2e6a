/*
 * Mappers and machines from the command line: standard input read whole,
 * a mapper file read and compiled, and --machine's shape for the commands
 * that only compile.
 */
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"

char *cli_read_stdin(size_t *len) {
  size_t cap = 1 << 16, n = 0;
  char *buf = malloc(cap);
  while (buf) {
    n += fread(buf + n, 1, cap - n - 1, stdin);
    if (n + 1 < cap)
      break;
    char *b = realloc(buf, cap *= 2);
    if (!b)
      free(buf);
    buf = b;
  }
  if (buf)
    buf[n] = '\0';
  *len = n;
  return buf;
}

mapopt_status cli_compile_file(mapopt_ctx *ctx, const char *path,
                               const mapopt_dsl_options *base,
                               mapopt_diags *diags, mapopt_program **prog) {
  char *text;
  size_t len;
  mapopt_status st = mapopt_file_read(ctx, path, diags, &text, &len);
  if (st != MAPOPT_OK)
    return st;
  mapopt_dsl_options opts = *base;
  opts.file = path;
  st = mapopt_dsl_compile(ctx, text, len, &opts, diags, prog);
  mapopt_text_free(text);
  if (st == MAPOPT_ENOMEM)
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", path, 0, 0, "out of memory");
  return st;
}

/* --machine: a preset, a machine JSON file or a one-line shape; the DSL
 * needs only its shape. A machine that cannot be resolved is invalid input,
 * as in every command (its diagnostic printed). */
bool cli_machine_shape(const char *arg, mapopt_machine_shape *shape) {
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return false;
  mapopt_machine *m = NULL;
  bool ok = mapopt_machine_resolve(ctx, arg, diags, &m) == MAPOPT_OK;
  if (ok)
    mapopt_machine_shape_of(m, shape);
  cli_print_diags(stderr, diags, 0);
  mapopt_machine_free(m);
  cli_close(ctx, diags);
  return ok;
}
