"""The peers of bench/data_load.cpp: one load in this process, printed as
"seconds cpu_seconds peak_rss_mb baseline_rss_mb". The baseline is the resident size after the
imports, so the peak above it is what the load itself held.
  python3 load_peer.py pyarrow_csv|numpy_npy|numpy_loadtxt DIR"""
import os
import resource
import sys
import time


def rss_mb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGESIZE") / 1e6


def main():
    mode, folder = sys.argv[1], sys.argv[2]
    import numpy as np
    if mode == "pyarrow_csv":
        import pyarrow.csv
    baseline = rss_mb()
    t0, c0 = time.perf_counter(), time.process_time()
    if mode == "pyarrow_csv":
        table = pyarrow.csv.read_csv(os.path.join(folder, "data.csv"))
        assert table.num_rows > 0
    elif mode == "numpy_npy":
        x = np.load(os.path.join(folder, "x.npy"))
        y = np.load(os.path.join(folder, "y.npy"))
        assert x.shape[0] == y.shape[0]
    elif mode == "numpy_loadtxt":
        data = np.loadtxt(os.path.join(folder, "data.csv"), delimiter=",", skiprows=1, dtype=np.float32)
        assert data.shape[0] > 0
    else:
        sys.exit("load_peer.py: unknown mode " + mode)
    seconds, cpu = time.perf_counter() - t0, time.process_time() - c0
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e6
    print("%.6f %.6f %.2f %.2f" % (seconds, cpu, peak, baseline))


if __name__ == "__main__":
    main()
