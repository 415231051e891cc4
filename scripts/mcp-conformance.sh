#!/usr/bin/env bash
# Runs the official MCP conformance suite (@modelcontextprotocol/conformance, a dev dependency;
# Node 22 or newer) against `xswarm serve`: every server scenario, active and pending, must pass
# except those scripts/mcp-conformance.yml lists as not applicable, with the reasons. Exits
# non-zero on any other failure, and on a listed scenario that starts passing.
#
# Offline: the server serves examples/serve.ts on its scripted demo model (OPENAI_API_KEY is
# unset for it), bound to 127.0.0.1 on a free port, and the suite only talks to that URL. The
# suite sends no bearer token, hence --insecure-no-token (the bind stays loopback-only). The
# server's state goes to a temporary folder, removed on exit with the server stopped.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
major=$(node -p 'process.versions.node.split(".")[0]')
if ((major < 22)); then
  echo "mcp-conformance: the conformance suite needs Node 22 or newer (this is $(node --version))" >&2
  exit 2
fi

tmp=$(mktemp -d)
server=
cleanup() {
  if [[ -n $server ]]; then
    kill "$server" 2>/dev/null || true
    wait "$server" 2>/dev/null || true
  fi
  rm -rf "$tmp"
}
trap cleanup EXIT

(cd "$tmp" && exec env -u OPENAI_API_KEY node "$root/bin/xswarm.js" serve "$root/examples/serve.ts" --port 0 --insecure-no-token --log-level warn) \
  >"$tmp/serve.out" 2>"$tmp/serve.err" &
server=$!

# The first line names the address: "xswarm serving <ids> at http://127.0.0.1:PORT (state: ...)".
url=
for _ in $(seq 1 300); do
  url=$(sed -n 's/^xswarm serving .* at \(http:\/\/127\.0\.0\.1:[0-9]*\) .*/\1/p' "$tmp/serve.out" | head -n 1)
  [[ -n $url ]] && break
  if ! kill -0 "$server" 2>/dev/null; then
    echo "mcp-conformance: xswarm serve exited before serving" >&2
    cat "$tmp/serve.err" >&2
    exit 1
  fi
  sleep 0.1
done
if [[ -z $url ]]; then
  echo "mcp-conformance: xswarm serve did not start within 30 s" >&2
  cat "$tmp/serve.err" >&2
  exit 1
fi

echo "MCP conformance suite $("$root/node_modules/.bin/conformance" --version) against $url/mcp on Node $(node --version)"
"$root/node_modules/.bin/conformance" server --url "$url/mcp" --suite all --expected-failures "$root/scripts/mcp-conformance.yml"
