/*
 * JSON on stdout: every command's --json output is printed here, indented
 * and ASCII-only, so all of them look alike.
 */
#include <stdio.h>

#include <jansson.h>

#include "cli/cli.h"

void cli_dump_json(json_t *value) {
  json_dumpf(value, stdout, JSON_INDENT(2) | JSON_ENSURE_ASCII);
  fputc('\n', stdout);
  json_decref(value);
}

void cli_print_json(const char *key, json_t *value) {
  json_t *root = json_object();
  json_object_set_new(root, key, value);
  cli_dump_json(root);
}
