#!/usr/bin/env bash
# Installs the pinned agent platforms that the bridge adapters and their tests drive:
# Claude Code, opencode and pi, and the ACP agents of `agentmail bridge --platform acp`
# (Claude Agent, Qwen Code, Gemini CLI, Codex; opencode's ACP mode is the opencode
# install), each from the npm registry into its own folder under a prefix outside the
# checkout, so that a machine keeps them between CI runs of fresh clones (default:
# ${XDG_CACHE_HOME:-~/.cache}/agentmail/platforms/<platform>; about 1.5 GB in all).
#
# Usage: scripts/install-platforms.sh [claude] [opencode] [pi] [claude-agent-acp] [qwen]
#        [gemini] [codex-acp]   (no argument: every platform the tests drive)
# Environment: AGENTMAIL_PLATFORMS_PREFIX overrides the prefix.
#
# Idempotent: a platform already installed at its pinned version is skipped.
# Prints the path of every binary at the end, in the shape NAME=PATH.
set -euo pipefail

REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PREFIX="${AGENTMAIL_PLATFORMS_PREFIX:-${XDG_CACHE_HOME:-$HOME/.cache}/agentmail/platforms}"

# platform  npm package                      pinned version  binary
PINS=(
  "claude   @anthropic-ai/claude-code        2.1.328         claude"
  "opencode opencode-ai                      1.18.33         opencode"
  "pi       @mariozechner/pi-coding-agent    0.73.1          pi"
  "claude-agent-acp @zed-industries/claude-agent-acp 0.23.1  claude-agent-acp"
  "qwen     @qwen-code/qwen-code             0.24.4          qwen"
  "gemini   @google/gemini-cli               0.61.0          gemini"
  "codex-acp @zed-industries/codex-acp       0.16.0          codex-acp"
)

want=("$@")
if [ ${#want[@]} -eq 0 ]; then
  want=(claude opencode pi claude-agent-acp qwen gemini codex-acp)
fi

command -v npm >/dev/null 2>&1 || { echo "install-platforms: npm is required (apt-get install nodejs npm)" >&2; exit 1; }

installed_version() {
  # $1: folder, $2: package name. Prints the installed version or nothing.
  local pj="$1/node_modules/$2/package.json"
  [ -f "$pj" ] || return 0
  node -e 'try{process.stdout.write(require(process.argv[1]).version||"")}catch(e){}' "$pj"
}

for name in "${want[@]}"; do
  found=""
  for row in "${PINS[@]}"; do
    read -r p pkg ver bin <<<"$row"
    [ "$p" = "$name" ] || continue
    found=1
    dir="$PREFIX/$p"
    have="$(installed_version "$dir" "$pkg")"
    if [ "$have" = "$ver" ] && [ -x "$dir/node_modules/.bin/$bin" ]; then
      echo "install-platforms: $pkg@$ver already installed in $dir"
    else
      echo "install-platforms: installing $pkg@$ver into $dir (had: ${have:-none})"
      mkdir -p "$dir"
      npm install --prefix "$dir" --no-audit --no-fund --loglevel=error --save-exact "$pkg@$ver"
      have="$(installed_version "$dir" "$pkg")"
      if [ "$have" != "$ver" ]; then
        echo "install-platforms: $pkg: wanted $ver, found ${have:-nothing} after install" >&2
        exit 1
      fi
    fi
  done
  if [ -z "$found" ]; then
    echo "install-platforms: unknown platform '$name' (known: claude, opencode, pi, claude-agent-acp, qwen, gemini, codex-acp)" >&2
    exit 2
  fi
done

for name in "${want[@]}"; do
  for row in "${PINS[@]}"; do
    read -r p pkg ver bin <<<"$row"
    [ "$p" = "$name" ] || continue
    echo "$p=$PREFIX/$p/node_modules/.bin/$bin"
  done
done
