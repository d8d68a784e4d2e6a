/*
 * mapopt: the command-line program. main() dispatches to one subcommand;
 * each prints its own --help, the one text from which its manual page and
 * the bash completion are made too (help.c). Exit status: 0 success, 1
 * invalid input (a mapper with errors, a failed run), 2 usage error.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>

#include "cli/cli.h"

static const cli_command commands[] = {
    {"check", "parse, check and load mappers; print diagnostics",
     cli_check_usage, cli_check},
    {"fmt", "print a mapper in canonical form (or rewrite it with -i)",
     cli_fmt_usage, cli_fmt},
    {"show", "show the decisions a mapper makes, with evaluation traces",
     cli_show_usage, cli_show},
    {"sim", "simulate an application under a mapper on a machine model",
     cli_sim_usage, cli_sim},
    {"explain", "explain a run's output: errors, bottlenecks, what to change",
     cli_explain_usage, cli_explain},
    {"eval", "evaluate a mapper by running a command with it", cli_eval_usage,
     cli_eval},
    {"apps", "list the built-in applications (or export one as JSON)",
     cli_apps_usage, cli_apps},
    {"machines", "list the built-in machine presets", cli_machines_usage,
     cli_machines},
    {"machine", "show a machine model as JSON, or probe this host",
     cli_machine_usage, cli_machine},
    {"space", "print the search space of mappers (or render a point of it)",
     cli_space_usage, cli_space},
    {"tune", "tune a mapper: search the space, record every evaluation",
     cli_tune_usage, cli_tune},
    {"bench",
     "compare optimizers over benchmarks and seeds (the paper's table)",
     cli_bench_usage, cli_bench},
    {"report", "write an HTML report of a tuning database", cli_report_usage,
     cli_report},
    {"calibrate", "fit the machine model to the real runs of a database",
     cli_calibrate_usage, cli_calibrate},
};

enum { NCOMMANDS = sizeof commands / sizeof commands[0] };

const cli_command *cli_commands(size_t *n) {
  *n = NCOMMANDS;
  return commands;
}

const cli_command *cli_find_command(const char *name) {
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(name, commands[i].name) == 0)
      return &commands[i];
  return NULL;
}

static void print_main_help(FILE *f) {
  fprintf(f, "usage: mapopt COMMAND [OPTIONS] [ARGS]\n"
             "       mapopt --help | --version | --man [COMMAND] | "
             "--completion bash\n\n"
             "mapopt writes and tunes mappers for task-based parallel "
             "programs.\n\ncommands:\n");
  for (int i = 0; i < NCOMMANDS; i++)
    fprintf(f, "  %-9s  %s\n", commands[i].name, commands[i].summary);
  fprintf(f, "\n'mapopt COMMAND --help' describes a command.\n\n"
             "  -h, --help         this help\n"
             "  --version          print mapopt's version\n"
             "  --man [COMMAND]    print the manual page (roff) of mapopt\n"
             "                     or of a command, made from these texts\n"
             "  --completion bash  print the bash completion script\n"
             "  --commands         print the commands' names, one a line\n\n"
             "Exit status: 0 ok, 1 invalid input (a mapper, application or\n"
             "machine that cannot be loaded, a failed run), 2 usage error\n"
             "(an unknown command or option, a missing or malformed value).\n"
             "Documentation: docs/ in the source tree (share/doc/mapopt).\n");
}

/* The main help as a string (for its manual page); NULL when out of
 * memory. Free it with free(). */
static char *main_help_text(void) {
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f)
    return NULL;
  print_main_help(f);
  if (fclose(f) != 0) {
    free(text);
    return NULL;
  }
  return text;
}

/* The options of mapopt itself: --version, --man, --completion, --commands.
 * Returns -1 when argv[1] is none of them. */
static int main_option(int argc, char **argv) {
  const char *o = argv[1];
  if (strcmp(o, "--version") == 0 && argc == 2) {
    printf("mapopt %s\n", MAPOPT_VERSION);
    return EXIT_VALID;
  }
  if (strcmp(o, "--commands") == 0 && argc == 2) {
    for (int i = 0; i < NCOMMANDS; i++)
      printf("%s\n", commands[i].name);
    return EXIT_VALID;
  }
  if (strcmp(o, "--man") == 0 && argc <= 3) {
    const cli_command *c = argc == 3 ? cli_find_command(argv[2]) : NULL;
    if (argc == 3 && !c) {
      cli_error("mapopt: --man: unknown command '%s'", argv[2]);
      return EXIT_USAGE;
    }
    char *help = main_help_text();
    if (!help) {
      fprintf(stderr, "mapopt: out of memory\n");
      return EXIT_INVALID;
    }
    cli_write_man(stdout, c, help);
    free(help);
    return EXIT_VALID;
  }
  if (strcmp(o, "--completion") == 0 && argc == 3 &&
      strcmp(argv[2], "bash") == 0) {
    char *help = main_help_text();
    if (!help) {
      fprintf(stderr, "mapopt: out of memory\n");
      return EXIT_INVALID;
    }
    cli_write_completion(stdout, help);
    free(help);
    return EXIT_VALID;
  }
  if (!strcmp(o, "--version") || !strcmp(o, "--commands") ||
      !strcmp(o, "--man") || !strcmp(o, "--completion")) {
    fprintf(stderr, "mapopt: usage: mapopt --version | --commands | --man "
                    "[COMMAND] | --completion bash\n");
    return EXIT_USAGE;
  }
  return -1;
}

bool cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
}

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

int cli_operand(const char *cmd, const char *arg, const char **slot,
                const char *what) {
  if (arg[0] == '-' && arg[1])
    return cli_unknown_option(cmd, arg);
  if (*slot)
    return cli_usage_error(cmd, "only one %s at a time", what);
  *slot = arg;
  return EXIT_VALID;
}

int cli_option_value(const char *cmd, const char *const *valued, int argc,
                     char **argv, int *i, const char **val) {
  const char *o = argv[*i];
  bool takes = false;
  for (const char *const *v = valued; *v; v++)
    takes |= strcmp(o, *v) == 0;
  if (takes && *i + 1 >= argc)
    return cli_usage_error(cmd, "%s needs a value", o);
  *val = takes ? argv[++*i] : NULL;
  return EXIT_VALID;
}

bool cli_parse_i64(const char *s, int64_t lo, int64_t hi, int64_t *out) {
  char *end;
  errno = 0;
  long long v = strtoll(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi)
    return false;
  *out = v;
  return true;
}

bool cli_parse_double(const char *s, double lo, double hi, double *out) {
  char *end;
  errno = 0;
  double v = strtod(s, &end);
  if (end == s || *end || errno || !(v >= lo && v <= hi))
    return false;
  *out = v;
  return true;
}

/* The allocator of a budgeted context (mapopt_alloc_fn): the C library's,
 * refusing to grow the bytes in use past the limit. The CLI allocates
 * from one thread per context. */
static void *budget_alloc(void *ud, void *ptr, size_t osize, size_t nsize) {
  cli_budget *b = ud;
  if (nsize == 0) {
    free(ptr);
    b->live -= (int64_t)osize;
    return NULL;
  }
  int64_t grow = (int64_t)nsize - (int64_t)osize;
  if (grow > 0 && b->live + grow > b->limit) {
    b->hit = true;
    return NULL;
  }
  void *p = realloc(ptr, nsize);
  if (p)
    b->live += grow;
  return p;
}

static bool open_with(mapopt_alloc_fn fn, void *ud, mapopt_ctx **ctx,
                      mapopt_diags **diags) {
  if (mapopt_ctx_new(fn, ud, ctx) != MAPOPT_OK) {
    fprintf(stderr, "mapopt: out of memory\n");
    return false;
  }
  if (mapopt_diags_new(*ctx, diags) != MAPOPT_OK) {
    mapopt_ctx_free(*ctx);
    fprintf(stderr, "mapopt: out of memory\n");
    return false;
  }
  return true;
}

bool cli_open(mapopt_ctx **ctx, mapopt_diags **diags) {
  return open_with(NULL, NULL, ctx, diags);
}

bool cli_open_budget(mapopt_ctx **ctx, mapopt_diags **diags, cli_budget *b) {
  return open_with(budget_alloc, b, ctx, diags);
}

void cli_close(mapopt_ctx *ctx, mapopt_diags *diags) {
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
}

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
bool cli_region_keys(const char *arg, mapopt_region_keys_mode *mode) {
  static const char *const names[] = {"auto", "names", "positions", "both"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(arg, names[i]) == 0) {
      *mode = (mapopt_region_keys_mode)i;
      return true;
    }
  return false;
}

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

/* Ends a command: its output is flushed and closed, and output that could
 * not be written (a full disk, a closed pipe) fails the command however it
 * went -- the result must not pass for written. */
static int finish(int rc) {
  bool bad = ferror(stdout) != 0;
  int err = 0;
  /* An earlier failed write left the error flag but not its errno: what
   * is still buffered is written again, to learn why. */
  clearerr(stdout);
  errno = 0;
  if (fflush(stdout) != 0) {
    bad = true;
    err = errno;
  }
  if (fclose(stdout) != 0 && !bad) {
    bad = true;
    err = errno;
  }
  if (!bad)
    return rc;
  cli_error("mapopt: error: cannot write the output: %s",
            err ? strerror(err) : "write error");
  return rc == EXIT_VALID ? EXIT_INVALID : rc;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    print_main_help(stderr);
    return EXIT_USAGE;
  }
  if (cli_is_help(argv[1])) {
    print_main_help(stdout);
    return finish(EXIT_VALID);
  }
  int rc = main_option(argc, argv);
  if (rc >= 0)
    return finish(rc);
  for (int i = 0; i < NCOMMANDS; i++)
    if (strcmp(argv[1], commands[i].name) == 0) {
      for (int j = 2; j < argc; j++)
        if (cli_is_help(argv[j])) {
          fputs(commands[i].usage, stdout);
          return finish(EXIT_VALID);
        }
      return finish(commands[i].run(argc - 1, argv + 1));
    }
  const char *names[NCOMMANDS];
  for (int i = 0; i < NCOMMANDS; i++)
    names[i] = commands[i].name;
  const char *meant =
      mapopt_suggest(argv[1], strlen(argv[1]), names, NCOMMANDS);
  if (meant) {
    cli_error("mapopt: unknown command '%s'; did you mean '%s'?", argv[1],
              meant);
    return EXIT_USAGE;
  }
  cli_error("mapopt: unknown command '%s'", argv[1]);
  print_main_help(stderr);
  return EXIT_USAGE;
}
