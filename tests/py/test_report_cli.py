"""`posenc report`: the file is one self-contained HTML page (no external
references, a CSP that forbids fetching), every section of the default comparison
is there and linked, the embedded data are the table's values, custom reports
work from flags and from a table file (NaN included), and bad input fails cleanly
without leaving a file."""
import json
import os
import re

import numpy as np

from common import Checks, run, tmpdir


def data_block(html):
    m = re.search(r'<script type="application/json" id="posenc-data">(.*?)</script>', html, re.S)
    return json.loads(m.group(1)) if m else None


def main():
    t = Checks()
    d = tmpdir()
    out = os.path.join(d, "report.html")
    rc, so, se = run("report", "-o", out)
    html = open(out, encoding="utf-8").read() if rc == 0 else ""
    t.check(rc == 0 and so.strip() == "open: " + os.path.realpath(out), f"no flags: exit {rc}, stdout '{so.strip()}'")
    ids = re.findall(r'<section id="([^"]+)"', html)
    want = ["overview", "heatmaps", "compare", "surface", "similarity", "spectrum", "rope", "bias", "health", "precision"]
    t.check(ids == want, f"default comparison sections: {ids}")
    links = re.findall(r'<a href="#([^"]+)"', html)
    t.check(set(links) <= set(ids) and set(re.findall(r'<nav>(.*?)</nav>', html, re.S)[0].count("<a") for _ in [0]) == {len(ids)},
            f"every in-page link has its section ({sorted(set(links) - set(ids))} dangling)")
    external = re.findall(r'(?:src|href)\s*=\s*"(?!#|data:)[^"]*"', html)
    t.check("Content-Security-Policy" in html and "default-src 'none'" in html and not external,
            f"self-contained: CSP default-src 'none', no src/href outside the file ({external[:3]})")
    data = data_block(html)
    names = [x["name"] for x in data["tables"]] if data else []
    t.check(names == ["sinusoidal", "rope", "learned", "index", "normalized"], f"embedded tables: {names}")
    sin = data["tables"][0]
    v = np.array(sin["v"], dtype=float).reshape(sin["rows"], sin["cols"])
    p = np.arange(128)[:, None]
    w = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    ref = np.zeros((128, 64))
    ref[:, 0::2], ref[:, 1::2] = np.sin(p * w), np.cos(p * w)
    err = np.abs(v - ref).max()
    # values are written with %.9g from float64 tables: 9 significant digits -> <= 5e-9 absolute for |v| <= 1
    t.check(v.shape == (128, 64) and err < 5e-9 and sin["cmap"] == "rdbu" and sin["lo"] == -sin["hi"],
            f"embedded sinusoidal values = sin/cos formula (max diff {err:.1e}, tolerance 5e-9: %.9g), rdbu centred on 0")
    t.check(data["tables"][3]["cmap"] == "viridis", "non-negative index baseline is drawn with viridis")
    # Health table: one column per table (no sideways scrolling), zero variance printed as 0.
    health = re.search(r'<section id="health">(.*?)</section>', html, re.S).group(1)
    head = re.search(r"<table class=\"stats\"><tr>(.*?)</tr>", health, re.S).group(1)
    cols = re.findall(r"<th>(.*?)</th>", head)
    mv = re.search(r"<tr><td>mean variance</td>(.*?)</tr>", health, re.S)
    mv = re.findall(r"<td>(.*?)</td>", mv.group(1)) if mv else []
    t.check(cols == ["measure", "sinusoidal", "rope", "learned", "index", "normalized"] and "overflow-x" not in html,
            f"health table: a column per table ({cols}), no overflow-x scroller")
    t.check(len(mv) == 5 and mv[3] == "0" and mv[4] == "0" and not re.search(r"\de-[23]\d<", health),
            f"values below rounding print as 0: mean variance row {mv} (no e-2x, e-3x numbers in the table)")
    # Coinciding lines (rope's norm and variance equal the sinusoid's) are dashed and said.
    norm_svg = [x for x in re.findall(r"<svg.*?</svg>", health, re.S) if "Length (L2 norm)" in x]
    dashed = re.findall(r'<path class="series" data-name="rope"[^>]*stroke-dasharray', norm_svg[0]) if norm_svg else []
    t.check(dashed and "rope (overlaps sinusoidal)" in norm_svg[0],
            "norm chart: rope lies on sinusoidal, so it is dashed and the legend says 'rope (overlaps sinusoidal)'")
    t.check(html.count("<svg") >= 12 and html.count("data:image/png;base64,") >= 8 and "<tr><td>bf16</td><td>257 (becomes 256)" in html,
            f"{html.count('<svg')} SVG charts, {html.count('data:image/png;base64,')} PNGs, the bf16 precision row")

    # Custom report from flags: only the sections that apply; the spectrum and RoPE section are there.
    out2 = os.path.join(d, "rope.html")
    rc, so, _ = run("report", "--kind", "rope", "--scaling", "yarn", "--factor", 4, "--len", 64, "--dim", 32, "-o", out2)
    html = open(out2, encoding="utf-8").read() if rc == 0 else ""
    ids = re.findall(r'<section id="([^"]+)"', html)
    t.check(rc == 0 and "rope" in ids and "bias" not in ids and "precision" not in ids and "spectrum" in ids,
            f"report --kind rope: sections {ids}")
    nav = re.findall(r'<nav>(.*?)</nav>', html, re.S)
    t.check(nav and all(f'href="#{i}"' in nav[0] for i in ids) and 'href="#bias"' not in nav[0], "navigation lists exactly the written sections")

    # From a model config (Llama 3.1): its RoPE table and its own scaling bands.
    cfg = os.path.join(d, "config.json")
    json.dump({"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "max_position_embeddings": 131072,
               "rope_theta": 500000.0, "rope_scaling": {"factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
                                                         "original_max_position_embeddings": 8192, "rope_type": "llama3"}},
              open(cfg, "w"))
    out4 = os.path.join(d, "cfg.html")
    rc, _, se = run("report", "--config", cfg, "--len", 64, "-o", out4)
    html = open(out4, encoding="utf-8").read() if rc == 0 else ""
    data = data_block(html) if html else None
    t.check(rc == 0 and data and data["tables"][0]["name"] == "rope (llama)" and data["tables"][0]["cols"] == 128
            and "This table's own RoPE settings" in html and "trained 8192" in html,
            f"report --config (Llama 3.1): rope table 64 x 128 and its llama3 bands (exit {rc})")
    html4 = open(out4, encoding="utf-8").read() if rc == 0 else ""
    rope = re.search(r'<section id="rope">(.*?)</section>', html4, re.S)
    long_svg = [x for x in re.findall(r"<svg.*?</svg>", rope.group(1), re.S) if "up to its longest context" in x] if rope else []
    xt = re.findall(r'<text class="tick"[^>]*>([^<]*)</text>', long_svg[0]) if long_svg else []
    marks = re.findall(r'<g class="mark">.*?<text[^>]*>([^<]*)</text>', long_svg[0], re.S) if long_svg else []
    t.check(long_svg and "100000" in xt and {"trained context", "longest context", "one full turn"} <= set(marks)
            and "model (x0.125)" in long_svg[0] and "overlaps" in long_svg[0],
            f"report --config: the model's RoPE up to its longest context (x ticks {xt[:9]}, marks {marks}); an "
            "interpolated pair turns 8x slower (x0.125), a kept pair overlaps its unscaled line")
    words = " ".join(re.findall(r'<p class="look">(.*?)</p>', html4, re.S))
    strays = [w for w in ("sinusoidal table", "baseline", "index", "normalized", "ALiBi", "T5") if w in words]
    t.check(html4 and not strays, f"report --config: its 'what to look at' texts name nothing the page lacks ({strays})")
    rc, _, se = run("report", "--config", cfg, "--dim", 64, "-o", os.path.join(d, "x.html"))
    t.check(rc == 2 and "cannot be combined with --config" in se, f"--config with --dim: exit {rc}")
    os.remove(cfg)

    # From a table file with NaN and inf: drawn (grey), counted in the health table.
    tab = np.random.default_rng(1).normal(size=(40, 16)).astype(np.float32)
    tab[3, 4], tab[10, 0] = np.nan, np.inf
    src = os.path.join(d, "t.npy")
    np.save(src, tab)
    out3 = os.path.join(d, "file.html")
    rc, so, se = run("report", src, "-o", out3)
    html = open(out3, encoding="utf-8").read() if rc == 0 else ""
    data = data_block(html) if html else None
    vals = data["tables"][0]["v"] if data else []
    t.check(rc == 0 and "NaN or inf" in se and vals.count(None) == 2 and "<td>2</td></tr>" in html,
            f"report TABLE.npy with NaN/inf: exit {rc}, 2 nulls in the data, NaN/inf count 2 in the table")

    # Bad input: clear message, exit code, no file (and an existing file untouched).
    keep = os.path.join(d, "keep.html")
    open(keep, "w").write("previous")
    np.save(os.path.join(d, "empty.npy"), np.zeros((0, 3), dtype=np.float32))
    np.save(os.path.join(d, "nan.npy"), np.full((4, 4), np.nan))
    cases = [
        (("report", "-o", os.path.join(d, "r.txt")), 2, "HTML file"),
        (("report", "-o", os.path.join(d, "no/dir/r.html")), 1, "r.html"),
        (("report", os.path.join(d, "empty.npy"), "-o", keep), 2, "empty"),
        (("report", os.path.join(d, "nan.npy"), "-o", keep), 1, "no finite value"),
        (("report", "--cmap", "jet", "-o", keep), 2, "unknown --cmap"),
        (("report", "--frobnicate", "-o", keep), 2, "unknown option"),
        (("report", src, "--kind", "rope", "-o", keep), 2, "not both"),
        (("report", "--len", 10, "--dim", 0, "-o", keep), 2, "--dim"),
        (("report", "--kind", "sinusoidal", "--dim", 7, "-o", keep), 2, "dim"),
    ]
    for args, want_rc, msg in cases:
        rc, _, se = run(*args)
        t.check(rc == want_rc and msg in se and open(keep).read() == "previous",
                f"{' '.join(map(str, args[1:3]))}: exit {rc} (want {want_rc}), '{se.strip().splitlines()[0] if se.strip() else ''}'")
    left = [f for f in os.listdir(d) if f not in ("report.html", "rope.html", "file.html", "keep.html", "cfg.html", "t.npy", "empty.npy", "nan.npy")]
    t.check(not left, f"no partial or temporary files left ({left})")
    rc, so, _ = run("report", "--help")
    t.check(rc == 0 and "offline" in so and "--kind" in so and "-o OUT" in so, "report --help")
    t.finish()


if __name__ == "__main__":
    main()
