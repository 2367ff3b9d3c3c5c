"""The checkpoint's quantization as bytes per weight: FP8 (per-tensor, per-channel, block scales),
NVFP4, MXFP4, AWQ/GPTQ int4 with group scales, compressed-tensors schemes, and which modules it
leaves unquantized."""

from __future__ import annotations

import fnmatch
from dataclasses import dataclass
from typing import Optional
from .model import ModelShape, UnsupportedModel


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


@dataclass(frozen=True)
class Scheme:
    """Byte layout of one linear / one expert stack as created by sglang's quant method."""

    kind: str  # "dense" | "fp8_block" | "fp8_tensor" | "fp8_channel" | "int4_awq" | "int4_gptq" |
    #            "int4_ct" | "nvfp4" | "mxfp4"
    dtype_bytes: int = 2
    block: tuple = (128, 128)
    group: int = 128
    static_input_scale: bool = False
    asymmetric: bool = False
    actorder: bool = False

    def linear(self, out: int, in_: int, shards: int = 1, full_in: Optional[int] = None) -> int:
        """One linear of ``out`` x ``in_`` on one rank (``full_in``: the unsharded input size of a
        row-parallel linear; ``shards``: logical shards fused into it, e.g. 3 for q/k/v)."""
        b = self.dtype_bytes
        k = self.kind
        if k == "dense":
            return out * in_ * b
        if k == "fp8_block":
            bn, bk = self.block
            return out * in_ + ceil_div(out, bn) * ceil_div(in_, bk) * 4
        if k == "fp8_tensor":
            return out * in_ + 4 * shards + (4 * shards if self.static_input_scale else 0)
        if k == "fp8_channel":
            return out * in_ + out * 4
        if k == "int4_awq":
            g = self.group
            return in_ * out // 2 + (in_ // g) * (out // 8) * 4 + (in_ // g) * out * 2
        if k == "int4_gptq":
            g = self.group
            return (in_ // 8) * out * 4 + (in_ // g) * (out // 8) * 4 + (in_ // g) * out * 2 + in_ * 4
        if k == "int4_ct":
            # compressed_tensors_wNa16.py: scales (and zero points) per group; with activation
            # reordering a row-parallel linear keeps the scales of the whole input on every rank
            g = self.group if self.group > 0 else in_
            groups = in_ // g
            if self.actorder and full_in and full_in != in_:
                groups = full_in // g
            zp = groups * (out // 8) * 4 if self.asymmetric else 0
            g_idx = in_ * 4 if self.actorder else 0
            return out * in_ // 2 + out * groups * b + 16 + zp + g_idx
        if k == "nvfp4":
            return out * in_ // 2 + out * (in_ // 16) + 8 * shards
        if k == "mxfp4":
            return out * in_ // 2 + out * (in_ // 32)
        raise AssertionError(k)

    def experts(self, n: int, hidden: int, inter: int, *, bias: bool = False,
                moe_tp: int = 1, swizzled_scales: Optional[bool] = None) -> int:
        """``n`` experts of gate_up (2*inter x hidden) + down (hidden x inter) on one rank, with
        ``inter`` the per-rank intermediate size, as the MoE quant method creates them."""
        b = self.dtype_bytes
        k = self.kind
        h, i = hidden, inter
        weights4 = 3 * i * h // 2  # packed 4-bit
        if k == "dense":
            return n * 3 * i * h * b
        if k == "fp8_block":
            bn, bk = self.block
            scales = ceil_div(2 * i, bn) * ceil_div(h, bk) + ceil_div(h, bn) * ceil_div(i, bk)
            return n * (3 * i * h + scales * 4)
        if k == "fp8_tensor":
            return n * (3 * i * h + 3 * 4 + (3 * 4 if self.static_input_scale else 0))
        if k == "fp8_channel":
            return n * (3 * i * h + (2 * i + h) * 4)
        if k in ("int4_awq", "int4_gptq"):
            g = self.group
            # awq/awq.py: the Marlin MoE layout when marlin_utils.py:check_moe_marlin_supports_layer
            # accepts the shape, else moe_wna16.py:MoeWNA16Method (uint8 packing, the group halved
            # until it divides both sizes)
            if h % 128 == 0 and i % max(64, g) == 0 and g in (-1, 32, 64, 128):
                zeros = ((h // g) * 2 * i + (i // g) * h) // 8 * 4
                scales = ((h // g) * 2 * i + (i // g) * h) * b
                g_idx = (h + i) * 4 if k == "int4_gptq" else 0
                return n * (weights4 + scales + zeros + g_idx)
            gw = g
            while i % gw or h % gw:
                gw //= 2
                if gw < 32:
                    return n * weights4  # sglang asserts here; the layout is not defined
            scales = (2 * i * (h // gw) + h * (i // gw)) * b
            zeros = (2 * i // 2 * (h // gw) + h // 2 * (i // gw)) if k == "int4_awq" else 0
            return n * (weights4 + scales + zeros)
        if k == "int4_ct":
            # compressed_tensors_wNa16_moe.py: with activation reordering the down-projection
            # scales cover the whole (unsharded) intermediate size
            g = self.group
            w2_k = i * moe_tp if self.actorder else i
            groups13, groups2 = (1, 1) if g <= 0 else (h // g, w2_k // g)
            scales = (groups13 * 2 * i + groups2 * h) * b
            zeros = (groups13 * 2 * i // 8 + groups2 * h // 8) * 4 if self.asymmetric else 0
            per = weights4 + scales + zeros + 2 * 2 * b + (h + i) * 4 * 2
            return n * per
        if k == "nvfp4":
            s13 = 2 * i * (h // 16)
            s2 = h * (i // 16)
            per = weights4 + s13 + s2 + 6 * 4
            # modelopt_quant.py ModelOptNvFp4FusedMoEMethod.create_weights: outside the FlashInfer
            # TRT-LLM runners a swizzled copy of the block scales (rows padded to 128, columns to
            # 4) is kept as well
            if swizzled_scales is not False:
                per += (ceil_div(2 * i, 128) * 128 * ceil_div(h // 16, 4) * 4
                        + ceil_div(h, 128) * 128 * ceil_div(i // 16, 4) * 4)
            return n * per
        if k == "mxfp4":
            w = weights4 + (2 * i * (h // 32)) + (h * (i // 32))
            return n * (w + ((2 * i + h) * 2 if bias else 0))
        raise AssertionError(k)


@dataclass
class Quantization:
    """The checkpoint's quantization as sglang reads it, reduced to byte layouts."""

    name: Optional[str]  # sglang's quantization name, None for an unquantized checkpoint
    linear: Scheme
    experts: Scheme
    excluded: tuple = ()  # module name patterns kept in the model dtype
    kv_cache_fp8: bool = False  # the checkpoint asks for an FP8 KV cache (kv_cache_quant_algo)
    note: Optional[str] = None


def _fp8_from_weights_cfg(w: dict, dtype_bytes: int) -> Optional[Scheme]:
    strategy = w.get("strategy")
    if strategy == "channel":
        return Scheme("fp8_channel", dtype_bytes)
    if strategy == "tensor":
        return Scheme("fp8_tensor", dtype_bytes)
    if strategy == "block":
        bs = w.get("block_structure") or [128, 128]
        return Scheme("fp8_block", dtype_bytes, block=tuple(bs))
    return None


def read_quantization(config: dict, shape: ModelShape, side_files: Optional[dict] = None,
                      override: Optional[str] = None) -> Quantization:
    """The quantization of a checkpoint: ``config.json``'s ``quantization_config`` or, failing that,
    ``hf_quant_config.json`` (ModelOpt), as sglang reads them (configs/model_config.py:
    _parse_quant_hf_config). ``override`` is the launch's ``--quantization`` for online schemes.
    Raises ``UnsupportedModel`` for a scheme whose layout is not modelled."""
    dense = Scheme("dense", shape.dtype_bytes)
    qc = config.get("quantization_config")
    side = (side_files or {}).get("hf_quant_config.json")
    if not isinstance(qc, dict) and isinstance(side, dict) and isinstance(side.get("quantization"), dict):
        qc = dict(side["quantization"], quant_method="modelopt")
    if not isinstance(qc, dict):
        if override in (None, "", "none"):
            return Quantization(None, dense, dense)
        if override in ("fp8", "w8a8_fp8"):
            s = Scheme("fp8_tensor", shape.dtype_bytes)
            return Quantization(override, s, s, note="online FP8: weights quantized per tensor at load")
        raise UnsupportedModel(f"--quantization {override} on an unquantized checkpoint is not modelled")
    method = str(qc.get("quant_method") or "").lower()
    b = shape.dtype_bytes
    if method == "fp8":
        block = qc.get("weight_block_size")
        static = qc.get("activation_scheme") == "static"
        s = (Scheme("fp8_block", b, block=tuple(block)) if block
             else Scheme("fp8_tensor", b, static_input_scale=static))
        excl = tuple(qc.get("modules_to_not_convert") or qc.get("ignored_layers") or ())
        return Quantization("fp8", s, s, excluded=excl)
    if method == "awq":
        g = int(qc.get("group_size") or 128)
        if int(qc.get("bits") or qc.get("w_bit") or 4) != 4:
            raise UnsupportedModel("AWQ with a bit width other than 4 is not modelled")
        s = Scheme("int4_awq", b, group=g)
        return Quantization("awq", s, s, excluded=tuple(qc.get("modules_to_not_convert") or ()))
    if method == "gptq":
        g = int(qc.get("group_size") or 128)
        if int(qc.get("bits") or 4) != 4 or g <= 0:
            raise UnsupportedModel("GPTQ other than 4-bit with a group size is not modelled")
        s = Scheme("int4_gptq", b, group=g)
        return Quantization("gptq", s, s)
    if method == "mxfp4":
        s = Scheme("mxfp4", b)
        return Quantization("mxfp4", dense, s,
                            excluded=tuple(qc.get("modules_to_not_convert") or ()),
                            note="MXFP4 experts; attention, router, embedding and LM head stay in the "
                                 "model dtype. Backend padding on Blackwell/AMD is not modelled")
    if method == "modelopt" or "quant_algo" in qc:
        algo = str(qc.get("quant_algo") or "").upper()
        kv_fp8 = str(qc.get("kv_cache_quant_algo") or "").upper() == "FP8"
        excl = tuple(qc.get("exclude_modules") or qc.get("ignore") or ())
        if algo == "FP8":
            s = Scheme("fp8_tensor", b, static_input_scale=True)
            return Quantization("modelopt_fp8", s, s, excluded=excl, kv_cache_fp8=kv_fp8)
        if algo == "NVFP4":
            s = Scheme("nvfp4", b, group=int(qc.get("group_size") or 16))
            return Quantization("modelopt_fp4", s, s, excluded=excl, kv_cache_fp8=kv_fp8)
        raise UnsupportedModel(f"ModelOpt quant_algo {algo or '?'} is not modelled")
    if method == "compressed-tensors":
        groups = qc.get("config_groups") or {}
        schemes = []
        for grp in groups.values():
            w = (grp or {}).get("weights") or {}
            bits, typ = w.get("num_bits"), w.get("type")
            if bits == 8 and typ == "float":
                s = _fp8_from_weights_cfg(w, b)
            elif bits == 4 and typ == "int" and w.get("strategy") in ("group", "channel"):
                g = int(w.get("group_size") or -1) if w.get("strategy") == "group" else -1
                order = w.get("actorder")
                s = Scheme("int4_ct", b, group=g, asymmetric=not w.get("symmetric", True),
                           actorder=bool(order) and order != "static")
            elif bits == 4 and typ == "float" and w.get("group_size") == 16:
                s = Scheme("nvfp4", b, group=16)
            else:
                s = None
            if s is None:
                raise UnsupportedModel("compressed-tensors scheme "
                                       f"{bits}-bit {typ} {w.get('strategy')} is not modelled")
            schemes.append(s)
        if len(set(schemes)) != 1:
            raise UnsupportedModel("compressed-tensors with several weight schemes is not modelled")
        return Quantization("compressed-tensors", schemes[0], schemes[0],
                            excluded=tuple(qc.get("ignore") or ()))
    if method == "quark":
        s = Scheme("mxfp4", b)
        return Quantization("quark", s, s, excluded=tuple(qc.get("exclude") or ()),
                            note="Quark OCP-MX FP4: packed FP4 + E8M0 group-32 scales")
    raise UnsupportedModel(f"quantization {method or '?'} is not modelled")


def is_excluded(name: str, patterns: tuple) -> bool:
    for p in patterns:
        p = str(p)
        if p == name or fnmatch.fnmatchcase(name, p) or name.startswith(p.rstrip("*") + ".") \
                or (p.endswith("*") and name.startswith(p[:-1])):
            return True
        # short forms ("lm_head", "gate", "self_attn") match any path component
        if "." not in p and "*" not in p and p in name.split("."):
            return True
    return False
