# Used by scripts/test: run its steps, keep their times and the test
# binaries' counts, and print the summary at the end.
#
# step NAME CMD...       runs CMD; a failure stops scripts/test (set -e).
# lint_step NAME CMD...  a step whose compiler warnings fail it too (a cargo
#                        build with clippy-driver as the rustc wrapper).
# test_step NAME CMD...  runs a cargo test CMD, its output shown and kept;
#                        a failure is counted, and the next steps still run.
# summarize              the step times, each test binary's wall time
#                        (slowest first) and `N passed, N failed, N skipped`;
#                        returns non-zero on any failure.
#
# Needs $scratch (a private directory) and $IOMARK_SKIP_LOG (the file each
# skipped test appends its line to: iomark_testrig::skipped).

_steps=()
_failed_steps=()

_now() { date +%s.%N; }

# _record T0 NAME: keep NAME's time since T0 for the summary.
_record() {
  _steps+=("$(awk -v a="$1" -v b="$(_now)" 'BEGIN { printf "%.0f", b - a }') $2")
}

step() {
  local name=$1 t0
  shift
  echo "== $name: $*" >&2
  t0=$(_now)
  "$@"
  _record "$t0" "$name"
}

lint_step() {
  local name=$1 t0 warnings
  shift
  echo "== $name: $*" >&2
  t0=$(_now)
  "$@" 2>&1 | tee "$scratch/build.log"
  _record "$t0" "$name"
  # Dependencies' warnings are capped by cargo; these are the workspace's.
  warnings=$(grep -cE '^warning' "$scratch/build.log" || true)
  if [ "$warnings" -ne 0 ]; then
    echo "scripts/test: $name: $warnings warning lines (above); clippy's and rustc's warnings fail the build, as cargo clippy -- -D warnings would" >&2
    return 1
  fi
}

test_step() {
  local name=$1 t0 rc=0
  shift
  echo "== $name: $*" >&2
  t0=$(_now)
  # cargo prints `Running BINARY` on stderr and the results on stdout:
  # both into one log, in order.
  "$@" 2>&1 | tee -a "$scratch/tests.log" || rc=$?
  _record "$t0" "$name"
  if [ "$rc" -ne 0 ]; then
    _failed_steps+=("$name (exit $rc)")
  fi
  return 0
}

summarize() {
  echo
  echo "step times (s):"
  printf '  %s\n' "${_steps[@]}"
  echo
  echo "test binaries by wall time (s), slowest first:"
  # `Running tests/main.rs (target/citest/deps/main-HASH)` or
  # `Doc-tests CRATE` names the binary whose `test result:` line follows.
  awk '
    /^ *Running / {
      # `Running unittests src/lib.rs (target/citest/deps/iomark_disk-HASH)`:
      # the source and the binary without its hash.
      name = $2 " " $3; bin = $NF
      gsub(/[()]/, "", bin); sub(/.*\//, "", bin); sub(/-[0-9a-f]+$/, "", bin)
      if ($2 != "unittests") name = $2
      name = bin " (" name ")"
    }
    /^ *Doc-tests / { name = "doc-tests " $2 }
    /^test result: / {
      t = $NF; sub(/s$/, "", t)
      printf "  %8.1f  %s  (%s passed, %s failed)\n", t, name, $4, $6
    }' "$scratch/tests.log" | sort -rn -k1,1 | tee "$scratch/times"
  local passed failed ignored skipped
  read -r passed failed ignored < <(awk '/^test result: / { p += $4; f += $6; i += $8 }
    END { print p + 0, f + 0, i + 0 }' "$scratch/tests.log")
  # A test that skipped ran to its early return and counted as passed; one
  # that skipped a part of itself twice counts once.
  skipped=$(cut -d: -f1 "$IOMARK_SKIP_LOG" | sort -u | grep -c . || true)
  if [ "$skipped" -gt 0 ]; then
    echo
    echo "skipped (what each needed):"
    sort -u "$IOMARK_SKIP_LOG" | sed 's/^/  /'
  fi
  if [ ${#_failed_steps[@]} -gt 0 ]; then
    echo
    echo "failed steps: ${_failed_steps[*]}"
  fi
  # A step that failed without a failing test (a build error, a crashed
  # test binary) still fails the run.
  if [ "$failed" -eq 0 ] && [ ${#_failed_steps[@]} -gt 0 ]; then
    failed=${#_failed_steps[@]}
  fi
  echo
  echo "$((passed - skipped)) passed, $failed failed, $((skipped + ignored)) skipped"
  [ "$failed" -eq 0 ]
}
