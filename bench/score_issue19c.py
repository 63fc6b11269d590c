"""Detection / false-alarm rates of the approval rules on the published attack corpora
(../shared/attacks/corpus1.py, corpus2.py) and on the repo's command corpora, and of the intent scan on its
held-out and unseen sets (issue 19, third round). Run: .venv/bin/python bench/score_issue19c.py [-v]"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

from ruamel.yaml import YAML

from hermes_agent.approval.rules import analyse_command
from hermes_agent.intent import scan

ROOT = Path(__file__).resolve().parents[1]
SHARED = Path("/work/shared/attacks")
COMMANDS = ["approval_corpus", "approval_heldout", "approval_heldout_19", "approval_probe_19", "approval_heldout_19c",
            "approval_unseen_19c", "approval_heldout_19d"]
TEXTS = ["intent_heldout_19c", "intent_unseen_19c"]


def rate(name: str, dangerous: list[str], benign: list[str], verbose: bool) -> None:
    missed = [c for c in dangerous if not analyse_command(c).dangerous]
    flagged = [c for c in benign if analyse_command(c).findings]
    caught = len(dangerous) - len(missed)
    print(f"{name}: caught {caught}/{len(dangerous)} = {caught / len(dangerous):.1%}; "
          f"false alarms {len(flagged)}/{len(benign)} = {len(flagged) / len(benign):.1%}")
    if verbose:
        print("".join(f"    missed: {c!r}\n" for c in missed) + "".join(f"    false alarm: {c!r}\n" for c in flagged), end="")


def main() -> None:
    verbose = "-v" in sys.argv
    yaml = YAML(typ="safe", pure=True)
    if (SHARED / "corpus1.py").exists():
        c1 = runpy.run_path(str(SHARED / "corpus1.py"))
        rate("corpus1", c1["DANGEROUS"], c1["BENIGN"], verbose)
        c2 = runpy.run_path(str(SHARED / "corpus2.py"))["CASES"]
        rate("corpus2", [c for c, label, _ in c2 if label == "dangerous"], [c for c, label, _ in c2 if label == "benign"],
             verbose)
    for name in COMMANDS:
        data = yaml.load((ROOT / "tests/fixtures" / f"{name}.yaml").read_text("utf-8"))
        rate(name, [e["cmd"] for e in data["hardline"] + data["dangerous"]], list(data["benign"]), verbose)
    for name in TEXTS:
        data = yaml.load((ROOT / "tests/fixtures" / f"{name}.yaml").read_text("utf-8"))
        missed = [t for t in data["planted"] if not scan(t)]
        flagged = [t for t in data["ordinary"] if scan(t)]
        print(f"{name}: caught {len(data['planted']) - len(missed)}/{len(data['planted'])}; "
              f"false alarms {len(flagged)}/{len(data['ordinary'])}")
        if verbose:
            print("".join(f"    missed: {t}\n" for t in missed) + "".join(f"    false alarm: {t}\n" for t in flagged), end="")


if __name__ == "__main__":
    main()
