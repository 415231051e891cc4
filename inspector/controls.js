// @ts-check
/**
 * Pause, resume (with the answer to the pause's question) and stop, through the REST calls
 * every client uses (`POST /swarms/:def/:id/pause|resume|stop`), so the server's policy
 * applies: the token, and the Origin/Host checks that refuse a page of another origin. A
 * refusal is shown (`control-error`), never swallowed.
 *
 * @module
 */

import { api } from './api.js';
import { FINAL_STATES } from './fold.js';

/**
 * @typedef {{ pause: HTMLButtonElement, resume: HTMLButtonElement, stop: HTMLButtonElement, message: HTMLInputElement,
 *   reason: HTMLElement, banner: HTMLElement, error: HTMLElement }} ControlElements
 */

/** The controls of the selected swarm. */
export class Controls {
  /**
   * @param {ControlElements} els
   * @param {() => { swarmId: string, definitionId: string } | null} target the swarm the buttons act on
   */
  constructor(els, target) {
    this.els = els;
    this.target = target;
    this.busy = false;
    this.state = '';
    els.pause.addEventListener('click', () => this.send('pause', { reason: 'Paused from the inspector', type: 'HITL' }));
    els.resume.addEventListener('click', () => {
      const message = els.message.value.trim();
      void this.send('resume', message ? { message } : {}).then((ok) => {
        if (ok) els.message.value = '';
      });
    });
    els.message.addEventListener('keydown', (e) => {
      if (e.key === 'Enter') els.resume.click();
    });
    els.stop.addEventListener('click', () => this.send('stop', { reason: 'Stopped from the inspector' }));
  }

  /**
   * Sends a command; shows the server's refusal. Resolves whether it was accepted.
   * @param {'pause' | 'resume' | 'stop'} command
   * @param {Record<string, string>} body
   */
  async send(command, body) {
    const t = this.target();
    if (!t) return false;
    this.showError('');
    this.busy = true;
    this.enable();
    try {
      await api(`/swarms/${encodeURIComponent(t.definitionId)}/${encodeURIComponent(t.swarmId)}/${command}`, { method: 'POST', body });
      return true;
    } catch (err) {
      const status = /** @type {{ status?: number }} */ (err).status;
      this.showError(`${command} refused${status ? ` (${status})` : ''}: ${err instanceof Error ? err.message : String(err)}`);
      return false;
    } finally {
      this.busy = false;
      this.enable();
    }
  }

  /** @param {string} text */
  showError(text) {
    this.els.error.textContent = text;
    this.els.error.hidden = text === '';
  }

  /**
   * Enables what fits the live state (all of it when the state is not known yet: the server
   * decides) and shows the pause's question while paused.
   * @param {string} state the live state value
   * @param {string | null} question
   */
  update(state, question) {
    this.state = state;
    this.enable();
    if (this.els.reason.textContent !== (question ?? '')) this.els.reason.textContent = question ?? '';
    this.els.banner.hidden = question === null;
  }

  /** @private */
  enable() {
    const state = this.state;
    const final = FINAL_STATES.has(state);
    const known = state !== '';
    this.els.pause.disabled = this.busy || final || (known && state === 'paused');
    this.els.resume.disabled = this.busy || final || (known && state !== 'paused');
    this.els.stop.disabled = this.busy || final;
    this.els.message.disabled = final;
  }
}
