/*
 * `mapopt eval`: evaluate one mapper by running a command, the way the
 * tuner will (docs/real.md), to try a command setup before tuning with it.
 * The mapper is checked with the real parser first and not run when it is
 * invalid. The report is the evaluation's one-line summary and the wall
 * time of each run; for a failed run, also the end of what the command
 * printed; with --json, the whole result.
 */
#include <inttypes.h>
#include <jansson.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

const char cli_eval_usage[] =
    "usage: mapopt eval MAPPER.map --run 'CMD ... {mapper} ...' [OPTIONS]\n\n"
    "Evaluates the mapper as the tuner would: writes it to a file in a\n"
    "fresh private directory, runs CMD with {mapper} replaced by the file's\n"
    "path (in that directory, in its own session), and reads the\n"
    "metric from what CMD prints. Prints the result's summary and the wall\n"
    "time of each run; for a failed run, the end of the output.\n\n"
    "  --run CMD          the command. Split into words like /bin/sh would\n"
    "                     ('...', \"...\", backslash) but run without a\n"
    "                     shell; shell syntax ($, |, >, ...) is an error.\n"
    "                     {mapper} may stand inside a word (-m={mapper})\n"
    "  --shell            run /bin/sh -c CMD instead; {mapper} becomes a\n"
    "                     quoted reference to $MAPOPT_MAPPER\n"
    "  --timeout S        seconds each run may take before its process\n"
    "                     group gets SIGTERM (default 600)\n"
    "  --grace S          seconds from SIGTERM to SIGKILL (default 2)\n"
    "  --metric REGEX     POSIX extended regex whose first group is the\n"
    "                     metric; the last match counts (default: 'achieved\n"
    "                     GFLOPS per node: x', 'GFLOPS = x', 'ELAPSED TIME =\n"
    "                     x s', the first of these found)\n"
    "  --direction lower|higher  which custom metric is better (default\n"
    "                     lower)\n"
    "  --repeat N         runs; the median metric is reported (default 1)\n"
    "  --keep             keep the private directory (its path on stderr)\n"
    "  --tmpdir DIR       make private directories in DIR (default $TMPDIR\n"
    "                     or /tmp); on a cluster, a shared file system\n"
    "  --workdir DIR      run CMD in DIR instead of the private directory\n"
    "  --env NAME=VALUE   set a variable for CMD (repeatable)\n"
    "  --machine M        machine the mapper is checked against: preset,\n"
    "                     JSON file or shape (default p100x4)\n"
    "  --json             print the whole result as JSON on stdout\n\n"
    "Exit status: 0 the runs succeeded with a metric, 1 invalid mapper or a\n"
    "run that failed, crashed, timed out or printed no metric, 2 usage\n"
    "error.\n";

enum { TAIL_LINES = 20 };

typedef struct eval_args {
  const char *mapper;
  bool json;
  cli_eval_settings run;
  mapopt_machine_shape shape;
} eval_args;

static int parse_eval_args(int argc, char **argv, eval_args *a) {
  memset(a, 0, sizeof *a);
  cli_eval_defaults(&a->run);
  mapopt_shape_default(&a->shape);
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i];
    static const char *const valued[] = {"--machine", NULL};
    const char *val;
    bool taken;
    if (cli_eval_option("eval", argc, argv, &i, &a->run, &taken) != EXIT_VALID)
      return EXIT_USAGE;
    if (taken)
      continue;
    if (cli_option_value("eval", valued, argc, argv, &i, &val) != EXIT_VALID)
      return EXIT_USAGE;
    if (!strcmp(o, "--machine")) {
      if (!cli_machine_shape(val, &a->shape))
        return EXIT_INVALID;
    } else if (!strcmp(o, "--json")) {
      a->json = true;
    } else if (cli_operand("eval", o, &a->mapper, "mapper file") !=
               EXIT_VALID) {
      return EXIT_USAGE;
    }
  }
  if (!a->mapper)
    return cli_usage_error("eval", "no mapper file given");
  if (!a->run.opts.run)
    return cli_usage_error("eval", "no command given: --run 'CMD ... "
                                   "{mapper} ...'");
  if (a->run.timeout_s == 0)
    a->run.timeout_s = mapopt_eval_timeout(NULL, 0);
  return cli_eval_finish("eval", &a->run);
}

/* text as a JSON string. jansson takes only valid UTF-8: output that is
 * not is given with every non-ASCII byte as '?'. */
static json_t *json_text(const char *text, size_t len) {
  json_t *j = json_stringn(text, len);
  if (j)
    return j;
  char *copy = malloc(len + 1);
  if (!copy)
    return json_null();
  for (size_t i = 0; i < len; i++)
    copy[i] = (unsigned char)text[i] < 0x80 ? text[i] : '?';
  j = json_stringn(copy, len);
  free(copy);
  return j ? j : json_null();
}

static json_t *json_number(double v) {
  return isfinite(v) ? json_real(v) : json_null();
}

static json_t *result_json(const char *mapper, const mapopt_eval_result *r) {
  json_t *o = json_object();
  json_object_set_new(o, "mapper", json_string(mapper));
  json_object_set_new(o, "status",
                      json_string(mapopt_eval_status_name(r->status)));
  json_object_set_new(o, "summary", json_text(r->summary, strlen(r->summary)));
  json_t *cmd = json_array();
  for (char **p = r->argv; p && *p; p++)
    json_array_append_new(cmd, json_text(*p, strlen(*p)));
  json_object_set_new(o, "command", cmd);
  json_object_set_new(o, "exit_code",
                      r->exit_code >= 0 ? json_integer(r->exit_code)
                                        : json_null());
  json_object_set_new(o, "signal",
                      r->signal ? json_integer(r->signal) : json_null());
  json_object_set_new(o, "timeout_s", json_real(r->timeout_s));
  json_t *metric = json_null();
  if (r->metric_name) {
    metric = json_object();
    json_object_set_new(metric, "name", json_string(r->metric_name));
    json_object_set_new(metric, "unit", json_string(r->metric_unit));
    json_object_set_new(metric, "direction",
                        json_string(mapopt_eval_direction_name(r->direction)));
    json_object_set_new(metric, "value", json_number(r->metric));
  }
  json_object_set_new(o, "metric", metric);
  json_object_set_new(o, "runs", json_integer(r->runs));
  json_t *values = json_array(), *walls = json_array();
  for (int i = 0; i < r->runs; i++) {
    json_array_append_new(values, json_number(r->values[i]));
    json_array_append_new(walls, json_number(r->wall_s[i]));
  }
  json_object_set_new(o, "values", values);
  json_object_set_new(o, "wall_s", walls);
  json_object_set_new(o, "output", json_text(r->output, r->output_len));
  json_object_set_new(o, "output_bytes",
                      json_integer((json_int_t)r->output_bytes));
  json_object_set_new(o, "output_dropped",
                      json_integer((json_int_t)r->output_dropped));
  json_object_set_new(o, "dir", r->dir ? json_string(r->dir) : json_null());
  return o;
}

/* The summary, the wall times, and for a failure the output's last lines. */
static void print_result(const mapopt_eval_result *r) {
  printf("%s\n", r->summary);
  if (r->runs > 0 && r->status != MAPOPT_EVAL_START_FAILED) {
    printf("wall time per run:");
    for (int i = 0; i < r->runs; i++)
      printf(" %.3f", r->wall_s[i]);
    printf(" s\n");
  }
  if (r->status == MAPOPT_EVAL_OK || r->status == MAPOPT_EVAL_START_FAILED)
    return;
  /* The start of the last TAIL_LINES lines. */
  const char *start = r->output + r->output_len;
  if (start > r->output && start[-1] == '\n')
    start--;
  for (int lines = 0; start > r->output; start--)
    if (start[-1] == '\n' && ++lines == TAIL_LINES)
      break;
  if (r->output_len == 0) {
    printf("--- no output ---\n");
    return;
  }
  printf("--- %s of the output (%" PRIu64 " bytes in all) ---\n",
         start == r->output ? "all" : "the end", r->output_bytes);
  fwrite(start, 1, (size_t)(r->output + r->output_len - start), stdout);
  if (r->output_len && r->output[r->output_len - 1] != '\n')
    putchar('\n');
}

int cli_eval(int argc, char **argv) {
  eval_args a;
  int rc = parse_eval_args(argc, argv, &a);
  if (rc != EXIT_VALID)
    return rc;
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  mapopt_evaluator *ev = NULL;
  mapopt_program *prog = NULL;
  mapopt_eval_result *r = NULL;
  char *text = NULL;
  size_t len = 0;
  /* A signal ends the command (its summary says interrupted, exit 1). */
  a.run.opts.stop = cli_catch_signals();
  /* A bad command setup is a usage error, reported before the mapper. */
  mapopt_status st = mapopt_eval_new(ctx, &a.run.opts, diags, &ev);
  if (st != MAPOPT_OK) {
    cli_print_diags(stderr, diags, 0);
    rc = st == MAPOPT_EINVAL ? cli_usage_error("eval", "invalid command "
                                                       "setup")
                             : EXIT_INVALID;
    goto done;
  }
  rc = EXIT_INVALID;
  mapopt_dsl_options dopts = {.file = a.mapper, .shape = &a.shape};
  if (mapopt_file_read(ctx, a.mapper, diags, &text, &len) != MAPOPT_OK ||
      (st = mapopt_dsl_compile(ctx, text, len, &dopts, diags, &prog)) !=
          MAPOPT_OK) {
    cli_print_diags(stderr, diags, 0);
    if (st == MAPOPT_ENOMEM)
      fprintf(stderr, "mapopt eval: out of memory\n");
    cli_error("mapopt eval: %s was not run", a.mapper);
    goto done;
  }
  cli_print_diags(stderr, diags, 0); /* the mapper's warnings */
  mapopt_diags_clear(diags);
  /* The command's output is captured: only the progress line shows. */
  cli_progress *progress = cli_progress_start("eval");
  cli_progress_phase(progress, a.run.opts.repeat > 1 ? "running the command "
                                                       "(repeated)"
                                                     : "running the command");
  st = mapopt_eval_run(ev, text, len, a.run.timeout_s, diags, &r);
  cli_progress_stop(progress);
  if (st != MAPOPT_OK) {
    cli_print_diags(stderr, diags, 0);
    fprintf(stderr, "mapopt eval: %s\n", mapopt_strerror(st));
    goto done;
  }
  if (a.json)
    cli_print_json("evaluation", result_json(a.mapper, r));
  else
    print_result(r);
  if (r->dir)
    cli_error("mapopt eval: kept %s", r->dir);
  rc = r->status == MAPOPT_EVAL_OK ? EXIT_VALID : EXIT_INVALID;
done:
  mapopt_eval_result_free(r);
  mapopt_text_free(text);
  mapopt_dsl_free(prog);
  mapopt_eval_free(ev);
  cli_close(ctx, diags);
  return rc;
}
