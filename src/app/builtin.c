/*
 * The built-in applications (docs/benchmarks.md): their models and shipped
 * mappers are compiled into the library from apps/builtin/ and mappers/,
 * and an application argument ("circuit:small", or a JSON file) is
 * resolved to a loaded model here.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "app/app.h"

const char *mapopt_app_name(const mapopt_app *app) {
  return app->name;
}

bool mapopt_app_param(const mapopt_app *app, size_t i, const char **name,
                      int64_t *value) {
  if (i >= (size_t)app->nparams)
    return false;
  *name = app->params[i].name;
  *value = app->params[i].value;
  return true;
}

const char *mapopt_app_size_name(const mapopt_app *app, size_t i) {
  return i < (size_t)app->nsizes ? app->sizes[i].name : NULL;
}

const char *const *mapopt_app_builtins(void) {
  return mapopt__builtin_apps_names;
}

const char *mapopt_app_builtin_json(const char *name) {
  return name ? mapopt__embedded_find(mapopt__builtin_apps, name) : NULL;
}

const char *mapopt_app_builtin_mapper(const char *app, const char *mapper) {
  char path[256];
  if (!app || !mapper ||
      snprintf(path, sizeof path, "%s/%s", app, mapper) >= (int)sizeof path)
    return NULL;
  return mapopt__embedded_find(mapopt__builtin_mappers, path);
}

mapopt_status mapopt_app_resolve(mapopt_ctx *ctx, const char *arg,
                                 mapopt_diags *diags, mapopt_app **out,
                                 const char **spec) {
  if (!ctx || !arg || !diags || !out)
    return MAPOPT_EINVAL;
  const char *colon = strchr(arg, ':');
  size_t n = colon ? (size_t)(colon - arg) : strlen(arg);
  char name[1024];
  if (n >= sizeof name) {
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", "mapopt", 0, 0,
                     "application name too long");
    return MAPOPT_EINVAL;
  }
  memcpy(name, arg, n);
  name[n] = '\0';
  if (spec)
    *spec = colon ? colon + 1 : NULL;
  const char *json = mapopt_app_builtin_json(name);
  if (json)
    return mapopt_app_load_json(ctx, name, json, strlen(json), diags, out);
  bool is_file = strchr(name, '/') || strstr(name, ".json");
  if (!is_file) {
    char list[512] = "";
    size_t nb = 0;
    for (const char *const *b = mapopt_app_builtins(); *b; b++, nb++)
      snprintf(list + strlen(list), sizeof list - strlen(list), "%s%s",
               b == mapopt_app_builtins() ? "" : ", ", *b);
    const char *meant =
        mapopt_suggest(name, strlen(name), mapopt_app_builtins(), nb);
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", name, 0, 0,
                     "unknown application \"%s\" (%s%s%sbuilt-in: %s; or a "
                     "mapopt-app/1 JSON file)",
                     name, meant ? "did you mean \"" : "", meant ? meant : "",
                     meant ? "\"? " : "", list[0] ? list : "none");
    return MAPOPT_ENOTFOUND;
  }
  char *text;
  size_t len;
  mapopt_status st = mapopt_file_read(ctx, name, diags, &text, &len);
  if (st != MAPOPT_OK)
    return st;
  st = mapopt_app_load_json(ctx, name, text, len, diags, out);
  mapopt_text_free(text);
  return st;
}
