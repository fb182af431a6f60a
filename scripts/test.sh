#!/usr/bin/env bash
# Runs every test of AgentMail: formatting, vet, the Go suite with the race
# detector (unit, HTTP, end-to-end tests over the real binary and the real
# agent platforms), and the web page's unit and browser tests.
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

if [ -f web/package.json ]; then
  echo "== web unit tests"
  (cd web && npm test --silent)
  if grep -q '"test:e2e"' web/package.json; then
    echo "== web browser tests"
    go build -o web/.e2e-agentmail ./cmd/agentmail
    (cd web && AGENTMAIL_BIN="$PWD/.e2e-agentmail" npm run --silent test:e2e)
  fi
fi
echo "== all tests passed"
