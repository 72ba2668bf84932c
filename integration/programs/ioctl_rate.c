/* KFD ioctl round trips per second (for `cargo xtask bench`): GET_VERSION in a loop,
 * the cheapest request, so the figure is the cost of the path itself (local: a call
 * into the in-process simulator; daemon: a round trip over the socket). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/ioctl.h>
#include <time.h>

struct version { uint32_t major, minor; };
#define GET_VERSION _IOR('K', 0x01, struct version)

int main(int argc, char **argv) {
  long n = argc > 1 ? atol(argv[1]) : 200000;
  int fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
  if (fd < 0) { perror("open /dev/kfd"); return 1; }
  struct version v;
  struct timespec a, b;
  clock_gettime(CLOCK_MONOTONIC, &a);
  for (long i = 0; i < n; i++)
    if (ioctl(fd, GET_VERSION, &v) != 0 || v.major != 1) { printf("ioctl failed at %ld\n", i); return 1; }
  clock_gettime(CLOCK_MONOTONIC, &b);
  double s = (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) / 1e9;
  printf("ioctls_per_second\t%.0f\t/s\n", n / s);
  return 0;
}
