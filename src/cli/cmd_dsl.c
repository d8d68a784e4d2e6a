/*
 * The DSL commands: `mapopt check`, `mapopt fmt` and `mapopt show`.
 *
 * Diagnostics go to stderr in GCC's format so that editors and CI parse
 * them; machine-readable output (--json) and formatted programs go to
 * stdout. A file is never rewritten unless it is valid, and then only
 * atomically.
 */
#include <errno.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

const char cli_check_usage[] =
    "usage: mapopt check [--json] [--portable] [--machine M] "
    "[--app APP [--size S]] [--] FILE...\n\n"
    "Parses, checks and loads each mapper and prints its diagnostics as\n"
    "FILE:LINE:COL: error|warning|note: MESSAGE (one per line, on stderr).\n"
    "A note after an error or warning says how to fix it: the name you\n"
    "probably meant, or the names that are valid there.\n\n"
    "  --machine M      the machine the mapper is loaded for: a preset\n"
    "                   (p100x4, lassen:nodes=2), a machine JSON file or a\n"
    "                   one-line shape such as 'nodes=2 gpu=4 cpu=8 omp=2'\n"
    "                   (default: p100x4)\n"
    "  --app APP        check names against the application APP (built-in\n"
    "                   name[:size] or mapopt-app/1 file): a task or region\n"
    "                   argument it does not have is a warning, with the\n"
    "                   name meant; the mapper is loaded for the machine as\n"
    "                   the app runs on it (its ranks)\n"
    "  --size S         the app's size preset and overrides (with --app)\n"
    "  --portable       also warn (P01-P28) about what the DSL mapper of\n"
    "                   Legion rejects, aborts on or reads differently\n"
    "                   (docs/legion.md)\n"
    "  --json           print {\"files\": [{\"file\", \"valid\",\n"
    "                   \"diagnostics\": [...]}]} on stdout instead\n"
    "  --               the arguments after it are files, even '-x.map'\n\n"
    "Exit status: 0 when every file is valid (warnings allowed), 1 when one\n"
    "has an error or the machine or app cannot be loaded, 2 on a usage\n"
    "error.\n";

const char cli_fmt_usage[] =
    "usage: mapopt fmt [-i] [--machine SHAPE] FILE\n\n"
    "Prints the mapper in canonical form on stdout. With -i, rewrites FILE\n"
    "in place instead (atomically, and only when the mapper is valid and\n"
    "not already canonical): a link is rewritten through to its target;\n"
    "anything but a regular file is refused.\n\n"
    "Exit status: 0 ok, 1 when the mapper has an error, 2 usage error.\n";

const char cli_show_usage[] =
    "usage: mapopt show FILE [--machine M] --app APP [--size S]\n"
    "       mapopt show FILE [--machine M] [--task TASK [QUERY...]]\n\n"
    "With --app, prints every decision the mapper makes for one iteration\n"
    "of the application (a mapopt-app/1 file), as the simulator applies it.\n"
    "Shows the decisions the mapper makes, with the evaluation trace of the\n"
    "mapping functions it runs.\n\n"
    "  --machine M        preset (p100x4, lassen:nodes=2), machine JSON file,\n"
    "                     or one-line shape ('nodes=2 gpu=4')\n"
    "  --app APP          application model; --size S picks its size\n"
    "  --task TASK        the task to query\n"
    "  --variants K,K     processor kinds TASK has variants for\n"
    "                     (default: all)\n"
    "  --point P --space S  an index point of a launch, e.g. --point 3,1\n"
    "                     --space 8,8: where it runs (IndexTaskMap)\n"
    "  --parent T@K(N,P)  for a single task: its parent and the processor\n"
    "                     the parent runs on, e.g. 'step@GPU(1,2)'\n"
    "                     (without --point, TASK is a single task:\n"
    "                     SingleTaskMap)\n"
    "  --region TASK ARG  a region argument of TASK: its memory, layout and\n"
    "                     collection. ARG is NAME[,NAME...][@POSITION]\n"
    "                     (position default 0); repeatable\n"
    "  --dims D           dimensions of the regions, for the layout's\n"
    "                     dimension order (default 1)\n"
    "  --region-keys auto|names|positions|both  how Region, Layout and\n"
    "                     CollectMemory match an argument (default auto: as\n"
    "                     the DSL mapper of Legion in one run; see mapopt\n"
    "                     sim --help)\n"
    "  --lenient          fall back to the default kind order when no kind\n"
    "                     of the Task list is usable\n\n"
    "Exit status: 0 ok, 1 invalid mapper or mapping error, 2 usage error.\n";

/* Reads and compiles path: EXIT_VALID with *prog, or EXIT_INVALID with the
 * reason in diags. */
static int compile_file(mapopt_ctx *ctx, const char *path,
                        const mapopt_dsl_options *base, mapopt_diags *diags,
                        mapopt_program **prog) {
  return cli_compile_file(ctx, path, base, diags, prog) == MAPOPT_OK
             ? EXIT_VALID
             : EXIT_INVALID;
}

static void print_stdout(void *ud, const char *line) {
  (void)ud;
  printf("%s\n", line);
}

/* ---- check -------------------------------------------------------------- */

static json_t *diags_json(const mapopt_diags *diags) {
  json_t *arr = json_array();
  for (size_t i = 0; i < mapopt_diags_count(diags); i++) {
    const mapopt_diag *d = mapopt_diags_get(diags, i);
    json_t *o = json_object();
    json_object_set_new(o, "severity",
                        json_string(mapopt_severity_name(d->severity)));
    json_object_set_new(o, "code", json_string(d->code));
    json_object_set_new(o, "file", json_string(d->file));
    json_object_set_new(o, "line", json_integer(d->line));
    json_object_set_new(o, "col", json_integer(d->col));
    json_object_set_new(o, "message", json_string(d->message));
    json_array_append_new(arr, o);
  }
  return arr;
}

int cli_check(int argc, char **argv) {
  bool json = false, portable = false;
  const char *machine = NULL, *app = NULL, *size = NULL;
  static const char *const valued[] = {"--machine", "--app", "--size", NULL};
  int nfiles = 0;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *val;
    if (cli_option_value("check", valued, argc, argv, &i, &val) != EXIT_VALID)
      return EXIT_USAGE;
    if (strcmp(o, "--json") == 0) {
      json = true;
    } else if (strcmp(o, "--portable") == 0) {
      portable = true;
    } else if (strcmp(o, "--machine") == 0) {
      machine = val;
    } else if (strcmp(o, "--app") == 0) {
      app = val;
    } else if (strcmp(o, "--size") == 0) {
      size = val;
    } else if (strcmp(o, "--") == 0) {
      nfiles += argc - i - 1;
      break;
    } else if (o[0] == '-' && o[1]) {
      return cli_unknown_option("check", o);
    } else {
      nfiles++; /* files and options may be interleaved */
    }
  }
  if (!nfiles)
    return cli_usage_error("check", "no input file");
  if (size && !app)
    return cli_usage_error("check", "--size needs --app");
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  mapopt_dsl_options opts = {.print = json ? NULL : print_stdout,
                             .portable = portable};
  mapopt_machine_shape shape;
  mapopt_shape_default(&shape);
  cli_pipeline p = {0};
  int status = EXIT_VALID;
  if (app) {
    cli_pipeline_args pa = {.machine = machine,
                            .app = app,
                            .size = size,
                            .iterations = -1,
                            .warmup = -1};
    status = cli_pipeline_setup(ctx, "check", &pa, diags, &p);
    shape = p.shape;
    if (p.app)
      mapopt_app_task_info(p.app, &opts.tasks, &opts.ntasks);
  } else if (machine && !cli_machine_shape(machine, &shape)) {
    status = EXIT_INVALID;
  }
  opts.shape = &shape;
  if (status != EXIT_VALID) {
    /* The machine or the app could not be loaded: nothing is checked. */
    cli_print_diags(stderr, diags, 0);
    cli_pipeline_close(&p);
    cli_close(ctx, diags);
    return status;
  }
  json_t *files = json_array();
  bool after_dashes = false;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    if (!after_dashes && strcmp(o, "--") == 0) {
      after_dashes = true;
      continue;
    }
    if (!after_dashes && o[0] == '-' && o[1]) {
      for (const char *const *v = valued; *v; v++)
        i += strcmp(o, *v) == 0; /* skip the option's value */
      continue;
    }
    mapopt_diags_clear(diags);
    mapopt_program *prog = NULL;
    int r = compile_file(ctx, o, &opts, diags, &prog);
    if (r != EXIT_VALID)
      status = EXIT_INVALID;
    if (json) {
      json_t *f = json_object();
      json_object_set_new(f, "file", json_string(o));
      json_object_set_new(f, "valid", json_boolean(r == EXIT_VALID));
      json_object_set_new(f, "diagnostics", diags_json(diags));
      json_array_append_new(files, f);
    } else {
      cli_print_diags(stderr, diags, 0);
    }
    mapopt_dsl_free(prog);
  }
  if (json)
    cli_print_json("files", files);
  else
    json_decref(files);
  cli_pipeline_close(&p);
  cli_close(ctx, diags);
  return status;
}

/* ---- fmt ---------------------------------------------------------------- */

int cli_fmt(int argc, char **argv) {
  bool in_place = false;
  const char *path = NULL;
  mapopt_machine_shape shape;
  mapopt_shape_default(&shape);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-i") == 0)
      in_place = true;
    else if (strcmp(argv[i], "--machine") == 0) {
      if (i + 1 >= argc)
        return cli_usage_error("fmt", "--machine needs a value");
      if (!cli_machine_shape(argv[++i], &shape))
        return EXIT_INVALID;
    } else if (cli_operand("fmt", argv[i], &path, "file") != EXIT_VALID) {
      return EXIT_USAGE;
    }
  }
  if (!path)
    return cli_usage_error("fmt", "no input file");
  /* -i rewrites a regular file only: reading a FIFO would wait for a
   * writer, and a device or a folder is not a mapper to replace. A link to
   * a regular file is rewritten through. */
  struct stat st;
  if (in_place && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
    cli_error("%s: error: %s", path,
              S_ISDIR(st.st_mode)
                  ? "is a directory"
                  : "not a regular file (fmt -i rewrites regular files only)");
    return EXIT_INVALID;
  }
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  mapopt_dsl_options opts = {.shape = &shape};
  mapopt_program *prog = NULL;
  int status = compile_file(ctx, path, &opts, diags, &prog);
  cli_print_diags(stderr, diags, 0);
  char *text = NULL;
  size_t len = 0;
  if (status == EXIT_VALID && mapopt_dsl_format(prog, &text, &len) != MAPOPT_OK)
    status = EXIT_INVALID;
  if (status == EXIT_VALID && !in_place) {
    fwrite(text, 1, len, stdout);
  } else if (status == EXIT_VALID) {
    char *old;
    size_t oldlen;
    bool same = false;
    if (mapopt_file_read(ctx, path, NULL, &old, &oldlen) == MAPOPT_OK) {
      same = oldlen == len && memcmp(old, text, len) == 0;
      mapopt_text_free(old);
    }
    if (!same && mapopt_file_replace(path, text, len) != MAPOPT_OK) {
      cli_error("%s: error: cannot write file: %s", path, strerror(errno));
      status = EXIT_INVALID;
    }
  }
  mapopt_text_free(text);
  mapopt_dsl_free(prog);
  cli_close(ctx, diags);
  return status;
}

/* ---- show --------------------------------------------------------------- */

#define MAX_REGIONS 16
#define MAX_NAMES 8

typedef struct region_query {
  char *text; /* owned copy of the argument, split in place */
  const char *names[MAX_NAMES];
  size_t nnames;
  size_t position;
} region_query;

typedef struct show_args {
  const char *file;
  const char *app; /* --app: show every decision of this app */
  const char *size;
  const char *machine; /* --machine as given */
  mapopt_machine_shape shape;
  const char *task;
  unsigned variants;
  int dims; /* of --point / --space; 0 when absent */
  int64_t point[16];
  int64_t space[16];
  int space_dims;
  bool has_parent;
  const char *parent_name;
  mapopt_proc_point parent_proc;
  region_query regions[MAX_REGIONS];
  int nregions;
  int region_dims;
  bool lenient;
  mapopt_region_keys_mode region_keys;
} show_args;

/* "3,1" -> {3, 1}; false on malformed input. */
static bool parse_ints(const char *s, int64_t *out, int cap, int *n) {
  *n = 0;
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long long v = strtoll(p, &end, 10);
    if (end == p || errno || *n >= cap)
      return false;
    out[(*n)++] = v;
    p = end;
    if (*p == ',')
      p++;
    else if (*p)
      return false;
  }
  return *n > 0;
}

static bool parse_kind_list(const char *s, unsigned *mask) {
  char buf[256];
  snprintf(buf, sizeof buf, "%s", s);
  *mask = 0;
  for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
    mapopt_proc_kind k;
    if (mapopt_shape_proc_parse(tok, &k) != MAPOPT_OK)
      return false;
    *mask |= 1u << k;
  }
  return *mask != 0;
}

/* "step@GPU(1,2)" */
static bool parse_parent(char *s, show_args *a) {
  char *at = strchr(s, '@');
  if (!at)
    return false;
  *at = '\0';
  char *open = strchr(at + 1, '(');
  if (!open || !s[0])
    return false;
  *open = '\0';
  mapopt_proc_kind k;
  if (mapopt_shape_proc_parse(at + 1, &k) != MAPOPT_OK)
    return false;
  char *close = strchr(open + 1, ')');
  if (!close || close[1])
    return false;
  *close = '\0';
  int64_t v[2];
  int n;
  if (!parse_ints(open + 1, v, 2, &n) || n != 2 || v[0] < 0 || v[1] < 0)
    return false;
  a->parent_name = s;
  a->parent_proc = (mapopt_proc_point){k, v[0], v[1]};
  a->has_parent = true;
  return true;
}

static bool parse_region(char *s, region_query *r) {
  r->text = s;
  r->position = 0;
  char *at = strchr(s, '@');
  if (at) {
    *at = '\0';
    int64_t pos;
    if (!cli_parse_i64(at + 1, 0, INT64_MAX, &pos))
      return false;
    r->position = (size_t)pos;
  }
  r->nnames = 0;
  for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
    if (r->nnames >= MAX_NAMES)
      return false;
    r->names[r->nnames++] = tok;
  }
  return true;
}

static int parse_show_args(int argc, char **argv, show_args *a) {
  memset(a, 0, sizeof *a);
  mapopt_shape_default(&a->shape);
  a->variants = (1u << MAPOPT_PROC_KIND_COUNT) - 1;
  a->region_dims = 1;
  for (int i = 1; i < argc; i++) {
    const char *opt = argv[i];
    bool takes = strcmp(opt, "--machine") == 0 || strcmp(opt, "--task") == 0 ||
                 strcmp(opt, "--app") == 0 || strcmp(opt, "--size") == 0 ||
                 strcmp(opt, "--variants") == 0 ||
                 strcmp(opt, "--point") == 0 || strcmp(opt, "--space") == 0 ||
                 strcmp(opt, "--parent") == 0 || strcmp(opt, "--region") == 0 ||
                 strcmp(opt, "--dims") == 0 ||
                 strcmp(opt, "--region-keys") == 0;
    if (takes && i + 1 >= argc)
      return cli_usage_error("show", "%s needs a value", opt);
    char *val = takes ? argv[++i] : NULL;
    if (strcmp(opt, "--machine") == 0) {
      if (!cli_machine_shape(val, &a->shape))
        return EXIT_INVALID;
      a->machine = val;
    } else if (strcmp(opt, "--app") == 0) {
      a->app = val;
    } else if (strcmp(opt, "--size") == 0) {
      a->size = val;
    } else if (strcmp(opt, "--task") == 0) {
      if (a->task && strcmp(a->task, val) != 0)
        return cli_usage_error("show", "one task at a time ('%s' and '%s')",
                               a->task, val);
      a->task = val;
    } else if (strcmp(opt, "--variants") == 0) {
      if (!parse_kind_list(val, &a->variants))
        return cli_usage_error("show",
                               "invalid --variants '%s' (expected "
                               "kinds such as GPU,CPU)",
                               val);
    } else if (strcmp(opt, "--point") == 0) {
      if (!parse_ints(val, a->point, 16, &a->dims))
        return cli_usage_error("show",
                               "invalid --point '%s' (expected "
                               "integers such as 3,1)",
                               val);
    } else if (strcmp(opt, "--space") == 0) {
      if (!parse_ints(val, a->space, 16, &a->space_dims))
        return cli_usage_error("show",
                               "invalid --space '%s' (expected "
                               "integers such as 8,8)",
                               val);
    } else if (strcmp(opt, "--parent") == 0) {
      if (!parse_parent(val, a))
        return cli_usage_error("show",
                               "invalid --parent (expected "
                               "TASK@KIND(NODE,PROC), e.g. step@GPU(1,2))");
    } else if (strcmp(opt, "--region") == 0) {
      /* --region TASK ARG: val is the task, the argument follows. */
      if (i + 1 >= argc)
        return cli_usage_error("show", "--region needs a task and an "
                                       "argument: --region TASK ARG");
      if (a->task && strcmp(a->task, val) != 0)
        return cli_usage_error("show",
                               "--region names task '%s', but the "
                               "query is for task '%s'",
                               val, a->task);
      a->task = val;
      if (a->nregions >= MAX_REGIONS ||
          !parse_region(argv[++i], &a->regions[a->nregions++]))
        return cli_usage_error("show", "invalid --region argument (expected "
                                       "NAME[,NAME...][@POSITION])");
    } else if (strcmp(opt, "--dims") == 0) {
      int64_t d;
      int n;
      if (!parse_ints(val, &d, 1, &n) || d < 1 || d > 16)
        return cli_usage_error("show", "--dims must be between 1 and 16");
      a->region_dims = (int)d;
    } else if (strcmp(opt, "--lenient") == 0) {
      a->lenient = true;
    } else if (strcmp(opt, "--region-keys") == 0) {
      if (!cli_region_keys(val, &a->region_keys))
        return cli_usage_error("show", "--region-keys takes auto, names, "
                                       "positions or both");
    } else if (cli_operand("show", opt, &a->file, "mapper file") !=
               EXIT_VALID) {
      return EXIT_USAGE;
    }
  }
  if (!a->file)
    return cli_usage_error("show", "no input file");
  if (a->dims != a->space_dims)
    return cli_usage_error("show",
                           "--point and --space must be given "
                           "together, with the same number of coordinates");
  for (int d = 0; d < a->dims; d++)
    if (a->point[d] < 0 || a->point[d] >= a->space[d])
      return cli_usage_error("show",
                             "--point coordinate %d is outside "
                             "--space",
                             d);
  if (!a->task && (a->dims || a->nregions || a->has_parent))
    return cli_usage_error("show", "queries need --task");
  if (a->app && a->task)
    return cli_usage_error("show", "--app shows every task; --task queries "
                                   "one task without an app");
  return EXIT_VALID;
}

static void print_trace(void *ud, const char *line) {
  (void)ud;
  printf("    %s\n", line);
}

/* Layout order from fastest to slowest, as in docs/dsl.md, "Resulting order
 * of dimensions". */
static void print_layout(const mapopt_layout *l, int dims) {
  static const char names[] = "XYZWVUTSRQPONMLK";
  printf("layout %s %s: ", l->soa == MAPOPT_LAYOUT_YES ? "SOA" : "AOS",
         l->c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order");
  bool aos = l->soa == MAPOPT_LAYOUT_NO;
  if (aos)
    printf("F, ");
  for (int i = 0; i < dims; i++) {
    int d = l->c_order == MAPOPT_LAYOUT_YES ? dims - 1 - i : i;
    printf("%c%s", names[d], i + 1 < dims || !aos ? ", " : "");
  }
  if (!aos)
    printf("F");
  static const char *const ops[] = {"", "==", "!=", "<", "<=", ">", ">="};
  if (l->align_op != MAPOPT_ALIGN_NONE)
    printf("; Align%s%" PRId64, ops[l->align_op], l->align);
  if (l->compact)
    printf("; Compact%s", l->exact ? " Exact" : "");
  printf("\n");
}

static void show_point(const mapopt_proc_point *p) {
  printf("%s(%" PRId64 ", %" PRId64 ")", mapopt_shape_proc_name(p->kind),
         p->node, p->proc);
}

static void print_decision(const mapopt_sim_decision *d) {
  printf("%s", d->task);
  if (d->is_index) {
    for (int k = 0; k < d->dims; k++)
      printf(k ? ", %" PRId64 : " (%" PRId64, d->point[k]);
    printf(d->dims == 1 ? ",)" : ")");
  }
  printf(": ");
  show_point(&d->proc);
  printf("%s\n", d->inner ? " (inner)" : "");
  for (size_t r = 0; r < mapopt_sim_decision_nreqs(d); r++) {
    const mapopt_sim_decision_req *q = mapopt_sim_decision_req_at(d, r);
    printf("  %d %s: %s", (int)r, q->name, mapopt_shape_mem_name(q->memory));
    if (q->memory != MAPOPT_MEM_VIRTUAL)
      printf(" %s %s, %" PRId64 " bytes",
             q->layout.soa == MAPOPT_LAYOUT_NO ? "AOS" : "SOA",
             q->layout.c_order == MAPOPT_LAYOUT_YES ? "C_order" : "F_order",
             q->instance_bytes);
    printf("\n");
  }
}

/*
 * `mapopt show FILE --app APP`: every decision the mapper makes for one
 * iteration of the app, as the simulator applies it (kinds, placements with
 * their defaults, memories, layouts).
 */
static int show_app(const show_args *a) {
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  cli_progress *progress = cli_progress_start("show");
  cli_pipeline p;
  cli_pipeline_args pa = {
      .machine = a->machine,
      .app = a->app,
      .size = a->size,
      .iterations = 1,
      .warmup = 0,
      .mapper = a->file,
      .dsl = {.print = print_stdout, .region_keys = a->region_keys},
      .progress = progress};
  int rc = cli_pipeline_open(ctx, "show", &pa, diags, &p);
  if (rc != EXIT_VALID)
    goto done;
  rc = EXIT_INVALID;
  mapopt_sim_options so = {.record_decisions = true};
  mapopt_status st = cli_pipeline_run(ctx, &p, &so);
  cli_progress_stop(progress);
  progress = NULL;
  if (st != MAPOPT_OK)
    goto done;
  for (size_t i = 0; i < mapopt_sim_result_ndecisions(p.res); i++)
    print_decision(mapopt_sim_result_decision(p.res, i));
  if (p.res->error != MAPOPT_SIM_NONE) {
    printf("error: %s\n", p.res->error_text ? p.res->error_text : "");
    goto done;
  }
  rc = EXIT_VALID;
done:
  cli_progress_stop(progress);
  cli_print_diags(stderr, diags, 0);
  cli_pipeline_close(&p);
  cli_close(ctx, diags);
  return rc;
}

int cli_show(int argc, char **argv) {
  show_args a;
  int r = parse_show_args(argc, argv, &a);
  if (r != EXIT_VALID)
    return r;
  if (a.app)
    return show_app(&a);
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  mapopt_dsl_options opts = {.shape = &a.shape,
                             .print = print_stdout,
                             .trace = print_trace,
                             .region_keys = a.region_keys};
  mapopt_program *prog = NULL;
  int status = compile_file(ctx, a.file, &opts, diags, &prog);
  cli_print_diags(stderr, diags, 0);
  size_t shown = mapopt_diags_count(diags);
  if (status != EXIT_VALID)
    goto done;
  char shape[256];
  mapopt_shape_format(&a.shape, shape, sizeof shape);
  printf("machine: %s\n", shape);
  if (!a.task) {
    for (int k = 0; k < MAPOPT_PROC_KIND_COUNT; k++)
      if (a.shape.procs[k])
        printf("Machine(%s): (%" PRId64 ", %" PRId64 ")\n",
               mapopt_shape_proc_name(k), a.shape.nodes, a.shape.procs[k]);
    printf("(give --task TASK to query the decisions for a task)\n");
    goto done;
  }
  mapopt_proc_kind kind;
  if (mapopt_policy_select_kind(prog, a.task, a.variants, a.lenient, &kind,
                                diags) != MAPOPT_OK) {
    /* R26, printed as the answer rather than as a diagnostic. */
    const mapopt_diag *r26 = mapopt_diags_get(diags, shown);
    printf("task %s: error: %s\n", a.task,
           r26 ? r26->message : "out of memory");
    shown = mapopt_diags_count(diags);
    status = EXIT_INVALID;
    goto done;
  }
  mapopt_proc_kind list[16];
  size_t nlist = mapopt_policy_proc_kinds(prog, a.task, list, 16);
  printf("task %s: kind %s (%s)\n", a.task, mapopt_shape_proc_name(kind),
         nlist ? "from its Task list" : "default order");
  printf("  replicated: %s\n",
         mapopt_policy_replicated(prog, a.task, !a.has_parent && !a.dims,
                                  a.shape.nodes)
             ? "yes"
             : "no");
  int64_t limit = mapopt_policy_instance_limit(prog, a.task);
  if (limit)
    printf("  InstanceLimit: %" PRId64 "\n", limit);
  else
    printf("  InstanceLimit: none\n");
  mapopt_map_answer ans;
  mapopt_status st;
  if (a.dims) {
    printf("  point ");
    for (int d = 0; d < a.dims; d++)
      printf(d ? ", %" PRId64 : "(%" PRId64, a.point[d]);
    printf(a.dims == 1 ? ",)\n" : ")\n");
    st = mapopt_policy_index_map(prog, a.task, a.dims, a.point, a.space, kind,
                                 &ans, diags);
    if (st == MAPOPT_OK && ans.kind == MAPOPT_MAP_UNSPECIFIED) {
      mapopt_proc_point p = {kind, 0, 0};
      mapopt_policy_default_index_place(a.dims, a.point, a.space, a.shape.nodes,
                                        a.shape.procs[kind], &p.node, &p.proc);
      printf("  runs on ");
      show_point(&p);
      printf(" (default placement: blocked over nodes, then processors)\n");
    } else if (st == MAPOPT_OK) {
      printf("  runs on ");
      show_point(&ans.points[0]);
      printf(" (IndexTaskMap %s)\n", ans.function);
    }
  } else {
    mapopt_task_ref parent = {0};
    if (a.has_parent) {
      parent.name = a.parent_name;
      parent.proc = a.parent_proc;
    }
    mapopt_task_ref self = {
        .name = a.task,
        .proc = {kind, a.has_parent ? parent.proc.node : 0, 0},
        .parent = a.has_parent ? &parent : NULL};
    mapopt_proc_point set[64];
    st = mapopt_policy_single_map(prog, &self, kind, &ans, set, 64, diags);
    if (st == MAPOPT_OK && ans.kind == MAPOPT_MAP_UNSPECIFIED) {
      printf("  runs on ");
      show_point(&self.proc);
      printf(" (default placement: the parent's node)\n");
    } else if (st == MAPOPT_OK) {
      printf("  runs on ");
      if (ans.kind == MAPOPT_MAP_SET) {
        printf("{");
        for (size_t i = 0; i < ans.npoints && i < 64; i++) {
          printf(i ? ", " : "");
          show_point(&set[i]);
        }
        printf(ans.npoints > 64 ? ", ...}" : "}");
      } else {
        show_point(&ans.points[0]);
      }
      printf(" (SingleTaskMap %s)\n", ans.function);
      for (size_t i = 0; i < ans.npoints && i < 64; i++)
        if (set[i].node != self.proc.node) {
          printf("  error: " MAPOPT_DSL_TEMPLATE(R18_NODE) "\n");
          status = EXIT_INVALID;
          break;
        }
    }
  }
  if (st != MAPOPT_OK)
    status = EXIT_INVALID;
  for (int i = 0; i < a.nregions; i++) {
    const region_query *q = &a.regions[i];
    mapopt_region_keys keys = {q->names, q->nnames, q->position};
    mapopt_mem_kind mem =
        mapopt_policy_select_memory(prog, a.task, &keys, kind);
    printf("  region %s@%zu: memory %s", q->nnames ? q->names[0] : "",
           q->position, mapopt_shape_mem_name(mem));
    if (mem == MAPOPT_MEM_VIRTUAL) {
      printf(" (no instance)\n");
    } else {
      mapopt_layout l;
      mapopt_policy_resolve_layout(prog, a.task, &keys, mem, kind, false, &l);
      printf(", ");
      print_layout(&l, a.region_dims);
    }
    printf("    collected when read-only: %s\n",
           mapopt_policy_collect(prog, a.task, &keys) ? "yes" : "no");
  }
done:
  cli_print_diags(stderr, diags, shown);
  mapopt_dsl_free(prog);
  cli_close(ctx, diags);
  return status;
}
