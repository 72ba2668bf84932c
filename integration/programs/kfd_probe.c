#define _GNU_SOURCE
/* Talks to /dev/kfd directly, the way libhsakmt does, to check the edges:
 * an unknown KFD ioctl, a known one at a size no interface version has, a
 * foreign (terminal) ioctl, and fork, where the
 * child's inherited fd must fail with EBADF while a fresh open works. */
#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

struct version { uint32_t major, minor; };
#define GET_VERSION _IOR('K', 0x01, struct version)
#define UNKNOWN_KFD _IOWR('K', 0x7f, uint64_t)
/* CREATE_QUEUE exists at 88 bytes (KFD <= 1.16 headers) and 96 (1.17); no header ever
 * had a 64-byte one. */
#define ODD_CREATE_QUEUE _IOC(_IOC_READ | _IOC_WRITE, 'K', 0x02, 64)

static int get_version(int fd, struct version *v) { return ioctl(fd, GET_VERSION, v); }

int main(void) {
  int fd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
  if (fd < 0) { printf("open_errno=%d\n", errno); return 1; }
  printf("kfd_fd_nonzero=%d\n", fd > 0);
  struct version v = {0, 0};
  int gv = get_version(fd, &v);
  printf("get_version=%d major=%u minor=%u\n", gv, v.major, v.minor);

  uint64_t x = 0;
  int r = ioctl(fd, UNKNOWN_KFD, &x);
  printf("unknown_kfd=%d errno=%s\n", r, r < 0 ? strerrorname_np(errno) : "none");
  uint8_t queue_args[64] = {0};
  r = ioctl(fd, ODD_CREATE_QUEUE, queue_args);
  printf("odd_create_queue=%d errno=%s\n", r, r < 0 ? strerrorname_np(errno) : "none");
  struct termios t;
  r = ioctl(fd, TCGETS, &t);
  printf("terminal_ioctl=%d errno=%s\n", r, r < 0 ? strerrorname_np(errno) : "none");
  r = get_version(fd, (struct version *)8);
  printf("bad_pointer=%d errno=%s\n", r, r < 0 ? strerrorname_np(errno) : "none");

  /* The driver's own fds are not the application's to close. */
  DIR *d = opendir("/proc/self/fd");
  struct dirent *e;
  int internal = -1;
  while ((e = readdir(d))) {
    char path[64], target[256];
    snprintf(path, sizeof path, "/proc/self/fd/%s", e->d_name);
    ssize_t n = readlink(path, target, sizeof target - 1);
    if (n > 0) {
      target[n] = 0;
      /* The simulator's memory file (local mode) or its daemon connection (daemon mode). */
      if (strstr(target, "rocjitsu-gpu-memory") || !strncmp(target, "socket:", 7)) internal = atoi(e->d_name);
    }
  }
  closedir(d);
  r = internal >= 0 ? close(internal) : 0;
  printf("close_internal=%d errno=%s found=%d\n", r, r < 0 ? strerrorname_np(errno) : "none", internal >= 0);

  struct stat st;
  fstat(fd, &st);
  printf("kfd_is_chr=%d\n", S_ISCHR(st.st_mode));
  int render = open("/dev/dri/renderD128", O_RDWR | O_CLOEXEC);
  fstat(render, &st);
  printf("render_rdev=%u:%u\n", major(st.st_rdev), minor(st.st_rdev));
  int dup_render = fcntl(render, F_DUPFD_CLOEXEC, 0);
  fstat(dup_render, &st);
  printf("dup_render_rdev=%u:%u\n", major(st.st_rdev), minor(st.st_rdev));
  close(dup_render);

  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    struct version cv = {0, 0};
    int cr = get_version(fd, &cv);
    printf("child_inherited=%d errno=%s\n", cr, cr < 0 ? strerrorname_np(errno) : "none");
    int cfd = open("/dev/kfd", O_RDWR | O_CLOEXEC);
    cr = cfd < 0 ? -1 : get_version(cfd, &cv);
    printf("child_fresh=%d major=%u\n", cr, cv.major);
    fflush(stdout);
    _exit(0);
  }
  int status = 0;
  waitpid(pid, &status, 0);
  printf("child_exit=%d\n", WEXITSTATUS(status));
  v.major = 0;
  int pv = get_version(fd, &v);
  printf("parent_after_fork=%d major=%u\n", pv, v.major);
  close(fd);
  return 0;
}
