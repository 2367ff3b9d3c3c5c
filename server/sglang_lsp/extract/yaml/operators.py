"""Operators and CRDs that run sglang in groups of pods, and objects that hold a launch without
being a container: which pods a container's launch runs on, and the launches of an llmaz
``BackendRuntime`` or any other object with a ``command`` list.

Groups (one multi-node launch: a leader pod, rank 0, and worker pods; facts from each project's
API types):

* **LeaderWorkerSet** (``leaderWorkerTemplate``: ``size`` pods, ``leaderTemplate`` for the leader,
  ``workerTemplate`` for the others, or for all when there is no leader template) and the llmaz
  ``Service`` (``workloadTemplate``: the same LeaderWorkerTemplate; llmaz creates a
  LeaderWorkerSet from it). The controller sets ``LWS_GROUP_SIZE`` to ``size``.
* **RBG** ``RoleBasedGroup`` v1alpha2 (``roles[].leaderWorkerPattern``: ``size`` pods in all, a
  ``template`` or ``templateRef.patch`` every pod runs, ``leaderTemplatePatch`` /
  ``workerTemplatePatch`` for one side; RBG sets ``RBG_LWP_GROUP_SIZE`` to ``size``,
  ``RBG_LWP_WORKER_INDEX`` to the pod's index, 0 on the leader) and v1alpha1
  (``roles[].leaderWorkerSet``: ``size``, ``patchLeaderTemplate``, ``patchWorkerTemplate``, the role's
  ``template`` for all; a LeaderWorkerSet workload, so ``LWS_*``). A patch container of the same
  name with its own ``command`` or ``args`` takes that side's pods from the template's container.
* **OME** ``ClusterServingRuntime`` / ``ServingRuntime`` / ``InferenceService``
  (``engineConfig``/``decoderConfig`` or ``engine``/``decoder`` with ``leader`` and ``worker``, each with
  a ``runner`` container; a LeaderWorkerSet of ``worker.size`` + 1 pods: ome
  ``lws_reconciler.go``), and its older form (``spec.containers`` with ``spec.workers``).
* **KServe** ``ServingRuntime`` / ``InferenceService`` multi-node (``workerSpec.containers`` are the
  workers, the containers next to ``workerSpec`` the head).

Launch holders: an object with a ``command`` list that is no container of the above and no
Compose service (a CRD's own field) is read like a container (``command`` + ``args``, ``env`` /
``envs``). An llmaz ``BackendRuntime`` is one launch per ``recommendedConfigs`` entry: its
``command`` followed by that entry's ``args`` (llmaz runs the one a Playground names).
"""

from __future__ import annotations

import bisect
import re

import tree_sitter as ts

from ...base.findings import Record, Span

# a `command:` key at the start of a line (an object that may hold a launch)
COMMAND_KEY = re.compile(rb"^[ \t]*(?:- )*[\"']?(command)[\"']?[ \t]*:", re.M)
COMMAND_TEXT = (b"command",)


class Group(Record):
    """The group of pods a container's launch runs in: the operator (``kind``), where its
    definition starts (the group's identity), which of its pods run the container (``leader``,
    ``worker`` or ``all``), its size as the file says it (digits, or ``None``) with the range it
    is read from, and the variable the operator sets to that size."""

    __slots__ = _fields = ("kind", "start", "role", "size", "size_span", "size_variable")

    def __init__(self, kind: str, start: int, role: str, size: str | None = None, size_span: Span | None = None,
                 size_variable: str | None = None):
        self.kind = kind  # lws | llmaz | rbg | rbg-lws | ome | kserve
        self.start = start
        self.role = role
        self.size = size
        self.size_span = size_span
        self.size_variable = size_variable


# what each group's size is called in messages, and where a worker pod's index comes from
GROUP_SIZE_NAMES = {"lws": "LeaderWorkerSet `size`", "llmaz": "llmaz `workloadTemplate.size`",
                    "rbg": "RoleBasedGroup `leaderWorkerPattern.size`",
                    "rbg-lws": "RoleBasedGroup `leaderWorkerSet.size`",
                    "ome": "OME `worker.size` + 1", "statefulset": "StatefulSet `replicas`"}
WORKER_INDEX = {"lws": "`$(LWS_WORKER_INDEX)`", "llmaz": "`$(LWS_WORKER_INDEX)`", "rbg": "`$(RBG_LWP_WORKER_INDEX)`",
                "rbg-lws": "`$(LWS_WORKER_INDEX)`", "ome": "`$(LWS_WORKER_INDEX)`",
                "statefulset": "the pod index (`apps.kubernetes.io/pod-index` label)"}

# keys that only a group's definition has on the way to its containers
_GROUP_KEYS = frozenset(("leaderWorkerTemplate", "workloadTemplate", "leaderWorkerPattern", "leaderWorkerSet",
                         "engineConfig", "decoderConfig", "engine", "decoder", "workers", "workerSpec"))


class OperatorReader:
    """Mixin of the YAML extractor (see :class:`~sglang_lsp.extract.yaml.tree.YamlTree`)."""

    def key_chain(self, node: ts.Node) -> list[tuple[str, ts.Node]]:
        """(key, pair node) of every mapping pair around ``node``, outermost first."""
        out = []
        for n in self.parents(node):
            if n.type in ("block_mapping_pair", "flow_pair"):
                key = self.key(n)
                if key is not None:
                    out.append((key, n))
        return out[::-1]

    def group_of(self, container: ts.Node, chain: list[tuple[str, ts.Node]] | None = None) -> Group | None:
        """The group of pods the container (its mapping) runs in, ``None`` outside one. ``chain``:
        its :meth:`key_chain` when the caller has it."""
        chain = self.key_chain(container) if chain is None else chain
        keys = [k for k, _ in chain]
        names = set(keys)
        if not names & _GROUP_KEYS and not ("template" in names and self._has(b"leaderWorkerSet")) \
                and not (names & {"spec", "predictor"} and self._has(b"worker")):
            return None  # (a pod template of a workload, the usual case: decided without the tree)
        for j in range(len(chain) - 1, -1, -1):  # (the innermost group key decides)
            key, pair = chain[j]
            rest = keys[j + 1 :]
            found = None
            if key in ("leaderWorkerTemplate", "workloadTemplate"):
                found = self._lws(key, pair, rest)
            elif key == "leaderWorkerPattern":
                found = self._rbg(pair, rest, container, "rbg", "leaderTemplatePatch", "workerTemplatePatch",
                                  "RBG_LWP_GROUP_SIZE")
            elif key == "leaderWorkerSet" and rest[:1] in (["patchLeaderTemplate"], ["patchWorkerTemplate"]):
                found = self._rbg(pair, rest, container, "rbg-lws", "patchLeaderTemplate", "patchWorkerTemplate",
                                  "LWS_GROUP_SIZE")
            elif key == "template" and j > 0:  # an RBG v1alpha1 role's template with a leaderWorkerSet
                role = self._mapping_of(pair)
                lws_pair = self._pair_of(role, "leaderWorkerSet") if "leaderWorkerSet" in self.fields(role) else None
                if lws_pair is not None:
                    found = self._rbg(lws_pair, rest, container, "rbg-lws", "patchLeaderTemplate",
                                      "patchWorkerTemplate", "LWS_GROUP_SIZE", base=True)
            elif key in ("engineConfig", "decoderConfig", "engine", "decoder") and rest[:1] in (["leader"], ["worker"]):
                found = self._ome(pair, rest[0])
            elif key in ("workers", "workerSpec") or (key in ("spec", "predictor") and rest[:1] == ["containers"]):
                found = self._head_and_workers(key, pair, rest)
            if found is not None:
                return found
        return None

    # --- the operators --------------------------------------------------------------------

    def _lws(self, key: str, pair: ts.Node, rest: list[str]) -> Group | None:
        lwt = self._value_mapping(pair)
        lf = self.fields(lwt)
        if key == "workloadTemplate" and "leaderTemplate" not in lf and "workerTemplate" not in lf:
            return None
        role = "leader" if "leaderTemplate" in rest else "worker"
        if role == "worker" and "leaderTemplate" not in lf:
            role = "all"  # the worker template serves the leader too
        size, span = self._size(lf.get("size"))
        return Group("lws" if key == "leaderWorkerTemplate" else "llmaz", pair.start_byte, role, size, span,
                     "LWS_GROUP_SIZE")

    def _rbg(self, pair: ts.Node, rest: list[str], container: ts.Node, kind: str, leader_patch: str,
             worker_patch: str, variable: str, base: bool = False) -> Group | None:
        lwp = self._value_mapping(pair)
        lf = self.fields(lwp)
        size, span = self._size(lf.get("size"))
        if not base and rest[:1] == [leader_patch]:
            role = "leader"
        elif not base and rest[:1] == [worker_patch]:
            role = "worker"
        elif base or rest[:1] in (["template"], ["templateRef"]):
            # the template every pod runs, but for the side whose patch gives this container a command
            name = self.scalar_text(self.fields(container).get("name"))
            leader = self._patched(lf.get(leader_patch), name)
            worker = self._patched(lf.get(worker_patch), name)
            role = "worker" if leader and not worker else "leader" if worker and not leader else "all"
        else:
            return None
        return Group(kind, pair.start_byte, role, size, span, variable)

    def _patched(self, patch: ts.Node | None, name: str | None) -> bool:
        """Whether a pod template patch gives the container ``name`` a command or args of its own."""
        spec = self.fields(self._mapping(patch)).get("spec")
        containers = self._mapping(spec)
        items = self.resolve(self.fields(containers).get("containers"))
        if name is None or items is None or "sequence" not in items.type:
            return False
        for item in self.items(items):
            f = self.fields(self._mapping(item))
            if self.scalar_text(f.get("name")) == name and ("command" in f or "args" in f):
                return True
        return False

    def _ome(self, pair: ts.Node, side: str) -> Group | None:
        component = self.fields(self._value_mapping(pair))
        worker = self.fields(self._mapping(component.get("worker")))
        size, span = self._size(worker.get("size"))
        if size is not None:
            size = str(int(size) + 1)  # the leader and `size` workers (ome: lws_reconciler.go)
        return Group("ome", pair.start_byte, side, size, span, "LWS_GROUP_SIZE")

    def _head_and_workers(self, key: str, pair: ts.Node, rest: list[str]) -> Group | None:
        """OME's older form (``spec.workers``) and KServe's ``workerSpec``: the workers' containers,
        and the head's next to them."""
        if key in ("workers", "workerSpec"):
            if rest[:1] != ["containers"]:
                return None
            holder = self._mapping_of(pair)
            role = "worker"
        else:
            holder = self._value_mapping(pair)
            if not any(k in self.fields(holder) for k in ("workers", "workerSpec")):
                return None
            role = "leader"
        kind = "ome" if "workers" in self.fields(holder) else "kserve"
        return Group(kind, holder.start_byte if holder is not None else pair.start_byte, role)

    # --- helpers --------------------------------------------------------------------------

    def _has(self, text: bytes) -> bool:
        """Whether the file has ``text`` somewhere (looked up once per file)."""
        seen = getattr(self, "_operator_words", None)
        if seen is None:
            seen = self._operator_words = {}
        if text not in seen:
            seen[text] = text in self.data
        return seen[text]

    def _size(self, node: ts.Node | None) -> tuple[str | None, Span | None]:
        """A size written as a plain integer (not a template): its digits and range."""
        sc = self.node_scalar(node) if node is not None else None
        if sc is None or sc.style != "plain" or not sc.text.isdigit() or self.in_hole(sc.spans) is not None:
            return None, None
        return sc.text, Span(*sc.span)

    def _mapping(self, node: ts.Node | None) -> ts.Node | None:
        target = self.resolve(node)
        return target if target is not None and target.type in ("block_mapping", "flow_mapping") else None

    def _value_mapping(self, pair: ts.Node) -> ts.Node | None:
        return self._mapping(pair.child_by_field_name("value"))

    def _mapping_of(self, pair: ts.Node) -> ts.Node | None:
        """The mapping a pair belongs to."""
        return self.around(pair, ("block_mapping", "flow_mapping"), parents_only=True)

    def _pair_of(self, mapping: ts.Node, key: str) -> ts.Node | None:
        for pair in mapping.named_children:
            if pair.type in ("block_mapping_pair", "flow_pair") and self.key(pair) == key:
                return pair
        return None

    # --- launch holders -------------------------------------------------------------------

    def holders(self, keys: list[re.Match], containers: list[ts.Node]) -> list[ts.Node]:
        """The objects (mappings) with a ``command`` list that launches sglang, at the ``command:``
        keys ``keys``, that are none of ``containers`` and no Compose service."""
        taken = {n.id for n in containers}
        spans = sorted((n.start_byte, n.end_byte) for n in containers)
        starts = [a for a, _ in spans]
        out: dict[int, ts.Node] = {}
        for m in keys:
            k = bisect.bisect_right(starts, m.start(1)) - 1
            if k >= 0 and m.start(1) < spans[k][1]:
                continue  # a container's own `command:` (the usual key: decided without the tree)
            pair = self.around(self.node_at(m.start(1), m.end(1)), ("block_mapping_pair",))
            if pair is None or self.key(pair) != "command":
                continue
            target = self.resolve(pair.child_by_field_name("value"))
            if target is None or target.type not in ("block_sequence", "flow_sequence") \
                    or not self.mentions_sglang(target):
                continue
            mapping = self._mapping_of(pair)
            if mapping is None or mapping.id in taken or mapping.id in out or self._compose_service(mapping):
                continue
            out[mapping.id] = mapping
        return list(out.values())

    def _compose_service(self, mapping: ts.Node) -> bool:
        """Whether a mapping is in a Compose file (a document with a top-level ``services:``): a
        service, or an extension field (``x-…``) that services merge in (Compose reads those)."""
        chain = self.key_chain(mapping)
        top = self._mapping_of(chain[0][1]) if chain else mapping
        return "services" in self.fields(top)

    def recommended_args(self, holder: ts.Node) -> list[ts.Node | None] | None:
        """The ``args`` of each entry of an llmaz ``BackendRuntime``'s ``recommendedConfigs`` (``None``
        for an entry without), or ``None`` when the object has none."""
        configs = self.resolve(self.fields(holder).get("recommendedConfigs"))
        if configs is None or "sequence" not in configs.type:
            return None
        return [self.fields(self._mapping(item)).get("args") for item in self.items(configs)] or None
