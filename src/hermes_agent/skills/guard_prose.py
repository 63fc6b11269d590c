"""Prose rules for the skills guard: instructions addressed to the model, matched by shape.

Matched on paragraphs (markdown wraps sentences over lines), after normalisation. Shapes, not
phrases: an override aimed at the agent's own instructions, concealment from the user, sending
secrets to a destination, switching approvals or the sandbox off, planting orders in memory.
`example_lines` finds where a document quotes such text to warn about it (fenced code, a
blockquote introduced as an example, a quoted phrase introduced by "such as"/"like"); the
injection rules report those at low severity instead of refusing the skill."""

from __future__ import annotations

import re
from dataclasses import dataclass

from hermes_agent import lazyre


@dataclass(frozen=True, slots=True)
class ProseRule:
    """One paragraph-level shape; `quotable` ones are downgraded inside a marked example."""

    id: str
    category: str
    severity: str
    pattern: re.Pattern[str]
    message: str
    quotable: bool = True


def _p(rule_id: str, category: str, severity: str, rx: str, message: str, quotable: bool = True) -> ProseRule:
    return ProseRule(rule_id, category, severity, re.compile(rx, re.I | re.S), message, quotable)


_W = r"(?:\W+\w+){0,5}?\W+"  # up to five words in between
_OWN = (r"(?:your|previous|prior|earlier|above|preceding|original|system|existing|initial|default|other|all|any|"
        r"whatever|the\s+user'?s?|developer|operator|safety|security|built-in|configured)")
_NOUN = (r"(?:instructions?|system\s+prompt|prompts?|guidelines|guidance|directives|guardrails|rules|"
         r"restrictions|constraints|policies|programming|training|context|messages)")
_GIVEN = (r"(?:you\s+(?:were\s+|have\s+been\s+|'ve\s+been\s+)?(?:given|told|received|got|configured|trained|provided)|"
          r"given\s+to\s+you|(?:from\s+)?(?:before|earlier|above|previously)\b)")
_REVOKED = (r"(?:are|is|have\s+been|has\s+been|were)\s+(?:now\s+|hereby\s+)?(?:revoked|void|cancel+ed|obsolete|"
            r"replaced|superseded|lifted|suspended|withdrawn|no\s+longer\s+(?:valid|apply|applies|in\s+effect))")
_FOREIGN = r"(?!\s+(?:in|from|inside|within|embedded|found|contained|that\s+appear)\b)"
_TELL = (r"(?:tell(?:ing)?|inform(?:ing)?|mention(?:ing)?|reveal(?:ing)?|disclos(?:e|ing)|report(?:ing)?|"
         r"alert(?:ing)?|notify(?:ing)?|bring(?:ing)?\s+(?:it|this|that)?\s*up|let(?:ting)?)")
_WHO = r"(?:the\s+)?(?:user|human|person|operator|owner|anyone|them)\b"
_ACTION_REF = (r"(?:this|it|that|these|what\s+you|you\s+(?:did|ran|run|sent|uploaded|installed|changed|read)|"
               r"about|the\s+(?:step|command|upload|request|script|change|file)s?)")
_SECRET = (r"(?:~/\.|\$HOME/\.|\.ssh\b|id_(?:rsa|ed25519|ecdsa)\b(?!\.pub)|\.aws\b|credentials|\.env\b|\.netrc|"
           r"hosts\.yml|git-credentials|secrets?\b|tokens?\b|api[\s_-]?keys?|passwords?|private\s+keys?|"
           r"environment\s+variables|env\s+vars|cookies|keychain|os\.environ|printenv)")
_DEST = (r"(?:https?://|\b[\w-]+\.(?:com|net|org|io|dev|app|sh|site|xyz|ru|cn)\b|\b\d{1,3}(?:\.\d{1,3}){3}\b|"
         r"webhook|pastebin|gist|e-?mail|\b(?:your|the|this)\s+(?:reply|answer|response|summary|output|message|"
         r"comment|issue|commit|pull\s+request|ticket|report))")
_SEND = (r"\b(?:send|upload|post|transmit|forward|sync|share|submit|attach|include|paste|put|e-?mail|pipe|"
         r"exfiltrate|append|add|copy|beam|leak|print)\w*\b")
_OFF = (r"\b(?:disable|turn(?:ing)?\s+off|switch(?:ing)?\s+off|shut(?:ting)?\s+off|deactivat\w+|bypass\w*|"
        r"skip(?:ping)?|circumvent\w*|get\s+around|work\s+around|suppress\w*|silenc\w+)")
_GATE = (r"(?:approvals?(?:\s+(?:gate|prompts?|checks?|mode))?|confirmation\s+prompts?|confirmations|"
         r"permission\s+prompts?|sandbox(?:ing)?|safety\s+(?:checks?|guard|rails)|guardrails|the\s+guard)\b")
# Negation right before the shape ("never disable the sandbox"); "don't hesitate to disable" is no negation.
_NEG = lazyre.compile(r"\b(?:never|not|n't|no\s+need\s+to|avoid|refuse\s+to)\s+(?:ever\s+|try\s+to\s+|attempt\s+to\s+)?"
                  r"(?:\w+ing\s+)?$", re.I)
# Reported, conditional speech: "if a page tells you to ignore your instructions, ..." describes an attack.
_REPORTED = lazyre.compile(r"\b(?:if|when|whenever|in\s+case|should)\b[^.;]*\b(?:tells?|asks?|says?|instructs?|wants?|"
                       r"urges?|claims?|demands?)\s+(?:you\s+)?(?:to\s+)?$", re.I)

PROSE_RULES: tuple[ProseRule, ...] = (
    _p("inject-ignore", "injection", "high",
       rf"\b(?:ignore|disregard|forget|override|overrule|bypass|set\s+aside|drop|abandon|discard|throw\s+out|"
       rf"stop\s+following|no\s+longer\s+follow|pay\s+no\s+attention\s+to)\b(?:\W+\w+){{0,3}}?\W+{_OWN}"
       rf"{_W}?{_NOUN}\b{_FOREIGN}|\b(?:ignore|disregard|forget|set\s+aside|drop|pay\s+no\s+attention\s+to)\b{_W}"
       rf"{_NOUN}\s+{_GIVEN}|\b(?:previous|prior|earlier|original|system|your|assistant'?s?|existing)\s+(?:\w+\s+)?"
       rf"{_NOUN}\s+{_REVOKED}",
       "tries to override the agent's instructions"),
    _p("inject-precedence", "injection", "high",
       r"\b(?:takes?|has|have)\s+(?:precedence|priority)\s+over|\b(?:supersedes?|overrides?|outranks?|replaces?)\b"
       r"(?=(?:\W+\w+){0,6}?\W+(?:system\s+prompt|(?:your|any|all|whatever|previous|prior|earlier)\s+"
       r"(?:\w+\s+)?(?:instructions|guidance|guidelines|rules)|what\s+the\s+user))",
       "claims priority over the agent's system prompt or the user"),
    _p("inject-role", "injection", "high",
       r"\byou\s+are\s+now\s+(?:in\s+)?(?:an?\s+)?(?:developer|dan|jailbr\w+|unrestricted|unfiltered|god|"
       r"different|new)\b|<\|im_start\|>\s*system|\bnew\s+system\s+prompt\s*:|\b(?:act|behave)\s+as\s+(?:if|though)"
       r"\s+you\s+(?:have|had)\s+no\b|\byou\s+(?:now\s+)?have\s+no\s+(?:restrictions|rules|limits|filters)|"
       r"\bfrom\s+now\s+on,?\s+(?:you\s+(?:follow|obey|will|must|only|are)|obey|follow\s+only|only\s+follow)|"
       r"\b(?:enter|switch\s+to|activate)\s+(?:developer|god|jailbreak|unrestricted|dan)\s+mode|"
       r"\byour\s+(?:new|real|true|actual)\s+(?:instructions|purpose|role|task|goal|objective)s?\s+(?:is|are)\b",
       "tries to replace the agent's role or system prompt"),
    _p("inject-reveal", "injection", "medium",
       r"\b(?:reveal|print|output|repeat|leak|dump)\s+(?:your|the)\s+(?:system\s+prompt|hidden\s+instructions|"
       r"api\s+keys?)", "asks the agent to reveal its prompt or keys"),
    _p("inject-conceal", "injection", "high",
       rf"\b(?:do\s+not|don'?t|never|no\s+need\s+to|without|nor)\s+(?:\w+\s+){{0,2}}?{_TELL}\b[^.;]{{0,40}}?"
       rf"\b{_WHO}[^.;]{{0,30}}?{_ACTION_REF}|\b(?:do\s+not|don'?t|never)\s+(?:tell|inform|notify|alert|show)\s+"
       rf"the\s+user\b[^.;]{{0,20}}?\b(?:what|that|about|you)\b|"
       rf"\b(?:hide|conceal|keep)\s+(?:this|these|it|them|the\s+\w+)\s+(?:secret\s+|hidden\s+)?from\s+{_WHO}|"
       r"\b(?:keep|leave|omit)\s+(?:this|it|that|the\s+\w+)\s+(?:step\s+)?(?:out\s+of|from)\s+(?:your\s+|the\s+)?"
       r"(?:summary|answer|reply|response|report|output|log)|\b(?:user|they)\s+(?:doesn'?t|does\s+not|need\s+not|"
       r"needn'?t|shouldn'?t|should\s+not)\s+(?:need\s+to\s+)?(?:know|see|notice|be\s+told)|"
       r"\b(?:silently|quietly|secretly|covertly|discreetly|invisibly)\s+(?:\w+\s+)?(?:run|execute|send|upload|"
       r"post|copy|install|add|append|delete|remove|modify|change|read|fetch|download|save|write)\b",
       "tells the agent to hide actions from the user"),
    _p("inject-exfil", "injection", "high",
       rf"{_SEND}[^.;!?]{{0,80}}?{_SECRET}[^;!?]{{0,100}}?(?:\bto\b|\bat\b|\binto\b|\bin\b|\bvia\b|\bwith\b|"
       rf"\bwhen\b)[^;!?]{{0,60}}?{_DEST}", "tells the agent to send secrets or credential files somewhere"),
    _p("inject-memory-plant", "injection", "high",
       r"\b(?:save|store|add|write|put|record|remember|persist)\b[^.]{0,40}\b(?:to|in|into)\s+(?:your\s+)?"
       r"(?:memory|memories|MEMORY\.md|USER\.md|persistent\s+memory|long-term\s+memory)\b[^§]{0,200}?"
       r"\b(?:run|execute|curl|wget|bash|sh|eval|install)\b",
       "plants an order to run commands into the agent's persistent memory"),
    _p("inject-disable-safety", "safety_bypass", "critical",
       rf"{_OFF}\s+(?:\w+\s+){{0,3}}?{_GATE}|\b(?:run|execute)\w*\s+(?:\w+\s+){{0,4}}?without\s+(?:asking|"
       r"approval|confirmation|permission|prompting)|\bdo\s+not\s+ask\s+(?:for\s+)?(?:approval|permission|"
       r"confirmation)", "tells the agent to switch off approvals or the sandbox"),
    _p("safety-config-edit", "safety_bypass", "critical",
       r"\b(?:approvals?|sandbox)\b[^.]{0,80}?\bmode\b\W{0,4}(?:to\W{0,3})?(?:off|never|none|yolo|disabled|false)\b|"
       r"\b(?:edit|modify|change|open|patch|update|sed)\b[^.]{0,60}config\.ya?ml[^.]{0,120}\b(?:approvals?|sandbox)|"
       r"\b(?:approvals?|sandbox)\b[^.]{0,120}\b(?:edit|modify|change|patch|sed)\b[^.]{0,40}config\.ya?ml",
       "changes the approvals or sandbox configuration", quotable=False),
)

_EXAMPLE_MARK = lazyre.compile(r"\b(?:example|e\.g\.|for\s+instance|such\s+as|malicious|attack\w*|inject\w*|"
                           r"looks?\s+like|sample|phishing|suspicious|manipulat\w+|found\s+in)\b", re.I)
_MENTION = lazyre.compile(r"\b(?:such\s+as|like|e\.g\.|for\s+example|for\s+instance|phrases?|text|says?|saying|"
                      r"wording|strings?|contains?)\W*$", re.I)
_QUOTE = lazyre.compile(r"\"[^\"]{3,300}\"|“[^”]{3,300}”|«[^»]{3,300}»|'[^']{8,300}'")
_LIST_JOIN = lazyre.compile(r"\s*(?:,|/|;)?\s*(?:or|and|nor|oder|und|ou|et|o|y|e|of|en)?\s*", re.I)
_FENCE = lazyre.compile(r"^\s*(```|~~~)")
_MAX_PARAGRAPH_LINES = 40


def fenced_lines(lines: list[str]) -> set[int]:
    """1-based numbers of lines inside fenced code blocks (fence lines included)."""
    out: set[int] = set()
    inside = False
    for n, line in enumerate(lines, 1):
        if _FENCE.match(line):
            out.add(n)
            inside = not inside
        elif inside:
            out.add(n)
    return out


def example_lines(lines: list[str]) -> set[int]:
    """Lines a document presents as quoted material: fenced code, or a blockquote introduced as an example."""
    out = fenced_lines(lines)
    intro = ""
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if s.startswith(">"):
            if _EXAMPLE_MARK.search(intro) or _EXAMPLE_MARK.search(s):
                out.add(n)
                intro = intro or s
        elif s:
            intro = s
    return out


def quoted_mention(paragraph: str, start: int) -> bool:
    """True when the match at `start` is quoted as a mention ('text such as "…"') or reported conditionally."""
    if _REPORTED.search(paragraph[_sentence_start(paragraph, start):start]):
        return True
    quotes = list(_QUOTE.finditer(paragraph))
    for i, q in enumerate(quotes):
        if q.start() <= start < q.end():
            # 'such as "A" or "B"': every quote of a list the mention introduces is a mention
            while i > 0 and _LIST_JOIN.fullmatch(paragraph[quotes[i - 1].end():quotes[i].start()]):
                i -= 1
            return bool(_MENTION.search(paragraph[max(0, quotes[i].start() - 40):quotes[i].start()]))
    return False


def _sentence_start(paragraph: str, start: int) -> int:
    return max(paragraph.rfind(c, 0, start) for c in ".;!?\n") + 1


def negated(paragraph: str, start: int) -> bool:
    """True when the words just before `start` negate it ('never disable the sandbox')."""
    return bool(_NEG.search(paragraph[_sentence_start(paragraph, start):start]))


def paragraphs(lines: list[str]) -> list[tuple[int, str, list[int]]]:
    """[(first line number, joined text, start offset of each line)], split at blank lines and fences."""
    out: list[tuple[int, str, list[int]]] = []
    cur: list[tuple[int, str]] = []

    def flush() -> None:
        if cur:
            offsets, pos = [], 0
            for _, text in cur:
                offsets.append(pos)
                pos += len(text) + 1
            out.append((cur[0][0], " ".join(t for _, t in cur), offsets))
            cur.clear()

    for n, line in enumerate(lines, 1):
        if len(cur) >= _MAX_PARAGRAPH_LINES:
            flush()
        if not line.strip() or _FENCE.match(line):
            flush()
            if line.strip():
                out.append((n, line, [0]))
        else:
            cur.append((n, line))
    flush()
    return out


_COMMENT = lazyre.compile(r"<!--(.*?)-->|^\s*\[(?://|comment|_)\]:\s*(?:#|<>)\s*\((.*)\)\s*$"
                      r"|<(\w+)[^>]*style\s*=\s*['\"][^'\"]*(?:display\s*:\s*none|font-size\s*:\s*0)[^>]*>(.*?)</\3>",
                      re.S | re.M | re.I)
_ADDRESS = lazyre.compile(r"\b(?:assistant|agent|ai|model|llm|claude|gpt|chatgpt|hermes|copilot|you|your)\b", re.I)
_COMMANDISH = lazyre.compile(r"https?://|~/|\$\(|\|\s*(?:ba|z)?sh\b|\b(?:curl|wget|rm\s+-\w+|chmod|sudo)\b|\.ssh\b|"
                         r"credentials|\.env\b|\bid_rsa\b", re.I)
_IMPERATIVE = lazyre.compile(r"(?:^|[.:;!?]\s+|\n\s*)(?:please\s+)?(?:run|execute|send|upload|post|fetch|download|read|"
                         r"open|delete|remove|disable|ignore|forget|include|append|copy|save|install|always|before|"
                         r"when(?:ever)?|never|do\s+not|don'?t)\b", re.I)


def hidden_blocks(text: str) -> list[tuple[int, str]]:
    """[(line number, content)] of HTML comments, `[//]: # (...)` lines and display:none elements."""
    out: list[tuple[int, str]] = []
    for m in _COMMENT.finditer(text):
        content = m.group(1) or m.group(2) or m.group(4) or ""
        out.append((text.count("\n", 0, m.start()) + 1, content.strip()))
    return out


def instructs(content: str) -> bool:
    """True when hidden text addresses the model or tells it to do something with a command or file."""
    address, commandish = bool(_ADDRESS.search(content)), bool(_COMMANDISH.search(content))
    imperative = bool(_IMPERATIVE.search(content))
    return (address and (commandish or imperative)) or (commandish and imperative)
