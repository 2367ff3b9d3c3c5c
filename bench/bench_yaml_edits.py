"""In-process cost of the language server's YAML re-check (sglang_lsp.engine.incremental.yaml) for
common kinds of edit on the 3,047-line manifest of bench_lsp.py: whether each is re-checked
incrementally or from scratch, and the median/max time of the re-check (ms), without the
server's own overhead. A benchmark, not a test: it prints numbers and never fails on them.

    python bench/bench_yaml_edits.py [TREE]   # TREE: a checkout whose server/ to measure
"""
import collections
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
TREE = Path(sys.argv[1]) if len(sys.argv) > 1 else HERE.parent
sys.path.insert(0, str(TREE / "server"))
sys.path.insert(0, str(HERE))
import bench_lsp as B  # noqa: E402
from sglang_lsp.engine.check import Options  # noqa: E402
from sglang_lsp.engine.incremental import recheck  # noqa: E402
from sglang_lsp.lsp.documents import TextChange, apply_changes, open_snapshot, with_tree  # noqa: E402

text = B.make_yaml(3000)
CMSERVE = """---
apiVersion: v1
kind: ConfigMap
metadata:
  name: sglang-serve
data:
  serve.yaml: |
    tp-size: 2
    mem-fraction-static: 0.85
    enable-metrics: true
---
apiVersion: apps/v1
kind: Deployment
metadata:
  name: with-config
spec:
  template:
    spec:
      containers:
        - name: server
          image: lmsysorg/sglang:v0.5.23
          command: ["python3", "-m", "sglang.launch_server"]
          args: ["--model-path", "meta-llama/Llama-3.1-8B-Instruct", "--config", "/etc/sglang/serve.yaml"]
          env:
            - name: HF_HOME
              value: /models
"""
opts = Options()


def run(label, text, edits, reps=9):
    snap = open_snapshot("file:///tmp/x.yaml", 1, text, "yaml")
    done = recheck(snap.doc, opts, None, None)
    snap = with_tree(snap, done.result.tree, "yaml")
    v = 2
    ts, incs = [], collections.Counter()
    for r in range(reps):
        for old, new, nth in edits:
            data = snap.doc.text
            i = -1
            for _ in range(nth + 1):
                i = data.index(old, i + 1)
            doc = snap.doc
            a = len(data[:i].encode()); b = a + len(old.encode())
            sl, sc = doc.byte_to_lsp(a, "utf-16"); el, ec = doc.byte_to_lsp(b, "utf-16")
            snap = apply_changes(snap, v, [TextChange(new, (sl, sc, el, ec))], "utf-16", "yaml"); v += 1
            t = time.perf_counter()
            done = recheck(snap.doc, opts, done.result, done.state, old_tree=snap.tree if done.state else None)
            ts.append(time.perf_counter() - t)
            snap = with_tree(snap, done.result.tree, "yaml")
            incs[done.incremental] += 1
    ts.sort()
    print("%-34s median %6.2f ms  max %6.2f  incremental %d/%d"
          % (label, ts[len(ts) // 2] * 1e3, ts[-1] * 1e3, incs[True], sum(incs.values())))


def swap(old, new, nth=0):
    """An edit and its undo (the nth occurrence of ``old``)."""
    return [(old, new, nth), (new, old, 0)]


SECRET = "---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n"
run("port value (same length)", text, swap('"30025"', '"30026"'))
run("type a char in args value", text, swap('"30025"', '"300251"'))
run("new args list item", text,
    swap('            - "30025"\n', '            - "30025"\n            - --enable-metrics\n'))
run("Service targetPort", text, swap("targetPort: 30025", "targetPort: 30026"))
run("ConfigMap plain data value", text, swap("LOG_LEVEL: info", "LOG_LEVEL: debug", 25))
run("Deployment name", text, swap("name: sglang-25\n", "name: sglang-2x\n"))
run("containerPort (unquoted)", text, swap("containerPort: 30025", "containerPort: 30026"))
run("comment line", text, [("  replicas: 1\n", "  replicas: 1\n  # note\n", 25), ("  # note\n", "", 0)])
run("new document ---", text, [("---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-25\n",
                               SECRET + "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc-25\n", 0),
                              (SECRET, "", 0)])
run("type '---' line", text, swap("  name: svc-25\n", "  name: svc-25\n---\n"))
ct = text + CMSERVE
run("cm: sglang config value", ct, swap("tp-size: 2", "tp-size: 4"))
run("cm: port value elsewhere", ct, swap('"30025"', '"30026"'))
run("cm: env value", ct, swap("value: /models\n", "value: /model\n"))
run("anchor in file: port", text.replace("  replicas: 1\n", "  replicas: &r 1\n", 1), swap('"30025"', '"30026"'))
