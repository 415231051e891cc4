for await (const e of client.events()) {
  if (e.kind === 'status-update') console.log(e.status.state, e.metadata.type);
}
export {};
