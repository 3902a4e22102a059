"""Approximate nearest-word search with FAISS, akmbench -mode assign's anchor.

akmbench starts this script with the paths of the words (K x d float32,
row-major, little-endian) and of the queries (Q x d float32), K, Q, d and a
list of settings separated by semicolons, each "ivf:NLIST:NPROBE,NPROBE,..."
(IndexIVFFlat, its coarse quantiser trained by FAISS's k-means on the words)
or "hnsw:M:EF,EF,..." (IndexHNSWFlat, efConstruction 40). For every search
setting it prints one line: the name, the CPU seconds of the build, the CPU
seconds of the search of all the queries (this process, all threads), the
bytes of the index (serialised: the words' copy, ids and coarse quantiser or
graph) and the Q labels, separated by spaces.
"""
import sys
import time

import faiss
import numpy as np


def main():
    wpath, qpath = sys.argv[1], sys.argv[2]
    k, q, d = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    words = np.fromfile(wpath, dtype="<f4").reshape(k, d)
    queries = np.fromfile(qpath, dtype="<f4").reshape(q, d)
    for spec in sys.argv[6].split(";"):
        kind, size, params = spec.split(":")
        size = int(size)
        t = time.process_time()
        if kind == "ivf":
            quant = faiss.IndexFlatL2(d)
            index = faiss.IndexIVFFlat(quant, d, size)
            index.train(words)
            index.add(words)
        elif kind == "hnsw":
            index = faiss.IndexHNSWFlat(d, size)
            index.hnsw.efConstruction = 40
            index.add(words)
        else:
            sys.exit(f"unknown index {kind!r}")
        build = time.process_time() - t
        nbytes = faiss.serialize_index(index).size
        for p in params.split(","):
            p = int(p)
            if kind == "ivf":
                index.nprobe = p
                name = f"faiss ivf lists={size} probes={p}"
            else:
                index.hnsw.efSearch = p
                name = f"faiss hnsw M={size} ef={p}"
            t = time.process_time()
            _, labels = index.search(queries, 1)
            cpu = time.process_time() - t
            print(name.replace(" ", "_"), build, cpu, nbytes, " ".join(str(int(x)) for x in labels[:, 0]), flush=True)


if __name__ == "__main__":
    main()
