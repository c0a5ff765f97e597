"""posenc.load_config: a model layer by layer (posenc_model), from the fixtures of
tests/fixtures/models (issue 23). Its ctypes structs are checked against posenc.h in test_abi.py."""
import os

import pytest

import posenc
from conftest import ROOT

MODELS = os.path.join(ROOT, "tests", "fixtures", "models")


def fixture(name):
    return os.path.join(MODELS, name + ".json")


def test_smollm3_layers_and_the_one_rope_fields():
    m = posenc.load_config(fixture("smollm3_3b"))
    schemes = [layer.scheme for layer in m.layers]
    assert len(schemes) == 36 and schemes[:4] == ["rope", "rope", "rope", "nope"] and schemes.count("nope") == 9
    assert m.layers[0].rope is m.ropes[0] and m.layers[3].rope is None and not m.assumed
    assert m.family == "smollm3" and m.layout == "half" and m.rope.base == 5e6  # ModelConfig fields, delegated
    assert "use_sliding_window" in m.unused_keys


def test_models_without_rope():
    bloom = posenc.load_config(fixture("bloom_560m"))
    assert bloom.config is None and bloom.ropes == () and all(x.scheme == "alibi" for x in bloom.layers)
    assert len(bloom.layers[0].alibi_slopes) == 16 and bloom.layers[0].alibi_slopes[1] == 0.5
    with pytest.raises(AttributeError, match="no RoPE"):
        bloom.rope
    opt = posenc.load_config(fixture("opt_125m"))
    assert (opt.layers[0].scheme, opt.layers[0].offset, opt.layers[0].size) == ("learned", 2, 2050)
    t5 = posenc.load_config(fixture("t5_v1_1_xxl_encoder"))
    assert t5.layers[0].bidirectional is True and t5.layers[-1].bidirectional is False
    assert t5.layers[0].num_buckets == 32 and t5.layers[0].max_distance == 128
    jamba = posenc.load_config(fixture("jamba_v0_1"))
    assert [x.kind for x in jamba.layers].count("mamba") == 28 and {x.scheme for x in jamba.layers} == {"nope"}


def test_unknown_refused_and_assumed():
    with pytest.raises(posenc.UnsupportedError, match="mystery_lm.*closest"):
        posenc.load_config(fixture("unknown_family"))
    m = posenc.load_config(fixture("unknown_family"), assume="llama")
    assert m.assumed and m.assumed_family == "llama" and m.rope.base == 250000 and "unknown_family" in m.warnings
    with pytest.raises(posenc.InvalidArgumentError, match="'lama'"):
        posenc.load_config(fixture("unknown_family"), assume="lama")
    bare = posenc.load_config({"hidden_size": 512, "num_attention_heads": 8})  # no name at all: said to be assumed
    assert bare.assumed and bare.assumed_family == "generic" and not bare.layout_known


def test_dict_mode_and_variants():
    m = posenc.load_config({"model_type": "gemma3_text", "num_hidden_layers": 6, "head_dim": 256,
                            "hidden_size": 1152, "num_attention_heads": 4}, mode="torch")
    kinds = [(x.kind, x.rope_index) for x in m.layers]
    assert kinds[5] == ("full_attention", 0) and kinds[0] == ("sliding_attention", 1)
    assert m.ropes[1].base == 10000 and m.ropes[0].base == 1e6 and m.ropes[0].mode == "torch"
    hy = posenc.load_config(fixture("hunyuan_7b_instruct"))
    assert hy.rope.base == 10000 * 1000 ** (128 / 126)  # Python's own arithmetic, as HF does it


def test_wrappers_position_start():
    """PaliGemma's forward counts positions from 1 (modeling_paligemma.py; tests/py/test_model_misreads.py runs
    it); an outer model_type posenc does not know around a known text_config is refused, not read as the inner."""
    pg = posenc.load_config({"model_type": "paligemma", "hidden_size": 2048,
                             "text_config": {"model_type": "gemma", "num_hidden_layers": 18}})
    assert pg.position_start == 1 and pg.family == "gemma" and len(pg.layers) == 18
    assert posenc.load_config(fixture("smollm3_3b")).position_start == 0
    with pytest.raises(posenc.UnsupportedError, match="'xvlm' wraps a text_config of model_type 'llama'"):
        posenc.load_config({"model_type": "xvlm", "text_config": {"model_type": "llama"}})  # a made-up type


def test_sinusoid_tables_per_stack():
    # M2M-100 (pad_token_id 4): each stack its own fairseq table, rows from padding_idx + 1, row 4 zeroed, growing
    m = posenc.load_config({"model_type": "m2m_100", "d_model": 64, "encoder_layers": 2, "decoder_layers": 3,
                            "max_position_embeddings": 100, "pad_token_id": 4})
    enc, dec = m.layers[0], m.layers[-1]
    assert [x.kind for x in m.layers] == ["encoder"] * 2 + ["decoder"] * 3
    assert (enc.tensor, enc.size, enc.offset, enc.zero_row, enc.grows, enc.skips_padding) == (
        "model.encoder.embed_positions.weights", 102, 5, 4, True, True)
    assert (dec.tensor, dec.size, dec.offset) == ("model.decoder.embed_positions.weights", 102, 5)
    # Speech2Text: the two stacks' tables have different row counts
    s2t = posenc.load_config({"model_type": "speech_to_text", "max_source_positions": 300, "max_target_positions": 50})
    assert (s2t.layers[0].size, s2t.layers[-1].size) == (302, 52)
    # Marian: float64 tables, vaswani [sin | cos], rows = positions; XGLM: one stack, rows + 2, no padding skipped
    mar = posenc.load_config({"model_type": "marian", "d_model": 64})
    assert (mar.layers[-1].tensor, mar.layers[-1].freqs, mar.layers[-1].offset, mar.layers[-1].zero_row) == (
        "model.decoder.embed_positions.weight", "vaswani", 0, -1)
    x = posenc.load_config({"model_type": "xglm", "pad_token_id": 5})
    assert (x.layers[0].kind, x.layers[0].offset, x.layers[0].zero_row, x.layers[0].skips_padding) == (
        "attention", 2, 5, False)
    with pytest.raises(posenc.UnsupportedError, match="d_model"):
        posenc.load_config({"model_type": "marian", "d_model": 63})


def test_deberta_layers():
    # DeBERTa-v3's position keys: every layer reads the shared relative table through 256 log buckets
    v3 = posenc.load_config({"model_type": "deberta-v2", "num_hidden_layers": 12, "max_position_embeddings": 512,
                             "relative_attention": True, "position_buckets": 256, "pos_att_type": "p2c|c2p",
                             "max_relative_positions": -1, "position_biased_input": False})
    assert [x.scheme for x in v3.layers] == ["deberta"] * 12 and v3.config is None
    x = v3.layers[0]
    assert (x.position_buckets, x.max_relative_positions, x.span, x.c2p, x.p2c, x.absolute, x.tensor) == \
        (256, 512, 256, True, True, False, None)
    # v1 with position_biased_input (its class default): the absolute table too, rows 0..511
    v1 = posenc.load_config({"model_type": "deberta", "relative_attention": True, "pos_att_type": ["c2p"]})
    y = v1.layers[0]
    assert (y.position_buckets, y.span, y.c2p, y.p2c, y.absolute) == (0, 512, True, False, True)
    assert (y.tensor, y.offset, y.size) == ("deberta.embeddings.position_embeddings.weight", 0, 512)


def test_vision_patch_tables():
    # ViT-style image tables (posenc_model.patch_*): DeiT's CLS + distillation rows, then 14 x 14 patches at its
    # class defaults (224 / 16); DINOv2 with registers: CLS row 0, the registers no row, then the patches
    deit = posenc.load_config({"model_type": "deit"})
    x = deit.layers[0]
    assert [y.scheme for y in deit.layers] == ["learned"] * 12 and deit.config is None
    assert (x.tensor, x.offset, x.size, x.patch_grid, x.patch_prefix_rows, x.patch_prefix_plain) == \
        ("deit.embeddings.position_embeddings", 0, 2 + 14 * 14, (14, 14), 2, 0)
    reg = posenc.load_config({"model_type": "dinov2_with_registers", "image_size": 10, "patch_size": 4,
                              "num_register_tokens": 3}).layers[0]
    assert (reg.size, reg.patch_grid, reg.patch_prefix_rows, reg.patch_prefix_plain) == (5, (2, 2), 1, 3)
    # a text model's learned table has no grid
    assert posenc.load_config({"model_type": "bert"}).layers[0].patch_grid is None


def test_conv_position_fields():
    # wav2vec2's class defaults: one weight-normed conv of 128 taps (even: the last frame dropped), 16 groups
    w = posenc.load_config({"model_type": "wav2vec2"})
    x = w.layers[0]
    assert [y.scheme for y in w.layers] == ["conv_position"] * 12 and w.config is None
    assert (x.conv_kernel, x.conv_groups, x.conv_layers, x.conv_padding, x.conv_trim, x.conv_stride, x.conv_norm,
            x.conv_activation, x.tensor) == (128, 16, 1, 64, 1, 1, "weight", "gelu", "wav2vec2.encoder.pos_conv_embed")
    # data2vec-audio: num_conv_pos_embeddings counts layers, conv_pos_kernel_size is the kernel (odd: nothing dropped)
    d = posenc.load_config({"model_type": "data2vec-audio", "num_conv_pos_embeddings": 3}).layers[0]
    assert (d.conv_kernel, d.conv_layers, d.conv_padding, d.conv_trim, d.conv_norm) == (19, 3, 9, 0, "layer")
    h = posenc.load_config({"model_type": "hubert", "conv_pos_batch_norm": True}).layers[0]
    s = posenc.load_config({"model_type": "sew", "squeeze_factor": 3}).layers[0]
    assert (h.conv_norm, s.conv_stride, s.conv_norm) == ("batch", 3, "weight")
    # WavLM: the same convolution plus the gated bucket bias, layer 0's table
    wl = posenc.load_config({"model_type": "wavlm", "num_buckets": 64}).layers
    assert (wl[5].scheme, wl[5].wavlm_buckets, wl[5].wavlm_max_distance, wl[5].conv_kernel) == ("conv_position", 64, 800, 128)
    assert wl[0].wavlm_tensor == "wavlm.encoder.layers.0.attention.rel_attn_embed.weight" and w.layers[0].wavlm_buckets == 0


def test_rope_2d_vision_encoders():
    # 2-D RoPE by patch row and column (posenc_model.rope2d*): Pixtral's class defaults, Qwen2.5-VL's windows and
    # full-attention layers, MLCD's CLS at learned angles, DINOv3's unrotated CLS + registers, Qwen3-VL's named table
    px = posenc.load_config({"model_type": "pixtral"})
    assert [x.scheme for x in px.layers] == ["rope_2d"] * 24 and px.config is None
    r = px.layers[0].rope_2d
    assert (r.kind, r.head_dim, r.base, r.merge, r.window, r.patch_size) == ("pixtral", 64, 10000.0, 1, 0, 16)
    q = posenc.load_config({"model_type": "qwen2_5_vl_vision", "depth": 8, "hidden_size": 1280,
                            "fullatt_block_indexes": [3, 7]})
    assert [x.kind for x in q.layers] == ["window_attention"] * 3 + ["full_attention"] + \
        ["window_attention"] * 3 + ["full_attention"]
    r = q.layers[0].rope_2d
    assert (r.kind, r.head_dim, r.merge, r.window) == ("axial", 80, 2, 4)  # 112 // 2 // 14
    m = posenc.load_config({"model_type": "mlcd"}).layers[0].rope_2d
    assert (m.lead, m.lead_tensor, m.head_dim) == (1, "class_pos_emb", 104)
    d = posenc.load_config({"model_type": "dinov3_vit", "num_register_tokens": 4}).layers[0].rope_2d
    assert (d.kind, d.base, d.plain) == ("dinov3", 100.0, 5)
    assert posenc.load_config({"model_type": "qwen3_vl_vision"}).layers[0].rope_2d.resized_table == "pos_embed.weight"


def test_whisper_two_stacks_and_modernbert_bases():
    # Whisper large-v3's position keys: the encoder's fixed sinusoid, then the decoder's learned table
    w = posenc.load_config({"model_type": "whisper", "d_model": 1280, "encoder_layers": 32, "decoder_layers": 32,
                            "max_source_positions": 1500, "max_target_positions": 448})
    assert [x.scheme for x in w.layers] == ["sinusoidal"] * 32 + ["learned"] * 32 and w.config is None
    enc, dec = w.layers[0], w.layers[-1]
    assert (enc.kind, enc.size, enc.dim, enc.base, enc.freqs, enc.layout) == ("encoder", 1500, 1280, 10000.0, "t2t", "half")
    assert enc.tensor == "model.encoder.embed_positions.weight"
    assert (dec.kind, dec.size, dec.offset, dec.tensor) == ("decoder", 448, 0, "model.decoder.embed_positions.weight")
    # ModernBERT-base (4.x spelling): full layers 0, 3, .. at global_rope_theta, the others local_rope_theta
    mb = posenc.load_config({"model_type": "modernbert", "num_hidden_layers": 22, "global_rope_theta": 160000.0,
                             "local_rope_theta": 10000.0, "global_attn_every_n_layers": 3, "local_attention": 128})
    bases = [x.rope.base for x in mb.layers]
    assert bases[:4] == [160000.0, 10000.0, 10000.0, 160000.0] and bases.count(160000.0) == 8
    assert [x.sliding_window for x in mb.layers[:3]] == [0, 64, 64]
