"""T5 buckets from `posenc bias t5` against HF's _relative_position_bucket run
in PyTorch, for r = -20000..20000 and 30 (num_buckets, max_distance,
bidirectional) settings: every bucket must be identical (integers, no
tolerance). The HF function text is copied verbatim from modeling_t5.py.
Skipped (77) when torch is not installed."""
import math
import os
import sys

import numpy as np

from common import Checks, run, tmpdir, torch_math_library

try:
    import torch
except ImportError:
    print("SKIP: torch not installed")
    sys.exit(77)
torch_math_library(torch)  # torch-compat computes exp/sin/cos as this torch does (MKL VML on x86-64)


def _relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    relative_buckets = 0
    if bidirectional:
        num_buckets //= 2
        relative_buckets += (relative_position > 0).to(torch.long) * num_buckets
        relative_position = torch.abs(relative_position)
    else:
        relative_position = -torch.min(relative_position, torch.zeros_like(relative_position))
    max_exact = num_buckets // 2
    is_small = relative_position < max_exact
    relative_position_if_large = max_exact + (
        torch.log(relative_position.float() / max_exact)
        / math.log(max_distance / max_exact)
        * (num_buckets - max_exact)
    ).to(torch.long)
    relative_position_if_large = torch.min(
        relative_position_if_large, torch.full_like(relative_position_if_large, num_buckets - 1)
    )
    relative_buckets += torch.where(is_small, relative_position, relative_position_if_large)
    return relative_buckets


def main():
    torch.set_num_threads(1)
    t = Checks()
    d = tmpdir()
    out = os.path.join(d, "t5.npy")
    N = 20000
    settings = [(32, 128), (16, 128), (64, 256), (320, 800), (128, 128), (32, 64), (8, 16), (20, 100),
                (24, 50), (48, 1000), (6, 7), (12, 1000), (100, 5000), (256, 4096), (1000, 100000)]
    total = 0
    for nb, md in settings:
        for bidir in (1, 0):
            extra = ["--buckets", nb, "--max-distance", md] + ([] if bidir else ["--unidirectional"])
            rc1, _, _ = run("bias", "t5", "--len", 1, "--key-len", N + 1, *extra, "-o", out)
            pos = np.load(out)[0]
            rc2, _, _ = run("bias", "t5", "--len", N + 1, "--key-len", 1, *extra, "-o", out)
            neg = np.load(out)[:, 0]
            ours = np.concatenate([neg[::-1], pos[1:]])
            ref = _relative_position_bucket(torch.arange(-N, N + 1), bool(bidir), nb, md).numpy()
            bad = np.nonzero(ours != ref)[0]
            total += len(bad)
            where = f", first at r={bad[0] - N}: ours {ours[bad[0]]}, torch {ref[bad[0]]}" if len(bad) else ""
            t.check(rc1 == 0 and rc2 == 0 and len(bad) == 0,
                    f"num_buckets {nb:3d} max_distance {md:4d} bidirectional {bidir}: {len(bad)} of {2 * N + 1} differ{where}")
    print(f"total mismatches: {total}")
    t.finish()


if __name__ == "__main__":
    main()
