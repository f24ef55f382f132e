// <tipsync-tip>: shows a tip from the catalog while its status is `available`, inline or as a
// popover anchored to another element. Closing it invalidates the tip (`tipClosed`) on every device;
// an action invalidates it as `actionPerformed` (unless `keep-on-action`) and fires `tipsync-action`;
// the time it is visible is recorded as a display. Themable with CSS custom properties and ::part().
//
//   <tipsync-tip tip="favorite"></tipsync-tip>
//   <tipsync-tip tip="search" anchor="#search-button" placement="bottom"></tipsync-tip>

import { contentFor } from './experiment.js';
import { defaultTipSync } from './tipsync.js';
import { imageSource } from './image.js';
import { localized } from './localization.js';

/** @typedef {import('./catalog.js').TipDefinition} TipDefinition */

const STYLE = `
:host { display: contents; }
[part~="tip"] {
  --accent: var(--tipsync-accent, #0066cc);
  box-sizing: border-box; display: flex; gap: 12px; align-items: flex-start;
  max-width: var(--tipsync-max-width, 360px); padding: var(--tipsync-padding, 14px 16px);
  background: var(--tipsync-background, #ffffff); color: var(--tipsync-color, #1c1c1e);
  border: var(--tipsync-border, 1px solid rgba(0, 0, 0, 0.08)); border-radius: var(--tipsync-radius, 14px);
  box-shadow: var(--tipsync-shadow, 0 6px 24px rgba(0, 0, 0, 0.14));
  font: var(--tipsync-font, 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif);
}
[part~="tip"][data-popover] {
  position: fixed; z-index: var(--tipsync-z-index, 2147483000); margin: 0;
  max-width: none; width: min(var(--tipsync-popover-max-width, 320px), calc(100vw - 16px));
}
[part~="tip"][hidden] { display: none; }
[part~="image"] { flex: none; width: 32px; height: 32px; font-size: 26px; line-height: 32px; text-align: center; color: var(--accent); }
[part~="image"] img { width: 32px; height: 32px; object-fit: contain; }
[part~="body"] { flex: 1; min-width: 0; }
[part~="title"] { margin: 0 0 2px; font-weight: 600; font-size: 1em; }
[part~="message"] { margin: 0; color: var(--tipsync-secondary-color, #5a5a5f); }
[part~="actions"] { display: flex; flex-wrap: wrap; gap: 8px; margin-top: 10px; }
[part~="action"] {
  font: inherit; font-weight: 600; color: var(--accent); background: none; border: 0;
  padding: 4px 0; cursor: pointer;
}
[part~="close"] {
  flex: none; font: inherit; font-size: 20px; line-height: 1; width: 28px; height: 28px; border-radius: 50%;
  border: 0; background: var(--tipsync-close-background, rgba(0, 0, 0, 0.06)); color: inherit; cursor: pointer;
}
[part~="action"]:focus-visible, [part~="close"]:focus-visible { outline: 2px solid var(--accent); outline-offset: 2px; }
[part~="tip"][data-scheme="dark"] { --accent: var(--tipsync-accent, #5eaaff); background: var(--tipsync-background, #2c2c2e); color: var(--tipsync-color, #f2f2f7); border-color: rgba(255, 255, 255, 0.12); }
[data-scheme="dark"] [part~="message"] { color: var(--tipsync-secondary-color, #c7c7cc); }
[data-scheme="dark"] [part~="close"] { background: var(--tipsync-close-background, rgba(255, 255, 255, 0.12)); }
`;

const FOCUSABLE = 'a[href], button, input, select, textarea, [tabindex]';

/**
 * Whether a tip should be dark: it follows the page's `color-scheme` (inherited by the element), not
 * the system's — a page that declares none, or only `light`, is light; `dark` alone is dark; `light
 * dark` follows the system's preference, as the page itself does.
 * @param {string} declared the computed `color-scheme` (`normal`, `light`, `dark`, `light dark`, `only dark`…)
 * @param {boolean} prefersDark
 */
export function isDarkScheme(declared, prefersDark) {
  const words = (declared || 'normal').split(/\s+/);
  const dark = words.includes('dark');
  const light = words.includes('light');
  return dark && (!light || prefersDark);
}

/**
 * The elements of the page a person reaches with Tab, in document order.
 * @param {Element} [except]
 */
function tabbables(except) {
  return /** @type {HTMLElement[]} */ (Array.from(document.querySelectorAll(FOCUSABLE))).filter(
    (element) => !element.hasAttribute('disabled') && element.getAttribute('tabindex') !== '-1' &&
      element.getClientRects().length > 0 && !(except && except.contains(element)));
}

let nextID = 1;

/** The `<tipsync-tip>` element. */
export class TipSyncTipElement extends HTMLElement {
  static observedAttributes = ['tip', 'anchor', 'placement', 'heading-level'];

  /** The element's shadow root (open, made in the constructor: never null, unlike `shadowRoot`'s type). */
  #root;

  constructor() {
    super();
    this.uid = `tipsync-tip-${nextID++}`;
    this.#root = this.attachShadow({ mode: 'open' });
    /** @type {import('./tipsync.js').TipSync | null} */
    this._tipsync = null;
    /** @type {(() => void) | null} */
    this.stopWatching = null;
    /**
     * When the tip became visible (ms), while it is.
     * @type {number | null}
     */
    this.visibleSince = null;
    this.onScroll = () => this.#position();
    this.onVisibility = () => this.#visibilityChanged();
    // Escape closes a popover for now (WAI-ARIA's non-modal dialog) — only while focus is in it or on
    // its anchor, never for a keypress meant for something else (an input's Escape cancels an edit).
    this.onKey = (/** @type {KeyboardEvent} */ event) => {
      if (event.key === 'Tab') return this.#tab(event);
      if (event.key !== 'Escape' || event.defaultPrevented || event.isComposing || !this.hasAttribute('anchor')) return;
      if (!this.#root.querySelector('[part~="tip"]')) return;
      const anchor = this.#anchor();
      const focused = document.activeElement;
      const inside = focused === this || this.contains(focused) || this.#root.activeElement !== null;
      const onAnchor = anchor !== null && focused !== null && (focused === anchor || anchor.contains(focused));
      if (!inside && !onAnchor) return;
      event.preventDefault();
      this.hideForNow();
    };
    /** Hidden with Escape: not shown again in this page until the tip's status changes. */
    this.hiddenForNow = false;
    this.onConfigured = () => this.#connect();
    this.darkQuery = globalThis.matchMedia?.('(prefers-color-scheme: dark)') ?? null;
    this.onSchemeChange = () => this.#applyScheme();
  }

  /**
   * Tab order of a popover: right after its anchor, whatever the element's place in the page. Its
   * buttons are out of the page's own order (`tabindex="-1"`); Tab on the anchor enters the popover,
   * Tab past its last button goes on to what follows the anchor, Shift+Tab walks back the same way.
   * @param {KeyboardEvent} event
   */
  #tab(event) {
    if (event.defaultPrevented || !this.hasAttribute('anchor')) return;
    const container = this.#root.querySelector('[part~="tip"]');
    const anchor = this.#anchor();
    if (!container || !anchor) return;
    const buttons = /** @type {HTMLElement[]} */ (Array.from(container.querySelectorAll('button')));
    const inside = buttons.indexOf(/** @type {HTMLElement} */ (this.#root.activeElement));
    const afterAnchor = () => tabbables(this).find((element) =>
      anchor.compareDocumentPosition(element) & Node.DOCUMENT_POSITION_FOLLOWING && !anchor.contains(element));
    let target = null;
    if (inside >= 0) {
      const next = inside + (event.shiftKey ? -1 : 1);
      target = next < 0 ? anchor : next >= buttons.length ? afterAnchor() ?? null : buttons[next];
    } else if (!event.shiftKey && document.activeElement === anchor) {
      target = buttons[0] ?? null;
    } else if (event.shiftKey && document.activeElement !== null && document.activeElement === afterAnchor()) {
      target = buttons[buttons.length - 1] ?? null;
    }
    if (!target) return;
    event.preventDefault();
    target.focus();
  }

  /** Light or dark, as the page's `color-scheme` says (``isDarkScheme``). */
  #applyScheme() {
    const container = /** @type {HTMLElement | null} */ (this.#root.querySelector('[part~="tip"]'));
    if (!container) return;
    const dark = isDarkScheme(getComputedStyle(this).colorScheme, this.darkQuery?.matches ?? false);
    container.dataset.scheme = dark ? 'dark' : 'light';
    container.style.colorScheme = dark ? 'dark' : 'light';
  }

  /** The TipSync instance this element uses (default: the one `configure()` made). */
  get tipsync() {
    return this._tipsync ?? defaultTipSync;
  }

  set tipsync(value) {
    this._tipsync = value;
    if (this.isConnected) this.#connect();
  }

  connectedCallback() {
    globalThis.addEventListener('tipsync-configured', this.onConfigured);
    document.addEventListener('visibilitychange', this.onVisibility);
    globalThis.addEventListener('scroll', this.onScroll, true);
    globalThis.addEventListener('resize', this.onScroll);
    document.addEventListener('keydown', this.onKey);
    this.darkQuery?.addEventListener('change', this.onSchemeChange);
    this.#connect();
  }

  disconnectedCallback() {
    globalThis.removeEventListener('tipsync-configured', this.onConfigured);
    document.removeEventListener('visibilitychange', this.onVisibility);
    globalThis.removeEventListener('scroll', this.onScroll, true);
    globalThis.removeEventListener('resize', this.onScroll);
    document.removeEventListener('keydown', this.onKey);
    this.darkQuery?.removeEventListener('change', this.onSchemeChange);
    this.#hide();
    this.stopWatching?.();
    this.stopWatching = null;
  }

  attributeChangedCallback() {
    if (this.isConnected) this.#connect();
  }

  #connect() {
    this.stopWatching?.();
    this.stopWatching = null;
    const tipsync = this.tipsync;
    const id = this.getAttribute('tip');
    if (!tipsync || !id) return;
    this.stopWatching = tipsync.watch(id, (status) => {
      if (status !== 'available') this.hiddenForNow = false;
      if (status === 'available' && !this.hiddenForNow) this.#show();
      else this.#hide();
    });
  }

  /**
   * The popover's anchor element, if it has one on the page.
   * @returns {HTMLElement | null}
   */
  #anchor() {
    const selector = this.getAttribute('anchor');
    return selector ? /** @type {HTMLElement | null} */ (document.querySelector(selector)) : null;
  }

  /**
   * Hides the tip for now — what Escape does to a popover: the time shown is recorded as a display,
   * the tip stays `available` (the person did not dismiss it: the close button does that, on every
   * device), it is not shown again in this page until its status changes, and focus returns to the
   * anchor.
   */
  hideForNow() {
    const hadFocus = this.#root.activeElement !== null;
    this.hiddenForNow = true;
    this.#hide();
    if (hadFocus) this.#refocus();
  }

  /** The tip's status now (`available`, `pending`, `invalidated:<reason>`). */
  get status() {
    const id = this.getAttribute('tip');
    return this.tipsync && id ? this.tipsync.status(id) : 'pending';
  }

  /** @param {TipDefinition} definition */
  #render(definition) {
    const popover = this.hasAttribute('anchor');
    const container = document.createElement('div');
    container.setAttribute('part', 'tip');
    container.setAttribute('role', popover ? 'dialog' : 'note');
    container.setAttribute('aria-labelledby', `${this.uid}-title`);
    if (definition.message) container.setAttribute('aria-describedby', `${this.uid}-message`);
    if (popover) container.dataset.popover = '';
    const source = imageSource(definition.image, this.tipsync?.options?.symbols);
    if (source) {
      const image = document.createElement('div');
      image.setAttribute('part', 'image');
      image.setAttribute('aria-hidden', 'true');
      const img = document.createElement('img');
      img.src = source;
      img.alt = '';
      image.append(img);
      container.append(image);
    }
    const body = document.createElement('div');
    body.setAttribute('part', 'body');
    // A heading only when the page asks for one (`heading-level="2"`): the tip is named by its title
    // either way, and need not add to the page's outline.
    const level = Number(this.getAttribute('heading-level'));
    const title = document.createElement(Number.isInteger(level) && level >= 1 && level <= 6 ? `h${level}` : 'div');
    title.setAttribute('part', 'title');
    title.id = `${this.uid}-title`;
    title.textContent = definition.title;
    body.append(title);
    if (definition.message) {
      const message = document.createElement('p');
      message.setAttribute('part', 'message');
      message.id = `${this.uid}-message`;
      message.textContent = definition.message;
      body.append(message);
    }
    if (definition.actions.length) {
      const actions = document.createElement('div');
      actions.setAttribute('part', 'actions');
      for (const action of definition.actions) {
        const button = document.createElement('button');
        button.type = 'button';
        button.setAttribute('part', 'action');
        button.dataset.action = action.id;
        button.textContent = action.title;
        button.addEventListener('click', () => this.perform(action.id));
        actions.append(button);
      }
      body.append(actions);
    }
    container.append(body);
    const close = document.createElement('button');
    close.type = 'button';
    close.setAttribute('part', 'close');
    close.setAttribute('aria-label', this.getAttribute('close-label') ?? 'Close tip');
    close.textContent = '×';
    close.addEventListener('click', () => this.close());
    container.append(close);
    // A popover's buttons are reached from its anchor (``#tab``), not at the element's place.
    if (popover) for (const button of Array.from(container.querySelectorAll('button'))) button.tabIndex = -1;
    const style = document.createElement('style');
    style.textContent = STYLE;
    this.#root.replaceChildren(style, container);
    return container;
  }

  /**
   * The language the tip is shown in (protocol.md §13.10): the nearest `lang` — on the element, an
   * ancestor or `<html>` — else the device's locale.
   * @returns {string | null}
   */
  get locale() {
    return this.closest('[lang]')?.getAttribute('lang') || this.tipsync?.replica?.deviceContext?.locale || null;
  }

  #show() {
    const id = this.getAttribute('tip');
    const found = id ? this.tipsync?.tip(id) : undefined;
    if (!found) return this.#hide();
    const definition = localized(contentFor(found, this.tipsync?.replica?.deviceContext?.account), this.locale);
    if (this.visibleSince === null) {
      this.#render(definition);
      this.#applyScheme();
      this.visibleSince = document.visibilityState === 'visible' ? Date.now() : null;
      this.#position();
      this.dispatchEvent(new CustomEvent('tipsync-show', { bubbles: true, detail: { tip: definition.id } }));
    }
  }

  #hide() {
    const shown = this.#root.querySelector('[part~="tip"]');
    this.#recordDisplay();
    this.visibleSince = null;
    if (shown) {
      this.#root.replaceChildren();
      this.dispatchEvent(new CustomEvent('tipsync-hide', { bubbles: true, detail: { tip: this.getAttribute('tip') } }));
    }
  }

  /** Records the time the tip was visible as one display (once per showing). */
  #recordDisplay() {
    const tip = this.getAttribute('tip');
    if (this.visibleSince === null || !this.tipsync || tip === null) return;
    const seconds = Math.max(0, (Date.now() - this.visibleSince) / 1000);
    this.visibleSince = null;
    this.tipsync.recordDisplay(tip, seconds).catch(() => {});
  }

  #visibilityChanged() {
    if (!this.#root.querySelector('[part~="tip"]')) return;
    if (document.visibilityState === 'hidden') this.#recordDisplay();
    else if (this.visibleSince === null) this.visibleSince = Date.now();
  }

  /** Places a popover tip next to its anchor, inside the viewport. */
  #position() {
    const container = /** @type {HTMLElement | null} */ (this.#root.querySelector('[data-popover]'));
    const selector = this.getAttribute('anchor');
    const anchor = selector ? document.querySelector(selector) : null;
    if (!container) return;
    if (!anchor) {
      container.style.left = '16px';
      container.style.top = '16px';
      return;
    }
    const gap = 10;
    const margin = 8;
    const box = anchor.getBoundingClientRect();
    const width = container.offsetWidth;
    const height = container.offsetHeight;
    const below = box.bottom + gap;
    const placeAbove = this.getAttribute('placement') === 'top' || (below + height > globalThis.innerHeight && box.top - gap - height >= 0);
    const top = placeAbove ? box.top - gap - height : below;
    const left = Math.min(Math.max(margin, box.left + box.width / 2 - width / 2), globalThis.innerWidth - width - margin);
    container.style.top = `${Math.round(top)}px`;
    container.style.left = `${Math.round(left)}px`;
  }

  /**
   * Where focus goes when the tip disappears while it had focus, so it never falls to `<body>`: a
   * popover's anchor; for an inline tip, the next focusable element after it in the page (else the
   * one before it).
   */
  #refocus() {
    const anchor = this.#anchor();
    if (anchor) return anchor.focus();
    const focusable = tabbables(this);
    const after = focusable.find((element) => this.compareDocumentPosition(element) & Node.DOCUMENT_POSITION_FOLLOWING);
    const before = focusable.filter((element) => this.compareDocumentPosition(element) & Node.DOCUMENT_POSITION_PRECEDING).pop();
    /** @type {HTMLElement | undefined} */ (after ?? before)?.focus();
  }

  /** The person closed the tip: invalidated as `tipClosed` on every device. */
  async close() {
    const tip = this.getAttribute('tip');
    const hadFocus = this.#root.activeElement !== null;
    this.#hide();
    if (hadFocus) this.#refocus();
    this.dispatchEvent(new CustomEvent('tipsync-close', { bubbles: true, detail: { tip } }));
    if (tip !== null) await this.tipsync?.invalidate(tip, 'tipClosed');
  }

  /**
   * The person chose an action: fires `tipsync-action` (cancelable) and, unless the element has
   * `keep-on-action` or the event was cancelled, invalidates the tip as `actionPerformed`.
   * @param {string} action
   */
  async perform(action) {
    const tip = this.getAttribute('tip');
    const event = new CustomEvent('tipsync-action', { bubbles: true, cancelable: true, detail: { tip, action } });
    const proceed = this.dispatchEvent(event);
    if (proceed && !this.hasAttribute('keep-on-action')) {
      const hadFocus = this.#root.activeElement !== null;
      this.#hide();
      if (hadFocus) this.#refocus();
      if (tip !== null) await this.tipsync?.invalidate(tip, 'actionPerformed');
    }
  }
}

/** Defines `<tipsync-tip>` (once). */
export function defineTipElement(name = 'tipsync-tip') {
  if (!customElements.get(name)) customElements.define(name, TipSyncTipElement);
}
