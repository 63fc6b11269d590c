"""Regenerate src/hermes_agent/config/hermes_keys.json: every config key (dotted leaf -> default) that the
released Hermes 0.19.0 and the upstream-tracking build (config version 50) know, read from their own
DEFAULT_CONFIG in their venvs ($HERMES_REF_BIN, $HERMES_UPSTREAM_BIN). Run by hand when either changes:
  python scripts/hermes_config_keys.py"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

DUMP = r"""
import json, sys
try:
    from hermes_cli.config_defaults import DEFAULT_CONFIG
except ImportError:
    from hermes_cli.config import DEFAULT_CONFIG
def leaves(d, p=""):
    for k, v in d.items():
        if isinstance(v, dict) and v:
            yield from leaves(v, p + str(k) + ".")
        else:
            yield p + str(k), v
print(json.dumps({k: v for k, v in leaves(DEFAULT_CONFIG)}, default=repr, sort_keys=True))
"""


def dump(binary: str) -> dict:
    python = str(Path(binary).with_name("python"))
    env = {**os.environ, "HERMES_HOME": "/tmp/hermes-keys-scratch", "HOME": "/tmp/hermes-keys-scratch"}
    out = subprocess.run([python, "-c", DUMP], capture_output=True, text=True, check=True, env=env)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    ref, up = dump(os.environ["HERMES_REF_BIN"]), dump(os.environ["HERMES_UPSTREAM_BIN"])
    data = {"versions": {"0.19.0": ref.pop("_config_version"), "upstream": up.pop("_config_version")},
            "v0_19": ref, "upstream": up}
    target = Path(__file__).parents[1] / "src" / "hermes_agent" / "config" / "hermes_keys.json"
    target.write_text(json.dumps(data, sort_keys=True, separators=(",", ":")) + "\n", encoding="utf-8")
    print(f"{target}: {len(ref)} keys of 0.19.0, {len(up)} of upstream")


if __name__ == "__main__":
    main()
