"""Precise-mode RoPE against mpmath (100-bit): `posenc rope apply` on unit
vectors yields the float32 cos/sin it uses (half layout: out[k] = cos, out[k+K]
= sin), compared in ULPs with the correctly rounded cos/sin(p * base^(-2k/R))
(and with the YaRN and llama3 frequencies, evaluated in mpmath from the same
formulas). Claim in posenc.h: within 1 ULP for positions below 2^24."""
import os
import shutil
import sys

import numpy as np

from common import Checks, run, tmpdir

try:
    import mpmath
except ImportError:
    print("SKIP: mpmath missing")
    sys.exit(77)

mpmath.mp.prec = 100


def ulps(a, b):
    ia = np.array(a, dtype=np.float32).view(np.int32).astype(np.int64)
    ib = np.array(b, dtype=np.float32).view(np.int32).astype(np.int64)
    ia = np.where(ia < 0, -2**31 - ia, ia)
    ib = np.where(ib < 0, -2**31 - ib, ib)
    return np.abs(ia - ib)


def yarn_w(k, R, base, factor, L0, beta_fast=32, beta_slow=1):
    corr = lambda r: R * mpmath.log(L0 / (r * 2 * mpmath.pi)) / (2 * mpmath.log(base))
    low = max(int(mpmath.floor(corr(beta_fast))), 0)
    high = min(int(mpmath.ceil(corr(beta_slow))), R - 1)
    ramp = min(max((k - low) / mpmath.mpf(high - low), 0), 1)
    w = mpmath.mpf(base) ** (-mpmath.mpf(2 * k) / R)
    return w / factor * ramp + w * (1 - ramp)


def llama3_w(k, R, base, factor, L0, lo=1, hi=4):
    w = mpmath.mpf(base) ** (-mpmath.mpf(2 * k) / R)
    lam = 2 * mpmath.pi / w
    if lam < mpmath.mpf(L0) / hi:
        return w
    if lam > mpmath.mpf(L0) / lo:
        return w / factor
    s = (L0 / lam - lo) / (hi - lo)
    return (1 - s) * w / factor + s * w


def main():
    t = Checks()
    d = tmpdir()
    R = 128
    K = R // 2
    positions = np.array([0, 1, 7, 1000, 4097, 65535, 1000003, 2**24 - 1], dtype=np.int64)
    x = np.zeros((len(positions), K, R), dtype=np.float32)
    for k in range(K):
        x[:, k, k] = 1.0  # head k is the unit vector e_k: its pair k shows (cos, sin)
    xin, pin, out = os.path.join(d, "x.npy"), os.path.join(d, "p.npy"), os.path.join(d, "y.npy")
    np.save(xin, x)
    np.save(pin, positions)
    cases = [("none base 1e4", ["--base", 10000], lambda k: mpmath.mpf(10000) ** (-mpmath.mpf(2 * k) / R)),
             ("none base 5e5", ["--base", 500000], lambda k: mpmath.mpf(500000) ** (-mpmath.mpf(2 * k) / R)),
             ("yarn f4 L0 4096", ["--scaling", "yarn", "--factor", 4, "--original-max", 4096, "--attention-factor", 1],
              lambda k: yarn_w(k, R, 10000, 4, 4096)),
             ("llama3 f8 L0 8192 base 5e5", ["--base", 500000, "--scaling", "llama3", "--factor", 8, "--original-max", 8192],
              lambda k: llama3_w(k, R, 500000, 8, 8192))]
    for name, flags, wfun in cases:
        rc, _, se = run("rope", "apply", "--in", xin, "--positions", pin, "--layout", "half", "--seq-len", 1, *flags, "-o", out)
        if not t.check(rc == 0, f"{name}: rope apply ran {se.strip()}"):
            continue
        y = np.load(out)
        got_c = np.array([[y[i, k, k] for k in range(K)] for i in range(len(positions))])
        got_s = np.array([[y[i, k, k + K] for k in range(K)] for i in range(len(positions))])
        ws = [wfun(k) for k in range(K)]
        want_c = np.array([[float(mpmath.cos(int(p) * w)) for w in ws] for p in positions], dtype=np.float32)
        want_s = np.array([[float(mpmath.sin(int(p) * w)) for w in ws] for p in positions], dtype=np.float32)
        u = np.maximum(ulps(got_c, want_c), ulps(got_s, want_s))
        i, k = np.unravel_index(np.argmax(u), u.shape)
        t.check(u.max() <= 1, f"{name}: max {u.max()} ULP over {u.size * 2} cos/sin values at p={positions[i]} pair {k} "
                              f"(0 ULP: {np.mean(u == 0) * 100:.1f}%); tol 1 ULP")
    shutil.rmtree(d, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
