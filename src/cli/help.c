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

/* ---- options ------------------------------------------------------------- */

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

/* ---- manual pages -------------------------------------------------------- */

/* Text as roff: backslashes and hyphens escaped, a line that would start
 * with a control character protected. */
static void roff_text(FILE *f, const char *s, size_t n, bool line_start) {
  for (size_t i = 0; i < n; i++) {
    char c = s[i];
    if (line_start && (c == '.' || c == '\''))
      fputs("\\&", f);
    line_start = false;
    if (c == '\\')
      fputs("\\e", f);
    else if (c == '-')
      fputs("\\-", f);
    else
      fputc(c, f);
  }
}

static size_t indent_of(const char *l, size_t n) {
  size_t k = 0;
  while (k < n && l[k] == ' ')
    k++;
  return k;
}

/* Where the gap of two or more spaces after a tag ends ("--json  print"):
 * the start of the description, or 0 when the line has no such gap. */
static size_t gap_end(const char *l, size_t n, size_t from) {
  for (size_t i = from; i + 1 < n; i++)
    if (l[i] == ' ' && l[i + 1] == ' ') {
      size_t k = i;
      while (k < n && l[k] == ' ')
        k++;
      return k < n ? k : 0;
    }
  return 0;
}

/*
 * The body of a --help text (after its synopsis) as roff: paragraphs of
 * text; option lines ("  --name V   what it does", with continuation lines
 * indented further) as tagged paragraphs; a short tag near the margin
 * followed by a gap ("show   prints ...", "  check    parse ...")
 * likewise.
 */
static void roff_body(FILE *f, const char *body) {
  bool in_item = false, para = true;
  size_t item_indent = 0;
  for (const char *l = body; *l;) {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    size_t ind = indent_of(l, n);
    size_t desc = gap_end(l, n, ind);
    if (ind == n) { /* a blank line ends a paragraph */
      in_item = false;
      para = true;
    } else if (in_item && ind > item_indent &&
               (l[ind] != '-' || ind > item_indent + 2)) {
      fputc(' ', f);
      roff_text(f, l + ind, n - ind, false);
    } else if (ind <= 2 && (l[ind] == '-' || (desc && desc - ind < 12))) {
      size_t tag_end = desc ? desc : n;
      while (tag_end > ind && l[tag_end - 1] == ' ')
        tag_end--;
      fputs("\n.TP\n.B ", f);
      roff_text(f, l + ind, tag_end - ind, false);
      fputc('\n', f);
      if (desc)
        roff_text(f, l + desc, n - desc, true);
      in_item = true;
      item_indent = ind;
      para = false;
    } else {
      fputs(para ? "\n.PP\n" : " ", f);
      roff_text(f, l + ind, n - ind, para);
      in_item = para = false;
    }
    l += n + (e ? 1 : 0);
  }
  fputc('\n', f);
}

/* The synopsis: the "usage:" line and the lines under it, up to the first
 * blank line; returns where the body starts. */
static const char *roff_synopsis(FILE *f, const char *usage) {
  fputs(".SH SYNOPSIS\n.nf\n", f);
  const char *l = usage;
  while (*l && *l != '\n') {
    const char *e = strchr(l, '\n');
    size_t n = e ? (size_t)(e - l) : strlen(l);
    const char *t = l;
    if (strncmp(t, "usage: ", 7) == 0)
      t += 7;
    while (*t == ' ')
      t++;
    roff_text(f, t, n - (size_t)(t - l), true);
    fputc('\n', f);
    l += n + (e ? 1 : 0);
  }
  fputs(".fi\n.SH DESCRIPTION", f);
  return *l ? l + 1 : l;
}

static void roff_header(FILE *f, const char *page, const char *name,
                        const char *summary) {
  fputs(".\\\" Generated by mapopt --man from its --help texts.\n", f);
  fputs(".TH ", f);
  for (const char *p = page; *p; p++)
    fputc(*p >= 'a' && *p <= 'z' ? *p - 'a' + 'A' : *p, f);
  fprintf(f, " 1 \"\" \"mapopt %s\" \"mapopt manual\"\n.SH NAME\n",
          MAPOPT_VERSION);
  roff_text(f, name, strlen(name), true);
  fputs(" \\- ", f);
  roff_text(f, summary, strlen(summary), false);
  fputc('\n', f);
}

void cli_write_man(FILE *f, const cli_command *c, const char *main_help) {
  size_t n;
  const cli_command *all = cli_commands(&n);
  if (c) {
    char page[64];
    snprintf(page, sizeof page, "mapopt-%s", c->name);
    roff_header(f, page, page, c->summary);
    roff_body(f, roff_synopsis(f, c->usage));
    fputs(".SH SEE ALSO\n.BR mapopt (1)\n", f);
    return;
  }
  roff_header(f, "mapopt", "mapopt",
              "write and tune mappers for task-based parallel programs");
  roff_body(f, roff_synopsis(f, main_help));
  fputs(".SH SEE ALSO\n", f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, ".BR mapopt\\-%s (1)%s\n", all[i].name, i + 1 < n ? "," : "");
}

/* ---- bash completion ----------------------------------------------------- */

/* The options of a command that take a file name as their value. */
static bool takes_file(const char *opt) {
  static const char *const files[] = {"--mapper",  "--compare", "--report",
                                      "--trace",   "--output",  "--tmpdir",
                                      "--workdir", NULL};
  for (const char *const *f = files; *f; f++)
    if (strcmp(opt, *f) == 0)
      return true;
  return false;
}

void cli_write_completion(FILE *f, const char *main_help) {
  size_t n;
  const cli_command *all = cli_commands(&n);
  char names[CLI_MAX_OPTIONS][CLI_OPTION_LEN];
  fputs("# bash completion for mapopt; generated by "
        "`mapopt --completion bash`\n"
        "# from the --help texts.\n"
        "_mapopt() {\n"
        "  local cur=${COMP_WORDS[COMP_CWORD]} "
        "prev=${COMP_WORDS[COMP_CWORD-1]} opts=\n"
        "  if [ \"$COMP_CWORD\" -eq 1 ]; then\n"
        "    COMPREPLY=($(compgen -W \"",
        f);
  for (size_t i = 0; i < n; i++)
    fprintf(f, "%s ", all[i].name);
  size_t k = cli_usage_options(main_help, names);
  for (size_t i = 0; i < k; i++)
    fprintf(f, "%s%s", names[i], i + 1 < k ? " " : "");
  fputs("\" -- \"$cur\"))\n    return\n  fi\n  case $prev in\n", f);
  fputs("    --machine)\n      COMPREPLY=($(compgen -W \"", f);
  for (const char *const *m = mapopt_machine_presets(); *m; m++)
    fprintf(f, "%s ", *m);
  fputs("local\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n      return;;\n"
        "    --app)\n      COMPREPLY=($(compgen -W \"",
        f);
  for (const char *const *a = mapopt_app_builtins(); *a; a++)
    fprintf(f, "%s ", *a);
  fputs("\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n      return;;\n", f);
  /* File-valued options of any command, each once. */
  bool first = true;
  char seen[CLI_MAX_OPTIONS][CLI_OPTION_LEN];
  size_t nseen = 0;
  for (size_t i = 0; i < n; i++) {
    k = cli_usage_options(all[i].usage, names);
    for (size_t j = 0; j < k; j++) {
      bool dup = false;
      for (size_t m = 0; m < nseen && !dup; m++)
        dup = strcmp(seen[m], names[j]) == 0;
      if (!takes_file(names[j]) || dup || nseen == CLI_MAX_OPTIONS)
        continue;
      strcpy(seen[nseen++], names[j]);
      fprintf(f, "%s%s", first ? "    " : "|", names[j]);
      first = false;
    }
  }
  if (!first)
    fputs(")\n      COMPREPLY=($(compgen -f -- \"$cur\"))\n      return;;\n",
          f);
  fputs("  esac\n  case ${COMP_WORDS[1]} in\n", f);
  for (size_t i = 0; i < n; i++) {
    k = cli_usage_options(all[i].usage, names);
    fprintf(f, "    %s) opts=\"", all[i].name);
    for (size_t j = 0; j < k; j++)
      fprintf(f, "%s ", names[j]);
    fputs("--help\";;\n", f);
  }
  fputs("  esac\n"
        "  if [[ $cur == -* ]]; then\n"
        "    COMPREPLY=($(compgen -W \"$opts\" -- \"$cur\"))\n"
        "  elif [ \"$COMP_CWORD\" -eq 2 ] && [[ ${COMP_WORDS[1]} == sim ]]; "
        "then\n"
        "    COMPREPLY=($(compgen -W \"",
        f);
  for (const char *const *a = mapopt_app_builtins(); *a; a++)
    fprintf(f, "%s ", *a);
  fputs("\" -- \"$cur\") $(compgen -f -- \"$cur\"))\n"
        "  else\n"
        "    COMPREPLY=($(compgen -f -- \"$cur\"))\n"
        "  fi\n"
        "}\n"
        "complete -o filenames -F _mapopt mapopt\n",
        f);
}
