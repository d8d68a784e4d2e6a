/*
 * Replays fuzz inputs without libFuzzer: each argument is a file or a
 * folder of files, fed to LLVMFuzzerTestOneInput in sorted order. Used by
 * ctest so that the corpus runs in every `make check`.
 */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path) {
  FILE *f = fopen(path, "rb");
  if (!f) {
    perror(path);
    return 1;
  }
  size_t cap = 1 << 16, n = 0;
  uint8_t *buf = malloc(cap);
  size_t got;
  while (buf && (got = fread(buf + n, 1, cap - n, f)) > 0) {
    n += got;
    if (n == cap) {
      uint8_t *b = realloc(buf, cap *= 2);
      if (!b) {
        free(buf);
        buf = NULL;
      }
      buf = b;
    }
  }
  fclose(f);
  if (!buf)
    return 1;
  LLVMFuzzerTestOneInput(buf, n);
  free(buf);
  return 0;
}

static int cmp(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(int argc, char **argv) {
  int files = 0, failed = 0;
  for (int i = 1; i < argc; i++) {
    struct stat st;
    if (stat(argv[i], &st) != 0) {
      perror(argv[i]);
      return 1;
    }
    if (!S_ISDIR(st.st_mode)) {
      failed |= run_file(argv[i]);
      files++;
      continue;
    }
    DIR *d = opendir(argv[i]);
    if (!d)
      return 1;
    char *names[4096];
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < 4096)
      if (e->d_name[0] != '.')
        names[n++] = strdup(e->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, cmp);
    for (int k = 0; k < n; k++) {
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", argv[i], names[k]);
      failed |= run_file(path);
      files++;
      free(names[k]);
    }
  }
  printf("replayed %d inputs\n", files);
  return failed || files == 0;
}
