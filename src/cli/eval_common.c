/*
 * The options of the command evaluator, shared by `mapopt eval` (one
 * mapper) and `mapopt tune --run` (every candidate): the command and its
 * shell mode, the time limit and grace, the metric and its direction,
 * repeats, where the command runs and keeps its files, and its variables.
 * Each option is parsed here once; the values are kept as given too, so
 * that a command line that reruns a tuning run can give them back.
 */
#include <string.h>

#include "cli/cli.h"

void cli_eval_defaults(cli_eval_settings *s) {
  memset(s, 0, sizeof *s);
}

/* Keeps the word of an option with its value for cli_eval_words. */
static void keep(cli_eval_settings *s, const char *o, const char *v) {
  if (s->nwords + 2 <= sizeof s->words / sizeof s->words[0]) {
    s->words[s->nwords++] = o;
    if (v)
      s->words[s->nwords++] = v;
  }
}

int cli_eval_option(const char *cmd, int argc, char **argv, int *i,
                    cli_eval_settings *s, bool *taken) {
  static const char *const valued[] = {
      "--run",    "--timeout", "--grace",   "--metric", "--direction",
      "--repeat", "--tmpdir",  "--workdir", "--env",    "--repeat-max",
      "--check",  "--screen",  NULL};
  static const char *const flags[] = {"--shell", "--keep", NULL};
  const char *o = argv[*i], *v = NULL;
  *taken = false;
  for (const char *const *f = flags; *f; f++)
    *taken |= !strcmp(o, *f);
  for (const char *const *f = valued; *f && !*taken; f++)
    *taken |= !strcmp(o, *f);
  if (!*taken)
    return EXIT_VALID;
  if (cli_option_value(cmd, valued, argc, argv, i, &v) != EXIT_VALID)
    return EXIT_USAGE;
  int64_t n;
  if (!strcmp(o, "--run")) {
    s->opts.run = v;
  } else if (!strcmp(o, "--shell")) {
    s->opts.shell = true;
  } else if (!strcmp(o, "--timeout")) {
    if (!cli_parse_double(v, 1e-3, 1e7, &s->timeout_s))
      return cli_usage_error(cmd, "--timeout must be 0.001 to 1e7 seconds");
  } else if (!strcmp(o, "--grace")) {
    if (!cli_parse_double(v, 0.01, 600, &s->opts.grace_s))
      return cli_usage_error(cmd, "--grace must be 0.01 to 600 seconds");
  } else if (!strcmp(o, "--metric")) {
    s->opts.metric = v;
  } else if (!strcmp(o, "--direction")) {
    if (!strcmp(v, "lower"))
      s->opts.direction = MAPOPT_EVAL_LOWER;
    else if (!strcmp(v, "higher"))
      s->opts.direction = MAPOPT_EVAL_HIGHER;
    else
      return cli_usage_error(cmd, "--direction takes lower or higher");
  } else if (!strcmp(o, "--repeat")) {
    if (!cli_parse_i64(v, 1, 1000, &n))
      return cli_usage_error(cmd, "--repeat must be 1 to 1000");
    s->opts.repeat = (int)n;
  } else if (!strcmp(o, "--repeat-max") || !strcmp(o, "--check") ||
             !strcmp(o, "--screen")) {
    bool check = !strcmp(o, "--check"), screen = !strcmp(o, "--screen");
    if (strcmp(cmd, "tune"))
      return cli_usage_error(cmd, "%s is an option of mapopt tune --run", o);
    /* Screening's real runs of a round are at most the most --jobs. */
    if (!cli_parse_i64(v, check ? 0 : 1, screen ? 64 : 1000, &n))
      return cli_usage_error(cmd, "%s must be %s to %d", o,
                             check ? "0 (no final check)" : "1",
                             screen ? 64 : 1000);
    if (check)
      s->check_rounds = n ? (int)n : -1;
    else if (screen)
      s->screen = (int)n;
    else
      s->repeat_max = (int)n;
  } else if (!strcmp(o, "--keep")) {
    s->opts.keep = true;
  } else if (!strcmp(o, "--tmpdir")) {
    s->opts.tmpdir = v;
  } else if (!strcmp(o, "--workdir")) {
    s->opts.workdir = v;
  } else if (!strcmp(o, "--env")) {
    if (s->nenv == CLI_MAX_ENV)
      return cli_usage_error(cmd, "at most %d --env", CLI_MAX_ENV);
    s->env[s->nenv++] = v;
  }
  keep(s, o, v);
  return EXIT_VALID;
}

int cli_eval_finish(const char *cmd, cli_eval_settings *s) {
  if (s->opts.direction == MAPOPT_EVAL_HIGHER && !s->opts.metric)
    return cli_usage_error(cmd, "--direction applies to a --metric: the "
                                "default metrics have their own");
  s->opts.env = s->env;
  return EXIT_VALID;
}

size_t cli_eval_words(const cli_eval_settings *s, const char *const **words) {
  *words = s->words;
  return s->nwords;
}
