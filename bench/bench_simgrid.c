/*
 * Side-by-side speed of simulating the same task DAG with mapopt and with
 * SimGrid 3.32 (its C actor API). Built only when SimGrid is installed
 * (bench/CMakeLists.txt). Numbers go in issue notes, not in tests.
 *
 * The DAG is the 1-D halo-exchange stencil of gen_graph.h (2 * P * S point
 * tasks, P pieces block-mapped onto G GPUs). Per size:
 *
 * 1. mapopt: the model is built as JSON, instantiated, planned once and
 *    simulated a few times with the block mapper on the machine (default
 *    lassen:nodes=16, G = 64); the best CPU time of a simulation is kept.
 *    Its per-point task times (the report's busy time / points of relax and
 *    publish) become the SimGrid tasks' costs.
 *
 * 2. SimGrid, in a process of its own: this program again, run with
 *    --simgrid-child, given the graph and mapopt's figures on its stdin (a
 *    SimGrid engine can be initialised once per process; a fresh process,
 *    not a fork, so that SimGrid's time and peak RSS are its own, not
 *    those of a copy of the memory mapopt just used):
 *    - Platform, written to a temporary XML file: one host per GPU, named
 *      gpuK, with the GPU's f64 speed; a private link per GPU with the
 *      machine's FB_FB_PEER (NVLink) bandwidth and half its latency, and a
 *      link per node with the NETWORK bandwidth; Full routing: GPUs of a
 *      node talk over their two NVLink links (latency = FB_FB_PEER), GPUs
 *      of two nodes over NVLink, NIC, NIC, NVLink (latency ~ NETWORK).
 *      Network model CM02 with no cross-traffic, so bandwidth and latency
 *      are taken as given (no LV08 correction factors).
 *    - Encoding of the DAG: one actor per GPU host (the way mapopt runs
 *      one task at a time on a GPU processor). Each actor runs the tasks
 *      placed on its GPU in program order (a topological order), so
 *      same-GPU dependences hold by construction. For each dependence that
 *      crosses GPUs the producer, once its execution is done, sends an
 *      asynchronous, detached message to the consumer's GPU mailbox: the
 *      halo data (8 * H bytes) for a RAW dependence, an empty message for a
 *      WAR (ordering-only) one. Mailboxes are eager (a permanent receiver
 *      is set), so transfers start when sent. Before executing a task the
 *      actor takes messages from its mailbox until every cross-GPU
 *      predecessor of that task has reported (messages for later tasks are
 *      counted as they come). A task is one sg_actor_execute of
 *      (mapopt's per-point time) x (host speed) flops.
 *    - Timed: simgrid_run() (CPU time of the process, and wall time);
 *      setup (platform, DAG arrays, actors) is reported separately.
 *
 * The ratios: SimGrid's run against mapopt's best simulation; with setup,
 * SimGrid's setup and run against mapopt's plan build and best simulation
 * (the figures of a tuning run, which builds its plan once and simulates
 * on warm memory); end to end, against mapopt's instantiation, plan build
 * and first simulation (what one `mapopt sim` pays, fresh memory
 * included).
 *
 * What SimGrid does not model here and mapopt does: fills, the runtime's
 * launch and mapping costs on utility processors, instances and memory,
 * copy ports and channels. What SimGrid does that mapopt does not: max-min
 * bandwidth sharing of concurrent flows. Simulated times are printed for
 * reference only; the comparison is of simulation speed.
 *
 * Usage: bench_simgrid [MACHINE [TASKS...]]   default lassen:nodes=16 1e4 1e5
 * 1e6
 */
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>
#include <simgrid/version.h>

#include "gen_graph.h"
#include "mapopt/app.h"
#include "mapopt/dsl.h"
#include "mapopt/machine.h"
#include "mapopt/sim.h"

static double clock_s(clockid_t id) {
  struct timespec ts;
  clock_gettime(id, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
static double cpu_now(void) {
  return clock_s(CLOCK_PROCESS_CPUTIME_ID);
}
static double wall_now(void) {
  return clock_s(CLOCK_MONOTONIC);
}

/* ---- the mapopt side --------------------------------------------------------
 */

typedef struct mapopt_side {
  int64_t events, copies, elapsed_ns;
  double inst_s, plan_s;       /* CPU s: instantiation, plan build */
  double first_s, sim_s;       /* CPU s: first simulation, best one */
  double relax_ns, publish_ns; /* per point */
  /* platform numbers */
  int64_t nodes, gpus_per_node;
  double gpu_flops, nv_bw, nv_lat, net_bw, net_lat; /* flop/s, B/s, s */
} mapopt_side;

static gen_graph run_mapopt(const char *machine_arg, int64_t target,
                            mapopt_side *out) {
  mapopt_ctx *ctx;
  mapopt_diags *diags;
  if (mapopt_ctx_new(NULL, NULL, &ctx) != MAPOPT_OK ||
      mapopt_diags_new(ctx, &diags) != MAPOPT_OK)
    exit(1);
  mapopt_machine *m;
  if (mapopt_machine_resolve(ctx, machine_arg, diags, &m) != MAPOPT_OK)
    gen_die("bench_simgrid", "machine", diags);
  int64_t gpn = m->procs[MAPOPT_PROC_GPU].count;
  gen_graph g = gen_graph_sized(target, m->nodes * gpn);
  char *json = gen_app_json(&g);
  mapopt_app *app;
  if (mapopt_app_load_json(ctx, "bench1d.json", json, strlen(json), diags,
                           &app) != MAPOPT_OK)
    gen_die("bench_simgrid", "app load", diags);
  free(json);
  mapopt_app_options ao = {.iterations = g.S, .warmup = 0};
  mapopt_app_run *run;
  double t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
  if (mapopt_sim_instantiate(m, app, &ao, diags, &run) != MAPOPT_OK)
    gen_die("bench_simgrid", "instantiate", diags);
  out->inst_s = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
  mapopt_program *prog =
      gen_compile_mapper(ctx, m, app, run, diags, "bench_simgrid");

  t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
  mapopt_sim_plan *plan;
  if (mapopt_sim_plan_new(ctx, run, &plan) != MAPOPT_OK) {
    fprintf(stderr, "bench_simgrid: plan failed\n");
    exit(1);
  }
  out->plan_s = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
  int reps = target >= 500000 ? 2 : target >= 50000 ? 3 : 10;
  mapopt_sim_options so = {0};
  for (int r = 0; r < reps; r++) {
    mapopt_sim_result *res;
    t0 = clock_s(CLOCK_THREAD_CPUTIME_ID);
    if (mapopt_sim_run_plan(ctx, m, plan, prog, &so, &res) != MAPOPT_OK)
      exit(1);
    double dt = clock_s(CLOCK_THREAD_CPUTIME_ID) - t0;
    if (r == 0)
      out->first_s = dt;
    if (r == 0 || dt < out->sim_s)
      out->sim_s = dt;
    if (res->error != MAPOPT_SIM_NONE) {
      fprintf(stderr, "bench_simgrid: mapopt simulated error %s\n",
              mapopt_sim_error_name(res->error));
      exit(1);
    }
    out->events = res->events;
    out->elapsed_ns = res->elapsed_ns;
    out->copies = 0;
    for (int k = 0; k < MAPOPT_CHAN_COUNT; k++)
      out->copies += res->copies[k].count;
    for (size_t k = 0; k < res->ntop; k++) {
      const mapopt_sim_task_stats *ts = &res->top_tasks[k];
      double per = ts->points ? (double)ts->busy_ns / (double)ts->points : 0;
      if (!strcmp(ts->task, "relax"))
        out->relax_ns = per;
      else if (!strcmp(ts->task, "publish"))
        out->publish_ns = per;
    }
    mapopt_sim_result_free(res);
  }
  out->nodes = m->nodes;
  out->gpus_per_node = gpn;
  out->gpu_flops = (double)m->procs[MAPOPT_PROC_GPU].mflops_f64 * 1e6;
  const mapopt_channel_params *peer = &m->channels[MAPOPT_CHAN_FB_FB_PEER];
  const mapopt_channel_params *net = &m->channels[MAPOPT_CHAN_NETWORK];
  out->nv_bw = peer->present ? (double)peer->bw_mbps * 1e6 : 50e9;
  out->nv_lat = peer->present ? (double)peer->lat_ns * 1e-9 : 7e-6;
  out->net_bw = net->present ? (double)net->bw_mbps * 1e6 : 25e9;
  out->net_lat = net->present ? (double)net->lat_ns * 1e-9 : 8e-6;

  mapopt_sim_plan_free(plan);
  mapopt_dsl_free(prog);
  mapopt_app_run_free(run);
  mapopt_app_free(app);
  mapopt_machine_free(m);
  mapopt_diags_free(diags);
  mapopt_ctx_free(ctx);
  return g;
}

/* ---- the SimGrid side (in the child) ---------------------------------------
 */

typedef struct simgrid_side {
  double setup_cpu, run_cpu, run_wall, clock;
  int64_t execs, comms;
  long maxrss_kib;
} simgrid_side;

static gen_graph G_;       /* the graph */
static double flops_[2];   /* per task kind: relax, publish */
static int32_t *pending_;  /* cross-GPU predecessors not yet reported */
static int64_t *succ_off_; /* CSR of cross-GPU successors */
static int64_t *succ_;
static int64_t *succ_bytes_;
static sg_mailbox_t *mbox_; /* one per GPU host */

static void gpu_actor(int argc, char **argv) {
  (void)argc;
  int64_t h = atoll(argv[1]);
  const gen_graph *g = &G_;
  sg_mailbox_set_receiver(sg_mailbox_get_name(mbox_[h])); /* eager */
  /* The pieces of this GPU: i * G / P == h. */
  int64_t lo = (h * g->P + g->G - 1) / g->G;
  int64_t hi = ((h + 1) * g->P + g->G - 1) / g->G;
  for (int64_t t = 0; t < g->S; t++)
    for (int kind = 0; kind < 2; kind++)
      for (int64_t i = lo; i < hi; i++) {
        int64_t k = gen_id(g, t, kind, i);
        while (pending_[k] > 0) {
          intptr_t who = (intptr_t)sg_mailbox_get(mbox_[h]);
          pending_[who - 1]--;
        }
        sg_actor_execute(flops_[kind]);
        for (int64_t e = succ_off_[k]; e < succ_off_[k + 1]; e++) {
          int64_t s = succ_[e];
          sg_comm_t c = sg_mailbox_put_init(mbox_[gen_gpu(g, s)],
                                            (void *)(intptr_t)(s + 1),
                                            (long)succ_bytes_[e]);
          sg_comm_detach(c, NULL); /* starts it */
        }
      }
}

static void write_platform(const char *path, const mapopt_side *ms) {
  FILE *f = fopen(path, "w");
  if (!f) {
    perror(path);
    _exit(1);
  }
  int64_t G = ms->nodes * ms->gpus_per_node;
  fprintf(f, "<?xml version='1.0'?>\n"
             "<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
             "<platform version=\"4.1\">\n"
             "<zone id=\"machine\" routing=\"Full\">\n");
  for (int64_t k = 0; k < G; k++)
    fprintf(f, "  <host id=\"gpu%" PRId64 "\" speed=\"%.6g\"/>\n", k,
            ms->gpu_flops);
  for (int64_t k = 0; k < G; k++)
    fprintf(f,
            "  <link id=\"nv%" PRId64 "\" bandwidth=\"%.6gBps\" "
            "latency=\"%.6gs\"/>\n",
            k, ms->nv_bw, ms->nv_lat / 2);
  double nic_lat = (ms->net_lat - ms->nv_lat) / 2;
  if (nic_lat < 0)
    nic_lat = 0;
  for (int64_t n = 0; n < ms->nodes; n++)
    fprintf(f,
            "  <link id=\"nic%" PRId64 "\" bandwidth=\"%.6gBps\" "
            "latency=\"%.6gs\"/>\n",
            n, ms->net_bw, nic_lat);
  for (int64_t a = 0; a < G; a++)
    for (int64_t b = a + 1; b < G; b++) {
      int64_t na = a / ms->gpus_per_node, nb = b / ms->gpus_per_node;
      fprintf(f,
              "  <route src=\"gpu%" PRId64 "\" dst=\"gpu%" PRId64 "\">"
              "<link_ctn id=\"nv%" PRId64 "\"/>",
              a, b, a);
      if (na != nb)
        fprintf(f,
                "<link_ctn id=\"nic%" PRId64 "\"/><link_ctn id=\"nic%" PRId64
                "\"/>",
                na, nb);
      fprintf(f, "<link_ctn id=\"nv%" PRId64 "\"/></route>\n", b);
    }
  fprintf(f, "</zone>\n</platform>\n");
  fclose(f);
}

static void run_simgrid(const gen_graph *g, const mapopt_side *ms,
                        simgrid_side *out) {
  double c0 = cpu_now();
  char path[] = "/tmp/bench_simgrid_XXXXXX";
  int fd = mkstemp(path);
  if (fd < 0) {
    perror("mkstemp");
    _exit(1);
  }
  close(fd);
  write_platform(path, ms);

  int sargc = 5;
  char *sargv[] = {"bench_simgrid",
                   "--log=root.thres:critical",
                   "--cfg=network/model:CM02",
                   "--cfg=network/crosstraffic:0",
                   "--cfg=contexts/factory:raw",
                   NULL};
  simgrid_init(&sargc, sargv);
  simgrid_load_platform(path);
  unlink(path);

  G_ = *g;
  flops_[0] = ms->relax_ns * 1e-9 * ms->gpu_flops;
  flops_[1] = ms->publish_ns * 1e-9 * ms->gpu_flops;
  int64_t n = gen_tasks(g);
  pending_ = calloc((size_t)n, sizeof *pending_);
  succ_off_ = calloc((size_t)n + 1, sizeof *succ_off_);
  int64_t pred[3], bytes[3];
  for (int64_t k = 0; k < n; k++) {
    int np = gen_preds(g, k, pred, bytes);
    for (int j = 0; j < np; j++)
      if (gen_gpu(g, pred[j]) != gen_gpu(g, k)) {
        pending_[k]++;
        succ_off_[pred[j] + 1]++;
      }
  }
  for (int64_t k = 0; k < n; k++)
    succ_off_[k + 1] += succ_off_[k];
  int64_t m = succ_off_[n];
  succ_ = malloc((size_t)(m ? m : 1) * sizeof *succ_);
  succ_bytes_ = malloc((size_t)(m ? m : 1) * sizeof *succ_bytes_);
  int64_t *fillp = malloc((size_t)n * sizeof *fillp);
  memcpy(fillp, succ_off_, (size_t)n * sizeof *fillp);
  for (int64_t k = 0; k < n; k++) {
    int np = gen_preds(g, k, pred, bytes);
    for (int j = 0; j < np; j++)
      if (gen_gpu(g, pred[j]) != gen_gpu(g, k)) {
        int64_t e = fillp[pred[j]]++;
        succ_[e] = k;
        succ_bytes_[e] = bytes[j];
      }
  }
  free(fillp);

  mbox_ = calloc((size_t)g->G, sizeof *mbox_);
  for (int64_t h = 0; h < g->G; h++) {
    char name[32], arg[32];
    snprintf(name, sizeof name, "gpu%" PRId64, h);
    snprintf(arg, sizeof arg, "%" PRId64, h);
    mbox_[h] = sg_mailbox_by_name(name);
    char *argv[] = {name, arg, NULL};
    sg_actor_create(name, sg_host_by_name(name), gpu_actor, 2, argv);
  }
  out->setup_cpu = cpu_now() - c0;
  out->execs = n;
  out->comms = m;

  double w0 = wall_now();
  c0 = cpu_now();
  simgrid_run();
  out->run_cpu = cpu_now() - c0;
  out->run_wall = wall_now() - w0;
  out->clock = simgrid_get_clock();
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  out->maxrss_kib = ru.ru_maxrss;
}

/* Moves n bytes between fd and p (read or write), whole; false if not. */
static bool read_all(int fd, void *p, size_t n) {
  for (size_t k = 0; k < n;) {
    ssize_t r = read(fd, (char *)p + k, n - k);
    if (r <= 0)
      return false;
    k += (size_t)r;
  }
  return true;
}

static bool write_all(int fd, const void *p, size_t n) {
  for (size_t k = 0; k < n;) {
    ssize_t w = write(fd, (const char *)p + k, n - k);
    if (w <= 0)
      return false;
    k += (size_t)w;
  }
  return true;
}

/* The --simgrid-child side: the graph and mapopt's figures from stdin,
 * SimGrid's numbers to stdout. */
static int simgrid_child(void) {
  gen_graph g;
  mapopt_side ms;
  if (!read_all(0, &g, sizeof g) || !read_all(0, &ms, sizeof ms))
    return 1;
  simgrid_side r = {0};
  run_simgrid(&g, &ms, &r);
  _exit(write_all(1, &r, sizeof r) ? 0 : 1); /* skip SimGrid's teardown */
}

/* Runs SimGrid in a fresh process (this program with --simgrid-child) and
 * returns its numbers through pipes. */
static int simgrid_in_child(const gen_graph *g, const mapopt_side *ms,
                            simgrid_side *out) {
  int to[2], from[2];
  if (pipe(to) != 0)
    return -1;
  if (pipe(from) != 0) {
    close(to[0]);
    close(to[1]);
    return -1;
  }
  fflush(stdout);
  pid_t pid = fork();
  if (pid < 0)
    return -1;
  if (pid == 0) {
    dup2(to[0], 0);
    dup2(from[1], 1);
    close(to[0]);
    close(to[1]);
    close(from[0]);
    close(from[1]);
    execl("/proc/self/exe", "bench_simgrid", "--simgrid-child", (char *)NULL);
    _exit(127);
  }
  close(to[0]);
  close(from[1]);
  bool sent =
      write_all(to[1], g, sizeof *g) && write_all(to[1], ms, sizeof *ms);
  close(to[1]);
  bool got = sent && read_all(from[0], out, sizeof *out);
  close(from[0]);
  int status;
  waitpid(pid, &status, 0);
  return got && WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  if (argc == 2 && !strcmp(argv[1], "--simgrid-child"))
    return simgrid_child();
  const char *machine = argc > 1 ? argv[1] : "lassen:nodes=16";
  static const double defaults[] = {1e4, 1e5, 1e6};
  int nsizes = argc > 2 ? argc - 2 : 3;
  printf("machine %s; 1-D halo stencil (gen_graph.h); SimGrid %d.%d, one "
         "actor per GPU\n",
         machine, SIMGRID_VERSION_MAJOR, SIMGRID_VERSION_MINOR);
  printf("columns: point tasks; mapopt: events, simulated s, CPU s per "
         "simulation (best), plan CPU s;\n"
         "  SimGrid: executions, messages, simulated s, run CPU s, run "
         "wall s, setup CPU s, peak RSS MiB;\n"
         "  ratio = SimGrid run CPU / mapopt simulation CPU; with setup = "
         "(SimGrid setup + run) / (mapopt plan + simulation);\n"
         "  then mapopt's events/s per core (best simulation), "
         "instantiation and first simulation CPU s, and\n"
         "  end to end = (SimGrid setup + run) / (mapopt instantiation + "
         "plan + first simulation)\n");
  printf("%9s | %9s %8s %8s %7s | %8s %7s %8s %8s %8s %7s %6s | %6s %6s | "
         "%8s %6s %6s %6s\n",
         "tasks", "m_events", "m_sim_s", "m_cpu_s", "m_plan", "sg_exec",
         "sg_msg", "sg_sim_s", "sg_cpu_s", "sg_wall", "sg_set", "sg_MiB",
         "ratio", "w_set", "m_ev/s", "m_inst", "m_1st", "e2e");
  for (int s = 0; s < nsizes; s++) {
    int64_t target =
        argc > 2 ? (int64_t)strtod(argv[2 + s], NULL) : (int64_t)defaults[s];
    mapopt_side ms = {0};
    gen_graph g = run_mapopt(machine, target, &ms);
    simgrid_side sg = {0};
    if (simgrid_in_child(&g, &ms, &sg) != 0) {
      fprintf(stderr, "bench_simgrid: the SimGrid run failed\n");
      return 1;
    }
    double sg_all = sg.setup_cpu + sg.run_cpu;
    printf("%9" PRId64 " | %9" PRId64 " %8.4f %8.3f %7.3f | %8" PRId64
           " %7" PRId64 " %8.4f %8.3f %8.3f %7.3f %6.0f | %6.2f %6.2f | "
           "%8.3g %6.3f %6.3f %6.2f\n",
           gen_tasks(&g), ms.events, (double)ms.elapsed_ns * 1e-9, ms.sim_s,
           ms.plan_s, sg.execs, sg.comms, sg.clock, sg.run_cpu, sg.run_wall,
           sg.setup_cpu, (double)sg.maxrss_kib / 1024.0, sg.run_cpu / ms.sim_s,
           sg_all / (ms.plan_s + ms.sim_s), (double)ms.events / ms.sim_s,
           ms.inst_s, ms.first_s,
           sg_all / (ms.inst_s + ms.plan_s + ms.first_s));
    fflush(stdout);
  }
  return 0;
}
