/** A fetch that records the JSON-RPC methods an A2A client sends, for tests of push-followed calls. */

/** A fetch that records the JSON-RPC method of every request it sends (`+push` when the message carries a webhook). */
export function recordingFetch(methods: string[]): typeof fetch {
  return async (input, init) => {
    if (typeof init?.body === 'string') {
      const body = JSON.parse(init.body) as { method?: string; params?: { configuration?: Record<string, unknown> } };
      if (body.method) methods.push(body.params?.configuration?.taskPushNotificationConfig ? `${body.method}+push` : body.method);
    }
    return fetch(input, init);
  };
}
