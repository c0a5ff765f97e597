#!/usr/bin/env python3
"""posenc_query_scale_f64 (include/posenc.h), checked exactly without mpmath: the library's value must be the same
double as Python's own 1.0 + beta * math.log1p(k) with k = (position + shift) // divisor in Python's exact integers
(two IEEE roundings, the product then the sum; Python's math.log1p is the C library's log1p, as posenc's), bit for
bit, for random betas, divisors, shifts and positions up to 2^62 (where a floating-point quotient would floor
wrongly). Properties: exactly 1 below divisor - shift, constant inside each block of `divisor` positions, rising
with each block when beta > 0, and layers NONE is 1 everywhere."""
import ctypes
import math
import os
import random

from common import BIN, Checks, reexec_for_library


class QueryScale(ctypes.Structure):
    _fields_ = [("layers", ctypes.c_int), ("beta", ctypes.c_double), ("divisor", ctypes.c_int64),
                ("shift", ctypes.c_int64)]


def main():
    reexec_for_library()  # a sanitizer build: again with the ASan runtime preloaded
    t = Checks()
    lib = ctypes.CDLL(os.environ.get("POSENC_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(BIN)),
                                                                       "libposenc.so"))
    f = lib.posenc_query_scale_f64
    f.restype = ctypes.c_int
    err = ctypes.create_string_buffer(4096)

    def scale(layers, beta, divisor, shift, positions):
        q = QueryScale(layers, beta, divisor, shift)
        pos = (ctypes.c_int64 * len(positions))(*positions)
        out = (ctypes.c_double * len(positions))()
        rc = f(ctypes.byref(q), pos, ctypes.c_size_t(len(positions)), out, err)
        return rc, list(out)

    rng = random.Random(39)
    cases, worst = 0, 0
    for _ in range(300):
        beta = rng.choice([0.1, 0.3, 0.25, float.fromhex("0x1.99999ap-4"), rng.uniform(-2, 2), rng.uniform(0, 1e-3)])
        divisor = rng.choice([1, 7, 64, 8192, 16384, 1 << 20, rng.randrange(1, 1 << 40)])
        shift = rng.choice([0, 1, rng.randrange(0, 1000)])
        positions = [rng.randrange(0, 1 << rng.randrange(1, 62)) for _ in range(16)]
        positions += [max(0, divisor * k - shift + e) for k in (1, 2, 3) for e in (-1, 0)]
        rc, got = scale(1, beta, divisor, shift, positions)
        want = [1.0 + beta * math.log1p((p + shift) // divisor) for p in positions]
        bad = [(p, g, w) for p, g, w in zip(positions, got, want) if g != w]
        cases += len(positions)
        worst = max(worst, len(bad))
        if not t.check(rc == 0 and not bad, f"beta {beta!r}, divisor {divisor}, shift {shift}: {len(positions)} "
                                            f"positions bit for bit ({bad[:2]})"):
            break
    t.check(worst == 0, f"{cases} values: every one the same double as Python's exact-integer floor and log1p")
    # the floor is exact integer division: a float64 quotient would round 2^62 - 1 over 2^31 up to 2^31
    rc, got = scale(1, 1.0, 1 << 31, 0, [(1 << 62) - 1])
    t.check(rc == 0 and got[0] == 1.0 + math.log1p((1 << 31) - 1) != 1.0 + math.log1p(1 << 31),
            f"position 2^62 - 1, divisor 2^31: floor 2^31 - 1 exactly ({got})")
    # properties
    rc, got = scale(2, 0.1, 8192, 1, list(range(0, 40000, 7)) + [8190, 8191, 16382, 16383])
    pos = list(range(0, 40000, 7)) + [8190, 8191, 16382, 16383]
    t.check(rc == 0 and all(g == 1.0 for p, g in zip(pos, got) if p < 8191) and
            all(g > 1.0 for p, g in zip(pos, got) if p >= 8191),
            "Llama 4's form (8192, shift 1): exactly 1 below position 8191, above 1 from it")
    by_block = {}
    for p, g in zip(pos, got):
        by_block.setdefault((p + 1) // 8192, set()).add(g)
    blocks = sorted(by_block)
    t.check(all(len(v) == 1 for v in by_block.values()) and
            all(min(by_block[a]) < min(by_block[b]) for a, b in zip(blocks, blocks[1:])),
            f"one value per block of 8192 positions, rising block by block ({len(blocks)} blocks)")
    rc, got = scale(0, float("nan"), 0, 0, [0, 5, 1 << 60])
    t.check(rc == 0 and got == [1.0, 1.0, 1.0], "layers NONE: 1 everywhere, the other fields unchecked")
    rc, _ = scale(1, 0.1, -3, 0, [0])
    message = err.raw[4:].split(b"\0")[0].decode()
    t.check(rc != 0 and "divisor -3" in message, f"divisor -3 refused naming it ({message})")
    t.finish()


if __name__ == "__main__":
    main()
