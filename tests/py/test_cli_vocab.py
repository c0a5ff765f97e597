"""One CLI vocabulary: every command that takes --layout, --freqs, --odd or
--dtype accepts every name of that vocabulary, maps it to the same meaning, and
refuses a name outside it with the same message (cli/vocab.c)."""
import os
import shutil

import numpy as np

from common import Checks, run, tmpdir

# the vocabularies (cli/vocab.c) and what each name means
LAYOUT = {"interleaved": "interleaved", "half": "half", "neox": "half", "gptj": "interleaved"}
FREQS = ["vaswani", "t2t"]
ODD = ["error", "pad", "round_up"]
DTYPE = ["f32", "f64", "f16", "bf16", "bf16-bits"]


def main():
    t = Checks()
    d = tmpdir()
    try:
        x = os.path.join(d, "x.npy")
        np.save(x, np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32))
        o = lambda name: os.path.join(d, name)
        # command line builders: (label, vocabulary flag) -> argv; {} is the value
        commands = {
            "layout": [
                ("table", lambda v: ["table", "--len", 8, "--dim", 8, "--layout", v, "-o", o("t.npy")]),
                ("table --kind hybrid", lambda v: ["table", "--kind", "hybrid", "--len", 8, "--dim", 8,
                                                   "--learned-dim", 2, "--layout", v, "-o", o("h.npy")]),
                ("analyze", lambda v: ["analyze", "--len", 8, "--dim", 8, "--layout", v, "--json"]),
                ("plot heatmap", lambda v: ["plot", "heatmap", "--len", 8, "--dim", 8, "--layout", v, "-o", o("p.png")]),
                ("report", lambda v: ["report", "--len", 8, "--dim", 8, "--layout", v, "-o", o("r.html")]),
                ("rope apply", lambda v: ["rope", "apply", "--in", x, "--layout", v, "-o", o("y.npy")]),
            ],
            "freqs": [
                ("table", lambda v: ["table", "--len", 8, "--dim", 8, "--freqs", v, "-o", o("t.npy")]),
                ("table --kind hybrid", lambda v: ["table", "--kind", "hybrid", "--len", 8, "--dim", 8,
                                                   "--learned-dim", 2, "--freqs", v, "-o", o("h.npy")]),
                ("analyze", lambda v: ["analyze", "--len", 8, "--dim", 8, "--freqs", v, "--json"]),
                ("precision", lambda v: ["precision", "--dtype", "bf16", "--max-pos", 64, "--dim", 8, "--freqs", v]),
                ("plot heatmap", lambda v: ["plot", "heatmap", "--len", 8, "--dim", 8, "--freqs", v, "-o", o("p.png")]),
                ("report", lambda v: ["report", "--len", 8, "--dim", 8, "--freqs", v, "-o", o("r.html")]),
            ],
            "odd": [
                ("table", lambda v: ["table", "--len", 8, "--dim", 7, "--odd", v, "-o", o("t.npy")]),
                ("table --kind hybrid", lambda v: ["table", "--kind", "hybrid", "--len", 8, "--dim", 7,
                                                   "--learned-dim", 2, "--odd", v, "-o", o("h.npy")]),
                ("analyze", lambda v: ["analyze", "--len", 8, "--dim", 7, "--odd", v, "--json"]),
            ],
            "dtype": [
                ("table", lambda v: ["table", "--len", 8, "--dim", 8, "--dtype", v, "-o", o("t.npy")]),
                ("table --kind index", lambda v: ["table", "--kind", "index", "--len", 8, "--dim", 8, "--dtype", v,
                                                  "-o", o("i.npy")]),
                ("table --kind xl", lambda v: ["table", "--kind", "xl", "--len", 8, "--dim", 8, "--dtype", v,
                                               "-o", o("x.npy")]),
                ("table --kind 2d", lambda v: ["table", "--kind", "2d", "--grid", "2x2", "--dim", 8, "--dtype", v,
                                               "-o", o("g.npy")]),
                ("precision", lambda v: ["precision", "--dtype", v, "--max-pos", 64, "--dim", 8]),
            ],
        }
        names = {"layout": list(LAYOUT), "freqs": FREQS, "odd": ODD, "dtype": DTYPE}
        for vocab, cmds in commands.items():
            for label, argv in cmds:
                accepted, refused = [], []
                for v in names[vocab]:
                    rc, _, se = run(*argv(v))
                    # a name of the vocabulary is never "unknown"; the few
                    # domain refusals (odd dim + error policy, precision of f64)
                    # are messages about the value, not the name
                    unknown = "unknown --" in se
                    expected_refusal = (vocab == "odd" and v == "error") or (label == "precision" and v == "f64")
                    if rc == 0 or (expected_refusal and rc == 2 and not unknown):
                        accepted.append(v)
                    else:
                        refused.append(f"{v} (exit {rc}: {se.strip()[:80]})")
                t.check(not refused, f"{label} --{vocab}: accepts {'/'.join(accepted)}"
                        + (f"; refused {refused}" if refused else ""))
                rc, _, se = run(*argv("bogus"))
                t.check(rc == 2 and f"unknown --{vocab} 'bogus' (choose {'|'.join(names[vocab])})" in se,
                        f"[Y5] {label} --{vocab} bogus: exit {rc}, '{se.strip()[:90]}'")

        # the same name means the same thing everywhere: neox == half, gptj == interleaved
        for alias, canon in LAYOUT.items():
            run("table", "--len", 8, "--dim", 8, "--layout", alias, "-o", o("a.npy"))
            run("table", "--len", 8, "--dim", 8, "--layout", canon, "-o", o("c.npy"))
            same = np.array_equal(np.load(o("a.npy")), np.load(o("c.npy")))
            t.check(same, f"table --layout {alias} == --layout {canon}")
        # the analyzer sees the layout the name stands for
        import json
        rc, so, _ = run("analyze", "--len", 16, "--dim", 8, "--layout", "neox", "--json")
        fit = json.loads(so)["fit"] if rc == 0 else {}
        t.check(fit.get("layout") == "half", f"analyze --layout neox fits a half table (fit layout {fit.get('layout')})")
        # the case: plot heatmap --layout neox works (exited 2 before)
        rc, _, se = run("plot", "heatmap", "--len", 16, "--dim", 8, "--layout", "neox", "-o", o("n.png"))
        t.check(rc == 0 and os.path.getsize(o("n.png")) > 0, f"plot heatmap --layout neox: exit {rc} {se.strip()[:60]}")
        # bf16 is widened to f32 holding bf16 values everywhere; bf16-bits keeps <u2
        for label, argv in commands["dtype"][:4]:
            out = argv("bf16")[-1]
            run(*argv("bf16"))
            a = np.load(out)
            low = (a.view(np.uint32) & 0xFFFF) if a.dtype == np.float32 else None
            t.check(a.dtype == np.float32 and not low.any(), f"{label} --dtype bf16: float32 with zero low halves")
            run(*argv("bf16-bits"))
            t.check(np.load(out).dtype == np.uint16, f"{label} --dtype bf16-bits: uint16 bits")
        # both modes given: one message everywhere
        for argv in (["table", "--len", 4, "--dim", 4, "--precise", "--torch-compat", "-o", o("t.npy")],
                     ["table", "--kind", "xl", "--len", 4, "--dim", 4, "--precise", "--torch-compat", "-o", o("t.npy")]):
            rc, _, se = run(*argv)
            t.check(rc == 2 and "give --precise or --torch-compat, not both" in se, f"{argv[:3]} both modes: {se.strip()}")
    finally:
        shutil.rmtree(d, ignore_errors=True)
    t.finish()


if __name__ == "__main__":
    main()
