"""OpenCV reference for cmd/siftbench: cv2.SIFT_create() with default
parameters, one thread. Run by the Go driver as a long-lived child process
speaking a line protocol on stdin/stdout, so that Go and OpenCV can be timed
interleaved, image by image, in the same run:

  extract <in.png> <out.bin>  -> "ok <n>"  (writes keypoints and descriptors)
  time <in.png> <reps>        -> "ok <n> <wall1> <cpu1> ... <wallN> <cpuN>"
                                 (seconds per run: wall clock, and CPU
                                 time of this thread, which excludes time
                                 spent waiting for a core)
  photo <in.jpg> <max_side> <reps>
                              -> "ok <n> <w> <h> <dw1> <dc1> <sw1> <sc1> ..."
                                 (per run: cv2.imread(IMREAD_GRAYSCALE)'s
                                 wall and CPU seconds, then those of an
                                 INTER_AREA resize to max_side on the
                                 longer side, when it is longer, and
                                 detectAndCompute)
  quit

Images are read with cv2.IMREAD_GRAYSCALE (the Go side writes 8-bit gray
PNGs, so both extractors see the same bytes); decoding is never timed.

out.bin, little-endian: int32 n; n records of float32 x, y, size, angle
(degrees), response and int32 octave (OpenCV's packed value); then n*128
uint8 descriptor bytes.
"""
import sys
import time

import cv2
import numpy as np

KP = np.dtype([("x", "<f4"), ("y", "<f4"), ("size", "<f4"), ("angle", "<f4"),
               ("response", "<f4"), ("octave", "<i4")])


def main():
    cv2.setNumThreads(1)
    sift = cv2.SIFT_create()
    cache = {}

    def load(path):
        img = cache.get(path)
        if img is None:
            img = cv2.imread(path, cv2.IMREAD_GRAYSCALE)
            if img is None:
                raise IOError("cannot read " + path)
            cache[path] = img
        return img

    print("ready", cv2.__version__, flush=True)
    for line in sys.stdin:
        f = line.split()
        if not f:
            continue
        try:
            if f[0] == "quit":
                break
            if f[0] == "extract":
                img = cv2.imread(f[1], cv2.IMREAD_GRAYSCALE)
                if img is None:
                    raise IOError("cannot read " + f[1])
                kps, desc = sift.detectAndCompute(img, None)
                n = len(kps)
                rec = np.zeros(n, KP)
                for i, k in enumerate(kps):
                    rec[i] = (k.pt[0], k.pt[1], k.size, k.angle, k.response, k.octave)
                if desc is None:
                    desc = np.zeros((0, 128), np.float32)
                d = np.clip(np.rint(desc), 0, 255).astype(np.uint8)
                with open(f[2], "wb") as out:
                    out.write(np.int32(n).astype("<i4").tobytes())
                    out.write(rec.tobytes())
                    out.write(d.tobytes())
                print("ok", n, flush=True)
            elif f[0] == "time":
                img = load(f[1])
                reps = int(f[2])
                times = []
                n = 0
                for _ in range(reps):
                    c0 = time.thread_time()
                    t0 = time.perf_counter()
                    kps, _ = sift.detectAndCompute(img, None)
                    t1 = time.perf_counter()
                    c1 = time.thread_time()
                    times += [t1 - t0, c1 - c0]
                    n = len(kps)
                print("ok", n, " ".join("%.6f" % t for t in times), flush=True)
            elif f[0] == "photo":
                max_side, reps = int(f[2]), int(f[3])
                times = []
                n = w = h = 0
                for _ in range(reps):
                    c0 = time.thread_time()
                    t0 = time.perf_counter()
                    img = cv2.imread(f[1], cv2.IMREAD_GRAYSCALE)
                    t1 = time.perf_counter()
                    c1 = time.thread_time()
                    if img is None:
                        raise IOError("cannot read " + f[1])
                    h, w = img.shape
                    if max_side > 0 and max(w, h) > max_side:
                        # The size transforms/sift's MaxSide gives.
                        if w >= h:
                            size = (max_side, max(1, int(h * max_side / w + 0.5)))
                        else:
                            size = (max(1, int(w * max_side / h + 0.5)), max_side)
                        img = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
                    kps, _ = sift.detectAndCompute(img, None)
                    t2 = time.perf_counter()
                    c2 = time.thread_time()
                    times += [t1 - t0, c1 - c0, t2 - t1, c2 - c1]
                    n = len(kps)
                print("ok", n, w, h, " ".join("%.6f" % t for t in times), flush=True)
            else:
                raise ValueError("unknown command " + f[0])
        except Exception as e:  # report, keep serving
            print("err", str(e).replace("\n", " "), flush=True)


if __name__ == "__main__":
    main()
