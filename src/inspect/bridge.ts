/**
 * The relay's page at `/`: it frames the hosted Stately inspector and hands it the relay's
 * frames by `postMessage` once the inspector says `@statelyai.connected`, the handshake
 * `@statelyai/inspect`'s browser adapter and its own bridge use. The page connects back to the
 * address it was loaded from, with the token of its own URL.
 *
 * @module
 */

/** The bridge page framing `inspectorUrl` (an absolute URL, already normalized). */
export function bridgePage(inspectorUrl: string): string {
  const target = new URL(inspectorUrl).origin;
  return `<!doctype html>
<html>
<head>
<meta charset="utf-8">
<title>xswarm · Stately inspector</title>
<style>html,body,iframe{margin:0;border:0;width:100%;height:100%;display:block}</style>
</head>
<body>
<iframe id="inspector" src="${escapeHtml(inspectorUrl)}"></iframe>
<script>
(() => {
  const target = ${JSON.stringify(target)};
  const frame = document.getElementById('inspector');
  const waiting = [];
  let ready = false;
  const hand = (event) => frame.contentWindow.postMessage(event, target);
  addEventListener('message', (e) => {
    if (e.origin !== target || !e.data || e.data.type !== '@statelyai.connected') return;
    ready = true;
    waiting.splice(0).forEach(hand);
  });
  const ws = new WebSocket(location.origin.replace(/^http/, 'ws') + '/' + location.search);
  ws.onmessage = (m) => {
    const event = JSON.parse(m.data);
    if (ready) hand(event);
    else waiting.push(event);
  };
  ws.onclose = (e) => console.warn('xswarm inspect relay closed the connection', e.code, e.reason);
})();
</script>
</body>
</html>
`;
}

function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
