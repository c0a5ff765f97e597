"""`posenc bench`: usage errors name the bad value and exit 2; a small run
prints the memory table and the workload rows with ratios. (Timings are not
judged: speed is measured by the benchmark itself, never by tests.)"""
import os
import tempfile

from common import Checks, run, under_valgrind


def main():
    t = Checks()
    rc, out, _ = run("bench", "--help")
    t.check(rc == 0 and "--threads" in out and "--no-peers" in out, "bench --help lists its options")
    for args, needle in ((["--threads", "0"], "'0'"), (["--threads", "1,x"], "'1,x'"),
                         (["--reps", "3"], "3"), (["--path", "sse9"], "'sse9'"),
                         (["--mem-mib", "1"], "1"), (["--identify-rows", "8"], "8")):
        rc, _, err = run("bench", *args)
        t.check(rc == 2 and needle in err, f"bench {' '.join(args)} -> exit {rc} (want 2), message names {needle}: "
                f"{err.strip().splitlines()[0] if err.strip() else ''}")
    if under_valgrind():  # 32 MiB tables x 18 runs: too slow under memcheck, and nothing new
        t.finish()
    rc, out, err = run("bench", "--only", "sinusoid", "--threads", "1", "--reps", "5", "--no-peers",
                       "--mem-mib", "16", "--path", "scalar")
    rows = [line for line in out.splitlines() if line.startswith("| sinusoid 8192x1024")]
    t.check(rc == 0 and "| memset | 1 |" in out and len(rows) == 4 and all(r.count("|") >= 9 for r in rows),
            f"small bench run: exit {rc}, memory table and {len(rows)} sinusoid rows (want 4) {err.strip()}")
    t.check(all(r.split("|")[8].strip() == "" for r in rows), "the table rows leave the arithmetic column empty")
    t.check(any("planned" in r for r in rows), "issue 29: the sinusoid row with a posenc_sinusoid_plan is there")
    t.check("kernel path scalar" in out, "the forced path is reported in the header")
    # issue 24: the identify group times posenc_rope_identify per cache form and says what it fitted
    rc, out, err = run("bench", "--only", "identify", "--identify-rows", "2048", "--no-peers")
    rows = [line.split("|") for line in out.splitlines() if line.startswith(("| HF ", "| vLLM", "| rotated"))]
    t.check(rc == 0 and len(rows) == 4 and all(float(r[2]) > 0 and float(r[4]) > 0
                                               and "yarn factor 4 base 1e+06, hf-f32" in r[5] for r in rows)
            and all(r[6].strip().startswith("0 differ") for r in rows[:3]),
            f"identify group: 4 forms timed, each fitted as Qwen2.5's YaRN in HF float32: "
            f"{[(r[1].strip(), r[4].strip(), r[6].strip()) for r in rows]} {err.strip()[:200]}")
    # the decode group: one decoding step's RoPE per call, unplanned and planned (posenc_rope_plan), and
    # HF's step in PyTorch from bench/peers.py (a number, or "skipped: why" without torch)
    rc, out, err = run("bench", "--only", "decode", "--reps", "5")
    rows = [line.split("|") for line in out.splitlines() if line.startswith(("| 1 token", "| 32 sequences"))]
    t.check(rc == 0 and len(rows) == 3 and all(float(r[2]) > 0 and float(r[3]) > 0 for r in rows)
            and all(r[5].strip().startswith("rope_decode_torch_hf_") for r in rows)
            and all(r[6].strip().startswith("skipped") or float(r[6]) > 0 for r in rows)
            and "| memset |" not in out,
            f"decode group: 3 rows with unplanned and planned us per call and the peer: "
            f"{[(r[2].strip(), r[3].strip(), r[6].strip()[:40]) for r in rows]} {err.strip()[:200]}")
    # issue 18: scaling columns next to the machine's own, the compute probe, the per-thread timeline
    rc, out, err = run("bench", "--only", "rope", "--threads", "1,2", "--reps", "5", "--no-peers",
                       "--mem-mib", "16", "--timeline")
    rows = [line.split("|") for line in out.split("Timeline:")[0].splitlines()
            if line.startswith("| RoPE in place q[4096x32x128] f32 interleaved | 2 |")]
    t.check(rc == 0 and len(rows) == 1 and len(rows[0]) >= 14 and all(float(rows[0][i]) > 0 for i in (9, 10, 11)),
            f"2-thread row has kernel, memset and memcpy scaling: {rows[0][9:12] if rows else None} {err.strip()}")
    # issue 29: every RoPE row says how far its arithmetic alone would let it go (a cached q)
    rope_rows = [line.split("|") for line in out.split("Timeline:")[0].splitlines() if line.startswith("| RoPE in place")]
    t.check(rc == 0 and len(rope_rows) == 12 and all(float(r[8]) > 0 for r in rope_rows)
            and "arithmetic x ceiling" in out,
            f"the 12 RoPE rows carry an arithmetic x ceiling: {[r[8].strip() for r in rope_rows]}")
    t.check("| memset, streaming stores | 2 |" in out and "| compute (G multiply-adds/s) | 2 |" in out,
            "memory table has streaming memset and the pure-compute probe at 2 threads")
    timeline = [line for line in out.splitlines() if line.startswith("|  | 2 | 1 |")]
    t.check("Timeline:" in out and len(timeline) >= 1, f"--timeline prints worker 1 of the 2-thread run ({len(timeline)} rows)")
    # issue 13.10: the memory group runs analyze/diff/signal as children and prints their peak RSS;
    # its temporary folder is gone afterwards, and no kernel or bandwidth table is printed without a kernel group
    with tempfile.TemporaryDirectory(prefix="posenc-bench-test-") as tmp:
        rc, out, err = run("bench", "--only", "memory", "--memory-rows", "512", "--no-peers",
                           env={**os.environ, "TMPDIR": tmp})
        rows = [line.split("|") for line in out.splitlines() if line.startswith(("| analyze", "| diff", "| signal"))]
        ok = rc == 0 and len(rows) == 3 and all(float(r[4]) > 0 and float(r[5]) > 0 for r in rows)
        t.check(ok, f"memory group: exit {rc}, 3 rows with wall ms, peak RSS MB and RSS/input: "
                f"{[r[1].strip() + ' ' + r[4].strip() + ' MB' for r in rows]} {err.strip()[:200]}")
        t.check("| memset |" not in out and "RoPE" not in out and os.listdir(tmp) == [],
                f"memory group alone: no bandwidth or kernel table; temporary folder removed ({os.listdir(tmp)})")
    rc, out, _ = run("bench", "--help")
    t.check("memory" in out and "--memory-rows" in out and "decode" in out,
            "bench --help names the memory and decode groups and --memory-rows")
    t.finish()


if __name__ == "__main__":
    main()
