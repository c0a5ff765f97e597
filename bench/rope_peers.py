"""RoPE against the peers users run, with a ceiling that holds (issue 43).

usage: POSENC_PYTHON bench/rope_peers.py --lib build/bench/libposenc_rope_peers.so
       [--shapes prefill,decode] [--dtypes f32,bf16,f16] [--layouts half,interleaved]
       [--threads 1,2] [--rounds 7] [--no-compile] [--growth] [--only-growth]
(`cmake --build build --target bench_rope_peers` runs it with POSENC_PYTHON.)

Everything runs in this one process, in alternating rounds (each round times every
side once, so a busy spell of the machine hits them alike), and every figure is the
best of the rounds (the worst is printed beside it):
  - posenc: posenc_rope_plan_apply on q then k, in place, precise mode (C, via the
    ctypes-loaded bench library bench/rope_peers.c, which times its own calls);
  - ggml: ggml's CPU rope of q and k in one graph, in place (NORMAL = interleaved,
    NEOX = half-split; f32 and f16, ggml has no bf16 rope), its threadpool made once;
  - HF eager / HF compiled: transformers' own functions, imported, on torch:
    half-split: transformers.models.llama.modeling_llama.apply_rotary_pos_emb(q, k, cos, sin)
      on q, k as LlamaAttention holds them ([1, T, H, D] memory viewed as [1, H, T, D]),
      cos/sin from LlamaRotaryEmbedding (precomputed once, as a model does per step);
    interleaved: transformers.models.gptj.modeling_gptj.apply_rotary_pos_emb(x, sin, cos)
      on q and on k ([1, T, H, D], GPT-J's layout), sin/cos from GPT-J's
      create_sinusoidal_positions;
    each eager and under torch.compile (inductor, dynamic=False, compiled per row and
    thread count, outside the timing); torch.set_num_threads(threads).
  - the ceilings (bench/rope_peers.c): the same q and k bytes, on as many threads: in-place
    read-modify-write with regular stores, with a write prefetch 8 KiB ahead, and with
    non-temporal stores; and a copy of q, k into a second buffer (regular, non-temporal).
    "ceiling" = the best in-place pass of all (f32 rows: also the old x *= 1 loop, which on two
    threads sometimes ran fastest): no in-place kernel can beat it by more than noise.
Shapes: prefill q[4096, 32, 128] + k[4096, 8, 128] (Llama-3-8B's heads), positions 0..4095;
decode: one token, q[1, 32, 128] + k[1, 8, 128] at position 4095, per call (each timing
runs 200 calls back to back). base 10000.
bytes moved = 2 x (q + k) bytes (read + write); GB/s and x ceiling use it for every side
(a peer that allocates its outputs moves more: that is its cost, not counted for it).
"""
import argparse
import ctypes
import os
import shutil
import sys
import tempfile
import time

import numpy as np

DT = {"f32": 0, "bf16": 1, "f16": 2}
CEIL = ["rmw", "rmw+prefetchw", "rmw NT", "copy", "copy NT", "old x*=1 (SSE, f32)"]


def load(lib_path):
    lib = ctypes.CDLL(lib_path)
    lib.rp_new.restype = ctypes.c_void_p
    lib.rp_new.argtypes = [ctypes.c_int] * 6 + [ctypes.c_longlong, ctypes.c_int]
    for name in ("rp_posenc", "rp_ggml"):
        getattr(lib, name).restype = ctypes.c_double
        getattr(lib, name).argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rp_ceiling.restype = ctypes.c_double
    lib.rp_ceiling.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_int]
    lib.rp_bytes.restype = ctypes.c_double
    lib.rp_bytes.argtypes = [ctypes.c_void_p]
    lib.rp_data.restype = ctypes.c_void_p
    lib.rp_data.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.rp_ggml_check.restype = ctypes.c_longlong
    lib.rp_ggml_check.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_double)]
    lib.rp_free.argtypes = [ctypes.c_void_p]
    lib.rp_info.restype = ctypes.c_char_p
    return lib


class Row:
    def __init__(self, lib, torch, hf, shape, dtype, layout, threads, compile_):
        self.lib, self.torch = lib, torch
        self.T, self.hq, self.hk, self.D, self.pos0 = (4096, 32, 8, 128, 0) if shape == "prefill" else (1, 32, 8, 128, 4095)
        if isinstance(shape, int):  # growth: q[T, 4, 128] + k[T, 4, 128]
            self.T, self.hq, self.hk, self.D, self.pos0 = shape, 4, 4, 128, 0
        self.calls = 200 if self.T == 1 else max(1, int((32 << 20) // (2 * self.T * (self.hq + self.hk) * self.D * 4)))
        self.c = lib.rp_new(DT[dtype], 1 if layout == "half" else 0, self.T, self.hq, self.hk, self.D, self.pos0, threads)
        if not self.c:
            raise RuntimeError("rp_new failed (out of memory?)")
        self.bytes = lib.rp_bytes(self.c)
        tdt = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}[dtype]
        # the same input as posenc's buffers
        def tensor(which, heads):
            n = self.T * heads * self.D
            raw = np.ctypeslib.as_array((ctypes.c_uint8 * (n * (4 if dtype == "f32" else 2))).from_address(
                lib.rp_data(self.c, which))).copy()
            return torch.from_numpy(raw).view(tdt).view(1, self.T, heads, self.D)
        self.q_in, self.k_in = tensor(0, self.hq), tensor(1, self.hk)
        ids = torch.arange(self.pos0, self.pos0 + self.T)[None]
        if layout == "half":
            cos, sin = hf["llama_rope"](self.q_in, ids)  # [1, T, D] in q's dtype
            q, k = self.q_in.transpose(1, 2), self.k_in.transpose(1, 2)  # LlamaAttention's views
            apply = hf["llama_apply"]
            args = (q, k, cos, sin)
            fn = lambda q, k, cos, sin: apply(q, k, cos, sin)  # noqa: E731
            self.to_thd = lambda out: out.transpose(1, 2)
        else:
            sincos = hf["gptj_table"](self.pos0 + self.T, self.D)[ids]  # [1, T, D] f32
            sin, cos = torch.split(sincos, self.D // 2, dim=-1)
            sin, cos = sin.to(tdt), cos.to(tdt)
            apply = hf["gptj_apply"]
            args = (self.q_in, self.k_in, sin, cos)
            fn = lambda q, k, sin, cos: (apply(q, sin, cos), apply(k, sin, cos))  # noqa: E731
            self.to_thd = lambda out: out
        self.args = args
        self.eager = fn
        self.compiled = None
        if compile_:
            t0 = time.perf_counter()
            self.compiled = torch.compile(fn, dynamic=False)
            with torch.no_grad():
                self.compiled(*args)
                self.compiled(*args)
            self.compile_s = time.perf_counter() - t0

    def check(self):
        """max |posenc - HF eager| after one forward call from the same input (then undone)."""
        torch = self.torch
        with torch.no_grad():
            oq, ok = self.eager(*self.args)
        self.lib.rp_posenc(self.c, 1)  # forward (the case alternates forward / inverse)
        q = self.tensor_now(0, self.hq)
        k = self.tensor_now(1, self.hk)
        d = max((q.float() - self.to_thd(oq).float()).abs().max().item(),
                (k.float() - self.to_thd(ok).float()).abs().max().item())
        self.lib.rp_posenc(self.c, 1)  # inverse: back to (about) the input
        return d

    def tensor_now(self, which, heads):
        n = self.T * heads * self.D
        elem = self.q_in.element_size()
        raw = np.ctypeslib.as_array((ctypes.c_uint8 * (n * elem)).from_address(self.lib.rp_data(self.c, which))).copy()
        return self.torch.from_numpy(raw).view(self.q_in.dtype).view(1, self.T, heads, self.D)

    def torch_ms(self, fn):
        torch = self.torch
        with torch.no_grad():
            t0 = time.perf_counter()
            for _ in range(self.calls):
                fn(*self.args)
            return (time.perf_counter() - t0) * 1e3 / self.calls

    def free(self):
        self.lib.rp_free(self.c)


def settle():
    """let the other side's pool threads (torch's OpenMP, posenc's poll) go to sleep"""
    time.sleep(0.005)


def measure(row, rounds, sides):
    """best and worst ms per side over alternating rounds"""
    lib, c = row.lib, row.c
    fns = {}
    for k in range(len(CEIL)):
        fns["ceil:" + CEIL[k]] = (lambda k=k: lib.rp_ceiling(c, k, row.calls))
    fns["posenc"] = lambda: lib.rp_posenc(c, row.calls)
    if "ggml" in sides:
        fns["ggml"] = lambda: lib.rp_ggml(c, row.calls)
    if "eager" in sides:
        fns["HF eager"] = lambda: row.torch_ms(row.eager)
    if row.compiled is not None:
        fns["HF compiled"] = lambda: row.torch_ms(row.compiled)
    res = {k: [] for k in fns}
    for r in range(rounds + 1):  # round 0: warm-up
        for name, fn in fns.items():
            if res[name] is None:  # not available for this row (-2: not built / not f32, -3: no bf16)
                continue
            settle()
            ms = fn()
            if ms < -1.5:
                res[name] = None
            elif ms < 0:
                raise RuntimeError("%s failed" % name)
            elif r > 0:
                res[name].append(ms)
    return {k: (min(v), max(v)) if v else None for k, v in res.items()}


def gbs(nbytes, ms):
    return nbytes / (ms * 1e6)


# glibc keeps freed memory instead of returning it (set before the interpreter starts, so the
# script re-executes itself once with them): eager torch allocates fresh 16-64 MiB outputs every
# call, and on this VM faulting their pages in again took most of its time (the same settings as
# `posenc lab bench` gives torch; jemalloc/tcmalloc, the usual advice for torch on CPU, do the same).
MALLOC_ENV = {"MALLOC_MMAP_THRESHOLD_": "4294967296", "MALLOC_TRIM_THRESHOLD_": "17179869184",
              "MALLOC_TOP_PAD_": "268435456"}


def main():
    if any(k not in os.environ for k in MALLOC_ENV) and "--plain-malloc" not in sys.argv:
        os.execve(sys.executable, [sys.executable] + sys.argv, {**os.environ, **MALLOC_ENV})
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True)
    ap.add_argument("--shapes", default="prefill,decode")
    ap.add_argument("--dtypes", default="f32,bf16,f16")
    ap.add_argument("--layouts", default="half,interleaved")
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--plain-malloc", action="store_true", help="glibc's default malloc settings (torch pays page faults)")
    ap.add_argument("--growth", action="store_true", help="also the growth curve (T = 512 .. 131072)")
    ap.add_argument("--only-growth", action="store_true")
    ap.add_argument("--growth-max", type=int, default=131072)
    a = ap.parse_args()

    # Everything inductor writes (its cache, and the precompiled headers it puts under the temporary
    # folder whatever TORCHINDUCTOR_CACHE_DIR says) goes to a folder of this run, removed at the end.
    cache = tempfile.mkdtemp(prefix="posenc-rope-peers-")
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", cache)
    os.environ["TMPDIR"] = tempfile.tempdir = cache
    try:
        run(a)
    finally:
        shutil.rmtree(cache, ignore_errors=True)


def run(a):
    import torch
    import transformers
    from transformers import LlamaConfig
    from transformers.models.gptj import modeling_gptj
    from transformers.models.llama import modeling_llama

    lib = load(a.lib)
    cfg = LlamaConfig(hidden_size=4096, num_attention_heads=32, num_key_value_heads=8, head_dim=128,
                      rope_theta=10000.0, max_position_embeddings=8192)
    rope = modeling_llama.LlamaRotaryEmbedding(cfg)
    hf = {"llama_apply": modeling_llama.apply_rotary_pos_emb, "gptj_apply": modeling_gptj.apply_rotary_pos_emb,
          "gptj_table": modeling_gptj.create_sinusoidal_positions,
          "llama_rope": lambda x, ids: rope(x, ids)}
    try:
        import kernels  # noqa: F401  (hub kernels would replace HF's function)
        hub = "installed (HF may swap apply_rotary_pos_emb for a hub kernel)"
    except ImportError:
        hub = "not installed (apply_rotary_pos_emb is HF's Python)"
    threads = [int(t) for t in a.threads.split(",")]
    print("# RoPE against its peers, one process (bench/rope_peers.py)\n")
    print("%s; torch %s (%s); transformers %s; kernels package %s; numpy %s; python %s"
          % (lib.rp_info().decode(), torch.__version__, torch.__config__.parallel_info().splitlines()[-1].strip(),
             transformers.__version__, hub, np.__version__, sys.version.split()[0]))
    print("glibc malloc: %s" % (", ".join("%s=%s" % (k, os.environ[k]) for k in MALLOC_ENV if k in os.environ)
                                 or "defaults (--plain-malloc)"))
    print("%s UTC, load average %s, best (worst) of %d alternating rounds after a warm-up round\n"
          % (time.strftime("%Y-%m-%d %H:%M", time.gmtime()), " ".join("%.1f" % x for x in os.getloadavg()), a.rounds))
    if not a.only_growth:
        table(a, lib, torch, hf, threads)
    if a.growth or a.only_growth:
        growth(a, lib, torch, hf, threads)


def table(a, lib, torch, hf, threads):
    print("| shape | dtype | layout | threads | bytes moved | ceiling GB/s in place (best pass) | copy GB/s | "
          "posenc ms | posenc GB/s | x ceiling | ggml ms | HF eager ms | HF compiled ms | fastest peer | "
          "posenc / fastest peer | max abs vs HF eager | note |")
    print("|" + "---|" * 17)
    sys.stdout.flush()
    details = []
    for shape in a.shapes.split(","):
        for dtype in a.dtypes.split(","):
            for layout in a.layouts.split(","):
                for th in threads:
                    torch.set_num_threads(th)
                    torch._dynamo.reset()  # inductor's kernels carry the thread count they were made for
                    row = Row(lib, torch, hf, shape, dtype, layout, th, not a.no_compile)
                    diff = row.check()
                    mism_worst = ctypes.c_double(0)
                    mism = lib.rp_ggml_check(row.c, ctypes.byref(mism_worst))
                    m = measure(row, a.rounds, ("ggml", "eager"))
                    details.append((shape, dtype, layout, th, row, m, mism, mism_worst.value))
                    print(format_row(shape, dtype, layout, th, row, m, diff))
                    sys.stdout.flush()
                    row.free()
    print("\nCeilings of each row (GB/s from the best round, bytes moved as above); ggml check: values where "
          "posenc --mode ggml differs from ggml, max |posenc precise - ggml|:\n")
    print("| shape | dtype | layout | threads | " + " | ".join(CEIL) + " | ggml == posenc --mode ggml |")
    print("|" + "---|" * (5 + len(CEIL)))
    for shape, dtype, layout, th, row, m, mism, worst in details:
        cells = ["%.1f" % gbs(row.bytes, m["ceil:" + k][0]) if m["ceil:" + k] else "n/a" for k in CEIL]
        g = ("bit for bit" if mism == 0 else "%d differ" % mism) + (", precise %.2g" % worst) if mism >= 0 else \
            ("no bf16 rope" if mism == -3 else "not built")
        print("| %s | %s | %s | %d | %s | %s |" % (shape, dtype, layout, th, " | ".join(cells), g))


def format_row(shape, dtype, layout, th, row, m, diff):
    in_place = [k for k in CEIL[:3] + CEIL[5:] if m.get("ceil:" + k)]  # every in-place pass that ran
    ceil_ms = min(m["ceil:" + k][0] for k in in_place)
    best_kind = min(in_place, key=lambda k: m["ceil:" + k][0])
    copy_ms = min(m["ceil:copy"][0], m["ceil:copy NT"][0])
    p_ms, p_worst = m["posenc"]
    peers = {k: m[k] for k in ("ggml", "HF eager", "HF compiled") if m.get(k)}
    fastest = min(peers, key=lambda k: peers[k][0])
    ratio = peers[fastest][0] / p_ms
    xc = ceil_ms / p_ms
    decode = row.T == 1
    unit = 1e3 if decode else 1.0  # decode rows in us per call

    def t(v):
        return ("%.2f (%.2f)" % (v[0] * unit, v[1] * unit)) if v else "n/a"
    note = ""
    if ratio < 1.3:
        peer_x = ceil_ms / peers[fastest][0]
        if decode:
            note = ("per-call bound: %.2f us a call for %.0f bytes (the ceiling pass: %.3f us); %s takes %.2f us"
                    % (p_ms * 1e3, row.bytes, ceil_ms * 1e3, fastest, peers[fastest][0] * 1e3))
        elif xc >= 0.75:
            note = ("memory-bound: posenc at %.2f x ceiling, %s at %.2f x: 1.3x would need %.2f x ceiling"
                    % (xc, fastest, peer_x, 1.3 * peer_x))
        else:
            note = "posenc at %.2f x ceiling, %s at %.2f x" % (xc, fastest, peer_x)
    elif xc > 1.05:
        note = "above the ceiling by %.0f%%: noise between rounds (best vs best)" % (100 * (xc - 1))
    name = {"half": "half-split", "interleaved": "interleaved"}[layout]
    shp = "prefill q[4096,32,128]+k[4096,8,128]" if shape == "prefill" else "decode q[1,32,128]+k[1,8,128] (us)"
    return ("| %s | %s | %s | %d | %.2f MiB | %.1f (%s) | %.1f | %s | %.1f | %.2f | %s | %s | %s | %s | %.2fx | %.2g | %s |"
            % (shp, dtype, name, th, row.bytes / 2**20, gbs(row.bytes, ceil_ms), best_kind, gbs(row.bytes, copy_ms),
               t(m["posenc"]), gbs(row.bytes, p_ms), xc, t(m.get("ggml")), t(m.get("HF eager")),
               t(m.get("HF compiled")), fastest, ratio, diff, note))


def growth(a, lib, torch, hf, threads):
    print("\n## Growth: f32 half-split, q[T, 4, 128] + k[T, 4, 128], positions 0..T-1 (best of %d rounds)\n"
          % a.rounds)
    print("ns per token = best ms / T; caches: L2 1 MiB per core... (lscpu), L3 32 MiB shared. HF eager only "
          "(a compiled function per length would be recompiled at every T).\n")
    print("| T | threads | bytes moved | posenc ms | posenc ns/token | ceiling ms | ceiling ns/token | x ceiling | "
          "ggml ms | HF eager ms | posenc / fastest peer |")
    print("|" + "---|" * 11)
    T = 512
    while T <= a.growth_max:
        for th in threads:
            torch.set_num_threads(th)
            row = Row(lib, torch, hf, T, "f32", "half", th, False)
            m = measure(row, a.rounds, ("ggml", "eager"))
            p = m["posenc"][0]
            ceil_ms = min(m["ceil:" + k][0] for k in CEIL[:3] + CEIL[5:] if m.get("ceil:" + k))
            peers = [m[k][0] for k in ("ggml", "HF eager") if m.get(k)]
            print("| %d | %d | %.1f MiB | %.3f | %.2f | %.3f | %.2f | %.2f | %s | %s | %.2fx |"
                  % (T, th, row.bytes / 2**20, p, p * 1e6 / T, ceil_ms, ceil_ms * 1e6 / T, ceil_ms / p,
                     "%.3f" % m["ggml"][0] if m.get("ggml") else "n/a",
                     "%.3f" % m["HF eager"][0] if m.get("HF eager") else "n/a", min(peers) / p))
            sys.stdout.flush()
            row.free()
        T *= 2


if __name__ == "__main__":
    main()
