// test_report.mjs: `posenc report` in a real headless browser (Debian's chromium,
// driven by playwright-core; nothing is downloaded). Checks: no console errors and
// no network requests, the hover readout shows the right value for known cells
// (also after zooming), the 3-D view redraws after a drag, the position tool
// draws the chosen positions, and a screenshot is a non-empty PNG.
// Exit 0 all passed, 1 a check failed, 77 skipped (chromium or playwright-core absent).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const chromium = process.env.POSENC_CHROMIUM || '/usr/bin/chromium';
if (!existsSync(chromium)) {
  console.log(`SKIP: no chromium at ${chromium} (apt-get install chromium, or scripts/deps)`);
  process.exit(77);
}
let playwright;
try {
  playwright = await import('playwright-core');
} catch (e) {
  console.log('SKIP: playwright-core is not installed (run `npm ci` in tests/browser, as scripts/deps does)');
  process.exit(77);
}
const bin = process.env.POSENC_BIN || new URL('../../build/posenc', import.meta.url).pathname;
let passed = 0, failed = 0;
function check(ok, message) {
  console.log((ok ? '  ok   ' : '  FAIL ') + message);
  ok ? passed++ : failed++;
}

const dir = mkdtempSync(join(tmpdir(), 'posenc-browser-'));
process.on('exit', () => rmSync(dir, { recursive: true, force: true })); // leave nothing behind, whatever the exit
const html = join(dir, 'report.html');
const stdout = execFileSync(bin, ['report', '-o', html], { encoding: 'utf8' });
check(stdout.includes('open: ') && existsSync(html), `posenc report (no flags) wrote ${html} and printed "${stdout.trim()}"`);
const page_text = readFileSync(html, 'utf8');
check(!/(src|href)\s*=\s*["'](https?:)?\/\//i.test(page_text), 'no http(s):// or protocol-relative src/href in the file');

const browser = await playwright.chromium.launch({ executablePath: chromium, args: ['--no-sandbox', '--disable-gpu'] });
try {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  const errors = [], requests = [];
  page.on('console', (m) => { if (m.type() === 'error') errors.push(m.text()); });
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('request', (r) => { if (!r.url().startsWith('file:') && !r.url().startsWith('data:')) requests.push(r.url()); });
  await page.goto('file://' + html, { waitUntil: 'load' });
  await page.waitForFunction(() => window.posencReport && window.posencReport.heatmaps.length > 0);

  // Hover readout: the default report's first table is sinusoidal 128 x 64, vaswani, interleaved.
  const expected = (p, ch) => {
    const k = Math.floor(ch / 2), w = Math.pow(10000, -2 * k / 64);
    return ch % 2 ? Math.cos(p * w) : Math.sin(p * w);
  };
  async function hover(row, col) {
    await page.evaluate(() => document.querySelector('.heatmap-tool').scrollIntoView());
    const c = await page.evaluate(([r, k]) => window.posencReport.heatmaps[0].cellCenter(r, k), [row, col]);
    await page.mouse.move(c.x, c.y);
    return page.evaluate(() => document.querySelector('.heatmap-tool .readout').textContent);
  }
  // 7 significant digits are printed: tolerance 5e-7 relative (+1e-9 for values near 0)
  for (const [row, col] of [[5, 3], [100, 0], [37, 12], [127, 63]]) {
    const text = await hover(row, col);
    const m = /position (\d+), channel (\d+), value (\S+)/.exec(text);
    const want = expected(row, col);
    const ok = m && +m[1] === row && +m[2] === col && Math.abs(+m[3] - want) <= 5e-7 * Math.abs(want) + 1e-9;
    check(ok, `hover cell (${row}, ${col}): "${text}" (want value ${want.toPrecision(9)}, tolerance 5e-7 rel: 7 digits shown)`);
  }
  // Zoom in (wheel at the cursor), then the readout must still name the cell under the mouse.
  const before = await page.evaluate(() => window.posencReport.heatmaps[0].view.zoom);
  const box = await page.locator('.heatmap-tool canvas').boundingBox();
  await page.mouse.move(box.x + 120, box.y + 80);
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -120);
  const zoom = await page.evaluate(() => window.posencReport.heatmaps[0].view.zoom);
  const text = await hover(20, 9);
  const m = /position (\d+), channel (\d+), value (\S+)/.exec(text);
  check(zoom > before && m && +m[1] === 20 && +m[2] === 9 && Math.abs(+m[3] - expected(20, 9)) <= 5e-7 * Math.abs(expected(20, 9)) + 1e-9,
    `after zooming ${before} -> ${zoom.toFixed(2)}x: "${text}"`);

  // 3-D surface: a drag turns it; the canvas redraws and its pixels change.
  await page.evaluate(() => document.querySelector('.surface-tool').scrollIntoView());
  const canvas = page.locator('.surface-tool canvas');
  const draws0 = +(await canvas.getAttribute('data-draws'));
  const pixels0 = await canvas.evaluate((c) => c.toDataURL());
  const sb = await canvas.boundingBox();
  await page.mouse.move(sb.x + sb.width / 2, sb.y + sb.height / 2);
  await page.mouse.down();
  await page.mouse.move(sb.x + sb.width / 2 + 90, sb.y + sb.height / 2 + 30, { steps: 6 });
  await page.mouse.up();
  const draws1 = +(await canvas.getAttribute('data-draws'));
  const pixels1 = await canvas.evaluate((c) => c.toDataURL());
  check(draws1 > draws0 && pixels1 !== pixels0, `3-D surface redrew after a drag (draws ${draws0} -> ${draws1}, pixels changed: ${pixels1 !== pixels0})`);

  // Position comparison: type positions, the chart draws one series each.
  const input = page.locator('.compare-tool input');
  await input.fill('3, 7, 99');
  const drawn = await page.evaluate(() => [...document.querySelectorAll('.compare-tool path.series')].map((p) => p.getAttribute('data-position')));
  check(drawn.join(',') === '3,7,99', `compare tool draws the chosen positions: ${drawn}`);
  await input.fill('3, 5000');
  const note = await page.evaluate(() => document.querySelector('.compare-tool .note').textContent);
  check(note.includes('5000'), `an out-of-range position is named, not drawn: "${note}"`);

  // Every table can be chosen in every tool without an error, and the readout follows the choice.
  const count = await page.evaluate(() => document.querySelectorAll('.heatmap-tool select option').length);
  for (let i = count - 1; i >= 0; i--) {
    await page.selectOption('.heatmap-tool select', String(i));
    await page.selectOption('.surface-tool select', String(i));
    await page.selectOption('.compare-tool select', String(i));
  }
  const idx = await hover(3, 2); // back on table 0 (sinusoidal) after the loop
  const v32 = /value (\S+)/.exec(idx);
  check(count === 5 && /position 3, channel 2,/.test(idx) && v32 && Math.abs(+v32[1] - expected(3, 2)) <= 5e-7 * Math.abs(expected(3, 2)),
    `all ${count} tables selectable in the heat map, surface and compare tools; readout "${idx}"`);
  await page.selectOption('.heatmap-tool select', '3'); // index baseline: value = position
  const base = await hover(42, 7);
  check(/position 42, channel 7, value 42$/.test(base), `index baseline readout: "${base}"`);

  const shot = await page.screenshot({ fullPage: true });
  const out = process.env.POSENC_SCREENSHOT || join(dir, 'report.png');
  writeFileSync(out, shot);
  check(shot.length > 50000 && shot.subarray(1, 4).toString() === 'PNG', `full-page screenshot ${out}: ${shot.length} bytes`);
  check(errors.length === 0, `no console errors (${errors.length}${errors.length ? ': ' + errors.slice(0, 3).join(' | ') : ''})`);
  check(requests.length === 0, `no network requests (${requests.length}${requests.length ? ': ' + requests.slice(0, 3).join(' ') : ''})`);
} finally {
  await browser.close();
}
console.log(`${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
