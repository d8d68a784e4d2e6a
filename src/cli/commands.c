/*
 * The commands of mapopt: each one's name, summary, --help text and entry
 * point, in the order `mapopt --help` lists them. main.c dispatches
 * through this table and help.c makes the manual pages and the completion
 * from it; no command file looks a command up here (a command's unknown
 * option is matched against the --help text main.c hands to options.c),
 * so the table's references to the commands close no circle.
 */
#include <string.h>

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
    {"calibrate",
     "fit the machine and kernel efficiencies to the real runs of a database",
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

const char *cli_suggest_command(const char *name) {
  const char *names[NCOMMANDS];
  for (int i = 0; i < NCOMMANDS; i++)
    names[i] = commands[i].name;
  return mapopt_suggest(name, strlen(name), names, NCOMMANDS);
}
