/*
 * AutoGuide's rules on the profile of a successful simulated run (the
 * result, or a report read back): where the time went and which mapping
 * decision is behind it. Each rule measures one phenomenon -- a GPU task
 * reaching into zero-copy memory, data produced in one place and read in
 * another, one processor doing the work of several, ... -- and, past a
 * threshold, writes a finding that says how much time is at stake
 * (impact: a share of the elapsed time), names the task, argument and
 * statement, and proposes the edit.
 *
 * Rules read only what a report carries (never the log), so findings from
 * a saved report equal those from the run itself. Thresholds are named
 * constants; each says why it has the value it has.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "guide/guide.h"

/* zc-hot: a GPU task whose accesses to one ZCMEM argument take a fifth of
 * its time is dominated by them; below 2% of the GPUs' time a fix would not
 * show in the elapsed time. */
#define ZC_HOT_TASK_SHARE 0.20
#define ZC_HOT_MIN_IMPACT 0.02
/* cpu-on-critical-path: a tenth of the critical path is worth a GPU. */
#define CPU_CP_SHARE 0.10
/* imbalance: the busiest processor must be busy for 30% of the run (else
 * the run is not bound by that kind), and balancing must save 20%. */
#define IMBALANCE_MIN_BUSY 0.30
#define IMBALANCE_MIN_GAIN 0.20
/* aos-few-fields: the extra traffic must be 5% of the task and 1% of the
 * GPUs' time. */
#define AOS_MIN_TASK_SHARE 0.05
#define AOS_MIN_IMPACT 0.01
/* overhead-bound: the per-task cost is half of a task's time or more, on
 * a task that holds 5% of its kind's time; the runtime's own work on a
 * quarter of the critical path sets the pace. */
#define OVERHEAD_TASK_SHARE 0.50
#define OVERHEAD_MIN_IMPACT 0.05
#define RUNTIME_CP_SHARE 0.25
/* fb-near-capacity: 90% full leaves no room for the next change. */
#define FB_NEAR_CAPACITY 0.90
/* limit-stall: a tenth of the critical path waiting for admission. */
#define LIMIT_STALL_SHARE 0.10

#define P(...) mapopt__guide_printf(f, __VA_ARGS__)
#define C(x) MAPOPT_GUIDE_CODE_##x

/* Totals per processor kind over the timed window. */
typedef struct kind_load {
  int64_t n, busy, max;
  size_t max_at; /* index into result->procs */
} kind_load;

typedef struct prof {
  const mapopt_guide_input *in;
  const mapopt_sim_result *res;
  mapopt_findings *f;
  double elapsed; /* ns */
  kind_load load[MAPOPT_PROC_KIND_COUNT];
} prof;

static const char *req_name(mapopt_findings *f, const mapopt_sim_req_stats *q) {
  return q->name && q->name[0] ? q->name : P("%d", q->index);
}

static double share(int64_t part, double whole) {
  return whole > 0 ? (double)part / whole : 0;
}

static mapopt_guide_finding *add(prof *p, mapopt_guide_code code, double impact,
                                 const char *task, const char *region,
                                 const char *function) {
  mapopt_guide_finding *g =
      mapopt__guide_add(p->f, MAPOPT_GUIDE_PERFORMANCE, code);
  if (g) {
    g->impact = impact > 1 ? 1 : impact;
    mapopt__guide_subject(p->f, g, task, region, function);
  }
  return g;
}

/* ---- zc-hot -------------------------------------------------------------- */

static void zc_hot(prof *p) {
  mapopt_findings *f = p->f;
  const mapopt_machine *m = p->in->machine;
  double gpu_time = (double)p->load[MAPOPT_PROC_GPU].n * p->elapsed;
  for (size_t i = 0; i < mapopt_sim_result_ntop(p->res); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(p->res, i);
    for (size_t r = 0;
         t->kind == MAPOPT_PROC_GPU && r < mapopt_sim_task_nreqs(t); r++) {
      const mapopt_sim_req_stats *q = mapopt_sim_task_req(t, r);
      int64_t zc = q->mem_ns + q->access_ns;
      double impact = share(zc, gpu_time);
      if (q->memory != MAPOPT_MEM_ZCMEM ||
          share(zc, (double)t->busy_ns) < ZC_HOT_TASK_SHARE ||
          impact < ZC_HOT_MIN_IMPACT)
        continue;
      const char *region = req_name(f, q);
      mapopt_guide_finding *g =
          add(p, C(ZC_HOT), impact, t->task, region, NULL);
      if (!g)
        return;
      char a[32], b[32];
      mapopt__guide_fmt_ns(a, sizeof a, zc);
      mapopt__guide_fmt_ns(b, sizeof b, t->busy_ns);
      bool random = q->access_ns > q->mem_ns;
      g->message =
          P("%.0f%% of GPU time in %s (%s of %s, %" PRId64 " points) "
            "is spent %s %s in ZCMEM",
            100 * share(zc, (double)t->busy_ns), t->task, a, b, t->points,
            random ? "on random accesses to" : "reading", region);
      const char *ratio = "";
      if (m && m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_ZCMEM].present &&
          m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_FBMEM].present) {
        const mapopt_affinity *zcm =
            &m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_ZCMEM];
        const mapopt_affinity *fbm =
            &m->affinity[MAPOPT_PROC_GPU][MAPOPT_MEM_FBMEM];
        bool atomic = q->priv == MAPOPT_PRIV_REDUCE;
        int64_t zr = atomic ? zcm->atomic_per_ms : zcm->gather_per_ms;
        int64_t fr = atomic ? fbm->atomic_per_ms : fbm->gather_per_ms;
        if (random && zr > 0)
          ratio = P(" (here %" PRId64 "x fewer random %s per second)", fr / zr,
                    atomic ? "updates" : "reads");
        else if (zcm->bw_mbps > 0)
          ratio = P(" (here %" PRId64 "x less bandwidth)",
                    fbm->bw_mbps / zcm->bw_mbps);
      }
      g->explain = P("ZCMEM is host memory that a GPU reaches over PCIe, far "
                     "slower than its own framebuffer%s; every access %s "
                     "makes to %s pays that price.",
                     ratio, t->task, region);
      g->suggest = P("Put %s in the framebuffer: `Region %s %s GPU FBMEM;` "
                     "(the GPUs then exchange it by copies instead).",
                     region, t->task, region);
      mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_MEMORY, t->task, region, "GPU",
                         NULL, "FBMEM");
    }
  }
}

/* ---- cpu-on-critical-path ------------------------------------------------ */

static void cpu_on_critical_path(prof *p) {
  mapopt_findings *f = p->f;
  const mapopt_sim_critical_path *cp = &p->res->critical_path;
  if (p->load[MAPOPT_PROC_GPU].n == 0 || cp->length_ns <= 0)
    return;
  for (size_t i = 0; i < mapopt_sim_result_ntop(p->res); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(p->res, i);
    if (t->kind == MAPOPT_PROC_GPU ||
        !(t->variant_kinds >> MAPOPT_PROC_GPU & 1u))
      continue;
    /* Its compute on the critical path (the attribution's exposed time). */
    int64_t on_path = 0;
    for (size_t w = 0; w < mapopt_sim_result_nwaits(p->res); w++)
      if (mapopt_sim_result_wait(p->res, w)->cause ==
              MAPOPT_SIM_CAUSE_COMPUTE &&
          mapopt_sim_result_wait(p->res, w)->task &&
          !strcmp(mapopt_sim_result_wait(p->res, w)->task, t->task))
        on_path += mapopt_sim_result_wait(p->res, w)->exposed_ns;
    double sh = share(on_path, (double)cp->length_ns);
    if (sh < CPU_CP_SHARE)
      continue;
    const char *kind = mapopt_shape_proc_name(t->kind);
    mapopt_guide_finding *g =
        add(p, C(CPU_ON_CRITICAL_PATH), sh, t->task, NULL, NULL);
    if (!g)
      return;
    char mean[32], held[32];
    mapopt__guide_fmt_ns(mean, sizeof mean,
                         t->points ? t->busy_ns / t->points : 0);
    mapopt__guide_fmt_ns(held, sizeof held, on_path);
    g->message = P("%s runs on %s (%s per point) and takes %s of the critical "
                   "path (%.0f%%); it has a GPU variant",
                   t->task, kind, mean, held, 100 * sh);
    g->explain = P("The run cannot finish before its chain of dependent tasks "
                   "does, and %s, a link of that chain, runs on a %s although "
                   "it could run on a much faster GPU.",
                   t->task, kind);
    const char *kinds = P("GPU,%s", kind);
    g->suggest =
        P("Run %s on GPUs first: `Task %s %s;`.", t->task, t->task, kinds);
    mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_PROC_KINDS, t->task, NULL, NULL,
                       NULL, kinds);
  }
}

/* ---- imbalance ----------------------------------------------------------- */

static void imbalance(prof *p) {
  mapopt_findings *f = p->f;
  static const mapopt_proc_kind kinds[] = {MAPOPT_PROC_GPU, MAPOPT_PROC_OMP,
                                           MAPOPT_PROC_CPU};
  for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
    const kind_load *l = &p->load[kinds[k]];
    if (l->n < 2)
      continue;
    double mean = (double)l->busy / (double)l->n;
    if ((double)l->max < IMBALANCE_MIN_BUSY * p->elapsed ||
        mean > (1 - IMBALANCE_MIN_GAIN) * (double)l->max)
      continue;
    /* The task that loads the busiest processors beyond its fair share. */
    const mapopt_sim_task_stats *worst = NULL;
    double excess = 0;
    for (size_t i = 0; i < mapopt_sim_result_ntop(p->res); i++) {
      const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(p->res, i);
      double x = (double)t->proc_max_ns - (double)t->busy_ns / (double)l->n;
      if (t->kind == kinds[k] && x > excess) {
        worst = t;
        excess = x;
      }
    }
    const char *kn = mapopt_shape_proc_name(kinds[k]);
    const char *fn =
        worst ? mapopt__guide_index_fn(p->in, worst->task, kinds[k]) : NULL;
    mapopt_guide_finding *g =
        add(p, C(IMBALANCE), ((double)l->max - mean) / p->elapsed,
            worst ? worst->task : NULL, NULL, fn);
    if (!g)
      return;
    const mapopt_sim_proc_stats *busiest =
        mapopt_sim_result_proc(p->res, l->max_at);
    g->message =
        P("%s %" PRId64 " of node %" PRId64 " is busy %.0f%% of the "
          "time while the %" PRId64 " %ss average %.0f%%%s",
          kn, busiest->index, busiest->node, 100 * share(l->max, p->elapsed),
          l->n, kn, 100 * mean / p->elapsed,
          worst ? P("; the %" PRId64 " points of %s ran on %" PRId64 " of them",
                    worst->points, worst->task, worst->procs_used)
                : "");
    g->explain = P(
        "The run lasts as long as its busiest %s: work piled on a "
        "few %ss leaves the others idle%s.",
        kn, kn,
        fn ? P(" (%s's points are placed by the function %s)", worst->task, fn)
           : "");
    if (!worst) {
      g->suggest = P("Spread the work over all %ss with IndexTaskMap "
                     "functions that use every processor.",
                     kn);
      continue;
    }
    if (worst->is_index) {
      g->suggest = P("Spread %s's points over all %" PRId64 " %ss: place "
                     "point i of n on processor i * P / n, e.g. `def "
                     "block(Task t) { m = Machine(%s).merge(0, 1); return "
                     "m[t.ipoint[0] * m.size[0] / t.ispace[0]]; }` and "
                     "`IndexTaskMap %s block;`.",
                     worst->task, l->n, kn, kn, worst->task);
      mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_INDEX_MAP, worst->task, NULL,
                         NULL, NULL, "block");
      mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_INDEX_MAP, worst->task, NULL,
                         NULL, NULL, "cyclic");
    } else {
      bool has_fn = p->in->mapper &&
                    mapopt_policy_map_function(p->in->mapper, worst->task,
                                               kinds[k], true);
      g->suggest =
          P("%s %s elsewhere: %s.", has_fn ? "Let" : "Place", worst->task,
            has_fn ? P("remove its SingleTaskMap statement so the "
                       "default placement spreads it")
                   : P("`SingleTaskMap %s f;` with `def f(Task t) "
                       "{ return m[*t.parent.processor(m)]; }` runs "
                       "it on its parent's processor",
                       worst->task));
      mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_SINGLE_FOLLOW, worst->task,
                         NULL, NULL, NULL, has_fn ? "default" : "parent");
    }
  }
}

/* ---- aos-few-fields ------------------------------------------------------ */

static void aos_few_fields(prof *p) {
  mapopt_findings *f = p->f;
  double gpu_time = (double)p->load[MAPOPT_PROC_GPU].n * p->elapsed;
  for (size_t i = 0; i < mapopt_sim_result_ntop(p->res); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(p->res, i);
    for (size_t r = 0;
         t->kind == MAPOPT_PROC_GPU && r < mapopt_sim_task_nreqs(t); r++) {
      const mapopt_sim_req_stats *q = mapopt_sim_task_req(t, r);
      if (q->layout.soa != MAPOPT_LAYOUT_NO || q->fields >= q->region_fields ||
          q->layout_ppm <= 1000000)
        continue;
      int64_t waste = q->mem_ns - q->mem_ns * 1000000 / q->layout_ppm;
      double impact = share(waste, gpu_time);
      if (share(waste, (double)t->busy_ns) < AOS_MIN_TASK_SHARE ||
          impact < AOS_MIN_IMPACT)
        continue;
      const char *region = req_name(f, q);
      mapopt_guide_finding *g =
          add(p, C(AOS_FEW_FIELDS), impact, t->task, region, NULL);
      if (!g)
        return;
      char w[32];
      mapopt__guide_fmt_ns(w, sizeof w, waste);
      g->message = P("%s reads %d of the %d fields of %s, stored AOS on the "
                     "GPU: %.1fx the memory traffic it needs (%s)",
                     t->task, q->fields, q->region_fields, region,
                     (double)q->layout_ppm / 1e6, w);
      g->explain = P("AOS keeps all fields of an element together, so a GPU "
                     "reading a few of them still moves whole records; SOA "
                     "keeps each field in its own array.");
      g->suggest = P("Store it field by field: `Layout %s %s GPU SOA;`.",
                     t->task, region);
      mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_LAYOUT, t->task, region, "GPU",
                         "soa", "SOA");
    }
  }
}

/* ---- overhead-bound ------------------------------------------------------ */

/* A kind with a lower fixed cost per task than t's where t's work, scaled
 * by the peak rates, would still take less time in all; or -1. */
static int cheaper_kind(const mapopt_machine *m, const mapopt_sim_task_stats *t,
                        int64_t mean) {
  static const mapopt_proc_kind alt[] = {MAPOPT_PROC_OMP, MAPOPT_PROC_CPU,
                                         MAPOPT_PROC_GPU};
  const mapopt_machine_procs *cur = &m->procs[t->kind];
  for (size_t k = 0; k < sizeof alt / sizeof alt[0]; k++) {
    const mapopt_machine_procs *mp = &m->procs[alt[k]];
    if (alt[k] == t->kind || !(t->variant_kinds >> alt[k] & 1u) ||
        mp->count <= 0 || mp->mflops_f64 <= 0 || cur->mflops_f64 <= 0)
      continue;
    double work = (double)(mean - cur->overhead_ns) * (double)cur->mflops_f64 /
                  (double)mp->mflops_f64;
    if ((double)mp->overhead_ns + work < (double)mean)
      return (int)alt[k];
  }
  return -1;
}

/* Tasks whose fixed cost per task is most of their time: one finding per
 * task another kind would run faster, and one for the rest together (the
 * mapper cannot make tasks larger, but the optimizer should know). */
static void overhead_bound(prof *p) {
  mapopt_findings *f = p->f;
  const mapopt_machine *m = p->in->machine;
  const mapopt_sim_task_stats *rest[MAPOPT_SIM_MAX_TOP_TASKS];
  size_t nrest = 0;
  double rest_impact = 0;
  for (size_t i = 0; m && i < mapopt_sim_result_ntop(p->res); i++) {
    const mapopt_sim_task_stats *t = mapopt_sim_result_top_task(p->res, i);
    const kind_load *l = &p->load[t->kind];
    int64_t ovh = m->procs[t->kind].overhead_ns;
    if (t->points < 2 || ovh <= 0 || l->n <= 0)
      continue;
    int64_t mean = t->busy_ns / t->points;
    double impact =
        (double)ovh * (double)t->points / ((double)l->n * p->elapsed);
    if ((double)ovh < OVERHEAD_TASK_SHARE * (double)mean ||
        impact < OVERHEAD_MIN_IMPACT)
      continue;
    int alt = cheaper_kind(m, t, mean);
    if (alt < 0) {
      rest[nrest++] = t;
      rest_impact += impact;
      continue;
    }
    mapopt_guide_finding *g =
        add(p, C(OVERHEAD_BOUND), impact, t->task, NULL, NULL);
    if (!g)
      return;
    const char *kn = mapopt_shape_proc_name(t->kind);
    char a[32], b[32];
    mapopt__guide_fmt_ns(a, sizeof a, mean);
    mapopt__guide_fmt_ns(b, sizeof b, ovh);
    g->message = P("the %" PRId64 " points of %s take %s each on average, of "
                   "which %s is the %s's fixed cost per task",
                   t->points, t->task, a, b, kn);
    g->explain = P("Each task pays a fixed cost to start on a %s; when the "
                   "work itself is smaller, that cost sets the pace, and a "
                   "%s, cheaper to start, would finish %s sooner.",
                   kn, mapopt_shape_proc_name((mapopt_proc_kind)alt), t->task);
    const char *kinds =
        P("%s,%s", mapopt_shape_proc_name((mapopt_proc_kind)alt), kn);
    g->suggest = P("Run %s where a task costs less to start: `Task %s %s;`.",
                   t->task, t->task, kinds);
    mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_PROC_KINDS, t->task, NULL, NULL,
                       NULL, kinds);
  }
  if (nrest) {
    mapopt_guide_finding *g =
        add(p, C(OVERHEAD_BOUND), rest_impact, rest[0]->task, NULL, NULL);
    if (!g)
      return;
    const char *names = rest[0]->task;
    for (size_t i = 1; i < nrest; i++)
      names = P("%s, %s", names, rest[i]->task);
    char b[32];
    mapopt__guide_fmt_ns(b, sizeof b, m->procs[rest[0]->kind].overhead_ns);
    g->message = P("%s take%s little more than the %s's fixed cost per task "
                   "(%s) each",
                   names, nrest == 1 ? "s" : "",
                   mapopt_shape_proc_name(rest[0]->kind), b);
    g->explain = P("Each task pays a fixed cost to start; these tasks are so "
                   "small that the cost, not their work, sets their pace.");
    g->suggest = P("The mapper cannot make these tasks larger, and no other "
                   "kind would run them faster; look at the other findings.");
  }
  const mapopt_sim_critical_path *cp = &p->res->critical_path;
  double sh = share(cp->runtime_ns, (double)cp->length_ns);
  if (sh < RUNTIME_CP_SHARE)
    return;
  mapopt_guide_finding *g = add(p, C(OVERHEAD_BOUND), sh, NULL, NULL, NULL);
  if (!g)
    return;
  char a[32];
  mapopt__guide_fmt_ns(a, sizeof a, cp->runtime_ns);
  g->subject = P("the runtime");
  g->message = P("the runtime's own work (launching and mapping tasks) is "
                 "%.0f%% of the critical path (%s)",
                 100 * sh, a);
  g->explain = P("Every task costs the runtime a fixed amount of work to "
                 "launch and map; with many small tasks, that work and not "
                 "the computation sets the pace.");
  g->suggest = P("Avoid mapping decisions that add tasks or copies; on "
                 "several nodes, `ControlReplicate` on the launching task "
                 "spreads the mapping work over the nodes.");
}

/* ---- fb-near-capacity ---------------------------------------------------- */

static void fb_near_capacity(prof *p) {
  mapopt_findings *f = p->f;
  const mapopt_sim_mem_stats *full = NULL;
  double most = 0;
  for (size_t i = 0; i < mapopt_sim_result_nmems(p->res); i++) {
    const mapopt_sim_mem_stats *mm = mapopt_sim_result_mem(p->res, i);
    double x =
        mm->capacity > 0 ? (double)mm->peak_bytes / (double)mm->capacity : 0;
    if (mm->kind == MAPOPT_MEM_FBMEM && x > most) {
      most = x;
      full = mm;
    }
  }
  if (!full || most < FB_NEAR_CAPACITY)
    return;
  /* The busiest GPU task that copies read-only data into the framebuffer
   * -- the one whose inputs CollectMemory and InstanceLimit would trim --
   * and its argument that copies the most. */
  const mapopt_sim_task_stats *t = NULL;
  const mapopt_sim_req_stats *big = NULL;
  int64_t most_in = 0;
  for (size_t i = 0; i < mapopt_sim_result_ntop(p->res) && !t; i++) {
    const mapopt_sim_task_stats *ti = mapopt_sim_result_top_task(p->res, i);
    for (size_t r = 0; r < mapopt_sim_task_nreqs(ti); r++) {
      const mapopt_sim_req_stats *q = mapopt_sim_task_req(ti, r);
      int64_t in = 0;
      for (int k = 0; k < MAPOPT_MEM_KIND_COUNT; k++)
        in += q->copy_in_bytes[k];
      if (ti->kind == MAPOPT_PROC_GPU && q->priv == MAPOPT_PRIV_RO &&
          q->memory == MAPOPT_MEM_FBMEM && in > most_in) {
        most_in = in;
        big = q;
      }
      if (r + 1 == mapopt_sim_task_nreqs(ti) && big)
        t = ti;
    }
  }
  mapopt_guide_finding *g =
      add(p, C(FB_NEAR_CAPACITY), 0, t ? t->task : NULL, NULL, NULL);
  if (!g)
    return;
  char a[32], b[32];
  mapopt__guide_fmt_bytes(a, sizeof a, full->peak_bytes);
  mapopt__guide_fmt_bytes(b, sizeof b, full->capacity);
  g->message = P("FBMEM %" PRId64 " of node %" PRId64 " peaked at %s of %s "
                 "(%.0f%%)",
                 full->index, full->node, a, b, 100 * most);
  g->explain = P("The framebuffer is nearly full: a change that keeps more "
                 "data on the GPU, or maps more tasks ahead, will run out of "
                 "memory.");
  if (!t) {
    g->suggest = P("Keep new data out of FBMEM, or free inputs sooner with "
                   "`CollectMemory T *;` on the tasks that read them.");
    return;
  }
  const mapopt_program *prog = p->in->mapper;
  int64_t limit = prog ? mapopt_policy_instance_limit(prog, t->task) : 0;
  static const char *const star[] = {"*"};
  mapopt_region_keys any = {star, 1, 0};
  bool collected = prog && mapopt_policy_collect(prog, t->task, &any);
  if (collected && limit == 1) {
    const char *arg = req_name(f, big);
    g->suggest = P("%s already frees its inputs and maps one at a time: keep "
                   "new data out of FBMEM (its read-only %s could live in "
                   "ZCMEM, `Region %s %s GPU ZCMEM;`, at a cost in speed).",
                   t->task, arg, t->task, arg);
    return;
  }
  g->suggest = P("Make room before adding data: %s%s%s.",
                 collected ? ""
                           : P("`CollectMemory %s *;` frees %s's inputs "
                               "after it runs",
                               t->task, t->task),
                 !collected && limit != 1 ? "; " : "",
                 limit == 1 ? ""
                            : P("`InstanceLimit %s 1;` maps fewer %s ahead",
                                t->task, t->task));
  if (!collected)
    mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_COLLECT, t->task, "*", NULL,
                       NULL, "on");
  if (limit != 1)
    mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_INSTANCE_LIMIT, t->task, NULL,
                       NULL, NULL, "1");
}

/* ---- limit-stall --------------------------------------------------------- */

static void limit_stall(prof *p) {
  mapopt_findings *f = p->f;
  const mapopt_sim_critical_path *cp = &p->res->critical_path;
  double sh = share(cp->backpressure_ns, (double)cp->length_ns);
  if (sh < LIMIT_STALL_SHARE)
    return;
  /* The task whose mapping InstanceLimit held back longest on the path
   * (the attribution), when the mapper limits it. */
  const char *t = NULL;
  int64_t limit = 0, held = 0;
  for (size_t i = 0; p->in->mapper && i < mapopt_sim_result_nwaits(p->res);
       i++) {
    const mapopt_sim_wait *w = mapopt_sim_result_wait(p->res, i);
    int64_t l = w->task && w->cause == MAPOPT_SIM_CAUSE_INSTANCE_LIMIT
                    ? mapopt_policy_instance_limit(p->in->mapper, w->task)
                    : 0;
    if (l > 0 && w->exposed_ns > held) {
      t = w->task;
      limit = l;
      held = w->exposed_ns;
    }
  }
  mapopt_guide_finding *g = add(p, C(LIMIT_STALL), sh, t, NULL, NULL);
  if (!g)
    return;
  char a[32];
  mapopt__guide_fmt_ns(a, sizeof a, cp->backpressure_ns);
  g->message = P("%.0f%% of the critical path (%s) waits for InstanceLimit to "
                 "admit tasks",
                 100 * sh, a);
  g->explain = P("InstanceLimit holds tasks back until earlier ones finish, "
                 "so their inputs are not fetched ahead; here that waiting "
                 "delays the run.");
  if (!t) {
    g->suggest = P("Raise or remove the `InstanceLimit` statements, as far as "
                   "memory allows.");
    return;
  }
  g->suggest = P("Raise the limit, as far as memory allows: `InstanceLimit %s "
                 "%" PRId64 ";`, or remove it.",
                 t, 2 * limit);
  mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_INSTANCE_LIMIT, t, NULL, NULL,
                     NULL, P("%" PRId64, 2 * limit));
  mapopt__guide_edit(f, g, MAPOPT_GUIDE_EDIT_INSTANCE_LIMIT, t, NULL, NULL,
                     NULL, "none");
}

void mapopt__guide_profile_rules(const mapopt_guide_input *in,
                                 mapopt_findings *f) {
  const mapopt_sim_result *res = in->result;
  if (!res || res->error != MAPOPT_SIM_NONE || res->elapsed_ns <= 0)
    return;
  prof p = {in, res, f, (double)res->elapsed_ns, {{0}}};
  for (size_t i = 0; i < mapopt_sim_result_nprocs(res); i++) {
    mapopt_proc_kind k;
    if (mapopt_shape_proc_parse(mapopt_sim_result_proc(res, i)->kind, &k) !=
        MAPOPT_OK)
      continue; /* UTIL */
    kind_load *l = &p.load[k];
    l->n++;
    l->busy += mapopt_sim_result_proc(res, i)->busy_ns;
    if (mapopt_sim_result_proc(res, i)->busy_ns > l->max || l->n == 1) {
      l->max = mapopt_sim_result_proc(res, i)->busy_ns;
      l->max_at = i;
    }
  }
  zc_hot(&p);
  cpu_on_critical_path(&p);
  imbalance(&p);
  mapopt__guide_wait_rules(in, f);
  aos_few_fields(&p);
  overhead_bound(&p);
  limit_stall(&p);
  fb_near_capacity(&p);
}
