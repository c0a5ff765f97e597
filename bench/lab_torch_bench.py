#!/usr/bin/env python3
"""The lab's model in PyTorch (float32, CPU), timed per training step (forward +
backward + AdamW), for `posenc bench --only lab` / `posenc lab bench` (issue 43:
torch 2.13, eager and torch.compile, over thread settings).

Same architecture as lab/ (pre-LN decoder, tanh GELU, tied output, NoPE), same
batch shape, same data every step, same AdamW settings. Torch gets its fastest
CPU forms of the same arithmetic: attention through
F.scaled_dot_product_attention(is_causal=True) (no [T, T] mask materialised),
AdamW fused (one kernel over all parameters) where this torch has it.

For each mode in --modes (eager, compile) and each thread count in --threads
(torch.set_num_threads), prints one line
    result MODE THREADS step_ms cpu_ms compile_s
(median of --reps steps after warm-up; compile_s: the first compiled step, not
timed). torch.compile compiles the model's forward (and, through AOTAutograd,
its backward) with inductor; the optimizer step runs fused. Compiled code is
made again for each thread count (inductor's C++ kernels are generated for the
thread count of the moment). Inductor's cache goes to a folder removed at exit.
"""
import argparse
import math
import os
import shutil
import tempfile
import time

# Everything inductor writes (its cache, and the precompiled headers it puts under the temporary
# folder whatever TORCHINDUCTOR_CACHE_DIR says) goes to a folder of this run, removed at the end.
_CACHE = tempfile.mkdtemp(prefix="posenc-lab-torch-")
os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", _CACHE)
os.environ["TMPDIR"] = tempfile.tempdir = _CACHE

import torch  # noqa: E402
import torch.nn as nn  # noqa: E402
import torch.nn.functional as F  # noqa: E402


class Block(nn.Module):
    def __init__(self, C, H, Fd):
        super().__init__()
        self.H = H
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.fc, self.fcp = nn.Linear(C, Fd), nn.Linear(Fd, C)

    def forward(self, x):
        B, T, C = x.shape
        hd = C // self.H
        q, k, v = [t.view(B, T, self.H, hd).transpose(1, 2) for t in self.qkv(self.ln1(x)).split(C, -1)]
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True, scale=1.0 / math.sqrt(hd))
        x = x + self.proj(y.transpose(1, 2).reshape(B, T, C))
        return x + self.fcp(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self, L, C, H, Fd, V=256):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.blocks = nn.ModuleList([Block(C, H, Fd) for _ in range(L)])
        self.lnf = nn.LayerNorm(C)

    def forward(self, tok, tgt):
        x = self.wte(tok)
        for b in self.blocks:
            x = b(x)
        logits = self.lnf(x) @ self.wte.weight.T
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), tgt.view(-1))


def make_optimizer(params):
    kw = dict(lr=1e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    try:
        return torch.optim.AdamW(params, fused=True, **kw), "fused"
    except (RuntimeError, TypeError):
        return torch.optim.AdamW(params, **kw), "foreach"


def run(a, mode, threads):
    torch.set_num_threads(threads)
    torch._dynamo.reset()
    torch.manual_seed(0)
    m = Model(a.layers, a.d_model, a.heads, 4 * a.d_model)
    opt, kind = make_optimizer(m.parameters())
    tok = torch.randint(0, 256, (a.batch, a.context))
    tgt = torch.randint(0, 256, (a.batch, a.context))
    fwd = torch.compile(m) if mode == "compile" else m

    def step():
        opt.zero_grad(set_to_none=True)
        loss = fwd(tok, tgt)
        loss.backward()
        opt.step()
    t0 = time.perf_counter()
    step()  # compiles (compile mode) or warms up
    compile_s = time.perf_counter() - t0
    step()
    times, cpu = [], []
    for _ in range(a.reps):
        t0, c0 = time.perf_counter(), time.process_time()
        step()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    times.sort()
    cpu.sort()
    return (sum(p.numel() for p in m.parameters()), kind, 1e3 * times[len(times) // 2], 1e3 * cpu[len(cpu) // 2],
            compile_s, 1e3 * times[0])


def main():
    ap = argparse.ArgumentParser()
    for name, default in (("layers", 4), ("d-model", 128), ("heads", 4), ("context", 128), ("batch", 16),
                          ("reps", 7)):
        ap.add_argument("--" + name, type=int, default=default)
    ap.add_argument("--threads", default="1", help="comma list of torch thread counts")
    ap.add_argument("--modes", default="eager,compile")
    a = ap.parse_args()
    print("torch %s, %s" % (torch.__version__, torch.__config__.parallel_info().splitlines()[-1].strip()))
    try:
        for mode in a.modes.split(","):
            for th in (int(t) for t in a.threads.split(",")):
                params, kind, ms, cpu_ms, compile_s, best = run(a, mode, th)
                print("params %d optimizer %s" % (params, kind))
                print("result %s %d %.3f %.3f %.1f %.3f" % (mode, th, ms, cpu_ms, compile_s, best), flush=True)
    finally:
        shutil.rmtree(_CACHE, ignore_errors=True)


if __name__ == "__main__":
    main()
