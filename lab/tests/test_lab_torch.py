#!/usr/bin/env python3
"""The lab model against PyTorch 1.13 (llm.c's test_gpt2, taken further).

For each scheme, lab_torch_dump (C) writes its initial checkpoint, the logits,
loss and every gradient of one batch, and the losses of 10 AdamW steps. This
script parses the safetensors checkpoint itself (torch 1.13 has no safetensors
package), builds the same model in torch in float64, and compares.

Tolerances (C computes in float32, torch here in float64, so torch is the
truth and the C error is float32 rounding through ~20 dependent ops):
  logits     max abs diff <= 1e-5    (|logits| ~ 1; f32 eps 6e-8 x ~20 ops, measured ~1.5e-7)
  loss       abs diff     <= 1e-6    (measured <= 2.3e-7)
  gradients  max abs diff <= 2e-5 x max|grad| of that tensor, per tensor (measured <= 7e-7)
             (relative to the tensor's scale: elementwise relative error is
             meaningless for entries near 0)
  10 steps   every loss within 1e-5 (measured <= 2.5e-7; AdamW g/sqrt(v) amplifies rounding for
             parameters whose gradients are ~0: differences grow step by step)
"""
import json
import math
import os
import struct
import subprocess
import sys
import tempfile

import numpy as np
import torch
import torch.nn.functional as F

torch.set_default_dtype(torch.float64)
DUMP = os.environ.get("LAB_TORCH_DUMP")


def read_safetensors(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    meta = header.pop("__metadata__")
    data = raw[8 + n:]
    out = {}
    for name, t in header.items():
        assert t["dtype"] == "F32"
        b, e = t["data_offsets"]
        out[name] = np.frombuffer(data[b:e], dtype="<f4").reshape(t["shape"]).astype(np.float64)
    return meta, out


def parse_config(text):
    cfg = {}
    for kv in text.split():
        k, v = kv.split("=", 1)
        try:
            cfg[k] = int(v)
        except ValueError:
            try:
                cfg[k] = float(v)
            except ValueError:
                cfg[k] = v
    return cfg


def sinusoid(positions, dim, scale=1.0):
    """interleaved [sin(p w0), cos(p w0), ...], w_k = 10000^(-2k/dim) (Vaswani)"""
    k = torch.arange(dim // 2, dtype=torch.float64)
    w = 10000.0 ** (-2.0 * k / dim)
    ang = positions.to(torch.float64)[..., None] * (w * scale)
    out = torch.zeros(*positions.shape, dim)
    out[..., 0::2] = torch.sin(ang)
    out[..., 1::2] = torch.cos(ang)
    return out


def rope_inv_freq(cfg, rotary, seq_len):
    """Inverse frequencies and attention factor of the config's trained RoPE scaling, written from
    HF transformers' _compute_*_parameters (modeling_rope_utils), not from posenc."""
    base = cfg["rope_base"]
    scaling = cfg.get("rope_scaling", "none")
    f = float(cfg.get("rope_factor", 1))
    L0 = cfg.get("rope_original_context", 0) or cfg["context"]
    k = torch.arange(rotary // 2, dtype=torch.float64)
    if scaling in ("ntk", "dynamic"):
        s = f if scaling == "ntk" else f * max(seq_len, L0) / L0 - (f - 1)
        base = base * s ** (rotary / (rotary - 2))
    inv = base ** (-2.0 * k / rotary)
    if scaling == "linear":
        return inv / f, 1.0
    if scaling == "yarn":
        af = cfg.get("rope_attention_factor", 0) or (0.1 * math.log(f) + 1.0 if f > 1 else 1.0)
        def corr(rot):
            return rotary * math.log(L0 / (rot * 2 * math.pi)) / (2 * math.log(base))
        low = max(math.floor(corr(cfg["rope_beta_fast"])), 0)
        high = min(math.ceil(corr(cfg["rope_beta_slow"])), rotary - 1)
        if low == high:
            high += 0.001
        ramp = torch.clamp((k - low) / (high - low), 0, 1)
        extrap = 1 - ramp
        return (inv / f) * (1 - extrap) + inv * extrap, af
    if scaling == "llama3":
        lo, hi = cfg["rope_low_freq_factor"], cfg["rope_high_freq_factor"]
        wavelen = 2 * math.pi / inv
        out = torch.where(wavelen > L0 / lo, inv / f, inv)
        smooth = (L0 / wavelen - lo) / (hi - lo)
        smoothed = (1 - smooth) * out / f + smooth * out
        medium = ~(wavelen < L0 / hi) & ~(wavelen > L0 / lo)
        return torch.where(medium, smoothed, out), 1.0
    return inv, 1.0


def rope(x, pos, rotary, layout, inv, af=1.0):
    """x [B, H, T, hd]; rotate the first `rotary` channels (HF rotate_half or GPT-J interleaved) by
    the inverse frequencies inv, cos/sin times the attention factor af (HF's YaRN tables)."""
    ang = pos.to(torch.float64)[:, None, :, None] * inv  # [B,1,T,K]
    c, s = torch.cos(ang) * af, torch.sin(ang) * af
    xr, rest = x[..., :rotary], x[..., rotary:]
    if layout == 1:  # half
        a, b = xr[..., :rotary // 2], xr[..., rotary // 2:]
        out = torch.cat([a * c - b * s, b * c + a * s], -1)
    else:
        a, b = xr[..., 0::2], xr[..., 1::2]
        out = torch.stack([a * c - b * s, b * c + a * s], -1).flatten(-2)
    return torch.cat([out, rest], -1)


def t5_bucket(rel, nb, maxd, bidirectional):
    ret = torch.zeros_like(rel)
    if bidirectional:
        nb //= 2
        ret = ret + (rel > 0).long() * nb
        n = rel.abs()
    else:
        n = torch.clamp(-rel, min=0)
    max_exact = nb // 2
    is_small = n < max_exact
    large = max_exact + (torch.log(n.float().clamp(min=1) / max_exact) / math.log(maxd / max_exact)
                         * (nb - max_exact)).long()
    large = torch.clamp(large, max=nb - 1)
    return ret + torch.where(is_small, n, large)


def forward(P, cfg, tokens, targets, positions):
    B, T = tokens.shape
    C, H, L = cfg["d_model"], cfg["heads"], cfg["layers"]
    hd = C // H
    scheme = cfg["scheme"]
    wte = P["wte"]
    tok = wte[tokens]
    if scheme == "sinusoidal" and cfg["token_scale_sqrt_d"]:
        tok = tok * math.sqrt(C)
    if scheme in ("sinusoidal",):
        x = tok + sinusoid(positions, C)
    elif scheme == "learned":
        x = tok + P["wpe"][positions]
    elif scheme == "concat":
        pe_dim = cfg["pe_dim"] or C
        x = torch.cat([tok, sinusoid(positions, pe_dim)], -1) @ P["concat_proj.weight"].T
    elif scheme == "half-concat":
        x = torch.cat([tok, sinusoid(positions, C // 2)], -1)
    elif scheme == "hybrid":
        ld = P["wpe"].shape[1]
        pe = sinusoid(positions, C)
        x = tok + torch.cat([P["wpe"][positions], pe[..., ld:]], -1)
    elif scheme == "freq-scale":
        x = tok + sinusoid(positions, C, P["freq_scale"][0])
    elif scheme == "gru":
        out = gru_apply(P, sinusoid(positions, C), wte[tokens[:, 0]])
        x = tok + out
    else:
        x = tok
    bias = None
    if scheme == "alibi":
        slopes = torch.tensor([2.0 ** (-cfg["alibi_max_bias"] * (h + 1) / H) for h in range(H)])
        rel = (positions[:, None, :] - positions[:, :, None]).to(torch.float64)  # j - i  [B,T,T]
        bias = slopes[None, :, None, None] * rel[:, None]
    elif scheme == "t5":
        rel = positions[:, None, :] - positions[:, :, None]
        bk = t5_bucket(rel, cfg["t5_buckets"], cfg["t5_max_distance"], not cfg["causal"])
        bias = P["t5_bias"][bk].permute(0, 3, 1, 2)  # [B,H,T,T]
    mask = torch.ones(T, T, dtype=torch.bool).tril() if cfg["causal"] else torch.ones(T, T, dtype=torch.bool)
    for l in range(L):
        h = F.layer_norm(x, (C,), P["blocks.ln_1.weight"][l], P["blocks.ln_1.bias"][l], 1e-5)
        qkv = h @ P["blocks.attn.qkv.weight"][l].T + P["blocks.attn.qkv.bias"][l]
        q, k, v = [t.view(B, T, H, hd).transpose(1, 2) for t in qkv.split(C, -1)]
        if scheme == "rope":
            r = cfg["rope_rotary_dim"] or hd
            inv, af = rope_inv_freq(cfg, r, int(positions.max()) + 1)
            q = rope(q, positions, r, cfg["rope_layout"], inv, af)
            k = rope(k, positions, r, cfg["rope_layout"], inv, af)
        s = q @ k.transpose(-1, -2) / math.sqrt(hd)
        if scheme == "shaw":  # Shaw et al.: + q_i . a_K[clip(j-i)] (scaled), outputs + sum_j w_ij a_V[clip(j-i)]
            kc = cfg["shaw_clip"]
            idx = torch.clamp(positions[0][None, :] - positions[0][:, None], -kc, kc) + kc
            ak, av = P["blocks.attn.shaw_k"][l][idx], P["blocks.attn.shaw_v"][l][idx]  # [T,T,hd]
            s = s + torch.einsum("bhid,ijd->bhij", q, ak) / math.sqrt(hd)
        if bias is not None:
            s = s + bias
        s = s.masked_fill(~mask, float("-inf"))
        w = torch.softmax(s, -1)
        y = w @ v
        if scheme == "shaw":
            y = y + torch.einsum("bhij,ijd->bhid", w, av)
        y = y.transpose(1, 2).reshape(B, T, C)
        x = x + y @ P["blocks.attn.proj.weight"][l].T + P["blocks.attn.proj.bias"][l]
        h = F.layer_norm(x, (C,), P["blocks.ln_2.weight"][l], P["blocks.ln_2.bias"][l], 1e-5)
        f = F.gelu(h @ P["blocks.mlp.fc.weight"][l].T + P["blocks.mlp.fc.bias"][l], approximate="tanh")
        x = x + f @ P["blocks.mlp.proj.weight"][l].T + P["blocks.mlp.proj.bias"][l]
    x = F.layer_norm(x, (C,), P["ln_f.weight"], P["ln_f.bias"], 1e-5)
    head = P["lm_head.weight"] if "lm_head.weight" in P else wte
    logits = x @ head.T
    loss = F.cross_entropy(logits.reshape(B * T, -1), targets.reshape(-1), ignore_index=-1)
    return logits, loss


def gru_apply(P, xs, h0):
    """torch.nn.GRU semantics (gates r, z, n; reset after the hidden matmul)."""
    Wih, Whh, bih, bhh = P["gru.weight_ih"], P["gru.weight_hh"], P["gru.bias_ih"], P["gru.bias_hh"]
    h = h0
    outs = []
    for t in range(xs.shape[1]):
        gi = xs[:, t] @ Wih.T + bih
        gh = h @ Whh.T + bhh
        ir, iz, in_ = gi.chunk(3, -1)
        hr, hz, hn = gh.chunk(3, -1)
        r = torch.sigmoid(ir + hr)
        z = torch.sigmoid(iz + hz)
        n = torch.tanh(in_ + r * hn)
        h = (1 - z) * n + z * h
        outs.append(h)
    return torch.stack(outs, 1)


def check(scheme, overrides, results):
    with tempfile.TemporaryDirectory() as d:
        subprocess.run([DUMP, d, scheme] + overrides, check=True)
        meta, tensors = read_safetensors(os.path.join(d, "init.safetensors"))
        cfg = parse_config(meta["config"])
        names = [n for n in tensors if not n.startswith("adam.")]
        P = {n: torch.tensor(tensors[n], requires_grad=True) for n in names}
        toks = np.load(os.path.join(d, "tokens.npy")).astype(np.int64)
        tgts = np.load(os.path.join(d, "targets.npy")).astype(np.int64)
        steps, BT = toks.shape
        T = cfg["context"]
        B = BT // T
        pos = torch.arange(T).repeat(B, 1)
        label = scheme + (" " + " ".join(overrides) if overrides else "")
        ok = True
        logits, loss = forward(P, cfg, torch.tensor(toks[0]).view(B, T), torch.tensor(tgts[0]).view(B, T), pos)
        loss.backward()
        c_logits = np.load(os.path.join(d, "logits.npy"))
        c_losses = np.load(os.path.join(d, "losses.npy"))
        dl = np.abs(c_logits - logits.detach().numpy().reshape(c_logits.shape)).max()
        dloss = abs(float(c_losses[0]) - loss.item())
        worst = (0.0, "")
        for n in names:
            g = np.load(os.path.join(d, "grad.%s.npy" % n))
            tg = P[n].grad.numpy().reshape(-1)
            scale = max(np.abs(tg).max(), 1e-12)
            rel = np.abs(g - tg).max() / scale
            if rel > worst[0]:
                worst = (rel, n)
            if rel > 2e-5:
                print("  FAIL %s grad %s: max abs diff %.3g, tensor scale %.3g, rel %.3g" % (label, n, np.abs(g - tg).max(), scale, rel))
                ok = False
        if dl > 1e-5 or dloss > 1e-6:
            ok = False
        # 10 AdamW steps with the same schedule (warmup 3, cosine, lr 3e-3, clip 1, wd 0.1 on matrices)
        decay = [P[n] for n in names if n in ("wte", "concat_proj.weight", "gru.weight_ih", "gru.weight_hh",
                                               "blocks.attn.qkv.weight", "blocks.attn.proj.weight",
                                               "blocks.mlp.fc.weight", "blocks.mlp.proj.weight", "lm_head.weight")]
        no_decay = [P[n] for n in names if all(P[n] is not q for q in decay)]
        opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1}, {"params": no_decay, "weight_decay": 0.0}],
                                lr=3e-3, betas=(0.9, 0.95), eps=1e-8)
        t_losses = []
        for s in range(steps):
            lr = lr_at(s, steps, 3, 3e-3, 0.1)
            for g in opt.param_groups:
                g["lr"] = lr
            opt.zero_grad()
            _, l = forward(P, cfg, torch.tensor(toks[s]).view(B, T), torch.tensor(tgts[s]).view(B, T), pos)
            l.backward()
            torch.nn.utils.clip_grad_norm_(list(P.values()), 1.0)
            opt.step()
            t_losses.append(l.item())
        dsteps = np.abs(np.array(t_losses) - c_losses).max()
        if dsteps > 1e-5:
            ok = False
        print("%-4s %-32s logits %.2e  loss %.2e  grad worst rel %.2e (%s)  10-step losses %.2e  (%.4f -> %.4f)" %
              ("ok" if ok else "FAIL", label, dl, dloss, worst[0], worst[1], dsteps, c_losses[0], c_losses[-1]))
        results.append(ok)


def lr_at(step, steps, warmup, lr, min_ratio):
    if warmup > 0 and step < warmup:
        return lr * (step + 1) / warmup
    span = steps - warmup
    if span <= 1:
        return lr
    p = min((step - warmup) / (span - 1), 1.0)
    lo = lr * min_ratio
    return lo + 0.5 * (lr - lo) * (1 + math.cos(math.pi * p))


CASES = [
    ("none", []), ("sinusoidal", []), ("sinusoidal", ["token_scale_sqrt_d=1"]), ("learned", []),
    ("concat", ["pe_dim=16"]), ("half-concat", ["tied=0"]), ("rope", ["rope_layout=1"]), ("rope", ["rope_layout=0"]),
    ("rope", ["rope_layout=1", "rope_rotary_dim=4"]), ("alibi", []), ("t5", ["t5_buckets=8", "t5_max_distance=12"]),
    ("gru", []), ("hybrid", []), ("freq-scale", []), ("none", ["tied=0"]), ("shaw", ["shaw_clip=5"]),
    # RoPE scalings trained into the model (a fine-tune at 16 of a model from 8, factor 2; llama3 at
    # original context 64 so that head dim 8 has all three bands)
    ("rope", ["rope_layout=1", "rope_scaling=linear", "rope_factor=2", "rope_original_context=8"]),
    ("rope", ["rope_layout=1", "rope_scaling=yarn", "rope_factor=2", "rope_original_context=8"]),
    ("rope", ["rope_layout=0", "rope_scaling=yarn", "rope_factor=4", "rope_original_context=8", "rope_attention_factor=1.3"]),
    ("rope", ["rope_layout=1", "rope_scaling=ntk", "rope_factor=2", "rope_original_context=8"]),
    ("rope", ["rope_layout=1", "rope_scaling=dynamic", "rope_factor=2", "rope_original_context=8"]),
    ("rope", ["rope_layout=1", "rope_scaling=llama3", "rope_factor=2", "rope_original_context=64"]),
]

if __name__ == "__main__":
    if not DUMP:
        print("LAB_TORCH_DUMP is not set (run through ctest)")
        sys.exit(1)
    results = []
    only = sys.argv[1:]
    for scheme, ov in CASES:
        if only and scheme not in only:
            continue
        check(scheme, ov, results)
    failed = results.count(False)
    print("%d passed, %d failed" % (len(results) - failed, failed))
    sys.exit(1 if failed else 0)
