"""Knowledge-base rules: the condition language, sglang's effective values, evaluation."""
