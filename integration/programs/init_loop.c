/* hsa_init/hsa_shut_down N times; prints the fd and mapping counts after the
 * second cycle and at the end, so a leak per cycle shows as growth. */
#include <dirent.h>
#include <hsa/hsa.h>
#include <stdio.h>
#include <stdlib.h>

static int count_fds(void) {
  int n = 0;
  DIR *d = opendir("/proc/self/fd");
  while (readdir(d)) n++;
  closedir(d);
  return n;
}

static int count_maps(void) {
  int n = 0;
  char line[512];
  FILE *f = fopen("/proc/self/maps", "r");
  while (fgets(line, sizeof line, f)) n++;
  fclose(f);
  return n;
}

int main(int argc, char **argv) {
  int iters = argc > 1 ? atoi(argv[1]) : 200;
  int fds = 0, maps = 0;
  for (int i = 0; i < iters; i++) {
    hsa_status_t s = hsa_init();
    if (s != HSA_STATUS_SUCCESS) {
      printf("hsa_init failed at iteration %d: %#x\n", i, s);
      return 1;
    }
    s = hsa_shut_down();
    if (s != HSA_STATUS_SUCCESS) {
      printf("hsa_shut_down failed at iteration %d: %#x\n", i, s);
      return 1;
    }
    if (i == 1) {
      fds = count_fds();
      maps = count_maps();
    }
  }
  printf("iterations=%d\nfds_after_2=%d\nfds_end=%d\nmaps_after_2=%d\nmaps_end=%d\n", iters, fds, count_fds(), maps,
         count_maps());
  return 0;
}
