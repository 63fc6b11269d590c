"""The typed Settings tree: one frozen dataclass per config section, built once from the merged
config (whose values, defaults included, come from config/defaults.py) and validated as it is built.
A wrong type or value is one ConfigError naming the key, the value and what is expected.

Conventions: a null value means the default (DEFAULT_CONFIG's), except where the type allows None;
booleans also accept YAML 1.1's words (yes/no/on/off), which the released Hermes's loader reads as
booleans; `aliases` map the other spellings Hermes accepts onto a choice; a `FreeForm` field is a
mapping the schema does not look inside (its own module reads it); `Rows` is a list of mappings.
Keys the tree does not model are ignored, never errors."""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from collections.abc import Mapping
from dataclasses import field, fields, is_dataclass
from typing import Literal

from hermes_agent.errors import ConfigError

FreeForm = dict[str, object]
Rows = list[dict[str, object]]
_MISSING = object()
_YAML11_BOOLS = {"true": True, "yes": True, "on": True, "y": True, "false": False, "no": False, "off": False, "n": False}
# tools.tool_search.enabled as the released Hermes reads it (tools/tool_search.py), plus our own words.
_ON_OFF_AUTO = {True: "on", False: "off", "true": "on", "1": "on", "yes": "on", "always": "on",
                "false": "off", "0": "off", "no": "off", "never": "off"}


def _c(**limits: object) -> dict:
    return {"metadata": limits}


def _record(cls: type) -> type:
    """A frozen record class for one config section, like @dataclass(frozen=True) (fields(), asdict(), replace()
    work) but without generating code per class: importing the schema stays cheap (issue 24)."""
    found = {}
    for name, kind in cls.__dict__.get("__annotations__", {}).items():
        f = cls.__dict__.get(name)
        f = f if isinstance(f, dataclasses.Field) else field()
        f.name, f.type, f._field_type = name, kind, dataclasses._FIELD  # type: ignore[attr-defined]
        found[name] = f
        if name in cls.__dict__:
            delattr(cls, name)
    cls.__dataclass_fields__ = found  # type: ignore[attr-defined]
    for attr, fn in _RECORD_METHODS.items():
        setattr(cls, attr, fn)
    return cls


def _init(self: object, **values: object) -> None:
    names = type(self).__dataclass_fields__  # type: ignore[attr-defined]
    if values.keys() != names.keys():
        missing = [n for n in names if n not in values] or [n for n in values if n not in names]
        raise TypeError(f"{type(self).__name__}: missing or unexpected fields: {', '.join(missing)}")
    self.__dict__.update(values)


def _frozen(self: object, name: str, *_: object) -> None:
    raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")


def _values(self: object) -> tuple:
    return tuple(self.__dict__[n] for n in type(self).__dataclass_fields__)  # type: ignore[attr-defined]


def _eq(self: object, other: object) -> bool:
    return _values(self) == _values(other) if type(other) is type(self) else NotImplemented


def _repr(self: object) -> str:
    inner = ", ".join(f"{n}={v!r}" for n, v in zip(type(self).__dataclass_fields__, _values(self), strict=True))  # type: ignore[attr-defined]
    return f"{type(self).__name__}({inner})"


_RECORD_METHODS = {"__init__": _init, "__setattr__": _frozen, "__delattr__": _frozen, "__eq__": _eq,
                   "__hash__": lambda self: hash(_values(self)), "__repr__": _repr}


@_record
class AgentCfg:
    max_turns: int = field(**_c(min=1))
    api_max_retries: int = field(**_c(min=0))
    tool_loop_warn_after: int = field(**_c(min=1))
    tool_loop_hard_limit: int = field(**_c(min=1))
    request_timeout: float = field(**_c(min=0.01))
    stream_notice_after: float = field(**_c(min=0.01))
    stream_idle_timeout: float = field(**_c(min=0.01))
    max_reply_chars: int = field(**_c(min=1000))
    clarify_timeout: float = field(**_c(min=0.01))
    retry_base_delay: float = field(**_c(min=0))


@_record
class TerminalCfg:
    backend: Literal["local", "docker", "ssh", "singularity", "modal", "daytona"]
    cwd: str
    timeout: float = field(**_c(min=0.01))
    env_passthrough: list[str]
    docker_image: str
    docker_volumes: list[str]
    docker_mount_cwd_to_workspace: bool
    docker_network: bool
    container_cpu: float = field(**_c(min=0))
    container_memory: int = field(**_c(min=0))
    singularity_image: str
    ssh_host: str
    ssh_user: str
    ssh_port: int = field(**_c(min=1, max=65535))
    ssh_key: str
    auto_source_bashrc: bool
    docker_extra_args: list[str]
    singularity_binds: list[str]
    container_disk: int = field(**_c(min=0))
    modal_image: str
    daytona_image: str


@_record
class ToolOutputCfg:
    max_bytes: int = field(**_c(min=1000))
    max_lines: int = field(**_c(min=10))
    max_line_length: int = field(**_c(min=80))


@_record
class ApprovalsCfg:
    mode: Literal["manual", "smart", "off"] = field(**_c(aliases={False: "off", True: "manual", "": "manual"}))
    timeout: float = field(**_c(min=0.01))
    deny: list[str]
    cron_mode: Literal["deny", "approve"] = field(**_c(aliases={"off": "approve", "allow": "approve", "yes": "approve",
                                                                  True: "deny", False: "deny"}))


@_record
class SandboxCfg:
    mode: Literal["workspace-write", "read-only", "off"]
    network: bool
    writable_paths: list[str]
    readable_paths: list[str]
    deny_read: list[str]
    protected_paths: list[str]
    shared_tmp: bool
    mechanism: Literal["auto", "bwrap", "landlock"]
    sockets: list[str]  # unix sockets reachable from inside (all others are hidden under bwrap)
    loopback_ports: list[int]  # the host's 127.0.0.1 ports reachable from bwrap's own network namespace
    # (HOME is default-deny anyway.) Also when the workspace is HOME, and without git's settings; and of the
    # Hermes home only the skills (team mode sets it for a member's sessions: bootstrap/options.person_options)
    hide_home: bool = False


@_record
class CheckpointsCfg:
    enabled: bool
    max_snapshots: int = field(**_c(min=1))
    keep_uncommitted: bool = True  # before a terminal command, snapshot a git workspace with uncommitted changes


@_record
class CompressionCfg:
    enabled: bool
    threshold: float = field(**_c(min=0.05, max=1.0))
    target_ratio: float = field(**_c(min=0.01, max=1.0))
    protect_first_n: int = field(**_c(min=0))
    protect_last_n: int = field(**_c(min=0))


@_record
class PromptCachingCfg:
    enabled: bool
    cache_ttl: Literal["5m", "1h"]


@_record
class MemoryCfg:
    memory_enabled: bool
    user_profile_enabled: bool
    memory_char_limit: int = field(**_c(min=100))
    user_char_limit: int = field(**_c(min=100))


@_record
class SessionsCfg:
    title_mode: Literal["first_message", "llm", "off"]
    auto_prune: bool  # Hermes's key (upstream default true): retention applied in the background
    retention_days: float = field(**_c(min=0))  # ended sessions idle longer are deleted (0: never)
    min_interval_hours: float = field(**_c(min=0))
    vacuum_after_prune: bool
    max_db_mb: int = field(**_c(min=0))  # ours: oldest ended sessions go while the data exceeds it
    tool_output_max_chars: int = field(**_c(min=0))  # ours: tool outputs stored capped (0: whole)
    auto_prune_delay: float = field(**_c(min=0))  # ours: seconds after start before the background prune
    keep_full_tool_output: bool  # ours: the full text of a capped output kept in sessions/tool_outputs/
    old_tool_output_days: float = field(**_c(min=0))  # ours: tool outputs older than this shrink (0: never)
    old_tool_output_max_chars: int = field(**_c(min=0))  # ours: ... to this many characters (head and tail)
    a2a_task_retention_days: float = field(**_c(min=0))  # ours: finished A2A tasks older are deleted (0: never)
    a2a_tasks_max_mb: float = field(**_c(min=0))  # ours: the oldest finished A2A tasks go while they exceed it
    a2a_tasks_max_mb_per_caller: float = field(**_c(min=0))  # ours: the same, each caller's own (0: no limit)
    a2a_tasks_by_caller: FreeForm  # ours: NAME: {retention_days, max_mb} for one caller (api/a2a_store.py)


@_record
class DisplayCfg:
    show_reasoning: bool
    tool_progress: Literal["all", "new", "verbose", "log", "off"] = field(**_c(aliases={False: "off", True: "all"}))
    streaming: bool
    personality: str
    # A platform's own tool progress in chats, as today's Hermes writes it (platforms.<name>.tool_progress) and as
    # 0.19.0 did (tool_progress_overrides.<name>); gateway/runner.py reads both. No default: absent = none.
    platforms: FreeForm
    tool_progress_overrides: FreeForm


@_record
class SkillsHubCfg:
    timeout: float = field(**_c(min=0.05))
    github_api: str
    repos: list[str]
    marketplaces: list[str]
    well_known: list[str]
    trusted_repos: list[str]
    clawhub_url: str
    lobehub_url: str
    skills_sh_url: str
    disabled_sources: list[str]


@_record
class SkillsCfg:
    review: Literal["auto", "propose", "off"]
    external_dirs: list[str]
    disabled: list[str]
    guard_agent_created: bool
    hub: SkillsHubCfg


@_record
class BudgetCfg:
    """Hard spending caps (bootstrap/budget.py): null = no cap. users/cron/batch override them per person
    (gateway sender id, or platform:id), for cron job runs and for batch runs."""

    session_usd: float | None = field(**_c(min=0))
    day_usd: float | None = field(**_c(min=0))
    month_usd: float | None = field(**_c(min=0))
    session_tokens: int | None = field(**_c(min=0))
    day_tokens: int | None = field(**_c(min=0))
    month_tokens: int | None = field(**_c(min=0))
    warn_at: float = field(**_c(min=0, max=1))  # the share of a cap that warns once
    users: FreeForm
    cron: FreeForm
    batch: FreeForm


@_record
class DelegationCfg:
    max_iterations: int = field(**_c(min=1))
    max_concurrent_children: int = field(**_c(min=1, max=32))
    child_timeout_seconds: float = field(**_c(min=0))  # 0: no wall-clock cap per child
    max_summary_chars: int = field(**_c(min=1000))
    # Hermes's subagent model: each empty = the parent's (a provider other than the parent's brings its own endpoint)
    model: str
    provider: str
    base_url: str
    api_key: str


@_record
class CodeExecutionCfg:
    """execute_code (tools/builtin/execute_code.py): Hermes's mode/timeout/max_tool_calls plus our limits."""

    mode: str  # Hermes's project | strict; scripts here always run in the working directory, sandboxed
    timeout: float = field(**_c(min=1))
    max_tool_calls: int = field(**_c(min=1))
    cpu_seconds: int | None = field(**_c(min=1))  # None: the timeout
    memory_mb: int = field(**_c(min=64))
    max_output_bytes: int = field(**_c(min=1000))


@_record
class ToolSearchCfg:
    enabled: Literal["auto", "on", "off"] = field(**_c(aliases=_ON_OFF_AUTO))
    threshold_pct: float = field(**_c(min=0, max=100))


@_record
class ToolsCfg:
    # Hermes's legacy shape `tool_search: true|false` (tools/tool_search.py: true is auto, false is off).
    tool_search: ToolSearchCfg = field(**_c(shorthand={True: {"enabled": "auto"}, False: {"enabled": "off"}}))
    # ours: our tool names and tight schemas; upstream: today's upstream Hermes's tool names (todo_list,
    # process_manage, cronjob_manage) for a model trained on it. Either name is accepted from the model.
    schema_style: Literal["ours", "upstream"] = field(**_c())


@_record
class PluginsCfg:
    enabled: list[str]
    disabled: list[str]
    entries: FreeForm


@_record
class GatewayCfg:
    """Our gateway knobs (Hermes's other `gateway:` keys are left alone)."""

    max_concurrent_turns: int = field(**_c(min=1, max=64))
    hook_timeout: float = field(**_c(min=0.01))
    idle_evict_seconds: float = field(**_c(min=1))


@_record
class BrowserCfg:
    """Hermes's `browser:` keys we honour (the rest, agent-browser and cloud knobs, are ignored)."""

    allow_private_urls: bool
    cdp_url: str  # attach to a running Chromium/Browserbase over CDP instead of launching one
    command_timeout: float = field(**_c(min=1))


@_record
class SecurityCfg:
    allow_private_urls: bool  # web and browser tools may open loopback/private addresses


@_record
class WebCfg:
    """web_search/web_extract/web_crawl (tools/builtin/web.py); Hermes's keys plus our fetch limits."""

    backend: str  # shared search backend name ("" = first with a key set, else ddgs)
    search_backend: str
    extract_backend: str  # Hermes's key; extraction here is always local, so it is accepted and unused
    extract_char_limit: int = field(**_c(min=2000, max=500000))
    allow_private_urls: bool
    timeout: float = field(**_c(min=0.5, max=300))
    max_download_bytes: int = field(**_c(min=10000))
    summarize: bool  # long pages summarised by the auxiliary `web_extract` model instead of cut


@_record
class DashboardCfg:
    """`hermes dashboard`: its port and a fixed token (empty: a random one per start)."""

    port: int = field(**_c(min=0, max=65535))
    token: str


@_record
class A2aCfg:
    """Agent-to-agent: `enabled` serves the agent over A2A on the API server; `agents` maps a name to
    {url, token_env} for the a2a_discover/a2a_call tools (tools/builtin/a2a.py checks the insides)."""

    enabled: bool
    agents: FreeForm


@_record
class Config:
    """Every key read outside config/, typed. Free-form sections (mcp_servers, personalities, auxiliary,
    ...) are FreeForm mappings: their own modules check their insides."""

    agent: AgentCfg
    terminal: TerminalCfg
    tool_output: ToolOutputCfg
    approvals: ApprovalsCfg
    sandbox: SandboxCfg
    checkpoints: CheckpointsCfg
    compression: CompressionCfg
    prompt_caching: PromptCachingCfg
    memory: MemoryCfg
    sessions: SessionsCfg
    display: DisplayCfg
    skills: SkillsCfg
    delegation: DelegationCfg
    budget: BudgetCfg
    toolsets: list[str]
    command_allowlist: list[str]
    file_read_max_chars: int = field(**_c(min=1000))
    context_file_max_chars: int | None = field(**_c(min=0))
    mcp_discovery_timeout: float = field(**_c(min=0))
    mcp_single_query_discovery_timeout: float = field(**_c(min=0))
    group_sessions_per_user: bool
    tools: ToolsCfg
    plugins: PluginsCfg
    fallback_providers: Rows
    platform_toolsets: FreeForm
    known_plugin_toolsets: FreeForm
    personalities: FreeForm
    auxiliary: FreeForm
    code_execution: CodeExecutionCfg
    moa: FreeForm  # Hermes's Mixture-of-Agents presets (tools/builtin/moa.py), plus our `moa.timeout`
    tts: FreeForm  # tts.provider + tts.<provider>.* (media/speech.py)
    stt: FreeForm  # stt.enabled, stt.provider + stt.<provider>.* (media/transcribe.py)
    image_gen: FreeForm  # image_gen.provider/model/base_url (media/images.py)
    rl: FreeForm  # rl.backend (local-rollout), workers, toolsets, atropos_environments_dir (tools/builtin/rl.py)
    mcp_servers: FreeForm
    cron: FreeForm  # Hermes's scheduler-provider settings; we read `cron.timeout`
    gateway: GatewayCfg
    browser: BrowserCfg
    security: SecurityCfg
    web: WebCfg
    dashboard: DashboardCfg
    a2a: A2aCfg
    platforms: FreeForm  # platforms.<name>.enabled/token/extra, as Hermes users write them
    group_sessions_per_user: bool  # Hermes's key: one session per participant in a group chat
    team: FreeForm  # gateway team mode: people, roles, per-role toolsets and caps (config/team.py)


def _section(kind: object) -> bool:
    return isinstance(kind, type) and is_dataclass(kind)


@functools.cache
def _hints(cls: type) -> dict[str, object]:
    """The section's field types: its annotation strings evaluated here, each distinct one once (typing's
    get_type_hints on the 26 sections cost ~10 ms of every start; issue 24). Sections have no base class."""
    return {name: _annotation(kind) if isinstance(kind, str) else kind
            for name, kind in cls.__dict__.get("__annotations__", {}).items()}


@functools.cache
def _annotation(text: str) -> object:
    return eval(text, globals())  # noqa: S307 - this module's own annotations, never outside input


def _expected(kind: object, meta: Mapping) -> str:
    if typing.get_origin(kind) is Literal:
        return "one of " + ", ".join(str(a) for a in typing.get_args(kind))
    if kind == FreeForm:
        return "a mapping"
    if kind == Rows:
        return "a list of mappings"
    optional = _nullable(kind)
    if optional:  # `float | None`: the value's own type, or null
        kind = next(a for a in typing.get_args(kind) if a is not type(None))
    name = {int: "an integer", float: "a number", bool: "true or false", str: "a string"}.get(kind, "a list of strings")
    name += " (or null)" if optional else ""
    bounds = [f">= {meta['min']}" if "min" in meta else "", f"<= {meta['max']}" if "max" in meta else ""]
    return " ".join([name, *(b for b in bounds if b)])


def _convert_list(kind: object, value: object) -> list:
    if isinstance(value, str) or not isinstance(value, list | tuple):
        raise ValueError
    if kind == Rows:
        if not all(isinstance(v, Mapping) for v in value):
            raise ValueError
        return [dict(v) for v in value]
    if any(isinstance(v, Mapping | list) for v in value):
        raise ValueError
    return [str(v) for v in value]


def _convert_scalar(kind: object, value: object) -> object:
    if kind is bool:
        if isinstance(value, str) and value.strip().lower() in _YAML11_BOOLS:
            return _YAML11_BOOLS[value.strip().lower()]
        if isinstance(value, bool):
            return value
        raise ValueError
    if kind in (int, float):
        if isinstance(value, bool) or not isinstance(value, int | float | str):
            raise ValueError
        number = float(value)
        if kind is int and number != int(number):
            raise ValueError
        return int(number) if kind is int else number
    if isinstance(value, dict | list):  # str
        raise ValueError
    return str(value)


def _convert(kind: object, value: object) -> object:
    """`value` as `kind`, or raise ValueError."""
    origin = typing.get_origin(kind)
    if origin is Literal:
        text = str(value).strip().lower() if isinstance(value, str) else value
        if text not in typing.get_args(kind):
            raise ValueError
        return text
    if origin in (typing.Union, types.UnionType):
        if value is None and type(None) in typing.get_args(kind):
            return None
        return _convert(next(a for a in typing.get_args(kind) if a is not type(None)), value)
    if value is None:  # no default to fall back on: an empty value of the type
        return {} if kind == FreeForm else [] if origin is list else "" if kind is str else _convert_scalar(kind, value)
    if origin is list:
        return _convert_list(kind, value)
    if origin is dict:
        if not isinstance(value, Mapping):
            raise ValueError
        return dict(value)
    return _convert_scalar(kind, value)


def _alias(meta: Mapping, raw: object) -> object:
    """`raw` with the spellings listed in the field's `aliases` replaced by the choice they stand for."""
    aliases = meta.get("aliases")
    if not aliases or not isinstance(raw, bool | str):
        return raw
    return aliases.get(raw.strip().lower() if isinstance(raw, str) else raw, raw)


def _value(f: object, kind: object, raw: object, default: object, key: str) -> object:
    raw = default if raw is None and default is not _MISSING and not _nullable(kind) else _alias(f.metadata, raw)
    try:
        value = _convert(kind, raw)
    except (ValueError, TypeError, StopIteration):
        raise ConfigError(f"{key} must be {_expected(kind, f.metadata)}, got {raw!r}") from None
    lo, hi = f.metadata.get("min"), f.metadata.get("max")
    if isinstance(value, int | float) and not isinstance(value, bool) and (
            (lo is not None and value < lo) or (hi is not None and value > hi)):
        raise ConfigError(f"{key} must be {_expected(kind, f.metadata)}, got {raw!r}")
    return value


def _nullable(kind: object) -> bool:
    return typing.get_origin(kind) in (typing.Union, types.UnionType) and type(None) in typing.get_args(kind)


def _build(cls: type, data: Mapping, defaults: Mapping, prefix: str) -> object:
    hints = _hints(cls)
    values = {}
    for f in fields(cls):
        key = f"{prefix}{f.name}"
        kind = hints[f.name]
        raw = data.get(f.name) if isinstance(data, Mapping) else None
        default = defaults.get(f.name, _MISSING) if isinstance(defaults, Mapping) else _MISSING
        if _section(kind):
            shorthand = f.metadata.get("shorthand") or {}
            if isinstance(raw, bool) and raw in shorthand:
                raw = shorthand[raw]
            if raw is not None and not isinstance(raw, Mapping):
                raise ConfigError(f"{key} must be a mapping, got {raw!r}")
            values[f.name] = _build(kind, raw or {}, default if isinstance(default, Mapping) else {}, f"{key}.")
        else:
            values[f.name] = _value(f, kind, raw, default, key)
    return cls(**values)


def build_config(data: Mapping) -> Config:
    """The typed tree of a merged config mapping; raises ConfigError naming the first bad key."""
    from hermes_agent.config.defaults import DEFAULT_CONFIG

    return _build(Config, data, DEFAULT_CONFIG, "")  # type: ignore[return-value]


def modelled_keys(cls: type = Config, prefix: str = "") -> list[str]:
    """Every dotted key the typed tree checks (for `config set` and the tests)."""
    hints = _hints(cls)
    out = []
    for f in fields(cls):
        kind = hints[f.name]
        if _section(kind):
            out += modelled_keys(kind, f"{prefix}{f.name}.")
        else:
            out.append(f"{prefix}{f.name}")
    return out


def free_form_sections(cls: type = Config, prefix: str = "") -> list[str]:
    """Dotted names of the FreeForm mappings (tts, moa, auxiliary, ...): keys under them are read by their own
    modules, so any key there may be a real option."""
    hints = _hints(cls)
    out = []
    for f in fields(cls):
        kind = hints[f.name]
        if _section(kind):
            out += free_form_sections(kind, f"{prefix}{f.name}.")
        elif kind == FreeForm:
            out.append(f"{prefix}{f.name}")
    return out


def switch(value: object, default: bool) -> bool:
    """A yes/no option inside a FreeForm section (stt.enabled, a moa preset's enabled) read as the released
    Hermes's YAML 1.1 loader reads it: `no`/`off`/`false` are False (our YAML 1.2 loader keeps them as text)."""
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.strip().lower() in _YAML11_BOOLS:
        return _YAML11_BOOLS[value.strip().lower()]
    return default if value is None else bool(value)
