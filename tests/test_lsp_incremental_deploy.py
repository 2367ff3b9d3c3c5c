"""The incremental re-check of a script takes over what the previous check derived from each
unchanged launch — its placement (what the script says around it), the values inferred from
that, its deployment facts and findings — and still gives what a check from scratch gives.

What those depend on is edited here on purpose, one version after the other, on scripts with
many launches and multi-node groups: Slurm's GPU lines, `CUDA_VISIBLE_DEVICES` exports and
prefixes, text elsewhere that only looks like an export or an assignment, `docker run` GPUs,
ports and images, node ranks, `--nnodes`, `--dist-init-addr`, model paths and `--tp`; and
each version is compared with a check of its text from scratch. Other tests show that the
carried facts are taken where nothing they read changed (so the comparison is not passed by
always computing them again)."""

from __future__ import annotations

import os
import random
import re

import pytest

from sglang_lsp.checks import deployment as deployment_checks
from sglang_lsp.base.document import Document
from sglang_lsp.engine.check import Options, check_document
from sglang_lsp.engine.incremental import recheck

pytest.importorskip("pygls")

from sglang_lsp.lsp.documents import TextChange, apply_changes, open_snapshot, with_tree  # noqa: E402
from test_lsp_incremental import _same  # noqa: E402

SEEDS = int(os.environ.get("SGLANG_LSP_INCREMENTAL_SEEDS", "12"))

MULTI = """#!/bin/bash
#SBATCH --nodes=2
#SBATCH --gres=gpu:h100:8
MODEL=deepseek-ai/DeepSeek-V3
IMG=lmsysorg/sglang:v0.5.23-cu129
export CUDA_VISIBLE_DEVICES=0,1,2,3
echo "starting on $(hostname)"
python3 -m sglang.launch_server --model-path "$MODEL" --tp 16 --nnodes 2 --node-rank 0 --dist-init-addr 10.0.0.1:5000 --port 30000 &
python3 -m sglang.launch_server --model-path "$MODEL" --tp 16 --nnodes 2 --node-rank 1 --dist-init-addr 10.0.0.2:5000 --port 30000 &
python3 -m sglang.launch_server --model-path "$MODEL" --tp 8 --nnodes 2 --node-rank 2 --dist-init-addr 10.0.0.1:5000 &
CUDA_VISIBLE_DEVICES=0,1 python3 -m sglang.launch_server --model-path "$MODEL" --tp 4 --port 30001 &
docker run --gpus 2 -p 30002:30002 "$IMG" python3 -m sglang.launch_server --model-path "$MODEL" --tp 4 --host 127.0.0.1 --port 30002
docker run --gpus '"device=0,1"' --ipc=host lmsysorg/sglang:v0.5.23-rocm630 python3 -m sglang.launch_server --model-path m --tp 2 --host 127.0.0.1
python3 -m sglang.launch_server --model-path "$MODEL" --tp 2 --dp-size 2 --base-gpu-id 2 --port 30003 &
if [[ -n "$LEADER" ]]; then
  python3 -m sglang.launch_server --model-path /models/llama --tp 8 --nnodes 2 --node-rank 0 --dist-init-addr 10.0.0.9:5000
else
  python3 -m sglang.launch_server --model-path /models/llama --tp 8 --nnodes 2 --node-rank 1 --dist-init-addr 10.0.0.8:5000
fi
wait
"""
# two nodes of one group started by one script, with different addresses (SGL058) on the
# second export; more launches after them, so most of an edit's re-check is reuse
NODES = """#!/bin/bash
#SBATCH --gpus-per-node=8
export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7
python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 8 --nnodes 2 --node-rank 0 --dist-init-addr 10.1.0.1:20000 &
python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size 8 --nnodes 2 --node-rank 1 --dist-init-addr 10.1.0.2:20000 &
export CUDA_VISIBLE_DEVICES=0,1
""" + "".join(f"python -m sglang.launch_server --model-path Qwen/Qwen3-8B --tp-size {tp} --port {30000 + i} &\n"
              for i, tp in enumerate([1, 2, 4, 2, 1, 8, 2, 1])) + "wait\n"
# Slurm's GPU lines decide the GPU count (no CUDA_VISIBLE_DEVICES) and type of every launch
SLURM = """#!/bin/bash
#SBATCH --nodes=1
#SBATCH --gres=gpu:h100:4
python3 -m sglang.launch_server --model-path m --tp-size 8 --kv-cache-dtype fp4_mx_block16 --port 30000 &
python3 -m sglang.launch_server --model-path m --tp-size 4 --port 30001 &
sleep 5
python3 -m sglang.launch_server --model-path m --tp-size 2 --quantization fp8 --port 30002 &
python3 -m sglang.launch_server --model-path m --tp-size 1 --kv-cache-dtype fp8_e4m3 --port 30003 &
python3 -m sglang.launch_server --model-path m --tp-size 4 --nnodes 2 --node-rank 0 --dist-init-addr 10.2.0.1:5000 &
python3 -m sglang.launch_server --model-path m --tp-size 4 --nnodes 2 --node-rank 1 --dist-init-addr 10.2.0.1:5000 &
wait
"""
TEXTS = [MULTI, NODES, SLURM]

# edits of exactly what a launch's carried facts read: (pattern, replacements of group 1)
TARGETED = [
    (r"gpu:h100:(\d+)", ["1", "2", "4", "8", "16"]),
    (r"--gpus-per-node=(\d+)", ["2", "4", "8"]),
    (r"#SBATCH --(gres)=", ["gpus-per-node", "gres", "ntasks"]),
    (r"--gres=gpu:(h100)", ["mi300x", "b200", "a100"]),
    (r"#SBATCH (--nodes=1)", ["--nodes=1", "--gres=gpu:mi300x:2", "--gpus-per-node=2"]),
    (r"--tp(?:-size)? (\d+)", ["1", "2", "4", "8", "16"]),
    (r"--nnodes (\d+)", ["1", "2", "3"]),
    (r"--node-rank (\d+)", ["0", "1", "2"]),
    (r"--dist-init-addr ([\d.]+):", ["10.0.0.1", "10.0.0.2", "10.1.0.1", "10.1.0.2"]),
    (r"--model-path (\S+)", ['"$MODEL"', "Qwen/Qwen3-8B", "/models/llama", "m"]),
    (r"--port (\d+)", ["30000", "30001", "30002"]),
    (r"--host (\S+)", ["0.0.0.0", "127.0.0.1", "localhost"]),
    (r"--gpus (\S+)", ["1", "2", "4", "all", "'\"device=0,1,2\"'"]),
    (r" (-p 30002:30002) ", ["-p 30002:30002", "--net host", "--shm-size 8g"]),
    (r"--base-gpu-id (\d+)", ["0", "2", "6"]),
    (r"--dp-size (\d+)", ["1", "2", "4"]),
    (r"CUDA_VISIBLE_DEVICES=(\S+) python3", ["0", "0,1", "0,1,2,3", "$GPUS"]),
    (r"sglang:(v0\.5\.23)-rocm", ["v0.5.20", "v0.4.9", "latest"]),
    (r"echo \"(starting)", ["starting", "export CUDA_VISIBLE_DEVICES=0", "IMG=lmsysorg/sglang:v0.5.20",
                            "CUDA_VISIBLE_DEVICES=1"]),
]
# whole statements inserted at a line start: text that only looks like an export or an
# assignment (read by the deployment facts' text searches), comments, Slurm lines, real
# exports and assignments (checked from scratch), a launch
LINES = ["echo export CUDA_VISIBLE_DEVICES=0\n", "echo IMG=lmsysorg/sglang:v0.5.20-rocm630\n",
         "echo CUDA_VISIBLE_DEVICES=5\n", "# export CUDA_VISIBLE_DEVICES=0,1\n", "#SBATCH --gres=gpu:a100:2\n",
         "#SBATCH --gres=gpu:mi300x:2\n", "#SBATCH --gpus-per-node=16\n",
         "export CUDA_VISIBLE_DEVICES=0\n", "IMG=lmsysorg/sglang:v0.5.21\n", "sleep 1\n", "\n",
         "echo export CUDA_VISIBLE_DEVICES=0,1; python3 -m sglang.launch_server --model-path m --tp 4 &\n",
         'echo IMG=lmsysorg/sglang:v0.5.9; docker run --gpus 1 "$IMG" python3 -m sglang.launch_server --tp 2\n',
         ("python3 -m sglang.launch_server --model-path m --tp 2 --nnodes 2 --node-rank 1 "
          "--dist-init-addr 10.0.0.1:5000 &\n")]


def _edit(rng: random.Random, text: str) -> tuple[int, int, str]:
    """A random edit (byte range and new text) of ``text``: a targeted value, or a line."""
    data = text.encode()
    if rng.random() < 0.7:
        choices = [(m, options) for pattern, options in TARGETED for m in re.finditer(pattern.encode(), data)]
        if choices:
            m, options = rng.choice(choices)
            return m.start(1), m.end(1), rng.choice(options)
    starts = [m.end() for m in re.finditer(rb"\n", data) if m.end() < len(data)]
    at = rng.choice(starts)
    return at, at, rng.choice(LINES)


def _apply(snap, version: int, a: int, b: int, new: str):
    doc = snap.doc
    sl, sc = doc.byte_to_lsp(a, "utf-16")
    el, ec = doc.byte_to_lsp(b, "utf-16")
    return apply_changes(snap, version, [TextChange(new, (sl, sc, el, ec))], "utf-16", "shellscript")


class _Counted:
    """Counts the launches whose own deployment findings a check computes (the others' are
    carried over from the previous check)."""

    def __init__(self, monkeypatch):
        self.computed = 0
        own = deployment_checks._own_findings

        def counting(launch, doc):
            self.computed += 1
            return own(launch, doc)

        monkeypatch.setattr(deployment_checks, "_own_findings", counting)


@pytest.mark.parametrize("seed", range(SEEDS))
def test_edits_of_what_deployment_facts_read_equal_a_check_from_scratch(seed, monkeypatch):
    """Random edits of GPU counts, Slurm lines, exports (and text that looks like one), ports,
    images, node ranks, addresses, model paths and parallelism, each version re-checked from
    the previous one: findings, launches and parses equal those of a check from scratch; and
    most launches' deployment facts were carried over, not computed again."""
    rng = random.Random(seed)
    text = TEXTS[seed % len(TEXTS)]
    options = Options()
    counted = _Counted(monkeypatch)
    snap = open_snapshot("file:///tmp/inc/deploy.sh", 1, text, "shellscript")
    done = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, done.result.tree, "shell")
    incremental = launches = carried = 0
    undo, undo_text = None, ""
    for version in range(2, 60):
        if undo is not None and rng.random() < 0.4:  # typing and deleting again
            (a, b), new, undo = undo, undo_text, None
        else:
            a, b, new = _edit(rng, snap.doc.text)
            undo, undo_text = (a, a + len(new.encode())), snap.doc.data[a:b].decode()
        snap = _apply(snap, version, a, b, new)
        counted.computed = 0
        done = recheck(snap.doc, options, done.result, done.state, old_tree=snap.tree)
        if done.incremental:
            incremental += 1
            launches += len(done.result.launch_parses)
            carried += len(done.result.launch_parses) - counted.computed
        fresh = check_document(Document(snap.doc.text, snap.doc.path, "shell"), options)
        _same(done.result, fresh)
        snap = with_tree(snap, done.result.tree, "shell")
    assert incremental > 20
    assert carried > launches // 3


def _check_from(text: str, old: str, new: str, options: Options | None = None, count: int = 1):
    """A check of ``text``, then of ``text`` with ``old`` replaced by ``new`` (its ``count``-th
    occurrence), re-checked from the first: the two results and the check from scratch."""
    options = options or Options()
    snap = open_snapshot("file:///tmp/inc/deploy.sh", 1, text, "shellscript")
    first = recheck(snap.doc, options, None, None)
    snap = with_tree(snap, first.result.tree, "shell")
    at = -1
    for _ in range(count):
        at = text.index(old, at + 1)
    while old and new and old[0] == new[0]:  # only what differs is sent, as an editor does
        at, old, new = at + 1, old[1:], new[1:]
    while old and new and old[-1] == new[-1]:
        old, new = old[:-1], new[:-1]
    a = len(text[:at].encode())
    snap = _apply(snap, 2, a, a + len(old.encode()), new)
    second = recheck(snap.doc, options, first.result, first.state, old_tree=snap.tree)
    fresh = check_document(Document(snap.doc.text, snap.doc.path, "shell"), options)
    _same(second.result, fresh)
    return first, second, fresh


def _launches(result) -> dict:
    return result.document.derived["deployment_launches"]


def test_an_unchanged_launch_keeps_its_deployment_facts():
    """Changing one launch's port keeps every other launch's placement and deployment facts:
    the same objects (the edit keeps the length), or moved ones (it does not), found again by
    no search; the whole-file checks see the edited launch's new value."""
    first, second, _ = _check_from(NODES, "--port 30003", "--port 30004")
    assert second.incremental
    before, after = _launches(first.result), _launches(second.result)
    edited = next(i for i in second.result.invocations if any(w.text == "30004" for w in i.args))
    kept = [after[id(inv)] for inv in second.result.invocations if inv is not edited and id(inv) in after]
    assert len(kept) == len(after) - 1 == 9
    assert all(launch in before.values() for launch in kept)  # the very objects

    _, third, _ = _check_from(NODES, "--port 30003", "--port 300004")  # one byte longer
    assert third.incremental
    moved = [launch for inv, launch in _launches(third.result).items()
             if launch.inv.span.start > NODES.index("--port 30003")]
    assert moved and all(launch.own is not None and launch not in before.values() for launch in moved)


def test_slurm_gpu_lines_are_read_again():
    """An edit of `#SBATCH --gres` (a comment: no variable assigned, re-checked incrementally)
    changes the GPU count and the GPU every launch is inferred to run on: nothing is carried."""
    first, second, fresh = _check_from(NODES.replace("--gpus-per-node=8", "--gres=gpu:h100:8")
                                       .replace("export CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7\n", ""),
                                       "h100:8", "h100:2")
    assert second.incremental
    assert [f.code for f in fresh.findings].count("SGL050") >= 3
    assert not any(launch in _launches(first.result).values() for launch in _launches(second.result).values())


def test_text_that_looks_like_an_export_moves_what_a_finding_points_at():
    """`echo export CUDA_VISIBLE_DEVICES=…` is no export, but the search for where the value of
    `CUDA_VISIBLE_DEVICES` is written finds it: the related range of SGL050 moves to it, as in
    a check from scratch."""
    first, second, fresh = _check_from(NODES, "export CUDA_VISIBLE_DEVICES=0,1\n",
                                       "export CUDA_VISIBLE_DEVICES=0,1\necho export CUDA_VISIBLE_DEVICES=9\n")
    assert second.incremental
    text = second.result.document.text
    echo = len(text[:text.index("=9")].encode()) + 1
    export = len(NODES[:NODES.index("=0,1\n")].encode()) + 1
    before = [r.start for f in first.result.findings if f.code == "SGL050" for r, _ in f.related]
    now = [r.start for f in fresh.findings if f.code == "SGL050" for r, _ in f.related]
    assert export in before and echo in now and export not in now


def test_an_image_variable_read_again_after_text_that_looks_like_its_assignment():
    """`$IMG` of `docker run` is read from the last `IMG=` written before the launch: text that
    only looks like one changes the image, and so the release inferred for the launch."""
    _, second, _ = _check_from(MULTI, 'echo "starting on $(hostname)"',
                                       "echo IMG=lmsysorg/sglang:v0.5.20-rocm630")
    assert second.incremental
    where = [launch.where for launch in _launches(second.result).values()
             if launch.where is not None and launch.where.image is not None]
    assert any(w.image.text == "lmsysorg/sglang:v0.5.20-rocm630" for w in where)


@pytest.mark.parametrize("old, new, code", [
    ("--node-rank 1 --dist-init-addr 10.1.0.2", "--node-rank 0 --dist-init-addr 10.1.0.1", "SGL059"),
    ("--dist-init-addr 10.1.0.2", "--dist-init-addr 10.1.0.1", None),
    ("--node-rank 1 --dist-init-addr 10.1.0.2", "--node-rank 2 --dist-init-addr 10.1.0.2", "SGL057"),
])
def test_a_multi_node_group_is_checked_again_from_carried_launches(old, new, code):
    """The checks across launches (ranks, addresses, group sizes) are made again from the
    carried launches and the edited one."""
    first, second, fresh = _check_from(NODES, old, new)
    assert second.incremental
    codes = {f.code for f in fresh.findings}
    assert "SGL058" in {f.code for f in first.result.findings}  # the two addresses differ
    if code is not None:
        assert code in codes
    else:
        assert "SGL058" not in codes
