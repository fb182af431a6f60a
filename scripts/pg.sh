#!/usr/bin/env bash
# Starts (or reuses) a throwaway PostgreSQL cluster for the tests, listening
# on loopback only, and prints its URL. Usage:
#   export AGENTMAIL_TEST_POSTGRES_URL=$(scripts/pg.sh start)
#   scripts/pg.sh start durable   # PostgreSQL's default durability, for benchmarks
#   scripts/pg.sh mode            # prints fast or durable (the running cluster's)
#   scripts/pg.sh stop
# Modes: "fast" (the default, for tests): fsync=off, synchronous_commit=off,
# commits cost no disk flush and a power loss can lose the cluster;
# "durable": fsync=on, synchronous_commit=on (PostgreSQL's defaults), every
# commit waits for its WAL flush. A running cluster started in the other
# mode is restarted in the one asked for.
# The cluster lives in $AGENTMAIL_PG_DIR (default /tmp/agentmail-pg) and is
# owned by the "postgres" system user when run as root (PostgreSQL refuses
# to run as root).
set -euo pipefail
dir=${AGENTMAIL_PG_DIR:-/tmp/agentmail-pg}
port=${AGENTMAIL_PG_PORT:-54329}
bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
[ -n "$bin" ] || { echo "pg.sh: PostgreSQL is not installed (apt-get install postgresql)" >&2; exit 1; }

as_owner() {
  if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

running_mode() {
  as_owner "$bin/psql" -h "$dir" -p "$port" -U agentmail -d postgres -Atc "SHOW fsync" 2>/dev/null |
    sed -e 's/^on$/durable/' -e 's/^off$/fast/'
}

case "${1:-start}" in
start)
  mode=${2:-fast}
  case "$mode" in
  fast) opts="-c fsync=off -c synchronous_commit=off" ;;
  durable) opts="-c fsync=on -c synchronous_commit=on" ;;
  *) echo "pg.sh: mode $mode: use fast or durable" >&2; exit 2 ;;
  esac
  if [ ! -f "$dir/PG_VERSION" ]; then
    mkdir -p "$dir"
    [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
    as_owner "$bin/initdb" -D "$dir" -U agentmail --auth=trust -E UTF8 >/dev/null
  fi
  if as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1 && [ "$(running_mode)" != "$mode" ]; then
    as_owner "$bin/pg_ctl" -D "$dir" -m fast -w stop >/dev/null
  fi
  if ! as_owner "$bin/pg_ctl" -D "$dir" status >/dev/null 2>&1; then
    as_owner "$bin/pg_ctl" -D "$dir" -l "$dir/server.log" -w -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 $opts" start >/dev/null
  fi
  echo "postgres://agentmail@127.0.0.1:$port/postgres?sslmode=disable"
  ;;
mode)
  running_mode
  ;;
stop)
  as_owner "$bin/pg_ctl" -D "$dir" -m fast stop >/dev/null 2>&1 || true
  ;;
*)
  echo "usage: pg.sh start [fast|durable] | mode | stop" >&2; exit 2;;
esac
