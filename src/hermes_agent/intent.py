"""Intent scan of text that would enter a future system prompt (memory entries, skill descriptions), in
any of several languages: normalise (NFKC, invisible characters removed, casefolded, and a de-leeted
view), then look for what an injected instruction wants: to run something as a standing order, to send
secrets out, to hide something from the user, to switch safety off, to override instructions.

A second layer only: the first is provenance (tools/provenance.py) and quoting in the prompt. The word
lists cover en, fr, de, es, it, pt, nl, sv, pl, ru, tr, zh, ja, ko; besides words, intent classes look at
what an entry names: a download piped into a shell, a secret path next to a network client or URL, a
safety setting next to "off", a destructive command defined as an alias. Regexes compiled on first use. Pure."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "|": "i"})

# Imperative / infinitive forms only: a fact in the past or third person ("user ran", "disabled") is not an order.
_RUN = ("run|execute|exec|launch|invoke|"
        "exécute|exécutez|exécuter|execute|executez|executer|lance|lancez|lancer|"
        "führe|führen|ausführen|fuhre|fuehre|ausfuhren|ausfuehren|starte|starten|"
        "ejecuta|ejecute|ejecutar|corre|lanza|"
        "esegui|eseguire|esegua|lancia|"
        "executa|execute|executar|rode|rodar|"
        "voer|uitvoeren|draai|"
        "kör|köra|uruchom|wykonaj|выполни|выполнить|запусти|запустить|çalıştır|calistir")
_SEND = ("send|upload|post|exfiltrate|forward|leak|transmit|email|mail|"
         "envoie|envoyez|envoyer|transmets|transmettez|transmettre|téléverse|"
         "sende|senden|schicke|schick|schicken|übermittle|übermitteln|lade|hochladen|"
         "envía|envia|enviar|envíe|manda|mandar|sube|subir|"
         "invia|inviare|mandare|carica|caricare|"
         "envie|enviar|mande|carregue|"
         "stuur|sturen|verstuur|versturen|verzend|verzenden|"
         "skicka|wyślij|wyslij|отправь|отправить|перешли|gönder|gonder")
_SECRET = (r"(?:api|private|ssh|secret|access|signing)[\s_-]?keys?|tokens?|secrets?|passwords?|credentials?|\.env|ssh|id_rsa|cookies?|"
           r"clés?|cles?|mots?\s+de\s+passe|identifiants?|jetons?|secrets?|"
           r"schlüssel|schlussel|passw[öo]rter|passwort|zugangsdaten|geheimnisse?|"
           r"claves?|contraseñas?|contrasenas?|credenciales|secretos?|"
           r"chiavi|chiave|password|credenziali|segreti|"
           r"chaves?|senhas?|credenciais|segredos?|"
           r"sleutels?|wachtwoorden|wachtwoord|geheimen|"
           r"nycklar|lösenord|hasła|haslo|ключи|пароли|пароль|anahtar|şifre")
_OFF = ("disable|turn\\s+off|switch\\s+off|bypass|skip|circumvent|deactivate|ignore|"
        "désactive|désactivez|désactiver|desactive|desactivez|desactiver|contourne|contournez|contourner|ignorez|"
        "deaktiviere|deaktivieren|umgehe|umgehen|schalte|abschalten|ausschalten|überspringe|ignoriere|"
        "desactiva|desactive|desactivar|omite|omitir|salta|saltar|ignora|"
        "disattiva|disattivare|disabilita|disabilitare|aggira|aggirare|salta|saltare|"
        "desative|desativar|desligue|desligar|ignore|pule|pular|contorne|"
        "schakel|uitschakelen|omzeil|omzeilen|negeer|negeren|sla|"
        "inaktivera|stäng\\s+av|wyłącz|wylacz|отключи|отключить|devre\\s+dışı\\s+bırak")
_SAFETY = ("approvals?|approval\\s+(?:gate|prompts?|checks?)|confirmations?|confirmation\\s+prompts?|sandbox(?:ing)?|"
           "safety(?:\\s+checks?)?|guardrails?|security|"
           "approbations?|validations?|bac\\s+à\\s+sable|sécurité|securite|garde-fous|"
           "bestätigungen|bestätigung|genehmigungen|genehmigung|sicherheit|sicherheitsprüfungen|"
           "aprobaciones|aprobación|confirmaciones|confirmación|seguridad|"
           "approvazioni|approvazione|conferme|conferma|sicurezza|"
           "aprovações|aprovacoes|aprovação|confirmações|confirmacoes|segurança|seguranca|"
           "goedkeuringen|goedkeuring|bevestigingen|bevestiging|beveiliging|veiligheid|"
           "godkännanden|säkerhet|zatwierdzenia|piaskownic\\w*|подтверждения|песочниц\\w*|onaylar\\w*")
_INSTRUCTIONS = ("instructions?|rules|prompts?|"
                 "consignes|règles|anweisungen|regeln|instrucciones|reglas|istruzioni|regole|"
                 "instruções|instrucoes|regras|instructies|regels|instruktioner|instrukcje|инструкции|talimatlar")
_PRIOR = ("previous|prior|above|earlier|system|all|"
          "précédentes|precedentes|antérieures|toutes|vorherigen|bisherigen|alle|obigen|"
          "anteriores|todas|precedenti|tutte|vorige|eerdere|alle|tidigare|poprzednie|предыдущие|önceki")
_HIDE = (r"(?:do\s+not|don'?t|never)\s+(?:tell|inform|mention\s+(?:it\s+)?to)\s+(?:this\s+to\s+)?the\s+user|"
         r"without\s+(?:telling|informing|notifying)\s+the\s+user|hide\s+(?:it|this|that)?\s*from\s+the\s+user|"
         r"secretly|"
         r"sans\s+(?:le\s+)?(?:dire|prévenir|prevenir|informer)\s+(?:à\s+)?l'utilisat\w+|ne\s+(?:le\s+)?dis\s+pas|"
         r"en\s+secret|discrètement|cache(?:z)?\s+(?:le|la|les|ça|cela)?\s*(?:à|a)\s+l'utilisat\w+|"
         r"ohne\s+(?:es\s+)?(?:dem|den)\s+(?:benutzer|nutzer|anwender)\w*\s+zu\s+(?:sagen|erzählen|melden)|heimlich|"
         r"verschweige|sag(?:e|en\s+sie)?\s+(?:es\s+)?(?:dem|den)\s+(?:benutzer|nutzer)\w*\s+(?:nicht|nichts)|"
         r"sin\s+(?:decirle|decir|avisar)(?:lo)?\s+al\s+usuario|en\s+secreto|no\s+(?:se\s+)?lo\s+digas|"
         r"ocúltalo|ocultalo|a\s+escondidas|"
         r"senza\s+dirlo\s+all'utente|di\s+nascosto|non\s+dirlo|nascondi(?:lo)?\s+all'utente|"
         r"sem\s+(?:contar|dizer|avisar)\s+(?:ao|para\s+o)\s+usuário|sem\s+(?:contar|dizer|avisar)\s+ao\s+utilizador|"
         r"em\s+segredo|às\s+escondidas|não\s+(?:conte|diga)\s+ao\s+usuário|"
         r"zonder\s+(?:het\s+)?(?:aan\s+)?de\s+gebruiker\s+te\s+(?:vertellen|melden|zeggen)|stiekem|in\s+het\s+geheim|"
         r"vertel\s+(?:het\s+)?de\s+gebruiker\s+niet|i\s+hemlighet|potajemnie|тайно|скрытно|gizlice")
_STANDING = (r"always|every\s+(?:time|session|turn|reply|response|message|task|conversation)|"
             r"before\s+(?:answering|replying|responding|you\s+(?:answer|reply|respond))|at\s+the\s+start\s+of|"
             r"on\s+(?:startup|session\s+start)|from\s+now\s+on|without\s+asking|"
             r"toujours|à\s+chaque|a\s+chaque|avant\s+de\s+répondre|avant\s+de\s+repondre|au\s+début\s+de|"
             r"désormais|sans\s+demander|"
             r"immer|jedes\s+mal|bei\s+jede[mnr]|vor\s+jeder|bevor\s+du\s+antwortest|bevor\s+sie\s+antworten|"
             r"ab\s+jetzt|ohne\s+(?:zu\s+)?fragen|zu\s+beginn|"
             r"siempre|cada\s+vez|antes\s+de\s+responder|al\s+inicio|sin\s+preguntar|"
             r"sempre|ogni\s+volta|prima\s+di\s+rispondere|all'inizio|senza\s+chiedere|"
             r"toda\s+vez|antes\s+de\s+responder|no\s+início|sem\s+perguntar|"
             r"altijd|elke\s+keer|voordat\s+je\s+antwoordt|zonder\s+te\s+vragen|bij\s+elke|"
             r"alltid|zawsze|всегда|her\s+zaman|daima")
# Chinese, Japanese, Korean: no word boundaries, so these are matched as plain substrings.
_CJK_STANDING = "每次|每个|每一次|总是|總是|始终|始終|一直|永远|常に|毎回|いつも|必ず|항상|매번|언제나|반드시"
_CJK_RUN = "运行|執行|执行|運行|跑一下|実行|走らせ|실행"
_CJK_HIDE = ("(?:不必|不要|不用|别|別|无需|無需|不)(?:告诉|告訴|通知|提醒)(?:用户|用戶|使用者)|瞒着用户|偷偷|悄悄|"
             "秘密に|こっそり|ユーザーに(?:は)?(?:言わ|伝え|知らせ|教え)(?:ない|ず)|내색하지|몰래|"
             "사용자에게\\s*(?:알리지|말하지)")
_CJK_SEND = "发送|發送|上传|上傳|传到|傳到|发到|發到|送信|アップロード|送って|전송|업로드|보내"
_CJK_SECRET = ("密钥|密鑰|私钥|私鑰|密码|密碼|凭据|憑據|令牌|秘密鍵|鍵|パスワード|認証情報|トークン|"
               "비밀번호|비밀\\s*키|개인\\s*키|토큰|자격\\s*증명")
_CJK_OFF = "关闭|關閉|禁用|停用|关掉|關掉|绕过|繞過|跳过|跳過|無効に|オフに|切って|回避|비활성화|끄|우회|건너뛰"
_CJK_SAFETY = "审批|審批|批准|确认|確認|沙箱|沙盒|安全检查|安全檢查|承認|サンドボックス|安全確認|승인|확인|샌드박스|보안"
_CJK_OVERRIDE = ("(?:忽略|无视|無視|忘记|忘記)[^。！？]{0,8}?(?:之前|以前|以上|上面|所有|全部)[^。！？]{0,6}?"
                 "(?:指令|指示|说明|說明|规则|規則)|"
                 "(?:以前|前|上記)の(?:指示|命令|ルール)を無視|이전\\s*(?:지시|명령|규칙)을?\\s*무시")

# What an entry names, whatever its wording: code from the network run by a shell or an interpreter ...
_PIPE_SHELL = (r"\|\s*(?:sudo\s+)?(?:ba|z|da|k|fi)?sh\b|\|\s*(?:sudo\s+)?python\d?(?:\.\d+)?\s*(?:-\s*)?(?:$|[`'\"|;)])|"
               r"\b(?:exec|eval)\s*\(.{0,80}?\b(?:urlopen|urllib|requests\.|httpx|https?://)|"
               r"\b(?:curl|wget)\b[^|`\n]{0,120}\|\s*(?:sudo\s+)?(?:ba|z)?sh\b|base64\s+(?:-d|--decode)\b[^`\n]{0,20}\|")
# ... a secret file next to a network client, a URL or a copy verb ...
_SECRET_PATH = (r"~/\.ssh\b|\.ssh/|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|\.aws/credentials|\.netrc\b|\.git-credentials|"
                r"\.pgpass\b|\.npmrc\b|\.pypirc\b|\.docker/config\.json|\bauth\.json\b|\.gnupg\b|"
                r"export-secret-keys|\$\{?\w*(?:token|secret|api_?key|password)\w*\}?|\.env\b")
_OUTWARD = (r"https?://|\bcurl\b|\bwget\b|\bscp\b|\brsync\b|\bnc\b|\bsftp\b|\bftp\b|\bgist\b|\bpaste|"
            r"\bwebhook|\b(?:sync|copy|push|upload|send|post|mirror|back\s*up)\b[^.]{0,40}\bto\b\s+\S+@|"
            r"\b(?:sync|upload|send|post|mirror|exfiltrate|forward|mail|email)\b[^.;]{0,60}\bto\b\s+\S+\.\w{2,}")
# ... a safety setting set off, and a command defined as something destructive.
_SAFETY_OFF = (r"\b(?:approvals?(?:[._]mode)?|sandbox(?:ing)?|confirmations?|guardrails?|safety)\b"
               r"(?:\W+\w+){0,3}?\W+(?:off|none|disabled?|false|0|yolo)\b|--yolo\b|\byolo\s+mode\b|"
               r"\b(?:set|turn|switch|flip|put)\s+(?:the\s+)?(?:approvals?|sandbox|confirmations?)\w*\b(?:\W+\w+){0,4}?"
               r"\W+(?:off|to\s+(?:none|off|never|false|yolo))\b|\b(?:hermes\s+)?config\s+set\s+(?:approvals|terminal\.sandbox)")
_DESTRUCTIVE = (r"\brm\s+(?:-\w+\s+)*-\w*[rf]\w*\s+(?:-\w+\s+)*(?:~|/|\$home|\$\{home\}|/\*|\.\.?/?)(?=$|[\s`'\";|&)])|"
                r"--no-preserve-root|\bmkfs(?:\.\w+)?\s+/dev/|\bdd\s+[^`\n]*\bof=/dev/(?:sd|nvme|hd|vd)|"
                r":\(\)\s*\{|\bchmod\s+-r\s+0?777\s+/(?=$|[\s`'\"])|\bgit\s+push\s+(?:\S+\s+)*(?:-f|--force)\b|"
                r"\bshutil\.rmtree\s*\(\s*['\"]?(?:/|~|os\.path\.expanduser)")
_DEFINES = (r"\b(?:alias|aliased|defined\s+as|defines?|means|expands?\s+to|stands\s+for|shortcut|is\s+short\s+for|"
            r"function|script|command|step|hook)\b|\b(?:use|run|call|invoke)\s+it\b|=\s*['\"`]")

_NEGATION = r"(?:never|not|don'?t|do\s+not|no|jamais|ne|n'|pas|nie|niemals|nicht|kein\w*|nunca|no|mai|non|não|nooit|niet|aldrig)"


@dataclass(frozen=True, slots=True)
class Intent:
    """One reason the text reads as an injected instruction: `kind` and the matched words."""

    kind: str
    quote: str


def _near(a: str, b: str, gap: int) -> str:
    return rf"\b(?:{a})\b(?:\W+\w+){{0,{gap}}}?\W+(?:the\s+|all\s+|any\s+)?(?:{b})\b"


@functools.cache
def _rules() -> tuple[tuple[str, re.Pattern[str]], ...]:
    flags = re.IGNORECASE | re.UNICODE
    return tuple((kind, re.compile(rx, flags)) for kind, rx in (
        ("disables safety", _near(_OFF, _SAFETY, 4)),
        ("overrides instructions", _near(_OFF, rf"(?:{_PRIOR})\W+(?:\w+\W+)?(?:{_INSTRUCTIONS})|"
                                               rf"(?:{_INSTRUCTIONS})\W+(?:{_PRIOR})", 2)),
        ("hides something from the user", rf"\b(?:{_HIDE})\b"),
        ("sends secrets out", _near(_SEND, _SECRET, 6)),
        ("runs code from the network", _PIPE_SHELL),
        ("disables safety", _SAFETY_OFF),
        ("standing order to run something", rf"(?:{_CJK_STANDING})[^。．.!?！？;；]{{0,40}}?(?:{_CJK_RUN})"),
        ("hides something from the user", _CJK_HIDE),
        ("sends secrets out", rf"(?:{_CJK_SEND})[^。．.!?！？]{{0,30}}?(?:{_CJK_SECRET})|"
                              rf"(?:{_CJK_SECRET})[^。．.!?！？]{{0,30}}?(?:{_CJK_SEND})"),
        ("disables safety", rf"(?:{_CJK_OFF})[^。．.!?！？]{{0,12}}?(?:{_CJK_SAFETY})|"
                            rf"(?:{_CJK_SAFETY})[^。．.!?！？]{{0,12}}?(?:{_CJK_OFF})"),
        ("overrides instructions", _CJK_OVERRIDE),
    ))


@functools.cache
def _named() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    flags = re.IGNORECASE | re.UNICODE
    return tuple(re.compile(rx, flags) for rx in (_SECRET_PATH, _OUTWARD, _DESTRUCTIVE, _DEFINES))


def _named_intents(view: str) -> list[Intent]:
    """Intents read from what the entry names rather than how it is worded: a secret path together with a
    way out (URL, network client, "sync ... to host"), a destructive command the entry defines or asks for."""
    secret, outward, destructive, defines = _named()
    found = []
    s, o = secret.search(view), outward.search(view)
    if s and o:
        found.append(Intent("sends secrets out", f"{s.group(0)} ... {o.group(0)}"))
    d = destructive.search(view)
    if d and defines.search(view):
        found.append(Intent("plants a destructive command", d.group(0)))
    return found


@functools.cache
def _standing() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    flags = re.IGNORECASE | re.UNICODE
    run = re.compile(rf"(?:^|[\s:;,.!(\-*•>])(?:{_RUN})\b", flags)
    return (run, re.compile(rf"\b(?:{_STANDING})\b", flags), re.compile(rf"\b{_NEGATION}\W+(?:\w+\W+)?$", flags),
            re.compile(rf"\b{_NEGATION}\b", flags))


def normalise(text: str) -> str:
    """NFKC, format characters (zero-width, bidi, tags) removed, whitespace collapsed, casefolded."""
    text = unicodedata.normalize("NFKC", text)
    text = "".join(ch for ch in text if unicodedata.category(ch) != "Cf")
    return " ".join(text.split()).casefold()


def views(text: str) -> tuple[str, ...]:
    """The normalised text and, when different, its de-leeted reading (3x3cute -> execute)."""
    norm = normalise(text)
    leet = norm.translate(_LEET)
    return (norm,) if leet == norm else (norm, leet)


def scan(text: str) -> list[Intent]:
    """Every injected-instruction intent in `text` (empty for ordinary facts and descriptions)."""
    if not text or not text.strip():
        return []
    found: dict[str, Intent] = {}
    run, standing, negated, negation = _standing()
    for view in views(text):
        for kind, rx in _rules():
            for m in rx.finditer(view):  # "never disable ...", "deaktiviere niemals ...": not an order
                hiding = kind.startswith("hides")  # its own words are negations ("don't tell the user")
                if kind not in found and (hiding or (not negated.search(view[:m.start()][-40:]) and
                                                     not negation.search(m.group(0)))):
                    found[kind] = Intent(kind, m.group(0))
        for intent in _named_intents(view):
            found.setdefault(intent.kind, intent)
        for sentence in re.split(r"(?<=[.!?;])\s+", view):
            verb = run.search(sentence)
            if verb and standing.search(sentence) and not negated.search(sentence[:verb.start() + 1][-40:]):
                found.setdefault("standing order to run something", Intent("standing order to run something",
                                                                           sentence[:120]))
    return list(found.values())
