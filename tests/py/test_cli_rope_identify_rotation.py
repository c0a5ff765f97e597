"""`posenc rope identify --input X --rotated Y`: the cache behind a rotated q, recovered from
the rotation (least squares over heads) and identified. x is random, y = R(x) is made by HF's
apply_rotary_pos_emb (q * cos + rotate_half(q) * sin) and GPT-J / DeepSeek's interleaved
rotation, written here in torch 1.13 from HF's formulas (test_cli_rope_identify.py's
inv_freq); partial rotary heads (Phi's first 32 of 80, DeepSeek's last 64 of 192) must come
back with the rotated run and its pairing; then bad inputs are refused by name.

Tolerances: the cos/sin recovered from a float32 rotation are not the engine's float32 values
bit for bit (y's rounding moves them by about one ULP), so the arithmetic is named by the
residual: HF's float32 table within 4 ULP of the recovered one, the exact and ggml tables
hundreds of ULP off (measured: 2 ULP against 2442 / 2049)."""
import json
import os
import sys

import numpy as np

from common import Checks, run, tmpdir, torch_math_library

try:
    import torch
except ImportError:  # Debian's python3-torch is part of the test environment
    print("SKIP: torch not importable")
    sys.exit(77)
torch_math_library(torch)  # torch-compat computes exp/sin/cos as this torch does (MKL VML on x86-64)

from test_cli_rope_identify import inv_freq  # HF's ROPE_INIT_FUNCTIONS in torch (same folder)

T = 2048


def rotate_half(v):
    a, b = v.chunk(2, -1)
    return torch.cat((-b, a), -1)


def hf_rotate(x, inv, att, first, R):
    """HF: cos/sin = emb.cos() * att in float32; q * cos + rotate_half(q) * sin on channels
    [first, first + R); x is [T, H, D] (or [T, D])."""
    pos = torch.arange(T, dtype=torch.int64).float()
    freqs = torch.outer(pos, inv.float())
    emb = torch.cat((freqs, freqs), -1)
    cos, sin = emb.cos() * att, emb.sin() * att
    if x.dim() == 3:
        cos, sin = cos[:, None, :], sin[:, None, :]
    y = x.clone()
    q = x[..., first:first + R]
    y[..., first:first + R] = q * cos + rotate_half(q) * sin
    return y


def interleaved_rotate(x, inv, att, first, R):
    """GPT-J / DeepSeek (interleaved pairs (2j, 2j + 1)) on channels [first, first + R)."""
    pos = torch.arange(T, dtype=torch.int64).float()
    freqs = torch.outer(pos, inv.float())
    c, s = freqs.cos() * att, freqs.sin() * att
    if x.dim() == 3:
        c, s = c[:, None, :], s[:, None, :]
    y = x.clone()
    a, b = x[..., first:first + R:2], x[..., first + 1:first + R:2]
    y[..., first:first + R:2] = a * c - b * s
    y[..., first + 1:first + R:2] = b * c + a * s
    return y


def save(d, name, a):
    path = os.path.join(d, name + ".npy")
    np.save(path, a.numpy() if isinstance(a, torch.Tensor) else a)
    return path


def main():
    t = Checks()
    d = tmpdir()
    torch.manual_seed(24)
    cases = [  # (name, heads, D, first, R, pairing, kind, base, factor, L0)
        ("llama2 full head, 4 heads", 4, 128, 0, 128, "half", "none", 10000.0, 1.0, 4096),
        ("llama3.1 bands, 2 heads", 2, 128, 0, 128, "half", "llama3", 500000.0, 8.0, 8192),
        ("qwen2.5 yarn, [T, D] one head", 0, 128, 0, 128, "half", "yarn", 1000000.0, 4.0, 32768),
        ("phi-2 partial: first 32 of 80", 4, 80, 0, 32, "half", "none", 10000.0, 1.0, 2048),
        ("deepseek-like: last 64 of 192 interleaved", 2, 192, 128, 64, "interleaved", "yarn", 10000.0, 40.0, 4096),
        ("gpt-j interleaved, first 64 of 256", 2, 256, 0, 64, "interleaved", "linear", 10000.0, 2.0, 2048),
    ]
    for name, H, D, first, R, pairing, kind, base, factor, L0 in cases:
        inv, att = inv_freq(kind, R, base, factor, L0)
        x = torch.randn(T, H, D) if H else torch.randn(T, D)
        y = (hf_rotate if pairing == "half" else interleaved_rotate)(x, inv, att, first, R)
        xp, yp = save(d, "x_" + str(len(name)), x), save(d, "y_" + str(len(name)), y)
        rc, so, se = run("rope", "identify", "--input", xp, "--rotated", yp, "--json")
        if not t.check(rc == 0, f"{name}: identified ({se.strip()})"):
            continue
        j = json.loads(so)
        r, i = j["rotation"], j["identity"]
        t.check(r["rotary_offset"] == first and r["rotary_dim"] == R and r["layout"] == pairing
                and r["head_dim"] == D and r["passthrough"] == D - R,
                f"{name}: channels {r['rotary_offset']}..{r['rotary_offset'] + r['rotary_dim'] - 1} "
                f"{r['layout']} pairs of a {r['head_dim']}-channel head")
        t.check(i["scaling"] == kind and abs(i["base"] - base) <= 1e-6 * base and i["offset"] == 0
                and (kind == "none" or i["factor"] == factor)
                and (kind not in ("yarn", "llama3") or i["original_max_position"] == L0)
                and abs(i["magnitude"] - att) <= 1e-6 * att,
                f"{name}: {i['scaling']} base {i['base']:g} factor {i['factor']:g} L0 {i['original_max_position']} "
                f"magnitude {i['magnitude']:.7g} (made: {kind} {base:g} {factor:g} {L0} {att:.7g})")
        res = i["residual"]
        t.check(i["arithmetic"] == "hf-f32" and res["hf-f32"]["max_ulp"] <= 4
                and res["exact"]["max_ulp"] > 100 and res["ggml-f32"]["max_ulp"] > 100,
                f"{name}: HF float32 within 4 ULP, the others > 100: " + json.dumps(res))

    # against a config: Phi-2 (partial_rotary_factor 0.4 of head 80, half pairs)
    phi = {"model_type": "phi", "hidden_size": 2560, "num_attention_heads": 32, "partial_rotary_factor": 0.4,
           "max_position_embeddings": 2048, "rope_theta": 10000.0}
    cfg = os.path.join(d, "phi.json")
    with open(cfg, "w") as f:
        json.dump(phi, f)
    inv, att = inv_freq("none", 32, 10000.0)
    x = torch.randn(T, 4, 80)
    xp, yp = save(d, "phi_x", x), save(d, "phi_y", hf_rotate(x, inv, att, 0, 32))
    rc, so, se = run("rope", "identify", "--input", xp, "--rotated", yp, "--config", cfg)
    t.check(rc == 0 and "placement: channels 0..31 rotate, as the config says" in so
            and "frequencies and magnitude agree with the config" in so,
            "phi-2 rotation against its config: placement and frequencies agree: "
            + (so.strip().splitlines()[-1] if rc == 0 else se))
    yi = interleaved_rotate(x, inv, att, 0, 32)
    ypi = save(d, "phi_yi", yi)
    rc, so, se = run("rope", "identify", "--input", xp, "--rotated", ypi, "--config", cfg)
    t.check(rc == 0 and "placement: interleaved pairs where the config's phi family rotates half pairs" in so,
            "interleaved rotation against phi's half layout named: "
            + ([ln for ln in so.splitlines() if "placement" in ln] or [se])[0])

    # bad input, refused by name (exit 2, nothing on stdout)
    def refused(label, args, words):
        rc, so, se = run("rope", "identify", *args)
        t.check(rc == 2 and so == "" and all(w in se for w in words), f"[P23] {label}: {se.strip()}")

    x = torch.randn(64, 2, 16)
    inv, att = inv_freq("none", 16, 10000.0)
    pos = torch.arange(64).float()
    fr = torch.outer(pos, inv)
    emb = torch.cat((fr, fr), -1)
    y = x * emb.cos()[:, None] + rotate_half(x) * emb.sin()[:, None]
    xp, yp = save(d, "bx", x), save(d, "by", y)
    refused("x and y of other shapes", ("--input", xp, "--rotated", save(d, "by_short", y[:32])),
            ["the rotated tensor is [32, 2, 16]", "but the input is [64, 2, 16]"])
    xn = x.clone()
    xn[5, 1, 3] = float("nan")
    refused("NaN in x", ("--input", save(d, "bxn", xn), "--rotated", yp), ["input value at [5, 1, 3] is nan"])
    yn = y.clone()
    yn[7, 0, 9] = float("inf")
    refused("inf in y", ("--input", xp, "--rotated", save(d, "byn", yn)), ["rotated value at [7, 0, 9] is inf"])
    refused("a scaling, not a rotation", ("--input", xp, "--rotated", save(d, "bys", x * torch.linspace(0.55, 2.05, 16))),
            ["y is no rotation of x", "neither pairing"])
    y2 = y.clone()
    y2[:, 1] = x[:, 1] * emb.cos() * 0 + (x[:, 1] * torch.roll(emb.cos(), 3, 0) + rotate_half(x[:, 1]) *
                                           torch.roll(emb.sin(), 3, 0))
    refused("heads rotated by different positions", ("--input", xp, "--rotated", save(d, "byh", y2)),
            ["the heads disagree on the rotation of pair"])
    refused("nothing rotated", ("--input", xp, "--rotated", xp), ["equals the input in every channel"])
    yg = y.clone()
    yg[..., 6] = x[..., 6]
    yg[..., 6 + 8] = x[..., 6 + 8]
    refused("a pass-through channel inside the rotated run", ("--input", xp, "--rotated", save(d, "byg", yg)),
            ["channel 6 passes through unchanged between rotated channels 0 and 15"])
    refused("--input alone", ("--input", xp), ["--input needs --rotated"])
    refused("--rotated with a cache file", ("c.npy", "--input", xp, "--rotated", yp), ["give no CACHE.npy"])
    refused("a 1-D input", ("--input", save(d, "b1", np.ones(8, np.float32)), "--rotated",
                            save(d, "b1y", np.ones(8, np.float32))), ["input must be [positions, channels]"])
    return t.finish()


if __name__ == "__main__":
    raise SystemExit(main())
