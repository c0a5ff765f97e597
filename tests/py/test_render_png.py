"""`posenc plot heatmap|bias -o X.png`: decode the PNG (zlib + struct, independent of
libpng) and check dimensions, the colormap colour of known cells, the colorbar,
NaN cells in grey, block averaging (and that it is stated), and bad input."""
import os
import re
import struct
import zlib

import numpy as np

from common import Checks, run, tmpdir

# The colormap anchors (ColorBrewer RdBu-11 and viridis at 9 stops) are the spec:
# at an anchor the colour must be exact; between anchors linear interpolation.
RDBU = ["67001f", "b2182b", "d6604d", "f4a582", "fddbc7", "f7f7f7", "d1e5f0", "92c5de", "4393c3", "2166ac", "053061"]
VIRIDIS = ["440154", "472d7b", "3b528b", "2c728e", "21908c", "27ad81", "5dc863", "aadc32", "fde725"]
GREY = (128, 128, 128)


def rgb(h):
    return tuple(int(h[i:i + 2], 16) for i in (0, 2, 4))


def cmap(stops, t):
    s = [rgb(h) for h in stops]
    x = min(max(t, 0), 1) * (len(s) - 1)
    i = min(int(x), len(s) - 2)
    f = x - i
    return tuple(int(np.floor(s[i][c] + f * (s[i + 1][c] - s[i][c]) + 0.5)) for c in range(3))


def decode_png(path, rows=None):
    """Return (pixels[h][w][3] uint8, text chunks dict) for an 8-bit RGB PNG; with rows,
    only the first rows are decoded (the rest stay 0) since this pure-Python unfilter is slow."""
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", "not a PNG signature"
    pos, idat, text = 8, b"", {}
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        crc = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])[0]
        assert zlib.crc32(kind + body) & 0xFFFFFFFF == crc, f"bad CRC in {kind}"
        if kind == b"IHDR":
            w, h, depth, ctype = struct.unpack(">IIBB", body[:10])
            assert depth == 8 and ctype == 2, f"expected 8-bit RGB, got depth {depth} type {ctype}"
        elif kind == b"IDAT":
            idat += body
        elif kind == b"tEXt":
            k, v = body.split(b"\0", 1)
            text[k.decode()] = v.decode("latin-1")
        pos += 12 + n
    raw = zlib.decompress(idat)
    stride = w * 3
    out = np.zeros((h, stride), dtype=np.int32)
    prev = np.zeros(stride, dtype=np.int32)
    for y in range(h if rows is None else min(rows, h)):
        f = raw[y * (stride + 1)]
        line = np.frombuffer(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)], dtype=np.uint8).astype(np.int32)
        if f in (0, 1, 2):  # None, Sub, Up: whole-row numpy (Sub = running sum per channel)
            cur = line if f == 0 else (line + prev) & 255 if f == 2 else np.cumsum(line.reshape(w, 3), axis=0).reshape(-1) & 255
            out[y] = cur
            prev = cur
            continue
        cur = np.zeros(stride, dtype=np.int32)
        for x in range(stride):
            a = cur[x - 3] if x >= 3 else 0
            b = prev[x]
            c = prev[x - 3] if x >= 3 else 0
            if f == 0: p = 0
            elif f == 1: p = a
            elif f == 2: p = b
            elif f == 3: p = (a + b) // 2
            else:
                pa, pb, pc = abs(b - c), abs(a - c), abs(a + b - 2 * c)
                p = a if pa <= pb and pa <= pc else (b if pb <= pc else c)
            cur[x] = (line[x] + p) & 255
        out[y] = cur
        prev = cur
    return out.reshape(h, w, 3).astype(np.uint8), text


def px(img, y, x):
    return tuple(int(v) for v in img[y, x])


def layout(text):
    """Where the cells and the colorbar are, from the PNG's "Layout" tEXt chunk."""
    m = re.match(r"cells x=(\d+) y=(\d+) w=(\d+) h=(\d+) sx=(\d+) sy=(\d+); colorbar x=(\d+) w=(\d+)", text.get("Layout", ""))
    assert m, f"no Layout chunk: {text}"
    return dict(zip(("x", "y", "w", "h", "sx", "sy", "bar_x", "bar_w"), map(int, m.groups())))


def cell(img, lay, r, c):
    """Colour at the centre of cell (r, c): cells are sx x sy px."""
    return px(img, lay["y"] + r * lay["sy"] + lay["sy"] // 2, lay["x"] + c * lay["sx"] + lay["sx"] // 2)


def ink(img, y0, y1, x0, x1, below=110):
    """Dark pixels (text, tick marks) in a rectangle: every channel < below."""
    part = img[max(y0, 0):y1, max(x0, 0):x1]
    return int(np.sum(np.all(part < below, axis=2)))


def main():
    t = Checks()
    d = tmpdir()
    # A small table with known values: RdBu range is +-max|v| = +-2, centred on 0.
    table = np.array([[-2, -1, 0, 1, 2, np.nan],
                      [0.5, -0.5, 2, -2, np.inf, 0],
                      [0, 0, 0, 0, 0, 0],
                      [1, 1, 1, 1, 1, 1]], dtype=np.float32)
    src = os.path.join(d, "t.npy")
    np.save(src, table)
    out = os.path.join(d, "h.png")
    rc, _, se = run("plot", "heatmap", src, "-o", out)
    img, text = decode_png(out)
    lay = layout(text)
    s = lay["sx"]  # a tiny table is drawn about 320 px across: 320 // 6 = 53 px per cell
    t.check(rc == 0 and s == 53 and lay["sy"] == s and lay["w"] == 6 * s and lay["h"] == 4 * s and lay["bar_w"] > 0,
            f"4x6 table -> cells {lay['w']}x{lay['h']} px at ({lay['x']},{lay['y']}), {s} px per cell, colorbar at x={lay['bar_x']}")
    worst = 0
    for (r, c) in [(0, 0), (0, 1), (0, 2), (0, 3), (0, 4), (1, 0), (1, 1), (1, 2), (1, 3), (3, 0)]:
        want = cmap(RDBU, (float(table[r, c]) + 2) / 4)
        got = cell(img, lay, r, c)
        worst = max(worst, max(abs(a - b) for a, b in zip(got, want)))
    t.check(worst == 0, f"RdBu cells: -2 -> #67001f, 0 -> #f7f7f7, +2 -> #053061, between linear (worst channel diff {worst}, tolerance 0)")
    t.check(cell(img, lay, 0, 5) == GREY and cell(img, lay, 1, 4) == GREY, "NaN and inf cells are grey #808080")
    t.check("NaN or inf" in se and "2 cell(s)" in se, f"the NaN/inf cells are reported: {se.strip().splitlines()[0]}")
    bx, top, bottom = lay["bar_x"] + 3, lay["y"], lay["y"] + lay["h"] - 1
    t.check(px(img, top, bx) == rgb(RDBU[-1]) and px(img, bottom, bx) == rgb(RDBU[0])
            and px(img, top, lay["x"] + lay["w"] + 2) == (255, 255, 255),
            "colorbar strip: top = max colour (#053061), bottom = min colour (#67001f), white gap before it")
    t.check("from -2 to 2" in text.get("Comment", "") and "rdbu" in text.get("Comment", ""),
            f"tEXt records the range: {text.get('Comment')}")
    # Text drawn with cairo: dark anti-aliased glyph pixels where the title, the tick
    # labels, the axis names and the colorbar numbers go (and none inside the cells).
    title = ink(img, 0, lay["y"] - 6, 0, img.shape[1])
    yticks = ink(img, lay["y"], lay["y"] + lay["h"], 0, lay["x"] - 6)
    xticks = ink(img, lay["y"] + lay["h"] + 6, img.shape[0], lay["x"], lay["x"] + lay["w"])
    bar_numbers = ink(img, lay["y"] - 8, lay["y"] + lay["h"] + 8, lay["bar_x"] + lay["bar_w"] + 6, img.shape[1])
    t.check(title > 300 and yticks > 60 and xticks > 150 and bar_numbers > 60,
            f"text is drawn: dark pixels in the title band {title}, y tick labels + axis name {yticks}, "
            f"x tick labels + axis name {xticks}, colorbar numbers {bar_numbers} (each must be > 60..300)")
    # the colorbar numbers sit at their values: -2, -1, 0, 1, 2 -> five label rows, evenly spaced
    rows = [y for y in range(lay["y"] - 8, lay["y"] + lay["h"] + 8)
            if ink(img, y, y + 1, lay["bar_x"] + lay["bar_w"] + 7, img.shape[1], below=250) > 0]
    groups = [g for g in np.split(np.array(rows), np.where(np.diff(rows) > 1)[0] + 1) if len(g)]
    centres = [float(np.mean(g)) for g in groups]
    want = [lay["y"] + (lay["h"] - 1) * k / 4 for k in range(5)]
    t.check(len(centres) == 5 and max(abs(a - b) for a, b in zip(centres, want)) < 4,
            f"5 colorbar labels (2, 1, 0, -1, -2) at rows {[round(c) for c in centres]}, ticks at {[round(w) for w in want]} (within 4 px)")

    rc, _, _ = run("plot", "heatmap", src, "--cmap", "viridis", "--no-colorbar", "-o", out)
    img, text = decode_png(out)
    lay = layout(text)
    ok = lay["bar_w"] == 0 and cell(img, lay, 0, 0) == rgb(VIRIDIS[0]) and cell(img, lay, 0, 4) == rgb(VIRIDIS[-1]) \
        and cell(img, lay, 0, 2) == rgb(VIRIDIS[4])
    t.check(rc == 0 and ok, "viridis, no colorbar: min #440154, mid #21908c, max #fde725 (exact)")
    rc, _, _ = run("plot", "heatmap", src, "--vmin", 0, "--vmax", 1, "--cmap", "viridis", "-o", out)
    img, text = decode_png(out)
    lay = layout(text)
    t.check(rc == 0 and cell(img, lay, 0, 0) == rgb(VIRIDIS[0]) and cell(img, lay, 0, 3) == rgb(VIRIDIS[-1])
            and cell(img, lay, 2, 0) == rgb(VIRIDIS[0]), "--vmin 0 --vmax 1 clamps -2 to the bottom colour and 1 to the top")

    # Large table: averaged in blocks, and the reduction is said (stderr and PNG text).
    big = np.zeros((3000, 3), dtype=np.float64)
    big[:, 0] = (np.arange(3000) % 6) - 2.5  # each block of 6 rows averages to 0
    big[:, 1], big[:, 2] = 1.0, -1.0
    np.save(src, big)
    rc, _, se = run("plot", "heatmap", src, "--max-cells", 512, "-o", out)
    img, text = decode_png(out, rows=200)  # the cells checked are in row 10 (below a ~60 px title)
    lay = layout(text)
    t.check(rc == 0 and lay["h"] == 500 and lay["w"] >= 320 and "averages of 6 x 1 blocks" in se and "mean of 6 x 1" in text["Description"],
            f"3000 rows -> 500 block means of 6 rows, stated: {se.strip()}; 3 columns widened to {lay['w']} px ({lay['sx']} px each)")
    t.check(cell(img, lay, 10, 0) == rgb(RDBU[5]) and cell(img, lay, 10, 1) == rgb(RDBU[-1])
            and cell(img, lay, 10, 2) == rgb(RDBU[0]),
            "block means are drawn: column of +-2.5 zig-zag averages to 0 (white), +1 blue, -1 red")

    # From encoding flags: sinusoidal cell (p=0, channel 1) = cos 0 = 1 = the top of RdBu.
    rc, _, _ = run("plot", "heatmap", "--len", 8, "--dim", 16, "-o", out)
    img, text = decode_png(out)
    lay = layout(text)
    t.check(rc == 0 and lay["h"] * 2 == lay["w"] and cell(img, lay, 0, 1) == rgb(RDBU[-1]) and cell(img, lay, 0, 0) == rgb(RDBU[5]),
            "sinusoidal 8x16: pe[0][1] = cos 0 = 1 -> #053061, pe[0][0] = sin 0 = 0 -> #f7f7f7")

    # A bias matrix file draws the same way.
    bias = -np.abs(np.arange(8)[:, None] - np.arange(8)[None, :]).astype(np.float32)
    np.save(src, bias)
    rc, _, _ = run("plot", "bias", src, "-o", out)
    img, text = decode_png(out)
    lay = layout(text)
    t.check(rc == 0 and cell(img, lay, 0, 0) == rgb(RDBU[5]) and cell(img, lay, 0, 7) == rgb(RDBU[0]),
            "bias map: diagonal 0 is white, |i-j| = 7 (the most negative) is #67001f")

    # ALiBi head 0 of 8 (slope 1/2), causal, 8 positions: bias m(j-i) in [-3.5, 0], future keys masked grey.
    rc, _, se = run("plot", "bias", "--scheme", "alibi", "--heads", 8, "--head", 0, "--len", 8, "-o", out)
    img, text = decode_png(out)
    lay = layout(text)
    c = lambda r, k: cell(img, lay, r, k)
    t.check(rc == 0 and c(7, 0) == rgb(RDBU[0]) and c(3, 3) == rgb(RDBU[5]) and c(0, 1) == GREY
            and c(7, 3) == cmap(RDBU, (-2 + 3.5) / 7), "ALiBi map: (7,0) = -3.5 -> #67001f, diagonal 0 white, j > i grey, (7,3) = -2 interpolated")
    # T5 buckets (viridis): bucket 0 on the diagonal, the largest bucket in the corner
    rc, _, _ = run("plot", "bias", "--scheme", "t5", "--len", 8, "-o", out)
    img, text = decode_png(out)
    lay = layout(text)
    t.check(rc == 0 and cell(img, lay, 0, 0) == rgb(VIRIDIS[0]) and cell(img, lay, 0, 7) == rgb(VIRIDIS[-1]),
            "T5 bucket map: diagonal bucket 0 -> #440154, (0,7) bucket 23 (the max here) -> #fde725")

    # Bad input: message, non-zero exit, no file left behind and an existing file untouched.
    np.save(src, table)
    keep = os.path.join(d, "keep.png")
    open(keep, "wb").write(b"previous")
    bad = [
        (("plot", "heatmap", src, "--cmap", "jet", "-o", keep), 2, "unknown --cmap 'jet'"),
        (("plot", "heatmapz", src, "-o", keep), 2, "unknown chart 'heatmapz'"),
        (("plot", "heatmap", src, "-o", os.path.join(d, "no/such/dir/h.png")), 1, "h.png"),
        (("plot", "curves", "--dim", 8, "-o", keep), 2, "SVG only"),
        (("plot", "heatmap", src, "-o", os.path.join(d, "h.gif")), 2, "picture format"),
        (("plot", "heatmap", "--len", 300000, "--dim", 64, "-o", keep), 2, "more than the"),
        (("plot", "heatmap", "--base", "nan", "-o", keep), 2, "finite number"),
        (("plot", "heatmap", "--len", 0, "-o", keep), 2, "--len must be"),
        (("plot", "heatmap", src, "--vmin", 1, "--vmax", 0, "-o", keep), 2, "--vmin must be less"),
        (("plot", "bias", "--head", 8, "--heads", 8, "-o", keep), 2, "--head must be in [0, 8)"),
        (("plot", "bias", "--len", 5000, "-o", keep), 2, "--len must be in [1, 4096]"),
        (("plot", "bias", "--scheme", "t5", "--buckets", 3, "-o", keep), 2, "num_buckets"),
        (("plot", "bias", src, "--heads", 4, "-o", keep), 2, "--heads does not apply"),
        (("plot", "heatmap", "--kind", "learned", "--scaling", "yarn", "-o", keep), 2, "--scaling applies to --kind rope"),
        (("plot", "heatmap", "--kind", "rope", "--scaling", "warp", "-o", keep), 2, "warp"),
    ]
    np.save(os.path.join(d, "empty.npy"), np.zeros((0, 4), dtype=np.float32))
    bad.append((("plot", "heatmap", os.path.join(d, "empty.npy"), "-o", keep), 2, "empty"))
    np.save(os.path.join(d, "nan.npy"), np.full((3, 3), np.nan))
    bad.append((("plot", "heatmap", os.path.join(d, "nan.npy"), "-o", keep), 1, "no finite value"))
    bad[-2] = (bad[-2][0], 2, "empty table (shape 0 x 4)")
    np.save(os.path.join(d, "cube.npy"), np.zeros((2, 2, 2)))
    bad.append((("plot", "heatmap", os.path.join(d, "cube.npy"), "-o", keep), 2, "got rank 3"))
    for args, want_rc, want_msg in bad:
        rc, _, se = run(*args)
        first = se.strip().splitlines()[0] if se.strip() else ""
        t.check(rc == want_rc and want_msg in se and open(keep, "rb").read() == b"previous",
                f"{' '.join(map(str, args[:3]))} ...: exit {rc} (want {want_rc}), '{first}'")
    leftovers = [f for f in os.listdir(d) if f.startswith(".") or f.endswith(".tmp") or f == "h.gif"]
    t.check(not leftovers and not os.path.exists(os.path.join(d, "no")), f"no partial or temporary file left ({leftovers})")
    t.finish()


if __name__ == "__main__":
    main()
