#!/usr/bin/python3
"""The framework oracle: transformers' own forward pass against what posenc reads from the same config.json.

For each model type below: a tiny random model built from its own config class (few layers, small
widths, the real position keys: rope scaling, partial rotary, layer types, sliding windows, NoPE
layers), one CPU forward pass over T tokens with transformers' apply_rotary_pos_emb wrapped, so each
layer records the cos/sin it really rotates with (a layer that never calls it has no RoPE). The config
is saved as transformers 5.x writes it (rope_parameters) and in the 4.x form (rope_theta +
rope_scaling), and `posenc rope explain --config --json` must give, layer by layer, the same scheme;
for each RoPE kind `posenc rope apply --config --layer-type K --torch-compat` on a unit input must
give HF's cos/sin bit for bit (tolerance 0: torch-compat reproduces HF's float32 arithmetic).
Needs the test environment (POSENC_PYTHON: torch 2.13, transformers 5.18)."""
import copy
import ctypes
import importlib
import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "py"))
from common import Checks, run, tmpdir, torch_math_library, torch_peer_label  # noqa: E402

T = 24
SMALL = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2, vocab_size=128,
             max_position_embeddings=256, pad_token_id=0)
# two stacks of unequal depth, so a swapped encoder / decoder count shows
ENC_DEC = dict(encoder_layers=2, decoder_layers=3, encoder_ffn_dim=128, decoder_ffn_dim=128, decoder_attention_heads=4)
YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
LLAMA3 = {"rope_type": "llama3", "factor": 8.0, "low_freq_factor": 1.0, "high_freq_factor": 4.0,
          "original_max_position_embeddings": 64}
LINEAR = {"rope_type": "linear", "factor": 2.0}

# M-RoPE text types with the keywords of a tiny one (head 32): GLM-4.1V / GLM-4.5V rotate half the head (8 pairs),
# Qwen3.5 half of it (partial 0.5: 8 pairs; layers 0-2 linear attention, 3 full at the default interval 4)
GLM_MOE = dict(n_routed_experts=2, num_experts_per_tok=1, moe_intermediate_size=32, first_k_dense_replace=1, n_group=1,
               topk_group=1)
QWEN35 = dict(num_hidden_layers=4, head_dim=32, partial_rotary_factor=0.5, linear_num_key_heads=2, linear_num_value_heads=2, linear_key_head_dim=16,
              linear_value_head_dim=16)
MROPE_TEXT = [
    ("glm4v_text", dict(num_hidden_layers=2, num_attention_heads=2, rope_parameters=dict(
        rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5, mrope_section=[2, 3, 3]))),
    ("glm4v_moe_text", dict(GLM_MOE, num_hidden_layers=2, num_attention_heads=2, rope_parameters=dict(
        rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5, mrope_section=[2, 3, 3]))),
    ("glm_ocr_text", dict(num_hidden_layers=2, num_attention_heads=2, rope_parameters=dict(
        rope_type="default", rope_theta=10000.0, mrope_section=[4, 6, 6]))),
    ("glm_image_text", dict(num_hidden_layers=2, num_attention_heads=2, rope_parameters=dict(
        rope_type="default", rope_theta=10000.0, mrope_section=[4, 6, 6]))),
    ("paddleocr_vl_text", dict(num_hidden_layers=2, head_dim=32, rope_parameters=dict(
        rope_type="default", rope_theta=500000.0, mrope_section=[4, 6, 6]))),
    ("qwen3_5_text", dict(QWEN35, rope_parameters=dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5,
                                                       mrope_section=[4, 2, 2], mrope_interleaved=True))),
    ("qwen3_5_moe_text", dict(QWEN35, num_experts=2, num_experts_per_tok=1, moe_intermediate_size=32,
                              shared_expert_intermediate_size=32, rope_parameters=dict(
                                  rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5,
                                  mrope_section=[4, 2, 2], mrope_interleaved=True))),
]

# (label, model_type, config keywords); SMALL is added unless a keyword overrides it
CASES = [
    ("llama", "llama", dict(num_hidden_layers=2, rope_theta=500000.0)),
    ("llama llama3", "llama", dict(num_hidden_layers=2, rope_theta=500000.0, rope_scaling=LLAMA3)),
    ("llama linear", "llama", dict(num_hidden_layers=2, rope_scaling=LINEAR)),
    # GPT-NeoX's spellings in a Llama config: LlamaConfig keeps them as plain attributes and its rotary class never
    # reads them (base 10000, every channel rotated); only GPTNeoX(Japanese)Config maps them
    ("llama neox keys", "llama", dict(num_hidden_layers=2, rotary_emb_base=20000, rotary_pct=0.5)),
    ("mistral", "mistral", dict(num_hidden_layers=2, rope_theta=1e6)),
    ("qwen2 yarn", "qwen2", dict(num_hidden_layers=2, rope_theta=1e6, rope_scaling=YARN)),
    ("qwen3", "qwen3", dict(num_hidden_layers=2, head_dim=32)),
    ("gemma", "gemma", dict(num_hidden_layers=2, head_dim=16)),
    ("gemma2", "gemma2", dict(num_hidden_layers=4, head_dim=16, sliding_window=8)),
    ("gemma3_text", "gemma3_text", dict(num_hidden_layers=6, head_dim=16, sliding_window=8)),
    ("phi3", "phi3", dict(num_hidden_layers=2)),
    ("olmo2", "olmo2", dict(num_hidden_layers=2)),
    ("olmo3 yarn", "olmo3", dict(num_hidden_layers=4, rope_theta=10000.0, sliding_window=8, rope_scaling=YARN)),
    ("cohere2", "cohere2", dict(num_hidden_layers=4, sliding_window=8)),
    ("gpt_neox", "gpt_neox", dict(num_hidden_layers=2, rotary_pct=0.25)),
    ("stablelm", "stablelm", dict(num_hidden_layers=2, partial_rotary_factor=0.25)),
    ("starcoder2", "starcoder2", dict(num_hidden_layers=2)),
    ("granite", "granite", dict(num_hidden_layers=2)),
    ("smollm3", "smollm3", dict(num_hidden_layers=4)),
    ("exaone4", "exaone4", dict(num_hidden_layers=4, sliding_window=8)),
    # Cohere2-MoE: sliding layers rotate (interleaved), full ones NoPE, except the dense-MLP prefix while
    # prefix_dense_sliding_window_pattern is 1 (force_rope); the 4.x form drops layer_types / mlp_layer_types and
    # gives first_k_dense_replace, so posenc derives the kinds as the config class does
    ("cohere2_moe", "cohere2_moe", dict(num_hidden_layers=6, head_dim=16, sliding_window=8, first_k_dense_replace=2,
                                        num_experts=2, num_experts_per_tok=1, prefix_dense_intermediate_size=128)),
    ("cohere2_moe prefix pattern 2", "cohere2_moe", dict(num_hidden_layers=6, head_dim=16, sliding_window=8,
                                                         first_k_dense_replace=2, prefix_dense_sliding_window_pattern=2,
                                                         sliding_window_pattern=2, num_experts=2,
                                                         num_experts_per_tok=1, prefix_dense_intermediate_size=128,
                                                         rope_theta=50000.0)),
    # families added as one table row each (src/config/config_family.c)
    ("seed_oss", "seed_oss", dict(num_hidden_layers=2, head_dim=32)),
    ("granitemoe", "granitemoe", dict(num_hidden_layers=2, num_local_experts=2, num_experts_per_tok=1)),
    ("nemotron", "nemotron", dict(num_hidden_layers=2, head_dim=16, partial_rotary_factor=0.5)),
    ("arcee", "arcee", dict(num_hidden_layers=2, head_dim=16)),
    ("bitnet", "bitnet", dict(num_hidden_layers=2)),
    ("glm4_moe", "glm4_moe", dict(num_hidden_layers=2, head_dim=16, n_routed_experts=2, num_experts_per_tok=1,
                                  moe_intermediate_size=32, first_k_dense_replace=1)),
    ("diffllama", "diffllama", dict(num_hidden_layers=2, head_dim=16)),
    ("gpt_oss yarn", "gpt_oss", dict(num_hidden_layers=4, head_dim=16, sliding_window=8, num_local_experts=2,
                                     num_experts_per_tok=1,
                                     rope_scaling={"rope_type": "yarn", "factor": 32.0, "beta_fast": 32.0,
                                                   "beta_slow": 1.0, "truncate": False,
                                                   "original_max_position_embeddings": 64})),
    ("apertus llama3", "apertus", dict(num_hidden_layers=2, rope_theta=12e6, rope_scaling=LLAMA3)),
    ("doge", "doge", dict(num_hidden_layers=2)),
    ("flex_olmo", "flex_olmo", dict(num_hidden_layers=2, num_experts=2, num_experts_per_tok=1)),
    # Granite-SWA: layer_rope_theta[i] is layer i's base, 0 = NoPE (here one non-zero base, not rope_theta's)
    ("granite_swa", "granite_swa", dict(num_hidden_layers=5, sliding_window=8)),
    ("granite_swa layer_rope_theta", "granite_swa", dict(num_hidden_layers=4, sliding_window=8,
                                                         layer_types=["sliding_attention", "full_attention",
                                                                      "sliding_attention", "full_attention"],
                                                         layer_rope_theta=[50000.0, 0, 50000.0, 0])),
    ("granitemoe_swa yarn", "granitemoe_swa", dict(num_hidden_layers=4, sliding_window=8, num_local_experts=2,
                                                   num_experts_per_tok=1, layer_rope_theta=[0, 10000, 10000, 10000],
                                                   rope_scaling=YARN)),
    ("granitemoeshared", "granitemoeshared", dict(num_hidden_layers=2, num_local_experts=2, num_experts_per_tok=1)),
    ("jais2", "jais2", dict(num_hidden_layers=2, head_dim=16)),
    ("nanochat", "nanochat", dict(num_hidden_layers=2)),
    ("olmoe", "olmoe", dict(num_hidden_layers=2, num_experts=2, num_experts_per_tok=1)),
    ("vaultgemma", "vaultgemma", dict(num_hidden_layers=4, head_dim=16, sliding_window=8)),
    ("aria_text", "aria_text", dict(num_hidden_layers=2, head_dim=16, moe_num_experts=2, moe_topk=1)),
    # learned absolute tables: the rows the run looks up (GPT-2 0.., OPT +2, BERT 0.., RoBERTa pad_token_id + 1)
    ("gpt2", "gpt2", dict(n_layer=2, n_embd=64, n_head=4, n_positions=256)),
    ("opt", "opt", dict(num_hidden_layers=2, ffn_dim=128, word_embed_proj_dim=64)),
    ("bert", "bert", dict(num_hidden_layers=2)),
    ("electra", "electra", dict(num_hidden_layers=2, embedding_size=64)),
    ("roberta", "roberta", dict(num_hidden_layers=2, pad_token_id=1, max_position_embeddings=130)),
    ("roberta pad 100", "roberta", dict(num_hidden_layers=2, pad_token_id=100, max_position_embeddings=130)),
    ("xlm-roberta", "xlm-roberta", dict(num_hidden_layers=2, pad_token_id=1)),
    ("camembert", "camembert", dict(num_hidden_layers=2, pad_token_id=1)),
    ("data2vec-text", "data2vec-text", dict(num_hidden_layers=2, pad_token_id=1)),
    ("roberta-prelayernorm", "roberta-prelayernorm", dict(num_hidden_layers=2, pad_token_id=1)),
    ("xlm-roberta-xl", "xlm-roberta-xl", dict(num_hidden_layers=2, pad_token_id=1)),
    ("megatron-bert", "megatron-bert", dict(num_hidden_layers=2)),
    ("rembert", "rembert", dict(num_hidden_layers=2, input_embedding_size=64, output_embedding_size=64)),
    ("mobilebert", "mobilebert", dict(num_hidden_layers=2, embedding_size=64, intra_bottleneck_size=64)),
    ("ernie", "ernie", dict(num_hidden_layers=2)),
    ("splinter", "splinter", dict(num_hidden_layers=2)),
    ("distilbert", "distilbert", dict(n_layers=2, dim=64, n_heads=4, hidden_dim=128)),
    ("gpt_bigcode", "gpt_bigcode", dict(n_layer=2, n_embd=64, n_head=4, n_positions=256)),
    ("biogpt", "biogpt", dict(num_hidden_layers=2)),
    ("gpt_neo", "gpt_neo", dict(num_layers=2, attention_types=[[["global", "local"], 1]], num_heads=4, window_size=8)),
    ("openai-gpt", "openai-gpt", dict(n_layer=2, n_embd=64, n_head=4, n_positions=256)),
    ("big_bird", "big_bird", dict(num_hidden_layers=2, attention_type="original_full")),
    ("convbert", "convbert", dict(num_hidden_layers=2, embedding_size=64)),
    ("roc_bert", "roc_bert", dict(num_hidden_layers=2)),
    ("nystromformer", "nystromformer", dict(num_hidden_layers=2, pad_token_id=1)),
    ("yoso", "yoso", dict(num_hidden_layers=2)),
    ("ibert", "ibert", dict(num_hidden_layers=2, pad_token_id=1)),
    ("xlm", "xlm", dict(n_layers=2, emb_dim=64, n_heads=4)),
    ("flaubert", "flaubert", dict(n_layers=2, emb_dim=64, n_heads=4)),
    # transformers 5.18 families (one row each in src/config/config_family.c)
    ("hyperclovax", "hyperclovax", dict(num_hidden_layers=2, head_dim=16, rope_theta=50000.0)),
    ("solar_open yarn", "solar_open", dict(num_hidden_layers=2, head_dim=16, n_routed_experts=2, num_experts_per_tok=1,
                                           moe_intermediate_size=32, rope_scaling=YARN)),
    ("minimax_m2 rotary_dim", "minimax_m2", dict(num_hidden_layers=2, head_dim=16, rotary_dim=8, num_local_experts=2,
                                                 num_experts_per_tok=1, rope_theta=5e6)),
    ("hy_v3", "hy_v3", dict(num_hidden_layers=2, head_dim=16, num_experts=2, num_experts_per_tok=1,
                            moe_intermediate_size=32)),
    ("ministral", "ministral", dict(num_hidden_layers=2, head_dim=16, sliding_window=8, rope_theta=1e6)),
    # Ministral 3: yarn, and q scaled by get_llama_4_attn_scale (its own special case: positions past the original)
    ("ministral3 yarn", "ministral3", dict(num_hidden_layers=2, head_dim=16, rope_parameters=dict(
        YARN, rope_theta=1e6, llama_4_scaling_beta=0.1))),
    ("gpt_neox_japanese", "gpt_neox_japanese", dict(num_hidden_layers=2, rotary_pct=0.5, rotary_emb_base=20000)),
    ("cwm llama3", "cwm", dict(num_hidden_layers=4, head_dim=16, sliding_window=8, rope_theta=1e6, rope_scaling=LLAMA3)),
    # CSM: the backbone's layers (the depth decoder, 3 layers here, is a stack of its own over codebook positions)
    ("csm llama3", "csm", dict(num_hidden_layers=2, head_dim=8, num_codebooks=4, rope_scaling=LLAMA3,
                               depth_decoder_config=dict(hidden_size=32, intermediate_size=64, num_attention_heads=2,
                                                         num_key_value_heads=2, num_hidden_layers=3,
                                                         backbone_hidden_size=64, vocab_size=128, num_codebooks=4))),
    # Moshi: the temporal transformer's layers (MoshiModel); every one rotates
    ("moshi", "moshi", dict(num_hidden_layers=2, head_dim=8, ffn_dim=128, sliding_window=8, rope_scaling=YARN,
                            depth_decoder_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                                      ffn_dim=64, input_size=64, audio_vocab_size=128))),
    ("csm_depth_decoder_model", "csm_depth_decoder_model", dict(num_hidden_layers=2, head_dim=16, backbone_hidden_size=64,
                                                                 rope_theta=500000.0)),
    ("openai_privacy_filter yarn", "openai_privacy_filter", dict(num_hidden_layers=2, head_dim=16, num_local_experts=2,
                                                                 num_experts_per_tok=1, rope_scaling=dict(YARN, truncate=False))),
    ("esmc", "esmc", dict(num_hidden_layers=2, head_dim=16, num_key_value_heads=4)),
    ("dots1", "dots1", dict(num_hidden_layers=2, n_routed_experts=2, n_shared_experts=1, num_experts_per_tok=1,
                            moe_intermediate_size=32, first_k_dense_replace=1, rope_theta=50000.0)),
    # Evolla: llama text layers (RoPE) with protein cross-attention adapters (no positions); text-only input
    ("evolla", "evolla", dict(num_hidden_layers=2, aligner_num_add_layers=1, resampler_depth=1, resampler_dim_head=8,
                              resampler_heads=2, resampler_num_latents=4, rope_scaling=LLAMA3,
                              protein_encoder_config=dict(hidden_size=32, num_hidden_layers=1, num_attention_heads=2,
                                                          intermediate_size=64))),
    ("emu3_text_model", "emu3_text_model", dict(num_hidden_layers=2, rope_theta=1e6)),
    # JetMoE: head = kv_channels (8 here, not hidden // heads = 16); heads = num_key_value_heads * num_experts_per_tok
    ("jetmoe", "jetmoe", dict(num_hidden_layers=2, kv_channels=8, num_local_experts=2, num_experts_per_tok=2)),
    ("jetmoe yarn", "jetmoe", dict(num_hidden_layers=2, kv_channels=32, num_key_value_heads=1, num_local_experts=2,
                                   num_experts_per_tok=2, rope_scaling=YARN)),
    ("eurobert", "eurobert", dict(num_hidden_layers=2, head_dim=16, rope_theta=250000.0)),
    ("gte", "gte", dict(num_hidden_layers=2)),
    ("nomic_bert", "nomic_bert", dict(num_hidden_layers=2, head_dim=16)),
    ("llama4_text", "llama4_text", dict(num_hidden_layers=4, head_dim=16, num_local_experts=2, num_experts_per_tok=1,
                                        intermediate_size_mlp=128, rope_theta=500000.0)),
    # Bamba: mamba2 layers none, attention at attn_layer_indices with RoPE on half the head (0.5 hard-coded)
    ("bamba", "bamba", dict(num_hidden_layers=4, attn_layer_indices=[1, 3], mamba_n_heads=4, mamba_d_state=16,
                            mamba_chunk_size=8, rope_theta=50000.0)),
    # Falcon-H1: mamba2 and attention in parallel in every layer; the attention rotates (head_dim 8: not hidden // heads)
    ("falcon_h1", "falcon_h1", dict(num_hidden_layers=2, head_dim=8, mamba_d_ssm=64, mamba_n_heads=4, mamba_d_state=16,
                                    mamba_chunk_size=8, rope_theta=1e6, key_multiplier=0.5)),
    ("falcon_h1 yarn", "falcon_h1", dict(num_hidden_layers=2, mamba_d_ssm=64, mamba_n_heads=4, mamba_d_state=16,
                                         mamba_chunk_size=8, rope_scaling=YARN)),
    # Zamba2: hybrid layers (shared attention, RoPE iff use_mem_rope, head 2 * hidden // heads = 32), mamba2 layers none
    ("zamba2", "zamba2", dict(num_hidden_layers=4, layers_block_type=["mamba", "hybrid", "linear_attention", "hybrid"],
                              use_mem_rope=True, n_mamba_heads=4, mamba_d_state=16, chunk_size=8, rope_theta=50000.0)),
    ("zamba2 no mem rope", "zamba2", dict(num_hidden_layers=3, layers_block_type=["hybrid", "mamba", "hybrid"],
                                          n_mamba_heads=4, mamba_d_state=16, chunk_size=8)),
    # RecurrentGemma: block_types cycled over the layers; attention blocks RoPE on part of the head (default 0.5) in a
    # local window, recurrent (RG-LRU) blocks none
    ("recurrent_gemma", "recurrent_gemma", dict(num_hidden_layers=4, attention_window_size=8)),
    ("recurrent_gemma block_types", "recurrent_gemma", dict(num_hidden_layers=5, block_types=["attention", "recurrent"],
                                                            attention_window_size=8, partial_rotary_factor=0.25,
                                                            rope_theta=50000.0)),
    # no positions in any block (mamba, attention, MLP, MoE); the list sets the layer count
    ("nemotron_h", "nemotron_h", dict(layers_block_type=["linear_attention", "full_attention", "mlp", "linear_attention",
                                                         "full_attention"], num_hidden_layers=7, mamba_num_heads=4,
                                      mamba_head_dim=16, ssm_state_size=16, n_groups=1, head_dim=16)),
    ("lfm2 full_attn_idxs", "lfm2", dict(num_hidden_layers=6, full_attn_idxs=[2, 5])),
    ("lfm2 layer_types", "lfm2", dict(num_hidden_layers=4, layer_types=["conv", "full_attention", "conv", "full_attention"])),
    ("mllama_text_model llama3", "mllama_text_model", dict(num_hidden_layers=5, cross_attention_layers=[1, 4],
                                                           rope_scaling=LLAMA3)),
    # MLA (q/k head = [nope | rope], the last qk_rope_head_dim channels rotate): DeepSeek and its copies
    ("deepseek_v2", "deepseek_v2", dict(num_hidden_layers=2, num_key_value_heads=4, qk_rope_head_dim=16, qk_nope_head_dim=16, v_head_dim=16,
                                        kv_lora_rank=16, q_lora_rank=16, n_routed_experts=2, num_experts_per_tok=1,
                                        moe_intermediate_size=32, first_k_dense_replace=1)),
    ("deepseek_v3 yarn", "deepseek_v3", dict(num_hidden_layers=2, num_key_value_heads=4, qk_rope_head_dim=16, qk_nope_head_dim=16,
                                             v_head_dim=16, kv_lora_rank=16, q_lora_rank=16, n_routed_experts=2,
                                             num_experts_per_tok=1, moe_intermediate_size=32, first_k_dense_replace=1,
                                             n_group=1, topk_group=1,
                                             rope_scaling=dict(YARN, mscale=1.0, mscale_all_dim=1.0))),
    ("deepseek_v3 half", "deepseek_v3", dict(num_hidden_layers=2, num_key_value_heads=4, qk_rope_head_dim=16, qk_nope_head_dim=16,
                                             v_head_dim=16, kv_lora_rank=16, q_lora_rank=16, n_routed_experts=2,
                                             num_experts_per_tok=1, moe_intermediate_size=32, rope_interleave=False)),
    ("glm4_moe_lite", "glm4_moe_lite", dict(num_hidden_layers=2, num_key_value_heads=4, qk_rope_head_dim=16, qk_nope_head_dim=32,
                                            v_head_dim=16, kv_lora_rank=16, q_lora_rank=16, n_routed_experts=2,
                                            num_experts_per_tok=1, moe_intermediate_size=32, first_k_dense_replace=1)),
    ("youtu", "youtu", dict(num_hidden_layers=2, num_key_value_heads=4, qk_rope_head_dim=16, qk_nope_head_dim=16, v_head_dim=16,
                            kv_lora_rank=16, q_lora_rank=16)),
    ("axk1", "axk1", dict(num_hidden_layers=2, num_key_value_heads=4, qk_rope_head_dim=16, qk_nope_head_dim=16, v_head_dim=16,
                          kv_lora_rank=16, q_lora_rank=16, n_routed_experts=2, num_experts_per_tok=1,
                          moe_intermediate_size=32, first_k_dense_replace=1, n_group=1, topk_group=1)),
    ("minicpm3", "minicpm3", dict(num_hidden_layers=2, num_key_value_heads=4, qk_rope_head_dim=8, qk_nope_head_dim=16, v_head_dim=16,
                                  kv_lora_rank=16, q_lora_rank=16)),
    # ModernBERT: full layers i % n == 0 at global_rope_theta, the others local_rope_theta, window local_attention // 2
    ("modernbert", "modernbert", dict(num_hidden_layers=5, global_attn_every_n_layers=2, local_attention=16,
                                      global_rope_theta=80000.0, local_rope_theta=20000.0)),
    ("modernbert defaults", "modernbert", dict(num_hidden_layers=4)),
    ("modernbert yarn", "modernbert", dict(num_hidden_layers=4, rope_scaling=YARN)),
    ("exaone_moe", "exaone_moe", dict(num_hidden_layers=4, sliding_window=8, num_experts=2, num_experts_per_tok=1,
                                      moe_intermediate_size=32)),
    # single-stack text models, learned absolute table only (ALBERT: one layer group per layer, so the run has a
    # block list of the layer count; X-MOD needs a language to route its adapters)
    ("albert", "albert", dict(num_hidden_layers=2, num_hidden_groups=2, embedding_size=32)),
    ("bert-generation", "bert-generation", dict(num_hidden_layers=2)),
    ("squeezebert", "squeezebert", dict(num_hidden_layers=2, embedding_size=64)),
    ("mra", "mra", dict(num_hidden_layers=2, pad_token_id=1)),
    ("longformer", "longformer", dict(num_hidden_layers=2, pad_token_id=1, attention_window=8)),
    ("longformer pad 50", "longformer", dict(num_hidden_layers=2, pad_token_id=50, attention_window=8)),
    ("xmod", "xmod", dict(num_hidden_layers=2, pad_token_id=1, languages=["en_XX"], default_language="en_XX")),
    ("clip_text_model", "clip_text_model", dict(num_hidden_layers=2, max_position_embeddings=77)),
    ("siglip_text_model", "siglip_text_model", dict(num_hidden_layers=2, max_position_embeddings=64)),
    ("siglip2_text_model", "siglip2_text_model", dict(num_hidden_layers=2, max_position_embeddings=64)),
    ("xclip_text_model", "xclip_text_model", dict(num_hidden_layers=2, max_position_embeddings=77)),
    ("imagegpt", "imagegpt", dict(n_layer=2, n_embd=64, n_head=4, n_positions=256)),
    # ESM: position_embedding_type chooses ESM-1b's table (rows from pad_token_id + 1) or ESM-2's RoPE (from 0)
    ("gpt-sw3", "gpt-sw3", dict(n_layer=2, n_embd=64, n_head=4, n_positions=256)),
    ("fnet", "fnet", dict(num_hidden_layers=2, pad_token_id=3)),
    ("esm absolute", "esm", dict(num_hidden_layers=2, pad_token_id=1, vocab_size=33)),
    ("esm rotary", "esm", dict(num_hidden_layers=2, pad_token_id=1, vocab_size=33, position_embedding_type="rotary",
                               rope_theta=20000.0)),
    # RoPE decoders/encoders read through an existing layer rule (one family row each)
    # vocabulary_map: ChameleonModel's image-token mapping needs one (the input ids hold no image token)
    ("chameleon", "chameleon", dict(num_hidden_layers=2, rope_theta=50000.0, vocabulary_map={"<image>": 1})),
    ("chameleon linear", "chameleon", dict(num_hidden_layers=2, rope_scaling=LINEAR, vocabulary_map={"<image>": 1})),
    ("lfm2_moe", "lfm2_moe", dict(num_hidden_layers=4, layer_types=["conv", "full_attention", "conv", "full_attention"],
                                  num_experts=2, num_experts_per_tok=1, moe_intermediate_size=32, num_dense_layers=1)),
    ("olmo_hybrid", "olmo_hybrid", dict(num_hidden_layers=5, linear_key_head_dim=8, linear_value_head_dim=16)),
    ("olmo_hybrid 2 layers", "olmo_hybrid", dict(num_hidden_layers=2, linear_key_head_dim=8, linear_value_head_dim=16,
                                                 rope_theta=500000.0)),
    ("olmo_hybrid null theta", "olmo_hybrid", dict(num_hidden_layers=4, linear_key_head_dim=8, linear_value_head_dim=16,
                                                   rope_parameters={"rope_type": "default", "rope_theta": None})),
    ("modernbert-decoder", "modernbert-decoder", dict(num_hidden_layers=5, global_attn_every_n_layers=2,
                                                      local_attention=16, global_rope_theta=80000.0,
                                                      local_rope_theta=20000.0)),
    ("modernbert-decoder defaults", "modernbert-decoder", dict(num_hidden_layers=4)),
    ("jina_embeddings_v3", "jina_embeddings_v3", dict(num_hidden_layers=2)),
    # per-layer-type rope dicts, each its own rope_theta and partial_rotary_factor (the class's own dicts where none
    # is given: saved into the config file, which is what posenc reads)
    ("mellum", "mellum", dict(num_hidden_layers=4, head_dim=16, sliding_window=8, num_experts=2, num_experts_per_tok=1,
                              moe_intermediate_size=32,
                              layer_types=["full_attention", "sliding_attention", "sliding_attention", "full_attention"],
                              rope_parameters={"full_attention": {"rope_type": "default", "rope_theta": 200000.0},
                                               "sliding_attention": {"rope_type": "default", "rope_theta": 5000.0}})),
    ("mellum defaults", "mellum", dict(num_hidden_layers=2, head_dim=16, num_experts=2, num_experts_per_tok=1,
                                       moe_intermediate_size=32)),
    ("laguna", "laguna", dict(num_hidden_layers=4, head_dim=16, sliding_window=8, num_experts=2, num_experts_per_tok=1,
                              moe_intermediate_size=32, shared_expert_intermediate_size=32,
                              layer_types=["full_attention", "sliding_attention", "sliding_attention", "full_attention"])),
    ("laguna yarn", "laguna", dict(num_hidden_layers=2, head_dim=16, sliding_window=8, num_experts=2,
                                   num_experts_per_tok=1, moe_intermediate_size=32, shared_expert_intermediate_size=32,
                                   layer_types=["sliding_attention", "full_attention"],
                                   rope_parameters={"full_attention": dict(YARN, rope_theta=500000.0,
                                                                           partial_rotary_factor=0.5),
                                                    "sliding_attention": {"rope_type": "default",
                                                                          "rope_theta": 10000.0}})),
    ("mimo_v2_flash", "mimo_v2_flash", dict(num_hidden_layers=7, head_dim=24, v_head_dim=16, sliding_window=8,
                                            n_routed_experts=2, num_experts_per_tok=1, moe_intermediate_size=32)),
    # RoPE in the sliding layers only (the full layers NoPE)
    ("afmoe", "afmoe", dict(num_hidden_layers=6, head_dim=16, sliding_window=8, global_attn_every_n_layers=3,
                            num_experts=2, num_experts_per_tok=1, moe_intermediate_size=32, num_shared_experts=1)),
    ("afmoe theta", "afmoe", dict(num_hidden_layers=4, head_dim=16, sliding_window=8, num_experts=2,
                                  num_experts_per_tok=1, moe_intermediate_size=32, num_shared_experts=1,
                                  rope_theta=50000.0, rope_scaling=LINEAR)),
    # encoder-decoders with a learned table per stack: both looked up at arange(T) + offset (BART's +2)
    ("bart", "bart", ENC_DEC),
    ("mbart", "mbart", ENC_DEC),
    ("mvp", "mvp", ENC_DEC),
    ("plbart", "plbart", ENC_DEC),
    ("blenderbot", "blenderbot", ENC_DEC),
    ("blenderbot-small", "blenderbot-small", ENC_DEC),
    # M-RoPE text models and their composites (run with 3-axis ids that differ, MROPE above): head_dim 32, 16 pairs
    ("qwen2_vl_text", "qwen2_vl_text", dict(num_hidden_layers=2, head_dim=32, num_attention_heads=2,
                                            rope_parameters=dict(rope_type="default", rope_theta=1e6,
                                                                 mrope_section=[4, 6, 6]))),
    # no mrope_section: the rotary class's own default [16, 24, 24] (rope_parameters.get), 64 pairs of a 128 head
    ("qwen2_vl_text default sections", "qwen2_vl_text", dict(num_hidden_layers=2, hidden_size=256, num_attention_heads=2)),
    ("qwen2_vl", "qwen2_vl", dict(text_config=dict(SMALL, num_hidden_layers=2, num_attention_heads=2, rope_parameters=dict(
        rope_type="default", rope_theta=1e6, mrope_section=[4, 6, 6])))),
    ("qwen2_5_vl_text", "qwen2_5_vl_text", dict(num_hidden_layers=2, num_attention_heads=2, rope_parameters=dict(
        rope_type="default", rope_theta=1e6, mrope_section=[8, 4, 4]))),
    ("qwen2_5_vl", "qwen2_5_vl", dict(text_config=dict(SMALL, num_hidden_layers=2, num_attention_heads=2, rope_parameters=dict(
        rope_type="default", rope_theta=1e6, mrope_section=[8, 4, 4])))),
    ("qwen3_vl_text", "qwen3_vl_text", dict(num_hidden_layers=2, head_dim=32, rope_parameters=dict(
        rope_type="default", rope_theta=5e6, mrope_section=[6, 5, 5], mrope_interleaved=True))),
    ("qwen3_vl", "qwen3_vl", dict(text_config=dict(SMALL, num_hidden_layers=2, head_dim=32, rope_parameters=dict(
        rope_type="default", rope_theta=5e6, mrope_section=[6, 5, 5], mrope_interleaved=True)))),
    ("qwen3_vl_moe_text", "qwen3_vl_moe_text", dict(num_hidden_layers=2, head_dim=32, num_experts=2,
                                                    num_experts_per_tok=1, moe_intermediate_size=32,
                                                    rope_parameters=dict(rope_type="default", rope_theta=5e6,
                                                                         mrope_section=[6, 5, 5], mrope_interleaved=True))),
    ("qwen3_vl_moe", "qwen3_vl_moe", dict(text_config=dict(SMALL, num_hidden_layers=2, head_dim=32, num_experts=2,
                                                           num_experts_per_tok=1, moe_intermediate_size=32,
                                                           rope_parameters=dict(rope_type="default", rope_theta=5e6,
                                                                                mrope_section=[6, 5, 5],
                                                                                mrope_interleaved=True)))),
    # more M-RoPE text types, each alone and as its composite's text_config (MROPE_TEXT below)
    *[(text, text, kw) for text, kw in MROPE_TEXT],
    *[(text[:-5], text[:-5], dict(text_config=dict(SMALL, **kw))) for text, kw in MROPE_TEXT],
    ("glm46v", "glm46v", dict(text_config=dict(SMALL, **MROPE_TEXT[0][1], model_type="glm4v_text"))),
]


# One llama config per rope_type of transformers' own ROPE_INIT_FUNCTIONS (plus HF's "default"): posenc must
# either read it and match transformers' cos/sin bit for bit, or refuse it naming the type (exit 1). A type
# transformers adds later has no entry here and fails the test until someone decides which it is.
ROPE_TYPES = {
    "default": {"rope_type": "default"},
    "linear": LINEAR,
    "dynamic": {"rope_type": "dynamic", "factor": 2.0},
    "yarn": YARN,
    "longrope": {"rope_type": "longrope", "original_max_position_embeddings": 64,
                 "short_factor": [1.0 + k / 8 for k in range(8)], "long_factor": [2.0 + k / 4 for k in range(8)]},
    "llama3": LLAMA3,
    # Gemma 4's full layers: posenc does not implement it (refused by name; never read as default)
    "proportional": {"rope_type": "proportional", "partial_rotary_factor": 0.25},
}
NOT_A_ROPE_TYPE = "fancy_new_rope"  # no framework knows it: refused by name as well


# M-RoPE: each layer is run with three rows of position ids (t, h, w) that differ, so a wrong section split or
# interleave changes the cos/sin (text-only ids are equal on every axis: any split would pass); posenc rotates
# with the same [3, T] ids through --positions. Composites run their text sub-model (the vision tower only
# makes such ids) and posenc reads the composite's config.json.
MROPE_POSITIONS = np.stack([np.arange(T), np.arange(T) // 3, np.arange(T) % 5 + 7]).astype(np.int64)
MROPE_COMPOSITE = {"qwen2_vl", "qwen2_5_vl", "qwen3_vl", "qwen3_vl_moe", "glm4v", "glm46v", "glm4v_moe", "glm_ocr",
                   "glm_image", "paddleocr_vl", "qwen3_5", "qwen3_5_moe"}
MROPE = MROPE_COMPOSITE | {"qwen2_vl_text", "qwen2_5_vl_text", "qwen3_vl_text", "qwen3_vl_moe_text", "glm4v_text",
                           "glm4v_moe_text", "glm_ocr_text", "glm_image_text", "paddleocr_vl_text", "qwen3_5_text",
                           "qwen3_5_moe_text"}
# text sub-configs with no AutoModel entry whose model class does not name its config class (the composite's
# language_model class, read off modeling_<model>.py)
TEXT_MODELS = {"paddleocr_vl_text": "PaddleOCRTextModel"}
MROPE_FLAT_4X = {"qwen2_vl", "qwen2_5_vl"}  # 4.x wrote these flat, rope_scaling {"type": "mrope", ...}


# model types whose apply_rotary_pos_emb takes one cos/sin per pair (R/2 columns), read off their source
PER_PAIR = {"gpt_oss", "openai_privacy_filter"}


def hf_layers(model_type, kw, d, label):
    """Tiny model, one forward pass; per layer the (cos, sin) apply_rotary_pos_emb received, or None."""
    import torch
    from transformers import AutoConfig, AutoModel
    args = dict(SMALL)
    # a copy: the config class standardizes rope dicts in place (setdefault rope_theta, partial_rotary_factor), and
    # CASES share them (YARN, LLAMA3): one case's keys must not leak into the next task in the same worker
    args.update(copy.deepcopy(kw))
    cfg = AutoConfig.for_model(model_type, **args)
    torch.manual_seed(0)
    mrope = model_type in MROPE
    # a composite M-RoPE type: its text sub-model, built from the composite's text_config, runs (the vision
    # tower only makes the grid ids given here explicitly); posenc reads the composite's config.json
    run_cfg = cfg.text_config if mrope and model_type in MROPE_COMPOSITE else cfg
    try:
        model = AutoModel.from_config(run_cfg).eval()
    except ValueError:  # no AutoModel entry (mllama_text_model, evolla): its own *Model class
        modeling = importlib.import_module(type(run_cfg).__module__.replace(".configuration_", ".modeling_"))
        found = [c for c in vars(modeling).values() if isinstance(c, type) and c.__name__.endswith("Model")
                 and not c.__name__.endswith("PreTrainedModel")
                 and (getattr(c, "config_class", None) is type(run_cfg) or c.__name__ == TEXT_MODELS.get(run_cfg.model_type))]
        if len(found) != 1:
            raise
        model = found[0](run_cfg).eval()
    mod = importlib.import_module(type(model).__module__)
    layers = getattr(model, "layers", None) or getattr(model, "h", None)
    if layers is None:  # decoder.layers (OPT), encoder.layer (BERT): the first block list of the layer count
        n = getattr(cfg, "num_hidden_layers", None)
        layers = next((m for _, m in model.named_modules() if isinstance(m, torch.nn.ModuleList) and len(m) == n), None)
    seen, current = {}, [None]
    # apply_rotary_pos_emb, and DeepSeek-V3's apply_rotary_pos_emb_interleave (which de-interleaves q/k and then
    # rotates with the same half-split cos/sin): recorded with the function's name
    # and DeepSeek-V2's / Llama 4's apply_rotary_emb (complex freqs_cis = cos + i sin, one per pair)
    names = [n for n in ("apply_rotary_pos_emb", "apply_rotary_pos_emb_interleave", "apply_rotary_emb")
             if hasattr(mod, n)]
    originals = {n: getattr(mod, n) for n in names}

    def wrap(name):
        def wrapped(q, k, cos, sin=None, *a, **k2):
            if name == "apply_rotary_emb":  # (xq, xk, freqs_cis)
                seen[current[0]] = (cos.real.detach().clone(), cos.imag.detach().clone(), name)
                return originals[name](q, k, cos, *a, **k2)
            seen[current[0]] = (cos.detach().clone(), sin.detach().clone(), name)
            return originals[name](q, k, cos, sin, *a, **k2)
        return wrapped

    for i, layer in enumerate(layers):
        layer.register_forward_pre_hook(lambda m, a, i=i: current.__setitem__(0, i))
    for n in names:
        setattr(mod, n, wrap(n))
    # every table lookup (torch.nn.functional.embedding): parameter name -> the ids it was given, so a learned
    # position table's rows (OPT's +2, RoBERTa's padding_idx + 1) are read off the run itself
    lookups, param_names = {}, {id(p): n for n, p in model.named_parameters()}
    embedding = torch.nn.functional.embedding

    def recording(ids, weight, *a, **k2):
        if id(weight) in param_names:
            lookups[param_names[id(weight)]] = (ids.detach().clone(), weight.shape[0])
        return embedding(ids, weight, *a, **k2)

    torch.nn.functional.embedding = recording
    # an encoder-decoder with a position table per stack (BART): both stacks run, T tokens each
    stacks = ((len(model.encoder.layers), len(model.decoder.layers))
              if hasattr(getattr(model, "decoder", None), "embed_positions") and hasattr(model, "encoder") else None)
    try:
        with torch.no_grad():  # ids from 3: clear of the pad / bos / eos ids, which RoBERTa's positions skip
            ids = (torch.arange(T)[None] + 3) % args["vocab_size"]
            extra = dict(position_ids=torch.tensor(MROPE_POSITIONS)[:, None, :]) if mrope else {}
            model(input_ids=ids, **(dict(decoder_input_ids=ids) if stacks else {}), **extra)
    finally:
        for n in names:
            setattr(mod, n, originals[n])
        torch.nn.functional.embedding = embedding
    new = os.path.join(d, label.replace(" ", "_") + ".json")
    cfg.to_json_file(new)
    if cfg.model_type != model_type:  # a type read through another's config class (gpt-sw3: GPT2Config): as named
        j = json.load(open(new))
        j["model_type"] = model_type
        json.dump(j, open(new, "w"))
    out = Layers(seen.get(i) for i in range(len(layers)))
    if stacks:  # `layers` hooked the encoder's; the decoder's do not rotate either (compare_learned checks seen)
        out.extend([None] * stacks[1])
    out.stacks = stacks
    out.lookups = lookups
    out.windows = WINDOWS[model_type](model, cfg) if model_type in WINDOWS else None
    out.positions = MROPE_POSITIONS if mrope else None
    return out, new, cfg


class Layers(list):
    """Per layer (cos, sin, function) or None, .lookups: the embedding tables the run read, .windows: the
    per-layer sliding window where WINDOWS knows how to read it off the built model, .stacks: (encoder layers,
    decoder layers) of an encoder-decoder with a table per stack (the encoder's entries first), else None, and
    .positions: the [axes, T] ids the run was given (M-RoPE), or None (positions 0..T-1)."""
    positions = None  # defaults for the runs that do not set them (composites)
    stacks = None


# ModernBertAttention.sliding_window is config.sliding_window + 1 (= local_attention // 2 + 1), handed to
# create_bidirectional_sliding_window_mask: posenc reports HF's config.sliding_window, the half window
WINDOWS = {"modernbert": lambda model, cfg: [None if layer.attn.sliding_window is None else layer.attn.sliding_window - 1
                                             for layer in model.layers],
           # RecurrentGemma: the attention blocks' window; recurrent blocks have none
           "recurrent_gemma": lambda model, cfg: [getattr(layer.temporal_block, "sliding_window", None)
                                                  for layer in model.layers],
           # ModernBertDecoderAttention.sliding_window is config.sliding_window (local_attention // 2) itself
           "modernbert-decoder": lambda model, cfg: [layer.attn.sliding_window for layer in model.layers],
           **{t: lambda model, cfg: [layer.self_attn.sliding_window for layer in model.layers]
              for t in ("mellum", "laguna", "mimo_v2_flash", "afmoe", "granite_swa", "granitemoe_swa", "cohere2_moe")}}


def legacy_form(path, cfg):
    """The same config in transformers 4.x's spelling: rope_theta + rope_scaling (one dict)."""
    j = json.load(open(path))
    rp = j.pop("rope_parameters", None)
    if isinstance(rp, dict) and ("full_attention" in rp or "sliding_attention" in rp):
        return None  # per-layer-type dicts have no 4.x spelling beyond the main one
    if isinstance(rp, dict):
        rp = dict(rp)
        j["rope_theta"] = rp.pop("rope_theta", 10000.0)
        if "partial_rotary_factor" in rp:
            j["partial_rotary_factor"] = rp.pop("partial_rotary_factor")
        if rp.get("rope_type", "default") != "default":
            j["rope_scaling"] = rp
    out = path[:-5] + "_4x.json"
    json.dump(j, open(out, "w"))
    return out


def modernbert_legacy(path, cfg, kw):
    """ModernBERT as transformers 4.x wrote it: global_rope_theta / local_rope_theta / global_attn_every_n_layers /
    local_attention (and one rope_scaling for both kinds), no layer_types, no per-layer-type rope dicts."""
    j = json.load(open(path))
    rp = j.pop("rope_parameters")
    j.pop("layer_types", None)
    j["global_rope_theta"] = rp["full_attention"]["rope_theta"]
    j["local_rope_theta"] = rp["sliding_attention"]["rope_theta"]
    j["global_attn_every_n_layers"] = kw.get("global_attn_every_n_layers", 3)
    j["local_attention"] = cfg.local_attention
    scaling = {k: v for k, v in rp["full_attention"].items() if k != "rope_theta"}
    if scaling.get("rope_type", "default") != "default":
        j["rope_scaling"] = scaling
    out = path[:-5] + "_4x.json"
    json.dump(j, open(out, "w"))
    return out


def cohere2_moe_legacy(path, cfg, kw):
    """Cohere2-MoE as a file without the derived lists: rope_theta + rope_scaling and first_k_dense_replace (which
    Cohere2MoeConfig pops, so its own to_json never writes it), no layer_types / mlp_layer_types."""
    out = legacy_form(path, cfg)
    j = json.load(open(out))
    j.pop("layer_types")
    j.pop("mlp_layer_types")
    j["first_k_dense_replace"] = kw["first_k_dense_replace"]
    json.dump(j, open(out, "w"))
    return out


# model types whose 4.x spelling is not rope_theta + rope_scaling
LEGACY_FORMS = {"modernbert": modernbert_legacy, "modernbert-decoder": modernbert_legacy,
                "cohere2_moe": cohere2_moe_legacy}


def mrope_legacy(path, model_type):
    """An M-RoPE config as transformers 4.x wrote it: rope_theta + rope_scaling holding mrope_section (Qwen2-VL's
    {"type": "mrope", ...}; the others keep their rope_type), and Qwen2-VL / Qwen2.5-VL flat (no text_config)."""
    j = json.load(open(path))

    def old(c):
        rp = dict(c.pop("rope_parameters"))
        c["rope_theta"] = rp.pop("rope_theta")
        if "partial_rotary_factor" in rp:
            c["partial_rotary_factor"] = rp.pop("partial_rotary_factor")
        if model_type in MROPE_FLAT_4X or model_type.replace("_text", "") in MROPE_FLAT_4X:
            rp.pop("rope_type", None)
            rp["type"] = "mrope"
        c["rope_scaling"] = rp

    text = j.get("text_config") if model_type in MROPE_COMPOSITE else j
    old(text)
    if model_type in MROPE_FLAT_4X and model_type in MROPE_COMPOSITE:
        j.update(j.pop("text_config"))
        j["model_type"] = model_type
    out = path[:-5] + "_4x.json"
    json.dump(j, open(out, "w"))
    return out


def posenc_cos_sin(path, kind, r, layout, d, kinds, head, offset=0, start=0, positions=None):
    """rope apply --config --torch-compat on a unit input: out holds cos | sin of each rotated pair (channels
    offset .. offset + r - 1 of the head: MLA rotates the last qk_rope_head_dim). positions: [axes, T] ids
    (M-RoPE: --positions of rank 2 rotates with the config's own sections), or None for 0..T-1; start: the
    run's first position (PaliGemma: 1), read off rows start.. of a 0-based run."""
    x = np.zeros((start + T, head), dtype=np.float32)  # positions 0..; the run's are start..start+T-1
    if layout == "half":
        x[:, offset: offset + r // 2] = 1
    else:
        x[:, offset: offset + r: 2] = 1
    xin, yout = os.path.join(d, "unit.npy"), os.path.join(d, "out.npy")
    np.save(xin, x)
    pick = ["--layer-type", kind] if kinds > 1 else []
    if positions is not None:
        pin = os.path.join(d, "positions.npy")
        np.save(pin, np.ascontiguousarray(positions, dtype=np.int64))
        pick += ["--positions", pin]
    rc, _, err = run("rope", "apply", "--config", path, *pick, "--in", xin, "--torch-compat", "-o", yout)
    if rc != 0:
        return None, err.strip()
    y = np.load(yout)[start:, offset: offset + r]
    if layout == "half":
        return (y[:, : r // 2], y[:, r // 2:]), ""
    return (y[:, 0::2], y[:, 1::2]), ""


def ulps(a, b):
    """Largest distance in float32 units in the last place between two (cos, sin) pairs."""
    def key(x):
        i = np.ascontiguousarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return int(max(np.abs(key(a[0]) - key(b[0])).max(), np.abs(key(a[1]) - key(b[1])).max()))


def compare(t, label, path, hf, d, per_channel=True, start=0):
    rc, so, se = run("rope", "explain", "--config", path, "--json")
    if not t.check(rc == 0, f"{label}: posenc reads {os.path.basename(path)} ({se.strip()[:160]})"):
        return
    j = json.loads(so)
    layers = j["layers"]
    t.check(len(layers) == len(hf), f"{label}: {len(layers)} layers, transformers built {len(hf)}")
    if layers and all(x["scheme"] == "learned" for x in layers):
        return compare_learned(t, label, j, hf)
    want = ["rope" if x is not None else "nope" for x in hf]
    got = [x["scheme"] for x in layers]
    t.check(got == want, f"{label}: per-layer scheme {got} = transformers' {want}")
    if hf.windows is not None:  # the runtime's per-layer window (None: whole context) against posenc's (0: none)
        mine = [x["sliding_window"] or None for x in layers]
        t.check(mine == hf.windows, f"{label}: per-layer sliding window {mine} = transformers' {hf.windows}")
    done = set()
    for i, (layer, h) in enumerate(zip(layers, hf)):
        if h is None or layer["scheme"] != "rope" or layer["rope"] in done:
            continue
        done.add(layer["rope"])
        rope = j["ropes"][layer["rope"]]
        r, layout = layer["rotary_dim"], layer["layout"]
        cos, sin = h[0][0].numpy(), h[1][0].numpy()  # [T, R], or [T, R/2] where the runtime keeps one per pair
        if h[2] == "apply_rotary_pos_emb_interleave":  # pairs (2k, 2k+1) rotated with half-split cos/sin
            t.check(layout == "interleaved", f"{label} layer {i}: HF rotates interleaved pairs, posenc says {layout}")
            cos = np.ascontiguousarray(np.stack([cos[:, : r // 2]] * 2, -1).reshape(T, r))
            sin = np.ascontiguousarray(np.stack([sin[:, : r // 2]] * 2, -1).reshape(T, r))
        pairs = cos.shape[-1] == r // 2 and (not per_channel or h[2] == "apply_rotary_emb")
        t.check(cos.shape[-1] == r or pairs, f"{label} layer {i}: {cos.shape[-1]} cos columns, posenc rotates {r} channels")
        if cos.shape[-1] != r and not pairs:
            continue
        if pairs:
            hc, hs = cos, sin
        else:
            hc, hs = (cos[:, : r // 2], sin[:, : r // 2]) if layout == "half" else (cos[:, 0::2], sin[:, 0::2])
        pc, why = posenc_cos_sin(path, rope["name"], r, layout, d, len(j["ropes"]), layer["head_dim"],
                                 layer.get("rotary_offset", 0), start, hf.positions)
        if pc is None:
            t.check(False, f"{label} layer {i}: rope apply failed: {why[:160]}")
            continue
        differ = int((pc[0].view(np.uint32) != hc.view(np.uint32)).sum() + (pc[1].view(np.uint32) != hs.view(np.uint32)).sum())
        worst = ulps(pc, (hc, hs))
        if h[2] == "apply_rotary_emb":
            # freqs_cis = torch.polar(1, angle): the same float32 angle as torch-compat, but polar's cos/sin are
            # the double-precision values rounded to float32 (checked against torch.cos(angle.double()).float()),
            # not torch.cos / torch.sin's float32 kernels that torch-compat reproduces: at most 1 ulp apart
            t.check(worst <= 1, f"{label} layer {i} ({rope['name']}, {layout}, R={r}): cos/sin at positions 0..{T - 1} "
                                f"within 1 ulp of torch.polar's ({differ} of {2 * hc.size} differ, at most {worst} ulp)")
            continue
        t.check(differ == 0, f"{label} layer {i} ({rope['name']}, {layout}, R={r}): cos/sin at positions {start}..{start + T - 1} "
                             f"bit for bit ({differ} of {2 * hc.size} differ, at most {worst} ulp)")


def compare_learned(t, label, j, hf):
    """A learned absolute table: no layer rotates, and the table posenc names is looked up at rows
    0..T-1 + offset in a table of `size` rows, as the framework's run looked it up."""
    t.check(all(x is None for x in hf), f"{label}: no layer rotates (posenc: learned table)")
    if hf.stacks:  # BART-like: the encoder's layers, then the decoder's, each stack with its own table
        kinds = [x["kind"] for x in j["layers"]]
        want = ["encoder"] * hf.stacks[0] + ["decoder"] * hf.stacks[1]
        t.check(kinds == want, f"{label}: layer kinds {kinds} = transformers' stacks {want}")
    tables = {}  # every table posenc names (one per stack), with the rows it says are read
    for x in j["layers"]:
        tables.setdefault(x["tensor"], (x["offset"], x["size"]))
    t.check(len(tables) == (2 if hf.stacks else 1), f"{label}: posenc names {len(tables)} table(s) {sorted(tables)}")
    lookups = hf.lookups
    for tensor, (offset, size) in tables.items():
        hit = [n for n in lookups if tensor == n or tensor.endswith("." + n)]
        if not t.check(len(hit) == 1, f"{label}: posenc's table {tensor} is one the run looked up "
                                      f"({sorted(lookups)[:6]})"):
            continue
        ids, rows = lookups[hit[0]]
        want = np.arange(T) + offset
        t.check(np.array_equal(ids.reshape(-1).numpy(), want), f"{label}: {tensor} rows looked up = positions "
                f"0..{T - 1} + {offset} (the run: {ids.reshape(-1)[:4].tolist()}..)")
        t.check(rows == size, f"{label}: {tensor}: table of {size} rows (the run's has {rows})")


def whisper(t, d):
    """Whisper's two stacks through WhisperModel's own forward: the encoder adds its embed_positions table (built
    by modeling_whisper.sinusoids) looked up at rows 0..max_source_positions-1, which must be posenc's sinusoid
    table (t2t, half) bit for bit in torch-compat; the decoder reads rows position_ids of its learned table.
    Whisper's position keys are the same in 4.x and 5.x (no rope keys), so one form is checked."""
    import torch
    from transformers import WhisperConfig, WhisperModel
    from transformers.models.whisper import modeling_whisper as mw
    source, target, dm = 1500, 40, 64  # the real 1500 source rows: large angles, where float32 steps show
    cfg = WhisperConfig(d_model=dm, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4,
                        decoder_attention_heads=4, encoder_ffn_dim=128, decoder_ffn_dim=128, num_mel_bins=8,
                        vocab_size=128, max_source_positions=source, max_target_positions=target, pad_token_id=0, eos_token_id=2,
                        bos_token_id=1, decoder_start_token_id=1)
    torch.manual_seed(0)
    model = WhisperModel(cfg).eval()
    seen = {}
    enc_forward, dec_forward = torch.nn.Embedding.forward, mw.WhisperPositionalEmbedding.forward

    def enc_wrapped(self, ids):
        if self is model.encoder.embed_positions:
            seen["encoder"] = (ids.detach().clone(), self.weight.detach().clone())
        return enc_forward(self, ids)

    def dec_wrapped(self, input_ids, past_key_values_length=0, position_ids=None):
        seen["decoder"] = (position_ids.detach().clone(), self.weight.shape[0])
        return dec_forward(self, input_ids, past_key_values_length, position_ids)

    torch.nn.Embedding.forward, mw.WhisperPositionalEmbedding.forward = enc_wrapped, dec_wrapped
    try:
        with torch.no_grad():
            model(input_features=torch.randn(1, 8, 2 * source), decoder_input_ids=(torch.arange(T)[None] + 3) % 128)
    finally:
        torch.nn.Embedding.forward, mw.WhisperPositionalEmbedding.forward = enc_forward, dec_forward
    path = os.path.join(d, "whisper.json")
    cfg.to_json_file(path)
    rc, so, se = run("rope", "explain", "--config", path, "--json")
    if not t.check(rc == 0, f"whisper: posenc reads the config ({se.strip()[:160]})"):
        return
    layers = json.loads(so)["layers"]
    want = ["sinusoidal"] * len(model.encoder.layers) + ["learned"] * len(model.decoder.layers)
    t.check([x["scheme"] for x in layers] == want, f"whisper: per-layer schemes {[x['scheme'] for x in layers]} = "
            f"transformers' stacks {want}")
    t.check([x["kind"] for x in layers] == ["encoder"] * 2 + ["decoder"] * 3, "whisper: encoder layers, then decoder")
    enc, dec = layers[0], layers[-1]
    ids, table = seen["encoder"]
    t.check(np.array_equal(ids.reshape(-1).numpy(), np.arange(source)) and enc["size"] == source == table.shape[0],
            f"whisper encoder: rows 0..{source - 1} of a {enc['size']}-row table (the run: {table.shape[0]} rows, "
            f"ids {ids.reshape(-1)[:3].tolist()}..)")
    t.check(enc["tensor"].endswith("encoder.embed_positions.weight"), f"whisper encoder: table {enc['tensor']}")
    out = os.path.join(d, "whisper_table.npy")
    rc, _, se = run("table", "--len", enc["size"], "--dim", enc["dim"], "--base", enc["base"], "--freqs", enc["freqs"],
                    "--layout", enc["layout"], "--torch-compat", "-o", out)
    if t.check(rc == 0, f"whisper encoder: posenc table ({se.strip()[:120]})"):
        mine, theirs = np.load(out), table.numpy()
        differ = int((mine.view(np.uint32) != theirs.view(np.uint32)).sum()) if mine.shape == theirs.shape else -1
        t.check(differ == 0, f"whisper encoder: posenc's sinusoid ({enc['freqs']}, {enc['layout']}) = sinusoids() "
                             f"bit for bit ({differ} of {theirs.size} differ, shape {mine.shape} / {theirs.shape})")
    pos, rows = seen["decoder"]
    t.check(np.array_equal(pos.reshape(-1).numpy(), np.arange(T) + dec["offset"]) and rows == dec["size"] == target,
            f"whisper decoder: rows 0..{T - 1} + {dec['offset']} of a {dec['size']}-row table (the run: "
            f"{pos.reshape(-1)[:3].tolist()}.., {rows} rows)")
    t.check(dec["tensor"].endswith("decoder.embed_positions.weight"), f"whisper decoder: table {dec['tensor']}")


# Whisper-encoder copies: (label, config class, encoder class, module, whether the forward takes a frame mask)
AUDIO_ENCODERS = [("qwen2_audio_encoder", "Qwen2AudioEncoderConfig", "Qwen2AudioEncoder", False),
                  ("audioflamingo3_encoder", "AudioFlamingo3EncoderConfig", "AudioFlamingo3Encoder", True),
                  ("voxtral_encoder", "VoxtralEncoderConfig", "VoxtralEncoder", False)]


def audio_encoder_tables(t, d):
    """Qwen2-Audio / AudioFlamingo3 / Voxtral encoders through each encoder's own forward: with the conv front-end
    zeroed (gelu(0) = 0), what reaches the first layer is exactly the position term the forward added; it must be
    rows offset..offset+T-1 of the state-dict tensor posenc names (bit for bit), T = the table's size posenc gives,
    every layer learned and an encoder layer. The table is an nn.Embedding the code never fills with sinusoids()
    (checked: a fresh model's table differs from Whisper's sinusoids), so its values are the checkpoint's: a learned
    table, not a formula posenc could claim."""
    import torch
    import transformers
    from transformers.models.whisper import modeling_whisper as mw
    source, dm = 100, 64
    for label, cfg_name, enc_name, masked in AUDIO_ENCODERS:
        cfg = getattr(transformers, cfg_name)(d_model=dm, encoder_layers=3, encoder_attention_heads=4,
                                                encoder_ffn_dim=128, num_mel_bins=8, max_source_positions=source)
        torch.manual_seed(0)
        model = getattr(transformers, enc_name)(cfg).eval()
        with torch.no_grad():
            for conv in (model.conv1, model.conv2):
                conv.weight.zero_()
                conv.bias.zero_()
        seen = {}

        def pre(mod, args, kwargs):
            seen["added"] = (args[0] if args else kwargs["hidden_states"]).detach().clone()

        hook = model.layers[0].register_forward_pre_hook(pre, with_kwargs=True)
        feats = torch.randn(1, 8, 2 * source)
        extra = {"input_features_mask": torch.ones(1, 2 * source, dtype=torch.long)} if masked else {}
        try:
            with torch.no_grad():
                model(input_features=feats, **extra)
        finally:
            hook.remove()
        path = os.path.join(d, f"{label}.json")
        cfg.to_json_file(path)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads the config ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        t.check([(x["scheme"], x["kind"]) for x in layers] == [("learned", "encoder")] * len(model.layers),
                f"{label}: {len(layers)} learned encoder layers = the run's {len(model.layers)} encoder layers")
        state = model.state_dict()
        lay = layers[0]
        if not t.check(lay["tensor"] in state, f"{label}: table {lay['tensor']} is in the encoder's state dict"):
            continue
        weight = state[lay["tensor"]]
        added = seen["added"][0]
        t.check(weight.shape[0] == lay["size"] == source == added.shape[0],
                f"{label}: a {lay['size']}-row table (the run's: {weight.shape[0]} rows, {added.shape[0]} added)")
        rows = weight[lay["offset"]:lay["offset"] + added.shape[0]]
        same = rows.shape == added.shape and bool((rows.view(torch.int32) == added.view(torch.int32)).all())
        t.check(same, f"{label}: the forward added rows {lay['offset']}..{lay['offset'] + added.shape[0] - 1} of "
                      f"{lay['tensor']} bit for bit")
        t.check(not torch.equal(weight, mw.sinusoids(source, dm)),
                f"{label}: the code does not build the table with sinusoids() (a fresh model's differs)")
    # Qwen2.5-Omni's audio encoder: its sinusoid rows restart in every chunk of n_window * 2 frames; refused by name
    from transformers.models.qwen2_5_omni import modeling_qwen2_5_omni as mq
    cfg = transformers.Qwen2_5OmniAudioEncoderConfig(d_model=dm, encoder_layers=2, encoder_attention_heads=4,
                                                     encoder_ffn_dim=128, num_mel_bins=8, max_source_positions=source,
                                                     n_window=4, output_dim=32)
    torch.manual_seed(0)
    model = mq.Qwen2_5OmniAudioEncoder(cfg).eval()
    with torch.no_grad():
        for conv in (model.conv1, model.conv2):
            conv.weight.zero_()
            conv.bias.zero_()
    seen = {}

    def pre_omni(mod, args, kwargs):
        seen["added"] = (args[0] if args else kwargs["hidden_states"]).detach().clone()

    hook = model.layers[0].register_forward_pre_hook(pre_omni, with_kwargs=True)
    try:
        with torch.no_grad():
            model(input_features=torch.randn(8, 48), feature_lens=torch.tensor([48]))
    finally:
        hook.remove()
    table, added = model.positional_embedding.positional_embedding, seen["added"]
    rows = [int(torch.nonzero((added[i] == table).all(-1))[0]) if (added[i] == table).all(-1).any() else -1
            for i in range(added.shape[0])]
    t.check(rows == [0, 1, 2, 3] * 6, f"qwen2_5_omni_audio_encoder: 48 frames in chunks of 8 add table rows {rows} "
                                      f"(restarting per chunk of 4 positions, not 0..23)")
    path = os.path.join(d, "qwen2_5_omni_audio_encoder.json")
    cfg.to_json_file(path)
    rc, _, se = run("rope", "explain", "--config", path, "--json")
    t.check(rc == 1 and "'qwen2_5_omni_audio_encoder' refused: its fixed sinusoid table" in se and "chunk" in se,
            f"qwen2_5_omni_audio_encoder: refused by name for its per-chunk rows (rc {rc}: {se.strip()[:100]})")
    # the composites: refused by name, while each half alone is read (the audio table above, the text model's RoPE)
    for composite, cfg_name in [("qwen2_audio", "Qwen2AudioConfig"), ("audioflamingo3", "AudioFlamingo3Config"),
                                ("voxtral", "VoxtralConfig")]:
        cfg = getattr(transformers, cfg_name)()
        path = os.path.join(d, f"{composite}.json")
        cfg.to_json_file(path)
        rc, _, se = run("rope", "explain", "--config", path, "--json")
        t.check(rc == 1 and f"'{composite}' refused: two position paths" in se,
                f"{composite}: refused by name for its two position paths (rc {rc}: {se.strip()[:100]})")
        halves = []
        for sub in (cfg.audio_config, cfg.text_config):
            sub_path = os.path.join(d, f"{composite}_{sub.model_type}.json")
            sub.to_json_file(sub_path)
            rc, so, _ = run("rope", "explain", "--config", sub_path, "--json")
            halves.append({x["scheme"] for x in json.loads(so)["layers"]} if rc == 0 else {f"rc {rc}"})
        t.check(halves == [{"learned"}, {"rope"}], f"{composite}: audio_config read alone as {halves[0]}, text_config "
                                                   f"as {halves[1]}: a learned table and RoPE")


# posenc_query_scale_f64 through ctypes, from the library beside the CLI the oracle runs (POSENC_LIBRARY overrides)
class _QueryScale(ctypes.Structure):
    _fields_ = [("layers", ctypes.c_int), ("beta", ctypes.c_double), ("divisor", ctypes.c_int64),
                ("shift", ctypes.c_int64)]


def posenc_query_scale(qs, positions):
    """posenc's own function (the library's posenc_query_scale_f64) for the query_scale that `rope explain --json`
    printed, at these positions: float64 values. In a sanitizer build the library needs the ASan runtime, which this
    process (torch loaded) should not take: a child python with it preloaded calls the function (exact doubles
    through JSON)."""
    from common import BIN, sanitizer_runtime_env
    extra = sanitizer_runtime_env()
    if extra:
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_oracle_hf as o; d = json.load(sys.stdin); "
                "print(json.dumps(o.posenc_query_scale(d['qs'], d['positions']).tolist()))")
        child = subprocess.run([sys.executable, "-c", code, HERE], input=json.dumps(
            {"qs": qs, "positions": [int(p) for p in np.asarray(positions).reshape(-1)]}), capture_output=True,
            text=True, env=dict(os.environ, **extra))
        assert child.returncode == 0, f"posenc_query_scale_f64 in the sanitized child failed: {child.stderr[-400:]}"
        return np.array(json.loads(child.stdout), dtype=np.float64)
    lib = ctypes.CDLL(os.environ.get("POSENC_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(BIN)),
                                                                       "libposenc.so"))
    f = lib.posenc_query_scale_f64
    f.restype = ctypes.c_int
    pos = np.ascontiguousarray(positions, dtype=np.int64)
    out = np.zeros(pos.size, dtype=np.float64)
    q = _QueryScale({"all": 1, "nope": 2}[qs["layers"]], qs["beta"], qs["divisor"], qs["shift"])
    err = ctypes.create_string_buffer(4096)  # posenc_error is smaller than this: its status and message
    rc = f(ctypes.byref(q), pos.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(pos.size),
           out.ctypes.data_as(ctypes.c_void_p), err)
    assert rc == 0, f"posenc_query_scale_f64 failed ({rc})"
    return out


def f32_ulps(a, b):
    """Per-value distance in float32 ULPs between two float32 arrays."""
    def key(x):
        i = np.ascontiguousarray(x, dtype=np.float32).view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)
    return np.abs(key(a) - key(b))


# The query scale is computed by HF in float32 (a quotient, floor, log / log1p, a product with the float32-rounded
# beta, a sum: each rounded once), posenc in float64 and then rounded to float32 here: at most 2 ULPs apart
# (the log's and the product's roundings each move the sum by at most half an ULP of a result in [1, 2), the beta
# rounding far less; the quotient is exact below 2^24).
QSCALE_ULPS = 2
# Fixed sinusoid tables (issue 39): (label, model_type, config keywords, what the forward pass gets). Widths and row
# counts small enough to build in a second, rows enough (~1000) for float32 rounding of large angles to show; a
# padding token inside the ids, so fairseq's padding-skipping positions and zeroed row are exercised.
SIN_ENC_DEC = dict(d_model=64, encoder_layers=2, decoder_layers=3, encoder_attention_heads=4, decoder_attention_heads=4,
                   encoder_ffn_dim=128, decoder_ffn_dim=128, vocab_size=128, pad_token_id=1, eos_token_id=2,
                   bos_token_id=0, decoder_start_token_id=2)
SINUSOID_CASES = [
    ("marian", "marian", dict(SIN_ENC_DEC, max_position_embeddings=1000, decoder_vocab_size=128), "text"),
    ("pegasus", "pegasus", dict(SIN_ENC_DEC, max_position_embeddings=1000), "text"),
    ("m2m_100", "m2m_100", dict(SIN_ENC_DEC, max_position_embeddings=1000), "text"),
    # Pegasus-X: no stored table, the rows of each forward's positions computed on the fly
    ("pegasus_x", "pegasus_x", dict(SIN_ENC_DEC, block_size=8, num_global_tokens=4), "text"),
    # an odd width (fairseq's trailing zero channel) and another padding_idx (rows from 5)
    ("m2m_100 odd width pad 4", "m2m_100", dict(SIN_ENC_DEC, d_model=63, encoder_attention_heads=3,
                                                decoder_attention_heads=3, pad_token_id=4, max_position_embeddings=300),
     "text"),
    ("nllb-moe", "nllb-moe", dict(SIN_ENC_DEC, max_position_embeddings=1000, num_experts=2, expert_capacity=8,
                                  encoder_sparse_step=2, decoder_sparse_step=2), "text"),
    ("speech_to_text", "speech_to_text", dict(SIN_ENC_DEC, max_source_positions=1000, max_target_positions=200,
                                              conv_channels=16, input_feat_per_channel=8), "speech"),
    # FSMT: an nn.Embedding of max_position_embeddings + pad_token_id + 1 rows, fairseq's values
    ("fsmt pad 3", "fsmt", dict(SIN_ENC_DEC, max_position_embeddings=1000, pad_token_id=3, langs=["en", "de"],
                                src_vocab_size=128, tgt_vocab_size=128), "text"),
    # pad_token_id 5: XGLM's positions ignore padding (arange + 2) yet its table zeroes row 5 = position 3
    ("xglm pad 5", "xglm", dict(d_model=64, num_layers=2, attention_heads=4, ffn_dim=128, vocab_size=128,
                                pad_token_id=5, max_position_embeddings=1000), "decoder"),
]


def sinusoid_run(model_type, kw, feed):
    """A tiny model of model_type, one forward pass; per embed_positions module: its table's rows before the run,
    the table the run read (after it), and the vectors the run added (one per token)."""
    import torch
    from transformers import AutoConfig, AutoModel
    cfg = AutoConfig.for_model(model_type, **kw)
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).eval()
    mods = {n: m for n, m in model.named_modules() if n.endswith("embed_positions")}
    seen = {}

    def table(m):  # None: the module stores no table (Pegasus-X)
        return m.weight if isinstance(getattr(m, "weight", None), torch.nn.Parameter) else getattr(m, "weights", None)

    for n, m in mods.items():
        m.register_forward_hook(lambda mod, a, k, out, n=n: seen.__setitem__(n, (
            None if table(mod) is None else table(mod).detach().clone(),
            out.detach().reshape(-1, out.shape[-1]).clone())), with_kwargs=True)
    rows0 = {n: None if table(m) is None else table(m).shape[0] for n, m in mods.items()}
    ids = (torch.arange(T)[None] + 3) % kw["vocab_size"]
    ids[ids == kw["pad_token_id"]] = kw["pad_token_id"] + 1
    ids[0, 5] = kw["pad_token_id"]  # one padding token inside the sequence
    with torch.no_grad():
        if feed == "speech":
            model(input_features=torch.randn(1, 4 * T, kw["input_feat_per_channel"]), decoder_input_ids=ids)
        elif feed == "text":
            model(input_ids=ids, decoder_input_ids=ids)
        else:
            model(input_ids=ids)
    return cfg, model, mods, rows0, seen, ids[0].numpy(), table


def sinusoid_tables(t, d):
    """Fixed sinusoid tables through each model's own forward pass (SINUSOID_CASES): posenc must name every layer
    sinusoidal in the run's stacks, name each stack's table tensor, its initial rows, the rows the run looked up
    (position + offset; fairseq: padding tokens read the zeroed row and are not counted), and give the table itself:
    bit for bit in torch-compat for the torch float32 tables (fairseq's get_embedding), within 1 ulp in precise mode
    for Marian / Pegasus' numpy float64 tables rounded once to float32 (two float64 formulas can round a float32 tie
    apart, as for RoFormer). Where posenc says the table grows, the module is run past its rows and the rebuilt
    table must be posenc's table of that length (same bits)."""
    import torch
    for label, model_type, kw, feed in SINUSOID_CASES:
        try:
            cfg, model, mods, rows0, seen, ids, table = sinusoid_run(model_type, kw, feed)
        except Exception as e:  # the model could not be built or run: a failure, never a skip
            t.check(False, f"{label}: transformers could not build / run the tiny model: {type(e).__name__}: {e}")
            continue
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads the config ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        if feed == "decoder":
            stacks, want_kinds = [("", len(model.layers))], ["attention"] * len(model.layers)
        else:
            stacks = [("encoder", len(model.encoder.layers)), ("decoder", len(model.decoder.layers))]
            want_kinds = ["encoder"] * stacks[0][1] + ["decoder"] * stacks[1][1]
        t.check([x["scheme"] for x in layers] == ["sinusoidal"] * len(want_kinds) and
                [x["kind"] for x in layers] == want_kinds,
                f"{label}: layers {[(x['scheme'], x['kind']) for x in layers][:2]}.. = transformers' stacks {stacks}")
        t.check(len(mods) == len(stacks) and set(seen) == set(mods),
                f"{label}: one table per stack, each used by the run ({sorted(seen)})")
        for (stack, _), layer in zip(stacks, [layers[0], layers[-1]] if len(stacks) == 2 else [layers[0]]):
            name = next((n for n in mods if n.split(".")[0] == stack or not stack), None)
            if not t.check(name in seen, f"{label} {stack or 'model'}: the run used its embed_positions"):
                continue
            stack = stack or "model"
            mod, (used, added) = mods[name], seen[name]
            if layer["size"] == 0:  # posenc: no stored table, rows computed per forward for positions 0..T-1
                t.check(used is None and layer["tensor"] == "" and layer["offset"] == 0,
                        f"{label} {stack}: the module stores no table (posenc: tensor '{layer['tensor']}', no rows)")
                compare_sinusoid(t, f"{label} {stack} (positions 0..{T - 1})", d, dict(layer, size=T),
                                 added.numpy()[:T])
                with torch.no_grad():  # the module itself over 1000 positions: large angles, where float32 steps show
                    far = mod(torch.zeros(1, 1000, layer["dim"])).reshape(1000, -1).numpy()
                compare_sinusoid(t, f"{label} {stack} (positions 0..999)", d, dict(layer, size=1000), far)
                continue
            attr = "weight" if isinstance(getattr(mod, "weight", None), torch.nn.Parameter) else "weights"
            t.check(layer["tensor"].endswith(f"{name}.{attr}"), f"{label} {stack}: table {layer['tensor']} = the "
                    f"run's {name}.{attr}")
            t.check(layer["size"] == rows0[name], f"{label} {stack}: {layer['size']} rows (the run's table: "
                    f"{rows0[name]})")
            tokens = ids if stack != "encoder" or feed != "speech" else np.full(T, -1)  # frames: none is padding
            if layer["skips_padding"]:
                real = tokens != kw["pad_token_id"]
                want = np.where(real, np.cumsum(real) - 1 + layer["offset"], layer["zero_row"])
            else:
                want = np.arange(len(tokens)) + layer["offset"]
            u, a = used.numpy(), added.numpy()
            got = [int(np.flatnonzero((u.view(np.uint32) == r.view(np.uint32)).all(1))[0])
                   if (u.view(np.uint32) == r.view(np.uint32)).all(1).any() else -1 for r in a]
            t.check(got == want.tolist(), f"{label} {stack}: rows looked up {got[:8]}.. = posenc's position + "
                    f"{layer['offset']} (padding: row {layer['zero_row']}, skips_padding {layer['skips_padding']}) "
                    f"{want[:8].tolist()}..")
            compare_sinusoid(t, f"{label} {stack}", d, layer, u)
            if layer["grows"] and stack != "decoder":  # run the module past its rows: rebuilt with the same formula
                long = layer["size"] + 9
                with torch.no_grad():
                    if model_type == "xglm":
                        mod(position_ids=torch.arange(long)[None])
                    else:
                        mod(torch.full((1, long), kw["pad_token_id"] + 1))  # input_ids (FSMT: input)
                grown = table(mod).detach().numpy()
                t.check(grown.shape[0] > layer["size"], f"{label} {stack}: the table grew past {layer['size']} rows "
                        f"({grown.shape[0]})")
                compare_sinusoid(t, f"{label} {stack} grown", d, dict(layer, size=grown.shape[0]), grown)


def sinusoid_refused(t, d):
    """Sinusoid configs posenc refuses by name, each for what transformers' own run does with it: Marian with an odd
    d_model runs, with ceil(d/2) sines at exponents 2k/d before the cosines (no posenc odd policy); M2M-100 without a
    pad_token_id cannot run (create_position_ids_from_input_ids needs one); Speech2Text with pad_token_id 0 adds the
    zeroed row to every encoder frame (its padding mask, 0 = a real frame, is read as token ids)."""
    import torch
    odd = dict(SIN_ENC_DEC, d_model=63, encoder_attention_heads=3, decoder_attention_heads=3,
               max_position_embeddings=64, decoder_vocab_size=128)
    cfg, model, mods, _, seen, _, _ = sinusoid_run("marian", odd, "text")
    w = seen["encoder.embed_positions"][0].numpy()
    t.check(w.shape[1] == 63 and np.array_equal(w[1, 31], np.float32(np.sin(1 / 10000 ** (62 / 63)))),
            "marian d_model 63: transformers runs it; channel 31 (the 32nd sine) is sin(p / 10000^(62/63))")
    path = os.path.join(d, "marian_odd.json")
    cfg.to_json_file(path)
    refused_by_name(t, "marian d_model 63", path, "d_model")
    nopad = dict(SIN_ENC_DEC, max_position_embeddings=64, pad_token_id=None)
    t.check(raises(lambda: sinusoid_run_nopad(nopad), TypeError),
            "m2m_100 pad_token_id null: transformers cannot run it")
    from transformers import AutoConfig
    path = os.path.join(d, "m2m_nopad.json")
    AutoConfig.for_model("m2m_100", **nopad).to_json_file(path)
    t.check(json.load(open(path)).get("pad_token_id", "absent") is None, "m2m_100: the saved config has pad_token_id "
            "null")
    refused_by_name(t, "m2m_100 pad_token_id null", path, "pad_token_id")
    s2t = dict(SIN_ENC_DEC, max_source_positions=64, max_target_positions=64, conv_channels=16,
               input_feat_per_channel=8, pad_token_id=0)
    cfg, model, mods, _, seen, _, _ = sinusoid_run("speech_to_text", s2t, "speech")
    t.check(not seen["encoder.embed_positions"][1].any(), "speech_to_text pad_token_id 0: transformers adds zeros "
            "to every encoder frame")
    path = os.path.join(d, "s2t_pad0.json")
    cfg.to_json_file(path)
    refused_by_name(t, "speech_to_text pad_token_id 0", path, "pad_token_id")


def sinusoid_layout_refused(t, d):
    """Sinusoid tables no posenc mode or layout reproduces, refused by name, each shown on its own run: CTRL's float32
    table (w_k = 1 / torch.pow(10000, 2k/d)) differs from posenc's vaswani [sin | cos] table in both modes; MusicGen's
    decoder table is posenc's t2t torch-compat table with its halves swapped ([cos | sin])."""
    import torch
    from transformers import CTRLConfig, CTRLModel, MusicgenDecoderConfig, MusicgenForCausalLM
    cfg = CTRLConfig(n_embd=64, n_layer=2, n_head=4, dff=128, vocab_size=128, n_positions=1000)
    torch.manual_seed(0)
    model = CTRLModel(cfg).eval()
    with torch.no_grad():
        model(input_ids=(torch.arange(T)[None] + 3) % 128)
    theirs = model.pos_encoding.detach().numpy()
    out = os.path.join(d, "ctrl.npy")
    for mode in ("--torch-compat", "--precise"):
        rc, _, se = run("table", "--len", 1000, "--dim", 64, "--freqs", "vaswani", "--layout", "half", mode, "-o", out)
        mine = np.load(out) if rc == 0 else np.zeros_like(theirs)
        worst = ulps((mine, mine), (theirs, theirs))
        t.check(mine.shape == theirs.shape and worst > 1, f"ctrl: its table is not posenc's vaswani half table "
                f"{mode[2:]} (at most {worst} ulp apart over 1000 x 64), so posenc refuses it")
    path = os.path.join(d, "ctrl.json")
    cfg.to_json_file(path)
    refused_by_name(t, "ctrl", path, "ctrl")
    cfg = MusicgenDecoderConfig(hidden_size=64, num_hidden_layers=2, num_attention_heads=4, ffn_dim=128,
                                vocab_size=128, max_position_embeddings=1000, num_codebooks=2, pad_token_id=128,
                                bos_token_id=128)
    torch.manual_seed(0)
    model = MusicgenForCausalLM(cfg).eval()
    with torch.no_grad():
        model(input_ids=((torch.arange(2 * T).reshape(1, 2, T) + 3) % 128).reshape(2, T))
    theirs = model.model.decoder.embed_positions.weights.detach().numpy()
    rc, _, se = run("table", "--len", 1000, "--dim", 64, "--freqs", "t2t", "--layout", "half", "--torch-compat",
                    "-o", out)
    mine = np.load(out) if rc == 0 else np.zeros((1000, 64), np.float32)
    swapped = np.concatenate([mine[:, 32:], mine[:, :32]], 1)
    t.check(mine.shape == theirs.shape and not np.array_equal(mine, theirs) and
            np.array_equal(swapped.view(np.uint32), theirs.view(np.uint32)),
            "musicgen_decoder: its table is posenc's t2t half table with the halves swapped ([cos | sin], bit for bit)")
    path = os.path.join(d, "musicgen_decoder.json")
    cfg.to_json_file(path)
    refused_by_name(t, "musicgen_decoder", path, "musicgen_decoder")


def sinusoid_run_nopad(kw):
    """The forward pass of an M2M-100 built with pad_token_id None (raises inside embed_positions)."""
    import torch
    from transformers import AutoConfig, AutoModel
    model = AutoModel.from_config(AutoConfig.for_model("m2m_100", **kw)).eval()
    ids = (torch.arange(T)[None] + 3) % kw["vocab_size"]
    with torch.no_grad():
        model(input_ids=ids, decoder_input_ids=ids)


def compare_sinusoid(t, label, d, layer, theirs):
    """posenc's table for a layer of `rope explain --json` (rows 0..size-1, the zero row zeroed) against a run's."""
    out = os.path.join(d, "sinusoid.npy")
    exact = layer["mode"] == "torch_compat"
    rc, _, se = run("table", "--len", layer["size"], "--dim", layer["dim"], "--base", layer["base"], "--freqs",
                    layer["freqs"], "--layout", layer["layout"], "--odd", layer["odd"],
                    "--torch-compat" if exact else "--precise", "-o", out)
    if not t.check(rc == 0, f"{label}: posenc table ({se.strip()[:120]})"):
        return
    mine = np.load(out)
    if 0 <= layer["zero_row"] < mine.shape[0]:
        mine[layer["zero_row"]] = 0
    if not t.check(mine.shape == theirs.shape, f"{label}: table shape {mine.shape} = the run's {theirs.shape}"):
        return
    differ = int((mine.view(np.uint32) != theirs.view(np.uint32)).sum())
    worst = ulps((mine, mine), (theirs, theirs))
    t.check(differ == 0 if exact else worst <= 1,
            f"{label}: posenc's {layer['freqs']} {layer['layout']} table ({layer['mode']}) = the run's "
            f"{'bit for bit' if exact else 'within 1 ulp'} ({differ} of {theirs.size} differ, at most {worst} ulp)")


def ministral3(t, d):
    """Ministral 3's query scale, from its own forward: a tiny Ministral3Model runs at position ids that cross
    original_max_position_embeddings many times (both sides of every boundary, and past 2^20), with
    get_llama_4_attn_scale recorded on every call (one per layer); posenc reads the saved config.json (5.x
    rope_parameters, 4.x rope_scaling, and as mistral3's text_config): every layer scaled, and its function gives the
    same value at every position within QSCALE_ULPS float32 ULPs. Configs the forward cannot run (no beta in the
    rope dict, no original length there) are refused naming the key, and so is a file with no rope dict (the
    class then builds its own yarn x16)."""
    import torch
    from transformers import Ministral3Config, Ministral3Model
    from transformers.models.ministral3 import modeling_ministral3 as mm
    rp = {"rope_type": "yarn", "rope_theta": 1e6, "factor": 16.0, "original_max_position_embeddings": 64,
          "beta_fast": 32.0, "beta_slow": 1.0, "mscale": 1.0, "mscale_all_dim": 1.0, "llama_4_scaling_beta": 0.3}
    layers = 2
    cfg = Ministral3Config(**dict(SMALL, num_hidden_layers=layers, head_dim=16, rope_parameters=rp,
                                  max_position_embeddings=1024))
    torch.manual_seed(0)
    model = Ministral3Model(cfg).eval()
    positions = sorted({0, 1} | {k * 64 + e for k in range(1, 17) for e in (-1, 0)} |
                       {(1 << 20) - 1, 1 << 20, (1 << 20) + 63, 3 * (1 << 20) + 64 * 5 - 1})
    calls, original = [], mm.get_llama_4_attn_scale

    def recording(position_ids, *a, **k):
        calls.append((position_ids.detach().clone(), original(position_ids, *a, **k)))
        return calls[-1][1]

    mm.get_llama_4_attn_scale = recording
    try:
        with torch.no_grad():
            model(input_ids=(torch.arange(len(positions))[None] + 3) % SMALL["vocab_size"],
                  position_ids=torch.tensor(positions)[None])
    finally:
        mm.get_llama_4_attn_scale = original
    t.check(len(calls) == layers, f"ministral3: get_llama_4_attn_scale called {len(calls)} times, once per layer "
                                  f"({layers})")
    if not calls:
        return
    theirs = calls[0][1].reshape(-1).numpy()
    t.check(all(np.array_equal(c[1].reshape(-1).numpy(), theirs) for c in calls) and
            all(c[0].reshape(-1).tolist() == positions for c in calls),
            "ministral3: every layer got the same positions and the same scales")
    path = os.path.join(d, "ministral3.json")
    cfg.to_json_file(path)
    old = legacy_form(path, cfg)
    wrapped = os.path.join(d, "mistral3_ministral3.json")
    with open(wrapped, "w") as f:
        json.dump({"model_type": "mistral3", "text_config": json.load(open(path))}, f)
    for label, p in (("5.x rope_parameters", path), ("4.x rope_scaling", old), ("mistral3 text_config", wrapped)):
        rc, so, se = run("rope", "explain", "--config", p, "--json")
        if not t.check(rc == 0, f"ministral3 ({label}): posenc reads it ({se.strip()[:160]})"):
            continue
        j = json.loads(so)
        qs = j["query_scale"]
        t.check(qs is not None and qs["layers"] == "all" and [x["query_scale"] for x in j["layers"]] == [True] * layers,
                f"ministral3 ({label}): posenc scales q on every layer, as the run did on all {layers} ({qs})")
        if not qs:
            continue
        mine = posenc_query_scale(qs, positions).astype(np.float32)
        u = f32_ulps(mine, theirs)
        t.check(theirs.min() == 1.0 and theirs.max() > 1.5 and u.max() <= QSCALE_ULPS,
                f"ministral3 ({label}): posenc_query_scale_f64 = get_llama_4_attn_scale at {len(positions)} positions "
                f"0..{positions[-1]} (scales {theirs.min():.4g}..{theirs.max():.4g}) within {QSCALE_ULPS} float32 ULPs "
                f"({int((u > 0).sum())} differ, at most {int(u.max())} ULP)")
    # what the forward cannot run: refused naming the key it lacks
    for what, body, key in (
            ("no llama_4_scaling_beta in the rope dict (a top-level one)",
             dict(rope_parameters={k: v for k, v in rp.items() if k != "llama_4_scaling_beta"}, llama_4_scaling_beta=0.3),
             "llama_4_scaling_beta"),
            ("no original_max_position_embeddings in a default rope dict",
             dict(rope_parameters={"rope_type": "default", "rope_theta": 1e6, "llama_4_scaling_beta": 0.3}),
             "original_max_position_embeddings")):
        c = Ministral3Config(**dict(SMALL, num_hidden_layers=1, head_dim=16, **body))
        t.check(raises(lambda: Ministral3Model(c).eval()(input_ids=torch.arange(4)[None] + 3), TypeError),
                f"ministral3 {what}: transformers 5.18 cannot run it")
        p = os.path.join(d, "ministral3_bad.json")
        c.to_json_file(p)
        refused_by_name(t, f"ministral3 {what}", p, key)
    p = os.path.join(d, "ministral3_no_rope.json")
    with open(p, "w") as f:
        json.dump({"model_type": "ministral3", "num_hidden_layers": 2}, f)
    refused_by_name(t, "ministral3 without a rope dict (the class's own yarn x16)", p, "rope_parameters")


def llama4_temperature(t, d):
    """Llama 4's attention temperature, from its own forward: every layer's q projection is forced to ones, so on a
    NoPE layer the query the attention receives IS the scale the forward applied (1 x s = s), read at positions
    0..T-1 (arange + past: the run has no past). The layers it applies to are those whose query changes when
    attn_temperature_tuning is switched off (same weights, same input). posenc (5.x and 4.x forms, and as llama4's
    text_config) must scale exactly those layers, and its function must give the run's values within QSCALE_ULPS
    float32 ULPs. A small floor_scale (8) and attn_scale (0.25) make T = 40 tokens cross five floors; the class
    defaults (8192, 0.1, on) are compared with the built attention modules' own attributes."""
    import torch
    from transformers import AutoConfig, AutoModel
    from transformers.models.llama4 import modeling_llama4 as ml
    n_tok = 40
    base = dict(SMALL, num_hidden_layers=4, head_dim=16, num_local_experts=2, num_experts_per_tok=1,
                intermediate_size_mlp=128, rope_theta=500000.0, floor_scale=8, attn_scale=0.25)

    def run_model(**kw):
        cfg = AutoConfig.for_model("llama4_text", **dict(base, **kw))
        cfg._attn_implementation = "eager"
        torch.manual_seed(0)
        model = AutoModel.from_config(cfg).eval()
        seen, current, original = {}, [None], ml.eager_attention_forward
        for i, layer in enumerate(model.layers):
            layer.register_forward_pre_hook(lambda m, a, i=i: current.__setitem__(0, i))
            layer.self_attn.q_proj.register_forward_hook(lambda m, a, out: torch.ones_like(out))

        def recording(module, query, *a, **k):
            seen[current[0]] = query.detach().clone()
            return original(module, query, *a, **k)

        ml.eager_attention_forward = recording
        try:
            with torch.no_grad():
                model(input_ids=(torch.arange(n_tok)[None] + 3) % SMALL["vocab_size"])
        finally:
            ml.eager_attention_forward = original
        return cfg, model, [seen.get(i) for i in range(len(model.layers))]

    cfg, model, on = run_model()
    _, _, off = run_model(attn_temperature_tuning=False)
    if not t.check(all(x is not None for x in on + off), "llama4_text: the attention received every layer's query"):
        return
    scaled = [not torch.equal(a, b) for a, b in zip(on, off)]
    nope = [not bool(x) for x in cfg.no_rope_layers]
    t.check(scaled == nope and any(scaled), f"llama4_text: the layers whose query the temperature changes {scaled} "
                                            f"= the NoPE layers {nope}")
    path = os.path.join(d, "llama4_text.json")
    cfg.to_json_file(path)
    old = legacy_form(path, cfg)
    wrapped = os.path.join(d, "llama4_wrapped.json")
    with open(wrapped, "w") as f:
        json.dump({"model_type": "llama4", "text_config": json.load(open(path))}, f)
    positions = np.arange(n_tok)
    for label, p in (("5.x rope_parameters", path), ("4.x rope_theta", old), ("llama4 text_config", wrapped)):
        rc, so, se = run("rope", "explain", "--config", p, "--json")
        if not t.check(rc == 0, f"llama4_text ({label}): posenc reads it ({se.strip()[:160]})"):
            continue
        j = json.loads(so)
        qs = j["query_scale"]
        mine_layers = [x["query_scale"] for x in j["layers"]]
        t.check(qs is not None and qs["layers"] == "nope" and mine_layers == scaled,
                f"llama4_text ({label}): posenc scales q on layers {mine_layers} = the run's {scaled} ({qs})")
        if not qs:
            continue
        mine = posenc_query_scale(qs, positions).astype(np.float32)
        for i, q in enumerate(on):
            if not scaled[i]:
                continue
            theirs = q[0, :, :, :].numpy()  # [heads, T, head_dim]: the scale of each position, in every channel
            t.check(bool((theirs == theirs[:1, :, :1]).all()), f"llama4_text layer {i}: one scale per position")
            theirs = theirs[0, :, 0]
            u = f32_ulps(mine, theirs)
            t.check(theirs.max() > 1.3 and u.max() <= QSCALE_ULPS,
                    f"llama4_text ({label}) layer {i}: posenc_query_scale_f64 = the forward's scale at positions "
                    f"0..{n_tok - 1} (scales {theirs.min():.4g}..{theirs.max():.4g}) within {QSCALE_ULPS} float32 ULPs "
                    f"({int((u > 0).sum())} differ, at most {int(u.max())} ULP)")
    # the class defaults: posenc's reading of a file without the keys against the attention modules HF builds
    bare = AutoConfig.for_model("llama4_text", **{k: v for k, v in base.items() if k not in ("floor_scale", "attn_scale")})
    attn = AutoModel.from_config(bare).layers[3].self_attn
    p = os.path.join(d, "llama4_defaults.json")
    j = bare.to_dict()
    for k in ("floor_scale", "attn_scale", "attn_temperature_tuning"):
        j.pop(k, None)
    with open(p, "w") as f:
        json.dump(j, f)
    rc, so, se = run("rope", "explain", "--config", p, "--json")
    if t.check(rc == 0, f"llama4_text without the temperature keys: posenc reads it ({se.strip()[:120]})"):
        qs = json.loads(so)["query_scale"]
        t.check(qs == {"layers": "nope" if attn.attn_temperature_tuning else None, "beta": attn.attn_scale,
                       "divisor": attn.floor_scale, "shift": 1},
                f"llama4_text defaults: posenc {qs} = the built attention's attn_temperature_tuning "
                f"{attn.attn_temperature_tuning}, attn_scale {attn.attn_scale}, floor_scale {attn.floor_scale}")
    # switched off: no scale on any layer
    off_path = os.path.join(d, "llama4_off.json")
    AutoConfig.for_model("llama4_text", **dict(base, attn_temperature_tuning=False)).to_json_file(off_path)
    rc, so, _ = run("rope", "explain", "--config", off_path, "--json")
    t.check(rc == 0 and json.loads(so)["query_scale"] is None and not any(x["query_scale"] for x in json.loads(so)["layers"]),
            "llama4_text attn_temperature_tuning false: posenc scales no layer (the run's query is the same)")


def raises(build, error):
    """True when build() raises error: a config transformers itself cannot build or run."""
    try:
        build()
    except error:
        return True
    return False


def modernbert_null_local(t, d):
    """ModernBERT with local_rope_theta null: 4.x's ModernBertAttention fell back to global_rope_theta, 5.18 builds
    rope_theta None and raises; the releases disagree, so posenc refuses naming the key (never a default)."""
    from transformers import AutoConfig, AutoModel
    cfg = AutoConfig.for_model("modernbert", **dict(SMALL, num_hidden_layers=3, local_rope_theta=None))
    t.check(raises(lambda: AutoModel.from_config(cfg), TypeError),
            "modernbert local_rope_theta null: transformers 5.18 cannot build the model")
    path = os.path.join(d, "modernbert_null_local.json")
    with open(path, "w") as f:
        json.dump({"model_type": "modernbert", "num_hidden_layers": 3, "global_rope_theta": 160000.0,
                   "local_rope_theta": None, "global_attn_every_n_layers": 3, "local_attention": 128}, f)
    refused_by_name(t, "modernbert local_rope_theta null (4.x form)", path, "local_rope_theta")


def esm_refused(t, d):
    """ESM configs posenc refuses, each for what transformers 5.18 does with it: position_embedding_type
    'relative_key' (ESM-1's old spelling) runs with no table and no rotation; a rope dict is ignored by
    EsmRotaryEmbedding (the cos/sin equal those without it); no pad_token_id (EsmConfig's default None) cannot run."""
    base = dict(num_hidden_layers=2, pad_token_id=1, vocab_size=33)
    hf, path, _ = hf_layers("esm", dict(base, position_embedding_type="relative_key"), d, "esm relative_key")
    t.check(all(x is None for x in hf) and not [n for n in hf.lookups if "position" in n],
            f"esm relative_key: transformers rotates no layer and looks up no position table ({sorted(hf.lookups)})")
    refused_by_name(t, "esm relative_key", path, "relative_key")
    plain, _, _ = hf_layers("esm", dict(base, position_embedding_type="rotary"), d, "esm rotary plain")
    linear, path, _ = hf_layers("esm", dict(base, position_embedding_type="rotary",
                                            rope_parameters=dict(LINEAR, rope_theta=5.0)), d, "esm rotary rope dict")
    t.check(all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(plain, linear)),
            "esm rotary with a linear rope dict (rope_theta 5): transformers' cos/sin = those without the dict")
    refused_by_name(t, "esm rotary with rope_parameters", path, "rope_parameters")
    t.check(raises(lambda: hf_layers("esm", dict(base, pad_token_id=None), d, "esm no pad"), Exception),
            "esm absolute without pad_token_id: transformers 5.18 cannot run it")
    path = os.path.join(d, "esm_no_pad.json")
    with open(path, "w") as f:
        json.dump({"model_type": "esm", "num_hidden_layers": 2}, f)
    refused_by_name(t, "esm absolute without pad_token_id", path, "pad_token_id")


def roformer(t, d):
    """RoFormer through RoFormerModel's own forward: each layer hands RoFormerSelfAttention's
    apply_rotary_position_embeddings a [sin | cos] table built in float64 (RoFormerSinusoidalPositionalEmbedding,
    base 10000, dim hidden_size // num_attention_heads) and rotates interleaved pairs with it. posenc must read every
    layer as RoPE on the whole head, interleaved, and `rope apply` (precise mode: float64 angles rounded once, as the
    table is) must give the same cos/sin within 1 ulp (the two float64 formulas, pos / 10000^(2k/d) against
    pos * 10000^(-2k/d), can round a float32 tie apart). rotary_value true (V rotated as well) and a rope_theta the
    code ignores are refused by name."""
    import torch
    from transformers import RoFormerConfig, RoFormerModel
    from transformers.models.roformer import modeling_roformer as mr
    n, long_t = 3, 512  # 512 positions: angles large enough for float32 rounding to show

    def run_model(**kw):
        cfg = RoFormerConfig(vocab_size=128, hidden_size=64, num_attention_heads=4, intermediate_size=128,
                             num_hidden_layers=n, max_position_embeddings=long_t, pad_token_id=0, **kw)
        torch.manual_seed(0)
        model = RoFormerModel(cfg).eval()
        seen, current, original = {}, [None], mr.RoFormerSelfAttention.apply_rotary_position_embeddings

        def recording(sinusoidal_pos, q, k, v=None):
            seen[current[0]] = (sinusoidal_pos.detach().clone(), v is not None)
            return original(sinusoidal_pos, q, k, v)

        for i, layer in enumerate(model.encoder.layer):
            layer.register_forward_pre_hook(lambda m, a, i=i: current.__setitem__(0, i))
        mr.RoFormerSelfAttention.apply_rotary_position_embeddings = staticmethod(recording)
        try:
            with torch.no_grad():
                model(input_ids=(torch.arange(long_t)[None] + 3) % 128)
        finally:
            mr.RoFormerSelfAttention.apply_rotary_position_embeddings = staticmethod(original)
        return cfg, [seen.get(i) for i in range(n)]

    cfg, hf = run_model()
    path = os.path.join(d, "roformer.json")
    cfg.to_json_file(path)
    rc, so, se = run("rope", "explain", "--config", path, "--json")
    if not t.check(rc == 0, f"roformer: posenc reads the config ({se.strip()[:160]})"):
        return
    layers = json.loads(so)["layers"]
    t.check([x["scheme"] for x in layers] == ["rope" if h else "nope" for h in hf],
            f"roformer: per-layer schemes {[x['scheme'] for x in layers]} = transformers' (every layer rotates)")
    t.check(not any(h[1] for h in hf if h), "roformer rotary_value false: transformers rotates q and k only")
    head = cfg.hidden_size // cfg.num_attention_heads
    t.check(all(x["layout"] == "interleaved" and x["rotary_dim"] == head == x["head_dim"] for x in layers),
            f"roformer: interleaved pairs over the whole {head}-channel head")
    sp = hf[0][0].reshape(long_t, head).numpy()
    hs, hc = sp[:, : head // 2], sp[:, head // 2:]
    x = np.zeros((long_t, head), dtype=np.float32)
    x[:, 0::2] = 1
    xin, yout = os.path.join(d, "unit.npy"), os.path.join(d, "out.npy")
    np.save(xin, x)
    rc, _, se = run("rope", "apply", "--config", path, "--in", xin, "-o", yout)
    if t.check(rc == 0, f"roformer: rope apply ({se.strip()[:120]})"):
        y = np.load(yout)
        pc = (np.ascontiguousarray(y[:, 0::2]), np.ascontiguousarray(y[:, 1::2]))
        worst = ulps(pc, (hc, hs))
        differ = int((pc[0].view(np.uint32) != hc.view(np.uint32)).sum() + (pc[1].view(np.uint32) != hs.view(np.uint32)).sum())
        t.check(worst <= 1, f"roformer: cos/sin at positions 0..{long_t - 1} within 1 ulp of its float64 table "
                            f"({differ} of {2 * hc.size} differ, at most {worst} ulp)")
    cfg, hf = run_model(rotary_value=True)
    t.check(all(h and h[1] for h in hf), "roformer rotary_value true: transformers rotates the values too")
    path = os.path.join(d, "roformer_rotary_value.json")
    cfg.to_json_file(path)
    refused_by_name(t, "roformer rotary_value true", path, "rotary_value")
    cfg, hf5 = run_model(rope_theta=5.0)
    t.check(all(np.array_equal(a[0], b[0]) for a, b in zip(hf, hf5)), "roformer rope_theta 5: transformers' table is "
            "the same as without it (the key is ignored)")
    path = os.path.join(d, "roformer_rope_theta.json")
    cfg.to_json_file(path)
    refused_by_name(t, "roformer with rope_theta", path, "rope_theta")


def partial_conflict(t, d):
    """Qwen3.5's config class writes a top-level partial_rotary_factor 0.25 (its default) beside the rope dict's;
    transformers 5.18 rotates with the rope dict's. With the two different, posenc refuses naming the key."""
    rp = dict(rope_type="default", rope_theta=10000.0, partial_rotary_factor=0.5, mrope_section=[4, 2, 2],
              mrope_interleaved=True)
    kw = {k: v for k, v in QWEN35.items() if k != "partial_rotary_factor"}
    hf, path, cfg = hf_layers("qwen3_5_text", dict(kw, rope_parameters=rp), d, "qwen3_5_text partial conflict")
    width = next(x[0].shape[-1] for x in hf if x is not None)
    t.check(cfg.partial_rotary_factor == 0.25 and width == 16, f"qwen3_5_text: top-level partial_rotary_factor "
            f"{cfg.partial_rotary_factor}, rope dict's 0.5: transformers rotates {width} of 32 channels")
    refused_by_name(t, "qwen3_5_text with two partial_rotary_factor values", path, "partial_rotary_factor")


PARTIAL_KEYS = ("partial_rotary_factor", "rotary_pct", "rotary_dim", "rope_parameters", "rope_scaling")
PARTIAL_CHUNKS = 4


def partial_factor_cases():
    """The first case of every single-stack type whose keywords set no rotated fraction (nor a rope dict, which may)."""
    out, seen = [], set()
    for label, mt, kw in CASES:
        if mt in seen or mt in MROPE or any(k in kw for k in PARTIAL_KEYS):
            continue
        seen.add(mt)
        out.append((label, mt, kw))
    return out


def partial_factor(t, d, chunk):
    """A top-level partial_rotary_factor 0.25 given to every RoPE type: where the run rotates that fraction, posenc
    reads it (cos/sin compared as for the case itself); where the run rotates as many channels as without it (the
    rotary class never reads it) or raises (a scaled init reads it, the attention does not), posenc refuses naming
    the key: other runtimes rotate the fraction, so neither reading is silently picked."""
    from transformers import AutoConfig
    for label, mt, kw in partial_factor_cases()[chunk::PARTIAL_CHUNKS]:
        label = f"{label} + partial_rotary_factor 0.25"
        args = dict(SMALL, **copy.deepcopy(kw))
        base = os.path.join(d, mt + "_base.json")
        AutoConfig.for_model(mt, **args).to_json_file(base)
        j = json.load(open(base))
        j["model_type"] = mt
        json.dump(j, open(base, "w"))
        rc, so, _ = run("rope", "explain", "--config", base, "--json")
        if rc != 0 or not any(x["scheme"] == "rope" for x in json.loads(so)["layers"]):
            continue  # not a RoPE type (its own case checks what it is)
        try:
            hf0, _, _ = hf_layers(mt, kw, d, mt + " base")
        except Exception:  # a type this plain run cannot build (its own case has the inputs it needs)
            continue
        width0 = next((x[0].shape[-1] for x in hf0 if x is not None), None)
        try:
            hf, path, cfg = hf_layers(mt, dict(kw, partial_rotary_factor=0.25), d, label)
        except RuntimeError as e:  # the scaled init shortened inv_freq, the attention rotates the whole head
            path = os.path.join(d, mt + "_partial.json")
            AutoConfig.for_model(mt, **dict(args, partial_rotary_factor=0.25)).to_json_file(path)
            j = json.load(open(path))
            j["model_type"] = mt
            json.dump(j, open(path, "w"))
            refused_by_name(t, f"{label}: transformers raises ({str(e)[:60]})", path, "partial_rotary_factor")
            continue
        width = next((x[0].shape[-1] for x in hf if x is not None), None)
        if width == width0 and json.load(open(path)).get("partial_rotary_factor") != 0.25:
            compare(t, label + " (the config class rewrote the factor)", path, hf, d, mt not in PER_PAIR)  # Bamba
        elif width == width0:
            refused_by_name(t, f"{label}: transformers ignores it ({width} cos columns with and without)", path,
                            "partial_rotary_factor")
        else:
            # 0.25, not a class default (Bamba, GLM-4.5 and RecurrentGemma default to 0.5): the width must move
            t.check(width is not None and width0 is not None and width < width0,
                    f"{label}: transformers rotates fewer channels than without it ({width} cos columns, {width0})")
            compare(t, label, path, hf, d, mt not in PER_PAIR)


def glm_class_defaults(t, d):
    """GLM-4.1V / GLM-4.5V / GLM-Image text configs at their class defaults: transformers 5.18's own rotary class
    cannot run them (mrope_section [8, 12, 12] covers 32 pairs of a 64-pair head; GLM-4.5V's head_dim 4096 // 96 = 42
    with partial 0.5 rotates 21 channels), so posenc refuses each, alone and as its composite, naming the key."""
    import torch
    from transformers import AutoConfig
    ids = torch.from_numpy(MROPE_POSITIONS)[:, None, :]
    for text, key in (("glm4v_text", "mrope_section"), ("glm4v_moe_text", "partial_rotary_factor"),
                      ("glm_image_text", "mrope_section")):
        cfg = AutoConfig.for_model(text)  # the class defaults
        modeling = importlib.import_module(type(cfg).__module__.replace(".configuration_", ".modeling_"))
        rotary = [c for n, c in vars(modeling).items() if n.endswith("TextRotaryEmbedding")]
        t.check(len(rotary) == 1 and raises(lambda: rotary[0](cfg)(torch.zeros(1, T, 8), ids), RuntimeError),
                f"{text} class defaults: transformers' {[c.__name__ for c in rotary]} raises RuntimeError")
        for model_type in (text, text[:-5]):
            path = os.path.join(d, f"{model_type}_defaults.json")
            with open(path, "w") as f:
                json.dump({"model_type": model_type}, f)
            refused_by_name(t, f"{model_type} class defaults", path, key)


# Kimi K2's published config.json (moonshotai/Kimi-K2-Instruct; tests/fixtures/models/kimi_k2_instruct.json): its
# position keys as published (4.x rope_scaling with "type"), the widths tiny
KIMI_K2_ROPE = dict(qk_rope_head_dim=64, qk_nope_head_dim=128, v_head_dim=128, max_position_embeddings=131072,
                    rope_theta=50000.0, rope_scaling={"beta_fast": 1.0, "beta_slow": 1.0, "factor": 32.0, "mscale": 1.0,
                                                      "mscale_all_dim": 1.0, "original_max_position_embeddings": 4096,
                                                      "type": "yarn"})
KIMI_K2_TINY = dict(num_hidden_layers=2, num_attention_heads=2, num_key_value_heads=2, kv_lora_rank=16, q_lora_rank=16,
                    n_routed_experts=2, num_experts_per_tok=1, moe_intermediate_size=32, first_k_dense_replace=1,
                    n_group=1, topk_group=1)


def kimi_k2(t, d):
    """Kimi K2 (model_type kimi_k2, remote code: auto_map -> its copy of DeepSeek-V3's configuration_deepseek.py /
    modeling_deepseek.py). The oracle is transformers 5.18's own DeepseekV3 run on the Kimi keys with model_type
    replaced: the remote file is not part of the pinned test environment (no network; the oracle runs only the
    framework code pinned there). posenc reads the file as published (model_type kimi_k2, architectures
    DeepseekV3ForCausalLM, 4.x rope_scaling) and the 5.x spelling; cos/sin must match bit for bit and the softmax
    scale (1/sqrt(qk_head_dim) x m(32, mscale_all_dim)^2) within 1e-9 relative (the CLI prints 10 significant
    digits). Without architectures DeepseekV3ForCausalLM, or with rope_interleave false (which DeepseekV3 honours and
    the remote code ignores), posenc refuses by name."""
    from transformers.models.deepseek_v3.modeling_deepseek_v3 import DeepseekV3Attention
    kw = dict(KIMI_K2_TINY, **KIMI_K2_ROPE)
    hf, path5, cfg = hf_layers("deepseek_v3", kw, d, "kimi_k2 as deepseek_v3")
    arch = {"architectures": ["DeepseekV3ForCausalLM"], "auto_map": {
        "AutoConfig": "configuration_deepseek.DeepseekV3Config", "AutoModel": "modeling_deepseek.DeepseekV3Model",
        "AutoModelForCausalLM": "modeling_deepseek.DeepseekV3ForCausalLM"}, "model_type": "kimi_k2"}
    published = os.path.join(d, "kimi_k2_published_form.json")
    with open(published, "w") as f:
        json.dump(dict(arch, **dict(SMALL, **kw)), f)
    j = json.load(open(path5))
    j.update(arch)
    five = os.path.join(d, "kimi_k2_5x.json")
    json.dump(j, open(five, "w"))
    hf_scale = DeepseekV3Attention(cfg, 0).scaling
    for label, path in (("kimi_k2 (published 4.x rope_scaling)", published), ("kimi_k2 (5.x rope_parameters)", five)):
        compare(t, label, path, hf, d)
        rc, so, se = run("rope", "explain", "--config", path)
        m = re.search(r"softmax scale: 1/sqrt\((\d+)\) x ([0-9.e+-]+) =", so)
        mine = float(m.group(2)) / math.sqrt(int(m.group(1))) if m else float("nan")
        t.check(rc == 0 and m and int(m.group(1)) == cfg.qk_head_dim == 192 and
                abs(mine - hf_scale) <= 1e-9 * hf_scale and abs(hf_scale * math.sqrt(192) - 1) > 0.5,
                f"{label}: softmax scale {mine!r} = transformers' DeepseekV3Attention.scaling {hf_scale!r} "
                f"(1/sqrt({m and m.group(1)}) x {m and m.group(2)}) {se.strip()[:120]}")
    for what, change, key in (("no architectures", lambda x: x.pop("architectures"), "architectures"),
                              ("architectures KimiK2ForCausalLM",
                               lambda x: x.update(architectures=["KimiK2ForCausalLM"]), "architectures"),
                              ("rope_interleave false", lambda x: x.update(rope_interleave=False), "rope_interleave")):
        body = json.load(open(published))
        change(body)
        bad = os.path.join(d, "kimi_k2_" + what.replace(" ", "_") + ".json")
        json.dump(body, open(bad, "w"))
        refused_by_name(t, f"kimi_k2 {what}", bad, key)


def deberta_run(model_type, kw):
    """A tiny DeBERTa (v1 or v2) from its own config class, one forward pass over T tokens. Recorded from the run:
    the relative_pos matrix the disentangled attention receives, its att_span and the first table row of the slice
    it gathers from (v1 slices rel_embeddings[max_rel - span : max_rel + span]; v2 reads from row 0), the index
    tensors of its c2p / p2c torch.gather calls (in code order: c2p first), the rel_embeddings rows and every
    position-table lookup."""
    import torch
    from transformers import AutoConfig, AutoModel
    cfg = AutoConfig.for_model(model_type, **dict(hidden_size=64, intermediate_size=128, num_attention_heads=4,
                                                  vocab_size=128, num_hidden_layers=2, pad_token_id=0, **kw))
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).eval()
    mod = importlib.import_module(type(model).__module__)
    attn_name = "disentangled_attention_bias" if model_type == "deberta-v2" else "disentangled_att_bias"
    original_bias, original_gather, original_span = getattr(mod.DisentangledSelfAttention, attn_name), torch.gather, \
        getattr(mod, "compute_attention_span", None)
    calls, spans = [], []

    def bias(self, query_layer, key_layer, relative_pos, rel_embeddings, scale_factor):
        rec = dict(relative_pos=relative_pos.detach().clone(), gathers=[])
        calls.append(rec)

        def gather(x, dim, index, *a, **k2):
            rec["gathers"].append(index.detach().clone())
            return original_gather(x, dim, index, *a, **k2)

        torch.gather = gather
        try:
            out = original_bias(self, query_layer, key_layer, relative_pos, rel_embeddings, scale_factor)
        finally:
            torch.gather = original_gather
        # v2: att_span = self.pos_ebd_size, rows from 0; v1: compute_attention_span, rows from max_rel - span
        rec["span"] = int(spans[-1]) if model_type == "deberta" else int(self.pos_ebd_size)
        rec["first_row"] = self.max_relative_positions - rec["span"] if model_type == "deberta" else 0
        return out

    def span(*a):
        spans.append(original_span(*a))
        return spans[-1]

    lookups, param_names = {}, {id(p): n for n, p in model.named_parameters()}
    embedding = torch.nn.functional.embedding

    def recording(ids, weight, *a, **k2):
        if id(weight) in param_names:
            lookups[param_names[id(weight)]] = (ids.detach().clone(), weight.shape[0])
        return embedding(ids, weight, *a, **k2)

    setattr(mod.DisentangledSelfAttention, attn_name, bias)
    if original_span is not None:
        mod.compute_attention_span = span
    torch.nn.functional.embedding = recording
    try:
        with torch.no_grad():
            model(input_ids=(torch.arange(T)[None] + 3) % 128)
    finally:
        setattr(mod.DisentangledSelfAttention, attn_name, original_bias)
        if original_span is not None:
            mod.compute_attention_span = original_span
        torch.nn.functional.embedding = embedding
    rel = getattr(model.encoder, "rel_embeddings", None)
    return cfg, calls, lookups, None if rel is None else rel.weight.shape[0], len(model.encoder.layer)


def posenc_deberta_matrix(lq, lk, buckets, max_rel, output, d):
    out = os.path.join(d, f"deberta_{output}.npy")
    rc, _, se = run("bias", "deberta", "--len", lq, "--key-len", lk, "--buckets", buckets, "--max-relative", max_rel,
                    "--output", output, "-o", out)
    return (np.load(out), "") if rc == 0 else (None, se.strip()[:160])


def deberta(t, d):
    """DeBERTa v1 ("deberta") and v2/v3 ("deberta-v2") through their own forward passes: per layer, the relative
    position matrix the disentangled attention really receives (make_log_bucket_position's buckets for v2 with
    position_buckets) and the rows of rel_embeddings its c2p / p2c gathers read must equal posenc's
    (posenc_deberta_matrix_i64 through `posenc bias deberta`, integers: tolerance 0); the learned absolute table
    (position_biased_input) must be the one posenc names, looked up at rows 0..T-1. T = 24 against 8 buckets /
    max_relative_positions 16 (v3-like: log buckets and clamping both happen), an unbucketed v2 that clamps, v1
    with max_relative_positions below T (the sliced table's rows, mapped back to full-table rows) and above it.
    make_log_bucket_position itself runs over every |r| <= 2^20 for the v3 (256, 512) and (8, 16) parameters."""
    import torch
    from transformers.models.deberta_v2 import modeling_deberta_v2 as mv2
    cases = [
        ("deberta-v2 v3-like", "deberta-v2", dict(relative_attention=True, position_buckets=8, max_relative_positions=16,
                                                  pos_att_type="p2c|c2p", position_biased_input=False,
                                                  share_att_key=True, norm_rel_ebd="layer_norm")),
        # max_relative_positions -1: max_position_embeddings (16 < T, so the rows clamp); no absolute table (it
        # would have only 16 rows for T positions)
        ("deberta-v2 unbucketed c2p", "deberta-v2", dict(relative_attention=True, max_position_embeddings=16,
                                                         max_relative_positions=-1, pos_att_type=["c2p"],
                                                         position_biased_input=False)),
        ("deberta-v2 buckets p2c", "deberta-v2", dict(relative_attention=True, position_buckets=6, max_relative_positions=40,
                                                      pos_att_type="P2C", position_biased_input=False)),
        ("deberta v1 max_rel 10", "deberta", dict(relative_attention=True, max_relative_positions=10,
                                                  pos_att_type="c2p|p2c", max_position_embeddings=64)),
        ("deberta v1 max_rel 64", "deberta", dict(relative_attention=True, max_relative_positions=64,
                                                  pos_att_type="c2p|p2c", position_biased_input=False)),
        # relative_attention false (both class defaults): the absolute table alone
        ("deberta v1 defaults", "deberta", dict(max_position_embeddings=64)),
        ("deberta-v2 defaults", "deberta-v2", dict(max_position_embeddings=64)),
    ]
    for label, model_type, kw in cases:
        try:
            cfg, calls, lookups, rel_rows, n_layers = deberta_run(model_type, kw)
        except Exception as e:
            t.check(False, f"{label}: transformers could not build / run the tiny model: {type(e).__name__}: {e}")
            continue
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads the config ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        relative = bool(calls)
        t.check(len(layers) == n_layers and all(x["scheme"] == ("deberta" if relative else "learned") for x in layers),
                f"{label}: {len(layers)} layers {sorted({x['scheme'] for x in layers})} = the run's {n_layers} layers, "
                f"{'disentangled relative attention' if relative else 'no relative term'} in each")
        pos = [n for n in lookups if n.endswith("embeddings.position_embeddings.weight")]
        absolute = layers[0].get("absolute", True) if relative else True
        t.check(bool(pos) == absolute, f"{label}: the absolute table is looked up ({pos}) iff posenc says it is added "
                                       f"({absolute})")
        if pos and absolute:
            ids, rows = lookups[pos[0]]
            x = layers[0]
            t.check(("deberta." + pos[0]) == x["tensor"] and np.array_equal(ids.reshape(-1).numpy(), np.arange(T) + x["offset"])
                    and rows == x["size"], f"{label}: table {x['tensor']} rows 0..{T - 1} + {x['offset']} of {x['size']} "
                    f"(the run: {pos[0]}, ids {ids.reshape(-1)[:3].tolist()}.., {rows} rows)")
        if not relative:
            continue
        x = layers[0]
        t.check(len(calls) == n_layers, f"{label}: every layer ran the disentangled bias ({len(calls)} calls)")
        t.check(rel_rows == 2 * x["span"], f"{label}: rel_embeddings has {rel_rows} rows = 2 x posenc's span {x['span']}")
        t.check(x["relative_tensor"] == "deberta.encoder.rel_embeddings.weight",
                f"{label}: relative table named {x['relative_tensor']}")
        terms = [k for k in ("c2p", "p2c") if x[k]]
        want = {}
        for out in ("relative", "c2p", "p2c"):
            want[out], why = posenc_deberta_matrix(T, T, x["position_buckets"], x["max_relative_positions"], out, d)
            t.check(want[out] is not None, f"{label}: posenc bias deberta --output {out} ({why})")
        if any(v is None for v in want.values()):
            continue
        for i, c in enumerate(calls):
            rp = c["relative_pos"].reshape(-1, T, T)[0].numpy()
            t.check(np.array_equal(rp, want["relative"]), f"{label} layer {i}: relative_pos = posenc's bucket(q - k) "
                    f"({int((rp != want['relative']).sum())} of {T * T} differ; the run's [0, :6]: {rp[0, :6].tolist()})")
            t.check(len(c["gathers"]) == len(terms), f"{label} layer {i}: {len(c['gathers'])} gathers for terms {terms}")
            for term, index in zip(terms, c["gathers"]):
                rows = index.reshape(-1, T, T)[0].numpy() + c["first_row"]
                differ = int((rows != want[term]).sum())
                t.check(differ == 0, f"{label} layer {i}: {term} rows of rel_embeddings (slice from row "
                        f"{c['first_row']}, span {c['span']}) = posenc's ({differ} of {T * T} differ)")
    # make_log_bucket_position itself over every distance 0 < |r| <= 2^20, through build_relative_position
    n = 1 << 20
    for buckets, max_rel in ((256, 512), (8, 16)):
        for lq, lk in ((1, n + 1), (n + 1, 1)):
            hf = mv2.build_relative_position(torch.empty(1, lq, 1), torch.empty(1, lk, 1), buckets, max_rel)
            hf = hf.reshape(lq, lk).numpy()
            mine, why = posenc_deberta_matrix(lq, lk, buckets, max_rel, "relative", d)
            if not t.check(mine is not None, f"deberta ({buckets}, {max_rel}) posenc bias deberta ({why})"):
                continue
            differ = np.flatnonzero(mine.reshape(-1) != hf.reshape(-1))
            t.check(differ.size == 0, f"deberta ({buckets}, {max_rel}): make_log_bucket_position over r = "
                    f"{'0..-2^20' if lq == 1 else '0..2^20'} = posenc's bucket ({differ.size} of {hf.size} differ"
                    f"{', first at |r| = %d' % differ[0] if differ.size else ''})")
    # what posenc refuses, each shown by the run: no positions at all, a relative table no term reads, a term
    # transformers does not compute
    cfg, calls, lookups, _, _ = deberta_run("deberta-v2", dict(relative_attention=False, position_biased_input=False))
    t.check(not calls and not [k for k in lookups if "position" in k],
            f"deberta-v2 relative_attention and position_biased_input false: no relative term, no table looked up "
            f"({sorted(lookups)})")
    path = os.path.join(d, "deberta_none.json")
    cfg.to_json_file(path)
    refused_by_name(t, "deberta-v2 without positions", path, "position_biased_input")
    cfg, calls, _, _, _ = deberta_run("deberta", dict(relative_attention=True, position_biased_input=False))
    t.check(calls and all(not c["gathers"] for c in calls),
            "deberta relative_attention without pos_att_type: the run gathers no relative row")
    path = os.path.join(d, "deberta_no_terms.json")
    cfg.to_json_file(path)
    refused_by_name(t, "deberta relative_attention without pos_att_type", path, "pos_att_type")
    cfg, calls, _, _, _ = deberta_run("deberta", dict(relative_attention=True, pos_att_type="c2p|p2p"))
    t.check(calls and all(len(c["gathers"]) == 1 for c in calls),
            "deberta pos_att_type c2p|p2p: the run computes c2p only (one gather; p2p is counted in its scale)")
    path = os.path.join(d, "deberta_p2p.json")
    cfg.to_json_file(path)
    refused_by_name(t, "deberta pos_att_type p2p", path, "p2p")


# T5 and its copies (issue 39): relative position buckets, a bias table in block 0 of each stack (T5, mT5, Switch
# Transformers, Pop2Piano) or in every block (UMT5). Each runs forward (encoder and decoder, eager attention) with
# the attention function wrapped: the position_bias every self-attention (and cross-attention) layer really adds,
# and the bucket ids each relative_attention_bias table is looked up with, are compared exactly (integers, and
# rows copied out of the table: tolerance 0) with posenc's buckets (`posenc bias t5` on the same T x T grid)
# gathered from the table posenc names for that layer (explain --json bias_table / own_table).
T5_MODELS = [("t5", "T5ForConditionalGeneration"), ("mt5", "MT5ForConditionalGeneration"),
             ("switch_transformers", "SwitchTransformersForConditionalGeneration"),
             ("umt5", "UMT5ForConditionalGeneration"), ("pop2piano", "Pop2PianoForConditionalGeneration")]
T5_SMALL = dict(d_model=32, d_kv=8, d_ff=64, num_heads=2, num_layers=3, num_decoder_layers=2, vocab_size=128,
                num_experts=2)  # num_experts: Switch Transformers only (ignored by the others' config classes)
# the class defaults (32 buckets, max distance 128: past T, so only the exact and first log buckets), and 16 / 20
# (T = 24 reaches the capped last bucket in both directions)
T5_BUCKETS = [{}, dict(relative_attention_num_buckets=16, relative_attention_max_distance=20)]


def t5_run(cls_name, cfg, extra=None):
    """One forward pass of the tiny model: {attention module name: position_bias it adds}, {table name: bucket ids
    it is looked up with}, the model's parameters."""
    import torch
    import transformers
    torch.manual_seed(0)
    model = getattr(transformers, cls_name)._from_config(cfg, attn_implementation="eager").eval()
    mod = importlib.import_module(type(model).__module__)
    names = {id(m): n for n, m in model.named_modules()}
    added, looked_up = {}, {}
    original = mod.eager_attention_forward

    def recording(module, *a, position_bias=None, **k2):
        added[names[id(module)]] = None if position_bias is None else position_bias.detach().clone()
        return original(module, *a, position_bias=position_bias, **k2)

    hooks = [m.register_forward_hook(lambda m_, inp, out, n=n: looked_up.__setitem__(n + ".weight", inp[0].clone()))
             for n, m in model.named_modules() if isinstance(m, torch.nn.Embedding) and "relative_attention_bias" in n]
    mod.eager_attention_forward = recording
    try:
        with torch.no_grad():
            ids = (torch.arange(T)[None] + 3) % 128
            model(input_ids=ids, decoder_input_ids=ids, **(extra or {}))
    finally:
        mod.eager_attention_forward = original
        for h in hooks:
            h.remove()
    return added, looked_up, dict(model.named_parameters()), model


def t5_case(t, d, model_type, cls_name, kw, label):
    from transformers import AutoConfig
    cfg = AutoConfig.for_model(model_type, **T5_SMALL, **kw)
    path = os.path.join(d, label.replace(" ", "_") + ".json")
    cfg.to_json_file(path)  # the class's diff form: absent keys must come from posenc's class defaults
    try:
        added, looked_up, params, _ = t5_run(cls_name, cfg)
    except Exception as e:
        t.check(False, f"{label}: transformers could not run the tiny model: {type(e).__name__}: {e}")
        return
    rc, so, se = run("rope", "explain", "--config", path, "--json")
    if not t.check(rc == 0, f"{label}: posenc reads it (exit {rc}: {se.strip()[:160]})"):
        return
    ours = json.loads(so)["layers"]
    self_attn = [f"encoder.block.{i}.layer.0.SelfAttention" for i in range(cfg.num_layers)] + \
                [f"decoder.block.{i}.layer.0.SelfAttention" for i in range(cfg.num_decoder_layers)]
    t.check([(o["scheme"], o["kind"]) for o in ours] ==
            [("t5", n.split(".")[0]) for n in self_attn],
            f"{label}: {len(ours)} layers t5 encoder x {cfg.num_layers} + decoder x {cfg.num_decoder_layers}")
    t.check(set(added) >= set(self_attn), f"{label}: every self-attention layer ran the eager attention "
            f"({len(added)} calls recorded)")
    # the decoder's cross-attention adds no position bias (zeros), which posenc says by listing none
    cross = [n for n in added if "EncDecAttention" in n]
    t.check(len(cross) == cfg.num_decoder_layers and all(added[n] is None or not added[n].any() for n in cross),
            f"{label}: the {len(cross)} cross-attention layers add no position bias")
    tables = {n for n in params if n.endswith("relative_attention_bias.weight")}
    owned = {o["bias_table"] for o in ours if o.get("own_table")}
    t.check(owned == tables, f"{label}: the layers owning a bias table: posenc {sorted(owned)}, model "
            f"{sorted(tables)}")
    grids = {}
    for name, o in zip(self_attn, ours):
        if o.get("scheme") != "t5" or name not in added or o.get("bias_table") not in params:
            t.check(False, f"{label} {name}: no recorded bias or table {o.get('bias_table')} not in the model")
            continue
        key = (o["num_buckets"], o["max_distance"], o["bidirectional"])
        if key not in grids:
            out = os.path.join(d, f"{label.replace(' ', '_')}_{len(grids)}.npy")
            rc, _, se = run("bias", "t5", "--len", T, "--key-len", T, "--buckets", key[0], "--max-distance", key[1],
                            *([] if key[2] else ["--unidirectional"]), "-o", out)
            grids[key] = np.load(out).astype(np.int64) if rc == 0 else None
        b = grids[key]
        if not t.check(b is not None, f"{label} {name}: posenc bias t5 {key} ran"):
            continue
        table = params[o["bias_table"]].detach().numpy()
        want = np.transpose(table[b], (2, 0, 1))  # [heads, query, key]
        got = added[name][0].numpy()
        t.check(got.shape == want.shape and np.array_equal(got, want),
                f"{label} {name}: the bias added = {o['bias_table']}[posenc buckets] "
                f"({'bidirectional' if key[2] else 'causal'}, {key[0]} buckets, {key[1]}), every head, {T}x{T}")
        ids = looked_up.get(o["bias_table"]) if o.get("own_table") else None
        if o.get("own_table"):
            ok = ids is not None and np.array_equal(ids.numpy().reshape(T, T), b)
            t.check(ok, f"{label} {name}: the bucket ids looked up in its own table = posenc's, {T}x{T}")
    # the bias depends on the layer's table: a layer that reads another layer's table would not match above
    where = "one per self-attention layer" if model_type == "umt5" else "block 0 of each stack"
    t.check(len(tables) == (len(self_attn) if model_type == "umt5" else 2), f"{label}: {len(tables)} bias tables ({where})")


def t5_family(t, d):
    for model_type, cls_name in T5_MODELS:
        for kw in T5_BUCKETS:
            label = model_type + (f" buckets {kw['relative_attention_num_buckets']}" if kw else " default buckets")
            t5_case(t, d, model_type, cls_name, kw, label)
    longt5_refused(t, d)
    udop_refused(t, d)


def longt5_refused(t, d):
    """LongT5's encoder: local (or transient-global) attention in blocks of local_radius + 1 tokens; the bias it
    adds is built per block over a 3-block window ([.., blocks, block_len, 3 x block_len], not T x T), and
    transient-global adds a second table (global_relative_attention_bias) over block summaries. Refused by name."""
    import torch
    from transformers import AutoConfig
    for kind in ("local", "transient-global"):
        label = f"longt5 {kind}"
        cfg = AutoConfig.for_model("longt5", **T5_SMALL, encoder_attention_type=kind, local_radius=4,
                                   global_block_size=4)
        path = os.path.join(d, f"longt5_{kind}.json")
        cfg.to_json_file(path)
        import transformers
        torch.manual_seed(0)
        model = transformers.LongT5ForConditionalGeneration._from_config(cfg).eval()
        attn = model.encoder.block[0].layer[0]
        attn = getattr(attn, "LocalSelfAttention", None) or getattr(attn, "TransientGlobalSelfAttention")
        shapes = []
        original = type(attn).compute_bias

        def recording(self, *a, **k2):
            out = original(self, *a, **k2)
            shapes.append(tuple(out.shape))
            return out

        type(attn).compute_bias = recording
        try:
            with torch.no_grad():
                ids = (torch.arange(T)[None] + 3) % 128
                model(input_ids=ids, decoder_input_ids=ids)
        finally:
            type(attn).compute_bias = original
        block = cfg.local_radius + 1
        t.check(shapes and shapes[0][-2:] == (block, 3 * block),
                f"{label}: the encoder's bias is built per block ({shapes[:1]}: block_len {block} x 3 blocks, not "
                f"{T} x {T})")
        globals_ = [n for n, _ in model.named_parameters() if "global_relative_attention_bias" in n]
        t.check(bool(globals_) == (kind == "transient-global"),
                f"{label}: a second (global) bias table {'present' if globals_ else 'absent'}")
        refused_by_name(t, label, path, "longt5")


def udop_refused(t, d):
    """UDOP's encoder adds, besides the T5 buckets, a layout bias computed from each token's bounding box: the same
    tokens with other boxes get another bias. posenc reads only the config: refused by name."""
    import torch
    import transformers
    from transformers import AutoConfig
    cfg = AutoConfig.for_model("udop", **dict(T5_SMALL, num_layers=2, num_decoder_layers=1))
    path = os.path.join(d, "udop.json")
    cfg.to_json_file(path)
    torch.manual_seed(0)
    model = transformers.UdopEncoderModel._from_config(cfg, attn_implementation="eager").eval()
    mod = importlib.import_module(type(model).__module__)
    first = model.encoder.block[0].layer[0].SelfAttention
    biases = []
    original = mod.eager_attention_forward

    def recording(module, *a, position_bias=None, **k2):
        if module is first:
            biases.append(position_bias.detach().clone())
        return original(module, *a, position_bias=position_bias, **k2)

    mod.eager_attention_forward = recording
    try:
        ids = (torch.arange(T)[None] + 3) % 128
        x = torch.linspace(0, 0.9, T)
        with torch.no_grad():
            for boxes in (torch.stack([x, x, x + 0.05, x + 0.05], -1), torch.stack([x * 0, x, x * 0 + 0.1, x + 0.05], -1)):
                model(input_ids=ids, bbox=boxes[None])
    finally:
        mod.eager_attention_forward = original
    t.check(len(biases) == 2 and not torch.equal(biases[0], biases[1]),
            "udop: the same tokens with other bounding boxes get another encoder bias (layer 0): it depends on the "
            "layout, not on positions alone")
    refused_by_name(t, "udop", path, "udop")


def granite_swa_thetas(t, d):
    """Granite-SWA with two different non-zero bases in layer_rope_theta: transformers rotates layer 0 and layer 1
    with different cos/sin (one rotary embedding per base); posenc's model has one base per layer kind, so it refuses
    the file naming the key. sliding_window null: transformers cannot run the sliding layers, posenc refuses it."""
    hf, path, _ = hf_layers("granite_swa", dict(num_hidden_layers=2, sliding_window=8,
                                                layer_rope_theta=[10000.0, 500000.0]), d, "granite_swa two thetas")
    t.check(hf[0] is not None and hf[1] is not None and not np.array_equal(hf[0][0], hf[1][0]),
            "granite_swa layer_rope_theta [10000, 500000]: transformers rotates both layers, each with its own cos/sin")
    refused_by_name(t, "granite_swa two bases", path, "layer_rope_theta")
    null = dict(SMALL, num_hidden_layers=2, sliding_window=None)
    t.check(raises(lambda: hf_layers("granite_swa", null, d, "granite_swa null window"), TypeError),
            "granite_swa sliding_window null: transformers 5.18 cannot run its sliding layers")
    path = os.path.join(d, "granite_swa_null_window.json")
    with open(path, "w") as f:
        json.dump({"model_type": "granite_swa", "num_hidden_layers": 2, "sliding_window": None}, f)
    refused_by_name(t, "granite_swa sliding_window null", path, "sliding_window")


def cohere2_moe_refused(t, d):
    """Cohere2-MoE configs posenc refuses for what transformers 5.18 does with them: rope_scaling (kept by
    Cohere2MoeConfig beside rope_parameters) leaves the cos/sin as without it; sliding_window null cannot run."""
    base = dict(num_hidden_layers=2, head_dim=16, sliding_window=8, num_experts=2, num_experts_per_tok=1)
    plain, _, _ = hf_layers("cohere2_moe", base, d, "cohere2_moe plain")
    scaled, path, _ = hf_layers("cohere2_moe", dict(base, rope_scaling=LINEAR), d, "cohere2_moe rope_scaling")
    t.check(plain[0] is not None and all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1])
                                         for a, b in zip(plain, scaled) if a is not None),
            "cohere2_moe rope_scaling linear x2: transformers' cos/sin = those without it (not applied)")
    refused_by_name(t, "cohere2_moe rope_scaling", path, "rope_scaling")
    t.check(raises(lambda: hf_layers("cohere2_moe", dict(base, sliding_window=None), d, "cohere2_moe null"), TypeError),
            "cohere2_moe sliding_window null: transformers 5.18 cannot run its sliding layers")
    path = os.path.join(d, "cohere2_moe_null_window.json")
    with open(path, "w") as f:
        json.dump({"model_type": "cohere2_moe", "num_hidden_layers": 2, "sliding_window": None}, f)
    refused_by_name(t, "cohere2_moe sliding_window null", path, "sliding_window")


def bamba_partial(t, d):
    """Bamba's partial_rotary_factor: a top-level value is overwritten with 0.5 by BambaConfig (the run rotates half the
    head whatever it says), so posenc refuses a top-level value other than 0.5; the rope dict's own value counts (read,
    compared bit for bit)."""
    base = dict(num_hidden_layers=2, attn_layer_indices=[0], mamba_n_heads=4, mamba_d_state=16, mamba_chunk_size=8)
    top, path, _ = hf_layers("bamba", dict(base, partial_rotary_factor=1.0), d, "bamba top partial")
    head = SMALL["hidden_size"] // SMALL["num_attention_heads"]
    t.check(top[0] is not None and top[0][0].shape[-1] == head // 2,
            f"bamba partial_rotary_factor 1.0 (top level): transformers rotates {top[0][0].shape[-1]} of {head} channels")
    j = json.load(open(path))
    j.pop("rope_parameters")
    j["partial_rotary_factor"], j["rope_theta"] = 1.0, 10000.0
    with open(path, "w") as f:
        json.dump(j, f)
    refused_by_name(t, "bamba top-level partial_rotary_factor 1.0", path, "partial_rotary_factor")
    hf, path, _ = hf_layers("bamba", dict(base, rope_parameters={"rope_type": "default", "rope_theta": 10000.0,
                                                                 "partial_rotary_factor": 1.0}), d, "bamba dict partial")
    compare(t, "bamba rope_parameters partial_rotary_factor 1.0", path, hf, d)


def recurrent_gemma_refused(t, d):
    """RecurrentGemma configs posenc refuses for what transformers 5.18 does with them: a head_dim in the file is
    overwritten with hidden_size // num_attention_heads (the run rotates half of 16 channels, not of the file's 32);
    a linear rope dict cannot be built (RecurrentGemmaRotaryEmbedding supports default only)."""
    hf, path, _ = hf_layers("recurrent_gemma", dict(num_hidden_layers=3, attention_window_size=8), d, "rg head_dim")
    t.check(hf[2] is not None and hf[2][0].shape[-1] == 8, f"recurrent_gemma: the attention block rotates "
            f"{hf[2][0].shape[-1] if hf[2] else 0} channels (half of hidden // heads = 16)")
    j = json.load(open(path))
    j["head_dim"] = 32
    with open(path, "w") as f:
        json.dump(j, f)
    refused_by_name(t, "recurrent_gemma head_dim 32 (hidden // heads = 16)", path, "head_dim")
    t.check(raises(lambda: hf_layers("recurrent_gemma", dict(num_hidden_layers=3, rope_scaling=LINEAR), d, "rg linear"),
                   ValueError), "recurrent_gemma with a linear rope dict: transformers 5.18 cannot build the model")
    path = os.path.join(d, "recurrent_gemma_linear.json")
    with open(path, "w") as f:
        json.dump({"model_type": "recurrent_gemma", "rope_scaling": LINEAR}, f)
    refused_by_name(t, "recurrent_gemma linear rope dict", path, "linear")


def hrm_text(t, d):
    """HRM-Text through HrmTextModel's own forward: two stacks (L_module, H_module) of num_layers_per_stack layers, each
    run H_cycles * (L_cycles + 1) times; every call of a layer must rotate with the same cos/sin (recorded and
    compared), and posenc lists each physical layer once, L stack first. HrmTextConfig saves num_hidden_layers
    inflated to the slot count beside num_layers_per_stack; the older form (num_hidden_layers = the per-stack count,
    no num_layers_per_stack) must read the same."""
    import torch
    from transformers import AutoConfig, AutoModel
    from transformers.models.hrm_text import modeling_hrm_text as mh
    cfg = AutoConfig.for_model("hrm_text", **dict(SMALL, num_hidden_layers=2, head_dim=8, H_cycles=2, L_cycles=2,
                                                  rope_theta=50000.0))
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).eval()
    stacks = list(model.L_module.layers) + list(model.H_module.layers)
    calls, current, original = {}, [None], mh.apply_rotary_pos_emb

    def wrapped(q, k, cos, sin, *a, **k2):
        calls.setdefault(current[0], []).append((cos.detach().clone(), sin.detach().clone(), "apply_rotary_pos_emb"))
        return original(q, k, cos, sin, *a, **k2)

    for i, layer in enumerate(stacks):
        layer.register_forward_pre_hook(lambda m, a, i=i: current.__setitem__(0, i))
    mh.apply_rotary_pos_emb = wrapped
    try:
        with torch.no_grad():
            model(input_ids=(torch.arange(T)[None] + 3) % SMALL["vocab_size"])
    finally:
        mh.apply_rotary_pos_emb = original
    runs = cfg.H_cycles * (cfg.L_cycles + 1)
    t.check(len(stacks) == 4 and cfg.num_hidden_layers == 2 * runs, f"hrm_text: 2 stacks of 2 layers, num_hidden_layers "
            f"saved as {cfg.num_hidden_layers} slots ({runs} per layer index)")
    t.check(all(len(c) >= 2 and all(np.array_equal(x[0], c[0][0]) and np.array_equal(x[1], c[0][1]) for x in c)
                for c in calls.values()) and len(calls) == 4,
            f"hrm_text: each physical layer rotated {[len(calls.get(i, [])) for i in range(4)]} times, always with the "
            f"same cos/sin")
    hf = Layers(calls[i][0] if i in calls else None for i in range(len(stacks)))
    hf.lookups, hf.windows = {}, None
    # compare() reads the one RoPE off layer 0: the H stack's layers must rotate with the same cos/sin
    t.check(all(h is not None and np.array_equal(h[0], hf[0][0]) and np.array_equal(h[1], hf[0][1]) for h in hf),
            "hrm_text: both stacks rotate with one cos/sin (positions 0..)")
    path = os.path.join(d, "hrm_text.json")
    cfg.to_json_file(path)
    rc, so, _ = run("rope", "explain", "--config", path, "--json")
    if rc == 0:
        kinds = [x["kind"] for x in json.loads(so)["layers"]]
        t.check(kinds == ["L_module"] * 2 + ["H_module"] * 2, f"hrm_text: layer kinds {kinds} = L stack, then H stack")
    compare(t, "hrm_text (5.x, inflated num_hidden_layers)", path, hf, d)
    j = json.load(open(path))
    j["num_hidden_layers"] = j.pop("num_layers_per_stack")
    old = os.path.join(d, "hrm_text_per_stack.json")
    json.dump(j, open(old, "w"))
    compare(t, "hrm_text (num_hidden_layers = per-stack count)", old, hf, d)
    compare(t, "hrm_text (per-stack count, 4.x rope_theta)", legacy_form(old, cfg), hf, d)


def dia_layers(d, label, enc_rope, dec_rope):
    """Tiny DiaModel, one forward over T text ids and T frames of 2 audio channels: per layer (encoder's, then the
    decoder's) the (cos, sin) apply_rotary_pos_emb received; the saved config path."""
    import torch
    from transformers import AutoConfig, AutoModel
    from transformers.models.dia import modeling_dia as md
    stack = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, head_dim=16)
    cfg = AutoConfig.for_model("dia", encoder_config=dict(stack, num_key_value_heads=4, num_hidden_layers=2,
                                                          vocab_size=128, rope_parameters=enc_rope),
                               decoder_config=dict(stack, num_key_value_heads=2, num_hidden_layers=3, vocab_size=64,
                                                   cross_num_attention_heads=4, cross_head_dim=16,
                                                   cross_num_key_value_heads=4, cross_hidden_size=64, num_channels=2,
                                                   rope_parameters=dec_rope, pad_token_id=0, eos_token_id=1,
                                                   bos_token_id=2),
                               delay_pattern=[0, 1])
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).eval()
    layers = list(model.encoder.layers) + list(model.decoder.layers)
    seen, current, original = {}, [None], md.apply_rotary_pos_emb

    def wrapped(q, k, cos, sin, *a, **k2):
        seen[current[0]] = (cos.detach().clone(), sin.detach().clone(), "apply_rotary_pos_emb")
        return original(q, k, cos, sin, *a, **k2)

    for i, layer in enumerate(layers):
        layer.register_forward_pre_hook(lambda m, a, i=i: current.__setitem__(0, i))
    md.apply_rotary_pos_emb = wrapped
    try:
        with torch.no_grad():
            model(input_ids=torch.arange(T)[None] + 3, decoder_input_ids=(torch.arange(2 * T).reshape(1, T, 2) + 3) % 64)
    finally:
        md.apply_rotary_pos_emb = original
    hf = Layers(seen.get(i) for i in range(len(layers)))
    hf.lookups, hf.windows = {}, None
    path = os.path.join(d, label.replace(" ", "_") + ".json")
    cfg.to_json_file(path)
    return hf, path


def two_stack_rope(t, d, label, build, rope, stacks, subs, first_decoder):
    """The checks Dia and T5Gemma share: posenc's layer kinds are the encoder's then the decoder's (stacks: their
    layer counts), cos/sin bit for bit in the 5.x form and in the 4.x rope_theta / rope_scaling form of both
    sub-configs (subs: their keys), every layer rotating with the encoder's cos/sin, and a decoder with another
    rope_theta rotating differently in transformers and refused by posenc naming rope_parameters.
    build(label, encoder_rope, decoder_rope) -> (captured layers, saved config path)."""
    hf, path = build(f"{label} {rope['rope_type']}", rope, rope)
    rc, so, _ = run("rope", "explain", "--config", path, "--json")
    if rc == 0:
        kinds = [x["kind"] for x in json.loads(so)["layers"]]
        t.check(kinds == ["encoder"] * stacks[0] + ["decoder"] * stacks[1],
                f"{label}: layer kinds {kinds} = the encoder's {stacks[0]}, the decoder's {stacks[1]}")
    compare(t, f"{label} {rope['rope_type']} (5.x rope_parameters)", path, hf, d)
    # compare() reads each RoPE variant once (off the first encoder layer): the other layers must match it
    t.check(all(h is not None and np.array_equal(h[0], hf[0][0]) and np.array_equal(h[1], hf[0][1]) for h in hf[1:]),
            f"{label}: every layer of both stacks rotates with the encoder's cos/sin (positions 0.. in both)")
    j = json.load(open(path))
    for sub in subs:
        rp = dict(j[sub].pop("rope_parameters"))
        j[sub]["rope_theta"] = rp.pop("rope_theta")
        j[sub]["rope_scaling"] = rp
    old = path[:-5] + "_4x.json"
    json.dump(j, open(old, "w"))
    compare(t, f"{label} {rope['rope_type']} (4.x rope_theta/rope_scaling)", old, hf, d)
    other, path = build(f"{label} two thetas", {"rope_type": "default", "rope_theta": 10000.0},
                        {"rope_type": "default", "rope_theta": 500000.0})
    t.check(other[0] is not None and other[first_decoder] is not None and
            not np.array_equal(other[0][0], other[first_decoder][0]),
            f"{label} with decoder rope_theta 500000, encoder 10000: transformers rotates the stacks differently")
    refused_by_name(t, f"{label} stacks with different rope_parameters", path, "rope_parameters")


def dia(t, d):
    """Dia's two stacks through DiaModel's own forward: the encoder's layers then the decoder's, every self-attention
    rotating (cross-attention none) with its stack's rotary embedding, positions 0.. in each (compared bit for bit,
    kinds encoder / decoder, in the 5.x form and the 4.x rope_theta / rope_scaling form of both sub-configs). A
    decoder_config with another rope_theta rotates differently from the encoder: posenc (one RoPE for both stacks)
    refuses it naming the key."""
    two_stack_rope(t, d, "dia", lambda label, enc, dec: dia_layers(d, label, enc, dec),
                   dict(LLAMA3, rope_theta=50000.0), (2, 3), ("encoder_config", "decoder_config"), 2)
    bare = os.path.join(d, "dia_bare.json")
    with open(bare, "w") as f:
        json.dump({"model_type": "dia"}, f)
    refused_by_name(t, "dia without encoder_config / decoder_config", bare, "encoder_config")


def t5gemma(t, d):
    """T5Gemma's two stacks through T5GemmaModel's own forward: the encoder's layers, then the decoder's, each
    Gemma-2-like (sliding / full by layer_types, the sliding ones with the stack's window: bidirectional in the
    encoder), every self-attention rotating with its stack's rotary embedding at positions 0.. (compared bit for bit,
    and each decoder layer against the encoder's cos/sin; kinds and windows per layer; the 4.x form of both stacks).
    A decoder with another rope_theta is refused naming the key."""
    import torch
    from transformers import AutoConfig, AutoModel
    from transformers.models.t5gemma import modeling_t5gemma as mt

    def build(label, enc_rope, dec_rope):
        stack = dict(hidden_size=64, intermediate_size=128, num_attention_heads=4, num_key_value_heads=2, head_dim=16,
                     vocab_size=128, sliding_window=8, query_pre_attn_scalar=16)
        cfg = AutoConfig.for_model("t5gemma", encoder=dict(stack, num_hidden_layers=3, rope_parameters=enc_rope),
                                   decoder=dict(stack, num_hidden_layers=2, rope_parameters=dec_rope,
                                                layer_types=["full_attention", "sliding_attention"]), vocab_size=128)
        torch.manual_seed(0)
        model = AutoModel.from_config(cfg).eval()
        layers = list(model.encoder.layers) + list(model.decoder.layers)
        seen, current, original = {}, [None], mt.apply_rotary_pos_emb

        def wrapped(q, k, cos, sin, *a, **k2):
            seen[current[0]] = (cos.detach().clone(), sin.detach().clone(), "apply_rotary_pos_emb")
            return original(q, k, cos, sin, *a, **k2)

        for i, layer in enumerate(layers):
            layer.register_forward_pre_hook(lambda m, a, i=i: current.__setitem__(0, i))
        mt.apply_rotary_pos_emb = wrapped
        try:
            with torch.no_grad():
                ids = torch.arange(T)[None] + 3
                model(input_ids=ids, decoder_input_ids=ids)
        finally:
            mt.apply_rotary_pos_emb = original
        hf = Layers(seen.get(i) for i in range(len(layers)))
        hf.lookups, hf.windows = {}, [layer.self_attn.sliding_window for layer in layers]
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        return hf, path

    two_stack_rope(t, d, "t5gemma", build, dict(YARN, rope_theta=50000.0), (3, 2), ("encoder", "decoder"), 3)


def diffusion_gemma_refused(t, d):
    """DiffusionGemma stays refused, for what its own rotary class does: built on a tiny text config (the class's
    built-in rope dicts), it rotates the full_attention layers with rope_type 'proportional', which posenc does not
    implement; posenc must refuse the saved config naming it."""
    from transformers import AutoConfig
    from transformers.models.diffusion_gemma import modeling_diffusion_gemma as md
    cfg = AutoConfig.for_model("diffusion_gemma", text_config=dict(SMALL, num_hidden_layers=2, head_dim=16, sliding_window=8))
    rotary = md.DiffusionGemmaTextRotaryEmbedding(cfg.text_config)
    t.check(rotary.rope_type.get("full_attention") == "proportional",
            f"diffusion_gemma: its rotary class's rope types per layer kind {rotary.rope_type}")
    path = os.path.join(d, "diffusion_gemma.json")
    cfg.to_json_file(path)
    refused_by_name(t, "diffusion_gemma (transformers' own config)", path, "proportional")


def blt_refused(t, d):
    """BLT stays refused, for what its own forward does: the same 24 input bytes split into 6 or 12 patches give its
    global transformer's rotary embedding 6 or 12 positions (the patch index; BltModel's entropy patcher chooses
    patch_lengths from the bytes), so positions depend on the content; posenc must refuse the config naming why."""
    import torch
    from transformers import AutoConfig, AutoModel
    local = dict(hidden_size=32, num_attention_heads=2, hidden_size_global=64, cross_attn_k=2, intermediate_size=64,
                 num_hidden_layers=1)
    cfg = AutoConfig.for_model("blt", patch_in_forward=False, patching_mode="static", encoder_hash_byte_group_vocab=64,
                               encoder_hash_byte_group_size=[3], encoder_config=local, decoder_config=local,
                               global_config=dict(hidden_size=64, num_attention_heads=4, num_hidden_layers=1,
                                                  intermediate_size=128))
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).eval()
    got = []
    model.global_transformer.rotary_emb.register_forward_pre_hook(
        lambda m, a, k2: got.append(k2.get("position_ids", a[1] if len(a) > 1 else None).reshape(-1).tolist()),
        with_kwargs=True)
    ids = torch.arange(T)[None] + 3
    with torch.no_grad():
        for n in (6, 12):
            model(input_ids=ids, patch_lengths=torch.tensor([[T // n] * n]), use_cache=False)
    t.check(got == [list(range(6)), list(range(12))], f"blt: {T} bytes in 6 or 12 patches give the global transformer "
            f"positions {[g[-1] + 1 if g else 0 for g in got]} long (the patch index)")
    path = os.path.join(d, "blt.json")
    cfg.to_json_file(path)
    refused_by_name(t, "blt (transformers' own config)", path, "entropy patcher")


def refused_by_name(t, label, path, name):
    rc, _, se = run("rope", "explain", "--config", path, "--json")
    t.check(rc == 1 and name in se, f"{label}: refused naming '{name}' (exit {rc}: {se.strip()[:160]})")


def rope_types(t, d):
    """Every rope_type transformers 5.18 knows, through a tiny llama: read bit for bit, or refused by name."""
    from transformers.modeling_rope_utils import ROPE_INIT_FUNCTIONS
    names = ["default"] + sorted(ROPE_INIT_FUNCTIONS)
    missing = [n for n in names if n not in ROPE_TYPES]
    t.check(not missing, f"rope types: every one of transformers' {names} has a case here (missing {missing})")
    for name in names:
        if name not in ROPE_TYPES:
            continue
        label = f"rope_type {name}"
        rp = dict(ROPE_TYPES[name], rope_theta=10000.0)
        try:
            hf, path, cfg = hf_layers("llama", dict(num_hidden_layers=2, head_dim=16, rope_parameters=rp), d, label)
        except Exception as e:
            t.check(False, f"{label}: transformers could not build the tiny model: {type(e).__name__}: {e}")
            continue
        rc, _, _ = run("rope", "explain", "--config", path, "--json")
        if rc == 0:
            compare(t, label, path, hf, d)
        else:
            refused_by_name(t, label, path, name)
    # a type no framework knows, in both spellings and inside a per-layer-type dict: refused, never default
    for i, body in enumerate([{"model_type": "llama", "rope_scaling": {"rope_type": NOT_A_ROPE_TYPE, "factor": 2.0}},
                              {"model_type": "llama", "rope_scaling": {"type": NOT_A_ROPE_TYPE, "factor": 2.0}},
                              {"model_type": "gemma3_text", "rope_parameters": {
                                  "sliding_attention": {"rope_type": "default", "rope_theta": 10000.0},
                                  "full_attention": {"rope_type": NOT_A_ROPE_TYPE, "rope_theta": 1e6}}}]):
        path = os.path.join(d, f"unknown_rope_{i}.json")
        with open(path, "w") as f:
            json.dump(body, f)
        refused_by_name(t, f"made-up rope type ({list(body)[1]}, {body['model_type']})", path, NOT_A_ROPE_TYPE)
    # MLA families whose config class defaults are not DeepSeek's 64 / 128: refused without the keys, not guessed
    from transformers import AutoConfig
    for mt in ("glm4_moe_lite", "minicpm3"):
        c = AutoConfig.for_model(mt)
        path = os.path.join(d, f"{mt}_no_dims.json")
        with open(path, "w") as f:
            json.dump({"model_type": mt}, f)
        t.check((c.qk_rope_head_dim, c.qk_nope_head_dim) != (64, 128), f"{mt}: class defaults qk_rope/qk_nope "
                f"{c.qk_rope_head_dim}/{c.qk_nope_head_dim} are not DeepSeek's 64/128")
        refused_by_name(t, f"{mt} without qk_rope_head_dim / qk_nope_head_dim", path, "qk_rope_head_dim")


class Recorder:
    """Checks' interface for one task run in a worker process: the results go back to the parent, which
    prints them in CASES order (the output does not depend on which worker finished first)."""

    def __init__(self):
        self.results = []

    def check(self, ok, message):
        self.results.append((bool(ok), message))
        return ok


def run_case(task):
    """One task in a worker: ("rope_types",) or (label, model_type, kw); its own folder under the test's."""
    d = os.path.join(ROOT_DIR, f"task{task[0]}")
    os.makedirs(d, exist_ok=True)
    r = Recorder()
    start = time.monotonic()
    if task[1] == "rope_types":
        rope_types(r, d)
        return r.results, time.monotonic() - start
    if task[1] in SPECIAL:
        SPECIAL[task[1]](r, d)
        return r.results, time.monotonic() - start
    if task[1] == "composite":
        composite_case(r, d, *COMPOSITES[task[2]])  # by index: the inputs functions are not picklable
        return r.results, time.monotonic() - start
    _, label, model_type, kw = task
    try:
        hf, path, cfg = hf_layers(model_type, kw, d, label)
    except Exception as e:  # the model could not be built: a failure, never a skip
        r.check(False, f"{label}: transformers could not build the tiny model: {type(e).__name__}: {e}")
        return r.results, time.monotonic() - start
    per_channel = model_type not in PER_PAIR
    compare(r, label + " (5.x rope_parameters)", path, hf, d, per_channel)
    old = (LEGACY_FORMS[model_type](path, cfg, kw) if model_type in LEGACY_FORMS else
           mrope_legacy(path, model_type) if model_type in MROPE else legacy_form(path, cfg))
    if old:
        compare(r, label + " (4.x rope_theta/rope_scaling)", old, hf, d, per_channel)
    return r.results, time.monotonic() - start


# Composite models that insert image / audio features as ordinary tokens of the text model's sequence: the tiny
# composite model (its own tiny vision / audio tower too) runs forward WITH an image (or audio) in the input, and
# what the language model's layers really use (the position ids its rotary_emb gets, the cos/sin each layer
# rotates with) is compared with posenc reading the composite config.json (wrappers[] in config_family.c).
TINY_CLIP = dict(model_type="clip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                 num_attention_heads=2, image_size=8, patch_size=4)  # 2x2 patches (+ CLS)
TINY_SIGLIP = dict(model_type="siglip_vision_model", hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                   num_attention_heads=2, image_size=8, patch_size=4)  # 2x2 patches, no CLS
IMAGE_ID = 5  # the image placeholder token of every composite below (inside the tiny vocabulary)


def text_ids(n_image, lead=2):
    """T ids: `lead` text tokens, n_image image placeholders, then text (ids from 10: clear of IMAGE_ID)."""
    import torch
    ids = (torch.arange(T) + 10) % SMALL["vocab_size"]
    ids[lead: lead + n_image] = IMAGE_ID
    return ids[None]


def image_inputs(cfg, model, key="pixel_values", lead=(1,), **extra):
    """One random image at the vision tower's size (lead: the dims before channels: (1, tiles) for anyres
    models), and as many placeholders as the model's own get_image_features returns rows of the text
    width (so the forward's token/feature check holds)."""
    import torch
    v = cfg.vision_config
    side = v.image_size if isinstance(v.image_size, int) else v.image_size[0]
    pv = torch.randn(*lead, getattr(v, "num_channels", 3), side, side)
    with torch.no_grad():
        owner = next(m for m in model.modules() if hasattr(m, "get_image_features"))
        feats = owner.get_image_features(**{key: pv}, **extra)
    if not torch.is_tensor(feats):  # a ModelOutput (pooler_output: the projected features) or a list per image
        feats = feats.pooler_output if hasattr(feats, "pooler_output") else feats
        feats = torch.cat([f.reshape(-1) for f in feats]) if isinstance(feats, (list, tuple)) else feats
    n = feats.numel() // cfg.text_config.hidden_size
    return {"input_ids": text_ids(n), key: pv, **extra}


def anyres_inputs(cfg, model):
    """LLaVA-NeXT's anyres: the base image and one tile (image_grid_pinpoints [[8, 8]]), image_sizes given."""
    import torch
    return image_inputs(cfg, model, lead=(1, 2), image_sizes=torch.tensor([[8, 8]]))


def sized_inputs(cfg, model):
    import torch
    side = cfg.vision_config.image_size
    return image_inputs(cfg, model, image_sizes=torch.tensor([[side, side]]))


def tiled_inputs(cfg, model):
    """Idefics3 / SmolVLM: pixel_values [batch, images, C, H, W]."""
    return image_inputs(cfg, model, lead=(1, 1))


def grid_inputs(cfg, model):
    """Qwen2.5-VL-style patches (EXAONE 4.5): one 4x4-patch image, flattened patches and image_grid_thw; the
    spatial merge (2x2) leaves 4 image tokens in the text sequence."""
    import torch
    v = cfg.vision_config
    pv = torch.randn(16, v.in_channels * v.temporal_patch_size * v.patch_size ** 2)
    return {"input_ids": text_ids(16 // v.spatial_merge_size ** 2), "pixel_values": pv,
            "image_grid_thw": torch.tensor([[1, 4, 4]])}


def vq_inputs(cfg, model):
    """Emu3: one 8x8 image through the tiny VQ-VAE; its codes (mapped to BPE ids by vocabulary_map, one end-of-line
    token per row) replace as many placeholders: (8 // factor) * (8 // factor + 1)."""
    import torch
    f = model.vqmodel.vision_spatial_factor
    return {"input_ids": text_ids((8 // f) * (8 // f + 1)), "pixel_values": torch.randn(1, 3, 8, 8),
            "image_sizes": torch.tensor([[8, 8]])}


# (label, model_type, composite config keywords, inputs(cfg, model) -> forward kwargs); text_config gets SMALL
COMPOSITES = [
    ("llava", "llava", dict(text_config=dict(model_type="llama", num_hidden_layers=2, rope_theta=500000.0),
                            vision_config=TINY_CLIP, image_token_id=IMAGE_ID), image_inputs),
    ("vipllava", "vipllava", dict(text_config=dict(model_type="llama", num_hidden_layers=2), vision_config=TINY_CLIP,
                                  vision_feature_layers=[-1, -2], image_token_id=IMAGE_ID), image_inputs),
    ("video_llava", "video_llava", dict(text_config=dict(model_type="llama", num_hidden_layers=2),
                                        vision_config=TINY_CLIP, image_token_id=IMAGE_ID, video_token_id=6),
     lambda cfg, model: image_inputs(cfg, model, "pixel_values_images")),
    ("aya_vision", "aya_vision", dict(text_config=dict(model_type="cohere2", num_hidden_layers=4, sliding_window=8),
                                      vision_config=TINY_SIGLIP, image_token_id=IMAGE_ID), image_inputs),
    ("cohere2_vision", "cohere2_vision", dict(text_config=dict(model_type="cohere2", num_hidden_layers=4, sliding_window=8),
                                              vision_config=TINY_SIGLIP, image_token_id=IMAGE_ID,
                                              alignment_intermediate_size=64), image_inputs),
    ("deepseek_vl", "deepseek_vl", dict(text_config=dict(model_type="llama", num_hidden_layers=2),
                                        vision_config=TINY_SIGLIP, image_token_id=IMAGE_ID), image_inputs),
    ("internvl", "internvl", dict(text_config=dict(model_type="qwen2", num_hidden_layers=2, rope_theta=1e6),
                                  vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                                     num_attention_heads=2, image_size=[8, 8], patch_size=[2, 2]),
                                  image_token_id=IMAGE_ID), image_inputs),
    ("llava_next", "llava_next", dict(text_config=dict(model_type="mistral", num_hidden_layers=2, rope_theta=1e6),
                                      vision_config=TINY_CLIP, image_grid_pinpoints=[[8, 8]], image_token_id=IMAGE_ID),
     anyres_inputs),
    ("llava_next_video", "llava_next_video", dict(text_config=dict(model_type="llama", num_hidden_layers=2),
                                                  vision_config=TINY_CLIP, image_grid_pinpoints=[[8, 8]],
                                                  image_token_id=IMAGE_ID, video_token_id=6), anyres_inputs),
    ("llava_onevision", "llava_onevision", dict(text_config=dict(model_type="qwen2", num_hidden_layers=2, rope_theta=1e6),
                                                vision_config=TINY_SIGLIP, image_grid_pinpoints=[[8, 8]],
                                                image_token_id=IMAGE_ID, video_token_id=6), anyres_inputs),
    ("lighton_ocr", "lighton_ocr", dict(text_config=dict(model_type="qwen3", num_hidden_layers=2, head_dim=16),
                                        vision_config=dict(model_type="pixtral", hidden_size=32, intermediate_size=64,
                                                           num_hidden_layers=2, num_attention_heads=2, head_dim=16,
                                                           image_size=8, patch_size=2),
                                        image_token_id=IMAGE_ID), sized_inputs),
    ("shieldgemma2", "shieldgemma2", dict(text_config=dict(model_type="gemma3_text", num_hidden_layers=6, head_dim=16,
                                                           sliding_window=8),
                                          vision_config=TINY_SIGLIP, mm_tokens_per_image=4, image_token_id=IMAGE_ID,
                                          boi_token_id=7, eoi_token_id=8, yes_token_index=11, no_token_index=12),
     image_inputs),
    ("idefics3", "idefics3", dict(text_config=dict(model_type="llama", num_hidden_layers=2),
                                  vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                                     num_attention_heads=2, image_size=8, patch_size=2),
                                  scale_factor=2, image_token_id=IMAGE_ID), tiled_inputs),
    ("smolvlm", "smolvlm", dict(text_config=dict(model_type="llama", num_hidden_layers=2),
                                vision_config=dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                                                   num_attention_heads=2, image_size=8, patch_size=2),
                                scale_factor=2, image_token_id=IMAGE_ID), tiled_inputs),
    # EXAONE 4.5: exaone4 text model (RoPE in the sliding layers) after a 2D-RoPE vision tower; text positions
    # arange over the merged sequence (Exaone4_5_Model.forward), no M-RoPE
    ("exaone4_5", "exaone4_5", dict(text_config=dict(model_type="exaone4", num_hidden_layers=4, sliding_window=8),
                                    vision_config=dict(depth=2, hidden_size=32, intermediate_size=64, num_heads=2,
                                                       num_key_value_heads=2, patch_size=2, spatial_merge_size=2,
                                                       temporal_patch_size=2, window_size=4, out_hidden_size=64,
                                                       fullatt_block_indexes=[1]),
                                    image_token_id=IMAGE_ID, video_token_id=6), grid_inputs),
    # Emu3: VQ image codes enter as ordinary tokens of its emu3_text_model (llama-like), positions 0..
    ("emu3", "emu3", dict(text_config=dict(num_hidden_layers=2, rope_theta=1e6),
                          vq_config=dict(codebook_size=16, embed_dim=4, latent_channels=4, base_channels=32,
                                         channel_multiplier=[1, 2], num_res_blocks=1, attn_resolutions=[],
                                         hidden_size=64, num_attention_heads=1, temporal_downsample_factor=1),
                          vocabulary_map={"<image>": IMAGE_ID, "<|extra_200|>": 6,
                                          **{f"<|visual token {k:06d}|>": 40 + k for k in range(16)}}), vq_inputs),
    ("got_ocr2", "got_ocr2", dict(text_config=dict(model_type="qwen2", num_hidden_layers=2, rope_theta=1e6),
                                  vision_config=dict(hidden_size=32, output_channels=16, num_hidden_layers=2,
                                                     num_attention_heads=2, image_size=64, patch_size=16,
                                                     global_attn_indexes=[1], window_size=2, mlp_dim=64),
                                  image_token_id=IMAGE_ID), image_inputs),
]


def composite_layers(model_type, kw, inputs, d, label):
    """The tiny composite model, one forward pass with its image / audio: per language-model layer the
    (cos, sin) apply_rotary_pos_emb received, the position ids its rotary_emb got, and the ids run."""
    import torch
    from transformers import AutoConfig, AutoModel
    kw = {k: dict(SMALL, **v) if k == "text_config" else v for k, v in kw.items()}
    cfg = AutoConfig.for_model(model_type, **kw)
    torch.manual_seed(0)
    try:
        model = AutoModel.from_config(cfg).eval()
    except ValueError:  # no AutoModel entry (shieldgemma2): the one class of its modeling file built on its config
        modeling = importlib.import_module(type(cfg).__module__.replace(".configuration_", ".modeling_"))
        found = [c for c in vars(modeling).values() if isinstance(c, type) and getattr(c, "config_class", None) is type(cfg)]
        if len(found) != 1:
            raise
        model = found[0](cfg).eval()
    # the language model: the block stack with a rotary_emb built on the text config (language_model, text_model..)
    lm = [m for m in model.modules() if hasattr(m, "layers") and hasattr(m, "rotary_emb")
          and type(getattr(m, "config", None)) is type(cfg.text_config)]
    if len(lm) != 1:
        raise ValueError(f"{len(lm)} candidate language models in {type(model).__name__}")
    lm = lm[0]
    mod = importlib.import_module(type(lm).__module__)
    seen, current, positions = {}, [None], []
    original = mod.apply_rotary_pos_emb

    def wrapped(q, k, cos, sin, *a, **k2):
        seen[current[0]] = (cos.detach().clone(), sin.detach().clone(), "apply_rotary_pos_emb")
        return original(q, k, cos, sin, *a, **k2)

    for i, layer in enumerate(lm.layers):
        layer.register_forward_pre_hook(lambda m, a, i=i: current.__setitem__(0, i))
    lm.rotary_emb.register_forward_pre_hook(
        lambda m, a, k2: positions.append((k2.get("position_ids", a[1] if len(a) > 1 else None)).detach().clone()),
        with_kwargs=True)
    args = inputs(cfg, model)
    mod.apply_rotary_pos_emb = wrapped
    try:
        with torch.no_grad():
            model(**args)
    finally:
        mod.apply_rotary_pos_emb = original
    path = os.path.join(d, label.replace(" ", "_") + ".json")
    cfg.to_json_file(path)
    out = Layers(seen.get(i) for i in range(len(lm.layers)))
    out.lookups, out.windows = {}, None
    return out, path, positions, args["input_ids"]


def composite_case(t, d, label, model_type, kw, inputs):
    try:
        hf, path, positions, ids = composite_layers(model_type, kw, inputs, d, label)
    except Exception as e:  # a failure, never a skip
        t.check(False, f"{label}: transformers could not run the tiny composite model: {type(e).__name__}: {e}")
        return
    n_image = int((ids == IMAGE_ID).sum())
    t.check(n_image > 0, f"{label}: the run's input holds {n_image} image / audio placeholder tokens of {T}")
    rc, so, se = run("rope", "explain", "--config", path, "--json")
    if not t.check(rc == 0, f"{label}: posenc reads the composite config ({se.strip()[:200]})"):
        return
    start = json.loads(so)["position_start"]
    got = [p.reshape(-1).tolist() for p in positions]
    want = list(range(start, start + T))
    # one rotary_emb call per forward, or one per layer type (Gemma 3): every one with the same ids
    t.check(got and all(g == want for g in got), f"{label}: the language model's position ids "
            f"{got[0][:4] if got else []}.. ({len(got)} rotary_emb calls) = posenc's {start}..{start + T - 1} over the "
            f"merged sequence (image tokens included)")
    compare(t, label, path, hf, d, start=start)
    # without text_config (or its model_type) the config class builds its own default text model: refused
    j = json.load(open(path))
    for what, body in (("no text_config", {k: v for k, v in j.items() if k != "text_config"}),
                       ("text_config without model_type",
                        dict(j, text_config={k: v for k, v in j["text_config"].items() if k != "model_type"}))):
        bare = os.path.join(d, "bare.json")
        with open(bare, "w") as f:
            json.dump(body, f)
        refused_by_name(t, f"{label} {what}", bare, f"a {model_type} config without text_config")


# ViT-style vision encoders: one learned table over [leading tokens, patches] (posenc_model.patch_*). Each tiny model
# runs forward on an image at its config's size with every embedding parameter but the table zeroed, so each token
# of the embeddings' output IS the table row the run added to it (0 + row: exact), or zero where it added none.
TINY_VISION = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
VISION_CASES = [  # (label, model_type, config keys, images in the batch)
    ("vit", "vit", dict(image_size=8, patch_size=4), 1),
    ("vit 3x3", "vit", dict(image_size=12, patch_size=4), 1),
    ("vit floor", "vit", dict(image_size=10, patch_size=4), 1),  # 10 // 4 = 2 patches a side, the rest cut off
    ("vit defaults", "vit", {}, 1),  # ViTConfig's 224 / 16: 196 patches + CLS
    ("deit", "deit", dict(image_size=12, patch_size=4), 1),
    ("vit_msn", "vit_msn", dict(image_size=12, patch_size=4), 1),
    ("ijepa", "ijepa", dict(image_size=12, patch_size=4), 1),
    ("dinov2", "dinov2", dict(image_size=12, patch_size=4), 1),
    ("dinov2_with_registers", "dinov2_with_registers", dict(image_size=12, patch_size=4), 1),
    ("dinov2_with_registers 2", "dinov2_with_registers", dict(image_size=8, patch_size=4, num_register_tokens=2), 1),
    ("clip_vision_model", "clip_vision_model", dict(image_size=12, patch_size=4), 1),
    ("clip_vision_model defaults", "clip_vision_model", {}, 1),  # 224 / 32: 49 patches + CLS
    ("metaclip_2_vision_model", "metaclip_2_vision_model", dict(image_size=12, patch_size=4), 1),
    ("xclip_vision_model", "xclip_vision_model", dict(image_size=12, patch_size=4, num_frames=2), 2),
    ("owlvit_vision_model", "owlvit_vision_model", dict(image_size=12, patch_size=4), 1),
    ("owlv2_vision_model", "owlv2_vision_model", dict(image_size=12, patch_size=4), 1),
    ("siglip_vision_model", "siglip_vision_model", dict(image_size=12, patch_size=4), 1),
    ("chinese_clip_vision_model", "chinese_clip_vision_model", dict(image_size=12, patch_size=4), 1),
    ("git_vision_model", "git_vision_model", dict(image_size=12, patch_size=4), 1),
    ("kosmos_2_vision_model", "kosmos_2_vision_model", dict(image_size=12, patch_size=4), 1),
    ("clipseg_vision_model", "clipseg_vision_model", dict(image_size=12, patch_size=4), 1),
    ("blip_vision_model", "blip_vision_model", dict(image_size=12, patch_size=4), 1),
    ("blip_2_vision_model", "blip_2_vision_model", dict(image_size=12, patch_size=4), 1),
    ("instructblip_vision_model", "instructblip_vision_model", dict(image_size=12, patch_size=4), 1),
    ("instructblipvideo_vision_model", "instructblipvideo_vision_model", dict(image_size=12, patch_size=4), 1),
    ("aimv2_vision_model", "aimv2_vision_model", dict(image_size=12, patch_size=4), 1),
    ("tipsv2_vision_model", "tipsv2_vision_model", dict(image_size=12, patch_size=4), 1),  # CLS, 1 register
]


def vision_model(cfg):
    """The model class of a (sub-)config: AutoModel, else the one *Model class of its modeling file naming it."""
    from transformers import AutoModel
    try:
        return AutoModel.from_config(cfg).eval()
    except ValueError:  # a vision sub-config with no AutoModel entry (xclip_vision_model)
        modeling = importlib.import_module(type(cfg).__module__.replace(".configuration_", ".modeling_"))
        found = [c for c in vars(modeling).values() if isinstance(c, type) and c.__name__.endswith("VisionModel")
                 and getattr(c, "config_class", None) is type(cfg)]
        if len(found) != 1:
            raise
        return found[0](cfg).eval()


def vision_run(model_type, kw, images):
    """(config, table parameter name -> rows, the row each token of image 0 got: an index, or None)."""
    import torch
    from transformers import AutoConfig
    cfg = AutoConfig.for_model(model_type, **TINY_VISION, **kw)
    torch.manual_seed(0)
    model = vision_model(cfg)
    tables = [(n, p) for n, p in model.named_parameters() if "position_embedding" in n]
    assert len(tables) == 1, f"{model_type}: position parameters {[n for n, _ in tables]}"
    name, table = tables[0]
    owner = model.get_submodule(name.rsplit(".", 2 if name.endswith(".weight") else 1)[0])
    with torch.no_grad():
        for n, p in owner.named_parameters():
            if p is not table:
                p.zero_()
        table.copy_(torch.randn(table.shape))
    captured = []
    owner.register_forward_hook(lambda m, a, out: captured.append(out[0] if isinstance(out, tuple) else out))
    size = cfg.image_size
    with torch.no_grad():
        model(pixel_values=torch.randn(images, getattr(cfg, "num_channels", 3), size, size))  # BLIP: RGB, no key
    rows = table.detach().reshape(-1, table.shape[-1]).numpy()
    got = []
    for token in captured[0][0].numpy():
        if not token.any():
            got.append(None)
            continue
        hit = [r for r in range(len(rows)) if np.array_equal(rows[r].view(np.uint32), token.view(np.uint32))]
        got.append(hit[0] if len(hit) == 1 else ("?", len(hit)))
    layers = next((len(m) for _, m in model.named_modules() if isinstance(m, torch.nn.ModuleList)), None)
    others = [n for n, _ in model.named_parameters() if n != name and ("position" in n or "relative" in n)]
    return cfg, name, len(rows), got, layers, others


def vision_patch(t, d):
    """Each type of VISION_CASES: posenc's table (name, rows, the row of every token) = the run's, bit for bit
    (tolerance 0: the output token is 0 + row, an exact float32 sum, matched against the table's rows by bits)."""
    for label, model_type, kw, images in VISION_CASES:
        try:
            cfg, name, n_rows, got, n_layers, others = vision_run(model_type, kw, images)
        except Exception as e:  # the model could not be built or run: a failure, never a skip
            t.check(False, f"{label}: transformers could not run the tiny model: {type(e).__name__}: {e}")
            continue
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        if not kw:  # the class defaults: posenc reads {"model_type": ...} alone with the same sizes
            with open(path, "w") as f:
                json.dump(dict(model_type=model_type, **TINY_VISION), f)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads it ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        t.check(len(layers) == n_layers and all(x["scheme"] == "learned" for x in layers),
                f"{label}: {len(layers)} learned layers, transformers built {n_layers}")
        t.check(not others, f"{label}: the run has no other position parameter ({others})")
        x = layers[0]
        img = x["image"]
        t.check(x["tensor"] == name or x["tensor"].endswith("." + name), f"{label}: table {x['tensor']} is the run's {name}")
        t.check(x["size"] == n_rows and x["offset"] == 0, f"{label}: {x['size']} rows, the run's table {n_rows}")
        lead, plain = img["prefix_rows"], img["prefix_plain"]
        patches = img["grid_height"] * img["grid_width"]
        want = list(range(lead)) + [None] * plain + [lead + p for p in range(patches)]
        t.check(got == want, f"{label}: rows per token {got[:6]}.. ({len(got)} tokens) = posenc's {want[:6]}.. "
                f"({lead} lead, {plain} without a row, {img['grid_height']}x{img['grid_width']} patches)")
    # a size posenc does not read: refused naming the key (ViT accepts a pair; posenc reads square integer sizes)
    path = os.path.join(d, "vit_pair.json")
    with open(path, "w") as f:
        json.dump(dict(model_type="vit", image_size=[8, 12], patch_size=4), f)
    refused_by_name(t, "vit image_size pair", path, "image_size")
    # AIMv2 with is_native builds a 2D sin-cos table per image instead of its learned one: refused naming the key
    path = os.path.join(d, "aimv2_native.json")
    with open(path, "w") as f:
        json.dump(dict(model_type="aimv2_vision_model", is_native=True), f)
    refused_by_name(t, "aimv2_vision_model is_native", path, "is_native")
    # SigLIP 2 resizes its table to every image's own patch grid (Siglip2VisionEmbeddings.resize_positional_embeddings):
    # the stored table's rows are num_patches whatever the image size, so no fixed row per patch exists: refused
    from transformers import AutoConfig
    cfg = AutoConfig.for_model("siglip2_vision_model", **TINY_VISION, patch_size=4)
    model = vision_model(cfg)
    rows = model.get_parameter("vision_model.embeddings.position_embedding.weight" if hasattr(model, "vision_model")
                               else "embeddings.position_embedding.weight").shape[0]
    t.check(rows == cfg.num_patches, f"siglip2_vision_model: its table has num_patches = {rows} rows (no image size)")
    path = os.path.join(d, "siglip2_vision.json")
    cfg.to_json_file(path)
    refused_by_name(t, "siglip2_vision_model", path, "siglip2_vision_model")


# Windowed 2D relative position bias (posenc_model.window_*, posenc.h 5.3c): Swin and its copies, SwinV2, Swin2SR.
# Each tiny model runs forward on an image at its config's size; afterwards every attention module's own
# relative_position_index buffer (and SwinV2 / Swin2SR's relative_coords_table), its bias table's shape (rows x heads,
# or the MLP's heads) and each layer's window and shift as the forward left them are compared with what posenc reads
# from the same config.json: the integers exactly, the float32 coordinates within WINDOW_COORD_ULPS.
TINY_SWIN = dict(embed_dim=16, depths=[2, 2], num_heads=[2, 4], mlp_ratio=2.0)
WINDOW_CASES = [  # (label, model_type, config keys); every family at a window size other than its default
    ("swin", "swin", dict(image_size=16, patch_size=2, window_size=4)),  # stages 8, 4: the last fits one window
    ("swin 3 stages", "swin", dict(image_size=24, patch_size=2, window_size=3, depths=[2, 2, 2], num_heads=[1, 2, 4])),
    # num_heads' 4 defaults for 2 stages: the encoder reads the first two
    ("swin default heads", "swin", dict(image_size=16, patch_size=2, window_size=4, embed_dim=24, num_heads=None)),
    ("swin odd grid", "swin", dict(image_size=18, patch_size=2, window_size=3)),  # 9 -> 5 patches (padded merging)
    ("swin absolute", "swin", dict(image_size=16, patch_size=2, window_size=4, use_absolute_embeddings=True)),
    ("swin defaults", "swin", {}),  # SwinConfig's 224 / 4, window 7, depths 2, 2, 6, 2
    ("donut-swin", "donut-swin", dict(image_size=16, patch_size=2, window_size=4)),
    ("donut-swin pair", "donut-swin", dict(image_size=[24, 16], patch_size=2, window_size=4)),
    ("maskformer-swin", "maskformer-swin", dict(image_size=16, patch_size=2, window_size=3)),
    ("maskformer-swin small stage", "maskformer-swin", dict(image_size=8, patch_size=2, window_size=3)),  # 2 < 3: pads
    ("swinv2", "swinv2", dict(image_size=16, patch_size=2, window_size=4)),
    ("swinv2 clamp", "swinv2", dict(image_size=8, patch_size=2, window_size=3)),  # stage 1: 2 patches, window 2
    ("swinv2 odd grid", "swinv2", dict(image_size=18, patch_size=2, window_size=3)),  # built for 9 // 2 = 4, runs 5
    ("swinv2 pretrained", "swinv2", dict(image_size=32, patch_size=2, window_size=8, pretrained_window_sizes=[6, 4])),
    ("swin2sr", "swin2sr", dict(image_size=8, patch_size=1, window_size=4, num_heads=[2, 2])),
    ("swin2sr 3 stages", "swin2sr", dict(image_size=12, patch_size=1, window_size=6, depths=[2, 2, 2],
                                         num_heads=[2, 2, 2])),
]
# torch's float32 log2 (SLEEF's u10 vectorized, or libm) against posenc's correctly rounded one: at most 1 ULP apart
# in a value, the other steps being the same float32 roundings; measured 0 on this machine's torch 2.13
WINDOW_COORD_ULPS = 1


def posenc_window(fn, *args):
    """posenc's own library function (posenc_window_relative_index_i64, posenc_window_abs_index_i64 or
    posenc_window_log_coords_f32) on these arguments: the index matrix (int64) or the coordinates (float32, [rows, 2]). In a sanitizer build a child
    python with the ASan runtime preloaded calls it (as posenc_query_scale)."""
    from common import BIN, sanitizer_runtime_env
    extra = sanitizer_runtime_env()
    if extra:
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_oracle_hf as o; d = json.load(sys.stdin); "
                "print(json.dumps(o.posenc_window(d[0], *d[1:]).tolist()))")
        child = subprocess.run([sys.executable, "-c", code, HERE], input=json.dumps([fn, *args]), capture_output=True,
                               text=True, env=dict(os.environ, **extra))
        assert child.returncode == 0, f"{fn} in the sanitized child failed: {child.stderr[-400:]}"
        return np.array(json.loads(child.stdout), dtype=np.int64 if fn.endswith("i64") else np.float32)
    lib = ctypes.CDLL(os.environ.get("POSENC_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(BIN)),
                                                                       "libposenc.so"))
    err = ctypes.create_string_buffer(4096)
    if fn == "posenc_window_relative_index_i64":
        h, w, cls = args
        n = h * w + (1 if cls else 0)
        out = np.zeros((n, n), dtype=np.int64)
        rc = lib.posenc_window_relative_index_i64(ctypes.c_int32(h), ctypes.c_int32(w), ctypes.c_int(cls),
                                                  out.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(out.size), err)
    elif fn == "posenc_window_abs_index_i64":
        r, ro, stride = args
        out = np.zeros((ro * ro, r * r), dtype=np.int64)
        rc = lib.posenc_window_abs_index_i64(ctypes.c_int32(r), ctypes.c_int32(ro), ctypes.c_int32(stride),
                                             out.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(out.size), err)
    else:
        h, w, ph, pw = args
        out = np.zeros(((2 * h - 1) * (2 * w - 1), 2), dtype=np.float32)
        rc = lib.posenc_window_log_coords_f32(ctypes.c_int32(h), ctypes.c_int32(w), ctypes.c_int32(ph),
                                              ctypes.c_int32(pw), out.ctypes.data_as(ctypes.c_void_p),
                                              ctypes.c_size_t(out.size), err)
    assert rc == 0, f"{fn}{args} failed ({rc})"
    return out


def window_run(model_type, kw):
    """(config, [per attention layer: index buffer, coords table or None, table (rows, heads), window, shift]) after
    one forward pass at the config's image size."""
    import torch
    from transformers import AutoConfig, AutoModel
    keys = {k: v for k, v in {**(TINY_SWIN if kw else {}), **kw}.items() if v is not None}  # None: the class default
    cfg = AutoConfig.for_model(model_type, **keys)
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).eval()
    size = cfg.image_size if isinstance(cfg.image_size, (list, tuple)) else (cfg.image_size, cfg.image_size)
    with torch.no_grad():
        model(pixel_values=torch.randn(1, cfg.num_channels, *size))
    found = []
    for name, mod in model.named_modules():
        index = getattr(mod, "relative_position_index", None)
        if not isinstance(index, torch.Tensor):
            continue
        layer = model.get_submodule(name.rsplit(".attention", 1)[0])  # the block: its window and shift after forward
        coords = getattr(mod, "relative_coords_table", None)
        if coords is not None:  # SwinV2 / Swin2SR: an MLP gives the rows, its last layer the heads
            table = (coords.shape[1] * coords.shape[2], mod.continuous_position_bias_mlp[-1].out_features)
            pretrained = tuple(int(p) for p in mod.pretrained_window_size)
        else:
            table = tuple(mod.relative_position_bias_table.shape)
            pretrained = None
        ws = mod.window_size if isinstance(mod.window_size, (list, tuple)) else (mod.window_size, mod.window_size)
        found.append(dict(name=name, index=index.detach().numpy().astype(np.int64), table=table,
                          coords=None if coords is None else coords.detach().numpy().reshape(-1, 2),
                          window=tuple(int(x) for x in ws), layer_window=int(layer.window_size),
                          shift=int(layer.shift_size), pretrained=pretrained))
    absolute = getattr(getattr(model, "embeddings", None), "position_embeddings", None)
    return cfg, found, None if absolute is None else tuple(absolute.shape)


def window_relative(t, d):
    """Each case of WINDOW_CASES: per attention layer, posenc's window, shift, table and index = the run's (integers
    exactly; SwinV2's float32 coordinates within WINDOW_COORD_ULPS); configurations transformers cannot run are
    refused by name."""
    worst = 0
    for label, model_type, kw in WINDOW_CASES:
        try:
            cfg, found, absolute = window_run(model_type, kw)
        except Exception as e:  # the model could not be built or run: a failure, never a skip
            t.check(False, f"{label}: transformers could not run the tiny model: {type(e).__name__}: {e}")
            continue
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        if not kw:  # the class defaults: posenc reads {"model_type": ...} alone
            with open(path, "w") as f:
                json.dump(dict(model_type=model_type), f)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads it ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        if not t.check(len(layers) == len(found) and all(x["scheme"] == "window_relative" for x in layers),
                       f"{label}: {len(layers)} window_relative layers, the run has {len(found)} biased attentions"):
            continue
        ok_index = ok_shape = ok_window = ok_coords = True
        for x, hf in zip(layers, found):
            w = x["window"]
            mine = (w["height"], w["width"])
            ok_window &= mine == hf["window"] == (hf["layer_window"],) * 2 and w["shift"] == hf["shift"]
            ok_shape &= (w["table_rows"], w["heads"]) == hf["table"]
            ours = posenc_window("posenc_window_relative_index_i64", w["height"], w["width"], 0)
            ok_index &= np.array_equal(ours.reshape(-1), hf["index"].reshape(-1))
            if hf["coords"] is not None:
                ok_coords &= w["continuous"] and hf["pretrained"] == (w["pretrained_window"],) * 2
                c = posenc_window("posenc_window_log_coords_f32", w["height"], w["width"], w["pretrained_window"],
                                  w["pretrained_window"])
                u = int(f32_ulps(c, hf["coords"]).max()) if c.shape == hf["coords"].shape else 1 << 30
                worst = max(worst, u)
                ok_coords &= u <= WINDOW_COORD_ULPS
            else:
                ok_coords &= not w["continuous"]
        t.check(ok_window, f"{label}: every layer's window and shift = the run's "
                f"({[(x['window']['height'], x['window']['shift']) for x in layers]})")
        t.check(ok_shape, f"{label}: every table (rows x heads) = the run's {[hf['table'] for hf in found][:4]}..")
        t.check(ok_index, f"{label}: every relative_position_index buffer = posenc_window_relative_index_i64, exactly")
        t.check(ok_coords, f"{label}: " + (f"coordinates tables within {WINDOW_COORD_ULPS} ULP (pretrained "
                f"{[hf['pretrained'] for hf in found][:2]})" if found[0]["coords"] is not None else
                "a stored table, no coordinates: posenc says not continuous"))
        want_abs = layers[0]["window"]["absolute"]
        t.check(want_abs == (absolute is not None) and (absolute is None or (
            layers[0]["size"] == absolute[1] and layers[0]["tensor"].endswith("embeddings.position_embeddings"))),
            f"{label}: absolute table {absolute} = posenc's {layers[0].get('size') if want_abs else None}")
    t.check(worst <= WINDOW_COORD_ULPS, f"swinv2 / swin2sr coordinates: worst {worst} ULP (tolerance "
            f"{WINDOW_COORD_ULPS})")
    # what transformers cannot run: posenc refuses naming the key
    refusals = [("swin stage under the window", "swin", dict(image_size=8, patch_size=2, window_size=3), "window_size"),
                ("donut-swin stage under the window", "donut-swin", dict(image_size=8, patch_size=2, window_size=3),
                 "window_size"),
                ("swin2sr image under the window", "swin2sr", dict(image_size=6, patch_size=1, window_size=8),
                 "window_size"),
                ("swin2sr image not whole windows", "swin2sr", dict(image_size=10, patch_size=1, window_size=4),
                 "window_size"),
                ("swinv2 pretrained list too short", "swinv2", dict(image_size=16, patch_size=2, window_size=4,
                                                                   pretrained_window_sizes=[4]), "pretrained_window_sizes")]
    refusals += [(f"{mt} use_absolute_embeddings", mt, dict(image_size=16, patch_size=2, window_size=4,
                                                            use_absolute_embeddings=True), "use_absolute_embeddings")
                 for mt in ("donut-swin", "maskformer-swin", "swinv2", "swin2sr")]
    for label, model_type, kw, key in refusals:
        if model_type == "swin2sr":
            kw = dict(kw, patch_size=1, num_heads=[2, 2])
        try:
            window_run(model_type, kw)
            t.check(False, f"{label}: transformers ran it, posenc refuses it")
            continue
        except Exception as e:  # the framework's own failure: what posenc's refusal stands for
            t.check(True, f"{label}: transformers fails ({type(e).__name__})")
        from transformers import AutoConfig
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        AutoConfig.for_model(model_type, **{**TINY_SWIN, **kw}).to_json_file(path)
        refused_by_name(t, label, path, key)
    # a pretrained window of 1 runs, on coordinates divided by zero (inf / nan into the MLP): refused by name
    cfg, found, _ = window_run("swinv2", dict(image_size=16, patch_size=2, window_size=4, pretrained_window_sizes=[1, 0]))
    t.check(not np.isfinite(found[0]["coords"]).all(), "swinv2 pretrained window 1: the run's coordinates are not finite")
    path = os.path.join(d, "swinv2_pretrained_1.json")
    cfg.to_json_file(path)
    refused_by_name(t, "swinv2 pretrained window 1", path, "pretrained_window_sizes")


# BEiT and Data2Vec-Vision: one window over the whole patch grid plus the CLS token. The index is made in the forward
# (generate_relative_position_index, a static method): each call during one forward pass at the config's image size is
# recorded with its table's shape, and compared with posenc's index (cls = 1) and table rows; the absolute table's rows
# too. The defaults use no position at all (every use_* flag false): posenc lists NoPE layers.
TINY_BEIT = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2)
BEIT_CASES = [  # (label, model_type, config keys)
    ("beit relative", "beit", dict(image_size=32, patch_size=8, use_relative_position_bias=True)),
    ("beit shared", "beit", dict(image_size=24, patch_size=8, use_shared_relative_position_bias=True)),
    ("beit all", "beit", dict(image_size=32, patch_size=8, use_relative_position_bias=True,
                              use_shared_relative_position_bias=True, use_absolute_position_embeddings=True)),
    ("beit pair", "beit", dict(image_size=[32, 48], patch_size=8, use_relative_position_bias=True)),
    ("beit absolute", "beit", dict(image_size=32, patch_size=8, use_absolute_position_embeddings=True)),
    ("beit none", "beit", dict(image_size=32, patch_size=8)),
    ("data2vec-vision relative", "data2vec-vision", dict(image_size=32, patch_size=8, use_relative_position_bias=True)),
    ("data2vec-vision shared", "data2vec-vision", dict(image_size=32, patch_size=4,
                                                       use_shared_relative_position_bias=True,
                                                       use_absolute_position_embeddings=True)),
]


def beit_run(model_type, kw):
    """(config, the index of every generate_relative_position_index call, (module id, table shape) of every bias
    module call, the absolute table's shape or None, number of layers)."""
    import torch
    from transformers import AutoConfig, AutoModel
    cfg = AutoConfig.for_model(model_type, **TINY_BEIT, **kw)
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).eval()
    biases = [m for m in model.modules() if hasattr(type(m), "generate_relative_position_index")]
    calls = []
    classes = {type(m) for m in biases}
    saved = {c: c.__dict__["generate_relative_position_index"] for c in classes}
    for c in classes:
        def recording(window_size, _f=saved[c].__func__):
            out = _f(window_size)
            calls.append(out.detach().numpy().astype(np.int64))
            return out
        c.generate_relative_position_index = staticmethod(recording)
    tables = []
    for m in biases:
        m.register_forward_pre_hook(lambda mod, a, k: tables.append((id(mod), tuple(
            mod.relative_position_bias_table.shape))), with_kwargs=True)
    size = cfg.image_size if isinstance(cfg.image_size, (list, tuple)) else (cfg.image_size, cfg.image_size)
    try:
        with torch.no_grad():
            model(pixel_values=torch.randn(1, cfg.num_channels, *size))
    finally:
        for c in classes:
            c.generate_relative_position_index = saved[c]
    absolute = model.embeddings.position_embeddings
    n_layers = next(len(m) for _, m in model.named_modules() if isinstance(m, torch.nn.ModuleList))
    return cfg, calls, tables, None if absolute is None else tuple(absolute.shape), n_layers


def beit_window(t, d):
    """Each case of BEIT_CASES: every index the forward generated = posenc_window_relative_index_i64(grid, cls),
    exactly; its table's rows and heads = posenc's; one call per layer (use_relative_position_bias) plus one
    (use_shared_relative_position_bias); the absolute table's rows = posenc's."""
    for label, model_type, kw in BEIT_CASES:
        try:
            cfg, calls, tables, absolute, n_layers = beit_run(model_type, kw)
        except Exception as e:  # the model could not be built or run: a failure, never a skip
            t.check(False, f"{label}: transformers could not run the tiny model: {type(e).__name__}: {e}")
            continue
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads it ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        schemes = {x["scheme"] for x in layers}
        t.check(len(layers) == n_layers, f"{label}: {len(layers)} layers, the run has {n_layers}")
        if not calls:
            want = "learned" if absolute else "nope"
            t.check(schemes == {want}, f"{label}: no relative bias in the run: posenc's layers {schemes} = {want}")
        else:
            if not t.check(schemes == {"window_relative"}, f"{label}: window_relative layers ({schemes})"):
                continue
            w = layers[0]["window"]
            per_layer, shared = w["per_layer"], w["shared"]
            owners = len({owner for owner, _ in tables})
            t.check(owners == n_layers * per_layer + shared,
                    f"{label}: {owners} bias tables used in the forward = posenc's {n_layers} layers x {int(per_layer)} "
                    f"+ {int(shared)} shared")
            ours = posenc_window("posenc_window_relative_index_i64", w["height"], w["width"], 1)
            t.check(len(calls) > 0 and all(np.array_equal(ours, idx) for idx in calls),
                    f"{label}: every index the forward made = posenc's {w['height']}x{w['width']} + CLS, exactly")
            t.check(all(shape == (w["table_rows"], w["heads"]) for _, shape in tables),
                    f"{label}: tables {sorted({s for _, s in tables})} = posenc's ({w['table_rows']}, {w['heads']})")
        if absolute:
            x = layers[0]
            t.check(x.get("size") == absolute[1] and x.get("image", {}).get("prefix_rows") == 1,
                    f"{label}: absolute table of {absolute[1]} rows (CLS + patches) = posenc's {x.get('size')}")
        else:
            t.check(layers[0]["scheme"] != "learned" and not layers[0].get("window", {}).get("absolute"),
                    f"{label}: no absolute table, posenc none")
    # BEiT divides by patch_size as one integer: a pair is refused by name
    path = os.path.join(d, "beit_patch_pair.json")
    with open(path, "w") as f:
        json.dump(dict(model_type="beit", patch_size=[8, 8], use_relative_position_bias=True), f)
    refused_by_name(t, "beit patch_size pair", path, "patch_size")


# LeViT: attention over the whole patch grid with a bias row per (|dy|, |dx|), and subsample attentions (queries on
# every stride-th patch) between stages. Each module's own attention_bias_idxs buffer and attention_biases shape after
# one forward pass = posenc's index (posenc_window_abs_index_i64) and table, exactly.
TINY_LEVIT = dict(image_size=64, patch_size=16, hidden_sizes=[16, 32, 48], num_attention_heads=[2, 2, 2],
                  depths=[1, 2, 1], key_dim=[4, 4, 4])
LEVIT_CASES = [
    ("levit", TINY_LEVIT),  # 4 x 4 patches, subsampled to 2 x 2, then 1 x 1
    ("levit 8x8", dict(TINY_LEVIT, image_size=128)),
    ("levit down_ops", dict(TINY_LEVIT, image_size=128, down_ops=[["Subsample", 4, 3, 4, 2, 3],
                                                                   ["Subsample", 4, 5, 4, 2, 2]])),  # stride 3: 8 -> 3
    ("levit defaults", {}),  # LevitConfig's 224 / 16: 14 x 14, depths 4, 4, 4
]


def levit(t, d):
    """Each case of LEVIT_CASES: per attention module, posenc's index and table = the run's (exact); an image size
    whose convolutions give another grid than image_size // patch_size is refused by name."""
    import torch
    from transformers import AutoConfig, AutoModel
    for label, kw in LEVIT_CASES:
        try:
            cfg = AutoConfig.for_model("levit", **kw)
            path = os.path.join(d, label.replace(" ", "_") + ".json")
            cfg.to_json_file(path)  # before the model appends [""] to down_ops
            torch.manual_seed(0)
            model = AutoModel.from_config(cfg).eval()
            with torch.no_grad():
                model(pixel_values=torch.randn(1, cfg.num_channels, cfg.image_size, cfg.image_size))
            found = [(n, m.attention_bias_idxs.numpy().astype(np.int64), tuple(m.attention_biases.shape))
                     for n, m in model.named_modules() if isinstance(getattr(m, "attention_bias_idxs", None),
                                                                     torch.Tensor)]
        except Exception as e:  # the model could not be built or run: a failure, never a skip
            t.check(False, f"{label}: transformers could not run the tiny model: {type(e).__name__}: {e}")
            continue
        if not kw:
            with open(path, "w") as f:
                json.dump(dict(model_type="levit"), f)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads it ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        if not t.check(len(layers) == len(found) and all(x["scheme"] == "window_relative" for x in layers),
                       f"{label}: {len(layers)} window_relative layers, the run has {len(found)} biased attentions"):
            continue
        ok_index, ok_table = True, True
        for x, (name, idx, shape) in zip(layers, found):
            w = x["window"]
            stride = w["query_stride"] or 1
            ours = posenc_window("posenc_window_abs_index_i64", w["height"], (w["height"] - 1) // stride + 1, stride)
            ok_index &= ours.shape == idx.shape and np.array_equal(ours, idx) and w["abs_offsets"]
            ok_table &= shape == (w["heads"], w["table_rows"]) and (x["kind"] == "subsample_attention") == (
                "Subsample" in type(model.get_submodule(name)).__name__)
        t.check(ok_index, f"{label}: every attention_bias_idxs buffer = posenc_window_abs_index_i64, exactly "
                f"({[(x['window']['height'], x['window']['query_stride']) for x in layers]})")
        t.check(ok_table, f"{label}: every attention_biases (heads x rows) and layer kind = posenc's "
                f"{[s for _, _, s in found]}")
    # 72 pixels: the stride-2 convolutions give 5 x 5 patches, the layers are built for 72 // 16 = 4: the run fails
    cfg = AutoConfig.for_model("levit", **dict(TINY_LEVIT, image_size=72))
    path = os.path.join(d, "levit_72.json")
    cfg.to_json_file(path)
    try:
        with torch.no_grad():
            AutoModel.from_config(cfg).eval()(pixel_values=torch.randn(1, 3, 72, 72))
        t.check(False, "levit image_size 72: transformers ran it, posenc refuses it")
    except Exception as e:
        t.check(True, f"levit image_size 72: transformers fails ({type(e).__name__})")
    refused_by_name(t, "levit image_size 72", path, "image_size")


# wav2vec2-style speech encoders (FAMILY_CONV_POSITION): the only position information is a learned convolution of the
# features added to the encoder's input. Each tiny model runs forward on random audio with hooks on its pos_conv_embed
# (input X, output P) and on its first encoder layer (its input); then posenc's description (kernel, groups, padding,
# frames dropped, stride, norm, conv layers) is run with torch's functional ops on the module's own weights over the
# captured X and must give P bit for bit, and X + P (the encoder's LayerNorm applied unless do_stable_layer_norm; SEW:
# pooled X) must be the first layer's input bit for bit (tolerance 0: the same float32 ops in the same order).
TINY_SPEECH = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                   conv_dim=(32, 32), conv_stride=(5, 2), conv_kernel=(10, 3))
CONV_CASES = [  # (label, model_type, config keys)
    ("wav2vec2 even", "wav2vec2", dict(num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2)),
    ("wav2vec2 odd", "wav2vec2", dict(num_conv_pos_embeddings=5, num_conv_pos_embedding_groups=4)),
    ("wav2vec2 stable relu", "wav2vec2", dict(num_conv_pos_embeddings=3, num_conv_pos_embedding_groups=1,
                                              do_stable_layer_norm=True, feat_extract_activation="relu")),
    ("wav2vec2 defaults", "wav2vec2", {}),  # 128 taps (longer than the 39 frames), 16 groups
    ("hubert", "hubert", dict(num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2)),
    ("hubert batch norm", "hubert", dict(num_conv_pos_embeddings=5, num_conv_pos_embedding_groups=8,
                                         conv_pos_batch_norm=True)),
    ("unispeech", "unispeech", dict(num_conv_pos_embeddings=6, num_conv_pos_embedding_groups=4)),
    ("unispeech-sat stable", "unispeech-sat", dict(num_conv_pos_embeddings=3, num_conv_pos_embedding_groups=2,
                                                   do_stable_layer_norm=True)),
    ("data2vec-audio", "data2vec-audio", dict(num_conv_pos_embeddings=3, conv_pos_kernel_size=4,
                                              num_conv_pos_embedding_groups=2)),
    ("data2vec-audio odd", "data2vec-audio", dict(num_conv_pos_embeddings=2, conv_pos_kernel_size=5,
                                                  num_conv_pos_embedding_groups=8)),
    ("data2vec-audio defaults", "data2vec-audio", {}),  # 5 layers of 19 taps
    ("sew", "sew", dict(num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2, squeeze_factor=2)),
    ("sew odd 3", "sew", dict(num_conv_pos_embeddings=5, num_conv_pos_embedding_groups=4, squeeze_factor=3)),
    ("wavlm", "wavlm", dict(num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2)),  # its buckets: wavlm_buckets
    ("wavlm stable odd", "wavlm", dict(num_conv_pos_embeddings=5, num_conv_pos_embedding_groups=4,
                                       do_stable_layer_norm=True)),
]


def conv_position_run(model_type, kw):
    """(config, model, X, P, the first layer's input) of one forward pass; BatchNorm statistics made non-trivial."""
    import torch
    from transformers import AutoConfig, AutoModel
    cfg = AutoConfig.for_model(model_type, **TINY_SPEECH, **kw)
    torch.manual_seed(0)
    model = AutoModel.from_config(cfg).eval()
    enc = model.encoder
    with torch.no_grad():
        for m in enc.pos_conv_embed.modules():
            if isinstance(m, torch.nn.BatchNorm1d):  # eval mode reads the running statistics: not 0 / 1
                m.running_mean.copy_(torch.randn(m.running_mean.shape))
                m.running_var.copy_(torch.rand(m.running_var.shape) + 0.5)
                m.weight.copy_(torch.randn(m.weight.shape))
                m.bias.copy_(torch.randn(m.bias.shape))
    got = {}
    enc.pos_conv_embed.register_forward_hook(lambda m, a, out: got.update(x=a[0].clone(), p=out.clone()))
    enc.layers[0].register_forward_pre_hook(lambda m, a, k: got.update(layer0=(a[0] if a else k["hidden_states"])
                                                                          .clone()), with_kwargs=True)
    with torch.no_grad():
        model(input_values=torch.randn(1, 400))
    return cfg, model, got


def conv_position_replay(x, layer, conv, norm, activation, torch):
    """posenc's description of one conv layer, run with torch's functional ops on the module's own tensors."""
    import torch.nn.functional as F
    from transformers.activations import ACT2FN
    if norm == "batch":
        bn = layer.batch_norm
        x = F.batch_norm(x, bn.running_mean, bn.running_var, bn.weight, bn.bias, False, 0.0, bn.eps)
    y = F.conv1d(x, layer.conv.weight, layer.conv.bias, stride=conv["stride"], padding=conv["padding"],
                 groups=conv["groups"])
    if conv["trim"]:
        y = y[:, :, :-conv["trim"]]
    if norm == "layer":
        y = F.layer_norm(y.transpose(1, 2), (y.shape[1],), None, None, layer.layer_norm.eps).transpose(1, 2)
    return ACT2FN[activation](y)


def conv_position(t, d):
    """Each case of CONV_CASES: what posenc reads (every layer conv_position; kernel, groups, padding, trim, stride,
    norm, layers) is the module transformers built, and replaying it reproduces the run's P and first-layer input."""
    import torch
    for label, model_type, kw in CONV_CASES:
        try:
            cfg, model, got = conv_position_run(model_type, kw)
        except Exception as e:  # the model could not be built or run: a failure, never a skip
            t.check(False, f"{label}: transformers could not run the tiny model: {type(e).__name__}: {e}")
            continue
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        if not kw:  # the class defaults: posenc reads the type with the tiny sizes alone
            with open(path, "w") as f:
                json.dump(dict(model_type=model_type, hidden_size=32, num_hidden_layers=2, num_attention_heads=2), f)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads it ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        enc = model.encoder
        t.check(len(layers) == len(enc.layers) and all(x["scheme"] == "conv_position" for x in layers),
                f"{label}: {len(layers)} conv_position layers, transformers built {len(enc.layers)}")
        conv = layers[0]["conv"]
        pce = enc.pos_conv_embed
        convs = [m for m in pce.modules() if isinstance(m, torch.nn.Conv1d)]
        c0 = convs[0]
        t.check(len(convs) == conv["layers"],
                f"{label}: {len(convs)} Conv1d in pos_conv_embed, posenc {conv['layers']}")
        t.check(all((c.kernel_size[0], c.groups, c.padding[0], c.stride[0]) == (conv["kernel"], conv["groups"],
                                                                             conv["padding"], conv["stride"])
                    for c in convs), f"{label}: conv kernel/groups/padding/stride {c0.kernel_size[0]}/{c0.groups}/"
                f"{c0.padding[0]}/{c0.stride[0]} = posenc's {conv['kernel']}/{conv['groups']}/{conv['padding']}/"
                f"{conv['stride']}")
        weight_norm = all(torch.nn.utils.parametrize.is_parametrized(c, "weight") for c in convs)
        batch = any(isinstance(m, torch.nn.BatchNorm1d) for m in pce.modules())
        layer_norm = any(isinstance(m, torch.nn.LayerNorm) for m in pce.modules())
        built = "batch" if batch else "layer" if layer_norm else "weight" if weight_norm else "none"
        t.check(built == conv["norm"] and not (weight_norm and (batch or layer_norm)),
                f"{label}: norm {built} (weight-normed {weight_norm}), posenc {conv['norm']}")
        t.check(conv["activation"] == cfg.feat_extract_activation, f"{label}: activation {conv['activation']}")
        prefix = model_type.replace("-", "_") + ".encoder.pos_conv_embed"
        t.check(layers[0]["conv"]["tensor"] == prefix and any(n.startswith("encoder.pos_conv_embed.conv")
                                                              or n.startswith("encoder.pos_conv_embed.layers.0.conv")
                                                              for n, _ in model.named_parameters()),
                f"{label}: module {conv['tensor']}")
        others = [n for n, _ in model.named_parameters() if ("pos" in n or "relative" in n or "rel_" in n)
                  and not n.startswith("encoder.pos_conv_embed.")
                  and not ("relative_bias" in layers[0] and ("rel_attn_embed" in n or "gru_rel_pos" in n))]
        t.check(not others, f"{label}: no other position parameter ({others})")
        # replay: posenc's numbers, the module's weights, torch's functional ops
        x = got["x"] if model_type == "sew" else got["x"].transpose(1, 2)  # SEW's encoder passes [B, H, T]
        with torch.no_grad():
            subs = list(pce.layers) if hasattr(pce, "layers") else [pce]
            y = x
            for sub in subs:
                y = conv_position_replay(y, sub, conv, conv["norm"], conv["activation"], torch)
            p = got["p"] if model_type == "sew" else got["p"].transpose(1, 2)
            t.check(y.shape == p.shape and torch.equal(y, p), f"{label}: posenc's conv replayed = the run's "
                    f"positions {tuple(y.shape)} vs {tuple(p.shape)} (0 ulp)")
            if model_type == "sew":  # SEWEncoder: AvgPool1d(s, s) of X, the shorter length of the two
                pooled = torch.nn.functional.avg_pool1d(x, conv["stride"], conv["stride"])
                n = min(pooled.shape[-1], y.shape[-1])
                summed = (pooled[..., :n] + y[..., :n]).transpose(1, 2)
            else:
                summed = (x + y).transpose(1, 2)
            stable = "StableLayerNorm" in type(enc).__name__
            want = summed if stable else enc.layer_norm(summed)
            t.check(want.shape == got["layer0"].shape and torch.equal(want, got["layer0"]),
                    f"{label}: X + P{'' if stable else ' (then the encoder LayerNorm)'} is layer 0's input (0 ulp)")
    # hidden_size not a multiple of the groups: torch's Conv1d refuses to build it, posenc names the key
    from transformers import AutoConfig, AutoModel
    cfg = AutoConfig.for_model("wav2vec2", **TINY_SPEECH, num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=3)
    try:
        AutoModel.from_config(cfg)
        built = True
    except ValueError:
        built = False
    t.check(not built, "wav2vec2 hidden 32, 3 groups: transformers cannot build it")
    path = os.path.join(d, "wav2vec2_groups.json")
    cfg.to_json_file(path)
    refused_by_name(t, "wav2vec2 hidden 32, 3 groups", path, "num_conv_pos_embedding_groups")


# posenc_wavlm_bucket_matrix_i64 through ctypes (the library beside the CLI; a sanitizer build: a child python with the
# ASan runtime preloaded calls it, as posenc_query_scale does)
class _T5Params(ctypes.Structure):
    _fields_ = [("num_buckets", ctypes.c_int32), ("max_distance", ctypes.c_int32), ("bidirectional", ctypes.c_int32)]


def posenc_wavlm_buckets(num_buckets, max_distance, query_len, key_len):
    """posenc's [query_len, key_len] WavLM buckets of r = key - query (int64)."""
    from common import BIN, sanitizer_runtime_env
    extra = sanitizer_runtime_env()
    if extra:
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_oracle_hf as o; "
                "print(json.dumps(o.posenc_wavlm_buckets(*json.loads(sys.argv[2])).tolist()))")
        child = subprocess.run([sys.executable, "-c", code, HERE, json.dumps([num_buckets, max_distance, query_len,
                                                                                key_len])],
                               capture_output=True, text=True, env=dict(os.environ, **extra))
        assert child.returncode == 0, f"posenc_wavlm_bucket_matrix_i64 in the sanitized child: {child.stderr[-400:]}"
        return np.array(json.loads(child.stdout), dtype=np.int64)
    lib = ctypes.CDLL(os.environ.get("POSENC_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(BIN)),
                                                                       "libposenc.so"))
    f = lib.posenc_wavlm_bucket_matrix_i64
    f.restype = ctypes.c_int
    out = np.zeros((query_len, key_len), dtype=np.int64)
    err = ctypes.create_string_buffer(4096)
    p = _T5Params(num_buckets, max_distance, 1)
    rc = f(ctypes.byref(p), ctypes.c_int64(query_len), ctypes.c_int64(key_len), out.ctypes.data_as(ctypes.c_void_p),
           ctypes.c_size_t(out.size), err)
    assert rc == 0, f"posenc_wavlm_bucket_matrix_i64 failed ({rc})"
    return out


# WavLM: the convolution as CONV_CASES checks it, plus its gated bucket bias. (label, config keys, grid side, line)
WAVLM_CASES = [
    ("wavlm defaults", {}, 1200, 0),  # 320 buckets, 800: a [1200, 1200] grid passes every bucket
    ("wavlm 64 / 100 stable", dict(num_buckets=64, max_bucket_distance=100, do_stable_layer_norm=True), 300, 0),
    # 1000 / 100000: at r = +-11568, +-54928 transformers' bucket is T5's + 1; lines r = 0..60000 and 0..-60000
    ("wavlm 1000 / 100000", dict(num_buckets=1000, max_bucket_distance=100000), 200, 60001),
]


def wavlm_buckets(t, d):
    """posenc's WavLM buckets = the model's own _relative_positions_bucket bit for bit (a [G, G] grid built as
    compute_bias builds it, and long lines), the bias the forward pass computed = rel_attn_embed rows at posenc's
    buckets (exact: a gather), only layer 0 owns the table, every layer gates it; odd num_buckets refused by name."""
    import torch
    from transformers import AutoConfig, AutoModel
    from transformers.models.t5.modeling_t5 import T5Attention
    for label, kw, side, line in WAVLM_CASES:
        cfg = AutoConfig.for_model("wavlm", **TINY_SPEECH, num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2,
                                   **kw)
        torch.manual_seed(0)
        model = AutoModel.from_config(cfg).eval()
        attns = [layer.attention for layer in model.encoder.layers]
        cls = type(attns[0])
        original, seen = cls.compute_bias, []

        def recording(self, q, k, _orig=original, _seen=seen):
            out = _orig(self, q, k)
            _seen.append((self, q, k, out.clone()))
            return out
        cls.compute_bias = recording
        try:
            with torch.no_grad():
                model(input_values=torch.randn(1, 400))
        finally:
            cls.compute_bias = original
        path = os.path.join(d, label.replace(" ", "_").replace("/", "") + ".json")
        cfg.to_json_file(path)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads it ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        rel = [x.get("relative_bias") for x in layers]
        owners = [i for i, a in enumerate(attns) if getattr(a, "rel_attn_embed", None) is not None]
        t.check(all(r and (r["num_buckets"], r["max_distance"]) == (cfg.num_buckets, cfg.max_bucket_distance)
                    for r in rel), f"{label}: every layer's buckets ({rel[0] and rel[0]['num_buckets']}, "
                f"{rel[0] and rel[0]['max_distance']}) = the config class's ({cfg.num_buckets}, "
                f"{cfg.max_bucket_distance})")
        t.check(owners == [i for i, r in enumerate(rel) if r and r["own_table"]] == [0],
                f"{label}: the layers owning rel_attn_embed {owners} = posenc's own_table layers")
        t.check(all(r and r["gated"] for r in rel) and all(hasattr(a, "gru_rel_pos_linear") for a in attns),
                f"{label}: every layer gates the bias (gru_rel_pos_linear), posenc says gated")
        t.check(rel[0]["tensor"] == "wavlm." + [n for n, _ in model.named_parameters() if "rel_attn_embed" in n][0],
                f"{label}: table {rel[0]['tensor']}")
        # the forward pass: one compute_bias (layer 0's) of [heads, T, T] = the table's rows at posenc's buckets
        t.check(len(seen) == 1 and seen[0][0] is attns[0], f"{label}: compute_bias ran {len(seen)} time(s), "
                f"in layer 0")
        if seen:
            _, q, k, bias = seen[0]
            got = posenc_wavlm_buckets(cfg.num_buckets, cfg.max_bucket_distance, q, k)
            want = attns[0].rel_attn_embed.weight.detach()[torch.from_numpy(got)].permute(2, 0, 1)
            t.check(torch.equal(want, bias), f"{label}: the run's bias [{bias.shape[0]}, {q}, {k}] = rel_attn_embed "
                    f"rows at posenc's buckets (0 ulp)")
        # the model's own function on a [side, side] grid, as compute_bias forms it
        ctx = torch.arange(side, dtype=torch.long)[:, None]
        mem = torch.arange(side, dtype=torch.long)[None, :]
        hf = attns[0]._relative_positions_bucket(mem - ctx).numpy()
        mine = posenc_wavlm_buckets(cfg.num_buckets, cfg.max_bucket_distance, side, side)
        t.check(np.array_equal(hf, mine), f"{label}: [{side}, {side}] grid of buckets bit for bit "
                f"({int((hf != mine).sum())} differ; buckets {int(hf.min())}..{int(hf.max())})")
        if line:  # r = 0..line-1 (one query, many keys) and 0..-(line-1) (many queries, one key)
            diffs_t5 = 0
            for q, k in ((1, line), (line, 1)):
                r = torch.arange(k)[None, :] - torch.arange(q)[:, None]
                hf = attns[0]._relative_positions_bucket(r.clone()).numpy()
                mine = posenc_wavlm_buckets(cfg.num_buckets, cfg.max_bucket_distance, q, k)
                t5 = T5Attention._relative_position_bucket(r.clone(), True, cfg.num_buckets,
                                                           cfg.max_bucket_distance).numpy()
                diffs_t5 += int((hf != t5).sum())
                t.check(np.array_equal(hf, mine), f"{label}: the line [{q}, {k}] of buckets bit for bit "
                        f"({int((hf != mine).sum())} differ)")
            t.check(diffs_t5 > 0, f"{label}: T5's function gives {diffs_t5} other buckets on these lines (WavLM's "
                    f"float32 max_exact + x before the truncation): the check above can fail")
    # an odd num_buckets: the model's buckets never reach the table's last row; posenc refuses naming the key
    cfg = AutoConfig.for_model("wavlm", **TINY_SPEECH, num_conv_pos_embeddings=4, num_conv_pos_embedding_groups=2,
                               num_buckets=7, max_bucket_distance=20)
    model = AutoModel.from_config(cfg).eval()
    r = torch.arange(-500, 501)[None, :]
    top = int(model.encoder.layers[0].attention._relative_positions_bucket(r).max())
    t.check(top < 6, f"wavlm num_buckets 7: the model's buckets reach {top}, never row 6 of its table")
    path = os.path.join(d, "wavlm_odd.json")
    cfg.to_json_file(path)
    refused_by_name(t, "wavlm num_buckets 7", path, "num_buckets")


# Wav2Vec2-Conformer / Wav2Vec2-BERT: refused by position_embeddings_type; each tiny model shows the reason in its run
CONFORMER_CASES = [  # (label, model_type, position_embeddings_type or None, extra config keys)
    ("wav2vec2-conformer relative", "wav2vec2-conformer", "relative", {}),
    ("wav2vec2-conformer rotary", "wav2vec2-conformer", "rotary", {}),
    ("wav2vec2-conformer none", "wav2vec2-conformer", None, {}),
    ("wav2vec2-bert relative_key", "wav2vec2-bert", "relative_key",
     dict(left_max_position_embeddings=4, right_max_position_embeddings=2)),
    ("wav2vec2-bert rotary", "wav2vec2-bert", "rotary", {}),
    ("wav2vec2-bert relative", "wav2vec2-bert", "relative", {}),
]


def conv_refused(t, d):
    """Each CONFORMER_CASES model runs once with hooks: the conformer's pos_conv_embed is never called; "rotary" rotates
    the attention's input before linear_q / linear_k (their input differs from linear_v's, the unrotated one);
    "relative" holds linear_pos / pos_bias_u / pos_bias_v and a 2T - 1 row sinusoid; "relative_key" an
    asymmetric table of left + right + 1 rows. posenc refuses each naming position_embeddings_type."""
    import torch
    from transformers import AutoConfig, AutoModel
    for label, model_type, kind, kw in CONFORMER_CASES:
        cfg = AutoConfig.for_model(model_type, **TINY_SPEECH, position_embeddings_type=kind, **kw)
        torch.manual_seed(0)
        model = AutoModel.from_config(cfg).eval()
        enc = model.encoder
        calls, seen = [], {}
        if hasattr(enc, "pos_conv_embed"):
            enc.pos_conv_embed.register_forward_hook(lambda m, a, o: calls.append(1))
        attn = enc.layers[0].self_attn
        attn.register_forward_pre_hook(lambda m, a, k: seen.update(x=(a[0] if a else k["hidden_states"]).clone()),
                                       with_kwargs=True)
        attn.linear_q.register_forward_pre_hook(lambda m, a: seen.update(q=a[0].clone()))
        attn.linear_v.register_forward_pre_hook(lambda m, a: seen.update(v=a[0].clone()))
        if getattr(enc, "embed_positions", None) is not None:
            enc.embed_positions.register_forward_hook(lambda m, a, o: seen.update(pos=o.clone()))
        with torch.no_grad():
            if model_type == "wav2vec2-bert":
                model(input_features=torch.randn(1, 20, cfg.feature_projection_input_dim))
            else:
                model(input_values=torch.randn(1, 400))
        frames = seen["x"].shape[1]
        if hasattr(enc, "pos_conv_embed"):
            t.check(not calls, f"{label}: pos_conv_embed built, called {len(calls)} times in the forward pass")
        unrotated = torch.equal(seen["q"], seen["x"])
        t.check(torch.equal(seen["v"], seen["x"]) and unrotated == (kind != "rotary"),
                f"{label}: linear_q's input is {'the attention input' if unrotated else 'the ROTATED attention input'}"
                f" (linear_v's is the input itself)")
        if kind == "relative":
            t.check(all(hasattr(attn, n) for n in ("linear_pos", "pos_bias_u", "pos_bias_v"))
                    and seen["pos"].shape[1] == 2 * frames - 1,
                    f"{label}: linear_pos, pos_bias_u/v and a {seen['pos'].shape[1]}-row relative sinusoid "
                    f"({frames} frames)")
        if kind == "relative_key":
            rows = attn.distance_embedding.weight.shape[0]
            t.check(rows == kw["left_max_position_embeddings"] + kw["right_max_position_embeddings"] + 1,
                    f"{label}: distance_embedding has {rows} rows (left 4 + right 2 + 1: asymmetric)")
        if kind is None:
            t.check(getattr(enc, "embed_positions", None) is None and not hasattr(attn, "linear_pos"),
                    f"{label}: no position module in the encoder or its attention")
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        refused_by_name(t, label, path, "position_embeddings_type")


# 2-D RoPE vision encoders (FAMILY_ROPE_2D): the tiny encoder runs on one image of rows x cols patches; the cos/sin
# every layer's apply function really receives, and the (row, column) its rotary class is given, against posenc's
# posenc_rope2d_table_f32 (torch-compat: bit for bit, tolerance 0 ULP, the same float32 steps and torch kernel
# blocks) and posenc_rope2d_positions for the parameters `rope explain --json` read from the saved config.json.
# (label, model_type, config keywords, grids (rows, cols)); heads of 32 / 24 channels: 24 puts torch's 8-lane
# blocks across tokens (Qwen2-VL's tensor is 6 wide per axis)
ROPE_2D_CASES = [
    ("pixtral", "pixtral", dict(hidden_size=64, intermediate_size=64, num_hidden_layers=2, num_attention_heads=2,
                                patch_size=4, image_size=64), [(3, 5), (4, 2)]),
    ("pixtral theta 500 head 24", "pixtral", dict(hidden_size=48, intermediate_size=64, num_hidden_layers=3,
                                                  num_attention_heads=2, patch_size=2, image_size=64,
                                                  rope_parameters=dict(rope_type="axial", rope_theta=500.0)),
     [(5, 3), (1, 7)]),
    ("qwen2_vl_vision", "qwen2_vl_vision", dict(depth=2, embed_dim=64, num_heads=2, hidden_size=32, patch_size=2,
                                                temporal_patch_size=1), [(4, 6), (2, 2)]),
    ("qwen2_vl_vision theta 100 head 24 merge 1", "qwen2_vl_vision",
     dict(depth=3, embed_dim=48, num_heads=2, hidden_size=32, patch_size=2, temporal_patch_size=1,
          spatial_merge_size=1, rope_parameters=dict(rope_type="axial", rope_theta=100.0)), [(3, 5)]),
    # windows of 2 x 2 merge units (window_size 8 // 2 // 2): 6 x 10 patches = 3 x 5 units, windows cut short
    ("qwen2_5_vl_vision", "qwen2_5_vl_vision", dict(depth=4, hidden_size=64, num_heads=2, intermediate_size=64,
                                                    out_hidden_size=32, patch_size=2, temporal_patch_size=1,
                                                    window_size=8, fullatt_block_indexes=[1, 3]), [(6, 10), (4, 4)]),
    ("qwen2_5_vl_vision theta 1000 head 24 window 3", "qwen2_5_vl_vision",
     dict(depth=2, hidden_size=48, num_heads=2, intermediate_size=64, out_hidden_size=32, patch_size=2,
          temporal_patch_size=1, window_size=12, fullatt_block_indexes=[0],
          rope_parameters=dict(rope_type="axial", rope_theta=1000.0)), [(8, 14)]),
    ("qwen3_vl_vision", "qwen3_vl_vision", dict(depth=2, hidden_size=64, num_heads=2, intermediate_size=64,
                                                out_hidden_size=32, patch_size=2, temporal_patch_size=1,
                                                num_position_embeddings=16, deepstack_visual_indexes=[]),
     [(4, 6)]),
    ("qwen3_vl_moe_vision head 24", "qwen3_vl_moe_vision",
     dict(depth=2, hidden_size=48, num_heads=2, intermediate_size=64, out_hidden_size=32, patch_size=2,
          temporal_patch_size=1, num_position_embeddings=16, deepstack_visual_indexes=[],
          rope_parameters=dict(rope_type="axial", rope_theta=300.0)), [(2, 6)]),
    ("glm4v_vision", "glm4v_vision", dict(depth=2, hidden_size=64, num_heads=2, intermediate_size=64,
                                          out_hidden_size=32, patch_size=2, temporal_patch_size=1, image_size=8),
     [(4, 6)]),
    ("glm4v_moe_vision head 24", "glm4v_moe_vision",
     dict(depth=2, hidden_size=48, num_heads=2, intermediate_size=64, out_hidden_size=32, patch_size=2,
          temporal_patch_size=1, image_size=8, rope_parameters=dict(rope_type="axial", rope_theta=300.0)), [(2, 4)]),
    ("paddleocr_vl_vision", "paddleocr_vl_vision", dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=2,
                                                        intermediate_size=64, patch_size=2, image_size=8),
     [(3, 5)]),
    ("video_llama_3_vision", "video_llama_3_vision", dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=2,
                                                          intermediate_size=64, patch_size=2), [(3, 5), (4, 6)]),
    ("mlcd_vision_model", "mlcd_vision_model", dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=2,
                                                    intermediate_size=64, patch_size=2, image_size=8), [(3, 5)]),
    ("mlcd theta 50 head 24", "mlcd", dict(num_hidden_layers=2, hidden_size=48, num_attention_heads=2,
                                           intermediate_size=64, patch_size=2, image_size=8,
                                           rope_parameters=dict(rope_type="axial", rope_theta=50.0)), [(4, 2)]),
    # DINOv3: normalized patch centres, CLS + registers not rotated (eval: no coordinate augmentation)
    ("dinov3_vit", "dinov3_vit", dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=64,
                                      patch_size=2, image_size=8), [(3, 5), (4, 4)]),
    ("dinov3_vit theta 1000 head 40 registers 2", "dinov3_vit",
     dict(num_hidden_layers=2, hidden_size=80, num_attention_heads=2, intermediate_size=64, patch_size=2, image_size=8,
          rope_theta=1000.0, num_register_tokens=2), [(5, 3), (7, 6)]),
]
ROPE_2D_MODELS = {"pixtral": "PixtralVisionModel", "qwen2_vl_vision": "Qwen2VisionTransformerPretrainedModel",
                  "qwen2_5_vl_vision": "Qwen2_5_VisionTransformerPretrainedModel",
                  "qwen3_vl_vision": "Qwen3VLVisionModel", "qwen3_vl_moe_vision": "Qwen3VLMoeVisionModel",
                  "glm4v_vision": "Glm4vVisionModel", "glm4v_moe_vision": "Glm4vMoeVisionModel",
                  "paddleocr_vl_vision": "PaddleOCRVisionModel", "video_llama_3_vision": "VideoLlama3VisionModel",
                  "mlcd_vision_model": "MLCDVisionModel", "dinov3_vit": "DINOv3ViTModel"}


class _Rope2d(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("head_dim", ctypes.c_int32), ("base", ctypes.c_double),
                ("merge", ctypes.c_int32), ("mode", ctypes.c_int), ("window", ctypes.c_int32)]


def posenc_rope2d(r, rows, cols, mode):
    """posenc's own posenc_rope2d_table_f32 / _positions (the library beside the CLI) for the rope_2d object `rope
    explain --json` printed: (cos [N, D/2], sin, positions [N, 2]). Sanitizer builds: a child python without torch
    calls them (the float32 bits travel as integers)."""
    from common import BIN, sanitizer_runtime_env
    extra = sanitizer_runtime_env()
    if extra:
        code = ("import json, sys; sys.path.insert(0, sys.argv[1]); import test_oracle_hf as o; d = json.load(sys.stdin); "
                "c, s, p = o.posenc_rope2d(d['r'], d['rows'], d['cols'], d['mode']); "
                "print(json.dumps([c.view('uint32').tolist(), s.view('uint32').tolist(), p.tolist()]))")
        child = subprocess.run([sys.executable, "-c", code, HERE], input=json.dumps(
            {"r": r, "rows": rows, "cols": cols, "mode": mode}), capture_output=True, text=True,
            env=dict(os.environ, **extra))
        assert child.returncode == 0, f"posenc_rope2d_table_f32 in the sanitized child failed: {child.stderr[-400:]}"
        c, s, p = json.loads(child.stdout)
        return (np.array(c, dtype=np.uint32).view(np.float32), np.array(s, dtype=np.uint32).view(np.float32),
                np.array(p, dtype=np.int64))
    lib = ctypes.CDLL(os.environ.get("POSENC_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(BIN)),
                                                                       "libposenc.so"))
    kinds = {"pixtral": 0, "axial": 1, "dinov3": 2}
    p = _Rope2d(kinds[r["kind"]], r["head_dim"], r["base"], r["merge"], {"precise": 0, "torch_compat": 1}[mode],
                r.get("window", 0))
    n, half = rows * cols, r["head_dim"] // 2
    cos, sin = np.zeros((n, half), np.float32), np.zeros((n, half), np.float32)
    pos = np.zeros((n, 2), np.int64)
    err = ctypes.create_string_buffer(4096)
    f = lib.posenc_rope2d_table_f32
    f.restype = ctypes.c_int
    rc = f(ctypes.byref(p), ctypes.c_int64(rows), ctypes.c_int64(cols), cos.ctypes.data_as(ctypes.c_void_p),
           sin.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(cos.size), err)
    assert rc == 0, f"posenc_rope2d_table_f32 failed ({rc}): {err.raw[4:400]}"
    g = lib.posenc_rope2d_positions
    g.restype = ctypes.c_int
    rc = g(ctypes.byref(p), ctypes.c_int64(rows), ctypes.c_int64(cols), pos.ctypes.data_as(ctypes.c_void_p),
           ctypes.c_size_t(pos.size), err)
    assert rc == 0, f"posenc_rope2d_positions failed ({rc})"
    return cos, sin, pos


def rope_2d_run(cfg, rows, cols, merge=1):
    """One forward pass of the tiny encoder on one image of rows x cols patches: ([(cos, sin) per apply call],
    the (row, column) per token in the order the layers see them, the number of attention layers built, the model).
    merge: VideoLLaMA3's merge_sizes for the image (the others take theirs from the config)."""
    import torch
    model_type = cfg.model_type
    modeling = importlib.import_module(type(cfg).__module__.replace(".configuration_", ".modeling_"))
    torch.manual_seed(0)
    model = getattr(modeling, ROPE_2D_MODELS[model_type])(cfg).eval()
    rotary = [m for m in model.modules() if "Rotary" in type(m).__name__ or "Rope" in type(m).__name__]
    assert len(rotary) == 1, f"{model_type}: rotary modules {rotary}"
    name = "apply_rotary_pos_emb" if model_type in ("pixtral", "dinov3_vit") else "apply_rotary_pos_emb_vision"
    original, seen, given, windows, plain = getattr(modeling, name), [], [], [], []

    def wrapped(q, k, cos, sin, *a, **kw):
        seen.append((cos.detach().reshape(-1, cos.shape[-1]).float().numpy().copy(),
                     sin.detach().reshape(-1, sin.shape[-1]).float().numpy().copy()))
        plain.append(q.shape[-2] - cos.shape[-2])  # DINOv3: the leading tokens its apply leaves unrotated
        return original(q, k, cos, sin, *a, **kw)
    # the (row, column) the rotary class is given (DINOv3's takes the pixels: none)
    hook = rotary[0].register_forward_hook(lambda m, args, out: given.append(
        args[1].detach().numpy().copy() if len(args) > 1 else None))
    setattr(modeling, name, wrapped)
    window_index = getattr(modeling, "get_vision_window_index", None)
    if window_index:  # Qwen2.5-VL: the block permutation it applies to hidden states and cos/sin alike
        setattr(modeling, "get_vision_window_index", lambda *a, **kw: windows.append(window_index(*a, **kw))
                or windows[-1])
    try:
        with torch.no_grad():
            p, n, grid = cfg.patch_size, rows * cols, torch.tensor([[1, rows, cols]])
            if model_type in ("pixtral", "mlcd_vision_model", "dinov3_vit"):
                model(pixel_values=torch.randn(1, cfg.num_channels, rows * p, cols * p))
            elif model_type == "paddleocr_vl_vision":
                model(pixel_values=torch.randn(1, n, cfg.num_channels, p, p), grid_thw=grid)
            elif model_type == "video_llama_3_vision":
                model(pixel_values=torch.randn(n, cfg.num_channels * p * p), grid_thw=grid,
                      merge_sizes=torch.tensor([merge]))
            else:
                c = getattr(cfg, "in_channels", 3)
                model(torch.randn(n, c * cfg.temporal_patch_size * p * p), grid_thw=grid)
    finally:
        setattr(modeling, name, original)
        if window_index:
            setattr(modeling, "get_vision_window_index", window_index)
        hook.remove()
    pos = np.asarray(given[0]).reshape(-1, 2) if given[0] is not None else None
    if windows:
        unit = cfg.spatial_merge_size ** 2
        pos = pos.reshape(-1, unit, 2)[windows[0][0].numpy()].reshape(-1, 2)
    layers = next(len(m) for _, m in model.named_modules() if isinstance(m, torch.nn.ModuleList))
    return seen, pos, layers, model, plain


def rope_2d(t, d):
    """Each case of ROPE_2D_CASES at each of its grids: every layer ROPE_2D (Qwen2.5-VL: the full-attention layers
    fullatt_block_indexes, the others windowed), HF's (row, column) per token = posenc's order, HF's cos/sin [N, D] =
    cat(posenc's, posenc's) bit for bit in torch-compat (0 ULP) at every layer; the precise mode within
    2^-24 (2 p + 2) of them absolutely (HF rounds w and p w to float32, each off by up to p w 2^-24 with w <= 1, p the
    largest position; cos/sin and posenc's own rounding 2^-24 together). MLCD's CLS row is cos/sin of its learned
    angles (the tensor posenc names); the tables posenc names but does not describe exist in the model."""
    from transformers import AutoConfig
    for label, model_type, kw, grids in ROPE_2D_CASES:
        cfg = AutoConfig.for_model(model_type, **kw)
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        cfg.to_json_file(path)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads it ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        r = dict(layers[0].get("rope_2d", {}))
        if "rope_parameters" in cfg.to_dict():  # the 4.x form: top-level rope_theta, as the config class reads it
            legacy = {k: v for k, v in cfg.to_dict().items() if k != "rope_parameters"}
            legacy["rope_theta"] = cfg.rope_parameters["rope_theta"]
            old = os.path.join(d, label.replace(" ", "_") + "_4x.json")
            with open(old, "w") as f:
                json.dump(legacy, f)
            theirs = type(cfg).from_json_file(old).rope_parameters
            rc, so, se = run("rope", "explain", "--config", old, "--json")
            got = json.loads(so)["layers"][0].get("rope_2d", {}) if rc == 0 else {}
            t.check(rc == 0 and got == r and theirs == dict(rope_type="axial", rope_theta=r.get("base")),
                    f"{label} (4.x rope_theta): posenc reads {got.get('base')}, the config class {theirs}")
        merges = [1, 2] if r.get("merge_per_image") else [r.get("merge", 1)]
        for (rows, cols), merge in [(g, m) for g in grids for m in merges]:
            where = f"{label} {rows}x{cols}" + (f" merge_sizes {merge}" if r.get("merge_per_image") else "")
            if rows % merge or cols % merge:
                continue
            try:
                seen, given, n_layers, model, plain = rope_2d_run(cfg, rows, cols, merge)
            except Exception as e:  # the model could not be built or run: a failure, never a skip
                t.check(False, f"{where}: transformers could not run the tiny model: {type(e).__name__}: {e}")
                continue
            full = set(getattr(cfg, "fullatt_block_indexes", None) or [])
            kinds = [("full_attention" if i in full else "window_attention") if r.get("window") else "attention"
                     for i in range(n_layers)]
            t.check(len(layers) == n_layers == len(seen) and all(x["scheme"] == "rope_2d" and x["rope_2d"] == r
                                                                 for x in layers)
                    and [x["kind"] for x in layers] == kinds,
                    f"{where}: {len(layers)} rope_2d layers ({r}), kinds {[x['kind'] for x in layers]}, transformers "
                    f"built {n_layers} ({kinds}), {len(seen)} rotated")
            r["merge"] = merge  # VideoLLaMA3: the caller's per-image merge size (posenc reads 1)
            cos, sin, pos = posenc_rope2d(r, rows, cols, "torch_compat")
            if given is not None:
                t.check(np.array_equal(pos, given), f"{where}: (row, column) per token = the run's ({pos[:5].tolist()}..)")
            if model_type == "dinov3_vit":
                t.check(plain and all(x == r.get("plain") for x in plain),
                        f"{where}: {r.get('plain')} leading tokens not rotated (the run: {sorted(set(plain))})")
            lead = r.get("lead", 0)
            if lead:  # MLCD: the CLS row rotates by the learned angles posenc names
                a = model.get_parameter(r["lead_tensor"]).detach()
                import torch
                a = torch.cat([a, a], -1).reshape(1, -1)
                t.check(all(np.array_equal(hf[0][:lead], a.cos().numpy()) and np.array_equal(hf[1][:lead], a.sin().numpy())
                            for hf in seen), f"{where}: the CLS row is cos/sin of {r['lead_tensor']}")
            if r.get("resized_table"):
                names = {n for n, _ in model.named_parameters()}
                t.check(r["resized_table"] in names, f"{where}: the resized table {r['resized_table']} is the model's")
            seen = [(c[lead:], s_[lead:]) for c, s_ in seen]
            want = (np.concatenate([cos, cos], 1), np.concatenate([sin, sin], 1))
            worst = max((ulps(want, hf) if hf[0].shape == want[0].shape else 1 << 30) for hf in seen) if seen else -1
            t.check(worst == 0, f"{where}: cos/sin [{rows * cols}, {r.get('head_dim')}] of every layer = posenc "
                    f"torch-compat bit for bit (max {worst} ULP)")
            pc, ps, _ = posenc_rope2d(r, rows, cols, "precise")
            if seen:  # absolute: a cos near 0 makes ULPs meaningless
                bound = 2.0 ** -24 * (2 * (max(rows, cols) - 1) + 2)
                e = max(np.abs(np.concatenate([pc, pc], 1) - seen[0][0]).max(),
                        np.abs(np.concatenate([ps, ps], 1) - seen[0][1]).max())
                t.check(e <= bound, f"{where}: posenc precise within {bound:.3g} of the run ({e:.3g})")
    # DINOv3 with a 196-channel head: arange(0, 1, 4 / 196) has 50 entries, not 49: the run fails (posenc refuses it)
    try:
        cfg = AutoConfig.for_model("dinov3_vit", num_hidden_layers=1, hidden_size=392, num_attention_heads=2,
                                   intermediate_size=64, patch_size=2, image_size=8)
        rope_2d_run(cfg, 2, 2)
        t.check(False, "dinov3_vit head 196: transformers runs it (posenc refuses it)")
    except RuntimeError as e:
        t.check(True, f"dinov3_vit head 196: transformers cannot run it either ({str(e)[:80]})")
    # what posenc does not read: refused naming the key
    for label, model_type, kw, key in [
            ("pixtral rope_type default", "pixtral", dict(rope_parameters=dict(rope_type="default", rope_theta=1e4)),
             "rope_type"),
            ("pixtral head 18", "pixtral", dict(hidden_size=36, num_attention_heads=2), "head_dim 18"),
            ("qwen2_vl_vision head_dim", "qwen2_vl_vision", dict(embed_dim=64, num_heads=2, head_dim=16), "head_dim"),
            ("pixtral rope_scaling", "pixtral", dict(rope_scaling=dict(rope_type="linear", factor=2.0)),
             "rope_scaling"),
            ("dinov3_vit rope_parameters", "dinov3_vit", dict(rope_parameters=dict(rope_type="default",
                                                                                   rope_theta=1e4)), "rope_parameters"),
            ("dinov3_vit head 196", "dinov3_vit", dict(hidden_size=392, num_attention_heads=2), "head_dim 196"),
            ("qwen2_5_vl_vision window 0", "qwen2_5_vl_vision", dict(window_size=2), "window_size")]:
        path = os.path.join(d, label.replace(" ", "_") + ".json")
        with open(path, "w") as f:
            json.dump(dict(model_type=model_type, **kw), f)
        refused_by_name(t, label, path, key)


# DETR-style 2D sine tables (issue 39): each tiny detection / segmentation model runs forward on one unpadded image
# (128 x 192 pixels, RT-DETR's 256 x 384: feature maps up to 32 x 48; a tiny ResNet / Swin / HGNetV2 backbone: no
# timm, no download); a forward hook on every module of a *SinePositionEmbedding class captures the table the run
# really adds, and posenc_sine2d_table_f32 with the parameters `rope explain --json` read from the saved config.json
# must give it bit for bit (tolerance 0 ULP: DETR's layout in torch-compat copies the float32 steps, and torch's
# sin / cos come from the same MKL; RT-DETR's float64 table rounded once to float32 is what precise mode computes,
# and a 1-ULP double difference moves a float32 only next to a rounding midpoint, which these tables do not hit).
# Layer counts: posenc's encoder / decoder layers = the run's layer lists that add the table.
TINY_RESNET = dict(model_type="resnet", embedding_size=8, hidden_sizes=[8, 16], depths=[1, 1], out_features=["stage2"])
DETR_SMALL = dict(encoder_layers=2, decoder_layers=3, encoder_attention_heads=2, decoder_attention_heads=2,
                  encoder_ffn_dim=32, decoder_ffn_dim=32, num_queries=5, use_timm_backbone=False,
                  backbone_config=TINY_RESNET, use_pretrained_backbone=False)
DEFORMABLE = dict(DETR_SMALL, backbone_config=dict(TINY_RESNET, out_features=["stage1", "stage2"]),
                  num_feature_levels=3, encoder_n_points=2, decoder_n_points=2)
MASKFORMER = dict(backbone_config=dict(model_type="swin", embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1],
                                       window_size=2, image_size=32), fpn_feature_size=32, mask_feature_size=32,
                  num_queries=5)
SWIN4 = dict(model_type="swin", embed_dim=8, depths=[1, 1, 1, 1], num_heads=[1, 1, 1, 1], window_size=2, image_size=32)
MASK2FORMER = dict(backbone_config=dict(SWIN4, out_features=["stage1", "stage2", "stage3", "stage4"]), feature_size=32,
                   mask_feature_size=32, hidden_dim=32, encoder_layers=2, decoder_layers=3, num_attention_heads=2,
                   encoder_feedforward_dim=32, dim_feedforward=32, num_queries=5)
RT_DETR = dict(backbone_config=dict(model_type="rt_detr_resnet", embedding_size=8, hidden_sizes=[8, 16, 32, 64],
                                    depths=[1, 1, 1, 1], out_features=["stage2", "stage3", "stage4"]),
               encoder_hidden_dim=32, encoder_in_channels=[16, 32, 64], decoder_in_channels=[32, 32, 32], d_model=32,
               encoder_layers=2, decoder_layers=2, num_queries=5, encoder_ffn_dim=32, decoder_ffn_dim=32,
               encoder_attention_heads=2, decoder_attention_heads=2, decoder_n_points=2)
D_FINE = dict(RT_DETR, backbone_config=dict(
    model_type="hgnet_v2", stem_channels=[3, 8, 8], stage_in_channels=[8, 16, 32, 64],
    stage_mid_channels=[8, 8, 16, 16], stage_out_channels=[16, 32, 64, 64], hidden_sizes=[16, 32, 64, 64],
    stage_num_blocks=[1, 1, 1, 1],
    stage_downsample=[False, True, True, True], stage_light_block=[False, False, True, True],
    stage_kernel_size=[3, 3, 5, 5], stage_numb_of_layers=[1, 1, 1, 1], out_features=["stage2", "stage3", "stage4"]),
    encoder_in_channels=[32, 64, 64], hidden_expansion=0.5, num_feature_levels=3)
SINE2D_CASES = [  # (label, model_type, config keywords, the run's encoder / decoder layer lists adding the table)
    ("detr", "detr", dict(DETR_SMALL, d_model=32), "encoder.layers", "decoder.layers"),
    ("detr d_model 48", "detr", dict(DETR_SMALL, d_model=48), "encoder.layers", "decoder.layers"),
    ("conditional_detr", "conditional_detr", dict(DETR_SMALL, d_model=32), "encoder.layers", "decoder.layers"),
    ("table-transformer", "table-transformer", dict(DETR_SMALL, d_model=64), "encoder.layers", "decoder.layers"),
    ("dab-detr", "dab-detr", dict(DETR_SMALL, hidden_size=32), "encoder.layers", "decoder.layers"),
    # other temperatures per axis and another scale: each read from its own key
    ("dab-detr temperatures 10/30 scale 3", "dab-detr", dict(DETR_SMALL, hidden_size=32, temperature_height=10,
                                                             temperature_width=30, sine_position_embedding_scale=3.0),
     "encoder.layers", "decoder.layers"),
    # three feature levels, each its own table (positions - 0.5) + a level_embed row; the decoder adds no sine
    ("deformable_detr", "deformable_detr", dict(DEFORMABLE, d_model=32), "encoder.layers", None),
    ("maskformer", "maskformer", dict(MASKFORMER, decoder_config=dict(model_type="detr", d_model=32, decoder_layers=2,
                                                                       decoder_attention_heads=2, decoder_ffn_dim=32)),
     None, "transformer_module.decoder.layers"),
    # two modules build the table (pixel decoder, transformer decoder): both outputs must be posenc's
    ("mask2former", "mask2former", MASK2FORMER, "pixel_level_module.decoder.encoder.layers",
     "transformer_module.decoder.layers"),
    # RT-DETR's layout ([H*W][D] rows, sin/cos halves, float64): the AIFI layers of each encode_proj_layers level
    ("rt_detr", "rt_detr", RT_DETR, ("encoder.aifi.0.layers",), None),
    ("rt_detr temperature 20", "rt_detr", dict(RT_DETR, positional_encoding_temperature=20), ("encoder.aifi.0.layers",),
     None),
    ("rt_detr_v2 two AIFI levels", "rt_detr_v2", dict(RT_DETR, encode_proj_layers=[1, 2]),
     ("encoder.aifi.0.layers", "encoder.aifi.1.layers"), None),
    ("d_fine", "d_fine", D_FINE, ("encoder.aifi.0.layers",), None),
]


class _Sine2d(ctypes.Structure):
    _fields_ = [("num_pos_feats", ctypes.c_int32), ("temperature_y", ctypes.c_double),
                ("temperature_x", ctypes.c_double), ("normalize", ctypes.c_int32), ("offset", ctypes.c_double),
                ("eps", ctypes.c_double), ("scale", ctypes.c_double), ("exponent_by_product", ctypes.c_int32),
                ("layout", ctypes.c_int), ("mode", ctypes.c_int)]


def sanitized_child(name, *args):
    """An uninstrumented python cannot load a sanitizer build's libposenc.so: there, call this file's function `name`
    on args (JSON values) in a child python with clang's ASan runtime preloaded and return its array, bits intact.
    None in a plain build (the caller calls the library itself)."""
    from common import sanitizer_runtime_env
    extra = sanitizer_runtime_env()  # {} inside the child: the runtime is preloaded there
    if not extra:
        return None
    code = ("import json, sys, numpy as np; sys.path.insert(0, sys.argv[1]); import test_oracle_hf as o; "
            "a = json.load(sys.stdin); x = np.ascontiguousarray(getattr(o, a[0])(*a[1:])); "
            "print(json.dumps([x.dtype.str, list(x.shape), x.tobytes().hex()]))")
    child = subprocess.run([sys.executable, "-c", code, HERE], input=json.dumps([name, *args]), capture_output=True,
                           text=True, env=dict(os.environ, **extra))
    assert child.returncode == 0, f"{name} in the sanitized child failed: {child.stderr[-400:]}"
    dtype, shape, data = json.loads(child.stdout)
    return np.frombuffer(bytes.fromhex(data), dtype=np.dtype(dtype)).reshape(shape)


def posenc_sine2d(s, height, width):
    """posenc_sine2d_table_f32 with the parameters `rope explain --json` printed: float32 [2F, H, W] (DETR layout)
    or [H*W, 2F] (RT-DETR layout). Sanitizer builds: in a child python (sanitized_child)."""
    from common import BIN
    child = sanitized_child("posenc_sine2d", s, height, width)
    if child is not None:
        return child
    lib = ctypes.CDLL(os.environ.get("POSENC_LIBRARY") or os.path.join(os.path.dirname(os.path.abspath(BIN)),
                                                                       "libposenc.so"))
    f = lib.posenc_sine2d_table_f32
    f.restype = ctypes.c_int
    rtdetr = s["layout"] == "rtdetr"
    p = _Sine2d(s["num_pos_feats"], s["temperature_y"], s["temperature_x"], s["normalize"], s["offset"], s["eps"],
                s["scale"], s["exponent_by_product"], int(rtdetr), {"precise": 0, "torch_compat": 1}[s["mode"]])
    out = np.zeros((height * width, 2 * s["num_pos_feats"]) if rtdetr else (2 * s["num_pos_feats"], height, width),
                   dtype=np.float32)
    err = ctypes.create_string_buffer(4096)
    rc = f(ctypes.byref(p), ctypes.c_int64(height), ctypes.c_int64(width), out.ctypes.data_as(ctypes.c_void_p),
           ctypes.c_size_t(out.size), err)
    assert rc == 0, f"posenc_sine2d_table_f32 failed ({rc}): {err.raw[4:200]}"
    return out


def sine2d(t, d):
    """Each SINE2D_CASES model: the tables its run adds = posenc's, the layer counts, the level table; refusals."""
    import torch
    from transformers import AutoConfig, AutoModel
    for label, model_type, kw, enc_name, dec_name in SINE2D_CASES:
        try:
            cfg = AutoConfig.for_model(model_type, **kw)
            torch.manual_seed(0)
            model = AutoModel.from_config(cfg).eval()
            mods = [(n, m) for n, m in model.named_modules() if type(m).__name__.endswith("SinePositionEmbedding")]
            captured = []  # (table, height, width, module): RT-DETR's module takes the sizes as keywords
            for n, m in mods:
                m.register_forward_hook(lambda mod, a, k, out, n=n: captured.append(
                    (out.detach().clone(), k.get("height", out.shape[-2]), k.get("width", out.shape[-1]), n)),
                    with_kwargs=True)
            # every tensor each layer of the case's lists gets (what it adds to its queries / keys is among them)
            layer_inputs = {}

            def tensors(values):  # the tensors among a call's arguments, lists of them included (Mask2Former)
                for x in values:
                    if isinstance(x, torch.Tensor):
                        yield x.detach().clone()
                    elif isinstance(x, (list, tuple)):
                        yield from tensors(x)
            for n in (enc_name if isinstance(enc_name, tuple) else (enc_name,)) + (dec_name,):
                if n:
                    for i, layer in enumerate(model.get_submodule(n)):
                        layer.register_forward_pre_hook(lambda mod, a, k, key=f"{n}.{i}": layer_inputs.setdefault(
                            key, []).extend(tensors(list(a) + list(k.values()))), with_kwargs=True)
            with torch.no_grad():
                model(pixel_values=torch.randn(1, 3, 256, 384) if "encoder_hidden_dim" in kw else
                      torch.randn(1, 3, 128, 192))
        except Exception as e:  # the model could not be built or run: a failure, never a skip
            t.check(False, f"{label}: transformers could not run the tiny model: {type(e).__name__}: {e}")
            continue
        path = os.path.join(d, label.replace(" ", "_").replace("/", "_") + ".json")
        cfg.to_json_file(path)
        rc, so, se = run("rope", "explain", "--config", path, "--json")
        if not t.check(rc == 0, f"{label}: posenc reads it ({se.strip()[:160]})"):
            continue
        layers = json.loads(so)["layers"]
        enc_names = enc_name if isinstance(enc_name, tuple) else (enc_name,)
        lists = {n: len(m) for n, m in model.named_modules() if n in enc_names + (dec_name,)}
        want = [("encoder", sum(lists.get(n, 0) for n in enc_names)), ("decoder", lists.get(dec_name, 0))]
        got = [(k, sum(1 for x in layers if x["kind"] in (k, "scaled_" + k) and x["scheme"] == "sine_2d"))
               for k, _ in want]
        t.check(got == want and len(layers) == sum(n for _, n in want),
                f"{label}: posenc's sine_2d layers {got} = the run's {want} ({len(layers)} in all)")
        s = layers[0]["sine2d"]
        t.check(mods and s["module"].endswith(mods[0][0]),
                f"{label}: the table's module {s['module']} is the run's {[n for n, _ in mods]}")
        worst, shapes = 0, []
        for out, height, width, _ in captured:
            theirs = out[0].numpy()
            shapes.append((int(height), int(width)))
            ours = posenc_sine2d(s, int(height), int(width))
            worst = max(worst, int(f32_ulps(ours, theirs).max()) if ours.shape == theirs.shape else 1 << 30)
        t.check(captured and worst == 0, f"{label}: posenc's table = the run's on {len(captured)} feature maps "
                f"{shapes}, {2 * s['num_pos_feats']} channels: worst {worst} ULP (tolerance 0)")
        # each listed layer really gets the table: one of its inputs holds, value for value, one map's table flattened
        # to [H*W, 2F] (DETR's [2F, H, W] permuted, as the model flattens it), or the levels' tables each plus its row
        # of the level table posenc names, concatenated (the deformable encoders), or for a "scaled_encoder" layer the
        # table times its encoder's query_scale of the layer's input (DAB-DETR)
        forms = []
        for out, _, _, _ in captured:
            flat = out if s["layout"] == "rtdetr" else out.flatten(2).permute(0, 2, 1)
            forms.append(flat.contiguous().reshape(-1))
        if s["levels"]:
            level = model.get_parameter(s["level_tensor"].removeprefix("model.")).detach()
            own = [out for out, _, _, n in captured if s["module"].endswith(n)][:s["levels"]]
            forms.append(torch.cat([out.flatten(2).permute(0, 2, 1) + level[i].view(1, 1, -1)
                                    for i, out in enumerate(own)], 1).contiguous().reshape(-1))
        def gets_table(key, inputs):
            want_forms = forms
            if any(x["kind"] == "scaled_encoder" for x in layers) and not key.startswith(str(dec_name)):
                # DAB-DETR: the table x query_scale(the layer's input), the product its encoder hands the layer
                scale = model.get_submodule(key.rsplit(".", 2)[0] + ".query_scale")
                with torch.no_grad():
                    want_forms = [(f.view(1, -1, inputs[0].shape[-1]) * scale(inputs[0])).reshape(-1) for f in forms]
            return any(x.numel() == f.numel() and torch.equal(x.contiguous().reshape(-1), f) for x in inputs
                       for f in want_forms)
        missing = [k for k, v in sorted(layer_inputs.items()) if not gets_table(k, v)]
        t.check(len(layer_inputs) == len(layers) and not missing,
                f"{label}: each of the {len(layer_inputs)} listed layers gets the table as an input (without it: "
                f"{missing})")
        # the level table posenc names is the run's parameter of [levels, 2F]; none named: the run adds none to the
        # table (Mask2Former's transformer_module.level_embed goes to the features; checked by reading its code)
        params = {n: tuple(p.shape) for n, p in model.named_parameters() if "level_embed" in n}
        name = s["level_tensor"].removeprefix("model.")
        t.check(params.get(name) == (s["levels"], 2 * s["num_pos_feats"]) if s["levels"] else
                not any(n.count(".") <= 1 for n in params),
                f"{label}: level table {name or '-'} x {s['levels']} levels, the run's level tables {params}")
    # refused by name: a learned table instead of the sine; two tables of different widths; a width whose half is
    # odd (no sin, cos pairs)
    for name, body, key in [("detr learned", dict(model_type="detr", position_embedding_type="learned"),
                             "position_embedding_type"),
                            ("mask2former feature_size 64 hidden_dim 32",
                             dict(model_type="mask2former", feature_size=64, hidden_dim=32), "hidden_dim"),
                            ("deformable_detr learned", dict(model_type="deformable_detr",
                                                             position_embedding_type="learned"),
                             "position_embedding_type"),
                            ("detr d_model 34", dict(model_type="detr", d_model=34), "d_model"),
                            ("rt_detr eval_size", dict(model_type="rt_detr", eval_size=[64, 96]), "eval_size")]:
        path = os.path.join(d, name.replace(" ", "_") + ".json")
        with open(path, "w") as f:
            json.dump(body, f)
        refused_by_name(t, name, path, key)
    # types with a second position path (text) or another layout: refused naming the type; their config classes
    # do build the text tower posenc's reason names
    from transformers import AutoConfig as _AC
    for mt, text in [("grounding-dino", "bert"), ("mm-grounding-dino", "bert"), ("omdet-turbo", "clip_text_model")]:
        got = getattr(_AC.for_model(mt).text_config, "model_type", None)
        t.check(got == text, f"{mt}: its text tower is {got} (a learned table), as the refusal says")
    for mt in ("grounding-dino", "mm-grounding-dino", "oneformer", "omdet-turbo"):
        path = os.path.join(d, f"{mt}.json")
        with open(path, "w") as f:
            json.dump(dict(model_type=mt), f)
        refused_by_name(t, mt, path, mt)
    # the learned variant really is another module in the run (so refusing it is not refusing a sine)
    cfg = AutoConfig.for_model("detr", **DETR_SMALL, d_model=32, position_embedding_type="learned")
    kinds = [type(m).__name__ for _, m in AutoModel.from_config(cfg).named_modules() if "PositionEmbedding" in
             type(m).__name__]
    t.check(kinds == ["DetrLearnedPositionEmbedding"], f"detr learned: the run builds {kinds}, no sine table")


ROOT_DIR = None
# checks that are not one tiny model through hf_layers (their own forward calls), by name
SPECIAL = {"whisper": whisper, "ministral3": ministral3, "modernbert_null_local": modernbert_null_local,
           "llama4_temperature": llama4_temperature,
           # ESM configs refused for what transformers' run does with them
           "esm_refused": esm_refused, "roformer": roformer,
           # M-RoPE text types
           "qwen3_5_partial_conflict": partial_conflict, "glm4v_class_defaults": glm_class_defaults,
           # remote-code types read through a framework's own model
           "kimi_k2": kimi_k2,
           "sinusoid_tables": sinusoid_tables, "sinusoid_refused": sinusoid_refused,
           "sinusoid_layout_refused": sinusoid_layout_refused,
           # DeBERTa v1 / v2 / v3: relative positions and c2p / p2c rows captured from the disentangled attention
           "deberta": deberta,
           # T5 and its copies (buckets, which layers own a table), LongT5 and UDOP refused
           "t5": t5_family,
           # Whisper-encoder copies: the frozen embed_positions table is the checkpoint's (learned)
           "audio_encoder_tables": audio_encoder_tables,
           # ViT-style vision encoders: the learned image table's row per token, read off the embeddings' output
           "vision_patch": vision_patch,
           # wav2vec2-style speech encoders: the convolution added to the encoder's input, replayed from posenc's
           # reading; WavLM's buckets; the conformers refused by position_embeddings_type
           "conv_position": conv_position,
           "wavlm_buckets": wavlm_buckets,
           "conv_refused": conv_refused,
           # 2-D RoPE vision encoders: the cos/sin each layer rotates with, over one image's patch grid
           "rope_2d": rope_2d,
           # DETR-style detection / segmentation models: the 2D sine table each run adds, bit for bit
           "sine2d": sine2d,
           # windowed 2D relative bias: each attention's relative_position_index (and SwinV2's coordinates)
           "swin_window_relative": window_relative,
           "beit_window": beit_window,
           "levit": levit,
           # two RoPE bases in one model's layer list
           "granite_swa_thetas": granite_swa_thetas, "cohere2_moe_refused": cohere2_moe_refused,
           "bamba_partial": bamba_partial, "recurrent_gemma_refused": recurrent_gemma_refused,
           # two stacks, each layer run several times
           "hrm_text": hrm_text,
           # encoder and decoder stacks with RoPE
           "dia": dia, "t5gemma": t5gemma,
           # refused for what its rotary class does
           "diffusion_gemma_refused": diffusion_gemma_refused, "blt_refused": blt_refused}
# every RoPE type given a partial_rotary_factor it may not read, in chunks (one task each: they run in parallel)
SPECIAL.update({f"partial_factor_{k}": (lambda t, d, k=k: partial_factor(t, d, k)) for k in range(PARTIAL_CHUNKS)})


def main():
    """Tasks run in POSENC_ORACLE_JOBS worker processes (default: the CPU count, at most 8), forked after torch
    is set up here (one thread each, MKL math for posenc's torch-compat). No model is cached between runs:
    each is built from its config in about a second, and weights do not matter (only positions are compared)."""
    global ROOT_DIR
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    ROOT_DIR = tmpdir()
    # DeBERTa's modeling code reaches torch's compiler, which makes a cache folder in TMPDIR: keep it in ours
    os.environ["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(ROOT_DIR, "torchinductor")
    import torch
    torch_math_library(torch)  # posenc's torch-compat takes exp/sin/cos from this torch's MKL, as torch does
    torch_peer_label(torch)    # one thread: torch's chunking changes its bits with more
    t = Checks()
    only = sys.argv[1:]
    tasks = [(0, "rope_types")] if not only or "rope_types" in only else []
    tasks += [(len(CASES) + 1 + k, name) for k, name in enumerate(SPECIAL) if not only or name.split("_")[0] in only
              or any(name == o or name.startswith(o + "_") for o in only)]
    tasks += [(i + 1, label, mt, kw) for i, (label, mt, kw) in enumerate(CASES) if not only or mt in only]
    tasks += [(len(CASES) + len(SPECIAL) + 1 + k, "composite", k) for k, c in enumerate(COMPOSITES)
              if not only or c[1] in only]
    jobs = int(os.environ.get("POSENC_ORACLE_JOBS", "0")) or min(os.cpu_count() or 1, 8)
    start = time.monotonic()
    with ProcessPoolExecutor(max_workers=jobs, mp_context=multiprocessing.get_context("fork")) as pool:
        done = list(pool.map(run_case, tasks))
    slowest = max(((sec, task) for (_, sec), task in zip(done, tasks)), default=(0, None), key=lambda x: x[0])
    for results, _ in done:
        for ok, message in results:
            t.check(ok, message)
    print(f"{len(tasks)} tasks on {jobs} workers in {time.monotonic() - start:.1f} s "
          f"(slowest: {slowest[1][1] if slowest[1] else '-'}, {slowest[0]:.1f} s)")
    t.finish()


if __name__ == "__main__":
    main()
