"""YAML files: Kubernetes workloads, Compose services, shell embedded in YAML, sglang --config
mappings, and YAML scalars mapped back to their source bytes."""
