/*
 * What the --help texts are also used for: each command's usage string
 * (cli_command.usage) is the one source of its documentation. From it
 * come the option names that an unknown option is compared with ("did you
 * mean '--mapper'?"), the manual pages that `mapopt --man` writes (roff,
 * installed as mapopt(1) and mapopt-COMMAND(1)), and the bash completion
 * that `mapopt --completion bash` writes. So a new option, once it is in
 * --help, is in all of them.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

/* ---- options --------------------------------------------------------------
 */

size_t cli_usage_options(const char *usage, char (*names)[CLI_OPTION_LEN]) {
  size_t n = 0;
  for (const char *p = usage; *p && n < CLI_MAX_OPTIONS; p++) {
    /* An option starts a word: "-x" or "--name", after a space, a line
     * start or an opening bracket. */
    bool start = p == usage || strchr(" \n[(|", p[-1]);
    if (!start || p[0] != '-')
      continue;
    const char *q = p + (p[1] == '-' ? 2 : 1);
    if (!islower((unsigned char)*q))
      continue;
    while (islower((unsigned char)*q) || isdigit((unsigned char)*q) ||
           (*q == '-' && islower((unsigned char)q[1])))
      q++;
    size_t len = (size_t)(q - p);
    if (len >= CLI_OPTION_LEN || (*q && !strchr(" \n]),|=", *q)))
      continue;
    bool seen = false;
    for (size_t i = 0; i < n && !seen; i++)
      seen = strlen(names[i]) == len && memcmp(names[i], p, len) == 0;
    if (!seen) {
      memcpy(names[n], p, len);
      names[n++][len] = '\0';
    }
    p = q - 1;
  }
  return n;
}

int cli_unknown_option(const char *cmd, const char *opt) {
  const cli_command *c = cli_find_command(cmd);
  char names[CLI_MAX_OPTIONS][CLI_OPTION_LEN];
  const char *list[CLI_MAX_OPTIONS];
  size_t n = c ? cli_usage_options(c->usage, names) : 0;
  for (size_t i = 0; i < n; i++)
    list[i] = names[i];
  const char *meant = mapopt_suggest(opt, strlen(opt), list, n);
  if (meant)
    return cli_usage_error(cmd, "unknown option '%s'; did you mean '%s'?", opt,
                           meant);
  return cli_usage_error(cmd, "unknown option '%s'", opt);
}
