#!/usr/bin/env bash
# Builds the web page (web/) and puts the result into internal/webui/dist,
# which the agentmail binary embeds with go:embed. Needs Node >= 20.19 and npm.
# The built files are committed, so the binary never needs Node at run time;
# scripts/check-web-build.sh verifies that the committed files match a rebuild.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
web="$root/web"
# WEB_OUT puts the result elsewhere (scripts/check-web-build.sh builds into a
# scratch folder so that checking never touches the committed files).
out="${WEB_OUT:-$root/internal/webui/dist}"

cd "$web"
if [[ "${SKIP_NPM_CI:-}" != 1 ]]; then
  npm ci --no-audit --no-fund --loglevel=error
fi
npm run build

rm -rf "$out"
mkdir -p "$out"
cp -R "$web/dist/." "$out/"
# go:embed needs the directory to exist even without a build; .keep holds it.
: >"$out/.keep"
echo "web page built into ${out#"$root"/}"
