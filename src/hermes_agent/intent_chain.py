"""What planted text wants, judged by the parts it names rather than by a list of sentences: a chain of
parts that together make an attack, found in one piece of text or spread over neighbouring pieces (two
memory entries, the paragraphs of a skill). Each part is a class of words in every language the intent
scanner knows (hermes_agent.intent), read on the normalised text (NFKC, invisible characters removed,
casefolded) and on its de-leeted reading, with string joins in code undone ('~/.bash' + 'rc').

The parts: something from the network (URL, IP, host/path, a download verb), execution (a pipe into a shell
or interpreter, a run verb, "piped to the shell"), concealment (silently, not mentioned, don't bring it up
with the person), a standing trigger (before anything else, every session starts with), persistence (shell
start-up files, crontab, git hooks, systemd, autostart), a credential (key files, .env, token variables) and
disclosure (verbatim into the reply or summary), an override in any wording (the guidance given before is
obsolete; the only rules that apply are these).

The chains (any one is an intent):
- network + execution + concealment: code fetched and run without the user knowing;
- network + execution + standing trigger: remote code run first, unasked, every time;
- persistence + network + execution: remote code planted to run later (a shell rc line, a cron entry);
- credential + disclosure (+ a read): key material copied into what the model writes out;
- override + concealment: the author's rules replace the user's, and the user is not to hear of it.
Pure; regexes compiled on first use."""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

_LOOP = r"(?!localhost\b|127\.|0\.0\.0\.0|\[::1\])"
_NET = ("https?://" + _LOOP + r"|\bftp://|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b(?:[a-z0-9-]+\.)+[a-z]{2,}/[\w./?=&%-]*|"
        r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|urlopen|urllib|requests\.get|httpx)\b|"
        r"\b(?:fetch\w*|download\w*|one-?liner\s+from|pull\w*\s+(?:\w+\s+){0,3}from|grab\w*\s+(?:\w+\s+){0,3}from)\b|"
        r"\b(?:herunterlad\w*|heruntergelad\w*|abruf\w*|abgeruf\w*|télécharg\w*|telecharg\w*|récupèr\w*|descarg\w*|"
        r"scaric\w*|baix\w*|haal\w*\s+\S+\s+op|ladda\s+ner|pobier\w*|скача\w*|загруз\w*|indir\w*)|"
        r"下载|下載|获取|獲取|ダウンロード|取得|다운로드|받아")
# An address or a network client (not a bare "fetch": `git fetch` and running the tests is a workflow).
_ADDR = ("https?://" + _LOOP + r"|\bftp://|\b\d{1,3}(?:\.\d{1,3}){3}\b|\b(?:[a-z0-9-]+\.)+[a-z]{2,}/[\w./?=&%-]*|"
         r"\b(?:curl|wget|iwr|irm|invoke-webrequest|invoke-restmethod|urlopen)\b")
_EXEC = (r"\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\|\s*(?:sudo\s+)?(?:python\d?|perl|ruby|node|iex)\b|"
         r"\b(?:pip(?:e[sd]?|ing))\b|\b(?:sh|bash|zsh|dash|shell|interpreter|terminal|eval|source|exec\w*|execut\w*|"
         r"run|runs|running|ran|launch\w*|invok\w*|"
         r"ausführ\w*|ausgeführt|ausfuhr\w*|führe\w*|exécut\w*|execut\w*|lanc\w*|ejecut\w*|esegu\w*|rod\w*|"
         r"uitvoer\w*|uitgevoerd|voer\w*|kör\w*|uruchom\w*|wykon\w*|выполн\w*|запуск\w*|запуст\w*|"
         r"çalıştır\w*|calistir\w*|kabu[gğk]\w*|терминал\w*|оболочк\w*)\b|"
         r"运行|執行|执行|運行|终端|終端|実行|ターミナル|シェル|실행|터미널|셸")
_HIDE_EXTRA = (r"\b(?:silently|quietly|secretly|unnoticed|unannounced|under\s+the\s+radar|behind\s+\w+\s+back|"
               r"without\s+(?:a\s+)?(?:word|mention\w*|notice|notif\w*|telling|saying|informing|comment\w*)|"
               r"(?:not|never|no\s+need\s+to|nothing\s+needs\s+to)\s+(?:be\s+|get\s+|being\s+)?(?:mention|report|show|surfac|"
               r"announc|tell|told|flag|notif|bring\w*\s+(?:\w+\s+){0,3}up)\w*|"
               r"(?:don'?t|do\s+not|never|no\s+need\s+to)\s+bring\s+(?:\w+\s+){0,4}up|"
               r"keep\s+(?:it|this|that|them)\s+(?:to\s+yourself|between\s+us|quiet|hidden|private)|"
               r"only\s+(?:confuses?|worr(?:y|ies)|bothers?|distracts?)\s+(?:them|the\s+user|him|her)|"
               r"stillschweigend|unbemerkt|leise|nicht\s+erwähn\w*|ohne\s+(?:\w+\s+){0,3}zu\s+erwähnen|en\s+silence|"
               r"silencieusement|sans\s+rien\s+dire|silenciosamente|en\s+silencio|sin\s+decir\s+nada|in\s+silenzio|"
               r"silenziosamente|senza\s+dire\s+nulla|em\s+silêncio|stilletjes|ongemerkt|i\s+tysthet|tyst|po\s+cichu|"
               r"bez\s+słowa|молча|тихо|незаметно|не\s+говоря|sessizce|söyleme(?:yin|den)?|bahsetme(?:yin|den)?)\b|"
               r"静默|默默|悄悄|偷偷|不声不响|不聲不響|黙って|こっそり|静かに|조용히|몰래")
_STANDING = (r"\b(?:before\s+(?:anything\s+else|doing\s+anything|any(?:thing|\s+other\s+\w+)|answering|replying|responding|"
             r"every\s+\w+|each\s+\w+|you\s+(?:start|begin|answer|reply|do\s+anything))|first\s+thing|"
             r"at\s+the\s+(?:start|beginning)\s+of\s+(?:every|each|any|all)|(?:every|each)\s+(?:session|turn|conversation|"
             r"chat|reply|answer)|sessions?\s+(?:start|begin|open)s?\s+with|on\s+(?:startup|session\s+start|every\s+start)|"
             r"from\s+now\s+on|"
             r"vor\s+jede[mnr]|zuerst|bei\s+jede[mnr]|avant\s+(?:tout|chaque|de\s+répondre)|à\s+chaque|antes\s+de\s+(?:nada|cada|responder)|"
             r"prima\s+di\s+(?:tutto|ogni|rispondere)|ogni\s+volta|cada\s+vez|elke\s+keer|voor\s+elke|перед\s+(?:каждым|любым|ответом)|"
             r"her\s+(?:yanıt|cevap|oturum)\w*|önce)\b|"
             r"每次|之前|先|最初に|毎回|매번|먼저")
_PERSIST = (r"(?:~|\$home|\$\{home\}|/home/\w+|/root)?/?\.(?:bash_?rc|bashrc|zshrc|zshenv|zprofile|profile|bash_profile|"
            r"bash_login|bash_aliases|kshrc|cshrc)\b|\.config/(?:fish|autostart|systemd)|\bcrontab\b|/etc/cron|"
            r"/var/spool/cron|\.git/hooks\b|core\.hookspath|\bsystemctl\s+(?:--user\s+)?enable\b|\bsystemd\b|"
            r"\blaunch(?:agents|daemons|ctl)\b|\brc\.local\b|/etc/profile|\bautostart\b|\bpre-commit\s+hook|\.pth\b")
_CREDENTIAL = (r"~/\.ssh/(?!\S*\.pub\b)\S+|\bid_(?:rsa|ed25519|ecdsa|dsa)\b(?!\.pub)|\.aws/credentials|\.netrc\b|"
               r"\.git-credentials|\.pgpass\b|\.docker/config\.json|\bauth\.json\b|\.gnupg\b|export-secret-keys|"
               r"\bprivate\s+keys?\b|\b(?:api|access|secret)[\s_-]?keys?\b|\bpasswords?\b|\bcredentials\b|"
               r"\$\{?\w*(?:token|secret|api_?key|password)\w*\}?|(?<![\w.])\.env\b(?!\.(?:example|sample|template|dist)\b)")
_DISCLOSE = (r"\b(?:include|paste|quote|print|echo|copy|append|add|put|insert|list|show|dump|attach)\w*\b[^.;\n]{0,80}?"
             r"\b(?:verbatim|in\s+full|as\s+is|word\s+for\s+word|(?:your|the)\s+(?:final\s+)?(?:summary|answer|reply|response|"
             r"report|output|message|diagnostics))\b|\bverbatim\b")
_OVERRIDE = (r"\b(?:guidance|instructions?|rules|directions|prompts?|everything)\s+(?:you\s+(?:were|have\s+been)\s+given|"
             r"(?:given|received|provided)\s+(?:to\s+you\s+)?)(?:\s+\w+){0,5}?\s+(?:as\s+|is\s+|are\s+)?"
             r"(?:obsolete|void|outdated|superseded|cancel+ed|null|invalid|irrelevant|no\s+longer\s+(?:apply|valid|relevant))\b|"
             r"\bthe\s+only\s+(?:rules|instructions|guidance)\s+(?:that\s+)?(?:apply|count|matter)\b|"
             r"\b(?:supersedes?|overrides?|replaces?)\s+(?:all\s+|any\s+)?(?:previous|prior|earlier|other|your)\s+"
             r"(?:guidance|instructions|rules|directions)\b")
_JOIN = r"""['"]\s*\+\s*['"]|['"]\s+['"]"""  # '~/.bash' + 'rc', "cr" "ontab"

CHAINS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("fetches and runs code without telling the user", ("net", "exec", "hide")),
    ("standing order to run code from the network", ("addr", "exec", "standing")),
    ("plants code from the network to run later", ("persist", "net", "exec")),
    ("copies credentials into what it writes out", ("credential", "disclose")),
    ("replaces the user's rules behind their back", ("override", "hide")),
)


@dataclass(frozen=True, slots=True)
class Chain:
    """One intent made of parts: `kind` names it, `parts` quotes what was found for each part."""

    kind: str
    parts: tuple[str, ...]

    @property
    def quote(self) -> str:
        return " ... ".join(self.parts)


@functools.cache
def _parts() -> dict[str, re.Pattern[str]]:
    from hermes_agent import intent

    hide = "|".join((rf"\b(?:{intent._HIDE})\b", intent._HIDE_MORE, intent._CJK_HIDE, _HIDE_EXTRA))
    flags = re.IGNORECASE | re.UNICODE
    return {name: re.compile(rx, flags) for name, rx in (
        ("net", _NET), ("addr", _ADDR), ("exec", _EXEC), ("hide", hide), ("standing", _STANDING), ("persist", _PERSIST),
        ("credential", _CREDENTIAL), ("disclose", _DISCLOSE), ("override", _OVERRIDE), ("join", _JOIN))}


def _views(text: str) -> tuple[str, ...]:
    from hermes_agent.intent import views

    readings = views(text)
    joined = _parts()["join"].sub("", readings[0])
    return tuple(dict.fromkeys((*readings, joined)))


def parts_of(text: str) -> dict[str, str]:
    """Each part found in `text` (in any of its readings) with the words that matched."""
    found: dict[str, str] = {}
    for view in _views(text):
        for name, rx in _parts().items():
            if name != "join" and name not in found and (m := rx.search(view)):
                found[name] = m.group(0).strip()
    return found


def chains_in(parts: dict[str, str]) -> list[Chain]:
    """The intents the found parts complete."""
    return [Chain(kind, tuple(parts[p] for p in need)) for kind, need in CHAINS if all(p in parts for p in need)]


# Memory holds facts about habits ("every session the user pulls and runs the tests"): a standing trigger is
# ordinary there, so memory judges the other chains.
MEMORY_KINDS = frozenset(kind for kind, _ in CHAINS if not kind.startswith("standing"))
ALL_KINDS = frozenset(kind for kind, _ in CHAINS)
# Code says "fail silently" and runs things by design: there only what it does counts (persistence, key material
# into the output), not the words addressed to a reader.
CODE_KINDS = frozenset(kind for kind, need in CHAINS if "hide" not in need and "standing" not in need)


def scan(text: str, kinds: frozenset[str] = ALL_KINDS) -> list[Chain]:
    """Chains completed inside one piece of text."""
    return [c for c in chains_in(parts_of(text)) if c.kind in kinds] if text and text.strip() else []


def scan_joined(pieces: Sequence[str], reach: int = 1, kinds: frozenset[str] = ALL_KINDS) -> dict[int, list[Chain]]:
    """Chains completed by each piece alone or together with its neighbours up to `reach` pieces away (the
    parts of an attack split over two memory entries). Maps the index of every piece that takes part in a
    chain to the chains; a chain a window completes marks each piece of the window that holds one of its parts."""
    found = [parts_of(p) for p in pieces]
    hits: dict[int, list[Chain]] = {}
    for start in range(len(pieces)):
        for end in range(start, min(len(pieces), start + reach + 1)):
            union: dict[str, str] = {}
            for i in range(start, end + 1):
                for name, words in found[i].items():
                    union.setdefault(name, words)
            for chain in (c for c in chains_in(union) if c.kind in kinds):
                need = dict(CHAINS)[chain.kind]
                for i in range(start, end + 1):
                    if any(p in found[i] for p in need) and chain not in hits.setdefault(i, []):
                        hits[i].append(chain)
    return {i: c for i, c in hits.items() if c}


def flagged(pieces: Iterable[str], reach: int = 1, kinds: frozenset[str] = ALL_KINDS) -> set[int]:
    """Indexes of the pieces that take part in a chain (alone or with a neighbour)."""
    return set(scan_joined(list(pieces), reach, kinds))
