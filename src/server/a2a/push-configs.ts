/**
 * The A2A push-notification config methods of one definition's tasks (v1.0
 * `Create|Get|List|DeleteTaskPushNotificationConfig`, v0.3 `tasks/pushNotificationConfig/*`,
 * both routed here by the SDK), and the config a message may carry
 * (`configuration.taskPushNotificationConfig`, v0.3 `configuration.pushNotificationConfig`).
 * Configs live in the push outbox (`../../store/push-outbox.ts`); `push-delivery.ts` sends.
 *
 * @module
 */
import type { ListTaskPushNotificationConfigsResponse, TaskPushNotificationConfig } from '@a2a-js/sdk';
import { RequestMalformedError, TaskNotFoundError } from '@a2a-js/sdk/errors';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import type { PushSubscription } from '../../store/push-outbox.js';
import type { PushDelivery } from './push-delivery.js';
import { PushTargetError } from './push-policy.js';

/** The longest config id a client may choose. */
const MAX_CONFIG_ID_LENGTH = 256;

/** The push configs of one definition's tasks. */
export class PushConfigs {
  private readonly push: PushDelivery;
  private readonly definitionId: string;

  constructor(push: PushDelivery, definitionId: string) {
    this.push = push;
    this.definitionId = definitionId;
    push.resume();
  }

  /** Refuses (invalid params) a config whose URL the push policy refuses, or that is malformed. */
  async check(config: TaskPushNotificationConfig): Promise<void> {
    // v0.3 requests reach the handler with their JSON values as sent.
    if (typeof config.url !== 'string' || config.url === '') throw new RequestMalformedError('The push notification config needs a url');
    if (config.id !== undefined && (typeof config.id !== 'string' || config.id.length > MAX_CONFIG_ID_LENGTH)) {
      throw new RequestMalformedError(`The push notification config id must be a string of at most ${MAX_CONFIG_ID_LENGTH} characters`);
    }
    try {
      await this.push.check(config.url);
    } catch (e) {
      if (e instanceof PushTargetError) throw new RequestMalformedError(e.message);
      throw e;
    }
  }

  /**
   * Keeps a checked config of a task whose updates after `cursor` it receives (a config
   * replaced under the same id keeps its place), and returns it with its id. `ended`: the task
   * has ended, nothing will be delivered (the config is kept, for Get and List).
   */
  register(taskId: string, config: TaskPushNotificationConfig, context: ServerCallContext, cursor: number, ended = false): TaskPushNotificationConfig {
    const auth = config.authentication;
    const subscription: PushSubscription = {
      taskId,
      configId: config.id || crypto.randomUUID(),
      definitionId: this.definitionId,
      url: config.url,
      ...(config.token ? { token: config.token } : {}),
      ...(auth?.scheme && auth.credentials ? { authentication: { scheme: auth.scheme, credentials: auth.credentials } } : {}),
      wireVersion: context.requestedVersion === '1.0' ? '1.0' : '0.3',
      cursor,
      done: ended,
    };
    return toConfig(this.push.register(subscription));
  }

  /** Resolves once the configs can be read (see `PushDelivery.ready`). */
  ready(): Promise<void> {
    return this.push.ready();
  }

  get(taskId: string, id: string): TaskPushNotificationConfig {
    const s = this.push.outbox.get(taskId, id);
    if (!s) throw new TaskNotFoundError(`Push notification config ${id} not found for task ${taskId}`);
    return toConfig(s);
  }

  list(taskId: string): ListTaskPushNotificationConfigsResponse {
    return { configs: this.push.outbox.list(taskId).map(toConfig), nextPageToken: '' };
  }

  delete(taskId: string, id: string): void {
    // Deleting a config that is not there is not an error (as in the SDK's store).
    this.push.outbox.delete(taskId, id);
  }
}

/** A kept subscription as the A2A config it came from. */
function toConfig(s: PushSubscription): TaskPushNotificationConfig {
  return { tenant: '', id: s.configId, taskId: s.taskId, url: s.url, token: s.token ?? '', authentication: s.authentication ? { ...s.authentication } : undefined };
}
