"""auxiliary.<task> rows: Hermes's default rows (provider auto, no model) mean the main endpoint."""

from __future__ import annotations

from hermes_agent.bootstrap.provider import auxiliary_provider, build_provider
from hermes_agent.config.settings import Settings

MODEL = {"provider": "custom", "default": "main-model", "base_url": "http://127.0.0.1:9/v1", "api_key": "k"}
HERMES_ROW = {"provider": "auto", "model": "", "base_url": "", "api_key": "", "timeout": 120, "extra_body": {}}


def _settings(auxiliary: dict) -> Settings:
    return Settings(data={"model": MODEL, "auxiliary": auxiliary})


def test_hermes_default_rows_use_the_main_provider():
    settings = _settings({"compression": HERMES_ROW, "title_generation": {**HERMES_ROW, "enabled": True}})
    main = build_provider(settings)
    assert auxiliary_provider(settings, "compression", main) is main
    assert auxiliary_provider(settings, "title_generation", main) is main
    assert auxiliary_provider(settings, "missing", main) is main


def test_a_row_naming_a_model_uses_the_main_endpoint_with_that_model():
    settings = _settings({"compression": {**HERMES_ROW, "model": "small-model"}})
    main = build_provider(settings)
    side = auxiliary_provider(settings, "compression", main)
    assert side is not main and side.model == "small-model" and side.inner.base_url == MODEL["base_url"]
