"""Issue 40 case 11: what the tool says about a config it cannot read.

- values that parse but fail the RoPE check are the file's fault: exit 1 (docs/errors.md H6), with no
  --assume hint (before: exit 2, "hint: --assume takes a family of posenc's table");
- every config message names the file read, not "config.json" whatever it is called (H15);
- "rope_theta": NaN (what Python's json.dumps writes for float('nan')) names the key and says NaN is not
  JSON (before: "not valid JSON (error near byte 211 of 362)") (H1);
- a config.json that is not UTF-8 is refused naming the byte (HF opens it as UTF-8), and a name from a
  GGUF that is not UTF-8 is printed escaped (\\xff), never as raw bytes to the terminal (H16, C17);
- numeric options are decimal: the hex spellings strtod / strtol would take are refused in every numeric
  option parser (C8).
Each check prints its docs/errors.md row id."""
import json
import os
import struct
import subprocess

from common import BIN, Checks, run, tmpdir

HERE = os.path.dirname(os.path.abspath(__file__))
LLAMA31 = os.path.join(HERE, "..", "fixtures", "models", "llama_3_1_8b.json")


def gguf_with_arch(arch: bytes) -> bytes:
    """A GGUF v3 header with one key, general.architecture (type 8: string), and no tensors."""
    key = b"general.architecture"
    return (b"GGUF" + struct.pack("<IQQ", 3, 0, 1) + struct.pack("<Q", len(key)) + key + struct.pack("<I", 8) +
            struct.pack("<Q", len(arch)) + arch)


def raw_run(*args):
    p = subprocess.run([BIN, *map(str, args)], capture_output=True)
    return p.returncode, p.stdout, p.stderr


def main():
    t = Checks()
    d = tmpdir()
    base = json.load(open(LLAMA31))

    # H6: a value that fails the RoPE check: exit 1, the file named, no --assume hint
    bad = dict(base, rope_scaling=dict(base["rope_scaling"], factor=0))
    path = os.path.join(d, "my-llama.json")
    json.dump(bad, open(path, "w"))
    for cmd in (["rope", "freqs", "--config", path], ["rope", "explain", "--config", path],
                ["plot", "heatmap", "--config", path, "-o", os.path.join(d, "t.svg")]):
        rc, _, err = run(*cmd)
        t.check(rc == 1 and f"{path}: factor must be finite and > 0 for scaling=llama3, got 0" in err and
                "--assume" not in err and not os.path.exists(os.path.join(d, "t.svg")),
                f"[H6] {' '.join(map(str, cmd[:2]))}: a factor of 0: exit {rc} (want 1), '{err.strip()}'")
    # ... while a bad --assume is still a usage error with its hint
    rc, _, err = run("rope", "freqs", "--config", path, "--assume", "lama")
    t.check(rc == 2 and "assume_family 'lama'" in err and "hint: --assume takes a family" in err,
            f"[H7] a bad --assume: exit {rc} (want 2) with the hint: '{err.strip().splitlines()[0]}'")

    # H15: every message names the file it read (JSON and GGUF), whatever its name
    cases = {
        "H2": ({**base, "rope_theta": "5e5"}, "'rope_theta' must be a finite number"),
        "H4": ({**base, "rope_scaling": {"rope_type": "wobbly", "factor": 2.0}}, "unknown RoPE scaling type"),
        "H11": ({**base, "model_type": "gemma3_text", "layer_types": ["global"] * 32}, "layer_types[0] is 'global'"),
    }
    for row, (cfg, fragment) in cases.items():
        named = os.path.join(d, f"{row.lower()}-model.json")
        json.dump(cfg, open(named, "w"))
        rc, _, err = run("rope", "explain", "--config", named)
        t.check(rc == 1 and err.startswith(f"posenc rope explain: {named}: ") and fragment in err
                and "config.json" not in err, f"[H15] {row} names the file read: exit {rc}: '{err.strip()}'")
    gg = os.path.join(d, "weights.gguf")
    open(gg, "wb").write(b"GGUF" + struct.pack("<IQQ", 3, 0, 0))
    rc, _, err = run("rope", "explain", "--config", gg)
    t.check(rc == 1 and f"{gg}: GGUF has no general.architecture key" in err,
            f"[H15] a GGUF message names the file: exit {rc}: '{err.strip()}'")
    # a path too long for the message keeps its tail (the file name) and the reason
    deep = os.path.join(d, *["sub" + "x" * 40] * 4)
    os.makedirs(deep)
    long_path = os.path.join(deep, "deep-model.json")
    json.dump(bad, open(long_path, "w"))
    rc, _, err = run("rope", "freqs", "--config", long_path)
    t.check(rc == 1 and f"rope freqs: {deep}" not in err and "rope freqs: deep-model.json: factor must be finite and > 0" in err,
            f"[H15] a {len(long_path)}-character path too long for the message: the file name alone: '{err.strip()}'")
    # a path that would cut the reason short: the file name alone, the reason whole
    deeper = os.path.join(deep, *["y" * 50] * 4)
    os.makedirs(deeper)
    longer = os.path.join(deeper, "xvlm.json")
    json.dump({"model_type": "xvlm", "text_config": {"model_type": "llama", "rope_theta": 500000.0}}, open(longer, "w"))
    rc, _, err = run("rope", "freqs", "--config", longer)
    t.check(rc == 1 and "rope freqs: xvlm.json: model_type 'xvlm' wraps" in err and "--assume" in err,
            f"[H15] a {len(longer)}-character path: the file name alone, the reason whole: '{err.strip()}'")

    # the duplicate-key warning of rope freqs / apply names the file too, and prints the key escaped
    dup = os.path.join(d, "dup-model.json")
    text = json.dumps(base)[:-1] + ', "rope_theta": 500000.0, "x\\u001b[31m": 1, "x\\u001b[31m": 2}'
    open(dup, "w").write(text)
    rc, _, err = run("rope", "freqs", "--config", dup)
    t.check(rc == 0 and f"warning: {dup} has 'rope_theta' more than once" in err and "config.json" not in err,
            f"[H15] the duplicate-key warning names the file: '{err.strip()}'")

    # H1: NaN / Infinity, as Python's json.dumps writes them
    for value, word in ((float("nan"), "NaN"), (float("inf"), "Infinity"), (float("-inf"), "-Infinity")):
        named = os.path.join(d, "nan.json")
        with open(named, "w") as f:
            json.dump({**base, "rope_theta": value}, f)  # allow_nan=True is json's default
        rc, _, err = run("rope", "freqs", "--config", named)
        t.check(rc == 1 and f"{named}: 'rope_theta' is {word} (byte " in err and "not JSON" in err,
                f"[H1] rope_theta {word}: exit {rc}: '{err.strip()}'")
    with open(named, "w") as f:
        json.dump({**base, "rope_scaling": {**base["rope_scaling"], "factor": float("nan")}}, f)
    rc, _, err = run("rope", "freqs", "--config", named)
    t.check(rc == 1 and "'factor' is NaN" in err, f"[H1] a NaN inside the rope dict names its key: '{err.strip()}'")

    # H16: a config.json that is not UTF-8 (a Latin-1 byte in model_type); nothing raw on the terminal
    latin = os.path.join(d, "latin.json")
    text = json.dumps({**base, "model_type": "MARK"}).replace("MARK", "ll\xffama\x1b[31m")
    open(latin, "wb").write(text.encode("latin-1"))
    rc, out, err = raw_run("rope", "freqs", "--config", latin)
    t.check(rc == 1 and b"is not UTF-8 text: byte 0xFF at byte" in err and b"\xff" not in err + out and b"\x1b" not in err,
            f"[H16] a Latin-1 model_type: exit {rc}, refused and no raw byte printed: {err.strip()!r}")
    # a GGUF architecture that is not UTF-8 (gguf-py would not write one): escaped in the message
    for arch, shown in ((b"ll\xffama", b"ll\\xffama"), (b"x\xc2\x9b31m", b"x\\xc2\\x9b31m"), (b"caf\xc3\xa9", b"caf\xc3\xa9")):
        gg = os.path.join(d, "arch.gguf")
        open(gg, "wb").write(gguf_with_arch(arch))
        rc, out, err = raw_run("rope", "explain", "--config", gg)
        t.check(rc == 1 and shown in err and (arch == shown or arch not in err),
                f"[C17] GGUF architecture {arch!r}: printed as {shown!r}: exit {rc}: {err.strip()!r}")
        rc, out, err = raw_run("rope", "explain", "--config", gg, "--assume", "llama", "--json")
        if rc == 0:
            try:
                out.decode("utf-8")
                json.loads(out)
                ok = True
            except (UnicodeDecodeError, ValueError):
                ok = False
            t.check(ok and (arch == shown or arch not in err), f"[C17] --assume --json of {arch!r}: valid UTF-8 JSON, note escaped")

    # C8: every numeric option is decimal; no parser takes C's hex (strtod/strtol with base 0 would)
    out = os.path.join(d, "o.npy")
    x = os.path.join(d, "x.npy")
    run("table", "--len", 4, "--dim", 8, "-o", x)
    for args, fragment in (
            (["table", "--len", "0x10", "--dim", 8, "-o", out], "--len must be a whole number, got '0x10'"),
            (["table", "--len", 4, "--dim", 8, "--base", "0x10", "-o", out], "--base must be a decimal number"),
            (["table", "--len", 4, "--dim", 8, "--base", "-0X1p4", "-o", out], "--base must be a decimal number"),
            (["table", "--len", 4, "--dim", 8, "--base", "inf", "-o", out], "--base must be a finite number"),
            (["table", "--len", 4, "--dim", 8, "--max-bytes", "0x1000", "-o", out], "--max-bytes must be a positive whole"),
            (["rope", "apply", "--in", x, "--dim", 8, "--mrope", "0x2,1,1", "-o", out], "--mrope must list"),
            (["plot", "curves", "--len", 16, "--dim", 8, "--at", "0x2", "-o", os.path.join(d, "c.svg")],
             "--at must be a comma-separated list"),
            (["bench", "--threads", "0x2", "--only", "rope"], "--threads must list"),
            (["lab", "bench", "--threads", "0x2"], "--threads must list")):
        rc, _, err = run(*args)
        t.check(rc == 2 and fragment in err and not os.path.exists(out),
                f"[C8] {' '.join(map(str, args[:1]))} {[a for a in args if '0x' in str(a) or '0X' in str(a) or a == 'inf']}: "
                f"exit {rc}: '{err.strip().splitlines()[0] if err.strip() else ''}'")
    t.finish()


if __name__ == "__main__":
    main()
