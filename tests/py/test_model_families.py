#!/usr/bin/env python3
"""Every model family of the config reader against an independent expectation.

tests/fixtures/models/*.json are config.json files with the models' public
values; expected.json was computed once by tests/fixtures/models/reference.py
(written from HF's config classes and modeling_rope_utils.py, mpmath at 50
digits, no posenc code). For each family: inv_freq of `rope freqs --config
--json` (precise mode) in ULPs of the exact value (tolerance 1 ULP: the
precise path computes in long double and rounds once; the worst seen is printed),
the attention factor (1e-15 relative), layout, rotary dim, first rotated
channel, the layer kinds; then `rope apply --config` on a random float32
[T=3, H=2, D] input at start positions 0, 4000 and 100000 against a float64
rotation built from the reference frequencies (tolerance 6e-7 absolute on
values in [-1, 1]: float32 rounding of cos/sin, of the two products and of
the sum, 4 roundings of half a float32 ULP on each of two terms of magnitude
up to 1.25 (attention factor), 2 x 4 x 2^-24 x 1.25 = 6e-7). --torch-compat
against HF's float32 code run in torch 1.13 (the same statements as
modeling_rope_utils.py): ULPs reported; tolerance 0 (bit-identical: torch's
vector blocks and scalar tails are reproduced, docs/rope.md)."""
import json
import os
import sys

import math

import mpmath as mp
import numpy as np
import torch

from common import Checks, run, tmpdir, torch_math_library
torch_math_library(torch)  # torch-compat computes exp/sin/cos as this torch does (MKL VML on x86-64)

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "fixtures", "models")
sys.path.insert(0, MODELS)
import reference  # noqa: E402


def ulps(got, want):
    w = float(want)
    return abs(got - w) / (np.spacing(abs(w)) if w else 5e-324)


def rotate(x, inv, att, layout, offset, positions):
    """float64 reference rotation of x [T, H, D]: channels offset .. offset+2K."""
    y = x.astype(np.float64).copy()
    K = len(inv)
    for t, p in enumerate(positions):
        ang = np.array([float(mp.fmod(p * w, 2 * mp.pi)) for w in inv])
        c, s = np.cos(ang) * att, np.sin(ang) * att
        for h in range(x.shape[1]):
            v = x[t, h].astype(np.float64)
            if layout == "half":
                a, b = v[offset:offset + K], v[offset + K:offset + 2 * K]
                y[t, h, offset:offset + K] = a * c - b * s
                y[t, h, offset + K:offset + 2 * K] = b * c + a * s
            else:
                a, b = v[offset:offset + 2 * K:2], v[offset + 1:offset + 2 * K:2]
                y[t, h, offset:offset + 2 * K:2] = a * c - b * s
                y[t, h, offset + 1:offset + 2 * K:2] = b * c + a * s
    return y


def hf_float32(p):
    """HF's inv_freq for the reference's params p, in torch float32 as modeling_rope_utils does it."""
    dim, base, f = p["dim"], float(p["base"]), p.get("factor")
    exponent = torch.arange(0, dim, 2, dtype=torch.int64).float() / dim
    kind = p["kind"]
    if kind == "longrope":
        return 1.0 / (torch.tensor(p["short"], dtype=torch.float32) * base ** exponent)
    inv = 1.0 / (base ** exponent)
    if kind == "linear":
        inv /= f
    elif kind == "yarn":
        pos = base ** exponent
        extra, inter = 1.0 / pos, 1.0 / (f * pos)

        def corr(r):
            return (dim * math.log(p["orig"] / (r * 2 * math.pi))) / (2 * math.log(base))
        lo, hi = corr(p["beta_fast"]), corr(p["beta_slow"])
        if p["truncate"]:
            lo, hi = math.floor(lo), math.ceil(hi)
        lo, hi = max(lo, 0), min(hi, dim - 1)
        if lo == hi:
            hi += 0.001
        ramp = torch.clamp((torch.arange(dim // 2, dtype=torch.float32) - lo) / (hi - lo), 0, 1)
        e = 1 - ramp
        inv = inter * (1 - e) + extra * e
    elif kind == "llama3":
        low, high, L = p["low"], p["high"], p["orig"]
        wavelen = 2 * math.pi / inv
        llama = torch.where(wavelen > L / low, inv / f, inv)
        smooth = (L / wavelen - low) / (high - low)
        smoothed = (1 - smooth) * llama / f + smooth * llama
        medium = ~(wavelen < L / high) * ~(wavelen > L / low)
        inv = torch.where(medium, smoothed, llama)
    return inv


def check_layers(t, name, path, want):
    """`rope explain --json`: every layer's scheme, and its RoPE base / layout, ALiBi slopes, table, buckets."""
    rc, so, se = run("rope", "explain", "--config", path, "--json")
    j = json.loads(so) if rc == 0 else None
    if not t.check(j is not None and j.get("assumed") is False, f"{name}: rope explain --json exits 0, not assumed "
                                                                 f"{se.strip()[:200]}"):
        return
    schemes = [layer["scheme"] for layer in j["layers"]]
    want_schemes = want.get("layer_schemes", [])
    t.check(schemes == want_schemes and all(layer["index"] == i for i, layer in enumerate(j["layers"])),
            f"{name}: {len(schemes)} layers, schemes {''.join(x[0] for x in schemes)} "
            f"(want {''.join(x[0] for x in want_schemes)})")
    bases = {want.get("base")} | {k["base"] for k in want.get("layer_types", [])}
    rot = [layer for layer in j["layers"] if layer["scheme"] == "rope"]
    t.check(all(layer["base"] in bases and layer["layout"] == want["layout"] for layer in rot),
            f"{name}: RoPE layers use base(s) {sorted({layer['base'] for layer in rot})} with layout "
            f"{sorted({layer['layout'] for layer in rot})} (want {sorted(b for b in bases if b)} {want.get('layout')})")
    if "alibi_slopes" in want:
        got = j["alibi"]["slopes"]
        u = max(ulps(g, w) for g, w in zip(got, want["alibi_slopes"]))
        t.check(len(got) == len(want["alibi_slopes"]) and u <= 1 and
                all(layer["slope"] == got for layer in j["layers"]),
                f"{name}: ALiBi slopes of {len(got)} heads from posenc's ALiBi, max {u:.0f} ULP from Press et al.")
    if "learned_size" in want:
        t.check(all(layer["size"] == want["learned_size"] and layer["offset"] == want["learned_offset"] and
                    layer["tensor"] for layer in j["layers"]),
                f"{name}: learned table {j['layers'][0].get('tensor')}, {want['learned_size']} rows, offset "
                f"{want['learned_offset']}")
    if "num_buckets" in want:
        t.check(all(layer["num_buckets"] == want["num_buckets"] and layer["max_distance"] == want["max_distance"]
                    for layer in j["layers"]) and j["layers"][0]["bidirectional"] and not j["layers"][-1]["bidirectional"],
                f"{name}: T5 buckets {want['num_buckets']}, distance {want['max_distance']}; encoder bidirectional, "
                f"decoder causal")


def main():
    t = Checks()
    d = tmpdir()
    expected = json.load(open(os.path.join(MODELS, "expected.json")))
    expected.update(json.load(open(os.path.join(MODELS, "expected_no_rope.json"))))  # issue 23: no RoPE at all
    t.check(len(expected) >= 25, f"{len(expected)} model fixtures (>= 25 families required)")
    rng = np.random.default_rng(12)
    worst_ulp, worst_apply, torch_ulps = (0, ""), (0, ""), []
    for name in sorted(reference.REFUSED):  # issue 23: an unknown model_type is refused by name, never guessed
        path = os.path.join(MODELS, name + ".json")
        mt = json.load(open(path))["model_type"]
        for cmd in (("rope", "explain"), ("rope", "freqs")):
            rc, so, se = run(*cmd, "--config", path, "--json")
            t.check(rc == 1 and f"'{mt}'" in se and "closest" in se and so == "",
                    f"{name}: {' '.join(cmd)} refuses model_type '{mt}' by name (exit {rc}): {se.strip()[:160]}")
        rc, so, se = run("rope", "explain", "--config", path, "--json", "--assume", "llama")
        j = json.loads(so) if rc == 0 else {}
        t.check(rc == 0 and j.get("assumed") is True and j.get("assumed_family") == "llama" and "assumed" in se,
                f"{name}: --assume llama reads it on purpose and says so (\"assumed\": {j.get('assumed')})")
    for name, want in sorted(expected.items()):
        path = os.path.join(MODELS, name + ".json")
        check_layers(t, name, path, want)
        if want.get("rope") is False:  # no RoPE layer: the one-RoPE commands refuse by scheme
            rc, so, se = run("rope", "freqs", "--config", path, "--json")
            t.check(rc == 1 and "no RoPE layer" in se, f"{name}: rope freqs refuses (no RoPE layer): {se.strip()[:120]}")
            continue
        rc, so, se = run("rope", "freqs", "--config", path, "--json")
        j = json.loads(so) if rc == 0 else None
        if not t.check(j is not None, f"{name}: rope freqs --config exits 0 {se.strip()[:200]}"):
            continue
        u = max(ulps(g, w) for g, w in zip(j["inv_freq"], want["inv_freq"]))
        rel = max(abs(g - float(w)) / float(w) for g, w in zip(j["inv_freq"], want["inv_freq"]))
        if u > worst_ulp[0]:
            worst_ulp = (u, name)
        att_err = abs(j["attention_factor"] - float(want["attention_factor"])) / float(want["attention_factor"])
        t.check(len(j["inv_freq"]) == len(want["inv_freq"]) and u <= 1 and att_err <= 1e-15,
                f"{name} ({want['model_type']}): {len(j['inv_freq'])} inv_freq, max {u:.0f} ULP (rel {rel:.2e}), "
                f"attention {j['attention_factor']:.12g} (rel err {att_err:.1e})")
        same = (j["layout"] == want["layout"] and j["rotary_dim"] == want["rotary_dim"] and
                j["first_rotated_channel"] == want["first_rotated_channel"] and
                j["attention_head_dim"] == want["attention_head_dim"] and j["head_dim"] == want["head_dim"] and
                j.get("softmax_head_dim") == want["softmax_head_dim"] and
                abs(j.get("softmax_scale_factor", 0) - float(want["softmax_scale_factor"])) < 1e-14)
        t.check(same, f"{name}: layout {j['layout']}, rotary {j['rotary_dim']} of head {j['attention_head_dim']} "
                      f"from channel {j['first_rotated_channel']}, softmax 1/sqrt({j.get('softmax_head_dim')}) x "
                      f"{j.get('softmax_scale_factor', 0):.9g}")
        if "layer_types" in want:
            got_types = j.get("layer_types", [])
            ok = len(got_types) == len(want["layer_types"])
            for g, w in zip(got_types, want["layer_types"]):
                ok = ok and g["name"] == w["name"] and g["layers"] == w["layers"] and g["base"] == w["base"] and \
                    g["sliding_window"] == w["sliding_window"] and \
                    max(ulps(a, b) for a, b in zip(g["inv_freq"], w["inv_freq"])) <= 1
            t.check(ok, f"{name}: layer kinds " + ", ".join(f"{g['name']} x{g['layers']} base {g['base']:g}"
                                                             for g in got_types))
        # --torch-compat against HF's float32 code in torch itself
        _, params0 = reference.describe(path)
        rc, so, se = run("rope", "freqs", "--config", path, "--json", "--torch-compat")
        jt = json.loads(so) if rc == 0 else None
        if t.check(jt is not None, f"{name}: rope freqs --torch-compat exits 0 {se.strip()[:200]}"):
            hf = hf_float32(params0).double().numpy()
            got = np.array(jt["inv_freq"])
            u32 = int(np.max(np.abs(got.astype(np.float32).view(np.int32).astype(np.int64) -
                                    hf.astype(np.float32).view(np.int32).astype(np.int64))))
            torch_ulps.append((u32, name))
            t.check(len(got) == len(hf) and u32 == 0,
                    f"{name}: --torch-compat vs HF float32 in torch: max {u32} float32 ULP "
                    f"({int(np.sum(got != hf))} of {len(hf)} differ)")
        if "local" in params0:  # the second RoPE layer kind (Gemma sliding layers), torch-compat too
            rc, so, se = run("rope", "freqs", "--config", path, "--json", "--torch-compat", "--layer-type",
                             "sliding_attention")
            jt = json.loads(so) if rc == 0 else None
            if t.check(jt is not None, f"{name}: sliding_attention --torch-compat exits 0 {se.strip()[:200]}"):
                hf = hf_float32(params0["local"]).double().numpy()
                got = np.array(jt["inv_freq"])
                u32 = int(np.max(np.abs(got.astype(np.float32).view(np.int32).astype(np.int64) -
                                        hf.astype(np.float32).view(np.int32).astype(np.int64))))
                torch_ulps.append((u32, name + " sliding"))
                t.check(len(got) == len(hf) and u32 == 0,
                        f"{name}: sliding_attention --torch-compat vs HF float32 in torch: max {u32} float32 ULP")
        # rope apply --config against the reference rotation
        _, _, c = reference.load(path)
        desc, params = reference.describe(path)
        D = want["attention_head_dim"]
        x = rng.uniform(-1, 1, size=(3, 2, D)).astype(np.float32)
        xin, xout = os.path.join(d, "x.npy"), os.path.join(d, "y.npy")
        np.save(xin, x)
        for start in (0, 4000, 100000):
            rc, _, se = run("rope", "apply", "--config", path, "--in", xin, "--start", start, "-o", xout)
            if not t.check(rc == 0, f"{name}: rope apply --start {start} exits 0 {se.strip()[:200]}"):
                continue
            inv, att = reference.frequencies(params, start + 3)  # HF: seq_len = max(position) + 1
            ref = rotate(x, inv, float(att), want["layout"], want["first_rotated_channel"], range(start, start + 3))
            diff = float(np.max(np.abs(np.load(xout).astype(np.float64) - ref)))
            if diff > worst_apply[0]:
                worst_apply = (diff, f"{name} at {start}")
            t.check(diff <= 6e-7, f"{name}: apply at {start}: max |posenc - reference| = {diff:.2e}")
    print(f"worst inv_freq error: {worst_ulp[0]:.0f} ULP ({worst_ulp[1]}); worst apply difference: "
          f"{worst_apply[0]:.2e} ({worst_apply[1]}); torch-compat bit-identical to HF in torch for "
          f"{sum(u == 0 for u, _ in torch_ulps)} of {len(torch_ulps)} configs, worst {max(torch_ulps)[0]} ULP "
          f"({max(torch_ulps)[1]})")
    t.finish()


if __name__ == "__main__":
    main()
