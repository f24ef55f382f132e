// The browser entry point: everything in index.js, plus the <tipsync-tip> element, defined.
export * from './index.js';
export { TipSyncTipElement, defineTipElement } from './element.js';
import { defineTipElement } from './element.js';

defineTipElement();
