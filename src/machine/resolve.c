/*
 * Resolving a machine argument as the CLI and the simulator accept it
 * (docs/machines.md, "Naming a machine"): a preset with parameters
 * ("lassen:nodes=4"), the `local` machine written by `mapopt machine probe`, a
 * JSON file, or the DSL's one-line description ("nodes=2 gpu=4 cpu=8 omp=2").
 *
 * Presets are compiled into the library (the table is generated from the
 * JSON files of machines/ at build time), so a run never depends on the
 * working directory; only `local` and explicit files are read at run time.
 * The one-line form is hwloc's synthetic topology: a machine shaped as the
 * text says, with p100x4's rates for every kind it has, so tests and quick
 * what-ifs need no file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "machine/machine.h"

const char *const *mapopt_machine_presets(void) {
  return mapopt__machine_presets_names;
}

const char *mapopt_machine_preset_json(const char *name) {
  for (size_t i = 0; i < mapopt__machine_presets_count; i++)
    if (strcmp(name, mapopt__machine_presets[i].name) == 0)
      return mapopt__machine_presets[i].json;
  return NULL;
}

/* An error about the argument itself, which has no line or column. */
static mapopt_status arg_error(mapopt_diags *diags, const char *arg,
                               mapopt_status st, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static mapopt_status arg_error(mapopt_diags *diags, const char *arg,
                               mapopt_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  mapopt_status added =
      mapopt_diags_addv(diags, MAPOPT_SEV_ERROR, "", arg, 0, 0, fmt, ap);
  va_end(ap);
  return added == MAPOPT_OK ? st : MAPOPT_ENOMEM;
}

static mapopt_status load_file(mapopt_ctx *ctx, const char *path,
                               const mapopt__machine_params *params,
                               mapopt_diags *diags, mapopt_machine **out) {
  char *text;
  size_t len;
  mapopt_status st = mapopt_file_read(ctx, path, diags, &text, &len);
  if (st != MAPOPT_OK)
    return st;
  st = mapopt__machine_load(ctx, path, text, len, params, diags, out);
  mapopt_text_free(text);
  return st;
}

/*
 * The path `mapopt machine probe` writes by default. The CLI computes the
 * same path (it sees only the public API), so change both together.
 */
mapopt_status mapopt_machine_local_path(mapopt_ctx *ctx, char **path) {
  const char *home = getenv("HOME");
  if (!home || !home[0])
    return MAPOPT_ENOTFOUND;
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_printf(&sb, "%s/.cache/mapopt/local.json", home);
  char *p = mapopt__text_take(&sb, NULL);
  if (!p)
    return MAPOPT_ENOMEM;
  *path = p;
  return MAPOPT_OK;
}

/* "nodes=4,ranks_per_node=2" after the preset's name. */
static mapopt_status parse_params(const char *arg, const char *p,
                                  mapopt__machine_params *params,
                                  mapopt_diags *diags) {
  memset(params, 0, sizeof *params);
  params->arg = arg;
  if (!*p)
    return arg_error(diags, arg, MAPOPT_EINVAL,
                     "expected NAME=VALUE parameters after ':'");
  while (*p) {
    const char *key = p;
    while (*p && *p != '=' && *p != ',')
      p++;
    size_t klen = (size_t)(p - key);
    if (*p != '=' || !klen)
      return arg_error(diags, arg, MAPOPT_EINVAL,
                       "malformed parameter \"%.*s\" (expected NAME=VALUE)",
                       (int)klen, key);
    p++;
    const char *val = p;
    while (*p && *p != ',')
      p++;
    int vlen = (int)(p - val);
    int k = -1;
    for (int j = 0; j < MAPOPT__MPARAM_COUNT; j++)
      if (strlen(mapopt__machine_param_names[j]) == klen &&
          strncmp(key, mapopt__machine_param_names[j], klen) == 0)
        k = j;
    if (k < 0)
      return arg_error(diags, arg, MAPOPT_EINVAL,
                       "unknown parameter \"%.*s\" (parameters: nodes, "
                       "ranks_per_node)",
                       (int)klen, key);
    char digits[24];
    char *end = NULL;
    long long v = 0;
    if (vlen > 0 && vlen < (int)sizeof digits) {
      memcpy(digits, val, (size_t)vlen);
      digits[vlen] = '\0';
      errno = 0;
      v = strtoll(digits, &end, 10);
    }
    if (!end || *end || errno || v < 1 || digits[0] == '+' || digits[0] == ' ')
      return arg_error(diags, arg, MAPOPT_EINVAL,
                       "parameter %.*s must be a positive integer, got "
                       "\"%.*s\"",
                       (int)klen, key, vlen, val);
    if (params->value[k])
      return arg_error(diags, arg, MAPOPT_EINVAL,
                       "parameter %.*s is given twice", (int)klen, key);
    params->value[k] = v;
    if (*p == ',')
      p++;
  }
  return MAPOPT_OK;
}

/* ---- the one-line description ------------------------------------------- */

static int64_t *socket_list(mapopt__arena *a, int64_t count, int64_t sockets,
                            bool block) {
  if (!count)
    return NULL;
  int64_t *s = mapopt__arena_alloc(a, (size_t)count * sizeof *s);
  if (s)
    for (int64_t i = 0; i < count; i++)
      s[i] = block ? i * sockets / count : i % sockets;
  return s;
}

static mapopt_status from_shape(mapopt_ctx *ctx, const char *arg,
                                mapopt_diags *diags, mapopt_machine **out) {
  mapopt_machine_shape shape;
  /* Large enough for any message of mapopt_shape_parse (see its header). */
  size_t errlen = 2 * strlen(arg) + 200;
  char *err = mapopt__malloc(ctx, errlen);
  if (!err)
    return MAPOPT_ENOMEM;
  if (mapopt_shape_parse(arg, &shape, err, errlen) != MAPOPT_OK) {
    mapopt_status st = arg_error(diags, arg, MAPOPT_EINVAL,
                                 "invalid machine description: %s", err);
    mapopt__free(ctx, err, errlen);
    return st;
  }
  mapopt__free(ctx, err, errlen);
  if (shape.procs[MAPOPT_PROC_IO] || shape.procs[MAPOPT_PROC_PY] ||
      shape.procs[MAPOPT_PROC_PROC])
    return arg_error(diags, arg, MAPOPT_EINVAL,
                     "io, py and proc processors are not modelled by the "
                     "simulator");
  int64_t cpu = shape.procs[MAPOPT_PROC_CPU];
  int64_t gpu = shape.procs[MAPOPT_PROC_GPU];
  int64_t omp = shape.procs[MAPOPT_PROC_OMP];
  int64_t sockets = shape.sockets;
  if (!cpu && !gpu && !omp)
    return arg_error(diags, arg, MAPOPT_EINVAL,
                     "the machine has no CPU, GPU or OMP processors");
  if (shape.nodes > MAPOPT_MACHINE_MAX_NODES || cpu > 4096 || gpu > 1024 ||
      omp > 1024 || sockets > 64)
    return arg_error(diags, arg, MAPOPT_EINVAL,
                     "too large: at most nodes=%d, cpu=4096, gpu=1024, "
                     "omp=1024 and sockets=64",
                     MAPOPT_MACHINE_MAX_NODES);
  const char *base = mapopt_machine_preset_json("p100x4");
  if (!base)
    return arg_error(diags, arg, MAPOPT_ENOTFOUND,
                     "the p100x4 preset is not built in");
  mapopt_machine *bm;
  mapopt_status st = mapopt__machine_load(ctx, "machines/p100x4.json", base,
                                          strlen(base), NULL, diags, &bm);
  if (st != MAPOPT_OK)
    return st;
  mapopt__machine_impl *mi = mapopt__machine_impl_of(bm);
  mapopt_machine *m = bm;
  unsigned have = 0;
  for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
    have |= shape.affinity[k];
  m->name = mapopt__arena_strndup(&mi->arena, arg, strlen(arg));
  m->nodes = shape.nodes;
  m->ranks_per_node = 1;
  m->sockets = sockets > 0 ? sockets : 1;
  m->procs[MAPOPT_PROC_CPU].count = cpu;
  m->procs[MAPOPT_PROC_GPU].count = gpu;
  m->procs[MAPOPT_PROC_OMP].count = omp;
  m->procs[MAPOPT_PROC_CPU].socket =
      socket_list(&mi->arena, cpu, m->sockets, false);
  m->procs[MAPOPT_PROC_OMP].socket =
      socket_list(&mi->arena, omp, m->sockets, false);
  m->procs[MAPOPT_PROC_GPU].socket =
      socket_list(&mi->arena, gpu, m->sockets, true);
  m->mems[MAPOPT_MEM_SYSMEM].present = have >> MAPOPT_MEM_SYSMEM & 1;
  m->mems[MAPOPT_MEM_ZCMEM].present = have >> MAPOPT_MEM_ZCMEM & 1;
  m->mems[MAPOPT_MEM_RDMEM].present = have >> MAPOPT_MEM_RDMEM & 1;
  m->mems[MAPOPT_MEM_SOCKMEM].present = sockets > 0;
  m->mems[MAPOPT_MEM_FBMEM].present = gpu > 0;
  for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
    if (!m->mems[k].present)
      m->mems[k].capacity = 0;
  for (int p = 0; p < MAPOPT_PROC_KIND_COUNT; p++)
    for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
      if (!m->procs[p].count || !m->mems[k].present)
        memset(&m->affinity[p][k], 0, sizeof m->affinity[p][k]);
  if (!gpu) {
    memset(&m->channels[MAPOPT_CHAN_FB_LOCAL], 0, sizeof m->channels[0]);
    memset(&m->channels[MAPOPT_CHAN_FB_FB_PEER], 0, sizeof m->channels[0]);
    memset(&m->channels[MAPOPT_CHAN_FB_HOST], 0, sizeof m->channels[0]);
  }
  memset(mi->param_max, 0, sizeof mi->param_max);
  mi->sources = mapopt__arena_alloc(&mi->arena, sizeof *mi->sources);
  mi->nsources = mi->sources ? 1 : 0;
  if (mi->sources) {
    mi->sources[0].key = "note";
    mi->sources[0].value =
        "one-line description; every rate is the p100x4 preset's";
  }
  if (!m->name || !mi->sources || (cpu && !m->procs[MAPOPT_PROC_CPU].socket) ||
      (omp && !m->procs[MAPOPT_PROC_OMP].socket) ||
      (gpu && !m->procs[MAPOPT_PROC_GPU].socket)) {
    mapopt_machine_free(m);
    return MAPOPT_ENOMEM;
  }
  *out = m;
  return MAPOPT_OK;
}

/* ---- resolve ------------------------------------------------------------ */

static bool ends_with(const char *s, const char *suffix) {
  size_t n = strlen(s), k = strlen(suffix);
  return n >= k && strcmp(s + n - k, suffix) == 0;
}

mapopt_status mapopt_machine_resolve(mapopt_ctx *ctx, const char *arg,
                                     mapopt_diags *diags,
                                     mapopt_machine **out) {
  if (ends_with(arg, ".json") || strchr(arg, '/'))
    return load_file(ctx, arg, NULL, diags, out);
  const char *colon = strchr(arg, ':');
  size_t nlen = colon ? (size_t)(colon - arg) : strlen(arg);
  const char *json = NULL;
  char name[64];
  if (nlen < sizeof name) {
    memcpy(name, arg, nlen);
    name[nlen] = '\0';
    json = mapopt_machine_preset_json(name);
  }
  bool local = nlen == 5 && strncmp(arg, "local", 5) == 0;
  if (!json && !local) {
    if (strchr(arg, '=') && !colon)
      return from_shape(ctx, arg, diags, out);
    char list[256] = "";
    const char *names[64] = {"local"};
    size_t nn = 1;
    for (size_t i = 0; i < mapopt__machine_presets_count; i++) {
      strncat(list, mapopt__machine_presets[i].name,
              sizeof list - strlen(list) - 3);
      strcat(list, ", ");
      if (nn < sizeof names / sizeof names[0])
        names[nn++] = mapopt__machine_presets[i].name;
    }
    const char *meant = mapopt_suggest(arg, nlen, names, nn);
    return arg_error(diags, arg, MAPOPT_ENOTFOUND,
                     "unknown machine \"%.*s\" (%s%s%spresets: %slocal; or a "
                     "JSON file, or a one-line description such as "
                     "\"nodes=2 gpu=4 cpu=4\")",
                     (int)nlen, arg, meant ? "did you mean \"" : "",
                     meant ? meant : "", meant ? "\"? " : "", list);
  }
  mapopt__machine_params params, *pp = NULL;
  if (colon) {
    mapopt_status st = parse_params(arg, colon + 1, &params, diags);
    if (st != MAPOPT_OK)
      return st;
    pp = &params;
  }
  if (json) {
    char file[96];
    snprintf(file, sizeof file, "machines/%s.json", name);
    return mapopt__machine_load(ctx, file, json, strlen(json), pp, diags, out);
  }
  char *path;
  mapopt_status st = mapopt_machine_local_path(ctx, &path);
  if (st == MAPOPT_ENOTFOUND)
    return arg_error(diags, arg, MAPOPT_ENOTFOUND,
                     "machine \"local\" needs $HOME to find "
                     "~/.cache/mapopt/local.json");
  if (st != MAPOPT_OK)
    return st;
  FILE *f = fopen(path, "rb");
  if (!f && errno == ENOENT)
    st = arg_error(diags, arg, MAPOPT_ENOTFOUND,
                   "machine \"local\" has not been probed: run 'mapopt "
                   "machine probe' to create %s",
                   path);
  else
    st = load_file(ctx, path, pp, diags, out);
  if (f)
    fclose(f);
  mapopt_text_free(path);
  return st;
}
