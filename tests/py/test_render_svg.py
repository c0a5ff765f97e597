"""`posenc plot CHART -o X.svg`: every chart is well-formed XML (xmllint, and Python's
parser), has its axes, ticks, title and series, and the drawn numbers are right:
tick labels are the expected round values, and series points mapped back through
the tick positions give the table's values."""
import os
import re
import shutil
import subprocess
import xml.etree.ElementTree as ET

import numpy as np

from common import Checks, run, tmpdir

NS = "{http://www.w3.org/2000/svg}"


def ticks(root, axis):
    """(value, pixel) of each tick label on axis 'x' or 'y'."""
    out = []
    for g in root.iter(NS + "g"):
        if g.get("class") == "axis " + axis:
            for tx in g.iter(NS + "text"):
                out.append((float(tx.text), float(tx.get("x" if axis == "x" else "y")) - (0 if axis == "x" else 4)))
    return out


def path_points(d):
    return [(float(x), float(y)) for x, y in re.findall(r"[ML]([-\d.]+) ([-\d.]+)", d)]


def main():
    t = Checks()
    d = tmpdir()
    xmllint = shutil.which("xmllint")
    t.check(xmllint is not None, f"xmllint found ({xmllint}; Debian libxml2-utils, listed in scripts/deps)")
    charts = {
        "heatmap": ["--len", 60, "--dim", 32],
        "curves": ["--len", 64, "--dim", 64, "--at", "3,10,50"],
        "surface": ["--len", 50, "--dim", 64],
        "similarity": ["--len", 200, "--dim", 64],
        "spectrum": ["--len", 128, "--dim", 64],
        "variance": ["--len", 100, "--dim", 64],
        "norm": ["--kind", "index", "--len", 100, "--dim", 16],
    }
    roots = {}
    for name, flags in charts.items():
        out = os.path.join(d, name + ".svg")
        rc, _, se = run("plot", name, *flags, "-o", out)
        lint = subprocess.run([xmllint or "xmllint", "--noout", out], capture_output=True, text=True) if xmllint else None
        ok = rc == 0 and lint is not None and lint.returncode == 0
        try:
            roots[name] = ET.parse(out).getroot()
        except ET.ParseError as e:
            ok = False
            print(e)
        titles = [x.text for x in roots.get(name, ET.Element("x")).iter(NS + "text") if x.get("class") == "title"]
        t.check(ok and titles, f"plot {name}: exit {rc}, xmllint --noout clean, title '{titles[0] if titles else None}'")

    # curves: axes, per position a sin line (even channels) and a cos line (odd channels) of
    # 32 points each (one line through interleaved channels would be a zigzag band),
    # legend names, tick labels, values read back.
    r = roots["curves"]
    series = [p for p in r.iter(NS + "path") if p.get("class") == "series"]
    legend = [x.text for g in r.iter(NS + "g") if g.get("class") == "legend" for x in g.iter(NS + "text")]
    want_legend = [f"position {p}, {f}" for p in (3, 10, 50) for f in ("sin (even ch.)", "cos (odd ch.)")]
    t.check(len(series) == 6 and all(len(path_points(p.get("d"))) == 32 for p in series) and legend == want_legend,
            f"curves: 6 series (sin, cos x 3 positions) of 32 points, legend {legend}")
    xt, yt = ticks(r, "x"), ticks(r, "y")
    t.check([v for v, _ in xt] == [0, 10, 20, 30, 40, 50, 60] and [v for v, _ in yt] == [-1, -0.5, 0, 0.5, 1],
            f"curves tick labels: x {[v for v, _ in xt]}, y {[v for v, _ in yt]}")
    (v0, p0), (v1, p1) = yt[0], yt[-1]
    (u0, q0), (u1, q1) = xt[0], xt[-1]
    p = np.arange(64)[:, None]
    w = 10000.0 ** (-np.arange(0, 64, 2) / 64)
    pe = np.zeros((64, 64))
    pe[:, 0::2], pe[:, 1::2] = np.sin(p * w), np.cos(p * w)
    worst_v = worst_c = 0
    for k, (pos, parity) in enumerate((p, f) for p in (3, 10, 50) for f in (0, 1)):
        for j, (x, y) in enumerate(path_points(series[k].get("d"))):
            ch = 2 * j + parity
            worst_v = max(worst_v, abs(v0 + (y - p0) / (p1 - p0) * (v1 - v0) - pe[pos, ch]))
            worst_c = max(worst_c, abs(u0 + (x - q0) / (q1 - q0) * (u1 - u0) - ch))
    # points and ticks are printed to 0.01 px; the y axis has ~144 px per unit, the x axis ~8 px per
    # channel, so three 0.005 px roundings give <= 1e-4 units and <= 2e-3 channels
    t.check(worst_v < 1e-4 and worst_c < 2e-3,
            f"curves points read back through the ticks = sin/cos table (worst {worst_v:.1e} in value, tolerance 1e-4; "
            f"{worst_c:.1e} in channel, tolerance 2e-3: 0.01 px rounding)")

    # spectrum: log axis with decades, wavelength of pair 0 is 2*pi, reference lines
    r = roots["spectrum"]
    yt = ticks(r, "y")
    marks = [x.text for g in r.iter(NS + "g") if g.get("class") == "mark" for x in g.iter(NS + "text")]
    t.check([v for v, _ in yt] == [10, 100, 1000, 10000] and "table length" in marks,
            f"spectrum: log ticks {[v for v, _ in yt]}, marks {marks}")
    pts = path_points([p for p in r.iter(NS + "path") if p.get("class") == "series"][0].get("d"))
    (v0, p0), (v1, p1) = yt[0], yt[-1]
    wl = [10 ** (np.log10(v0) + (y - p0) / (p1 - p0) * (np.log10(v1) - np.log10(v0))) for _, y in pts]
    want = 2 * np.pi / w
    rel = max(abs(a / b - 1) for a, b in zip(wl, want))
    t.check(len(pts) == 32 and rel < 5e-4, f"spectrum: 32 pairs, wavelengths read back = 2pi*10000^(2k/64) (worst rel {rel:.1e}, tolerance 5e-4: three 0.005 px roundings at ~80 px per decade = 0.015*ln10/80)")

    # norm of the index baseline: |(p,...,p)| = 4p for dim 16 -> last point 396
    r = roots["norm"]
    pts = path_points([p for p in r.iter(NS + "path") if p.get("class") == "series"][0].get("d"))
    yt = ticks(r, "y")
    (v0, p0), (v1, p1) = yt[0], yt[-1]
    got = [v0 + (y - p0) / (p1 - p0) * (v1 - v0) for _, y in pts]
    err = max(abs(a - 4 * i) for i, a in enumerate(got))
    t.check(len(pts) == 100 and err < 0.02, f"norm of index baseline = 4p (worst {err:.4f}, tolerance 0.02: 0.01 px at ~0.75 px per unit)")

    # variance of sinusoidal rows is 0.5 - mean^2; the heat map has its colorbar and an embedded PNG
    r = roots["heatmap"]
    has_img = any(i.get("href", "").startswith("data:image/png;base64,") for i in r.iter(NS + "image"))
    has_bar = any(g.get("class") == "colorbar" for g in r.iter(NS + "g"))
    xt = [v for v, _ in ticks(r, "x")]
    t.check(has_img and has_bar and xt == [0, 5, 10, 15, 20, 25, 30],
            f"heatmap SVG: embedded PNG cells, colorbar, channel ticks {xt}")
    r = roots["surface"]
    quads = [p for g in r.iter(NS + "g") if g.get("class") == "mesh" for p in g.iter(NS + "path")]
    t.check(len(quads) == 49 * 63, f"surface: a projected mesh of 49 x 63 quads for a 50 x 64 table (got {len(quads)})")
    r = roots["similarity"]
    pts = path_points([p for p in r.iter(NS + "path") if p.get("class") == "series"][0].get("d"))
    t.check(len(pts) == 200, f"similarity: distances 0..199 ({len(pts)} points)")

    out = os.path.join(d, "simidx.svg")
    rc, _, _ = run("plot", "similarity", "--kind", "index", "--len", 50, "--dim", 8, "-o", out)
    r = ET.parse(out).getroot()
    pts = path_points([p for p in r.iter(NS + "path") if p.get("class") == "series"][0].get("d"))
    yt = ticks(r, "y")
    (v0, p0), (v1, p1) = yt[0], yt[-1]
    got = [v0 + (y - p0) / (p1 - p0) * (v1 - v0) for _, y in pts]
    # distance 49 pairs row 49 only with row 0, all zeros (no direction), so it is a gap
    t.check(rc == 0 and len(pts) == 49 and max(abs(g - 1) for g in got) < 1e-3,
            f"similarity of the index baseline is flat at 1 for every distance (49 points, worst |g-1| {max(abs(g - 1) for g in got):.1e}, tolerance 1e-3: pixel rounding)")

    # RoPE scaling bands (Llama 3.1 defaults): linear multiplies every pair by 1/8, llama3 keeps the
    # fastest pair and interpolates the slowest; bands and context marks present.
    out = os.path.join(d, "bands.svg")
    rc, _, _ = run("plot", "rope-bands", "-o", out)
    r = ET.parse(out).getroot()
    lint = subprocess.run([xmllint or "xmllint", "--noout", out], capture_output=True) if xmllint else None
    named = {p.get("data-name"): path_points(p.get("d")) for p in r.iter(NS + "path") if p.get("class") == "series"}
    bands = [x.text for g in r.iter(NS + "g") if g.get("class") == "band" for x in g.iter(NS + "text")]
    marks = [x.text for g in r.iter(NS + "g") if g.get("class") == "mark" for x in g.iter(NS + "text")]
    yt = ticks(r, "y")
    (v0, p0), (v1, p1) = yt[0], yt[-1]
    val = lambda y: v0 + (y - p0) / (p1 - p0) * (v1 - v0)
    lin = max(abs(val(y) - 0.125) for _, y in named.get("linear", [(0, 0)]))
    l3 = named.get("llama3", [(0, 0)])
    t.check(rc == 0 and lint is not None and lint.returncode == 0 and sorted(named) == ["linear", "llama3", "ntk", "yarn"]
            and all(len(v) == 64 for v in named.values()), f"rope-bands: xmllint clean, 4 schemes x 64 pairs ({sorted(named)})")
    t.check(lin < 1e-3 and abs(val(l3[0][1]) - 1) < 1e-3 and abs(val(l3[-1][1]) - 0.125) < 1e-3,
            f"rope-bands read back: linear = 1/8 everywhere (worst {lin:.1e}), llama3 fastest pair x1, slowest x1/8 "
            "(tolerance 1e-3: 0.01 px on ~330 px per unit)")
    t.check(bands == ["kept", "blended", "interpolated"] and marks == ["trained 8192", "extended 65536"],
            f"rope-bands: bands {bands}, marks {marks}")
    out = os.path.join(d, "prec.svg")
    rc, _, _ = run("plot", "precision", "--dim", 32, "--max-pos", 4096, "-o", out)
    r = ET.parse(out).getroot()
    named = {p.get("data-name"): path_points(p.get("d")) for p in r.iter(NS + "path") if p.get("class") == "series"}
    yt = [v for v, _ in ticks(r, "y")]
    t.check(rc == 0 and sorted(named) == ["bf16", "f16", "f32"] and len(named["bf16"]) == 16
            and all(abs(np.log10(v) - round(np.log10(v))) < 1e-9 for v in yt),
            f"precision: f32/bf16/f16 series, 16 pairs for bf16, decade ticks {yt}")
    for scheme, want in (("alibi", 8), ("t5", 2)):
        out = os.path.join(d, f"prof-{scheme}.svg")
        rc, _, _ = run("plot", "bias-profile", "--scheme", scheme, "-o", out)
        r = ET.parse(out).getroot()
        n = len([p for p in r.iter(NS + "path") if p.get("class") == "series"])
        t.check(rc == 0 and n == want, f"bias-profile {scheme}: {n} series (want {want})")

    # Bad input
    rc, _, se = run("plot", "spectrum", "--kind", "index", "-o", os.path.join(d, "x.svg"))
    t.check(rc == 2 and "carries no frequencies" in se and not os.path.exists(os.path.join(d, "x.svg")),
            f"spectrum of a baseline: exit {rc}, {se.strip().splitlines()[0]}")
    rc, _, se = run("plot", "curves", "--len", 20, "--at", "5,99", "-o", os.path.join(d, "x.svg"))
    t.check(rc == 2 and "outside the table" in se, f"--at outside the table: exit {rc}, {se.strip().splitlines()[0]}")
    rc, _, se = run("plot", "curves", "--at", "5,x", "-o", os.path.join(d, "x.svg"))
    t.check(rc == 2 and "comma-separated" in se, f"--at garbage: exit {rc}")
    rc, _, se = run("plot", "variance", "-o", "/proc/nope/x.svg")
    t.check(rc == 1 and "x.svg" in se, f"unwritable output: exit {rc}, {se.strip().splitlines()[0]}")
    rc, _, se = run("plot", "rope-bands", "--factor", 1, "-o", os.path.join(d, "x.svg"))
    t.check(rc == 2 and "--factor must be > 1" in se, f"rope-bands --factor 1: exit {rc}")
    rc, _, se = run("plot", "rope-bands", "--factor", "1e300", "-o", os.path.join(d, "x.svg"))
    t.check(rc == 2 and "= 8.192e+303 positions, must be < 2^62" in se and not os.path.exists(os.path.join(d, "x.svg")),
            f"rope-bands --factor 1e300 (extended context past int64): exit {rc}")
    rc, _, se = run("plot", "rope-bands", "--scaling", "dynamic", "-o", os.path.join(d, "x.svg"))
    t.check(rc == 2 and "no scaling bands" in se and not os.path.exists(os.path.join(d, "x.svg")),
            f"rope-bands --scaling dynamic: exit {rc}, {se.strip().splitlines()[0]}")
    rc, _, se = run("plot", "precision", "--kind", "rope", "-o", os.path.join(d, "x.svg"))
    t.check(rc == 2 and "does not apply" in se, f"precision --kind: exit {rc}")
    rc, so, _ = run("plot", "--help")
    t.check(rc == 0 and all(c in so for c in ["heatmap", "curves", "surface", "similarity", "spectrum", "bias", "--cmap"]),
            "plot --help lists every chart and option")
    t.finish()


if __name__ == "__main__":
    main()
