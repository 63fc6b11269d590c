"""Dangerous-command approval: rules/ (pure detection, layer 2) and gate.py (the decision, layer 3)."""
