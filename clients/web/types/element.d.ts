/**
 * Whether a tip should be dark: it follows the page's `color-scheme` (inherited by the element), not
 * the system's — a page that declares none, or only `light`, is light; `dark` alone is dark; `light
 * dark` follows the system's preference, as the page itself does.
 * @param {string} declared the computed `color-scheme` (`normal`, `light`, `dark`, `light dark`, `only dark`…)
 * @param {boolean} prefersDark
 */
export function isDarkScheme(declared: string, prefersDark: boolean): boolean;
/** Defines `<tipsync-tip>` (once). */
export function defineTipElement(name?: string): void;
/** The `<tipsync-tip>` element. */
export class TipSyncTipElement extends HTMLElement {
    static observedAttributes: string[];
    uid: string;
    /** @type {import('./tipsync.js').TipSync | null} */
    _tipsync: import('./tipsync.js').TipSync | null;
    /** @type {(() => void) | null} */
    stopWatching: (() => void) | null;
    /**
     * When the tip became visible (ms), while it is.
     * @type {number | null}
     */
    visibleSince: number | null;
    onScroll: () => void;
    onVisibility: () => void;
    onKey: (event: KeyboardEvent) => void;
    /** Hidden with Escape: not shown again in this page until the tip's status changes. */
    hiddenForNow: boolean;
    onConfigured: () => void;
    darkQuery: MediaQueryList;
    onSchemeChange: () => void;
    set tipsync(arg: import("./tipsync.js").TipSync | null);
    /** The TipSync instance this element uses (default: the one `configure()` made). */
    get tipsync(): import("./tipsync.js").TipSync | null;
    connectedCallback(): void;
    disconnectedCallback(): void;
    attributeChangedCallback(): void;
    /**
     * Hides the tip for now — what Escape does to a popover: the time shown is recorded as a display,
     * the tip stays `available` (the person did not dismiss it: the close button does that, on every
     * device), it is not shown again in this page until its status changes, and focus returns to the
     * anchor.
     */
    hideForNow(): void;
    /** The tip's status now (`available`, `pending`, `invalidated:<reason>`). */
    get status(): import("./status.js").TipStatus;
    /**
     * The language the tip is shown in (protocol.md §13.10): the nearest `lang` — on the element, an
     * ancestor or `<html>` — else the device's locale.
     * @returns {string | null}
     */
    get locale(): string | null;
    /** The person closed the tip: invalidated as `tipClosed` on every device. */
    close(): Promise<void>;
    /**
     * The person chose an action: fires `tipsync-action` (cancelable) and, unless the element has
     * `keep-on-action` or the event was cancelled, invalidates the tip as `actionPerformed`.
     * @param {string} action
     */
    perform(action: string): Promise<void>;
    #private;
}
export type TipDefinition = import('./catalog.js').TipDefinition;
