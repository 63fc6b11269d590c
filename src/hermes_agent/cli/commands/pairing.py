"""`hermes pairing list|approve|revoke`: who may talk to the messaging gateway through DM pairing."""

from __future__ import annotations

import argparse
import sys

from hermes_agent.config.settings import Settings


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    """Register `hermes pairing ...`."""
    p = subparsers.add_parser("pairing", help="Approve or revoke messaging users who asked to pair")
    sub = p.add_subparsers(dest="pairing_command", metavar="ACTION")
    sub.add_parser("list", help="Pending requests and approved users")
    ap = sub.add_parser("approve", help="Approve the user holding CODE")
    ap.add_argument("platform")
    ap.add_argument("code")
    rv = sub.add_parser("revoke", help="Revoke an approved user")
    rv.add_argument("platform")
    rv.add_argument("user_id")


def run(args: argparse.Namespace, settings: Settings) -> int:
    from hermes_agent.gateway.pairing import PairingStore

    store = PairingStore()
    action = getattr(args, "pairing_command", None) or "list"
    if action == "approve":
        platform = args.platform.lower()
        if store.locked_out(platform):
            print(f"hermes pairing: {platform} is locked out after too many failed approvals; try again in an hour",
                  file=sys.stderr)
            return 1
        who = store.approve(platform, args.code)
        if who is None:
            print(f"hermes pairing: no pending {platform} request with code {args.code}", file=sys.stderr)
            return 1
        print(f"Approved {who['user_name'] or who['user_id']} ({who['user_id']}) on {platform}.")
        return 0
    if action == "revoke":
        if not store.revoke(args.platform.lower(), args.user_id):
            print(f"hermes pairing: {args.user_id} is not an approved {args.platform} user", file=sys.stderr)
            return 1
        print(f"Revoked {args.user_id} on {args.platform}.")
        return 0
    return _list(store)


def _list(store) -> int:  # type: ignore[no-untyped-def]
    platforms = store.platforms()
    pending = [p for name in platforms for p in store.list_pending(name)]
    approved = [a for name in platforms for a in store.list_approved(name)]
    print("Pending requests:" if pending else "Pending requests: none")
    for p in pending:
        print(f"  {p['platform']}  {p['user_id']}  {p.get('user_name', '')}")
    print("Approved users:" if approved else "Approved users: none")
    for a in approved:
        print(f"  {a['platform']}  {a['user_id']}  {a.get('user_name', '')}")
    return 0
