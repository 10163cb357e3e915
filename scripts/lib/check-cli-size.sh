#!/usr/bin/env bash
# The command layer stays thin (issue 47): the binary's crate, crates/cli,
# holds flags and glue, and what measures, stores or renders lives in the
# library crates. It grew back twice once nothing checked it, so this
# fails when its code outside tests passes 1,800 lines (non-blank,
# non-comment, each file cut at its `#[cfg(test)]`, `*tests.rs` left out),
# or one of its files passes 500 lines. docs/architecture.md gives the
# same count as a command.
#
# Run from the repository root: scripts/lib/check-cli-size.sh
set -euo pipefail

max_lines=1800
max_file=500

code() { # FILE: its lines before #[cfg(test)]
  awk '/#\[cfg\(test\)\]/{exit} {print}' "$1"
}

total=0
status=0
while IFS= read -r f; do
  n=$(code "$f" | wc -l)
  if [ "$n" -gt "$max_file" ]; then
    echo "check-cli-size: $f has $n lines outside its tests, more than $max_file: move what is not flags or glue into a library crate" >&2
    status=1
  fi
  total=$((total + $(code "$f" | grep -v '^\s*$' | grep -cv '^\s*//' || true)))
done < <(find crates/cli/src -name '*.rs' ! -name '*tests.rs' | sort)
if [ "$total" -gt "$max_lines" ]; then
  echo "check-cli-size: crates/cli counts $total lines of code outside tests, more than $max_lines: move what is not flags or glue into a library crate" >&2
  status=1
fi
if [ "$status" -eq 0 ]; then
  echo "check-cli-size: crates/cli counts $total lines of code outside tests (at most $max_lines), no file over $max_file"
fi
exit "$status"
