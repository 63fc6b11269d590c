"""Toolset distributions for data generation, as Hermes names and weights them: each toolset of a
distribution is included with its own probability (percent); when none is drawn, the likeliest one is
used. Sampling takes a seeded Random, so a run is reproducible."""

from __future__ import annotations

import random

DISTRIBUTIONS: dict[str, tuple[str, dict[str, int]]] = {
    "default": ("All available tools, all the time",
                {"web": 100, "vision": 100, "image_gen": 100, "terminal": 100, "file": 100, "browser": 100}),
    "image_gen": ("Heavy focus on image generation with vision and web support",
                  {"image_gen": 90, "vision": 90, "web": 55, "terminal": 45}),
    "research": ("Web research with vision analysis and reasoning", {"web": 90, "browser": 70, "vision": 50, "terminal": 10}),
    "science": ("Scientific research with web, terminal, file, and browser capabilities",
                {"web": 94, "terminal": 94, "file": 94, "vision": 65, "browser": 50, "image_gen": 15}),
    "development": ("Terminal, file tools, and reasoning with occasional web lookup",
                    {"terminal": 80, "file": 80, "web": 30, "vision": 10}),
    "safe": ("All tools except terminal for safety", {"web": 80, "browser": 70, "vision": 60, "image_gen": 60}),
    "balanced": ("Equal probability of all toolsets",
                 {"web": 50, "vision": 50, "image_gen": 50, "terminal": 50, "file": 50, "browser": 50}),
    "minimal": ("Only web tools for basic research", {"web": 100}),
    "terminal_only": ("Terminal and file tools for code execution tasks", {"terminal": 100, "file": 100}),
    "terminal_web": ("Terminal and file tools with web search for documentation lookup",
                     {"terminal": 100, "file": 100, "web": 100}),
    "creative": ("Image generation and vision analysis focus", {"image_gen": 90, "vision": 90, "web": 30}),
    "reasoning": ("Heavy research/reasoning distribution with minimal other tools", {"web": 90, "file": 60, "terminal": 20}),
    "browser_use": ("Full browser-based web interaction with search, vision, and page control",
                    {"browser": 100, "web": 80, "vision": 70}),
    "browser_only": ("Only browser automation tools for pure web interaction tasks", {"browser": 100}),
    "browser_tasks": ("Browser-focused distribution", {"browser": 97, "vision": 12, "terminal": 15}),
    "terminal_tasks": ("Terminal-focused distribution with high terminal/file availability, occasional other tools",
                       {"terminal": 97, "file": 97, "web": 97, "browser": 75, "vision": 50, "image_gen": 10}),
    "mixed_tasks": ("Mixed distribution with high browser, terminal, and file availability for complex tasks",
                    {"browser": 92, "terminal": 92, "file": 92, "web": 35, "vision": 15, "image_gen": 15}),
}


def table(name: str) -> dict[str, int]:
    """A distribution's {toolset: percent}; ValueError naming the known ones."""
    if name not in DISTRIBUTIONS:
        raise ValueError(f"unknown distribution {name!r}; known: {', '.join(DISTRIBUTIONS)}")
    return DISTRIBUTIONS[name][1]


def sample(name: str, rng: random.Random) -> list[str]:
    """The toolsets of one prompt: each drawn independently with its probability."""
    weights = table(name)
    chosen = [ts for ts, pct in weights.items() if rng.random() * 100 < pct]
    return chosen or [max(weights.items(), key=lambda kv: kv[1])[0]]
