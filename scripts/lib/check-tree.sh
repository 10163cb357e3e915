#!/usr/bin/env bash
# Nothing stray at the repository's root: every path git tracks there is
# one this list expects. A results database, a log or a scratch file
# committed by accident (an empty `200`, once) fails here, named. The list
# is the rule: a new top-level file or folder is added to it on purpose.
#
# Run from the repository root: scripts/lib/check-tree.sh
set -euo pipefail

expected=(
  .ci .gitignore Cargo.lock Cargo.toml README.md bench crates docs scripts
)

status=0
while IFS= read -r entry; do
  ok=0
  for e in "${expected[@]}"; do
    [ "$entry" = "$e" ] && ok=1 && break
  done
  if [ "$ok" -eq 0 ]; then
    echo "check-tree: '$entry' at the repository's root is not expected: remove it from git (git rm --cached '$entry'), or add it to the list in scripts/lib/check-tree.sh if it belongs there" >&2
    status=1
  fi
done < <(git ls-files | cut -d/ -f1 | sort -u)
if [ "$status" -eq 0 ]; then
  echo "check-tree: the root holds only ${expected[*]}"
fi
exit "$status"
