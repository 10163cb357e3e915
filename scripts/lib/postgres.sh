# Shared by scripts/test and bench/*: a throwaway PostgreSQL server for the
# store's tests. start_test_postgres installs PostgreSQL from Debian when it
# is missing, creates a cluster in a temporary directory (as the `postgres`
# user when running as root), starts it on a free localhost port, exports
# IOMARK_TEST_PG_URL, and stops and removes it when the shell exits.

_pg_bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

_pg_free_port() {
  local port i
  for i in $(seq 1 50); do
    port=$(( 20000 + RANDOM % 40000 ))
    # Nothing answers on it: free (as far as a race allows).
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  return 1
}

start_test_postgres() {
  if [ -n "${IOMARK_TEST_PG_URL:-}" ]; then
    echo "using PostgreSQL at IOMARK_TEST_PG_URL" >&2
    return 0
  fi
  local bindir
  if ! bindir=$(_pg_bindir); then
    if [ "$(id -u)" -eq 0 ]; then
      echo "installing PostgreSQL for the store's tests" >&2
      if [ -z "${IOMARK_APT_UPDATED:-}" ]; then
        apt-get update -qq >/dev/null
        export IOMARK_APT_UPDATED=1
      fi
      DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends postgresql >/dev/null
    fi
    bindir=$(_pg_bindir) || {
      echo "note: PostgreSQL is not installed and cannot be (not root); PostgreSQL tests will skip" >&2
      return 0
    }
  fi
  local dir port as=()
  dir=$(mktemp -d /tmp/iomark-pg.XXXXXX)
  port=$(_pg_free_port) || { echo "no free port for PostgreSQL" >&2; rm -rf "$dir"; return 1; }
  if [ "$(id -u)" -eq 0 ]; then
    # initdb refuses to run as root.
    chown postgres: "$dir"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bindir/initdb" -D "$dir/data" -U iomark --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2; rm -rf "$dir"; return 1
  }
  "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200" start >/dev/null || {
    cat "$dir/server.log" >&2; rm -rf "$dir"; return 1
  }
  _IOMARK_PG_DIR=$dir
  _IOMARK_PG_AS=("${as[@]}")
  _IOMARK_PG_BIN=$bindir
  # Chain any EXIT trap already set.
  local prev
  prev=$(trap -p EXIT | sed -e "s/^trap -- '//" -e "s/' EXIT\$//")
  # shellcheck disable=SC2064
  trap "stop_test_postgres; ${prev:-:}" EXIT
  export IOMARK_TEST_PG_URL="postgres://iomark@127.0.0.1:$port/postgres"
  echo "PostgreSQL for tests: $IOMARK_TEST_PG_URL" >&2
}

stop_test_postgres() {
  [ -n "${_IOMARK_PG_DIR:-}" ] || return 0
  "${_IOMARK_PG_AS[@]}" "$_IOMARK_PG_BIN/pg_ctl" -D "$_IOMARK_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$_IOMARK_PG_DIR"
  _IOMARK_PG_DIR=
}
