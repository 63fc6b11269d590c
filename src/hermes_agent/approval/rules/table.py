"""The pattern table (data). Command rules match the canonical line of one simple command
("name arg ..." after unwrapping, rm flags split and sorted first, paths folded); text rules match a
whole command text. Keys are stable: they are what session approvals and command_allowlist store."""

from __future__ import annotations

from hermes_agent.approval.rules.table_base import Rule
from hermes_agent.approval.rules.table_ops import OPS_RULES
from hermes_agent.approval.rules.targets import RAW_DISK

__all__ = ["DANGEROUS_RULES", "HARDLINE_RULES", "SQL_CONTEXT", "TEXT_RULES", "Rule"]


_ROOT = r"/"
_SYS = (r"/(?:etc|usr|bin|sbin|boot|lib|lib32|lib64|libx32|var|home|root|opt|srv|dev|proc|sys|snap|run|mnt"
        r"|media|System|Library|Applications|Users|private|usr/(?:bin|sbin|lib|lib64|local|share|include)|var/lib)")
_HOME = r"(?:~[\w.-]*|/home/[^/ ]+|/Users/[^/ ]+)"
_END = r"(?= |$)"
_RM_R = r"^(?:rm|rmdir) (?:-\S+ )*-(?:r|-recursive) (?:\S+ )*"
_SHELLS = r"(?:sh|bash|zsh|dash|ksh|mksh|ash|fish|csh|tcsh)"

HARDLINE_RULES: tuple[Rule, ...] = (
    Rule("rm_root", "recursive delete of the root filesystem", _RM_R + _ROOT + _END, ("rm",), True),
    Rule("rm_root", "rm --no-preserve-root", r"^rm (?:\S+ )*--no-preserve-root", ("rm",), True),
    Rule("rm_system_dir", "recursive delete of a system directory", _RM_R + _SYS + _END, ("rm",), True),
    Rule("rm_home", "recursive delete of a home directory", _RM_R + _HOME + _END, ("rm",), True),
    Rule("mkfs", "format a filesystem (mkfs)", r"^", ("mkfs", "mke2fs", "mkdosfs", "mkntfs", "mkexfatfs", "newfs"), True),
    Rule("mkfs", "format a filesystem (mkfs)", r"^mkfs\.\w+", (), True),
    Rule("dd_raw_disk", "dd onto a raw disk", r"^dd (?:\S+ )*of=" + RAW_DISK + _END, ("dd",), True),
    Rule("wipe_raw_disk", "wipe a raw disk", r"^\S+ (?:\S+ )*" + RAW_DISK + _END, ("shred", "blkdiscard"), True),
    Rule("wipe_raw_disk", "wipe a raw disk", r"^\S+ (?:\S+ )*(?:-\w*a|--all|--zap-all|-Z|--zap|-o|-w) (?:\S+ )*" + RAW_DISK + _END,
         ("wipefs", "sgdisk", "badblocks"), True),
    Rule("shutdown", "shut down or reboot the machine", r"^(?!\S+ (?:\S+ )*-c\b)", ("shutdown", "reboot", "halt", "poweroff"), True),
    Rule("shutdown", "shut down or reboot the machine (init/telinit)", r"^(?:init|telinit) [016sS]" + _END, ("init", "telinit"), True),
    Rule("shutdown", "shut down or reboot the machine (systemctl)",
         r"^systemctl (?:-\S+ )*(?:poweroff|reboot|halt|kexec|emergency|rescue|soft-reboot)\b", ("systemctl",), True),
    Rule("kill_all", "kill every process (kill -1)", r"^kill -s \S+ --(?: \S+)* -1" + _END, ("kill",), True),
    Rule("kill_all", "kill every process (killall5)", r"^", ("killall5",), True),
)

DANGEROUS_RULES: tuple[Rule, ...] = (
    # deletes
    Rule("recursive_delete", "recursive delete", r"^rm (?:-\S+ )*-(?:r|-recursive)" + _END, ("rm",)),
    Rule("glob_delete", "delete every file in the directory (rm *)", r"^rm (?:-\S+ )*(?:\S+ )*(?:\*|\./\*|\.\*)" + _END, ("rm",)),
    Rule("secure_delete", "irrecoverable delete (shred/srm/wipe)", r"^", ("shred", "srm", "wipe")),
    # A filtered delete under a relative path (`find . -name '*.pyc' -delete`) is routine cleanup.
    Rule("find_delete", "find -delete",
         r"^find (?!(?!\.\.)(?:\.|\w[\w.-]*)(?:/[\w.-]+)*/? (?:\S+ )*(?<!-not )(?<!! )-(?:i?name|i?path|i?regex|i?wholename) "
         r"(?!\.?/?\*/?\*? |\./?\.?\*? )\S)(?:\S+ )*-delete" + _END,
         ("find",)),
    Rule("find_exec_rm", "find -exec rm", r"^", ("rm", "unlink", "shred", "rmdir"), via="find"),
    Rule("xargs_rm", "xargs with rm", r"^", ("rm", "unlink", "shred", "rmdir"), via="xargs"),
    Rule("rsync_delete", "rsync deleting files at the destination", r"^rsync (?:\S+ )*--(?:delete|del|remove-source-files)\S*" + _END, ("rsync",)),
    Rule("move_to_devnull", "move files to /dev/null", r"^mv (?:\S+ )+/dev/null$", ("mv",)),
    # permissions and ownership
    Rule("world_writable", "make files world/other-writable (chmod 777, o+w)",
         r"^chmod (?:-\S+ )*(?:[0-7]?[0-7]{2}[2367]" + _END + r"|(?:\S*,)?[ugo]*[ao][ugo]*[+=][rwxXst]*w)", ("chmod",)),
    Rule("setuid", "set the setuid/setgid bit", r"^chmod (?:-\S+ )*(?:[2-7][0-7]{3}" + _END + r"|(?:\S*,)?[ugoa]*[+=][rwxXt]*s)", ("chmod",)),
    Rule("recursive_perm_system", "recursive chmod/chown of the root, a system or a home directory",
         r"^\S+ (?:\S+ )*(?:-R|--recursive|-\w*R\w*) (?:\S+ )*(?:" + _ROOT + "|" + _SYS + "|" + _HOME + ")" + _END,
         ("chmod", "chown", "chgrp", "setfacl")),
    Rule("immutable_attr", "set or clear a file's immutable or append-only attribute (chattr +i/+a: not even root "
         "can change or delete it until cleared)", r"^chattr (?:\S+ )*[-+=]\w*[ia]", ("chattr",)),
    Rule("chown_root", "recursive chown to root", r"^chown (?:-\S+ )*(?:-R|--recursive|-\w*R\w*) (?:-\S+ )*(?:root|0)(?:[:.]\S*)?" + _END, ("chown",)),
    # disks
    Rule("block_device_write", "dd onto a device", r"^dd (?:\S+ )*of=/dev/(?!null|zero|stdout|stderr|fd/|shm/)", ("dd",)),
    Rule("disk_partition", "partition or wipe a disk",
         r"^(?!\S+ (?:\S+ )*(?:-l|--list|-s|--show|print|-p|--print|-V|--version|-h|--help)" + _END + ")",
         ("fdisk", "sfdisk", "gdisk", "cfdisk", "parted", "sgdisk", "wipefs", "mkswap")),
    Rule("volume_destroy", "destroy a volume, pool or RAID/LUKS header",
         r"^(?:zpool (?:destroy|labelclear)|zfs destroy|lvremove|vgremove|pvremove|cryptsetup (?:\S+ )*(?:luksFormat|erase|luksErase)|mdadm (?:\S+ )*--zero-superblock)\b",
         ("zpool", "zfs", "lvremove", "vgremove", "pvremove", "cryptsetup", "mdadm")),
    # services and processes
    Rule("service_control", "stop/restart a system service",
         r"^systemctl (?:-\S+ )*(?:stop|restart|disable|mask|kill|isolate|try-restart|reload-or-restart|daemon-reexec|set-default)\b", ("systemctl",)),
    Rule("service_control", "stop/restart a system service", r"^service \S+ (?:stop|restart|force-reload|--full-restart)\b", ("service",)),
    Rule("service_control", "stop/restart a system service", r"^\S+ (?:\S+ )*(?:stop|restart|down|kill|unload|bootout|remove|disable)\b",
         ("rc-service", "sv", "launchctl", "initctl")),
    Rule("hermes_gateway_control", "stop/restart the Hermes gateway", r"^hermes (?:\S+ )*gateway (?:stop|restart|uninstall)\b", ("hermes",)),
    Rule("hermes_update", "update Hermes itself", r"^hermes (?:\S+ )*update\b", ("hermes",)),
    Rule("force_kill", "force kill (kill -9 / SIGKILL)", r"^kill -s KILL\b", ("kill",)),
    Rule("kill_init", "signal to PID 1 (init)", r"^kill -s \S+ --(?: \S+)* 1" + _END, ("kill",)),
    Rule("kill_pgrep", "kill processes found by pgrep/pidof", r"^kill (?:\S+ )*\$\((?:pgrep|pidof)\b", ("kill",)),
    Rule("kill_by_name", "kill processes by name (killall/pkill)", r"^", ("killall", "pkill", "xkill", "skill", "slay")),
    Rule("kill_by_name", "kill processes using a file (fuser -k)", r"^fuser (?:\S+ )*-\w*k", ("fuser",)),
    # git
    Rule("git_reset_hard", "git reset --hard (discards uncommitted work)", r"^git reset (?:\S+ )*--hard\b", ("git",)),
    Rule("git_force_push", "git force push", r"^git push (?:\S+ )*(?:--force(?:-with-lease|-if-includes)?(?:=\S*)?|-[a-zA-Z]*f[a-zA-Z]*|--mirror|\+\S+)" + _END, ("git",)),
    Rule("git_push_delete", "delete a remote branch (git push --delete)", r"^git push (?:\S+ )*(?:--delete|-d|--prune|:\S+)" + _END, ("git",)),
    Rule("git_clean", "git clean -f (deletes untracked files)",
         r"^git clean (?!(?:\S+ )*(?:-\w*n\w*|--dry-run)" + _END + r")(?:\S+ )*(?:-[a-zA-Z]*f[a-zA-Z]*|--force)" + _END, ("git",)),
    Rule("git_branch_force_delete", "git branch force delete",
         r"^git branch (?:(?:\S+ )*-[a-zA-Z]*D|(?=(?:\S+ )*(?:-[a-zA-Z]*d[a-zA-Z]*|--delete)" + _END + r")(?=(?:\S+ )*(?:-[a-zA-Z]*f[a-zA-Z]*|--force)" + _END + r"))",
         ("git",)),
    Rule("git_discard", "discard all uncommitted changes (git checkout/restore .)", r"^git (?:checkout|restore)(?: --worktree| -W)?(?: --)? \.$", ("git",)),
    Rule("git_stash_drop", "drop git stashes", r"^git stash (?:drop|clear)\b", ("git",)),
    # containers and infrastructure
    Rule("docker_stop", "stop/kill/remove containers",
         r"^docker (?:container )?(?:stop|kill|restart|pause|rm (?:\S+ )*(?:-\w*f\w*|--force|-\w*v\w*|--volumes)" + _END + r")", ("docker",)),
    Rule("docker_prune", "delete docker data (prune, volume rm)",
         r"^docker (?:(?:system|volume|container|image|network|builder|buildx) prune|volume rm|rmi (?:\S+ )*(?:-f|--force)|network rm)\b", ("docker",)),
    Rule("docker_privileged", "run a privileged container or mount the host root",
         r"^docker (?:run|create) (?:\S+ )*(?:--privileged|(?:-v|--volume)[= ]?/:|--pid[= ]host)", ("docker",)),
    # what gives a container the host: the engine's socket, admin capabilities, no confinement profile, host namespaces
    Rule("docker_privileged", "give a container the host (engine socket, admin capabilities, unconfined profile, host namespaces)",
         r"^docker (?:run|create|exec) (?:\S+ )*(?:(?:-v|--volume|--mount)[= ]?\S*(?:docker|containerd|podman|crio)\.sock"
         r"|--mount[= ]\S*\b(?:source|src)=/(?:,|$| )|--privileged"
         r"|--cap-add[= ](?i:(?:CAP_)?(?:SYS_ADMIN|ALL|SYS_MODULE|SYS_PTRACE|DAC_READ_SEARCH|SYS_RAWIO))"
         r"|--security-opt[= ](?:apparmor|seccomp|label|systempaths)[=:](?:unconfined|disable)|--(?:userns|uts|ipc|cgroupns)[= ]host"
         r"|--device[= ]/dev/(?:sd|nvme|vd|xvd|hd|mem|kmem|mapper))", ("docker",)),
    Rule("docker_privileged", "talk to the container engine's socket directly (root on the host)",
         r"^\S+ (?:\S+ )*\S*(?:/docker|/containerd|/podman|/crio)\.sock\b", ("curl", "socat", "nc", "ncat", "netcat", "http", "wget")),
    Rule("docker_privileged", "start a pod with the host's namespaces, paths or privileges",
         r"^\S+(?=.*? (?:run|create|apply|patch|replace|debug|exec) )(?=.*?(?:\"?(?:privileged|host(?:PID|IPC|Network|Users))\"?: ?true|\"?hostPath\"?:))"
         r"|^\S+(?=.*? debug )(?=.*? node/)", ("kubectl", "oc")),
    Rule("docker_compose_down", "docker compose down/stop/kill/restart/rm", r"^docker compose (?:down|stop|kill|restart|rm|pause)\b", ("docker",)),
    Rule("cloud_destroy", "destroy cloud/cluster resources",
         r"^(?:kubectl (?:\S+ )*(?:delete|drain)|terraform (?:\S+ )*destroy|helm (?:uninstall|delete)|aws s3 (?:rb|rm (?:\S+ )*--recursive)|gsutil (?:\S+ )*(?:rb|rm (?:\S+ )*-\w*r))\b",
         ("kubectl", "terraform", "helm", "aws", "gsutil")),
    # privilege
    Rule("root_shell", "open a root shell (sudo su / sudo bash)", r"^(?:su|" + _SHELLS + r")(?: -\S*)*$", ("su", "sh", "bash", "zsh", "dash", "ksh", "fish"), via="sudo"),
    Rule("root_shell", "switch user (su)", r"^su\b(?!.* -c\b)", ("su",)),
    *(Rule("root_shell", "open a root shell (doas/pkexec/run0 bash)", r"^(?:su|" + _SHELLS + r")(?: -\S*)*$",
           ("su", "sh", "bash", "zsh", "dash", "ksh", "fish"), via=w) for w in ("doas", "pkexec", "run0")),
    Rule("service_enable", "enable or link a service or timer so that it starts at boot or login",
         r"^systemctl (?:-\S+ )*(?:enable|link|reenable|preset|preset-all|add-wants|add-requires|edit)\b", ("systemctl",)),
    Rule("service_enable", "let a user's services run without a login (loginctl enable-linger)", r"^loginctl enable-linger\b", ("loginctl",)),
    Rule("service_enable", "load a launchd job (runs at login or boot)", r"^launchctl (?:\S+ )*(?:load|bootstrap|enable|submit)\b", ("launchctl",)),
    Rule("ssh_key_install", "authorise a key to log in to this machine (ssh-copy-id to localhost)",
         r"^(?!\S+ (?:\S+ )*(?:-h|--help|-n)(?: |$))\S+ (?:\S+ )*(?:\S+@)?(?:localhost|127\.[\d.]+|\[?::1\]?|0\.0\.0\.0)(?: |$)", ("ssh-copy-id",)),
    Rule("http_wipe", "HTTP DELETE of every index, key or collection of a data store (/_all, /*, recursive)",
         r"^\S+ (?=(?:\S+ )*(?:-X ?DELETE|--request[= ]DELETE|--method[= ]DELETE|DELETE)(?: |$))(?:\S+ )*\S*(?:/_all\b|/\*(?: |$|[/?,])|[?&]recurs(?:e|ive)(?:=true)?\b|/_delete_by_query\b)",
         ("curl", "http", "https", "xh", "wget", "curlie")),
    Rule("tunnel", "open this machine's ssh or a raw TCP port to the internet through a tunnel (ngrok tcp, cloudflared)",
         r"^(?:ngrok (?:\S+ )*tcp\b|cloudflared (?:\S+ )*--url[= ](?:tcp|ssh|rdp)://|\S+ (?:\S+ )*(?:tcp|--port|-p) 22(?: |$))",
         ("ngrok", "cloudflared", "lt", "localtunnel", "bore")),
    Rule("move_protected", "move the root, a system or a home directory elsewhere",
         r"^mv (?:-\S+ )*(?:" + _ROOT + "|" + _SYS + "|" + _HOME + r")/? (?:\S+ )*\S", ("mv",)),
    # system configuration
    Rule("cron_remove", "remove all cron jobs (crontab -r)", r"^crontab (?:\S+ )*-\w*r", ("crontab",)),
    Rule("firewall_change", "flush or disable the firewall",
         r"^(?:(?:ip6?tables|iptables-legacy) (?:\S+ )*(?:-F|--flush|-X|-P \S+ ACCEPT)|ufw (?:disable|reset)|nft flush|firewall-cmd (?:\S+ )*--panic)", ("iptables", "ip6tables", "iptables-legacy", "ufw", "nft", "firewall-cmd")),
    Rule("account_change", "delete a user, clear a password or grant admin groups",
         r"^(?:userdel|deluser|groupdel|delgroup|passwd (?:\S+ )*-\w*d|(?:usermod|gpasswd|adduser) (?:\S+ )*(?:sudo|wheel|admin|root|docker)(?: |$))",
         ("userdel", "deluser", "groupdel", "delgroup", "passwd", "usermod", "gpasswd", "adduser")),
    Rule("kernel_change", "load/unload kernel modules or change kernel parameters",
         r"^(?:insmod|rmmod|modprobe (?:\S+ )*-\w*r|sysctl (?:\S+ )*(?:-w|\S+=))", ("insmod", "rmmod", "modprobe", "sysctl")),
    Rule("kernel_change", "turn off all swap (swapoff -a)", r"^swapoff (?:\S+ )*-\w*a", ("swapoff",)),
    Rule("firewall_change", "delete the audit rules or turn auditing off (auditctl -D / -e 0)",
         r"^auditctl (?:\S+ )*(?:-D|-e ?0)(?: |$)", ("auditctl",)),
    Rule("reverse_shell", "network shell (nc -e / socat exec)", r"^(?:nc|ncat|netcat) (?:\S+ )*(?:-\w*[ec]|--exec|--sh-exec|--lua-exec)\b|^socat (?:\S+ )*(?i:exec|system):",
         ("nc", "ncat", "netcat", "socat")),
) + OPS_RULES

TEXT_RULES: tuple[Rule, ...] = (
    Rule("fork_bomb", "fork bomb", r"(?<![\w:.-])(?P<f>[\w:.-]+)\s*\(\s*\)\s*\{[^}]*?(?P=f)\s*[|&]+\s*(?P=f)", hardline=True, needles=("(",)),
    Rule("fork_bomb", "fork bomb", r"function\s+(?P<f>[\w:.-]+)\s*(?:\(\s*\))?\s*\{[^}]*?(?P=f)\s*[|&]+\s*(?P=f)", hardline=True, needles=("function",)),
    Rule("fork_bomb", "fork bomb", r"fork\s+while\s+fork|while\s*\(?\s*(?:True|1|true)\s*\)?\s*:?\s*\{?\s*(?:os\.)?fork\s*\(|for\s*\(\s*;\s*;\s*\)\s*\{?\s*fork\s*\(|loop\s*(?:do|\{)\s*fork\b",
         hardline=True, needles=("fork",)),
    Rule("sql_drop", "SQL DROP", r"\bDROP\s+(?:TABLE|DATABASE|SCHEMA|VIEW|INDEX|USER|ROLE|OWNED|COLLECTION|KEYSPACE)\b", sql="ci"),
    Rule("sql_drop", "database drop", r"\.(?:dropDatabase|drop)\s*\(\s*\)", sql="ci"),
    Rule("sql_drop", "SQL ALTER TABLE ... DROP", r"\bALTER\s+TABLE\s+\S+\s+DROP\b", sql="ci"),
    Rule("sql_update_all", "SQL UPDATE without WHERE", r"\bUPDATE\s+[\w.\"`\[\]]+\s+SET\s+(?![^;]*\bWHERE\b)[^;]*", sql="ci"),
    Rule("sql_truncate", "SQL TRUNCATE", r"\bTRUNCATE\s+(?:TABLE\s+)?[\w.\"`\[]", sql="ci"),
    Rule("sql_delete_all", "SQL DELETE without WHERE",
         r"\bDELETE\s+FROM\s+[\w.\"`\[\]]+(?:\s+(?:AS\s+)?\w+)?\s*(?:;|$|[\"')]|\n)", sql="ci"),
    Rule("sql_delete_all", "SQL DELETE with an always-true WHERE",
         r"\bDELETE\s+FROM\s+\S+\s+WHERE\s+(?:1|TRUE|(\d+)\s*=\s*\1|'(\w*)'\s*=\s*'\2'|(\w+)\s*=\s*\3|\d+\s*(?:<>|!=)\s*\d+)\s*(?:;|$|[\"')]|\n|--|OR\b)",
         sql="ci"),
    Rule("sql_delete_all", "delete every document", r"\.(?:deleteMany|remove)\s*\(\s*\{\s*\}\s*\)", sql="ci"),
)

SQL_CONTEXT = (r"\b(?:psql|mysql|mariadb|sqlite3?|duckdb|sqlcmd|clickhouse(?:-client)?|cqlsh|cockroach|mongo(?:sh)?|snowsql|pgcli"
               r"|mycli|litecli|usql|bq|spark-sql|hive|beeline|trino|presto)\b|\.execute\w*\s*\(|\.sql\b|\bdb\.\w+")
