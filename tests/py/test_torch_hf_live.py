"""RoPE --torch-compat against transformers' own rotary class, running: the cos/sin that
transformers' LlamaRotaryEmbedding.forward (its ROPE_INIT_FUNCTIONS, its dynamic/longrope
update, its float32 arithmetic on torch's CPU kernels) hands to apply_rotary_pos_emb, against
posenc_rope_table_f32 in torch-compat mode (tests/torch_rope_table.c), bit for bit.

Nothing here re-types HF's formulas (test_torch_rope.py sweeps every rotary dim against a
written-out copy; this one is the framework itself): the pinned test environment's
transformers (scripts/requirements-test.txt) and torch run the forward pass.

posenc runs exp/sin/cos through torch's own MKL (POSENC_TORCH_MKL = torch's libtorch_cpu.so,
posenc.h) when this torch was built with MKL, as every x86-64 wheel is. A second pass without
it (SLEEF: what a torch without MKL computes, and what torch-compat matched against Debian's
torch 1.13) shows the difference MKL makes: at most 1 ULP (2 after yarn's and longrope's attention factor), in
1-6% of the cos values and 1-2.5% of the sin values.

Sizes: head_dim 128 at 4096 positions and at 65536 positions (positions 0..T-1, one
sequence), for default, linear, dynamic (NTK by length), yarn, llama3 and longrope (long and
short factors). Tolerance 0: torch-compat repeats torch's float32 steps. torch runs on one
thread (torch.set_num_threads(1); docs/rope.md says why threads can change torch's bits)."""
import os
import subprocess
import sys

import numpy as np

from common import Checks, import_torch, torch_math_library, torch_peer_label

torch = import_torch()
import transformers  # noqa: E402  (after import_torch: a missing torch skips with its reason)
from transformers import LlamaConfig  # noqa: E402
from transformers.models.llama.modeling_llama import LlamaRotaryEmbedding  # noqa: E402

HELPER = os.environ.get("POSENC_TORCH_ROPE_TABLE",
                        os.path.join(os.path.dirname(__file__), "../../build/tests/torch_rope_table"))
HEAD_DIM = 128


def longrope_lists(r):
    k = np.arange(r // 2)
    return 1.0 + 0.173 * k, 1.0 + 0.0131 * (k % 7)  # long, short: any positive lists


# name: (rope_parameters beyond theta, max_position_embeddings, posenc helper args)
def cases(base):
    long_f, short_f = longrope_lists(HEAD_DIM)
    return {
        "default": ({"rope_type": "default"}, 4096, ("none", 1.0, 0, 0, 0)),
        "linear": ({"rope_type": "linear", "factor": 4.0}, 4096, ("linear", 4.0, 0, 0, 0)),
        "yarn": ({"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 4096}, 16384,
                 ("yarn", 4.0, 4096, 0, 0)),
        "llama3": ({"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                    "original_max_position_embeddings": 8192}, 131072, ("llama3", 8.0, 8192, 0, 0)),
        "longrope": ({"rope_type": "longrope", "long_factor": long_f.tolist(), "short_factor": short_f.tolist(),
                      "original_max_position_embeddings": 4096}, 131072, ("longrope", 32.0, 4096, 0, None)),
        "dynamic": ({"rope_type": "dynamic", "factor": 2.0}, 4096, ("dynamic", 2.0, 0, 4096, None)),
    }


def hf_tables(params, max_pos, base, length):
    config = LlamaConfig(hidden_size=HEAD_DIM * 4, num_attention_heads=4, num_key_value_heads=4,
                         head_dim=HEAD_DIM, max_position_embeddings=max_pos,
                         rope_parameters=dict(params, rope_theta=base))
    rotary = LlamaRotaryEmbedding(config)
    x = torch.zeros(1, dtype=torch.float32)
    cos, sin = rotary(x, torch.arange(length)[None, :])
    return cos[0].numpy(), sin[0].numpy()


def posenc_tables(helper_args, base, length, env=None):
    scheme, factor, orig, max_pos, seq_len = helper_args
    args = [HELPER, length, HEAD_DIM, HEAD_DIM, base, scheme, factor, orig, max_pos,
            length if seq_len is None else seq_len]
    if scheme == "longrope":
        long_f, short_f = longrope_lists(HEAD_DIM)
        args += [",".join(map(repr, long_f.tolist())), ",".join(map(repr, short_f.tolist()))]
    p = subprocess.run(list(map(str, args)), capture_output=True, env=env)
    if p.returncode != 0:
        return None, None, p.stderr.decode().strip()
    v = np.frombuffer(p.stdout, dtype=np.float32).reshape(2, length, HEAD_DIM // 2)
    return v[0], v[1], ""


def ulps(a, b):
    a = a.view(np.int32).astype(np.int64)
    b = b.view(np.int32).astype(np.int64)
    a = np.where(a < 0, -(a & 0x7FFFFFFF), a)
    b = np.where(b < 0, -(b & 0x7FFFFFFF), b)
    return np.abs(a - b)


def main():
    t = Checks()
    label, _ = torch_peer_label(torch)
    mkl = torch_math_library(torch)
    print(f"peer: {label}, transformers {transformers.__version__}; torch's exp/sin/cos: "
          + (f"MKL VML ({mkl})" if mkl else "SLEEF (torch built without MKL)"))
    sleef_env = {k: v for k, v in os.environ.items() if k != "POSENC_TORCH_MKL"}
    half = HEAD_DIM // 2
    for length in (4096, 65536):
        for base in (10000.0, 500000.0):
            for name, (params, max_pos, helper_args) in cases(base).items():
                cos_want, sin_want = hf_tables(params, max_pos, base, length)
                t.check(np.array_equal(cos_want[:, :half].view(np.int32), cos_want[:, half:].view(np.int32)),
                        f"{name}: HF's table holds two equal copies of each pair (cat(freqs, freqs))")
                cos_want, sin_want = cos_want[:, :half], sin_want[:, :half]
                if name == "longrope":  # 4096 positions = original_max: short factors; 65536: long
                    helper_args = (*helper_args[:4], length)
                cos_got, sin_got, err = posenc_tables(helper_args, base, length)
                if cos_got is None:
                    t.check(False, f"{name} base {base:g} {length} positions: posenc refused: {err}")
                    continue
                bad = (cos_got.view(np.int32) != cos_want.view(np.int32)) | \
                      (sin_got.view(np.int32) != sin_want.view(np.int32))
                where = ""
                if bad.any():
                    p, k = np.argwhere(bad)[0]
                    where = (f"; first at position {p}, pair {k}: posenc cos {cos_got[p, k]!r} sin {sin_got[p, k]!r},"
                             f" HF cos {cos_want[p, k]!r} sin {sin_want[p, k]!r}")
                t.check(not bad.any(), f"{name:8s} base {base:8g}, {length} x {HEAD_DIM}: {2 * length * half} values "
                                       f"vs LlamaRotaryEmbedding.forward, {int(bad.sum())} pairs differ{where}")
                if mkl:
                    # the same table as a torch without MKL computes it (posenc's SLEEF route)
                    cos_s, sin_s, err = posenc_tables(helper_args, base, length, env=sleef_env)
                    d = np.maximum(ulps(cos_s, cos_want), ulps(sin_s, sin_want))
                    share = 100.0 * np.count_nonzero(ulps(cos_s, cos_want)) / cos_want.size
                    # 1 ULP of cos/sin, 2 after yarn's/longrope's attention factor multiplies it
                    bound = 2 if name in ("yarn", "longrope") else 1
                    t.check(cos_s is not None and int(d.max()) <= bound and 0 < share < 10,
                            f"{name:8s} base {base:8g}, {length} x {HEAD_DIM}: without MKL (SLEEF) {share:.2f}% of "
                            f"cos and {100.0 * np.count_nonzero(ulps(sin_s, sin_want)) / sin_want.size:.2f}% of sin "
                            f"differ from torch {torch.__version__}, by at most {int(d.max())} ULP")
    t.finish()


if __name__ == "__main__":
    main()
