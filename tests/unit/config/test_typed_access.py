"""Settings are read through the typed tree (`settings.cfg.<section>.<key>`) everywhere outside config/:
no `settings.get("a.b", default)` restating a default at a call site, no `settings.section(...)`."""

from __future__ import annotations

import re
from pathlib import Path

from hermes_agent.config.defaults import DEFAULT_CONFIG
from hermes_agent.config.loader import get_dotted

SRC = Path(__file__).resolve().parents[3] / "src" / "hermes_agent"
_MISSING = object()
# settings.get("...") / settings.get(f"...") with any literal key, and settings.section(...)
_SETTINGS_READ = re.compile(r"""settings\.(get\(\s*f?["']|section\()""")
# any receiver: .get("a.b") where a.b is a config key (s.get, st.get, cfg_settings.get, ...)
_DOTTED = re.compile(r"""\.get\(\s*["']([A-Za-z_]+(?:\.[A-Za-z_]+)+)["']""")


def untyped_reads(text: str) -> list[str]:
    """Lines of `text` that read a setting by its key instead of through settings.cfg."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        dotted = [k for k in _DOTTED.findall(line) if get_dotted(DEFAULT_CONFIG, k, _MISSING) is not _MISSING]
        if _SETTINGS_READ.search(line) or dotted:
            out.append(f"{number}: {line.strip()}")
    return out


def test_the_detector_finds_each_shape():
    assert untyped_reads('x = int(settings.get("agent.max_turns", 90) or 90)')
    assert untyped_reads('per = (settings.get("platform_toolsets") or {}).get(p)')
    assert untyped_reads('c = self.settings.section("compression")')
    assert untyped_reads('v = st.get("tools.tool_search.threshold_pct", 10)')
    assert untyped_reads('t = {k: settings.get(f"terminal.{k}", "") for k in ks}')
    assert not untyped_reads("x = settings.cfg.agent.max_turns")
    assert not untyped_reads('view = sys.modules.get("tools.registry")')  # not a config key


def test_no_setting_is_read_by_key_outside_config():
    found = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC)
        if rel.parts[0] == "config":
            continue
        found += [f"{rel}:{hit}" for hit in untyped_reads(path.read_text(encoding="utf-8"))
                  if "args.key" not in hit]  # `hermes config get|set KEY`: the user names the key
    assert found == [], "read these through settings.cfg:\n" + "\n".join(found)
