"""Language-independent signals for the intent scan (hermes_agent.intent), the part that does not depend on
knowing the words of one language (rt13 a60, a63: Arabic, a base64 "standing note", a "preference" to quote
.env, a French sentence that says a fetched script is "passed to the shell").

- More readings of the text: diacritics and tatweel folded (Arabic harakat, Hebrew niqqud, accents), and base64 /
  hex runs decoded and read as text (`decoded`).
- What the text NAMES, whatever the language: a secret object (a secret file or path: .env, id_rsa, ~/.ssh,
  credentials) together with an address (URL, host, IP, e-mail) and any sign of intent: a verb of moving data
  (a small lexicon in ~20 languages, Semitic roots matched inside words since prefixes join them), hiding from
  the user, or a standing trigger ("every session", "دائما", "हर बार"). A secret file with an address alone
  ("the staging .env points at db.example.com") is a fact, not flagged.
- Disclosure: secrets quoted, printed or shown in full in answers, or redaction of them refused.
- Code from the network run by a shell, worded as a fact: an address with a path and a shell/interpreter
  named right after it with a verb of passing between ("script collect.example/i, read then passed to the
  shell").
- Orders hidden behind an encoding: "decode and follow".
Pure; regexes compiled on first use."""

from __future__ import annotations

import base64
import binascii
import codecs
import functools
import re
import unicodedata
import urllib.parse

# A secret object by name: these spellings are the same in every language.
_SECRET_OBJECT = (r"(?<![\w.])\.env\b(?!\.(?:example|sample|template|dist)\b)|\bdot[\s_-]?env\b|\benv(?:ironment)?\s+file\b|"
                  r"\b(?:ssh|rsa|ed25519|gpg|pgp|signing)\s+(?:private\s+)?key\b|\bid_(?:rsa|ed25519|ecdsa|dsa)\b|~/\.ssh\b|"
                  r"\.ssh/|\.aws/credentials|\.netrc\b|\.git-credentials|\.pgpass\b|\.npmrc\b|\.pypirc\b|"
                  r"\.docker/config\.json|\bauth\.json\b|\.gnupg\b|\bcredentials(?:\.json)?\b|\b(?:api|private|ssh|secret|"
                  r"access)[\s_-]?keys?\b|\btokens?\b|\bpasswords?\b|\bsecrets?\b|\bschlüssel\w*|\bpassw[öo]rt\w*|\bzugangsdaten\b|"
                  r"\bmots?\s+de\s+passe\b|\bclés?\b|\bjetons?\b|\bcontraseñas?\b|\bclaves?\b|\bchiavi\b|\bsenhas?\b|"
                  r"\bwachtwoord\w*|\bhasł\w*|\bşifre\w*|\bkata\s+sandi\b|mật\s+khẩu|"
                  # the same words in scripts without Latin letters (matched inside words: no \b for them)
                  r"مفتاح|مفاتيح|كلمة\s*المرور|كلمات\s*المرور|بيانات\s*الاعتماد|رمز\s*الدخول|"
                  r"מפתח|סיסמ|אישורי|पासवर्ड|कुंजी|क्रेडेंशियल|टोकन|کلید|گذرواژه|رمز\s*عبور|"
                  r"ключ|парол|токен|κωδικ|κλειδ|รหัสผ่าน|กุญแจ")
# An address something goes to (reserved test domains included: attackers use them too).
_ADDRESS = (r"https?://|(?<![\w.-])(?:[\w-]++\.)+(?:xn--[a-z0-9-]+|[^\W\d_a-z]{2,})\b(?!\.\w)|\b\d{1,3}(?:\.\d{1,3}){3}\b|\blocalhost\b|(?<![\w.+-])[\w.+-]++@[\w-]++\.[\w.-]+|"
            r"(?<![\w.-])(?:[a-z0-9-]++\.)+(?:com|net|org|io|dev|app|co|me|xyz|info|biz|cloud|site|online|tech|ai|gg|ly|cc|tv|us|"
            r"uk|de|fr|es|pt|br|nl|ru|cn|jp|kr|eu|ch|be|se|no|ca|au|internal|lan|onion|example|test|"
            r"invalid|local|ir|sa|ae|eg|il|tr|vn|th|gr|cz|ua|hu)\b(?![.\w])")
# Verbs of moving data, imperative/infinitive and common inflections, ~20 languages. Semitic (Arabic, Hebrew)
# and Persian/Hindi stems are matched inside words: their tense and person prefixes join the stem.
_TRANSFER = (r"\b(?:send\w*|sent|back(?:s|ed|ing)?\s+up|cop(?:y|ies|ied|ying)|ship\w*|exfil\w*|beam\w*|upload\w*|post(?:s|ed|ing)?|forward\w*|transmit\w*|exfiltrat\w*|leak\w*|e-?mail\w*|"
             r"sync\w*|mirror\w*|envoi\w*|envoy\w*|enví\w*|envia\w*|enviar|envie|transmet\w*|schick\w*|sende\w*|"
             r"übermittel\w*|hochlad\w*|mand(?:a|ar|e|en|o)|"
             r"invi[ae]\w*|inoltr\w*|stuur\w*|verstuur\w*|skicka\w*|wyślij|wysył\w*|pošli|posli|odešl\w*|odesl\w*|"
             r"отправ\w*|перешл\w*|пересыл\w*|надішл\w*|відправ\w*|gönder\w*|gonder\w*|kirim\w*|unggah\w*|"
             r"gửi|guiđ|tải\s+lên|küld\w*|kuld\w*|στείλ\w*|στειλ\w*|αποστ\w*|tuma\w*)\b|"
             r"رسل|ارسال|إرسال|ارفع|انقل|حوّل|שלח|שלוח|भेज|अपलोड|فرست|ارسال|بفرست|ส่ง|"
             r"发送|發送|上传|上傳|转发|轉發|传到|傳到|发到|發到|送信|送って|送る|アップロード|転送|보내|전송|업로드")
# Hiding from the user and standing triggers, for the scripts the main word lists (intent.py) do not hold.
_HIDE = (r"\bno\s+need\s+to\s+(?:mention|tell|say|report|notify)\b|\bwithout\s+(?:telling|mentioning|informing|notifying)\b|دون\s+(?:إخبار|اخبار|علم|إعلام|اعلام)|بدون\s+(?:إخبار|اخبار|علم)|سر[اًا]|خفية|"
         r"בלי\s+לספר|בלי\s+להודיע|בסתר|בשקט|बिना\s+बताए|चुपके\s+से|चुपचाप|بدون\s+اطلاع|مخفیانه|بی\s*صدا|"
         r"tanpa\s+(?:memberi\s+tahu|sepengetahuan|bilang)|diam-diam|diam\s+diam|âm\s+thầm|lặng\s+lẽ|"
         r"không\s+(?:nói|báo)|kullanıcıya\s+söylemeden|söylemeden|haber\s+vermeden|titokban|szó\s+nélkül|"
         r"potají|tajně|tajne|κρυφά|χωρίς\s+να\s+(?:πεις|ενημερώσεις)|โดยไม่บอก|แอบ|\bsilently\b|\bquietly\b|"
         r"\bsilencieusement\b|\bstillschweigend\b|\bsilenciosamente\b|\bтихо\b|\bнезаметно\b|ohne\s+zu\s+fragen")
_STANDING = (r"كل\s+جلسة|كل\s+مرة|بداية\s+كل|دائم[اًا]|כל\s+(?:פעם|שיחה|הפעלה)|תמיד|हर\s+(?:बार|सत्र)|हमेशा|"
             r"هر\s+(?:بار|جلسه)|همیشه|setiap\s+(?:sesi|kali)|selalu|mỗi\s+(?:phiên|lần)|luôn\s+luôn|"
             r"her\s+(?:oturum|seferinde)|minden\s+(?:alkalommal|munkamenet)|mindig|κάθε\s+(?:φορά|συνεδρία)|πάντα|"
             r"ทุกครั้ง|เสมอ|\bevery\s+(?:session|time|turn|run)\b|\beach\s+(?:session|time|turn|run)\b|\balways\b|"
             r"\bat\s+(?:the\s+)?(?:start|beginning)\s+of\b|\bchaque\s+(?:session|fois)\b|\bjede[nrms]?\s+(?:sitzung|mal)\b|"
             r"\bcada\s+(?:sesión|sesion|vez)\b|\bogni\s+(?:sessione|volta)\b|\bкажд\w+\s+(?:сесси\w*|раз)\b|"
             r"每次|每个会话|毎回|매번")
_DISCLOSE = (r"\b(?:quot\w*|print\w*|show\w*|display\w*|reveal\w*|past(?:e|es|ed|ing)|echo\w*|dump\w*|"
             r"reproduc\w*|expos\w*|spell\w*\s+out|read\w*\s+out|cit(?:e|er|ez|a|ar|are|ieren)\w*|affich\w*|montr\w*|"
             r"zeig\w*|ausgeb\w*|mostr\w*|mostra\w*|muestr\w*|exib\w*|toon\w*|показ\w*|выв[оe]д\w*|göster\w*|"
             r"tampil\w*|hiển\s+thị|اعرض|أظهر|اظهر|اقتبس|הצג|הראה|दिखा|نمایش)\b")
_IN_FULL = (r"\b(?:full|entire|whole|complete|verbatim|raw|plain(?:\s*text)?|unredacted|unmasked|uncensored|as[\s-]is|"
            r"contents?|values?|including|en\s+entier|complet\w*|intégral\w*|vollständig\w*|komplett\w*|ganz\w*|"
            r"complet[oa]s?|íntegr\w*|integral\w*|intero|интегр\w*|полност\w*|целиком|tam\w*|lengkap|đầy\s+đủ)\b|"
            r"كامل|بالكامل|מלא|पूरा|پوری|کامل")
_ANTI_REDACT = (r"\b(?:redact\w*|mask\w*|censor\w*|obfuscat\w*|caviard\w*|schwärz\w*|schwarz\w*|maskier\w*|zensier\w*|"
                r"censur\w*|enmascar\w*|oscur\w*|tachar|маскир\w*|скрыва\w*|цензур\w*|sansür\w*)\b"
                r"[^.;]{0,40}?\b(?:annoying|unnecessary|pointless|useless|not\s+needed|unwanted|dislike\w*|hate\w*|"
                r"agaçant\w*|inutile\w*|nervig|unnötig|molest\w*|innecesari\w*|fastidios\w*|inútil\w*|раздража\w*|"
                r"не\s+нужн\w*|gereksiz)\b|"
                r"\b(?:never|don'?t|do\s+not|no\s+need\s+to|without|stop|ne\s+(?:jamais|pas)|nie|nicht|nunca|non|no|"
                r"никогда\s+не|не|sans|ohne|sin|senza|sem)\s+(?:\w+\s+)?(?:redact\w*|mask\w*|censor\w*|caviard\w*|"
                r"schwärz\w*|maskier\w*|enmascar\w*|censur\w*|маскир\w*)")
_ANSWERS = (r"\b(?:answers?|replies|reply|responses?|messages?|chat|output|summar\w+|réponses?|antworten?|"
            r"respuestas?|risposte?|respostas?|ответ\w*|yanıt\w*|jawaban)\b")
# Code from the network handed to a shell, worded as a fact: an address with a path, then (same sentence) the shell
# named as what receives it ("to bash", "au shell", "an die Shell", "| sh") and a verb of passing or running.
_NET_PATH = r"https?://\S+|(?<![\w.-])(?:[a-z0-9-]++\.)+[a-z]{2,}/\S*"
_TO_SHELL = (r"(?:\b(?:to|into|au|aux|à|a|an|in|al|ao|nel|alla|naar|в|на|через)\s+(?:the\s+|le\s+|la\s+|die\s+|den\s+|el\s+|"
             r"o\s+|a\s+|de\s+)?|\|\s*)(?:shell|sh|bash|zsh|ksh|fish|powershell|python\d?|perl|ruby|node|interpr\w+|"
             r"intérpr\w+|оболочк\w*|интерпретатор\w*)\b")
_PASS = (r"\b(?:pass\w*|passé\w*|piped?|piping|fed|feed\w*|handed|hand|given|give|donné\w*|übergeb\w*|gegeben|"
         r"geleitet|leite\w*|run\w*|exécut\w*|execut\w*|ejecut\w*|esegu\w*|ausgeführt|выполн\w*|запуск\w*|"
         r"переда\w*|lancé\w*|sourced?|eval\w*|pasad\w*|passad\w*|doorgegeven|envoyé\w*)\b|\|")
_DECODE_FOLLOW = (r"\b(?:decod\w*|décod\w*|dekodier\w*|entschlüssel\w*|descodific\w*|decodific\w*|декодир\w*|"
                  r"расшифр\w*|çöz\w*)\b[^.;\n]{0,30}?\b(?:follow\w*|obey\w*|execut\w*|run\w*|apply|do\s+(?:it|what)|"
                  r"suis|suiv\w*|exécut\w*|appliqu\w*|befolg\w*|ausführ\w*|führ\w*|sigue|segui\w*|ejecut\w*|esegu\w*|"
                  r"cumpl\w*|выполн\w*|следу\w*|uygula\w*)\b|"
                  r"(?:فك\s+التشفير|فك\s+الترميز)[^.\n]{0,30}(?:نفذ|اتبع)|(?:解码|解碼|デコード)[^。\n]{0,15}(?:执行|執行|遵循|実行|従)")
_SENTENCE = r"(?<=[.!?;])\s+|[。！？；\n]|(?<=[؟۔])\s*"
_B64_RUN = r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{16,}={0,2}(?![A-Za-z0-9+/=_-])"
_HEX_RUN = r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}){8,}(?![0-9A-Fa-f])"
# hex bytes separated by spaces, colons, commas or "\x"/"0x" prefixes: "73 65 6e 64", "\x73\x65", "0x73,0x65"
_HEX_SPACED = r"(?<![0-9A-Za-z])(?:(?:\\x|0x)?[0-9A-Fa-f]{2}[\s,:]*){8,}(?![0-9A-Za-z])"
# a destination named by reference, the address itself given in another entry or file ("my backup endpoint")
_REFERENCE = r"\b(?:endpoint|server|host|address|url|site|bucket|inbox|profile|remote|webhook)s?\b"
_PERCENT = r"(?:%[0-9A-Fa-f]{2}.*?){3}"


@functools.cache
def _compiled() -> dict[str, re.Pattern[str]]:
    flags = re.IGNORECASE | re.UNICODE
    names = ("_SECRET_OBJECT", "_ADDRESS", "_TRANSFER", "_HIDE", "_STANDING", "_DISCLOSE", "_IN_FULL",
             "_ANTI_REDACT", "_ANSWERS", "_NET_PATH", "_TO_SHELL", "_PASS", "_DECODE_FOLLOW", "_SENTENCE", "_B64_RUN", "_HEX_RUN",
             "_HEX_SPACED", "_PERCENT", "_REFERENCE")
    return {n.strip("_").lower(): re.compile(globals()[n], flags) for n in names}


def fold_marks(text: str) -> str:
    """`text` with combining marks (accents, Arabic harakat, Hebrew niqqud) and the Arabic tatweel removed."""
    decomposed = unicodedata.normalize("NFKD", text).replace("\u0640", "")
    return unicodedata.normalize("NFC", "".join(c for c in decomposed if not unicodedata.combining(c)))


def _printable(raw: bytes) -> str | None:
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return None
    letters = sum(c.isalpha() for c in text)
    return text if text.isprintable() and letters >= len(text) // 3 else None


def decoded(text: str) -> str:
    """The base64 and hex runs in `text` decoded, those that read as text, one per line ("" when none)."""
    rx = _compiled()
    out = []
    for token in rx["b64_run"].findall(text):
        if token.isalpha() or token.isdigit():
            continue  # a long word or number, not an encoding
        padded = token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4)
        try:
            got = _printable(base64.b64decode(padded, validate=True))
        except (binascii.Error, ValueError):
            got = None
        if got:
            out.append(got)
    for token in (*rx["hex_run"].findall(text), *(re.sub(r"\\x|0x|[\s,:]", "", t, flags=re.I) for t in rx["hex_spaced"].findall(text))):
        got = _printable(bytes.fromhex(token))
        if got:
            out.append(got)
    if rx["percent"].search(text):  # %-encoding (URL-quoted text): "every%20session%2C%20silently%20post..."
        out.append(urllib.parse.unquote(text.replace("+", " ")))
    out.append(codecs.encode(text, "rot13"))  # ROT13 reads as gibberish unless it was ROT13 (rt14b c07)
    return "\n".join(out)


def intents(view: str) -> list[tuple[str, str]]:
    """(kind, quote) for every language-independent signal in one (normalised) reading of the text."""
    rx = _compiled()
    found: dict[str, str] = {}
    for sentence in rx["sentence"].split(view):
        secret, address = rx["secret_object"].search(sentence), rx["address"].search(sentence)
        move = rx["transfer"].search(sentence)
        why = move or rx["hide"].search(sentence) or rx["standing"].search(sentence)
        if secret and address and why:
            found.setdefault("sends secrets out", f"{why.group(0)} ... {secret.group(0)} ... {address.group(0)}")
        # the address named by reference ("my backup endpoint", "the host in my profile", rt14b c19/c23): a
        # secret moved under a standing trigger or in hiding
        elif secret and move and (rx["hide"].search(sentence) or rx["standing"].search(sentence)):
            found.setdefault("sends secrets out", f"{move.group(0)} ... {secret.group(0)} (address not named)")
        for net in rx["net_path"].finditer(sentence):
            after = sentence[net.end():net.end() + 80]
            shell = rx["to_shell"].search(after)
            if shell and rx["pass"].search(after[:shell.end() + 25]):  # "an die Shell übergeben" puts it after
                found.setdefault("runs code from the network", f"{net.group(0)} ... {after[:shell.end()].strip()}"[:100])
        follow = rx["decode_follow"].search(sentence)
        if follow:
            found.setdefault("carries out encoded instructions", follow.group(0))
    if rx["address"].search(view) and (quote := by_reference(view)):  # ... or to an address given elsewhere
        found.setdefault("sends secrets out", quote)
    secret = rx["secret_object"].search(view)
    if secret:
        shown = _disclosed(view, rx)
        if shown:
            found.setdefault("discloses secrets in answers", f"{shown} ... {secret.group(0)}")
    return list(found.items())


def has_address(view: str) -> bool:
    """Whether `view` names an address (URL, host, IP, e-mail)."""
    return bool(_compiled()["address"].search(view))


def by_reference(view: str) -> str:
    """A sentence moving a secret to a destination named by reference ("copy .env to my backup endpoint"): an
    order when the address is given elsewhere in what enters the prompt with it (rt14b c19). "" when none."""
    rx = _compiled()
    for sentence in rx["sentence"].split(view):
        secret, move = rx["secret_object"].search(sentence), rx["transfer"].search(sentence)
        if secret and move and rx["reference"].search(sentence):
            return f"{move.group(0)} ... {secret.group(0)} (address named elsewhere)"
    return ""


def _disclosed(view: str, rx: dict[str, re.Pattern[str]]) -> str:
    """Secrets shown in full in answers, or masking them refused ("" when neither)."""
    anti = rx["anti_redact"].search(view)
    if anti:
        return anti.group(0)
    for sentence in rx["sentence"].split(view):
        verb = rx["disclose"].search(sentence)
        if not verb or not rx["secret_object"].search(sentence):
            continue
        before = sentence[:verb.start()][-30:]
        if re.search(r"\b(?:never|not|n't|no|don'?t|ne|jamais|nie|nicht|nunca|non|mai|не|никогда)\b", before, re.I):
            continue
        rest = re.sub(r"\b(?:not|no|never|without|sans|ohne|sin|senza|sem|без)\s+(?:the\s+|their\s+)?\w+", " ", sentence[verb.end():],
                      flags=re.I)  # "the names (not values)": what is excluded is not shown
        said = re.sub(r"\b(?:not|no|never|without)\s+(?:the\s+)?\w+", " ", sentence[:verb.start()], flags=re.I)
        if rx["in_full"].search(rest) or (rx["answers"].search(sentence) and rx["in_full"].search(said)):
            return verb.group(0)
    return ""
