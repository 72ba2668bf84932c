// The host's side of the all-reduce benchmark (`cargo xtask bench`): WORLD buffers of COUNT
// floats summed into one by a plain loop on one thread, the work an all-reduce does, reported
// as a bus bandwidth with NCCL's formula (2 (n-1)/n * bytes / time) to set beside RCCL's
// figure on the simulated GPUs. Usage: host_reduce WORLD COUNT
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char** argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: %s WORLD COUNT\n", argv[0]);
    return 2;
  }
  int world = atoi(argv[1]);
  size_t n = strtoull(argv[2], 0, 0);
  float** in = malloc(world * sizeof *in);
  float* out = malloc(n * 4);
  for (int r = 0; r < world; r++) {
    in[r] = malloc(n * 4);
    for (size_t i = 0; i < n; i++) in[r][i] = (float)((i * 7 + r * 5) % 16);
  }
  const int reps = 5;
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  for (int rep = 0; rep < reps; rep++) {
    memcpy(out, in[0], n * 4);
    for (int r = 1; r < world; r++)
      for (size_t i = 0; i < n; i++) out[i] += in[r][i];
  }
  clock_gettime(CLOCK_MONOTONIC, &t1);
  double secs = ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9) / reps;
  // Check one element so the loop cannot be dropped.
  float want = 0;
  for (int r = 0; r < world; r++) want += in[r][n - 1];
  if (out[n - 1] != want) {
    printf("FAIL host_reduce: %g, want %g\n", out[n - 1], want);
    return 1;
  }
  double bus = 2.0 * (world - 1) / world * (double)n * 4 / secs;
  printf("host reduction, %d buffers, %zu MiB f32: bus bandwidth\t%.1f\tMB/s\n", world, n * 4 >> 20, bus / 1e6);
  return 0;
}
