/*
 * `mapopt apps`: the built-in applications with their sizes and
 * parameters, and `--export NAME` to write one as `mapopt-app/1` JSON (a
 * starting point for describing one's own application; the export
 * simulates identically).
 */
#include <inttypes.h>
#include <jansson.h>
#include <string.h>

#include "cli/cli.h"

const char cli_apps_usage[] =
    "usage: mapopt apps [--json]\n"
    "       mapopt apps --export NAME\n\n"
    "Lists the built-in applications, their size presets and parameters;\n"
    "with --export, prints one as mapopt-app/1 JSON.\n\n"
    "Exit status: 0 ok, 1 unknown application, 2 usage error.\n";

static int export_app(mapopt_ctx *ctx, const char *name) {
  const char *json = mapopt_app_builtin_json(name);
  if (!json) {
    cli_error("mapopt apps: unknown application '%s'", name);
    return EXIT_INVALID;
  }
  fputs(json, stdout);
  (void)ctx;
  return EXIT_VALID;
}

int cli_apps(int argc, char **argv) {
  bool json = false;
  const char *export_name = NULL;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--json"))
      json = true;
    else if (!strcmp(argv[i], "--export") && i + 1 < argc)
      export_name = argv[++i];
    else
      return cli_usage_error("apps", "unknown argument '%s'", argv[i]);
  }
  mapopt_ctx *ctx;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK)
    return EXIT_INVALID;
  if (export_name) {
    int rc = export_app(ctx, export_name);
    mapopt_ctx_free(ctx);
    return rc;
  }
  json_t *list = json_array();
  int rc = EXIT_VALID;
  for (const char *const *b = mapopt_app_builtins(); *b; b++) {
    mapopt_diags *diags;
    mapopt_app *app = NULL;
    if (mapopt_diags_new(ctx, &diags) != MAPOPT_OK)
      break;
    const char *text = mapopt_app_builtin_json(*b);
    if (mapopt_app_load_json(ctx, *b, text, strlen(text), diags, &app) !=
        MAPOPT_OK) {
      cli_print_diags(stderr, diags, 0);
      rc = EXIT_INVALID;
      mapopt_diags_free(diags);
      continue;
    }
    json_t *o = json_object();
    json_t *sizes = json_array(), *params = json_object();
    if (!json)
      printf("%-10s sizes:", *b);
    for (size_t i = 0; mapopt_app_size_name(app, i); i++) {
      json_array_append_new(sizes, json_string(mapopt_app_size_name(app, i)));
      if (!json)
        printf(" %s", mapopt_app_size_name(app, i));
    }
    if (!json)
      printf("\n           params:");
    const char *pn;
    int64_t pv;
    for (size_t i = 0; mapopt_app_param(app, i, &pn, &pv); i++) {
      json_object_set_new(params, pn, json_integer(pv));
      if (!json)
        printf(" %s=%" PRId64, pn, pv);
    }
    if (!json)
      printf("\n");
    json_object_set_new(o, "name", json_string(*b));
    json_object_set_new(o, "sizes", sizes);
    json_object_set_new(o, "params", params);
    json_array_append_new(list, o);
    mapopt_app_free(app);
    mapopt_diags_free(diags);
  }
  if (json) {
    json_dumpf(list, stdout, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    fputc('\n', stdout);
  }
  json_decref(list);
  mapopt_ctx_free(ctx);
  return rc;
}
