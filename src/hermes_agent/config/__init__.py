"""Configuration: DEFAULT_CONFIG, the layered loader and the frozen Settings (only place env is read)."""

from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.loader import load_settings
from hermes_agent.config.settings import ModelSettings, Settings

__all__ = ["DEFAULT_CONFIG", "ModelSettings", "Settings", "load_settings"]
