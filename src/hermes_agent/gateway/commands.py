"""The gateway's in-chat commands and who may run them (team mode): one table, each command with its minimum
role. Outside team mode the users on the platform's allowlist (<PLATFORM>_ALLOWED_USERS) are the owner and the
others admitted (allow-all, DM pairing) are guests, whose words are untrusted content: they may run what a member
may, never an owner's or admin's command (rt14 b31: a guest's /sethome rewrote the owner's .env). A command not in the table goes
to the agent as text (`/<skill-name> TASK` runs a skill with the speaker's own tools).

Anything that changes config, routing (the home channel), approvals, cron, memory, skills or the model, or that
reads other people's chats, is the owner's unless the table says otherwise; a person's own conversation
(/new, /stop, /status, /budget) is theirs. Red-team round 6 a11: a guest's `/sethome` had rerouted the owner's
cron output to the guest's chat."""

from __future__ import annotations

from dataclasses import dataclass

from hermes_agent.config.team import ROLES, Person


@dataclass(frozen=True, slots=True)
class Command:
    role: str  # the lowest role that may run it (ROLES: owner > admin > member > guest)
    help: str
    changes: str = ""  # what it changes beyond the speaker's own conversation ("" = nothing shared)


COMMANDS: dict[str, Command] = {
    "/new": Command("guest", "/new or /reset: start a new conversation"),
    "/reset": Command("guest", ""),
    "/stop": Command("guest", "/stop: stop the current task"),
    "/status": Command("guest", "/status: this chat's session"),
    "/budget": Command("guest", "/budget: what is left of your spending caps"),
    "/help": Command("guest", "/help: this text"),
    "/start": Command("guest", ""),
    # withdrawing one's own pending request; answering someone else's needs an approver (gateway/team.py)
    "/deny": Command("guest", "/deny: withdraw your request waiting for approval"),
    "/approve": Command("admin", "/approve, /deny: answer a pending approval", "approvals"),
    "/skills": Command("member", "/skills: installed skills; /<skill-name> TASK runs one"),
    "/users": Command("admin", "/users: people and their roles"),
    "/role": Command("admin", "/role USER admin|member|guest: set someone's role", "roles"),
    "/model": Command("owner", "/model [NAME]: show or switch this chat's model", "model"),
    "/sethome": Command("owner", "/sethome: make this chat the platform's home channel", "routing (.env)"),
}


def command_word(text: str) -> str:
    """`/Cmd@bot args` -> `/cmd`."""
    return text.split()[0].split("@")[0].lower() if text.split() else ""


def may_run(word: str, person: Person | None) -> bool:
    """Whether `person` (None outside team mode: anyone accepted) may run the command `word`."""
    cmd = COMMANDS.get(word)
    if cmd is None or person is None:
        return True
    role = person.role if person.role in ROLES else "guest"
    return ROLES.index(role) <= ROLES.index(cmd.role)


def guest_may_run(word: str) -> bool:
    """Outside team mode: whether an admitted user who is not on the allowlist may run `word`."""
    cmd = COMMANDS.get(word)
    return cmd is None or ROLES.index(cmd.role) >= ROLES.index("member")


def guest_refusal(word: str, platform: str) -> str:
    """The one line a guest (outside team mode) gets for an owner's command."""
    return (f"⛔ Only the owner can use {word}: it changes {COMMANDS[word].changes or 'what is not yours'} "
            f"(the owner is who {platform.upper()}_ALLOWED_USERS names).")


def refusal(word: str, person: Person) -> str:
    cmd = COMMANDS[word]
    who = "the owner" if cmd.role == "owner" else "the owner or an admin" if cmd.role == "admin" else \
        "the owner, admins and members"
    return f"⛔ Only {who} can use {word} (you are {person.role})."


def help_text(person: Person | None, guest: bool = False) -> str:
    """The commands this person (outside team mode: the owner, or a `guest`) may run."""
    lines = [c.help for w, c in COMMANDS.items()
             if c.help and may_run(w, person) and (person is not None or w not in ("/users", "/role"))
             and not (guest and not guest_may_run(w))]
    return "Commands:\n" + "\n".join(lines)
