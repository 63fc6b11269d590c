"""Slash commands in the real `hermes` REPL: what they print, and what the model receives afterwards."""

from __future__ import annotations

import json
import re
import subprocess
import time
from pathlib import Path

import pexpect

from tests.integration.repl_driver import convo, wait_requests


def test_model_switch_applies_to_the_next_request(start, scripted):
    repl = start()
    repl.send("/model other-model")
    repl.expect(r"Model switched to other-model")
    repl.send("hi")
    repl.expect(r"ok")
    assert wait_requests(scripted, 1)[0]["model"] == "other-model"
    repl.send("/model")
    repl.expect(r"model\s+other-model")


def test_new_starts_an_empty_conversation(start, scripted):
    scripted.add({"content": "first answer"}, {"content": "fresh answer"})
    repl = start()
    repl.send("remember this")
    repl.expect(r"first answer")
    repl.send("/new")
    repl.expect(r"New conversation started")
    repl.send("what did I say?")
    repl.expect(r"fresh answer")
    assert convo(wait_requests(scripted, 2)[1]) == [("user", "what did I say?")]


def test_retry_resends_the_last_message_and_replaces_its_answer(start, scripted):
    scripted.add({"content": "bad answer"}, {"content": "better answer"}, {"content": "fine"})
    repl = start()
    repl.send("question one")
    repl.expect(r"bad answer")
    repl.send("/retry")
    repl.expect(r"better answer")
    repl.send("thanks")
    repl.expect(r"fine")
    bodies = wait_requests(scripted, 3)
    assert convo(bodies[1]) == [("user", "question one")]
    assert convo(bodies[2]) == [("user", "question one"), ("assistant", "better answer"), ("user", "thanks")]


def test_undo_removes_the_last_exchange(start, scripted):
    scripted.add({"content": "A1"}, {"content": "A2"}, {"content": "A3"})
    repl = start()
    repl.send("one")
    repl.expect(r"A1")
    repl.send("two")
    repl.expect(r"A2")
    repl.send("/undo")
    repl.expect(r"Undone: two \(2 messages removed\)")
    repl.send("three")
    repl.expect(r"A3")
    assert convo(wait_requests(scripted, 3)[2]) == [("user", "one"), ("assistant", "A1"), ("user", "three")]


def test_compress_summarises_the_middle(start, scripted):
    filler = "lorem ipsum dolor sit amet " * 40  # big enough that a summary is smaller than the turns
    scripted.add(*({"content": f"answer {i} {filler}"} for i in range(6)))
    repl = start("compression:\n  protect_first_n: 1\n  protect_last_n: 2\n")
    for i in range(6):
        repl.send(f"message {i}")
        repl.expect(rf"answer {i}")
    scripted.add({"content": "SUMMARY: the user sent numbered messages."}, {"content": "after"})
    repl.send("/compress")
    m = repl.expect(r"Compressed: (\d+) → (\d+) messages")
    assert int(m.group(2)) < int(m.group(1))
    repl.send("and now?")
    repl.expect(r"after")
    last = wait_requests(scripted, 8)[-1]
    assert "SUMMARY: the user sent numbered messages." in json.dumps(last["messages"])
    assert len(last["messages"]) < 14


def test_unknown_command_gets_a_suggestion(start):
    repl = start()
    repl.send("/modle gpt")
    repl.expect(r"Unknown command /modle\. Did you mean /model\?")
    repl.send("/help")
    repl.expect(r"/personality")
    repl.expect(r"/quit")


def test_personality_switch_changes_the_system_prompt(start, scripted, hermes_home):
    (hermes_home / "SOUL.md").write_text("You are Soulful, a calm assistant.\n")
    repl = start("personalities:\n  pirate: Talk like a pirate at all times.\n")
    repl.send("/personality pirate")
    repl.expect(r"Personality set to pirate: the system prompt changes from the first message")
    repl.send("ahoy")
    repl.expect(r"ok")
    repl.send("/new")
    repl.expect(r"New conversation started")
    repl.send("still a pirate?")
    repl.expect(r"ok")
    repl.send("/personality default")
    repl.expect(r"next conversation")
    repl.send("/new")
    repl.expect(r"New conversation started")
    repl.send("hello")
    repl.expect(r"ok")
    prompts = [b["messages"][0]["content"] for b in wait_requests(scripted, 3)]
    assert all("Talk like a pirate" in p and "Soulful" not in p for p in prompts[:2])
    assert "Soulful" in prompts[2] and "pirate" not in prompts[2]


def test_configured_personality_applies_from_the_start(start, scripted):
    start("personalities:\n  terse:\n    system_prompt: Answer in five words or fewer.\n"
          "display:\n  personality: terse\n").send("hi")
    assert wait_requests(scripted, 1)[0]["messages"][0]["content"].startswith("Answer in five words or fewer.")


def test_sessions_are_listed_titled_and_resumed(start, scripted):
    scripted.add({"content": "noted: apples"})
    repl = start()
    repl.send("remember apples")
    repl.expect(r"noted: apples")
    repl.send("/title Fruit talk")
    repl.expect(r"Title set: Fruit talk")
    repl.send("/sessions")
    sid = repl.expect(r"● (\S+)\s+\S+ \S+\s+cli\s+2\s+Fruit talk").group(1)
    assert repl.exit() == 0

    scripted.add({"content": "you said apples"})
    again = start("", "-c")
    again.expect(rf"Resumed session {sid} “Fruit talk”: 2 messages", anywhere=True)  # may print before the banner
    again.send("what fruit?")
    again.expect(r"you said apples")
    assert convo(wait_requests(scripted, 2)[1]) == [("user", "remember apples"), ("assistant", "noted: apples"),
                                                     ("user", "what fruit?")]
    again.send("/new")
    again.expect(r"New conversation started")
    again.send(f"/resume {sid[:12]}")
    again.expect(rf"Resumed session {sid} “Fruit talk”: 4 messages")


def test_info_commands_show_the_session(start, scripted, hermes_home):
    scripted.add({"content": "noted", "usage": {"prompt_tokens": 1200, "completion_tokens": 34}})
    repl = start()
    repl.send("remember the milk")
    repl.expect(r"noted")
    repl.send("/usage")
    repl.expect(r"turns\s+1\s+model calls\s+1\s+input tokens\s+1,200\s+output tokens\s+34")
    repl.send("/history")
    repl.expect(r"you: remember the milk\s+hermes: noted")
    repl.send("/save convo.json")
    repl.expect(r"Saved 3 messages to convo\.json")
    saved = json.loads((Path(repl.child.cwd) / "convo.json").read_text())
    assert [m["role"] for m in saved["messages"]] == ["system", "user", "assistant"]
    repl.send("/tools")
    repl.expect(r"📖 read_file\s+file")
    repl.send("/toolsets")
    repl.expect(r"● hermes-cli")
    repl.send("/provider")
    repl.expect(r"model\s+scripted-model")
    repl.send("/config")
    repl.expect(rf"home\s+{re.escape(str(hermes_home))}")
    repl.send("/verbose")
    repl.expect(r"Tool progress: verbose")
    repl.send("/reasoning show")
    repl.expect(r"Reasoning is now shown")
    repl.send("/yolo")
    repl.expect(r"YOLO on")
    repl.send("/stop")
    repl.expect(r"No background processes are running")
    repl.send("/rollback")
    repl.expect(r"No checkpoints for .* yet")
    repl.send("/quit")
    repl.child.expect(pexpect.EOF, timeout=10)
    repl.child.close()
    assert repl.child.exitstatus == 0


def test_rollback_restores_files_changed_by_the_agent(start, scripted):
    repl = start("checkpoints:\n  enabled: true\n")  # off by default, as in Hermes
    work = Path(repl.child.cwd)
    (work / "keep.txt").write_text("original\n")
    scripted.add({"tool_calls": [{"name": "write_file", "arguments": {"path": "keep.txt", "content": "clobbered\n"}}]},
                 {"content": "written"})
    repl.send("overwrite keep.txt")
    repl.expect(r"written")
    assert (work / "keep.txt").read_text() == "clobbered\n"
    repl.send("/rollback")
    repl.expect(r"Restored checkpoint [0-9a-f]{10}")
    assert (work / "keep.txt").read_text() == "original\n"


def test_stop_kills_background_processes(start, scripted):
    scripted.add({"tool_calls": [{"name": "terminal", "arguments": {"command": "sleep 6071", "background": True}}]},
                 {"content": "started it"})
    repl = start()
    repl.send("run a server")
    repl.expect(r"started it")
    started = json.loads(wait_requests(scripted, 2)[1]["messages"][-1]["content"])
    assert started["status"] == "running"
    repl.send("/stop")
    repl.expect(r"Stopped 1 background process\(es\): sleep 6071")
    deadline = time.monotonic() + 5  # pids inside the sandbox are its namespace's own: find it by its command
    while "sleep 6071" in subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout.split("\n") \
            and time.monotonic() < deadline:
        time.sleep(0.05)
    assert "sleep 6071" not in subprocess.run(["ps", "-eo", "args="], capture_output=True, text=True).stdout.split("\n")
    repl.send("/stop")
    repl.expect(r"No background processes are running")


def test_installed_skills_are_slash_commands(start, scripted, hermes_home):
    skill = hermes_home / "skills" / "ops" / "deploy-checklist"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy-checklist\ndescription: Steps before a deploy\n---\n"
                                    "1. Run the tests.\n2. Tag the release.\n")
    scripted.add({"content": "checklist followed"})
    repl = start()
    repl.send("/deploy-checklist for v2.1")
    repl.expect(r"checklist followed")
    sent = wait_requests(scripted, 1)[0]["messages"][-1]["content"]
    assert sent.startswith("Follow the skill `deploy-checklist` below for: for v2.1")
    assert "2. Tag the release." in sent
    repl.send("/deploy-checklisst")
    repl.expect(r"Unknown command /deploy-checklisst")
    scripted.add({"content": "underscored too"})
    repl.send("/deploy_checklist again")  # as Telegram spells it (its commands allow no hyphen)
    repl.expect(r"underscored too")
    assert wait_requests(scripted, 2)[1]["messages"][-1]["content"].startswith(
        "Follow the skill `deploy-checklist` below for: again")


def test_a_disabled_skill_is_not_a_slash_command(start, scripted, hermes_home):
    skill = hermes_home / "skills" / "ops" / "deploy-checklist"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: deploy-checklist\ndescription: Steps before a deploy\n---\nSteps.\n")
    repl = start("skills:\n  disabled: [deploy-checklist]\n")
    repl.send("/deploy-checklist for v2.1")
    repl.expect(r"Unknown command /deploy-checklist")
    assert scripted.requests == []
