"""The `hermes setup` steps: provider, base URL, API key (-> .env, 0600), model, terminal backend.
Current values are the defaults, so re-running changes only what the user answers differently."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path

from hermes_agent import paths
from hermes_agent.cli.ask import ask, choose, confirm
from hermes_agent.config.edit import ConfigDocument, mask_secret, set_env_values
from hermes_agent.config.settings import Settings
from hermes_agent.errors import ConfigError
from hermes_agent.providers.profiles import PROFILES

BACKENDS = (("local", "run commands on this machine"), ("docker", "run commands in a Docker container"),
            ("ssh", "run commands on a remote host over SSH"))
_BACKEND_FIELDS = {"docker": ("docker_image",), "ssh": ("ssh_host", "ssh_user", "ssh_port", "ssh_key")}
_FIELD_LABELS = {"docker_image": "Docker image", "ssh_host": "SSH host", "ssh_user": "SSH user",
                 "ssh_port": "SSH port", "ssh_key": "SSH private key file (empty: ssh-agent / default keys)"}


@dataclass(frozen=True, slots=True)
class Choices:
    """Everything setup writes; `api_key` is None when the stored key is kept."""

    provider: str
    base_url: str
    model: str
    backend: str
    api_key: str | None = None
    terminal: dict[str, object] = field(default_factory=dict)

    @property
    def key_env(self) -> str:
        return PROFILES[self.provider].key_env if self.provider in PROFILES else "OPENAI_API_KEY"


def current_choices(settings: Settings) -> Choices:
    """What is configured now (the wizard's defaults)."""
    m = settings.model
    provider = m.provider
    if provider == "auto":
        provider = "custom" if m.base_url else "openrouter" if settings.env.get("OPENROUTER_API_KEY") else (
            "openai" if settings.env.get("OPENAI_API_KEY") else "custom")
    terminal = {k: getattr(settings.cfg.terminal, k) for fields in _BACKEND_FIELDS.values() for k in fields}
    return Choices(provider=provider, base_url=m.base_url, model=m.model,
                   backend=settings.cfg.terminal.backend, terminal=terminal)


def stored_key(settings: Settings, choices: Choices) -> str:
    """The key the endpoint would use now: the provider's variable, else model.api_key."""
    return str(settings.env.get(choices.key_env, "") or settings.model.api_key or "")


def effective_base_url(choices: Choices) -> str:
    if choices.provider in PROFILES and not choices.base_url:
        return PROFILES[choices.provider].base_url
    return choices.base_url


def validate(choices: Choices) -> None:
    """Raise ConfigError for answers that cannot work."""
    if choices.provider != "custom" and choices.provider not in PROFILES:
        known = ", ".join(["custom", *PROFILES])
        raise ConfigError(f"unknown provider {choices.provider!r}; known: {known}")
    if choices.provider == "custom" and not choices.base_url:
        raise ConfigError("provider 'custom' needs a base URL (--base-url http://host:port/v1)")
    if choices.backend not in dict(BACKENDS):
        raise ConfigError(f"unknown terminal backend {choices.backend!r}; choose local, docker or ssh")
    if choices.backend == "ssh" and not choices.terminal.get("ssh_host"):
        raise ConfigError("the ssh backend needs a host (--ssh-host)")


def write(choices: Choices, settings: Settings) -> list[str]:
    """Save the choices: config.yaml (round trip, comments kept) and the key in .env (0600)."""
    from hermes_agent.config.migrate import hermes_config_version

    cfg = Path(settings.config_file) if settings.config_file else paths.config_path()
    paths.ensure_home()
    doc = ConfigDocument.load(cfg)
    new_file = not doc.data
    doc.set("model.provider", choices.provider)
    doc.set("model.default", choices.model)
    if choices.provider == "custom" or (choices.base_url and choices.base_url != effective_base_url(
            replace(choices, base_url=""))):
        doc.set("model.base_url", choices.base_url)
    else:
        doc.unset("model.base_url")  # the provider's own URL applies
    doc.set("terminal.backend", choices.backend)
    for key in _BACKEND_FIELDS.get(choices.backend, ()):
        doc.set(f"terminal.{key}", choices.terminal.get(key, ""))
    out = []
    if choices.api_key is not None:
        set_env_values(paths.env_path(), {choices.key_env: choices.api_key})
        if doc.unset("model.api_key"):
            out.append("moved the API key out of config.yaml")
        out.append(f"saved {choices.key_env} to {paths.env_path()} (mode 0600)")
    if new_file:  # what Hermes stamps on a config it creates: read by it as current, never as a legacy install
        doc.set("_config_version", hermes_config_version())
    doc.save()
    out.insert(0, f"saved {cfg}")
    return out


def _ask_provider(cur: Choices) -> Choices:
    options = [("custom", "any OpenAI-compatible endpoint (you give the base URL)")]
    options += [(p.name, p.base_url) for p in PROFILES.values()]
    provider = choose("Which provider serves your model?", options, cur.provider)
    base_url = cur.base_url if provider == cur.provider else ""
    if provider == "custom":
        base_url = ""
        while not base_url:
            base_url = ask("Base URL of the endpoint (e.g. http://127.0.0.1:8000/v1)", cur.base_url).rstrip("/")
    elif not PROFILES[provider].needs_key:
        url = ask("Base URL", base_url or PROFILES[provider].base_url).rstrip("/")
        base_url = "" if url == PROFILES[provider].base_url else url
    return replace(cur, provider=provider, base_url=base_url)


def _ask_key(cur: Choices, existing: str) -> Choices:
    optional = cur.provider == "custom" or not PROFILES[cur.provider].needs_key
    label = f"API key ({cur.key_env}{', optional' if optional else ''})"
    while True:
        key = ask(label, existing, secret=True, shown_default=f"keep {mask_secret(existing)}" if existing else "")
        if key or optional:
            break
        print(f"  {cur.provider} needs an API key")
    return replace(cur, api_key=None if key == existing else key)


def _ask_model(cur: Choices, key: str) -> Choices:
    from hermes_agent.cli.endpoint_probe import ProbeError, list_models

    url = effective_base_url(cur)
    try:
        found = list_models(url, key, timeout=5.0).models
    except ProbeError as exc:
        print(f"  (could not list the endpoint's models: {exc})")
        found = ()
    model = ""
    if found and len(found) <= 60:
        options = [(m, "") for m in found] + [("other", "type a model name")]
        default = cur.model if cur.model in found else found[0]
        model = choose(f"Models offered by {url}:", options, default)
        model = "" if model == "other" else model
    elif found:
        print(f"  the endpoint offers {len(found)} models, e.g. {', '.join(found[:5])}")
    while not model:
        model = ask("Model name", cur.model)
    return replace(cur, model=model)


def _ask_backend(cur: Choices) -> Choices:
    backend = choose("Where should the agent run terminal commands?", BACKENDS, cur.backend)
    terminal = dict(cur.terminal)
    for key in _BACKEND_FIELDS.get(backend, ()):
        value = ask(f"  {_FIELD_LABELS[key]}", str(terminal.get(key) or ""))
        terminal[key] = int(value) if key == "ssh_port" and value.isdigit() else value
    return replace(cur, backend=backend, terminal=terminal)


def interview(settings: Settings, start: Choices) -> Choices:
    """Ask every question (current values as defaults) until the answers are valid."""
    print(f"Hermes setup — settings go to {settings.config_file or paths.config_path()}, "
          f"keys to {paths.env_path()}. Press Enter to keep the value in [brackets].\n")
    cur = _ask_provider(start)
    existing = stored_key(settings, cur) if cur.provider == start.provider else str(settings.env.get(cur.key_env, ""))
    cur = _ask_key(cur, existing)
    cur = _ask_model(cur, existing if cur.api_key is None else cur.api_key)
    cur = _ask_backend(cur)
    validate(cur)
    return cur


def offer_migration(settings: Settings) -> None:
    """After an interactive setup, offer to add options that a newer version introduced."""
    from hermes_agent.cli.config_migrate import migrate
    from hermes_agent.config.migrate import CURRENT_VERSION, config_version

    cfg = Path(settings.config_file) if settings.config_file else paths.config_path()
    if config_version(ConfigDocument.load(cfg).data) >= CURRENT_VERSION:
        return
    if confirm("Your config.yaml predates this version of Hermes. Add the new options now?", True):
        print("\n".join(migrate(cfg, settings.env, interactive=True)))
