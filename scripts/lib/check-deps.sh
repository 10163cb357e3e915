#!/usr/bin/env bash
# Rendering reads data alone: the text and report crates may depend on the
# model and the stats, never on what measures or stores (the engines, the
# kernels, the results store and their io-uring, SQLite and PostgreSQL).
# Fails, naming each crate and what pulls it in, when `cargo tree` (its
# default edges: normal, build and dev) lists one of them.
#
# Run from the repository root: scripts/lib/check-deps.sh
set -euo pipefail

renderers=(iomark-text iomark-report)
forbidden=(io-uring rusqlite postgres iomark-disk iomark-mem iomark-store)

status=0
for crate in "${renderers[@]}"; do
  tree=$(cargo tree -p "$crate" --prefix none --format '{p}')
  for dep in "${forbidden[@]}"; do
    if grep -q "^$dep v" <<<"$tree"; then
      echo "check-deps: $crate depends on $dep; rendering must read data alone: move what it borrows into iomark-model (records, constants) or iomark-stats (judgements); what pulls it in:" >&2
      cargo tree -p "$crate" -i "$dep" --prefix indent >&2 || true
      status=1
    fi
  done
done
if [ "$status" -eq 0 ]; then
  echo "check-deps: ${renderers[*]} depend on none of ${forbidden[*]}"
fi
exit "$status"
