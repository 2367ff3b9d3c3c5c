; Purpose: docker-compose services: every entry of a document's top-level `services:` mapping.
;   The Python side reads `command`, `entrypoint`, `environment` and `volumes` from each.
; Captures:
;   @service.name   the service's key
;   @service        the service's mapping
; Helper captures (start with @_) are only used by predicates.
; Grammar: tree-sitter-yaml 0.7.x (ABI 14)
(document
  (block_node
    (block_mapping
      (block_mapping_pair
        key: (flow_node) @_services
        value: (block_node
          (block_mapping
            (block_mapping_pair
              key: (flow_node) @service.name
              value: (block_node (block_mapping) @service)))))))
  (#match? @_services "^[\"']?services[\"']?$"))
