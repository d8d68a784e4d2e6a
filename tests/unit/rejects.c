/* Checking that a getter rejects a bad argument; see rejects.h. */
#include <fcntl.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "rejects.h"

pid_t rejects_fork(void) {
  fflush(NULL); /* what is buffered is not written twice */
  pid_t child = fork();
  assert_true(child >= 0);
  if (child == 0) {
    struct rlimit none = {0, 0};
    setrlimit(RLIMIT_CORE, &none);
    int null = open("/dev/null", O_WRONLY);
    if (null >= 0)
      dup2(null, STDERR_FILENO);
  }
  return child;
}

bool rejects_died_of_abort(pid_t child) {
  int status;
  if (waitpid(child, &status, 0) != child)
    return false;
  return WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT;
}
