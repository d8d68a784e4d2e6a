/*
 * `mapopt space` and `mapopt tune`.
 *
 * space prints the search space of an application on a machine -- every
 * parameter with its values, as a table or as JSON -- or renders one point
 * of it (a JSON object of choices) as DSL text: what another autotuner
 * needs to drive mapopt.
 *
 * tune runs the tuning driver (mapopt_tune_run): it shows progress, keeps
 * every evaluation in the database, writes the best mapper (never over an
 * existing file without --force) and compares it with the expert and
 * default mappers and the lower bound. Ctrl-C (and SIGTERM, SIGHUP,
 * SIGQUIT) stops, ending the real runs in flight; --resume continues. With
 * --run, candidates are run by a command (the options of mapopt eval,
 * eval_common.c) instead of simulated.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <jansson.h>

#include "cli/cli.h"
#include "mapopt/sim.h"

/* ---- space -------------------------------------------------------------- */

const char cli_space_usage[] =
    "usage: mapopt space APP[:SIZE] [--machine M] [--start FILE "
    "[--no-portable]] [--json]\n"
    "       mapopt space APP[:SIZE] [--machine M] [--start FILE "
    "[--no-portable]]\n"
    "                   --render CHOICES.json\n\n"
    "Prints the search space of mappers of APP on the machine M: every\n"
    "parameter with its values (value 0 is always 'default': no statement).\n"
    "With --render, prints the mapper (DSL text) of one point of the space,\n"
    "given as a JSON object {\"PARAMETER\": \"VALUE\", ...} (a value may also\n"
    "be its index; parameters not named are default); '-' reads standard\n"
    "input. Another autotuner can drive mapopt this way.\n\n"
    "  --machine M    preset[:params], machine JSON file or one-line shape\n"
    "                 (default p100x4)\n"
    "  --start FILE   the space over this mapper: 'default' keeps its\n"
    "                 decisions, the space's statements take precedence;\n"
    "                 refused with a portability warning (docs/legion.md)\n"
    "  --no-portable  start from a mapper with portability warnings\n"
    "  --json         {\"parameters\": [{\"name\", \"kind\", \"values\", "
    "...}]}\n\n"
    "Exit status: 0 ok, 1 invalid input (a bad choice: file:line:col), 2\n"
    "usage error.\n";

/*
 * Reads the --start mapper (NULL path: none). Unless no_portable, a mapper
 * with a portability warning (P01-P28, docs/legion.md) is refused: what
 * the tuner writes over it would not load in the DSL mapper of Legion, or
 * would mean something else there. The warnings and the reason are then
 * in diags (MAPOPT_ELOAD).
 */
static mapopt_status read_start(mapopt_ctx *ctx, const char *path,
                                const mapopt_machine_shape *shape,
                                bool no_portable, mapopt_diags *diags,
                                char **text, size_t *len) {
  *text = NULL;
  *len = 0;
  if (!path)
    return MAPOPT_OK;
  mapopt_status st = mapopt_file_read(ctx, path, diags, text, len);
  if (st != MAPOPT_OK || no_portable)
    return st;
  mapopt_dsl_options o = {.file = path, .shape = shape, .portable = true};
  mapopt_diags *pd;
  if (mapopt_diags_new(ctx, &pd) != MAPOPT_OK)
    return MAPOPT_ENOMEM;
  mapopt_program *prog = NULL;
  /* A mapper that does not compile is reported by the space itself. */
  if (mapopt_dsl_compile(ctx, *text, *len, &o, pd, &prog) != MAPOPT_OK)
    mapopt_diags_clear(pd);
  mapopt_dsl_free(prog);
  size_t p = 0;
  for (size_t i = 0; i < mapopt_diags_count(pd); i++) {
    const mapopt_diag *d = mapopt_diags_get(pd, i);
    if (d->code[0] == 'P' && ++p &&
        mapopt_diags_add(diags, d->severity, d->code, d->file, d->line, d->col,
                         "%s", d->message) != MAPOPT_OK)
      st = MAPOPT_ENOMEM;
  }
  mapopt_diags_free(pd);
  if (st != MAPOPT_OK || !p)
    return st;
  mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", path, 0, 0,
                   "the start mapper has %zu portability warning%s: the DSL "
                   "mapper of Legion would not load what the tuner writes "
                   "over it, or would read it differently (docs/legion.md); "
                   "give --no-portable to start from it anyway",
                   p, p == 1 ? "" : "s");
  return MAPOPT_ELOAD;
}

static void print_space_table(const mapopt_space *sp) {
  size_t n = mapopt_space_nparams(sp), w = 9;
  for (size_t i = 0; i < n; i++) {
    size_t l = strlen(mapopt_space_param_at(sp, i)->name);
    w = l > w ? l : w;
  }
  printf("%zu parameters\n%-*s  values\n", n, (int)w, "parameter");
  for (size_t i = 0; i < n; i++) {
    const mapopt_space_param *p = mapopt_space_param_at(sp, i);
    printf("%-*s ", (int)w, p->name);
    for (size_t v = 0; v < p->nvalues; v++)
      printf(" %s", p->values[v]);
    putchar('\n');
  }
}

/* Reads CHOICES.json ('-': stdin) and prints its mapper. */
static int render(mapopt_ctx *ctx, const mapopt_space *sp, const char *path,
                  mapopt_diags *diags) {
  char *text = NULL;
  size_t len = 0;
  bool from_stdin = !strcmp(path, "-");
  if (from_stdin) {
    if (!(text = cli_read_stdin(&len))) {
      fprintf(stderr, "mapopt space: out of memory\n");
      return EXIT_INVALID;
    }
  } else if (mapopt_file_read(ctx, path, diags, &text, &len) != MAPOPT_OK) {
    return EXIT_INVALID;
  }
  size_t n = mapopt_space_nparams(sp);
  uint16_t *choice = calloc(n ? n : 1, sizeof *choice);
  char *dsl = NULL;
  size_t dlen;
  int rc = EXIT_INVALID;
  if (choice &&
      mapopt_space_choice_from_json(sp, from_stdin ? "<stdin>" : path, text,
                                    len, diags, choice) == MAPOPT_OK &&
      mapopt_space_render(sp, choice, &dsl, &dlen) == MAPOPT_OK) {
    fwrite(dsl, 1, dlen, stdout);
    rc = EXIT_VALID;
  }
  mapopt_text_free(dsl);
  free(choice);
  if (from_stdin)
    free(text);
  else
    mapopt_text_free(text);
  return rc;
}

int cli_space(int argc, char **argv) {
  const char *app = NULL, *machine = "p100x4", *start = NULL, *choices = NULL;
  bool json = false, no_portable = false;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v;
    static const char *const valued[] = {"--machine", "--start", "--render",
                                         NULL};
    int rc = cli_option_value("space", valued, argc, argv, &i, &v);
    if (rc == EXIT_VALID) {
      if (!strcmp(o, "--machine"))
        machine = v;
      else if (!strcmp(o, "--start"))
        start = v;
      else if (!strcmp(o, "--render"))
        choices = v;
      else if (!strcmp(o, "--json"))
        json = true;
      else if (!strcmp(o, "--no-portable"))
        no_portable = true;
      else
        rc = cli_operand("space", o, &app, "application");
    }
    if (rc != EXIT_VALID)
      return rc;
  }
  if (!app)
    return cli_usage_error("space", "no application given");
  if (json && choices)
    return cli_usage_error("space", "--json and --render exclude each other");
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  cli_target t = {0};
  mapopt_space *sp = NULL;
  char *base = NULL, *out = NULL;
  size_t blen = 0;
  int rc = cli_target_open(ctx, "space", app, NULL, machine, diags, &t);
  if (rc != EXIT_VALID)
    goto done;
  rc = EXIT_INVALID;
  if (read_start(ctx, start, &t.sim.shape, no_portable, diags, &base, &blen) !=
      MAPOPT_OK)
    goto done;
  mapopt_space_options so = {base, blen, start, false};
  if (mapopt_space_new(ctx, t.sim.run, t.sim.machine, base ? &so : NULL, diags,
                       &sp) != MAPOPT_OK)
    goto done;
  if (choices) {
    rc = render(ctx, sp, choices, diags);
  } else if (json) {
    if (mapopt_space_to_json(sp, &out) == MAPOPT_OK) {
      fputs(out, stdout);
      if (!*out || out[strlen(out) - 1] != '\n')
        putchar('\n');
      rc = EXIT_VALID;
    }
  } else {
    printf("%s on %s: ", t.name, machine);
    print_space_table(sp);
    rc = EXIT_VALID;
  }
done:
  cli_print_diags(stderr, diags, 0);
  mapopt_text_free(out);
  mapopt_space_free(sp);
  mapopt_text_free(base);
  cli_target_close(&t);
  cli_close(ctx, diags);
  return rc;
}

/* ---- tune --------------------------------------------------------------- */

const char cli_tune_usage[] =
    "usage: mapopt tune APP[:SIZE] [OPTIONS]\n\n"
    "Tunes a mapper for APP (a built-in application or a mapopt-app/1 JSON\n"
    "file) on a simulated machine: the optimizer proposes mappers from the\n"
    "search space (mapopt space APP), each is simulated and recorded in the\n"
    "database, and the best is written to APP.best.map. It is compared with\n"
    "the default mapper (the application's, else the runtime's defaults),\n"
    "the expert mapper where one ships, and the lower bound on its time.\n\n"
    "  --machine M      preset[:params], machine JSON or one-line shape\n"
    "                   (default p100x4)\n"
    "  --optimizer O    guided (the default: acts on AutoGuide's findings),\n"
    "                   random, opentuner, ccd (docs/tuning.md) or llm (a\n"
    "                   chat model writes the mappers: docs/llm.md)\n"
    "  --budget N       evaluations (default 10)\n"
    "  --seed S         the optimizer's seed (default 0)\n"
    "  --jobs J         evaluations at once, 1 to 64 (default: the CPUs);\n"
    "                   results never depend on it\n"
    "  --batch B        candidates the optimizer plans before it is told\n"
    "                   their results (default 0: its own, guided 1, ccd\n"
    "                   16, random and opentuner 4); results depend on it\n"
    "  --db FILE        the tuning database (default mapopt-tune.db)\n"
    "  --resume         continue the latest run of these settings in the\n"
    "                   database (after Ctrl-C or a crash); a finished one\n"
    "                   is reported as it is\n"
    "  --start FILE     start from this mapper: the space's statements go\n"
    "                   in front of it; one with a portability warning\n"
    "                   (P01-P28: the DSL mapper of Legion would not load\n"
    "                   it or would read it differently) is refused\n"
    "  --no-portable    allow that, and llm replies with such warnings\n"
    "                   (by default invalid mappers; docs/legion.md)\n"
    "  --feedback L     what AutoGuide tells the optimizer of each\n"
    "                   evaluation: raw, explain, suggest or full (default)\n"
    "  --out FILE       where to write the best mapper (default\n"
    "                   APP.best.map, APP without its path and size)\n"
    "  --force          overwrite --out if it exists\n"
    "  --quiet          no progress on stderr\n"
    "  --json           print the outcome as JSON\n\n"
    "The llm optimizer's options. The server, model and key come from\n"
    "MAPOPT_LLM_BASE_URL, MAPOPT_LLM_MODEL and MAPOPT_LLM_API_KEY; the\n"
    "first two may be given here instead, the key never (docs/llm.md).\n"
    "  --llm-base-url U, --llm-model M   the server and the model\n"
    "  --samples N      mappers asked for per prompt, 1 to 64 (default 1)\n"
    "  --temperature T  0 to 2 (default 0.7)\n"
    "  --history K      earlier attempts shown in each prompt (default 5)\n"
    "  --price-in P, --price-out P   USD per million prompt / completion\n"
    "                   tokens, for the cost in the summary (default 0)\n\n"
    "Real runs (docs/real.md): --run 'CMD ... {mapper} ...' runs each\n"
    "candidate, and the expert and default mappers, with CMD instead of\n"
    "simulating it; APP and --machine must describe what CMD runs. It takes\n"
    "the options of mapopt eval: --shell, --timeout S (default: 10x the wall\n"
    "time of the best run so far, at least 5 s; 600 s until one succeeds),\n"
    "--grace, --metric, --direction, --repeat, --keep, --tmpdir, --workdir\n"
    "(only with --jobs 1) and --env. --jobs is then 1 unless given. Noise\n"
    "(docs/real.md section 13): a candidate runs --repeat times at least\n"
    "and up to --repeat-max N (default 10) while its interval reaches the\n"
    "best's; it is better only when its interval lies above; at the end\n"
    "the best and the default (and expert) mappers run interleaved\n"
    "--check N rounds (default 6, 0: none) for the speedup's interval.\n"
    "Screening (docs/real.md section 15): --screen K, 1 to 64, proposes 4K\n"
    "candidates a round, simulates each on --machine (the model: give it a\n"
    "calibrated one) and runs only the K best predicted; the others are\n"
    "recorded as screened, never best. The budget counts the real runs.\n\n"
    "Progress goes to stderr: a bar on a terminal, else one line per\n"
    "evaluation. Ctrl-C (or SIGTERM, SIGHUP, SIGQUIT) stops: simulations in\n"
    "flight finish and are kept, real runs in flight are ended (--resume\n"
    "runs them again); a second one kills.\n\n"
    "Exit status: 0 a best mapper was written, 1 invalid input, an\n"
    "existing --out, an interrupted run or no valid mapper found, 2 usage\n"
    "error.\n";

typedef struct tune_args {
  const char *app, *optimizer, *start, *out;
  cli_tune_settings set;
  mapopt_tune_llm llm;   /* the llm optimizer's settings */
  cli_eval_settings run; /* --run and its options */
  bool resume, force, quiet, json, jobs_given, llm_base_url_given;
} tune_args;

/* The real-run options' checks: each needs --run; the command's own jobs
 * default (1: runs on one machine disturb each other's timing); one
 * working directory for several evaluations at once is refused. */
static int check_run_args(tune_args *a) {
  if (!a->run.opts.run)
    return a->run.nwords
               ? cli_usage_error("tune", "%s needs --run", a->run.words[0])
               : EXIT_VALID;
  if (!a->jobs_given)
    a->set.jobs = 1;
  if (a->run.opts.workdir && a->set.jobs > 1)
    return cli_usage_error("tune", "--workdir would share one directory "
                                   "between --jobs evaluations: leave it out "
                                   "(each runs in its own) and give absolute "
                                   "paths");
  return cli_eval_finish("tune", &a->run);
}

static int parse_tune_args(int argc, char **argv, tune_args *a) {
  *a = (tune_args){.optimizer = "guided"};
  cli_tune_defaults(&a->set);
  cli_eval_defaults(&a->run);
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v;
    bool run_opt;
    if (cli_eval_option("tune", argc, argv, &i, &a->run, &run_opt) !=
        EXIT_VALID)
      return EXIT_USAGE;
    if (run_opt)
      continue;
    a->jobs_given |= !strcmp(o, "--jobs");
    a->llm_base_url_given |= !strcmp(o, "--llm-base-url");
    static const char *const valued[] = {
        "--machine",     "--optimizer",    "--db",
        "--start",       "--feedback",     "--out",
        "--budget",      "--seed",         "--jobs",
        "--batch",       "--samples",      "--history",
        "--temperature", "--llm-base-url", "--llm-model",
        "--price-in",    "--price-out",    NULL};
    bool taken;
    int rc = cli_option_value("tune", valued, argc, argv, &i, &v);
    if (rc == EXIT_VALID)
      rc = cli_tune_option("tune", o, v, &a->set, &taken);
    if (rc != EXIT_VALID)
      return rc;
    if (taken)
      continue;
    if (!strcmp(o, "--resume"))
      a->resume = true;
    else if (!strcmp(o, "--force"))
      a->force = true;
    else if (!strcmp(o, "--quiet"))
      a->quiet = true;
    else if (!strcmp(o, "--json"))
      a->json = true;
    else if (!strcmp(o, "--optimizer"))
      a->optimizer = v;
    else if (!strcmp(o, "--start"))
      a->start = v;
    else if (!strcmp(o, "--out"))
      a->out = v;
    else if (cli_operand("tune", o, &a->app, "application") != EXIT_VALID)
      return EXIT_USAGE;
  }
  if (!a->app)
    return cli_usage_error("tune", "no application given");
  if (!cli_known_optimizer(a->optimizer))
    return cli_unknown_optimizer("tune", a->optimizer);
  int rc = cli_check_llm_flags("tune", &a->set, cli_is_llm(a->optimizer));
  if (rc != EXIT_VALID)
    return rc;
  mapopt_guide_level level;
  if (mapopt_guide_level_parse(a->set.feedback, &level) != MAPOPT_OK)
    return cli_usage_error("tune", "--feedback takes raw, explain, suggest "
                                   "or full");
  return check_run_args(a);
}

/* APP.best.map from the app argument: its size spec, folder and .json
 * extension dropped ("circuit:small" -> circuit.best.map). The argument is
 * a file name as a whole when such a file exists. */
static char *default_out(const char *app) {
  struct stat sb;
  size_t n = strlen(app);
  const char *colon = strchr(app, ':');
  if (colon && stat(app, &sb) != 0)
    n = (size_t)(colon - app);
  const char *base = app;
  for (const char *p = app; p < app + n; p++)
    if (*p == '/')
      base = p + 1;
  n -= (size_t)(base - app);
  if (n > 5 && !strncmp(base + n - 5, ".json", 5))
    n -= 5;
  char *out = malloc(n + sizeof ".best.map");
  if (out) {
    memcpy(out, base, n);
    memcpy(out + n, ".best.map", sizeof ".best.map");
  }
  return out;
}

/* Appends one shell word, quoted when it needs to be. */
static void put_word(FILE *f, const char *w) {
  bool plain = *w != 0;
  for (const char *p = w; *p; p++)
    plain &= !!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                      "0123456789_.,:=/+-@%",
                      *p);
  if (plain) {
    fprintf(f, " %s", w);
    return;
  }
  fputs(" '", f);
  for (const char *p = w; *p; p++)
    if (*p == '\'')
      fputs("'\\''", f);
    else
      fputc(*p, f);
  fputc('\'', f);
}

/* The command that reruns (or, with resume, continues) this run, with
 * every option that matters: the run's settings, the command and its
 * options, where the best mapper goes (out: the file; --force when it was
 * given, or, to rerun, when this run wrote out), and what changes how it
 * runs (--jobs of real runs, --no-portable, the llm server). */
static void print_rerun(FILE *f, const tune_args *a, const char *out,
                        bool written, bool resume) {
  fputs("mapopt tune", f);
  put_word(f, a->app);
  const char *words[] = {
      "--machine", a->set.machine, "--optimizer", a->optimizer,
      "--seed",    NULL,           "--budget",    NULL};
  char seed[32], budget[32], batch[32];
  snprintf(seed, sizeof seed, "%lld", (long long)a->set.seed);
  snprintf(budget, sizeof budget, "%lld", (long long)a->set.budget);
  words[5] = seed;
  words[7] = budget;
  for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
    put_word(f, words[i]);
  if (a->set.batch != 0) {
    snprintf(batch, sizeof batch, "%lld", (long long)a->set.batch);
    put_word(f, "--batch");
    put_word(f, batch);
  }
  if (cli_is_llm(a->optimizer)) {
    /* What identifies an llm run beside the above (not the server). */
    char t[32], n[32], k[32];
    snprintf(t, sizeof t, "%.15g", a->set.temperature);
    snprintf(n, sizeof n, "%lld", (long long)a->set.samples);
    snprintf(k, sizeof k, "%lld", (long long)a->set.history);
    const char *w[] = {"--llm-model",   a->llm.client.model,
                       "--temperature", t,
                       "--samples",     n,
                       "--history",     k};
    for (size_t i = 0; i < sizeof w / sizeof w[0]; i++)
      put_word(f, w[i]);
  }
  const char *pairs[][2] = {
      {"--feedback", strcmp(a->set.feedback, "full") ? a->set.feedback : NULL},
      {"--start", a->start},
      {"--db", strcmp(a->set.db, "mapopt-tune.db") ? a->set.db : NULL}};
  for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++)
    if (pairs[i][1]) {
      put_word(f, pairs[i][0]);
      put_word(f, pairs[i][1]);
    }
  const char *const *run;
  for (size_t i = 0, n = cli_eval_words(&a->run, &run); i < n; i++)
    put_word(f, run[i]);
  char jobs[32];
  snprintf(jobs, sizeof jobs, "%lld", (long long)a->set.jobs);
  const char *more[][2] = {
      {"--out", out},
      /* Real runs only: simulated, it never changes the outcome. */
      {"--jobs", a->jobs_given && a->run.opts.run ? jobs : NULL},
      {"--llm-base-url",
       a->llm_base_url_given ? a->llm.client.base_url : NULL}};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++)
    if (more[i][1]) {
      put_word(f, more[i][0]);
      put_word(f, more[i][1]);
    }
  if (a->set.no_portable)
    fputs(" --no-portable", f);
  if (a->force || (written && !resume))
    fputs(" --force", f);
  if (resume)
    fputs(" --resume", f);
  fputc('\n', f);
}

/* Progress on stderr: a bar redrawn in place on a terminal, else one line
 * per evaluation (in the order told, so the lines are deterministic). */
typedef struct progress {
  bool tty;
  bool drawn;
} progress;

/* "1.052x expert", else "1.052x default", or the raw metric when neither
 * succeeded. */
static void put_score(FILE *f, double score, const mapopt_tune_progress *p) {
  if (p->expert_score > 0)
    fprintf(f, "%.3fx expert", score / p->expert_score);
  else if (p->default_score > 0)
    fprintf(f, "%.3fx default", score / p->default_score);
  else
    fprintf(f, "%.6g", score);
}

static void on_progress(void *ud, const mapopt_tune_progress *p) {
  progress *pr = ud;
  const mapopt_evaluation *e = p->evaluation;
  if (pr->tty) {
    enum { W = 30 };
    char bar[W + 1];
    int64_t done = p->spent * W / p->budget;
    for (int i = 0; i < W; i++)
      bar[i] = i < done ? '#' : '-';
    bar[W] = 0;
    fprintf(stderr, "\r[%s] %lld/%lld  best ", bar, (long long)p->spent,
            (long long)p->budget);
    if (p->best >= 0)
      put_score(stderr, p->best_score, p);
    else
      fputs("none yet", stderr);
    fputs("    ", stderr);
    pr->drawn = true;
    return;
  }
  if (p->screening)
    fprintf(stderr, "evaluation %lld (real run %lld/%lld) [%s]: %s",
            (long long)p->iteration + 1, (long long)p->spent,
            (long long)p->budget, p->candidate->note ? p->candidate->note : "",
            e->predicted ? "screened out, not run: predicted"
                         : mapopt_tune_status_name(e->status));
  else
    fprintf(stderr, "evaluation %lld/%lld [%s]: %s",
            (long long)p->iteration + 1, (long long)p->budget,
            p->candidate->note ? p->candidate->note : "",
            mapopt_tune_status_name(e->status));
  if (e->predicted && e->status != MAPOPT_TUNE_OK) {
    fprintf(stderr, " to be %s", mapopt_tune_status_name(e->status));
  } else if (e->status == MAPOPT_TUNE_OK) {
    fputc(' ', stderr);
    put_score(stderr, e->score, p);
  }
  if (p->best >= 0) {
    fputs("; best ", stderr);
    put_score(stderr, p->best_score, p);
  }
  fputs(p->replayed ? " (recorded before, replayed)\n" : "\n", stderr);
}

/* Writes the best mapper with a comment saying where it comes from. */
static int write_best(const tune_args *a, const char *out,
                      const mapopt_tune_outcome *o) {
  char head[1024], screened[96] = "";
  /* Screened: more evaluations than the budget's runs. */
  if (o->screened)
    snprintf(screened, sizeof screened,
             " (%lld of them screened out by the model, not run)",
             (long long)o->screened);
  int n = snprintf(head, sizeof head,
                   "# The best mapper of `mapopt tune %s` on %s (run %lld "
                   "in %s): evaluation %lld of %lld%s by %s, seed %lld.\n",
                   a->app, a->set.machine, (long long)o->run, a->set.db,
                   (long long)o->best + 1,
                   (long long)(o->screened ? o->evaluations : a->set.budget),
                   screened, a->optimizer, (long long)a->set.seed);
  size_t tl = strlen(o->best_text);
  char *data = malloc((size_t)n + tl + 1);
  if (!data) {
    fprintf(stderr, "mapopt tune: out of memory\n");
    return EXIT_INVALID;
  }
  memcpy(data, head, (size_t)n);
  memcpy(data + n, o->best_text, tl + 1);
  mapopt_status st = mapopt_file_replace(out, data, (size_t)n + tl);
  free(data);
  if (st != MAPOPT_OK) {
    cli_error("%s: error: cannot write the best mapper: %s", out,
              strerror(errno));
    return EXIT_INVALID;
  }
  return EXIT_VALID;
}

/* The best against a baseline: the ratio alone when simulated; for real
 * runs with its interval, and "within noise" when the interval holds 1
 * (docs/real.md, "Noise"). */
static void put_speedup(const mapopt_tune_speedup *sp, const char *name,
                        double score, const char *unit) {
  if (sp->low == sp->high && sp->rounds == 0) {
    printf("  %.3fx the %s mapper (%.6g %s)\n", sp->ratio, name, score, unit);
    return;
  }
  if (sp->verdict == MAPOPT_TUNE_SAME)
    printf("  within noise of the %s mapper: %.3fx (%.6g %s)", name, sp->ratio,
           score, unit);
  else
    printf("  %.3fx the %s mapper (%.6g %s)", sp->ratio, name, score, unit);
  printf(", interval [%.3f, %.3f]", sp->low, sp->high);
  if (sp->rounds > 0)
    printf(" from %d interleaved runs of each", sp->rounds);
  else
    printf(" from the evaluations' runs (no final check)");
  printf(": %s\n", sp->verdict == MAPOPT_TUNE_FASTER   ? "faster"
                   : sp->verdict == MAPOPT_TUNE_SLOWER ? "slower"
                                                       : "no gain");
}

/* The outcome; file is --out, out the same when it was written, else
 * NULL. */
static void print_outcome_text(const tune_args *a, const char *file,
                               const char *out, const cli_target *t,
                               const mapopt_tune_outcome *o) {
  const char *unit = o->unit ? o->unit : "";
  if (o->screened)
    printf("%s on %s: %lld real runs by %s, %lld screened out by the model, "
           "%lld duplicate proposals not run%s\n",
           t->name, a->set.machine, (long long)(o->evaluations - o->screened),
           a->optimizer, (long long)o->screened, (long long)o->duplicates,
           o->end == MAPOPT_TUNE_END_EXHAUSTED
               ? " (the optimizer had nothing new left to propose)"
               : "");
  else
    printf("%s on %s: %lld evaluations by %s, %lld duplicate proposals not "
           "run%s\n",
           t->name, a->set.machine, (long long)o->evaluations, a->optimizer,
           (long long)o->duplicates,
           o->end == MAPOPT_TUNE_END_EXHAUSTED
               ? " (the optimizer had nothing new left to propose)"
               : "");
  if (o->best < 0) {
    printf("no valid mapper found\n");
  } else {
    printf("best: evaluation %lld, %.6g %s, %s%s\n", (long long)o->best + 1,
           o->best_score, unit,
           out ? "written to " : "not written (see the error above)",
           out ? out : "");
    if (o->expert_score > 0)
      put_speedup(&o->vs_expert, "expert", o->expert_score, unit);
    if (o->default_score > 0)
      put_speedup(&o->vs_default, "default", o->default_score, unit);
    char why[256];
    if (!a->run.opts.run &&
        cli_default_is_best(o->best_score, o->default_score, o->best_elapsed_s,
                            o->lower_bound_s, o->evaluations, why, sizeof why))
      printf("  the default mapper is already the best found: %s\n", why);
    if (a->run.opts.run && o->default_score > 0 &&
        o->vs_default.verdict != MAPOPT_TUNE_FASTER)
      printf("  no candidate beat the default mapper beyond the noise of "
             "these runs: keep the default mapper\n");
    if ((t->expert && o->expert_score <= 0) || o->default_score <= 0)
      printf("  (the %s mapper failed on this machine)\n",
             t->expert && o->expert_score <= 0 ? "expert" : "default");
    if (o->lower_bound_s > 0)
      printf("  %.3fx the lower bound: %.6g s against %.6g s\n",
             o->best_elapsed_s / o->lower_bound_s, o->best_elapsed_s,
             o->lower_bound_s);
  }
  cli_print_llm_usage(stdout, &o->llm);
  printf("run %lld in %s; rerun: ", (long long)o->run, a->set.db);
  print_rerun(stdout, a, file, out != NULL, false);
}

/* {"ratio", "low", "high", "rounds", "verdict"}. */
static json_t *speedup_json(const mapopt_tune_speedup *sp) {
  return json_pack("{s:f, s:f, s:f, s:i, s:s}", "ratio", sp->ratio, "low",
                   sp->low, "high", sp->high, "rounds", sp->rounds, "verdict",
                   mapopt_tune_verdict_name(sp->verdict));
}

/* The same as JSON ("file": null when out is NULL). */
static void print_outcome_json(const tune_args *a, const char *out,
                               const mapopt_tune_outcome *o) {
  json_t *j = json_object();
  json_object_set_new(j, "run", json_integer(o->run));
  json_object_set_new(j, "db", json_string(a->set.db));
  json_object_set_new(j, "end", json_string(mapopt_tune_end_name(o->end)));
  json_object_set_new(j, "machine", json_string(a->set.machine));
  json_object_set_new(j, "optimizer", json_string(a->optimizer));
  json_object_set_new(j, "seed", json_integer(a->set.seed));
  json_object_set_new(j, "budget", json_integer(a->set.budget));
  json_object_set_new(j, "batch", json_integer(a->set.batch));
  json_object_set_new(j, "feedback", json_string(a->set.feedback));
  json_object_set_new(j, "evaluations", json_integer(o->evaluations));
  json_object_set_new(j, "screened", json_integer(o->screened));
  json_object_set_new(j, "replayed", json_integer(o->replayed));
  json_object_set_new(j, "duplicates", json_integer(o->duplicates));
  json_object_set_new(j, "unit", o->unit ? json_string(o->unit) : json_null());
  json_object_set_new(j, "expert",
                      o->expert_score > 0 ? json_real(o->expert_score)
                                          : json_null());
  json_object_set_new(j, "default",
                      o->default_score > 0 ? json_real(o->default_score)
                                           : json_null());
  json_t *b = json_null();
  if (o->best >= 0) {
    b = json_object();
    json_object_set_new(b, "evaluation", json_integer(o->best + 1));
    json_object_set_new(b, "metric", json_real(o->best_score));
    json_object_set_new(b, "elapsed_s", json_real(o->best_elapsed_s));
    json_object_set_new(b, "lower_bound_s", json_real(o->lower_bound_s));
    json_object_set_new(b, "file",
                        out && o->end != MAPOPT_TUNE_END_INTERRUPTED
                            ? json_string(out)
                            : json_null());
    json_object_set_new(b, "note",
                        json_string(o->best_note ? o->best_note : ""));
    if (o->expert_score > 0)
      json_object_set_new(b, "speedup_expert", speedup_json(&o->vs_expert));
    if (o->default_score > 0)
      json_object_set_new(b, "speedup_default", speedup_json(&o->vs_default));
  }
  json_object_set_new(j, "best", b);
  json_object_set_new(j, "llm", cli_llm_usage_json(&o->llm));
  cli_dump_json(j);
}

int cli_tune(int argc, char **argv) {
  tune_args a;
  int rc = parse_tune_args(argc, argv, &a);
  if (rc != EXIT_VALID)
    return rc;
  if (cli_is_llm(a.optimizer) &&
      (rc = cli_llm_setup("tune", &a.set, &a.llm)) != EXIT_VALID)
    return rc;
  char *own_out = a.out ? NULL : default_out(a.app);
  const char *out = a.out ? a.out : own_out;
  if (!out) {
    fprintf(stderr, "mapopt tune: out of memory\n");
    return EXIT_INVALID;
  }
  /* Refuse before any work: a tuning run must not end in a lost result. */
  struct stat sb;
  if (!a.force && stat(out, &sb) == 0) {
    fprintf(stderr,
            "mapopt tune: %s exists; give --force to overwrite it or --out "
            "FILE to write elsewhere\n",
            out);
    free(own_out);
    return EXIT_INVALID;
  }
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags)) {
    free(own_out);
    return EXIT_INVALID;
  }
  cli_target t = {0};
  mapopt_tune_db *db = NULL;
  char *start = NULL;
  size_t slen = 0;
  mapopt_tune_outcome o = {.best = -1};
  rc = cli_target_open(ctx, "tune", a.app, NULL, a.set.machine, diags, &t);
  if (rc != EXIT_VALID)
    goto done;
  rc = EXIT_INVALID;
  if (read_start(ctx, a.start, &t.sim.shape, a.set.no_portable, diags, &start,
                 &slen) != MAPOPT_OK ||
      mapopt_tune_db_open(ctx, a.set.db, diags, &db) != MAPOPT_OK)
    goto done;
  mapopt_tune_command cmd = {.eval = &a.run.opts,
                             .timeout_s = a.run.timeout_s,
                             .repeat_max = a.run.repeat_max,
                             .check_rounds = a.run.check_rounds,
                             .screen = a.run.screen};
  mapopt_tune_problem p = {t.sim.machine, t.sim.run, t.expert, t.deflt,
                           a.run.opts.run ? &cmd : NULL};
  mapopt_tune_config c = {t.name,
                          t.sim.spec,
                          a.set.machine,
                          a.optimizer,
                          (uint64_t)a.set.seed,
                          a.set.budget,
                          cli_batch_of(&a.set, a.optimizer),
                          a.set.feedback,
                          a.start,
                          start,
                          slen,
                          cli_is_llm(a.optimizer) ? &a.llm : NULL};
  progress pr = {isatty(STDERR_FILENO) == 1, false};
  mapopt_tune_options opts = {(int)a.set.jobs, a.resume, cli_catch_signals(),
                              a.quiet ? NULL : on_progress, &pr};
  mapopt_status st = mapopt_tune_run(ctx, db, &p, &c, &opts, diags, &o);
  if (pr.drawn)
    fputc('\n', stderr);
  if (st != MAPOPT_OK)
    goto done;
  if (o.resumed && !a.quiet)
    fprintf(stderr, "run %lld resumed: %lld evaluations were recorded\n",
            (long long)o.run, (long long)o.replayed);
  if (o.end == MAPOPT_TUNE_END_INTERRUPTED) {
    /* With screening the budget counts the real runs. */
    fprintf(stderr,
            "mapopt tune: interrupted after %lld of %lld %s, all "
            "recorded in run %lld of %s; continue with:\n  ",
            (long long)(o.evaluations - o.screened), (long long)a.set.budget,
            a.run.screen ? "real runs (and their screened-out candidates)"
                         : "evaluations",
            (long long)o.run, a.set.db);
    print_rerun(stderr, &a, out, false, true);
  } else if (o.best >= 0) {
    rc = write_best(&a, out, &o);
  }
  /* The file is named only when it was written. */
  const char *written = rc == EXIT_VALID ? out : NULL;
  if (a.json)
    print_outcome_json(&a, written, &o);
  else if (o.end != MAPOPT_TUNE_END_INTERRUPTED)
    print_outcome_text(&a, out, written, &t, &o);
done:
  cli_print_diags(stderr, diags, 0);
  mapopt_tune_outcome_clear(&o);
  mapopt_tune_db_close(db);
  mapopt_text_free(start);
  cli_target_close(&t);
  cli_close(ctx, diags);
  free(own_out);
  return rc;
}
