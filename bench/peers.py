"""Peer timings for `posenc bench` (run by it with the test environment's python (.venv/bin/python, scripts/venv)).

usage: peers.py WORKLOAD THREADS REPS
Prints one line "median_ms X min_ms Y reps N", or "skip REASON" (exit 0) when the
peer library is not installed. The workloads mirror posenc bench's:
  sin_numpy_f64   first source article's get_positional_encoding (float64), then
                  .astype(float32) so the result is the same f32 table
  sin_numpy_f32   the same formula with float32 arrays and scalars
  sin_torch       the PyTorch tutorial PositionalEncoding(1024, dropout=0,
                  max_len=8192) constructor (the table build)
  rope_torch_hf_{f32,bf16}      HF Llama: q*cos + rotate_half(q)*sin, q [1,32,4096,128],
                                cos/sin cached [1,1,4096,128]
  rope_torch_thd_{f32,bf16}     same on q [4096,32,128] with cos/sin [4096,1,128]
  rope_decode_torch_hf_{f32,bf16}_B   one decoding step of HF Llama for B sequences
                  of one token each: LlamaRotaryEmbedding.forward (inv_freq @ position
                  ids, cat, cos/sin, cast) + apply_rotary_pos_emb on q [B,32,1,128];
                  reported per step (each timed call runs 200 steps)
  alibi_torch     HF-style ALiBi: slopes[:,None,None] * (j - i), [32,2048,2048] f32
  t5_torch        HF T5 compute_bias: bucket (bidirectional, 32 buckets, max 128)
                  + embedding lookup -> [32,2048,2048] f32
One warm-up call, then REPS timed calls; the median is reported."""
import math
import sys
import time


def timed(fn, reps):
    fn()
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    times.sort()
    return times[len(times) // 2], times[0]


def numpy_table(dtype):
    import numpy as np

    max_len, d_model = 8192, 1024
    if dtype == "f64":
        def build():
            position = np.arange(max_len)[:, np.newaxis]
            div_term = np.exp(np.arange(0, d_model, 2) * -(np.log(10000.0) / d_model))
            pe = np.zeros((max_len, d_model))
            pe[:, 0::2] = np.sin(position * div_term)
            pe[:, 1::2] = np.cos(position * div_term)
            return pe.astype(np.float32)
    else:
        def build():
            position = np.arange(max_len, dtype=np.float32)[:, np.newaxis]
            div_term = np.exp(np.arange(0, d_model, 2, dtype=np.float32) *
                              np.float32(-(np.log(10000.0) / d_model)))
            pe = np.zeros((max_len, d_model), dtype=np.float32)
            pe[:, 0::2] = np.sin(position * div_term)
            pe[:, 1::2] = np.cos(position * div_term)
            return pe
    return build


def torch_setup(threads):
    import torch

    torch.set_num_threads(threads)
    return torch


def torch_table(threads):
    torch = torch_setup(threads)
    from torch import nn

    class PositionalEncoding(nn.Module):  # PyTorch tutorial, verbatim
        def __init__(self, d_model, dropout=0.1, max_len=5000):
            super().__init__()
            self.dropout = nn.Dropout(p=dropout)
            position = torch.arange(max_len).unsqueeze(1)
            div_term = torch.exp(torch.arange(0, d_model, 2) * (-math.log(10000.0) / d_model))
            pe = torch.zeros(max_len, 1, d_model)
            pe[:, 0, 0::2] = torch.sin(position * div_term)
            pe[:, 0, 1::2] = torch.cos(position * div_term)
            self.register_buffer('pe', pe)

    return lambda: PositionalEncoding(1024, dropout=0.0, max_len=8192)


def torch_rope(threads, dtype, layout):
    torch = torch_setup(threads)
    dt = torch.float32 if dtype == "f32" else torch.bfloat16
    T, H, D = 4096, 32, 128
    inv_freq = 1.0 / (10000 ** (torch.arange(0, D, 2).float() / D))
    freqs = torch.outer(torch.arange(T).float(), inv_freq)
    emb = torch.cat((freqs, freqs), dim=-1)
    if layout == "hf":
        q = torch.randn(1, H, T, D).to(dt)
        cos, sin = emb.cos()[None, None].to(dt), emb.sin()[None, None].to(dt)
    else:
        q = torch.randn(T, H, D).to(dt)
        cos, sin = emb.cos()[:, None].to(dt), emb.sin()[:, None].to(dt)

    def rotate_half(x):  # transformers.models.llama.modeling_llama.rotate_half
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def apply():
        with torch.no_grad():
            return q * cos + rotate_half(q) * sin
    return apply


DECODE_STEPS = 200


def torch_rope_decode(threads, dtype, batch):
    torch = torch_setup(threads)
    dt = torch.float32 if dtype == "f32" else torch.bfloat16
    H, D = 32, 128
    inv_freq = 1.0 / (10000 ** (torch.arange(0, D, 2, dtype=torch.int64).float() / D))
    # posenc bench's positions: 4095, then scattered (a continuous batch)
    ids = [4095] + [(t * 7919) % 8000 + 17 for t in range(1, batch)]
    position_ids = torch.tensor(ids)[:, None]  # [B, 1]
    q = torch.randn(batch, H, 1, D).to(dt)

    def rotate_half(x):  # transformers.models.llama.modeling_llama.rotate_half
        x1 = x[..., : x.shape[-1] // 2]
        x2 = x[..., x.shape[-1] // 2:]
        return torch.cat((-x2, x1), dim=-1)

    def step():  # LlamaRotaryEmbedding.forward, then apply_rotary_pos_emb (q only)
        with torch.no_grad():
            inv_freq_expanded = inv_freq[None, :, None].float().expand(position_ids.shape[0], -1, 1)
            position_ids_expanded = position_ids[:, None, :].float()
            freqs = (inv_freq_expanded.float() @ position_ids_expanded.float()).transpose(1, 2)
            emb = torch.cat((freqs, freqs), dim=-1)
            cos, sin = emb.cos().to(dt), emb.sin().to(dt)
            cos, sin = cos.unsqueeze(1), sin.unsqueeze(1)
            return q * cos + rotate_half(q) * sin

    def steps():
        for _ in range(DECODE_STEPS):
            step()
    return steps


def torch_alibi(threads):
    torch = torch_setup(threads)
    H, L = 32, 2048
    slopes = torch.tensor([2 ** (-8 * (h + 1) / H) for h in range(H)])

    def build():
        pos = torch.arange(L)
        rel = (pos[None, :] - pos[:, None]).float()
        return slopes[:, None, None] * rel[None]
    return build


def torch_t5(threads):
    torch = torch_setup(threads)
    H, L, buckets, max_distance = 32, 2048, 32, 128
    emb = torch.nn.Embedding(buckets, H)

    def bucket(relative_position):  # HF T5Attention._relative_position_bucket, bidirectional
        nb = buckets // 2
        ret = (relative_position > 0).to(torch.long) * nb
        rp = torch.abs(relative_position)
        max_exact = nb // 2
        is_small = rp < max_exact
        large = max_exact + (torch.log(rp.float() / max_exact) / math.log(max_distance / max_exact)
                             * (nb - max_exact)).to(torch.long)
        large = torch.min(large, torch.full_like(large, nb - 1))
        return ret + torch.where(is_small, rp, large)

    def build():
        with torch.no_grad():
            ctx = torch.arange(L)[:, None]
            mem = torch.arange(L)[None, :]
            values = emb(bucket(mem - ctx))  # [L, L, H]
            return values.permute([2, 0, 1]).contiguous()
    return build


def main():
    if len(sys.argv) != 4:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    workload, threads, reps = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    per_call = 1  # calls of the measured step in one timed call
    try:
        if workload.startswith("sin_numpy_"):
            fn = numpy_table(workload[-3:])
        elif workload == "sin_torch":
            fn = torch_table(threads)
        elif workload.startswith("rope_decode_torch_hf_"):
            dtype, batch = workload.split("_")[-2:]
            fn, per_call = torch_rope_decode(threads, dtype, int(batch)), DECODE_STEPS
        elif workload.startswith("rope_torch_"):
            _, _, layout, dtype = workload.split("_")
            fn = torch_rope(threads, dtype, layout)
        elif workload == "alibi_torch":
            fn = torch_alibi(threads)
        elif workload == "t5_torch":
            fn = torch_t5(threads)
        else:
            print(f"unknown workload {workload}", file=sys.stderr)
            sys.exit(2)
    except ImportError as e:
        print(f"skip {e}")
        return
    med, best = timed(fn, reps)
    print(f"median_ms {med / per_call:.6f} min_ms {best / per_call:.6f} reps {reps}")


if __name__ == "__main__":
    main()
