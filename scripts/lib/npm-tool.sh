# npm_tool DIR PACKAGE@VERSION installs one pinned npm package into DIR (its
# own package.json and node_modules), once: DIR/.installed records what is
# there, so a second run with the same pin does nothing and a new pin
# replaces the old install. Sourced by scripts/mcp-tools.sh and
# scripts/openapi-tools.sh.
npm_tool() {
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
