#!/usr/bin/env python3
"""Run a `posenc lab plan` as Ray tasks (issue 42; docs/lab-experiments.md "Running a plan").

The lab is C; this driver only schedules it. Each Ray task runs one plan entry as

    posenc lab run NAME [plan flags] --threads T --resume --only ID -o OUT

so every task writes the SAME results file through lab run's own folder lock (read, add the
line unless its id is there, rename): a finished run is kept exactly once whatever the order,
and a killed task loses only its own unfinished run. Runs already in OUT are not submitted
again (resume = run the same command again). Progress: one line per finished run with the
elapsed time and an estimate of what is left.

Ray: a local Ray started here (--num-cpus, default the cores this process may use) unless
--address names a cluster (`ray start --head` on one machine, then --address HOST:6379, or
"auto"). On a cluster, OUT and the corpus (--text) must be on a file system every node sees,
with working flock (NFS v4, Lustre, a local disk on one node), and `posenc` at --posenc on
every node. Without Ray the same plan runs in one process (`posenc lab run NAME -o OUT`) or
with GNU parallel (`posenc lab plan NAME | parallel`, then `posenc lab merge`).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time


def parse(argv):
    p = argparse.ArgumentParser(prog="lab_ray.py", description=__doc__.split("\n\n")[0])
    p.add_argument("name", help="experiment (posenc lab run --help lists them)")
    p.add_argument("-o", dest="out", required=True, help="results file (one JSON object per line), shared by every task")
    p.add_argument("--quick", action="store_true", help="the experiment's small size")
    p.add_argument("--seeds", type=int, help="seeds per configuration")
    p.add_argument("--text", nargs="+", help="training/validation text files (absolute paths on a cluster)")
    p.add_argument("--corpus", help="fortunes or pystdlib")
    p.add_argument("--address", help="an existing Ray cluster (HOST:PORT or auto); default: start a local Ray")
    p.add_argument("--num-cpus", type=int, help="local Ray: CPUs (default: the cores this process may use)")
    p.add_argument("--threads", type=int, default=1, help="threads per run, and CPUs each Ray task asks for (default 1)")
    p.add_argument("--posenc", default=os.environ.get("POSENC_BIN") or shutil.which("posenc") or "posenc",
                   help="the posenc binary (default: $POSENC_BIN, else posenc on PATH)")
    p.add_argument("--ray-temp-dir", help="local Ray: its session folder (default Ray's)")
    a = p.parse_args(argv)
    if a.seeds is not None and not 1 <= a.seeds <= 100:
        p.error("--seeds must be 1..100, got %d" % a.seeds)
    if a.threads < 1:
        p.error("--threads must be >= 1, got %d" % a.threads)
    if a.text and a.corpus:
        p.error("--text and --corpus both name the text: give one")
    return a


def plan_flags(a):
    """The flags that define the plan: the same for `lab plan --ids` and every `lab run`."""
    flags = []
    if a.quick:
        flags.append("--quick")
    if a.seeds is not None:
        flags += ["--seeds", str(a.seeds)]
    if a.corpus:
        flags += ["--corpus", a.corpus]
    return flags


def text_flags(a):
    if not a.text:
        return []
    return ["--text", a.text[0]] + a.text[1:]


def finished_ids(out):
    """Ids already in the results file (a line that is not a finished run is lab run's business)."""
    import json
    ids = set()
    if not os.path.exists(out):
        return ids
    with open(out, encoding="utf-8") as f:
        for line in f:
            line = line.strip()
            if line:
                try:
                    ids.add(json.loads(line)["id"])
                except (ValueError, KeyError, TypeError):
                    pass  # lab run refuses a malformed file by name; let it
    return ids


def run_one(posenc, name, flags, threads, out, run_id):
    """One plan entry (runs inside a Ray worker): returns (id, exit code, stderr tail, seconds)."""
    started = time.monotonic()
    cmd = [posenc, "lab", "run", name] + flags + ["--threads", str(threads), "--resume", "--only", run_id, "-o", out]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return run_id, p.returncode, p.stderr[-2000:], time.monotonic() - started


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    out = os.path.abspath(a.out)
    flags = plan_flags(a)
    p = subprocess.run([a.posenc, "lab", "plan", a.name] + flags + ["--ids"], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.stderr.write("lab_ray.py: posenc lab plan %s failed (exit %d): %s" % (a.name, p.returncode, p.stderr))
        return p.returncode
    ids = [line for line in p.stdout.splitlines() if line]
    done = finished_ids(out)
    todo = [i for i in ids if i not in done]
    print("lab_ray.py: %s: %d runs in the plan, %d already in %s, %d to run" % (a.name, len(ids), len(ids) - len(todo),
                                                                                 out, len(todo)), file=sys.stderr)
    if not todo:
        return 0
    import ray  # only when there is work: lab_ray.py --help and a finished plan need no Ray
    if a.address:
        ray.init(address=a.address, logging_level="ERROR", log_to_driver=False)
    else:
        cpus = a.num_cpus or len(os.sched_getaffinity(0))
        kw = {"_temp_dir": os.path.abspath(a.ray_temp_dir)} if a.ray_temp_dir else {}
        ray.init(num_cpus=cpus, include_dashboard=False, logging_level="ERROR", log_to_driver=False, **kw)
    task = ray.remote(num_cpus=a.threads, max_retries=0)(run_one)
    flags_run = flags + text_flags(a)
    pending = [task.remote(a.posenc, a.name, flags_run, a.threads, out, i) for i in todo]
    started, failed, finished = time.monotonic(), [], 0
    try:
        while pending:
            ready, pending = ray.wait(pending, num_returns=1)
            run_id, rc, err, seconds = ray.get(ready[0])
            finished += 1
            elapsed = time.monotonic() - started
            eta = elapsed / finished * (len(todo) - finished)
            state = "done" if rc == 0 else "FAILED (exit %d)" % rc
            print("lab_ray.py: [%d/%d] %s %s in %.0f s (%.0f s elapsed, ~%.0f s left)" % (
                finished, len(todo), run_id, state, seconds, elapsed, eta), file=sys.stderr, flush=True)
            if rc != 0:
                failed.append((run_id, rc, err.strip().splitlines()[-3:]))
    except KeyboardInterrupt:
        for ref in pending:
            ray.cancel(ref, force=True)
        print("lab_ray.py: interrupted; %s keeps every finished run (run the same command again to resume)" % out,
              file=sys.stderr)
        return 130
    finally:
        ray.shutdown()
    for run_id, rc, err in failed:
        print("lab_ray.py: %s failed (exit %d): %s" % (run_id, rc, " / ".join(err)), file=sys.stderr)
    kept = finished_ids(out)
    missing = [i for i in ids if i not in kept]
    print("lab_ray.py: %s holds %d of the plan's %d runs%s" % (out, len(ids) - len(missing), len(ids),
          "" if not missing else "; missing: " + " ".join(missing[:8])), file=sys.stderr)
    return 1 if failed or missing else 0


if __name__ == "__main__":
    sys.exit(main())
