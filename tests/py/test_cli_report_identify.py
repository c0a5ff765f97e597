"""`posenc report --identify CACHE.npy [--sin S.npy]`: the "Which RoPE is this?" section
(render/report_identify.c): the fitted words and two charts (residual per pair in each
arithmetic, the per-pair factor profile). Caches: Llama 3.1's llama3 RoPE made by
`rope apply --mode torch-compat` on x = (1, 0) per interleaved pair (the rotation returns
(cos, sin): a ggml-layout cache in HF's float32 steps), and a LongRoPE cache in NumPy whose
factors switch at row 1024 (short list 1 + k/200, long 1 + k/8). Bad input: --sin without
--identify, a table that is no RoPE cache (named, exit 2)."""
import os
import re

import numpy as np

from common import Checks, run, tmpdir

T = 2048


def section(path):
    with open(path) as f:
        html = f.read()
    i = html.find('<section id="identify">')
    return html[i:html.index("</section>", i)] if i >= 0 else ""


def text(sec):
    return re.sub(r"<svg.*?</svg>", "", sec, flags=re.S)


def main():
    t = Checks()
    d = tmpdir()
    ones = np.zeros((T, 1, 128), np.float32)
    ones[:, :, 0::2] = 1
    src, cache = os.path.join(d, "ones.npy"), os.path.join(d, "cache.npy")
    np.save(src, ones)
    rc, _, se = run("rope", "apply", "--in", src, "--dim", "128", "--layout", "interleaved", "--torch-compat",
                    "--base", "500000", "--scaling", "llama3", "--factor", "8", "--original-max", "8192", "-o", cache)
    np.save(cache, np.load(cache).reshape(T, 128))
    out = os.path.join(d, "r.html")
    rc, so, se = run("report", "--identify", cache, "-o", out)
    sec = section(out) if rc == 0 else ""
    words = text(sec)
    t.check(rc == 0 and "Which RoPE is this?" in sec and sec.count("<svg") == 2,
            f"report --identify: the section with 2 charts ({sec.count('<svg')}) {se.strip()[-200:]}")
    t.check("layout ggml per-pair (cos, sin) interleaved" in words and "scaling llama3, factor 8" in words
            and "hf-f32: bit for bit" in words and "original context 8192" in words,
            "the words: ggml layout, llama3 factor 8 from 8192, HF float32 bit for bit: "
            + " | ".join(re.findall(r"<li>(.*?)</li>", words)[:3]))
    t.check("Residual per pair" in sec and "Per-pair factor" in sec and "hf-f32" in sec and "ggml-f32" in sec,
            "the charts: residual per pair (a line per arithmetic) and the factor profile")
    # LongRoPE switch at row 1024
    K, base = 48, 10000.0
    k = np.arange(K)
    w0 = base ** (-2.0 * k / (2 * K))
    short, long_ = 1 + k / 200.0, 1 + k / 8.0
    pos = np.arange(T, dtype=np.float64)[:, None]
    ang = np.where(pos < 1024, pos * (w0 / short), pos * (w0 / long_))
    sw = os.path.join(d, "switch.npy")
    np.save(sw, np.concatenate([np.cos(ang), np.sin(ang)], 1).astype(np.float32))
    rc, so, se = run("report", "--identify", sw, "-o", out)
    words = text(section(out)) if rc == 0 else ""
    t.check(rc == 0 and "short before row 1024, long from it (long rows continue the positions)" in words
            and "long side" in section(out),
            "LongRoPE switch: named with its row and both lists drawn: "
            + (" | ".join(re.findall(r"<li>(.*?)</li>", words)[1:2]) or se.strip()))
    # bad input
    rc, so, se = run("report", "--sin", cache, "-o", out)
    t.check(rc == 2 and "--sin goes with --identify" in se, "[P24] --sin alone refused: " + se.strip().splitlines()[0])
    rnd = os.path.join(d, "rnd.npy")
    np.save(rnd, np.random.default_rng(1).standard_normal((64, 16)).astype(np.float32))
    rc, so, se = run("report", "--identify", rnd, "-o", os.path.join(d, "bad.html"))
    t.check(rc == 2 and "--identify" in se and "rnd.npy" in se and not os.path.exists(os.path.join(d, "bad.html")),
            "[P24] a table that is no RoPE cache: refused by name, no report written: " + se.strip().splitlines()[-1])
    rc, so, se = run("report", "--identify", cache, "--cache-layout", "mlx", "-o", out)
    t.check(rc == 2 and "mlx" in se, "an unknown cache layout is refused by name")
    return t.finish()


if __name__ == "__main__":
    raise SystemExit(main())
