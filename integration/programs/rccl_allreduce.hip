// RCCL all-reduce, checked against a CPU sum.
//
//   rccl_allreduce single NGPUS COUNT [GROUP]   one process drives NGPUS GPUs (ncclCommInitAll);
//                                               GROUP > 1 issues that many all-reduces of
//                                               COUNT, COUNT/3, COUNT/9 ... in one group call
//   rccl_allreduce rank ID_FILE COUNT           one rank of a torchrun-style job: RANK,
//                                               LOCAL_RANK and WORLD_SIZE from the environment,
//                                               GPU LOCAL_RANK % visible GPUs; rank 0 writes the
//                                               ncclUniqueId to ID_FILE, the others wait for it;
//                                               with ROUNDS=N it first runs N more f32
//                                               all-reduces, printing "rank R round K" after each
//
// Each all-reduce runs in f32 and in bf16. Every rank's input is small integers (in bf16
// too), so every partial sum is exact whatever order RCCL adds in, and the result must equal
// the CPU sum bit for bit. Prints "PASS ..." per check and the bus bandwidth (NCCL's
// definition: 2 (n-1)/n * bytes / time) of the f32 all-reduce.
#include <rccl/rccl.h>

#include <chrono>
#include <thread>
#include <unistd.h>
#include <vector>

#include "check.h"

#define NCCL_CHECK(x)                                                                      \
  do {                                                                                     \
    ncclResult_t r_ = (x);                                                                 \
    if (r_ != ncclSuccess) {                                                               \
      printf("FAIL %s:%d %s: %s\n", __FILE__, __LINE__, #x, ncclGetErrorString(r_));       \
      exit(2);                                                                             \
    }                                                                                      \
  } while (0)

// Rank r's element i: 0..15, so a sum over up to 16 ranks is ≤ 240, exact in bf16.
static int input_value(int rank, size_t i) { return (int)((i * 7 + rank * 5 + (i >> 10)) % 16); }

static uint16_t to_bf16(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return (uint16_t)(u >> 16);  // exact for the small integers used here
}

static float from_bf16(uint16_t h) {
  uint32_t u = (uint32_t)h << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

// One rank's device buffers for one all-reduce of `count` elements of both types.
struct Buffers {
  size_t count;
  float* f32_in;
  float* f32_out;
  uint16_t* bf16_in;
  uint16_t* bf16_out;
};

static Buffers make_buffers(int rank, size_t count) {
  Buffers b{count, nullptr, nullptr, nullptr, nullptr};
  std::vector<float> f(count);
  std::vector<uint16_t> h(count);
  for (size_t i = 0; i < count; i++) {
    f[i] = (float)input_value(rank, i);
    h[i] = to_bf16(f[i]);
  }
  HIP_CHECK(hipMalloc(&b.f32_in, count * 4));
  HIP_CHECK(hipMalloc(&b.f32_out, count * 4));
  HIP_CHECK(hipMalloc(&b.bf16_in, count * 2));
  HIP_CHECK(hipMalloc(&b.bf16_out, count * 2));
  HIP_CHECK(hipMemcpy(b.f32_in, f.data(), count * 4, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemcpy(b.bf16_in, h.data(), count * 2, hipMemcpyHostToDevice));
  HIP_CHECK(hipMemset(b.f32_out, 0xff, count * 4));
  HIP_CHECK(hipMemset(b.bf16_out, 0xff, count * 2));
  return b;
}

// Compares one rank's results with the CPU sum over all `world` ranks.
static void check_buffers(const char* what, int rank, int world, const Buffers& b) {
  std::vector<float> f(b.count);
  std::vector<uint16_t> h(b.count);
  HIP_CHECK(hipMemcpy(f.data(), b.f32_out, b.count * 4, hipMemcpyDeviceToHost));
  HIP_CHECK(hipMemcpy(h.data(), b.bf16_out, b.count * 2, hipMemcpyDeviceToHost));
  for (size_t i = 0; i < b.count; i++) {
    int want = 0;
    for (int r = 0; r < world; r++) want += input_value(r, i);
    if (f[i] != (float)want)
      fail(what, "rank %d f32 element %zu of %zu = %g, want %d", rank, i, b.count, f[i], want);
    if (from_bf16(h[i]) != (float)want)
      fail(what, "rank %d bf16 element %zu of %zu = %g, want %d", rank, i, b.count, from_bf16(h[i]), want);
  }
  printf("PASS %s rank %d: %zu elements, f32 and bf16\n", what, rank, b.count);
}

static double seconds_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

static void report_bandwidth(int world, size_t count, double secs) {
  double bytes = (double)count * 4;
  double bus = 2.0 * (world - 1) / world * bytes / secs;
  printf("allreduce f32 %d ranks %zu bytes: %.3f s, bus bandwidth %.1f MB/s\n", world, count * 4, secs, bus / 1e6);
  // The same as a figure for `cargo xtask bench` (name, value, unit, tab separated).
  printf("RCCL all-reduce, %d GPUs, %zu MiB f32: bus bandwidth\t%.1f\tMB/s\n", world, count * 4 >> 20, bus / 1e6);
}

static int single_process(int ngpus, size_t count, int group) {
  int visible = 0;
  HIP_CHECK(hipGetDeviceCount(&visible));
  if (visible < ngpus) fail("rccl single", "%d GPUs visible, %d wanted", visible, ngpus);
  std::vector<int> devs(ngpus);
  for (int g = 0; g < ngpus; g++) devs[g] = g;
  std::vector<ncclComm_t> comms(ngpus);
  NCCL_CHECK(ncclCommInitAll(comms.data(), ngpus, devs.data()));
  std::vector<hipStream_t> streams(ngpus);
  // bufs[g][k]: GPU g's buffers of the k-th all-reduce of the group.
  std::vector<std::vector<Buffers>> bufs(ngpus);
  for (int g = 0; g < ngpus; g++) {
    HIP_CHECK(hipSetDevice(g));
    HIP_CHECK(hipStreamCreate(&streams[g]));
    size_t c = count;
    for (int k = 0; k < group; k++, c = c / 3 + 1) bufs[g].push_back(make_buffers(g, c));
  }
  auto t0 = std::chrono::steady_clock::now();
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < ngpus; g++)
    for (const Buffers& b : bufs[g])
      NCCL_CHECK(ncclAllReduce(b.f32_in, b.f32_out, b.count, ncclFloat32, ncclSum, comms[g], streams[g]));
  NCCL_CHECK(ncclGroupEnd());
  for (int g = 0; g < ngpus; g++) HIP_CHECK(hipStreamSynchronize(streams[g]));
  double secs = seconds_since(t0);
  NCCL_CHECK(ncclGroupStart());
  for (int g = 0; g < ngpus; g++)
    for (const Buffers& b : bufs[g])
      NCCL_CHECK(ncclAllReduce(b.bf16_in, b.bf16_out, b.count, ncclBfloat16, ncclSum, comms[g], streams[g]));
  NCCL_CHECK(ncclGroupEnd());
  for (int g = 0; g < ngpus; g++) HIP_CHECK(hipStreamSynchronize(streams[g]));
  for (int g = 0; g < ngpus; g++)
    for (const Buffers& b : bufs[g]) check_buffers("allreduce single-process", g, ngpus, b);
  if (group == 1) report_bandwidth(ngpus, count, secs);
  for (int g = 0; g < ngpus; g++) NCCL_CHECK(ncclCommDestroy(comms[g]));
  return 0;
}

static int env_int(const char* name) {
  const char* v = getenv(name);
  if (!v) fail("rccl rank", "%s is not set", name);
  return atoi(v);
}

// Rank 0 publishes the id atomically (write, then rename); the others poll for it.
static ncclUniqueId exchange_id(int rank, const char* path) {
  ncclUniqueId id;
  if (rank == 0) {
    NCCL_CHECK(ncclGetUniqueId(&id));
    std::string tmp = std::string(path) + ".tmp";
    FILE* f = fopen(tmp.c_str(), "wb");
    if (!f || fwrite(&id, sizeof id, 1, f) != 1 || fclose(f) != 0) fail("rccl rank", "cannot write %s", tmp.c_str());
    if (rename(tmp.c_str(), path) != 0) fail("rccl rank", "cannot rename to %s", path);
    return id;
  }
  for (int tries = 0; tries < 6000; tries++) {
    FILE* f = fopen(path, "rb");
    if (f) {
      size_t got = fread(&id, sizeof id, 1, f);
      fclose(f);
      if (got == 1) return id;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  fail("rccl rank", "rank %d: no ncclUniqueId in %s after 300 s", rank, path);
  return id;
}

static int one_rank(const char* id_file, size_t count) {
  int rank = env_int("RANK"), world = env_int("WORLD_SIZE"), local = env_int("LOCAL_RANK");
  int visible = 0;
  HIP_CHECK(hipGetDeviceCount(&visible));
  HIP_CHECK(hipSetDevice(local % visible));
  ncclUniqueId id = exchange_id(rank, id_file);
  ncclComm_t comm;
  NCCL_CHECK(ncclCommInitRank(&comm, world, id, rank));
  hipStream_t stream;
  HIP_CHECK(hipStreamCreate(&stream));
  Buffers b = make_buffers(rank, count);
  const char* rounds = getenv("ROUNDS");
  for (int k = 0; rounds && k < atoi(rounds); k++) {
    NCCL_CHECK(ncclAllReduce(b.f32_in, b.f32_out, count, ncclFloat32, ncclSum, comm, stream));
    HIP_CHECK(hipStreamSynchronize(stream));
    printf("rank %d round %d\n", rank, k);
    fflush(stdout);
  }
  auto t0 = std::chrono::steady_clock::now();
  NCCL_CHECK(ncclAllReduce(b.f32_in, b.f32_out, count, ncclFloat32, ncclSum, comm, stream));
  HIP_CHECK(hipStreamSynchronize(stream));
  double secs = seconds_since(t0);
  NCCL_CHECK(ncclAllReduce(b.bf16_in, b.bf16_out, count, ncclBfloat16, ncclSum, comm, stream));
  HIP_CHECK(hipStreamSynchronize(stream));
  check_buffers("allreduce", rank, world, b);
  if (rank == 0) report_bandwidth(world, count, secs);
  NCCL_CHECK(ncclCommDestroy(comm));
  return 0;
}

int main(int argc, char** argv) {
  if (argc >= 4 && strcmp(argv[1], "single") == 0)
    return single_process(atoi(argv[2]), strtoull(argv[3], nullptr, 0), argc > 4 ? atoi(argv[4]) : 1);
  if (argc >= 4 && strcmp(argv[1], "rank") == 0) return one_rank(argv[2], strtoull(argv[3], nullptr, 0));
  fprintf(stderr, "usage: %s single NGPUS COUNT [GROUP] | rank ID_FILE COUNT\n", argv[0]);
  return 2;
}
