"""The corpus holds third-party files as test data: pytest must never collect or import them."""

collect_ignore_glob = ["files/*", "LICENSES/*"]
