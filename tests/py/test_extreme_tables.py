"""Extreme tables through every picture (issue 26 items 4 and 12): a constant
table of 1e16 (whose tick step is below the values' precision, so a `v += step`
loop never ended), a range of a few ulps, a range near the largest double, 1 x 1,
1 x N, N x 1 and an all-zero 64 x 64 table. Each `plot` chart and `report` must
finish within the timeout, exit 0 (or refuse by name with exit 1/2 where the picture
cannot exist), and write no "nan"/"inf" into an SVG coordinate. `report` draws what
it can: a section the table cannot give is left out, said on stderr and the page."""
import os
import re
import subprocess

import numpy as np

from common import BIN, Checks, tmpdir

c = Checks()
d = tmpdir()
TIMEOUT = 60


def posenc(*args):
    try:
        p = subprocess.run([BIN, *map(str, args)], capture_output=True, text=True, timeout=TIMEOUT)
        return p.returncode, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", ""


const = np.full((8, 8), 1e16)
near = const.copy()
near[0, 0] = 1e16 + 2
tables = {
    "const1e16": const,
    "constneg1e16": -const,
    "near1e16": near,
    "ulps": 1 + np.arange(64).reshape(8, 8) * 2.0 ** -52,
    "huge": np.array([[-1.7e308, 1.7e308], [0.0, 1.0]]),
    "onebyone": np.ones((1, 1)),
    "onerow": np.linspace(-1, 1, 8).reshape(1, 8),
    "onecol": np.linspace(-1, 1, 8).reshape(8, 1),
    "zeros64": np.zeros((64, 64)),
}
BAD_NUMBER = re.compile(r'="[^"]*\b(nan|inf)\b', re.IGNORECASE)

for name, values in tables.items():
    path = os.path.join(d, name + ".npy")
    np.save(path, values)
    for chart in ("heatmap", "curves", "similarity", "spectrum", "variance", "norm", "surface"):
        for ext in ("png", "svg") if chart == "heatmap" else ("svg",):
            for cmap in ("rdbu", "viridis") if chart in ("heatmap", "surface") else (None,):
                out = os.path.join(d, f"{name}-{chart}-{cmap}.{ext}")
                args = ["plot", chart, path, "-o", out] + (["--cmap", cmap] if cmap else [])
                rc, err = posenc(*args)
                bad = rc == 0 and ext == "svg" and BAD_NUMBER.search(open(out, errors="replace").read())
                # a chart the table cannot give is refused by name (exit 1 or 2), never hung
                ok = rc == 0 and os.path.exists(out) and not bad or rc in (1, 2) and err.strip() and not os.path.exists(out)
                c.check(ok, f"[W1] plot {chart} {name} {cmap or ''} .{ext}: exit {rc}{' NaN in SVG' if bad else ''}"
                            f"{': ' + err.strip().splitlines()[0] if rc not in (0, 'timeout') else ''}")
    out = os.path.join(d, name + ".html")
    rc, err = posenc("report", path, "-o", out)
    html = open(out, errors="replace").read() if rc == 0 else ""
    left_out = "left out" in err
    c.check(rc == 0 and "</html>" in html and (not left_out or "Left out" in html),
            f"report {name}: exit {rc}, written{' (sections left out, said on stderr and the page)' if left_out else ''}")

# the cases the issue names: the surface of a 1 x 1 table and the similarity of zero rows are
# left out; the heat maps of both are still in the report
for name, section in (("onebyone", "3-D surface"), ("zeros64", "Similarity")):
    rc, err = posenc("report", os.path.join(d, name + ".npy"), "-o", os.path.join(d, "again.html"))
    html = open(os.path.join(d, "again.html")).read() if rc == 0 else ""
    c.check(rc == 0 and f"'{section}' section is left out" in err and "heatmap-png" in html,
            f"[W2] report {name}: the {section} section is left out, the heat map drawn: {err.strip().splitlines()[-1]}")
c.finish()
