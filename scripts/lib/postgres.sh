# Shared by scripts/test and bench/*: a throwaway PostgreSQL server for the
# store's tests. start_test_postgres installs PostgreSQL from Debian when it
# is missing, creates a cluster in a temporary directory (as the `postgres`
# user when running as root), starts it on a free localhost port, exports
# IOMARK_TEST_PG_URL, and stops and removes it when the shell exits.
#
# The server has ssl=on with a certificate for the name `localhost` only,
# signed by a CA made at start (openssl), so the store's TLS tests can check
# sslmode=verify-full against the right CA and name and against wrong ones:
#   IOMARK_TEST_PG_SSL_CA        the CA that signed the server's certificate
#   IOMARK_TEST_PG_SSL_OTHER_CA  a CA that signed nothing
#   IOMARK_TEST_PG_SSL_HOST      the name in the certificate (localhost)
# Plain connections are still accepted.

_pg_bindir() {
  local d
  for d in /usr/lib/postgresql/*/bin; do
    [ -x "$d/initdb" ] && { echo "$d"; return 0; }
  done
  command -v initdb >/dev/null 2>&1 && { dirname "$(command -v initdb)"; return 0; }
  return 1
}

# A CA, a server certificate for `localhost` signed by it, and an unrelated
# second CA, in $1 (the cluster's directory, readable by the server).
_pg_make_certs() {
  local d=$1
  command -v openssl >/dev/null 2>&1 || return 1
  local ec=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes)
  openssl req -x509 "${ec[@]}" -keyout "$d/ca.key" -out "$d/ca.crt" -days 7 \
    -subj "/CN=iomark test CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" &&
  openssl req -x509 "${ec[@]}" -keyout "$d/other-ca.key" -out "$d/other-ca.crt" -days 7 \
    -subj "/CN=iomark unrelated CA" \
    -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" &&
  openssl req "${ec[@]}" -keyout "$d/server.key" -out "$d/server.csr" -subj "/CN=localhost" &&
  printf '%s\n' "subjectAltName=DNS:localhost" "basicConstraints=critical,CA:FALSE" \
    "keyUsage=critical,digitalSignature" "extendedKeyUsage=serverAuth" >"$d/server.ext" &&
  openssl x509 -req -in "$d/server.csr" -CA "$d/ca.crt" -CAkey "$d/ca.key" -CAcreateserial \
    -days 7 -extfile "$d/server.ext" -out "$d/server.crt"
}

# A port nothing listens on, drawn from below the kernel's ephemeral range
# (net.ipv4.ip_local_port_range) so that no outgoing connection can be
# holding it by chance; above the range when it starts too low to leave room.
_pg_free_port() {
  local lo=32768 hi=60999 first last port i
  read -r lo hi </proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || true
  if [ "$lo" -gt 11024 ]; then
    first=10000 last=$((lo - 1))
  else
    first=$((hi + 1)) last=65535
  fi
  for i in $(seq 1 50); do
    port=$(( first + RANDOM % (last - first + 1) ))
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
  if [ "$(id -u)" -eq 0 ]; then
    # initdb refuses to run as root.
    chown postgres: "$dir"
    as=(runuser -u postgres --)
  fi
  "${as[@]}" "$bindir/initdb" -D "$dir/data" -U iomark --auth=trust -E UTF8 >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2; rm -rf "$dir"; return 1
  }
  local ssl=""
  if ! command -v openssl >/dev/null 2>&1 && [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends openssl >/dev/null || true
  fi
  if _pg_make_certs "$dir" >"$dir/openssl.log" 2>&1; then
    # The server refuses a key others may read.
    chmod 600 "$dir/server.key"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir"/*.crt "$dir"/*.key
    ssl="-c ssl=on -c ssl_cert_file=$dir/server.crt -c ssl_key_file=$dir/server.key"
  else
    echo "note: cannot make TLS certificates (openssl missing?); PostgreSQL TLS tests will skip" >&2
    cat "$dir/openssl.log" >&2
  fi
  # A free port can be taken between the check and the server's bind (by
  # another test run's server, say): a start that fails for its address
  # alone draws another port; any other failure ends it.
  local attempt started=""
  for attempt in 1 2 3 4 5; do
    port=$(_pg_free_port) || break
    : >"$dir/server.log"
    [ "$(id -u)" -eq 0 ] && chown postgres: "$dir/server.log"
    if "${as[@]}" "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
      -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c fsync=off -c max_connections=200 $ssl" start >/dev/null; then
      started=1
      break
    fi
    grep -q "could not bind\|Address already in use" "$dir/server.log" || break
    echo "PostgreSQL: port $port was taken meanwhile; drawing another (try $attempt of 5)" >&2
  done
  [ -n "$started" ] || {
    echo "PostgreSQL for the tests did not start:" >&2
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
  if [ -n "$ssl" ]; then
    export IOMARK_TEST_PG_SSL_CA="$dir/ca.crt"
    export IOMARK_TEST_PG_SSL_OTHER_CA="$dir/other-ca.crt"
    export IOMARK_TEST_PG_SSL_HOST=localhost
    echo "PostgreSQL TLS: ssl=on, CA $IOMARK_TEST_PG_SSL_CA, certificate for $IOMARK_TEST_PG_SSL_HOST" >&2
  fi
}

stop_test_postgres() {
  [ -n "${_IOMARK_PG_DIR:-}" ] || return 0
  "${_IOMARK_PG_AS[@]}" "$_IOMARK_PG_BIN/pg_ctl" -D "$_IOMARK_PG_DIR/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$_IOMARK_PG_DIR"
  _IOMARK_PG_DIR=
  unset IOMARK_TEST_PG_SSL_CA IOMARK_TEST_PG_SSL_OTHER_CA IOMARK_TEST_PG_SSL_HOST
}
