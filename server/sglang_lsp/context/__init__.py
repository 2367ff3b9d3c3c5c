"""What a launch runs on: GPU profiles, model facts, the environment, placement in its
deployment, values inferred from the file, in-file directives and the precedence of them all."""
