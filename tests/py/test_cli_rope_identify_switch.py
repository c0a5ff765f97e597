"""`posenc rope identify`: LongRoPE's short/long switch inside one cache, and DeepSeek's mscale
named as such. Caches are made here in torch 1.13 from vLLM's Phi3LongRoPEScaledRotaryEmbedding
(_compute_inv_freq: 1 / (factors * base ** (arange(0, R, 2) / R)); cos/sin of einsum(t, inv_freq)
times mscale = sqrt(1 + ln(max / L0) / ln L0); long_short_cache = cat(short cache of L0 rows,
long cache from position 0)), and as an engine that switches per position (short factors
below a position, long from it), with the Phi-3-mini-128k factor lists of
tests/fixtures/models/phi3_mini_128k.json. Planted: a switch at 2048 where HF switches at
4096; a long list with one pair changed; YaRN caches with DeepSeek-V3's config
(mscale = mscale_all_dim = 1: magnitude 1) carrying YaRN's default 0.1 ln(40) + 1 instead.

Tolerances: the measured factors are compared with the config's within 1e-4 + the fit's noise
(float32 inv_freq rounding ~1e-7 and a slow pair's phase noise over its rows); measured: within
3.4e-7 on every pair."""
import json
import math
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

from test_cli_rope_identify import hf_tables, inv_freq  # HF's formulas in torch (same folder)

HERE = os.path.dirname(os.path.abspath(__file__))
MODELS = os.path.join(HERE, "..", "fixtures", "models")
R, BASE, L0, MAX = 96, 10000.0, 4096, 16384


def vllm_inv(factors):
    f = torch.tensor(factors, dtype=torch.float32)
    return 1.0 / (f * (BASE ** (torch.arange(0, R, 2, dtype=torch.float) / R)))


def cache(factors, rows, start, mscale):
    t = torch.arange(start, start + rows, dtype=torch.float)
    freqs = torch.einsum("i,j -> ij", t, vllm_inv(factors))
    return torch.cat((freqs.cos() * mscale, freqs.sin() * mscale), -1)


def main():
    t = Checks()
    d = tmpdir()
    cfg_path = os.path.join(MODELS, "phi3_mini_128k.json")
    with open(cfg_path) as f:
        rs = json.load(f)["rope_scaling"]
    short, long_ = rs["short_factor"], rs["long_factor"]
    mscale = math.sqrt(1 + math.log(131072 / L0) / math.log(L0))
    forms = {
        "vLLM long_short_cache": (torch.cat([cache(short, L0, 0, mscale), cache(long_, MAX, 0, mscale)]), L0, 0),
        "per-position switch at 4096": (torch.cat([cache(short, L0, 0, mscale),
                                                   cache(long_, MAX - L0, L0, mscale)]), L0, L0),
        "per-position switch at 2048": (torch.cat([cache(short, 2048, 0, mscale),
                                                   cache(long_, MAX - 2048, 2048, mscale)]), 2048, 2048),
    }
    s32, l32 = np.float32(short).astype(float), np.float32(long_).astype(float)
    paths = {}
    for name, (c, at, long_offset) in forms.items():
        path = os.path.join(d, name.replace(" ", "_") + ".npy")
        np.save(path, c.numpy())
        paths[name] = path
        rc, so, se = run("rope", "identify", path, "--json")
        if not t.check(rc == 0, f"{name}: identified {se.strip()}"):
            continue
        j = json.loads(so)
        t.check(j["layout"] == "vllm" and j["scaling"] == "longrope" and j["switch_position"] == at
                and j["long_offset"] == long_offset and j["original_max_position"] == at and j["base"] == BASE
                and abs(j["magnitude"] - mscale) < 1e-6 and abs(j["long_magnitude"] - mscale) < 1e-6,
                f"{name}: longrope, switch at {j['switch_position']} (want {at}), long rows from position "
                f"{j['long_offset']} (want {long_offset}), base {j['base']:g}, magnitudes {j['magnitude']:.7g} / "
                f"{j['long_magnitude']:.7g} (want {mscale:.7g})")
        es = np.abs(np.array(j["pair_factor"]) / s32 - 1).max()
        el = np.abs(np.array(j["long_pair_factor"]) / l32 - 1).max()
        t.check(es < 1e-6 and el < 1e-6, f"{name}: short and long factor lists within 1e-6 "
                f"(worst {es:.2g} / {el:.2g})")
    # against the Phi-3 config
    rc, so, se = run("rope", "identify", paths["vLLM long_short_cache"], "--config", cfg_path)
    t.check(rc == 0 and "switches from short to long factors at position 4096, the config's original context "
            "(vLLM's long_short_cache" in so and "the short factors are the config's" in so
            and "the long factors are the config's" in so,
            "vLLM's cache against Phi-3's config: the switch at 4096 and both lists named as the config's: "
            + (so.split("against the config")[-1].strip().replace("\n", " | ") if rc == 0 else se))
    rc, so, se = run("rope", "identify", paths["per-position switch at 2048"], "--config", cfg_path)
    t.check(rc == 0 and "switches from short to long factors at 2048 where HF switches at 4096" in so,
            "planted: a switch at 2048 named against HF's 4096: "
            + ([ln for ln in so.splitlines() if "switches" in ln] or [se])[0].strip())
    bad = list(long_)
    bad[40] *= 1.05
    c = torch.cat([cache(short, L0, 0, mscale), cache(bad, MAX - L0, L0, mscale)])
    path = os.path.join(d, "badlong.npy")
    np.save(path, c.numpy())
    rc, so, se = run("rope", "identify", path, "--config", cfg_path)
    t.check(rc == 0 and "the long factors depart from the config's from pair 40 on (by up to 5" in so
            and "the short factors are the config's" in so,
            "planted: long factor 40 x1.05 named: " + ([ln for ln in so.splitlines() if "long factors depart" in ln]
                                                      or [se])[0].strip())
    # one cache without a switch stays as it was (no switch reported)
    inv, att = inv_freq("yarn", 128, 10000.0, 4.0, 4096)
    c, s = hf_tables(inv, att)
    np.save(os.path.join(d, "y_c.npy"), c.numpy())
    np.save(os.path.join(d, "y_s.npy"), s.numpy())
    rc, so, se = run("rope", "identify", os.path.join(d, "y_c.npy"), "--sin", os.path.join(d, "y_s.npy"), "--json")
    j = json.loads(so) if rc == 0 else {}
    t.check(rc == 0 and j["switch_position"] == 0 and j["long_pair_factor"] is None and j["scaling"] == "yarn",
            "a YaRN cache has no switch")

    # DeepSeek-V3: yarn factor 40, mscale = mscale_all_dim = 1 -> magnitude 1 on cos/sin
    ds = os.path.join(MODELS, "deepseek_v3.json")
    inv, att = inv_freq("yarn", 64, 10000.0, 40.0, 4096)
    for label, mag, words in (
            ("YaRN's default attention factor", att,
             "DeepSeek's mscale: the config's mscale 1 / mscale_all_dim 1 give m(40, 1) / m(40, 1) = 1; the cache's "
             "is YaRN's default 0.1 ln(factor) + 1: the config's mscale/mscale_all_dim were ignored"),
            ("the config's magnitude", 1.0, None)):
        c, s = hf_tables(inv, mag)
        cp, sp = os.path.join(d, "ds_c.npy"), os.path.join(d, "ds_s.npy")
        np.save(cp, c.numpy())  # HF's [T, 64]: DeepSeek's qk_rope_head_dim
        np.save(sp, s.numpy())
        rc, so, se = run("rope", "identify", cp, "--sin", sp, "--config", ds)
        if words:
            t.check(rc == 0 and words in so, f"DeepSeek-V3 with {label}: mscale named: "
                    + ([ln for ln in so.splitlines() if "magnitude" in ln and "config" in ln] or [se])[0].strip())
        else:
            t.check(rc == 0 and "DeepSeek's mscale" not in so and "magnitude" not in so.split("against")[-1],
                    f"DeepSeek-V3 with {label}: no magnitude departure")
    return t.finish()


if __name__ == "__main__":
    raise SystemExit(main())
