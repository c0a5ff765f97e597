"""posenc.hf against transformers 5.18's own classes (issue 41 item 1): for tiny random models
of llama (llama3 scaling), qwen3, gemma3 (full + sliding layer types), deepseek-v3 (MLA,
interleaved), phi3 (LongRoPE, past the trained length) and qwen2-vl (M-RoPE), posenc.hf.patch
replaces the rotary embedding and apply_rotary_pos_emb; logits are identical bit for bit in
float32, bfloat16 and float16 with batched position_ids at different offsets, and greedy
generation with a KV cache gives the same tokens and logits. gpt-oss is refused by name
(posenc's config reader does not know model_type 'gpt_oss'). Tolerance: none (torch.equal)."""
import warnings

import pytest
import torch

import posenc
import posenc.torch as pt
from posenc import hf as drop_in

import transformers  # noqa: E402  (the venv pins 5.18.0; a missing one must fail, not skip)
warnings.filterwarnings("ignore")
transformers.logging.set_verbosity_error()

SMALL = dict(hidden_size=64, num_attention_heads=4, num_key_value_heads=2, intermediate_size=96,
             num_hidden_layers=2, vocab_size=97, pad_token_id=0, bos_token_id=1, eos_token_id=2)


def _models():
    T = transformers
    return {
        "llama": lambda: T.LlamaForCausalLM(T.LlamaConfig(**SMALL, max_position_embeddings=512, rope_parameters={
            "rope_type": "llama3", "rope_theta": 500000.0, "factor": 8.0, "low_freq_factor": 1.0,
            "high_freq_factor": 4.0, "original_max_position_embeddings": 64})),
        "qwen3": lambda: T.Qwen3ForCausalLM(T.Qwen3Config(**SMALL, head_dim=32)),
        "gemma3": lambda: T.Gemma3ForCausalLM(T.Gemma3TextConfig(**SMALL, head_dim=16, sliding_window=8,
                                                                 layer_types=["sliding_attention", "full_attention"])),
        "deepseek_v3": lambda: T.DeepseekV3ForCausalLM(T.DeepseekV3Config(
            **dict(SMALL, num_key_value_heads=4), moe_intermediate_size=32, qk_rope_head_dim=16,
            qk_nope_head_dim=16, v_head_dim=16, kv_lora_rank=32, q_lora_rank=32, n_routed_experts=4,
            num_experts_per_tok=2, first_k_dense_replace=1, n_group=1, topk_group=1)),
        "phi3": lambda: T.Phi3ForCausalLM(T.Phi3Config(**SMALL, max_position_embeddings=256, rope_parameters={
            "rope_type": "longrope", "rope_theta": 10000.0, "short_factor": [1.0 + 0.1 * i for i in range(8)],
            "long_factor": [2.0 + 0.3 * i for i in range(8)], "original_max_position_embeddings": 64})),
        "qwen2_vl": lambda: T.Qwen2VLForConditionalGeneration(T.Qwen2VLConfig(
            text_config=dict(**SMALL, rope_parameters={"rope_type": "default", "mrope_section": [2, 3, 3],
                                                       "rope_theta": 10000.0}),
            vision_config=dict(depth=1, embed_dim=32, hidden_size=64, num_heads=2))),
    }


def _build(name, dtype):
    torch.manual_seed(0)
    model = _models()[name]().eval()
    for p in model.parameters():  # weights in dtype, the float32 rotary buffers kept (as from_pretrained)
        p.data = p.data.to(dtype)
    return model


# phi3 crosses its trained length (64) inside the sequence: LongRoPE switches to the long factors
OFFSETS = {"phi3": (0, 70)}


def _run(model, name, dtype):
    torch.manual_seed(1)
    ids = torch.randint(3, 97, (2, 9))
    a, b = OFFSETS.get(name, (0, 17))
    position_ids = torch.stack([torch.arange(a, a + 9), torch.arange(b, b + 9)])
    kw = {}
    if name == "qwen2_vl":  # text positions on all three axes, one offset per row
        kw["position_ids"] = position_ids[None].expand(3, -1, -1)
    else:
        kw["position_ids"] = position_ids
    with torch.no_grad():
        logits = model(input_ids=ids, **kw).logits
        gen = model.generate(input_ids=ids[:1], max_new_tokens=5, do_sample=False, output_logits=True,
                             return_dict_in_generate=True)
    with torch.inference_mode():
        inf_logits = model(input_ids=ids, **kw).logits
    return logits, gen.sequences, torch.stack(gen.logits), inf_logits


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16], ids=["f32", "bf16", "f16"])
@pytest.mark.parametrize("name", ["llama", "qwen3", "gemma3", "deepseek_v3", "phi3", "qwen2_vl"])
def test_patched_model_same_logits_and_tokens(name, dtype):
    model = _build(name, dtype)
    want = _run(model, name, dtype)
    undo = drop_in.patch(model)
    try:
        replaced = [m for m in model.modules() if isinstance(m, (pt.RotaryEmbedding, drop_in.LayerTypesRotaryEmbedding))]
        assert replaced, "nothing was patched"
        got = _run(model, name, dtype)
    finally:
        undo()
    assert not any(isinstance(m, pt.RotaryEmbedding) for m in model.modules())
    for what, w, g in zip(("logits", "generated tokens", "generation logits", "inference_mode logits"), want, got):
        same = torch.equal(w, g)
        print("%s %s %s: %s" % (name, dtype, what, "identical" if same else
                                "max diff %g" % (w.float() - g.float()).abs().max().item()))
        assert same


def test_gpt_oss_is_patched_with_identical_logits_or_refused_by_name():
    # posenc's config reader reads gpt_oss now (its yarn dict, the oracle harness): patching
    # must then give HF's logits exactly; a refusal must name the class and type, patching nothing.
    T = transformers
    torch.manual_seed(0)
    model = T.GptOssForCausalLM(T.GptOssConfig(**dict(SMALL, hidden_size=64), head_dim=16, num_local_experts=4,
                                               num_experts_per_tok=2)).eval()
    ids = torch.randint(0, model.config.vocab_size, (2, 12))
    with torch.no_grad():
        want = model(ids).logits
    before = model.model.rotary_emb
    try:
        drop_in.patch(model)
    except posenc.InvalidArgumentError as e:
        assert "GptOss" in str(e) and "gpt_oss" in str(e)
        assert model.model.rotary_emb is before  # nothing patched
        return
    with torch.no_grad():
        got = model(ids).logits
    assert torch.equal(want, got)


def test_another_config_is_refused_and_nothing_patched():
    model = _build("qwen3", torch.float32)
    model.model.rotary_emb.config = transformers.Qwen3Config(**SMALL, head_dim=32, rope_theta=20000.0)
    module = __import__("transformers.models.qwen3.modeling_qwen3", fromlist=["x"])
    fn = module.apply_rotary_pos_emb
    with pytest.raises(posenc.InvalidArgumentError, match="inv_freq differs"):
        drop_in.patch(model)
    assert module.apply_rotary_pos_emb is fn and not isinstance(model.model.rotary_emb, pt.RotaryEmbedding)


def test_rounded_frequencies_are_refused():
    model = _build("llama", torch.float32).to(torch.bfloat16)  # .to() rounds the inv_freq buffer too
    with pytest.raises(posenc.InvalidArgumentError, match="inv_freq is torch.bfloat16"):
        drop_in.patch(model)


def test_apply_rotary_pos_emb_both_signatures_and_gpt_oss_form():
    from transformers.models.llama import modeling_llama as ml
    from transformers.models.gpt_oss import modeling_gpt_oss as mg
    from transformers.models.phi3 import modeling_phi3 as mp
    torch.manual_seed(3)
    for dtype in (torch.float32, torch.bfloat16, torch.float16):
        q, k = torch.randn(2, 4, 7, 32).to(dtype), torch.randn(2, 2, 7, 32).to(dtype)
        cos, sin = torch.randn(2, 7, 32).to(dtype), torch.randn(2, 7, 32).to(dtype)
        want = ml.apply_rotary_pos_emb(q, k, cos, sin)
        for got in (drop_in.apply_rotary_pos_emb(q, k, cos, sin), drop_in.apply_rotary_pos_emb(q, k, cos, sin, 1),
                    drop_in.apply_rotary_pos_emb(q, k, cos, sin, None, 1)):
            assert all(torch.equal(a, b) for a, b in zip(want, got))
        qt, kt = q.transpose(1, 2), k.transpose(1, 2)
        want = ml.apply_rotary_pos_emb(qt, kt, cos, sin, unsqueeze_dim=2)
        got = drop_in.apply_rotary_pos_emb(qt, kt, cos, sin, 2)
        assert all(torch.equal(a, b) for a, b in zip(want, got))
        half_cos, half_sin = cos[..., :16], sin[..., :16]
        want = mg.apply_rotary_pos_emb(q, k, half_cos, half_sin)
        got = drop_in.apply_rotary_pos_emb_pairs(q, k, half_cos, half_sin)
        assert all(torch.equal(a, b) for a, b in zip(want, got))
        want = mp.apply_rotary_pos_emb(q, k, half_cos, half_sin)  # Phi-3 partial rotary: same shapes, other result
        got = drop_in.apply_rotary_pos_emb_partial(q, k, half_cos, half_sin)
        assert all(torch.equal(a, b) for a, b in zip(want, got))
