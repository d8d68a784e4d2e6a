/*
 * Whole-file reads and atomic replacement. A formatter or tuner that
 * rewrites a user's file must never leave it half-written: the new text goes
 * to a temporary file beside it, which is renamed over the original only
 * once it is complete and synced, with the signals that would interrupt it
 * held back meanwhile (only SIGKILL or a crash can leave the temporary file
 * behind). Links are written through; devices and pipes are written in
 * place. Also the texts the library hands out
 * (mapopt_text_free) and the lookup in the tables of texts compiled into
 * it.
 */
#define _XOPEN_SOURCE 700 /* realpath */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
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
    errno = 0;
    size_t got = fread(data + n, 1, cap - n - 1, f);
    n += got;
    if (got == 0)
      break;
  }
  /* The reason of a failed read (EISDIR for a folder), not a vague EIO. */
  int err = ferror(f) ? (errno ? errno : EIO) : 0;
  fclose(f);
  if (err) {
    mapopt__free(ctx, data, cap);
    errno = err;
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
  char *data;
  size_t n;
  mapopt_status st = read_all(ctx, path, &data, &n);
  if (st == MAPOPT_OK) {
    char *text = mapopt__text_new(ctx, data, n);
    mapopt__free(ctx, data, n + 1);
    if (!text)
      return MAPOPT_ENOMEM;
    *buf = text;
    *len = n;
    return MAPOPT_OK;
  }
  if (st == MAPOPT_EIO && diags) {
    int err = errno;
    mapopt_diags_add(diags, MAPOPT_SEV_ERROR, "", path, 0, 0,
                     "cannot read file: %s", strerror(err));
    errno = err;
  }
  return st;
}

/* Writes all of data to fd; false on error (errno set). */
static bool write_all(int fd, const char *data, size_t len) {
  size_t off = 0;
  while (off < len) {
    ssize_t w = write(fd, data + off, len - off);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    off += (size_t)w;
  }
  return true;
}

/* Writes data over the file or device open as fd; false on error (errno
 * set), the close included. */
static bool write_close(int fd, const char *data, size_t len) {
  bool ok = write_all(fd, data, len);
  int saved = errno;
  if (close(fd) != 0 && ok) {
    ok = false;
    saved = errno;
  }
  errno = saved;
  return ok;
}

/* The temporary file's name: ".mapopt-XXXXXX" in path's folder, so that it
 * is renamed within one file system and never longer than a name there.
 * NULL on ENOMEM. */
static char *temp_name(const char *path) {
  const char *slash = strrchr(path, '/');
  size_t dlen = slash ? (size_t)(slash - path) + 1 : 0;
  static const char name[] = ".mapopt-XXXXXX";
  char *tmp = malloc(dlen + sizeof name);
  if (tmp) {
    memcpy(tmp, path, dlen);
    memcpy(tmp + dlen, name, sizeof name);
  }
  return tmp;
}

/* Writes data to a new file beside path and renames it over path. The
 * signals that end a process by default are held back meanwhile, so that
 * an interrupted rewrite (Ctrl-C, kill) cannot leave the temporary file
 * behind: they take effect once it is renamed or removed. */
static mapopt_status replace_regular(const char *path, const char *data,
                                     size_t len, bool exists, mode_t mode) {
  char *tmp = temp_name(path);
  if (!tmp)
    return MAPOPT_ENOMEM;
  sigset_t hold, saved_mask;
  sigemptyset(&hold);
  sigaddset(&hold, SIGINT);
  sigaddset(&hold, SIGTERM);
  sigaddset(&hold, SIGHUP);
  sigaddset(&hold, SIGQUIT);
  sigaddset(&hold, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &hold, &saved_mask);
  mapopt_status st = MAPOPT_EIO;
  int fd = mkstemp(tmp);
  if (fd >= 0) {
    if (exists) {
      (void)fchmod(fd, mode & 07777);
    } else {
      /* A new file gets the mode open(2) would give it, not mkstemp's
       * 0600 (umask can only be read by setting it: set it straight
       * back). */
      mode_t um = umask(022);
      umask(um);
      (void)fchmod(fd, 0666 & ~um);
    }
    int ok = write_all(fd, data, len) && fsync(fd) == 0;
    int saved = errno;
    if (close(fd) != 0 && ok) {
      ok = false;
      saved = errno;
    }
    if (ok && rename(tmp, path) == 0) {
      st = MAPOPT_OK;
    } else {
      if (ok)
        saved = errno;
      unlink(tmp);
    }
    errno = saved;
  }
  int err = errno;
  pthread_sigmask(SIG_SETMASK, &saved_mask, NULL);
  free(tmp);
  errno = err;
  return st;
}

mapopt_status mapopt_file_replace(const char *path, const char *data,
                                  size_t len) {
  /* A device or a pipe (/dev/stdout, /dev/null, a FIFO) is written to, as
   * a shell's '>' would: renaming a file over it would replace it. */
  struct stat cur;
  bool exists = stat(path, &cur) == 0;
  if (exists && !S_ISREG(cur.st_mode)) {
    int fd = open(path, O_WRONLY | O_TRUNC);
    if (fd < 0)
      return MAPOPT_EIO;
    return write_close(fd, data, len) ? MAPOPT_OK : MAPOPT_EIO;
  }
  /* A symbolic link is written through, as editors do: its target is
   * replaced and the link stays a link. */
  struct stat lst;
  if (lstat(path, &lst) == 0 && S_ISLNK(lst.st_mode)) {
    char *target = realpath(path, NULL);
    if (!target)
      return MAPOPT_EIO; /* a dangling link: errno says why */
    mapopt_status st = replace_regular(target, data, len, exists, cur.st_mode);
    int err = errno;
    free(target);
    errno = err;
    return st;
  }
  return replace_regular(path, data, len, exists, cur.st_mode);
}

/* ---- texts ------------------------------------------------------------- */

/* The header of a text the library hands out, just before its characters,
 * so that mapopt_text_free needs nothing but the pointer. */
typedef struct text_header {
  mapopt_ctx *ctx;
  size_t size; /* bytes after the header, the final NUL included */
} text_header;

char *mapopt__text_new(mapopt_ctx *ctx, const char *data, size_t len) {
  if (len > SIZE_MAX - sizeof(text_header) - 1)
    return NULL;
  text_header *h = mapopt__malloc(ctx, sizeof *h + len + 1);
  if (!h)
    return NULL;
  h->ctx = ctx;
  h->size = len + 1;
  char *text = (char *)(h + 1);
  if (len)
    memcpy(text, data, len);
  text[len] = '\0';
  return text;
}

char *mapopt__text_take(mapopt__strbuf *sb, size_t *len) {
  char *text = NULL;
  if (!sb->failed) {
    text = mapopt__text_new(sb->ctx, sb->data ? sb->data : "", sb->len);
    if (text && len)
      *len = sb->len;
  }
  mapopt__sb_destroy(sb);
  return text;
}

char *mapopt__text_vprintf(mapopt_ctx *ctx, const char *fmt, va_list ap) {
  mapopt__strbuf sb;
  mapopt__sb_init(&sb, ctx);
  mapopt__sb_vprintf(&sb, fmt, ap);
  return mapopt__text_take(&sb, NULL);
}

char *mapopt__text_printf(mapopt_ctx *ctx, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  char *text = mapopt__text_vprintf(ctx, fmt, ap);
  va_end(ap);
  return text;
}

void mapopt_text_free(char *text) {
  if (!text)
    return;
  text_header *h = (text_header *)text - 1;
  mapopt__free(h->ctx, h, sizeof *h + h->size);
}

/* ---- texts compiled into the library ------------------------------------ */

const char *mapopt__embedded_find(const mapopt__embedded *table,
                                  const char *name) {
  for (size_t i = 0; table[i].name; i++)
    if (strcmp(table[i].name, name) == 0)
      return table[i].text;
  return NULL;
}
