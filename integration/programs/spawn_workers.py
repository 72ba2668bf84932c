"""The vLLM pattern: a parent starts workers with multiprocessing's 'spawn' method; each
worker loads libamdhip64 with ctypes, loads a code object (hipModuleLoad), launches a
kernel (hipModuleLaunchKernel) and verifies the result. Usage: spawn_workers.py CODE_OBJECT
"""
import ctypes
import multiprocessing as mp
import os
import struct
import sys

N = 1 << 16


def check(hip, status, what):
    if status != 0:
        hip.hipGetErrorString.restype = ctypes.c_char_p
        raise RuntimeError(f"{what} failed: {hip.hipGetErrorString(status).decode()}")


def worker(code_object, index, results):
    hip = ctypes.CDLL("libamdhip64.so")
    check(hip, hip.hipSetDevice(0), "hipSetDevice")
    module = ctypes.c_void_p()
    check(hip, hip.hipModuleLoad(ctypes.byref(module), code_object.encode()), "hipModuleLoad")
    func = ctypes.c_void_p()
    check(hip, hip.hipModuleGetFunction(ctypes.byref(func), module, b"scale_add"), "hipModuleGetFunction")
    x = (ctypes.c_float * N)(*[float(i % 251) for i in range(N)])
    y = (ctypes.c_float * N)(*[float(index * 1000 + i % 7) for i in range(N)])
    dx, dy = ctypes.c_void_p(), ctypes.c_void_p()
    check(hip, hip.hipMalloc(ctypes.byref(dx), ctypes.c_size_t(N * 4)), "hipMalloc")
    check(hip, hip.hipMalloc(ctypes.byref(dy), ctypes.c_size_t(N * 4)), "hipMalloc")
    check(hip, hip.hipMemcpy(dx, x, ctypes.c_size_t(N * 4), 1), "hipMemcpy H2D")
    check(hip, hip.hipMemcpy(dy, y, ctypes.c_size_t(N * 4), 1), "hipMemcpy H2D")
    a = float(index + 2)
    # Kernel arguments as one packed buffer (HIP_LAUNCH_PARAM_BUFFER_POINTER).
    args = struct.pack("<QQfi", dx.value, dy.value, a, N)
    buf = ctypes.create_string_buffer(args, len(args))
    size = ctypes.c_size_t(len(args))
    config = (ctypes.c_void_p * 5)(1, ctypes.cast(buf, ctypes.c_void_p), 2, ctypes.cast(ctypes.byref(size), ctypes.c_void_p), 3)
    check(hip, hip.hipModuleLaunchKernel(func, N // 256, 1, 1, 256, 1, 1, 0, None, None, config), "hipModuleLaunchKernel")
    check(hip, hip.hipDeviceSynchronize(), "hipDeviceSynchronize")
    out = (ctypes.c_float * N)()
    check(hip, hip.hipMemcpy(out, dy, ctypes.c_size_t(N * 4), 2), "hipMemcpy D2H")
    bad = sum(1 for i in range(N) if out[i] != ctypes.c_float(a * x[i] + y[i]).value)
    results.put((index, os.getpid(), bad))


def main():
    code_object = sys.argv[1]
    mp.set_start_method("spawn")
    results = mp.Queue()
    procs = [mp.Process(target=worker, args=(code_object, i, results)) for i in range(4)]
    for p in procs:
        p.start()
    got = []
    # Collect results while watching the workers: one that dies early must not leave
    # the parent waiting for a result that will never come.
    while len(got) < len(procs):
        try:
            got.append(results.get(timeout=1))
        except Exception:
            if all(p.exitcode is not None for p in procs) and results.empty():
                break
    for p in procs:
        p.join()
    failed = [p.exitcode for p in procs if p.exitcode != 0]
    for index, pid, bad in sorted(got):
        print(f"worker {index} pid {pid}: {bad} wrong")
    ok = not failed and len(got) == 4 and all(bad == 0 for _, _, bad in got)
    print("PASS spawn workers" if ok else f"FAIL spawn workers: exit codes {failed}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
