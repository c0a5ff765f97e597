"""The repository holds everything its tests read.

- every file in tests/golden is listed in its manifest.json with the sha256 of
  its bytes, and every manifest entry is there (an altered or missing golden
  fails here, by name, before any comparison against it could go quiet);
- no tracked file names a path outside the clone (the folder the goldens were
  once read from, beside the clone).
The whole suite running from a copy of the clone in an empty folder is the
stage scripts/test runs with POSENC_TEST_ALONE=1 (CI sets it)."""
import hashlib
import json
import os
import subprocess
import sys

from common import GOLDEN, Checks, require_golden

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# written in two pieces so this file does not match its own search
OUTSIDE = ("../" + "shared", "shared/" + "golden")


def tracked_files():
    """git ls-files when the tree is a checkout, else every file under the root."""
    try:
        out = subprocess.run(["git", "-C", ROOT, "ls-files", "-z"], capture_output=True, check=True).stdout
        names = [n for n in out.decode().split("\0") if n]
        if names:
            return names
    except (OSError, subprocess.CalledProcessError):
        pass
    names = []
    for base, dirs, files in os.walk(ROOT):
        dirs[:] = [d for d in dirs if not d.startswith((".git", "build"))]
        names += [os.path.relpath(os.path.join(base, f), ROOT) for f in files]
    return names


def main():
    t = Checks()
    require_golden()
    manifest = json.load(open(os.path.join(GOLDEN, "manifest.json")))
    listed = {e["file"]: e for e in manifest["entries"]}
    on_disk = {f for f in os.listdir(GOLDEN) if f.endswith(".npy")}
    t.check(len(listed) >= 140 and on_disk == set(listed),
            f"tests/golden: {len(on_disk)} .npy files, {len(listed)} manifest entries, the same names"
            + ("" if on_disk == set(listed) else f" (only on disk: {sorted(on_disk - set(listed))[:5]}, "
               f"only listed: {sorted(set(listed) - on_disk)[:5]})"))
    bad = []
    for name, e in sorted(listed.items()):
        path = os.path.join(GOLDEN, name)
        if not os.path.exists(path):
            bad.append(name + " (missing)")
            continue
        digest = hashlib.sha256(open(path, "rb").read()).hexdigest()
        if digest != e.get("sha256"):
            bad.append(name + " (sha256 differs)")
    t.check(not bad, f"every golden's sha256 matches manifest.json ({len(listed) - len(bad)} of {len(listed)})"
            + (": " + ", ".join(bad[:5]) if bad else ""))
    missing_producer = [n for n, e in listed.items() if not e.get("producer", {}).get("repository")]
    t.check(not missing_producer, f"every manifest entry names its producer ({len(missing_producer)} without)")

    # the regeneration script runs (the input formula needs no peer checkout)
    done = subprocess.run([sys.executable, os.path.join(GOLDEN, "regenerate.py"), "--only", "input_formula"],
                          capture_output=True, text=True)
    t.check(done.returncode == 0 and "1 same, 0 differ, 0 failed" in done.stdout,
            f"tests/golden/regenerate.py remakes input_formula bit for bit: {done.stdout.strip().splitlines()[-1:]}"
            + done.stderr[-300:])

    hits = []
    files = tracked_files()
    for name in files:
        if name.startswith("tests/golden/"):
            continue  # the golden README describes where the files came from
        path = os.path.join(ROOT, name)
        try:
            text = open(path, "rb").read().decode("utf-8", "replace")
        except OSError:
            continue
        for needle in OUTSIDE:
            if needle in text:
                line = text[:text.index(needle)].count("\n") + 1
                hits.append(f"{name}:{line}")
    t.check(len(files) > 100 and not hits,
            f"no tracked file names a path outside the clone ({len(files)} files searched)"
            + (": " + ", ".join(hits[:8]) if hits else ""))
    t.finish()


if __name__ == "__main__":
    main()
