#!/usr/bin/env python3
"""The lab's default model in PyTorch (float32, CPU), timed per training step
(forward + backward + AdamW), for `posenc bench --only lab` / `posenc lab bench`.
Same architecture as lab/ (pre-LN decoder, tanh GELU, tied output, NoPE), same
batch shape, same data every step. Prints `step_ms <median>`."""
import argparse
import math
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class Block(nn.Module):
    def __init__(self, C, H, Fd):
        super().__init__()
        self.H = H
        self.ln1, self.ln2 = nn.LayerNorm(C), nn.LayerNorm(C)
        self.qkv, self.proj = nn.Linear(C, 3 * C), nn.Linear(C, C)
        self.fc, self.fcp = nn.Linear(C, Fd), nn.Linear(Fd, C)

    def forward(self, x, mask):
        B, T, C = x.shape
        hd = C // self.H
        q, k, v = [t.view(B, T, self.H, hd).transpose(1, 2) for t in self.qkv(self.ln1(x)).split(C, -1)]
        s = (q @ k.transpose(-1, -2)) / math.sqrt(hd)
        s = s.masked_fill(mask, float("-inf"))
        y = (torch.softmax(s, -1) @ v).transpose(1, 2).reshape(B, T, C)
        x = x + self.proj(y)
        return x + self.fcp(F.gelu(self.fc(self.ln2(x)), approximate="tanh"))


class Model(nn.Module):
    def __init__(self, L, C, H, Fd, V=256):
        super().__init__()
        self.wte = nn.Embedding(V, C)
        self.blocks = nn.ModuleList([Block(C, H, Fd) for _ in range(L)])
        self.lnf = nn.LayerNorm(C)

    def forward(self, tok, tgt, mask):
        x = self.wte(tok)
        for b in self.blocks:
            x = b(x, mask)
        logits = self.lnf(x) @ self.wte.weight.T
        return F.cross_entropy(logits.view(-1, logits.shape[-1]), tgt.view(-1))


def main():
    ap = argparse.ArgumentParser()
    for name, default in (("layers", 4), ("d-model", 128), ("heads", 4), ("context", 128), ("batch", 16),
                          ("threads", 1), ("reps", 7)):
        ap.add_argument("--" + name, type=int, default=default)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    m = Model(a.layers, a.d_model, a.heads, 4 * a.d_model)
    opt = torch.optim.AdamW(m.parameters(), lr=1e-4, betas=(0.9, 0.95), eps=1e-8, weight_decay=0.1)
    tok = torch.randint(0, 256, (a.batch, a.context))
    tgt = torch.randint(0, 256, (a.batch, a.context))
    mask = torch.ones(a.context, a.context, dtype=torch.bool).triu(1)
    times, cpu = [], []
    for r in range(a.reps + 1):
        t0, c0 = time.perf_counter(), time.process_time()
        opt.zero_grad()
        loss = m(tok, tgt, mask)
        loss.backward()
        opt.step()
        if r > 0:
            times.append(time.perf_counter() - t0)
            cpu.append(time.process_time() - c0)
    times.sort()
    cpu.sort()
    print("params %d" % sum(p.numel() for p in m.parameters()))
    print("step_ms %.3f" % (1e3 * times[len(times) // 2]))
    print("cpu_ms %.3f" % (1e3 * cpu[len(cpu) // 2]))


if __name__ == "__main__":
    main()
