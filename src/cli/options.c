/*
 * Reading a command's arguments: options and their values, operands,
 * numbers, --region-keys, and the option names of a --help text, with
 * which an unknown option is compared ("did you mean '--mapper'?").
 */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

bool cli_is_help(const char *arg) {
  return strcmp(arg, "-h") == 0 || strcmp(arg, "--help") == 0;
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

bool cli_region_keys(const char *arg, mapopt_region_keys_mode *mode) {
  static const char *const names[] = {"auto", "names", "positions", "both"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(arg, names[i]) == 0) {
      *mode = (mapopt_region_keys_mode)i;
      return true;
    }
  return false;
}

/* Adds the option at p (up to where it ends) to names, once. Returns its
 * end, or p + 1 when p starts no option. */
static const char *take_option(const char *p, char (*names)[CLI_OPTION_LEN],
                               size_t *n) {
  const char *q = p + (p[1] == '-' ? 2 : 1);
  if (p[0] != '-' || !islower((unsigned char)*q))
    return p + 1;
  while (islower((unsigned char)*q) || isdigit((unsigned char)*q) ||
         (*q == '-' && islower((unsigned char)q[1])))
    q++;
  size_t len = (size_t)(q - p);
  if (len >= CLI_OPTION_LEN || (*q && !strchr(" \n]),|=", *q)))
    return q;
  for (size_t i = 0; i < *n; i++)
    if (strlen(names[i]) == len && memcmp(names[i], p, len) == 0)
      return q;
  if (*n < CLI_MAX_OPTIONS) {
    memcpy(names[*n], p, len);
    names[(*n)++][len] = '\0';
  }
  return q;
}

/* Options are named in the synopsis (the lines before the first blank
 * line) and at the start of the option lines ("  --point P --space S  an
 * index point"), never in the prose around them. */
size_t cli_usage_options(const char *usage, char (*names)[CLI_OPTION_LEN]) {
  size_t n = 0;
  bool synopsis = true;
  for (const char *l = usage; *l;) {
    const char *e = strchr(l, '\n');
    size_t len = e ? (size_t)(e - l) : strlen(l);
    size_t ind = 0;
    while (ind < len && l[ind] == ' ')
      ind++;
    if (ind == len)
      synopsis = false;
    /* The part that may name options: the whole synopsis line, or an
     * option line's tag (up to its gap). */
    size_t end = 0;
    if (synopsis)
      end = len;
    else if (ind <= 2 && l[ind] == '-')
      for (end = ind;
           end < len && !(l[end] == ' ' && end + 1 < len && l[end + 1] == ' ');)
        end++;
    for (const char *p = l + ind; p < l + end;)
      p = (p == l || strchr(" [|", p[-1])) ? take_option(p, names, &n) : p + 1;
    l += len + (e ? 1 : 0);
  }
  return n;
}

/* The --help text of the command being run (cli_set_command_usage). */
static const char *command_usage;

void cli_set_command_usage(const char *usage) {
  command_usage = usage;
}

int cli_unknown_option(const char *cmd, const char *opt) {
  char names[CLI_MAX_OPTIONS][CLI_OPTION_LEN];
  const char *list[CLI_MAX_OPTIONS];
  size_t n = command_usage ? cli_usage_options(command_usage, names) : 0;
  for (size_t i = 0; i < n; i++)
    list[i] = names[i];
  const char *meant = mapopt_suggest(opt, strlen(opt), list, n);
  if (meant)
    return cli_usage_error(cmd, "unknown option '%s'; did you mean '%s'?", opt,
                           meant);
  return cli_usage_error(cmd, "unknown option '%s'", opt);
}
