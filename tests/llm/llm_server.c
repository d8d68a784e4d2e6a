/*
 * A scripted chat-completions server for the tests of the LLM client: just
 * enough HTTP/1.1 for libcurl, on 127.0.0.1 at an ephemeral port, and the
 * OpenAI chat-completions protocol, serving replies chosen by a script.
 *
 *   llm_server --script FILE --port-file FILE [--log FILE] [--key KEY]
 *
 * The port is written to the port file (atomically: written aside, then
 * renamed) once the server listens. It serves until killed.
 *
 * The script: one reply per line, `MODEL ACTION ARGS...`; `#` starts a
 * comment. Requests are matched by the model they ask for: the k-th
 * request for a model gets the k-th line of that model (the last line
 * repeats). `POST .../reset` starts every model over. Actions:
 *   content STATUS FILE[,FILE...] [length]
 *       a chat completion whose choices are the files' texts (as many as
 *       the request's n, at most one per file), with usage computed from
 *       the sizes (4 bytes a token); `length` sets finish_reason "length"
 *   raw STATUS FILE [Name:value...]
 *       the file as the body, with extra headers
 *   big STATUS BYTES length|stream
 *       a body of BYTES bytes, announced by Content-Length or not (then
 *       ended by closing the connection); sending stops when the client
 *       hangs up
 *   hang
 *       read the request and never answer (until the client hangs up)
 *   close
 *       read the request and close the connection without a word
 * File names are relative to the script's folder.
 *
 * The server checks the request as a real server would: POST, a JSON body
 * with a model, non-empty messages of role and content strings, a
 * numeric temperature, and with --key a matching "Authorization: Bearer"
 * header; a bad request gets 400, a bad key 401 with a message that echoes
 * the key it got (as hosted APIs do), so tests can check that the client
 * never repeats it. With --log, one line per request is appended:
 * "model=M n=N auth=ok|none|bad action=A".
 */
#include <arpa/inet.h>
#include <errno.h>
#include <jansson.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#define MAX_HEAD (64 << 10)
#define MAX_BODY (16 << 20)
#define MAX_LINES 256

typedef struct line {
  char model[128];
  char action[16];
  char args[8][512];
  int nargs;
} line;

typedef struct server {
  line lines[MAX_LINES];
  int nlines;
  int served[MAX_LINES]; /* per line index of a model's first line */
  char dir[4096];
  const char *key;
  FILE *log;
  pthread_mutex_t lock;
} server;

typedef struct conn {
  server *srv;
  int fd;
} conn;

static void die(const char *what) {
  fprintf(stderr, "llm_server: %s: %s\n", what, strerror(errno));
  exit(2);
}

static void load_script(server *s, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f)
    die(path);
  snprintf(s->dir, sizeof s->dir, "%s", path);
  char *slash = strrchr(s->dir, '/');
  if (slash)
    slash[1] = '\0';
  else
    strcpy(s->dir, "./");
  char buf[4096];
  int lineno = 0;
  while (fgets(buf, sizeof buf, f)) {
    lineno++;
    char *hash = strchr(buf, '#');
    if (hash)
      *hash = '\0';
    char *tok[10];
    int n = 0;
    for (char *t = strtok(buf, " \t\r\n"); t && n < 10;
         t = strtok(NULL, " \t\r\n"))
      tok[n++] = t;
    if (n == 0)
      continue;
    if (n < 2 || s->nlines == MAX_LINES) {
      fprintf(stderr, "llm_server: %s:%d: bad line\n", path, lineno);
      exit(2);
    }
    line *l = &s->lines[s->nlines++];
    snprintf(l->model, sizeof l->model, "%s", tok[0]);
    snprintf(l->action, sizeof l->action, "%s", tok[1]);
    for (int i = 2; i < n; i++)
      snprintf(l->args[l->nargs++], sizeof l->args[0], "%s", tok[i]);
  }
  fclose(f);
}

/* The script line for the next request of model, or NULL. */
static const line *next_line(server *s, const char *model) {
  pthread_mutex_lock(&s->lock);
  int first = -1, count = 0;
  for (int i = 0; i < s->nlines; i++)
    if (!strcmp(s->lines[i].model, model)) {
      if (first < 0)
        first = i;
      count++;
    }
  const line *l = NULL;
  if (first >= 0) {
    int k = s->served[first]++;
    int target = k < count ? k : count - 1, seen = 0;
    for (int i = first; i < s->nlines && !l; i++)
      if (!strcmp(s->lines[i].model, model) && seen++ == target)
        l = &s->lines[i];
  }
  pthread_mutex_unlock(&s->lock);
  return l;
}

static char *read_file(server *s, const char *name, size_t *len) {
  char path[8192];
  snprintf(path, sizeof path, "%s%s", s->dir, name);
  FILE *f = fopen(path, "rb");
  if (!f)
    die(path);
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc((size_t)n + 1);
  if (!buf || fread(buf, 1, (size_t)n, f) != (size_t)n)
    die(path);
  buf[n] = '\0';
  fclose(f);
  *len = (size_t)n;
  return buf;
}

static bool send_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = send(fd, p, n, MSG_NOSIGNAL);
    if (w < 0 && errno == EINTR)
      continue;
    if (w <= 0)
      return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

static const char *reason(int status) {
  switch (status) {
  case 200:
    return "OK";
  case 400:
    return "Bad Request";
  case 401:
    return "Unauthorized";
  case 404:
    return "Not Found";
  case 429:
    return "Too Many Requests";
  case 500:
    return "Internal Server Error";
  case 503:
    return "Service Unavailable";
  default:
    return "Status";
  }
}

/* A whole response with a Content-Length; the connection then closes. */
static void respond(int fd, int status, const char *extra, const char *body,
                    size_t len) {
  char head[2048];
  int n = snprintf(head, sizeof head,
                   "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\n"
                   "Content-Length: %zu\r\nConnection: close\r\n%s\r\n",
                   status, reason(status), len, extra ? extra : "");
  if (send_all(fd, head, (size_t)n))
    send_all(fd, body, len);
}

static void respond_error(int fd, int status, const char *msg) {
  json_t *j = json_pack("{s:{s:s,s:s}}", "error", "message", msg, "type",
                        "invalid_request_error");
  char *body = json_dumps(j, JSON_COMPACT);
  respond(fd, status, NULL, body, strlen(body));
  free(body);
  json_decref(j);
}

/* Waits until the client hangs up (or 30 s pass). */
static void wait_hangup(int fd) {
  struct pollfd p = {fd, POLLIN, 0};
  char sink[4096];
  for (int i = 0; i < 300; i++) {
    if (poll(&p, 1, 100) > 0) {
      ssize_t r = recv(fd, sink, sizeof sink, 0);
      if (r <= 0)
        return;
    }
  }
}

static void serve_content(server *s, int fd, const line *l, const char *model,
                          int n, size_t prompt_bytes) {
  json_t *choices = json_array();
  size_t completion_bytes = 0;
  bool length = l->nargs > 2 && !strcmp(l->args[2], "length");
  char files[512];
  snprintf(files, sizeof files, "%s", l->nargs > 1 ? l->args[1] : "");
  int i = 0;
  for (char *save, *f = strtok_r(files, ",", &save); f && i < n;
       f = strtok_r(NULL, ",", &save), i++) {
    size_t len;
    char *text = read_file(s, f, &len);
    completion_bytes += len;
    json_array_append_new(
        choices, json_pack("{s:i,s:{s:s,s:s%},s:s}", "index", i, "message",
                           "role", "assistant", "content", text, len,
                           "finish_reason", length ? "length" : "stop"));
    free(text);
  }
  json_int_t pt = (json_int_t)(prompt_bytes + 3) / 4;
  json_int_t ct = (json_int_t)(completion_bytes + 3) / 4;
  json_t *j =
      json_pack("{s:s,s:s,s:i,s:s,s:o,s:{s:I,s:I,s:I}}", "id", "chatcmpl-test",
                "object", "chat.completion", "created", 0, "model", model,
                "choices", choices, "usage", "prompt_tokens", pt,
                "completion_tokens", ct, "total_tokens", pt + ct);
  char *body = json_dumps(j, JSON_COMPACT);
  respond(fd, atoi(l->args[0]), NULL, body, strlen(body));
  free(body);
  json_decref(j);
}

static void serve_raw(server *s, int fd, const line *l) {
  char extra[1024] = "";
  size_t off = 0;
  for (int i = 2; i < l->nargs; i++) {
    const char *colon = strchr(l->args[i], ':');
    if (!colon)
      continue;
    off += (size_t)snprintf(extra + off, sizeof extra - off, "%.*s: %s\r\n",
                            (int)(colon - l->args[i]), l->args[i], colon + 1);
  }
  size_t len;
  char *body = read_file(s, l->args[1], &len);
  respond(fd, atoi(l->args[0]), extra, body, len);
  free(body);
}

static void serve_big(int fd, const line *l) {
  long long total = atoll(l->args[1]);
  bool announce = l->nargs > 2 && !strcmp(l->args[2], "length");
  char head[512];
  int n = announce ? snprintf(head, sizeof head,
                              "HTTP/1.1 %s OK\r\nContent-Type: "
                              "application/json\r\nContent-Length: "
                              "%lld\r\nConnection: close\r\n\r\n",
                              l->args[0], total)
                   : snprintf(head, sizeof head,
                              "HTTP/1.1 %s OK\r\nContent-Type: "
                              "application/json\r\nConnection: close\r\n\r\n",
                              l->args[0]);
  if (!send_all(fd, head, (size_t)n))
    return;
  static const char open[] = "{\"choices\":[{\"message\":{\"content\":\"";
  if (!send_all(fd, open, sizeof open - 1))
    return;
  char chunk[65536];
  memset(chunk, 'x', sizeof chunk);
  for (long long sent = sizeof open - 1; sent < total;) {
    size_t k = total - sent < (long long)sizeof chunk ? (size_t)(total - sent)
                                                      : sizeof chunk;
    if (!send_all(fd, chunk, k))
      return; /* the client hung up, as it should */
    sent += (long long)k;
  }
}

/* Reads one request: head and body. false on a broken or oversized one. */
static bool read_request(int fd, char **head_out, char **body_out,
                         size_t *body_len) {
  char *buf = malloc(MAX_HEAD + 1);
  size_t len = 0;
  char *end = NULL;
  while (!end) {
    if (len == MAX_HEAD) {
      free(buf);
      return false;
    }
    ssize_t r = recv(fd, buf + len, MAX_HEAD - len, 0);
    if (r <= 0) {
      free(buf);
      return false;
    }
    len += (size_t)r;
    buf[len] = '\0';
    end = strstr(buf, "\r\n\r\n");
  }
  size_t head_len = (size_t)(end - buf) + 4;
  size_t want = 0;
  for (char *h = buf; h < end; h = strstr(h, "\r\n") + 2)
    if (!strncasecmp(h, "Content-Length:", 15))
      want = strtoul(h + 15, NULL, 10);
  if (want > MAX_BODY) {
    free(buf);
    return false;
  }
  char *body = malloc(want + 1);
  size_t have = len - head_len < want ? len - head_len : want;
  memcpy(body, buf + head_len, have);
  while (have < want) {
    ssize_t r = recv(fd, body + have, want - have, 0);
    if (r <= 0) {
      free(buf);
      free(body);
      return false;
    }
    have += (size_t)r;
  }
  body[want] = '\0';
  buf[head_len] = '\0';
  *head_out = buf;
  *body_out = body;
  *body_len = want;
  return true;
}

/* Copies the value of header name in head to out; false when absent. */
static bool header(const char *head, const char *name, char *out, size_t cap) {
  size_t n = strlen(name);
  for (const char *h = strstr(head, "\r\n"); h && h[2] != '\r';
       h = strstr(h + 2, "\r\n")) {
    const char *l = h + 2;
    if (!strncasecmp(l, name, n) && l[n] == ':') {
      const char *v = l + n + 1;
      while (*v == ' ')
        v++;
      const char *e = strstr(v, "\r\n");
      snprintf(out, cap, "%.*s", (int)(e - v), v);
      return true;
    }
  }
  return false;
}

/* The reason a chat request is malformed, or NULL. */
static const char *check_request(json_t *req, const char **model, int *n,
                                 size_t *prompt_bytes) {
  if (!json_is_object(req))
    return "the body must be a JSON object";
  json_t *m = json_object_get(req, "model");
  if (!json_is_string(m))
    return "\"model\" must be a string";
  *model = json_string_value(m);
  json_t *msgs = json_object_get(req, "messages");
  if (!json_is_array(msgs) || json_array_size(msgs) == 0)
    return "\"messages\" must be a non-empty array";
  size_t i;
  json_t *msg;
  *prompt_bytes = 0;
  json_array_foreach(msgs, i, msg) {
    json_t *role = json_object_get(msg, "role");
    json_t *content = json_object_get(msg, "content");
    if (!json_is_string(role) || !json_is_string(content))
      return "each message needs a role and a content string";
    *prompt_bytes += json_string_length(content);
  }
  if (!json_is_number(json_object_get(req, "temperature")))
    return "\"temperature\" must be a number";
  json_t *jn = json_object_get(req, "n");
  *n = 1;
  if (jn) {
    if (!json_is_integer(jn) || json_integer_value(jn) < 1)
      return "\"n\" must be a positive integer";
    *n = (int)json_integer_value(jn);
  }
  json_t *mt = json_object_get(req, "max_tokens");
  if (mt && (!json_is_integer(mt) || json_integer_value(mt) < 1))
    return "\"max_tokens\" must be a positive integer";
  return NULL;
}

static void handle(server *s, int fd) {
  char *head, *body;
  size_t body_len;
  if (!read_request(fd, &head, &body, &body_len))
    return;
  char method[16] = "", path[1024] = "";
  sscanf(head, "%15s %1023s", method, path);
  size_t plen = strlen(path);
  if (strcmp(method, "POST")) {
    respond_error(fd, 404, "only POST is served");
  } else if (plen >= 6 && !strcmp(path + plen - 6, "/reset")) {
    pthread_mutex_lock(&s->lock);
    memset(s->served, 0, sizeof s->served);
    pthread_mutex_unlock(&s->lock);
    respond(fd, 200, NULL, "{}", 2);
  } else if (plen < 17 || strcmp(path + plen - 17, "/chat/completions")) {
    respond_error(fd, 404, "no such endpoint");
  } else {
    char auth[1024] = "", type[256] = "";
    bool has_auth = header(head, "Authorization", auth, sizeof auth);
    const char *verdict = "none";
    if (has_auth) {
      char want[1024];
      snprintf(want, sizeof want, "Bearer %s", s->key ? s->key : "");
      verdict = s->key && !strcmp(auth, want) ? "ok" : "bad";
    }
    json_error_t jerr;
    json_t *req = json_loadb(body, body_len, 0, &jerr);
    const char *model = "", *why = NULL;
    int n = 1;
    size_t prompt_bytes = 0;
    if (!header(head, "Content-Type", type, sizeof type) ||
        strcmp(type, "application/json"))
      why = "Content-Type must be application/json";
    else
      why = req ? check_request(req, &model, &n, &prompt_bytes)
                : "the body is not JSON";
    const line *l = NULL;
    if (!why && s->key && strcmp(verdict, "ok")) {
      char msg[1200];
      snprintf(msg, sizeof msg, "Incorrect API key provided: %s",
               has_auth ? auth + (strncmp(auth, "Bearer ", 7) ? 0 : 7)
                        : "(none)");
      respond_error(fd, 401, msg);
    } else if (why) {
      respond_error(fd, 400, why);
    } else if (!(l = next_line(s, model))) {
      respond_error(fd, 404, "no such model in the script");
    }
    if (s->log) {
      pthread_mutex_lock(&s->lock);
      fprintf(s->log, "model=%s n=%d auth=%s action=%s\n", model, n, verdict,
              l     ? l->action
              : why ? "bad-request"
                    : "refused");
      fflush(s->log);
      pthread_mutex_unlock(&s->lock);
    }
    if (l && !strcmp(l->action, "content"))
      serve_content(s, fd, l, model, n, prompt_bytes);
    else if (l && !strcmp(l->action, "raw"))
      serve_raw(s, fd, l);
    else if (l && !strcmp(l->action, "big"))
      serve_big(fd, l);
    else if (l && !strcmp(l->action, "hang"))
      wait_hangup(fd);
    json_decref(req);
  }
  free(head);
  free(body);
}

static void *run_conn(void *arg) {
  conn *c = arg;
  handle(c->srv, c->fd);
  shutdown(c->fd, SHUT_WR);
  close(c->fd);
  free(c);
  return NULL;
}

int main(int argc, char **argv) {
  static server srv;
  const char *script = NULL, *port_file = NULL, *log_file = NULL;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (!strcmp(argv[i], "--script"))
      script = argv[i + 1];
    else if (!strcmp(argv[i], "--port-file"))
      port_file = argv[i + 1];
    else if (!strcmp(argv[i], "--log"))
      log_file = argv[i + 1];
    else if (!strcmp(argv[i], "--key"))
      srv.key = argv[i + 1];
  }
  if (!script || !port_file) {
    fprintf(stderr, "usage: llm_server --script FILE --port-file FILE "
                    "[--log FILE] [--key KEY]\n");
    return 2;
  }
  signal(SIGPIPE, SIG_IGN);
  pthread_mutex_init(&srv.lock, NULL);
  load_script(&srv, script);
  if (log_file && !(srv.log = fopen(log_file, "a")))
    die(log_file);
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0)
    die("socket");
  struct sockaddr_in addr = {.sin_family = AF_INET,
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
  socklen_t alen = sizeof addr;
  if (bind(fd, (struct sockaddr *)&addr, sizeof addr) || listen(fd, 64) ||
      getsockname(fd, (struct sockaddr *)&addr, &alen))
    die("bind");
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp", port_file);
  FILE *pf = fopen(tmp, "w");
  if (!pf || fprintf(pf, "%d\n", ntohs(addr.sin_port)) < 0 || fclose(pf) ||
      rename(tmp, port_file))
    die(port_file);
  for (;;) {
    int cfd = accept(fd, NULL, NULL);
    if (cfd < 0) {
      if (errno == EINTR)
        continue;
      die("accept");
    }
    conn *c = malloc(sizeof *c);
    c->srv = &srv;
    c->fd = cfd;
    pthread_t t;
    if (pthread_create(&t, NULL, run_conn, c))
      die("pthread_create");
    pthread_detach(t);
  }
}
