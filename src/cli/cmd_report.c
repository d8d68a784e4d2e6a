/*
 * `mapopt report DB --html OUT.html`: one self-contained page (inline CSS,
 * inline SVG, one small inline script; nothing fetched) on a tuning
 * database. Per benchmark (an application at a size on a machine): the
 * convergence curves -- the best throughput found so far, normalized to the
 * expert mapper, against the evaluation, averaged over the runs of each
 * optimizer -- the paper's table, the llm optimizer's calls, tokens and
 * cost, every run, and the best mapper found beside the expert, with the
 * path of improvements (each one's optimizer note and feedback) that led
 * to it.
 *
 * The page depends only on the database: the same database gives the same
 * bytes.
 */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"

const char cli_report_usage[] =
    "usage: mapopt report DB --html OUT.html\n\n"
    "Writes an HTML report of the tuning database DB (written by mapopt tune\n"
    "and mapopt bench): per benchmark, the convergence curves of each\n"
    "optimizer (best-so-far throughput normalized to the expert mapper,\n"
    "averaged over runs), the table of mean, std, worst, median and best\n"
    "over runs, every run, and the best mapper found beside the expert with\n"
    "the improvements that led to it. The page is self-contained: it loads\n"
    "nothing. OUT.html is replaced atomically. DB is only read: it is never\n"
    "changed, and may be read-only or being written by tune or bench.\n\n"
    "Exit status: 0 ok, 1 unreadable database or unwritable output, 2 usage\n"
    "error.\n";

/* Writes s with HTML's special characters escaped. */
static void esc(FILE *f, const char *s) {
  for (; s && *s; s++)
    switch (*s) {
    case '&':
      fputs("&amp;", f);
      break;
    case '<':
      fputs("&lt;", f);
      break;
    case '>':
      fputs("&gt;", f);
      break;
    case '"':
      fputs("&quot;", f);
      break;
    default:
      fputc(*s, f);
    }
}

static const char *const palette[] = {"#1f77b4", "#d62728", "#2ca02c",
                                      "#ff7f0e", "#9467bd", "#8c564b",
                                      "#e377c2", "#17becf"};
enum { NCOLORS = sizeof palette / sizeof palette[0] };

/* The evaluations a row's curve spans: the most its runs recorded (at
 * least 1). Never the budget, which may be 10^8 for a run that made a few
 * hundred evaluations. */
static int64_t row_length(const cli_row *row) {
  int64_t n = 1;
  for (size_t k = 0; k < row->nruns; k++)
    n = row->runs[k]->niterations > n ? row->runs[k]->niterations : n;
  return n;
}

/* The mean over a row's runs of the best-so-far at each of its n
 * evaluations (a run that ended early keeps its final best). */
static double *mean_curve(const cli_row *row, int64_t n) {
  double *c = calloc((size_t)n, sizeof *c);
  if (!c)
    return NULL;
  for (size_t k = 0; k < row->nruns; k++) {
    const mapopt_tune_run_info *r = row->runs[k];
    double best = 0;
    const char *base;
    for (int64_t i = 0; i < n; i++) {
      if (i < r->niterations && r->scores[i] > best)
        best = r->scores[i];
      c[i] += cli_normalized(r, best, &base) / (double)row->nruns;
    }
  }
  return c;
}

/* The plot's geometry and scales. */
typedef struct plot {
  double x0, y0, w, h; /* the plot area inside the SVG */
  int64_t n;           /* evaluations on the x axis */
  bool logx;
  double ymax;
} plot;

static double px(const plot *p, double eval /* 1-based */) {
  double t = p->n <= 1 ? 0
             : p->logx ? log(eval) / log((double)p->n)
                       : (eval - 1) / (double)(p->n - 1);
  return p->x0 + t * p->w;
}

/* The height of y, inside the plot: a value above its top (an infinite
 * best) is drawn at the top, one below 0 or not a number at the bottom. */
static double py(const plot *p, double y) {
  double t = y > p->ymax ? 1 : y > 0 ? y / p->ymax : 0;
  return p->y0 + p->h - t * p->h;
}

/* A round step for about five ticks up to max. */
static double tick_step(double max) {
  double raw = max / 5, mag = pow(10, floor(log10(raw)));
  double steps[] = {1, 2, 2.5, 5, 10};
  for (size_t i = 0; i < 5; i++)
    if (steps[i] * mag >= raw)
      return steps[i] * mag;
  return 10 * mag;
}

static void axes(FILE *f, const plot *p, const char *ylabel) {
  fprintf(f,
          "<g class=\"axes\" stroke=\"#444\" fill=\"none\">"
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/>"
          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\"/></g>\n",
          p->x0, p->y0 + p->h, p->x0 + p->w, p->y0 + p->h, p->x0, p->y0, p->x0,
          p->y0 + p->h);
  /* By count, not by adding step until past the top: for a maximum of
   * 1e-30 any absolute tolerance would be a billion billion ticks. */
  double step = tick_step(p->ymax);
  int ticks = step > 0 && isfinite(step)
                  ? (int)fmin(floor(p->ymax / step * (1 + 1e-9)), 10)
                  : 0;
  for (int k = 0; k <= ticks; k++) {
    double y = k * step;
    fprintf(f,
            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
            "stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.1f\" "
            "text-anchor=\"end\">%g</text>\n",
            p->x0, py(p, y), p->x0 + p->w, py(p, y), p->x0 - 6, py(p, y) + 4,
            y);
  }
  /* x ticks: 1, 2, 5, 10, ... on a log axis, about six on a linear one */
  if (p->logx) {
    for (double m = 1; m <= (double)p->n; m *= 10)
      for (int k = 1; k <= 5; k += k == 1 ? 1 : 3)
        if (m * k <= (double)p->n)
          fprintf(f,
                  "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">"
                  "%g</text>\n",
                  px(p, m * k), p->y0 + p->h + 16, m * k);
  } else {
    int64_t st = p->n <= 10 ? 1 : (int64_t)tick_step((double)p->n);
    for (int64_t e = 1; e <= p->n; e += (e == 1 && st > 1) ? st - 1 : st)
      fprintf(f,
              "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%lld"
              "</text>\n",
              px(p, (double)e), p->y0 + p->h + 16, (long long)e);
  }
  fprintf(f,
          "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">evaluation%s"
          "</text>\n",
          p->x0 + p->w / 2, p->y0 + p->h + 34, p->logx ? " (log scale)" : "");
  fprintf(f,
          "<text transform=\"translate(14 %.1f) rotate(-90)\" "
          "text-anchor=\"middle\">%s</text>\n",
          p->y0 + p->h / 2, ylabel);
}

/* The convergence plot of a group: one curve per row. */
static bool convergence(FILE *f, const cli_group *g) {
  plot p = {60, 20, 440, 240, 1, false, 0};
  for (size_t r = 0; r < g->nrows; r++)
    if (row_length(&g->rows[r]) > p.n)
      p.n = row_length(&g->rows[r]);
  p.logx = p.n > 50;
  double **curves = calloc(g->nrows ? g->nrows : 1, sizeof *curves);
  if (!curves)
    return false;
  double ymax = g->base ? 1 : 0;
  bool ok = true;
  for (size_t r = 0; r < g->nrows && ok; r++) {
    int64_t n = row_length(&g->rows[r]);
    ok = (curves[r] = mean_curve(&g->rows[r], n)) != NULL;
    for (int64_t i = 0; ok && i < n; i++)
      if (isfinite(curves[r][i]))
        ymax = fmax(ymax, curves[r][i]);
  }
  if (ok) {
    /* The axis spans the finite values (fmax skips NaN); 10% headroom. */
    p.ymax = ymax > 0 && isfinite(ymax * 1.1) ? ymax * 1.1
             : ymax > 0                       ? ymax
                                              : 1;
    fprintf(f, "<svg class=\"convergence\" xmlns=\"http://www.w3.org/2000/"
               "svg\" viewBox=\"0 0 680 300\" width=\"680\" height=\"300\" "
               "role=\"img\" aria-label=\"convergence\">\n");
    axes(f, &p,
         g->base ? (strcmp(g->base, "expert") ? "best so far / default"
                                              : "best so far / expert")
                 : "best so far");
    if (g->base)
      fprintf(f,
              "<line class=\"yardstick\" x1=\"%.1f\" y1=\"%.1f\" "
              "x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\" "
              "stroke-dasharray=\"4 3\"/>\n",
              p.x0, py(&p, 1), p.x0 + p.w, py(&p, 1));
    for (size_t r = 0; r < g->nrows; r++) {
      const char *color = palette[r % NCOLORS];
      fprintf(f, "<polyline class=\"curve\" data-optimizer=\"");
      esc(f, g->rows[r].label);
      fprintf(f,
              "\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\" "
              "points=\"",
              color);
      for (int64_t i = 0; i < row_length(&g->rows[r]); i++)
        fprintf(f, "%s%.1f,%.1f", i ? " " : "", px(&p, (double)(i + 1)),
                py(&p, curves[r][i]));
      fprintf(f,
              "\"/>\n<g class=\"legend\"><rect x=\"515\" y=\"%zu\" "
              "width=\"14\" height=\"4\" fill=\"%s\"/><text x=\"535\" "
              "y=\"%zu\">",
              24 + 18 * r, color, 30 + 18 * r);
      esc(f, g->rows[r].label);
      fprintf(f, "</text></g>\n");
    }
    fprintf(f, "</svg>\n");
  }
  for (size_t r = 0; r < g->nrows; r++)
    free(curves[r]);
  free(curves);
  return ok;
}

static void summary_table(FILE *f, const cli_group *g) {
  fprintf(f, "<table class=\"summary\"><thead><tr><th>optimizer</th>"
             "<th>mean</th><th>std</th><th>worst</th><th>median</th>"
             "<th>best</th><th>valid runs</th></tr></thead><tbody>\n");
  for (size_t r = 0; r < g->nrows; r++) {
    const cli_stats *s = &g->rows[r].stats;
    fprintf(f, "<tr><td>");
    esc(f, g->rows[r].label);
    fprintf(f,
            "</td><td>%.3f</td><td>%.3f</td><td>%.3f</td><td>%.3f</td>"
            "<td>%.3f</td><td>%zu/%zu</td></tr>\n",
            s->mean, s->std, s->worst, s->median, s->best, s->valid, s->runs);
  }
  fprintf(f, "</tbody></table>\n");
}

/* The llm rows: calls, replies that parse and run, tokens, latency, cost
 * (nothing when the group has no llm run). */
static void llm_table(FILE *f, const cli_group *g) {
  bool any = false;
  for (size_t r = 0; r < g->nrows; r++) {
    const cli_row *row = &g->rows[r];
    if (!cli_is_llm(row->runs[0]->optimizer))
      continue;
    if (!any)
      fprintf(f, "<table class=\"llm\"><thead><tr><th>optimizer</th>"
                 "<th>calls</th><th>failed</th><th>replies</th>"
                 "<th>parse</th><th>run</th><th>prompt tokens</th>"
                 "<th>completion tokens</th><th>tokens per 1.0x</th>"
                 "<th>latency (s)</th><th>cost (USD)</th></tr></thead>"
                 "<tbody>\n");
    any = true;
    cli_llm_figures x;
    cli_llm_figures_of(row, &x);
    const mapopt_tune_llm_usage *u = &row->llm;
    fprintf(f, "<tr><td>");
    esc(f, row->label);
    fprintf(f,
            "</td><td>%lld</td><td>%lld</td><td>%lld</td><td>%.0f%%</td>"
            "<td>%.0f%%</td><td>%lld</td><td>%lld</td>",
            (long long)u->calls, (long long)u->failed_calls,
            (long long)u->replies, 100 * x.parse, 100 * x.run,
            (long long)u->prompt_tokens, (long long)u->completion_tokens);
    if (x.tokens_per_x >= 0)
      fprintf(f, "<td>%.0f</td>", x.tokens_per_x);
    else
      fprintf(f, "<td>-</td>");
    fprintf(f, "<td>%.1f</td><td>%.4f</td></tr>\n", u->latency_s, u->cost);
  }
  if (any)
    fprintf(f, "</tbody></table>\n<p>parse, run: the share of the "
               "evaluated replies whose mapper compiled, and ran; tokens "
               "per 1.0x: all tokens over the sum of the runs' normalized "
               "best.</p>\n");
}

static void runs_table(FILE *f, const cli_group *g) {
  fprintf(f, "<details><summary>every run</summary><table class=\"runs\">"
             "<thead><tr><th>run</th><th>optimizer</th><th>seed</th>"
             "<th>status</th><th>evaluations</th><th>duplicates</th>"
             "<th>best</th><th>found at</th></tr></thead><tbody>\n");
  for (size_t r = 0; r < g->nrows; r++)
    for (size_t k = 0; k < g->rows[r].nruns; k++) {
      const mapopt_tune_run_info *ru = g->rows[r].runs[k];
      const char *base;
      fprintf(f, "<tr><td>%lld</td><td>", (long long)ru->id);
      esc(f, g->rows[r].label);
      fprintf(f, "</td><td>%llu</td><td>", (unsigned long long)ru->seed);
      esc(f, ru->status);
      /* Screened-out evaluations were predicted, not run: apart. */
      if (ru->screened)
        fprintf(f,
                "</td><td>%lld real runs, %lld screened out by the "
                "model</td><td>%lld</td>",
                (long long)(ru->evaluations - ru->screened),
                (long long)ru->screened, (long long)ru->duplicates);
      else
        fprintf(f, "</td><td>%lld</td><td>%lld</td>",
                (long long)ru->evaluations, (long long)ru->duplicates);
      if (ru->best >= 0)
        fprintf(f, "<td>%.3f</td><td>%lld</td></tr>\n",
                cli_normalized(ru, ru->best_score, &base),
                (long long)ru->best + 1);
      else
        fprintf(f, "<td>none</td><td></td></tr>\n");
    }
  fprintf(f, "</tbody></table></details>\n");
}

/* The run of g with the best normalized result (the earliest of equals). */
static const mapopt_tune_run_info *best_run(const cli_group *g) {
  const mapopt_tune_run_info *best = NULL;
  double bv = 0;
  for (size_t r = 0; r < g->nrows; r++)
    for (size_t k = 0; k < g->rows[r].nruns; k++) {
      const mapopt_tune_run_info *ru = g->rows[r].runs[k];
      const char *base;
      double v = cli_normalized(ru, ru->best_score, &base);
      if (ru->best >= 0 &&
          (!best || v > bv || (v == bv && ru->id < best->id))) {
        best = ru;
        bv = v;
      }
    }
  return best;
}

/* The improvements of run r: each evaluation that raised its best so far,
 * with the optimizer's note and the feedback it got. */
static bool improvements(FILE *f, mapopt_ctx *ctx, mapopt_tune_db *db,
                         mapopt_diags *diags, const mapopt_tune_run_info *r) {
  fprintf(f, "<ul class=\"path\">\n");
  double best = 0;
  for (int64_t i = 0; i < r->niterations; i++) {
    if (!(r->scores[i] > best))
      continue;
    best = r->scores[i];
    mapopt_tune_eval_info *e;
    mapopt_status st = mapopt_tune_db_evaluation(db, r->id, i, diags, &e);
    if (st != MAPOPT_OK)
      return false;
    const char *base;
    double v = cli_normalized(r, e->metric, &base);
    fprintf(f, "<li><b>evaluation %lld</b>: <span class=\"score\">",
            (long long)i + 1);
    if (base)
      fprintf(f, "%.3fx the %s mapper", v, base);
    else
      fprintf(f, "%.6g", v);
    fprintf(f, "</span>, proposed as: ");
    esc(f, e->note ? e->note : "");
    if (e->feedback && *e->feedback) {
      fprintf(f, "<pre class=\"feedback\">");
      esc(f, e->feedback);
      fprintf(f, "</pre>");
    }
    fprintf(f, "</li>\n");
    mapopt_tune_eval_info_free(ctx, e);
  }
  fprintf(f, "</ul>\n");
  return true;
}

/* The best mapper of a group beside the expert. */
static bool best_mapper(FILE *f, mapopt_ctx *ctx, mapopt_tune_db *db,
                        mapopt_diags *diags, const cli_group *g) {
  const mapopt_tune_run_info *r = best_run(g);
  fprintf(f, "<h3>The best mapper found</h3>\n");
  if (!r) {
    fprintf(f, "<p>No run found a valid mapper.</p>\n");
    return true;
  }
  mapopt_tune_eval_info *e;
  if (mapopt_tune_db_evaluation(db, r->id, r->best, diags, &e) != MAPOPT_OK)
    return false;
  const char *base;
  double v = cli_normalized(r, e->metric, &base);
  fprintf(f, "<p class=\"best\">Run %lld (", (long long)r->id);
  esc(f, r->optimizer);
  fprintf(f, ", seed %llu), evaluation %lld: %.6g ",
          (unsigned long long)r->seed, (long long)r->best + 1, e->metric);
  esc(f, r->unit ? r->unit : "");
  if (base)
    fprintf(f, ", %.3fx the %s mapper", v, base);
  if (e->lower_bound_s > 0 && e->elapsed_s > 0)
    fprintf(f, "; %.3fx the lower bound (%.6g s against %.6g s)",
            e->elapsed_s / e->lower_bound_s, e->elapsed_s, e->lower_bound_s);
  fprintf(f, ".</p>\n");
  char why[256];
  if (!r->evaluator &&
      cli_default_is_best(e->metric, r->default_score, e->elapsed_s,
                          e->lower_bound_s, r->evaluations, why, sizeof why)) {
    fprintf(f, "<p class=\"best\">The default mapper is already the best "
               "found: ");
    esc(f, why);
    fprintf(f, ".</p>\n");
  }
  fprintf(f, "<div class=\"pair\"><figure><figcaption>best</figcaption>"
             "<pre class=\"mapper\">");
  esc(f, e->text);
  fprintf(f, "</pre></figure>");
  const char *expert = mapopt_app_builtin_json(r->app)
                           ? mapopt_app_builtin_mapper(r->app, "expert")
                           : NULL;
  if (expert) {
    fprintf(f, "<figure><figcaption>expert (mappers/");
    esc(f, r->app);
    fprintf(f, "/expert.map)</figcaption><pre class=\"mapper\">");
    esc(f, expert);
    fprintf(f, "</pre></figure>");
  }
  fprintf(f,
          "</div>\n<h3>How it was found</h3>\n<p>The evaluations of run "
          "%lld that improved on its best so far: the optimizer's note and "
          "the feedback it was given.</p>\n",
          (long long)r->id);
  mapopt_tune_eval_info_free(ctx, e);
  return improvements(f, ctx, db, diags, r);
}

static const char style[] =
    "body{font-family:sans-serif;margin:2em auto;max-width:1100px;"
    "color:#222}"
    "table{border-collapse:collapse;margin:1em 0}"
    "th,td{border:1px solid #ccc;padding:3px 8px;text-align:right}"
    "th:first-child,td:first-child{text-align:left}"
    "svg text{font-size:12px;fill:#222}"
    ".pair{display:flex;gap:1em}.pair figure{flex:1;margin:0;min-width:0}"
    "pre{background:#f6f6f6;padding:.5em;overflow:auto;font-size:12px}"
    "pre.mapper{max-height:40em}ul.path li{margin:.4em 0}"
    ".score{font-weight:bold}section{border-top:2px solid #888;"
    "margin-top:2em}";

/* Marks the page rendered (how many curves) or failed, for a headless
 * browser to read back from the DOM. */
static const char script_head[] =
    "<script>window.addEventListener('error',function(e){"
    "document.documentElement.setAttribute('data-error',String(e.message));"
    "});</script>\n";
static const char script_tail[] =
    "<script>(function(){var n=document.querySelectorAll('polyline.curve')"
    ".length;var p=document.createElement('p');p.id='report-ok';"
    "p.setAttribute('data-curves',String(n));p.className='footer';"
    "p.textContent='rendered '+n+' convergence curves';"
    "document.body.appendChild(p);})();</script>\n";

static bool write_page(FILE *f, mapopt_ctx *ctx, mapopt_tune_db *db,
                       mapopt_diags *diags, const char *dbpath,
                       const mapopt_tune_history *h, const cli_table *t) {
  int64_t evals = 0, screened = 0;
  for (size_t i = 0; i < mapopt_tune_history_count(h); i++) {
    evals += mapopt_tune_history_run(h, i)->evaluations;
    screened += mapopt_tune_history_run(h, i)->screened;
  }
  fprintf(f,
          "<!DOCTYPE html>\n<html lang=\"en\"><head><meta "
          "charset=\"utf-8\">\n<title>mapopt tuning report</title>\n"
          "<style>%s</style>\n%s</head><body>\n"
          "<h1>mapopt tuning report</h1>\n<p class=\"meta\">",
          style, script_head);
  esc(f, dbpath);
  fprintf(f, ": %zu runs, %lld evaluations", mapopt_tune_history_count(h),
          (long long)evals);
  if (screened)
    fprintf(f, " (%lld real runs, %lld screened out by the model, not run)",
            (long long)(evals - screened), (long long)screened);
  fprintf(f,
          ", %zu benchmarks. Throughput is "
          "normalized to the expert mapper where the application ships one, "
          "else to the default mapper (higher is better).</p>\n",
          t->ngroups);
  for (size_t gi = 0; gi < t->ngroups; gi++) {
    const cli_group *g = &t->groups[gi];
    fprintf(f, "<section class=\"benchmark\" id=\"b%zu\" data-app=\"", gi + 1);
    esc(f, g->app);
    fprintf(f, "\">\n<h2>");
    esc(f, g->app);
    if (g->size) {
      fputc(':', f);
      esc(f, g->size);
    }
    fprintf(f, " on ");
    esc(f, g->machine);
    fprintf(f, "%s</h2>\n", g->evaluator ? ", real runs" : "");
    if (!g->base)
      fprintf(f, "<p>No expert or default mapper: raw throughput.</p>\n");
    else if (strcmp(g->base, "expert"))
      fprintf(f, "<p>No expert mapper: normalized to the default mapper."
                 "</p>\n");
    if (!convergence(f, g))
      return false;
    summary_table(f, g);
    llm_table(f, g);
    runs_table(f, g);
    if (!best_mapper(f, ctx, db, diags, g))
      return false;
    fprintf(f, "</section>\n");
  }
  fprintf(f, "%s</body></html>\n", script_tail);
  return true;
}

int cli_report(int argc, char **argv) {
  const char *dbpath = NULL, *html = NULL;
  for (int i = 1; i < argc; i++) {
    const char *o = argv[i], *v;
    static const char *const valued[] = {"--html", NULL};
    if (cli_option_value("report", valued, argc, argv, &i, &v) != EXIT_VALID)
      return EXIT_USAGE;
    if (v)
      html = v;
    else if (cli_operand("report", o, &dbpath, "database") != EXIT_VALID)
      return EXIT_USAGE;
  }
  if (!dbpath)
    return cli_usage_error("report", "no database given");
  if (!html)
    return cli_usage_error("report", "give --html OUT.html");
  /* A missing database is not created (the reader writes nothing): say
   * it is missing. */
  struct stat sb;
  if (stat(dbpath, &sb) != 0) {
    cli_error("%s: error: cannot read file: %s", dbpath, strerror(errno));
    return EXIT_INVALID;
  }
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (!cli_open(&ctx, &diags))
    return EXIT_INVALID;
  mapopt_tune_db *db = NULL;
  mapopt_tune_history *h = NULL;
  cli_table t = {0};
  char *page = NULL;
  size_t len = 0;
  FILE *f = NULL;
  int rc = EXIT_INVALID;
  if (mapopt_tune_db_open_read(ctx, dbpath, diags, &db) != MAPOPT_OK ||
      mapopt_tune_db_history(db, diags, &h) != MAPOPT_OK)
    goto done;
  if (!cli_table_build(h, NULL, 0, &t) || !(f = open_memstream(&page, &len))) {
    fprintf(stderr, "mapopt report: out of memory\n");
    goto done;
  }
  bool ok = write_page(f, ctx, db, diags, dbpath, h, &t);
  if (fclose(f) != 0 || !ok)
    goto done;
  if (mapopt_file_replace(html, page, len) != MAPOPT_OK) {
    cli_error("%s: error: cannot write the report: %s", html, strerror(errno));
    goto done;
  }
  rc = EXIT_VALID;
done:
  cli_print_diags(stderr, diags, 0);
  free(page);
  cli_table_free(&t);
  mapopt_tune_history_free(h);
  mapopt_tune_db_close(db);
  cli_close(ctx, diags);
  return rc;
}
