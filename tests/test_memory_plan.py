"""The memory plan against sglang 0.5.23 itself.

``tests/data/memory_cases.jsonl`` is the labelled table made by ``tools/oracle/memory_probe.py``:
for each launch (a checkpoint config x TP x EP x GPU profile, plus attention-DP and pipeline
layouts) the bytes of every parameter and buffer one rank holds when sglang's own model class is
built on the meta device, and, per KV-cache dtype, sglang's own pool sizing run against the
simulated GPU (bytes per token, token count, max running requests, or the error it raises).
"""

from __future__ import annotations

import json
import struct
from pathlib import Path

import pytest

from sglang_lsp.context.memory import kv as mem_kv
from sglang_lsp.context.memory import model as mem_model
from sglang_lsp.context.memory import plan as mem_plan
from sglang_lsp.context.memory import quantization as mem_quantization
from sglang_lsp.context.memory import weights as mem_weights

ROOT = Path(__file__).resolve().parent.parent
TABLE = ROOT / "tests" / "data" / "memory_cases.jsonl"
REAL = ROOT / "tests" / "data" / "model_configs"
FIXTURES = ROOT / "tests" / "fixtures" / "models"

GB = 10**9


def _rows() -> list[dict]:
    with TABLE.open() as f:
        return [json.loads(line) for line in f if line.strip()]


ROWS = _rows()
OK_ROWS = [r for r in ROWS if r["outcome"] == "ok"]


def _model(row: dict):
    cfg, side = mem_plan.read_model_dir(str(ROOT / row["model"]))
    shape = mem_model.describe_model(cfg)
    return cfg, side, shape


def _rank_cases():
    for row in OK_ROWS:
        for rank in row["ranks"]:
            yield pytest.param(row, rank, id=f"{row['id']}|rank{rank['world_rank']}")


def _kv_cases():
    for row in OK_ROWS:
        for rank in row["ranks"]:
            for kv in rank["kv"]:
                if kv.get("kv_bytes_per_token") is not None:
                    yield pytest.param(row, rank, kv, id=f"{row['id']}|rank{rank['world_rank']}|"
                                                         f"{kv['requested_kv_cache_dtype']}")


def _modelled(shape: mem_model.ModelShape) -> bool:
    return shape.family != "unmodelled"


def _draft_layers(row: dict, shape: mem_model.ModelShape):
    """A NextN/MTP speculative launch drafts with the checkpoint's own MTP layers."""
    argv = row["argv"]
    if "--speculative-algorithm" in argv:
        assert argv[argv.index("--speculative-algorithm") + 1] in ("EAGLE", "NEXTN")
        return shape.num_nextn_layers
    return None


def _kv_estimate(row: dict, rank: dict, kv: dict):
    cfg, side, shape = _model(row)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    layout = mem_model.ParallelLayout(**row["layout"])
    est = mem_kv.estimate_kv_cache(shape, quant, layout, kv["requested_kv_cache_dtype"],
                               pp_rank=rank["pp_rank"],
                               speculative_draft_layers=_draft_layers(row, shape))
    return shape, layout, est


def test_table_covers_the_promised_grid():
    models = {r["model"] for r in ROWS}
    real = {m for m in models if m.startswith("tests/data/model_configs/")}
    assert len(real) >= 10
    kinds = {(mem_model.describe_model(mem_plan.read_model_dir(str(ROOT / m))[0]).family) for m in models}
    assert {"llama", "qwen2", "qwen3", "qwen3_moe", "mixtral", "deepseek_v3", "glm4_moe",
            "gpt_oss", "minimax_m2"} <= kinds
    tps = {r["layout"]["tp_size"] for r in ROWS}
    assert tps == {1, 2, 4, 8}
    assert any(r["layout"]["ep_size"] > 1 for r in ROWS)
    assert any(r["layout"]["enable_dp_attention"] for r in ROWS)
    assert any(r["layout"]["pp_size"] > 1 for r in ROWS)


@pytest.mark.parametrize("row, rank", list(_rank_cases()))
def test_weights_per_gpu_within_2_percent_of_the_meta_model(row, rank):
    cfg, side, shape = _model(row)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    layout = mem_model.ParallelLayout(**row["layout"])
    if not _modelled(shape):
        est = mem_weights.estimate_weights(shape, quant, layout)
        assert est.bytes_per_gpu is None and est.how is None and est.notes
        return
    # the stage this rank belongs to (ranks of one stage hold the same bytes)
    stage = mem_weights._stage_bytes(shape, quant, layout, rank["pp_rank"], rank.get("moe_runner_backend"))
    got = sum(stage.values())
    want = rank["weight_bytes"]
    assert abs(got - want) <= 0.02 * want, (got, want, stage, rank["by_part"])
    est = mem_weights.estimate_weights(shape, quant, layout, moe_runner_backend=rank.get("moe_runner_backend"))
    assert est.how == mem_model.ESTIMATED
    worst = max(r["weight_bytes"] for r in row["ranks"])
    assert abs(est.bytes_per_gpu - worst) <= 0.02 * worst


@pytest.mark.parametrize("row, rank, kv", list(_kv_cases()))
def test_kv_bytes_per_token_exactly_as_sglang_sizes_them(row, rank, kv):
    shape, layout, est = _kv_estimate(row, rank, kv)
    if not _modelled(shape):
        assert est.bytes_per_token is None and est.how is None and est.notes
        return
    assert est.how == mem_model.EXACT
    # sglang keeps a fractional cell for hybrid SWA pools and logs its int
    assert int(est.bytes_per_token) == kv["kv_bytes_per_token"]
    assert est.layers == kv["num_kv_layers"]


@pytest.mark.parametrize("row, rank, kv", list(_kv_cases()))
def test_kv_token_budget_matches_sglang_given_the_weights(row, rank, kv):
    """With the weights sglang's own model holds, the budget arithmetic gives sglang's token
    count and max_running_requests exactly, or the error sglang raised."""
    shape, layout, est = _kv_estimate(row, rank, kv)
    if not _modelled(shape):
        return
    budget = mem_kv.plan_kv_budget(
        gpu_memory_bytes=row["gpu_memory_bytes"], weights_bytes_per_gpu=rank["weight_bytes"],
        draft_weights_bytes=rank.get("draft", {}).get("resident_bytes", 0),
        kv=est, mem_fraction_static=row["resolved"]["mem_fraction_static"],
        context_length=kv["context_len"],
        pre_model_load_free_bytes=row["pre_model_load_free_bytes"],
        world_size=layout.tp_size * layout.pp_size, page_size=row["resolved"]["page_size"] or 1,
        attn_dp_size=layout.attn_dp_size,
        # sglang resolves a default for speculative launches (--max-running-requests 48)
        max_running_requests=row["resolved"]["max_running_requests"],
        max_total_tokens=row["resolved"]["max_total_tokens"])
    if kv["outcome"] == "ok":
        assert budget.error is None, budget.message
        assert budget.kv_cache_tokens == kv["max_total_num_tokens"]
        assert budget.max_running_requests == kv["max_running_requests"]
        if "swa_max_total_num_tokens" in kv:
            assert budget.swa_kv_cache_tokens == kv["swa_max_total_num_tokens"]
        assert budget.how["kv_cache_tokens"] == mem_model.EXACT
    else:
        assert "Loaded weights leave no GPU memory" in kv["message"]
        assert budget.error in ("weights_exceed_static_budget", "weights_exceed_gpu_memory")
        assert budget.kv_cache_tokens is None


def _row(row_id: str) -> dict:
    for r in ROWS:
        if r["id"] == row_id:
            return r
    raise KeyError(row_id)


def _plan(model_dir: Path, gpu: str, **kw) -> mem_model.MemoryPlan:
    cfg, side = mem_plan.read_model_dir(str(model_dir))
    row_gpu = {r["hardware"]: r["gpu_memory_bytes"] for r in ROWS}
    layout = mem_model.ParallelLayout(**{k: kw.pop(k) for k in list(kw) if k in (
        "tp_size", "ep_size", "pp_size", "dp_size", "enable_dp_attention")})
    return mem_plan.plan_memory(cfg, layout, side_files=side, gpu_memory_bytes=row_gpu[gpu], **kw)


def test_more_pipeline_stages_than_layers_is_not_estimated_and_not_enumerated():
    """``--pp-size 2147483647`` (sglang 0.5.23 accepts it on the oracle, w2401-boundary-00639):
    the plan says why it makes no estimate instead of building one entry per stage (which took
    all memory)."""
    cfg, side = mem_plan.read_model_dir(str(ROOT / "tests" / "fixtures" / "models" / "qwen3-0.6b"))
    for pp in (29, 2**31 - 1):
        plan = mem_plan.plan_memory(cfg, mem_model.ParallelLayout(pp_size=pp), side_files=side,
                                    gpu_memory_bytes=80 << 30)
        assert plan.weights.bytes_per_gpu is None and plan.kv_cache.bytes_per_token is None
        assert any(f"pp_size {pp} is more than the model's 28 layers" in n for n in plan.weights.notes)
        assert plan.weights.per_pp_stage == []
    plan = mem_plan.plan_memory(cfg, mem_model.ParallelLayout(pp_size=28), side_files=side, gpu_memory_bytes=80 << 30)
    assert plan.weights.bytes_per_gpu and len(plan.weights.per_pp_stage) == 28


# -- the clear-cut cases ---------------------------------------------------------------


def test_deepseek_v3_fp8_does_not_fit_on_8_h100():
    plan = _plan(REAL / "deepseek-v3", "H100", tp_size=8, mem_fraction_static=0.9)
    w = plan.weights.bytes_per_gpu
    assert w > 85 * GB  # 79.3 GiB of weights per GPU, on an 80 GB (79.6 GiB) card
    assert plan.budget.error == "weights_exceed_gpu_memory"
    assert plan.budget.kv_cache_tokens is None
    # sglang itself, on the simulated H100: no KV cache can be sized
    kv = _row("real:deepseek-v3|H100|--tp 8")["ranks"][0]["kv"][0]
    assert kv["outcome"] == "error" and "Loaded weights leave no GPU memory" in kv["message"]


def test_deepseek_v3_fp8_fits_on_8_h200():
    row = _row("real:deepseek-v3|H200|--tp 8")
    mfs = row["resolved"]["mem_fraction_static"]
    plan = _plan(REAL / "deepseek-v3", "H200", tp_size=8, mem_fraction_static=mfs,
                 pre_model_load_free_bytes=row["pre_model_load_free_bytes"])
    assert plan.budget.error is None
    assert plan.kv_cache.bytes_per_token == 61 * (512 + 64) * 2
    sglang_tokens = row["ranks"][0]["kv"][0]["max_total_num_tokens"]
    assert abs(plan.budget.kv_cache_tokens - sglang_tokens) <= 0.01 * sglang_tokens
    assert plan.budget.how["kv_cache_tokens"] == mem_model.ESTIMATED  # the weights are an estimate


def test_llama3_8b_bf16_weights_and_kv_bytes():
    plan = _plan(FIXTURES / "llama3-8b", "H100")
    assert plan.weights.bytes_per_gpu == pytest.approx(16.06 * GB, abs=0.01 * GB)
    assert plan.weights.by_part["buffers"] == 8192 * 128 * 4  # the RoPE cos/sin cache
    assert plan.kv_cache.bytes_per_token == 131_072
    assert plan.kv_cache.how == mem_model.EXACT


def test_llama3_8b_weights_exceed_the_static_budget_on_l40s_at_0_3():
    plan = _plan(FIXTURES / "llama3-8b", "L40S", mem_fraction_static=0.3)
    b = plan.budget
    assert b.error == "weights_exceed_static_budget"
    assert b.kv_cache_tokens is None
    assert 0.3 < b.suggested_mem_fraction_static < 0.95
    kv = _row("fixture:llama3-8b|L40S|--mem-fraction-static 0.3")["ranks"][0]["kv"][0]
    assert kv["outcome"] == "error" and "Loaded weights leave no GPU memory" in kv["message"]
    # sglang's own suggestion, from its own numbers
    suggested = float(kv["message"].split("above ")[1].split(" ")[0])
    exact = mem_kv.plan_kv_budget(
        gpu_memory_bytes=b.gpu_memory_bytes,
        weights_bytes_per_gpu=_row("fixture:llama3-8b|L40S|--mem-fraction-static 0.3")
        ["ranks"][0]["weight_bytes"],
        kv=plan.kv_cache, mem_fraction_static=0.3, context_length=8192,
        pre_model_load_free_bytes=b.gpu_memory_bytes - mem_model.GIB)
    assert exact.suggested_mem_fraction_static == suggested


# -- unknown stays unknown ---------------------------------------------------------------------


def test_hybrid_linear_attention_is_unknown_not_guessed():
    plan = _plan(REAL / "qwen3-next-80b-a3b", "H200", mem_fraction_static=0.9)
    assert plan.weights.bytes_per_gpu is None and plan.weights.how is None
    assert plan.kv_cache.bytes_per_token is None and plan.kv_cache.how is None
    assert plan.budget.kv_cache_tokens is None
    assert plan.as_dict()["kv_cache_tokens"] is None


@pytest.mark.parametrize("config, why", [
    ({"architectures": ["LlamaForCausalLM"], "num_hidden_layers": 2}, "hidden_size"),
    ({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
      "vocab_size": 100, "num_attention_heads": 4}, "no intermediate_size"),
    ({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2.0e7,
      "vocab_size": 100, "num_attention_heads": 4, "intermediate_size": 8}, "implausible"),
    ({"architectures": ["SomethingNewForCausalLM"], "hidden_size": 8, "num_hidden_layers": 1,
      "vocab_size": 8, "num_attention_heads": 1}, "not modelled"),
    ({"hidden_size": 8}, "names no architecture"),
    ({"architectures": ["LlamaForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
      "vocab_size": 100, "num_attention_heads": 4, "intermediate_size": 128,
      "quantization_config": {"quant_method": "bitsandbytes"}}, "not modelled"),
    ({"architectures": ["Qwen3MoeForCausalLM"], "hidden_size": 64, "num_hidden_layers": 2,
      "vocab_size": 100, "num_attention_heads": 4}, "no expert count"),
])
def test_partial_or_unknown_configs_give_none(config, why):
    plan = mem_plan.plan_memory(config, mem_model.ParallelLayout(), gpu_memory_bytes=80 * GB,
                          mem_fraction_static=0.9)
    assert plan.weights.bytes_per_gpu is None
    assert plan.kv_cache.bytes_per_token is None
    assert plan.budget.kv_cache_tokens is None
    assert any(why in n for n in plan.notes)
    out = plan.as_dict()
    assert out["weights_bytes_per_gpu"] is None and out["how"]["weights_bytes_per_gpu"] is None


def test_unmodelled_kv_dtype_and_bad_layout_give_none():
    cfg, side = mem_plan.read_model_dir(str(FIXTURES / "llama3-8b"))
    shape = mem_model.describe_model(cfg)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    kv = mem_kv.estimate_kv_cache(shape, quant, mem_model.ParallelLayout(), "fp4_e2m1")
    assert kv.bytes_per_token is None and kv.notes
    bad = mem_model.ParallelLayout(tp_size=4, ep_size=3)
    assert mem_weights.estimate_weights(shape, quant, bad).bytes_per_gpu is None
    assert mem_kv.estimate_kv_cache(shape, quant, bad).bytes_per_token is None


def test_unknown_mem_fraction_gives_no_token_count():
    plan = _plan(FIXTURES / "llama3-8b", "H100")
    assert plan.weights.bytes_per_gpu is not None
    assert plan.budget.kv_cache_tokens is None and plan.budget.error is None


# -- layouts -----------------------------------------------------------------------------------


def test_kv_heads_are_replicated_when_fewer_than_tp():
    cfg, side = mem_plan.read_model_dir(str(REAL / "qwen2.5-7b"))  # 4 KV heads
    shape = mem_model.describe_model(cfg)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    per_gpu = {tp: mem_kv.estimate_kv_cache(shape, quant, mem_model.ParallelLayout(tp_size=tp)).bytes_per_token
               for tp in (1, 2, 4, 8)}
    assert per_gpu[4] == per_gpu[8] == 28 * 1 * 256 * 2  # one head per GPU from TP 4 on
    assert per_gpu[1] == 4 * per_gpu[4]


def test_pipeline_parallel_reports_the_heaviest_stage():
    cfg, side = mem_plan.read_model_dir(str(REAL / "llama-3.3-70b-instruct"))
    shape = mem_model.describe_model(cfg)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    est = mem_weights.estimate_weights(shape, quant, mem_model.ParallelLayout(tp_size=4, pp_size=2))
    assert len(est.per_pp_stage) == 2
    assert est.bytes_per_gpu == max(est.per_pp_stage)
    assert "pp stage" in est.rank


def test_kv_fp8_from_a_modelopt_checkpoint():
    cfg = {"architectures": ["LlamaForCausalLM"], "hidden_size": 4096, "num_hidden_layers": 32,
           "vocab_size": 128256, "num_attention_heads": 32, "num_key_value_heads": 8,
           "intermediate_size": 14336, "torch_dtype": "bfloat16"}
    side = {"hf_quant_config.json": {"quantization": {"quant_algo": "FP8",
                                                      "kv_cache_quant_algo": "FP8"}}}
    plan = mem_plan.plan_memory(cfg, mem_model.ParallelLayout(), side_files=side)
    assert plan.kv_cache.element_bytes == 1
    assert plan.kv_cache.bytes_per_token == 65_536


def test_speculative_draft_layers_add_their_share_of_the_cache():
    cfg, side = mem_plan.read_model_dir(str(REAL / "deepseek-v3"))
    shape = mem_model.describe_model(cfg)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    base = mem_kv.estimate_kv_cache(shape, quant, mem_model.ParallelLayout(tp_size=8))
    mtp = mem_kv.estimate_kv_cache(shape, quant, mem_model.ParallelLayout(tp_size=8),
                               speculative_draft_layers=1)
    assert mtp.bytes_per_token == base.bytes_per_token + base.bytes_per_token // 61


# -- exact sizes from the checkpoint -----------------------------------------------------------


def _write_safetensors(path: Path, tensors: dict[str, int]) -> None:
    """A header-only safetensors file: tensors name -> byte size (data not written)."""
    header, offset = {}, 0
    for name, size in tensors.items():
        header[name] = {"dtype": "U8", "shape": [size], "data_offsets": [offset, offset + size]}
        offset += size
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw)


def test_checkpoint_size_from_index_and_from_headers(tmp_path):
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": 1234}, "weight_map": {}}))
    size = mem_weights.checkpoint_size(str(tmp_path))
    assert size.total_bytes == 1234 and "total_size" in size.source
    other = tmp_path / "h"
    other.mkdir()
    _write_safetensors(other / "model-00001.safetensors",
                       {"model.layers.0.mlp.weight": 100, "model.layers.2.mlp.weight": 7})
    _write_safetensors(other / "model-00002.safetensors", {"lm_head.weight": 50})
    size = mem_weights.checkpoint_size(str(other), num_layers=2)
    assert (size.total_bytes, size.tensors, size.mtp_bytes) == (157, 3, 7)
    (other / "model-00003.safetensors").write_bytes(b"\x01")
    assert mem_weights.checkpoint_size(str(other)) is None  # a truncated file: no size, no guess


def test_an_exact_checkpoint_size_is_split_like_the_estimate(tmp_path):
    cfg, side = mem_plan.read_model_dir(str(REAL / "llama-3.1-8b"))
    shape = mem_model.describe_model(cfg)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    disk = mem_weights.checkpoint_bytes_estimate(shape, quant)
    layout = mem_model.ParallelLayout(tp_size=2)
    plain = mem_weights.estimate_weights(shape, quant, layout)
    (tmp_path / "config.json").write_text(json.dumps(cfg))
    (tmp_path / "model.safetensors.index.json").write_text(
        json.dumps({"metadata": {"total_size": int(disk * 1.05)}}))
    plan = mem_plan.plan_memory(cfg, layout, checkpoint_dir=str(tmp_path))
    w = plan.weights
    assert w.checkpoint_bytes == int(disk * 1.05) and w.checkpoint_how == mem_model.EXACT
    rope = plain.by_part["buffers"]
    assert w.bytes_per_gpu - rope == pytest.approx((plain.bytes_per_gpu - rope) * 1.05, rel=1e-6)
    assert w.how == mem_model.ESTIMATED and w.basis.startswith("model.safetensors.index.json")


def test_block_fp8_layout_sglang_refuses_is_flagged():
    cfg, side = mem_plan.read_model_dir(str(FIXTURES / "qwen3-30b-a3b-fp8"))
    shape = mem_model.describe_model(cfg)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    est = mem_weights.estimate_weights(shape, quant, mem_model.ParallelLayout(tp_size=4))
    assert any("refuses" in n for n in est.notes)
    row = _row("fixture:qwen3-30b-a3b-fp8|H200|--tp 4")
    assert row["outcome"] == "error" and "block_n" in row["message"]
    ep = mem_weights.estimate_weights(shape, quant, mem_model.ParallelLayout(tp_size=4, ep_size=4))
    assert not any("refuses" in n for n in ep.notes)


def test_nextn_draft_weights_match_sglangs_draft_model():
    row = _row("real:deepseek-v3|H200|--tp 8 --speculative-algorithm EAGLE --speculative-num-steps 3 "
               "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4")
    rank = row["ranks"][0]
    assert rank["draft"]["model_class"] == "DeepseekV3ForCausalLMNextN"
    cfg, side, shape = _model(row)
    quant = mem_quantization.read_quantization(cfg, shape, side)
    draft = mem_weights.estimate_nextn_draft_weights(shape, quant, mem_model.ParallelLayout(**row["layout"]))
    want = rank["draft"]["resident_bytes"]
    assert abs(draft.bytes_per_gpu - want) <= 0.02 * want
    mfs = row["resolved"]["mem_fraction_static"]
    plan = mem_plan.plan_memory(cfg, mem_model.ParallelLayout(**row["layout"]), side_files=side,
                          gpu_memory_bytes=row["gpu_memory_bytes"], mem_fraction_static=mfs,
                          pre_model_load_free_bytes=row["pre_model_load_free_bytes"],
                          speculative_algorithm="EAGLE")
    kv = rank["kv"][0]
    assert plan.kv_cache.bytes_per_token == kv["kv_bytes_per_token"]
    assert abs(plan.budget.kv_cache_tokens - kv["max_total_num_tokens"]) <= \
        0.01 * kv["max_total_num_tokens"]


# -- bad input never raises ----------------------------------------------------------------------

from hypothesis import given, settings, strategies as st  # noqa: E402

_values = st.one_of(st.none(), st.booleans(), st.integers(-3, 5000), st.floats(allow_nan=True),
                    st.text(max_size=5), st.lists(st.integers(0, 3), max_size=3))
_keys = st.sampled_from(["hidden_size", "num_hidden_layers", "vocab_size", "num_attention_heads",
                         "num_key_value_heads", "head_dim", "intermediate_size", "num_experts",
                         "moe_intermediate_size", "n_routed_experts", "kv_lora_rank",
                         "qk_rope_head_dim", "torch_dtype", "layer_types", "sliding_window",
                         "first_k_dense_replace", "max_position_embeddings", "rope_scaling",
                         "quantization_config", "tie_word_embeddings", "partial_rotary_factor"])
_archs = st.sampled_from(["LlamaForCausalLM", "Qwen3MoeForCausalLM", "DeepseekV3ForCausalLM",
                          "GptOssForCausalLM", "MixtralForCausalLM", "Qwen3NextForCausalLM", "X"])


@settings(max_examples=300, deadline=None)
@given(arch=_archs, fields=st.dictionaries(_keys, _values, max_size=12),
       tp=st.integers(0, 9), ep=st.integers(0, 9))
def test_any_config_gives_a_plan_or_none_never_a_traceback(arch, fields, tp, ep):
    base = {"hidden_size": 256, "num_hidden_layers": 4, "vocab_size": 1000,
            "num_attention_heads": 8, "num_key_value_heads": 2, "intermediate_size": 512,
            "num_experts": 8, "num_local_experts": 8, "n_routed_experts": 8,
            "moe_intermediate_size": 128, "kv_lora_rank": 64, "qk_rope_head_dim": 16,
            "qk_nope_head_dim": 32, "v_head_dim": 32, "q_lora_rank": 96,
            "layer_types": ["sliding_attention", "full_attention"] * 2, "sliding_window": 16}
    cfg = {"architectures": [arch], **base, **fields}
    plan = mem_plan.plan_memory(cfg, mem_model.ParallelLayout(tp_size=tp, ep_size=ep),
                          gpu_memory_bytes=80 * GB, mem_fraction_static=0.85)
    w = plan.weights.bytes_per_gpu
    assert w is None or w >= 0
    assert plan.kv_cache.bytes_per_token is None or plan.kv_cache.bytes_per_token > 0
    json.dumps(plan.as_dict())
