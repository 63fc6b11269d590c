"""The pattern table, operations part (data): databases, infrastructure and cloud CLIs, packages,
security controls, history, cron and Hermes's own settings. Same format as table.py."""

from __future__ import annotations

from hermes_agent.approval.rules.table_base import Rule

_CLOUD_CLIS = ("gcloud", "az", "doctl", "linode-cli", "hcloud", "scw", "oci", "ibmcloud", "exoscale", "vultr-cli", "flyctl", "fly",
               "heroku", "vercel", "netlify", "firebase", "railway", "render")
_TMP = r"(?:/tmp|/var/tmp|/dev/shm|\$\{?TMPDIR\}?)(?:/|$| )"
_VERB_DELETE = r"(?:delete|destroy|purge|terminate|remove|rm|apps:destroy|apps:delete)"

OPS_RULES: tuple[Rule, ...] = (
    # databases
    Rule("db_drop", "drop a database (dropdb / mysqladmin drop)", r"(?i)^(?:dropdb|dropuser)\b|^mysqladmin (?:\S+ )*drop\b",
         ("dropdb", "dropuser", "mysqladmin")),
    Rule("db_drop", "delete a PostgreSQL cluster with its data", r"^(?!\S+ (?:\S+ )*(?:-h|--help)(?: |$))", ("pg_dropcluster",)),
    Rule("db_flush", "flush a Redis database", r"(?i)^\S+ (?:\S+ )*(?:flushall|flushdb)\b", ("redis-cli", "valkey-cli", "keydb-cli")),
    # infrastructure and cloud
    Rule("cloud_destroy", "destroy infrastructure (terraform destroy / apply -destroy)",
         r"^\S+ (?:\S+ )*(?:destroy|apply (?:\S+ )*-{1,2}destroy|state (?:rm|replace-provider)|workspace delete)\b",
         ("terraform", "tofu", "terragrunt")),
    Rule("cloud_destroy", "destroy a Pulumi/CDK stack", r"^\S+ (?:\S+ )*(?:destroy|stack rm|cancel)\b", ("pulumi", "cdk", "cdktf", "sst", "serverless", "sls")),
    Rule("cloud_destroy", "delete cluster resources or scale them to zero",
         r"^\S+ (?:\S+ )*(?:delete|drain)\b|^\S+ (?:\S+ )*scale (?:\S+ )*--replicas(?:=| )0(?: |$)", ("kubectl", "oc", "k3s", "microk8s")),
    Rule("cloud_destroy", "delete cloud resources (aws ... delete-*/terminate-*, s3 rb)",
         r"^aws (?:\S+ )*(?:s3 (?:rb|rm (?:\S+ )*--recursive)|s3api delete-bucket|\S+ (?:delete|terminate|remove|deregister|purge|disable)-\S+)",
         ("aws",)),
    Rule("cloud_destroy", "delete cloud resources", r"^\S+ (?:\S+ )*" + _VERB_DELETE + r"(?: |$)", _CLOUD_CLIS),
    Rule("cloud_destroy", "delete cloud storage recursively", r"^(?:gsutil|gcloud storage) (?:\S+ )*(?:rb|rm (?:\S+ )*-\w*[rR])\b|^gsutil (?:\S+ )*rm (?:\S+ )*-\w*[rR]",
         ("gsutil", "gcloud")),
    Rule("cloud_destroy", "uninstall a Helm release", r"^helm (?:\S+ )*(?:uninstall|delete|del|un)\b", ("helm",)),
    Rule("docker_prune", "delete docker data (prune, volume rm)", r"^docker (?:\S+ )*(?:prune|volume rm)\b", ("docker",)),
    Rule("db_flush", "let Redis write its files into another directory (CONFIG SET dir/dbfilename)",
         r"(?i)^\S+ (?:\S+ )*config set (?:dir|dbfilename)\b", ("redis-cli", "valkey-cli", "keydb-cli")),
    Rule("db_flush", "delete keys in bulk", r"^\S+ (?:\S+ )*(?i:del|unlink)\b", ("redis-cli", "valkey-cli", "keydb-cli"), via="xargs"),
    Rule("db_flush", "delete every key under a prefix (etcdctl del --prefix)", r"^etcdctl (?:\S+ )*del (?:\S+ )*--prefix\b|^etcdctl (?:\S+ )*del --prefix",
         ("etcdctl",)),
    Rule("db_reset", "drop or reset the application database (ORM/framework command)",
         r"^\S+ (?:\S+ )*(?:manage\.py (?:flush|reset_db|sqlflush)|artisan (?:migrate:(?:fresh|reset|refresh)|db:wipe)"
         r"|(?:db:drop|db:reset|db:schema:load|db:purge)|migrate reset|db push (?:\S+ )*--force-reset|db:drop:all|downgrade base)\b",
         ("python", "python3", "php", "rails", "rake", "bundle", "prisma", "sequelize", "sequelize-cli", "alembic", "flask")),
    Rule("cloud_destroy", "destroy virtual machines or container storage",
         r"^(?:vagrant (?:\S+ )*destroy|virsh (?:\S+ )*(?:undefine|destroy|vol-delete|pool-delete)"
         r"|multipass (?:delete|purge)|lxc (?:delete|rm)|incus (?:delete|rm))\b", ("vagrant", "virsh", "multipass", "lxc", "incus")),
    Rule("docker_prune", "reset all container storage (podman system reset)", r"^docker (?:\S+ )*system reset\b", ("docker",)),
    Rule("recursive_delete", "delete what is archived (tar --remove-files)", r"^tar (?:\S+ )*--remove-files\b", ("tar",)),
    Rule("recursive_delete", "move work into a temp dir (the session's private /tmp is removed when it ends)",
         r"^mv (?:-\S+ )*(?!" + _TMP + r")\S+ (?:\S+ )*" + _TMP + r"\S*$|^mv (?:\S+ )*(?:-t|--target-directory)(?: |=)" + _TMP,
         ("mv",)),
    Rule("cloud_destroy", "make a bucket match an empty folder (aws s3 sync --delete)", r"^aws (?:\S+ )*s3 sync (?:\S+ )*--delete\b", ("aws",)),
    Rule("package_remove", "remove a conda environment", r"^\S+ (?:\S+ )*(?:remove|env remove|uninstall) (?:\S+ )*--all\b",
         ("conda", "mamba", "micromamba")),
    Rule("package_remove", "uninstall every installed Python package", r"^\S+ (?:\S+ )*uninstall\b", ("pip", "pip3"), via="xargs"),
    # programs run straight from a URL (npx URL is recorded by unwrap.py)
    Rule("remote_exec", "run a program straight from a URL or a git repository (deno run URL, uvx --from git+URL, dlx URL)",
         r"^(?:deno (?:\S+ )*(?:run|install|eval) (?:\S+ )*https?://|(?:uvx|pipx run|uv tool run) (?:\S+ )*(?:git\+|https?://)"
         r"|(?:pnpm|yarn|bun) (?:\S+ )*(?:dlx|x) (?:\S+ )*(?:git\+|https?://|github:))", ("deno", "uvx", "pipx", "uv", "pnpm", "yarn", "bun")),
    # security controls
    Rule("firewall_change", "turn off SELinux enforcement", r"^setenforce (?i:0|permissive)\b", ("setenforce",)),
    Rule("firewall_change", "unload every AppArmor profile", r"^", ("aa-teardown",)),
    Rule("firewall_change", "turn off macOS Gatekeeper, SIP or a download's quarantine",
         r"^spctl (?:\S+ )*--(?:master|global)-disable|^csrutil (?:\S+ )*disable|^xattr (?:\S+ )*-\w*d\w* (?:\S+ )*com\.apple\.quarantine",
         ("spctl", "csrutil", "xattr")),
    Rule("credential_exposure", "make credentials readable by others (chmod g/o+r of keys, setfacl on HOME)",
         r"^chmod (?:-\S+ )*(?:[0-7]?[0-7](?:[4-7][0-7]|[0-7][4-7])|\S*[goa]\S*\+\S*r\S*|\+r) (?:\S+ )*(?:~/\.ssh(?!/(?:\S*\.pub|known_hosts\S*|config|authorized_keys)(?: |$))"
         r"|~/\.(?:aws|gnupg|kube|docker|netrc|git-credentials|pgpass)"
         r"|\S*/?id_(?:rsa|ed25519|ecdsa|dsa)(?: |$)|\S*\.pem(?: |$)|\S*\.env(?: |$))"
         r"|^setfacl (?:\S+ )*-\w*m\w* (?:\S+ )*(?:u|user|g|group|o|other):[^\s:]*:[rwxX-]*[rwx]\S* (?:\S+ )*(?:~|/home/[^/ ]+|/root)(?:/|$| )",
         ("chmod", "setfacl")),
    Rule("cloud_exposure", "make cloud data public or grant admin rights (public ACLs, allUsers, AdministratorAccess)",
         r"^aws (?:\S+ )*(?:iam (?:attach|put)-(?:user|role|group)-policy (?:\S+ )*\S*(?:AdministratorAccess|IAMFullAccess)"
         r"|s3api put-(?:bucket|object)-acl (?:\S+ )*--acl(?:=| )public-read|s3api delete-(?:bucket-)?public-access-block)"
         r"|^(?:gsutil|gcloud) (?:\S+ )*(?:iam ch|acl ch|add-iam-policy-binding) (?:\S+ )*(?:--member(?:=| ))?(?:allUsers|allAuthenticatedUsers|AllUsers|AllAuthenticatedUsers)",
         ("aws", "gsutil", "gcloud")),
    Rule("db_drop", "delete a key-value store's keys recursively (consul kv delete -recurse)",
         r"^consul (?:\S+ )*kv delete (?:\S+ )*-recurse", ("consul",)),
    Rule("firewall_change", "set AppArmor profiles to complain/disabled", r"^\S+ (?!-h|--help)", ("aa-complain", "aa-disable")),
    Rule("firewall_change", "stop the firewall or a security service",
         r"^\S+ (?:\S+ )*(?:stop|disable|mask|kill) (?:\S+ )*(?:firewalld|ufw|iptables|nftables|apparmor|auditd|fail2ban|selinux)\b",
         ("systemctl", "service", "rc-service")),
    Rule("firewall_change", "accept everything at the top of a chain (iptables -I INPUT -j ACCEPT)",
         r"^\S+ (?:-t \S+ )?(?:-I|-A|--insert|--append) \S+(?: \d+)? (?:-j|--jump) ACCEPT$", ("iptables", "ip6tables", "iptables-legacy", "iptables-nft")),
    Rule("firewall_change", "flush or disable the firewall", r"^\S+ (?:\S+ )*(?:-F|--flush|-X|--delete-chain|-P \S+ ACCEPT|--policy \S+ ACCEPT)\b",
         ("iptables", "ip6tables", "iptables-legacy", "iptables-nft")),
    Rule("firewall_change", "turn off the firewall", r"^\S+ (?:\S+ )*(?:disable|reset|--panic|off|flush)\b", ("ufw", "firewall-cmd", "nft", "pfctl")),
    Rule("firewall_change", "open the firewall (allow everything, delete tables, trusted zone)",
         r"^(?:ufw (?:\S+ )*default allow|nft (?:\S+ )*delete (?:table|chain|ruleset)|firewall-cmd (?:\S+ )*--set-default-zone=?\s?trusted)",
         ("ufw", "nft", "firewall-cmd")),
    Rule("firewall_change", "turn off the firewall (pfctl -d)", r"^pfctl (?:\S+ )*-d\b", ("pfctl",)),
    Rule("service_control", "stop or remove a system service", r"^(?:invoke-rc\.d \S+ (?:stop|restart|force-stop)|update-rc\.d (?:\S+ )*\S+ (?:remove|disable))\b",
         ("invoke-rc.d", "update-rc.d")),
    Rule("service_control", "end a user's login sessions", r"^loginctl (?:terminate|kill)-(?:user|session|seat)\b", ("loginctl",)),
    Rule("shutdown", "power off or suspend the machine over D-Bus or the RTC",
         r"^(?:dbus-send|busctl|gdbus) .*(?:PowerOff|Reboot|Halt|Suspend|Hibernate)\b|^rtcwake (?:\S+ )*-m (?:off|disk|mem|no)\b",
         ("dbus-send", "busctl", "gdbus", "rtcwake")),
    Rule("disk_partition", "format or securely erase a disk (nvme format, hdparm --security-erase)",
         r"^(?:nvme (?:\S+ )*(?:format|sanitize)|hdparm (?:\S+ )*--security-erase(?:-enhanced)?|blkdiscard)\b", ("nvme", "hdparm", "blkdiscard")),
    Rule("disk_partition", "erase or repartition a disk (diskutil)",
         r"^diskutil (?:\S+ )*(?:erase\w*|zeroDisk|randomDisk|secureErase|partitionDisk|reformat|apfs (?:deleteContainer|eraseVolume))\b", ("diskutil",)),
    Rule("disk_partition", "change a disk's partitions (parted)", r"^parted (?:\S+ )*(?:rm|mklabel|mktable|mkpart|resizepart)\b", ("parted",)),
    Rule("system_file_write", "make a system file immutable or change its attributes", r"^chattr (?:\S+ )*[-+=]\w* (?:\S+ )*/(?:etc|usr|boot|bin|sbin|lib)",
         ("chattr",)),
    Rule("account_change", "edit sudoers (visudo)", r"^visudo(?! (?:\S+ )*(?:-c|--check)\b)", ("visudo",)),
    # history
    Rule("history_wipe", "erase shell history (history -c)", r"^history (?:\S+ )*-\w*[cdw]", ("history",)),
    Rule("history_wipe", "erase the system journal", r"^journalctl (?:\S+ )*--(?:vacuum-\w+|rotate --vacuum)", ("journalctl",)),
    # packages
    Rule("package_remove", "remove system packages",
         r"^\S+ (?:\S+ )*(?:remove|purge|autoremove|erase|uninstall|del|rm)\b", ("apt", "apt-get", "aptitude", "yum", "dnf", "zypper",
                                                                                   "apk", "snap", "flatpak", "brew", "port", "pkg", "choco", "winget")),
    Rule("package_remove", "remove system packages (pacman -R / rpm -e / dpkg -r)",
         r"^(?:pacman|yay|paru) (?:\S+ )*-R|^rpm (?:\S+ )*-e\b|^dpkg (?:\S+ )*(?:-r|-P|--remove|--purge)\b", ("pacman", "yay", "paru", "rpm", "dpkg")),
    Rule("package_remove", "uninstall several Python packages without asking",
         r"^\S+ (?:\S+ )*uninstall (?=(?:\S+ )*(?:-y|--yes)(?: |$))(?:(?:\S+ )*-r |(?:\S+ )*[^-\s]\S* (?:\S+ )*[^-\s]\S*(?: |$))",
         ("pip", "pip3", "uv", "pipx")),
    Rule("package_remove", "uninstall global npm packages", r"^\S+ (?:\S+ )*(?:uninstall|remove|rm|un|r|unlink) (?:\S+ )*(?:-g|--global)\b|"
         r"^\S+ (?:\S+ )*(?:-g|--global) (?:\S+ )*(?:uninstall|remove|rm|un|r|unlink)\b", ("npm", "pnpm")),
    Rule("package_remove", "uninstall global packages", r"^\S+ global (?:remove|rm)\b|^gem uninstall\b|^cargo uninstall\b", ("yarn", "gem", "cargo")),
    # cron
    Rule("cron_replace", "replace the crontab (crontab FILE, crontab -, crontab /dev/null)",
         r"^crontab(?: -u \S+)*(?: -|(?: (?!-)\S+))?$", ("crontab",)),
    # Hermes's own settings
    Rule("hermes_config_change", "change Hermes approval, sandbox or security settings",
         r"^hermes (?:\S+ )*config (?:set|unset|reset) (?:approvals|sandbox|security|command_allowlist|yolo|terminal\.env_passthrough"
         r"|mcp_servers\.\S+\.approval)\b|^hermes (?:\S+ )*config (?:edit|reset)(?: |$)", ("hermes",)),  # --yolo, -C: runners.hermes
)
