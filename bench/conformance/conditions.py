"""conditions.py -- the machine and the conditions a conformance run had:
the CPU, the kernel, the file system of the scratch directory, the disk's
flush latency measured at the start (4 KiB appended and fdatasync'd, 50
times: p50 and p99), the load average at the start and the end."""

import os
import platform
import statistics
import time


def _cpu():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _fs(path):
    """The type of the mount that holds path (the longest mount point
    that prefixes it, from /proc/mounts)."""
    best, kind = "", "unknown"
    path = os.path.realpath(path)
    try:
        with open("/proc/mounts") as f:
            for line in f:
                parts = line.split()
                mnt = parts[1]
                if (path == mnt or path.startswith(mnt.rstrip("/") + "/")) and len(mnt) > len(best):
                    best, kind = mnt, parts[2]
    except OSError:
        pass
    return kind


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return " ".join(f.read().split()[:3])
    except OSError:
        return "unknown"


def flush_latency(path, n=50):
    """(p50, p99) in ms of a 4 KiB append + fdatasync in directory path."""
    f = os.path.join(path, "flush-probe")
    fd = os.open(f, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    buf = b"x" * 4096
    ts = []
    try:
        for _ in range(n):
            t0 = time.perf_counter()
            os.write(fd, buf)
            os.fdatasync(fd)
            ts.append((time.perf_counter() - t0) * 1e3)
    finally:
        os.close(fd)
        os.unlink(f)
    ts.sort()
    return statistics.median(ts), ts[min(n - 1, int(0.99 * n))]


def machine(scratch):
    p50, p99 = flush_latency(scratch)
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": f"{os.cpu_count()} vCPU ({_cpu()})",
        "kernel": f"{platform.system()} {platform.release()}",
        "filesystem": _fs(scratch),
        "flush_ms_p50": round(p50, 3),
        "flush_ms_p99": round(p99, 3),
        "load_start": loadavg(),
        "python": platform.python_version(),
    }
