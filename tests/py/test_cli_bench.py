"""`posenc bench`: usage errors name the bad value and exit 2; a small run
prints the memory table and the workload rows with ratios. (Timings are not
judged: speed is measured by the benchmark itself, never by tests.)"""
from common import Checks, run, under_valgrind


def main():
    t = Checks()
    rc, out, _ = run("bench", "--help")
    t.check(rc == 0 and "--threads" in out and "--no-peers" in out, "bench --help lists its options")
    for args, needle in ((["--threads", "0"], "'0'"), (["--threads", "1,x"], "'1,x'"),
                         (["--reps", "3"], "3"), (["--path", "sse9"], "'sse9'"),
                         (["--mem-mib", "1"], "1")):
        rc, _, err = run("bench", *args)
        t.check(rc == 2 and needle in err, f"bench {' '.join(args)} -> exit {rc} (want 2), message names {needle}: "
                f"{err.strip().splitlines()[0] if err.strip() else ''}")
    if under_valgrind():  # 32 MiB tables x 18 runs: too slow under memcheck, and nothing new
        t.finish()
    rc, out, err = run("bench", "--only", "sinusoid", "--threads", "1", "--reps", "5", "--no-peers",
                       "--mem-mib", "16", "--path", "scalar")
    rows = [line for line in out.splitlines() if line.startswith("| sinusoid 8192x1024")]
    t.check(rc == 0 and "| memset | 1 |" in out and len(rows) == 3 and all(r.count("|") >= 9 for r in rows),
            f"small bench run: exit {rc}, memory table and {len(rows)} sinusoid rows (want 3) {err.strip()}")
    t.check("kernel path scalar" in out, "the forced path is reported in the header")
    t.finish()


if __name__ == "__main__":
    main()
