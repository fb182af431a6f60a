#!/usr/bin/env bash
# Refreshes the committed pictures of the web page in docs/screenshots by
# running the browser tests with SCREENSHOT_DIR pointing there. The test
# suite itself writes its pictures to an ignored folder and never touches
# these. Needs what the browser tests need (scripts/deps.sh installs it).
set -euo pipefail
cd "$(dirname "$0")/.."
export PATH="/usr/local/go/bin:$PATH"
scripts/deps.sh
bin="$(mktemp -d "${TMPDIR:-/tmp}/agentmail-shots.XXXXXX")"
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/agentmail" ./cmd/agentmail
(cd web && AGENTMAIL_BIN="$bin/agentmail" SCREENSHOT_DIR="$PWD/../docs/screenshots" npm run --silent test:e2e)
echo "docs/screenshots refreshed; review with git diff --stat docs/screenshots and commit"
