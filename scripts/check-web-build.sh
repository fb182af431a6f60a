#!/usr/bin/env bash
# Rebuilds the web page into a scratch folder and fails when the committed
# internal/webui/dist differs from it: someone changed web/ without running
# scripts/build-web.sh. The committed files are never touched.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scratch="$(mktemp -d "${TMPDIR:-/tmp}/agentmail-web-build.XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
WEB_OUT="$scratch/dist" "$root/scripts/build-web.sh" >/dev/null
if ! changes="$(diff -r "$scratch/dist" "$root/internal/webui/dist" 2>&1)"; then
  echo "internal/webui/dist differs from a fresh build of web/:" >&2
  echo "$changes" | head -20 >&2
  echo "run scripts/build-web.sh and commit internal/webui/dist" >&2
  exit 1
fi
echo "internal/webui/dist matches a fresh build of web/"
