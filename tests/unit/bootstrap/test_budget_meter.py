"""The spending meter against a real state.db: which caps a person has, token and day caps, warn-once at 80%,
model.pricing, and spend that outlives the process (a new meter sees what earlier runs booked)."""

from __future__ import annotations

import pytest

from hermes_agent.bootstrap.budget import Caps, Ledger, Meter, caps_for, report
from hermes_agent.config.settings import Settings
from hermes_agent.errors import BudgetExceeded, ConfigError
from hermes_agent.messages import Message, Usage, user
from hermes_agent.providers.base import ChatRequest
from hermes_agent.storage.store import SessionStore

REQ = ChatRequest((user("x" * 400),), max_tokens=100)  # ~101 tokens in, 100 out
REPLY = Message("assistant", "ok", usage=Usage(prompt_tokens=1000, completion_tokens=100))


def _settings(budget: dict, model: dict | None = None) -> Settings:
    return Settings(data={"model": {"default": "my-model", **(model or {})}, "budget": budget})


@pytest.fixture
def store(tmp_path):
    with SessionStore(tmp_path / "state.db") as s:
        yield s


def _meter(settings: Settings, store: SessionStore, who: str = "", sid: str | None = "s1", notes=None) -> Meter:
    return Meter(settings, who, Ledger(lambda: store), lambda: sid, (notes.append if notes is not None else None))


def test_caps_for_people_cron_and_batch():
    s = _settings({"day_usd": 5, "users": {"telegram:7": {"day_usd": 1}, "9": {"session_tokens": 50}},
                   "cron": {"session_usd": 0.5}, "batch": {"day_usd": None}})
    assert caps_for(s, "").day_usd == 5 and caps_for(s, "").config_prefix == "budget"
    assert caps_for(s, "telegram:7").day_usd == 1 and caps_for(s, "telegram:7").config_prefix == 'budget.users."telegram:7"'
    nine = caps_for(s, "slack:9")
    assert nine.session_tokens == 50 and nine.day_usd == 5  # a bare sender id matches on any platform
    assert caps_for(s, "cron").session_usd == 0.5 and caps_for(s, "cron").day_usd == 5
    assert caps_for(s, "batch").day_usd is None  # null lifts the cap for batch runs
    assert not Caps().any()


def test_token_cap_refuses_the_call_that_would_cross_it(store):
    m = _meter(_settings({"session_tokens": 2300}, {"pricing": {"input": 1, "output": 1}}), store)
    m.check("my-model", REQ)
    m.record("my-model", "main", REQ, REPLY)
    m.check("my-model", REQ)  # 1100 booked + ~205 next <= 2300
    m.record("my-model", "main", REQ, REPLY)
    with pytest.raises(BudgetExceeded, match=r"session cap 2,300 tokens \(budget.session_tokens\); spent 2,200"):
        m.check("my-model", REQ)


def test_day_cap_holds_across_sessions_and_processes(store):
    s = _settings({"day_usd": 0.023}, {"pricing": {"input": 10, "output": 10}})
    first = _meter(s, store, "telegram:7", "a")
    for _ in range(2):
        first.check("my-model", REQ)
        first.record("my-model", "main", REQ, REPLY)  # $0.011 each
    later = _meter(s, store, "telegram:7", "b")  # another session, a new process: the ledger remembers
    with pytest.raises(BudgetExceeded, match=r"day cap \$0.0230 .*spent \$0.0220 today"):
        later.check("my-model", REQ)
    _meter(s, store, "telegram:8", "c").check("my-model", REQ)  # someone else's day is their own


def test_warns_once_at_80_percent_and_unpriced_models_count_tokens(store):
    notes: list[str] = []
    m = _meter(_settings({"session_usd": 0.025, "session_tokens": 100000}, {"pricing": {"input": 10, "output": 10}}),
               store, notes=notes)
    for _ in range(2):
        m.record("my-model", "main", REQ, REPLY)
    assert notes == ["budget: 88% of the session cap used ($0.0220 of $0.0250, budget.session_usd)"]
    m.record("other-model", "aux:vision", REQ, REPLY)
    m.check("other-model", REQ)
    m.check("other-model", REQ)
    assert notes[1:] == ["budget: other-model has no price (set model.pricing for a custom endpoint): counting its "
                         "tokens only, money caps cannot see it"]
    assert m.totals()["session"] == (pytest.approx(0.022), 3300)
    assert "session usd: $0.0220 of $0.0250 spent (88%), 12% left" in report(m.settings, "", m)


def test_model_pricing_is_checked():
    with pytest.raises(ConfigError, match="model.pricing needs input and output"):
        _settings({}, {"pricing": {"input": 1}}).model  # noqa: B018
    with pytest.raises(ConfigError, match="model.pricing must map"):
        _settings({}, {"pricing": {"input": "cheap", "output": 1}}).model  # noqa: B018
    assert _settings({}, {"pricing": {"input": 1, "output": 2, "cache_read": 0.1}}).model.pricing == (1, 2, 0.1, None)


def test_a_conversation_continued_by_compression_keeps_its_root_session(store):
    root = store.create_session("cli").id
    child = store.create_session("cli", parent_session_id=root).id
    store.end_session(root, "compression")
    grandchild = store.create_session("cli", parent_session_id=child).id
    store.end_session(child, "rewound")
    assert store.conversation_root(grandchild) == root  # spend booked under root keeps counting after compression
    other = store.create_session("cli", parent_session_id=root).id  # e.g. a subagent: not a continuation
    store.end_session(root, "ended")
    assert store.conversation_root(other) == other


def test_a_role_cap_sits_between_budget_and_the_persons_own():
    s = Settings(data={"model": {"default": "my-model"},
                       "budget": {"day_usd": 5, "session_usd": 2, "users": {"telegram:8": {"day_usd": 3}}},
                       "team": {"people": {"telegram:1": "owner", "telegram:7": "guest", "telegram:8": "guest"},
                                "roles": {"guest": {"budget": {"day_usd": 0.5, "session_tokens": 900}}}}})
    guest = caps_for(s, "telegram:7")
    assert (guest.day_usd, guest.session_tokens, guest.session_usd) == (0.5, 900, 2)  # role over budget.*
    assert guest.config_prefix == "team.roles.guest.budget"
    own = caps_for(s, "telegram:8")
    assert (own.day_usd, own.session_tokens) == (3, 900)  # budget.users.<who> over the role
    assert own.config_prefix == 'budget.users."telegram:8"'
    assert caps_for(s, "telegram:1").day_usd == 5  # the owner's role has no caps
    assert caps_for(s, "telegram:42", role="admin").day_usd == 5  # a resolved role (an allowlisted admin) wins
    assert caps_for(s, "cron").day_usd == 5  # roles never reach cron or batch


def test_a_guest_meter_refuses_past_the_role_cap(store):
    s = Settings(data={"model": {"default": "my-model", "pricing": {"input": 10, "output": 10}},
                       "team": {"people": {"telegram:1": "owner"},
                                "roles": {"guest": {"budget": {"session_usd": 0.001}}}}})
    meter = _meter(s, store, "telegram:7")
    with pytest.raises(BudgetExceeded) as stop:
        meter.check("my-model", REQ)
    assert "team.roles.guest.budget.session_usd" in str(stop.value)
    _meter(s, store, "telegram:1").check("my-model", REQ)  # the owner has no cap
