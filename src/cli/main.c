/*
 * mapopt: the command-line program. main() dispatches to one subcommand
 * of the table (commands.c); each prints its own --help, the one text from
 * which its manual page and the bash completion are made too (help.c).
 * Exit status: 0 success, 1 invalid input (a mapper with errors, a failed
 * run), 2 usage error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

static void print_main_help(FILE *f) {
  fprintf(f, "usage: mapopt COMMAND [OPTIONS] [ARGS]\n"
             "       mapopt --help | --version | --man [COMMAND] | "
             "--completion bash\n\n"
             "mapopt writes and tunes mappers for task-based parallel "
             "programs.\n\ncommands:\n");
  size_t n;
  const cli_command *commands = cli_commands(&n);
  for (size_t i = 0; i < n; i++)
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
    size_t n;
    const cli_command *commands = cli_commands(&n);
    for (size_t i = 0; i < n; i++)
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
  const cli_command *command = cli_find_command(argv[1]);
  if (command) {
    for (int j = 2; j < argc; j++)
      if (cli_is_help(argv[j])) {
        fputs(command->usage, stdout);
        return finish(EXIT_VALID);
      }
    cli_set_command_usage(command->usage);
    return finish(command->run(argc - 1, argv + 1));
  }
  const char *meant = cli_suggest_command(argv[1]);
  if (meant) {
    cli_error("mapopt: unknown command '%s'; did you mean '%s'?", argv[1],
              meant);
    return EXIT_USAGE;
  }
  cli_error("mapopt: unknown command '%s'", argv[1]);
  print_main_help(stderr);
  return EXIT_USAGE;
}
