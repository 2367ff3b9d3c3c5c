#!/usr/bin/env python3
"""A second oracle case generator, independent of ``gen_cases.py``: other pools, other sampling.

``gen_cases.py`` draws combinations from hand-written pools of commonly used flags. This one
takes its flags from data instead, so that one generator's blind spots do not hide gaps:

* ``real``      a real launch command (``data/real_launches.jsonl``: flag sets of 600+ public
                launch commands, see ``mine_launches.py``; a repository's commands weigh
                1/sqrt(their number) each), its variables filled in, sometimes
                with a flag borrowed from another real command that shares a flag with it, or
                with one of its flags left out;
* ``enum``      every choice of every flag with choices in the bundled catalog
                (``server/sglang_lsp/catalog/data/catalogs/sglang-0.5.23.json``), in turn (N cases of
                this strategy cover all 676 choices once N passes that number), placed in the
                flags of a real command that uses the same flag when there is one;
* ``boundary``  a numeric flag of the catalog at a boundary value (0, 1, -1, odd numbers, powers
                of two, the largest int32, sizes that do not divide the model's heads/experts,
                fractions around 0 and 1), alone or next to a parallel layout;
* ``env``       an environment variable sglang 0.5.23 reads while it resolves a launch
                (``data/sglang-0.5.23-envs.json``, see ``extract_envs.py``) set to a value that
                changes behaviour (the other boolean, boundary numbers, the strings its readers
                compare it with), with flags whose names or choices share a word with it.

GPU profiles go round all 13 in turn (shuffled per round) and model fixtures round the 14 main
fixtures (plus a few ``dummy`` launches), except where a real command names its GPU or model
family. Deterministic for a ``--seed``; ids are ``w<seed>-<strategy>-<n>`` (gen_cases.py's are
``<letter><seed>-<n>``). Every case with a model gets ``stage: layers``; ``origin`` says where the
case came from (a repository path, ``dest=choice``, ``VAR=value``).

    python tools/oracle/gen_cases2.py --seed 2101 --n 4000 > /tmp/cases2.jsonl
"""

from __future__ import annotations

import argparse
import json
import random
import re
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
CATALOG = ROOT / "server" / "sglang_lsp" / "catalog" / "data" / "catalogs" / "sglang-0.5.23.json"
REAL = HERE / "data" / "real_launches.jsonl"
ENVS = HERE / "data" / "sglang-0.5.23-envs.json"

GPUS = ("A100", "L40S", "H100", "H200", "H20", "B200", "B300", "GB200", "GB300", "RTX_PRO_6000",
        "MI300X", "MI325X", "MI355X")
FIXTURES = ("deepseek-v3-fp8", "llama3-8b", "llama3-8b-gptq", "qwen3-0.6b", "qwen3-30b-a3b", "qwen3-30b-a3b-fp8",
            "qwen3-moe-awq", "qwen3-moe-ct-fp8", "qwen3-moe-ct-w4a16-g128", "qwen3-moe-ct-w4a16-g128-actorder",
            "qwen3-moe-ct-w4a16-g128-asym", "qwen3-moe-ct-w4a16-g16", "qwen3-moe-modelopt-nvfp4",
            "qwen3-moe-quark-mxfp4")
MOE_FIXTURES = tuple(f for f in FIXTURES if "qwen3-moe" in f or "a3b" in f or "deepseek" in f)
EAGLE_DRAFT = "{MODELS}/llama3-8b-eagle3"
SMALL_DRAFT = "{MODELS}/qwen3-0.6b"
LORA_ADAPTER = "{MODELS}/lora-llama3-8b"

STRATEGY_WEIGHTS = (("real", 35), ("enum", 25), ("boundary", 20), ("env", 20))

# Words in a path, model name or flag that name a GPU profile (the first match wins).
GPU_WORDS = (("gb300", "GB300"), ("gb200", "GB200"), ("b300", "B300"), ("b200", "B200"), ("mi355", "MI355X"),
             ("mi350", "MI355X"), ("mi325", "MI325X"), ("mi300", "MI300X"), ("h200", "H200"), ("h100", "H100"),
             ("h20", "H20"), ("a100", "A100"), ("l40", "L40S"), ("rtx", "RTX_PRO_6000"), ("aiter", "MI300X"),
             ("rocm", "MI300X"), ("amd", "MI300X"))
# Words in a model name → the fixture of that family (the first match wins).
MODEL_WORDS = (("mxfp4", "qwen3-moe-quark-mxfp4"), ("nvfp4", "qwen3-moe-modelopt-nvfp4"),
               ("fp4", "qwen3-moe-modelopt-nvfp4"), ("awq", "qwen3-moe-awq"), ("gptq", "llama3-8b-gptq"),
               ("w4a16", "qwen3-moe-ct-w4a16-g128"), ("deepseek", "deepseek-v3-fp8"), ("kimi", "deepseek-v3-fp8"),
               ("dsr1", "deepseek-v3-fp8"), ("dsv3", "deepseek-v3-fp8"), ("glm-5", "deepseek-v3-fp8"),
               ("a3b-fp8", "qwen3-30b-a3b-fp8"), ("fp8", "qwen3-30b-a3b-fp8"), ("a3b", "qwen3-30b-a3b"),
               ("a22b", "qwen3-30b-a3b"), ("a17b", "qwen3-30b-a3b"), ("minimax", "qwen3-30b-a3b"),
               ("gpt-oss", "qwen3-30b-a3b"), ("0.6b", "qwen3-0.6b"), ("1.7b", "qwen3-0.6b"), ("llama", "llama3-8b"),
               ("qwen", "llama3-8b"))

# Values a launch file typically gives a flag whose value is a variable there.
TYPICAL = {
    "tp_size": (1, 2, 4, 8), "dp_size": (1, 2, 4, 8), "ep_size": (1, 2, 4, 8), "pp_size": (1, 2),
    "attn_dp_size": (1, 2, 4, 8), "attn_cp_size": (1, 2, 4), "moe_dense_tp_size": (1,), "nnodes": (1, 2),
    "node_rank": (0, 1), "mem_fraction_static": (0.7, 0.8, 0.85, 0.88, 0.9, 0.95),
    "chunked_prefill_size": (2048, 4096, 8192, 16384, 32768, -1), "max_prefill_tokens": (8192, 16384, 32768),
    "max_running_requests": (16, 64, 128, 256, 512, 1024), "context_length": (4096, 32768, 131072),
    "page_size": (1, 16, 32, 64), "speculative_num_steps": (1, 2, 3, 4), "speculative_eagle_topk": (1, 2, 4, 8),
    "speculative_num_draft_tokens": (2, 4, 8, 16), "max_total_tokens": (65536, 262144, 1048576),
    "cuda_graph_max_bs_decode": (8, 64, 128, 256, 512), "stream_interval": (1, 10, 30),
    "ep_num_redundant_experts": (0, 16, 32), "dist_init_addr": ("10.0.0.1:5000",),
    "disaggregation_ib_device": ("mlx5_0",), "watchdog_timeout": (600, 3600),
}
INT_EDGES = (0, 1, -1, 2, 3, 5, 6, 7, 12, 24, 48, 96, 16, 64, 128, 256, 1000, 1024, 4096, 8192, 65536,
             1 << 20, (1 << 31) - 1, 10 ** 12)
FLOAT_EDGES = (0.0, 1e-6, 0.01, 0.5, 0.999, 1.0, 1.001, 1.5, 2.0, -0.5, -1.0, 100.0)
# Sizes against the fixtures' 32/128 attention heads, 4/8/128 KV heads, 128/256 experts: none
# of 3, 5, 6, 12, 24 divides them; 16 and 32 exceed some of them.
PARALLEL_EDGES = (("--tp-size", (3, 5, 6, 12, 16, 32)), ("--ep-size", (3, 6, 16, 32)), ("--dp-size", (3, 6, 16)),
                  ("--attn-cp-size", (3, 8)), ("--pp-size", (3, 8, 48, 96)), ("--moe-dp-size", (3, 16)))
# Flags whose values name files, templates or endpoints this machine does not have.
PATH_WORDS = ("path", "template", "_file", "_dir", "certfile", "keyfile", "url", "endpoint", "tokenizer")
# Words of an environment variable's name too common to relate it to a flag.
STOP_WORDS = {"SGLANG", "SGL", "ENABLE", "DISABLE", "USE", "NUM", "MAX", "MIN", "SIZE", "MODE", "OPT", "THE", "FOR",
              "PER", "DEFAULT", "FORCE", "ALLOW", "SKIP", "TOKENS", "RANK", "DTYPE", "BACKEND", "CHECK", "DEBUG",
              "LAYER", "BUFFER", "TIMEOUT", "CACHE", "FUSED", "FUSE", "KERNEL", "JIT", "PATH", "FILE", "DIR"}


class Catalog:
    """The bundled catalog, read as data."""

    def __init__(self, path: Path = CATALOG):
        self.options = [o for o in json.loads(path.read_text())["options"] if o["dest"] != "help"]
        self.by_flag = {s: o for o in self.options for s in o["option_strings"] if s.startswith("--")}
        self.by_dest = {}
        for o in self.options:
            self.by_dest.setdefault(o["dest"], o)

    def resolve(self, written: str):
        """The option ``written`` names (exactly, or as argparse's unique prefix), else None."""
        if written in self.by_flag:
            return self.by_flag[written]
        hits = [s for s in self.by_flag if s.startswith(written)]
        return self.by_flag[hits[0]] if len(hits) == 1 else None

    @staticmethod
    def long(o) -> str:
        return next(s for s in o["option_strings"] if s.startswith("--"))

    @staticmethod
    def is_switch(o) -> bool:
        return o["nargs"] == 0 or o["action"] in ("store_true", "store_false", "store_const", "boolean_optional") or (
            o["action"] == "custom" and o["type"] is None and o["nargs"] in (0, None) and o["choices"] is None
            and o["default"] in (False, None) and o["action_class"] != "LoRAPathAction")

    def enum_pairs(self):
        return [(o, c) for o in self.options if o["choices"] and not o["deprecated"] for c in o["choices"]]

    def numeric(self):
        return [o for o in self.options if o["type"] in ("int", "float", "human_int") and not o["choices"]
                and not o["deprecated"] and o["dest"] not in ("port", "nccl_port", "grpc_port")
                and not o["dest"].endswith("_port")]


def _load_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def _word_hit(text: str, table) -> str | None:
    text = (text or "").lower()
    return next((v for k, v in table if k in text), None)


class Generator:
    def __init__(self, seed: int):
        self.r = random.Random(seed)
        self.seed = seed
        self.cat = Catalog()
        self.real = _load_jsonl(REAL)
        self.envs = json.loads(ENVS.read_text())["envs"]
        # a repository with many near-identical commands (one per model) would otherwise dominate
        per_repo: dict[str, int] = {}
        for rec in self.real:
            per_repo[rec["repo"]] = per_repo.get(rec["repo"], 0) + 1
        self.real_weights = [per_repo[rec["repo"]] ** -0.5 for rec in self.real]
        self.real_by_dest: dict[str, list[dict]] = {}
        for rec in self.real:
            for written, _ in rec["flags"]:
                o = self.cat.resolve(written)
                if o is not None:
                    self.real_by_dest.setdefault(o["dest"], []).append(rec)
        pairs = self.cat.enum_pairs()
        self.r.shuffle(pairs)
        self.enum_queue = pairs
        self.enum_next = 0
        self.numeric = self.cat.numeric()
        self.env_names = sorted(self.envs)
        self.r.shuffle(self.env_names)
        self.env_next = 0
        self.gpu_round: list[str] = []
        self.model_round: list[str | None] = []

    # -- rotations ------------------------------------------------------------------------------
    def next_gpu(self) -> str:
        if not self.gpu_round:
            self.gpu_round = list(GPUS)
            self.r.shuffle(self.gpu_round)
        return self.gpu_round.pop()

    def next_model(self) -> str | None:
        if not self.model_round:
            self.model_round = list(FIXTURES) + [None]
            self.r.shuffle(self.model_round)
        return self.model_round.pop()

    # -- values ---------------------------------------------------------------------------------
    def typical_value(self, o):
        dest = o["dest"]
        if dest in TYPICAL:
            return self.r.choice(TYPICAL[dest])
        if o["choices"]:
            return self.r.choice(o["choices"])
        if o["type"] in ("int", "human_int"):
            return o["default"] if isinstance(o["default"], int) and self.r.random() < 0.5 else self.r.choice((1, 8, 64))
        if o["type"] == "float":
            return o["default"] if isinstance(o["default"], float) and self.r.random() < 0.5 else self.r.choice((0.1, 0.5, 0.9))
        return None

    def flag_args(self, o, value) -> list[str]:
        """argv words for option ``o`` with ``value`` (None: leave the option out)."""
        if self.cat.is_switch(o):
            return [self.cat.long(o)]
        if value is None:
            return []
        if o["nargs"] in ("+", "*") and isinstance(value, (list, tuple)):
            return [self.cat.long(o)] + [str(v) for v in value]
        return [self.cat.long(o), str(value)]

    def special_value(self, o, value, model):
        """File-like values replaced by fixtures; None when the flag cannot be given here."""
        dest = o["dest"]
        if dest == "speculative_draft_model_path":
            return SMALL_DRAFT if model in ("qwen3-0.6b",) else EAGLE_DRAFT
        if dest == "lora_paths":
            return f"a={LORA_ADAPTER}"
        if any(w in dest for w in PATH_WORDS) or o["type"] in ("json", "json_list", "cuda_graph_config"):
            return value if isinstance(value, str) and value.startswith(("{", "[")) else None
        return value

    # -- strategies -----------------------------------------------------------------------------
    def real_flags(self, rec, model, keep_as_written: float = 0.15) -> list[str]:
        argv: list[str] = []
        for written, value in rec["flags"]:
            o = self.cat.resolve(written)
            if o is None:
                # an option 0.5.23 does not have (or an ambiguous abbreviation): kept now and then
                if self.r.random() < 0.1:
                    argv += [written] + ([] if value is True or value is None else [str(value)])
                continue
            if o["dest"] in ("host", "port", "served_model_name", "model_path"):
                continue
            if not self.cat.is_switch(o):
                if value is None or value is True:
                    value = self.typical_value(o)
                value = self.special_value(o, value, model)
                if value is None:
                    continue
                name = written if self.r.random() < keep_as_written else self.cat.long(o)
                argv += [name, str(value)]
            else:
                argv.append(written if self.r.random() < keep_as_written else self.cat.long(o))
        return argv

    def real_case(self):
        rec = self.r.choices(self.real, self.real_weights)[0]
        hint = " ".join(filter(None, [rec.get("model"), rec["path"],
                                      " ".join(str(v) for _, v in rec["flags"] if isinstance(v, str))]))
        model = _word_hit(hint, MODEL_WORDS) if self.r.random() < 0.75 else None
        model = model or self.next_model()
        gpu = _word_hit(hint, GPU_WORDS) if self.r.random() < 0.6 else None
        gpu = gpu or self.next_gpu()
        argv = self.real_flags(rec, model)
        if self.r.random() < 0.3 and argv:  # leave one option out
            starts = [i for i, a in enumerate(argv) if a.startswith("--")]
            i = self.r.choice(starts)
            j = i + 1
            while j < len(argv) and not argv[j].startswith("--"):
                j += 1
            argv = argv[:i] + argv[j:]
        if self.r.random() < 0.5:  # borrow a flag from another command that shares one with this one
            dests = [o["dest"] for o in (self.cat.resolve(w) for w, _ in rec["flags"]) if o is not None
                     and o["dest"] not in ("host", "port", "served_model_name", "trust_remote_code")]
            if dests:
                other = self.r.choice(self.real_by_dest[self.r.choice(dests)])
                extra = [(w, v) for w, v in other["flags"] if self.cat.resolve(w) is not None
                         and self.cat.resolve(w)["dest"] not in {self.cat.resolve(x)["dest"] for x in argv
                                                                   if x.startswith("--") and self.cat.resolve(x)}]
                if extra:
                    argv += self.real_flags({"flags": [self.r.choice(extra)]}, model, 0.0)
        env = {k: v for k, v in rec.get("env", {}).items() if v is not None}
        return argv, gpu, model, env, f"{rec['repo']}/{rec['path']}:{rec['line']}"

    def enum_case(self):
        o, choice = self.enum_queue[self.enum_next % len(self.enum_queue)]
        self.enum_next += 1
        model = self.next_model()
        gpu = self.next_gpu()
        argv: list[str] = []
        if self.r.random() < 0.5 and self.real_by_dest.get(o["dest"]):
            rec = self.r.choice(self.real_by_dest[o["dest"]])
            argv = self.real_flags({"flags": [fv for fv in rec["flags"]
                                              if (self.cat.resolve(fv[0]) or {}).get("dest") != o["dest"]]}, model, 0.0)
        elif self.r.random() < 0.5:
            argv = self.layout()
        value = self.special_value(o, choice, model)
        if value is None:
            value = choice
        if o["nargs"] in ("+", "*"):
            value = [value]
        argv += self.flag_args(o, value) or [self.cat.long(o), str(choice)]
        return argv, gpu, model, self.aiter_env(gpu), f"{o['dest']}={choice}"

    def layout(self) -> list[str]:
        """A parallel layout as launch files write it."""
        tp = self.r.choice((1, 2, 4, 8))
        out = ["--tp-size", str(tp)]
        roll = self.r.random()
        if roll < 0.25:
            out += ["--ep-size", str(tp)]
        elif roll < 0.4:
            out += ["--dp-size", str(self.r.choice((2, tp))), "--enable-dp-attention"]
        elif roll < 0.5:
            out += ["--attn-dp-size", str(self.r.choice((2, tp)))]
        return out

    def boundary_case(self):
        model = self.next_model()
        gpu = self.next_gpu()
        argv: list[str] = []
        if self.r.random() < 0.3:
            flag, values = self.r.choice(PARALLEL_EDGES)
            value = self.r.choice(values)
            argv += [flag, str(value)]
            if flag != "--tp-size" and self.r.random() < 0.6:
                argv += ["--tp-size", str(self.r.choice((1, 2, 4, 8)))]
            if self.r.random() < 0.3:
                argv += ["--enable-dp-attention"]
            if flag in ("--ep-size", "--moe-dp-size") and model not in MOE_FIXTURES:
                model = self.r.choice(MOE_FIXTURES)
            return argv, gpu, model, self.aiter_env(gpu), f"{flag[2:].replace('-', '_')}={value}"
        o = self.r.choice(self.numeric)
        if o["type"] == "float":
            value = self.r.choice(FLOAT_EDGES)
        else:
            value = self.r.choice(INT_EDGES + ((o["default"] + 1, o["default"] - 1) if isinstance(o["default"], int)
                                               and not isinstance(o["default"], bool) else ()))
        if self.r.random() < 0.4:
            argv += self.layout()
        argv += self.flag_args(o, [value] if o["nargs"] in ("+", "*") else value)
        return argv, gpu, model, self.aiter_env(gpu), f"{o['dest']}={value}"

    def env_value(self, name: str):
        info = self.envs[name]
        kind, default, compared = info["kind"], info["default"], info["compared_with"]
        if kind.startswith("EnvBool"):
            return "0" if default is True else "1"
        if kind.startswith("EnvInt"):
            return str(self.r.choice((0, 1, -1, 2, 7, 64, 128, 1024, 4096, 65536)
                                     + ((default + 1, default - 1, default * 2) if isinstance(default, int) else ())))
        if kind == "EnvFloat":
            return str(self.r.choice((0.0, -1.0, 0.5, 1.0, 100.0)))
        if compared:
            return self.r.choice(compared)
        if kind.startswith("EnvStr"):
            return self.r.choice(("1", "0", "auto", "none"))
        return self.r.choice(("1", "0"))

    def related_flags(self, name: str, model) -> list[str]:
        """Flags that share a word with the variable's name: a flag whose choice is that word is
        set to it; otherwise a flag whose name holds it gets a typical value."""
        words = [w.lower() for w in name.split("_") if len(w) >= 3 and w not in STOP_WORDS]
        joined = [a + b for a, b in zip(words, words[1:])]  # MEGA_MOE → megamoe
        candidates = []
        for o in self.cat.options:
            if o["deprecated"]:
                continue
            for c in o["choices"] or ():
                if isinstance(c, str) and (c.lower() in words or c.lower().replace("_", "") in joined):
                    candidates.append((o, c))
        argv: list[str] = []
        if candidates:
            o, c = self.r.choice(candidates)
            argv += self.flag_args(o, c)
        named = [o for o in self.cat.options if not o["deprecated"] and any(w in o["dest"].split("_") for w in words)]
        if named and self.r.random() < 0.6:
            o = self.r.choice(named)
            value = self.special_value(o, self.typical_value(o), model)
            argv += self.flag_args(o, value)
        return argv

    def env_case(self):
        name = self.env_names[self.env_next % len(self.env_names)]
        self.env_next += 1
        model = self.next_model()
        gpu = self.next_gpu()
        value = self.env_value(name)
        argv = self.related_flags(name, model)
        if self.r.random() < 0.4:
            argv += self.layout()
        env = dict(self.aiter_env(gpu))
        env[name] = value
        return argv, gpu, model, env, f"{name}={value}"

    def aiter_env(self, gpu: str) -> dict:
        """ROCm images commonly set SGLANG_USE_AITER=1; half of the AMD cases do."""
        return {"SGLANG_USE_AITER": "1"} if gpu.startswith("MI") and self.r.random() < 0.5 else {}

    # -- cases ----------------------------------------------------------------------------------
    def cases(self, n: int, prefix: str):
        names = [s for s, _ in STRATEGY_WEIGHTS]
        weights = [w for _, w in STRATEGY_WEIGHTS]
        makers = {"real": self.real_case, "enum": self.enum_case, "boundary": self.boundary_case, "env": self.env_case}
        seen = set()
        i = 0
        attempts = 0
        while i < n and attempts < n * 20:
            attempts += 1
            strategy = self.r.choices(names, weights)[0]
            argv, gpu, model, env, origin = makers[strategy]()
            key = json.dumps([argv, gpu, model, env], sort_keys=True)
            if key in seen:
                continue
            seen.add(key)
            case = {"id": f"{prefix}{self.seed}-{strategy}-{i:05d}", "argv": argv, "hardware": gpu, "model": model}
            if env:
                case["env"] = env
            if model is not None:
                case["stage"] = "layers"
            case["origin"] = origin
            yield case
            i += 1


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--n", type=int, default=1000)
    ap.add_argument("--prefix", default="w", help="id prefix (default w: w<seed>-<strategy>-<n>)")
    a = ap.parse_args()
    if a.n < 1:
        ap.error("--n must be positive")
    for case in Generator(a.seed).cases(a.n, a.prefix):
        print(json.dumps(case))


if __name__ == "__main__":
    main()
