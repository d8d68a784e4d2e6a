/*
 * `mapopt machine probe`: deriving the `local` machine from this host
 * (docs/machines.md, "Probing this host").
 *
 * Facts come from Linux's /sys and /proc (sockets, cores, clock and vector
 * flags, memory) and from the NVIDIA driver (/proc/driver/nvidia, or
 * nvidia-smi when it is installed). Each GPU model is looked up in a small
 * table of public specification figures. Everything else follows the fixed
 * rules below, so two hosts with the same facts give the same model.
 *
 * Nothing here may fail because the host is unusual: a missing or
 * unreadable file falls back to a stated default, and the "sources" object
 * of the result records where every figure came from. The facts are turned
 * into `mapopt-machine/1` text and loaded with the ordinary loader, so the
 * probe can only produce machines that the loader accepts.
 *
 * The probe is slow (a directory walk, maybe a subprocess, maybe a 0.5 s
 * benchmark) and never runs during an evaluation: the CLI writes its result
 * to ~/.cache/mapopt/local.json once, and runs load that file.
 */
#include <ctype.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "machine/machine.h"

/* ---- GPU specification table -------------------------------------------- */

typedef struct gpu_model {
  const char *name;
  double tf_f64, tf_f64_matrix, tf_f32;
  double hbm_gbs;                      /* peak memory bandwidth */
  int64_t mem_mib;                     /* nominal memory */
  double host_gbs;                     /* achievable host link per direction */
  double zc_gbs, zc_gather, zc_atomic; /* direct access to pinned host memory */
} gpu_model;

/* Public specification sheets [src]; host-link and ZC figures [est] from the
 * PCIe generation, as in the presets (PCIe 3: 12 GB/s, 4: 25, 5: 50). */
static const gpu_model gpu_table[] = {
    {"P100", 4.7, 4.7, 9.3, 732, 16384, 12, 11, 20, 4},
    {"V100", 7.8, 7.8, 15.7, 900, 16384, 12, 11, 20, 4},
    {"A100", 9.7, 19.5, 19.5, 1555, 40960, 25, 22, 40, 8},
    {"H100", 34, 67, 67, 3350, 81920, 50, 50, 80, 15},
    {"L4", 0.47, 0.47, 30.3, 300, 24576, 25, 22, 40, 8},
    {"T4", 0.25, 0.25, 8.1, 320, 16384, 12, 11, 20, 4},
    {"A10", 0.49, 0.49, 31.2, 600, 24576, 25, 22, 40, 8},
};
/* An unknown GPU: 5 TF f32, 300 GB/s, 16 GB; f64 at half rate [est]. */
static const gpu_model gpu_generic = {"generic", 2.5, 2.5, 5,  300,
                                      16384,     12,  11,  20, 4};

/* The table entry whose name appears in s as a word of its own ("A10" is
 * not found in "A100", "L4" not in "L40S"); the generic entry otherwise. */
static const gpu_model *gpu_lookup(const char *s) {
  for (size_t i = 0; i < sizeof gpu_table / sizeof gpu_table[0]; i++) {
    const char *name = gpu_table[i].name;
    size_t n = strlen(name);
    for (const char *p = s; (p = strstr(p, name)) != NULL; p++) {
      bool left = p == s || !isalnum((unsigned char)p[-1]);
      bool right = !isdigit((unsigned char)p[n]);
      if (left && right)
        return &gpu_table[i];
    }
  }
  return &gpu_generic;
}

/* ---- facts -------------------------------------------------------------- */

typedef struct facts {
  int64_t sockets, cores, ram_mib;
  double ghz;
  int flops_per_cycle;
  int64_t gpus, gpu_mem_mib;
  const gpu_model *gpu;
  char gpu_name[128];
  double core_gbs; /* memory bandwidth of one core */
} facts;

typedef struct probe {
  mapopt_ctx *ctx;
  const char *root;
  mapopt__strbuf src; /* the "sources" members, as JSON */
  bool nomem;
} probe;

static void json_str(mapopt__strbuf *sb, const char *s) {
  mapopt__sb_putc(sb, '"');
  for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
    if (*p == '"' || *p == '\\')
      mapopt__sb_printf(sb, "\\%c", *p);
    else if (*p < 0x20 || *p >= 0x7f) /* host strings may not be UTF-8 */
      mapopt__sb_printf(sb, "\\u%04x", *p);
    else
      mapopt__sb_putc(sb, (char)*p);
  }
  mapopt__sb_putc(sb, '"');
}

static void source(probe *P, const char *key, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void source(probe *P, const char *key, const char *fmt, ...) {
  mapopt__strbuf msg;
  mapopt__sb_init(&msg, P->src.ctx);
  va_list ap;
  va_start(ap, fmt);
  mapopt__sb_vprintf(&msg, fmt, ap);
  va_end(ap);
  mapopt__sb_puts(&P->src, P->src.len ? ",\n    " : "\n    ");
  json_str(&P->src, key);
  mapopt__sb_puts(&P->src, ": ");
  json_str(&P->src, msg.data ? msg.data : "");
  if (msg.failed)
    P->src.failed = true;
  mapopt__sb_destroy(&msg);
}

static FILE *open_at(const probe *P, const char *path) {
  char full[4096];
  snprintf(full, sizeof full, "%s%s", P->root, path);
  return fopen(full, "r");
}

/* "key<spaces>: value" lines of /proc/cpuinfo and the driver's files. */
static const char *field(const char *line, const char *key) {
  size_t n = strlen(key);
  if (strncmp(line, key, n) != 0)
    return NULL;
  line += n;
  while (*line == ' ' || *line == '\t')
    line++;
  if (*line != ':')
    return NULL;
  line++;
  while (*line == ' ' || *line == '\t')
    line++;
  return line;
}

static bool has_flag(const char *flags, const char *flag) {
  size_t n = strlen(flag);
  for (const char *p = flags; (p = strstr(p, flag)) != NULL; p++)
    if ((p == flags || p[-1] == ' ') &&
        (p[n] == ' ' || p[n] == '\n' || p[n] == '\0'))
      return true;
  return false;
}

/* Sockets: the NUMA nodes under /sys/devices/system/node. */
static int64_t count_numa_nodes(const probe *P) {
  char path[4096];
  snprintf(path, sizeof path, "%s/sys/devices/system/node", P->root);
  DIR *d = opendir(path);
  if (!d)
    return 0;
  int64_t n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strncmp(e->d_name, "node", 4) == 0 &&
        isdigit((unsigned char)e->d_name[4]))
      n++;
  closedir(d);
  return n;
}

/* Cores, clock and vector width from /proc/cpuinfo. Cores are distinct
 * (physical id, core id) pairs, so hyperthreads do not count twice; without
 * those fields (non-x86), every "processor" entry is a core. */
static void read_cpuinfo(probe *P, facts *F, int64_t *packages) {
  F->cores = 0;
  F->ghz = 0;
  F->flops_per_cycle = 0;
  *packages = 0;
  FILE *f = open_at(P, "/proc/cpuinfo");
  if (!f)
    return;
  mapopt__vec pairs;
  mapopt__vec_init(&pairs, sizeof(int64_t));
  int64_t processors = 0, phys = -1, maxphys = -1;
  char line[8192];
  while (fgets(line, sizeof line, f)) {
    const char *v;
    if ((v = field(line, "processor")) != NULL) {
      processors++;
      phys = 0;
    } else if ((v = field(line, "physical id")) != NULL) {
      phys = strtoll(v, NULL, 10);
      if (phys > maxphys)
        maxphys = phys;
    } else if ((v = field(line, "core id")) != NULL) {
      int64_t key = phys * 1000000 + strtoll(v, NULL, 10);
      bool seen = false;
      for (size_t i = 0; i < pairs.len && !seen; i++)
        seen = MAPOPT__VEC_AT(&pairs, int64_t, i) == key;
      if (!seen) {
        int64_t *slot = mapopt__vec_push(&pairs, P->ctx);
        if (slot)
          *slot = key;
        else
          P->nomem = true;
      }
    } else if ((v = field(line, "cpu MHz")) != NULL && F->ghz == 0) {
      F->ghz = strtod(v, NULL) / 1000.0;
    } else if ((v = field(line, "flags")) != NULL && !F->flops_per_cycle) {
      /* A long flags line may have been split by fgets; the flags we need
       * come early on every x86 CPU. */
      F->flops_per_cycle = has_flag(v, "avx512f")                      ? 32
                           : has_flag(v, "avx2") && has_flag(v, "fma") ? 16
                                                                       : 4;
    }
  }
  fclose(f);
  F->cores = pairs.len ? (int64_t)pairs.len : processors;
  *packages = maxphys + 1;
  mapopt__vec_destroy(&pairs, P->ctx);
}

/* cpuinfo_max_freq in kHz, for hosts whose cpuinfo has no "cpu MHz". */
static double max_freq_ghz(const probe *P) {
  FILE *f = open_at(P, "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  if (!f)
    return 0;
  long long khz = 0;
  if (fscanf(f, "%lld", &khz) != 1)
    khz = 0;
  fclose(f);
  return khz > 0 ? (double)khz / 1e6 : 0;
}

static int64_t read_ram_mib(const probe *P) {
  FILE *f = open_at(P, "/proc/meminfo");
  if (!f)
    return 0;
  char line[256];
  int64_t kib = 0;
  while (fgets(line, sizeof line, f)) {
    const char *v = field(line, "MemTotal");
    if (v) {
      kib = strtoll(v, NULL, 10);
      break;
    }
  }
  fclose(f);
  return kib / 1024;
}

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* GPUs listed by the driver: one folder per GPU, whose "information" file
 * has a "Model:" line. The first in name order names the model. */
static void read_driver_gpus(probe *P, facts *F) {
  char path[4096];
  snprintf(path, sizeof path, "%s/proc/driver/nvidia/gpus", P->root);
  DIR *d = opendir(path);
  if (!d)
    return;
  char first[256] = "";
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.')
      continue;
    char info[512];
    snprintf(info, sizeof info, "/proc/driver/nvidia/gpus/%.200s/information",
             e->d_name);
    FILE *f = open_at(P, info);
    if (!f)
      continue;
    char line[512];
    char model[128] = "";
    while (fgets(line, sizeof line, f)) {
      const char *v = field(line, "Model");
      if (v) {
        snprintf(model, sizeof model, "%s", v);
        model[strcspn(model, "\r\n")] = '\0';
        break;
      }
    }
    fclose(f);
    F->gpus++;
    const char *names[2] = {e->d_name, first};
    if (!first[0] || cmp_str(&names[0], &names[1]) < 0) {
      snprintf(first, sizeof first, "%.200s", e->d_name);
      snprintf(F->gpu_name, sizeof F->gpu_name, "%s", model[0] ? model : "?");
    }
  }
  closedir(d);
}

/* True when an executable nvidia-smi is on PATH (so that popen does not
 * print "not found" on hosts without the driver). */
static bool have_nvidia_smi(void) {
  const char *path = getenv("PATH");
  if (!path)
    return false;
  while (*path) {
    size_t n = strcspn(path, ":");
    char exe[4096];
    if (n > 0 && n < sizeof exe - 16) {
      snprintf(exe, sizeof exe, "%.*s/nvidia-smi", (int)n, path);
      if (access(exe, X_OK) == 0)
        return true;
    }
    path += n;
    if (*path == ':')
      path++;
  }
  return false;
}

/* "NVIDIA H100 80GB HBM3, 81559" per GPU. */
static void read_smi_gpus(facts *F) {
  FILE *p = popen("nvidia-smi --query-gpu=name,memory.total "
                  "--format=csv,noheader,nounits 2>/dev/null",
                  "r");
  if (!p)
    return;
  char line[512];
  while (fgets(line, sizeof line, p)) {
    char *comma = strrchr(line, ',');
    if (!comma)
      continue;
    *comma = '\0';
    if (F->gpus == 0) {
      snprintf(F->gpu_name, sizeof F->gpu_name, "%.100s", line);
      F->gpu_mem_mib = strtoll(comma + 1, NULL, 10);
    }
    F->gpus++;
  }
  pclose(p);
}

/* Memory in the model name ("A100-SXM4-80GB"), in MiB; 0 if none. */
static int64_t mem_from_name(const char *s) {
  for (const char *p = s; *p; p++)
    if (isdigit((unsigned char)*p) &&
        (p == s || !isalnum((unsigned char)p[-1]))) {
      char *end;
      long long gb = strtoll(p, &end, 10);
      if (gb > 0 && gb <= 1024 && end[0] == 'G' && end[1] == 'B')
        return gb * 1024;
    }
  return 0;
}

/* ---- the copy benchmark ------------------------------------------------- */

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* memcpy between two buffers larger than any cache, for 0.5 s: the bytes
 * one core moves per second. 0 when the buffers cannot be allocated. */
static double measure_copy_gbs(mapopt_ctx *ctx) {
  const size_t n = (size_t)64 << 20;
  char *a = mapopt__malloc(ctx, n), *b = mapopt__malloc(ctx, n);
  double gbs = 0;
  if (a && b) {
    memset(a, 1, n);
    memset(b, 2, n);
    memcpy(b, a, n); /* warm-up: fault every page in */
    double t0 = now_s(), t;
    size_t bytes = 0;
    do {
      memcpy(b, a, n);
      a[bytes % n] ^= b[(bytes / 7) % n]; /* keeps the copies observable */
      bytes += n;
      t = now_s();
    } while (t - t0 < 0.5);
    gbs = (double)bytes / (t - t0) / 1e9;
  }
  mapopt__free(ctx, a, n);
  mapopt__free(ctx, b, n);
  return gbs;
}

/* ---- the model ---------------------------------------------------------- */

static int64_t clamp(int64_t v, int64_t lo, int64_t hi) {
  return v < lo ? lo : v > hi ? hi : v;
}

static void gather_facts(probe *P, facts *F, bool use_smi, bool measure) {
  int64_t packages = 0;
  read_cpuinfo(P, F, &packages);
  if (F->cores > 0)
    source(P, "cores", "%" PRId64 " cores from /proc/cpuinfo", F->cores);
  else {
    long n = P->root[0] ? 0 : sysconf(_SC_NPROCESSORS_ONLN);
    F->cores = n > 0 ? n : 1;
    source(P, "cores", "/proc/cpuinfo unreadable: %" PRId64 " core%s from %s",
           F->cores, F->cores == 1 ? "" : "s",
           n > 0 ? "sysconf(_SC_NPROCESSORS_ONLN)" : "the default");
  }
  F->cores = clamp(F->cores, 1, 4096);

  int64_t numa = count_numa_nodes(P);
  if (numa > 0) {
    F->sockets = numa;
    source(P, "sockets", "%" PRId64 " NUMA node%s in /sys/devices/system/node",
           numa, numa == 1 ? "" : "s");
  } else if (packages > 0) {
    F->sockets = packages;
    source(P, "sockets",
           "/sys/devices/system/node missing: %" PRId64
           " physical package%s in /proc/cpuinfo",
           packages, packages == 1 ? "" : "s");
  } else {
    F->sockets = 1;
    source(P, "sockets",
           "/sys/devices/system/node missing: 1 socket "
           "assumed");
  }
  F->sockets = clamp(F->sockets, 1, F->cores < 64 ? F->cores : 64);

  const char *ghz_from = "cpu MHz in /proc/cpuinfo";
  if (F->ghz <= 0) {
    F->ghz = max_freq_ghz(P);
    ghz_from = "cpufreq/cpuinfo_max_freq";
  }
  if (F->ghz <= 0 || F->ghz > 10) {
    F->ghz = 2.0;
    ghz_from = "the default (no clock found)";
  }
  const char *fpc_from = F->flops_per_cycle == 32   ? "avx512f"
                         : F->flops_per_cycle == 16 ? "avx2 and fma"
                         : F->flops_per_cycle == 4  ? "no avx2+fma or avx512f"
                                                    : "no flags line";
  if (!F->flops_per_cycle)
    F->flops_per_cycle = 4;
  source(P, "cpu_peak",
         "%.3f GHz (%s) x %d flop/cycle f64 (%s); f32 twice that", F->ghz,
         ghz_from, F->flops_per_cycle, fpc_from);

  F->ram_mib = read_ram_mib(P);
  if (F->ram_mib > 0)
    source(P, "memory",
           "MemTotal %" PRId64 " MiB in /proc/meminfo; SYSMEM 60%%, SOCKMEM "
           "20%% split over the sockets [est]",
           F->ram_mib);
  else {
    F->ram_mib = 8192;
    source(P, "memory", "/proc/meminfo unreadable: 8192 MiB of RAM assumed");
  }

  read_driver_gpus(P, F);
  const char *gpu_from = "/proc/driver/nvidia/gpus";
  if (!F->gpus && use_smi && have_nvidia_smi()) {
    read_smi_gpus(F);
    gpu_from = "nvidia-smi";
  }
  F->gpus = clamp(F->gpus, 0, 1024);
  if (F->gpus) {
    F->gpu = gpu_lookup(F->gpu_name);
    int64_t mem = F->gpu_mem_mib;
    const char *mem_from = "nvidia-smi";
    if (mem <= 0) {
      mem = mem_from_name(F->gpu_name);
      mem_from = "the model name";
    }
    if (mem <= 0) {
      mem = F->gpu->mem_mib;
      mem_from = "the GPU table";
    }
    F->gpu_mem_mib = mem > 2048 ? mem : 2048;
    source(P, "GPU",
           "%" PRId64 " x \"%s\" from %s; rates of the %s entry of the GPU "
           "table [src]; memory %" PRId64 " MiB from %s, FBMEM 1 GiB less; "
           "host link and peer copies over PCIe [est]",
           F->gpus, F->gpu_name, gpu_from, F->gpu->name, F->gpu_mem_mib,
           mem_from);
  } else {
    source(P, "GPU", "no NVIDIA GPU found (%s%s)", "/proc/driver/nvidia/gpus",
           use_smi ? ", nvidia-smi" : "");
  }

  F->core_gbs = 10;
  if (measure) {
    double g = measure_copy_gbs(P->ctx);
    if (g > 0.01) {
      F->core_gbs = g;
      source(P, "bandwidth",
             "memcpy benchmark (0.5 s): %.2f GB/s per core, capped at 100 "
             "GB/s per socket",
             g);
    } else {
      source(P, "bandwidth",
             "benchmark buffers unavailable: 10 GB/s per "
             "core, capped at 100 GB/s per socket [est]");
    }
  } else {
    source(P, "bandwidth",
           "10 GB/s per core, capped at 100 GB/s per socket [est] "
           "(mapopt machine probe --measure benchmarks it)");
  }
}

/* A rate in GB/s (or GFLOP/s, M/s) as the file writes it: 3 decimals. */
static void put_rate(mapopt__strbuf *sb, const char *key, double v) {
  if (v < 0.001)
    v = 0.001;
  mapopt__sb_printf(sb, "\"%s\": %.3f", key, v);
}

static void edge(mapopt__strbuf *sb, bool *first, const char *proc,
                 const char *mem, double bw, int lat, double gather,
                 double atomic) {
  mapopt__sb_puts(sb, *first ? "\n    " : ",\n    ");
  *first = false;
  mapopt__sb_printf(sb, "{\"proc\": \"%s\", \"mem\": \"%s\", ", proc, mem);
  put_rate(sb, "bw_gbs", bw);
  mapopt__sb_printf(sb, ", \"lat_ns\": %d, ", lat);
  put_rate(sb, "gather_mps", gather);
  mapopt__sb_puts(sb, ", ");
  put_rate(sb, "atomic_mps", atomic);
  mapopt__sb_putc(sb, '}');
}

/* The probe's rules, written as `mapopt-machine/1` text. */
static void write_model(const facts *F, mapopt__strbuf *sb,
                        const mapopt__strbuf *src) {
  int64_t cores = F->cores, sockets = F->sockets;
  int64_t per_socket = cores / sockets > 0 ? cores / sockets : 1;
  int64_t util = cores <= 4 ? 1 : 2;
  int64_t omp = cores >= 8 ? sockets : 0;
  int64_t threads = per_socket / 2 > 0 ? per_socket / 2 : 1;
  int64_t cpu = cores - util - omp * threads - 1;
  if (cpu < 1)
    cpu = 1;
  double f64 = F->ghz * F->flops_per_cycle;
  double core_bw = F->core_gbs < 100 ? F->core_gbs : 100;
  double socket_bw = core_bw * (double)per_socket;
  if (socket_bw > 100)
    socket_bw = 100;
  double omp_bw = core_bw * (double)threads;
  if (omp_bw > socket_bw)
    omp_bw = socket_bw;
  int64_t gpus = F->gpus;

  mapopt__sb_printf(sb,
                    "{\n  \"format\": \"mapopt-machine/1\",\n"
                    "  \"name\": \"local\",\n"
                    "  \"nodes\": 1, \"ranks_per_node\": 1, \"sockets\": "
                    "%" PRId64 ",\n  \"params\": {\"nodes\": {\"max\": 1024}",
                    sockets);
  if (gpus)
    mapopt__sb_printf(sb, ", \"ranks_per_node\": {\"max\": %" PRId64 "}", gpus);
  mapopt__sb_puts(sb, "},\n  \"processors\": {\n    \"CPU\": {");
  mapopt__sb_printf(sb, "\"count\": %" PRId64 ", ", cpu);
  put_rate(sb, "gflops_f64", f64);
  mapopt__sb_puts(sb, ", ");
  put_rate(sb, "gflops_f32", 2 * f64);
  mapopt__sb_puts(sb, ", \"overhead_ns\": 4000}");
  if (omp) {
    mapopt__sb_printf(sb,
                      ",\n    \"OMP\": {\"count\": %" PRId64
                      ", \"threads\": %" PRId64 ", ",
                      omp, threads);
    put_rate(sb, "gflops_f64", f64);
    mapopt__sb_puts(sb, ", ");
    put_rate(sb, "gflops_f32", 2 * f64);
    mapopt__sb_puts(sb, ", \"overhead_ns\": 8000}");
  }
  const gpu_model *g = F->gpu;
  if (gpus) {
    mapopt__sb_printf(sb, ",\n    \"GPU\": {\"count\": %" PRId64 ", ", gpus);
    put_rate(sb, "gflops_f64", g->tf_f64 * 1000);
    mapopt__sb_puts(sb, ", ");
    put_rate(sb, "gflops_f32", g->tf_f32 * 1000);
    mapopt__sb_puts(sb, ", ");
    put_rate(sb, "gflops_f64_matrix", g->tf_f64_matrix * 1000);
    mapopt__sb_puts(sb, ", \"overhead_ns\": 10000, \"socket\": [");
    for (int64_t i = 0; i < gpus; i++)
      mapopt__sb_printf(sb, "%s%" PRId64, i ? ", " : "", i * sockets / gpus);
    mapopt__sb_puts(sb, "]}");
  }
  mapopt__sb_printf(sb, ",\n    \"UTIL\": {\"count\": %" PRId64 "}\n  },\n",
                    util);

  int64_t sys = F->ram_mib * 6 / 10, sock = F->ram_mib * 2 / 10 / sockets;
  mapopt__sb_printf(sb,
                    "  \"memories\": {\n"
                    "    \"SYSMEM\": {\"per\": \"node\", \"capacity_mib\": "
                    "%" PRId64 "},\n"
                    "    \"SOCKMEM\": {\"per\": \"socket\", \"capacity_mib\": "
                    "%" PRId64 "},\n"
                    "    \"RDMEM\": {\"per\": \"node\", \"capacity_mib\": 512}",
                    sys > 0 ? sys : 1, sock > 0 ? sock : 1);
  if (gpus)
    mapopt__sb_printf(sb,
                      ",\n    \"ZCMEM\": {\"per\": \"node\", \"capacity_mib\": "
                      "2048},\n    \"FBMEM\": {\"per\": \"gpu\", "
                      "\"capacity_mib\": %" PRId64 "}",
                      F->gpu_mem_mib - 1024);
  mapopt__sb_puts(sb, "\n  },\n  \"affinity\": [");

  /* Gather and atomic rates: the presets' [est] figures; GPU FB rates scale
   * with bandwidth as in the presets (36 M gathers/s per GB/s, atomics
   * 40% of that). */
  bool first = true;
  double fb_bw = g ? 0.85 * g->hbm_gbs : 0;
  if (gpus) {
    edge(sb, &first, "GPU", "FBMEM", fb_bw, 500, 36 * fb_bw, 14.4 * fb_bw);
    edge(sb, &first, "GPU", "ZCMEM", g->zc_gbs, 1500, g->zc_gather,
         g->zc_atomic);
  }
  edge(sb, &first, "CPU", "SYSMEM", core_bw, 100, 150, 80);
  if (gpus)
    edge(sb, &first, "CPU", "ZCMEM", core_bw, 100, 150, 80);
  edge(sb, &first, "CPU", "RDMEM", core_bw, 100, 150, 80);
  edge(sb, &first, "CPU", "SOCKMEM", core_bw, 100, 150, 80);
  if (omp) {
    edge(sb, &first, "OMP", "SOCKMEM", omp_bw, 100, 800, 300);
    edge(sb, &first, "OMP", "SYSMEM", 0.8 * omp_bw, 100, 600, 250);
    if (gpus)
      edge(sb, &first, "OMP", "ZCMEM", 0.8 * omp_bw, 100, 600, 250);
  }
  mapopt__sb_puts(sb, "\n  ],\n  \"channels\": {\n");
  if (gpus) {
    mapopt__sb_puts(sb, "    \"FB_LOCAL\": {");
    put_rate(sb, "bw_gbs", 0.48 * fb_bw);
    mapopt__sb_puts(sb, ", \"lat_ns\": 5000},\n    \"FB_FB_PEER\": {");
    put_rate(sb, "bw_gbs", 0.8 * g->host_gbs);
    mapopt__sb_puts(sb, ", ");
    put_rate(sb, "cross_socket_bw_gbs", 0.6 * g->host_gbs);
    mapopt__sb_puts(sb, ", \"lat_ns\": 10000, \"peer_ports\": \"host_link\"},"
                        "\n    \"FB_HOST\": {");
    put_rate(sb, "bw_gbs", g->host_gbs);
    mapopt__sb_puts(sb, ", \"lat_ns\": 10000},\n");
  }
  mapopt__sb_puts(sb, "    \"HOST_HOST\": {");
  put_rate(sb, "bw_gbs", 0.3 * socket_bw);
  mapopt__sb_puts(sb, ", \"lat_ns\": 5000},\n"
                      "    \"NETWORK\": {\"bw_gbs\": 12.5, \"lat_ns\": 8000, "
                      "\"gpudirect\": true}\n  },\n");
  mapopt__sb_puts(sb, "  \"sources\": {\n    \"probe\": \"derived by 'mapopt "
                      "machine probe' (docs/machines.md); runtime overheads "
                      "are the defaults; HOST_HOST 30% of a socket's "
                      "bandwidth and NETWORK 12.5 GB/s (EDR) [est]\",");
  mapopt__sb_putn(sb, src->data, src->len);
  mapopt__sb_puts(sb, "\n  }\n}\n");
}

mapopt_status mapopt__machine_probe_at(mapopt_ctx *ctx, const char *root,
                                       bool use_smi, bool measure,
                                       mapopt_diags *diags,
                                       mapopt_machine **out) {
  probe P = {.ctx = ctx, .root = root};
  mapopt__sb_init(&P.src, ctx);
  facts F;
  memset(&F, 0, sizeof F);
  gather_facts(&P, &F, use_smi, measure);
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  write_model(&F, &sb, &P.src);
  mapopt_status st = MAPOPT_ENOMEM;
  if (!sb.failed && !P.src.failed && !P.nomem)
    st =
        mapopt__machine_load(ctx, "<probe>", sb.data, sb.len, NULL, diags, out);
  mapopt__sb_destroy(&sb);
  mapopt__sb_destroy(&P.src);
  return st;
}

mapopt_status mapopt_machine_probe(mapopt_ctx *ctx, bool measure,
                                   mapopt_diags *diags, mapopt_machine **out) {
  return mapopt__machine_probe_at(ctx, "", true, measure, diags, out);
}
