; Purpose: Kubernetes container specs wherever a document holds them: the items of a
;   `containers`, `initContainers` or `ephemeralContainers` list (the pod template of any
;   workload, LeaderWorkerSet leader and worker templates, `kind: List` items, custom resources)
;   and single `container:` mappings (Argo Workflows, Tekton, Kubeflow …), `runner:` (OME
;   ClusterServingRuntime engine/decoder/router) and `mainContainer:` (Dynamo extraPodSpec), both
;   a Kubernetes container inlined in a CRD. The Python side reads
;   `command`, `args`, `env` and `envFrom` from each.
; Captures:
;   @containers.key   the key that holds the container(s)
;   @container        the mapping of one container (block or flow style)
; Grammar: tree-sitter-yaml 0.7.x (ABI 14)
(block_mapping_pair
  key: (flow_node) @containers.key
  value: (block_node
    (block_sequence
      (block_sequence_item
        [(block_node (block_mapping) @container)
         (flow_node (flow_mapping) @container)])))
  (#match? @containers.key "^[\"']?(containers|initContainers|ephemeralContainers)[\"']?$"))

(block_mapping_pair
  key: (flow_node) @containers.key
  value: (flow_node
    (flow_sequence
      (flow_node (flow_mapping) @container)))
  (#match? @containers.key "^[\"']?(containers|initContainers|ephemeralContainers)[\"']?$"))

(block_mapping_pair
  key: (flow_node) @containers.key
  value: [(block_node (block_mapping) @container)
          (flow_node (flow_mapping) @container)]
  (#match? @containers.key "^[\"']?(container|runner|mainContainer)[\"']?$"))
