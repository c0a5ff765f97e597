"""Every example in README.md runs as written, top to bottom, in a fresh folder.

The README's fenced blocks are read in order. ```sh blocks run line by line (each line with
bash, from one empty temporary folder, as a newcomer would: each input must be written by an
earlier line), with the built posenc installed into a temporary prefix whose bin/ is first on
PATH and whose lib/pkgconfig is PKG_CONFIG_PATH, as the README's install section says. Each
command must exit 0, and each `-o FILE` must exist afterwards. The ```c block is saved as
demo.c (the README says so), built by the README's own command and must print what the
README says. Blocks marked `<!-- readme-test: skip (why) -->` (they install packages,
build the clone, or are CMake fragments) are listed with the reason; the scripts they name
must exist and be executable. The temporary folder is removed at the end.

Each line must also stand on its own for a reader who copies lines one by one: a file a
command reads was written by an earlier `-o FILE`, or on the same line (a file made by
Python's np.save or a shell `>` is used only on the line that makes it)."""
import os
import re
import shutil
import subprocess
import sys
import tempfile

from common import BIN, Checks

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
BUILD = os.environ.get("POSENC_BUILD_DIR", os.path.join(ROOT, "build"))
CMAKE = os.environ.get("POSENC_CMAKE", "cmake")
README = os.environ.get("POSENC_README", os.path.join(ROOT, "README.md"))


def blocks(text):
    """Yield (language, body, skip reason or None, text before the block) in order."""
    pattern = re.compile(r"(?:<!-- readme-test: skip \((?P<why>[^)]*)\) -->\n)?```(?P<lang>\w*)\n(?P<body>.*?)```", re.S)
    last = 0
    for m in pattern.finditer(text):
        yield m.group("lang"), m.group("body"), m.group("why"), text[last:m.start()]
        last = m.end()


def commands(body):
    for line in body.splitlines():
        if line.strip() and not line.lstrip().startswith("#"):
            yield line


FILE_ARG = re.compile(r"(?<![\w/.-])([\w.-]+\.(?:npy|json|jsonl|safetensors|csv|gguf|c))(?![\w.])")


def unmet_inputs(line, written):
    """Files `line` reads that no earlier `-o` (in `written`, updated here) and no earlier
    part of the same line wrote. Only the `-o` of a line's last command counts for later
    lines: one made inside an && chain is used on that line (a reader who copies the
    chain's last command, or runs its first alone, must not lose an input of a later line)."""
    here, unmet = set(), []
    parts = re.split(r"\s#\s", line)[0].split("&&")
    for i, part in enumerate(parts):
        outs = {o for o in re.findall(r"(?:^|\s)-o\s+(\S+)", part) if o != "-"}
        made = set(re.findall(r">\s*(\S+)", part)) | set(re.findall(r"np\.save\('([^']+)'", part))
        unmet += [f for f in FILE_ARG.findall(part)
                  if f not in outs | made and f not in written and f not in here]
        if i == len(parts) - 1:
            written |= outs
        else:
            here |= outs
        here |= made
    return unmet


def main():
    t = Checks()
    text = open(README).read()
    work = tempfile.mkdtemp(prefix="posenc-readme-")
    try:
        prefix = os.path.join(work, ".prefix")
        p = subprocess.run([CMAKE, "--install", BUILD, "--prefix", prefix], capture_output=True, text=True)
        if not t.check(p.returncode == 0 and os.path.exists(os.path.join(prefix, "bin/posenc")),
                       "posenc installed into a temporary prefix (the README's install step)"):
            print(p.stdout + p.stderr)
        cwd = os.path.join(work, "empty")
        os.makedirs(cwd)  # an empty folder: every input must be written by an earlier README line
        # python3 is the test environment's (a user with NumPy), then the installed posenc
        env = dict(os.environ, PATH=os.pathsep.join([os.path.join(prefix, "bin"), os.path.dirname(sys.executable),
                                                     os.environ["PATH"]]),
                   PKG_CONFIG_PATH=os.path.join(prefix, "lib/pkgconfig"), HOME=os.path.join(work, "home"))
        env.pop("POSENC_MAX_BYTES", None)
        found = shutil.which("posenc", path=env["PATH"])
        t.check(found == os.path.join(prefix, "bin/posenc"), f"`posenc` on PATH is the one just installed ({found})")
        os.makedirs(env["HOME"])
        ran = skipped = 0
        written = set()  # files written by an earlier `-o` (or the C block's demo.c)
        for lang, body, why, before in blocks(text):
            if why is not None:
                skipped += 1
                scripts = re.findall(r"^(scripts/\w+)", body, re.M)
                ok = all(os.access(os.path.join(ROOT, s), os.X_OK) for s in scripts)
                t.check(ok, f"not run: {body.strip().splitlines()[0][:60]}... ({why})"
                        + (f"; {', '.join(scripts)} exist and are executable" if scripts else ""))
                continue
            if lang == "c":
                t.check("Save this as `demo.c`" in before.strip().splitlines()[-1],
                        "the C example is introduced as demo.c; saved there")
                with open(os.path.join(cwd, "demo.c"), "w") as f:
                    f.write(body)
                written.add("demo.c")
                want_c = re.search(r"/\* sin\(1\) = ([0-9.]+) \*/", body)
                continue
            if lang != "sh":
                t.check(False, f"a ```{lang} block with no readme-test marker: run it or mark it")
                continue
            for line in commands(body):
                unmet = unmet_inputs(line, written)
                t.check(not unmet, f"stands on its own: {line[:70]}..." + (
                    f" reads {unmet}, written by no earlier -o nor earlier on this line" if unmet else ""))
                p = subprocess.run(["bash", "-o", "pipefail", "-c", line], cwd=cwd, env=env,
                                   capture_output=True, text=True, timeout=300)
                ran += 1
                shown = re.split(r"\s#\s", line)[0].strip()  # the command without its comment
                outputs = [o for o in re.findall(r"(?:^|\s)-o\s+(\S+)", shown) if o != "-"]
                missing = [o for o in outputs if not os.path.exists(os.path.join(cwd, o))]
                if not t.check(p.returncode == 0 and not missing,
                               f"exit {p.returncode}: {shown[:110]}"
                               + (f" (missing output {missing})" if missing else "")):
                    print("    stderr: " + p.stderr.strip()[-600:].replace("\n", "\n    "))
                said = re.search(r"#\s*(pe\[1\]\[0\] = [0-9.]+)", line)
                if line.startswith("./demo"):
                    t.check(said and p.stdout.strip() == said.group(1) and want_c
                            and said.group(1).endswith(want_c.group(1)),
                            f"./demo prints '{p.stdout.strip()}', as the README says ('{said.group(1) if said else '?'}')")
        t.check(ran >= 25 and skipped <= 3, f"{ran} README commands ran, {skipped} blocks not run (each with its reason)")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    t.check(not os.path.exists(work), "temporary folder removed")
    t.finish()


if __name__ == "__main__":
    main()
