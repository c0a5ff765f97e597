"""`posenc table --torch-compat` against PyTorch itself (the test environment's torch 2.13) at real lengths.

The two torch tables, written out as their sources write them (float32, CPU,
torch.set_num_threads(1): see docs/sinusoidal.md for why threads matter):
  tutorial  PyTorch's PositionalEncoding (pe[:, 0::2] = sin(position * div_term), ...)
  fairseq   SinusoidalPositionalEmbedding.get_embedding (cat([sin, cos]); odd dim: zero column)
Every cell must be bit-identical (tolerance 0: posenc repeats torch's float32
steps, its SLEEF vector blocks included). Lengths 4096, 5000 and 65536 (every
position < 65536), dims 2..1024 sampled so that every residue of pairs mod 16
occurs, odd dims for fairseq; float64 tables too (torch's default dtype
float64 against --dtype f64).

torch picks one of its kernel builds per process (ATEN_CPU_CAPABILITY, else
AVX2 when the CPU has AVX2+FMA, else DEFAULT); so does posenc. The full sweep
runs on torch's own pick; every other build this CPU can run is checked in a
child process with ATEN_CPU_CAPABILITY set for both torch and posenc.
Skipped (77) when torch is not installed; scripts/test fails skips under CI."""
import math
import os
import subprocess
import sys

import numpy as np

from common import Checks, import_torch, torch_math_library, run, tmpdir, torch_capabilities, torch_peer_label

torch = import_torch()
torch_math_library(torch)  # exp/sin/cos as this torch runs them (MKL VML on x86-64 wheels)


def tutorial(length, d):
    """PyTorch tutorial PositionalEncoding, batch axis dropped."""
    position = torch.arange(length).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d, 2) * (-math.log(10000.0) / d))
    pe = torch.zeros(length, d)
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term)
    return pe.numpy()


def fairseq(length, d):
    """fairseq SinusoidalPositionalEmbedding.get_embedding(length, d, padding_idx=None)."""
    half_dim = d // 2
    emb = math.log(10000) / (half_dim - 1)
    emb = torch.exp(torch.arange(half_dim, dtype=torch.float) * -emb)
    emb = torch.arange(length, dtype=torch.float).unsqueeze(1) * emb.unsqueeze(0)
    emb = torch.cat([torch.sin(emb), torch.cos(emb)], dim=1).view(length, -1)
    if d % 2 == 1:
        emb = torch.cat([emb, torch.zeros(length, 1)], dim=1)
    return emb.numpy()


FORMS = {"tutorial": (tutorial, []), "fairseq": (fairseq, ["--freqs", "t2t", "--layout", "half", "--odd", "pad"])}


def ulp_distance(a, b):
    """Max distance in ULPs of the arrays' dtype (ordered-integer difference)."""
    def ordered(x):
        if x.dtype == np.float64:
            i = x.view(np.int64).astype(object)
            return np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)
        i = x.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return int(np.max(np.abs(ordered(a) - ordered(b)))) if a.size else 0


def same_bits(a, b):
    """Cells whose bits differ (shapes and dtypes must match)."""
    if a.shape != b.shape or a.dtype != b.dtype:
        return b.size
    kind = np.int64 if a.dtype == np.float64 else np.int32
    return int(np.count_nonzero(a.view(kind) != b.view(kind)))


def sweep(t, label, form, length, dims, folder, f64=False):
    """f64: torch.set_default_dtype(torch.float64) against `--dtype f64` (the
    tutorial is then float64 throughout; fairseq asks for torch.float, so its
    table stays float32 and is widened by the final cat with float64 zeros)."""
    reference, flags = FORMS[form]
    if f64:
        flags = flags + ["--dtype", "f64"]
        form_name = form + " float64"
    else:
        form_name = form
    out = os.path.join(folder, "pe.npy")
    compared = different = worst = 0
    bad = []
    for d in dims:
        rc, _, err = run("table", "--len", length, "--dim", d, "--torch-compat", *flags, "-o", out)
        if rc != 0:
            t.check(False, f"{label}: {form_name} L={length} d={d}: posenc failed: {err.strip()}")
            return
        ours = np.load(out)
        torch.set_default_dtype(torch.float64 if f64 else torch.float32)
        try:
            want = reference(length, d)
        finally:
            torch.set_default_dtype(torch.float32)
        if f64:
            want = want.astype(np.float64)  # fairseq even dims: float32 (odd: already widened)
        n = same_bits(ours, want)
        compared += want.size
        different += n
        if n:
            worst = max(worst, ulp_distance(ours, want) if ours.shape == want.shape and ours.dtype == want.dtype else 1 << 31)
            bad.append(d)
    span = f"d={dims[0]}" if len(dims) == 1 else f"{len(dims)} dims {dims[0]}..{dims[-1]}"
    t.check(different == 0, f"{label}: {form_name} L={length}, {span}: {compared} cells compared, {different} different"
                            + (f" (max {worst} ULP; dims {bad[:12]})" if different else ""))


def main():
    child = len(sys.argv) > 1 and sys.argv[1] == "--child"
    t = Checks()
    folder = tmpdir()
    label, pick = torch_peer_label(torch)
    small = list(range(2, 35, 2)) + [100, 200, 1024]
    if child:
        for form in FORMS:
            dims = small if form == "tutorial" else [5, 7, 9, 33] + small[1:]
            sweep(t, label, form, 4096, dims, folder)
            sweep(t, label, form, 65536, [128], folder)
            sweep(t, label, form, 4096, [6, 30, 64, 100], folder, f64=True)
        t.finish()
    # every pairs mod 16 twice below 68, then a stride to 1024 (other residues again)
    evens = sorted(set(list(range(2, 67, 2)) + list(range(70, 1025, 74)) + [200, 512, 1000, 1022, 1024]))
    sweep(t, label, "tutorial", 4096, evens, folder)
    for d in (64, 200, 512):  # the tutorial max_len=5000 cases
        sweep(t, label, "tutorial", 5000, [d], folder)
    sweep(t, label, "tutorial", 65536, [64, 512], folder)
    odds = list(range(5, 67, 2)) + [255, 511, 1023]
    sweep(t, label, "fairseq", 4096, [d for d in evens if d >= 4] + odds, folder)
    sweep(t, label, "fairseq", 65536, [128, 250], folder)
    sweep(t, label, "tutorial", 4096, list(range(2, 35, 2)) + [64, 100, 128, 200, 512], folder, f64=True)
    sweep(t, label, "tutorial", 65536, [64], folder, f64=True)
    sweep(t, label, "fairseq", 4096, [5, 8, 30, 65, 128], folder, f64=True)
    # the other kernel builds this CPU can run, each in a fresh process
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
