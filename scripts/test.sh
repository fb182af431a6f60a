#!/usr/bin/env bash
# Runs every test of AgentMail: formatting, vet, the Go suite with the race
# detector (unit, HTTP, end-to-end tests over the real binary and the real
# agent platforms), the packages that touch the database once more on
# PostgreSQL, and the web page's unit and browser tests.
# AGENTMAIL_SKIP_POSTGRES=1 leaves out the PostgreSQL run (CI never does).
# Installs what is missing first (scripts/deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

scripts/deps.sh

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go') 2>/dev/null || true)
if [ -n "$unformatted" ]; then echo "gofmt would change:"; echo "$unformatted"; exit 1; fi

echo "== go vet"
go vet ./...

echo "== go test (SQLite)"
go test -race -count=1 -timeout 40m ./...

if [ "${AGENTMAIL_SKIP_POSTGRES:-0}" != 1 ] || [ "${CI:-}" = true ]; then
  # The same tests of the packages that touch the database, on a throwaway
  # PostgreSQL cluster on loopback (scripts/pg.sh): each test gets its own
  # scratch database (internal/store/storetest), started gateways get a
  # DATABASE_URL, and the replica tests (internal/e2e/replicas_test.go) run.
  # No -race here: the race run above covers the same code, and CI time is
  # shared with the browser tests.
  echo "== go test (PostgreSQL)"
  # Stop the cluster afterwards only if this run started it: another run
  # (or a benchmark) may be using one that was already up.
  pg_dir=${AGENTMAIL_PG_DIR:-/tmp/agentmail-pg}
  pg_was_up=0
  [ -f "$pg_dir/postmaster.pid" ] && pg_was_up=1
  pg_url=$(scripts/pg.sh start)
  [ "$pg_was_up" = 1 ] || trap 'scripts/pg.sh stop' EXIT
  AGENTMAIL_TEST_DATABASE=postgres AGENTMAIL_TEST_POSTGRES_URL="$pg_url" \
    go test -count=1 -timeout 30m ./internal/store/... ./internal/events/... ./internal/gateway/... \
      ./internal/httpapi/... ./internal/e2e/...
fi

if [ -f web/package.json ]; then
  echo "== web typecheck and unit tests"
  (cd web && npm run --silent typecheck && npm test --silent)
  echo "== committed web build matches the sources"
  SKIP_NPM_CI=1 scripts/check-web-build.sh
  if grep -q '"test:e2e"' web/package.json; then
    echo "== web browser tests"
    go build -o web/.e2e-agentmail ./cmd/agentmail
    (cd web && AGENTMAIL_BIN="$PWD/.e2e-agentmail" npm run --silent test:e2e)
  fi
fi
echo "== all tests passed"
