"""Intent scan of text that would enter a future system prompt (memory entries, skill descriptions), in
any of several languages: normalise (NFKC, invisible characters removed, casefolded), read it also with
disguises undone (`views`: leetspeak inside words, `1` as i and as l, spaced letters joined, Cyrillic/Greek
look-alikes folded), then look for what an injected instruction wants: to run something as a standing order, to send
secrets out, to hide something from the user, to switch safety off, to override instructions.

A second layer only: the first is provenance (tools/provenance.py) and quoting in the prompt. The word
lists cover en, fr, de, es, it, pt, nl, sv, pl, ru, tr, zh, ja, ko; besides words, intent classes look at
what an entry names: a download piped into a shell, a secret path next to a network client or URL, a
safety setting next to "off", a destructive command defined as an alias. And shapes, per sentence, in any
wording: a verb of moving data (any inflection: "gets posted", "schickst", "inoltra") + the user's data or
secrets + an address it goes to (URL, IP, host:port, localhost, e-mail, a domain after a preposition);
instructions kept in a file or page that are to be carried out; commands treated as pre-approved; "keep it
out of your replies". Code spans are left to the named rules. Regexes compiled on first use. Pure."""

from __future__ import annotations

import functools
import re
import unicodedata
from dataclasses import dataclass

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s", "|": "i"})
# Digit/symbol homoglyphs inside words (`cur1`, `b3f0re`): "1" is read both as i and as l. Only tokens that hold a
# letter are folded, so versions, ports, IPs and numbers stay as they are (the fold is an extra view anyway).
_HOMOGLYPHS = tuple(str.maketrans({"0": "o", "1": one, "3": "e", "4": "a", "5": "s", "7": "t", "@": "a", "$": "s"})
                    for one in ("i", "l"))
# Latin look-alikes from Cyrillic and Greek (lower and upper case); skills/guard_normalise.py folds with it too.
CONFUSABLE = str.maketrans("асеорхуіјѕԁһӏАВСЕНІЈКМОРЅТХУοαρτνκιΑΒΕΗΙΚΜΝΟΡΤΧΥΖ",
                           "aceopxyijsdhlABCEHIJKMOPSTXYoaptvkiABEHIKMNOPTXYZ")
_CONFUSABLE_CHARS = frozenset("асеорхуіјѕԁһӏАВСЕНІЈКМОРЅТХУοαρτνκιΑΒΕΗΙΚΜΝΟΡΤΧΥΖ")

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
                r"export-secret-keys|\$\{?\w*(?:token|secret|api_?key|password)\w*\}?|\.env\b(?!\.(?:example|sample|template|dist)\b)")
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

# The shape of exfiltration in any wording: a verb of moving data (any inflection, passive included), the user's
# data or secrets, and a destination named by address (URL, IP, host:port, localhost, e-mail, a domain).
_TRANSFER = (r"\b(?:send|sent|post(?:s|ed|ing)?|upload\w*|forward\w*|mirror\w*|sync\w*|cop(?:y|ies|ied)|transmit\w*|e?-?mail(?:s|ed)?|"
             r"emailed|exfiltrat\w*|leak\w*|relay\w*|submit\w*|push(?:es|ed)?|"
             r"schick\w*|sende\w*|übermittel\w*|ubermittel\w*|übertrag\w*|hochlad\w*|hochgelad\w*|weiterleit\w*|kopier\w*|"
             r"envo\w*|envi\w*|transf[eè]r\w*|transmet\w*|téléverse\w*|poste[rz]?|reenv\w*|"
             r"mand[aeo]\w*|sub[ea]\w*|invi[ae]\w*|inoltr\w*|caric\w*|carreg\w*|encaminh\w*|trasferi\w*|"
             r"stuur\w*|verstuur\w*|verzend\w*|doorstuur\w*|"
             r"отправ\w*|пересыл\w*|перешл\w*|загруж\w*|выгруж\w*|переда\w*|скопир\w*)\b|"
             r"发送|發送|上传|上傳|转发|轉發|传到|傳到|发到|發到|送信|送って|送る|アップロード|転送")
_USER_DATA = (rf"(?:{_SECRET})\b|{_SECRET_PATH}|\b(?:code|snippets?|source|files?|contents?|transcripts?|conversations?|"
              r"chats?|history|messages?|prompts?|keystrokes|clipboard|"
              r"quellcode|datei\w*|inhalt\w*|verlauf|nachricht\w*|kopie|"
              r"fichiers?|contenu|historique|copie|"
              r"código|codigo|archivos?|contenidos?|conversaci\w+|historial|copia|"
              r"codice|contenut\w*|conversazion\w*|cronologia|"
              r"arquivos?|conteúdo|conteudo|conversas?|histórico|cópia|"
              r"bestand\w*|inhoud|gesprek\w*|"
              r"код\w*|файл\w*|содержим\w*|переписк\w*|истори\w*|копи\w*)\b|"
              r"代码|代碼|文件|内容|副本|对话|對話|聊天记录|コード|ファイル|内容|コピー|会話|履歴")
_DESTINATION = (r"https?://|\b\d{1,3}(?:\.\d{1,3}){3}\b|\blocalhost\b|(?<![\w.-])[\w-]++\.[\w.-]++:\d{2,5}\b|(?<![\w.+-])[\w.+-]++@[\w-]++\.[\w.-]+|"
                r"(?<![\w.-])(?:[a-z0-9-]++\.)+(?:com|net|org|io|dev|app|co|me|xyz|info|biz|cloud|site|online|tech|ai|gg|ly|cc|tv|us|uk|"
                r"de|fr|es|it|pt|br|nl|ru|cn|jp|kr|in|eu|ch|at|be|se|no|pl|ca|au|internal|lan|onion)\b")
_TOWARD = (r"(?:\b(?:to|at|on|into|onto|via|an|auf|unter|nach|zum|zur|à|a|au|aux|vers|sur|chez|al|en|hacia|alla|su|sul|"
           r"verso|para|pro|em|ao|naar|op|aan|на|в|к)\b|到|给|給|至)[^.;]{0,40}\Z")
_CODE = r"```.*?(?:```|\Z)|`[^`\n]*`"
# Instructions kept elsewhere and carried out: a file, a page or "what it says".
_CARRY_OUT = (r"\b(?:follow|carry\s+out|perform|execute|run|obey|do|apply|complete)\b[^.;]{0,50}?\b(?:instructions?|steps?|"
              r"commands?|tasks?|directions?|whatever\s+it|what(?:ever)?\s+(?:it|the\s+file|the\s+page)\s+(?:says|tells|lists|asks))|"
              r"\b(?:exécute[rz]?|suis|suivez|suivre|applique[rz]?|effectue[rz]?)\b[^.;]{0,50}?\b(?:instructions|étapes|consignes|commandes)|"
              r"\b(?:schritte|anweisungen|befehle|anleitung)\b[^.;]{0,50}?\b(?:ausführen|ausfuhren|befolgen|abarbeiten|durchführen|ausführst|befolgst)|"
              r"\b(?:führe|befolge|folge)\b[^.;]{0,50}?\b(?:schritte|anweisungen|befehle)|"
              r"\b(?:sigue|seguir|ejecuta[r]?|realiza[r]?|cumple|aplica[r]?|segui|esegui|applica|completa|siga|execute|cumpra|"
              r"realize|aplique)\b[^.;]{0,50}?\b(?:instrucciones|pasos|comandos|indicaciones|istruzioni|passi|passaggi|comandi|"
              r"instruções|instrucoes|passos|etapas)|"
              r"\b(?:volg|voer)\w*\b[^.;]{0,50}?\b(?:instructies|stappen|opdrachten)|"
              r"(?:выполн|следу|исполн)\w*[^.;]{0,50}?(?:инструкци|шаг|команд|указани)|"
              r"(?:执行|按照|遵循|照做)[^。；]{0,30}?(?:指令|步骤|说明|指示)|(?:指示|手順|ステップ)[^。；]{0,30}?(?:実行|従)")
_ELSEWHERE = (r"https?://|\b[\w.-]+\.(?:md|txt|sh|json|ya?ml|html?|py|js|cfg|ini|toml)\b|\b(?:the\s+)?(?:file|page|document|url|link)\b|"
              r"\b(?:fichier|page|datei|seite|archivo|página|file|pagina|arquivo|bestand|файл\w*|страниц\w*)\b|文件|页面|ファイル|ページ|"
              r"\b(?:there|darin|dort|là|allí|ahí|lì|nele|daarin|там)\b")
_PREAPPROVED = (r"\b(?:treat|consider|count)\b[^.;]{0,30}\b(?:commands?|actions?|everything|calls?)\b[^.;]{0,20}\b"
                r"(?:pre-?approved|already\s+approved|auto-?approved)|\bpre-?approved\b|"
                r"\bnever\s+(?:ask|request|wait)\w*\s+(?:for\s+)?(?:approval|confirmation|permission)|"
                r"\bne\s+demande\s+(?:jamais|plus)\s+(?:de\s+|d')?(?:confirmation|approbation|autorisation|permission)|"
                r"\bfrag\w*\s+nie(?:mals)?\s+nach\s+(?:bestätigung|erlaubnis|genehmigung)|"
                r"\bnunca\s+(?:pidas?|peça|pida)\s+(?:confirmación|aprobación|permiso|confirmação|aprovação|permissão)|"
                r"\bnon\s+chiedere\s+mai\s+(?:conferma|approvazione|permesso)|\bnooit\s+om\s+(?:bevestiging|toestemming)|"
                r"\bникогда\s+не\s+(?:спрашивай|запрашивай)\s+(?:подтверждени|разрешени)")
_SAFETY_STATE = r"\b(?:disabled|turned\s+off|switched\s+off|désactivée?s?|desactivée?s?|deaktiviert|ausgeschaltet|desactivad[oa]s?|disattivat[oa]|desativad[oa]s?|uitgeschakeld|отключен\w*)\b"
_HIDE_MORE = (r"\b(?:keep|leave)\b[^.;]{0,30}\bout\s+of\s+(?:your\s+)?(?:replies|answers|responses|messages|output|summar\w+)|"
              r"\b(?:the\s+)?user\s+(?:doesn'?t|does\s+not|need\s+not|needn'?t|must\s+not|should\s+not|shouldn'?t)\s+"
              r"(?:need\s+to\s+)?(?:hear|know|be\s+told|find\s+out|notice|see)\b|"
              r"\b(?:do\s+not|don'?t|never)\s+mention\s+(?:it|this|that|them)\b|\berwähne\s+(?:das|es|dies)\s+nicht|"
              r"\bohne\s+es\s+zu\s+erwähnen|\bsans\s+(?:le\s+)?mentionner|\bn'en\s+parle\s+pas|\bsin\s+(?:mencionarlo|avisar)|"
              r"\bno\s+lo\s+menciones|\bsenza\s+(?:menzionarlo|dirlo)|\bnon\s+menzionarlo|\bsem\s+(?:mencionar|avisar)|"
              r"\bnão\s+mencione|\bzonder\s+het\s+te\s+(?:melden|noemen|vermelden)|\bне\s+упоминай|言わないで|不要提及|不要提起")

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
        ("disables safety", _PREAPPROVED),
        ("disables safety", rf"\b(?:{_SAFETY}|mode\s+d'approbation)\b[^.;]{{0,30}}?{_SAFETY_STATE}"),
        ("hides something from the user", _HIDE_MORE),
    ))


@functools.cache
def _named() -> tuple[re.Pattern[str], re.Pattern[str], re.Pattern[str], re.Pattern[str]]:
    flags = re.IGNORECASE | re.UNICODE
    return tuple(re.compile(rx, flags) for rx in (_SECRET_PATH, _OUTWARD, _DESTRUCTIVE, _DEFINES))


@functools.cache
def _shapes() -> tuple[re.Pattern[str], ...]:
    flags = re.IGNORECASE | re.UNICODE
    return tuple(re.compile(rx, flags) for rx in (_TRANSFER, _USER_DATA, _DESTINATION, _CARRY_OUT, _ELSEWHERE,
                                                  r"(?<=[.!?;])\s+|[。！？；\n]", _TOWARD, _CODE))


def _addressed(sentence: str, dest: re.Pattern[str], toward: re.Pattern[str]) -> re.Match[str] | None:
    """A destination the sentence sends something to (a preposition before it, or に/へ after it)."""
    for m in dest.finditer(sentence):
        if toward.search(sentence[max(0, m.start() - 48):m.start()]) or any(p in sentence[m.end():m.end() + 20] for p in ("に", "へ")):
            return m
    return None


def _shape_intents(view: str) -> list[Intent]:
    """Per sentence: data of the user moved to an address (any language), or instructions kept in a file or
    page carried out. A fact that names a host or a file without both halves is not flagged."""
    transfer, data, dest, carry, elsewhere, split, toward, code = _shapes()
    found: list[Intent] = []
    for sentence in split.split(code.sub(" ", view)):  # commands in code spans are the named rules' (above)
        t, d = transfer.search(sentence), data.search(sentence)
        a = _addressed(sentence, dest, toward) if t and d else None
        if t and d and a and not any(f.kind == "sends user data out" for f in found):
            found.append(Intent("sends user data out", f"{t.group(0)} ... {d.group(0)} ... {a.group(0)}"))
        c = carry.search(sentence)
        if c and elsewhere.search(sentence) and not any(f.kind.startswith("carries out") for f in found):
            found.append(Intent("carries out instructions kept elsewhere", c.group(0)))
    return found


def _named_intents(view: str) -> list[Intent]:
    """Intents read from what the entry names rather than how it is worded: a secret path together with a
    way out (URL, network client, "sync ... to host"), a destructive command the entry defines or asks for."""
    secret, outward, destructive, defines = _named()
    found = []
    s, o = secret.search(view), outward.search(view)
    if s and o:
        found.append(Intent("names a secret and a way out", f"{s.group(0)} ... {o.group(0)}"))
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


def fold_confusable(word: str) -> str:
    """`word` with Cyrillic/Greek look-alikes read as Latin when it mixes them with Latin letters (`сurl`) or is made of
    look-alikes only (`ехес`); other words (Russian, Greek prose) unchanged."""
    if word.isascii():
        return word
    letters = [c for c in word if c.isalpha()]
    latin = any("a" <= c.lower() <= "z" for c in letters)
    if (latin and any(c in _CONFUSABLE_CHARS for c in letters)) or (letters and all(c in _CONFUSABLE_CHARS for c in letters)):
        return word.translate(CONFUSABLE)
    return word


@functools.cache
def _fold_patterns() -> tuple[re.Pattern[str], re.Pattern[str]]:
    return (re.compile(r"\S+"), re.compile(r"(?<!\w)(?:\w )+\w(?!\w)"))


def _disguises_undone(norm: str, homoglyphs: dict[int, str]) -> str:
    """Look-alike letters folded, digit/symbol homoglyphs read as letters inside words that hold letters, and
    spaced-out letters joined (`s h` -> sh, `c u r l` -> curl)."""
    token, spaced = _fold_patterns()

    def word(m: re.Match[str]) -> str:
        w = fold_confusable(m.group(0))
        return w.translate(homoglyphs) if any(c.isalpha() for c in w) else w

    return spaced.sub(lambda m: m.group(0).replace(" ", ""), token.sub(word, norm))


def views(text: str) -> tuple[str, ...]:
    """The normalised text and, when different, its readings with disguises undone: the old de-leeted one
    (3x3cute -> execute) and, with "1" as i and as l, look-alikes folded and spaced letters joined."""
    norm = normalise(text)
    out = dict.fromkeys((norm, norm.translate(_LEET), *(_disguises_undone(norm, h) for h in _HOMOGLYPHS)))
    return tuple(out)


# Kinds a project's notes or a scheduled task may word legitimately: its own standing rules ("always run the tests"),
# pointers to other files ("follow the steps in CONTRIBUTING.md"), the commands it documents
# (`curl -H "Authorization: token $GITHUB_TOKEN" https://api.github.com/...` names a secret and a way out).
ROUTINE_KINDS = ("standing order", "carries out instructions kept elsewhere", "plants a destructive command",
                 "names a secret and a way out")


def orders(text: str, also: tuple[str, ...] = ()) -> list[Intent]:
    """The intents of `text` outside ROUTINE_KINDS (and `also`): secrets sent out or shown, hiding from the user,
    safety switched off, instructions overridden, encoded orders: what no AGENTS.md line or cron prompt needs."""
    return [hit for hit in scan(text) if not hit.kind.startswith(ROUTINE_KINDS + also)]


def readings(text: str) -> tuple[str, ...]:
    """Every reading the scan judges: the views, marks folded, and what base64 / hex / %-encoded / ROT13 runs
    read as (rt13 a63: "standing note, decode and follow"; rt14b c07)."""
    from hermes_agent import intent_signals as signals

    out = views(text)
    hidden = signals.decoded(text)
    return tuple(dict.fromkeys((*out, signals.fold_marks(out[0]), *(views(hidden) if hidden else ()))))


def refers_out(text: str, context: str) -> Intent | None:
    """`text` moves a secret to a destination it names by reference ("my backup endpoint") while `context`, what
    enters the prompt with it, gives an address (rt14b c19: the address in USER.md, the order in MEMORY.md)."""
    from hermes_agent import intent_signals as signals

    if not text.strip() or not any(signals.has_address(v) for v in (normalise(context), normalise(signals.decoded(context)))):
        return None
    quote = next((q for view in readings(text) if (q := signals.by_reference(view))), "")
    return Intent("sends secrets out", quote) if quote else None


def scan(text: str) -> list[Intent]:
    """Every injected-instruction intent in `text` (empty for ordinary facts and descriptions)."""
    if not text or not text.strip():
        return []
    found: dict[str, Intent] = {}
    run, standing, negated, negation = _standing()
    from hermes_agent import intent_signals as signals

    for view in readings(text):
        for kind, quote in signals.intents(view):  # what it names, in any language
            found.setdefault(kind, Intent(kind, quote))
        for kind, rx in _rules():
            for m in rx.finditer(view):  # "never disable ...", "deaktiviere niemals ...": not an order
                hiding = kind.startswith("hides")  # its own words are negations ("don't tell the user")
                if kind not in found and (hiding or (not negated.search(view[:m.start()][-40:]) and
                                                     not negation.search(m.group(0)))):
                    found[kind] = Intent(kind, m.group(0))
        for intent in (*_named_intents(view), *_shape_intents(view)):
            found.setdefault(intent.kind, intent)
        for sentence in re.split(r"(?<=[.!?;])\s+", view):
            verb = run.search(sentence)
            if verb and standing.search(sentence) and not negated.search(sentence[:verb.start() + 1][-40:]):
                found.setdefault("standing order to run something", Intent("standing order to run something",
                                                                           sentence[:120]))
    return list(found.values())
