"""DEFAULT_CONFIG (the keys Hermes users write in config.yaml) and env-var metadata. Data only."""

from __future__ import annotations

DEFAULT_CONFIG: dict = {
    "model": {
        "provider": "auto",
        "default": "",
        "base_url": "",
        "api_key": "",
        "context_length": 128000,
        "max_tokens": None,
    },
    "fallback_providers": [],
    "toolsets": ["hermes-cli"],
    "platform_toolsets": {},
    "agent": {
        "max_turns": 90,
        "api_max_retries": 3,
        "tool_loop_warn_after": 3,
        "tool_loop_hard_limit": 6,
        "request_timeout": 600,
        "stream_notice_after": 30,
        "stream_idle_timeout": 120,
        "max_reply_chars": 1000000,
        "clarify_timeout": 3600,
        "retry_base_delay": 1.0,  # seconds before the first retry of a failed request, doubling after
    },
    "terminal": {
        "backend": "local",
        "cwd": ".",
        "timeout": 180,
        "env_passthrough": [],
        "docker_image": "nikolaik/python-nodejs:python3.11-nodejs20",
        "docker_volumes": [],
        "docker_mount_cwd_to_workspace": False,
        "docker_network": True,
        "container_cpu": 1,
        "container_memory": 5120,
        "singularity_image": "docker://nikolaik/python-nodejs:python3.11-nodejs20",
        "ssh_host": "",
        "ssh_user": "",
        "ssh_port": 22,
        "ssh_key": "",
        "auto_source_bashrc": True,
        "docker_extra_args": [],
        "singularity_binds": [],
        "container_disk": 51200,  # MB (modal ephemeral_disk, daytona disk in GiB, capped at 10)
        "modal_image": "nikolaik/python-nodejs:python3.11-nodejs20",
        "daytona_image": "nikolaik/python-nodejs:python3.11-nodejs20",
    },
    "tool_output": {"max_bytes": 50000, "max_lines": 2000, "max_line_length": 2000},
    "file_read_max_chars": 100000,
    "approvals": {"mode": "manual", "timeout": 60, "deny": [], "cron_mode": "deny"},
    # Containment of local commands and file tools (approval/policy.py, terminal sandbox).
    "sandbox": {"mode": "workspace-write", "network": True, "writable_paths": [], "readable_paths": [],
                "deny_read": [], "protected_paths": [], "shared_tmp": False, "mechanism": "auto", "sockets": [],
                "loopback_ports": [],
                "hide_home": False},
    "command_allowlist": [],
    "checkpoints": {"enabled": False, "max_snapshots": 20, "keep_uncommitted": True},
    "compression": {
        "enabled": True,
        "threshold": 0.5,
        "target_ratio": 0.2,
        "protect_first_n": 3,
        "protect_last_n": 20,
    },
    "prompt_caching": {"enabled": True, "cache_ttl": "5m"},
    "memory": {"memory_enabled": True, "user_profile_enabled": True, "memory_char_limit": 2200, "user_char_limit": 1375},
    "auxiliary": {},
    "code_execution": {"mode": "project", "timeout": 300, "max_tool_calls": 50, "cpu_seconds": None, "memory_mb": 2048,
                       "max_output_bytes": 50000},
    "moa": {},
    "tts": {},
    "stt": {},
    "image_gen": {},
    # RL tools: rollout-only here (no trainer); see tools/builtin/rl.py.
    "rl": {"backend": "local-rollout", "workers": 2, "toolsets": ["terminal", "file"], "atropos_environments_dir": ""},
    "sessions": {"title_mode": "first_message",  # first_message | llm (one auxiliary call) | off
                 "auto_prune": True, "retention_days": 90, "min_interval_hours": 24, "vacuum_after_prune": True,
                 "max_db_mb": 400, "tool_output_max_chars": 16000, "keep_full_tool_output": False,
                 "auto_prune_delay": 30, "old_tool_output_days": 3, "old_tool_output_max_chars": 1000,
                 "a2a_task_retention_days": 90, "a2a_tasks_max_mb": 100,
                 # per A2A caller (team mode's "api:NAME"): each one's cap, and callers with their own age and cap
                 "a2a_tasks_max_mb_per_caller": 0, "a2a_tasks_by_caller": {}},
    "context_file_max_chars": None,  # None: the built-in 20000
    "display": {"show_reasoning": True, "tool_progress": "all", "streaming": True, "personality": "",
                "platforms": {}, "tool_progress_overrides": {}},  # per-platform tool progress (both Hermes spellings)
    "personalities": {},
    "skills": {
        "review": "auto", "external_dirs": [], "disabled": [], "guard_agent_created": False,
        # Skills Hub sources (`hermes skills search/install`). The trusted repos are the default index.
        "hub": {
            "timeout": 3.0,  # seconds each source gets per search; a slower one is reported, not awaited
            "github_api": "https://api.github.com",
            "repos": ["openai/skills/skills/.curated", "openai/skills/skills/.system", "anthropics/skills/skills",
                      "huggingface/skills/skills", "NVIDIA/skills/skills"],
            "marketplaces": ["anthropics/skills", "aiskillstore/marketplace"],
            "well_known": [],  # sites serving /.well-known/skills/index.json
            "trusted_repos": [],  # owner/repo added to the built-in trusted list
            "clawhub_url": "https://clawhub.ai/api/v1",
            "lobehub_url": "https://chat-agents.lobehub.com",
            "skills_sh_url": "https://skills.sh",
            "disabled_sources": [],  # e.g. [clawhub, lobehub]
        },
    },
    "mcp_servers": {},
    "cron": {},
    "gateway": {"max_concurrent_turns": 6, "hook_timeout": 5, "idle_evict_seconds": 900},
    "dashboard": {"port": 9119, "token": ""},  # `hermes dashboard` (Hermes's own dashboard keys are left alone)
    "a2a": {"enabled": False, "agents": {}},  # agent-to-agent: serve on the API server / call configured agents
    "platforms": {},
    "group_sessions_per_user": True,  # Hermes: a group chat is one session per participant (threads are shared)
    "team": {},  # gateway team mode (config/team.py); empty = off
    "browser": {"allow_private_urls": False, "cdp_url": "", "command_timeout": 30},
    "security": {"allow_private_urls": False},
    "web": {"backend": "", "search_backend": "", "extract_backend": "", "extract_char_limit": 15000,
            "allow_private_urls": False, "timeout": 20, "max_download_bytes": 10000000, "summarize": False},
    "mcp_discovery_timeout": 1.5,
    "mcp_single_query_discovery_timeout": 15,  # Hermes's key: how long a one-shot run waits for its servers
    "tools": {"tool_search": {"enabled": "auto", "threshold_pct": 10}, "schema_style": "ours"},
    "plugins": {"enabled": [], "disabled": [], "entries": {}},  # opt-in, as in Hermes
    "known_plugin_toolsets": {},  # platform -> plugin toolsets the user has seen (Hermes writes it)
    "delegation": {"max_iterations": 50, "max_concurrent_children": 3, "max_summary_chars": 24000,
                   "child_timeout_seconds": 0, "model": "", "provider": "", "base_url": "", "api_key": ""},
    "budget": {"session_usd": None, "day_usd": None, "month_usd": None, "session_tokens": None, "day_tokens": None,
               "month_tokens": None, "warn_at": 0.8, "users": {}, "cron": {}, "batch": {}},
    "_config_version": 1,
}

# Options `hermes config migrate` never writes into a file: the released Hermes reads these keys too,
# and our value differs from the one Hermes assumes when the key is absent (model.* are detected per
# endpoint by Hermes; approvals.mode "manual" here vs Hermes's "smart", which sends every flagged command
# to a model; display.streaming on here, where the REPL streams tokens, off in Hermes) — writing ours
# would change how Hermes behaves on the same home. plugins.enabled: when the key is absent, Hermes's own
# migration enables the plugins already installed; an empty list written here would stop that.
# known_plugin_toolsets is Hermes's record of the plugin toolsets a user has seen: Hermes writes it.
# Options read with no default (absent = not used): `hermes config set` and the dashboard know them,
# `config migrate` never writes them. model.pricing: USD per 1M tokens for a custom endpoint (spending caps).
OPTIONAL_KEYS: frozenset[str] = frozenset({
    "model.pricing", "model.pricing.input", "model.pricing.output", "model.pricing.cache_read",
    "model.pricing.cache_write",
})

NOT_MIGRATED: frozenset[str] = frozenset({
    "model.provider", "model.default", "model.base_url", "model.context_length", "model.max_tokens",
    "approvals.mode", "display.streaming", "plugins.enabled", "known_plugin_toolsets",
    "display.platforms", "display.tool_progress_overrides",  # a user's own per-platform choices; the second is 0.19's
})

# Environment variables (from the process or $HERMES_HOME/.env) mapped onto config keys.
ENV_TO_CONFIG: dict[str, str] = {
    "HERMES_INFERENCE_MODEL": "model.default",
    "HERMES_INFERENCE_PROVIDER": "model.provider",
    "HERMES_MAX_ITERATIONS": "agent.max_turns",
    "TERMINAL_ENV": "terminal.backend",
    "TERMINAL_CWD": "terminal.cwd",
    "TERMINAL_TIMEOUT": "terminal.timeout",
    "TERMINAL_DOCKER_IMAGE": "terminal.docker_image",
    "TERMINAL_SINGULARITY_IMAGE": "terminal.singularity_image",
    "TERMINAL_SSH_HOST": "terminal.ssh_host",
    "TERMINAL_SSH_USER": "terminal.ssh_user",
    "TERMINAL_SSH_PORT": "terminal.ssh_port",
    "TERMINAL_SSH_KEY": "terminal.ssh_key",
    "TERMINAL_MODAL_IMAGE": "terminal.modal_image",
    "TERMINAL_DAYTONA_IMAGE": "terminal.daytona_image",
}

# Optional secrets: metadata drives `hermes setup` / `hermes config migrate`.
OPTIONAL_ENV_VARS: dict[str, dict] = {
    "OPENROUTER_API_KEY": {
        "description": "OpenRouter API key (provider openrouter)",
        "prompt": "OpenRouter API key",
        "url": "https://openrouter.ai/keys",
        "tools": [],
        "password": True,
    },
    "OPENAI_API_KEY": {
        "description": "API key for an OpenAI-compatible endpoint",
        "prompt": "OpenAI API key",
        "url": "https://platform.openai.com/api-keys",
        "tools": [],
        "password": True,
    },
    "OPENAI_BASE_URL": {
        "description": "Base URL of an OpenAI-compatible endpoint",
        "prompt": "Base URL",
        "url": "",
        "tools": [],
        "password": False,
    },
    "SUDO_PASSWORD": {
        "description": "Password for sudo in the terminal tool",
        "prompt": "sudo password",
        "url": "",
        "tools": ["terminal"],
        "password": True,
    },
}
