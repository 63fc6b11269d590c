"""The pattern table, operations part (data): databases, infrastructure and cloud CLIs, packages,
security controls, history, cron and Hermes's own settings. Same format as table.py."""

from __future__ import annotations

from hermes_agent.approval.rules.table_base import Rule

_CLOUD_CLIS = ("gcloud", "az", "doctl", "linode-cli", "hcloud", "scw", "oci", "ibmcloud", "exoscale", "vultr-cli", "flyctl", "fly",
               "heroku", "vercel", "netlify", "firebase", "railway", "render")
_VERB_DELETE = r"(?:delete|destroy|purge|terminate|remove|rm|apps:destroy|apps:delete)"

OPS_RULES: tuple[Rule, ...] = (
    # databases
    Rule("db_drop", "drop a database (dropdb / mysqladmin drop)", r"(?i)^(?:dropdb|dropuser)\b|^mysqladmin (?:\S+ )*drop\b",
         ("dropdb", "dropuser", "mysqladmin")),
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
    # security controls
    Rule("firewall_change", "turn off SELinux enforcement", r"^setenforce (?:0|permissive)\b", ("setenforce",)),
    Rule("firewall_change", "unload every AppArmor profile", r"^", ("aa-teardown",)),
    Rule("firewall_change", "set AppArmor profiles to complain/disabled", r"^\S+ (?!-h|--help)", ("aa-complain", "aa-disable")),
    Rule("firewall_change", "stop the firewall or a security service",
         r"^\S+ (?:\S+ )*(?:stop|disable|mask|kill) (?:\S+ )*(?:firewalld|ufw|iptables|nftables|apparmor|auditd|fail2ban|selinux)\b",
         ("systemctl", "service", "rc-service")),
    Rule("firewall_change", "flush or disable the firewall", r"^\S+ (?:\S+ )*(?:-F|--flush|-X|--delete-chain|-P \S+ ACCEPT|--policy \S+ ACCEPT)\b",
         ("iptables", "ip6tables", "iptables-legacy", "iptables-nft")),
    Rule("firewall_change", "turn off the firewall", r"^\S+ (?:\S+ )*(?:disable|reset|--panic|off|flush)\b", ("ufw", "firewall-cmd", "nft", "pfctl")),
    Rule("firewall_change", "turn off the firewall (pfctl -d)", r"^pfctl (?:\S+ )*-d\b", ("pfctl",)),
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
         r"|mcp_servers\.\S+\.approval)\b|^hermes (?:\S+ )*config (?:edit|reset)(?: |$)|^hermes (?:\S+ )*--yolo\b", ("hermes",)),
)
