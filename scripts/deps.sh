#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine, idempotently:
# Debian packages (chromium for the browser tests, PostgreSQL for the
# PostgreSQL run, swaks for the email tests), mailpit (the email tests'
# relay, a Go module), the web page's npm packages, and the pinned agent
# platforms (Claude Code, opencode, pi), the MCP clients and the OpenAPI tools
# (Redocly CLI, Spectral, Prism) from the npm registry.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
command -v chromium >/dev/null 2>&1 || need_apt+=(chromium)
# Chinese glyphs for the browser tests' screenshots of the 中文 page.
ls /usr/share/fonts/opentype/noto/NotoSansCJK* >/dev/null 2>&1 || need_apt+=(fonts-noto-cjk)
# bubblewrap confines the approved run_commands of `agentmail mcp`.
command -v bwrap >/dev/null 2>&1 || need_apt+=(bubblewrap)
# swaks sends the email channel's inbound test replies (Python's smtplib the others).
command -v swaks >/dev/null 2>&1 || need_apt+=(swaks)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
[ -x /usr/lib/postgresql/15/bin/initdb ] || ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || need_apt+=(postgresql)
if [ ${#need_apt[@]} -gt 0 ]; then
  if [ "$(id -u)" = 0 ]; then
    echo "deps: installing Debian packages: ${need_apt[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "deps: missing Debian packages (${need_apt[*]}); run as root or: sudo apt-get install ${need_apt[*]}" >&2
    exit 1
  fi
fi

# mailpit is the SMTP relay of the email channel's tests, read back through
# its API (internal/testkit/mailtest finds it in PATH or $(go env GOPATH)/bin).
mailpit_version=v1.33.1
if ! command -v mailpit >/dev/null 2>&1 && [ ! -x "$(go env GOPATH)/bin/mailpit" ]; then
  echo "deps: go install github.com/axllent/mailpit@$mailpit_version"
  (cd /tmp && GOFLAGS= go install "github.com/axllent/mailpit@$mailpit_version")
fi

if [ -f web/package-lock.json ]; then
  if [ ! -d web/node_modules ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
    echo "deps: npm ci in web/"
    (cd web && npm ci --no-audit --no-fund --loglevel=error)
  fi
fi

# The third-party MCP clients of the MCP tests (conformance suite, inspector),
# pinned, into .cache/tools.
scripts/mcp-tools.sh

# The third-party OpenAPI tools (Redocly CLI and Spectral for
# scripts/lint-openapi.sh, Prism for internal/e2e/prism_test.go), pinned,
# into .cache/tools.
scripts/openapi-tools.sh

if [ -x scripts/install-platforms.sh ]; then
  scripts/install-platforms.sh
fi
