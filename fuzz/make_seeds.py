"""Regenerate the seed corpora under fuzz/corpus/ (run with the test environment's python (.venv/bin/python, scripts/venv)).
Seeds are small: valid inputs of each shape the parsers accept, the malformed
cases of docs/errors.md, and a few deterministic random byte strings for the
targets that carve parameters from their input. Inputs libFuzzer finds that
crashed once are added by hand next to these, named crash-<what>."""
import io
import json
import os
import random
import struct

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def put(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def npy_bytes(arr, version=None):
    b = io.BytesIO()
    if version:
        np.lib.format.write_array(b, arr, version=version)
    else:
        np.save(b, arr)
    return b.getvalue()


def npy_header(text, data=b"", major=1):
    h = text.encode("latin1")
    if major == 1:
        return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(h)) + h + data
    return b"\x93NUMPY" + bytes([major, 0]) + struct.pack("<I", len(h)) + h + data


def npy():
    for dt in ["<f4", "<f8", "<f2", "<i4", "<i8", "|u1", "<u2"]:
        put("npy", f"valid_{dt[1:]}_2x3", npy_bytes(np.arange(6).reshape(2, 3).astype(dt)))
    put("npy", "valid_0d", npy_bytes(np.array(3.5)))
    put("npy", "valid_empty", npy_bytes(np.zeros((0, 4), np.float32)))
    put("npy", "valid_v2", npy_bytes(np.arange(4, dtype=np.int64), version=(2, 0)))
    put("npy", "valid_v3", npy_header("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }\n", b"\0" * 4, 3))
    put("npy", "valid_fortran_1d", npy_header("{'descr': '<f4', 'fortran_order': True, 'shape': (2,), }", b"\0" * 8))
    bad = {
        "big_endian": ("{'descr': '>f4', 'fortran_order': False, 'shape': (2,), }", 8),
        "fortran_2d": ("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", 16),
        "complex": ("{'descr': '<c8', 'fortran_order': False, 'shape': (2,), }", 16),
        "structured": ("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (2,), }", 8),
        "truncated": ("{'descr': '<f4', 'fortran_order': False, 'shape': (3,), }", 8),
        "trailing": ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 8),
        "huge_1e15": ("{'descr': '<f4', 'fortran_order': False, 'shape': (1000000000000000,), }", 8),
        "overflow_entry": ("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,), }", 8),
        "overflow_product": ("{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }", 8),
        "no_order": ("{'descr': '<f4', 'shape': (2,), }", 8),
        "unterminated": ("{'descr': '<f4', 'fortran_order': False, 'shape': (2,", 8),
        "bad_bool": ("{'descr': '<f4', 'fortran_order': Maybe, 'shape': (2,), }", 8),
        "not_dict": ("not a dict", 8),
        "nine_dims": ("{'descr': '<f4', 'fortran_order': False, 'shape': (1,1,1,1,1,1,1,1,1), }", 4),
        "long_suffix": ("{'descr': '<i8', 'fortran_order': False, 'shape': (2L, 1L), }", 16),
        "dup_key": ("{'descr': '<i8', 'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4),
    }
    for name, (text, n) in bad.items():
        put("npy", "bad_" + name, npy_header(text, b"\x01" * n))
    put("npy", "bad_header_past_eof", b"\x93NUMPY\x01\x00\xff\xff\x00\x00")
    put("npy", "bad_magic", b"hello world")
    put("npy", "bad_version", b"\x93NUMPY\x09\x00\x00\x00\x00\x00")


def carved(target, n, sizes):
    rng = random.Random(target)
    for i, size in enumerate(sizes[:n]):
        put(target, f"random_{i:02d}_{size}b", bytes(rng.randrange(256) for _ in range(size)))


def rope_exec():
    """fuzz_rope_exec: random inputs, plus the issue-14.1 case spelled out draw by
    draw (fuzz_data.h takes parameters from the tail, first draw = last byte):
    torch-compat, linear factor 1e-37 (w_0 = 1e37), 200 tokens, so the float32
    angle overflows from position 35 and both entry points must refuse."""
    carved("rope_exec", 8, [0, 16, 64, 200, 600, 1200, 2400, 4000])
    draws = [[0, 10, 0], [0], [0], [0], [2], [1, 200] + list(struct.pack("<d", 1e-37)),  # head_dim 8, linear
             [0], [0], [0], [0], [0], [2], [0], [0], [0], [1], [2],  # ..., truncate 1, mode torch-compat
             [0, 2, 0, 0], [200, 0], [1], [1], [0x40, 0x06, 0],  # seq_len 0, 200 tokens, 1 head, 1600 elements
             [0], [0], [2], [2], [1], [0], [0]]  # f32, forward, half, avx512, 2 threads, no pool, positions NULL
    stream = bytes(b for d in draws for b in d)
    payload = bytes(range(1, 65))
    put("rope_exec", "crash-exec-skipped-torch-angle-check", payload + stream[::-1])


def st_file(header, data=b"", length=None):
    h = json.dumps(header).encode() if isinstance(header, dict) else header
    n = len(h) if length is None else length
    return struct.pack("<Q", n) + h + data


def safetensors():
    a = np.arange(6, dtype=np.float32).tobytes()
    good = {"weight": {"dtype": "F32", "shape": [2, 3], "data_offsets": [0, 24]},
            "bias": {"dtype": "I64", "shape": [2], "data_offsets": [24, 40]},
            "__metadata__": {"format": "pt"}}
    put("safetensors", "valid_two", st_file(good, a + np.arange(2, dtype=np.int64).tobytes()))
    put("safetensors", "valid_empty_tensor", st_file({"e": {"dtype": "BF16", "shape": [0, 4], "data_offsets": [0, 0]}}))
    put("safetensors", "valid_all_dtypes", st_file(
        {f"t{i}": {"dtype": d, "shape": [1], "data_offsets": [8 * i, 8 * i + s]}
         for i, (d, s) in enumerate([("F64", 8), ("F32", 4), ("F16", 2), ("BF16", 2), ("I64", 8), ("I32", 4),
                                     ("U16", 2), ("U8", 1)])}, bytes(64)))
    bad = {
        "overlap": {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                    "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}},
        "past_end": {"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}},
        "size_mismatch": {"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}},
        "unknown_dtype": {"a": {"dtype": "C64", "shape": [1], "data_offsets": [0, 8]}},
        "negative_shape": {"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 8]}},
        "huge_shape": {"a": {"dtype": "F32", "shape": [1 << 50, 1 << 50], "data_offsets": [0, 8]}},
        "nine_dims": {"a": {"dtype": "U8", "shape": [1] * 9, "data_offsets": [0, 1]}},
        "float_offsets": {"a": {"dtype": "U8", "shape": [1], "data_offsets": [0.5, 1]}},
        "not_object": {"a": [1, 2, 3]},
    }
    for name, header in bad.items():
        put("safetensors", "bad_" + name, st_file(header, bytes(12)))
    put("safetensors", "bad_header_length_huge", st_file(b'{"a":{}}', length=1 << 60))
    put("safetensors", "bad_json", st_file(b'{"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]', bytes(4)))
    put("safetensors", "bad_top_array", st_file(b"[1, 2]"))
    put("safetensors", "bad_short", b"\x05\x00\x00")
    put("safetensors", "bad_nul_in_header", st_file(b'{"a\x00": 1}'))


def gguf(kvs, n_kv=None, n_tensors=0, tail=b"", version=3):
    def string(b):
        return struct.pack("<Q", len(b)) + b
    out = b"GGUF" + struct.pack("<IQQ", version, n_tensors, len(kvs) if n_kv is None else n_kv)
    for key, typ, payload in kvs:
        out += string(key.encode()) + struct.pack("<I", typ) + payload
    return out + tail


def config():
    def u32(v): return struct.pack("<I", v)
    def f32(v): return struct.pack("<f", v)
    def s(b): return struct.pack("<Q", len(b)) + b
    llama = [("general.architecture", 8, s(b"llama")), ("llama.rope.freq_base", 6, f32(500000.0)),
             ("llama.rope.dimension_count", 4, u32(128)), ("llama.context_length", 4, u32(8192)),
             ("llama.attention.head_count", 4, u32(32)), ("llama.embedding_length", 4, u32(4096))]
    put("config", "gguf_llama", gguf(llama))
    yarn = llama + [("llama.rope.scaling.type", 8, s(b"yarn")), ("llama.rope.scaling.factor", 6, f32(4.0)),
                    ("llama.rope.scaling.original_context_length", 4, u32(4096)),
                    ("llama.rope.scaling.yarn_log_multiplier", 6, f32(0.1))]
    put("config", "gguf_yarn", gguf(yarn))
    tensor = s(b"rope_freqs.weight") + u32(1) + struct.pack("<Q", 64) + u32(0) + struct.pack("<Q", 0)
    put("config", "gguf_freq_tensor", gguf(llama, n_tensors=1, tail=tensor))
    put("config", "gguf_array_and_bool", gguf(llama + [("tokenizer.ggml.scores", 9, u32(6) + struct.pack("<Q", 3) + bytes(12)),
                                                       ("tokenizer.ggml.tokens", 9, u32(8) + struct.pack("<Q", 2) + s(b"a") + s(b"bc")),
                                                       ("general.flag", 7, b"\x01")]))
    put("config", "bad_gguf_2pow60_keys", gguf([], n_kv=1 << 60))
    put("config", "bad_gguf_huge_string", gguf([("general.architecture", 8, struct.pack("<Q", 1 << 60))]))
    put("config", "bad_gguf_huge_array", gguf([("x.y", 9, u32(12) + struct.pack("<Q", 1 << 61))]))
    put("config", "bad_gguf_nested_array", gguf([("x.y", 9, u32(9) + struct.pack("<Q", 1))]))
    put("config", "bad_gguf_unknown_type", gguf([("x.y", 99, b"")]))
    put("config", "bad_gguf_version", gguf(llama, version=7))
    put("config", "bad_gguf_truncated", gguf(llama)[:-3])
    put("config", "bad_gguf_wrong_type", gguf([("general.architecture", 8, s(b"llama")), ("llama.rope.freq_base", 8, s(b"1e6"))]))
    # issue 12: rope tensors with data, architecture rules, duplicate keys
    def tinfo(name, n, typ=0, off=0): return s(name) + u32(1) + struct.pack("<Q", n) + u32(typ) + struct.pack("<Q", off)
    def data(head, payload): return head + bytes(-len(head) % 32) + payload
    phi3 = [("general.architecture", 8, s(b"phi3")), ("phi3.rope.freq_base", 6, f32(10000.0)),
            ("phi3.rope.dimension_count", 4, u32(96)), ("phi3.context_length", 4, u32(131072)),
            ("phi3.rope.scaling.original_context_length", 4, u32(4096)), ("phi3.rope.scaling.attn_factor", 6, f32(1.19))]
    lists = struct.pack("<48f", *[1 + 0.5 * k for k in range(48)]) + bytes(64) + struct.pack("<48f", *[1.0] * 48)
    put("config", "gguf_phi3_tensors", data(gguf(phi3, n_tensors=2, tail=tinfo(b"rope_factors_long.weight", 48) +
                                                   tinfo(b"rope_factors_short.weight", 48, 0, 256)), lists))
    put("config", "gguf_llama_freqs_data", data(gguf(llama, n_tensors=1, tail=tinfo(b"rope_freqs.weight", 64)),
                                                struct.pack("<64f", *[1.0] * 29 + [2.0] * 6 + [8.0] * 29)))
    put("config", "bad_gguf_tensor_f16", data(gguf(llama, n_tensors=1, tail=tinfo(b"rope_freqs.weight", 64, 1)), bytes(128)))
    put("config", "bad_gguf_tensor_outside", data(gguf(llama, n_tensors=1, tail=tinfo(b"rope_freqs.weight", 64, 0, 1 << 40)), bytes(256)))
    put("config", "bad_gguf_tensor_misaligned", data(gguf(llama, n_tensors=1, tail=tinfo(b"rope_freqs.weight", 64, 0, 4)), bytes(260)))
    put("config", "bad_gguf_duplicate_key", gguf(llama + [("llama.rope.freq_base", 6, f32(10000.0))]))
    ds2 = [("general.architecture", 8, s(b"deepseek2")), ("deepseek2.rope.freq_base", 6, f32(10000.0)),
           ("deepseek2.rope.dimension_count", 4, u32(64)), ("deepseek2.attention.key_length", 4, u32(576)),
           ("deepseek2.attention.key_length_mla", 4, u32(192)), ("deepseek2.context_length", 4, u32(163840)),
           ("deepseek2.rope.scaling.type", 8, s(b"yarn")), ("deepseek2.rope.scaling.factor", 6, f32(40.0)),
           ("deepseek2.rope.scaling.original_context_length", 4, u32(4096)),
           ("deepseek2.rope.scaling.yarn_log_multiplier", 6, f32(0.0707))]
    put("config", "gguf_deepseek2_mla", gguf(ds2))
    gemma3 = [("general.architecture", 8, s(b"gemma3")), ("gemma3.rope.freq_base", 6, f32(1e6)),
              ("gemma3.rope.freq_base_swa", 6, f32(1e4)), ("gemma3.attention.key_length", 4, u32(128)),
              ("gemma3.block_count", 4, u32(62)), ("gemma3.attention.sliding_window", 4, u32(1024)),
              ("gemma3.rope.scaling.type", 8, s(b"linear")), ("gemma3.rope.scaling.factor", 6, f32(8.0)),
              ("gemma3.rope.dimension_sections", 9, u32(5) + struct.pack("<Q", 3) + struct.pack("<3i", 16, 24, 24))]
    put("config", "gguf_gemma3_swa", gguf(gemma3))
    put("config", "json_duplicate_key", b'{"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, '
                                        b'"rope_theta": 10000, "rope_theta": 500000}')
    hf = {
        "gemma3_defaults": {"model_type": "gemma3", "text_config": {"hidden_size": 2560, "model_type": "gemma3_text",
                                                                    "num_hidden_layers": 34, "sliding_window": 1024,
                                                                    "rope_scaling": {"factor": 8.0, "rope_type": "linear"}}},
        "chatglm": {"model_type": "chatglm", "hidden_size": 4096, "num_attention_heads": 32, "kv_channels": 128,
                    "seq_length": 131072, "rope_ratio": 500},
        "gptj": {"model_type": "gptj", "n_embd": 4096, "n_head": 16, "rotary_dim": 64, "n_positions": 2048},
        "gemma3_rope_parameters": {"model_type": "gemma3_text", "hidden_size": 1152, "num_attention_heads": 4,
                                   "head_dim": 256, "layer_types": ["sliding_attention"] * 5 + ["full_attention"],
                                   "rope_parameters": {"full_attention": {"rope_type": "default", "rope_theta": 1e6},
                                                       "sliding_attention": {"rope_type": "default", "rope_theta": 1e4}}},
        "llama": {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32, "rope_theta": 500000.0,
                  "max_position_embeddings": 131072,
                  "rope_scaling": {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0,
                                   "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}},
        "deepseek_yarn": {"model_type": "deepseek_v3", "hidden_size": 7168, "num_attention_heads": 128,
                          "qk_rope_head_dim": 64, "rope_theta": 10000, "max_position_embeddings": 163840,
                          "rope_scaling": {"type": "yarn", "factor": 40, "beta_fast": 32, "beta_slow": 1,
                                           "mscale": 1.0, "mscale_all_dim": 1.0,
                                           "original_max_position_embeddings": 4096}},
        "phi3_longrope": {"model_type": "phi3", "hidden_size": 3072, "num_attention_heads": 32,
                          "max_position_embeddings": 131072, "original_max_position_embeddings": 4096,
                          "rope_scaling": {"type": "longrope", "short_factor": [1.0] * 48,
                                           "long_factor": [1.5] * 48}},
        "neox_partial": {"model_type": "gpt_neox", "hidden_size": 2048, "num_attention_heads": 16,
                         "rotary_pct": 0.25, "rotary_emb_base": 10000, "max_position_embeddings": 2048},
        "dynamic": {"model_type": "llama", "hidden_size": 4096, "num_attention_heads": 32,
                    "max_position_embeddings": 4096, "rope_scaling": {"type": "dynamic", "factor": 2.0}},
        "vl_text_config": {"model_type": "qwen2_vl", "text_config": {"hidden_size": 1536, "num_attention_heads": 12,
                                                                   "rope_theta": 1000000.0,
                                                                   "rope_scaling": {"type": "mrope", "mrope_section": [16, 24, 24]}}},
        "bad_theta_string": {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2, "rope_theta": "1e6"},
        "bad_factor_zero": {"model_type": "llama", "hidden_size": 64, "num_attention_heads": 2,
                            "rope_scaling": {"type": "linear", "factor": 0}},
    }
    for name, cfg in hf.items():
        put("config", "json_" + name, json.dumps(cfg).encode())
    put("config", "json_not_json", b"{\"model_type\": ")
    put("config", "json_deep", b"[" * 2000)


def cli():
    cases = {
        "help": ["--help"],
        "version": ["--version"],
        "table_help": ["table", "--help"],
        "table_basic": ["table", "--len", "4", "--dim", "8", "-o", "pe.npy"],
        "table_csv": ["table", "--len", "3", "--dim", "4", "-o", "pe.csv"],
        "table_stdout": ["table", "--kind", "index", "--len", "3", "--dim", "2", "-o", "-"],
        "table_t2t": ["table", "--len", "4", "--dim", "7", "--freqs", "t2t", "--layout", "half", "--odd", "pad",
                      "--start", "2", "-o", "x.npy"],
        "table_torch": ["table", "--len=2", "--dim=16", "--torch-compat", "--dtype", "bf16", "-o", "-"],
        "table_dtypes": ["table", "--len", "2", "--dim", "15", "--odd", "round_up", "--dtype", "f16", "-o", "a.npy"],
        "table_bad_dim": ["table", "--len", "4", "--dim", "65", "-o", "pe.npy"],
        "table_bad_base": ["table", "--len", "4", "--dim", "8", "--base", "nan", "-o", "pe.npy"],
        "table_huge": ["table", "--len", "1099511627776", "--dim", "1048576", "-o", "pe.npy"],
        "table_unknown": ["table", "--bogus", "--", "-x"],
        "unknown_command": ["frobnicate"],
    }
    for name, argv in cases.items():
        put("cli", name, b"\0".join(a.encode() for a in argv))
    pos = npy_bytes(np.array([5, 0, 7], dtype=np.int64))
    put("cli", "table_positions", b"\0".join([b"table", b"--dim", b"8", b"--positions", b"p.npy", b"-o", b"o.npy"])
        + b"\0\0" + pos)
    put("cli", "table_positions_f64", b"\0".join([b"table", b"--dim", b"4", b"--positions", b"p.npy", b"-o", b"-"])
        + b"\0\0" + npy_bytes(np.array([0.5, 2.25])))
    put("cli", "table_positions_overwrite", b"\0".join([b"table", b"--dim", b"4", b"--positions", b"p.npy", b"-o",
                                                         b"p.npy"]) + b"\0\0" + pos)


def lab_tensors(c):
    """The tensor list of lab/model.c build_table for the schemes the seeds use."""
    V, C, F, L, H = c["vocab"], c["d_model"], c["d_ff"], c["layers"], c["heads"]
    t = [("wte", [V, C])]
    if c["scheme"] == "learned":
        t.append(("wpe", [c["context"], C]))
    if c["scheme"] == "t5":
        t.append(("t5_bias", [c["t5_buckets"], H]))
    t += [("blocks.ln_1.weight", [L, C]), ("blocks.ln_1.bias", [L, C]),
          ("blocks.attn.qkv.weight", [L, 3 * C, C]), ("blocks.attn.qkv.bias", [L, 3 * C]),
          ("blocks.attn.proj.weight", [L, C, C]), ("blocks.attn.proj.bias", [L, C]),
          ("blocks.ln_2.weight", [L, C]), ("blocks.ln_2.bias", [L, C]),
          ("blocks.mlp.fc.weight", [L, F, C]), ("blocks.mlp.fc.bias", [L, F]),
          ("blocks.mlp.proj.weight", [L, C, F]), ("blocks.mlp.proj.bias", [L, C])]
    if c["scheme"] == "shaw":
        hd = C // H
        t += [("blocks.attn.shaw_k", [L, 2 * c["shaw_clip"] + 1, hd]),
              ("blocks.attn.shaw_v", [L, 2 * c["shaw_clip"] + 1, hd])]
    t += [("ln_f.weight", [C]), ("ln_f.bias", [C])]
    return t


def lab_ckpt(c, step="3", meta=None, poison=None, text_c=None, shapes=None):
    """A posenc-lab checkpoint as lab/checkpoint.c writes it: the parameters, then
    adam.m.* and adam.v.*, all F32; __metadata__ with the config text and step.
    poison = (prefix, name, value) overwrites the first element of one tensor;
    text_c: the config written in the metadata when it is not c's; shapes: names
    whose header shape is replaced (the data stays c's)."""
    text = " ".join(f"{k}={v}" for k, v in (text_c or c).items())
    header = {"__metadata__": meta if meta is not None else
              {"format": "posenc-lab", "posenc_version": "0.3.0", "config": text, "step": step}}
    rng = np.random.default_rng(7)
    data = b""
    for prefix in ["", "adam.m.", "adam.v."]:
        for name, shape in lab_tensors(c):
            v = rng.standard_normal(int(np.prod(shape))).astype(np.float32) * 0.02
            if prefix == "adam.v.":
                v = v * v
            if poison and poison[0] == prefix and poison[1] == name:
                v[0] = poison[2]
            header[prefix + name] = {"dtype": "F32", "shape": (shapes or {}).get(prefix + name, shape), "data_offsets": [len(data), len(data) + 4 * v.size]}
            data += v.tobytes()
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data


def lab_checkpoint():
    small = {"vocab": 4, "layers": 1, "d_model": 2, "heads": 1, "d_ff": 2, "context": 3, "scheme": "none"}
    put("lab_checkpoint", "valid_none", lab_ckpt(small))
    put("lab_checkpoint", "valid_learned", lab_ckpt(dict(small, scheme="learned")))
    put("lab_checkpoint", "valid_t5", lab_ckpt(dict(small, scheme="t5", t5_buckets=4, t5_max_distance=8)))
    put("lab_checkpoint", "valid_shaw", lab_ckpt(dict(small, scheme="shaw", shaw_clip=1)))
    put("lab_checkpoint", "valid_rope_2l", lab_ckpt(dict(small, scheme="rope", layers=2, d_model=4, heads=2)))
    put("lab_checkpoint", "bad_nan_param", lab_ckpt(small, poison=("", "wte", float("nan"))))
    put("lab_checkpoint", "bad_inf_moment", lab_ckpt(small, poison=("adam.m.", "ln_f.bias", float("inf"))))
    put("lab_checkpoint", "bad_negative_second_moment", lab_ckpt(small, poison=("adam.v.", "wte", -1.0)))
    put("lab_checkpoint", "bad_step_negative", lab_ckpt(small, step="-1"))
    put("lab_checkpoint", "bad_step_huge", lab_ckpt(small, step="99999999999999999999999"))
    put("lab_checkpoint", "bad_no_metadata", lab_ckpt(small, meta={}))
    put("lab_checkpoint", "bad_format", lab_ckpt(small, meta={"format": "pt", "config": "", "step": "0"}))
    put("lab_checkpoint", "bad_field_float", lab_ckpt(small, text_c=dict(small, vocab="1e300")))
    put("lab_checkpoint", "bad_field_nan", lab_ckpt(small, text_c=dict(small, d_model="nan")))
    put("lab_checkpoint", "bad_field_fraction", lab_ckpt(small, text_c=dict(small, layers="1.5")))
    put("lab_checkpoint", "bad_field_unknown", lab_ckpt(small, text_c=dict(small, colour=3)))
    put("lab_checkpoint", "bad_tied_2", lab_ckpt(small, text_c=dict(small, tied=2)))
    # the config claims a model far larger than the bytes present (must be refused before allocating it)
    put("lab_checkpoint", "bad_claims_huge_model",
        lab_ckpt(small, text_c=dict(small, layers=64, d_model=8192, d_ff=65536, vocab=65536, context=65536)))
    put("lab_checkpoint", "bad_truncated", lab_ckpt(small)[:-100])
    put("lab_checkpoint", "bad_wrong_shape", lab_ckpt(small, shapes={"wte": [2, 4]}))


def render():
    """fuzz_render (issue 26 item 4): head = doubles, tail = colorbar, colormap, mode,
    cols - 1, rows - 1 (read from the end). Modes: 0 raw, 1 constant, 2 few-ulp range,
    3 +-DBL_MAX range, 4 sparse."""
    values = {"1e16": 1e16, "neg1e16": -1e16, "one": 1.0, "zero": 0.0, "max": 1.7e308, "denormal": 5e-324,
              "nan": float("nan"), "inf": float("inf")}
    n = 0
    for name, v in values.items():
        for mode in range(5):
            rows, cols = [(1, 1), (8, 8), (40, 40), (1, 40), (40, 1)][(n := n + 1) % 5]
            payload = struct.pack("<d", v) * 3 + struct.pack("<d", -v) + struct.pack("<d", 1.0)
            tail = bytes([n % 2, (n // 2) % 2, mode, cols - 1, rows - 1])
            put("render", f"mode{mode}_{name}_{rows}x{cols}", payload + tail)


LAB_LINE = {"id": "tiny:rope:s1", "experiment": "tiny", "label": "rope", "scheme": "rope", "seed": 1,
            "train_length": 16, "steps": 2, "data": "text", "corpus_bytes": 1000, "corpus_fnv1a64": "0123456789abcdef",
            "curve": [{"step": 1, "bpb": 8.0}, {"step": 2, "bpb": 7.5}],
            "evals": [{"phase": "trained", "variant": "plain", "length": 16, "bpb": 6.5, "bpb_sliding": 6.4},
                      {"phase": "trained", "variant": "plain", "length": 32, "bpb": 6.9}],
            "position_memory": {"rows": 16, "cols": 32, "dense_bytes": 2048}}


def lab_results():
    """fuzz_lab_results: result files, valid and hostile (non-finite and huge numbers,
    deep nesting, NUL, no final newline, not objects, ids that are not strings)."""
    line = json.dumps(LAB_LINE, separators=(",", ":"))
    task = dict(LAB_LINE, id="tiny-task:copy:s1", data="copy", evals=[{"phase": "trained", "variant": "plain", "length": 8, "accuracy": 0.5}])
    task.pop("corpus_bytes")
    put("lab_results", "valid_one", (line + "\n").encode())
    put("lab_results", "valid_three", "\n".join([line, line.replace("s1", "s2"), json.dumps(task)]).encode() + b"\n")
    put("lab_results", "valid_no_label", (line.replace('"label":"rope",', "") + "\n").encode())
    # a line without train_length, or with a string there: lab claims dereferenced NULL (hostile round)
    put("lab_results", "valid_no_train_length", (line.replace('"train_length":16,', "") + "\n").encode())
    put("lab_results", "valid_train_length_string", (line.replace('"train_length":16', '"train_length":"16"') + "\n").encode())
    put("lab_results", "valid_duplicate_ids", ((line + "\n") * 2).encode())
    put("lab_results", "valid_unfinished_last", (line + "\n" + line[:40]).encode())
    put("lab_results", "empty", b"")
    put("lab_results", "blank_lines", b"\n\n\n")
    for name, bad in {"neg_inf": "-1e999", "inf": "1e999", "huge": "1e308", "negative_bpb": "-0.5", "tiny": "1e-320"}.items():
        put("lab_results", "bad_bpb_" + name, (line.replace('"bpb":6.5', '"bpb":' + bad) + "\n").encode())
    put("lab_results", "bad_accuracy", (json.dumps(task).replace('"accuracy": 0.5', '"accuracy": 1.5') + "\n").encode())
    put("lab_results", "bad_length_huge", (line.replace('"length":32', '"length":1e300') + "\n").encode())
    put("lab_results", "bad_step_inf", (line.replace('"step":2', '"step":1e999') + "\n").encode())
    put("lab_results", "bad_deep", ('{"id":"x","a":' + "[" * 2000 + "]" * 2000 + "}\n").encode())
    put("lab_results", "bad_nul", (line[:20] + "\0" + line[20:] + "\n").encode())
    put("lab_results", "bad_not_object", b"[1,2,3]\n")
    put("lab_results", "bad_id_number", b'{"id":3}\n')
    put("lab_results", "bad_nan_literal", (line.replace('"bpb":6.5', '"bpb":NaN') + "\n").encode())
    put("lab_results", "bad_utf16", "\ufeff".encode("utf-16-le") + (line + "\n").encode("utf-16-le"))
    put("lab_results", "bad_commented", ("// results\n" + line + "\n").encode())


def main():
    npy()
    safetensors()
    config()
    carved("table", 10, [0, 8, 16, 24, 32, 48, 64, 96, 128, 256])
    carved("dtype", 8, [0, 6, 12, 48, 96, 100, 200, 300])
    carved("analysis", 10, [0, 16, 40, 80, 160, 320, 640, 1200, 2400, 4000])
    carved("bias", 10, [0, 8, 24, 48, 96, 160, 256, 400, 600, 900])
    carved("rope", 10, [0, 16, 48, 96, 200, 600, 1200, 2300, 2400, 3000])
    rope_exec()
    cli()
    lab_checkpoint()
    render()
    lab_results()


if __name__ == "__main__":
    main()
