"""`posenc report` in a real headless browser: Debian's chromium driven by Python playwright
(the test environment's; nothing is downloaded). Checks: no console errors and no network
requests, the hover readout shows the right value for known cells (also after zooming), the
3-D view redraws after a drag, the position tool draws the chosen positions, every table is
selectable, and a full-page screenshot is a PNG that is not blank.
Exit 0 all passed, 1 a check failed, 77 skipped (chromium or playwright absent)."""
import math
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

CHROMIUM = os.environ.get("POSENC_CHROMIUM", "/usr/bin/chromium")
if not os.path.exists(CHROMIUM):
    print("SKIP: no chromium at %s (apt-get install chromium, or scripts/deps --test)" % CHROMIUM)
    sys.exit(77)
try:
    from playwright.sync_api import sync_playwright
except ImportError:
    print("SKIP: Python playwright is not installed (scripts/venv installs it into .venv)")
    sys.exit(77)

HERE = os.path.dirname(os.path.abspath(__file__))
BIN = os.environ.get("POSENC_BIN", os.path.join(HERE, "..", "..", "build", "posenc"))
passed = failed = 0


def check(ok, message):
    global passed, failed
    print(("  ok   " if ok else "  FAIL ") + message)
    if ok:
        passed += 1
    else:
        failed += 1


def expected(p, ch):
    """The default report's first table: sinusoidal 128 x 64, vaswani, interleaved."""
    w = math.pow(10000, -2 * (ch // 2) / 64)
    return math.cos(p * w) if ch % 2 else math.sin(p * w)


def close(value, want):
    # 7 significant digits are printed: tolerance 5e-7 relative (+1e-9 for values near 0)
    return abs(value - want) <= 5e-7 * abs(want) + 1e-9


def png_distinct_bytes(png):
    """How many distinct byte values the decoded pixel rows hold (1-2 for a blank page)."""
    pos, idat = 8, b""
    while pos < len(png):
        length, kind = struct.unpack(">I4s", png[pos:pos + 8])
        if kind == b"IDAT":
            idat += png[pos + 8:pos + 8 + length]
        pos += 12 + length
    return len(set(zlib.decompress(idat)))


READOUT = re.compile(r"position (\d+), channel (\d+), value (\S+)")


def run(page, html):
    errors, requests = [], []
    page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.on("request", lambda r: None if r.url.startswith(("file:", "data:")) else requests.append(r.url))
    page.goto("file://" + html, wait_until="load")
    page.wait_for_function("() => window.posencReport && window.posencReport.heatmaps.length > 0")

    def hover(row, col):
        page.evaluate("() => document.querySelector('.heatmap-tool').scrollIntoView()")
        c = page.evaluate("([r, k]) => window.posencReport.heatmaps[0].cellCenter(r, k)", [row, col])
        page.mouse.move(c["x"], c["y"])
        return page.evaluate("() => document.querySelector('.heatmap-tool .readout').textContent")

    for row, col in [(5, 3), (100, 0), (37, 12), (127, 63)]:
        text = hover(row, col)
        m = READOUT.search(text)
        want = expected(row, col)
        ok = bool(m) and int(m[1]) == row and int(m[2]) == col and close(float(m[3]), want)
        check(ok, 'hover cell (%d, %d): "%s" (want value %.9g, tolerance 5e-7 rel: 7 digits shown)'
              % (row, col, text, want))

    # Zoom in (wheel at the cursor), then the readout must still name the cell under the mouse.
    before = page.evaluate("() => window.posencReport.heatmaps[0].view.zoom")
    box = page.locator(".heatmap-tool canvas").bounding_box()
    page.mouse.move(box["x"] + 120, box["y"] + 80)
    for _ in range(4):
        page.mouse.wheel(0, -120)
    zoom = page.evaluate("() => window.posencReport.heatmaps[0].view.zoom")
    text = hover(20, 9)
    m = READOUT.search(text)
    check(zoom > before and bool(m) and int(m[1]) == 20 and int(m[2]) == 9 and close(float(m[3]), expected(20, 9)),
          'after zooming %s -> %.2fx: "%s"' % (before, zoom, text))

    # 3-D surface: a drag turns it; the canvas redraws and its pixels change.
    page.evaluate("() => document.querySelector('.surface-tool').scrollIntoView()")
    canvas = page.locator(".surface-tool canvas")
    draws0 = int(canvas.get_attribute("data-draws"))
    pixels0 = canvas.evaluate("(c) => c.toDataURL()")
    sb = canvas.bounding_box()
    cx, cy = sb["x"] + sb["width"] / 2, sb["y"] + sb["height"] / 2
    page.mouse.move(cx, cy)
    page.mouse.down()
    page.mouse.move(cx + 90, cy + 30, steps=6)
    page.mouse.up()
    draws1 = int(canvas.get_attribute("data-draws"))
    pixels1 = canvas.evaluate("(c) => c.toDataURL()")
    check(draws1 > draws0 and pixels1 != pixels0,
          "3-D surface redrew after a drag (draws %d -> %d, pixels changed: %s)" % (draws0, draws1, pixels1 != pixels0))

    # Position comparison: type positions, the chart draws one series each.
    field = page.locator(".compare-tool input")
    field.fill("3, 7, 99")
    drawn = page.evaluate("() => [...document.querySelectorAll('.compare-tool path.series')]"
                          ".map((p) => p.getAttribute('data-position'))")
    check(",".join(drawn) == "3,7,99", "compare tool draws the chosen positions: %s" % ",".join(drawn))
    field.fill("3, 5000")
    note = page.evaluate("() => document.querySelector('.compare-tool .note').textContent")
    check("5000" in note, 'an out-of-range position is named, not drawn: "%s"' % note)

    # Every table can be chosen in every tool without an error, and the readout follows the choice.
    count = page.evaluate("() => document.querySelectorAll('.heatmap-tool select option').length")
    for i in range(count - 1, -1, -1):
        for tool in ("heatmap", "surface", "compare"):
            page.select_option(".%s-tool select" % tool, str(i))
    idx = hover(3, 2)  # back on table 0 (sinusoidal) after the loop
    v32 = re.search(r"value (\S+)", idx)
    check(count == 5 and re.search(r"position 3, channel 2,", idx) is not None and bool(v32)
          and abs(float(v32[1]) - expected(3, 2)) <= 5e-7 * abs(expected(3, 2)),
          'all %d tables selectable in the heat map, surface and compare tools; readout "%s"' % (count, idx))
    page.select_option(".heatmap-tool select", "3")  # index baseline: value = position
    base = hover(42, 7)
    check(re.search(r"position 42, channel 7, value 42$", base) is not None, 'index baseline readout: "%s"' % base)

    shot = page.screenshot(full_page=True)
    out = os.environ.get("POSENC_SCREENSHOT")
    if out:
        with open(out, "wb") as f:
            f.write(shot)
    distinct = png_distinct_bytes(shot)
    check(len(shot) > 50000 and shot[1:4] == b"PNG" and distinct > 16,
          "full-page screenshot: %d bytes, %d distinct byte values in its pixels (a blank page has 1-2)"
          % (len(shot), distinct))
    check(not errors, "no console errors (%d%s)" % (len(errors), ": " + " | ".join(errors[:3]) if errors else ""))
    check(not requests, "no network requests (%d%s)" % (len(requests), ": " + " ".join(requests[:3]) if requests else ""))


def main():
    folder = tempfile.mkdtemp(prefix="posenc-browser-")
    try:
        html = os.path.join(folder, "report.html")
        done = subprocess.run([BIN, "report", "-o", html], capture_output=True, text=True)
        check(done.returncode == 0 and "open: " in done.stdout and os.path.exists(html),
              'posenc report (no flags) wrote %s and printed "%s"' % (html, done.stdout.strip()))
        if done.returncode != 0:
            print(done.stderr)
            return 1
        with open(html, encoding="utf-8") as f:
            text = f.read()
        check(re.search(r"""(src|href)\s*=\s*["'](https?:)?//""", text, re.I) is None,
              "no http(s):// or protocol-relative src/href in the file")
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"])
            try:
                run(browser.new_page(viewport={"width": 1280, "height": 900}), html)
            finally:
                browser.close()
    finally:
        shutil.rmtree(folder, ignore_errors=True)  # leave nothing behind, whatever the exit
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
