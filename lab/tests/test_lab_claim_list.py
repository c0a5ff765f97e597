"""Issue 42: the claim list is fixed in docs/lab-experiments.md before the runs. The block between
<!-- claim-list:begin --> and <!-- claim-list:end --> must be `posenc lab claims --list` verbatim, so a
claim added or changed in lab/claims.c fails here until the docs say so; --list refuses result files."""
import os
import subprocess
import sys

POSENC = os.environ["POSENC_BIN"]
DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "docs", "lab-experiments.md")

text = open(DOC, encoding="utf-8").read()
begin, end = "<!-- claim-list:begin -->\n", "<!-- claim-list:end -->"
block = text[text.index(begin) + len(begin):text.index(end)] if begin in text and end in text else None
p = subprocess.run([POSENC, "lab", "claims", "--list"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
rows = [l for l in p.stdout.splitlines() if l.startswith("| ") and l[2].isdigit()]
ok = p.returncode == 0 and block == p.stdout and len(rows) == 37
print(("ok   " if ok else "FAIL ") + "docs' claim list = lab claims --list (%d claims, exit %d, docs block %s)"
      % (len(rows), p.returncode, "found" if block is not None else "missing"))
q = subprocess.run([POSENC, "lab", "claims", "--list", DOC], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
ok2 = q.returncode == 2 and "reads no results" in q.stderr and q.stdout == ""
print(("ok   " if ok2 else "FAIL ") + "--list with a file refused: %s" % q.stderr.strip())
sys.exit(0 if ok and ok2 else 1)
