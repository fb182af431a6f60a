#!/usr/bin/env bash
# Installs AgentMail on a Debian/Ubuntu machine as systemd services:
#   sudo deploy/install.sh            # gateway only
#   sudo deploy/install.sh claude     # gateway + the Claude Code bridge
# Steps: build the binary (the web page is embedded), run the tests unless
# SKIP_TESTS=1, install /usr/local/bin/agentmail, create the agentmail user,
# write /etc/agentmail/gateway.env with a random admin password (printed
# once), and enable and (re)start the units. Running it again upgrades: the
# new binary is installed and the running services are restarted onto it;
# existing env files are kept.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$(id -u)" = 0 ] || { echo "install.sh: run as root (sudo)" >&2; exit 1; }
command -v go >/dev/null || export PATH="/usr/local/go/bin:$PATH"

if [ "${SKIP_TESTS:-0}" != 1 ]; then
  go vet ./... && go test ./...
fi
# Build beside the target and rename: a running service keeps its old file.
go build -trimpath -o /usr/local/bin/agentmail.new ./cmd/agentmail
mv -f /usr/local/bin/agentmail.new /usr/local/bin/agentmail

id agentmail >/dev/null 2>&1 || useradd --system --user-group --home-dir /var/lib/agentmail --create-home --shell /usr/sbin/nologin agentmail
install -d -o agentmail -g agentmail -m 0750 /var/lib/agentmail /var/lib/agentmail/data
install -d -m 0750 /etc/agentmail

if [ ! -f /etc/agentmail/gateway.env ]; then
  password=$(head -c 18 /dev/urandom | base64 | tr -d '/+=')
  umask 077
  cat > /etc/agentmail/gateway.env <<ENV
AGENTMAIL_ADDR=127.0.0.1:8180
ADMIN_USER=admin
ADMIN_PASSWORD=$password
# DATABASE_URL=postgres://agentmail:secret@127.0.0.1:5432/agentmail
ENV
  echo "install.sh: admin password (shown once): $password"
fi

install -m 0644 deploy/agentmail.service /etc/systemd/system/agentmail.service
install -m 0644 deploy/agentmail-bridge@.service /etc/systemd/system/agentmail-bridge@.service
systemctl daemon-reload
# enable --now would leave an already running gateway on the old binary.
systemctl enable agentmail.service
systemctl restart agentmail.service

for platform in "$@"; do
  env=/etc/agentmail/bridge-$platform.env
  if [ ! -f "$env" ]; then
    umask 077
    cat > "$env" <<ENV
AGENTMAIL_GATEWAY_URL=http://127.0.0.1:8180
AGENTMAIL_AGENT_NAME=$platform
# AGENTMAIL_AGENT_KEY=  (empty: the bridge generates one and prints it; register it in Admin → Agent keys)
AGENTMAIL_FALLBACK_DIR=/var/lib/agentmail
AGENTMAIL_PERMISSION_MODE=workspace
ENV
  fi
  systemctl enable "agentmail-bridge@$platform.service"
  systemctl restart "agentmail-bridge@$platform.service"
done
echo "install.sh: done; open http://127.0.0.1:8180"
