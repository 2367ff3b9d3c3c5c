"""The MoE runner a launch's MoE layers are built with, from sglang 0.5.23's quantization methods
(the ``effective.*`` names SGL181 reads).

The `--moe-runner-backend` server argument is a request: each quantization method's
``create_moe_runner`` decides which runner its layers really build (compressed-tensors W4A16 and
AWQ experts always build marlin, FP8 experts fall back to triton for the FlashInfer CUTLASS
runners, unquantized experts map the TRT-LLM runners onto flashinfer_trtllm …). Some runners
have no unfused path and run only through a fused kernel registered for the all-to-all backend
(``MoeRunner.__init__``, ``moe_runner/runner.py``); without one the first MoE layer fails.

Only the methods whose choice is modelled give an answer; every other checkpoint is UNKNOWN.
"""

from __future__ import annotations

from typing import Any

from ...base.unknown import UNKNOWN
from .effective_moe import checkpoint_quant_method
from .effective_state import unknown_in

# @register_fused_func(a2a backend, runner) in sglang/srt/layers/moe/moe_runner/*.py
FUSED_KERNELS = frozenset({
    ("none", "experimental_sgl_marlin"), ("none", "flashinfer_cutlass"), ("flashinfer", "flashinfer_cutlass"),
    ("none", "flashinfer_mxfp4"), ("none", "marlin"), ("none", "flashinfer_trtllm"),
    ("none", "flashinfer_trtllm_routed"), ("flashinfer", "flashinfer_trtllm"), ("flashinfer", "flashinfer_trtllm_routed"),
    ("none", "hpc_ops"), ("none", "humming"), ("none", "flashinfer_cutedsl"), ("deepep", "flashinfer_cutedsl"),
    ("flashinfer", "flashinfer_cutedsl"), ("flashinfer_megamoe", "flashinfer_megamoe"),
})
# flashinfer_trtllm.py registers ("none", "experimental_sgl_trtllm") only under this switch
EXPERIMENTAL_TRTLLM_SWITCH = "SGLANG_EXPERIMENTAL_LORA_OPTI"

# runners whose MoeRunner has no unfused core (runner.py: runner_core stays None)
FUSED_ONLY = frozenset({
    "marlin", "flashinfer_trtllm", "flashinfer_trtllm_routed", "flashinfer_cutlass", "flashinfer_cutedsl",
    "flashinfer_mxfp4", "experimental_sgl_trtllm", "experimental_sgl_marlin", "hpc_ops", "flashinfer_megamoe",
    "humming",
})


def _quant(s: Any) -> Any:
    q = s.final("quantization")
    return checkpoint_quant_method(s) if q is None else q


def _int4_weight_only(s: Any) -> Any:
    """A compressed-tensors checkpoint with 4-bit integer weights and 16-bit activations."""
    bits, act_bits, wtype = s.model("quant_bits"), s.model("quant_act_bits"), s.model("quant_type")
    if unknown_in(bits, act_bits, wtype):
        return UNKNOWN
    return bits == 4 and act_bits is None and wtype == "int"


def _wna16_runner(s: Any, runner: str) -> Any:
    """compressed_tensors.py:get_moe_scheme for 4-bit integer weights on NVIDIA GPUs: the Triton
    WNA16 method (a runner with an unfused path) for `--moe-runner-backend triton`, or by default
    on SM100 when the scheme suits it (symmetric groups of 32 or 128, no act-order); marlin else."""
    if s.platform("is_cuda") is not True:
        return UNKNOWN  # ROCm builds the Triton method
    if runner == "flashinfer_trtllm":
        # MXINT4 experts (symmetric groups of 32) have their own TRT-LLM method
        group, symmetric = s.model("quant_group_size"), s.model("quant_symmetric")
        if unknown_in(group, symmetric) or group == 32 and symmetric is not False:
            return UNKNOWN
    if runner == "triton":
        return None
    if runner == "auto":
        sm100 = s.platform("is_sm100")
        facts = [s.model(f) for f in ("quant_strategy", "quant_group_size", "quant_symmetric", "quant_actorder")]
        if unknown_in(sm100, *facts):
            return UNKNOWN
        strategy, group, symmetric, actorder = facts
        if sm100 and strategy == "group" and group in (32, 128) and symmetric and not actorder:
            return None
    return "marlin"


def _nvfp4_runner(s: Any, runner: str) -> Any:
    """modelopt_quant.py:ModelOptNvFp4FusedMoEMethod.create_moe_runner: no runner under the
    megamoe all-to-all backend or a LoRA runner; `auto` is marlin on SM80-SM90 and
    flashinfer_trtllm elsewhere; any other request is built as asked."""
    a2a = s.final("moe_a2a_backend")
    if a2a is UNKNOWN:
        return UNKNOWN
    if a2a == "megamoe" or runner.startswith("lora"):
        return None
    if runner == "auto":
        cuda, sm = s.platform("is_cuda"), s.platform("sm")
        if unknown_in(cuda, sm):
            return UNKNOWN
        runner = "marlin" if cuda and sm is not None and 80 <= sm < 100 else "flashinfer_trtllm"
    return runner if runner in FUSED_ONLY else None


def moe_layer_runner(r: Any) -> Any:
    """The runner the MoE layers build when it is one without an unfused path (FUSED_ONLY),
    None when they build a runner with one (or no MoeRunner), UNKNOWN when not modelled."""
    s = r.finals()
    q, runner = _quant(s), s.final("moe_runner_backend")
    if unknown_in(q, runner):
        return UNKNOWN
    if q is None:
        # unquant.py:UnquantizedFusedMoEMethod.create_moe_runner
        if runner in ("flashinfer_trtllm", "experimental_sgl_trtllm"):
            return "flashinfer_trtllm"
        return runner if runner in ("flashinfer_trtllm_routed", "flashinfer_cutlass") else None
    if q == "fp8":
        # fp8.py:Fp8MoEMethod.create_moe_runner (the CUTLASS runners fall back to triton)
        if runner in ("flashinfer_trtllm", "flashinfer_trtllm_routed", "hpc_ops", "flashinfer_megamoe",
                      "experimental_sgl_trtllm"):
            return runner
        return None
    if q in ("awq", "awq_marlin"):
        # awq.py: on NVIDIA GPUs the experts load as awq_marlin, whose MoE method builds marlin
        return "marlin" if s.platform("is_cuda") is True else UNKNOWN
    if q == "modelopt_fp4":
        return _nvfp4_runner(s, runner)
    if q == "compressed-tensors" and _int4_weight_only(s) is True:
        return _wna16_runner(s, runner)
    if q == "compressed-tensors" and s.model("quant_type") == "float" and s.model("quant_bits") == 8 \
            and s.model("quant_act_bits") == 8:
        # compressed_tensors_w8a8_fp8_moe.py: the TRT-LLM runners pass through, the rest run unfused
        if runner in ("flashinfer_trtllm", "flashinfer_trtllm_routed", "experimental_sgl_trtllm"):
            return runner
        return None if runner in ("auto", "triton", "deep_gemm", "flashinfer_megamoe") else UNKNOWN
    return UNKNOWN


def moe_runner_lacks_fused_kernel(r: Any) -> Any:
    """True when the MoE layers' runner has no fused kernel for the resolved all-to-all backend."""
    s = r.finals()
    a2a, requested = s.final("moe_a2a_backend"), s.final("moe_runner_backend")
    if a2a == "none" and requested not in (UNKNOWN, "experimental_sgl_trtllm", "flashinfer_megamoe"):
        return False  # every runner a layer may then build has a fused kernel without all-to-all
    runner = moe_layer_runner(r)
    if runner is None:
        return False
    if unknown_in(runner, a2a):
        return UNKNOWN
    if (a2a, runner) in FUSED_KERNELS:
        return False
    if (a2a, runner) == ("none", "experimental_sgl_trtllm"):
        switch = s.env_bool(EXPERIMENTAL_TRTLLM_SWITCH)
        return UNKNOWN if switch is UNKNOWN else not switch
    return True
