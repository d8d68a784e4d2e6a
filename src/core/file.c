/*
 * Whole-file reads and atomic replacement. A formatter or tuner that
 * rewrites a user's file must never leave it half-written: the new text goes
 * to a temporary file beside it, which is renamed over the original only
 * once it is complete and synced.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/core.h"

static mapopt_status read_all(mapopt_ctx *ctx, const char *path, char **buf,
                              size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f)
    return MAPOPT_EIO;
  size_t cap = 4096, n = 0;
  char *data = mapopt__malloc(ctx, cap);
  if (!data) {
    fclose(f);
    return MAPOPT_ENOMEM;
  }
  for (;;) {
    if (cap - n < 2) {
      if (cap > SIZE_MAX / 2) {
        mapopt__free(ctx, data, cap);
        fclose(f);
        return MAPOPT_ENOMEM;
      }
      char *d = mapopt__realloc(ctx, data, cap, cap * 2);
      if (!d) {
        mapopt__free(ctx, data, cap);
        fclose(f);
        return MAPOPT_ENOMEM;
      }
      data = d;
      cap *= 2;
    }
    size_t got = fread(data + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0)
      break;
  }
  int err = ferror(f);
  fclose(f);
  if (err) {
    mapopt__free(ctx, data, cap);
    errno = EIO;
    return MAPOPT_EIO;
  }
  char *exact = mapopt__realloc(ctx, data, cap, n + 1);
  if (!exact) {
    mapopt__free(ctx, data, cap);
    return MAPOPT_ENOMEM;
  }
  exact[n] = '\0';
  *buf = exact;
  *len = n;
  return MAPOPT_OK;
}

mapopt_status mapopt_file_read(mapopt_ctx *ctx, const char *path,
                               mapopt_diags *diags, char **buf, size_t *len) {
  mapopt_status st = read_all(ctx, path, buf, len);
  if (st == MAPOPT_EIO && diags) {
    int err = errno;
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", path, 0, 0,
                     "cannot read file: %s", strerror(err));
    errno = err;
  }
  return st;
}

mapopt_status mapopt_file_replace(const char *path, const char *data,
                                  size_t len) {
  size_t plen = strlen(path);
  char *tmp = malloc(plen + 16);
  if (!tmp)
    return MAPOPT_ENOMEM;
  snprintf(tmp, plen + 16, "%s.tmpXXXXXX", path);
  int fd = mkstemp(tmp);
  if (fd < 0) {
    free(tmp);
    return MAPOPT_EIO;
  }
  struct stat st;
  if (stat(path, &st) == 0)
    (void)fchmod(fd, st.st_mode & 07777);
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      break;
    off += (size_t)w;
  }
  int ok = off == len && fsync(fd) == 0;
  ok = close(fd) == 0 && ok;
  if (!ok || rename(tmp, path) != 0) {
    int saved = errno;
    unlink(tmp);
    free(tmp);
    errno = saved;
    return MAPOPT_EIO;
  }
  free(tmp);
  return MAPOPT_OK;
}

void mapopt_buffer_free(mapopt_ctx *ctx, char *buf, size_t len) {
  mapopt__free(ctx, buf, len + 1);
}

void mapopt_text_free(mapopt_ctx *ctx, char *text) {
  if (text)
    mapopt__free(ctx, text, strlen(text) + 1);
}
