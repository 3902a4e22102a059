"""Exhaustive nearest-centroid search with FAISS, akmbench's fast exact reference.

akmbench -exact faiss starts this script with the path of its descriptors
(n x d float32, row-major, little-endian), n and d. It then sends, for each
assignment pass, an int32 K followed by K x d float32 centroids, and reads
back n int32 labels (the nearest centroid of each descriptor by FAISS's
IndexFlatL2, which computes distances with BLAS matrix products) and a
float64: the CPU seconds this process spent on that pass, all threads
included. K = 0 ends the script. Only akmbench's Lloyd loop is in Go; this
replaces its exhaustive scan, which runs about 10x slower than OpenBLAS here.

It needs Debian's python3-faiss, with libopenblas0 installed: against the
reference BLAS FAISS is no faster than akmbench's own scan.
"""
import sys
import time

import faiss
import numpy as np


def read_exactly(f, size):
    buf = bytearray()
    while len(buf) < size:
        chunk = f.read(size - len(buf))
        if not chunk:
            raise EOFError(f"wanted {size} bytes, got {len(buf)}")
        buf += chunk
    return bytes(buf)


def main():
    path, n, d = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    x = np.fromfile(path, dtype="<f4")
    if x.size != n * d:
        sys.exit(f"{path}: {x.size} values, want {n} x {d}")
    x = x.reshape(n, d)
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    while True:
        (k,) = np.frombuffer(read_exactly(stdin, 4), dtype="<i4")
        if k == 0:
            return
        c = np.frombuffer(read_exactly(stdin, int(k) * d * 4), dtype="<f4").reshape(int(k), d)
        t = time.process_time()
        index = faiss.IndexFlatL2(d)
        index.add(np.ascontiguousarray(c))
        _, labels = index.search(x, 1)
        cpu = time.process_time() - t
        stdout.write(labels.astype("<i4").tobytes())
        stdout.write(np.float64(cpu).astype("<f8").tobytes())
        stdout.flush()


if __name__ == "__main__":
    main()
