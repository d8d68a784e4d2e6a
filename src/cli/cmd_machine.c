/*
 * The machine commands: `mapopt machines` lists the built-in presets,
 * `mapopt machine show M` prints any machine argument as the model the
 * simulator would use, and `mapopt machine probe` derives the `local`
 * machine from this host and saves it (docs/machines.md).
 *
 * Models go to stdout as `mapopt-machine/1` JSON, so `mapopt machine show
 * lassen > mine.json` is the way to start describing one's own machine.
 * Diagnostics go to stderr. The probe's file is replaced atomically.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

const char cli_machines_usage[] =
    "usage: mapopt machines [--json]\n\n"
    "Lists the built-in machine presets, one line each: nodes per run (and\n"
    "the most the nodes=N parameter allows), GPUs per node, CPU, OMP\n"
    "(groups x threads) and UTIL processors per node, and the framebuffer\n"
    "memory per GPU. The `local` machine is listed too once\n"
    "'mapopt machine probe' has written it.\n\n"
    "  --json  print {\"machines\": [{\"name\", \"nodes\", \"nodes_max\",\n"
    "          \"gpus\", \"cpus\", \"omp\", \"omp_threads\", \"util\",\n"
    "          \"fb_mib\"}]} instead\n\n"
    "Exit status: 0 ok, 2 usage error.\n";

const char cli_machine_usage[] =
    "usage: mapopt machine show MACHINE\n"
    "       mapopt machine probe [--measure] [--output FILE]\n\n"
    "show   prints the machine model as `mapopt-machine/1` JSON, with every\n"
    "       default filled in. MACHINE is a preset with optional parameters\n"
    "       (p100x4, lassen:nodes=4, h100x8:nodes=2,ranks_per_node=8), local,\n"
    "       a JSON file (a path ending in .json or containing '/'), or a\n"
    "       one-line description such as 'nodes=2 gpu=4 cpu=8 omp=2' (the\n"
    "       p100x4 preset's rates for what it does not say).\n"
    "probe  derives the `local` machine from this host (/sys, /proc, the\n"
    "       NVIDIA driver) and writes it to ~/.cache/mapopt/local.json, or\n"
    "       to FILE ('-' for stdout). The \"sources\" object of the file says\n"
    "       where each figure came from.\n"
    "  --measure  time a 0.5 s memory copy for the bandwidths instead of\n"
    "             assuming 10 GB/s per core\n\n"
    "See docs/machines.md. Exit status: 0 ok, 1 invalid machine or I/O\n"
    "error, 2 usage error.\n";

/* Parameters a machine accepts, from its JSON ("params"); 0 if none. */
static int64_t nodes_max(mapopt_ctx *ctx, const mapopt_machine *m) {
  char *text;
  if (mapopt_machine_to_json(ctx, m, &text) != MAPOPT_OK)
    return 0;
  json_t *root = json_loads(text, 0, NULL);
  mapopt_text_free(text);
  json_int_t max = json_integer_value(json_object_get(
      json_object_get(json_object_get(root, "params"), "nodes"), "max"));
  json_decref(root);
  return (int64_t)max;
}

static void print_row(const char *name, const mapopt_machine *m, int64_t max) {
  const mapopt_machine_procs *p = m->procs;
  char nodes[48], omp[48], fb[48];
  if (max)
    snprintf(nodes, sizeof nodes, "%" PRId64 " (N<=%" PRId64 ")", m->nodes,
             max);
  else
    snprintf(nodes, sizeof nodes, "%" PRId64, m->nodes);
  if (p[MAPOPT_PROC_OMP].count)
    snprintf(omp, sizeof omp, "%" PRId64 "x%" PRId64, p[MAPOPT_PROC_OMP].count,
             p[MAPOPT_PROC_OMP].threads);
  else
    snprintf(omp, sizeof omp, "0");
  if (m->mems[MAPOPT_MEM_FBMEM].present)
    snprintf(fb, sizeof fb, "%" PRId64 " MiB",
             m->mems[MAPOPT_MEM_FBMEM].capacity >> 20);
  else
    snprintf(fb, sizeof fb, "-");
  printf("%-14s %-12s %4" PRId64 " %4" PRId64 " %-6s %4" PRId64 "  %s\n", name,
         nodes, p[MAPOPT_PROC_GPU].count, p[MAPOPT_PROC_CPU].count, omp,
         m->util_count, fb);
}

static json_t *row_json(const char *name, const mapopt_machine *m,
                        int64_t max) {
  const mapopt_machine_procs *p = m->procs;
  json_t *o = json_object();
  json_object_set_new(o, "name", json_string(name));
  json_object_set_new(o, "nodes", json_integer(m->nodes));
  json_object_set_new(o, "nodes_max", json_integer(max ? max : m->nodes));
  json_object_set_new(o, "gpus", json_integer(p[MAPOPT_PROC_GPU].count));
  json_object_set_new(o, "cpus", json_integer(p[MAPOPT_PROC_CPU].count));
  json_object_set_new(o, "omp", json_integer(p[MAPOPT_PROC_OMP].count));
  json_object_set_new(
      o, "omp_threads",
      json_integer(p[MAPOPT_PROC_OMP].count ? p[MAPOPT_PROC_OMP].threads : 0));
  json_object_set_new(o, "util", json_integer(m->util_count));
  json_object_set_new(o, "fb_mib",
                      json_integer(m->mems[MAPOPT_MEM_FBMEM].capacity >> 20));
  return o;
}

int cli_machines(int argc, char **argv) {
  bool json = false;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--json") == 0)
      json = true;
    else
      return cli_usage_error("machines", "unexpected argument '%s'", argv[i]);
  }
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  int status = EXIT_VALID;
  json_t *list = json_array();
  if (!json)
    printf("%-14s %-12s %4s %4s %-6s %4s  %s\n", "name", "nodes", "gpus", "cpu",
           "omp", "util", "fb/gpu");
  const char *const *names = mapopt_machine_presets();
  for (size_t i = 0;; i++) {
    /* The presets, then local if it has been probed. */
    const char *name = names[i] ? names[i] : "local";
    mapopt_machine *m = NULL;
    mapopt_status st = mapopt_machine_resolve(ctx, name, diags, &m);
    if (st != MAPOPT_OK) {
      if (names[i]) { /* a broken built-in preset is a bug: say so */
        cli_print_diags(stderr, diags, 0);
        status = EXIT_INVALID;
      } else if (!json) {
        printf("%-14s (not probed: run 'mapopt machine probe')\n", name);
      }
    } else {
      int64_t max = nodes_max(ctx, m);
      if (json)
        json_array_append_new(list, row_json(name, m, max));
      else
        print_row(name, m, max);
    }
    mapopt_machine_free(m);
    mapopt_diags_clear(diags);
    if (!names[i])
      break;
  }
  if (json)
    cli_print_json("machines", list);
  else
    json_decref(list);
  cli_close(ctx, diags);
  return status;
}

/* ---- machine show / probe ------------------------------------------------ */

static int show(mapopt_ctx *ctx, mapopt_diags *diags, const char *arg) {
  mapopt_machine *m;
  mapopt_status st = mapopt_machine_resolve(ctx, arg, diags, &m);
  if (st != MAPOPT_OK) {
    cli_print_diags(stderr, diags, 0);
    if (st == MAPOPT_ENOMEM)
      fprintf(stderr, "mapopt machine: out of memory\n");
    return EXIT_INVALID;
  }
  char *text;
  st = mapopt_machine_to_json(ctx, m, &text);
  mapopt_machine_free(m);
  if (st != MAPOPT_OK) {
    fprintf(stderr, "mapopt machine: out of memory\n");
    return EXIT_INVALID;
  }
  fputs(text, stdout);
  mapopt_text_free(text);
  return EXIT_VALID;
}

/* Creates the folders above path, as mkdir -p does. */
static bool make_parents(const char *path) {
  char buf[4096];
  if (strlen(path) >= sizeof buf)
    return false;
  strcpy(buf, path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/')
      continue;
    *p = '\0';
    if (mkdir(buf, 0755) != 0 && errno != EEXIST)
      return false;
    *p = '/';
  }
  return true;
}

/* Probes this host and writes its model to output ("-": stdout). */
static int probe_to(mapopt_ctx *ctx, mapopt_diags *diags, bool measure,
                    const char *output) {
  mapopt_machine *m;
  mapopt_status st = mapopt_machine_probe(ctx, measure, diags, &m);
  if (st != MAPOPT_OK) {
    cli_print_diags(stderr, diags, 0);
    fprintf(stderr, "mapopt machine probe: %s\n", mapopt_strerror(st));
    return EXIT_INVALID;
  }
  char *text;
  st = mapopt_machine_to_json(ctx, m, &text);
  if (st != MAPOPT_OK) {
    mapopt_machine_free(m);
    fprintf(stderr, "mapopt machine probe: out of memory\n");
    return EXIT_INVALID;
  }
  int status = EXIT_VALID;
  if (strcmp(output, "-") == 0) {
    fputs(text, stdout);
  } else if (!make_parents(output) ||
             mapopt_file_replace(output, text, strlen(text)) != MAPOPT_OK) {
    cli_error("mapopt machine probe: cannot write %s: %s", output,
              strerror(errno));
    status = EXIT_INVALID;
  } else {
    const mapopt_machine_procs *p = m->procs;
    printf("wrote %s: %" PRId64 " socket%s, %" PRId64 " GPU%s, CPU %" PRId64
           " / OMP %" PRId64 "x%" PRId64 " / UTIL %" PRId64 "\n",
           output, m->sockets, m->sockets == 1 ? "" : "s",
           p[MAPOPT_PROC_GPU].count, p[MAPOPT_PROC_GPU].count == 1 ? "" : "s",
           p[MAPOPT_PROC_CPU].count, p[MAPOPT_PROC_OMP].count,
           p[MAPOPT_PROC_OMP].threads, m->util_count);
  }
  mapopt_text_free(text);
  mapopt_machine_free(m);
  return status;
}

/* `machine probe`: to output, by default to the file resolve("local")
 * reads. */
static int probe(mapopt_ctx *ctx, mapopt_diags *diags, bool measure,
                 const char *output) {
  if (output)
    return probe_to(ctx, diags, measure, output);
  char *local;
  mapopt_status st = mapopt_machine_local_path(ctx, &local);
  if (st != MAPOPT_OK) {
    fprintf(stderr, "mapopt machine probe: %s\n",
            st == MAPOPT_ENOTFOUND ? "$HOME is not set; use --output FILE"
                                   : mapopt_strerror(st));
    return EXIT_INVALID;
  }
  int status = probe_to(ctx, diags, measure, local);
  mapopt_text_free(local);
  return status;
}

int cli_machine(int argc, char **argv) {
  if (argc < 2)
    return cli_usage_error("machine", "expected 'show MACHINE' or 'probe'");
  const char *sub = argv[1];
  bool measure = false;
  const char *output = NULL, *arg = NULL;
  if (strcmp(sub, "show") == 0) {
    for (int i = 2; i < argc; i++) {
      if (argv[i][0] == '-' && argv[i][1])
        return cli_unknown_option("machine", argv[i]);
      if (arg)
        return cli_usage_error("machine", "show takes one machine");
      arg = argv[i];
    }
    if (!arg)
      return cli_usage_error("machine", "show needs a machine");
  } else if (strcmp(sub, "probe") == 0) {
    for (int i = 2; i < argc; i++) {
      if (strcmp(argv[i], "--measure") == 0) {
        measure = true;
      } else if (strcmp(argv[i], "--output") == 0) {
        if (i + 1 >= argc)
          return cli_usage_error("machine", "--output needs a file");
        output = argv[++i];
      } else {
        return cli_usage_error("machine", "unexpected argument '%s'", argv[i]);
      }
    }
  } else {
    return cli_usage_error("machine", "unknown subcommand '%s'", sub);
  }
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  int status = arg ? show(ctx, diags, arg) : probe(ctx, diags, measure, output);
  cli_close(ctx, diags);
  return status;
}
