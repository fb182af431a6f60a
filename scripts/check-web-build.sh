#!/usr/bin/env bash
# Rebuilds the web page and fails when internal/webui/dist (committed) differs
# from the fresh build: someone changed web/ without running scripts/build-web.sh.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
"$root/scripts/build-web.sh"
changes="$(git status --porcelain --untracked-files=all -- internal/webui/dist)"
if [[ -n "$changes" ]]; then
  echo "internal/webui/dist differs from a fresh build of web/:" >&2
  echo "$changes" >&2
  echo "run scripts/build-web.sh and commit internal/webui/dist" >&2
  exit 1
fi
echo "internal/webui/dist matches a fresh build of web/"
