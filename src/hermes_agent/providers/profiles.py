"""Provider profiles are data rows (base URL, key variable); endpoint resolution from Settings."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from hermes_agent.config.settings import ModelSettings
from hermes_agent.errors import ConfigError


@dataclass(frozen=True, slots=True)
class Profile:
    """A vendor as data: its base URL and the variable holding its key."""

    name: str
    base_url: str
    key_env: str
    needs_key: bool = True


PROFILES: dict[str, Profile] = {p.name: p for p in (
    Profile("openrouter", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    Profile("openai", "https://api.openai.com/v1", "OPENAI_API_KEY"),
    Profile("anthropic", "https://api.anthropic.com/v1", "ANTHROPIC_API_KEY"),
    Profile("nous", "https://inference-api.nousresearch.com/v1", "NOUS_API_KEY"),
    Profile("deepseek", "https://api.deepseek.com/v1", "DEEPSEEK_API_KEY"),
    Profile("gemini", "https://generativelanguage.googleapis.com/v1beta/openai", "GEMINI_API_KEY"),
    Profile("xai", "https://api.x.ai/v1", "XAI_API_KEY"),
    Profile("groq", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    Profile("mistral", "https://api.mistral.ai/v1", "MISTRAL_API_KEY"),
    Profile("together", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    Profile("fireworks", "https://api.fireworks.ai/inference/v1", "FIREWORKS_API_KEY"),
    Profile("deepinfra", "https://api.deepinfra.com/v1/openai", "DEEPINFRA_API_KEY"),
    Profile("novita", "https://api.novita.ai/v3/openai", "NOVITA_API_KEY"),
    Profile("nvidia", "https://integrate.api.nvidia.com/v1", "NVIDIA_API_KEY"),
    Profile("huggingface", "https://router.huggingface.co/v1", "HF_TOKEN"),
    Profile("kimi-coding", "https://api.moonshot.ai/v1", "KIMI_API_KEY"),
    Profile("zai", "https://api.z.ai/api/paas/v4", "GLM_API_KEY"),
    Profile("minimax", "https://api.minimax.io/v1", "MINIMAX_API_KEY"),
    Profile("ollama", "http://127.0.0.1:11434/v1", "OLLAMA_API_KEY", needs_key=False),
    Profile("lmstudio", "http://127.0.0.1:1234/v1", "LMSTUDIO_API_KEY", needs_key=False),
    Profile("vllm", "http://127.0.0.1:8000/v1", "VLLM_API_KEY", needs_key=False),
)}

NO_MODEL_HELP = ("no model configured: run `hermes setup`, or set model.default and model.base_url in "
                 "{config}, or pass -m MODEL --base-url URL (with OPENAI_API_KEY or OPENROUTER_API_KEY in the environment)")


@dataclass(frozen=True, slots=True)
class Endpoint:
    """A resolved place to send chat requests."""

    provider: str
    base_url: str
    api_key: str
    model: str


def resolve_endpoint(model: ModelSettings, env: Mapping[str, str], config_file: str = "config.yaml") -> Endpoint:
    """Turn the model section (+ environment) into an Endpoint or raise ConfigError with the fix."""
    provider = model.provider or "auto"
    if provider == "auto":
        if model.base_url:
            provider = "custom"
        elif env.get("OPENROUTER_API_KEY"):
            provider = "openrouter"
        elif env.get("OPENAI_API_KEY"):
            provider = "openai"
        else:
            raise ConfigError(NO_MODEL_HELP.format(config=config_file))
    if provider == "custom":
        if not model.base_url:
            raise ConfigError(f"provider 'custom' needs model.base_url in {config_file} (or OPENAI_BASE_URL / --base-url)")
        base_url, key = model.base_url, model.api_key or env.get("OPENAI_API_KEY", "") or "no-key"
    else:
        prof = PROFILES.get(provider)
        if prof is None:
            known = ", ".join(["auto", "custom", *sorted(PROFILES)])
            raise ConfigError(f"unknown provider {provider!r} in {config_file}; known: {known}")
        base_url = model.base_url or prof.base_url
        key = model.api_key or env.get(prof.key_env, "")
        if not key and prof.needs_key:
            raise ConfigError(f"provider {provider!r} needs an API key: set {prof.key_env} in the environment "
                              f"or in .env next to {config_file}")
        key = key or "no-key"
    if not model.model:
        raise ConfigError(NO_MODEL_HELP.format(config=config_file))
    return Endpoint(provider=provider, base_url=base_url.rstrip("/"), api_key=key, model=model.model)
