"""RoPE --torch-compat against PyTorch itself (the test environment's torch 2.13): HF's float32 code written
out in torch (transformers' modeling_rope_utils init functions and
LlamaRotaryEmbedding.forward, ~v4.47, the generation of the goldens), CPU,
torch.set_num_threads(1) (docs/rope.md says why threads matter).

  inv_freq  `posenc rope freqs --torch-compat --json`: every rotary_dim 2..512 x
            base {1e4, 5e5, 1e6} unscaled; each scaling (linear, ntk, dynamic,
            yarn, longrope long and short, llama3) on rotary dims covering every
            rotary_dim/2 mod 16 and every base.
  cos/sin   posenc_rope_table_f32 (through tests/torch_rope_table.c) at 4096
            positions (8192 for dynamic/longrope-long) against HF's
            emb.cos() * attention_scaling, first copy of each pair, same dims.
  apply     `rope apply --torch-compat` vs HF's apply_rotary_pos_emb at 4096
            positions: bit for bit when rotary_dim/2 is a multiple of the vector
            width, within a stated bound otherwise (check_apply says why).

Tolerance 0 (bit for bit) except that apply bound: posenc repeats torch's float32 steps with
torch's own kernel blocks. As test_torch_sinusoid, every torch kernel build
this CPU can run is checked (the others in a child with ATEN_CPU_CAPABILITY).
Skipped (77) when torch is not installed; scripts/test fails skips under CI."""
import json
import math
import os
import subprocess
import sys

import numpy as np

from common import Checks, import_torch, torch_math_library, run, tmpdir, torch_capabilities, torch_peer_label

torch = import_torch()
torch_math_library(torch)  # exp/sin/cos as this torch runs them (MKL VML on x86-64 wheels)
HELPER = os.environ.get("POSENC_TORCH_ROPE_TABLE",
                        os.path.join(os.path.dirname(__file__), "../../build/tests/torch_rope_table"))

# (posenc flags, HF knobs) per scheme; dims/bases are swept separately
SCHEMES = {
    "none": ([], {}),
    "linear": (["--factor", 4], {"factor": 4.0}),
    "ntk": (["--factor", 4], {"factor": 4.0}),
    "dynamic": (["--factor", 2, "--max-pos", 4096, "--seq-len", 8192], {"factor": 2.0, "max_pos": 4096, "seq_len": 8192}),
    "yarn": (["--factor", 4, "--original-max", 4096], {"factor": 4.0, "orig": 4096}),
    "longrope": (["--factor", 32, "--original-max", 4096, "--seq-len", 8192], {"factor": 32.0, "orig": 4096, "seq_len": 8192}),
    "longrope-short": (["--factor", 32, "--original-max", 4096, "--seq-len", 4096], {"factor": 32.0, "orig": 4096, "seq_len": 4096}),
    "llama3": (["--factor", 8, "--original-max", 8192], {"factor": 8.0, "orig": 8192, "low": 1.0, "high": 4.0}),
}


def longrope_lists(r):
    k = np.arange(r // 2)
    return 1.0 + 0.173 * k, 1.0 + 0.0131 * (k % 7)  # long, short: any positive float64 lists


def hf_default(r, base):
    return 1.0 / (base ** (torch.arange(0, r, 2, dtype=torch.int64).float() / r))


def hf_inv_freq(scheme, r, base, kw):
    """(inv_freq float32 tensor, attention factor) as transformers computes them."""
    if scheme == "none":
        return hf_default(r, base), 1.0
    if scheme == "linear":
        return hf_default(r, base) / kw["factor"], 1.0
    if scheme == "ntk":
        return hf_default(r, base * kw["factor"] ** (r / (r - 2))), 1.0
    if scheme == "dynamic":
        seq = max(kw["seq_len"], kw["max_pos"])
        f = kw["factor"]
        return hf_default(r, base * ((f * seq / kw["max_pos"]) - (f - 1)) ** (r / (r - 2))), 1.0
    if scheme == "yarn":
        f, orig = kw["factor"], kw["orig"]

        def correction_dim(rot):
            return (r * math.log(orig / (rot * 2 * math.pi))) / (2 * math.log(base))
        low, high = max(math.floor(correction_dim(32)), 0), min(math.ceil(correction_dim(1)), r - 1)
        if low == high:
            high += 0.001
        pos_freqs = base ** (torch.arange(0, r, 2).float() / r)
        extrapolation, interpolation = 1.0 / pos_freqs, 1.0 / (f * pos_freqs)
        ramp = torch.clamp((torch.arange(r // 2, dtype=torch.float32) - low) / (high - low), 0, 1)
        extrapolation_factor = 1 - ramp
        inv = interpolation * (1 - extrapolation_factor) + extrapolation * extrapolation_factor
        return inv, 0.1 * math.log(f) + 1.0
    if scheme.startswith("longrope"):
        long_f, short_f = longrope_lists(r)
        ext = torch.tensor(long_f if kw["seq_len"] > kw["orig"] else short_f, dtype=torch.float32)
        inv = 1.0 / (ext * base ** (torch.arange(0, r, 2, dtype=torch.int64).float() / r))
        return inv, math.sqrt(1 + math.log(kw["factor"]) / math.log(kw["orig"]))
    if scheme == "llama3":
        inv = hf_default(r, base)
        f, low_f, high_f, old = kw["factor"], kw["low"], kw["high"], kw["orig"]
        low_wavelen, high_wavelen = old / low_f, old / high_f
        wavelen = 2 * math.pi / inv
        inv_llama = torch.where(wavelen > low_wavelen, inv / f, inv)
        smooth = (old / wavelen - low_f) / (high_f - low_f)
        smoothed = (1 - smooth) * inv_llama / f + smooth * inv_llama
        medium = ~(wavelen < high_wavelen) * ~(wavelen > low_wavelen)
        return torch.where(medium, smoothed, inv_llama), 1.0
    raise ValueError(scheme)


def hf_tables(inv, attention, length):
    """LlamaRotaryEmbedding.forward for position_ids = arange(length): [T, R] cos, sin."""
    inv_expanded = inv[None, :, None].float().expand(1, -1, 1)
    position_ids = torch.arange(length)[None, :]
    freqs = (inv_expanded.float() @ position_ids[:, None, :].float()).transpose(1, 2)
    emb = torch.cat((freqs, freqs), dim=-1)
    return (emb.cos() * attention)[0].numpy(), (emb.sin() * attention)[0].numpy()


def scheme_flags(scheme, r, folder):
    flags, _ = SCHEMES[scheme]
    name = "longrope" if scheme.startswith("longrope") else scheme
    flags = ["--scaling", name, *flags]
    if name == "longrope":
        long_f, short_f = longrope_lists(r)
        lf, sf = os.path.join(folder, "long.npy"), os.path.join(folder, "short.npy")
        np.save(lf, long_f)
        np.save(sf, short_f)
        flags += ["--long-factors", lf, "--short-factors", sf]
    return flags


def posenc_inv_freq(scheme, r, base, folder):
    rc, out, err = run("rope", "freqs", "--dim", r, "--base", base, *scheme_flags(scheme, r, folder),
                       "--torch-compat", "--json")
    if rc != 0:
        return None, err.strip()
    return np.array(json.loads(out)["inv_freq"], dtype=np.float64), ""


def check_inv_freq(t, label, scheme, dims, bases, folder):
    pairs = different = 0
    bad = []
    for base in bases:
        for r in dims:
            if scheme in ("ntk", "dynamic") and r == 2:
                continue  # HF divides by dim - 2
            want, _ = hf_inv_freq(scheme, r, base, SCHEMES[scheme][1])
            got, err = posenc_inv_freq(scheme, r, base, folder)
            pairs += 1
            w = want.numpy()
            if got is None or got.shape != w.shape or not np.array_equal(got.astype(np.float32).view(np.int32), w.view(np.int32)) \
                    or not np.array_equal(got, w.astype(np.float64)):
                different += 1
                bad.append((r, base, err) if got is None else (r, base))
    t.check(different == 0, f"{label}: inv_freq {scheme}: {pairs} (rotary_dim, base) pairs, {different} differ"
                            + (f": {bad[:8]}" if bad else ""))


def posenc_tables(scheme, r, base, length):
    _, kw = SCHEMES[scheme]
    name = "longrope" if scheme.startswith("longrope") else scheme
    args = [HELPER, length, r, r, base, name, kw.get("factor", 1.0), kw.get("orig", 0), kw.get("max_pos", 0),
            kw.get("seq_len", 0)]
    if name == "longrope":
        long_f, short_f = longrope_lists(r)
        args += [",".join(map(repr, long_f.tolist())), ",".join(map(repr, short_f.tolist()))]
    p = subprocess.run(list(map(str, args)), capture_output=True)
    if p.returncode != 0:
        return None, None, p.stderr.decode().strip()
    v = np.frombuffer(p.stdout, dtype=np.float32).reshape(2, length, r // 2)
    return v[0], v[1], ""


def check_tables(t, label, scheme, dims, base, folder):
    _, kw = SCHEMES[scheme]
    length = max(4096, kw.get("seq_len", 0))
    compared = different = 0
    bad = []
    for r in dims:
        if scheme in ("ntk", "dynamic") and r == 2:
            continue
        inv, attention = hf_inv_freq(scheme, r, base, kw)
        cos_want, sin_want = hf_tables(inv, attention, length)
        cos_got, sin_got, err = posenc_tables(scheme, r, base, length)
        p = r // 2
        compared += 2 * length * p
        if cos_got is None:
            different += 2 * length * p
            bad.append((r, err))
            continue
        n = int(np.count_nonzero(cos_got.view(np.int32) != cos_want[:, :p].view(np.int32)) +
                np.count_nonzero(sin_got.view(np.int32) != sin_want[:, :p].view(np.int32)))
        different += n
        if n:
            bad.append((r, n))
    t.check(different == 0, f"{label}: cos/sin {scheme} base {base:g}, {length} positions, rotary dims "
                            f"{dims[0]}..{dims[-1]} ({len(dims)}): {compared} cells compared, {different} different"
                            + (f": {bad[:8]}" if bad else ""))


def rotate_half(x):
    x1, x2 = x[..., : x.shape[-1] // 2], x[..., x.shape[-1] // 2:]
    return torch.cat((-x2, x1), dim=-1)


def check_apply(t, label, scheme, dims, folder, lanes):
    """`rope apply --torch-compat` (half layout) vs HF's q * cos + rotate_half(q) * sin at
    4096 positions, 2 heads. posenc rotates with one cos/sin per pair; HF's table holds
    two copies (emb = cat(freqs, freqs)), which torch's vector blocks can round 1 ULP
    apart when rotary_dim/2 is not a multiple of the vector width. There the bound is
    |diff| <= 2^-22 (|x_k| + |x_k+R/2|): 1 ULP of cos or sin plus the roundings of the
    two products and the sum; elsewhere 0 cells may differ."""
    _, kw = SCHEMES[scheme]
    length, heads = 4096, 2
    exact_cells = exact_diff = bound_cells = bound_diff = 0
    worst = 0.0
    x_in, y_out = os.path.join(folder, "x.npy"), os.path.join(folder, "y.npy")
    for r in dims:
        inv, attention = hf_inv_freq(scheme, r, 10000.0, kw)
        cos, sin = (torch.from_numpy(v) for v in hf_tables(inv, attention, length))
        x = np.random.default_rng(r).standard_normal((length, heads, r)).astype(np.float32)
        q = torch.from_numpy(x).permute(1, 0, 2)[None]  # HF's [batch, heads, T, D]
        want = ((q * cos[None, None]) + (rotate_half(q) * sin[None, None]))[0].permute(1, 0, 2).numpy()
        np.save(x_in, x)
        rc, _, err = run("rope", "apply", "--in", x_in, *scheme_flags(scheme, r, folder), "--torch-compat", "-o", y_out)
        got = np.load(y_out) if rc == 0 else np.full_like(want, np.nan)
        n = int(np.count_nonzero(got.view(np.int32) != want.view(np.int32)))
        if (r // 2) % lanes == 0:
            exact_cells += want.size
            exact_diff += n
        else:
            p = r // 2
            pair = np.abs(x[..., :p]) + np.abs(x[..., p:])
            rel = np.abs(got.astype(np.float64) - want) / np.concatenate([pair, pair], axis=-1)
            worst = max(worst, float(np.nanmax(rel)) if rc == 0 else math.inf)
            bound_cells += want.size
            bound_diff += n
    t.check(exact_diff == 0, f"{label}: apply {scheme}, rotary_dim/2 a multiple of {lanes}: "
                             f"{exact_cells} cells compared, {exact_diff} different")
    if bound_cells:
        t.check(worst <= 2.0 ** -22, f"{label}: apply {scheme}, other rotary dims: {bound_cells} cells compared, "
                                     f"{bound_diff} different, max |diff| = {worst / 2.0 ** -24:.2f} x 2^-24 "
                                     f"(|x_k|+|x_k+R/2|) (bound 4)")


def main():
    child = len(sys.argv) > 1 and sys.argv[1] == "--child"
    t = Checks()
    folder = tmpdir()
    label, pick = torch_peer_label(torch)
    # rotary_dim/2 = 1..16 (every residue mod 16), then larger dims, odd and even pair counts
    sample = list(range(2, 33, 2)) + [48, 64, 80, 96, 100, 128, 160, 200, 256, 512]
    if child:
        check_inv_freq(t, label, "none", sample, [1e4, 5e5, 1e6], folder)
        for scheme in SCHEMES:
            check_tables(t, label, scheme, [8, 12, 20, 32, 64, 100, 128], 500000.0 if scheme == "llama3" else 10000.0, folder)
        check_apply(t, label, "yarn", [8, 20, 32, 36, 64, 100], folder, 16 if pick == "avx512" else 1 if pick == "default" else 8)
        t.finish()
    check_inv_freq(t, label, "none", list(range(2, 513, 2)), [1e4, 5e5, 1e6], folder)
    for scheme in SCHEMES:
        if scheme != "none":
            check_inv_freq(t, label, scheme, sample, [1e4, 1e6], folder)
    for scheme in SCHEMES:
        check_tables(t, label, scheme, sample[:16] + [48, 64, 100, 128, 256], 500000.0 if scheme == "llama3" else 10000.0, folder)
    check_tables(t, label, "none", [2, 6, 12, 24, 64, 128], 1e6, folder)
    lanes = 16 if pick == "avx512" else 1 if pick == "default" else 8
    for scheme in ("none", "yarn"):
        check_apply(t, label, scheme, [4, 8, 12, 16, 20, 24, 32, 36, 64, 100, 128], folder, lanes)
    for cap in torch_capabilities():
        if cap == pick:
            continue
        env = dict(os.environ, ATEN_CPU_CAPABILITY=cap)
        p = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True, env=env)
        print("\n".join("    " + line for line in (p.stdout + p.stderr).strip().splitlines()))
        t.check(p.returncode == 0, f"ATEN_CPU_CAPABILITY={cap}: torch and posenc agree bit for bit (child exit {p.returncode})")
    t.finish()


if __name__ == "__main__":
    main()
