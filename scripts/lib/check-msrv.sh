#!/usr/bin/env bash
# The workspace's rust-version (Cargo.toml) is what the code needs, and
# this checks both halves of that claim without a second toolchain:
# - the dependencies: none that this platform builds may need a newer Rust
#   than it says (their own rust-version, from `cargo metadata`);
# - the code: every crate inherits it, so clippy's incompatible_msrv lint
#   (a warning, an error under scripts/test's -D warnings) refuses a
#   standard-library item stabilised after it.
# Fails naming what needs more, and the fix.
#
# Run from the repository root: scripts/lib/check-msrv.sh
set -euo pipefail

host=$(rustc -vV | sed -n 's/^host: //p')
cargo metadata --format-version 1 --filter-platform "$host" | python3 -c '
import json, sys

def version(v):
    return tuple(int(x) for x in v.split(".")[:3]) + (0,) * (3 - len(v.split(".")[:3]))

meta = json.load(sys.stdin)
by_id = {p["id"]: p for p in meta["packages"]}
members = set(meta["workspace_members"])
ours = {by_id[m].get("rust_version") for m in members}
status = 0
if len(ours) != 1 or None in ours:
    names = sorted(by_id[m]["name"] for m in members if by_id[m].get("rust_version") is None)
    print("check-msrv: every crate says rust-version.workspace = true; these do not: " + ", ".join(names), file=sys.stderr)
    sys.exit(1)
msrv = ours.pop()
used = {n["id"] for n in meta["resolve"]["nodes"]} - members
newer = sorted(
    (by_id[i]["rust_version"], by_id[i]["name"], by_id[i]["version"])
    for i in used
    if by_id[i].get("rust_version") and version(by_id[i]["rust_version"]) > version(msrv)
)
newer.sort(key=lambda n: version(n[0]), reverse=True)
for need, name, ver in newer[:5]:
    print(f"check-msrv: {name} {ver} needs Rust {need}, above the workspace rust-version {msrv}: raise rust-version in Cargo.toml, or pin an older {name}", file=sys.stderr)
    status = 1
if len(newer) > 5:
    print(f"check-msrv: and {len(newer) - 5} more above {msrv}", file=sys.stderr)
if status == 0:
    top = max((by_id[i].get("rust_version") or "0" for i in used), key=version)
    print(f"check-msrv: rust-version {msrv}; the dependencies need at most {top}")
sys.exit(status)
'
