// What ROCm SMI reports of the GPUs and the links between them, the way RCCL asks for its
// topology (rocm_smi_wrap.cc): the PCI address of each device, and the link type, hops and
// weight between every pair. Loaded with dlopen, as only the runtime library is packaged.
// Prints "device D pci BDFID" and "link A B type T hops H weight W" lines.
#include <dlfcn.h>
#include <cstdint>
#include <cstdio>

int main() {
  void* lib = dlopen("librocm_smi64.so.1", RTLD_NOW);
  if (!lib) {
    printf("FAIL rsmi_links: %s\n", dlerror());
    return 1;
  }
  auto init = (int (*)(uint64_t))dlsym(lib, "rsmi_init");
  auto count = (int (*)(uint32_t*))dlsym(lib, "rsmi_num_monitor_devices");
  auto pci = (int (*)(uint32_t, uint64_t*))dlsym(lib, "rsmi_dev_pci_id_get");
  auto type = (int (*)(uint32_t, uint32_t, uint64_t*, int*))dlsym(lib, "rsmi_topo_get_link_type");
  auto weight = (int (*)(uint32_t, uint32_t, uint64_t*))dlsym(lib, "rsmi_topo_get_link_weight");
  if (!init || !count || !pci || !type || !weight) {
    printf("FAIL rsmi_links: a ROCm SMI function is missing\n");
    return 1;
  }
  int status = init(0);
  if (status != 0) {
    printf("FAIL rsmi_links: rsmi_init returned %d\n", status);
    return 1;
  }
  uint32_t n = 0;
  count(&n);
  for (uint32_t d = 0; d < n; d++) {
    uint64_t bdfid = 0;
    pci(d, &bdfid);
    printf("device %u pci %#llx\n", d, (unsigned long long)bdfid);
  }
  for (uint32_t a = 0; a < n; a++)
    for (uint32_t b = 0; b < n; b++) {
      if (a == b) continue;
      uint64_t hops = 0, w = 0;
      int t = -1;
      if (type(a, b, &hops, &t) != 0 || weight(a, b, &w) != 0) {
        printf("FAIL rsmi_links: no link from %u to %u\n", a, b);
        return 1;
      }
      printf("link %u %u type %d hops %llu weight %llu\n", a, b, t, (unsigned long long)hops, (unsigned long long)w);
    }
  printf("PASS rsmi_links: %u devices\n", n);
  return 0;
}
