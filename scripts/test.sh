#!/usr/bin/env bash
# Runs every test of AgentMail: formatting, vet, the Go suite with the race
# detector (unit, HTTP, end-to-end tests over the real binary and the real
# agent platforms), the packages that touch the database once more on
# PostgreSQL, the lint of the OpenAPI document (Redocly, Spectral), and the
# web page's generated wire types, unit and browser tests.
# AGENTMAIL_SKIP_POSTGRES=1 leaves out the PostgreSQL run (CI never does).
# Installs what is missing first (scripts/deps.sh).
#
# Each step runs even when an earlier one failed, so one red step does not
# hide another; a failed step is named (== FAILED: <step>) and the run ends
# with one line "N passed, N failed" and exits 1 if any step failed. The last
# step fails when the tests left the checkout different from how they found
# it (tests never modify tracked files or leave files git would see).
set -uo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"

passed=()
failed=()

# step NAME COMMAND...: runs one step and records its outcome.
step() {
  local name=$1
  shift
  echo "== $name"
  if "$@"; then
    passed+=("$name")
  else
    echo "== FAILED: $name"
    failed+=("$name")
  fi
}

# checkout_state prints what git sees of the working tree: the status lines
# and a digest of every change, so that a test that rewrites a file that was
# already modified is noticed too.
checkout_state() {
  git status --porcelain --untracked-files=all
  git diff HEAD --binary | sha256sum
  git ls-files --others --exclude-standard -z | xargs -0 -r sha256sum
}

gofmt_clean() {
  local unformatted
  unformatted=$(gofmt -l $(git ls-files '*.go'))
  [ -z "$unformatted" ] && return 0
  echo "gofmt would change:"
  echo "$unformatted"
  return 1
}

go_test_postgres() {
  # The same tests of the packages that touch the database, on a throwaway
  # PostgreSQL cluster on loopback (scripts/pg.sh): each test gets its own
  # scratch database (internal/store/storetest), started gateways get a
  # DATABASE_URL, and the replica tests (internal/e2e/replicas_test.go) run.
  # No -race here: the race run covers the same code, and CI time is shared
  # with the browser tests.
  # Stop the cluster afterwards only if this run started it: another run
  # (or a benchmark) may be using one that was already up.
  local pg_dir=${AGENTMAIL_PG_DIR:-/tmp/agentmail-pg} pg_was_up=0 pg_url rc
  [ -f "$pg_dir/postmaster.pid" ] && pg_was_up=1
  pg_url=$(scripts/pg.sh start) || return 1
  AGENTMAIL_TEST_DATABASE=postgres AGENTMAIL_TEST_POSTGRES_URL="$pg_url" \
    go test -count=1 -timeout 30m ./internal/store/... ./internal/events/... ./internal/gateway/... \
      ./internal/httpapi/... ./internal/emailchannel/... ./internal/e2e/...
  rc=$?
  [ "$pg_was_up" = 1 ] || scripts/pg.sh stop
  return $rc
}

web_types_current() {
  # src/api/openapi.gen.ts is generated from api/openapi.json; the check
  # regenerates it in memory and compares, writing nothing.
  (cd web && npm run --silent check:types)
}

web_unit() {
  (cd web && npm run --silent typecheck && npm test --silent)
}

web_generated_client() {
  # A TypeScript client generated from api/openapi.json (openapi-typescript
  # + openapi-fetch) type-checks and makes real calls against a started
  # gateway (web/e2e/apiclient).
  go build -o web/.e2e-agentmail ./cmd/agentmail &&
    (cd web && AGENTMAIL_BIN="$PWD/.e2e-agentmail" npm run --silent test:client)
}

web_browser() {
  go build -o web/.e2e-agentmail ./cmd/agentmail &&
    (cd web && AGENTMAIL_BIN="$PWD/.e2e-agentmail" npm run --silent test:e2e)
}

checkout_untouched() {
  local after
  after=$(checkout_state)
  [ "$after" = "$before" ] && return 0
  echo "the tests changed the checkout; git status --porcelain before and after:"
  diff <(echo "$before" | grep -v ' -$') <(echo "$after" | grep -v ' -$') || true
  return 1
}

if ! scripts/deps.sh; then
  echo "== FAILED: installing what the tests need (scripts/deps.sh)"
  echo "== 0 passed, 1 failed"
  exit 1
fi
before=$(checkout_state)

# The MCP client tests of internal/mcptools (the conformance suite against
# /mcp, the inspector CLI over stdio and HTTP) run in the go test steps with
# the clients scripts/mcp-tools.sh installed; here their absence fails.
export AGENTMAIL_REQUIRE_MCP_TOOLS=1
# Prism (scripts/openapi-tools.sh) is the validating proxy of
# internal/e2e/prism_test.go; set, its absence fails the test.
export AGENTMAIL_PRISM="$PWD/.cache/tools/bin/prism"

step "gofmt" gofmt_clean
step "go vet" go vet ./...
step "OpenAPI lint (Redocly, Spectral: 0 errors, 0 warnings)" scripts/lint-openapi.sh
step "go test (SQLite)" go test -race -count=1 -timeout 40m ./...
if [ "${AGENTMAIL_SKIP_POSTGRES:-0}" != 1 ] || [ "${CI:-}" = true ]; then
  step "go test (PostgreSQL)" go_test_postgres
fi
if [ -f web/package.json ]; then
  step "web wire types match api/openapi.json" web_types_current
  step "web typecheck and unit tests" web_unit
  step "committed web build matches the sources" env SKIP_NPM_CI=1 scripts/check-web-build.sh
  step "generated TypeScript client against a started gateway" web_generated_client
  step "web browser tests" web_browser
fi
step "the tests left the checkout as they found it" checkout_untouched

if [ ${#failed[@]} -gt 0 ]; then
  echo "== FAILED steps: $(printf '%s; ' "${failed[@]}")"
fi
echo "== ${#passed[@]} passed, ${#failed[@]} failed"
[ ${#failed[@]} -eq 0 ]
