"""`hermes batch`: many prompts, each an isolated agent, as ShareGPT trajectories under data/<run_name>/."""
