/* hsa_init, then idle for a while: ROCR's async-event thread is blocked in
 * WAIT_EVENTS the whole time. Prints the CPU time the process used while
 * idle; a driver whose wait returns at once makes that thread spin. */
#include <hsa/hsa.h>
#include <stdio.h>
#include <sys/resource.h>
#include <stdlib.h>
#include <unistd.h>

static double cpu_seconds(void) {
  struct rusage u;
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_utime.tv_usec / 1e6 + u.ru_stime.tv_sec + u.ru_stime.tv_usec / 1e6;
}

int main(int argc, char **argv) {
  if (hsa_init() != HSA_STATUS_SUCCESS) {
    printf("hsa_init failed\n");
    return 1;
  }
  double before = cpu_seconds();
  double seconds = argc > 1 ? atof(argv[1]) : 1.0;
  usleep((useconds_t)(seconds * 1e6));
  double idle = cpu_seconds() - before;
  printf("idle_cpu_seconds=%.4f\n", idle);
  return hsa_shut_down() == HSA_STATUS_SUCCESS ? 0 : 1;
}
