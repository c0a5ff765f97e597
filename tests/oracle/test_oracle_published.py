#!/usr/bin/python3
"""Published configs at their real sizes: transformers' own rotary embedding against posenc, bit for bit.

The framework oracle (test_oracle_hf.py) runs tiny models over 24 positions. Here every committed published
config.json (tests/fixtures/models/, provenance in PROVENANCE.md) whose model type transformers 5.18 knows and
posenc reads with RoPE builds the model's OWN rotary class from the real config (real head size, base, scaling,
trained and maximum context; the rotary class alone: no weights are needed for positions), and runs it over
real positions: every position up to 2048, then a stride through max_position_embeddings, its last position,
and, where the scaling depends on the sequence (dynamic NTK, LongRoPE), a second run that stays inside the
trained context. `posenc rope apply --config FILE --torch-compat --positions P` on a unit input must give the
same cos/sin bit for bit (tolerance 0: torch-compat reproduces HF's float32 arithmetic, one thread).
Configs posenc refuses, or that transformers cannot build, are listed with the reason, never silently dropped;
the test fails when fewer than MIN_CHECKED configs were compared (so a reader change that refuses them all
cannot pass). Needs the test environment (POSENC_PYTHON: torch 2.13, transformers 5.18)."""
import importlib
import inspect
import json
import os
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
from common import Checks, run, tmpdir, torch_math_library, torch_peer_label  # noqa: E402

FIXTURES = os.path.join(HERE, "..", "fixtures", "models")
MIN_CHECKED = 20
# Where transformers 5.18 reads a published file differently from the runtime its checkpoint was made for, posenc
# follows that runtime and warns (POSENC_CONFIG_WARN_TRANSFORMERS_DIVERGES): the test requires the warning, that
# transformers 5.18 still differs (so the entry goes when transformers is fixed), and posenc bit for bit against
# transformers' own rotary class given what the model means (the edit below, applied to the built config).
DIVERGES = {
    # DbrxConfig (5.18) drops attn_config.rope_theta and rotates with its default 10000; 4.x's DbrxAttention read it
    "dbrx_instruct.json": ("DbrxConfig drops it", lambda cfg, raw: cfg.rope_parameters.__setitem__(
        "rope_theta", raw["attn_config"]["rope_theta"])),
    # PhimoeRotaryEmbedding (5.18) calls the longrope init without seq_len (short_factor at every length); 4.x
    # passed the sequence length, so past original_max_position_embeddings the long factors rotate
    "phi3_5_moe.json": ("keeps short_factor", None),
}
DENSE = 2048        # every position below this
STRIDE = 997        # then every 997th (a prime: no alignment with powers of two) up to max_position_embeddings


def positions_upto(end):
    end = max(int(end), 1)
    p = np.unique(np.concatenate([np.arange(min(DENSE, end)), np.arange(0, end, STRIDE), [end - 1]]))
    return p.astype(np.int64)


def rotary_class(cfg):
    """The model's own rotary embedding class (its modeling module's *RotaryEmbedding built from the config)."""
    modeling = importlib.import_module(type(cfg).__module__.replace(".configuration_", ".modeling_"))
    found = [c for n, c in vars(modeling).items() if isinstance(c, type) and n.endswith("RotaryEmbedding")
             and c.__module__ == modeling.__name__ and "config" in inspect.signature(c.__init__).parameters]
    if len(found) > 1:  # a text and a vision rotary class (Qwen2-VL): the text model's
        found = [c for c in found if "Vision" not in c.__name__ and "Audio" not in c.__name__]
    return found[0] if len(found) == 1 else None


def hf_cos_sin(cls, cfg, positions, layer_type):
    import torch
    rotary = cls(cfg)
    x = torch.zeros(1, len(positions), 1, dtype=torch.float32)
    kw = {"layer_type": layer_type} if layer_type and "layer_type" in inspect.signature(rotary.forward).parameters else {}
    ids = torch.from_numpy(positions)[None]
    if (getattr(cfg, "rope_parameters", None) or {}).get("mrope_section"):
        ids = ids[None].expand(3, 1, -1)  # M-RoPE: text tokens have the same id on every axis
    with torch.no_grad():
        out = rotary(x, ids, **kw)
    if torch.is_tensor(out) and out.is_complex():  # freqs_cis = polar(1, angle), one per pair (DeepSeek-V2)
        return out[0].real.numpy(), out[0].imag.numpy()
    cos, sin = out
    return cos[0].numpy(), sin[0].numpy()


def posenc_cos_sin(path, layer, kind, kinds, positions, d):
    """cos | sin of each rotated pair, from rotating a unit input: channels offset .. offset + R - 1."""
    r, head, offset, layout = layer["rotary_dim"], layer["head_dim"], layer.get("rotary_offset", 0), layer["layout"]
    x = np.zeros((len(positions), head), dtype=np.float32)
    if layout == "half":
        x[:, offset: offset + r // 2] = 1
    else:
        x[:, offset: offset + r: 2] = 1
    xin, pin, yout = (os.path.join(d, n) for n in ("unit.npy", "positions.npy", "out.npy"))
    np.save(xin, x)
    np.save(pin, positions)
    pick = ["--layer-type", kind] if kinds > 1 else []
    rc, _, err = run("rope", "apply", "--config", path, *pick, "--in", xin, "--positions", pin, "--torch-compat",
                     "-o", yout)
    if rc != 0:
        return None, err.strip()
    y = np.load(yout)[:, offset: offset + r]
    return ((y[:, : r // 2], y[:, r // 2:]) if layout == "half" else (y[:, 0::2], y[:, 1::2])), ""


def ulps(a, b):
    def key(x):
        i = np.ascontiguousarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return int(np.abs(key(a) - key(b)).max())


def check_config(t, name, path, d):
    """Returns True when compared, or a reason string when not."""
    from transformers import AutoConfig
    from transformers.models.auto.configuration_auto import CONFIG_MAPPING
    raw = json.load(open(path))
    mt = raw.get("model_type")
    if mt not in CONFIG_MAPPING:
        return f"model_type {mt!r} is not in transformers 5.18 (remote code)"
    rc, so, se = run("rope", "explain", "--config", path, "--json")
    if rc != 0:
        return f"posenc refuses it: {se.strip()[:140]}"
    j = json.loads(so)
    rope_layers = [x for x in j["layers"] if x["scheme"] == "rope"]
    if not rope_layers:
        return "no RoPE layer"
    try:
        cfg = AutoConfig.for_model(mt, **{k: v for k, v in raw.items() if k != "model_type"})
    except Exception as e:
        return f"transformers cannot build the config: {type(e).__name__}: {str(e)[:100]}"
    text = getattr(cfg, "text_config", None) or cfg  # a composite's text model holds the rotary class
    cls = rotary_class(text)
    if cls is None:
        return "no single rotary class in its modeling file"
    if name in DIVERGES:
        words, edit = DIVERGES[name]
        t.check(any(words in w for w in j["warnings"]), f"{name}: posenc warns that transformers 5.18 reads it "
                f"differently ('{words}'): {j['warnings']}")
        if edit:
            edit(text, raw)
    maxpos = int(getattr(text, "max_position_embeddings", 0) or 4096)
    runs = [("to max_position_embeddings", positions_upto(maxpos))]
    scaling = {r.get("scaling") for r in j["ropes"]}
    if scaling & {"dynamic", "longrope"}:  # cos/sin depend on the longest position: also inside the trained context
        original = min(int(r.get("original_max_position") or maxpos) for r in j["ropes"])
        runs.append(("inside the trained context", positions_upto(min(original, maxpos))))
    kinds = len(j["ropes"])
    done = set()
    for i, layer in enumerate(j["layers"]):
        if layer["scheme"] != "rope" or layer["rope"] in done:
            continue
        done.add(layer["rope"])
        rope = j["ropes"][layer["rope"]]
        layer_type = (getattr(text, "layer_types", None) or [None] * (i + 1))[i] if kinds > 1 else None
        for what, pos in runs:
            label = f"{name} ({mt}, {rope['name']}, R={layer['rotary_dim']}, {len(pos)} positions {what} {pos[-1]})"
            try:
                hc, hs = hf_cos_sin(cls, text, pos, layer_type)
            except Exception as e:
                t.check(False, f"{label}: transformers' {cls.__name__} raised {type(e).__name__}: {str(e)[:100]}")
                continue
            r = layer["rotary_dim"]
            complex_pairs = hc.shape[-1] == r // 2  # freqs_cis: one column per pair already
            if complex_pairs:
                hc, hs = np.concatenate([hc, hc], 1), np.concatenate([hs, hs], 1)
            if hc.shape[-1] != r:
                t.check(False, f"{label}: transformers gives {hc.shape[-1]} cos columns, posenc rotates {r}")
                continue
            # one angle per pair, as the rotary class lays it out: [freqs | freqs] (every HF class, also for
            # interleaved runtimes such as GLM's, whose apply repeats each one) or each twice in a row
            if np.array_equal(hc[:, : r // 2], hc[:, r // 2:]) and np.array_equal(hs[:, : r // 2], hs[:, r // 2:]):
                hc, hs = hc[:, : r // 2], hs[:, : r // 2]
            elif np.array_equal(hc[:, 0::2], hc[:, 1::2]) and np.array_equal(hs[:, 0::2], hs[:, 1::2]):
                hc, hs = hc[:, 0::2], hs[:, 0::2]
            else:
                t.check(False, f"{label}: transformers' cos is neither [freqs | freqs] nor each angle twice")
                continue
            pc, why = posenc_cos_sin(path, layer, rope["name"], kinds, pos, d)
            if pc is None:
                t.check(False, f"{label}: posenc rope apply failed: {why[:160]}")
                continue
            differ = int((pc[0].view(np.uint32) != hc.view(np.uint32)).sum()
                         + (pc[1].view(np.uint32) != hs.view(np.uint32)).sum())
            worst = max(ulps(pc[0], hc), ulps(pc[1], hs))
            if name in DIVERGES and not DIVERGES[name][1] and what == "to max_position_embeddings":
                # no edit makes 5.18 mean the model: past the trained context it must still differ
                t.check(differ > 0, f"{label}: transformers 5.18 still differs from the model's runtime ({differ} of "
                                    f"{2 * hc.size} differ; none would mean transformers was fixed: drop the "
                                    f"DIVERGES entry)")
                continue
            if complex_pairs:  # torch.polar's cos/sin are double-precision values rounded: within 1 ulp
                t.check(worst <= 1, f"{label}: cos/sin within 1 ulp of torch.polar's ({differ} of {2 * hc.size} "
                                    f"differ, at most {worst} ulp)")
                continue
            t.check(differ == 0, f"{label}: cos/sin bit for bit ({differ} of {2 * hc.size} differ, "
                                 f"at most {worst} ulp)")
    return True


def main():
    d = tmpdir()
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(d, "torchinductor")
    import torch
    torch_math_library(torch)
    torch_peer_label(torch)
    from transformers.utils import logging
    logging.set_verbosity_error()
    t = Checks()
    compared, skipped = [], []
    for name in sorted(os.listdir(FIXTURES)):
        if not name.endswith(".json") or name.startswith("expected"):
            continue
        why = check_config(t, name, os.path.join(FIXTURES, name), d)
        (compared if why is True else skipped).append(name if why is True else f"{name}: {why}")
    print(f"compared {len(compared)} published configs at real sizes; not compared ({len(skipped)}):")
    for s in skipped:
        print("   ", s)
    t.check(len(compared) >= MIN_CHECKED, f"{len(compared)} published configs compared (at least {MIN_CHECKED})")
    t.finish()


if __name__ == "__main__":
    main()
